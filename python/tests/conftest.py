"""Shared fixtures: the command-line tool (OMKL_CLI, set by ctest) and the shared data folder
(OMKL_SHARED_DATA; tests that need a real data set skip without it)."""
import os
import shutil
import subprocess

import numpy as np
import pytest


@pytest.fixture(scope="session")
def cli():
    path = os.environ.get("OMKL_CLI") or shutil.which("omkl")
    if not path or not os.path.exists(path):
        pytest.skip("the omkl command-line tool is not built (ctest sets OMKL_CLI)")

    def run(*args, cwd=None):
        done = subprocess.run([path, *map(str, args)], cwd=cwd, capture_output=True, text=True)
        assert done.returncode == 0, f"omkl {' '.join(map(str, args))}: {done.stderr}"
        return done.stdout

    return run


def shared_file(name):
    folder = os.environ.get("OMKL_SHARED_DATA", os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "data"))
    path = os.path.join(folder, name)
    if not os.path.exists(path):
        pytest.skip(f"{name}: not in the shared data folder ({folder})")
    return path


def write_csv(path, X, y):
    """A CSV stream with a header, the target last, every digit kept."""
    names = [f"x{j}" for j in range(X.shape[1])] + ["y"]
    with open(path, "w") as f:
        f.write(",".join(names) + "\n")
        for row, target in zip(X, y):
            f.write(",".join(repr(float(v)) for v in (*row, target)) + "\n")


def read_predictions(path):
    """The prediction column of `omkl run --predictions` (t, y, prediction)."""
    return np.loadtxt(path, delimiter=",", skiprows=1)[:, 2]


@pytest.fixture
def regression_stream():
    rng = np.random.default_rng(11)
    X = rng.uniform(-1, 1, size=(300, 4))
    y = np.sin(3 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.05 * rng.normal(size=300)
    return X, y


@pytest.fixture
def classification_stream():
    rng = np.random.default_rng(12)
    X = rng.normal(size=(300, 3))
    y = np.where(X[:, 0] ** 2 + X[:, 1] > 0.5, 1.0, -1.0)
    return X, y
