/* Shared pieces of the GPU benchmark programs: error checks that abort with
 * a location, and event timing (median of N runs after 2 warm-ups). */
#ifndef FZ_BENCH_CUDA_CUH
#define FZ_BENCH_CUDA_CUH

#include <cuda_runtime.h>
#include <floatz.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK_CUDA(call)                                                       \
    do {                                                                       \
        cudaError_t e_ = (call);                                               \
        if (e_ != cudaSuccess) {                                               \
            fprintf(stderr, "CUDA error %s at %s:%d\n",                        \
                    cudaGetErrorString(e_), __FILE__, __LINE__);               \
            exit(1);                                                           \
        }                                                                      \
    } while (0)
#define CHECK_FZ(call)                                                         \
    do {                                                                       \
        fz_status s_ = (call);                                                 \
        if (s_ != FZ_OK) {                                                     \
            fprintf(stderr, "floatz error: %s at %s:%d\n",                     \
                    fz_status_string(s_), __FILE__, __LINE__);                 \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

static inline double bench_median(std::vector<float> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

/* Median time (ms) of fn() enqueued on stream s, over reps runs after 2
 * warm-ups, with CUDA events around each run. */
template <typename Fn>
static double bench_time_ms(cudaStream_t s, int reps, const Fn &fn) {
    cudaEvent_t a, b;
    CHECK_CUDA(cudaEventCreate(&a));
    CHECK_CUDA(cudaEventCreate(&b));
    std::vector<float> t;
    for (int r = 0; r < reps + 2; r++) {
        CHECK_CUDA(cudaEventRecord(a, s));
        fn();
        CHECK_CUDA(cudaEventRecord(b, s));
        CHECK_CUDA(cudaEventSynchronize(b));
        float ms = 0;
        CHECK_CUDA(cudaEventElapsedTime(&ms, a, b));
        if (r >= 2)
            t.push_back(ms);
    }
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return bench_median(t);
}

#endif /* FZ_BENCH_CUDA_CUH */
