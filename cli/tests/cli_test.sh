#!/usr/bin/env bash
# End-to-end tests of the floatz command-line tool.
# Usage: bash cli_test.sh PATH/TO/floatz
# Prints one line per check; exits non-zero when any check fails.
set -u

FLOATZ=${1:?usage: cli_test.sh PATH/TO/floatz}
case $FLOATZ in /*) ;; *) FLOATZ=$PWD/$FLOATZ ;; esac
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# Sample data shared next to the repository (optional).
TIMESERIES=$HERE/../../../shared/data/timeseries

WORK=$(mktemp -d "${TMPDIR:-/tmp}/floatz-cli-test.XXXXXX") || exit 1
trap 'rm -rf "$WORK"' EXIT
cd "$WORK" || exit 1

checks=0
failures=0
pass() {
    checks=$((checks + 1))
    echo "ok   - $1"
}
fail() {
    checks=$((checks + 1))
    failures=$((failures + 1))
    echo "FAIL - $1"
}
check() { # DESCRIPTION COMMAND...: passes when the command succeeds
    local what=$1
    shift
    if "$@"; then pass "$what"; else fail "$what"; fi
}

# check_rc GOT WANT DESCRIPTION: the exit status, stderr shown on a failure
check_rc() {
    if [ "$1" -eq "$2" ]; then
        pass "$3 (exit $1)"
    else
        fail "$3: exit $1, expected $2"
        sed 's/^/    stderr: /' err.txt
    fi
}

# expect_rc CODE DESCRIPTION floatz-ARGS...: stdout -> out.txt, stderr -> err.txt
expect_rc() {
    local want=$1 what=$2
    shift 2
    "$FLOATZ" "$@" >out.txt 2>err.txt
    check_rc $? "$want" "$what"
}

# expect_error PATTERN DESCRIPTION: the last command's stderr is one
# "floatz: " line matching PATTERN.
expect_error() {
    if [ "$(wc -l <err.txt)" -eq 1 ] && grep -q '^floatz: ' err.txt &&
        grep -Eq -- "$1" err.txt; then
        pass "$2"
    else
        fail "$2: stderr was: $(cat err.txt)"
    fi
}

file_size() { wc -c <"$1" | tr -d ' '; }

no_leftovers() { # OUT: OUT and any temporary file are absent
    ! ls "$1" ./*.tmp.* >/dev/null 2>&1
}

# Replace the byte at OFFSET of FILE by its complement.
flip_byte() {
    local byte
    byte=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
    printf "\\$(printf '%03o' $((byte ^ 255)))" |
        dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null
}

# Both files hold the same numbers, line by line, compared by value.
same_numbers() {
    [ "$(wc -l <"$1")" -eq "$(wc -l <"$2")" ] &&
        paste -d ' ' "$1" "$2" |
        awk '($1 + 0) != ($2 + 0) { bad++ } END { exit bad > 0 }'
}

echo "# floatz CLI tests: $FLOATZ"

# ------------------------------------------------------------ basics
expect_rc 0 "--version" --version
check "--version names the version" grep -q '^floatz [0-9]' out.txt
expect_rc 0 "--help" --help
check "--help lists the commands" grep -q 'decompress' out.txt
expect_rc 0 "compress --help" compress --help
check "compress --help says NX is fastest" grep -q 'NX is the fastest' out.txt
expect_rc 0 "-h" -h
expect_rc 2 "no command"
expect_error 'no command' "no command: one clear message"

# ------------------------------------------------------------ test data
N=100000
awk -v n=$N 'BEGIN { for (i = 0; i < n; i++) printf "%.17g\n", sin(i * 0.01) * 1000 + i }' >f64.txt
# float32-exact values, so they compare equal as doubles too
awk -v n=$N 'BEGIN { for (i = 0; i < n; i++) printf "%.9g\n", (i % 977) * 0.25 - 100 }' >f32.txt

# ------------------------------------------------------------ round trips
expect_rc 0 "compress f64 text" compress -d -i f64.txt -o f64.fz
expect_rc 0 "decompress f64 to raw" decompress -i f64.fz -o f64.raw
check "f64 raw has 8 bytes per value" [ "$(file_size f64.raw)" -eq $((N * 8)) ]
expect_rc 0 "compress f64 raw (-z alias)" -z -d -i f64.raw -o f64b.fz -q
check "-q prints nothing" [ ! -s err.txt ]
check "raw and text input give the same stream" cmp -s f64.fz f64b.fz
expect_rc 0 "decompress f64 raw (-x alias)" -x -i f64b.fz -o f64b.raw
check "f64 raw round trip is bitwise identical" cmp -s f64.raw f64b.raw
expect_rc 0 "decompress f64 --text" decompress -i f64.fz -o f64.out --text
check "f64 --text output equals the input numbers" same_numbers f64.txt f64.out

expect_rc 0 "compress f32 text with -t f32 and a 2-D shape" \
    compress -t f32 -2 1000 100 -i f32.txt -o f32.fz
expect_rc 0 "decompress f32 to raw" decompress -i f32.fz -o f32.raw
check "f32 raw has 4 bytes per value" [ "$(file_size f32.raw)" -eq $((N * 4)) ]
expect_rc 0 "compress f32 raw, 3-D" compress -f -3 100 10 100 -i f32.raw -o f32b.fz
expect_rc 0 "decompress f32 raw" decompress -i f32b.fz -o f32b.raw
check "f32 raw round trip is bitwise identical" cmp -s f32.raw f32b.raw
expect_rc 0 "decompress f32 to .txt (text by name)" decompress -i f32.fz -o f32.out.txt
check "f32 text output equals the input numbers" same_numbers f32.txt f32.out.txt
expect_rc 0 "decompress with matching -f and shape" \
    decompress -f -2 1000 100 -i f32.fz -o f32c.raw
expect_rc 1 "decompress with the wrong type" decompress -d -i f32.fz -o x.raw
expect_error 'float32' "wrong type: message names the stored type"
expect_rc 1 "decompress with the wrong shape" decompress -1 5 -i f32.fz -o x.raw
check "no output after a refused decompress" no_leftovers x.raw

# float32 text parsed with strtof: exact, one rounding (a double parse
# then cast would give 1 for the second line)
printf '0.1\n1.00000005960464477550\n1e-40\n-3.40282347e38\n  7.5 \r\n\n' >exact32.txt
expect_rc 0 "compress tricky f32 text" compress -f -i exact32.txt -o exact32.fz
expect_rc 0 "decompress tricky f32 --text" decompress -i exact32.fz -o exact32.out --text
check "strtof rounding kept (1.00000012)" grep -qx '1.00000012' exact32.out
check "f32 values print with 9 digits" grep -qx '0.100000001' exact32.out
expect_rc 0 "recompress the f32 text output" compress -f --text -i exact32.out -o exact32b.fz
check "f32 text output reads back to the same bits" cmp -s exact32.fz exact32b.fz

# ------------------------------------------------------------ random access
# --range FIRST:COUNT decodes only the chunks holding those values: the
# same bytes as that slice of a full decode (f64: 8 bytes per value).
expect_rc 0 "decompress --range across chunks" \
    decompress -i f64.fz -o r.raw --range 2040:5000
tail -c +$((2040 * 8 + 1)) f64.raw | head -c $((5000 * 8)) >slice.raw
check "--range gives that slice of the full decode" cmp -s r.raw slice.raw
cat f64.fz | "$FLOATZ" decompress -q -i /dev/stdin -o rp.raw --range 2040:5000
check "--range from a pipe (read whole) gives the same slice" cmp -s rp.raw slice.raw
expect_rc 0 "decompress --range to text" \
    decompress -i f32.fz -o r.txt --range 99990:10
tail -n 10 f32.txt >last10.txt
check "--range text equals the input's last 10 numbers" \
    same_numbers r.txt last10.txt
expect_rc 0 "--range with COUNT 0" decompress -i f32.fz -o r0.raw --range 5:0
check "--range 5:0 writes an empty file" [ ! -s r0.raw ]
expect_rc 1 "--range past the end" decompress -i f32.fz -o x.raw --range 99999:2
expect_error 'past the stream' "--range past the end: clear message"
check "no output after a refused --range" no_leftovers x.raw
expect_rc 2 "--range needs FIRST:COUNT" decompress -i f32.fz -o x.raw --range 7
expect_rc 2 "--range does not apply to compress" \
    compress -d -i f64.txt -o x.fz --range 0:1

# ------------------------------------------------------------ info, verify
expect_rc 0 "info" info f64.fz
for field in 'format version' 'codec:.*sleek' 'codec version' 'dtype:.*float64' \
    'ndims:.*1' 'dims:.*100000' 'fastest' 'mode:.*lossless' 'bound requested' \
    'bound effective' 'original bytes:.*800000' 'compressed bytes' 'ratio' \
    'chunk bytes' 'chunk count' 'checksums:.*yes'; do
    check "info shows '$field'" grep -q "$field" out.txt
done
expect_rc 0 "info -i with a 3-D f32 stream" info -i f32b.fz
check "info shows 3 dims, dims[0] first" grep -q 'dims:.*100 x 10 x 100' out.txt
expect_rc 0 "verify f64 text" verify -d -i f64.txt
check "verify prints verified" grep -q 'verified' out.txt
for field in 'original bytes' 'compressed bytes' 'ratio' 'GB/s' 'max abs error:.*0'; do
    check "verify shows '$field'" grep -q "$field" out.txt
done
expect_rc 0 "verify f32 raw, 2-D, --cpu -j 2" verify -f -2 1000 100 --cpu -j 2 -i f32.raw
check "verify f32 prints verified" grep -q 'verified' out.txt

# ------------------------------------------------------------ codec auto
# f32.txt is a sawtooth of quarters: decimal, so auto keeps falcon
expect_rc 0 "compress -c auto" compress -f -c auto -i f32.raw -o auto.fz
check "the summary names the codec chosen" grep -q 'codec falcon' err.txt
expect_rc 0 "info of an auto stream" info auto.fz
check "info shows the codec chosen" grep -q 'codec:.*falcon' out.txt
expect_rc 0 "decompress the auto stream" decompress -i auto.fz -o auto.raw
check "auto round trip is bitwise identical" cmp -s f32.raw auto.raw
expect_rc 0 "verify -c auto -M REL" verify -d -c auto -M REL -e 1e-3 -i f64.raw
check "auto verify says which codec auto chose" \
    grep -Eq 'codec:.*(sleek|lorenzo) \(chosen by auto\)' out.txt
check "auto REL verify: verified (within bound)" grep -q 'verified (within bound)' out.txt
expect_rc 2 "--zero-runs with -c auto" compress -d -c auto --zero-runs -M ABS -e 1 -i f64.raw -o x.fz
check "no output after a refused auto option" no_leftovers x.fz

# ------------------------------------------------------------ checksums
expect_rc 0 "compress --no-checksum" compress -d --no-checksum -i f64.raw -o nosum.fz
expect_rc 0 "info of a stream without checksums" info nosum.fz
check "info says checksums: no" grep -q 'checksums:.*no' out.txt
expect_rc 0 "decompress --skip-checksum" decompress --skip-checksum -i f64.fz -o skip.raw
check "--skip-checksum output is identical" cmp -s f64.raw skip.raw

# ------------------------------------------------------------ overwriting
cp f64.fz keep.fz
expect_rc 1 "overwrite refused without -F" compress -d -i f32.raw -o keep.fz
expect_error 'exists.*-F' "overwrite refused: message suggests -F"
check "refused overwrite left the file untouched" cmp -s f64.fz keep.fz
check "no temporary file left" no_leftovers does-not-exist
expect_rc 0 "overwrite allowed with -F" compress -F -f -3 100 10 100 -i f32.raw -o keep.fz
check "-F replaced the file" cmp -s f32b.fz keep.fz
expect_rc 1 "IN == OUT refused" compress -F -d -i f64.raw -o f64.raw
expect_error 'same file' "IN == OUT: clear message"
expect_rc 1 "IN == OUT through another path refused" compress -F -d -i f64.raw -o ./f64.raw
check "input untouched after IN == OUT" [ "$(file_size f64.raw)" -eq $((N * 8)) ]
ln f64.fz hardlink.fz
expect_rc 1 "IN == OUT through a hard link refused" decompress -F -i f64.fz -o hardlink.fz

# ------------------------------------------------------------ bad input
expect_rc 1 "missing input file" compress -d -i does-not-exist.raw -o x.fz
expect_error 'does-not-exist.raw' "missing input: message names the file"
printf '1234567' >seven.raw
expect_rc 1 "raw size not a multiple of the value size" compress -f -i seven.raw -o x.fz
expect_error 'whole number' "raw size: clear message"
expect_rc 1 "shape does not match the file size" compress -f -2 1000 99 -i f32.raw -o x.fz
expect_error 'shape' "shape mismatch: clear message"
check "no output after a failed compress" no_leftovers x.fz
printf '1.0\nabc\n3\n' >bad.txt
expect_rc 1 "text with a non-number" compress -d -i bad.txt -o x.fz
expect_error 'bad.txt:2:' "non-number: message gives the line"
printf '1.0\n2.5x\n' >bad2.txt
expect_rc 1 "text with trailing garbage" compress -d -i bad2.txt -o x.fz
expect_error ':2:' "trailing garbage: message gives the line"
printf '1.0\n\n3\n' >bad3.txt
expect_rc 1 "text with an empty line in the middle" compress -d -i bad3.txt -o x.fz
expect_error ':2:' "empty line: message gives the line"
printf '1e39\n' >big.txt
expect_rc 1 "float32 text out of range" compress -f -i big.txt -o x.fz
expect_error 'out of range' "out of range: clear message"
: >empty.raw
expect_rc 0 "compress an empty file" compress -f -i empty.raw -o empty.fz
expect_rc 0 "decompress an empty stream" decompress -i empty.fz -o empty.out
check "empty round trip" cmp -s empty.raw empty.out
expect_rc 1 "decompress a file that is not a stream" decompress -i f64.txt -o x.raw
expect_error 'not a floatz stream' "not a stream: library message"

# ------------------------------------------------------------ bad arguments
expect_rc 2 "unknown option" compress --frobnicate -d -i f64.raw -o x.fz
expect_error 'unknown option' "unknown option: clear message"
expect_rc 2 "unknown short option" compress -Q -d -i f64.raw -o x.fz
expect_rc 2 "unknown command" squeeze -i f64.raw
expect_rc 2 "option without its value" compress -d -i f64.raw -o
expect_error 'needs a value' "missing value: clear message"
expect_rc 2 "non-numeric shape" compress -d -2 10 abc -i f64.raw -o x.fz
expect_error "'abc'" "non-numeric shape: message quotes it"
expect_rc 2 "zero dimension" compress -d -3 0 10 10 -i f64.raw -o x.fz
expect_rc 2 "negative dimension" compress -d -1 -5 -i f64.raw -o x.fz
expect_rc 2 "too few sizes for -3" compress -d -i f64.raw -o x.fz -3 10 20
expect_rc 2 "too many sizes for -2" compress -d -2 10 20 30 -i f64.raw -o x.fz
expect_rc 2 "five dimensions" compress -d -5 1 1 1 1 1 -i f64.raw -o x.fz
expect_rc 2 "no data type for compress" compress -i f64.raw -o x.fz
expect_rc 2 "no output for compress" compress -d -i f64.raw
expect_rc 2 "option that does not apply" decompress --no-checksum -i f64.fz -o x.raw
expect_rc 2 "bad thread count" compress -d -j many -i f64.raw -o x.fz
expect_rc 2 "unknown codec" compress -d -c nope -i f64.raw -o x.fz
expect_error 'sleek' "unknown codec: message lists the codecs"

# ------------------------------------------------------------ lossy
# within_bound BOUND ORIG DECODED: both text files hold the same number of
# values and each decoded value is within BOUND of the original (in double;
# awk reads "%.17g" / "%.9g" back exactly).
within_bound() {
    [ "$(wc -l <"$2")" -eq "$(wc -l <"$3")" ] &&
        paste -d ' ' "$2" "$3" | awk -v b="$1" '
            { d = $2 - $1; if (d < 0) d = -d; if (d > b) bad++ }
            END { exit bad > 0 }'
}
differ() { ! cmp -s "$1" "$2"; }
# value_range FILE: max - min of a text file's values
value_range() {
    awk 'NR == 1 { lo = $1; hi = $1 }
         { if ($1 < lo) lo = $1; if ($1 > hi) hi = $1 }
         END { printf "%.17g\n", hi - lo }' "$1"
}
# pow2_at_most E LIMIT: E is a power of two (> 0) and E <= LIMIT
pow2_at_most() {
    awk -v e="$1" -v lim="$2" 'BEGIN {
        if (!(e > 0) || e > lim) exit 1
        while (e < 1) e *= 2
        while (e > 1) e /= 2
        exit e != 1 }'
}
expect_rc 0 "lossy ABS compress f64 (-M ABS -e 1e-3)" \
    compress -d -M ABS -e 1e-3 -i f64.raw -o abs64.fz
check "lossy ABS summary names the effective bound" grep -q 'effective' err.txt
check "lossy ABS stream is smaller than the lossless one" \
    [ "$(file_size abs64.fz)" -lt "$(file_size f64.fz)" ]
expect_rc 0 "lossy ABS decompress to raw" decompress -i abs64.fz -o abs64.raw
check "lossy ABS output has 8 bytes per value" [ "$(file_size abs64.raw)" -eq $((N * 8)) ]
check "lossy ABS output is not bitwise identical (lossy)" differ f64.raw abs64.raw
expect_rc 0 "lossy ABS decompress --text" decompress --text -i abs64.fz -o abs64.out
check "lossy ABS: every value within 1e-3 of the original" \
    within_bound 1e-3 f64.txt abs64.out
expect_rc 0 "info of an ABS stream" info abs64.fz
check "info shows mode ABS" grep -q 'mode:.*ABS' out.txt
check "info shows the requested bound" grep -q 'bound requested:.*0.001' out.txt
eff=$(sed -n 's/^bound effective: *\([^ ]*\).*/\1/p' out.txt)
check "info: effective bound ($eff) is a power of two <= 1e-3" pow2_at_most "$eff" 1e-3
expect_rc 0 "verify -M ABS -e 1e-3 from the decoded file's source" \
    verify -d -M ABS -e 1e-3 -i f64.raw
