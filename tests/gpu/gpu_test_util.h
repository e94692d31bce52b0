/* Helpers shared by the GPU tests: CUDA status checks, device buffers, and
 * decoding on a backend into a guarded buffer. */
#ifndef GPU_TEST_UTIL_H
#define GPU_TEST_UTIL_H

#include <cuda_runtime.h>
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

#endif /* GPU_TEST_UTIL_H */
