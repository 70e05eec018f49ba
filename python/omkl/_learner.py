"""omkl.Learner: one online learner over NumPy arrays."""
from __future__ import annotations

import os
import threading
from typing import Dict, List, Optional, Sequence

import numpy as np

from . import _omkl
from ._arguments import integer_argument, string_argument


def _position(index, what: str) -> str:
    if what == "y":
        return f"y: target {index[0] + 1}" if index else "y"
    if len(index) == 2:
        return f"X: sample {index[0] + 1}, feature {index[1] + 1}"
    return f"X: feature {index[0] + 1}" if index else "X"


def _float_array(x, what: str) -> np.ndarray:
    """x as a C-contiguous float64 array. Complex numbers are refused (NumPy would drop their
    imaginary parts with only a warning), and a value that is not a number (a string, pandas'
    missing value pd.NA) is named by its position instead of NumPy's bare TypeError."""
    try:
        array = np.asarray(x)
    except (TypeError, ValueError) as error:  # ragged nested sequences
        raise _omkl.InputError(f"{what} is not an array of numbers: {error}") from None
    if array.dtype.kind == "c":
        raise _omkl.InputError(f"{what} has complex values; omkl learns from real numbers")
    try:
        return np.ascontiguousarray(array, dtype=np.float64)
    except (TypeError, ValueError):
        pass
    for index in np.ndindex(array.shape):
        value = array[index]
        if isinstance(value, np.generic):
            value = value.item()  # 'a', not np.str_('a')
        try:
            float(value)
        except (TypeError, ValueError):
            missing = value is None or type(value).__name__ in ("NAType", "NaTType")
            if missing:
                raise _omkl.InputError(f"{_position(index, what)} is a missing value ({value!r})") from None
            raise _omkl.InputError(f"{_position(index, what)} is not a real number: {value!r}") from None
    raise _omkl.InputError(f"{what} is not an array of numbers")  # pragma: no cover - every element converted


def as_rows(x, n_features: Optional[int] = None) -> np.ndarray:
    """x as a C-contiguous float64 array of rows: one sample (1-D) becomes one row."""
    rows = _float_array(x, "X")
    if rows.ndim == 1:
        rows = rows.reshape(1, -1)
    if rows.ndim != 2:
        raise _omkl.InputError(f"X must be one sample (1-D) or rows of samples (2-D), not {rows.ndim}-D")
    if n_features is not None and rows.shape[1] != n_features:
        raise _omkl.InputError(f"X has {rows.shape[1]} features, the model expects {n_features}")
    return rows


def as_targets(y, n: int) -> np.ndarray:
    targets = _float_array(y, "y")
    if targets.ndim == 0:
        targets = targets.reshape(1)
    if targets.ndim != 1:
        raise _omkl.InputError(f"y must be 1-D, one target per row; got shape {targets.shape}")
    if targets.shape[0] != n:
        raise _omkl.InputError(f"y must hold one target per row: {targets.shape[0]} targets for {n} rows")
    return targets


