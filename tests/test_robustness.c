/* Hostile or odd caller parameters that must neither crash nor terminate
 * the process ("the library never prints and never exits"). Each case runs
 * as its own ctest test (argv[1] names it), so a crash in one cannot hide
 * the others:  test_robustness CASE */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "../src/api/fz_internal.h"
#include "test_util.h"

enum { N = 40000 }; /* 10 chunks of f32 */

/* A lossless request with bound -0.0 (== 0.0) is either rejected as
 * invalid or produces a stream that decodes. */
static void case_negative_zero_bound(void) {
    float src[64], out[64];
    uint8_t dst[1024];
    size_t size = 0, got = 0;
    tu_fill(TU_GEN_SMOOTH, FZ_F32, src, 64, 4);
    fz_params p = tu_params(FZ_F32, 64, 0);
    p.bound = -0.0;
    fz_status s = fz_compress(&p, src, sizeof src, dst, sizeof dst, &size);
    if (s != FZ_OK) {
        CHECK_STATUS(s, FZ_ERR_INVALID_ARGUMENT);
        return;
    }
    fz_info info;
    CHECK_OK(fz_inspect(dst, size, &info));
    CHECK_OK(fz_decompress(dst, size, out, sizeof out, NULL, &got));
    CHECK(memcmp(out, src, sizeof src) == 0);
}

/* Round trip of N values with these compress and decompress thread
 * counts; both must be accepted. */
static void roundtrip_with_threads(int32_t c_threads, int32_t d_threads) {
    float *src = (float *)tu_xmalloc(N * sizeof(float));
    float *out = (float *)tu_xmalloc(N * sizeof(float));
    tu_fill(TU_GEN_MIXED, FZ_F32, src, N, 6);
    fz_params p = tu_params(FZ_F32, N, 0);
    size_t bound = 0, size = 0, got = 0;
    CHECK_OK(fz_compress_bound(&p, &bound));
    uint8_t *dst = (uint8_t *)tu_xmalloc(bound);
    p.threads = c_threads;
    CHECK_OK(fz_compress(&p, src, N * sizeof(float), dst, bound, &size));
    fz_decode_options o = tu_decode_opts(d_threads, 0);
    CHECK_OK(fz_decompress(dst, size, out, N * sizeof(float), &o, &got));
    CHECK(memcmp(out, src, N * sizeof(float)) == 0);
    free(dst);
    free(out);
    free(src);
}

/* Negative thread counts are invalid arguments (floatz.h). */
static void case_negative_threads(void) {
    float src[64] = {0}, out[64];
    uint8_t dst[1024];
    size_t size = 0, got = 0;
    const int32_t bad[] = {-1, INT32_MIN};
    for (int i = 0; i < 2; i++) {
        fz_params p = tu_params(FZ_F32, 64, 0);
        CHECK_OK(fz_compress(&p, src, sizeof src, dst, sizeof dst, &size));
        p.threads = bad[i];
        CHECK_STATUS(fz_compress(&p, src, sizeof src, dst, sizeof dst, &size),
                     FZ_ERR_INVALID_ARGUMENT);
        fz_decode_options o = tu_decode_opts(bad[i], 0);
        CHECK_STATUS(fz_decompress(dst, size, out, sizeof out, &o, &got),
                     FZ_ERR_INVALID_ARGUMENT);
    }
}

/* Requests above FZ_MAX_THREADS are clamped: they work, without creating
 * that many threads (the OpenMP runtime would abort or overflow its
 * stack). */
static void case_huge_threads_compress(void) {
    roundtrip_with_threads(FZ_MAX_THREADS + 1, 1);
    roundtrip_with_threads(1 << 17, 1);
    roundtrip_with_threads(INT32_MAX, 1);
}

static void case_huge_threads_decompress(void) {
    roundtrip_with_threads(1, FZ_MAX_THREADS + 1);
    roundtrip_with_threads(1, 1 << 17);
    roundtrip_with_threads(1, INT32_MAX);
}

/* threads = 0 ("all cores") takes OpenMP's thread count, which
 * OMP_NUM_THREADS or a large machine can set above FZ_MAX_THREADS:
 * clamped like an explicit request (floatz.h: at most FZ_MAX_THREADS
 * used). Reads the library's internal thread count. */
static void case_default_threads_clamped(void) {
#ifdef _OPENMP
    const int saved = omp_get_max_threads();
    omp_set_num_threads(FZ_MAX_THREADS + 44);
    const int used = fz_thread_count(0);
    omp_set_num_threads(saved);
    CHECK(used >= 1 && used <= FZ_MAX_THREADS);
    CHECK(fz_thread_count(FZ_MAX_THREADS + 44) == FZ_MAX_THREADS);
    CHECK(fz_thread_count(3) == 3);
#endif
}

typedef struct named_case {
    const char *name;
    void (*run)(void);
} named_case;

static const named_case cases[] = {
    {"negative_zero_bound", case_negative_zero_bound},
    {"negative_threads", case_negative_threads},
    {"huge_threads_compress", case_huge_threads_compress},
    {"huge_threads_decompress", case_huge_threads_decompress},
    {"default_threads_clamped", case_default_threads_clamped},
};

int main(int argc, char **argv) {
    const size_t count = sizeof cases / sizeof cases[0];
    for (size_t i = 0; i < count; i++) {
        if (argc == 2 && strcmp(argv[1], cases[i].name) == 0) {
            tu_context("%s", cases[i].name);
            cases[i].run();
            printf("test_robustness %s: passed\n", cases[i].name);
            return 0;
        }
    }
    fprintf(stderr, "usage: %s CASE; cases:", argv[0]);
    for (size_t i = 0; i < count; i++)
        fprintf(stderr, " %s", cases[i].name);
    fprintf(stderr, "\n");
    return 2;
}
