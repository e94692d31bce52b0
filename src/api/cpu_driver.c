/* CPU backend driver: assembles the container around a codec's chunks.
 * Compression runs in batches of chunks: encode a batch in parallel into
 * scratch slots, fix the output offsets in chunk order, copy in parallel.
 * Memory stays bounded (about 256 KiB of slots per thread, at least two
 * chunks, at most 256 MiB of slots or one chunk) whatever the input size,
 * and
 * the bytes never depend on the thread count. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../codecs/fz_codec.h"
#include "../codecs/sleek/sleek_xform.h"
#include "../common/fz_bound.h"
#include "fz_internal.h"

/* Scratch per thread for a batch: 16 sleek chunks' worth; codecs with
 * larger chunks get fewer per batch, but at least 2. */
#define BATCH_BYTES_PER_THREAD (16u * 16384u)
/* ... and at most this many slot bytes per batch in all (one chunk at
 * least): codecs with multi-MiB chunks keep memory bounded too. */
#define BATCH_BYTES_MAX ((size_t)256 << 20)

typedef struct batch_buffers {
    uint8_t *slots;
    uint32_t *sizes;
    uint32_t *sums;
    uint64_t *offsets; /* output position of each chunk of the batch */
} batch_buffers;

static void batch_free(batch_buffers *b) {
    free(b->slots);
    free(b->sizes);
    free(b->sums);
    free(b->offsets);
}

static fz_status batch_alloc(batch_buffers *b, uint64_t n, size_t slot) {
    b->slots = (uint8_t *)malloc((size_t)n * slot);
    b->sizes = (uint32_t *)malloc((size_t)n * sizeof(uint32_t));
    b->sums = (uint32_t *)malloc((size_t)n * sizeof(uint32_t));
    b->offsets = (uint64_t *)malloc((size_t)n * sizeof(uint64_t));
    if (!b->slots || !b->sizes || !b->sums || !b->offsets) {
        batch_free(b);
        return FZ_ERR_OUT_OF_MEMORY;
    }
    return FZ_OK;
}

static void encode_one(const fz_codec_cpu *codec, const fz_header *h,
                       const uint8_t *src, uint64_t c, uint8_t *slot,
                       uint32_t *size, uint32_t *sum) {
    uint64_t raw = fz_chunk_raw_bytes(h, c);
    const uint8_t *in = src + c * h->chunk_bytes;
    *size = (uint32_t)codec->encode_chunk(h, in, raw / fz_dtype_size(h->dtype),
                                          slot, sum);
    if (!(h->flags & FZ_HDR_FLAG_CHECKSUMS))
        *sum = 0;
}

/* Min and max of the finite values, in double (lo > hi when there are
 * none). min/max are exact and order-free: any thread count, same result.
 * Branch-free so that it vectorizes and runs at memory bandwidth: an
 * integer test of the exponent field picks the value or the neutral
 * element; the selects compile to blends and min/max instructions. */
static void range_f32(const float *v, int64_t n, int threads, double *lo_out,
                      double *hi_out) {
    const uint32_t exponent = 0x7f800000u;
    float lo = FLT_MAX, hi = -FLT_MAX;
#pragma omp parallel for simd num_threads(threads) reduction(min               \
                                                             : lo)             \
    reduction(max                                                              \
              : hi)
    for (int64_t i = 0; i < n; i++) {
        uint32_t bits;
        memcpy(&bits, &v[i], sizeof bits);
        const int finite = (bits & exponent) != exponent;
        const float low = finite ? v[i] : FLT_MAX;
        const float high = finite ? v[i] : -FLT_MAX;
        lo = low < lo ? low : lo;
        hi = high > hi ? high : hi;
    }
    *lo_out = lo == FLT_MAX && hi == -FLT_MAX ? DBL_MAX : lo;
    *hi_out = lo == FLT_MAX && hi == -FLT_MAX ? -DBL_MAX : hi;
}

static void range_f64(const double *v, int64_t n, int threads, double *lo_out,
                      double *hi_out) {
    const uint64_t exponent = 0x7ff0000000000000ull;
    double lo = DBL_MAX, hi = -DBL_MAX;
#pragma omp parallel for simd num_threads(threads) reduction(min               \
                                                             : lo)             \
    reduction(max                                                              \
              : hi)
    for (int64_t i = 0; i < n; i++) {
        uint64_t bits;
        memcpy(&bits, &v[i], sizeof bits);
        const int finite = (bits & exponent) != exponent;
        const double low = finite ? v[i] : DBL_MAX;
        const double high = finite ? v[i] : -DBL_MAX;
        lo = low < lo ? low : lo;
        hi = high > hi ? high : hi;
    }
    *lo_out = lo;
    *hi_out = hi;
}

