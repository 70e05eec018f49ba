#!/usr/bin/env python3
"""Writes the golden checkpoints of tests/golden/ (README.md there): one small model of every
registered algorithm, saved by this build after the first rows of a fixed stream, and what that
build predicts from it on the rows that follow, with and without learning from them.

Usage: python3 tests/golden/make_golden.py OMKL_BINARY

Run it only when a checkpoint format changes on purpose and no loader for the old one is kept:
GoldenCheckpointTest then holds the new files, and the commit that regenerates them should say why.
"""
import csv
import json
import math
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TRAIN_ROWS, PROBE_ROWS = 60, 20
DICT3 = "gauss:0.5+gauss:2+lap:1"
FED = "dict=gauss2:0.5+gauss2:2+gauss2:8"
# A small configuration of every registered algorithm (D = 4, three or four kernels), so that the
# files stay a few kilobytes: the format, not the size, is what they pin.
SPECS = {
    "raker": f"raker:D=4,dict={DICT3}",
    "adaraker": "adaraker:D=4,dict=gauss:0.5+gauss:2",
    "rf-ogd": "rf-ogd:D=4",
    "kogd": "kogd",
    "linear": "linear",
    "poly": "poly",
    "rbf": "rbf",
    "rbf-1": "rbf-1",
    "poly-2": "poly-2",
    "avgmkl": "avgmkl",
    "omkl": "omkl",
    "omkl-b": "omkl-b",
    "adamkl": "adamkl",
    "m-forgetron": "m-forgetron",
    "omkr": f"omkr:dict={DICT3}",
    "rfomkr": f"rfomkr:D=4,dict={DICT3}",
    "omkl-gf": f"omkl-gf:D=4,M=2,J=2,dict={DICT3}+gauss:8",
    "omkl-sfg": f"omkl-sfg:D=4,M=2,dict={DICT3}+gauss:8",
    "omkl-sfg-r": f"omkl-sfg-r:D=4,M=2,beta_rank=2,dict={DICT3}+gauss:8",
    "sfg-mkl": f"sfg-mkl:D=4,M=2,dict={DICT3}+gauss:8",
    "sfg-mkl-r": f"sfg-mkl-r:D=4,M=2,beta_rank=2,dict={DICT3}+gauss:8",
    "pof-mkl": f"pof-mkl:clients=4,D=4,M=2,{FED}",
    "vm-kofl": f"vm-kofl:clients=4,D=4,{FED}",
    "em-kofl": f"em-kofl:clients=4,D=4,{FED}",
    "ofskl": "ofskl:clients=4,D=4",
    "ofmkl-avg": f"ofmkl-avg:clients=4,D=4,{FED}",
    "perfedavg": "perfedavg:clients=4,hidden_layers=1,width=3",
    "oks": "oks",
    "oks++": "oks++",
    "ioks": "ioks",
    "rf-oks": "rf-oks:D=8",
    "rf-oks++": "rf-oks++:D=8",
    "rf-ioks": "rf-ioks:D=8",
    "lkmbooks": "lkmbooks:B=20",
}
CLASSIFIERS = {"m-forgetron"}


def write_streams():
    """Two fixed streams of 80 rows, 3 features in [0, 1]: a regression target and ±1 labels."""
    rows = []
    for t in range(TRAIN_ROWS + PROBE_ROWS):
        x = [0.5 + 0.5 * math.sin(0.37 * (3 * t + k) + k) for k in range(3)]
        rows.append(x)
    for name, target in (("stream.csv", lambda x: 0.5 + 0.25 * math.sin(x[0] + 2 * x[1] - x[2])),
                         ("classes.csv", lambda x: 1 if x[0] + x[1] > x[2] + 0.5 else -1)):
        for part, chunk in (("", rows), ("_probe", rows[TRAIN_ROWS:])):
            with open(os.path.join(HERE, name.replace(".csv", part + ".csv")), "w", newline="") as f:
                w = csv.writer(f, lineterminator="\n")
                w.writerow(["a", "b", "c", "y"])
                for x in chunk:
                    w.writerow([repr(v) for v in x] + [repr(target(x))])


def predictions(omkl, *args):
    out = subprocess.run([omkl, *args, "--predictions", "-"], check=True, capture_output=True, text=True).stdout
    return [float(r["prediction"]) for r in csv.DictReader(out.splitlines())]


def main():
    omkl = sys.argv[1]
    write_streams()
    os.makedirs(os.path.join(HERE, "checkpoints"), exist_ok=True)
    listed = [line.split()[0] for line in subprocess.run([omkl, "list"], check=True, capture_output=True,
                                                          text=True).stdout.split("presets:")[0].splitlines()[1:]]
    missing = sorted(set(listed) - set(SPECS))
    if missing:
        sys.exit(f"make_golden.py: no golden configuration for {', '.join(missing)}: add one to SPECS")
    expected = {}
    for name, spec in SPECS.items():
        stream = "classes" if name in CLASSIFIERS else "stream"
        data = lambda part: os.path.join(HERE, f"{stream}{part}.csv")
        ckpt = os.path.join(HERE, "checkpoints", f"{name}.ckpt")
        # Trained on the first rows of the whole stream (its horizon T is the whole stream's).
        subprocess.run([omkl, "run", "--data", data(""), "--algo", spec, "--save", ckpt, "--save-at", str(TRAIN_ROWS)],
                       check=True, capture_output=True)
        expected[name] = {"spec": spec, "stream": f"{stream}_probe.csv",
                          "predict": predictions(omkl, "predict", "--model", ckpt, "--data", data("_probe")),
                          "continue": predictions(omkl, "run", "--data", data("_probe"), "--resume", ckpt)}
    with open(os.path.join(HERE, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