for field in 'mode:.*ABS' 'bound requested:.*0.001' 'bound effective' \
    'absolute bound:.*0.001' 'value range' 'max abs error' \
    'max error / bound' 'violations:.*0 ' 'PSNR:.*dB' 'ratio' 'GB/s' \
    'verified (within bound)'; do
    check "lossy verify shows '$field'" grep -q "$field" out.txt
done

range=$(value_range f64.txt)
rel_abs=$(awk -v r="$range" 'BEGIN { printf "%.17g\n", 1e-4 * r }')
expect_rc 0 "lossy REL compress f64 text (-M REL -e 1e-4)" \
    compress -d -M REL -e 1e-4 -i f64.txt -o rel64.fz
expect_rc 0 "lossy REL decompress --text" decompress -i rel64.fz -o rel64.out --text
check "lossy REL: every value within 1e-4 x range ($rel_abs)" \
    within_bound "$rel_abs" f64.txt rel64.out
check "lossy REL output differs from the input (lossy)" differ f64.txt rel64.out
expect_rc 0 "info of a REL stream" info rel64.fz
check "info shows mode REL" grep -q 'mode:.*REL' out.txt
check "info shows the relative bound" grep -q 'bound requested:.*0.0001' out.txt
eff=$(sed -n 's/^bound effective: *\([^ ]*\).*/\1/p' out.txt)
check "info: REL effective bound ($eff) is a power of two <= $rel_abs" \
    pow2_at_most "$eff" "$rel_abs"
