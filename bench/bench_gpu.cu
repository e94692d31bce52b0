/* GPU throughput benchmark: floatz device API vs cudaMemcpy device-to-device
 * of the same bytes, in the same run (docs: bench/README.md).
 *
 *   bench_gpu [--gib G] [--dtype f32|f64|both] [--reps N] [--input FILE]
 *             [--markdown FILE]
 *
 * Data: a smooth 3-D field generated on the device (sum of separable
 * sinusoids, ~1 GiB), or --input FILE (raw values of --dtype) tiled to the
 * size. Timing: CUDA events around each call (everything the API enqueues:
 * scratch memset, kernel, finalize), 2 warm-ups, median of N (default 9).
 * Throughput = original bytes / time (1e9 B/s). Every decompression is
 * checked bit-for-bit against the input on the device. */
#include <cuda_runtime.h>
#include <floatz.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

struct Options {
    double gib = 1.0;
    int reps = 9;
    const char *dtype = "both";
    const char *input = nullptr;
    const char *markdown = nullptr;
};

template <typename F>
__global__ void smooth_field(F *out, size_t n, size_t nx, size_t ny) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        double x = (double)(i % nx) / nx, y = (double)(i / nx % ny) / ny,
               z = (double)(i / (nx * ny)) / 64.0;
        double v = 280.0 + 12.0 * sin(6.2831853 * x) * cos(3.14159 * y) +
                   3.0 * sin(18.85 * x + 2.0 * z) * sin(12.566 * y) +
                   0.7 * cos(44.0 * x + 31.0 * y + 5.0 * z) +
                   0.05 * sin(301.0 * x * y + 17.0 * z);
        out[i] = (F)v;
    }
}

__global__ void count_mismatch(const unsigned long long *a,
                               const unsigned long long *b, size_t words,
                               unsigned long long *bad) {
    unsigned long long local = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < words;
         i += (size_t)gridDim.x * blockDim.x)
        local += a[i] != b[i];
    if (local)
        atomicAdd(bad, local);
}

static double median(std::vector<float> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

/* Median time (ms) of fn() on stream over reps runs after 2 warm-ups. */
template <typename Fn> static double time_ms(cudaStream_t s, int reps, Fn fn) {
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
    return median(t);
}

static void fill_from_file(void *d, size_t bytes, const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", path);
        exit(1);
    }
    std::vector<char> data;
    char buf[1 << 16];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, f)) > 0)
        data.insert(data.end(), buf, buf + got);
    fclose(f);
    if (data.empty()) {
        fprintf(stderr, "%s is empty\n", path);
        exit(1);
    }
    for (size_t at = 0; at < bytes; at += data.size())
        CHECK_CUDA(cudaMemcpy((char *)d + at, data.data(),
                              std::min(data.size(), bytes - at),
                              cudaMemcpyHostToDevice));
}

struct Row {
    const char *dtype, *data;
    size_t bytes, compressed;
    double memcpy_ms, comp_ms, decomp_ms;
    unsigned long long mismatches;
};

static Row run_one(fz_dtype dtype, const Options &o, cudaStream_t s) {
    const size_t esize = dtype == FZ_F32 ? 4 : 8;
    const size_t n = (size_t)(o.gib * (1 << 30)) / esize / 4096 * 4096;
    const size_t bytes = n * esize;
    fz_params p;
    CHECK_FZ(fz_params_init(&p, dtype, n));
    size_t bound = 0, scratch = 0;
    CHECK_FZ(fz_compress_bound(&p, &bound));
    CHECK_FZ(fz_device_scratch_size(&p, &scratch));
    void *d_in, *d_out, *d_comp, *d_scratch, *d_copy;
    fz_device_result *d_res, h_res;
    unsigned long long *d_bad, bad = 0;
    CHECK_CUDA(cudaMalloc(&d_in, bytes));
    CHECK_CUDA(cudaMalloc(&d_out, bytes));
    CHECK_CUDA(cudaMalloc(&d_copy, bytes));
    CHECK_CUDA(cudaMalloc(&d_comp, bound));
    CHECK_CUDA(cudaMalloc(&d_scratch, scratch));
    CHECK_CUDA(cudaMalloc(&d_res, sizeof *d_res));
    CHECK_CUDA(cudaMalloc(&d_bad, sizeof *d_bad));
    if (o.input)
        fill_from_file(d_in, bytes, o.input);
    else if (dtype == FZ_F32)
        smooth_field<<<1024, 256, 0, s>>>((float *)d_in, n, 1024, 1024);
    else
        smooth_field<<<1024, 256, 0, s>>>((double *)d_in, n, 1024, 1024);
    CHECK_CUDA(cudaStreamSynchronize(s));

    Row r = {dtype == FZ_F32 ? "f32" : "f64",
             o.input ? "file (tiled)" : "smooth3d",
             bytes,
             0,
             0,
             0,
             0,
             0};
    r.memcpy_ms = time_ms(s, o.reps, [&] {
        CHECK_CUDA(
            cudaMemcpyAsync(d_copy, d_in, bytes, cudaMemcpyDeviceToDevice, s));
    });
    r.comp_ms = time_ms(s, o.reps, [&] {
        CHECK_FZ(fz_device_compress(&p, d_in, d_comp, bound, d_scratch, scratch,
                                    d_res, nullptr, s));
    });
    CHECK_CUDA(cudaMemcpy(&h_res, d_res, sizeof h_res, cudaMemcpyDeviceToHost));
    if (h_res.status != FZ_OK) {
        fprintf(stderr, "compress failed: %s\n",
                fz_status_string((fz_status)h_res.status));
        exit(1);
    }
    r.compressed = h_res.size;
    r.decomp_ms = time_ms(s, o.reps, [&] {
        CHECK_FZ(fz_device_decompress(&p, d_comp, r.compressed, d_out, bytes,
                                      d_scratch, scratch, nullptr, d_res,
                                      nullptr, s));
    });
    CHECK_CUDA(cudaMemcpy(&h_res, d_res, sizeof h_res, cudaMemcpyDeviceToHost));
    if (h_res.status != FZ_OK) {
        fprintf(stderr, "decompress failed: %s\n",
                fz_status_string((fz_status)h_res.status));
        exit(1);
    }
    CHECK_CUDA(cudaMemset(d_bad, 0, sizeof *d_bad));
    count_mismatch<<<1024, 256>>>((const unsigned long long *)d_in,
                                  (const unsigned long long *)d_out, bytes / 8,
                                  d_bad);
    CHECK_CUDA(cudaMemcpy(&bad, d_bad, sizeof bad, cudaMemcpyDeviceToHost));
    r.mismatches = bad;
    cudaFree(d_in);
    cudaFree(d_out);
    cudaFree(d_copy);
    cudaFree(d_comp);
    cudaFree(d_scratch);
    cudaFree(d_res);
    cudaFree(d_bad);
    return r;
}

