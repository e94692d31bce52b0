/* The GPU's float-pipe forms of SLEEK's quantizer (sleek_quant32_fp /
 * 64_fp, used by the encoders) and of the bin dequantizer
 * (sleek_dequant32_bin / 64, used by the decoders) must equal the integer
 * definitions the CPU backend runs, or the two backends' streams differ.
 * Checked on the device, where they run:
 *   quant32: every one of the 2^32 bit patterns at the extreme exponents
 *            and a spread of others; 2^24 patterns at every exponent;
 *   quant64: 2^20 patterns per exponent (random, and around the threshold,
 *            powers of two and the subnormal edge) at every exponent;
 *   bins:    every bin code at every exponent that takes the direct path
 *            (f32), 2^20 codes per exponent (f64).
 * Exit 77 (skipped) without a CUDA device. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include "codecs/sleek/sleek_xform.h"

#define CUDA_OK(call)                                                          \
    do {                                                                       \
        cudaError_t e_ = (call);                                               \
        if (e_ != cudaSuccess) {                                               \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__,                 \
                    cudaGetErrorString(e_));                                   \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

struct Mismatch {
    unsigned long long count;
    unsigned long long first_input; /* the first one recorded */
    int first_k;
};

__device__ void record(Mismatch *m, unsigned long long input, int k) {
    if (atomicAdd(&m->count, 1ull) == 0) {
        m->first_input = input;
        m->first_k = k;
    }
}

__device__ uint64_t mix64(uint64_t x) {
    x ^= x >> 33;
    x *= 0xFF51AFD7ED558CCDull;
    x ^= x >> 33;
    x *= 0xC4CEB9FE1A85EC53ull;
    return x ^ (x >> 33);
}

/* Patterns first .. first + count - 1 (step `stride`, wrapping mod 2^32)
 * at exponent k. */
__global__ void quant32_span(int k, uint64_t first, uint64_t count,
                             uint64_t stride, Mismatch *m) {
    const sleek_q32 q = sleek_q32_make(k);
    const sleek_fscale32 fs = sleek_fscale32_make(q);
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
         i < count; i += (uint64_t)gridDim.x * blockDim.x) {
        const uint32_t bits = (uint32_t)(first + i * stride);
        if (sleek_quant32_fp(bits, q, fs) != sleek_quant32(bits, q))
            record(m, bits, k);
    }
}

/* Pattern i of exponent k: random, or near T, a power of two, or the
 * smallest normal, in either sign. */
__device__ uint64_t pattern64(uint64_t i, const sleek_q64 &q) {
    const uint64_t r = mix64(i * 0x9E3779B97F4A7C15ull + q.threshold);
    const uint64_t sign = (r & 1) << 63, d = (r >> 1) & 0xFFFF;
    switch (i & 3) {
    case 0: return r;
    case 1: /* around T */
        return sign | ((q.threshold + d - 0x8000) & 0x7FFFFFFFFFFFFFFFull);
    case 2: /* around a power of two below T */
        return sign | (((r >> 20) % q.thr_e) << 52) + d - 0x8000;
    default: /* around the smallest normal */
        return sign | (((uint64_t)1 << 52) + d - 0x8000);
    }
}

__global__ void quant64_all_k(uint64_t count, Mismatch *m) {
    for (int k = SLEEK_Q64_KMIN; k <= SLEEK_Q64_KMAX; k++) {
        const sleek_q64 q = sleek_q64_make(k);
        const sleek_fscale64 fs = sleek_fscale64_make(q);
        for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
             i < count; i += (uint64_t)gridDim.x * blockDim.x) {
            const uint64_t bits = pattern64(i, q);
            if (sleek_quant64_fp(bits, q, fs) != sleek_quant64(bits, q))
                record(m, bits, k);
        }
    }
}

/* Every bin code below SLEEK_BIN_CODES32 at every direct exponent; 2^20
 * codes of f64 (the lowest and highest 2^18, the rest random). */
