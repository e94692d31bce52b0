/* Falcon GPU benchmark on real data: each CSV file (one decimal value per
 * line) is parsed once, correctly rounded, to float64 or float32, tiled
 * (repeated end to end) on the device up to --gib GiB, then compressed and
 * decompressed with the device API, next to a cudaMemcpy device-to-device
 * of the same bytes in the same run.
 *
 *   bench_falcon [--gib G] [--dtype f32|f64|both] [--reps N]
 *                [--kernel warp|reference] [--no-checksum]
 *                [--markdown FILE] FILE.csv...
 *
 * Timing: CUDA events around each call (everything the API enqueues), 2
 * warm-ups, median of N (default 9); throughput = original bytes / time
 * (1e9 B/s). Ratios: of the tiled array (chunk boundaries fall differently
 * at the seams) and of the file itself. Every decompression of the tiled
 * array is checked bitwise on the host. */
#include "bench_cuda.cuh"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

struct Options {
    double gib = 1.0;
    int reps = 9;
    const char *dtype = "both";
    const char *markdown = nullptr;
    bool no_checksum = false;
    std::vector<const char *> files;
};

/* One value per line, parsed with strtod / strtof (never through double
 * for float32). Empty lines are skipped. */
static std::vector<uint8_t> read_csv(const char *path, bool f64) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", path);
        exit(1);
    }
    std::vector<uint8_t> out;
    char line[256];
    while (fgets(line, sizeof line, f)) {
        char *end = line;
        if (f64) {
            double v = strtod(line, &end);
            if (end != line)
                out.insert(out.end(), (uint8_t *)&v, (uint8_t *)&v + 8);
        } else {
            float v = strtof(line, &end);
            if (end != line)
                out.insert(out.end(), (uint8_t *)&v, (uint8_t *)&v + 4);
        }
    }
    fclose(f);
    return out;
}

struct Timer {
    cudaEvent_t a, b;
    Timer() {
        CHECK_CUDA(cudaEventCreate(&a));
        CHECK_CUDA(cudaEventCreate(&b));
    }
    ~Timer() {
        cudaEventDestroy(a);
        cudaEventDestroy(b);
    }
};

/* Median seconds of fn() over reps runs after 2 warm-ups. */
template <typename F>
static double time_it(cudaStream_t s, int reps, const F &fn) {
    Timer t;
    std::vector<float> ms;
    for (int r = 0; r < reps + 2; r++) {
        CHECK_CUDA(cudaEventRecord(t.a, s));
        fn();
        CHECK_CUDA(cudaEventRecord(t.b, s));
        CHECK_CUDA(cudaEventSynchronize(t.b));
        float m = 0;
        CHECK_CUDA(cudaEventElapsedTime(&m, t.a, t.b));
        if (r >= 2)
            ms.push_back(m);
    }
    return bench_median(ms) / 1e3;
}

struct Row {
    std::string name, dtype;
    double file_ratio, ratio, comp, decomp, memcpy_gbs;
};

