/* GFC (O'Neil & Burtscher, GPGPU-4 2011): lossless residual coding of
 * float32/float64 values handled as integers. Everything here is
 * integer-only and FZ_HD: the CPU and GPU backends include this one
 * definition, which is what makes their streams byte-identical.
 *
 * A chunk of n values (the last chunk of a stream may be shorter) is cut
 * into S = ceil(n / 32) subchunks of 32 values. Value l (the "lane",
 * 0..31) of subchunk s is predicted by value gfc_pred_lane(l, dim) of
 * subchunk s - 1 (the latest value of the same dimension, for data that
 * interleave `dim` dimensions), or by 0 in subchunk 0. The residual
 * r = x - prediction (mod 2^W) is stored as a 4-bit code (sign and count
 * of leading zero bytes of |r|) and the non-zero low bytes of |r|.
 * The last subchunk is padded with values equal to their predictions
 * (residual 0), which the decoder requires and drops.
 *
 * Encoded chunk (docs/GFC.md), all positions relative to the chunk start:
 *   [0, 16 S)          the codes: 16 bytes per subchunk, subchunk s at
 *                      16 s; the code of lane l in byte l / 2, low nibble
 *                      for even l, high nibble for odd l
 *   [16 S, 16 S + R)   the residual bytes: subchunk by subchunk, lane by
 *                      lane, each |r| as its gfc_*bytes low bytes, least
 *                      significant first (R bytes in all)
 *   then zero bytes up to a multiple of 8 (0..7 bytes)
 * Codes at fixed places let a GPU warp read the codes of 32 subchunks in
 * one load and find every residual's offset with prefix sums. */
#ifndef GFC_XFORM_H
#define GFC_XFORM_H

#include "../../common/fz_portable.h"

#define GFC_CODEC_ID 2u
#define GFC_CODEC_VERSION 1u
#define GFC_SUB 32u        /* values per subchunk */
#define GFC_CODE_BYTES 16u /* 32 four-bit codes per subchunk */
#define GFC_ALIGN 8u       /* encoded chunks are a multiple of 8 bytes */
#define GFC_MAX_DIM 32u
/* Chunk sizes in values: a multiple of 32, at most GFC_MAX_CHUNK_VALUES. */
#define GFC_MAX_CHUNK_VALUES (1u << 22)
/* Default chunk size: about GFC_TARGET_CHUNKS chunks, each of
 * GFC_MIN_DEFAULT_VALUES..GFC_MAX_DEFAULT_VALUES values. */
#define GFC_TARGET_CHUNKS 4096u
#define GFC_MIN_DEFAULT_VALUES 2048u
#define GFC_MAX_DEFAULT_VALUES 8192u

/* codec_params in the header: [0] dimensionality 1..32, [1] values per
 * chunk (chunk_bytes / esize), [2] and [3] zero. */
enum { GFC_PARAM_DIM = 0, GFC_PARAM_CHUNK_VALUES = 1 };

/* The lane of the previous subchunk that predicts lane `lane`: the latest
 * value of the same dimension, i.e. position 32 - dim + lane % dim. */
static FZ_HD uint32_t gfc_pred_lane(uint32_t lane, uint32_t dim) {
    return GFC_SUB - dim + lane % dim;
}

/* Default values per chunk for an array of n values: a function of n
 * only (never of the device), so that both backends cut the same chunks.
 * About GFC_TARGET_CHUNKS chunks of 2 Ki..8 Ki values, then balanced:
 * the chunk count k stays and the size becomes ceil(n / k) rounded up to
 * a multiple of 32. */
static FZ_HD uint32_t gfc_default_chunk_values(uint64_t n) {
    uint64_t v = (n + GFC_TARGET_CHUNKS - 1) / GFC_TARGET_CHUNKS;
    if (v < GFC_MIN_DEFAULT_VALUES)
        v = GFC_MIN_DEFAULT_VALUES;
    if (v > GFC_MAX_DEFAULT_VALUES)
        v = GFC_MAX_DEFAULT_VALUES;
    uint64_t k = (n + v - 1) / v;
    if (k == 0)
        k = 1;
    v = (n + k - 1) / k;
    v = (v + GFC_SUB - 1) / GFC_SUB * GFC_SUB;
    return v ? (uint32_t)v : GFC_SUB;
}

/* Subchunks of a chunk of n values, and the size of its encoding with R
 * residual bytes. */
static FZ_HD uint64_t gfc_subchunks(uint64_t n) {
    return (n + GFC_SUB - 1) / GFC_SUB;
}
static FZ_HD uint64_t gfc_encoded_bytes(uint64_t subchunks, uint64_t resid) {
    return fz_align_up(GFC_CODE_BYTES * subchunks + resid, GFC_ALIGN);
}

/* ------------------------------------------------------------ float64
 * Code = sign << 3 | z, z the count of leading zero bytes of |r| with six
 * coded as five (the paper's choice: six is rare, and eight counts fit in
 * three bits): z = 0..5 store 8 - z bytes, z = 6 stores 1 byte (seven
 * leading zero bytes), z = 7 stores none (r = 0). |r| = -r when the sign
 * (bit 63 of r) is set; r = 2^63 has sign 1 and |r| = 2^63. */
static FZ_HD uint32_t gfc_code64(uint64_t r) {
    const uint32_t sign = (uint32_t)(r >> 63);
    const uint64_t mag = sign ? (uint64_t)0 - r : r;
    const uint32_t lzb = (uint32_t)fz_clz64(mag) >> 3; /* 0..8 */
    return sign << 3 | (lzb > 5 ? lzb - 1 : lzb);
}

/* Stored bytes of a code. */
static FZ_HD uint32_t gfc_bytes64(uint32_t code) {
    const uint32_t z = code & 7u;
    return z < 6 ? 8u - z : 7u - z;
}

/* ------------------------------------------------------------ float32
 * Code = sign << 3 | z, z = 0..4 the count of leading zero bytes of |r|
 * (4 - z bytes stored, none for r = 0). z = 5..7 never occur and are
 * rejected; with sign 1, z = 4 (a negative zero) is rejected as well. */
static FZ_HD uint32_t gfc_code32(uint32_t r) {
    const uint32_t sign = r >> 31;
    const uint32_t mag = sign ? 0u - r : r;
    return sign << 3 | (uint32_t)fz_clz32(mag) >> 3;
}

/* Stored bytes of a code (0 for the invalid z = 5..7). */
static FZ_HD uint32_t gfc_bytes32(uint32_t code) {
    const uint32_t z = code & 7u;
    return z <= 4 ? 4u - z : 0u;
}

static FZ_HD int gfc_code_valid32(uint32_t code) {
    return (code & 7u) <= 4u;
}

/* The residual a code and its stored magnitude stand for. A decoder
 * accepts it only if gfc_code*(residual) gives back the code: then the
 * byte count is minimal and the sign is the residual's (canonical). */
static FZ_HD uint64_t gfc_residual64(uint32_t code, uint64_t mag) {
    return (code & 8u) ? (uint64_t)0 - mag : mag;
}
static FZ_HD uint32_t gfc_residual32(uint32_t code, uint32_t mag) {
    return (code & 8u) ? 0u - mag : mag;
}

/* Low `bytes` (0..8) bytes of x. */
static FZ_HD uint64_t gfc_low_bytes(uint64_t x, uint32_t bytes) {
    return bytes >= 8 ? x : x & (((uint64_t)1 << (8 * bytes)) - 1);
}

#endif /* GFC_XFORM_H */
