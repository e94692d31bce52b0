/* SLEEK lossless transform (Algorithm 1 of the SLEEK paper) and the chunk
 * layout. Integer-only and FZ_HD: the CPU and GPU backends include this one
 * definition, which is what makes their streams byte-identical.
 *
 * Chunk layout (docs/FORMAT.md): a chunk is 16 KiB of original data split
 * into 32 subchunks of 512 bytes (128 f32 or 64 f64 values). Encoded:
 *   32 bytes   bit width n_s of each subchunk (0..32 or 0..64)
 *   then, per subchunk, its V values' low n_s bits packed LSB-first:
 *   value i of the subchunk occupies stream bits [i*n_s, (i+1)*n_s), bit p
 *   being bit (p % 8) of byte p / 8. A subchunk takes n_s * V / 8 bytes.
 * A last, partial chunk is encoded as if padded with +0.0 values, which
 * transform to 0 and must decode to 0. */
#ifndef SLEEK_XFORM_H
#define SLEEK_XFORM_H

#include "../../common/fz_portable.h"

#define SLEEK_CODEC_ID 1u
#define SLEEK_CODEC_VERSION 1u
#define SLEEK_CHUNK_BYTES 16384u
#define SLEEK_SUB_BYTES 512u
#define SLEEK_SUBS (SLEEK_CHUNK_BYTES / SLEEK_SUB_BYTES) /* 32 */
#define SLEEK_WIDTHS_BYTES SLEEK_SUBS                    /* one byte each */

/* Rotate the sign into the LSB, remap the biased exponent so that exponents
 * near 0 get many leading zeros (0 stays 0, E>128 -> E-128, E<=128 ->
 * E-129 as a signed field), then two's complement -> magnitude-sign. */
static FZ_HD uint32_t sleek_fwd32(uint32_t bits) {
    const uint32_t msb = 0x80000000u, exp_mask = 0xFF000000u;
    uint32_t v = (bits << 1) | (bits >> 31);
    if (v & exp_mask) {
        v -= msb;
        if ((v & exp_mask) == 0 || v >= msb)
            v -= 0x01000000u;
    }
    return (v << 1) ^ (0u - (v >> 31));
}

static FZ_HD uint32_t sleek_inv32(uint32_t t) {
    const uint32_t msb = 0x80000000u, exp_mask = 0xFF000000u;
    uint32_t v = (t >> 1) ^ (0u - (t & 1u));
    if (v & exp_mask) {
        if (v >= msb)
            v += 0x01000000u;
        v += msb;
    }
    return (v >> 1) | (v << 31);
}

static FZ_HD uint64_t sleek_fwd64(uint64_t bits) {
    const uint64_t msb = (uint64_t)1 << 63, exp_mask = (uint64_t)0x7FF << 53;
    uint64_t v = (bits << 1) | (bits >> 63);
    if (v & exp_mask) {
        v -= msb;
        if ((v & exp_mask) == 0 || v >= msb)
            v -= (uint64_t)1 << 53;
    }
    return (v << 1) ^ ((uint64_t)0 - (v >> 63));
}

static FZ_HD uint64_t sleek_inv64(uint64_t t) {
    const uint64_t msb = (uint64_t)1 << 63, exp_mask = (uint64_t)0x7FF << 53;
    uint64_t v = (t >> 1) ^ ((uint64_t)0 - (t & 1u));
    if (v & exp_mask) {
        if (v >= msb)
            v += (uint64_t)1 << 53;
        v += msb;
    }
    return (v >> 1) | (v << 63);
}

/* Bits needed for the largest transformed value of a subchunk. */
static FZ_HD uint32_t sleek_width32(uint32_t max_val) {
    return 32u - (uint32_t)fz_clz32(max_val);
}
static FZ_HD uint32_t sleek_width64(uint64_t max_val) {
    return 64u - (uint32_t)fz_clz64(max_val);
}

/* Values per subchunk and encoded bytes of a subchunk of width n. */
static FZ_HD uint32_t sleek_sub_values(uint32_t esize) {
    return SLEEK_SUB_BYTES / esize;
}
static FZ_HD uint32_t sleek_sub_packed_bytes(uint32_t esize, uint32_t n) {
    return n * (SLEEK_SUB_BYTES / esize) / 8u;
}

#endif /* SLEEK_XFORM_H */
