#!/usr/bin/env bash
# Compression ratio and PSNR of lorenzo next to sleek's lossy mode at REL
# 1e-2 .. 1e-5 (CPU backend), on the generator's 2-D and 3-D fields and
# the real scientific sample. Every round trip is verified (the CLI's
# verify exits non-zero on any violation).
#   bench/lorenzo_ratios.sh BUILD_DIR [DATA_DIR]
set -euo pipefail
build=${1:?usage: lorenzo_ratios.sh BUILD_DIR [DATA_DIR]}
root=$(cd "$(dirname "$0")/.." && pwd)
data=${2:-$root/../shared/data}
fz="$build/cli/floatz"
gen="$build/tools/fzgen"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bounds="1e-2 1e-3 1e-4 1e-5"

# name|type|shape args|file
inputs=()
for t in f32 f64; do
    for k in smooth3d turbulence; do
        "$gen" -k "$k" -t "$t" -3 128 128 64 -s 3 -o "$work/$k.$t"
        inputs+=("$k 128x128x64|$t|-3 128 128 64|$work/$k.$t")
        "$gen" -k "$k" -t "$t" -3 1024 1024 1 -s 5 -o "$work/$k-2d.$t"
        inputs+=("$k 2-D 1024x1024|$t|-2 1024 1024|$work/$k-2d.$t")
    done
done
if [ -f "$data/scientific/testfloat_8_8_128.f32" ]; then
    inputs+=("testfloat 8x8x128|f32|-3 8 8 128|$data/scientific/testfloat_8_8_128.f32")
fi

printf '| dataset | type | codec |'
for b in $bounds; do printf ' REL %s ratio / PSNR |' "$b"; done
printf '\n|---|---|---|'
for b in $bounds; do printf -- '---|'; done
printf '\n'
for entry in "${inputs[@]}"; do
    IFS='|' read -r name t shape file <<<"$entry"
    for codec in lorenzo sleek; do
        printf '| %s | %s | %s |' "$name" "$t" "$codec"
        for b in $bounds; do
            # shellcheck disable=SC2086
            out=$("$fz" verify -c "$codec" -t "$t" $shape -M REL -e "$b" -i "$file")
            ratio=$(awk '/^ratio:/ {print $2}' <<<"$out")
            psnr=$(awk '/^PSNR:/ {print $2}' <<<"$out")
            printf ' %s / %s |' "$ratio" "$psnr"
        done
        printf '\n'
    done
done