expect_rc 0 "verify -M REL" verify -d -M REL -e 1e-4 -i f64.txt
check "REL verify shows the range" grep -q 'value range:.*1013' out.txt
check "REL verify shows bound x range" grep -q 'absolute bound:.*x value range' out.txt
check "REL verify: 0 violations, verified" grep -q 'verified (within bound)' out.txt

expect_rc 0 "lossy f32 text, -e alone is ABS" compress -f -e 0.3 -i f32.txt -o abs32.fz
expect_rc 0 "lossy f32 decompress to .txt" decompress -i abs32.fz -o abs32.out.txt
check "lossy f32: every value within 0.3" within_bound 0.3 f32.txt abs32.out.txt
expect_rc 0 "info of the -e alone stream" info abs32.fz
check "-e alone means ABS" grep -q 'mode:.*ABS' out.txt
expect_rc 0 "verify f32 -M REL --cpu -j 2" verify -f -M REL -e 1e-3 --cpu -j 2 -i f32.raw
check "f32 REL verify: verified (within bound)" grep -q 'verified (within bound)' out.txt

# -e 0 keeps every bit, in both modes and types
expect_rc 0 "compress -M ABS -e 0" compress -d -M ABS -e 0 -i f64.raw -o zero64.fz
expect_rc 0 "decompress the -e 0 stream" decompress -i zero64.fz -o zero64.raw
check "-M ABS -e 0 round trip is bitwise identical" cmp -s f64.raw zero64.raw
expect_rc 0 "info of an -e 0 stream" info zero64.fz
check "-e 0: effective bound 0 (stored lossless)" grep -q 'bound effective: *0 ' out.txt
expect_rc 0 "compress -M REL -e 0 f32" compress -f -M REL -e 0 -i f32.raw -o zero32.fz
expect_rc 0 "decompress the f32 -e 0 stream" decompress -i zero32.fz -o zero32.raw
check "-M REL -e 0 round trip is bitwise identical" cmp -s f32.raw zero32.raw
expect_rc 0 "verify -e 0" verify -d -e 0 -i f64.raw
check "verify -e 0: max abs error 0" grep -q 'max abs error: *0$' out.txt
check "verify -e 0: PSNR inf" grep -q 'PSNR:.*inf' out.txt

