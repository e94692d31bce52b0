#!/usr/bin/env bash
# Installs the system packages floatz needs to build and test, on Debian or
# Ubuntu. Idempotent: installs only what is missing. The CUDA toolkit is
# optional (with nvcc on PATH the GPU backend is built too).
set -euo pipefail

need=()
command -v cmake >/dev/null 2>&1 || need+=(cmake)
command -v make >/dev/null 2>&1 || need+=(make)
command -v gcc >/dev/null 2>&1 || need+=(gcc)
command -v g++ >/dev/null 2>&1 || need+=(g++) # the CUDA host compiler
command -v clang-format >/dev/null 2>&1 || need+=(clang-format)
command -v cmp >/dev/null 2>&1 || need+=(diffutils)

if ((${#need[@]})); then
    sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    echo "install_deps: installing ${need[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}"
fi
