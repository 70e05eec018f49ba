"""omkl.study: a Monte Carlo study (seeds x algorithms on one stream), as ``omkl study`` runs it."""
from __future__ import annotations

import csv
import io
import json
import os
from typing import Any, Dict, Iterable, List, Optional, Union

from . import _omkl


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
        return list(self._regret_rows)

    def final_mean(self, algo: str) -> float:
        """The final metric (mean over seeds) of the algorithm named ``algo`` (or its full spec)."""
        matches = [r for r in self.results if algo in (r["algo"], r["spec"])]
        if len(matches) != 1:
            names = ", ".join(r["spec"] for r in self.results)
            raise KeyError(f"{algo!r}: {'no' if not matches else 'more than one'} result of that name ({names})")
        return matches[0]["final_mean"]

    def __repr__(self) -> str:
        lines = [f"omkl.Study({self.summary['dataset']}, {self.summary['n_samples']} samples, "
                 f"profile {self.summary['profile']}{', preset ' + self.summary['preset'] if self.summary['preset'] else ''})"]
        for r in self.results:
            lines.append(f"  {r['spec'][:40]:<40} {r['metric']} {r['final_mean']:.6g} ± {r['final_std']:.3g} ({r['seeds']} seeds)")
        return "\n".join(lines)


def study(data: str = "synthetic:dataset2", algos: Optional[Union[str, Iterable[str]]] = None, seeds: Optional[int] = None,
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
    while the study runs.
    """
    if seeds is None:
        seeds = _omkl.default_seeds(preset or "")
    if algos is None:
        algos = [] if preset else ["raker", "adaraker"]  # [] : the library takes the preset's own
    elif isinstance(algos, str):
        algos = [algos]
    source = _omkl.StudySource()
    source.path = os.fspath(data)
    source.target_column = target
    source.group_column = group_column
    source.labels = labels or ""
    source.one_hot = one_hot or ""
    source.format = format or ""
    source.preset = preset or ""
    source.normalize = normalize or ""
    source.clients = int(clients)
    source.rounds = int(rounds)
    source.seed = int(seed)
    source.within_site_order = within_site_order or ""
    source.client_order = client_order or ""
    out_dir = os.fspath(out) if out is not None else ""
    command = f"omkl.study(data={source.path!r}, algos={list(algos)!r}, seeds={seeds}, preset={preset!r}, profile={profile!r})"
    texts = _omkl.run_study(source, list(algos), int(seeds), profile, backend, int(threads), metric or "", loss or "",
                            int(curve_points), out_dir, bool(shuffle), bool(regret), bool(regret_include_reg),
                            time_match or "", std or "", regret_comparator or "auto", float(regret_lambda),
                            regret_dict or "", command)
    # With out_dir the library has written the files there (atomically), as for the CLI.
    return Study(*texts, directory=out_dir or None)