# REL on a constant array: range 0, stored lossless
awk 'BEGIN { for (i = 0; i < 5000; i++) print "2.75" }' >const.txt
expect_rc 0 "REL on a constant array" compress -d -M REL -e 0.1 -i const.txt -o const.fz
expect_rc 0 "decompress it" decompress --text -i const.fz -o const.out
check "REL constant: values unchanged" same_numbers const.txt const.out
expect_rc 0 "info of the constant REL stream" info const.fz
check "REL constant: effective bound 0" grep -q 'bound effective: *0 ' out.txt

# NaN, infinities and subnormals come back bit for bit (verify checks
# non-finite values bitwise and counts mismatches as violations)
printf 'nan\n-nan\ninf\n-inf\n1e-310\n-4.9e-324\n0\n-0\n1.5\n1e300\n-7\n' >special.txt
expect_rc 0 "verify special values, -e 0.5" verify -d -e 0.5 -i special.txt
check "special values: 0 violations" grep -q 'violations: *0 ' out.txt
grep -v 1e300 special.txt >special32.txt
expect_rc 0 "verify special values f32, REL" verify -f -M REL -e 0.01 -i special32.txt
check "special f32 values: verified" grep -q 'verified (within bound)' out.txt

# bad bounds
expect_rc 2 "-e -1 refused" compress -d -M ABS -e -1 -i f64.raw -o x.fz
expect_error "-e: '-1' is not a valid error bound" "-e -1: clear message"
expect_rc 2 "-e nan refused" compress -d -M ABS -e nan -i f64.raw -o x.fz
expect_error "'nan' is not a valid error bound" "-e nan: clear message"
expect_rc 2 "-e inf refused" compress -d -M REL -e inf -i f64.raw -o x.fz
expect_error "'inf' is not a valid error bound" "-e inf: clear message"
expect_rc 2 "-e 1e999 (overflow) refused" verify -d -e 1e999 -i f64.raw
expect_error "'1e999' is not a valid error bound" "-e 1e999: clear message"
expect_rc 2 "-e with text refused" compress -d -e 1e-3x -i f64.raw -o x.fz
expect_rc 2 "-M ABS without -e" compress -d -M ABS -i f64.raw -o x.fz
expect_error '-M ABS needs an error bound' "-M without -e: clear message"
expect_rc 2 "-M REL without -e in verify" verify -d -M REL -i f64.raw
expect_error 'needs an error bound' "verify -M without -e: clear message"
expect_rc 2 "-e without its value" compress -d -i f64.raw -o x.fz -e
expect_error 'needs a value' "-e without a value: clear message"
expect_rc 2 "unknown mode" compress -d -M SQUARE -e 1 -i f64.raw -o x.fz
expect_error 'ABS or REL' "unknown mode: clear message"
expect_rc 2 "-e does not apply to decompress" decompress -e 1 -i abs64.fz -o x.raw
check "no output after refused lossy options" no_leftovers x.fz