void fz_value_range(uint32_t dtype, const void *src, uint64_t count,
                    int threads, double *lo_out, double *hi_out) {
    if (dtype == 1)
        range_f32((const float *)src, (int64_t)count, threads, lo_out, hi_out);
    else
        range_f64((const double *)src, (int64_t)count, threads, lo_out, hi_out);
}

/* The finite range of the values at sleek_sample_index (SLEEK_SAMPLE of
 * them, all when there are fewer): the GPU's REL sample, read from host
 * memory. Only a guess of the range; lo > hi when none is finite. */
void fz_sample_range(uint32_t dtype, const void *src, uint64_t n, int threads,
                     double *lo_out, double *hi_out) {
    const int64_t m = (int64_t)(n < SLEEK_SAMPLE ? n : SLEEK_SAMPLE);
    double lo = DBL_MAX, hi = -DBL_MAX;
#pragma omp parallel for num_threads(threads) reduction(min                    \
                                                        : lo) reduction(max    \
                                                                        : hi)
    for (int64_t k = 0; k < m; k++) {
        const uint64_t i = sleek_sample_index((uint64_t)k, n, (uint64_t)m);
        const double v = dtype == 1 ? (double)((const float *)src)[i]
                                    : ((const double *)src)[i];
        if (isfinite(v)) {
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
        }
    }
    *lo_out = lo;
    *hi_out = hi;
}

/* Pieces of 1 MiB: large enough for full copy speed, small enough to
 * spread over the threads. */
void fz_host_copy(void *dst, const void *src, size_t n, int threads) {
    const size_t piece = (size_t)1 << 20;
    const int64_t pieces = (int64_t)((n + piece - 1) / piece);
    if (pieces <= 1) {
        memcpy(dst, src, n);
        return;
    }
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t i = 0; i < pieces; i++) {
        const size_t off = (size_t)i * piece;
        memcpy((uint8_t *)dst + off, (const uint8_t *)src + off,
               n - off < piece ? n - off : piece);
    }
}

fz_status fz_cpu_compress(const fz_params *p, const fz_header *h0,
                          const void *src, void *dst, size_t dst_capacity,
                          size_t *compressed_size) {
    fz_header h = *h0;
    const fz_codec_cpu *codec = fz_codec_cpu_find(h.codec);
    if (h.mode == FZ_MODE_REL) {
        double rel;
        memcpy(&rel, &h.bound_bits, sizeof rel);
        double lo, hi;
        fz_value_range(h.dtype, src, h.original_bytes / fz_dtype_size(h.dtype),
                       fz_thread_count(p->threads), &lo, &hi);
        h.bound_eff_bits =
            codec->effective_bound(&h, fz_rel_abs_bound_bits(rel, lo, hi));
    }
    uint8_t *out = (uint8_t *)dst;
    const uint64_t table_bytes = fz_table_bytes(&h);
    const uint64_t payload_off = fz_payload_offset(&h);
    const uint32_t entry = fz_table_entry_bytes(h.flags);
    if (dst_capacity < payload_off)
        return FZ_ERR_DST_TOO_SMALL;
    memset(out + FZ_HDR_BYTES + table_bytes, 0,
           (size_t)(payload_off - FZ_HDR_BYTES - table_bytes));

    const int threads = fz_thread_count(p->threads);
    const size_t slot = codec->encode_capacity(&h);
    uint64_t per_thread = BATCH_BYTES_PER_THREAD / h.chunk_bytes;
    uint64_t batch = (uint64_t)threads * (per_thread > 2 ? per_thread : 2);
    if (batch > BATCH_BYTES_MAX / slot) /* big chunks: fewer at a time */
        batch = BATCH_BYTES_MAX / slot > 0 ? BATCH_BYTES_MAX / slot : 1;
    if (batch > h.chunk_count)
        batch = h.chunk_count;
    batch_buffers b = {0};
    if (batch > 0 && batch_alloc(&b, batch, slot) != FZ_OK)
        return FZ_ERR_OUT_OF_MEMORY;

    uint64_t pos = payload_off;
    for (uint64_t first = 0; first < h.chunk_count; first += batch) {
        const int64_t nb =
            (int64_t)(h.chunk_count - first < batch ? h.chunk_count - first
                                                    : batch);
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
        for (int64_t i = 0; i < nb; i++)
            encode_one(codec, &h, (const uint8_t *)src, first + (uint64_t)i,
                       b.slots + (size_t)i * slot, &b.sizes[i], &b.sums[i]);
        uint64_t end = pos;
        for (int64_t i = 0; i < nb; i++) {
            b.offsets[i] = end;
            end += b.sizes[i];
        }
        if (end > dst_capacity) {
            batch_free(&b);
            return FZ_ERR_DST_TOO_SMALL;
        }
#pragma omp parallel for num_threads(threads) schedule(static)
        for (int64_t i = 0; i < nb; i++) {
            memcpy(out + b.offsets[i], b.slots + (size_t)i * slot, b.sizes[i]);
            uint8_t *e = out + FZ_HDR_BYTES + (first + (uint64_t)i) * entry;
            fz_store32(e, b.sizes[i]);
            if (entry == 8)
                fz_store32(e + 4, b.sums[i]);
        }
        pos = end;
    }
    batch_free(&b);
    h.payload_bytes = pos - payload_off;
    h.table_hash = fz_table_hash(out + FZ_HDR_BYTES, table_bytes);
    fz_header_write(&h, out);
    *compressed_size = (size_t)pos;
    return FZ_OK;
}

