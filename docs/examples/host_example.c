/* floatz host API example (docs/API.md): compress a 3-D float32 array,
 * inspect the stream, decompress it and check that every bit came back.
 *
 * Build against an installed or built floatz, for example:
 *   cc -std=c11 host_example.c -I<floatz>/include -L<build> -lfloatz
 *      -fopenmp -o host_example
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floatz.h"

/* Print the failing call and the library's message; returns 1. */
static int fail(const char *what, fz_status s) {
    fprintf(stderr, "%s: %s (%d)\n", what, fz_status_string(s), (int)s);
    return 1;
}

int main(void) {
    enum { NX = 64, NY = 32, NZ = 16 };
    const size_t n = (size_t)NX * NY * NZ;
    float *data = malloc(n * sizeof *data);
    if (!data)
        return 1;
    for (size_t i = 0; i < n; i++) /* data[z][y][x], x fastest */
        data[i] = 280.0f + (float)(i % NX) * 0.25f - (float)(i / NX % NY);

    /* Parameters: float32, shape {NX, NY, NZ} with dims[0] fastest;
     * defaults: codec sleek, lossless, checksums, CPU with all cores. */
    fz_params p;
    const uint64_t dims[3] = {NX, NY, NZ};
    fz_status s = fz_params_init(&p, FZ_F32, 0);
    if (s == FZ_OK)
        s = fz_params_set_shape(&p, 3, dims);
    if (s != FZ_OK)
        return fail("params", s);

    /* Size the output for the worst case, then compress. */
    size_t cap = 0, csize = 0;
    s = fz_compress_bound(&p, &cap);
    if (s != FZ_OK)
        return fail("fz_compress_bound", s);
    unsigned char *stream = malloc(cap);
    if (!stream)
        return 1;
    s = fz_compress(&p, data, n * sizeof *data, stream, cap, &csize);
    if (s != FZ_OK)
        return fail("fz_compress", s);

    /* Inspect: reads only the first FZ_HEADER_BYTES bytes. */
    fz_info info;
    s = fz_inspect(stream, csize, &info);
    if (s != FZ_OK)
        return fail("fz_inspect", s);
    printf("%s, %u-D %llu x %llu x %llu, %llu -> %llu bytes (%.2fx), "
           "%llu chunks\n",
           fz_codec_name(info.params.codec), (unsigned)info.params.ndims,
           (unsigned long long)info.params.dims[0],
           (unsigned long long)info.params.dims[1],
           (unsigned long long)info.params.dims[2],
           (unsigned long long)info.original_bytes,
           (unsigned long long)info.compressed_bytes,
           (double)info.original_bytes / (double)info.compressed_bytes,
           (unsigned long long)info.chunk_count);

    /* Decompress into a buffer sized from the header. */
    float *back = malloc(info.original_bytes ? info.original_bytes : 1);
    size_t dsize = 0;
    if (!back)
        return 1;
    s = fz_decompress(stream, csize, back, info.original_bytes, NULL, &dsize);
    if (s != FZ_OK)
        return fail("fz_decompress", s);
    if (dsize != n * sizeof *data || memcmp(back, data, dsize) != 0) {
        fprintf(stderr, "round trip differs\n");
        return 1;
    }

    /* A damaged stream is reported, never decoded silently. */
    stream[csize - 1] ^= 0x40;
    s = fz_decompress(stream, csize, back, info.original_bytes, NULL, &dsize);
    printf("corrupted stream: %s\n", fz_status_string(s));

    free(back);
    free(stream);
    free(data);
    return s == FZ_OK; /* 0: the corruption was detected */
}
