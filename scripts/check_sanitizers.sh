#!/usr/bin/env bash
# Builds the library, the CLI and the tests with AddressSanitizer (leaks included) and
# UndefinedBehaviorSanitizer, and runs the whole test suite under them. Host code only, CPU
# backend (CUDA off: the device code is checked with compute-sanitizer on a GPU, see
# bench/gpu_session.sh). Any report fails the run. Usage: scripts/check_sanitizers.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build=${1:-build-sanitize}

cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOMKL_ENABLE_CUDA=OFF \
  -DOMKL_BUILD_BENCH=OFF -DOMKL_SANITIZE=address,undefined
cmake --build "$build" -j2
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1 \
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir "$build" --output-on-failure -j2
