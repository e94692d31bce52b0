/* The floatz container: fixed 128-byte header, chunk table, chunk payloads.
 * Byte-exact layout in docs/FORMAT.md. Everything here is integer-only and
 * FZ_HD so the GPU writes and validates headers with the very same code. */
#ifndef FZ_CONTAINER_H
#define FZ_CONTAINER_H

#include "../common/fz_hash.h"
#include "../common/fz_portable.h"

#define FZ_MAGIC 0x5A544C46u /* "FLTZ" as bytes 'F','L','T','Z' */
#define FZ_HDR_BYTES 128u
#define FZ_PAYLOAD_ALIGN 16u
#define FZ_HDR_FLAG_CHECKSUMS 1u

/* Field offsets in the fixed header. */
enum {
    FZ_OFF_MAGIC = 0,
    FZ_OFF_VERSION = 4,
    FZ_OFF_HDR_BYTES = 6,
    FZ_OFF_CODEC = 8,
    FZ_OFF_CODEC_VERSION = 9,
    FZ_OFF_DTYPE = 10,
    FZ_OFF_MODE = 11,
    FZ_OFF_NDIMS = 12,
    FZ_OFF_FLAGS = 13,
    FZ_OFF_RESERVED0 = 14, /* 2 bytes */
    FZ_OFF_DIMS = 16,      /* 4 x u64 */
    FZ_OFF_BOUND = 48,
    FZ_OFF_BOUND_EFF = 56,
    FZ_OFF_CODEC_PARAMS = 64, /* 4 x u32 */
    FZ_OFF_CHUNK_BYTES = 80,
    FZ_OFF_RESERVED1 = 84, /* 4 bytes */
    FZ_OFF_CHUNK_COUNT = 88,
    FZ_OFF_PAYLOAD_BYTES = 96,
    FZ_OFF_ORIGINAL_BYTES = 104,
    FZ_OFF_TABLE_HASH = 112,
    FZ_OFF_RESERVED2 = 116, /* 8 bytes */
    FZ_OFF_HEADER_HASH = 124
};

/* Status values mirror fz_status (kept numeric so device code needs no
 * public header). */
enum {
    FZS_OK = 0,
    FZS_INVALID_ARGUMENT = 1,
    FZS_UNSUPPORTED = 2,
    FZS_DST_TOO_SMALL = 3,
    FZS_OUT_OF_MEMORY = 5,
    FZS_SCRATCH_TOO_SMALL = 6,
    FZS_PARAMS_MISMATCH = 7,
    FZS_BAD_MAGIC = 100,
    FZS_FORMAT_VERSION = 101,
    FZS_HEADER_CHECKSUM = 102,
    FZS_CORRUPT_HEADER = 103,
    FZS_TRUNCATED = 104,
    FZS_TABLE_CHECKSUM = 105,
    FZS_CORRUPT_CHUNK = 106,
    FZS_DATA_CHECKSUM = 107
};

typedef struct fz_header {
    uint32_t format_version;
    uint32_t codec;
    uint32_t codec_version;
    uint32_t dtype; /* 1 = f32, 2 = f64 */
    uint32_t mode;
    uint32_t ndims;
    uint32_t flags;
    uint64_t dims[4];
    uint64_t bound_bits;     /* requested bound, IEEE-754 binary64 bits */
    uint64_t bound_eff_bits; /* enforced bound */
    uint32_t codec_params[4];
    uint32_t chunk_bytes; /* uncompressed bytes per chunk (last may be less) */
    uint64_t chunk_count;
    uint64_t payload_bytes;
    uint64_t original_bytes;
    uint32_t table_hash;
} fz_header;

static FZ_HD uint32_t fz_dtype_size(uint32_t dtype) {
    return dtype == 1 ? 4u : dtype == 2 ? 8u : 0u;
}

/* Bytes per chunk-table entry: compressed size (+ data checksum). */
static FZ_HD uint32_t fz_table_entry_bytes(uint32_t flags) {
    return (flags & FZ_HDR_FLAG_CHECKSUMS) ? 8u : 4u;
}

static FZ_HD uint64_t fz_table_bytes(const fz_header *h) {
    return h->chunk_count * fz_table_entry_bytes(h->flags);
}