/* Parse + validate everything but the chunk payloads; fills chunk offsets
 * (relative to the payload) when offsets != NULL. */
static fz_status validate_stream(const uint8_t *src, size_t src_size,
                                 fz_header *h, const fz_codec_cpu **codec,
                                 uint64_t **offsets) {
    int s = fz_header_parse(src, src_size, h);
    if (s != FZS_OK)
        return (fz_status)s;
    *codec = fz_codec_cpu_find(h->codec);
    if (!*codec)
        return FZ_ERR_CORRUPT_HEADER;
    s = (*codec)->check_header(h);
    if (s != FZS_OK)
        return (fz_status)s;
    const uint64_t table_bytes = fz_table_bytes(h);
    const uint64_t payload_off = fz_payload_offset(h);
    if (src_size < payload_off)
        return FZ_ERR_TRUNCATED;
    if (fz_table_hash(src + FZ_HDR_BYTES, table_bytes) != h->table_hash)
        return FZ_ERR_TABLE_CHECKSUM;
    for (uint64_t i = FZ_HDR_BYTES + table_bytes; i < payload_off; i++)
        if (src[i] != 0)
            return FZ_ERR_CORRUPT_HEADER;
    uint64_t *offs = (uint64_t *)malloc((size_t)(h->chunk_count + 1) * 8);
    if (!offs)
        return FZ_ERR_OUT_OF_MEMORY;
    const uint32_t entry = fz_table_entry_bytes(h->flags);
    uint64_t sum = 0;
    for (uint64_t c = 0; c < h->chunk_count; c++) {
        uint32_t size = fz_load32(src + FZ_HDR_BYTES + c * entry);
        if (size > fz_chunk_raw_bytes(h, c)) {
            free(offs);
            return FZ_ERR_CORRUPT_CHUNK;
        }
        offs[c] = sum;
        sum += size;
    }
    offs[h->chunk_count] = sum;
    if (sum != h->payload_bytes) {
        free(offs);
        return FZ_ERR_CORRUPT_HEADER;
    }
    if (src_size < payload_off + sum) {
        free(offs);
        return FZ_ERR_TRUNCATED;
    }
    *offsets = offs;
    return FZ_OK;
}

/* Chunk c of the stream into out (its raw bytes). */
static int decode_one(const fz_codec_cpu *codec, const fz_header *h,
                      const uint8_t *src, const uint64_t *offs, uint64_t c,
                      uint8_t *out, int verify) {
    const uint64_t raw = fz_chunk_raw_bytes(h, c);
    const uint8_t *in = src + fz_payload_offset(h) + offs[c];
    const size_t size = (size_t)(offs[c + 1] - offs[c]);
    const uint32_t entry = fz_table_entry_bytes(h->flags);
    const uint32_t want =
        verify ? fz_load32(src + FZ_HDR_BYTES + c * entry + 4) : 0;
    const int payload_sum =
        codec->checksum_covers_payload && codec->checksum_covers_payload(h);
    const fz_sum_kind kind = fz_codec_data_sum(codec, h);
    if (verify && payload_sum && fz_data_checksum(kind, in, size) != want)
        return FZS_DATA_CHECKSUM; /* before anything is decoded */
    if (size == raw) {
        memcpy(out, in, size);
    } else {
        int s = codec->decode_chunk(h, in, size, out,
                                    raw / fz_dtype_size(h->dtype));
        if (s != FZS_OK)
            return s;
    }
    if (verify && !payload_sum && fz_data_checksum(kind, out, raw) != want)
        return FZS_DATA_CHECKSUM;
    return FZS_OK;
}

/* Bytes [begin, end) of the stream's data (multiples of the element
 * size, begin < end) into dst: the chunks wholly inside go straight to
 * their place, the one or two the range cuts through a chunk-sized buffer
 * of their thread. The first failing chunk in chunk order is reported, so
 * the status does not depend on the threads. */
