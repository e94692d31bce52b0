#!/usr/bin/env bash
# Compression ratios of sleek's lossy mode at REL 1e-1 .. 1e-6 (CPU backend;
# the GPU writes the same bytes), per dataset and as geometric means, to
# compare with SLEEK's published geometric means. Checks every round trip
# (the CLI's verify exits non-zero on any violation).
#   bench/lossy_ratios.sh BUILD_DIR [DATA_DIR]
set -euo pipefail
build=${1:?usage: lossy_ratios.sh BUILD_DIR [DATA_DIR]}
root=$(cd "$(dirname "$0")/.." && pwd)
data=${2:-$root/../shared/data}
fz="$build/cli/floatz"
gen="$build/tools/fzgen"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bounds="1e-1 1e-2 1e-3 1e-4 1e-5 1e-6"

# name|type|shape args|file
inputs=()
for t in f32 f64; do
    for k in smooth3d turbulence; do
        "$gen" -k "$k" -t "$t" -3 128 128 64 -s 3 -o "$work/$k.$t"
        inputs+=("$k|$t|-3 128 128 64|$work/$k.$t")
    done
    "$gen" -k particles -t "$t" -n 200000 -s 3 -o "$work/particles.$t"
    inputs+=("particles|$t|-1 1200000|$work/particles.$t")
done
if [ -f "$data/scientific/testfloat_8_8_128.f32" ]; then
    inputs+=("testfloat_8_8_128|f32|-3 8 8 128|$data/scientific/testfloat_8_8_128.f32")
fi
if [ -d "$data/timeseries" ]; then
    for csv in "$data"/timeseries/*.csv; do
        inputs+=("$(basename "$csv" .csv)|f64||$csv")
    done
fi

printf '| dataset | type |'
for b in $bounds; do printf ' REL %s |' "$b"; done
printf '\n|---|---|'
for b in $bounds; do printf -- '---|'; done
printf '\n'
declare -A logsum count
for entry in "${inputs[@]}"; do
    IFS='|' read -r name t shape file <<<"$entry"
    printf '| %s | %s |' "$name" "$t"
    for b in $bounds; do
        # shellcheck disable=SC2086
        out=$("$fz" verify -t "$t" $shape -M REL -e "$b" -i "$file")
        ratio=$(awk '/^ratio:/ {print $2}' <<<"$out")
        printf ' %s |' "$ratio"
        key="$t $b"
        logsum[$key]=$(awk -v s="${logsum[$key]:-0}" -v r="$ratio" 'BEGIN {print s + log(r)}')
        count[$key]=$((${count[$key]:-0} + 1))
    done
    printf '\n'
done
for t in f32 f64; do
    printf '| **geometric mean** | %s |' "$t"
    for b in $bounds; do
        key="$t $b"
        awk -v s="${logsum[$key]}" -v n="${count[$key]}" 'BEGIN {printf " %.2f |", exp(s / n)}'
    done
    printf '\n'
done
