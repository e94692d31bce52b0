/* The contract between the container driver and a codec's CPU backend.
 * A codec encodes independent chunks; the driver owns the header, the chunk
 * table, checksums, verbatim fallback and parallelism. */
#ifndef FZ_CODEC_H
#define FZ_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "../common/fz_hash.h"
#include "../format/fz_container.h"

typedef struct fz_codec_cpu {
    uint32_t id;
    uint32_t version;        /* what the encoder writes */
    uint32_t oldest_version; /* the oldest version the decoders still read */
    const char *name;
    /* Uncompressed bytes per chunk for this header's dtype/shape/options. */
    uint32_t (*chunk_bytes)(const fz_header *h);
    /* Bytes of scratch an encoded chunk may need (may exceed the raw size:
     * the driver then stores the chunk verbatim). */
    size_t (*encode_capacity)(const fz_header *h);
    /* Codec-specific header checks (chunk size, params): FZS_* status. */
    int (*check_header)(const fz_header *h);
    /* Lossy modes: the bound the codec enforces (binary64 bits, <= the
     * absolute bound given as bits; 0 = store lossless). NULL for codecs
     * without lossy modes. */
    uint64_t (*effective_bound)(const fz_header *h, uint64_t abs_bound_bits);
    /* Encode nvalues (<= chunk) values at src into dst and return the
     * size. A size equal to the raw chunk bytes means dst holds the bytes
     * to store verbatim (what the decoder must return: for lossy modes the
     * reconstruction, not the input). *checksum gets the chunk's data
     * checksum (fz_data_checksum of the kind data_sum names): of what the
     * decoder will produce, or of the stored payload where
     * checksum_covers_payload says so. */
    size_t (*encode_chunk)(const fz_header *h, const void *src,
                           uint64_t nvalues, uint8_t *dst, uint32_t *checksum);
    /* Decode an encoded (not verbatim) chunk; FZS_* status. Must reject any
     * input it cannot decode exactly, reading only src[0..size). */
    int (*decode_chunk)(const fz_header *h, const uint8_t *src, size_t size,
                        void *dst, uint64_t nvalues);
    /* Validate the caller's fz_params.codec_options and store the codec
     * parameters they imply in h->codec_params (h's dtype, mode and
     * original_bytes are set; chunk_bytes is asked for afterwards).
     * FZS_OK, FZS_INVALID_ARGUMENT, or FZS_UNSUPPORTED for a mode the
     * codec does not offer. */
    int (*check_params)(fz_header *h, const int32_t options[4]);
    /* Whether this stream's data checksums cover each chunk's stored
     * payload (checked before decoding) instead of the bytes it decodes
     * to. NULL: the decoded bytes. */
    int (*checksum_covers_payload)(const fz_header *h);
    /* Which checksum this stream's data checksums are (fz_hash.h).
     * NULL: FZ_SUM_MIX. */
    fz_sum_kind (*data_sum)(const fz_header *h);
} fz_codec_cpu;

static inline fz_sum_kind fz_codec_data_sum(const fz_codec_cpu *codec,
                                            const fz_header *h) {
    return codec->data_sum ? codec->data_sum(h) : FZ_SUM_MIX;
}

/* NULL if id is unknown. */
const fz_codec_cpu *fz_codec_cpu_find(uint32_t id);

extern const fz_codec_cpu fz_sleek_cpu;
extern const fz_codec_cpu fz_gfc_cpu;
extern const fz_codec_cpu fz_falcon_cpu;
extern const fz_codec_cpu fz_lorenzo_cpu;

#endif /* FZ_CODEC_H */
