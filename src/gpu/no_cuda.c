/* Built when the library has no CUDA backend: every GPU entry point says so
 * clearly instead of failing at link time. */
#include "../api/fz_internal.h"

int fz_gpu_count(void) {
    return 0;
}

int fz_gpu_supports(const fz_params *p) {
    (void)p;
    return 0;
}

void fz_gpu_release_cache(void) {}

fz_status fz_device_scratch_size(const fz_params *p, size_t *bytes) {
    (void)p;
    (void)bytes;
    return FZ_ERR_NO_CUDA;
}

fz_status fz_device_compress(const fz_params *p, const void *d_src, void *d_dst,
                             size_t dst_capacity, void *d_scratch,
                             size_t scratch_bytes, fz_device_result *d_result,
                             fz_device_result *h_result,
                             fz_cuda_stream stream) {
    (void)p, (void)d_src, (void)d_dst, (void)dst_capacity, (void)d_scratch;
    (void)scratch_bytes, (void)d_result, (void)h_result, (void)stream;
    return FZ_ERR_NO_CUDA;
}

fz_status
fz_device_decompress(const fz_params *p, const void *d_src, size_t src_size,
                     void *d_dst, size_t dst_capacity, void *d_scratch,
                     size_t scratch_bytes, const fz_decode_options *opts,
                     fz_device_result *d_result, fz_device_result *h_result,
                     fz_cuda_stream stream) {
    (void)p, (void)d_src, (void)src_size, (void)d_dst, (void)dst_capacity;
    (void)d_scratch, (void)scratch_bytes, (void)opts, (void)d_result;
    (void)h_result, (void)stream;
    return FZ_ERR_NO_CUDA;
}

fz_status fz_device_range_scratch_size(const fz_params *p, uint64_t first,
                                       uint64_t count, size_t *bytes) {
    (void)p, (void)first, (void)count, (void)bytes;
    return FZ_ERR_NO_CUDA;
}

fz_status
fz_device_decompress_range(const fz_params *p, const void *d_src,
                           size_t src_size, uint64_t first, uint64_t count,
                           void *d_dst, size_t dst_capacity, void *d_scratch,
                           size_t scratch_bytes, const fz_decode_options *opts,
                           fz_device_result *d_result,
                           fz_device_result *h_result, fz_cuda_stream stream) {
    (void)p, (void)d_src, (void)src_size, (void)first, (void)count;
    (void)d_dst, (void)dst_capacity, (void)d_scratch, (void)scratch_bytes;
    (void)opts, (void)d_result, (void)h_result, (void)stream;
    return FZ_ERR_NO_CUDA;
}

fz_status fz_gpu_host_compress(const fz_params *p, const void *src,
                               size_t src_bytes, void *dst, size_t dst_capacity,
                               size_t *compressed_size) {
    (void)p, (void)src, (void)src_bytes, (void)dst, (void)dst_capacity;
    (void)compressed_size;
    return FZ_ERR_NO_CUDA;
}

fz_status fz_gpu_host_decompress(const void *src, size_t src_size, void *dst,
                                 size_t dst_capacity,
                                 const fz_decode_options *o,
                                 size_t *decompressed_size) {
    (void)src, (void)src_size, (void)dst, (void)dst_capacity, (void)o;
    (void)decompressed_size;
    return FZ_ERR_NO_CUDA;
}
