"""scikit-learn estimators over omkl's online learners: OMKLRegressor and OMKLClassifier.

Online models: ``fit`` starts a fresh learner and passes over the rows once, in order;
``partial_fit`` continues it with more rows. The predictions each row got before the model learned
from it (the online, "test-then-train" predictions the papers score) are kept in
``online_predictions_`` for the rows of the last call. A single pass of an online learner is not a
converged batch fit, and the estimators say so (scikit-learn's ``poor_score`` tag).
"""
from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence, Tuple

import numpy as np

try:
    from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
    from sklearn.utils.multiclass import unique_labels
    from sklearn.utils.validation import check_is_fitted, validate_data
except ImportError as _missing:  # pragma: no cover - exercised only without scikit-learn
    raise ImportError("omkl.OMKLRegressor and omkl.OMKLClassifier need scikit-learn (>= 1.6): "
                      "pip install scikit-learn") from _missing

from ._learner import Learner, as_rows
from ._omkl import InputError


class _OMKLEstimator(BaseEstimator):
    _task = "regression"

    def __init__(self, algo: str = "raker", profile: str = "paper", preset: str = "", seed: int = 0,
                 horizon: Optional[int] = None, backend: str = "cpu", loss: str = ""):
        self.algo = algo
        self.profile = profile
        self.preset = preset
        self.seed = seed
        self.horizon = horizon
        self.backend = backend
        self.loss = loss

    # Subclasses map targets to the learner's (classification: -1 / +1) and back.
    def _learner_targets(self, y) -> np.ndarray:
        return np.asarray(y, dtype=np.float64)

    # Learners the model needs (a multiclass classifier: one per class).
    def _n_learners(self) -> int:
        return 1

    def _new_learner(self, n_features: int, n_rows: Optional[int], replicate: int) -> Learner:
        # horizon None: the first batch's length, as `omkl run` takes the file's; a stream that
        # starts sample by sample (learn_one) has no length to take: 0, unknown, and then the
        # algorithm needs its step given (the library's error says which parameter).
        horizon = self.horizon if self.horizon is not None else (n_rows or 0)
        return Learner(self.algo, n_features, self._task, self.profile, self.seed, replicate, horizon, self.backend,
                       self.preset, self.loss)

    # What the first call learns besides the rows' shape (a classifier: its classes).
    def _start(self, y) -> None:
        pass

    def _learn(self, X, y, first: bool, one_by_one: bool = False, checked: bool = False):
        # checked: X is rows already matched to the fitted model by name (a dict sample through
        # feature_names_in_), which validate_data would warn about as rows without names.
        if not checked:
            X, y = validate_data(self, X, y, reset=first, y_numeric=self._task == "regression")
        if first:
            self._start(y)
            rows = None if one_by_one else X.shape[0]
            self.learners_ = [self._new_learner(X.shape[1], rows, k) for k in range(self._n_learners())]
        targets = self._learner_targets(y)
        if targets.ndim == 1:
            self.online_predictions_ = self.learners_[0].partial_fit(X, targets)
        else:
            self.online_predictions_ = np.column_stack(
                [learner.partial_fit(X, targets[:, k]) for k, learner in enumerate(self.learners_)])
        return self

    def _forget(self) -> None:
        for attribute in ("learners_", "classes_", "_dict_keys"):
            self.__dict__.pop(attribute, None)

    def fit(self, X, y):
        """A fresh learner, one pass over the rows in order."""
        self._forget()
        return self._learn(X, y, first=True)

    def _scores(self, X, checked: bool = False) -> np.ndarray:
        check_is_fitted(self, "learners_")
        if not checked:
            X = validate_data(self, X, reset=False)
        if len(self.learners_) == 1:
            return self.learners_[0].predict(X)
        return np.column_stack([learner.predict(X) for learner in self.learners_])

    # ---- River-style single samples: dicts of named features, or sequences ---------------------
    def _one_row(self, x) -> Tuple[np.ndarray, bool]:
        """One sample as a row, and whether it was matched to the fitted model by name. A dict's
        values go in the order of the names the model was fitted with (feature_names_in_, from a
        DataFrame), else in the key order of the first dict it learned."""
        if not isinstance(x, Mapping):
            return np.asarray(x, dtype=np.float64).reshape(1, -1), False
        fitted_names = self.__dict__.get("feature_names_in_") if "learners_" in self.__dict__ else None
        keys = list(fitted_names) if fitted_names is not None else self.__dict__.get("_dict_keys")
        if keys is None:
            keys = self._dict_keys = list(x.keys())  # unnamed so far: the first dict names them
        missing = [k for k in keys if k not in x]
        known = set(keys)
        unknown = [k for k in x if k not in known]
        if missing or unknown:
            parts = ([f"missing {missing}"] if missing else []) + ([f"unknown {unknown}"] if unknown else [])
            raise InputError(f"sample's features: {' and '.join(parts)}; the model's features are {keys}")
        return as_rows([x[k] for k in keys]), fitted_names is not None

    def learn_one(self, x, y) -> "_OMKLEstimator":
        """Learns one sample (a dict of named features, River's convention, or a sequence)."""
        first = not hasattr(self, "learners_")
        if first and self._task == "classification" and not hasattr(self, "classes_"):
            raise ValueError("OMKLClassifier.learn_one: call partial_fit(X, y, classes=...) first, or "
                             "learn_one after fit, so that the classes are known")
        row, by_name = self._one_row(x)
        return self._learn(row, np.asarray([y]), first=first, one_by_one=True, checked=by_name)

    def _predict_one_scores(self, x) -> np.ndarray:
        row, by_name = self._one_row(x)
        return self._scores(row, checked=by_name)

    @staticmethod
    def _online_tags(tags):
        # The mixins set the task's tags after this class's MRO step: each estimator calls this
        # on the finished tags.
        tags.non_deterministic = False  # same seed, same numbers
        for task_tags in (tags.regressor_tags, tags.classifier_tags):
            if task_tags is not None:
                task_tags.poor_score = True  # one online pass, not a converged batch fit
        return tags


