/* Codec/mode configurations and sizes around batch boundaries, shared by
 * the file streaming tests and the GPU pipeline tests. Every configuration
 * is run with a batch of two chunks, so sizes of k batches +- 1 value and
 * +- 1 chunk cross every boundary kind (full, partial last chunk, partial
 * last batch). */
#ifndef PIPELINE_CASES_H
#define PIPELINE_CASES_H

#include <string.h>

#include "test_util.h"

typedef struct pc_config {
    const char *name;
    fz_dtype dtype;
    fz_codec codec;
    fz_mode mode;
    double bound;
    int32_t options[4];
    tu_gen gen;
} pc_config;

static const pc_config pc_configs[] = {
    {"sleek-f32-lossless",
     FZ_F32,
     FZ_CODEC_SLEEK,
     FZ_MODE_LOSSLESS,
     0,
     {0},
     TU_GEN_MIXED},
    {"sleek-f64-lossless",
     FZ_F64,
     FZ_CODEC_SLEEK,
     FZ_MODE_LOSSLESS,
     0,
     {0},
     TU_GEN_PATCHWORK},
    {"sleek-f32-abs",
     FZ_F32,
     FZ_CODEC_SLEEK,
     FZ_MODE_ABS,
     1e-3,
     {0},
     TU_GEN_WAVE},
    {"sleek-f64-abs",
     FZ_F64,
     FZ_CODEC_SLEEK,
     FZ_MODE_ABS,
     1e-6,
     {0},
     TU_GEN_MIXED},
    {"sleek-f32-rel",
     FZ_F32,
     FZ_CODEC_SLEEK,
     FZ_MODE_REL,
     1e-3,
     {0},
     TU_GEN_SMOOTH},
    {"sleek-f64-rel",
     FZ_F64,
     FZ_CODEC_SLEEK,
     FZ_MODE_REL,
     1e-4,
     {0},
     TU_GEN_MIXED},
    {"gfc-f64-default",
     FZ_F64,
     FZ_CODEC_GFC,
     FZ_MODE_LOSSLESS,
     0,
     {0},
     TU_GEN_SMOOTH},
    {"gfc-f32-dim3-256",
     FZ_F32,
     FZ_CODEC_GFC,
     FZ_MODE_LOSSLESS,
     0,
     {3, 256, 0, 0},
     TU_GEN_MIXED},
    {"falcon-f64",
     FZ_F64,
     FZ_CODEC_FALCON,
     FZ_MODE_LOSSLESS,
     0,
     {0},
     TU_GEN_SMOOTH},
    {"falcon-f32-100",
     FZ_F32,
     FZ_CODEC_FALCON,
     FZ_MODE_LOSSLESS,
     0,
     {100, 0, 0, 0},
     TU_GEN_SPECIAL},
};
#define PC_CONFIG_COUNT (sizeof pc_configs / sizeof pc_configs[0])

static inline fz_params pc_params(const pc_config *c, uint64_t n) {
    fz_params p = tu_params(c->dtype, n, 0);
    p.codec = c->codec;
    p.mode = c->mode;
    p.bound = c->bound;
    memcpy(p.codec_options, c->options, sizeof p.codec_options);
    return p;
}

/* Chunk bytes the stream for n values uses (the default may depend on n). */
static inline uint64_t pc_chunk_bytes(const fz_params *p) {
    uint8_t head[FZ_HEADER_BYTES];
    size_t bound = 0;
    CHECK_OK(fz_compress_bound(p, &bound));
    /* compressing the zero array is the cheapest way to read the header */
    uint64_t bytes = 0;
    CHECK_OK(fz_params_count(p, NULL, &bytes));
    void *zeros = calloc(bytes ? bytes : 1, 1);
    uint8_t *dst = (uint8_t *)tu_xmalloc(bound);
    size_t size = 0;
    CHECK(zeros != NULL);
    CHECK_OK(fz_compress(p, zeros, (size_t)bytes, dst, bound, &size));
    memcpy(head, dst, sizeof head);
    fz_info info;
    CHECK_OK(fz_inspect(head, sizeof head, &info));
    free(zeros);
    free(dst);
    return info.chunk_bytes;
}

/* batch_kib giving a batch of (at least) two chunks of chunk_bytes, and the
 * chunks per batch it gives. */
static inline uint32_t pc_batch_kib(uint64_t chunk_bytes, uint64_t *chunks) {
    const uint32_t kib = (uint32_t)((2 * chunk_bytes + 1023) / 1024);
    *chunks = ((uint64_t)kib * 1024) / chunk_bytes;
    return kib;
}

/* Value counts around batch boundaries for values_per_chunk and
 * chunks_per_batch; returns how many were written to out (<= 16). The GPU
 * pipeline splits the last two into smaller batches at either end as well
 * (fz_plan_split's ramp, batches of one chunk here). */
static inline size_t pc_sizes(uint64_t values_per_chunk,
                              uint64_t chunks_per_batch, uint64_t *out) {
    const uint64_t batch = values_per_chunk * chunks_per_batch;
    size_t k = 0;
    out[k++] = 0;
    out[k++] = 1;
    out[k++] = values_per_chunk - 1;
    out[k++] = values_per_chunk + 1;
    out[k++] = batch - 1;
    out[k++] = batch;
    out[k++] = batch + 1;
    out[k++] = 2 * batch + values_per_chunk;
    out[k++] = 3 * batch - 1;
    out[k++] = 3 * batch + 1;
    out[k++] = 5 * batch + 7;
    out[k++] = 8 * batch + values_per_chunk + 1; /* the pipeline's ramp */
    return k;
}

#endif /* PIPELINE_CASES_H */
