#!/usr/bin/env bash
# Installs what omkl needs to build and test, only what is missing:
#  - Debian/Ubuntu packages (Open MPI for the multi-process studies; the library builds without
#    it, -DOMKL_ENABLE_MPI=OFF), with sudo only when not running as root;
#  - for the Python package (python/), from the package registry with pip into the python3 on
#    PATH: nanobind (the bindings), NumPy, pytest, and matplotlib, scikit-learn and pandas (plots,
#    the estimators and data frames: optional for users, covered by the tests). Without them the C++ library, CLI and tests still
#    build (-DOMKL_BUILD_PYTHON=OFF); OMKL_SETUP_PYTHON=0 skips this part.
# Does nothing when everything is installed.
set -euo pipefail

packages=(
  cmake
  ninja-build
  g++
  libeigen3-dev
  libgtest-dev
  libgmock-dev
  libbenchmark-dev
  libcli11-dev
  nlohmann-json3-dev
  libfmt-dev
  libopenmpi-dev
  openmpi-bin
)

missing=()
for pkg in "${packages[@]}"; do
  if ! dpkg -s "$pkg" >/dev/null 2>&1; then
    missing+=("$pkg")
  fi
done

install_python_packages() {
  [ "${OMKL_SETUP_PYTHON:-1}" = 0 ] && return 0
  if ! command -v python3 >/dev/null 2>&1; then
    echo "setup: no python3 on PATH: the Python package will not be built" >&2
    return 0
  fi
  # import name = pip name
  local wanted=(nanobind=nanobind numpy=numpy pytest=pytest matplotlib=matplotlib sklearn=scikit-learn pandas=pandas)
  local pip_missing=() entry
  for entry in "${wanted[@]}"; do
    python3 -c "import ${entry%%=*}" >/dev/null 2>&1 || pip_missing+=("${entry#*=}")
  done
  [ "${#pip_missing[@]}" -eq 0 ] && return 0
  echo "setup: pip installing ${pip_missing[*]}"
  python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore "${pip_missing[@]}"
}

if [ "${#missing[@]}" -eq 0 ]; then
  install_python_packages
  echo "setup: all build dependencies are installed"
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "setup: missing packages (${missing[*]}) and no apt-get to install them" >&2
  exit 1
fi

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  if ! command -v sudo >/dev/null 2>&1; then
    echo "setup: missing packages (${missing[*]}); run as root or install sudo" >&2
    exit 1
  fi
  sudo_cmd=(sudo)
fi

echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
${sudo_cmd[@]+"${sudo_cmd[@]}"} apt-get update
${sudo_cmd[@]+"${sudo_cmd[@]}"} apt-get install -y --no-install-recommends "${missing[@]}"
install_python_packages