class OMKLRegressor(RegressorMixin, _OMKLEstimator):
    """An online multi-kernel regressor (Raker by default; any of ``omkl.algorithms()``).

    Parameters
    ----------
    algo : algorithm spec, e.g. "raker", "adaraker", "raker:D=100,dict=gauss:0.1+gauss:1".
    profile : "paper" or "reference" (the authors' code, which reproduces the tables).
    preset : a paper's protocol whose parameter defaults apply (omkl.presets()); its
        normalisation is not applied here: scale X and y as the protocol says, or use omkl.study.
    seed : randomness derives from it (same seed, same numbers).
    horizon : stream length T for default step sizes (None: the first batch's length; a model
        that starts with learn_one has none, so give horizon or the algorithm's step, e.g.
        ``algo="raker:eta=0.05"``).
    backend : "cpu", "cuda" or "auto".
    loss : "" (the algorithm's own), "square", "absolute" or "logistic".
    """

    def __sklearn_tags__(self):
        return self._online_tags(super().__sklearn_tags__())

    @property
    def learner_(self) -> Learner:
        """The omkl.Learner (kernel_weights, parameters, save)."""
        check_is_fitted(self, "learners_")
        return self.learners_[0]

    def partial_fit(self, X, y):
        """Learns the rows in order, continuing the model (a fresh one on the first call)."""
        return self._learn(X, y, first=not hasattr(self, "learners_"))

    def predict(self, X) -> np.ndarray:
        """Predictions without learning."""
        return self._scores(X)

    def predict_one(self, x) -> float:
        """The prediction for one sample (a dict of named features, or a sequence)."""
        return float(self._predict_one_scores(x)[0])


class OMKLClassifier(ClassifierMixin, _OMKLEstimator):
    """An online multi-kernel classifier. Two classes: one learner, which sees -1 for
    ``classes_[0]`` and +1 for ``classes_[1]`` (as the library's classification streams). More
    classes: one learner per class, one-vs-rest (learner k's randomness from (seed, k)), the
    prediction the class of the largest score. Parameters as OMKLRegressor."""

    _task = "classification"

    def _n_learners(self) -> int:
        return 1 if len(self.classes_) == 2 else len(self.classes_)

    def _set_classes(self, classes) -> None:
        classes = np.atleast_1d(np.asarray(classes))
        if len(classes) < 2:
            raise ValueError(f"OMKLClassifier needs at least 2 classes; got one class ({classes[0]!r})")
        self.classes_ = classes

    def _learner_targets(self, y) -> np.ndarray:
        y = np.asarray(y)
        known = np.isin(y, self.classes_)
        if not known.all():
            raise ValueError(f"label {y[~known].tolist()[0]!r} is not one of the classes {self.classes_.tolist()}")
        if len(self.classes_) == 2:
            return np.where(y == self.classes_[1], 1.0, -1.0)
        return np.where(y[:, None] == self.classes_[None, :], 1.0, -1.0)

    def _start(self, y) -> None:
        # fit, and a first partial_fit without classes=: the labels the rows hold.
        if not hasattr(self, "classes_"):
            self._set_classes(unique_labels(y))

    def partial_fit(self, X, y, classes: Optional[Sequence[Any]] = None):
        """Learns the rows in order, continuing the model. The first call needs ``classes`` (every
        label) unless its ``y`` holds them all; a later call's ``classes``, if given, must be the
        same (scikit-learn's rule)."""
        first = not hasattr(self, "learners_")
        if first:
            self.__dict__.pop("classes_", None)
            if classes is not None:
                self._set_classes(unique_labels(classes))
        elif classes is not None and not np.array_equal(unique_labels(classes), self.classes_):
            raise ValueError(f"classes={unique_labels(classes).tolist()!r} is not the same as on the first call to "
                             f"partial_fit, was: {self.classes_.tolist()!r}")
        return self._learn(X, y, first=first)

    def __sklearn_tags__(self):
        return self._online_tags(super().__sklearn_tags__())

    @property
    def learner_(self) -> Learner:
        """The omkl.Learner of a two-class model."""
        check_is_fitted(self, "learners_")
        if len(self.learners_) != 1:
            raise AttributeError("learner_: a multiclass model has one learner per class, in learners_")
        return self.learners_[0]

    def decision_function(self, X) -> np.ndarray:
        """Real-valued scores: two classes, one column (positive for classes_[1]); more, one
        column per class."""
        return self._scores(X)

    def predict(self, X) -> np.ndarray:
        return self._classes_of(self._scores(X))

    def _classes_of(self, scores: np.ndarray) -> np.ndarray:
        if scores.ndim == 1:
            # A score of 0 counts as right for either label in the library's error rate; here
            # it gets classes_[1].
            return self.classes_[(scores >= 0).astype(int)]
        return self.classes_[np.argmax(scores, axis=1)]

    def predict_one(self, x):
        """The class of one sample (a dict of named features, or a sequence)."""
        scores = self._predict_one_scores(x)
        return self._classes_of(scores)[0]
