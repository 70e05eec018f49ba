#!/usr/bin/env bash
# Builds the Python package the way users install it (pip install of this repository:
# scikit-build-core, the C++ library inside the wheel) into a fresh virtual environment and runs
# the Python tests against the installed package and its `omkl` tool, not the build tree.
# The environment sees the system's site-packages for the test tools (pytest, matplotlib,
# scikit-learn, pandas: scripts/setup.sh installs them) so that no extra downloads are needed;
# the package itself and NumPy's build requirements come from pip as for any user.
# Usage: scripts/check_python_package.sh [VENV_DIR (default build-venv)]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
venv=${1:-build-venv}
mkdir -p "$(dirname "$venv")"
venv=$(cd "$(dirname "$venv")" && pwd)/$(basename "$venv")  # absolute: the tests run elsewhere
rm -rf "$venv"
python3 -m venv --system-site-packages "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check .
# Run from outside the checkout, so that nothing but the installed package can be imported.
repo=$(pwd)
workdir=$(mktemp -d)
trap 'rm -rf "$workdir"' EXIT
cp -r python/tests "$workdir/tests"
cd "$workdir"
where=$("$venv/bin/python" -c "import omkl; print(omkl.__file__)")
case "$where" in
  "$venv"/*) ;;
  *) echo "check_python_package: imported omkl from $where, not from $venv" >&2; exit 1 ;;
esac
OMKL_CLI="$venv/bin/omkl" OMKL_SHARED_DATA="${OMKL_SHARED_DATA:-$repo/../shared/data}" MPLBACKEND=Agg \
  "$venv/bin/python" -m pytest -q -p no:cacheprovider tests
echo "check_python_package: the package installed from $repo passes its tests"
