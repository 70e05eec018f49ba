#!/usr/bin/env bash
# Packs what one GPU session needs into a folder that the device tool can carry (it copies the
# working tree plus up to 8 ignored paths, 64 MiB in all, onto a bare machine with the CUDA
# driver and libraries but nothing else), so that device time goes to measuring, not to setup.
#
#   bench/gpu_bundle.sh CUDA_BUILD_DIR DATA_DIR BUNDLE_DIR
#
# CUDA_BUILD_DIR: a build configured with -DOMKL_ENABLE_CUDA=ON (sm_90 code); DATA_DIR: the
# shared data folder; BUNDLE_DIR: a path inside the checkout that git ignores (e.g. `.gpu`,
# listed in .git/info/exclude). Afterwards, on the device, in one call (timeout_s 600):
#   SESSION_BUDGET_S=560 bash bench/gpu_session.sh BUNDLE_DIR/bin BUNDLE_DIR/data $OUT
# (parts that would not fit are skipped and named; PARTS=… runs a subset in a further call).
set -euo pipefail
if [ $# -ne 3 ]; then
  echo "usage: $0 CUDA_BUILD_DIR DATA_DIR BUNDLE_DIR" >&2
  exit 2
fi
BUILD=$1
DATA=$2
BUNDLE=$3
for f in "$BUILD/omkl" "$BUILD/tests/omkl_tests" "$DATA/naval_journal.csv" "$DATA/airfoil.csv"; do
  [ -e "$f" ] || { echo "missing $f" >&2; exit 2; }
done
if ! grep -q "OMKL_ENABLE_CUDA:BOOL=ON" "$BUILD/CMakeCache.txt" 2>/dev/null; then
  echo "$BUILD is not a CUDA build (-DOMKL_ENABLE_CUDA=ON)" >&2
  exit 2
fi
rm -rf "$BUNDLE"
mkdir -p "$BUNDLE/bin" "$BUNDLE/data"
if ! git check-ignore -q "$BUNDLE/bin/omkl" 2>/dev/null; then
  echo "warning: $BUNDLE is not ignored by git (add it to .git/info/exclude): the device tool carries" \
       "untracked files anyway, but they would show in git status" >&2
fi
cp "$BUILD/omkl" "$BUILD/tests/omkl_tests" "$BUNDLE/bin/"
[ -e "$BUILD/bench/omkl_cuda_round_trip" ] && cp "$BUILD/bench/omkl_cuda_round_trip" "$BUNDLE/bin/"
# Shared libraries a bare machine lacks: everything the binaries link except the C/C++ runtime
# and the CUDA libraries, which the device machines have.
for lib in $(ldd "$BUILD/omkl" "$BUILD/tests/omkl_tests" | awk '$3 ~ /^\// {print $3}' | sort -u); do
  case "$(basename "$lib")" in
    libc.so*|libm.so*|libstdc++.so*|libgcc_s.so*|libpthread.so*|libdl.so*|librt.so*|ld-linux*|libcu*) ;;
    *) cp -L "$lib" "$BUNDLE/bin/" ;;
  esac
done
cp "$DATA/naval_journal.csv" "$DATA/airfoil.csv" "$BUNDLE/data/"
# The federated and bandit families' runs (PARTS=families) skip a file that is absent.
for f in naval.csv elevators.csv; do
  if [ -e "$DATA/$f" ]; then cp "$DATA/$f" "$BUNDLE/data/"; fi
done
size_kb=$(du -sk "$BUNDLE" | cut -f1)
echo "$BUNDLE: $(ls "$BUNDLE/bin" | tr '\n' ' ')+ data, ${size_kb} KiB"
if [ "$size_kb" -gt $((60 * 1024)) ]; then
  echo "warning: over 60 MiB; the device tool carries at most 64 MiB" >&2
fi