static fz_status decode_span(const fz_codec_cpu *codec, const fz_header *h,
                             const uint8_t *src, const uint64_t *offs,
                             uint64_t begin, uint64_t end, uint8_t *dst,
                             const fz_decode_options *o) {
    const int verify = (h->flags & FZ_HDR_FLAG_CHECKSUMS) &&
                       !(o && (o->flags & FZ_DECODE_SKIP_CHECKSUM));
    const int64_t c0 = (int64_t)(begin / h->chunk_bytes),
                  c1 = (int64_t)((end - 1) / h->chunk_bytes);
    int threads = fz_thread_count(o ? o->threads : 0);
    if (threads > c1 - c0 + 1)
        threads = (int)(c1 - c0 + 1);
    /* chunks a thread takes at a time: 4 when there are many */
    const int grain = c1 - c0 + 1 >= 16 * (int64_t)threads ? 4 : 1;
    uint64_t bad_chunk = UINT64_MAX;
    int bad_status = FZS_OK;
#pragma omp parallel num_threads(threads)
    {
        uint8_t *cut = NULL; /* this thread's buffer for a cut chunk */
#pragma omp for schedule(dynamic, grain)
        for (int64_t c = c0; c <= c1; c++) {
            const uint64_t at = (uint64_t)c * h->chunk_bytes;
            const uint64_t stop = at + fz_chunk_raw_bytes(h, (uint64_t)c);
            const uint64_t lo = at > begin ? at : begin;
            const uint64_t hi = stop < end ? stop : end;
            const int whole = lo == at && hi == stop;
            if (!whole && !cut)
                cut = (uint8_t *)malloc(h->chunk_bytes);
            uint8_t *out = whole ? dst + (at - begin) : cut;
            int cs =
                out ? decode_one(codec, h, src, offs, (uint64_t)c, out, verify)
                    : FZS_OUT_OF_MEMORY;
            if (cs == FZS_OK && !whole)
                memcpy(dst + (lo - begin), cut + (lo - at), (size_t)(hi - lo));
            if (cs != FZS_OK) {
#pragma omp critical(fz_decode_error)
                if ((uint64_t)c < bad_chunk) {
                    bad_chunk = (uint64_t)c;
                    bad_status = cs;
                }
            }
        }
        free(cut);
    }
    return (fz_status)bad_status;
}

fz_status fz_check_range(const fz_header *h, uint64_t first, uint64_t count,
                         const void *dst, size_t dst_capacity) {
    const uint64_t esize = fz_dtype_size(h->dtype);
    const uint64_t values = h->original_bytes / esize;
    if (first > values || count > values - first)
        return FZ_ERR_INVALID_ARGUMENT;
    if (dst_capacity / esize < count || (!dst && count))
        return dst ? FZ_ERR_DST_TOO_SMALL : FZ_ERR_INVALID_ARGUMENT;
    return FZ_OK;
}

/* Values [first, first + count) into dst: the whole array for
 * fz_decompress, a range for fz_decompress_range (only the chunks that
 * hold it are read and verified). The header and the whole chunk table
 * are validated (table hash) either way. */
static fz_status decompress_values(const uint8_t *src, size_t src_size,
                                   int whole, uint64_t first, uint64_t count,
                                   void *dst, size_t dst_capacity,
                                   const fz_decode_options *o,
                                   uint64_t *bytes) {
    fz_header h;
    const fz_codec_cpu *codec = NULL;
    uint64_t *offs = NULL;
    fz_status s = validate_stream(src, src_size, &h, &codec, &offs);
    if (s != FZ_OK)
        return s;
    const uint64_t esize = fz_dtype_size(h.dtype);
    if (whole)
        count = h.original_bytes / esize;
    s = fz_check_range(&h, first, count, dst, dst_capacity);
    if (s == FZ_OK && count)
        s = decode_span(codec, &h, src, offs, first * esize,
                        (first + count) * esize, (uint8_t *)dst, o);
    free(offs);
    *bytes = count * esize;
    return s;
}

fz_status fz_cpu_decompress(const uint8_t *src, size_t src_size, void *dst,
                            size_t dst_capacity, const fz_decode_options *o,
                            size_t *decompressed_size) {
    uint64_t bytes = 0;
    fz_status s =
        decompress_values(src, src_size, 1, 0, 0, dst, dst_capacity, o, &bytes);
    if (s == FZ_OK)
        *decompressed_size = (size_t)bytes;
    return s;
}

fz_status fz_cpu_decompress_range(const uint8_t *src, size_t src_size,
                                  uint64_t first, uint64_t count, void *dst,
                                  size_t dst_capacity,
                                  const fz_decode_options *o) {
    uint64_t bytes = 0;
    return decompress_values(src, src_size, 0, first, count, dst, dst_capacity,
                             o, &bytes);
}
