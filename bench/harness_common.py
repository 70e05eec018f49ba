"""Helpers shared by the reproduction scripts (bench/reproduce_*.py): logging, shell probes,
algorithm availability, and replacing a marked block of bench/RESULTS.md atomically."""
from __future__ import annotations

import json
import os
import resource
import shlex
import shutil
import subprocess
import sys
import time


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def sh(cmd: list[str]) -> str:
    """Output of an informational command, or "" when it fails."""
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=30).stdout.strip()
    except Exception:  # noqa: BLE001 - informational only
        return ""


def cpu_model() -> str:
    """The CPU model name from /proc/cpuinfo, or "" where it cannot be read."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return ""


def run_timed(cmd: list[str]) -> tuple[subprocess.CompletedProcess, float, float]:
    """Runs cmd capturing its output; returns (process, wall seconds, CPU seconds of the child)."""
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.monotonic() - t0
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
    return proc, wall, cpu


def run_study_command(cmd: list[str], out_dir: str, resume: bool = False) -> dict:
    """Runs one `omkl study ... --out out_dir` (cmd); returns {"cmd", "rc", "wall_s", "cpu_s",
    "results": {spec: result}, "summary"} or, on failure, "error" with the end of stderr. The
    out_dir is cleared first unless resume (the cell cache is not keyed on the library version)."""
    if not resume and os.path.isdir(out_dir):
        shutil.rmtree(out_dir)
    os.makedirs(out_dir, exist_ok=True)
    log("$ " + shlex.join(cmd))
    proc, wall, cpu = run_timed(cmd)
    info = {"cmd": shlex.join(cmd), "rc": proc.returncode, "wall_s": wall, "cpu_s": cpu, "results": {}}
    if proc.returncode != 0:
        info["error"] = proc.stderr.strip()[-2000:]
        log(f"  FAILED rc={proc.returncode}: {info['error']}")
        return info
    log(f"  done in {wall:.1f} s wall, {cpu:.1f} s CPU")
    return load_summary(info, out_dir)


def load_summary(info: dict, out_dir: str) -> dict:
    """Reads out_dir's summary.json into info["summary"], and info["results"] = {spec: result}."""
    with open(os.path.join(out_dir, "summary.json"), encoding="utf-8") as f:
        info["summary"] = json.load(f)
    info["results"] = {r["spec"]: r for r in info["summary"]["results"]}
    return info


def algo_available(omkl: str, name: str) -> bool:
    return subprocess.run([omkl, "describe", name], capture_output=True, text=True).returncode == 0


def write_marked_block(path: str, md: str, begin: str, end: str, heading: str) -> None:
    """Replaces the text between `begin` and `end` in `path`; appends `heading` and the block at
    the end when the markers are missing. Written to a temporary file, then renamed."""
    block = f"{begin}\n{md}{end}"
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            text = f.read()
    else:
        text = "# Benchmark results\n"
    if begin in text and end in text:
        pre, rest = text.split(begin, 1)
        _, post = rest.split(end, 1)
        text = pre + block + post
    else:
        text = text.rstrip("\n") + f"\n\n{heading}\n\n" + block + "\n"
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)
