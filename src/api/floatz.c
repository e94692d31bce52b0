/* Public API: parameter checks, header inspection, dispatch to backends. */
#include <float.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "../codecs/fz_codec.h"
#include "../common/fz_bound.h"
#include "fz_internal.h"

#define FZ_STR2(x) #x
#define FZ_STR(x) FZ_STR2(x)

unsigned fz_version_number(void) {
    return FZ_VERSION_NUMBER;
}

const char *fz_version_string(void) {
    return FZ_STR(FZ_VERSION_MAJOR) "." FZ_STR(FZ_VERSION_MINOR) "." FZ_STR(
        FZ_VERSION_PATCH);
}

const char *fz_status_string(fz_status s) {
    switch (s) {
    case FZ_OK: return "success";
    case FZ_ERR_INVALID_ARGUMENT: return "invalid argument";
    case FZ_ERR_UNSUPPORTED: return "not supported by this codec or build";
    case FZ_ERR_DST_TOO_SMALL: return "output buffer too small";
    case FZ_ERR_SIZE_MISMATCH:
        return "input size does not match dtype and shape";
    case FZ_ERR_OUT_OF_MEMORY: return "out of memory";
    case FZ_ERR_SCRATCH_TOO_SMALL: return "device scratch buffer too small";
    case FZ_ERR_PARAMS_MISMATCH:
        return "stream does not match the given parameters";
    case FZ_ERR_BAD_MAGIC: return "not a floatz stream (bad magic)";
    case FZ_ERR_FORMAT_VERSION: return "unsupported floatz format version";
    case FZ_ERR_HEADER_CHECKSUM:
        return "corrupt stream: header checksum mismatch";
    case FZ_ERR_CORRUPT_HEADER: return "corrupt stream: invalid header field";
    case FZ_ERR_TRUNCATED: return "truncated stream";
    case FZ_ERR_TABLE_CHECKSUM:
        return "corrupt stream: chunk table checksum mismatch";
    case FZ_ERR_CORRUPT_CHUNK: return "corrupt stream: invalid chunk data";
    case FZ_ERR_DATA_CHECKSUM:
        return "corrupt stream: chunk data checksum mismatch";
    case FZ_ERR_NO_CUDA: return "library built without the CUDA backend";
    case FZ_ERR_NO_GPU: return "no usable CUDA device";
    case FZ_ERR_CUDA: return "CUDA runtime error";
    case FZ_ERR_IO: return "I/O error";
    }
    return "unknown status";
}

const char *fz_codec_name(fz_codec codec) {
    if (codec == FZ_CODEC_AUTO)
        return "auto";
    const fz_codec_cpu *c = fz_codec_cpu_find((uint32_t)codec);
    return c ? c->name : NULL;
}

fz_status fz_codec_from_name(const char *name, fz_codec *codec) {
    if (!name || !codec)
        return FZ_ERR_INVALID_ARGUMENT;
    if (strcmp(name, "auto") == 0) {
        *codec = FZ_CODEC_AUTO;
        return FZ_OK;
    }
    for (uint32_t id = 1; id < 256; id++) {
        const fz_codec_cpu *c = fz_codec_cpu_find(id);
        if (c && strcmp(c->name, name) == 0) {
            *codec = (fz_codec)id;
            return FZ_OK;
        }
    }
    return FZ_ERR_UNSUPPORTED;
}

int fz_thread_count(int32_t requested) {
    if (requested > FZ_MAX_THREADS)
        return FZ_MAX_THREADS;
    if (requested > 0)
        return requested;
#ifdef _OPENMP
    /* "all cores" is a request too (OMP_NUM_THREADS, a large machine): at
     * most FZ_MAX_THREADS, as floatz.h promises */
    const int all = omp_get_max_threads();
    return all < FZ_MAX_THREADS ? all : FZ_MAX_THREADS;
#else
    return 1;
#endif
}

fz_status fz_params_init(fz_params *p, fz_dtype dtype, uint64_t n) {
    if (!p || (dtype != FZ_F32 && dtype != FZ_F64))
        return FZ_ERR_INVALID_ARGUMENT;
    memset(p, 0, sizeof *p);
    p->dtype = dtype;
    p->ndims = 1;
    p->dims[0] = n;
    p->dims[1] = p->dims[2] = p->dims[3] = 1;
    p->codec = FZ_CODEC_SLEEK;
    p->mode = FZ_MODE_LOSSLESS;
    p->exec = FZ_EXEC_CPU;
    return FZ_OK;
}

fz_status fz_params_set_shape(fz_params *p, uint32_t ndims,
                              const uint64_t *dims) {
    if (!p || !dims || ndims < 1 || ndims > FZ_MAX_DIMS)
        return FZ_ERR_INVALID_ARGUMENT;
    p->ndims = ndims;
    for (uint32_t d = 0; d < FZ_MAX_DIMS; d++)
        p->dims[d] = d < ndims ? dims[d] : 1;
    return FZ_OK;
}

