/* Device API: asynchronous compression/decompression of device buffers on
 * a caller's stream. Per call: one memset of the scratch head, the codec's
 * kernel, one single-thread finalize kernel, and an optional result copy.
 * No allocation and no synchronisation. */
#include <string.h>

#include "../api/fz_internal.h"
#include "fz_gpu.cuh"

namespace {

/* Compress epilogue: header with payload size and table hash, the padding
 * after the table, and the result record. */
__global__ void finalize_compress(const fz_gpu_args a,
                                  fz_device_result *result) {
    int status = a.scratch->status;
    uint64_t total = a.scratch->payload_total;
    if (status == FZS_OK) {
        uint64_t table_bytes = fz_table_bytes(&a.expect);
        for (uint64_t i = FZ_HDR_BYTES + table_bytes; i < a.payload_off; i++)
            a.dst[i] = 0;
        for (uint32_t i = 0; i < FZ_HDR_BYTES; i++)
            a.dst[i] = a.header[i];
        if (a.expect.mode == 2) /* REL: known only now */
            fz_store64(a.dst + FZ_OFF_BOUND_EFF, a.scratch->bound_eff_bits);
        fz_header_finalize(
            a.dst, total, fz_hash_final(a.scratch->table_sum, table_bytes / 4));
    }
    result->size = status == FZS_OK ? a.payload_off + total : 0;
    result->status = status;
    result->reserved = 0;
}

/* Decompress epilogue: whole-stream checks that need every chunk. */
__global__ void finalize_decompress(const fz_gpu_args a,
                                    fz_device_result *result) {
    int status = a.scratch->status;
    fz_header h;
    if (status == FZS_OK)
        status = fz_gpu_check_stream(a, &h); /* also covers 0 chunks */
    if (status == FZS_OK && a.offsets[a.expect.chunk_count] != h.payload_bytes)
        status = FZS_CORRUPT_HEADER;
    if (status == FZS_OK &&
        fz_hash_final(a.scratch->table_sum, fz_table_bytes(&h) / 4) !=
            h.table_hash)
        status = FZS_TABLE_CHECKSUM;
    result->size = status == FZS_OK ? h.original_bytes : 0;
    result->status = status;
    result->reserved = 0;
}

/* Makes the stream's device current for the call, restores it after. */
struct DeviceScope {
    int previous = -1;
    cudaError_t enter(cudaStream_t stream) {
        cudaError_t err = cudaGetDevice(&previous);
        if (err != cudaSuccess)
            return err;
        int device = previous;
        if (stream != nullptr) {
            err = cudaStreamGetDevice(stream, &device);
            if (err != cudaSuccess)
                return err;
        }
        return device == previous ? cudaSuccess : cudaSetDevice(device);
    }
    ~DeviceScope() {
        int now = -1;
        if (previous >= 0 && cudaGetDevice(&now) == cudaSuccess &&
            now != previous)
            cudaSetDevice(previous);
    }
};

bool aligned16(const void *p) {
    return ((uintptr_t)p & 15) == 0;
}

fz_status cuda_status(cudaError_t err) {
    if (err == cudaSuccess)
        return FZ_OK;
    cudaGetLastError(); /* clear a non-sticky error */
    return err == cudaErrorNoDevice || err == cudaErrorInsufficientDriver
               ? FZ_ERR_NO_GPU
               : FZ_ERR_CUDA;
}

fz_status prepare(const fz_params *p, void *d_scratch, size_t scratch_bytes,
                  fz_device_result *d_result, fz_gpu_args *a) {
    if (!d_scratch || !d_result || !aligned16(d_scratch))
        return FZ_ERR_INVALID_ARGUMENT;
    memset(a, 0, sizeof *a);
    fz_status s = fz_header_from_params(p, &a->expect);
    if (s != FZ_OK)
        return s;
    if (scratch_bytes < fz_gpu_scratch_bytes(&a->expect))
        return FZ_ERR_SCRATCH_TOO_SMALL;
    a->payload_off = fz_payload_offset(&a->expect);
    a->oldest_version = fz_codec_oldest_version(a->expect.codec);
    uint8_t *base = static_cast<uint8_t *>(d_scratch);
    a->scratch = reinterpret_cast<fz_gpu_scratch *>(base);
    a->lookback =
        reinterpret_cast<unsigned long long *>(base + FZ_GPU_SCRATCH_HEAD);
    a->offsets = a->lookback; /* decode uses the same words for offsets */
    a->temp = base + fz_gpu_offsets_end(a->expect.chunk_count);
    a->temp_bytes = fz_gpu_temp_bytes(&a->expect);
    return FZ_OK;
}

typedef cudaError_t (*codec_launch)(const fz_gpu_args *, int, cudaStream_t);

/* The codec's kernels for this header, or null when the GPU backend does
 * not implement it (an unknown codec). */
codec_launch find_launch(const fz_header &h, bool compress) {
    switch (h.codec) {
    case FZ_CODEC_SLEEK:
        return compress ? fz_sleek_gpu_compress : fz_sleek_gpu_decompress;
    case FZ_CODEC_GFC:
        return compress ? fz_gfc_gpu_compress : fz_gfc_gpu_decompress;
    case FZ_CODEC_FALCON:
        return compress ? fz_falcon_gpu_compress : fz_falcon_gpu_decompress;
    case FZ_CODEC_LORENZO:
        return compress ? fz_lorenzo_gpu_compress : fz_lorenzo_gpu_decompress;
    }
    return nullptr;
}

/* Scratch head (+ look-back words) reset, [offsets scan], codec kernel,
 * finalize, optional result copy: all on the stream, nothing waits. */
fz_status enqueue(const fz_gpu_args &a, bool compress,
                  fz_device_result *d_result, fz_device_result *h_result,
                  cudaStream_t stream) {
    codec_launch launch = find_launch(a.expect, compress);
    if (!launch)
        return FZ_ERR_UNSUPPORTED;
    const uint64_t n = a.expect.chunk_count;
    int device = 0, sm_count = 0;
    cudaError_t err = cudaGetDevice(&device);
    if (err == cudaSuccess)
        err = cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount,
                                     device);
    if (err == cudaSuccess)
        err = cudaMemsetAsync(a.scratch, 0,
                              compress ? FZ_GPU_SCRATCH_HEAD + 8 * n
                                       : FZ_GPU_SCRATCH_HEAD,
                              stream);
    if (err == cudaSuccess && !compress)
        err = fz_gpu_chunk_offsets(&a, a.temp, a.temp_bytes, stream);
    if (err == cudaSuccess && n > 0)
        err = launch(&a, sm_count, stream);
    if (err == cudaSuccess) {
        if (compress)
            finalize_compress<<<1, 1, 0, stream>>>(a, d_result);
        else
            finalize_decompress<<<1, 1, 0, stream>>>(a, d_result);
        err = cudaGetLastError();
    }
    if (err == cudaSuccess && h_result)
        err = cudaMemcpyAsync(h_result, d_result, sizeof *h_result,
                              cudaMemcpyDeviceToHost, stream);
    return cuda_status(err);
}

} // namespace

