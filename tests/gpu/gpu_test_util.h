/* Helpers shared by the GPU tests: CUDA status checks, device buffers,
 * decoding on a backend into a guarded buffer, and device API calls on a
 * set of device buffers. */
#ifndef GPU_TEST_UTIL_H
#define GPU_TEST_UTIL_H

#include <cuda_runtime.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

#define CUDA_CHECK(call)                                                       \
    do {                                                                       \
        cudaError_t tu_err_ = (call);                                          \
        if (tu_err_ != cudaSuccess)                                            \
            tu_fail(__FILE__, __LINE__, #call, cudaGetErrorString(tu_err_));   \
    } while (0)

static inline void *device_alloc(size_t bytes) {
    void *p = NULL;
    CUDA_CHECK(cudaMalloc(&p, bytes ? bytes : 16));
    return p;
}

/* Decode on `exec` into a guarded buffer: never a CUDA error, and on
 * success exactly `want`. */
static inline fz_status decode_on(fz_exec exec, const uint8_t *stream,
                                  size_t size, const void *want, size_t bytes,
                                  uint32_t flags) {
    tu_buf out = tu_buf_alloc(bytes);
    fz_decode_options o = tu_decode_opts(0, flags);
    o.exec = exec;
    size_t got = 0;
    fz_status st = fz_decompress(stream, size, out.data, bytes, &o, &got);
    CHECK(tu_guard_intact(&out));
    CHECK(st != FZ_ERR_CUDA);
    if (st == FZ_OK) {
        CHECK_EQ_U64(got, bytes);
        CHECK(memcmp(out.data, want, bytes) == 0);
    }
    tu_buf_free(&out);
    return st;
}

/* ------------------------------------------------------------ device API */
/* Device buffers for one input: the input uploaded, room for its stream
 * and its decoded values, scratch, the result on the device and in pinned
 * host memory, and a stream of its own. */
typedef struct device_buffers {
    void *src, *dst, *out, *scratch;
    size_t dst_capacity, out_capacity, scratch_bytes;
    fz_device_result *d_result, *h_result;
    cudaStream_t stream;
} device_buffers;

static inline device_buffers device_setup(const fz_params *p, const void *src,
                                          size_t bytes) {
    device_buffers d;
    CHECK_OK(fz_compress_bound(p, &d.dst_capacity));
    CHECK_OK(fz_device_scratch_size(p, &d.scratch_bytes));
    d.src = device_alloc(bytes);
    d.dst = device_alloc(d.dst_capacity);
    d.out_capacity = bytes;
    d.out = device_alloc(bytes);
    d.scratch = device_alloc(d.scratch_bytes);
    d.d_result = (fz_device_result *)device_alloc(sizeof(fz_device_result));
    CUDA_CHECK(cudaMallocHost((void **)&d.h_result, sizeof *d.h_result));
    CUDA_CHECK(cudaStreamCreate(&d.stream));
    CUDA_CHECK(cudaMemcpy(d.src, src, bytes, cudaMemcpyHostToDevice));
    return d;
}

static inline void device_teardown(device_buffers *d) {
    CUDA_CHECK(cudaStreamDestroy(d->stream));
    CUDA_CHECK(cudaFreeHost(d->h_result));
    CUDA_CHECK(cudaFree(d->d_result));
    CUDA_CHECK(cudaFree(d->scratch));
    CUDA_CHECK(cudaFree(d->out));
    CUDA_CHECK(cudaFree(d->dst));
    CUDA_CHECK(cudaFree(d->src));
}

/* Whether the host result still holds the 0xFF poison written before the
 * call. */
static inline int result_untouched(const fz_device_result *r) {
    const uint8_t *b = (const uint8_t *)r;
    for (size_t i = 0; i < sizeof *r; i++)
        if (b[i] != 0xFF)
            return 0;
    return 1;
}

/* Status of an enqueued device call: the returned one (then the host
 * result must stay as poisoned: a refused call never copies it back),
 * else the result's once the stream has completed. */
static inline fz_status device_outcome(fz_status returned,
                                       const device_buffers *d) {
    CUDA_CHECK(cudaStreamSynchronize(d->stream));
    if (returned != FZ_OK) {
        CHECK(result_untouched(d->h_result));
        return returned;
    }
    return (fz_status)d->h_result->status;
}

/* fz_device_compress of d->src into d->dst (capacity bytes) on d->stream. */
static inline fz_status
device_compress(const fz_params *p, const device_buffers *d, size_t capacity) {
    memset(d->h_result, 0xFF, sizeof *d->h_result);
    fz_status s = fz_device_compress(p, d->src, d->dst, capacity, d->scratch,
                                     d->scratch_bytes, d->d_result, d->h_result,
                                     d->stream);
    return device_outcome(s, d);
}

/* fz_device_decompress of src_size bytes of d->dst into d->out
 * (out_capacity bytes) on d->stream. */
static inline fz_status device_decompress(const fz_params *p,
                                          const device_buffers *d,
                                          size_t src_size, size_t out_capacity,
                                          uint32_t flags) {
    fz_decode_options o = tu_decode_opts(0, flags);
    memset(d->h_result, 0xFF, sizeof *d->h_result);
    fz_status s = fz_device_decompress(
        p, d->dst, src_size, d->out, out_capacity, d->scratch, d->scratch_bytes,
        &o, d->d_result, d->h_result, d->stream);
    return device_outcome(s, d);
}

/* The first `bytes` bytes at device address d_ptr equal `want`. */
static inline void check_device_bytes(const void *d_ptr, const void *want,
                                      size_t bytes) {
    uint8_t *host = (uint8_t *)tu_xmalloc(bytes);
    CUDA_CHECK(cudaMemcpy(host, d_ptr, bytes, cudaMemcpyDeviceToHost));
    CHECK(memcmp(host, want, bytes) == 0);
    free(host);
}

/* The decoded values on the device equal `want` (bytes long). */
static inline void check_device_output(const device_buffers *d,
                                       const void *want, size_t bytes) {
    check_device_bytes(d->out, want, bytes);
}

/* Compress on the device, the stream equal to the CPU's, and decode it back
 * into a poisoned output: exactly `want` (bytes long). */
static inline void check_device_roundtrip(const fz_params *p,
                                          const device_buffers *d,
                                          const uint8_t *cpu, size_t cpu_size,
                                          const void *want, size_t bytes) {
    CHECK_OK(device_compress(p, d, d->dst_capacity));
    CHECK_EQ_U64(d->h_result->size, cpu_size);
    check_device_bytes(d->dst, cpu, cpu_size);
    CUDA_CHECK(cudaMemset(d->out, 0xCD, bytes ? bytes : 16));
    CHECK_OK(device_decompress(p, d, cpu_size, bytes, 0));
    CHECK_EQ_U64(d->h_result->size, bytes);
    check_device_output(d, want, bytes);
}

/* The legacy default stream, with no host result or a pageable one: the
 * paths device_compress and device_decompress leave out. Compresses d->src;
 * the stream (read back with the device result) must be the CPU's. */
static inline void check_default_stream_compress(const fz_params *p,
                                                 const device_buffers *d,
                                                 const uint8_t *cpu,
                                                 size_t cpu_size) {
    fz_device_result res;
    CHECK_OK(fz_device_compress(p, d->src, d->dst, d->dst_capacity, d->scratch,
                                d->scratch_bytes, d->d_result, NULL, NULL));
    CUDA_CHECK(
        cudaMemcpy(&res, d->d_result, sizeof res, cudaMemcpyDeviceToHost));
    CHECK_OK((fz_status)res.status);
    CHECK_EQ_U64(res.size, cpu_size);
    check_device_bytes(d->dst, cpu, cpu_size);
}

/* Decodes src_size bytes of d->dst into d->out on the legacy default stream
 * (default options); the call must be accepted. Returns the result. */
static inline fz_device_result
default_stream_decompress(const fz_params *p, const device_buffers *d,
                          size_t src_size, size_t out_capacity) {
    fz_device_result res;
    CHECK_OK(fz_device_decompress(p, d->dst, src_size, d->out, out_capacity,
                                  d->scratch, d->scratch_bytes, NULL,
                                  d->d_result, &res, NULL));
    CUDA_CHECK(cudaDeviceSynchronize());
    return res;
}

#endif /* GPU_TEST_UTIL_H */
