/* Writes a seed corpus of valid floatz streams (and round-trip inputs) into
 * two directories, so the fuzzers start from inputs that pass the header:
 *   fuzz_make_corpus DECOMPRESS_DIR ROUNDTRIP_DIR */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floatz.h"

static int write_file(const char *dir, const char *name, const void *data,
                      size_t size) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f)
        return 0;
    size_t wrote = fwrite(data, 1, size, f);
    return fclose(f) == 0 && wrote == size;
}

/* Smooth values, with every 7th value random bits (NaNs included). */
static void fill(uint8_t *dst, fz_dtype dtype, size_t n, uint64_t seed) {
    for (size_t i = 0; i < n; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        double v = 10.0 + 3.0 * sin((double)i * 0.01);
        if (dtype == FZ_F32) {
            float f = (float)v;
            uint32_t bits = (uint32_t)(seed >> 32);
            memcpy(dst + 4 * i, i % 7 ? (const void *)&f : &bits, 4);
        } else {
            memcpy(dst + 8 * i, i % 7 ? (const void *)&v : &seed, 8);
        }
    }
}

/* Falcon seeds: the same values rounded to two decimals (the random-bit
 * ones stay), so that its chunks hold decimal integers. */
static void round_decimals(uint8_t *dst, fz_dtype dtype, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (i % 7) {
            if (dtype == FZ_F32) {
                float f;
                memcpy(&f, dst + 4 * i, 4);
                f = (float)round(f * 100.0) / 100.0f;
                memcpy(dst + 4 * i, &f, 4);
            } else {
                double v;
                memcpy(&v, dst + 8 * i, 8);
                v = round(v * 100.0) / 100.0;
                memcpy(dst + 8 * i, &v, 8);
            }
        }
}

static int write_stream(const char *dir, fz_dtype dtype, size_t n,
                        uint32_t flags, fz_codec codec) {
    const size_t esize = dtype == FZ_F32 ? 4 : 8;
    uint8_t *src = (uint8_t *)malloc(n * esize + 1);
    fz_params p;
    size_t bound = 0, size = 0;
    if (!src || fz_params_init(&p, dtype, n) != FZ_OK)
        return 0;
    p.flags = flags;
    p.codec = codec;
    if (fz_compress_bound(&p, &bound) != FZ_OK)
        return 0;
    uint8_t *dst = (uint8_t *)malloc(bound);
    fill(src, dtype, n, n);
    if (codec == FZ_CODEC_FALCON)
        round_decimals(src, dtype, n);
    int ok = dst && fz_compress(&p, src, n * esize, dst, bound, &size) == FZ_OK;
    char name[64];
    snprintf(name, sizeof name, "stream_%s_%s_%zu_%u", fz_codec_name(codec),
             esize == 4 ? "f32" : "f64", n, flags);
    ok = ok && write_file(dir, name, dst, size);
    free(dst);
    free(src);
    return ok;
}

static int write_roundtrip_seed(const char *dir, uint8_t variant, size_t n) {
    const size_t esize = (variant & 1) ? 8 : 4;
    uint8_t *buf = (uint8_t *)malloc(1 + n * esize);
    if (!buf)
        return 0;
    buf[0] = variant;
    fill(buf + 1, (variant & 1) ? FZ_F64 : FZ_F32, n, variant);
    char name[64];
    snprintf(name, sizeof name, "values_%02x_%zu", variant, n);
    int ok = write_file(dir, name, buf, 1 + n * esize);
    free(buf);
    return ok;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s DECOMPRESS_DIR ROUNDTRIP_DIR\n", argv[0]);
        return 2;
    }
    const size_t sizes[] = {0, 1, 33, 129, 1000, 4100};
    int ok = 1;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        for (uint32_t flags = 0; flags <= FZ_FLAG_NO_CHECKSUM; flags++) {
            ok &=
                write_stream(argv[1], FZ_F32, sizes[i], flags, FZ_CODEC_SLEEK);
            ok &=
                write_stream(argv[1], FZ_F64, sizes[i], flags, FZ_CODEC_SLEEK);
            ok &=
                write_stream(argv[1], FZ_F32, sizes[i], flags, FZ_CODEC_FALCON);
            ok &=
                write_stream(argv[1], FZ_F64, sizes[i], flags, FZ_CODEC_FALCON);
        }
    }
    const uint8_t variants[] = {0x00, 0x01, 0x02, 0x07, 0x70, 0xF5};
    for (size_t i = 0; i < sizeof variants; i++)
        ok &= write_roundtrip_seed(argv[2], variants[i], 300);
    if (!ok)
        fprintf(stderr, "%s: could not write the corpus\n", argv[0]);
    return ok ? 0 : 1;
}