bool fz_gpu_implements(const fz_header *h) {
    return find_launch(*h, true) != nullptr;
}

extern "C" {

int fz_gpu_supports(const fz_params *p) {
    fz_header h;
    if (p && p->codec == FZ_CODEC_AUTO) { /* the host API: every candidate */
        fz_params q, cand[FZ_AUTO_MAX_CANDIDATES];
        if (fz_auto_stand_in(p, &q) != FZ_OK)
            return 0;
        const uint32_t n = fz_auto_candidates(p, cand);
        for (uint32_t i = 0; i < n; i++)
            if (!fz_gpu_supports(&cand[i]))
                return 0;
        return n > 0;
    }
    return p && fz_header_from_params(p, &h) == FZ_OK && fz_gpu_implements(&h);
}

int fz_gpu_count(void) {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return n;
}

fz_status fz_device_scratch_size(const fz_params *p, size_t *bytes) {
    fz_header h;
    if (!bytes)
        return FZ_ERR_INVALID_ARGUMENT;
    if (p && p->codec == FZ_CODEC_AUTO) /* no host round trip here */
        return FZ_ERR_UNSUPPORTED;
    fz_status s = fz_header_from_params(p, &h);
    if (s != FZ_OK)
        return s;
    *bytes = (size_t)fz_gpu_scratch_bytes(&h);
    return FZ_OK;
}

fz_status fz_device_compress(const fz_params *p, const void *d_src, void *d_dst,
                             size_t dst_capacity, void *d_scratch,
                             size_t scratch_bytes, fz_device_result *d_result,
                             fz_device_result *h_result,
                             fz_cuda_stream stream) {
    if (p && p->codec == FZ_CODEC_AUTO) /* fz_auto_choose on a host copy */
        return FZ_ERR_UNSUPPORTED;
    fz_gpu_args a;
    fz_status s = prepare(p, d_scratch, scratch_bytes, d_result, &a);
    if (s != FZ_OK)
        return s;
    if ((!d_src && a.expect.original_bytes) || !d_dst || !aligned16(d_src) ||
        !aligned16(d_dst))
        return FZ_ERR_INVALID_ARGUMENT;
    if (dst_capacity < a.payload_off)
        return FZ_ERR_DST_TOO_SMALL;
    a.src = static_cast<const uint8_t *>(d_src);
    a.dst = static_cast<uint8_t *>(d_dst);
    a.src_size = a.expect.original_bytes;
    a.dst_capacity = dst_capacity;
    fz_header_write(&a.expect, a.header);
    DeviceScope scope;
    s = cuda_status(scope.enter(stream));
    if (s != FZ_OK)
        return s;
    return enqueue(a, true, d_result, h_result, stream);
}

fz_status
fz_device_decompress(const fz_params *p, const void *d_src, size_t src_size,
                     void *d_dst, size_t dst_capacity, void *d_scratch,
                     size_t scratch_bytes, const fz_decode_options *opts,
                     fz_device_result *d_result, fz_device_result *h_result,
                     fz_cuda_stream stream) {
    fz_gpu_args a;
    fz_status s = prepare(p, d_scratch, scratch_bytes, d_result, &a);
    if (s != FZ_OK)
        return s;
    if (!d_src || (!d_dst && a.expect.original_bytes) || !aligned16(d_src) ||
        !aligned16(d_dst) ||
        (opts &&
         ((opts->flags & ~FZ_DECODE_SKIP_CHECKSUM) != 0 || opts->threads < 0)))
        return FZ_ERR_INVALID_ARGUMENT;
    if (dst_capacity < a.expect.original_bytes)
        return FZ_ERR_DST_TOO_SMALL;
    a.src = static_cast<const uint8_t *>(d_src);
    a.dst = static_cast<uint8_t *>(d_dst);
    a.src_size = src_size;
    a.dst_capacity = dst_capacity;
    a.verify = !(opts && (opts->flags & FZ_DECODE_SKIP_CHECKSUM));
    DeviceScope scope;
    s = cuda_status(scope.enter(stream));
    if (s != FZ_OK)
        return s;
    return enqueue(a, false, d_result, h_result, stream);
}

} // extern "C"