static Row run_one(const Options &o, const char *path, bool f64,
                   cudaStream_t stream, void *d_src, void *d_dst, void *d_out,
                   size_t cap_bytes) {
    const size_t es = f64 ? 8 : 4;
    std::vector<uint8_t> file = read_csv(path, f64);
    const size_t file_values = file.size() / es;
    if (file_values == 0) {
        fprintf(stderr, "%s: no values\n", path);
        exit(1);
    }
    size_t n = (size_t)(o.gib * (1ull << 30)) / es;
    n = std::max(n, file_values);
    if (n * es > cap_bytes)
        n = cap_bytes / es;
    const size_t bytes = n * es;
    /* tile on the device */
    for (size_t at = 0; at < bytes; at += file.size())
        CHECK_CUDA(cudaMemcpy((uint8_t *)d_src + at, file.data(),
                              std::min(file.size(), bytes - at),
                              cudaMemcpyHostToDevice));
    fz_params p;
    CHECK_FZ(fz_params_init(&p, f64 ? FZ_F64 : FZ_F32, n));
    p.codec = FZ_CODEC_FALCON;
    if (o.no_checksum)
        p.flags = FZ_FLAG_NO_CHECKSUM;
    size_t bound = 0, scratch_bytes = 0;
    CHECK_FZ(fz_compress_bound(&p, &bound));
    CHECK_FZ(fz_device_scratch_size(&p, &scratch_bytes));
    void *d_scratch = nullptr;
    fz_device_result *d_res = nullptr, *h_res = nullptr;
    CHECK_CUDA(cudaMalloc(&d_scratch, scratch_bytes));
    CHECK_CUDA(cudaMalloc((void **)&d_res, sizeof *d_res));
    CHECK_CUDA(cudaMallocHost((void **)&h_res, sizeof *h_res));

    Row row;
    row.name = path;
    const size_t slash = row.name.find_last_of('/');
    if (slash != std::string::npos)
        row.name = row.name.substr(slash + 1);
    row.dtype = f64 ? "f64" : "f32";
    const double t_copy = time_it(stream, o.reps, [&] {
        CHECK_CUDA(cudaMemcpyAsync(d_out, d_src, bytes,
                                   cudaMemcpyDeviceToDevice, stream));
    });
    const double t_comp = time_it(stream, o.reps, [&] {
        CHECK_FZ(fz_device_compress(&p, d_src, d_dst, bound, d_scratch,
                                    scratch_bytes, d_res, h_res, stream));
    });
    CHECK_CUDA(cudaStreamSynchronize(stream));
    CHECK_FZ((fz_status)h_res->status);
    const size_t csize = (size_t)h_res->size;
    const double t_dec = time_it(stream, o.reps, [&] {
        CHECK_FZ(fz_device_decompress(&p, d_dst, csize, d_out, bytes, d_scratch,
                                      scratch_bytes, nullptr, d_res, h_res,
                                      stream));
    });
    CHECK_CUDA(cudaStreamSynchronize(stream));
    CHECK_FZ((fz_status)h_res->status);
    /* bitwise check of the tiled array */
    std::vector<uint8_t> back(bytes);
    CHECK_CUDA(cudaMemcpy(back.data(), d_out, bytes, cudaMemcpyDeviceToHost));
    for (size_t at = 0; at < bytes; at += file.size())
        if (memcmp(back.data() + at, file.data(),
                   std::min(file.size(), bytes - at)) != 0) {
            fprintf(stderr, "%s: round trip differs\n", path);
            exit(1);
        }
    /* the file alone (host API, CPU backend: the same bytes) */
    fz_params pf = p;
    pf.dims[0] = file_values;
    size_t fbound = 0, fsize = 0;
    CHECK_FZ(fz_compress_bound(&pf, &fbound));
    std::vector<uint8_t> fstream(fbound);
    CHECK_FZ(fz_compress(&pf, file.data(), file.size(), fstream.data(), fbound,
                         &fsize));
    row.file_ratio = (double)file.size() / fsize;
    row.ratio = (double)bytes / csize;
    row.comp = bytes / t_comp / 1e9;
    row.decomp = bytes / t_dec / 1e9;
    row.memcpy_gbs = bytes / t_copy / 1e9;
    cudaFree(d_scratch);
    cudaFree(d_res);
    cudaFreeHost(h_res);
    return row;
}