# ------------------------------------------------------------ damaged streams
cp f64.fz corrupt.fz
flip_byte corrupt.fz $(($(file_size corrupt.fz) / 2))
expect_rc 1 "corrupted stream fails to decompress" decompress -i corrupt.fz -o corrupt.raw
expect_error 'corrupt' "corrupted stream: library message"
check "no output after a corrupted stream" no_leftovers corrupt.raw
head -c $(($(file_size f64.fz) - 100)) f64.fz >trunc.fz
expect_rc 1 "truncated stream fails to decompress" decompress -i trunc.fz -o trunc.raw
expect_error 'truncated' "truncated stream: library message"
check "no output after a truncated stream" no_leftovers trunc.raw
expect_rc 1 "info of a truncated stream" info trunc.fz
head -c 50 f64.fz >tiny.fz
expect_rc 1 "info of a stream shorter than its header" info tiny.fz

# ------------------------------------------------------------ GPU
"$FLOATZ" --version >version.txt
if grep -q 'usable GPUs: 0' version.txt; then
    expect_rc 1 "--gpu without a GPU" compress --gpu -d -i f64.raw -o x.fz
    expect_error 'gpu.*(CUDA|device)' "--gpu without a GPU: clear message"
    check "no output after --gpu failed" no_leftovers x.fz
