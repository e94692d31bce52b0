/* GPU throughput benchmark: floatz device API vs cudaMemcpy device-to-device
 * of the same bytes, in the same run.
 *
 *   bench_gpu [--gib G] [--dtype f32|f64|both] [--reps N] [--input FILE]
 *             [--markdown FILE] [--lossless] [--no-checksum]
 *             [--codec sleek|gfc|...] [--dim N] [--zero-runs]
 *
 * --zero-runs (lorenzo): the zero-run workflow allowed (codec option 1);
 * each GPU stream is also compared with the CPU encoder's (fz_compress,
 * FZ_EXEC_CPU, untimed) and a difference fails the run.
 *
 * Data: two 3-D fields generated on the device (see make_field), or --input
 * FILE (raw values of --dtype) tiled to the size. Modes: lossless, then REL
 * 1e-2, 1e-3, 1e-4. Timing: CUDA events around each call (everything the
 * API enqueues), 2 warm-ups, median of N (default 9). Throughput = original
 * bytes / time (1e9 B/s). Every decompression is checked on the host:
 * bitwise for lossless, |d - o| <= bound in double for lossy. */
#include "bench_cuda.cuh"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

struct Options {
    double gib = 1.0;
    int reps = 9;
    const char *dtype = "both";
    const char *input = nullptr;
    const char *markdown = nullptr;
    bool lossless_only = false;
    bool no_checksum = false;
    fz_codec codec = FZ_CODEC_SLEEK;
    int dim = 0;            /* gfc dimensionality (0 = default) */
    bool zero_runs = false; /* lorenzo: zero runs, GPU == CPU bytes */
};

/* Two synthetic 3-D fields: "smooth3d" (temperature-like, offset 280, so
 * exponents sit far from the bound) and "wave3d" (zero-centred waves, the
 * case SLEEK's quantizer is built for). */
template <typename F>
__global__ void make_field(F *out, size_t n, size_t nx, size_t ny,
                           double offset) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        double x = (double)(i % nx) / nx, y = (double)(i / nx % ny) / ny,
               z = (double)(i / (nx * ny)) / 64.0;
        double v = offset + 12.0 * sin(6.2831853 * x) * cos(3.14159 * y) +
                   3.0 * sin(18.85 * x + 2.0 * z) * sin(12.566 * y) +
                   0.7 * cos(44.0 * x + 31.0 * y + 5.0 * z) +
                   0.05 * sin(301.0 * x * y + 17.0 * z);
        out[i] = (F)v;
    }
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
    fz_mode mode;
    double bound, eff, abs_bound;
    size_t bytes, compressed;
    double memcpy_ms, comp_ms, decomp_ms;
    double max_err;
    unsigned long long violations;
};

/* Host check of a decoded array: bitwise (lossless) or |d - o| <= abs
 * bound in double for finite values, bitwise for the rest. */
template <typename F>
static void check(const F *o, const F *d, size_t n, Row &r) {
    r.max_err = 0;
    r.violations = 0;
    for (size_t i = 0; i < n; i++) {
        if (r.mode == FZ_MODE_LOSSLESS || !std::isfinite(o[i])) {
            r.violations += memcmp(&o[i], &d[i], sizeof(F)) != 0;
            continue;
        }
        double e = std::fabs((double)d[i] - (double)o[i]);
        r.max_err = std::max(r.max_err, e);
        r.violations += !(e <= r.abs_bound);
    }
}

template <typename F> static double finite_range(const F *v, size_t n) {
    double lo = DBL_MAX, hi = -DBL_MAX;
    for (size_t i = 0; i < n; i++)
        if (std::isfinite(v[i])) {
            lo = std::min(lo, (double)v[i]);
            hi = std::max(hi, (double)v[i]);
        }
    return hi >= lo ? hi - lo : 0.0;
}

