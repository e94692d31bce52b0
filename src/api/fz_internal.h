/* Private glue between the public API, the CPU driver and the GPU backend. */
#ifndef FZ_INTERNAL_H
#define FZ_INTERNAL_H

#include "floatz.h"
#include "../format/fz_container.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Validate params and build the header they imply (payload size and table
 * hash left 0). */
fz_status fz_header_from_params(const fz_params *p, fz_header *h);

/* Fill public params/info from a parsed header. */
void fz_info_from_header(const fz_header *h, fz_info *info);

/* Threads to use for a request (0 = all cores). */
int fz_thread_count(int32_t requested);

/* CPU backend (cpu_driver.c). */
fz_status fz_cpu_compress(const fz_params *p, const fz_header *h,
                          const void *src, void *dst, size_t dst_capacity,
                          size_t *compressed_size);
fz_status fz_cpu_decompress(const uint8_t *src, size_t src_size, void *dst,
                            size_t dst_capacity, const fz_decode_options *o,
                            size_t *decompressed_size);
/* Whether values [first, first + count) exist in h's stream and fit in
 * dst: FZ_OK, FZ_ERR_INVALID_ARGUMENT or FZ_ERR_DST_TOO_SMALL. */
fz_status fz_check_range(const fz_header *h, uint64_t first, uint64_t count,
                         const void *dst, size_t dst_capacity);
fz_status fz_cpu_decompress_range(const uint8_t *src, size_t src_size,
                                  uint64_t first, uint64_t count, void *dst,
                                  size_t dst_capacity,
                                  const fz_decode_options *o);

/* Whether decode options are valid (NULL is). */
int fz_decode_options_valid(const fz_decode_options *o);

/* Min and max of the finite values among n values of dtype (lo > hi when
 * there are none); exact, so independent of threads and of how the values
 * are split into pieces (cpu_driver.c). */
void fz_value_range(uint32_t dtype, const void *src, uint64_t n, int threads,
                    double *lo, double *hi);

/* The finite range of the values REL on the GPU samples
 * (sleek_sample_index; cpu_driver.c): a guess of fz_value_range's. */
void fz_sample_range(uint32_t dtype, const void *src, uint64_t n, int threads,
                     double *lo, double *hi);

/* memcpy on several threads (pageable <-> pinned staging). */
void fz_host_copy(void *dst, const void *src, size_t n, int threads);

/* ------------------------------------------------------- codec auto
 * (auto.c) */
#define FZ_AUTO_MAX_CANDIDATES 3

/* Reads count values from value index first of the array into dst. */
typedef fz_status (*fz_auto_read_fn)(void *ctx, uint64_t first, uint64_t count,
                                     void *dst);

/* Checks auto params; *q gets a concrete stand-in (sleek, same shape and
 * mode) for size computations. */
fz_status fz_auto_stand_in(const fz_params *p, fz_params *q);
/* The candidates auto tries for p, fastest first (count returned). */
uint32_t fz_auto_candidates(const fz_params *p,
                            fz_params out[FZ_AUTO_MAX_CANDIDATES]);
/* fz_compress_bound of auto: the largest of the candidates'. */
fz_status fz_auto_bound(const fz_params *p, size_t *bound);
/* The choice: whole (may be NULL) is the array in memory, read() reads it
 * anywhere. When stream is not NULL and the whole array was tried, *stream
 * (free() it) gets the chosen stream itself, else NULL. */
fz_status fz_auto_pick(const fz_params *p, const void *whole,
                       fz_auto_read_fn read, void *ctx, fz_params *chosen,
                       uint8_t **stream, size_t *stream_size);
/* fz_compress with codec auto. */
fz_status fz_auto_compress(const fz_params *p, const void *src,
                           size_t src_bytes, void *dst, size_t dst_capacity,
                           size_t *compressed_size);

/* ------------------------------------------------------------ batches
 * A batch is a run of whole chunks that is compressed as a stand-alone
 * sub-stream by any backend; its table entries and payload are the final
 * stream's, byte for byte (batch.c, docs/PIPELINE.md). */
typedef struct fz_batch_plan {
    fz_params params;        /* the caller's */
    fz_header h;             /* the final header (payload, hash still 0) */
    uint64_t abs_bound_bits; /* REL: the absolute bound batches run with */
    uint64_t chunks_per_batch;
    uint64_t batch_count;
    uint32_t ramp; /* batches at either end that are smaller (fz_plan_split) */
} fz_batch_plan;