else
    echo "skip - --gpu failure check: a GPU is present"
    expect_rc 0 "compress --gpu" compress --gpu -d -i f64.raw -o gpu.fz
    check "GPU stream equals the CPU stream" cmp -s f64.fz gpu.fz
    expect_rc 0 "decompress --gpu" decompress --gpu -i f64.fz -o gpu.raw
    check "GPU decompression is bitwise identical" cmp -s f64.raw gpu.raw
    expect_rc 0 "lossy ABS compress --gpu" \
        compress --gpu -d -M ABS -e 1e-3 -i f64.raw -o gpu-abs.fz
    check "lossy ABS GPU stream equals the CPU stream" cmp -s abs64.fz gpu-abs.fz
    expect_rc 0 "lossy REL compress --gpu" \
        compress --gpu -d -M REL -e 1e-4 -i f64.txt -o gpu-rel.fz
    check "lossy REL GPU stream equals the CPU stream" cmp -s rel64.fz gpu-rel.fz
    expect_rc 0 "lossy decompress --gpu" decompress --gpu -i abs64.fz -o gpu-abs.raw
    check "lossy GPU decode equals the CPU decode" cmp -s abs64.raw gpu-abs.raw
    expect_rc 0 "lossy verify --gpu" verify --gpu -d -M REL -e 1e-4 -i f64.raw
    check "lossy GPU verify: verified (within bound)" \
        grep -q 'verified (within bound)' out.txt
