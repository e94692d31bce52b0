#!/usr/bin/env bash
# On a GPU machine: build, run every test (GPU tests included), run the GPU
# benchmark, and a compute-sanitizer pass over the GPU tests. Logs go to
# OUT_DIR (default ./gpu-check-logs); the last lines summarise.
#   [FZ_COMMIT=id] bench/run_gpu_checks.sh [OUT_DIR] [GIB]
# (FZ_COMMIT names the commit when the tree travels without .git)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/gpu-check-logs}
gib=${2:-1}
build=${FZ_BUILD_DIR:-/tmp/floatz-gpu-build}
mkdir -p "$out"
{
    echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"
    echo "commit: ${FZ_COMMIT:-$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)}"
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
    nvcc --version | tail -1
} | tee "$out/env.txt"

cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DFZ_CUDA=ON \
    >"$out/build.log" 2>&1 &&
    cmake --build "$build" -j"$(nproc)" >>"$out/build.log" 2>&1 ||
    { tail -30 "$out/build.log"; exit 1; }

(cd "$build" && ctest -j4 --output-on-failure) >"$out/ctest.log" 2>&1
tests_rc=$?
"$build/bench/bench_gpu" --gib "$gib" --reps 9 --markdown "$out/bench.md" \
    >"$out/bench.log" 2>&1
bench_rc=$?
"$build/bench/bench_gpu" --gib "$gib" --reps 9 --no-checksum \
    --markdown "$out/bench_nochecksum.md" >"$out/bench_nochecksum.log" 2>&1
[ $? -eq 0 ] || bench_rc=1
"$build/bench/bench_gpu" --gib "$gib" --reps 9 --codec gfc \
    --markdown "$out/bench_gfc.md" >"$out/bench_gfc.log" 2>&1
[ $? -eq 0 ] || bench_rc=1
memcheck_rc=0
for t in "$build"/tests/test_gpu*; do
    timeout 300 compute-sanitizer --tool memcheck --error-exitcode 3 "$t" \
        >"$out/memcheck_$(basename "$t").log" 2>&1 || memcheck_rc=1
done

echo "== ctest (rc $tests_rc)"; tail -12 "$out/ctest.log"
echo "== bench (rc $bench_rc)"; cat "$out/bench.log"
echo "== bench without checksums"; tail -n +3 "$out/bench_nochecksum.log"
echo "== bench gfc"; tail -n +3 "$out/bench_gfc.log"
echo "== memcheck of the GPU tests (rc $memcheck_rc)"
tail -n 2 "$out"/memcheck_*.log
[ $tests_rc -eq 0 ] && [ $bench_rc -eq 0 ] && [ $memcheck_rc -eq 0 ]