static FZ_HD uint64_t fz_payload_offset(const fz_header *h) {
    return fz_align_up(FZ_HDR_BYTES + fz_table_bytes(h), FZ_PAYLOAD_ALIGN);
}

static FZ_HD uint64_t fz_stream_bytes(const fz_header *h) {
    return fz_payload_offset(h) + h->payload_bytes;
}

static FZ_HD uint64_t fz_chunk_raw_bytes(const fz_header *h, uint64_t c) {
    uint64_t start = c * h->chunk_bytes;
    uint64_t left = h->original_bytes - start;
    return left < h->chunk_bytes ? left : h->chunk_bytes;
}

/* Hash of the first 124 header bytes (31 words). */
static FZ_HD uint32_t fz_header_hash(const uint8_t *hdr) {
    uint32_t s = 0;
    for (uint32_t i = 0; i < FZ_OFF_HEADER_HASH / 4; i++)
        s += fz_hash_term(fz_load32(hdr + 4 * i), i);
    return fz_hash_final(s, FZ_OFF_HEADER_HASH / 4);
}

/* Serialise h into out[128], computing the header hash. */
static FZ_HD void fz_header_write(const fz_header *h, uint8_t *out) {
    for (uint32_t i = 0; i < FZ_HDR_BYTES; i++)
        out[i] = 0;
    fz_store32(out + FZ_OFF_MAGIC, FZ_MAGIC);
    fz_store16(out + FZ_OFF_VERSION, (uint16_t)h->format_version);
    fz_store16(out + FZ_OFF_HDR_BYTES, (uint16_t)FZ_HDR_BYTES);
    out[FZ_OFF_CODEC] = (uint8_t)h->codec;
    out[FZ_OFF_CODEC_VERSION] = (uint8_t)h->codec_version;
    out[FZ_OFF_DTYPE] = (uint8_t)h->dtype;
    out[FZ_OFF_MODE] = (uint8_t)h->mode;
    out[FZ_OFF_NDIMS] = (uint8_t)h->ndims;
    out[FZ_OFF_FLAGS] = (uint8_t)h->flags;
    for (int d = 0; d < 4; d++)
        fz_store64(out + FZ_OFF_DIMS + 8 * d, h->dims[d]);
    fz_store64(out + FZ_OFF_BOUND, h->bound_bits);
    fz_store64(out + FZ_OFF_BOUND_EFF, h->bound_eff_bits);
    for (int k = 0; k < 4; k++)
        fz_store32(out + FZ_OFF_CODEC_PARAMS + 4 * k, h->codec_params[k]);
    fz_store32(out + FZ_OFF_CHUNK_BYTES, h->chunk_bytes);
    fz_store64(out + FZ_OFF_CHUNK_COUNT, h->chunk_count);
    fz_store64(out + FZ_OFF_PAYLOAD_BYTES, h->payload_bytes);
    fz_store64(out + FZ_OFF_ORIGINAL_BYTES, h->original_bytes);
    fz_store32(out + FZ_OFF_TABLE_HASH, h->table_hash);
    fz_store32(out + FZ_OFF_HEADER_HASH, fz_header_hash(out));
}

/* Fill in the fields known only after compression and re-hash. */
static FZ_HD void fz_header_finalize(uint8_t *hdr, uint64_t payload_bytes,
                                     uint32_t table_hash) {
    fz_store64(hdr + FZ_OFF_PAYLOAD_BYTES, payload_bytes);
    fz_store32(hdr + FZ_OFF_TABLE_HASH, table_hash);
    fz_store32(hdr + FZ_OFF_HEADER_HASH, fz_header_hash(hdr));
}

/* A binary64 bit pattern that is finite and >= +0. */
static FZ_HD int fz_bound_bits_valid(uint64_t bits) {
    return (bits >> 63) == 0 && ((bits >> 52) & 0x7FF) != 0x7FF;
}

/* Parse and validate the fixed header. avail = bytes readable at src.
 * Checks everything the header alone can tell: magic, version, hash, every
 * field's range and their consistency. Returns an FZS_* status. */
