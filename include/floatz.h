/*
 * floatz.h - the one public header of floatz, a compressor for arrays of
 * IEEE-754 float32 / float64 values on CPUs (OpenMP) and NVIDIA GPUs (CUDA).
 *
 * Conventions
 *  - Every function that can fail returns an fz_status; sizes come back
 *    through out-params.
 *  - Shapes: dims[0] is the FASTEST-varying (contiguous) dimension. A C array
 *    declared `float a[NZ][NY][NX]` has ndims = 3, dims = {NX, NY, NZ}.
 *  - Streams are self-describing floatz containers (docs/FORMAT.md); a stream
 *    made by either backend decodes on either backend, and for the same input
 *    and parameters both backends produce the same bytes.
 *  - The library never prints and never exits.
 *  - floatz requires a little-endian host (x86-64, AArch64, and every GPU).
 */
#ifndef FLOATZ_H
#define FLOATZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32) && defined(FZ_SHARED_BUILD)
#define FZ_API __declspec(dllexport)
#elif defined(__GNUC__)
#define FZ_API __attribute__((visibility("default")))
#else
#define FZ_API
#endif

/* ---------------------------------------------------------------- version */
#define FZ_VERSION_MAJOR 0
#define FZ_VERSION_MINOR 1
#define FZ_VERSION_PATCH 0
#define FZ_VERSION_NUMBER                                                      \
    (FZ_VERSION_MAJOR * 10000 + FZ_VERSION_MINOR * 100 + FZ_VERSION_PATCH)
/* Version of the container format this library writes (docs/FORMAT.md). */
#define FZ_FORMAT_VERSION 1
/* Every stream starts with a fixed header of this many bytes; copying just
 * these bytes to the host is enough for fz_inspect(). */
#define FZ_HEADER_BYTES 128

FZ_API unsigned fz_version_number(void); /* FZ_VERSION_NUMBER of the library */
FZ_API const char *fz_version_string(void); /* "0.1.0" */

/* ----------------------------------------------------------------- status */
typedef enum fz_status {
    FZ_OK = 0,
    /* caller errors */
    FZ_ERR_INVALID_ARGUMENT = 1, /* NULL pointer, bad enum, bad shape, ... */
    FZ_ERR_UNSUPPORTED = 2,      /* valid request this build/codec can't do */
    FZ_ERR_DST_TOO_SMALL = 3,    /* output capacity below what is needed */
    FZ_ERR_SIZE_MISMATCH = 4,    /* src bytes != product(dims) * sizeof */
    FZ_ERR_OUT_OF_MEMORY = 5,
    FZ_ERR_SCRATCH_TOO_SMALL = 6, /* device scratch below the queried size */
    FZ_ERR_PARAMS_MISMATCH = 7,   /* device stream differs from given params */
    /* stream errors: the input is not a valid floatz stream */
    FZ_ERR_BAD_MAGIC = 100,       /* not a floatz stream */
    FZ_ERR_FORMAT_VERSION = 101,  /* made by a newer, unknown format */
    FZ_ERR_HEADER_CHECKSUM = 102, /* fixed header corrupted */
    FZ_ERR_CORRUPT_HEADER = 103,  /* a header field is out of range */
    FZ_ERR_TRUNCATED = 104,       /* stream shorter than it says */
    FZ_ERR_TABLE_CHECKSUM = 105,  /* chunk table corrupted */
    FZ_ERR_CORRUPT_CHUNK = 106,   /* a chunk's payload is inconsistent */
    FZ_ERR_DATA_CHECKSUM = 107,   /* chunk data fails its checksum */
    /* environment */
    FZ_ERR_NO_CUDA = 200, /* library built without the CUDA backend */
    FZ_ERR_NO_GPU = 201,  /* CUDA backend present but no usable device */
    FZ_ERR_CUDA = 202,    /* a CUDA runtime call failed */
    FZ_ERR_IO = 300       /* file streaming API and tools (CLI) */
} fz_status;

/* Human-readable, static string for any status (never NULL). */
FZ_API const char *fz_status_string(fz_status status);

/* ------------------------------------------------------------- parameters */
typedef enum fz_dtype { FZ_F32 = 1, FZ_F64 = 2 } fz_dtype;

