#!/usr/bin/env bash
# Installs the Debian packages kglm builds and tests with, only those missing (idempotent).
# Usage: cmake/install-deps.sh [extra-package...]
set -euo pipefail

packages=(
  build-essential cmake pkg-config
  libhdf5-dev hdf5-tools
  libicu-dev libxml2-dev
  libboost-program-options-dev
  libsimdjson-dev
  libzstd-dev zstd
  zlib1g-dev gzip libdeflate-dev
  libbz2-dev bzip2 lbzip2 libzip-dev
  libgtest-dev librandom123-dev libabsl-dev
  # ocl-icd-opencl-dev: Debian's oneDNN has the OpenCL GPU runtime; its dnnl-config.cmake needs OpenCL.
  libsentencepiece-dev sentencepiece libopenblas-dev libdnnl-dev ocl-icd-opencl-dev
  libopenmpi-dev openmpi-bin
  slurm-wlm munge
  lmod man-db
  clang-19 unzip python3-pip python3-venv
  libcrcutil-dev
  python3 python3-networkx python3-h5py python3-matplotlib
  "$@"
)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

echo "kglm: installing missing Debian packages: ${missing[*]}" >&2
sudo=()
[[ $(id -u) -eq 0 ]] || sudo=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
