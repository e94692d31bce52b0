/* libFuzzer harness: arbitrary bytes into fz_decompress and
 * fz_decompress_range. Must never crash, hang, read or write out of
 * bounds; a stream that decodes must decode consistently, by ranges too. Each
 * input is tried twice: as given, and with its header and table hashes
 * recomputed (data checksums skipped), so that mutations reach the chunk
 * decoder instead of stopping at a checksum. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../src/format/fz_container.h"
#include "floatz.h"

#define MAX_ORIGINAL_BYTES ((uint64_t)64 << 20)
#define CAPACITY_WITHOUT_HEADER ((size_t)1 << 16)

static void require(int ok) {
    if (!ok)
        abort();
}

/* Whether `again` is `values` within the absolute bound: finite values
 * within it (compared in double), the others bit for bit. */
static int within_bound(const uint8_t *values, const uint8_t *again,
                        size_t bytes, int f64, double bound) {
    const size_t esize = f64 ? 8 : 4;
    for (size_t i = 0; i + esize <= bytes; i += esize) {
        double v, w;
        if (f64) {
            memcpy(&v, values + i, 8);
            memcpy(&w, again + i, 8);
        } else {
            float fv, fw;
            memcpy(&fv, values + i, 4);
            memcpy(&fw, again + i, 4);
            v = fv;
            w = fw;
        }
        if (v - v != 0) { /* NaN or infinity: kept exactly */
            if (memcmp(values + i, again + i, esize) != 0)
                return 0;
        } else if (!(fabs(w - v) <= bound)) {
            return 0;
        }
    }
    return 1;
}

/* Decoded values, compressed again with the stream's parameters, decode to
 * the same values (lossless) or to values within the effective bound of
 * them (lossy: not the same values, as a lossy stream may hold chunks
 * stored verbatim, exact values that compress again quantized). A REL
 * stream is compressed again as ABS at its effective bound: REL would
 * derive a new bound from the decoded values' range, which differs from
 * the original data's (and a fuzzed header's bound need not be the one the
 * encoder would derive at all). */
static void check_recompress(const fz_info *info, const uint8_t *values,
                             size_t bytes) {
    fz_params p = info->params;
    p.threads = 1;
    if (p.mode == FZ_MODE_REL) {
        p.mode = FZ_MODE_ABS;
        p.bound = info->bound_effective;
    }
    size_t bound = 0, size = 0, got = 0;
    require(fz_compress_bound(&p, &bound) == FZ_OK);
    uint8_t *stream = (uint8_t *)malloc(bound);
    uint8_t *again = (uint8_t *)malloc(bytes ? bytes : 1);
    require(stream && again);
    require(fz_compress(&p, values, bytes, stream, bound, &size) == FZ_OK);
    require(fz_decompress(stream, size, again, bytes, NULL, &got) == FZ_OK);
    require(got == bytes);
    if (p.mode == FZ_MODE_LOSSLESS)
        require(memcmp(again, values, bytes) == 0);
    else
        require(within_bound(values, again, bytes, p.dtype == FZ_F64,
                             info->bound_effective));
    free(again);
    free(stream);
}

/* A decoded stream decodes to the same bytes without checksum checks. */
static void check_skip_checksum(const uint8_t *data, size_t size,
                                const uint8_t *values, size_t bytes) {
    fz_decode_options o = {0};
    o.threads = 1;
    o.flags = FZ_DECODE_SKIP_CHECKSUM;
    size_t got = 0;
    uint8_t *again = (uint8_t *)malloc(bytes ? bytes : 1);
    require(again != NULL);
    require(fz_decompress(data, size, again, bytes, &o, &got) == FZ_OK);
    require(got == bytes && memcmp(again, values, bytes) == 0);
    free(again);
}

/* Random access agrees with the full decode: the whole range fails where
 * the full decode failed and returns its bytes where it succeeded, and so
 * does a sub-range picked from the input's bytes (which may fail on its
 * own only when the full decode failed: it reads a subset of the chunks).
 * full is NULL when the full decode failed. */
static void check_ranges(const uint8_t *data, size_t size, const fz_info *info,
                         const uint8_t *full, uint32_t flags) {
    const uint64_t esize = info->params.dtype == FZ_F64 ? 8 : 4;
    const uint64_t n = info->original_bytes / esize;
    uint64_t pick = size;
    for (size_t i = 0; i < size && i < 64; i++)
        pick = pick * 31 + data[i];
    const uint64_t first = n ? pick % (n + 1) : 0;
    const uint64_t count = (pick >> 17) % (n - first + 1);
    const uint64_t ranges[2][2] = {{0, n}, {first, count}};
    fz_decode_options o = {0};
    o.threads = 1;
    o.flags = flags;
    for (int r = 0; r < 2; r++) {
        const uint64_t at = ranges[r][0], bytes = ranges[r][1] * esize;
        uint8_t *part = (uint8_t *)malloc(bytes ? (size_t)bytes : 1);
        require(part != NULL);
        const fz_status s = fz_decompress_range(data, size, at, ranges[r][1],
                                                part, (size_t)bytes, &o);
        require(s != FZ_ERR_OUT_OF_MEMORY);
        if (full)
            require(s == FZ_OK &&
                    memcmp(part, full + at * esize, (size_t)bytes) == 0);
        else if (r == 0)
            require(s != FZ_OK);
        free(part);
    }
}

static void decode(const uint8_t *data, size_t size, uint32_t flags) {
    fz_info info;
    const int inspected = fz_inspect(data, size, &info) == FZ_OK;
    if (inspected && info.original_bytes > MAX_ORIGINAL_BYTES)
        return;
    const size_t capacity =
        inspected ? (size_t)info.original_bytes : CAPACITY_WITHOUT_HEADER;
    uint8_t *dst = (uint8_t *)malloc(capacity ? capacity : 1);
    require(dst != NULL);
    fz_decode_options o = {0};
    o.threads = 1;
    o.flags = flags;
    size_t got = 0;
    fz_status s = fz_decompress(data, size, dst, capacity, &o, &got);
    require(s != FZ_ERR_OUT_OF_MEMORY);
    if (s == FZ_OK) {
        require(inspected && got == info.original_bytes);
        check_skip_checksum(data, size, dst, got);
        check_recompress(&info, dst, got);
    }
    if (inspected)
        check_ranges(data, size, &info, s == FZ_OK ? dst : NULL, flags);
    free(dst);
}

/* Recompute the table hash (when the table fits) and the header hash. */
static void fix_hashes(uint8_t *s, size_t size) {
    if (size < FZ_HDR_BYTES)
        return;
    const uint64_t count = fz_load64(s + FZ_OFF_CHUNK_COUNT);
    const uint32_t entry = fz_table_entry_bytes(s[FZ_OFF_FLAGS]);
    if (count <= (size - FZ_HDR_BYTES) / entry)
        fz_store32(s + FZ_OFF_TABLE_HASH,
                   fz_table_hash(s + FZ_HDR_BYTES, count * entry));
    fz_store32(s + FZ_OFF_HEADER_HASH, fz_header_hash(s));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    decode(data, size, 0);
    uint8_t *fixed = (uint8_t *)malloc(size ? size : 1);
    require(fixed != NULL);
    memcpy(fixed, data, size);
    fix_hashes(fixed, size);
    decode(fixed, size, FZ_DECODE_SKIP_CHECKSUM);
    free(fixed);
    return 0;
}
