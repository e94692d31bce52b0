#!/usr/bin/env bash
# Lossless compression ratios per dataset: sleek, gfc (dimensionality 1 and
# 3) and every other lossless codec named on the command line, with
# harmonic (GFC's habit) and geometric means. CPU backend; the GPU writes
# the same bytes. Every round trip is verified bit for bit by floatz verify.
#   bench/lossless_ratios.sh BUILD_DIR [DATA_DIR] [EXTRA_CODEC...]
set -euo pipefail
build=${1:?usage: lossless_ratios.sh BUILD_DIR [DATA_DIR] [CODEC...]}
root=$(cd "$(dirname "$0")/.." && pwd)
data=${2:-$root/../shared/data}
shift $(($# >= 2 ? 2 : 1))
fz="$build/cli/floatz"
gen="$build/tools/fzgen"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

configs=("sleek|" "gfc|--dim 1" "gfc|--dim 3")
for c in "$@"; do configs+=("$c|"); done

inputs=()
for t in f64 f32; do
    for k in smooth3d turbulence; do
        "$gen" -k "$k" -t "$t" -3 128 128 64 -s 3 -o "$work/$k.$t"
        inputs+=("$k|$t|-3 128 128 64|$work/$k.$t")
    done
    "$gen" -k particles -t "$t" -n 200000 -s 3 -o "$work/particles.$t"
    inputs+=("particles (x,y,z,vx,vy,vz)|$t|-1 1200000|$work/particles.$t")
done
if [ -d "$data/timeseries" ]; then
    for csv in "$data"/timeseries/*.csv; do
        inputs+=("$(basename "$csv" .csv)|f64||$csv")
    done
fi

printf '| dataset | type |'
for c in "${configs[@]}"; do printf ' %s |' "${c/|/ }"; done
printf '\n|---|---|'
for c in "${configs[@]}"; do printf -- '---|'; done
printf '\n'
declare -A inv logs n
for entry in "${inputs[@]}"; do
    IFS='|' read -r name t shape file <<<"$entry"
    printf '| %s | %s |' "$name" "$t"
    for c in "${configs[@]}"; do
        IFS='|' read -r codec opts <<<"$c"
        # shellcheck disable=SC2086
        ratio=$("$fz" verify --cpu -t "$t" $shape -c "$codec" $opts -i "$file" |
            awk '/^ratio:/ {print $2}')
        printf ' %s |' "$ratio"
        inv[$c]=$(awk -v s="${inv[$c]:-0}" -v r="$ratio" 'BEGIN {print s + 1 / r}')
        logs[$c]=$(awk -v s="${logs[$c]:-0}" -v r="$ratio" 'BEGIN {print s + log(r)}')
        n[$c]=$((${n[$c]:-0} + 1))
    done
    printf '\n'
done
for mean in harmonic geometric; do
    printf '| **%s mean** | |' "$mean"
    for c in "${configs[@]}"; do
        if [ "$mean" = harmonic ]; then
            awk -v s="${inv[$c]}" -v k="${n[$c]}" 'BEGIN {printf " %.3f |", k / s}'
        else
            awk -v s="${logs[$c]}" -v k="${n[$c]}" 'BEGIN {printf " %.3f |", exp(s / k)}'
        fi
    done
    printf '\n'
done
