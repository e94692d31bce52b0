#!/usr/bin/env bash
# The floatz plugin in HDF5's command-line tools (ctest h5z_tools):
#  1. lossless repacks (sleek, falcon) with h5repack -f UD=310,...: h5diff
#     finds no difference, every dataset holds the same bytes, h5dump -p -H
#     shows filter 310 with its 14 cd_values, falcon's file is smaller;
#  2. repacking a filtered file with a new chunk shape keeps the filter and
#     the data (the plugin recomputes the chunk shape);
#  3. lossy repacks (sleek ABS 0.5 on every dataset, lorenzo ABS 0.01 on
#     one): within the bound (h5diff -d), not identical, smaller;
#  4. back without a filter (-f NONE): the same bytes, no filter 310 left;
#  5. without the plugin, reading a filtered dataset fails (non-zero exit,
#     no values printed); refused parameters (an unknown codec, half a
#     bound) reach the user as the plugin's message;
#  6. a filter before floatz (-f SHUF -f UD=...) is refused, never stored
#     with a broken bound; filters after it (shuffle, fletcher32) work.
# Usage: h5tools_test.sh TEST_PROGRAM PLUGIN_DIR H5REPACK H5DUMP H5DIFF
set -euo pipefail

if [ $# -ne 5 ]; then
    echo "usage: $0 TEST_PROGRAM PLUGIN_DIR H5REPACK H5DUMP H5DIFF" >&2
    exit 2
fi
prog=$1 plugin_dir=$2 h5repack=$3 h5dump=$4 h5diff=$5
tmp=$(mktemp -d "${TMPDIR:-/tmp}/h5z_tools.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export HDF5_PLUGIN_PATH=$plugin_dir

fail() {
    echo "FAIL: $*" >&2
    exit 1
}
size() { wc -c <"$1"; }

# Every dataset of $1 has filter 310 with 14 cd_values.
check_filtered() {
    local header count
    header=$("$h5dump" -p -H "$1")
    count=$(grep -c "FILTER_ID 310" <<<"$header" || true)
    [ "$count" -eq 3 ] || fail "$1: filter 310 on $count of 3 datasets"
    grep -o "PARAMS {[^}]*}" <<<"$header" |
        awk '{ if (NF - 3 != 14) bad = 1 } END { exit bad }' ||
        fail "$1: cd_values are not 14 values"
}

# $1 and $2 hold the same values (h5diff) and the same bytes.
check_same() {
    "$h5diff" "$1" "$2" || fail "h5diff $1 $2 reports differences"
    "$prog" compare "$1" "$2" || fail "$1 and $2 differ in their bytes"
}

echo "== input"
"$prog" write_input "$tmp/in.h5"
in_size=$(size "$tmp/in.h5")

echo "== 1. lossless: sleek, falcon"
# UD=id,flags(0 = mandatory),count,cd...: layout 1, codec (1 sleek, 3 falcon)
"$h5repack" -f UD=310,0,2,1,1 "$tmp/in.h5" "$tmp/sleek.h5"
check_filtered "$tmp/sleek.h5"
check_same "$tmp/in.h5" "$tmp/sleek.h5"
"$h5repack" -f UD=310,0,2,1,3 "$tmp/in.h5" "$tmp/falcon.h5"
check_filtered "$tmp/falcon.h5"
check_same "$tmp/in.h5" "$tmp/falcon.h5"
falcon_size=$(size "$tmp/falcon.h5")
echo "input $in_size bytes, falcon $falcon_size bytes"
[ "$falcon_size" -lt $((in_size * 3 / 4)) ] ||
    fail "falcon file not smaller: $falcon_size of $in_size bytes"

echo "== 2. rechunk a filtered file"
"$h5repack" -l /f32_1d:CHUNK=1000 "$tmp/falcon.h5" "$tmp/rechunk.h5"
check_filtered "$tmp/rechunk.h5"
"$h5dump" -p -H -d /f32_1d "$tmp/rechunk.h5" |
    grep -q "PARAMS { 1 3 0 0 0 0 0 0 1 1 1000 1 1 1 }" ||
    fail "the rechunked dataset's cd_values do not say 1000"
check_same "$tmp/in.h5" "$tmp/rechunk.h5"

echo "== 3. lossy: sleek ABS 0.5, lorenzo ABS 0.01"
# bound 0.5 = 0x3FE0000000000000: cd[3] = 0 (low word), cd[4] = 0x3FE00000
"$h5repack" -f UD=310,0,5,1,1,1,0,1071644672 "$tmp/in.h5" "$tmp/abs.h5"
check_filtered "$tmp/abs.h5"
"$h5diff" -d 0.5 "$tmp/in.h5" "$tmp/abs.h5" || fail "sleek ABS 0.5 exceeded"
if "$h5diff" -q "$tmp/in.h5" "$tmp/abs.h5"; then
    fail "sleek ABS 0.5 returned every value exactly"
fi
[ "$(size "$tmp/abs.h5")" -lt "$(size "$tmp/sleek.h5")" ] ||
    fail "lossy file not smaller than the lossless one"
# bound 0.01 = 0x3F847AE147AE147B, on /f64_3d only
"$h5repack" -f /f64_3d:UD=310,0,5,1,4,1,1202590843,1065646817 \
    "$tmp/in.h5" "$tmp/lorenzo.h5"
"$h5dump" -p -H -d /f64_3d "$tmp/lorenzo.h5" |
    grep -q "PARAMS { 1 4 1 1202590843 1065646817 0 0 0 2 3 8 16 16 1 }" ||
    fail "lorenzo cd_values not as given"
"$h5diff" -d 0.01 "$tmp/in.h5" "$tmp/lorenzo.h5" /f64_3d /f64_3d ||
    fail "lorenzo ABS 0.01 exceeded"

echo "== 4. back without a filter"
"$h5repack" -f NONE "$tmp/falcon.h5" "$tmp/none.h5"
if "$h5dump" -p -H "$tmp/none.h5" | grep -q "FILTER_ID"; then
    fail "-f NONE left a filter"
fi
check_same "$tmp/in.h5" "$tmp/none.h5"

echo "== 5. without the plugin; refused parameters"
mkdir "$tmp/no_plugins"
rc=0
HDF5_PLUGIN_PATH=$tmp/no_plugins "$h5dump" -d /f32_1d "$tmp/falcon.h5" \
    >"$tmp/dump.txt" 2>"$tmp/dump.err" || rc=$?
[ "$rc" -ne 0 ] || fail "h5dump read a filtered dataset without the plugin"
if sed -n '/DATA {/,/}/p' "$tmp/dump.txt" | grep -q "[0-9]"; then
    fail "h5dump printed values without the plugin"
fi
rc=0
HDF5_PLUGIN_PATH=$tmp/no_plugins "$h5diff" "$tmp/in.h5" "$tmp/falcon.h5" \
    >/dev/null 2>&1 || rc=$?
[ "$rc" -eq 2 ] || fail "h5diff without the plugin: exit $rc, expected 2"
# h5repack 1.10 falls back to the original settings when H5Dcreate fails
# (exit 0, a warning under -v): the plugin's reason must still show.
rc=0
"$h5repack" --enable-error-stack -f UD=310,0,2,1,99 "$tmp/in.h5" \
    "$tmp/refused.h5" >"$tmp/refused.txt" 2>&1 || rc=$?
grep -q "floatz: unknown codec id 99" "$tmp/refused.txt" ||
    fail "the plugin's refusal is not in h5repack's output"
if [ "$rc" -eq 0 ] && "$h5dump" -p -H "$tmp/refused.h5" | grep -q "FILTER_ID 310"; then
    fail "refused parameters produced filtered datasets"
fi
# Half a bound (4 values: only its low word) was taken as a subnormal bound.
"$h5repack" --enable-error-stack -f UD=310,0,4,1,1,1,1071644672 \
    "$tmp/in.h5" "$tmp/half.h5" >"$tmp/half.txt" 2>&1 || true
grep -q "floatz: 4 cd_values: the bound takes two" "$tmp/half.txt" ||
    fail "4 cd_values were not refused"

echo "== 6. filter order"
# Shuffle before a lossy floatz compressed shuffled bytes as floats: the
# bound held for those, not for the values (h5diff -d 0.5 found errors of
# ~300). floatz must come first: h5repack falls back to no filter, with
# the plugin's reason on the error stack.
"$h5repack" --enable-error-stack -f SHUF -f UD=310,0,5,1,1,1,0,1071644672 \
    "$tmp/in.h5" "$tmp/shuf.h5" >"$tmp/shuf.txt" 2>&1 || true
grep -q "floatz: floatz must be the first filter" "$tmp/shuf.txt" ||
    fail "shuffle before floatz was not refused"
if [ -f "$tmp/shuf.h5" ]; then
    "$h5diff" -d 0.5 "$tmp/in.h5" "$tmp/shuf.h5" >/dev/null ||
        fail "shuffle then floatz ABS 0.5: values beyond the bound"
fi
# Filters after floatz see its streams only: fine.
"$h5repack" -f UD=310,0,2,1,3 -f SHUF -f FLET "$tmp/in.h5" "$tmp/after.h5"
"$h5dump" -p -H -d /f64_3d "$tmp/after.h5" |
    tr -d '\n' | grep -q "FILTER_ID 310.*SHUFFLE.*FLETCHER32" ||
    fail "floatz, shuffle, fletcher32 not stored in that order"
check_same "$tmp/in.h5" "$tmp/after.h5"
echo "ok"
