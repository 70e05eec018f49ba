#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/) with clang and runs each one: the CSV and LIBSVM readers,
# the checkpoint loader, the algorithm-spec and kernel-dictionary parsers, the rate and
# divergence tables. The library is built with coverage instrumentation, AddressSanitizer and
# UndefinedBehaviorSanitizer (CUDA and MPI off) in its own build folder. Each target starts from
# a copy of its seed corpus (fuzz/corpus/<target>; the repository's corpus is never written) and
# stops after the time or the number of runs asked for; any crash, sanitizer report,
# undocumented exception, timeout or out-of-memory fails the script, which prints where the
# offending input was saved.
#
# Usage: scripts/fuzz.sh [SECONDS_PER_TARGET (default 15)] [TARGET ...]
#   TARGET: csv libsvm checkpoint algorithm_spec kernel_dictionary tables (default: all)
# Environment:
#   FUZZ_BUILD_DIR  build folder (default build-fuzz in the checkout: a folder outside it could
#                   hold another checkout's CMake cache, which CMake refuses)
#   FUZZ_WORK_DIR   corpora, crash inputs and logs (default FUZZ_BUILD_DIR/work)
#   FUZZ_RUNS       run each target this many executions instead of for a time (e.g. 10000000)
#   FUZZ_JOBS       targets fuzzed at once (default 1; each is one process)
#   FUZZ_ARGS       extra libFuzzer flags
#   FUZZ_SCRATCH    folder for the per-input files the readers open (default /dev/shm when
#                   writable: a tmpfs, 2 to 5 times the executions per second of a disk)
# Examples: scripts/fuzz.sh            (CI: 15 s per target)
#           scripts/fuzz.sh 3600 csv   (one hour on the CSV reader)
#           FUZZ_RUNS=10000000 scripts/fuzz.sh 0 checkpoint
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
repo=$(pwd)

seconds=${1:-15}
shift || true
targets=("$@")
[ "${#targets[@]}" -eq 0 ] && targets=(csv libsvm checkpoint algorithm_spec kernel_dictionary tables)
build=${FUZZ_BUILD_DIR:-$repo/build-fuzz}
work=${FUZZ_WORK_DIR:-$build/work}
jobs=${FUZZ_JOBS:-1}

# ---- clang and libFuzzer (Debian 12: clang 14; libclang_rt.fuzzer is in libclang-rt-14-dev) ----
packages=(clang libclang-rt-14-dev cmake ninja-build)
missing=()
for pkg in "${packages[@]}"; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if [ "${#missing[@]}" -gt 0 ] && ! echo 'int LLVMFuzzerTestOneInput(const char*, long) { return 0; }' |
    clang++ -x c++ -fsanitize=fuzzer - -o /dev/null >/dev/null 2>&1; then
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "fuzz: missing packages (${missing[*]}) and no apt-get to install them" >&2
    exit 1
  fi
  sudo_cmd=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || { echo "fuzz: missing ${missing[*]}; run as root or install sudo" >&2; exit 1; }
    sudo_cmd=(sudo)
  fi
  echo "fuzz: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  ${sudo_cmd[@]+"${sudo_cmd[@]}"} apt-get update
  ${sudo_cmd[@]+"${sudo_cmd[@]}"} apt-get install -y --no-install-recommends "${missing[@]}"
fi
scripts/setup.sh >/dev/null  # the library's own dependencies (Eigen, nlohmann-json, CLI11, fmt)

# ---- build ----
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DOMKL_ENABLE_CUDA=OFF -DOMKL_ENABLE_MPI=OFF -DOMKL_BUILD_TESTS=OFF -DOMKL_BUILD_BENCH=OFF \
  -DOMKL_BUILD_PYTHON=OFF -DOMKL_BUILD_FUZZERS=ON >/dev/null
cmake --build "$build" -j2 --target $(printf 'omkl_fuzz_%s ' "${targets[@]}")

# ---- run ----
if [ -n "${FUZZ_RUNS:-}" ]; then
  limit=(-runs="$FUZZ_RUNS")
  echo "fuzz: ${targets[*]}: $FUZZ_RUNS runs each"
else
  limit=(-max_total_time="$seconds")
  echo "fuzz: ${targets[*]}: ${seconds} s each"
fi
mkdir -p "$work"
scratch_root=${FUZZ_SCRATCH:-}
if [ -z "$scratch_root" ]; then
  if [ -d /dev/shm ] && [ -w /dev/shm ]; then scratch_root=/dev/shm; else scratch_root="$work"; fi
fi
scratch=$(mktemp -d "$scratch_root/omkl-fuzz.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

run_target() {
  local name=$1
  local dir="$work/$name"
  local exe="$build/fuzz/omkl_fuzz_$name"
  mkdir -p "$dir/corpus" "$dir/artifacts" "$scratch/$name"
  cp -n "$repo/fuzz/corpus/$name"/* "$dir/corpus/" 2>/dev/null || true
  # -rss_limit_mb (and the malloc limit it implies) reports unbounded allocations, -timeout hangs.
  # TMPDIR: the targets' scratch files for readers that take a path.
  TMPDIR="$scratch/$name" "$exe" "${limit[@]}" -rss_limit_mb=2048 -timeout=10 -max_len=4096 \
    -print_final_stats=1 -artifact_prefix="$dir/artifacts/" ${FUZZ_ARGS:-} "$dir/corpus" \
    >"$dir/log.txt" 2>&1
}

status=0
declare -A pids=()
for name in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do sleep 1; done
  run_target "$name" &
  pids[$name]=$!
done
for name in "${targets[@]}"; do
  rc=0
  wait "${pids[$name]}" || rc=$?
  dir="$work/$name"
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/log.txt" | tail -1)
  speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$dir/log.txt" | tail -1)
  if [ "$rc" -eq 0 ]; then
    echo "fuzz: $name: clean, ${runs:-?} runs, ${speed:-?} exec/s (log $dir/log.txt)"
  else
    status=1
    echo "fuzz: $name: FAILED (exit $rc) after ${runs:-?} runs; log $dir/log.txt" >&2
    grep -E "ERROR:|SUMMARY:|omkl fuzz:" "$dir/log.txt" | head -5 >&2 || true
    for input in "$dir"/artifacts/*; do
      [ -e "$input" ] && echo "fuzz: $name: input saved at $input (reproduce: $build/fuzz/omkl_fuzz_$name $input)" >&2
    done
  fi
done
exit "$status"
