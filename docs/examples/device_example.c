/* floatz device API example (docs/API.md): compress a float32 array that
 * lives in GPU memory and decompress it again, without host copies of the
 * data. Needs a floatz built with the CUDA backend.
 *
 *   cc -std=c11 device_example.c -I<floatz>/include -I<cuda>/include
 *      -L<build> -lfloatz -L<cuda>/lib64 -lcudart -fopenmp -o device_example
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "floatz.h"

#define CUDA_OK(call)                                                          \
    do {                                                                       \
        cudaError_t e_ = (call);                                               \
        if (e_ != cudaSuccess) {                                               \
            fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(e_));        \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

static int fail(const char *what, fz_status s) {
    fprintf(stderr, "%s: %s (%d)\n", what, fz_status_string(s), (int)s);
    return 1;
}

int main(void) {
    if (fz_gpu_count() == 0) {
        fprintf(stderr, "no CUDA device (or floatz built without CUDA)\n");
        return 77;
    }
    const size_t n = (size_t)1 << 22;
    float *h_data = malloc(n * sizeof *h_data);
    if (!h_data)
        return 1;
    for (size_t i = 0; i < n; i++)
        h_data[i] = 1.0f + (float)(i % 1000) * 0.001f;

    fz_params p;
    fz_status s = fz_params_init(&p, FZ_F32, n);
    size_t cap = 0, scratch_bytes = 0;
    if (s == FZ_OK)
        s = fz_compress_bound(&p, &cap);
    if (s == FZ_OK)
        s = fz_device_scratch_size(&p, &scratch_bytes);
    if (s != FZ_OK)
        return fail("sizing", s);

    /* The device API allocates nothing: the caller provides every buffer.
     * cudaMalloc'd pointers satisfy its alignment needs. */
    cudaStream_t stream;
    void *d_data, *d_stream, *d_back, *d_scratch;
    fz_device_result *d_res, *h_res;
    CUDA_OK(cudaStreamCreate(&stream));
    CUDA_OK(cudaMalloc(&d_data, n * sizeof(float)));
    CUDA_OK(cudaMalloc(&d_back, n * sizeof(float)));
    CUDA_OK(cudaMalloc(&d_stream, cap));
    CUDA_OK(cudaMalloc(&d_scratch, scratch_bytes));
    CUDA_OK(cudaMalloc((void **)&d_res, sizeof *d_res));
    CUDA_OK(cudaMallocHost((void **)&h_res, sizeof *h_res)); /* pinned */
    CUDA_OK(cudaMemcpyAsync(d_data, h_data, n * sizeof(float),
                            cudaMemcpyHostToDevice, stream));

    /* Enqueue: returns at once. A status here means nothing was enqueued
     * (bad arguments, scratch too small, CUDA launch error). */
    s = fz_device_compress(&p, d_data, d_stream, cap, d_scratch, scratch_bytes,
                           d_res, h_res, stream);
    if (s != FZ_OK)
        return fail("fz_device_compress", s);
    /* Errors found on the device land in *d_res (and *h_res). */
    CUDA_OK(cudaStreamSynchronize(stream));
    if (h_res->status != FZ_OK)
        return fail("compress (device)", (fz_status)h_res->status);
    const size_t csize = (size_t)h_res->size;
    printf("compressed %zu -> %zu bytes on the GPU\n", n * sizeof(float),
           csize);

    /* Decompression needs the parameters. Here we pretend not to know
     * them: copy the fixed header to the host and inspect it. */
    unsigned char header[FZ_HEADER_BYTES];
    CUDA_OK(
        cudaMemcpy(header, d_stream, sizeof header, cudaMemcpyDeviceToHost));
    fz_info info;
    s = fz_inspect(header, sizeof header, &info);
    if (s != FZ_OK)
        return fail("fz_inspect", s);

    /* The same scratch serves every call issued on this stream. */
    s = fz_device_decompress(&info.params, d_stream, csize, d_back,
                             n * sizeof(float), d_scratch, scratch_bytes, NULL,
                             d_res, h_res, stream);
    if (s != FZ_OK)
        return fail("fz_device_decompress", s);
    CUDA_OK(cudaStreamSynchronize(stream));
    if (h_res->status != FZ_OK)
        return fail("decompress (device)", (fz_status)h_res->status);

    float *h_back = malloc(n * sizeof *h_back);
    if (!h_back)
        return 1;
    CUDA_OK(
        cudaMemcpy(h_back, d_back, n * sizeof(float), cudaMemcpyDeviceToHost));
    const int same = memcmp(h_back, h_data, n * sizeof(float)) == 0;
    printf("round trip: %s\n", same ? "bit-exact" : "DIFFERS");

    /* The stream is a normal floatz stream: the host API decodes it too. */
    unsigned char *h_stream = malloc(csize);
    size_t dsize = 0;
    if (!h_stream)
        return 1;
    CUDA_OK(cudaMemcpy(h_stream, d_stream, csize, cudaMemcpyDeviceToHost));
    s = fz_decompress(h_stream, csize, h_back, n * sizeof(float), NULL, &dsize);
    if (s != FZ_OK)
        return fail("fz_decompress (CPU)", s);

    free(h_stream);
    free(h_back);
    free(h_data);
    cudaFreeHost(h_res);
    cudaFree(d_res);
    cudaFree(d_scratch);
    cudaFree(d_stream);
    cudaFree(d_back);
    cudaFree(d_data);
    cudaStreamDestroy(stream);
    return same ? 0 : 1;
}
