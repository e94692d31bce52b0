#!/usr/bin/env bash
# Configures and builds floatz into a build directory.
#   scripts/build.sh BUILD_DIR [extra cmake arguments...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:?usage: build.sh BUILD_DIR [cmake args]}
shift
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release "$@" >"$build.configure.log" 2>&1 ||
    { cat "$build.configure.log"; exit 1; }
cmake --build "$build" -j"$(nproc)"
