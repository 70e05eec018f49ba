"""Plots of a study, from Python and from `python3 -m omkl plot` / `omkl study --plot`."""
import os
import subprocess
import sys

import pytest

pytest.importorskip("matplotlib")
import omkl
from conftest import write_csv


def test_plot_writes_png_and_svg_for_curves_and_regret(tmp_path, regression_stream):
    write_csv(tmp_path / "r.csv", *regression_stream)
    study = omkl.study(data=tmp_path / "r.csv", algos=["omkl-sfg:D=8,M=2", "omkl-gf:D=8,M=2,J=2"], seeds=2, regret=True,
                       curve_points=30, out=tmp_path / "s")
    written = omkl.plot(study)
    assert sorted(os.path.basename(p) for p in written) == ["curves.png", "curves.svg", "regret.png", "regret.svg"]
    for path in written:
        assert os.path.getsize(path) > 5000
    with open(tmp_path / "s" / "curves.svg") as f:
        svg = f.read()
    assert "MSE, average up to t" in svg and "r (300 samples)" in svg and "2 seeds" in svg
    stem = omkl.plot(str(tmp_path / "s"), out=tmp_path / "elsewhere" / "fig", formats=("png",))
    assert [os.path.basename(p) for p in stem] == ["fig.png", "fig-regret.png"]


def test_plot_needs_somewhere_to_write():
    study = omkl.study(data="synthetic:dataset1", algos="raker:D=8", seeds=1, curve_points=10)
    with pytest.raises(omkl.ConfigError, match="out="):
        omkl.plot(study)


def test_python_m_omkl_plot(tmp_path):
    omkl.study(data="synthetic:dataset1", algos="raker:D=8", seeds=1, curve_points=10, out=tmp_path / "s")
    done = subprocess.run([sys.executable, "-m", "omkl", "plot", str(tmp_path / "s")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "curves.png" in done.stdout and os.path.exists(tmp_path / "s" / "curves.svg")
    missing = subprocess.run([sys.executable, "-m", "omkl", "plot", str(tmp_path / "none")], capture_output=True, text=True)
    assert missing.returncode == 1 and "summary.json: no such file" in missing.stderr


def test_omkl_study_plot_draws_into_out_or_says_how(tmp_path, cli):
    out = cli("study", "--data", "synthetic:dataset1:2000", "--algo", "raker:D=8", "--seeds", 2, "--out",
              tmp_path / "s", "--plot")
    assert out.index("wrote") < out.index("curves.png")  # the report first, then the plotter's lines
    assert os.path.exists(tmp_path / "s" / "curves.png") and os.path.exists(tmp_path / "s" / "curves.svg")
    # An interpreter without the package: the study is written, the message says how to plot it.
    done = subprocess.run([os.environ.get("OMKL_CLI", "omkl"), "study", "--data", "synthetic:dataset1:2000", "--algo",
                           "raker:D=8", "--seeds", "1", "--out", str(tmp_path / "t"), "--plot"],
                          env={**os.environ, "OMKL_PYTHON": "false"}, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "cannot import omkl's Python package" in done.stderr and f"-m omkl plot {tmp_path / 't'}" in done.stderr
    assert os.path.exists(tmp_path / "t" / "summary.json") and not os.path.exists(tmp_path / "t" / "curves.png")


def test_plot_checks_everything_before_making_a_folder(tmp_path, monkeypatch):
    study = omkl.study(data="synthetic:dataset1", algos="raker:D=8", seeds=1, curve_points=10)
    with pytest.raises(omkl.ConfigError, match="format 'jpg'"):
        omkl.plot(study, out=tmp_path / "bad" / "fig", formats=("png", "jpg"))
    assert not os.path.exists(tmp_path / "bad")
    # One format as a plain string, not read letter by letter.
    written = omkl.plot(study, out=tmp_path / "one" / "fig", formats="svg")
    assert written == [str(tmp_path / "one" / "fig.svg")]
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if it were not installed
    with pytest.raises(ImportError, match="omkl.plot needs matplotlib"):
        omkl.plot(study, out=str(tmp_path / "none") + os.sep)
    assert not os.path.exists(tmp_path / "none")