__global__ void bins_all_k(Mismatch *m32, Mismatch *m64,
                           unsigned long long *direct) {
    const uint64_t tid = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
    const uint64_t threads = (uint64_t)gridDim.x * blockDim.x;
    for (int k = SLEEK_Q32_KMIN; k <= SLEEK_Q32_KMAX; k++) {
        const sleek_q32 q = sleek_q32_make(k);
        if (!sleek_bins_direct32(q))
            continue;
        if (tid == 0)
            atomicAdd(direct, 1ull);
        const float scale = sleek_bin_scale32(q);
        for (uint32_t c = (uint32_t)tid; c < SLEEK_BIN_CODES32;
             c += (uint32_t)threads)
            if (sleek_dequant32_bin(c, scale) != sleek_dequant32(c, q))
                record(m32, c, k);
    }
    for (int k = SLEEK_Q64_KMIN; k <= SLEEK_Q64_KMAX; k++) {
        const sleek_q64 q = sleek_q64_make(k);
        if (!sleek_bins_direct64(q))
            continue;
        const double scale = sleek_bin_scale64(q);
        for (uint64_t i = tid; i < (1u << 20); i += threads) {
            const uint64_t c = i < (1u << 18) ? i
                               : i < (1u << 19)
                                   ? SLEEK_BIN_CODES64 - 1 - (i - (1u << 18))
                                   : mix64(i + (uint64_t)k) % SLEEK_BIN_CODES64;
            if (sleek_dequant64_bin(c, scale) != sleek_dequant64(c, q))
                record(m64, c, k);
        }
    }
}

static int report(const char *what, const Mismatch &m) {
    if (m.count == 0) {
        printf("  %-8s equal\n", what);
        return 0;
    }
    printf("FAIL %s: %llu mismatches, first input 0x%llx at k = %d\n", what,
           m.count, m.first_input, m.first_k);
    return 1;
}

int main(void) {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        printf("SKIP: no CUDA GPU available\n");
        return 77;
    }
    Mismatch *m;
    unsigned long long *direct;
    CUDA_OK(cudaMallocManaged(&m, 4 * sizeof *m));
    CUDA_OK(cudaMallocManaged(&direct, sizeof *direct));
    CUDA_OK(cudaMemset(m, 0, 4 * sizeof *m));
    CUDA_OK(cudaMemset(direct, 0, sizeof *direct));
    const int grid = 1024, block = 256;

    const int every_pattern[] = {
        SLEEK_Q32_KMIN, -128, -127, -126, -100, -30, -1, 0, 1, 40,
        SLEEK_Q32_KMAX};
    for (size_t i = 0; i < sizeof every_pattern / sizeof every_pattern[0]; i++)
        quant32_span<<<grid, block>>>(every_pattern[i], 0, 1ull << 32, 1,
                                      &m[0]);
    /* an odd stride visits 2^24 patterns across every exponent */
    for (int k = SLEEK_Q32_KMIN; k <= SLEEK_Q32_KMAX; k++)
        quant32_span<<<grid, block>>>(k, (uint64_t)k * 977, 1ull << 24, 257,
                                      &m[0]);
    quant64_all_k<<<grid, block>>>(1ull << 20, &m[1]);
    bins_all_k<<<grid, block>>>(&m[2], &m[3], direct);
    CUDA_OK(cudaGetLastError());
    CUDA_OK(cudaDeviceSynchronize());

    int failed = report("quant32", m[0]) + report("quant64", m[1]) +
                 report("bins32", m[2]) + report("bins64", m[3]);
    /* the exponents whose 2^(k+1) is a normal float */
    if (*direct != (unsigned long long)(SLEEK_Q32_KMAX + 127 + 1)) {
        printf("FAIL: %llu exponents took the direct f32 path\n", *direct);
        failed++;
    }
    CUDA_OK(cudaFree(m));
    CUDA_OK(cudaFree(direct));
    if (failed)
        return 1;
    printf("test_gpu_quant: float-pipe quantizer and bin dequantizer equal "
           "the integer ones\n");
    return 0;
}