int main(int argc, char **argv) {
    Options o;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : nullptr;
        if (!strcmp(a, "--gib") && v) {
            o.gib = atof(v);
            i++;
        } else if (!strcmp(a, "--reps") && v) {
            o.reps = atoi(v);
            i++;
        } else if (!strcmp(a, "--dtype") && v) {
            o.dtype = v;
            i++;
        } else if (!strcmp(a, "--kernel") && v) {
            setenv("FZ_FALCON_GPU_KERNEL", v, 1);
            i++;
        } else if (!strcmp(a, "--markdown") && v) {
            o.markdown = v;
            i++;
        } else if (!strcmp(a, "--no-checksum")) {
            o.no_checksum = true;
        } else if (a[0] == '-') {
            fprintf(stderr,
                    "usage: bench_falcon [--gib G] [--reps N] [--dtype "
                    "f32|f64|both] [--kernel warp|reference] [--no-checksum] "
                    "[--markdown FILE] FILE.csv...\n");
            return 2;
        } else {
            o.files.push_back(a);
        }
    }
    if (o.files.empty() || o.reps < 1 || o.gib <= 0) {
        fprintf(stderr, "bench_falcon: give CSV files (see --help)\n");
        return 2;
    }
    if (fz_gpu_count() == 0) {
        fprintf(stderr, "bench_falcon: no CUDA GPU\n");
        return 1;
    }
    cudaDeviceProp prop;
    CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
    const char *kernel = getenv("FZ_FALCON_GPU_KERNEL");
    const size_t cap = (size_t)(o.gib * (1ull << 30)) + (64u << 20);
    void *d_src, *d_dst, *d_out;
    CHECK_CUDA(cudaMalloc(&d_src, cap));
    CHECK_CUDA(cudaMalloc(&d_dst, cap + (8u << 20)));
    CHECK_CUDA(cudaMalloc(&d_out, cap));
    cudaStream_t stream;
    CHECK_CUDA(cudaStreamCreate(&stream));
    std::vector<Row> rows;
    for (const char *f : o.files)
        for (int t = 0; t < 2; t++) {
            const bool f64 = t == 1;
            if (strcmp(o.dtype, "both") && strcmp(o.dtype, f64 ? "f64" : "f32"))
                continue;
            rows.push_back(
                run_one(o, f, f64, stream, d_src, d_dst, d_out, cap));
            const Row &r = rows.back();
            printf("%-22s %s  ratio %7.3f (file %7.3f)  compress %8.1f GB/s "
                   "(%.2fx memcpy)  decompress %8.1f GB/s (%.2fx)  memcpy "
                   "%7.1f GB/s\n",
                   r.name.c_str(), r.dtype.c_str(), r.ratio, r.file_ratio,
                   r.comp, r.comp / r.memcpy_gbs, r.decomp,
                   r.decomp / r.memcpy_gbs, r.memcpy_gbs);
            fflush(stdout);
        }
    if (o.markdown) {
        FILE *m = fopen(o.markdown, "w");
        if (!m) {
            fprintf(stderr, "cannot write %s\n", o.markdown);
            return 1;
        }
        fprintf(m,
                "device: %s (%d SMs), floatz %s, codec falcon (%s kernel), "
                "checksums %s, %.2f GiB per run (file tiled), median of %d\n\n",
                prop.name, prop.multiProcessorCount, fz_version_string(),
                kernel ? kernel : "warp", o.no_checksum ? "off" : "on", o.gib,
                o.reps);
        fprintf(m, "| Dataset | dtype | ratio (file) | ratio (tiled) | "
                   "compress GB/s | x memcpy | decompress GB/s | x memcpy | "
                   "memcpy D2D GB/s |\n|---|---|---:|---:|---:|---:|---:|---:|"
                   "---:|\n");
        for (const Row &r : rows)
            fprintf(m,
                    "| %s | %s | %.3f | %.3f | %.1f | %.2f | %.1f | %.2f | "
                    "%.1f |\n",
                    r.name.c_str(), r.dtype.c_str(), r.file_ratio, r.ratio,
                    r.comp, r.comp / r.memcpy_gbs, r.decomp,
                    r.decomp / r.memcpy_gbs, r.memcpy_gbs);
        fclose(m);
    }
    cudaFree(d_src);
    cudaFree(d_dst);
    cudaFree(d_out);
    cudaStreamDestroy(stream);
    return 0;
}
