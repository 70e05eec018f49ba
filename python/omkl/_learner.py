"""omkl.Learner: one online learner over NumPy arrays."""
from __future__ import annotations

import os
import threading
from typing import Dict, List, Optional, Sequence

import numpy as np

from . import _omkl


def as_rows(x, n_features: Optional[int] = None) -> np.ndarray:
    """x as a C-contiguous float64 array of rows: one sample (1-D) becomes one row."""
    rows = np.ascontiguousarray(x, dtype=np.float64)
    if rows.ndim == 1:
        rows = rows.reshape(1, -1)
    if rows.ndim != 2:
        raise _omkl.InputError(f"X must be one sample (1-D) or rows of samples (2-D), not {rows.ndim}-D")
    if n_features is not None and rows.shape[1] != n_features:
        raise _omkl.InputError(f"X has {rows.shape[1]} features, the model expects {n_features}")
    return rows


def as_targets(y, n: int) -> np.ndarray:
    targets = np.ascontiguousarray(np.atleast_1d(np.asarray(y, dtype=np.float64)))
    if targets.ndim != 1 or targets.shape[0] != n:
        raise _omkl.InputError(f"y must hold one target per row: {targets.size} targets for {n} rows")
    return targets


class Learner:
    """One online learner: each sample is predicted, then learned from (the library's Learner).

    Parameters
    ----------
    algo : str
        An algorithm spec as the command line takes it, e.g. ``"raker"``, ``"adaraker:eta0=10"``,
        ``"raker:D=20,dict=gauss:0.1+gauss:1"`` (``omkl.algorithms()`` lists them,
        ``omkl.describe(name)`` their parameters).
    n_features : int
        Features per sample.
    task : "regression" or "classification" (labels -1 / +1).
    profile : "paper" (the papers' corrected equations, the default) or "reference" (the authors'
        released code, which reproduces the published tables).
    seed, replicate : randomness derives from (seed, replicate) only.
    horizon : the stream's length T where known (default step sizes use 1/sqrt(T)); 0 = unknown.
    backend : "cpu", "cuda" or "auto".
    preset : a study protocol whose parameter defaults apply (``omkl.presets()``).
    loss : "logistic", "square" or "absolute": the loss of every algorithm, as ``--loss``.

    A learner pickles (its checkpoint bytes) and saves to a file; a loaded one continues exactly
    as the original would have. Long calls release the GIL, so different learners run in parallel
    threads; calls on one learner from several threads take turns (its scratch space is shared).
    """

    def __init__(self, algo: str, n_features: int, task: str = "regression", profile: str = "paper",
                 seed: int = 0, replicate: int = 0, horizon: int = 0, backend: str = "cpu", preset: str = "",
                 loss: str = ""):
        self._impl = _omkl.Learner.create(algo, int(n_features), task, profile, int(seed), int(replicate),
                                          int(horizon), backend, preset or "", loss or "")
        self._lock = threading.Lock()

    @classmethod
    def _wrap(cls, impl) -> "Learner":
        learner = cls.__new__(cls)
        learner._impl = impl
        learner._lock = threading.Lock()
        return learner

    # ---- learning and predicting ------------------------------------------------------------
    def partial_fit(self, X, y) -> np.ndarray:
        """Predicts each row, then learns from it, in order; returns the predictions made before
        each update (for classification, real-valued scores whose sign is the label)."""
        rows = as_rows(X, self.n_features)
        targets = as_targets(y, rows.shape[0])
        out = np.empty(rows.shape[0], dtype=np.float64)
        with self._lock:
            self._impl.partial_fit(rows, targets, out)
        return out

    def predict(self, X) -> np.ndarray:
        """Predictions for rows (or one sample) without learning: the model is left as it was."""
        rows = as_rows(X, self.n_features)
        out = np.empty(rows.shape[0], dtype=np.float64)
        with self._lock:
            self._impl.predict(rows, out)
        return out

    def predict_one(self, x) -> float:
        """The prediction for one sample (a sequence of n_features values)."""
        return float(self.predict(np.asarray(x, dtype=np.float64).reshape(1, -1))[0])

    def learn_one(self, x, y: float) -> float:
        """Predicts one sample, then learns from it; returns the prediction made before learning."""
        return float(self.partial_fit(np.asarray(x, dtype=np.float64).reshape(1, -1), [y])[0])

    # ---- what it is -------------------------------------------------------------------------
    @property
    def spec(self) -> str:
        return self._impl.spec

    @property
    def n_features(self) -> int:
        return self._impl.n_features

    @property
    def task(self) -> str:
        return self._impl.task

    @property
    def n_seen(self) -> int:
        """Samples learned so far."""
        with self._lock:
            return self._impl.n_seen

    @property
    def failed(self) -> Optional[str]:
        """None, or the first error an update raised: the model may then be half updated, and
        every later call raises, naming it, until a checkpoint is restored."""
        with self._lock:
            if not self._impl.failed:
                return None
            return self._impl.failure or "an update raised"

    @property
    def parameters(self) -> Dict[str, str]:
        """Every parameter with the value used (given, from a preset, or the default)."""
        with self._lock:
            return dict(self._impl.parameters)

    @property
    def kernel_weights(self) -> np.ndarray:
        """The kernel weights (sum 1, one per dictionary kernel) for algorithms that keep them;
        empty for the others."""
        with self._lock:
            return np.asarray(self._impl.kernel_weights, dtype=np.float64)

    @property
    def preprocessing(self) -> str:
        """The normalisation the model was trained with ("none", "zscore", "jmlr23", ...), kept
        in its checkpoint with the training statistics (``omkl run --normalize``)."""
        with self._lock:
            return self._impl.preprocessing

    @property
    def feature_names(self) -> List[str]:
        """The names of the features the model was trained on, in order (a CSV header's, as
        ``omkl run`` saves them; ``omkl predict`` refuses a file whose columns differ); empty
        when the training stream had none (arrays, LIBSVM)."""
        with self._lock:
            return list(self._impl.feature_names)

    def preprocess(self, X, y=None):
        """New rows (and targets) in the scale the model learned in: its normalisation with the
        training statistics, as ``omkl predict`` and ``omkl run --resume`` apply it. Returns the
        transformed copy of X, or (X, y) when y is given; predictions are in that scale too."""
        rows = np.array(as_rows(X, self.n_features), dtype=np.float64, order="C", copy=True)
        targets = None if y is None else np.array(as_targets(y, rows.shape[0]), dtype=np.float64, copy=True)
        with self._lock:
            self._impl.preprocess(rows, targets)
        return rows if targets is None else (rows, targets)

    # ---- checkpoints ------------------------------------------------------------------------
    def save(self, path) -> None:
        """Writes the whole state to ``path`` atomically (a versioned, checksummed file that the
        command line's ``--resume`` and ``omkl predict --model`` read too)."""
        with self._lock:
            self._impl.save(os.fspath(path))

    @classmethod
    def load(cls, path) -> "Learner":
        return cls._wrap(_omkl.Learner.load(os.fspath(path)))

    def to_bytes(self) -> bytes:
        with self._lock:
            return self._impl.to_bytes()

    @classmethod
    def from_bytes(cls, data: bytes, name: str = "<bytes>") -> "Learner":
        return cls._wrap(_omkl.Learner.from_bytes(bytes(data), name))

    def __getstate__(self):
        return {"checkpoint": self.to_bytes()}

    def __setstate__(self, state) -> None:
        self._impl = _omkl.Learner.from_bytes(state["checkpoint"], "<pickle>")
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        if not hasattr(self, "_impl"):
            return "omkl.Learner(<not constructed>)"
        return f"omkl.Learner({self.spec!r}, n_features={self.n_features}, task={self.task!r}, n_seen={self.n_seen})"
