#!/usr/bin/env python3
"""Peak resident memory of `omkl run --data -` at 10^5 and 10^7 rows (issue 17's acceptance:
within 10 %), and the live rows per second. Rows are generated here and piped in; nothing is kept.

    python3 bench/live_memory.py [--omkl build/omkl] [--rows 100000 10000000] [--algo raker]
"""
import argparse
import subprocess
import time


def rows_block(start, count):
    out = []
    for i in range(start, start + count):
        a, b, c = 0.1 * (i % 7), 0.05 * (i % 11), 0.3 * ((i * 7) % 5)
        out.append(f"{a:.6f},{b:.6f},{c:.6f},{a * a - b + 0.5 * c:.6f}\n")
    return "".join(out).encode()


def peak_rss_kib(pid):
    """The process's own high-water resident memory (VmHWM). Not wait4's ru_maxrss: that also
    counts the forked copy of this Python process from before the exec."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def run(omkl, algo, n_rows):
    child = subprocess.Popen([omkl, "run", "--data", "-", "--algo", algo, "--horizon", str(n_rows)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    start = time.perf_counter()
    child.stdin.write(b"a,b,c,y\n")
    block = 20000
    peak = 0
    for first in range(0, n_rows, block):
        child.stdin.write(rows_block(first, min(block, n_rows - first)))
        child.stdin.flush()
        peak = max(peak, peak_rss_kib(child.pid))  # sampled after every block, up to the last
    child.stdin.close()
    out = child.stdout.read().decode()
    err = child.stderr.read().decode()
    status = child.wait()
    seconds = time.perf_counter() - start
    if status != 0:
        raise SystemExit(f"omkl failed ({status}): {err}")
    return peak, seconds, out.strip()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--omkl", default="build/omkl")
    parser.add_argument("--algo", default="raker")
    parser.add_argument("--rows", type=int, nargs="+", default=[100000, 10000000])
    args = parser.parse_args()
    peaks = []
    for n in args.rows:
        peak, seconds, report = run(args.omkl, args.algo, n)
        peaks.append(peak)
        print(f"{n:>10} rows: peak RSS {peak / 1024:.1f} MiB, {seconds:.1f} s "
              f"({n / seconds:,.0f} rows/s incl. generation) | {report}")
    growth = (peaks[-1] - peaks[0]) / peaks[0]
    print(f"peak RSS growth from {args.rows[0]} to {args.rows[-1]} rows: {100 * growth:+.1f} % "
          f"({'within' if growth <= 0.10 else 'OVER'} the 10 % target)")


if __name__ == "__main__":
    main()