static FZ_HD int fz_header_parse(const uint8_t *src, uint64_t avail,
                                 fz_header *h) {
    for (uint64_t i = 0; i < 4 && i < avail; i++) /* a prefix can be wrong */
        if (src[i] != (uint8_t)(FZ_MAGIC >> (8 * i)))
            return FZS_BAD_MAGIC;
    if (avail < 4)
        return FZS_TRUNCATED;
    /* The version is read before the hash: a later format may lay out the
     * rest of its header differently. */
    if (avail < FZ_OFF_VERSION + 2)
        return FZS_TRUNCATED;
    h->format_version = fz_load16(src + FZ_OFF_VERSION);
    if (h->format_version != 1)
        return FZS_FORMAT_VERSION;
    if (avail < FZ_HDR_BYTES)
        return FZS_TRUNCATED;
    if (fz_load32(src + FZ_OFF_HEADER_HASH) != fz_header_hash(src))
        return FZS_HEADER_CHECKSUM;
    if (fz_load16(src + FZ_OFF_HDR_BYTES) != FZ_HDR_BYTES ||
        fz_load16(src + FZ_OFF_RESERVED0) != 0 ||
        fz_load32(src + FZ_OFF_RESERVED1) != 0 ||
        fz_load64(src + FZ_OFF_RESERVED2) != 0)
        return FZS_CORRUPT_HEADER;
    h->codec = src[FZ_OFF_CODEC];
    h->codec_version = src[FZ_OFF_CODEC_VERSION];
    h->dtype = src[FZ_OFF_DTYPE];
    h->mode = src[FZ_OFF_MODE];
    h->ndims = src[FZ_OFF_NDIMS];
    h->flags = src[FZ_OFF_FLAGS];
    uint32_t esize = fz_dtype_size(h->dtype);
    if (esize == 0 || h->mode > 2 || h->ndims < 1 || h->ndims > 4 ||
        (h->flags & ~FZ_HDR_FLAG_CHECKSUMS) != 0)
        return FZS_CORRUPT_HEADER;
    /* a 0 extent makes count 0 whatever the others are (checking them
     * in order refused {2^61, 0} but not {0, 2^61}) */
    int empty = 0;
    for (uint32_t d = 0; d < 4; d++) {
        h->dims[d] = fz_load64(src + FZ_OFF_DIMS + 8 * d);
        if (d >= h->ndims && h->dims[d] != 1)
            return FZS_CORRUPT_HEADER;
        empty |= h->dims[d] == 0;
    }
    uint64_t count = empty ? 0 : 1;
    for (uint32_t d = 0; d < 4 && !empty; d++) {
        /* keep count * esize at most 2^62: no product of nonzero extents
         * overflows after this */
        if (count > (((uint64_t)1 << 62) / esize) / h->dims[d])
            return FZS_CORRUPT_HEADER;
        count *= h->dims[d];
    }
    h->bound_bits = fz_load64(src + FZ_OFF_BOUND);
    h->bound_eff_bits = fz_load64(src + FZ_OFF_BOUND_EFF);
    if (h->mode == 0 ? (h->bound_bits | h->bound_eff_bits) != 0
                     : !fz_bound_bits_valid(h->bound_bits) ||
                           !fz_bound_bits_valid(h->bound_eff_bits))
        return FZS_CORRUPT_HEADER;
    for (int k = 0; k < 4; k++)
        h->codec_params[k] = fz_load32(src + FZ_OFF_CODEC_PARAMS + 4 * k);
    h->chunk_bytes = fz_load32(src + FZ_OFF_CHUNK_BYTES);
    h->chunk_count = fz_load64(src + FZ_OFF_CHUNK_COUNT);
    h->payload_bytes = fz_load64(src + FZ_OFF_PAYLOAD_BYTES);
    h->original_bytes = fz_load64(src + FZ_OFF_ORIGINAL_BYTES);
    h->table_hash = fz_load32(src + FZ_OFF_TABLE_HASH);
    if (h->original_bytes != count * esize || h->chunk_bytes == 0 ||
        h->chunk_bytes % esize != 0 ||
        h->chunk_count !=
            (h->original_bytes + h->chunk_bytes - 1) / h->chunk_bytes ||
        h->payload_bytes > h->original_bytes)
        return FZS_CORRUPT_HEADER;
    return FZS_OK;
}

/* Hash of the chunk table (entries as LE u32 words). */
static inline uint32_t fz_table_hash(const uint8_t *table, uint64_t bytes) {
    return fz_hash_bytes(table, bytes);
}

#endif /* FZ_CONTAINER_H */