fz_status fz_params_count(const fz_params *p, uint64_t *values,
                          uint64_t *bytes) {
    fz_params q;
    if (p && p->codec == FZ_CODEC_AUTO) {
        fz_status s = fz_auto_stand_in(p, &q);
        if (s != FZ_OK)
            return s;
        p = &q;
    }
    fz_header h;
    fz_status s = fz_header_from_params(p, &h);
    if (s != FZ_OK)
        return s;
    if (values)
        *values = h.original_bytes / fz_dtype_size(h.dtype);
    if (bytes)
        *bytes = h.original_bytes;
    return FZ_OK;
}

fz_status fz_header_from_params(const fz_params *p, fz_header *h) {
    if (!p || !h)
        return FZ_ERR_INVALID_ARGUMENT;
    memset(h, 0, sizeof *h);
    uint32_t esize = fz_dtype_size((uint32_t)p->dtype);
    if (esize == 0 || p->ndims < 1 || p->ndims > FZ_MAX_DIMS ||
        (p->flags & ~FZ_FLAG_NO_CHECKSUM) != 0 ||
        (p->exec != FZ_EXEC_CPU && p->exec != FZ_EXEC_GPU))
        return FZ_ERR_INVALID_ARGUMENT;
    for (int i = 0; i < 6; i++)
        if (p->reserved[i] != 0)
            return FZ_ERR_INVALID_ARGUMENT;
    if (p->gpu_streams > FZ_MAX_GPU_STREAMS)
        return FZ_ERR_INVALID_ARGUMENT;
    int empty = 0; /* a 0 extent: an empty array, whatever the others */
    for (uint32_t d = 0; d < FZ_MAX_DIMS; d++) {
        if (d >= p->ndims && p->dims[d] != 1)
            return FZ_ERR_INVALID_ARGUMENT;
        empty |= p->dims[d] == 0;
        h->dims[d] = p->dims[d];
    }
    uint64_t count = empty ? 0 : 1;
    for (uint32_t d = 0; d < FZ_MAX_DIMS && !empty; d++) {
        if (count > (((uint64_t)1 << 62) / esize) / p->dims[d])
            return FZ_ERR_INVALID_ARGUMENT; /* absurd size */
        count *= p->dims[d];
    }
    const fz_codec_cpu *codec = fz_codec_cpu_find((uint32_t)p->codec);
    if (!codec)
        return FZ_ERR_INVALID_ARGUMENT;
    const int lossy = p->mode == FZ_MODE_ABS || p->mode == FZ_MODE_REL;
    if (!lossy && (p->mode != FZ_MODE_LOSSLESS || p->bound != 0.0))
        return FZ_ERR_INVALID_ARGUMENT;
    /* NaN fails the comparison; -0.0 counts as 0 */
    if (lossy && !(p->bound >= 0.0 && p->bound <= DBL_MAX))
        return FZ_ERR_INVALID_ARGUMENT;
    if (lossy && !codec->effective_bound)
        return FZ_ERR_UNSUPPORTED;
    h->format_version = FZ_FORMAT_VERSION;
    h->codec = codec->id;
    h->codec_version = codec->version;
    h->dtype = (uint32_t)p->dtype;
    h->mode = (uint32_t)p->mode;
    h->ndims = p->ndims;
    h->flags = (p->flags & FZ_FLAG_NO_CHECKSUM) ? 0 : FZ_HDR_FLAG_CHECKSUMS;
    /* bound 0 (and -0.0) is stored as +0; a bound of 0 means lossless */
    h->bound_bits = lossy && p->bound != 0.0 ? fz_f64_bits(p->bound) : 0;
    /* ABS knows its enforced bound now; REL once the data's range is known
     * (the backend fills it in). */
    h->bound_eff_bits =
        p->mode == FZ_MODE_ABS ? codec->effective_bound(h, h->bound_bits) : 0;
    h->original_bytes = count * esize;
    /* codec_options -> codec_params (the codec may need the size) */
    const int cs = codec->check_params(h, p->codec_options);
    if (cs != FZS_OK) /* a mode the codec lacks: unsupported */
        return cs == FZS_UNSUPPORTED ? FZ_ERR_UNSUPPORTED
                                     : FZ_ERR_INVALID_ARGUMENT;
    h->chunk_bytes = codec->chunk_bytes(h);
    h->chunk_count = (h->original_bytes + h->chunk_bytes - 1) / h->chunk_bytes;
    return FZ_OK;
}

