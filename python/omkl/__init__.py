"""omkl: online multi-kernel learning with random features (Raker, AdaRaker, the graph-aided,
federated and bandit families), from Python.

- ``omkl.Learner``: one online learner over NumPy arrays (predict, then learn, row by row).
- ``omkl.OMKLRegressor`` / ``omkl.OMKLClassifier``: scikit-learn estimators (need scikit-learn).
- ``omkl.study(...)``: a Monte Carlo study, as ``omkl study`` runs it, returned as Python objects.
- ``omkl.plot(study_or_dir, out=...)``: learning curves as PNG and SVG (needs matplotlib).
- ``omkl.algorithms()``, ``omkl.describe(name)``, ``omkl.presets()``: what the library has.

Errors are ``omkl.Error`` (``InputError`` and ``ConfigError`` are also ``ValueError``s;
``DivergedError``, a model whose prediction stopped being finite, is an ``ArithmeticError`` with
``sample`` and ``prediction`` attributes) with the library's messages.
"""
from __future__ import annotations

import importlib.util
import os
from typing import TYPE_CHECKING, Any, List, Sequence, Tuple, Union

from ._omkl import ConfigError, CudaError, DivergedError, Error, InputError, __version__, with_cuda
from . import _omkl
from ._learner import Learner
from ._study import Study, study

if TYPE_CHECKING:  # at run time they come from __getattr__, below, when first used
    from ._estimators import OMKLClassifier, OMKLRegressor

_ESTIMATORS = ("OMKLRegressor", "OMKLClassifier")

__all__ = [
    "Learner", "Study", "study", "plot", "algorithms", "describe", "presets", "Error", "InputError", "ConfigError",
    "CudaError", "DivergedError", "__version__", "with_cuda",
]
# `from omkl import *` takes the estimators only where scikit-learn is there to import them (type
# checkers, which see the imports above, always).
if TYPE_CHECKING or importlib.util.find_spec("sklearn") is not None:
    __all__ += ["OMKLRegressor", "OMKLClassifier"]


def algorithms() -> List[Tuple[str, str, str]]:
    """Every registered algorithm as (name, family, one-line summary), sorted by name."""
    return [(name, family, summary) for name, family, summary in _omkl.list_algorithms()]


def describe(name: str) -> str:
    """The algorithm's parameters, one per line: name, default, meaning (as ``omkl describe``)."""
    return _omkl.describe_algorithm(name)


def presets() -> List[str]:
    """The names of the built-in experimental protocols (``preset=`` of study and the estimators)."""
    return list(_omkl.preset_names())


def plot(study_or_dir: Union[Study, str, os.PathLike[str]], out: Union[str, os.PathLike[str], None] = None,
         formats: Union[str, Sequence[str]] = ("png", "svg")) -> List[str]:
    """Draws a study's learning curves (and regret curves, where it has them); see omkl._plot.plot_study."""
    from ._plot import plot_study

    return plot_study(study_or_dir, out=out, formats=formats)


def __getattr__(name: str) -> Any:
    # The estimators import scikit-learn, which the rest of the package does not need.
    # Without it they are missing attributes (hasattr() is False), named with the reason.
    if name in _ESTIMATORS:
        try:
            from . import _estimators
        except ImportError as error:
            raise AttributeError(str(error)) from error
        return getattr(_estimators, name)
    raise AttributeError(f"module 'omkl' has no attribute {name!r}")
