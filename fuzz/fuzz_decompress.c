/* libFuzzer harness: arbitrary bytes into fz_decompress. Must never crash,
 * hang, read or write out of bounds; a stream that decodes must decode
 * consistently. Each input is tried twice: as given, and with its header
 * and table hashes recomputed (data checksums skipped), so that mutations
 * reach the chunk decoder instead of stopping at a checksum. */
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

/* Decoded values, compressed again with the stream's parameters, decode to
 * the same values. */
static void check_recompress(const fz_info *info, const uint8_t *values,
                             size_t bytes) {
    fz_params p = info->params;
    p.threads = 1;
    size_t bound = 0, size = 0, got = 0;
    require(fz_compress_bound(&p, &bound) == FZ_OK);
    uint8_t *stream = (uint8_t *)malloc(bound);
    uint8_t *again = (uint8_t *)malloc(bytes ? bytes : 1);
    require(stream && again);
    require(fz_compress(&p, values, bytes, stream, bound, &size) == FZ_OK);
    require(fz_decompress(stream, size, again, bytes, NULL, &got) == FZ_OK);
    require(got == bytes && memcmp(again, values, bytes) == 0);
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
