/* Falcon, CPU backend: one chunk at a time (the driver runs chunks in
 * parallel). Decisions, transforms and layout rules come from
 * falcon_xform.h, shared with the GPU backend; the chunk layout is in
 * docs/FALCON.md. */
#include <string.h>

#include "../../common/fz_hash.h"
#include "../fz_codec.h"
#include "falcon_chunk.h"

static uint32_t falcon_values(const fz_header *h) {
    return h->codec_params[0];
}

static uint32_t falcon_chunk_bytes(const fz_header *h) {
    return falcon_values(h) * fz_dtype_size(h->dtype);
}

static size_t falcon_encode_capacity(const fz_header *h) {
    return falcon_max_encoded(fz_dtype_size(h->dtype), falcon_values(h));
}

static int falcon_check_header(const fz_header *h) {
    const uint32_t n = falcon_values(h);
    if (h->codec_version < FALCON_CODEC_VERSION_MIN ||
        h->codec_version > FALCON_CODEC_VERSION || h->mode != 0 || n < 1 ||
        n > FALCON_MAX_VALUES || h->chunk_bytes != n * fz_dtype_size(h->dtype))
        return FZS_CORRUPT_HEADER;
    for (int i = 1; i < 4; i++)
        if (h->codec_params[i] != 0)
            return FZS_CORRUPT_HEADER;
    return FZS_OK;
}

/* codec_options[0]: values per chunk (0 = the paper's 1025); the rest
 * must be 0. */
static int falcon_check_params(fz_header *h, const int32_t options[4]) {
    if (options[0] < 0 || options[0] > (int32_t)FALCON_MAX_VALUES)
        return FZS_INVALID_ARGUMENT;
    for (int i = 1; i < 4; i++)
        if (options[i] != 0)
            return FZS_INVALID_ARGUMENT;
    h->codec_params[0] =
        options[0] ? (uint32_t)options[0] : FALCON_DEFAULT_VALUES;
    return FZS_OK;
}

static size_t falcon_encode_chunk(const fz_header *h, const void *src,
                                  uint64_t nvalues, uint8_t *dst,
                                  uint32_t *checksum) {
    const size_t raw = (size_t)nvalues * fz_dtype_size(h->dtype);
    *checksum = fz_data_checksum(falcon_sum_kind(h->codec_version),
                                 (const uint8_t *)src, raw);
    const uint32_t n = (uint32_t)nvalues;
    uint64_t v[FALCON_MAX_VALUES], e[FALCON_MAX_VALUES];
    memcpy(v, src, raw); /* unaligned user memory */
    const size_t size = h->dtype == 1
                            ? falcon_encode32((const uint32_t *)v, n,
                                              (uint32_t *)e, dst, (uint32_t)raw)
                            : falcon_encode64(v, n, e, dst, (uint32_t)raw);
    if (size >= raw) {
        memcpy(dst, src, raw);
        return raw;
    }
    return size;
}

static int falcon_decode_chunk(const fz_header *h, const uint8_t *src,
                               size_t size, void *dst, uint64_t nvalues) {
    uint64_t e[FALCON_MAX_VALUES];
    const int s =
        h->dtype == 1
            ? falcon_decode32(src, (uint32_t)size, (uint32_t *)e,
                              (uint32_t)nvalues)
            : falcon_decode64(src, (uint32_t)size, e, (uint32_t)nvalues);
    if (s == FZS_OK)
        memcpy(dst, e, (size_t)nvalues * fz_dtype_size(h->dtype));
    return s;
}

static fz_sum_kind falcon_data_sum(const fz_header *h) {
    return falcon_sum_kind(h->codec_version);
}

const fz_codec_cpu fz_falcon_cpu = {
    FALCON_CODEC_ID,          FALCON_CODEC_VERSION,
    FALCON_CODEC_VERSION_MIN, "falcon",
    falcon_chunk_bytes,       falcon_encode_capacity,
    falcon_check_header,      NULL, /* lossless only */
    falcon_encode_chunk,      falcon_decode_chunk,
    falcon_check_params,      NULL, /* checksums cover the decoded bytes */
    falcon_data_sum,
};
