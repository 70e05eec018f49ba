#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages omkl needs to build and test, only those that are missing
# (Open MPI for the multi-process studies; the library builds without it, -DOMKL_ENABLE_MPI=OFF).
# Uses sudo only when not running as root. Does nothing when everything is installed.
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

if [ "${#missing[@]}" -eq 0 ]; then
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
