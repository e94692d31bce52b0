#!/usr/bin/env bash
# The main job: install what is needed, build, then compress -> decompress
# -> verify a generated dataset and, when ../shared/data is present, the
# real data there. Uses the GPU when there is one, else the CPU backend.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${FZ_BUILD_DIR:-$root/build}
data=${FZ_DATA_DIR:-$root/../shared/data}

"$root/scripts/install_deps.sh"
mkdir -p "$build"
"$root/scripts/build.sh" "$build" >/dev/null
fz="$build/cli/floatz"
gen="$build/tools/fzgen"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "== $("$fz" --version | head -1)"

# 1. Generated: a smooth 3-D field (f32 and f64), through files.
for t in f32 f64; do
    "$gen" -k smooth3d -t "$t" -3 256 256 128 -s 7 -o "$work/smooth.$t"
    "$fz" compress -q -t "$t" -3 256 256 128 -i "$work/smooth.$t" -o "$work/smooth.$t.fz"
    "$fz" decompress -q -i "$work/smooth.$t.fz" -o "$work/smooth.$t.out"
    cmp "$work/smooth.$t" "$work/smooth.$t.out"
    echo "== generated smooth3d 256x256x128 $t: file round trip identical," \
        "$(stat -c %s "$work/smooth.$t") -> $(stat -c %s "$work/smooth.$t.fz") bytes"
    es=$([ "$t" = f32 ] && echo 4 || echo 8)
    "$fz" decompress -q -i "$work/smooth.$t.fz" -o "$work/part.$t" --range 1000000:5000
    [ "$(stat -c %s "$work/part.$t")" -eq $((5000 * es)) ]
    cmp -i $((1000000 * es)):0 -n $((5000 * es)) "$work/smooth.$t" "$work/part.$t"
    echo "== random access: values 1000000..1004999 decoded alone (--range), identical"
    "$fz" verify -t "$t" -3 256 256 128 -i "$work/smooth.$t"
    echo "== generated smooth3d $t, lossy: error bound 1e-3 x value range"
    "$fz" verify -t "$t" -3 256 256 128 -M REL -e 1e-3 -i "$work/smooth.$t"
done

# 2. Real data, read in place (never copied into the repository).
if [ -d "$data/timeseries" ]; then
    for csv in "$data"/timeseries/*.csv; do
        echo "== $(basename "$csv") (text, parsed exactly to float64; codec auto)"
        "$fz" verify -d -c auto -i "$csv"
    done
else
    echo "== $data/timeseries not found: real time series skipped"
fi
if [ -f "$data/scientific/testfloat_8_8_128.f32" ]; then
    echo "== testfloat_8_8_128.f32 (float32, 8x8x128)"
    "$fz" verify -f -3 8 8 128 -c auto -i "$data/scientific/testfloat_8_8_128.f32"
fi
echo "== main job done: every round trip verified"