fi

# ------------------------------------------------------------ streaming
# Raw files are streamed in batches; a pipe is read whole: same bytes.
expect_rc 0 "streamed compress (raw file)" compress --cpu -d -i f64.raw -o s.fz
check "streamed summary says so" grep -q 'streamed' err.txt
cat f64.raw | "$FLOATZ" compress --cpu -q -d -i /dev/stdin -o p.fz 2>/dev/null
check "streamed and in-memory streams are identical" cmp -s s.fz p.fz
expect_rc 0 "streamed decompress (raw output)" decompress --cpu -i s.fz -o s.raw
check "streamed round trip is bitwise identical" cmp -s f64.raw s.raw
expect_rc 2 "bad --streams value" compress -d --streams 0 -i f64.raw -o x.fz
expect_error 'stream count' "--streams: clear message"
expect_rc 2 "--streams does not apply to info" info --streams 2 f64.fz
head -c 1000 s.fz >cut.fz
expect_rc 1 "streamed decompress of a truncated stream" \
    decompress --cpu -i cut.fz -o cut.raw
check "no output after a failed streamed decompress" no_leftovers cut.raw

# ------------------------------------------------------------ robustness
# A write past `ulimit -f` fails like a full disk: exit 1, a message naming
# OUT, no temporary file left, an existing OUT kept (SIGXFSZ is ignored;
# by default it would kill the process mid-write).
expect_rc_fsize() { # as expect_rc, under `ulimit -f 64` (64 KiB)
    local want=$1 what=$2
    shift 2
    (ulimit -f 64 && exec "$FLOATZ" "$@") >out.txt 2>err.txt
    check_rc $? "$want" "$what"
}
expect_rc_fsize 1 "streamed compress past ulimit -f" compress -d -i f64.raw -o big.fz
expect_error 'big.fz: write failed: File too large' "ulimit -f: message names OUT"
check "no output after ulimit -f" no_leftovers big.fz
cp f64.fz old.fz
expect_rc_fsize 1 "compress -F past ulimit -f" compress -F -d -i f64.raw -o old.fz
check "ulimit -f: the old OUT is kept intact" cmp -s f64.fz old.fz
expect_rc_fsize 1 "streamed decompress past ulimit -f" decompress -i f64.fz -o big.raw
expect_error 'big.raw: write failed' "streamed decompress: message names OUT"
check "no output after a failed streamed decompress" no_leftovers big.raw
expect_rc_fsize 1 "text decompress past ulimit -f" decompress -i f64.fz -o big.txt
check "no output after a failed text decompress" no_leftovers big.txt
expect_rc_fsize 1 "compress from a pipe past ulimit -f" \
    compress -d -i <(cat f64.raw) -o big.fz
check "no output after a failed in-memory compress" no_leftovers big.fz

# A file holds one stream: data after its end (a second stream appended,
# junk) is an error, not silently dropped.
cat f64.fz f64.fz >two.fz
cat empty.fz f64.fz >empty-then-data.fz
for src in two.fz empty-then-data.fz; do
    expect_rc 1 "decompress $src (data after the stream)" decompress -i $src -o $src.1
    expect_error 'data after the end of the stream' "$src: clear message"
    expect_rc 1 "$src from a pipe" decompress -i <(cat $src) -o $src.2
    expect_error 'data after the end' "$src from a pipe: clear message"
    expect_rc 1 "decompress --range of $src" decompress -i $src -o $src.3 --range 0:1
    expect_rc 1 "decompress $src to text" decompress -i $src -o $src.txt
    check "no output after $src" no_leftovers "$src".[123t]*
    expect_rc 1 "info of $src" info $src
    expect_error 'data after the end' "info of $src: clear message"
