#!/usr/bin/env bash
# Installs the system packages floatz needs to build and test, on Debian or
# Ubuntu. Idempotent: installs only what is missing. The CUDA toolkit is
# optional (with nvcc on PATH the GPU backend is built too). HDF5 is for the
# filter plugin (plugins/hdf5), python3 + numpy (+ numcodecs) for the
# Python bindings (bindings/python) and their tests.
set -euo pipefail

need=()
command -v cmake >/dev/null 2>&1 || need+=(cmake)
command -v make >/dev/null 2>&1 || need+=(make)
command -v gcc >/dev/null 2>&1 || need+=(gcc)
command -v g++ >/dev/null 2>&1 || need+=(g++) # the CUDA host compiler
command -v clang-format >/dev/null 2>&1 || need+=(clang-format)
command -v cmp >/dev/null 2>&1 || need+=(diffutils)
[ -e /usr/include/hdf5/serial/hdf5.h ] || [ -e /usr/include/hdf5.h ] ||
    need+=(libhdf5-dev)
command -v h5repack >/dev/null 2>&1 || need+=(hdf5-tools)
command -v python3 >/dev/null 2>&1 || need+=(python3 python3-pip)

if ((${#need[@]})); then
    sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    echo "install_deps: installing ${need[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}"
fi

# numpy for the bindings, numcodecs for their zarr/numcodecs codec: from
# PyPI when the python3 on PATH lacks them.
missing_py=()
python3 -c "import numpy" 2>/dev/null || missing_py+=(numpy)
python3 -c "import numcodecs" 2>/dev/null || missing_py+=(numcodecs)
if ((${#missing_py[@]})); then
    echo "install_deps: pip installing ${missing_py[*]}"
    python3 -m pip install -q --disable-pip-version-check \
        --root-user-action=ignore "${missing_py[@]}" ||
        python3 -m pip install -q --break-system-packages "${missing_py[@]}"
fi
