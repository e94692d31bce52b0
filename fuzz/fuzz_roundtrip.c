/* libFuzzer harness: bytes -> f32/f64 array -> compress -> decompress ->
 * compare bit for bit; abort on any mismatch. The first input byte picks
 * the variant:
 *   bit 0     dtype (f32 / f64)
 *   bit 1     FZ_FLAG_NO_CHECKSUM
 *   bits 2-3  compression threads - 1 (the stream must not depend on it)
 *   bits 4-6  repetitions - 1 of the values (reach chunk boundaries)
 *   bit 7     2-D shape {n, repetitions} instead of 1-D */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "floatz.h"

static void require(int ok) {
    if (!ok)
        abort();
}

typedef struct variant {
    fz_dtype dtype;
    uint32_t flags;
    int32_t threads;
    size_t reps;
    int two_d;
} variant;

static variant parse_variant(uint8_t b) {
    variant v;
    v.dtype = (b & 1) ? FZ_F64 : FZ_F32;
    v.flags = (b & 2) ? FZ_FLAG_NO_CHECKSUM : 0;
    v.threads = 1 + ((b >> 2) & 3);
    v.reps = 1 + ((b >> 4) & 7);
    v.two_d = (b >> 7) & 1;
    return v;
}

static fz_params make_params(const variant *v, size_t n) {
    fz_params p;
    require(fz_params_init(&p, v->dtype, (uint64_t)n * v->reps) == FZ_OK);
    if (v->two_d) {
        const uint64_t dims[2] = {n, v->reps};
        require(fz_params_set_shape(&p, 2, dims) == FZ_OK);
    }
    p.flags = v->flags;
    p.threads = v->threads;
    return p;
}

static uint8_t *compress(const fz_params *p, const uint8_t *src, size_t bytes,
                         size_t *size) {
    size_t bound = 0;
    require(fz_compress_bound(p, &bound) == FZ_OK);
    uint8_t *stream = (uint8_t *)malloc(bound);
    require(stream != NULL);
    require(fz_compress(p, src, bytes, stream, bound, size) == FZ_OK);
    require(*size <= bound);
    return stream;
}

static void roundtrip(const fz_params *p, const uint8_t *src, size_t bytes) {
    size_t size = 0, got = 0;
    uint8_t *stream = compress(p, src, bytes, &size);
    fz_info info;
    require(fz_inspect(stream, size, &info) == FZ_OK);
    require(info.original_bytes == bytes && info.compressed_bytes == size);
    uint8_t *out = (uint8_t *)malloc(bytes ? bytes : 1);
    require(out != NULL);
    fz_decode_options o = {0};
    o.threads = 1;
    require(fz_decompress(stream, size, out, bytes, &o, &got) == FZ_OK);
    require(got == bytes && memcmp(out, src, bytes) == 0);

    fz_params single = *p; /* same bytes with one thread */
    single.threads = 1;
    size_t size1 = 0;
    uint8_t *stream1 = compress(&single, src, bytes, &size1);
    require(size1 == size && memcmp(stream1, stream, size) == 0);
    free(stream1);
    free(out);
    free(stream);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0)
        return 0;
    const variant v = parse_variant(data[0]);
    const size_t esize = v.dtype == FZ_F32 ? 4 : 8;
    const size_t n = (size - 1) / esize, bytes = n * esize * v.reps;
    uint8_t *values = (uint8_t *)malloc(bytes ? bytes : 1);
    require(values != NULL);
    for (size_t r = 0; r < v.reps; r++)
        memcpy(values + r * n * esize, data + 1, n * esize);
    const fz_params p = make_params(&v, n);
    roundtrip(&p, values, bytes);
    free(values);
    return 0;
}