/* Split the array of p into batches of about batch_bytes (>= one chunk). */
fz_status fz_plan_compress(const fz_params *p, uint64_t batch_bytes,
                           fz_batch_plan *plan);
/* Split a stream of header h into batches of about batch_bytes decoded. */
void fz_plan_decompress(const fz_header *h, uint64_t batch_bytes,
                        fz_batch_plan *plan);
/* Split again into batches of about batch_bytes. With ramp, the first
 * three batches hold 1/8, 1/4 and 1/2 of a batch's chunks and the last
 * three the same in reverse (at least one chunk each), where the array
 * has room for them and two whole batches: a pipeline's first upload and
 * last download then overlap nothing for a shorter time. */
void fz_plan_split(fz_batch_plan *plan, uint64_t batch_bytes, int ramp);
/* A batch with the most chunks (the first one after the ramp). */
uint64_t fz_plan_largest_batch(const fz_batch_plan *plan);
/* REL: fix the bound from the range of the whole input (fz_value_range). */
void fz_plan_set_range(fz_batch_plan *plan, double lo, double hi);
/* Chunks [*first, *first + *count) and their bytes of batch b. */
void fz_plan_batch(const fz_batch_plan *plan, uint64_t b, uint64_t *first,
                   uint64_t *count, uint64_t *first_byte, uint64_t *bytes);
/* Parameters that compress batch b into chunks identical to the final
 * stream's: same chunking and codec parameters, REL as the absolute bound
 * it implies. FZ_ERR_UNSUPPORTED if the codec cannot keep its chunking. */
fz_status fz_plan_batch_params(const fz_batch_plan *plan, uint64_t b,
                               fz_params *bp);
/* The shape of a run of whole chunks of h, `bytes` long, as a stand-alone
 * array: h's leading extents with the slowest one cut to the run when it
 * holds whole slices, so that a shape-aware codec (lorenzo) sees its own
 * chunk geometry; else (d0, d1, rest), (d0, rest) or 1-D, the first that
 * gives h's chunk size. */
void fz_sub_shape(const fz_header *h, uint64_t bytes, uint32_t *ndims,
                  uint64_t dims[4]);
/* Header of the stand-alone stream of chunks [first, first + count) of h
 * whose table entries are `entries` and whose payloads sum to
 * payload_bytes, serialised into out[FZ_HDR_BYTES]. */
void fz_sub_header(const fz_header *h, uint64_t first, uint64_t count,
                   const uint8_t *entries, uint64_t payload_bytes,
                   uint8_t *out);
/* Sum of the table entries' payload sizes. */
uint64_t fz_entries_payload(const fz_header *h, const uint8_t *entries,
                            uint64_t count);

/* Incremental validation of a chunk table read in pieces, with the CPU
 * decoder's checks and statuses, in its order. */
typedef struct fz_table_scan {
    uint32_t hash_sum;
    uint64_t next_chunk;
    uint64_t payload;
    int oversized; /* an entry larger than its raw chunk */
} fz_table_scan;
void fz_table_scan_add(const fz_header *h, fz_table_scan *t,
                       const uint8_t *entries, uint64_t count);
/* padding_ok: the bytes between table and payload are zero; avail: bytes
 * of the stream present. */
fz_status fz_table_scan_end(const fz_header *h, const fz_table_scan *t,
                            int padding_ok, uint64_t avail);
/* Parse and check the fixed header as fz_inspect does. */
fz_status fz_header_read(const uint8_t *src, uint64_t avail, fz_header *h);

/* The oldest codec version the decoders of codec id still read
 * (UINT32_MAX for an unknown id: nothing is readable); registry.c. */
uint32_t fz_codec_oldest_version(uint32_t id);

/* GPU backend for host buffers (pipeline.cu, or stubs without CUDA). */
fz_status fz_gpu_host_compress(const fz_params *p, const void *src,
                               size_t src_bytes, void *dst, size_t dst_capacity,
                               size_t *compressed_size);
fz_status fz_gpu_host_decompress(const void *src, size_t src_size, void *dst,
                                 size_t dst_capacity,
                                 const fz_decode_options *o,
                                 size_t *decompressed_size);

#ifdef __cplusplus
}
#endif
#endif /* FZ_INTERNAL_H */