done
expect_rc 0 "info from a pipe (not 'truncated')" info <(cat f64.fz)
check "info from a pipe counts the file bytes" \
    grep -q "file bytes: *$(file_size f64.fz)\$" out.txt

# An input that never ends (a FIFO whose writer stays open) must not be
# read to the end when the size needed is known: a bad header stops
# decompress and info, a shape stops a raw compress.
mkfifo endless
endless_rc() { # DESCRIPTION WANT floatz-ARGS... (reading the FIFO)
    local what=$1 want=$2
    shift 2
    { head -c 4096 f64.raw; exec sleep 30; } >endless 2>/dev/null &
    local writer=$!
    timeout 10 "$FLOATZ" "$@" >out.txt 2>err.txt
    local got=$?
    kill "$writer" 2>/dev/null
    wait "$writer" 2>/dev/null
    check_rc "$got" "$want" "$what"
}
endless_rc "decompress of an endless non-stream stops at the header" 1 \
    decompress -i endless -o x.raw
expect_error 'not a floatz stream' "endless non-stream: bad magic"
endless_rc "info of an endless non-stream" 1 info endless
endless_rc "compress -1 100 of an endless input stops after 100 values" 1 \
    compress -d -1 100 -i endless -o x.fz
expect_error 'more than the 100 float64 values' "endless input: clear message"
check "no output after the endless inputs" no_leftovers x.fz

# An option repeated with another value is refused (it used to be "last
# one wins": another file, bound or codec than meant); the same value
# twice is fine.
expect_rc 2 "-i twice, different files" compress -F -d -i f64.raw -i f32.raw -o x.fz
expect_error '-i given twice with different values' "-i twice: clear message"
expect_rc 2 "-o twice, different files" compress -F -d -i f64.raw -o x.fz -o y.fz
expect_rc 2 "-e twice, different bounds" compress -F -d -e 1 -e 2 -i f64.raw -o x.fz
expect_rc 2 "-M twice, different modes" compress -F -d -M ABS -M REL -e 1 -i f64.raw -o x.fz
expect_rc 2 "-c twice, different codecs" compress -F -d -c lorenzo -c sleek -e 1 -i f64.raw -o x.fz
expect_rc 2 "info IN and -i OTHER" info f64.fz -i f32.fz
check "no output after repeated options" no_leftovers x.fz
expect_rc 0 "the same option value twice" compress -d -M ABS -M abs -e 1 -e 1.0 -i f64.raw -i f64.raw -o same.fz -q

# -o/-i followed by an option or '-': the value is refused rather than
# creating a file named "-q" (no stdout/stdin by '-').
expect_rc 2 "-o followed by an option" compress -d -i f64.raw -o -q
expect_error "-o needs a file name, not the option '-q'" "-o -q: clear message"
check "no file named -q" [ ! -e ./-q ]
expect_rc 2 "-o -" compress -d -i f64.raw -o -
check "no file named -" [ ! -e ./- ]
expect_rc 2 "-i -" compress -F -d -i - -o x.fz
expect_error '/dev/stdin' "-i -: points to /dev/stdin"

# a shape whose value count overflows 64 bits
expect_rc 1 "shape product over 2^64" compress -F -d -2 4294967296 4294967296 -i f64.raw -o x.fz
expect_error 'too many' "shape overflow: no 'needs 0'"

# ------------------------------------------------------------ real data
CSV=$TIMESERIES/Air-pressure.csv
if [ -r "$CSV" ]; then
    expect_rc 0 "compress $(basename "$CSV") as f64 text" compress -d -i "$CSV" -o ts.fz
    expect_rc 0 "decompress it --text" decompress --text -i ts.fz -o ts.out
    check "CSV round trip equals the input numbers" same_numbers "$CSV" ts.out
    expect_rc 0 "verify the CSV" verify -d -i "$CSV"
    check "CSV verify prints verified" grep -q 'verified' out.txt
else
    echo "skip - timeseries round trip: no shared/data/timeseries next to the repository"
fi

echo "# $checks checks, $failures failed"
[ "$failures" -eq 0 ]
