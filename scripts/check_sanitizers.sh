#!/usr/bin/env bash
# Builds the library, the CLI and the tests with sanitizers and runs the whole test suite under
# them; any report fails the run. Host code only, CPU backend (CUDA off: the device code is
# checked with compute-sanitizer on a GPU, see bench/gpu_session.sh) and MPI off (Open MPI's own
# allocations read as leaks; the multi-process protocol is checked here through the tests'
# in-process communicator, tests/common/local_communicator.h). Two builds, because
# ThreadSanitizer cannot share a binary with AddressSanitizer:
#   BUILD_PREFIX-asan  AddressSanitizer (leaks included) + UndefinedBehaviorSanitizer, with the
#                      standard library's own checks (_GLIBCXX_ASSERTIONS: element indices)
#   BUILD_PREFIX-tsan  ThreadSanitizer (the step pool, the study's thread pool, lockstep runs);
#                      it also runs the draws' portable (non-AVX2) bulk loops, since the AVX2
#                      clones are left out under it (src/random/rng.cpp says why)
# Usage: scripts/check_sanitizers.sh [BUILD_PREFIX (default build-sanitize)] [asan|tsan ...]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
prefix=${1:-build-sanitize}
shift || true
kinds=("$@")
[ "${#kinds[@]}" -eq 0 ] && kinds=(asan tsan)

for kind in "${kinds[@]}"; do
  case "$kind" in
    asan) sanitizers=address,undefined; extra=-D_GLIBCXX_ASSERTIONS ;;
    tsan) sanitizers=thread; extra= ;;
    *) echo "check_sanitizers: unknown kind '$kind' (asan or tsan)" >&2; exit 2 ;;
  esac
  build="$prefix-$kind"
  echo "== $kind: -fsanitize=$sanitizers in $build"
  # -O1 and line tables only (-g1: file and line in every report, no variable info): the
  # sanitizers' recommended level, and the instrumented build in about half the time of -O2 -g
  # (measured 2026-11-26: the ASan+UBSan build 8 min 48 s, its tests no slower than at -O2).
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
    -DOMKL_ENABLE_CUDA=OFF -DOMKL_ENABLE_MPI=OFF \
    -DOMKL_BUILD_BENCH=OFF -DOMKL_BUILD_PYTHON=OFF -DOMKL_SANITIZE="$sanitizers" -DCMAKE_CXX_FLAGS="$extra"
  cmake --build "$build" -j2
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
    ctest --test-dir "$build" --output-on-failure -j2
done