void fz_info_from_header(const fz_header *h, fz_info *info) {
    memset(info, 0, sizeof *info);
    fz_params *p = &info->params;
    p->dtype = (fz_dtype)h->dtype;
    p->ndims = h->ndims;
    for (int d = 0; d < FZ_MAX_DIMS; d++)
        p->dims[d] = h->dims[d];
    p->codec = (fz_codec)h->codec;
    p->mode = (fz_mode)h->mode;
    memcpy(&p->bound, &h->bound_bits, sizeof p->bound);
    memcpy(&info->bound_effective, &h->bound_eff_bits, sizeof(double));
    p->flags = (h->flags & FZ_HDR_FLAG_CHECKSUMS) ? 0 : FZ_FLAG_NO_CHECKSUM;
    for (int k = 0; k < 4; k++)
        p->codec_options[k] = (int32_t)h->codec_params[k];
    info->format_version = h->format_version;
    info->codec_version = h->codec_version;
    info->original_bytes = h->original_bytes;
    info->compressed_bytes = fz_stream_bytes(h);
    info->chunk_bytes = h->chunk_bytes;
    info->chunk_count = h->chunk_count;
    info->payload_offset = fz_payload_offset(h);
    info->has_checksums = (h->flags & FZ_HDR_FLAG_CHECKSUMS) != 0;
}

fz_status fz_inspect(const void *src, size_t src_size, fz_info *info) {
    if (!src || !info)
        return FZ_ERR_INVALID_ARGUMENT;
    fz_header h;
    int s = fz_header_parse((const uint8_t *)src, src_size, &h);
    if (s != FZS_OK)
        return (fz_status)s;
    const fz_codec_cpu *codec = fz_codec_cpu_find(h.codec);
    if (!codec)
        return FZ_ERR_CORRUPT_HEADER;
    s = codec->check_header(&h);
    if (s != FZS_OK)
        return (fz_status)s;
    fz_info_from_header(&h, info);
    return FZ_OK;
}

fz_status fz_compress_bound(const fz_params *p, size_t *bound) {
    if (!bound)
        return FZ_ERR_INVALID_ARGUMENT;
    if (p && p->codec == FZ_CODEC_AUTO)
        return fz_auto_bound(p, bound);
    fz_header h;
    fz_status s = fz_header_from_params(p, &h);
    if (s != FZ_OK)
        return s;
    uint64_t total = fz_payload_offset(&h) + h.original_bytes;
    if (total > (uint64_t)SIZE_MAX)
        return FZ_ERR_INVALID_ARGUMENT;
    *bound = (size_t)total;
    return FZ_OK;
}

fz_status fz_compress(const fz_params *p, const void *src, size_t src_bytes,
                      void *dst, size_t dst_capacity, size_t *compressed_size) {
    if (!p || !dst || !compressed_size || p->threads < 0)
        return FZ_ERR_INVALID_ARGUMENT;
    if (p->codec == FZ_CODEC_AUTO)
        return fz_auto_compress(p, src, src_bytes, dst, dst_capacity,
                                compressed_size);
    fz_header h;
    fz_status s = fz_header_from_params(p, &h);
    if (s != FZ_OK)
        return s;
    if (src_bytes != h.original_bytes)
        return FZ_ERR_SIZE_MISMATCH;
    if (!src && src_bytes != 0)
        return FZ_ERR_INVALID_ARGUMENT;
    if (p->exec == FZ_EXEC_GPU)
        return fz_gpu_host_compress(p, src, src_bytes, dst, dst_capacity,
                                    compressed_size);
    return fz_cpu_compress(p, &h, src, dst, dst_capacity, compressed_size);
}

int fz_decode_options_valid(const fz_decode_options *o) {
    if (!o)
        return 1;
    if ((o->flags & ~FZ_DECODE_SKIP_CHECKSUM) != 0 || o->threads < 0 ||
        (o->exec != FZ_EXEC_CPU && o->exec != FZ_EXEC_GPU) ||
        o->gpu_streams > FZ_MAX_GPU_STREAMS)
        return 0;
    for (int i = 0; i < 3; i++)
        if (o->reserved[i] != 0)
            return 0;
    return 1;
}

fz_status fz_decompress(const void *src, size_t src_size, void *dst,
                        size_t dst_capacity, const fz_decode_options *opts,
                        size_t *decompressed_size) {
    if (!src || !decompressed_size || !fz_decode_options_valid(opts))
        return FZ_ERR_INVALID_ARGUMENT;
    if (opts && opts->exec == FZ_EXEC_GPU)
        return fz_gpu_host_decompress(src, src_size, dst, dst_capacity, opts,
                                      decompressed_size);
    return fz_cpu_decompress((const uint8_t *)src, src_size, dst, dst_capacity,
                             opts, decompressed_size);
}

fz_status fz_decompress_range(const void *src, size_t src_size, uint64_t first,
                              uint64_t count, void *dst, size_t dst_capacity,
                              const fz_decode_options *opts) {
    if (!src || !fz_decode_options_valid(opts))
        return FZ_ERR_INVALID_ARGUMENT;
    return fz_cpu_decompress_range((const uint8_t *)src, src_size, first, count,
                                   dst, dst_capacity, opts);
}
