#!/usr/bin/env bash
# On a GPU machine: build, run the whole test suite (Falcon's GPU tests for
# both kernels included), compute-sanitizer memcheck over Falcon's GPU
# tests (quick mode), and bench_falcon on the time-series CSV files. Logs
# go to OUT_DIR (default ./falcon-gpu-logs); the last lines summarise.
#   bench/run_falcon_gpu.sh [OUT_DIR] [GIB] [DATA_DIR]
# DATA_DIR defaults to the first of ../shared/data/timeseries and
# shared/data/timeseries (relative to the repository) that exists.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/falcon-gpu-logs}
gib=${2:-1}
data=${3:-}
if [ -z "$data" ]; then
    for d in "$root/../shared/data/timeseries" "$root/shared/data/timeseries"; do
        if [ -d "$d" ]; then data=$d; break; fi
    done
fi
build=${FZ_BUILD_DIR:-/tmp/floatz-gpu-build}
mkdir -p "$out"
{
    echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"
    echo "commit: ${FZ_COMMIT:-$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)}"
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
    nvcc --version | tail -1
    echo "data: ${data:-none}"
} | tee "$out/env.txt"

cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DFZ_CUDA=ON \
    >"$out/build.log" 2>&1 &&
    cmake --build "$build" -j"$(nproc)" >>"$out/build.log" 2>&1 ||
    { tail -30 "$out/build.log"; exit 1; }

(cd "$build" && ctest -j4 --output-on-failure) >"$out/ctest.log" 2>&1
tests_rc=$?
memcheck_rc=0
for k in warp reference; do
    timeout 300 compute-sanitizer --tool memcheck --error-exitcode 3 \
        "$build/tests/test_gpu_falcon" "$k" quick >"$out/memcheck_$k.log" 2>&1 ||
        memcheck_rc=1
done
bench_rc=0
if [ -n "$data" ]; then
    "$build/bench/bench_falcon" --gib "$gib" --markdown "$out/bench_falcon.md" \
        "$data"/*.csv >"$out/bench_falcon.log" 2>&1 || bench_rc=1
else
    echo "no data directory: bench skipped" >"$out/bench_falcon.log"
    bench_rc=1
fi

echo "== ctest (rc $tests_rc)"; grep -E "tests passed|Failed|\*\*\*" "$out/ctest.log" | tail -15
for k in warp reference; do
    echo "== memcheck $k"; tail -3 "$out/memcheck_$k.log"
done
echo "== bench_falcon (rc $bench_rc)"; cat "$out/bench_falcon.log"
[ $tests_rc -eq 0 ] && [ $memcheck_rc -eq 0 ] && [ $bench_rc -eq 0 ]
