"""Plots of a study: learning curves (mean over seeds with a ±std band, per algorithm) and, where
the study has them, regret curves. ``python3 -m omkl plot DIR`` and ``omkl.plot(...)`` draw them."""
from __future__ import annotations

import math
import os
from typing import Any, Dict, List, Optional, Sequence, Union

from ._study import Study
from . import _omkl

_METRIC_LABELS = {
    "mse": "MSE, average up to t",
    "mae": "MAE, average up to t",
    "error_rate": "error rate, average up to t",
}


def _matplotlib():
    try:
        import matplotlib
    except ImportError as error:
        raise ImportError("omkl.plot needs matplotlib: pip install matplotlib") from error
    if "MPLBACKEND" not in os.environ:
        matplotlib.use("Agg")  # files only; no display needed
    import matplotlib.pyplot as plt

    return plt


def _by_spec(rows: List[Dict[str, Any]]) -> Dict[str, List[Dict[str, Any]]]:
    groups: Dict[str, List[Dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(row["spec"], []).append(row)
    return groups


def _log_helps(values: Sequence[float]) -> bool:
    """A log axis when every value is positive and they span more than a factor of 30."""
    positive = [v for v in values if v > 0 and math.isfinite(v)]
    return len(positive) == len(values) and len(positive) > 1 and max(positive) > 30 * min(positive)


def _title(summary: Dict[str, Any]) -> str:
    seeds = sorted({r["seeds"] for r in summary["results"]})
    parts = [f"{summary['dataset']} ({summary['n_samples']} samples)",
             f"{'/'.join(str(s) for s in seeds)} seed{'s' if seeds != [1] else ''}", f"profile {summary['profile']}"]
    if summary.get("preset"):
        parts.append(f"preset {summary['preset']}")
    return ", ".join(parts)


def _draw(plt, groups, ylabel: str, title: str, stem: str, formats: Sequence[str]) -> List[str]:
    figure, axes = plt.subplots(figsize=(7.5, 4.8), layout="constrained")
    every_value: List[float] = []
    for spec, rows in groups.items():
        rows = sorted(rows, key=lambda r: r["t"])
        t = [r["t"] for r in rows]
        mean = [r["mean"] for r in rows]
        std = [r["std"] for r in rows]
        label = spec if len(spec) <= 48 else spec[:45] + "..."
        (line,) = axes.plot(t, mean, label=label, linewidth=1.6)
        low = [m - s for m, s in zip(mean, std)]
        high = [m + s for m, s in zip(mean, std)]
        axes.fill_between(t, low, high, color=line.get_color(), alpha=0.18, linewidth=0)
        every_value.extend(mean)
    if _log_helps(every_value):
        axes.set_yscale("log")
    axes.set_xlabel("t (samples seen)")
    axes.set_ylabel(ylabel)
    axes.set_title(title, fontsize=10)
    axes.grid(True, which="major", alpha=0.3)
    axes.legend(fontsize=8)
    written = []
    for fmt in formats:
        path = f"{stem}.{fmt}"
        figure.savefig(path, dpi=150)
        written.append(path)
    plt.close(figure)
    return written


def plot_study(study_or_dir: Any, out: Optional[Any] = None,
               formats: Union[str, Sequence[str]] = ("png", "svg")) -> List[str]:
    """Writes ``curves.<fmt>`` (and ``regret.<fmt>`` when the study has regret curves) for each
    format (one name, ``"png"``, or several); returns the paths written.

    ``study_or_dir`` is an ``omkl.Study`` or a study's output folder. ``out`` is a folder, or a
    path stem (``DIR/plot`` gives ``DIR/plot.png``, ``DIR/plot-regret.png``); default: the study's
    folder.
    """
    # Everything that can be refused is, before a folder is made.
    formats = [formats] if isinstance(formats, str) else list(formats)
    unknown = [f for f in formats if f not in ("png", "svg", "pdf")]
    if unknown or not formats:
        raise _omkl.ConfigError(f"omkl.plot: format {unknown[0]!r}: png, svg or pdf" if unknown
                                else "omkl.plot: formats is empty: png, svg or pdf")
    plt = _matplotlib()
    study = study_or_dir if isinstance(study_or_dir, Study) else Study.from_directory(study_or_dir)
    rows = study.curve_rows()
    if not rows:
        raise _omkl.InputError("omkl.plot: the study has no curves")
    if out is None:
        if study.directory is None:
            raise _omkl.ConfigError("omkl.plot: give out= (a folder or a path stem) for a study that was not written to a folder")
        out = study.directory
    out = os.fspath(out)
    if os.path.isdir(out) or out.endswith(os.sep):
        os.makedirs(out, exist_ok=True)
        curves_stem, regret_stem = os.path.join(out, "curves"), os.path.join(out, "regret")
    else:
        parent = os.path.dirname(out)
        if parent:
            os.makedirs(parent, exist_ok=True)
        curves_stem, regret_stem = out, out + "-regret"
    metrics = sorted({r["metric"] for r in rows})
    ylabel = " / ".join(_METRIC_LABELS.get(m, m) for m in metrics)
    written = _draw(plt, _by_spec(rows), ylabel, _title(study.summary), curves_stem, formats)
    regret_rows = study.regret_rows()
    if regret_rows:
        benchmark = regret_rows[0]["benchmark"]
        written += _draw(plt, _by_spec(regret_rows), f"cumulative regret against {benchmark}",
                         _title(study.summary), regret_stem, formats)
    return written
