#!/usr/bin/env bash
# The graph-aided family's CPU cost against Raker's (issue 3: each at most 40 % of Raker at
# M = 10), measured the way bench/RESULTS.md reports it: the algorithms run in alternation for
# ROUNDS rounds (one thread, one seed, the jmlr23-graph preset), and each one's median and
# minimum µs per sample per seed are printed with the median's share of Raker's median.
# Alternating rounds keep a shared machine's load from favouring one algorithm.
#
#   bench/graph_cpu_ratio.sh [--profile paper|reference] OMKL DATA.csv ROUNDS [ALGO ...]
#
# ALGO defaults to omkl-gf:M=10 omkl-sfg:M=10 omkl-sfg-r:M=10; raker is always measured.
set -euo pipefail
profile=paper
if [ "${1:-}" = "--profile" ]; then
  profile=$2
  shift 2
fi
if [ $# -lt 3 ]; then
  echo "usage: $0 [--profile paper|reference] OMKL DATA.csv ROUNDS [ALGO ...]" >&2
  exit 2
fi
omkl=$1 data=$2 rounds=$3
shift 3
algos=("$@")
[ ${#algos[@]} -gt 0 ] || algos=(omkl-gf:M=10 omkl-sfg:M=10 omkl-sfg-r:M=10)
algos+=(raker)
results=$(mktemp)
trap 'rm -f "$results"' EXIT
for ((r = 0; r < rounds; ++r)); do
  for a in "${algos[@]}"; do
    "$omkl" bench --data "$data" --preset jmlr23-graph --profile "$profile" --algo "$a" --seeds 1 \
      --threads 1 --repeat 3 | awk -v a="$a" 'NR > 2 && $2 == 1 {print a, $3}' >> "$results"
  done
done
python3 - "$results" <<'PY'
import statistics, sys
times = {}
for line in open(sys.argv[1]):
    name, us = line.split()
    times.setdefault(name, []).append(float(us))
raker = statistics.median(times["raker"])
for name, v in times.items():
    med = statistics.median(v)
    print(f"{name:<28} median {med:7.2f} us (min {min(v):7.2f}, {len(v)} rounds)  = {100 * med / raker:5.1f} % of raker")
PY
