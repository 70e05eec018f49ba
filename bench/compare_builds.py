#!/usr/bin/env python3
"""Compare two builds of `omkl` for speed, family by family, on one thread (a regression sweep).

Runs the same short studies with each build, alternated (A, B, A, B, ...), and prints per
algorithm the `seconds_mean` of every run and the ratio of the medians (B / A). Every run's
`curves.csv` must be byte-identical between the builds unless --allow-different is given: a
change meant to be faster must not change the numbers, and a regression hunt needs to know
whether the work is the same.

Why: a change to shared code can slow a path no benchmark watches (the PerFedAvg host path ran
2.4x slower for a day after its passes were shared with the GPU walk; found only when a table
was regenerated). Run it before and after such a change:

    python3 bench/compare_builds.py --a /tmp/old-build/omkl --b build/omkl --rounds 2

Uses ../shared/data (skips a study whose file is absent). Standard library only.
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import statistics
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(REPO, "..", "shared", "data")

# (name, data file, arguments): one study per family, short enough for a sweep (a few seconds).
STUDIES = [
    ("federated", "naval.csv",
     ["--preset", "fed-pofmkl", "--seeds", "4", "--algo", "pof-mkl:M=1", "--algo", "vm-kofl",
      "--algo", "em-kofl", "--algo", "perfedavg", "--algo", "ofskl"]),
    ("bandit", "elevators.csv",
     ["--preset", "bandit-oks", "--loss", "square", "--seeds", "3", "--algo", "oks++", "--algo", "ioks",
      "--algo", "oks:c_lambda=25", "--algo", "rf-oks++:D=400", "--algo", "lkmbooks:B=220"]),
    ("graph", "naval_journal.csv",
     ["--preset", "jmlr23-graph", "--profile", "reference", "--seeds", "3", "--algo", "omkl-gf",
      "--algo", "omkl-sfg", "--algo", "omkl-sfg-r", "--algo", "raker"]),
    ("jmlr19", "airfoil.csv",
     ["--preset", "jmlr19-regression", "--seeds", "3", "--algo", "raker", "--algo", "adaraker",
      "--algo", "kogd", "--algo", "omkl"]),
]


def run(omkl: str, data: str, args: list[str], out: str) -> list[tuple[str, float]]:
    cmd = [omkl, "study", "--data", data, "--threads", "1", "--out", out, *args]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"compare_builds: {' '.join(cmd)} failed ({done.returncode}): {done.stderr.strip()}")
    with open(os.path.join(out, "summary.json"), encoding="utf-8") as f:
        results = json.load(f)["results"]
    labels = [a for i, a in enumerate(args) if i > 0 and args[i - 1] == "--algo"]
    return [(labels[i] if i < len(labels) else r["algo"], r["seconds_mean"]) for i, r in enumerate(results)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--a", required=True, help="the reference build's omkl")
    parser.add_argument("--b", required=True, help="the build to compare with it")
    parser.add_argument("--rounds", type=int, default=2, help="alternated runs of each build (default 2)")
    parser.add_argument("--only", action="append", default=[], help="a study by name (federated, bandit, graph, jmlr19)")
    parser.add_argument("--allow-different", action="store_true", help="do not require identical curves.csv")
    opts = parser.parse_args()
    if opts.rounds < 1:
        sys.exit("compare_builds: --rounds must be at least 1")
    unknown = set(opts.only) - {name for name, _, _ in STUDIES}
    if unknown:
        sys.exit(f"compare_builds: unknown study {sorted(unknown)}; have {[n for n, _, _ in STUDIES]}")
    rows = []
    differ = []
    with tempfile.TemporaryDirectory(prefix="omkl-compare-") as scratch:
        for name, file, args in STUDIES:
            if opts.only and name not in opts.only:
                continue
            data = os.path.join(DATA, file)
            if not os.path.exists(data):
                print(f"skipped {name}: {data} is absent", file=sys.stderr)
                continue
            times: dict[str, dict[str, list[float]]] = {}
            for k in range(opts.rounds):
                for build, omkl in (("a", opts.a), ("b", opts.b)):
                    out = os.path.join(scratch, f"{name}-{build}-{k}")
                    for label, seconds in run(omkl, data, args, out):
                        times.setdefault(label, {"a": [], "b": []})[build].append(seconds)
                if not filecmp.cmp(os.path.join(scratch, f"{name}-a-{k}", "curves.csv"),
                                   os.path.join(scratch, f"{name}-b-{k}", "curves.csv"), shallow=False):
                    differ.append(name)
            for label, t in times.items():
                rows.append((name, label, t["a"], t["b"], statistics.median(t["b"]) / statistics.median(t["a"])))
    def fmt(values: list[float]) -> str:
        return " / ".join(f"{x:.4g}" for x in values)

    width = max([len("A (s per replicate)")] + [len(fmt(r[2])) for r in rows] + [len(fmt(r[3])) for r in rows])
    print(f"{'study':<10} {'algorithm':<18} {'A (s per replicate)':<{width}} {'B':<{width}} B/A (medians)")
    for name, label, a, b, ratio in rows:
        print(f"{name:<10} {label:<18} {fmt(a):<{width}} {fmt(b):<{width}} {ratio:.2f}")
    if differ and not opts.allow_different:
        sys.exit(f"compare_builds: curves.csv differs between the builds in {sorted(set(differ))}")


if __name__ == "__main__":
    main()