struct Buffers {
    void *in, *out, *copy, *comp, *scratch;
    fz_device_result *res;
    size_t bound, scratch_bytes;
};

/* Whether the GPU stream in b.comp (size bytes) is the CPU encoder's. */
static bool same_as_cpu(const fz_params &p, const void *h_in, size_t bytes,
                        const Buffers &b, size_t size) {
    std::vector<uint8_t> cpu(b.bound), gpu(size);
    size_t cpu_size = 0;
    fz_params c = p;
    c.exec = FZ_EXEC_CPU;
    CHECK_FZ(fz_compress(&c, h_in, bytes, cpu.data(), b.bound, &cpu_size));
    CHECK_CUDA(cudaMemcpy(gpu.data(), b.comp, size, cudaMemcpyDeviceToHost));
    return cpu_size == size && memcmp(cpu.data(), gpu.data(), size) == 0;
}

static Row run_one(const fz_params &p, const Row &base, const Buffers &b,
                   const void *h_in, void *h_out, int reps, cudaStream_t s) {
    Row r = base;
    r.mode = p.mode;
    r.bound = p.bound;
    fz_device_result h_res;
    r.comp_ms = bench_time_ms(s, reps, [&] {
        CHECK_FZ(fz_device_compress(&p, b.in, b.comp, b.bound, b.scratch,
                                    b.scratch_bytes, b.res, nullptr, s));
    });
    CHECK_CUDA(cudaMemcpy(&h_res, b.res, sizeof h_res, cudaMemcpyDeviceToHost));
    if (h_res.status != FZ_OK) {
        fprintf(stderr, "compress failed: %s\n",
                fz_status_string((fz_status)h_res.status));
        exit(1);
    }
    r.compressed = h_res.size;
    if (p.codec_options[1] && !same_as_cpu(p, h_in, r.bytes, b, h_res.size)) {
        fprintf(stderr, "GPU stream differs from the CPU's\n");
        exit(1);
    }
    uint8_t header[FZ_HEADER_BYTES];
    CHECK_CUDA(
        cudaMemcpy(header, b.comp, sizeof header, cudaMemcpyDeviceToHost));
    fz_info info;
    CHECK_FZ(fz_inspect(header, sizeof header, &info));
    r.eff = info.bound_effective;
    r.decomp_ms = bench_time_ms(s, reps, [&] {
        CHECK_FZ(fz_device_decompress(&p, b.comp, r.compressed, b.out, r.bytes,
                                      b.scratch, b.scratch_bytes, nullptr,
                                      b.res, nullptr, s));
    });
    CHECK_CUDA(cudaMemcpy(&h_res, b.res, sizeof h_res, cudaMemcpyDeviceToHost));
    if (h_res.status != FZ_OK) {
        fprintf(stderr, "decompress failed: %s\n",
                fz_status_string((fz_status)h_res.status));
        exit(1);
    }
    CHECK_CUDA(cudaMemcpy(h_out, b.out, r.bytes, cudaMemcpyDeviceToHost));
    if (p.dtype == FZ_F32) {
        size_t n = r.bytes / 4;
        r.abs_bound = p.mode == FZ_MODE_REL
                          ? p.bound * finite_range((const float *)h_in, n)
                          : p.bound;
        check((const float *)h_in, (const float *)h_out, n, r);
    } else {
        size_t n = r.bytes / 8;
        r.abs_bound = p.mode == FZ_MODE_REL
                          ? p.bound * finite_range((const double *)h_in, n)
                          : p.bound;
        check((const double *)h_in, (const double *)h_out, n, r);
    }
    return r;
}

