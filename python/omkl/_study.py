"""omkl.study: a Monte Carlo study (seeds x algorithms on one stream), as ``omkl study`` runs it."""
from __future__ import annotations

import csv
import io
import json
import os
import warnings
from typing import Any, Dict, Iterable, List, Optional, Union

from . import _omkl
from ._arguments import float_argument, integer_argument, path_argument, string_argument


def _read_csv(text: str) -> List[Dict[str, Any]]:
    rows = []
    for row in csv.DictReader(io.StringIO(text)):
        rows.append({k: (float(v) if k in ("mean", "std") else int(v) if k == "t" else v) for k, v in row.items()})
    return rows


def _table(rows: List[Dict[str, Any]]):
    """A pandas DataFrame when pandas is installed, else the list of row dicts."""
    try:
        import pandas as pd
    except ImportError:
        return rows
    return pd.DataFrame(rows)


class Study:
    """A study's results: what ``summary.json``, ``curves.csv``, ``regret.csv`` and ``logs.json``
    hold (README.md, "Output contract"), as Python objects.

    - ``summary``: the summary as a dict (``summary["results"]`` one entry per algorithm);
    - ``curves`` / ``regret``: the curves, a pandas DataFrame when pandas is installed, else a
      list of dicts with keys algo, spec, metric (regret: benchmark), t, mean, std;
    - ``logs``: the algorithms' end-of-run logs (the bandit family's), a list;
    - ``directory``: where the files were written (``out=``), else None.
    """

    def __init__(self, summary_json: str, curves_csv: str, logs_json: str = "", regret_csv: str = "",
                 directory: Optional[str] = None):
        self.summary: Dict[str, Any] = json.loads(summary_json)
        self._curve_rows = _read_csv(curves_csv)
        self._regret_rows = _read_csv(regret_csv) if regret_csv else []
        self.logs: List[Any] = json.loads(logs_json) if logs_json else []
        self.directory = directory

    @classmethod
    def from_directory(cls, directory: Union[str, os.PathLike]) -> "Study":
        """Reads a study's output folder (``omkl study --out DIR``)."""
        directory = os.fspath(directory)

        def text(name: str, required: bool) -> str:
            path = os.path.join(directory, name)
            if not os.path.exists(path):
                if required:
                    raise _omkl.InputError(f"{path}: no such file (a study's --out folder holds summary.json and curves.csv)")
                return ""
            with open(path, encoding="utf-8") as f:
                return f.read()

        return cls(text("summary.json", True), text("curves.csv", True), text("logs.json", False),
                   text("regret.csv", False), directory)

    @property
    def results(self) -> List[Dict[str, Any]]:
        """``summary["results"]``: one dict per algorithm configuration (algo, spec, metric,
        seeds, final_mean and final_std over the seeds, None where every seed diverged, ...)."""
        return self.summary["results"]

    @property
    def curves(self):
        return _table(self._curve_rows)

    @property
    def regret(self):
        return _table(self._regret_rows)

    def curve_rows(self) -> List[Dict[str, Any]]:
        """The curves as a list of dicts, whether or not pandas is installed."""
        return list(self._curve_rows)

    def regret_rows(self) -> List[Dict[str, Any]]:
        """The regret curves as a list of dicts, whether or not pandas is installed (empty for a
        study run without regret)."""
        return list(self._regret_rows)

    def final_mean(self, algo: str) -> Optional[float]:
        """The final metric (mean over seeds) of the configuration whose full spec is ``algo``,
        else of the one algorithm named ``algo``; None when every seed of it diverged (its
        ``results`` entry says ``diverged``). KeyError when none or several match."""
        matches = [r for r in self.results if r["spec"] == algo] or [r for r in self.results if r["algo"] == algo]
        if len(matches) != 1:
            names = ", ".join(r["spec"] for r in self.results)
            raise KeyError(f"{algo!r}: {'no' if not matches else 'more than one'} result of that name ({names})")
        return matches[0]["final_mean"]

    def __repr__(self) -> str:
        lines = [f"omkl.Study({self.summary['dataset']}, {self.summary['n_samples']} samples, "
                 f"profile {self.summary['profile']}{', preset ' + self.summary['preset'] if self.summary['preset'] else ''})"]
        for r in self.results:
            if r["final_mean"] is None:
                value = "diverged"  # every seed: the summary has no number for it
            else:
                spread = "" if r["final_std"] is None else f" ± {r['final_std']:.3g}"
                value = f"{r['final_mean']:.6g}{spread}"
            lines.append(f"  {r['spec'][:40]:<40} {r['metric']} {value} ({r['seeds']} seeds)")
        return "\n".join(lines)


