/* Host-buffer API on the GPU backend (fz_params.exec = FZ_EXEC_GPU): copy
 * in, run the device API, copy out. Simple and synchronous; the pipelined
 * multi-stream path for large inputs is a separate layer. */
#include "../api/fz_internal.h"
#include "fz_gpu.cuh"

namespace {

/* Device allocations released on every exit path. */
struct DeviceBuffers {
    void *src = nullptr, *dst = nullptr, *scratch = nullptr;
    fz_device_result *result = nullptr;
    cudaStream_t stream = nullptr;
    ~DeviceBuffers() {
        if (stream)
            cudaStreamDestroy(stream);
        cudaFree(src);
        cudaFree(dst);
        cudaFree(scratch);
        cudaFree(result);
    }
    cudaError_t alloc(size_t src_bytes, size_t dst_bytes,
                      size_t scratch_bytes) {
        cudaError_t e = cudaMalloc(&src, src_bytes ? src_bytes : 16);
        if (e == cudaSuccess)
            e = cudaMalloc(&dst, dst_bytes ? dst_bytes : 16);
        if (e == cudaSuccess)
            e = cudaMalloc(&scratch, scratch_bytes);
        if (e == cudaSuccess)
            e = cudaMalloc(&result, sizeof *result);
        if (e == cudaSuccess)
            e = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
        return e;
    }
};

fz_status from_cuda(cudaError_t e) {
    if (e == cudaSuccess)
        return FZ_OK;
    cudaGetLastError();
    return e == cudaErrorMemoryAllocation ? FZ_ERR_OUT_OF_MEMORY : FZ_ERR_CUDA;
}

} // namespace

extern "C" fz_status fz_gpu_host_compress(const fz_params *p, const void *src,
                                          size_t src_bytes, void *dst,
                                          size_t dst_capacity,
                                          size_t *compressed_size) {
    if (fz_gpu_count() == 0)
        return FZ_ERR_NO_GPU;
    size_t bound = 0, scratch = 0;
    fz_status s = fz_compress_bound(p, &bound);
    if (s == FZ_OK)
        s = fz_device_scratch_size(p, &scratch);
    if (s != FZ_OK)
        return s;
    DeviceBuffers d;
    s = from_cuda(d.alloc(src_bytes, bound, scratch));
    if (s != FZ_OK)
        return s;
    fz_device_result r = {0, 0, 0};
    s = from_cuda(cudaMemcpyAsync(d.src, src, src_bytes, cudaMemcpyHostToDevice,
                                  d.stream));
    if (s == FZ_OK)
        s = fz_device_compress(p, d.src, d.dst, bound, d.scratch, scratch,
                               d.result, nullptr, d.stream);
    if (s == FZ_OK)
        s = from_cuda(cudaMemcpyAsync(&r, d.result, sizeof r,
                                      cudaMemcpyDeviceToHost, d.stream));
    if (s == FZ_OK)
        s = from_cuda(cudaStreamSynchronize(d.stream));
    if (s != FZ_OK)
        return s;
    if (r.status != FZ_OK)
        return (fz_status)r.status;
    if (r.size > dst_capacity)
        return FZ_ERR_DST_TOO_SMALL;
    s = from_cuda(cudaMemcpy(dst, d.dst, r.size, cudaMemcpyDeviceToHost));
    if (s == FZ_OK)
        *compressed_size = (size_t)r.size;
    return s;
}

extern "C" fz_status fz_gpu_host_decompress(const void *src, size_t src_size,
                                            void *dst, size_t dst_capacity,
                                            const fz_decode_options *o,
                                            size_t *decompressed_size) {
    if (fz_gpu_count() == 0)
        return FZ_ERR_NO_GPU;
    fz_info info;
    fz_status s = fz_inspect(src, src_size, &info);
    if (s != FZ_OK)
        return s;
    if (dst_capacity < info.original_bytes || (!dst && info.original_bytes))
        return dst ? FZ_ERR_DST_TOO_SMALL : FZ_ERR_INVALID_ARGUMENT;
    size_t scratch = 0;
    s = fz_device_scratch_size(&info.params, &scratch);
    if (s != FZ_OK)
        return s;
    DeviceBuffers d;
    s = from_cuda(d.alloc(src_size, (size_t)info.original_bytes, scratch));
    if (s != FZ_OK)
        return s;
    fz_device_result r = {0, 0, 0};
    s = from_cuda(cudaMemcpyAsync(d.src, src, src_size, cudaMemcpyHostToDevice,
                                  d.stream));
    if (s == FZ_OK)
        s = fz_device_decompress(&info.params, d.src, src_size, d.dst,
                                 (size_t)info.original_bytes, d.scratch,
                                 scratch, o, d.result, nullptr, d.stream);
    if (s == FZ_OK)
        s = from_cuda(cudaMemcpyAsync(&r, d.result, sizeof r,
                                      cudaMemcpyDeviceToHost, d.stream));
    if (s == FZ_OK)
        s = from_cuda(cudaStreamSynchronize(d.stream));
    if (s != FZ_OK)
        return s;
    if (r.status != FZ_OK)
        return (fz_status)r.status;
    s = from_cuda(cudaMemcpy(dst, d.dst, (size_t)info.original_bytes,
                             cudaMemcpyDeviceToHost));
    if (s == FZ_OK)
        *decompressed_size = (size_t)info.original_bytes;
    return s;
}