typedef enum fz_codec {
    FZ_CODEC_SLEEK = 1,   /* SLEEK: exponent remap + per-subchunk bit packing */
    FZ_CODEC_GFC = 2,     /* GFC: residuals against the previous subchunk,
                             leading-zero-byte suppression; lossless only */
    FZ_CODEC_FALCON = 3,  /* Falcon: exact decimal scaling + adaptive
                             bit-planes (lossless; codec_options[0] = values
                             per chunk, 1..1025, 0 = 1025) */
    FZ_CODEC_LORENZO = 4, /* cuSZ+-style dual quantization, 1-D/2-D/3-D
                            Lorenzo prediction (from the shape), Huffman or
                            run-length codes; ABS/REL only (lossless:
                            FZ_ERR_UNSUPPORTED; a bound of 0 stores every
                            chunk verbatim, exactly) */
    FZ_CODEC_AUTO = 255   /* not a stream codec: the host API tries the
                             codecs above that suit the mode on a sample of
                             the array and compresses with the best (see
                             fz_auto_choose); the stream records the codec
                             chosen. Device API: FZ_ERR_UNSUPPORTED
                             (fz_device_decompress, whose params describe
                             a stream: FZ_ERR_INVALID_ARGUMENT) */
} fz_codec;

/* Goals of FZ_CODEC_AUTO (its codec_options[0]). */
#define FZ_AUTO_BALANCED                                                       \
    0                      /* smallest output, but a codec that is slower      \
                              on the GPU must be more than 2% smaller than a   \
                              faster one to be chosen (default) */
#define FZ_AUTO_SMALLEST 1 /* smallest output */

typedef enum fz_mode {
    FZ_MODE_LOSSLESS = 0, /* every bit returned */
    FZ_MODE_ABS = 1,      /* |decoded - original| <= bound */
    FZ_MODE_REL = 2       /* ... <= bound * (max - min) of the finite input */
} fz_mode;

/* Which backend the HOST API uses. The device API always runs on the GPU. */
typedef enum fz_exec {
    FZ_EXEC_CPU = 0, /* OpenMP over chunks (default) */
    FZ_EXEC_GPU = 1  /* pipelined through the GPU: batches of chunks on
                        several CUDA streams, copies overlapping kernels
                        (docs/PIPELINE.md) */
} fz_exec;

#define FZ_MAX_DIMS 4
#define FZ_MAX_THREADS 256    /* larger thread requests are clamped to this */
#define FZ_MAX_GPU_STREAMS 64 /* largest gpu_streams accepted */

/* Decode flags (fz_decode_options.flags). */
#define FZ_DECODE_SKIP_CHECKSUM 1u /* don't verify per-chunk data checksums */

/* Compress flags (fz_params.flags). */
#define FZ_FLAG_NO_CHECKSUM 1u /* store no per-chunk data checksums */

typedef struct fz_params {
    fz_dtype dtype;
    uint32_t ndims;             /* 1..4 */
    uint64_t dims[FZ_MAX_DIMS]; /* dims[0] fastest; unused dims must be 1 */
    fz_codec codec;
    fz_mode mode;
    double bound;             /* lossy: finite, >= 0 (0 = stored lossless);
                                 lossless: must be 0 */
    uint32_t flags;           /* FZ_FLAG_* */
    fz_exec exec;             /* host API backend (not stored) */
    int32_t threads;          /* CPU threads, 0 = all cores, < 0 invalid,
                                 at most FZ_MAX_THREADS used (not stored) */
    int32_t codec_options[4]; /* codec-specific, 0 = default; see below */
    uint32_t gpu_streams;     /* FZ_EXEC_GPU: CUDA streams of the pipeline,
                                 0 = the default (2), at most
                                 FZ_MAX_GPU_STREAMS (not stored) */
    uint32_t batch_kib;       /* KiB of input per pipeline batch (whole
                                 chunks, at least one; the pipeline's
                                 first and last three batches are 1/8 to
                                 1/2 of it), 0 = a 32nd of the call's data,
                                 8 to 64 MiB; also the file streaming
                                 batch (not stored) */
    uint32_t reserved[6];     /* must be zero */
} fz_params;

