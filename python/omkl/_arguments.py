"""Checks of the arguments the package hands to the extension module.

The extension's functions take unsigned integers and strings: a negative count, a float or None
would reach nanobind, whose "incompatible function arguments" TypeError names neither the argument
nor omkl. These checks refuse such values first, with an omkl.ConfigError that names the argument.
"""
from __future__ import annotations

import numbers
import operator
import os
from typing import Any

from . import _omkl

# The extension's std::size_t and std::uint64_t (64-bit platforms).
_UINT64_MAX = 2**64 - 1


def integer_argument(name: str, value: Any, minimum: int = 0, maximum: int = _UINT64_MAX) -> int:
    """value as a Python int in [minimum, maximum]; refuses floats (2.7 would silently become 2),
    strings, bools and None."""
    if isinstance(value, bool):
        raise _omkl.ConfigError(f"{name} must be an integer, got {value!r}")
    try:
        number = operator.index(value)  # int and NumPy integers, nothing that only converts
    except TypeError:
        raise _omkl.ConfigError(f"{name} must be an integer, got {value!r} ({type(value).__name__})") from None
    if number < minimum:
        raise _omkl.ConfigError(f"{name} must be at least {minimum}, got {number}")
    if number > maximum:
        limit = "2**64 - 1" if maximum == _UINT64_MAX else str(maximum)
        raise _omkl.ConfigError(f"{name} must be at most {limit}, got {number}")
    return number


def string_argument(name: str, value: Any, optional: bool = False) -> str:
    """value as a str; None is "" (the library's default) where the argument is optional."""
    if value is None and optional:
        return ""
    if not isinstance(value, str):
        raise _omkl.ConfigError(f"{name} must be a string, got {value!r} ({type(value).__name__})")
    return value


def float_argument(name: str, value: Any) -> float:
    """value as a float; refuses strings, bools and None."""
    if isinstance(value, (bool, str, bytes)) or not isinstance(value, numbers.Real):
        raise _omkl.ConfigError(f"{name} must be a number, got {value!r} ({type(value).__name__})")
    return float(value)


def path_argument(name: str, value: Any) -> str:
    """A str or os.PathLike path as a str."""
    path = os.fspath(value) if isinstance(value, (str, os.PathLike)) else None
    if not isinstance(path, str):
        raise _omkl.ConfigError(f"{name} must be a path (str or os.PathLike), got {value!r}")
    return path
