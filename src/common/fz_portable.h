/* Portability layer for code shared by the C11 host backend and CUDA. */
#ifndef FZ_PORTABLE_H
#define FZ_PORTABLE_H

#include <stdint.h>
#include <string.h>

/* FZ_HD marks functions compiled for both the host and the device. */
#if defined(__CUDACC__)
#define FZ_HD __host__ __device__ __forceinline__
#else
#define FZ_HD inline
#endif

/* Little-endian loads/stores through bytes: alignment-free and endian-exact.
 * Compilers fold them into single moves on little-endian targets. */
static FZ_HD uint16_t fz_load16(const uint8_t *p) {
    return (uint16_t)(p[0] | (uint16_t)p[1] << 8);
}
static FZ_HD uint32_t fz_load32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}
static FZ_HD uint64_t fz_load64(const uint8_t *p) {
    return (uint64_t)fz_load32(p) | (uint64_t)fz_load32(p + 4) << 32;
}
static FZ_HD void fz_store16(uint8_t *p, uint16_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}
static FZ_HD void fz_store32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}
static FZ_HD void fz_store64(uint8_t *p, uint64_t v) {
    fz_store32(p, (uint32_t)v);
    fz_store32(p + 4, (uint32_t)(v >> 32));
}

/* Count of leading zero bits; fz_clz32(0) == 32, fz_clz64(0) == 64. */
static FZ_HD int fz_clz32(uint32_t x) {
#if defined(__CUDA_ARCH__)
    return __clz((int)x);
#else
    return x ? __builtin_clz(x) : 32;
#endif
}
static FZ_HD int fz_clz64(uint64_t x) {
#if defined(__CUDA_ARCH__)
    return __clzll((long long)x);
#else
    return x ? __builtin_clzll(x) : 64;
#endif
}

/* The bits of a float / double and back (no conversion): one definition
 * for every codec and both backends. */
static FZ_HD uint32_t fz_f32_bits(float f) {
#if defined(__CUDA_ARCH__)
    return __float_as_uint(f);
#else
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b;
#endif
}
static FZ_HD float fz_f32_from_bits(uint32_t b) {
#if defined(__CUDA_ARCH__)
    return __uint_as_float(b);
#else
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
#endif
}
static FZ_HD uint64_t fz_f64_bits(double f) {
#if defined(__CUDA_ARCH__)
    return (uint64_t)__double_as_longlong(f);
#else
    uint64_t b;
    memcpy(&b, &f, sizeof b);
    return b;
#endif
}
static FZ_HD double fz_f64_from_bits(uint64_t b) {
#if defined(__CUDA_ARCH__)
    return __longlong_as_double((long long)b);
#else
    double f;
    memcpy(&f, &b, sizeof f);
    return f;
#endif
}

static FZ_HD uint64_t fz_align_up(uint64_t x, uint64_t a) {
    return (x + a - 1) / a * a;
}

#endif /* FZ_PORTABLE_H */