/* codec_options by codec (unused entries must be 0):
 *  - sleek: none.
 *  - gfc: [0] dimensionality 1..32 (0 = default 1): a value is predicted
 *         from the latest value of the same dimension in the previous
 *         subchunk of 32 values; [1] values per chunk, a multiple of 32
 *         up to 4194304 (0 = default, a function of the value count only).
 *  - falcon: [0] values per chunk, 1..1025 (0 = default 1025).
 *  - lorenzo: [0] quant-code radius 2..32768 (0 = default 512): residuals
 *         of magnitude >= radius are stored as outliers; [1] 1 = let the
 *         encoder fold runs of zero residuals into Huffman symbols where
 *         that is smaller (CLI --zero-runs; radius then at most 32752),
 *         0 = off.
 *  - auto: [0] FZ_AUTO_BALANCED or FZ_AUTO_SMALLEST; the chosen codec
 *         runs with its own defaults but lorenzo's [1], which auto may set.
 * fz_inspect() reports the values a stream was made with, defaults
 * resolved (an option left 0 shows the value it stood for). */

/* Fill *p with defaults for a 1-D array of n values: codec sleek, lossless,
 * CPU backend, checksums on. */
FZ_API fz_status fz_params_init(fz_params *p, fz_dtype dtype, uint64_t n);

/* Set a shape of ndims (1..4) dimensions, dims[0] fastest. */
FZ_API fz_status fz_params_set_shape(fz_params *p, uint32_t ndims,
                                     const uint64_t *dims);

/* Number of values (product of dims) and bytes (values * element size);
 * validates *p as fz_compress_bound does. values or bytes may be NULL. */
FZ_API fz_status fz_params_count(const fz_params *p, uint64_t *values,
                                 uint64_t *bytes);

typedef struct fz_decode_options {
    uint32_t flags;       /* FZ_DECODE_* */
    fz_exec exec;         /* host API backend */
    int32_t threads;      /* CPU threads as in fz_params.threads */
    uint32_t gpu_streams; /* as fz_params.gpu_streams */
    uint32_t batch_kib;   /* as fz_params.batch_kib (decoded bytes) */
    uint32_t reserved[3]; /* must be zero */
} fz_decode_options;

/* ---------------------------------------------------------------- sizing */
/* Worst-case compressed size for these parameters. fz_compress never writes
 * more, for any data (incompressible, 0 or 1 values included). */
FZ_API fz_status fz_compress_bound(const fz_params *p, size_t *bound);

/* ------------------------------------------------------------- host API */
/* Compress src (src_bytes must equal values * element size) into dst.
 * On success *compressed_size holds the stream length. */
FZ_API fz_status fz_compress(const fz_params *p, const void *src,
                             size_t src_bytes, void *dst, size_t dst_capacity,
                             size_t *compressed_size);

/* Decompress a stream into dst. opts may be NULL (defaults: verify
 * checksums, CPU, all cores). *decompressed_size gets the bytes written.
 * The stream decides dtype and shape: inspect it first to size dst. */
FZ_API fz_status fz_decompress(const void *src, size_t src_size, void *dst,
                               size_t dst_capacity,
                               const fz_decode_options *opts,
                               size_t *decompressed_size);

/* Random access: decompress values [first, first + count) of a stream (in
 * values of its dtype, in storage order: dims[0] fastest) into dst, which
 * must hold count values. Only the chunks holding them are decoded and
 * verified (their data checksums; the header and the chunk table are
 * always checked), so the cost is that of a few chunks however large the
 * stream. Runs on the CPU whatever opts->exec says (opts->threads,
 * flags apply). A range past the end is FZ_ERR_INVALID_ARGUMENT; count 0
 * only validates the header and table. */
FZ_API fz_status fz_decompress_range(const void *src, size_t src_size,
                                     uint64_t first, uint64_t count, void *dst,
                                     size_t dst_capacity,
                                     const fz_decode_options *opts);

/* ------------------------------------------------------------ codec auto
 * What FZ_CODEC_AUTO does, as a call of its own: *chosen gets *p with the
 * codec and codec_options it would compress src with. Candidates, in order
 * of GPU speed: lossless sleek, gfc, falcon; ABS/REL sleek, lorenzo,
 * lorenzo with zero runs. Each compresses (CPU backend, p->threads) either
 * the whole array, when it holds at most 2^20 values, or a sample of 32
 * boxes of about 2^15 values spread along the array's diagonal and
 * stacked along its slowest dimension (REL: at the bound times the
 * sample's value range). The choice depends on the data only, never on
 * threads or backend, so auto streams are reproducible; a candidate the
 * parameters do not allow is skipped. Use it to pick a codec for device
 * data from a host copy. */
FZ_API fz_status fz_auto_choose(const fz_params *p, const void *src,
                                size_t src_bytes, fz_params *chosen);