def study(data: Union[str, os.PathLike[str]] = "synthetic:dataset2", algos: Optional[Union[str, Iterable[str]]] = None,
          seeds: Optional[int] = None,
          preset: str = "", profile: str = "paper", seed: int = 0, normalize: str = "", target: str = "",
          group_column: str = "", clients: int = 0, rounds: int = 0, backend: str = "cpu", threads: int = 0,
          metric: str = "", loss: str = "", curve_points: int = 200, out: Optional[Union[str, os.PathLike]] = None,
          shuffle: bool = False, regret: bool = False, time_match: str = "", regret_include_reg: bool = False,
          within_site_order: str = "", format: str = "", std: str = "", regret_comparator: str = "auto",
          client_order: str = "", regret_lambda: float = 1e-3, regret_dict: str = "", labels: str = "",
          one_hot: str = "") -> Study:
    """Runs a study as ``omkl study`` does, with the same options and the same numbers.

    ``data`` is a CSV or LIBSVM file or a built-in stream (``"synthetic:dataset1"``); ``algos``
    one spec or several (``"raker:D=50"``; by default the preset's algorithms, or Raker and
    AdaRaker without a preset; values joined by ``|`` are a grid, ``"oks:c_lambda=1|5|10|25"``,
    every combination a configuration, the best of each in ``summary["grids"]``); ``seeds`` the
    number of Monte Carlo replicates, which draw from (``seed``, replicate) — by default the preset's repetitions (10 for bandit-oks, 20
    for jmlr23-graph and fed-pofmkl, 50 for conf-sfg), else 5, as ``omkl study``. ``preset`` sets a paper's protocol (``omkl.presets()``),
    ``profile`` "paper" or "reference". With ``out`` the output files are written there too (and
    finished cells are reused by a later run with the same configuration). The other options are
    the command line's (``omkl study --help``); ``time_match="rf-oks++:D=400"`` is the bandit paper's
    time-matched mode (``summary["time_match"]`` reports the budgets found); ``regret_include_reg``,
    ``within_site_order`` and ``client_order`` are ``--regret-include-reg``, ``--within-site-order`` and
    ``--client-order``; ``format`` ("csv" or
    "libsvm") reads a file whose name says otherwise (a CSV named ``.txt``); ``std`` ("sample" or
    "population", ``--std``) is the spread across seeds, by default the preset's (``summary["std"]``
    says which); ``regret_comparator`` ("auto", "exact" or "rf", ``--regret-comparator``) the federated
    regret's comparator, ``regret_lambda`` and ``regret_dict`` (``--regret-lambda``, ``--regret-dict``)
    its ridge λ and its kernels (by default the papers'). ``labels="pm1"`` (``--labels pm1``) maps a
    two-class target such as 0/1 to −1/+1, a classification stream (the bandit paper's §8.2);
    ``one_hot="all"`` (``--one-hot``, or header names joined by ",") turns categorical columns into
    0/1 indicator columns, one per value, as LIBSVM's binarised sets are made. The GIL is released
    while the study runs. A stream read without normalisation (no ``normalize``, and a preset
    without one) whose features or regression targets are far from unit scale gives a
    ``UserWarning`` naming the normalisations that help, as ``omkl study`` notes on stderr;
    ``normalize="none"`` keeps the values and silences it.
    """
    preset = string_argument("preset", preset, optional=True)
    seeds = _omkl.default_seeds(preset) if seeds is None else integer_argument("seeds", seeds, minimum=1)
    if algos is None:
        algos = [] if preset else ["raker", "adaraker"]  # [] : the library takes the preset's own
    elif isinstance(algos, str):
        algos = [algos]
    else:
        algos = list(algos)  # once: a generator gives its items a single time
    for k, spec in enumerate(algos):
        string_argument(f"algos[{k}]", spec)
    source = _omkl.StudySource()
    source.path = path_argument("data", data)
    source.target_column = string_argument("target", target, optional=True)
    source.group_column = string_argument("group_column", group_column, optional=True)
    source.labels = string_argument("labels", labels, optional=True)
    source.one_hot = string_argument("one_hot", one_hot, optional=True)
    source.format = string_argument("format", format, optional=True)
    source.preset = preset
    source.normalize = string_argument("normalize", normalize, optional=True)
    source.clients = integer_argument("clients", clients)
    source.rounds = integer_argument("rounds", rounds)
    source.seed = integer_argument("seed", seed)
    source.within_site_order = string_argument("within_site_order", within_site_order, optional=True)
    source.client_order = string_argument("client_order", client_order, optional=True)
    out_dir = path_argument("out", out) if out is not None else ""
    command = f"omkl.study(data={source.path!r}, algos={algos!r}, seeds={seeds}, preset={preset!r}, profile={profile!r})"
    *texts, note = _omkl.run_study(source, algos, seeds, string_argument("profile", profile),
                            string_argument("backend", backend), integer_argument("threads", threads),
                            string_argument("metric", metric, optional=True),
                            string_argument("loss", loss, optional=True),
                            integer_argument("curve_points", curve_points), out_dir, bool(shuffle), bool(regret),
                            bool(regret_include_reg), string_argument("time_match", time_match, optional=True),
                            string_argument("std", std, optional=True),
                            string_argument("regret_comparator", regret_comparator, optional=True) or "auto",
                            float_argument("regret_lambda", regret_lambda),
                            string_argument("regret_dict", regret_dict, optional=True), command)
    if note:  # a raw stream far from unit scale (omkl study's note on stderr)
        warnings.warn(note, UserWarning, stacklevel=2)
    # With out_dir the library has written the files there (atomically), as for the CLI.
    return Study(*texts, directory=out_dir or None)

