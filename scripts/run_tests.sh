#!/usr/bin/env bash
# The test suite: install what is needed, check formatting, then build and
# run every test twice: a release build, and a build under AddressSanitizer
# + UndefinedBehaviorSanitizer. GPU tests skip (clearly) without a GPU.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${FZ_BUILD_DIR:-$root/build}
jobs=$(nproc)

"$root/scripts/install_deps.sh"

echo "== clang-format check"
(cd "$root" && git ls-files '*.c' '*.h' '*.cu' '*.cuh' |
    xargs clang-format --dry-run --Werror)

echo "== release build + tests"
mkdir -p "$build-release"
"$root/scripts/build.sh" "$build-release" >/dev/null
(cd "$build-release" && ctest -j"$jobs" --output-on-failure)

echo "== ASan/UBSan build + tests (CPU backend)"
mkdir -p "$build-asan"
"$root/scripts/build.sh" "$build-asan" -DFZ_SANITIZE=ON -DFZ_CUDA=OFF \
    -DFZ_BUILD_BENCH=OFF >/dev/null
(cd "$build-asan" &&
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest -j"$jobs" --output-on-failure)