/* --------------------------------------------------------- file streaming
 * Files of any size (larger than host or GPU memory) in bounded memory:
 * the input is read one batch of whole chunks at a time (fz_params /
 * fz_decode_options batch_kib; default 64 MiB on the CPU, 256 MiB on the
 * GPU), each batch runs through the host API of the chosen backend, and
 * its chunk table entries and payload are written straight to their final
 * places in the output. Memory: about two batches plus 1 MiB, whatever the
 * file size (docs/PIPELINE.md). The output is the same stream fz_compress
 * makes (compression), or the raw array (decompression).
 *
 * The FILE* forms read from the input's current position (REL mode, codec
 * auto and decompression seek in the input, so it must be a regular file
 * there) and write from the output's current position (compression seeks
 * in the output). On failure the output holds garbage; the path forms
 * below never leave a half-written file. progress may be NULL; it is
 * called after each batch with the array bytes done so far (read when
 * compressing, written when decompressing) and their total. */
typedef void (*fz_progress_fn)(void *user, uint64_t done, uint64_t total);

FZ_API fz_status fz_compress_fp(const fz_params *p, FILE *src_file,
                                FILE *dst_file, fz_progress_fn progress,
                                void *user, uint64_t *compressed_size);
FZ_API fz_status fz_decompress_fp(FILE *src_file, FILE *dst_file,
                                  const fz_decode_options *opts,
                                  fz_progress_fn progress, void *user,
                                  uint64_t *decompressed_size);

/* Path forms: the output goes to a temporary file next to dst_path that is
 * renamed over dst_path only on success (an existing file is replaced);
 * on any failure nothing is left behind. I/O failures: FZ_ERR_IO. */
FZ_API fz_status fz_compress_file(const fz_params *p, const char *src_path,
                                  const char *dst_path, fz_progress_fn progress,
                                  void *user, uint64_t *compressed_size);
FZ_API fz_status fz_decompress_file(const char *src_path, const char *dst_path,
                                    const fz_decode_options *opts,
                                    fz_progress_fn progress, void *user,
                                    uint64_t *decompressed_size);

/* Random access from a file (see fz_decompress_range): reads the header,
 * the whole chunk table (validated) and the stored bytes of the chunks
 * holding the range only; memory about those chunks' size. The FILE*
 * form reads from the file's current position (the stream's start) and
 * seeks, so it must be a regular file. I/O failures: FZ_ERR_IO. */
FZ_API fz_status fz_decompress_range_fp(FILE *src_file, uint64_t first,
                                        uint64_t count, void *dst,
                                        size_t dst_capacity,
                                        const fz_decode_options *opts);
FZ_API fz_status fz_decompress_range_file(const char *src_path, uint64_t first,
                                          uint64_t count, void *dst,
                                          size_t dst_capacity,
                                          const fz_decode_options *opts);

/* ----------------------------------------------------- header inspection */
typedef struct fz_info {
    fz_params params;       /* dtype, shape, codec, mode, bound, flags */
    double bound_effective; /* the bound actually enforced (lossy) */
    uint32_t format_version;
    uint32_t codec_version;
    uint64_t original_bytes;   /* decompressed size */
    uint64_t compressed_bytes; /* total stream size */
    uint64_t chunk_bytes;      /* uncompressed bytes per chunk */
    uint64_t chunk_count;
    uint64_t payload_offset; /* where chunk data starts */
    int has_checksums;       /* per-chunk data checksums stored */
} fz_info;

/* Read and validate the header (needs at least FZ_HEADER_BYTES bytes; the
 * chunk table is not read). Does not decode anything. */
FZ_API fz_status fz_inspect(const void *src, size_t src_size, fz_info *info);

/* "sleek", "gfc", "falcon", "lorenzo", "auto"; NULL if unknown. */
FZ_API const char *fz_codec_name(fz_codec codec);
/* The codec of such a name; FZ_ERR_UNSUPPORTED if unknown. */
FZ_API fz_status fz_codec_from_name(const char *name, fz_codec *codec);

/* ------------------------------------------------------------ device API
 * Device buffers, asynchronous on a caller-given CUDA stream: no allocation
 * and no device synchronisation inside. The device used is the stream's
 * device (the current device for the legacy default stream, NULL).
 * Device pointers must be 16-byte aligned (cudaMalloc's are), but for
 * fz_device_decompress_range's d_dst. Errors found on the device (corrupt
 * stream, capacity too small) land in the fz_device_result; read it after
 * the stream completes. */