/* Every mode for one dtype and field: lossless, then REL 1e-2..1e-4. */
static void run_field(fz_dtype dtype, const char *field, double offset,
                      const Options &o, cudaStream_t s,
                      std::vector<Row> &rows) {
    const size_t esize = dtype == FZ_F32 ? 4 : 8;
    const size_t n = (size_t)(o.gib * (1 << 30)) / esize / 4096 * 4096;
    const size_t bytes = n * esize;
    fz_params p;
    CHECK_FZ(fz_params_init(&p, dtype, n));
    if (o.no_checksum)
        p.flags |= FZ_FLAG_NO_CHECKSUM;
    p.codec = o.codec;
    p.codec_options[0] = o.dim;
    p.codec_options[1] = o.zero_runs ? 1 : 0; /* LZ_OPT_ZERO_RUNS */
    /* sleek has lossless and lossy modes, lorenzo lossy ones only; the
     * field is 1024 x 1024 x Z, which lorenzo predicts in 3-D */
    const bool lorenzo = o.codec == FZ_CODEC_LORENZO;
    const bool lossy =
        lorenzo || (!o.lossless_only && o.codec == FZ_CODEC_SLEEK);
    if (lorenzo && n % (1u << 20) == 0) {
        const uint64_t dims[3] = {1024, 1024, n >> 20};
        CHECK_FZ(fz_params_set_shape(&p, 3, dims));
    }
    Buffers b;
    if (lossy) { /* the largest scratch of the modes used */
        p.mode = FZ_MODE_REL;
        p.bound = 1e-3;
    }
    CHECK_FZ(fz_compress_bound(&p, &b.bound));
    CHECK_FZ(fz_device_scratch_size(&p, &b.scratch_bytes));
    CHECK_CUDA(cudaMalloc(&b.in, bytes));
    CHECK_CUDA(cudaMalloc(&b.out, bytes));
    CHECK_CUDA(cudaMalloc(&b.copy, bytes));
    CHECK_CUDA(cudaMalloc(&b.comp, b.bound));
    CHECK_CUDA(cudaMalloc(&b.scratch, b.scratch_bytes));
    CHECK_CUDA(cudaMalloc(&b.res, sizeof *b.res));
    if (o.input)
        fill_from_file(b.in, bytes, o.input);
    else if (dtype == FZ_F32)
        make_field<<<1024, 256, 0, s>>>((float *)b.in, n, 1024, 1024, offset);
    else
        make_field<<<1024, 256, 0, s>>>((double *)b.in, n, 1024, 1024, offset);
    CHECK_CUDA(cudaStreamSynchronize(s));
    std::vector<char> h_in(bytes), h_out(bytes);
    CHECK_CUDA(cudaMemcpy(h_in.data(), b.in, bytes, cudaMemcpyDeviceToHost));

    Row base = {};
    base.dtype = dtype == FZ_F32 ? "f32" : "f64";
    base.data = o.input ? "file (tiled)" : field;
    base.bytes = bytes;
    base.memcpy_ms = bench_time_ms(s, o.reps, [&] {
        CHECK_CUDA(
            cudaMemcpyAsync(b.copy, b.in, bytes, cudaMemcpyDeviceToDevice, s));
    });
    /* lossless, REL 1e-2..1e-4, and ABS with REL 1e-3's absolute bound
     * (same quantization, no range pass: shows what the pass costs) */
    const double range = dtype == FZ_F32
                             ? finite_range((const float *)h_in.data(), n)
                             : finite_range((const double *)h_in.data(), n);
    const fz_mode modes[] = {FZ_MODE_LOSSLESS, FZ_MODE_REL, FZ_MODE_REL,
                             FZ_MODE_ABS, FZ_MODE_REL};
    const double bounds[] = {0, 1e-2, 1e-3, 1e-3 * range, 1e-4};
    for (int m = lorenzo ? 1 : 0; m < (lossy ? 5 : 1); m++) {
        p.mode = modes[m];
        p.bound = bounds[m];
        rows.push_back(
            run_one(p, base, b, h_in.data(), h_out.data(), o.reps, s));
    }
    cudaFree(b.in);
    cudaFree(b.out);
    cudaFree(b.copy);
    cudaFree(b.comp);
    cudaFree(b.scratch);
    cudaFree(b.res);
}

