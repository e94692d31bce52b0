#!/usr/bin/env bash
# Builds the CPU library and the lock-step warp emulator of Falcon's GPU
# kernels (a C++20 compiler, no CUDA needed), then runs it:
#   tools/falcon_warp_emu/run.sh [quick]
# quick: round trips only (a few minutes); default: also every byte flip of
# some small streams, decoded by the CPU and the emulated GPU kernels.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${FZ_EMU_BUILD_DIR:-/tmp/floatz-emu-build}
cmake -S "$root" -B "$build" -DFZ_CUDA=OFF -DCMAKE_BUILD_TYPE=Release \
    >/dev/null
cmake --build "$build" -j"$(nproc)" --target floatz_static fz_test_util \
    >/dev/null
${CXX:-c++} -std=c++20 -O2 -Wall -Wextra -Wno-unknown-pragmas \
    '-D_Noreturn=[[noreturn]]' -I "$root/tools/falcon_warp_emu/stub" \
    -I "$root/src" -I "$root/include" -I "$root/tests" \
    "$root/tools/falcon_warp_emu/emu.cpp" "$build/tests/libfz_test_util.a" \
    "$build/libfloatz.a" -fopenmp -lm -o "$build/falcon_warp_emu"
OMP_WAIT_POLICY=PASSIVE "$build/falcon_warp_emu" "$@"