struct CUstream_st; /* cudaStream_t is this pointer */
typedef struct CUstream_st *fz_cuda_stream;

typedef struct fz_device_result {
    uint64_t size;  /* compressed (or decompressed) bytes */
    int32_t status; /* an fz_status */
    uint32_t reserved;
} fz_device_result;

/* Number of usable CUDA devices (0 without the CUDA backend or a GPU). */
FZ_API int fz_gpu_count(void);

/* 1 when the CUDA backend of this build compresses with these
 * parameters, else 0: no CUDA backend, invalid parameters, or a codec
 * option only the CPU encoder has (none today). Says nothing about
 * whether a GPU is present (fz_gpu_count). GPU compression with such
 * parameters returns FZ_ERR_UNSUPPORTED; the GPU backend decodes the
 * streams of every known codec and option. For FZ_CODEC_AUTO: whether
 * the host API with FZ_EXEC_GPU does (every candidate is supported). */
FZ_API int fz_gpu_supports(const fz_params *p);

/* fz_compress / fz_decompress with FZ_EXEC_GPU keep the last call's CUDA
 * streams, device buffers and pinned staging buffers in a process-wide
 * cache (about 4 x batch bytes of device memory per stream, 2 x of pinned
 * memory with pageable buffers), so that the next call does not
 * allocate and pin them again. This frees them now; they are also freed at
 * process exit. Thread-safe; a call in progress keeps its own. */
FZ_API void fz_gpu_release_cache(void);

/* Scratch bytes (device memory) that fz_device_compress and
 * fz_device_decompress need for arrays of these parameters. */
FZ_API fz_status fz_device_scratch_size(const fz_params *p, size_t *bytes);

/* Compress d_src (device) into d_dst (device). d_result (device memory) gets
 * the stream size and a status; if h_result is not NULL the result is also
 * copied there, valid once the stream completes (use pinned memory: with
 * pageable memory CUDA makes that copy synchronous). */
FZ_API fz_status fz_device_compress(const fz_params *p, const void *d_src,
                                    void *d_dst, size_t dst_capacity,
                                    void *d_scratch, size_t scratch_bytes,
                                    fz_device_result *d_result,
                                    fz_device_result *h_result,
                                    fz_cuda_stream stream);

/* Decompress a device stream. p gives the parameters the stream was made
 * with (kept by the caller, or fz_inspect() of a host copy of the header):
 * dtype, shape, codec, codec_options, mode, bound and flags; the device
 * checks the stream against them (FZ_ERR_PARAMS_MISMATCH; other
 * codec_options: FZ_ERR_CORRUPT_HEADER). opts may be NULL; only its flags
 * apply, but options fz_decompress refuses are refused here too. */
FZ_API fz_status fz_device_decompress(
    const fz_params *p, const void *d_src, size_t src_size, void *d_dst,
    size_t dst_capacity, void *d_scratch, size_t scratch_bytes,
    const fz_decode_options *opts, fz_device_result *d_result,
    fz_device_result *h_result, fz_cuda_stream stream);

/* Random access on the device: values [first, first + count) of the device
 * stream d_src (in values of its dtype, storage order, as
 * fz_decompress_range) into d_dst (device, any alignment, room for count
 * values). Only the chunks holding the range are decoded and verified;
 * the stream's header and whole chunk table are checked as a whole decode
 * checks them (count 0 only checks them). Stream-ordered like
 * fz_device_decompress: no allocation, no synchronisation; *d_result gets
 * count x element size and a status. The scratch must hold
 * fz_device_range_scratch_size() bytes for the same range: about the
 * offsets of every chunk (8 bytes each), twice the bytes of the chunks
 * holding the range, and the codec's decode scratch for those chunks. On
 * an error status d_dst's contents are undefined. */
FZ_API fz_status fz_device_range_scratch_size(const fz_params *p,
                                              uint64_t first, uint64_t count,
                                              size_t *bytes);
FZ_API fz_status fz_device_decompress_range(
    const fz_params *p, const void *d_src, size_t src_size, uint64_t first,
    uint64_t count, void *d_dst, size_t dst_capacity, void *d_scratch,
    size_t scratch_bytes, const fz_decode_options *opts,
    fz_device_result *d_result, fz_device_result *h_result,
    fz_cuda_stream stream);

#ifdef __cplusplus
}
#endif
#endif /* FLOATZ_H */
