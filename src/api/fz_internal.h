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

/* GPU backend for host buffers (gpu_host.cu, or stubs without CUDA). */
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