static void print_rows(FILE *f, const std::vector<Row> &rows) {
    fprintf(f, "| dtype | data | mode | bound | eff. bound | MiB | CR | "
               "memcpy GB/s | comp GB/s | comp/memcpy | decomp GB/s | "
               "decomp/memcpy | max err / bound | violations |\n");
    fprintf(f, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (const Row &r : rows) {
        double gb = r.bytes / 1e9;
        fprintf(f,
                "| %s | %s | %s | %g | %g | %.0f | %.2f | %.0f | %.0f | "
                "%.2fx | %.0f | %.2fx | %.3f | %llu |\n",
                r.dtype, r.data,
                r.mode == FZ_MODE_LOSSLESS ? "lossless"
                : r.mode == FZ_MODE_ABS    ? "ABS"
                                           : "REL",
                r.bound, r.eff, r.bytes / 1048576.0,
                (double)r.bytes / r.compressed, gb / (r.memcpy_ms / 1e3),
                gb / (r.comp_ms / 1e3), r.memcpy_ms / r.comp_ms,
                gb / (r.decomp_ms / 1e3), r.memcpy_ms / r.decomp_ms,
                r.abs_bound > 0 ? r.max_err / r.abs_bound : 0.0, r.violations);
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
        else if (!strcmp(a, "--lossless"))
            o.lossless_only = true;
        else if (!strcmp(a, "--no-checksum"))
            o.no_checksum = true;
        else if (!strcmp(a, "--codec") && v) {
            if (fz_codec_from_name(v, &o.codec) != FZ_OK) {
                fprintf(stderr, "bench_gpu: unknown codec %s\n", v);
                return 2;
            }
            i++;
        } else if (!strcmp(a, "--dim") && v)
            o.dim = atoi(v), i++;
        else if (!strcmp(a, "--zero-runs"))
            o.zero_runs = true;
        else {
            fprintf(stderr, "usage: bench_gpu [--gib G] [--reps N] [--dtype "
                            "f32|f64|both] [--input FILE] [--markdown FILE] "
                            "[--lossless] [--no-checksum] [--codec NAME] "
                            "[--dim N] [--zero-runs]\n");
            return 2;
        }
    }
    if (o.zero_runs && o.codec != FZ_CODEC_LORENZO) {
        fprintf(stderr, "bench_gpu: --zero-runs is a lorenzo option\n");
        return 2;
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
    const struct {
        const char *name;
        double offset;
    } fields[] = {{"smooth3d", 280.0}, {"wave3d", 0.0}};
    for (const auto &fld : fields) {
        if (strcmp(o.dtype, "f64") != 0)
            run_field(FZ_F32, fld.name, fld.offset, o, s, rows);
        if (strcmp(o.dtype, "f32") != 0)
            run_field(FZ_F64, fld.name, fld.offset, o, s, rows);
        if (o.input)
            break; /* one input file */
    }
    printf("device: %s (%d SMs), floatz %s, codec %s, checksums %s, "
           "median of %d\n\n",
           prop.name, prop.multiProcessorCount, fz_version_string(),
           fz_codec_name(o.codec), o.no_checksum ? "off" : "on", o.reps);
    print_rows(stdout, rows);
    if (o.markdown) {
        FILE *f = fopen(o.markdown, "w");
        if (!f) {
            fprintf(stderr, "cannot write %s\n", o.markdown);
            return 1;
        }
        fprintf(f,
                "device: %s (%d SMs), floatz %s, codec %s, checksums %s, "
                "median of %d\n\n",
                prop.name, prop.multiProcessorCount, fz_version_string(),
                fz_codec_name(o.codec), o.no_checksum ? "off" : "on", o.reps);
        print_rows(f, rows);
        fclose(f);
    }
    for (const Row &r : rows)
        if (r.violations)
            return 1;
    return 0;
}