def column_names(x) -> Optional[List[str]]:
    """The feature names a pandas DataFrame (its columns) or Series (one sample: its index)
    carries, when every one is a string; None for arrays, and for the integer labels pandas gives
    unnamed columns (as scikit-learn reads them)."""
    labels = getattr(x, "columns", None)
    if labels is None and getattr(x, "ndim", None) == 1 and hasattr(x, "index") and hasattr(x, "to_numpy"):
        labels = x.index
    if labels is None:
        return None
    names = list(labels)
    return names if names and all(isinstance(name, str) for name in names) else None


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
        With 0, algorithms whose default step needs T (Raker, AdaRaker and most others) refuse
        to start: give ``horizon=`` or the step in the spec, e.g. ``"raker:eta=0.05"``.
    backend : "cpu", "cuda" or "auto".
    preset : a study protocol whose parameter defaults apply (``omkl.presets()``).
    loss : "logistic", "square" or "absolute": the loss of every algorithm, as ``--loss``.

    X may be a NumPy array, nested sequences or a pandas DataFrame. A model trained on named
    columns (``omkl run`` on a CSV with a header keeps them in ``feature_names``) refuses a
    DataFrame whose columns are not those names in that order, as ``omkl predict`` refuses such a
    file.

    A learner pickles (its checkpoint bytes) and saves to a file; a loaded one continues exactly
    as the original would have. Long calls release the GIL, so different learners run in parallel
    threads; calls on one learner from several threads take turns (its scratch space is shared).
    """

    def __init__(self, algo: str, n_features: int, task: str = "regression", profile: str = "paper",
                 seed: int = 0, replicate: int = 0, horizon: int = 0, backend: str = "cpu", preset: str = "",
                 loss: str = ""):
        algo = string_argument("algo", algo)
        n_features = integer_argument("n_features", n_features, minimum=1)
        task = string_argument("task", task)
        profile = string_argument("profile", profile)
        seed = integer_argument("seed", seed)
        replicate = integer_argument("replicate", replicate)
        horizon = integer_argument("horizon", horizon)
        backend = string_argument("backend", backend)
        preset = string_argument("preset", preset, optional=True)
        loss = string_argument("loss", loss, optional=True)
        try:
            self._impl = _omkl.Learner.create(algo, n_features, task, profile, seed, replicate, horizon, backend,
                                              preset, loss)
        except _omkl.ConfigError as error:
            # The library speaks of its stream length; in Python that is the horizon argument.
            if horizon == 0 and "stream length is unknown" in str(error):
                raise _omkl.ConfigError(
                    f"{error} (or give horizon=, the stream's length, for the default step)") from None
            raise
        self._lock = threading.Lock()

    @classmethod
    def _wrap(cls, impl) -> "Learner":
        learner = cls.__new__(cls)
        learner._impl = impl
        learner._lock = threading.Lock()
        return learner

    def _rows(self, X) -> np.ndarray:
        """X as rows for this model: a DataFrame's columns must be the model's feature names."""
        names = column_names(X)
        if names is not None:
            trained = self.feature_names
            if trained and len(names) == len(trained) and names != trained:
                j = next(k for k, (got, want) in enumerate(zip(names, trained)) if got != want)
                listed = ", ".join(trained[:20]) + (f", … ({len(trained)} in all)" if len(trained) > 20 else "")
                raise _omkl.InputError(f"X: feature column {j + 1} is {names[j]!r}, but the model was trained with "
                                       f"{trained[j]!r} there (its features, in order: {listed})")
        return as_rows(X, self.n_features)

    @staticmethod
    def _one_sample(rows: np.ndarray) -> np.ndarray:
        if rows.shape[0] != 1:
            raise _omkl.InputError(f"x must be one sample; got {rows.shape[0]} rows")
        return rows

    # ---- learning and predicting ------------------------------------------------------------
    def partial_fit(self, X, y) -> np.ndarray:
        """Predicts each row, then learns from it, in order; returns the predictions made before
        each update (for classification, real-valued scores whose sign is the label)."""
        rows = self._rows(X)
        targets = as_targets(y, rows.shape[0])
        out = np.empty(rows.shape[0], dtype=np.float64)
        with self._lock:
            self._impl.partial_fit(rows, targets, out)
        return out

    def predict(self, X) -> np.ndarray:
        """Predictions for rows (or one sample) without learning: the model is left as it was."""
        rows = self._rows(X)
        out = np.empty(rows.shape[0], dtype=np.float64)
        with self._lock:
            self._impl.predict(rows, out)
        return out

    def predict_one(self, x) -> float:
        """The prediction for one sample (a sequence of n_features values)."""
        return float(self.predict(self._one_sample(self._rows(x)))[0])

    def learn_one(self, x, y: float) -> float:
        """Predicts one sample, then learns from it; returns the prediction made before learning."""
        return float(self.partial_fit(self._one_sample(self._rows(x)), [y])[0])

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
        rows = np.array(self._rows(X), dtype=np.float64, order="C", copy=True)
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
        """The learner saved at ``path`` (by ``save``, or ``omkl run --save``), ready to continue
        exactly where it stopped; InputError names the file when it is missing or damaged."""
        return cls._wrap(_omkl.Learner.load(os.fspath(path)))

    def to_bytes(self) -> bytes:
        """The whole state as checkpoint bytes (what ``save`` writes); ``from_bytes`` restores it."""
        with self._lock:
            return self._impl.to_bytes()

    @classmethod
    def from_bytes(cls, data: bytes, name: str = "<bytes>") -> "Learner":
        """The learner held in checkpoint bytes (``to_bytes``, or a saved file's contents);
        ``name`` is what an InputError about damaged bytes calls them."""
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