static void print_rows(FILE *f, const std::vector<Row> &rows) {
    fprintf(f, "| dtype | data | MiB | CR | memcpy GB/s | comp GB/s | "
               "comp/memcpy | decomp GB/s | decomp/memcpy | bitwise |\n");
    fprintf(f, "|---|---|---|---|---|---|---|---|---|---|\n");
    for (const Row &r : rows) {
        double gb = r.bytes / 1e9;
        fprintf(f,
                "| %s | %s | %.0f | %.3f | %.0f | %.0f | %.2fx | %.0f | %.2fx "
                "| %s |\n",
                r.dtype, r.data, r.bytes / 1048576.0,
                (double)r.bytes / r.compressed, gb / (r.memcpy_ms / 1e3),
                gb / (r.comp_ms / 1e3), r.memcpy_ms / r.comp_ms,
                gb / (r.decomp_ms / 1e3), r.memcpy_ms / r.decomp_ms,
                r.mismatches ? "MISMATCH" : "identical");
    }
}

int main(int argc, char **argv) {
    Options o;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : nullptr;
        if (!strcmp(a, "--gib") && v)
            o.gib = atof(v), i++;
        else if (!strcmp(a, "--reps") && v)
            o.reps = atoi(v), i++;
        else if (!strcmp(a, "--dtype") && v)
            o.dtype = v, i++;
        else if (!strcmp(a, "--input") && v)
            o.input = v, i++;
        else if (!strcmp(a, "--markdown") && v)
            o.markdown = v, i++;
        else {
            fprintf(stderr, "usage: bench_gpu [--gib G] [--reps N] [--dtype "
                            "f32|f64|both] [--input FILE] [--markdown FILE]\n");
            return 2;
        }
    }
    if (o.gib <= 0 || o.reps < 1) {
        fprintf(stderr, "bench_gpu: --gib and --reps must be positive\n");
        return 2;
    }
    if (fz_gpu_count() == 0) {
        fprintf(stderr, "bench_gpu: no CUDA device\n");
        return 1;
    }
    cudaDeviceProp prop;
    CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
    cudaStream_t s;
    CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    std::vector<Row> rows;
    if (strcmp(o.dtype, "f64") != 0)
        rows.push_back(run_one(FZ_F32, o, s));
    if (strcmp(o.dtype, "f32") != 0)
        rows.push_back(run_one(FZ_F64, o, s));
    printf("device: %s (%d SMs), floatz %s, codec sleek lossless, "
           "median of %d\n\n",
           prop.name, prop.multiProcessorCount, fz_version_string(), o.reps);
    print_rows(stdout, rows);
    if (o.markdown) {
        FILE *f = fopen(o.markdown, "w");
        if (!f) {
            fprintf(stderr, "cannot write %s\n", o.markdown);
            return 1;
        }
        fprintf(f, "device: %s (%d SMs), floatz %s, median of %d\n\n",
                prop.name, prop.multiProcessorCount, fz_version_string(),
                o.reps);
        print_rows(f, rows);
        fclose(f);
    }
    for (const Row &r : rows)
        if (r.mismatches)
            return 1;
    return 0;
}
