/* End-to-end host<->device pipeline: host buffers in, host buffers out,
 * through fz_compress / fz_decompress with exec = FZ_EXEC_GPU.
 *
 * Measures in one run: pinned H2D and D2H bandwidth (cudaMemcpy of 1 GiB),
 * each alone and both at once (duplex: two streams, one per direction,
 * each its own buffers, in batch-sized copies), then for each codec (sleek
 * lossless, sleek REL 1e-3, gfc, falcon, lorenzo REL 1e-3 as a 1024 x 1024 x Z
 * field) the end-to-end compress and decompress
 * throughput (original bytes / wall time) with 1, 2, 4, 8 and 16 streams, for
 * pinned and pageable user buffers, on a generated smooth float64 array
 * (default 4 GiB). Every run is checked: the stream is the same for every
 * stream count and buffer kind, and decodes to the input (lossless) or within
 * the bound (REL). Besides the ratio to the one-way bandwidth (xH2D, xD2H) each
 * run is set against the transfer limit for its ratio (xlim): both directions
 * move at the duplex rates until the smaller one is done, the rest at the
 * one-way rate (for equal sizes: max(in / H2D_duplex, out / D2H_duplex)).
 *
 * Before the table it prints the host-side costs that decide the pageable
 * path: pinned allocation (cudaMallocHost), page locking a user buffer
 * (cudaHostRegister), the multi-threaded host copy into pinned staging and
 * the REL value-range pass, each in GB/s.
 *
 * --pageable-mode stage|register|both: pageable buffers go through pinned
 * staging (library default) or are page-locked per call (FZ_GPU_PAGEABLE).
 * --cold: free the library's cached GPU buffers before every timed call, to
 * see what a single call costs with allocation and pinning included.
 * --codecs sleek-rel,gfc: run only the named ones (default: all five).
 *
 * Usage: bench_pipeline [--gib N] [--reps R] [--batch-mib M]
 *                       [--streams 1,2,4,8,16] [--no-pageable]
 *                       [--pageable-mode stage|register|both] [--cold]
 *                       [--codecs name,name] */
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <utility>

#include "../src/api/fz_internal.h"
#include "bench_cuda.cuh"

namespace {

struct Options {
    double gib = 4.0;
    int reps = 3;
    uint32_t batch_mib = 0; /* 0: the library default */
    std::vector<uint32_t> streams{1, 2, 4, 8, 16};
    bool pageable = true;
    bool stage = true, reg = false; /* pageable modes to run */
    bool cold = false;
    std::vector<std::string> codecs; /* empty: all */
};

Options parse(int argc, char **argv) {
    Options o;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : nullptr;
        if (a == "--gib" && v) {
            o.gib = atof(v);
            i++;
        } else if (a == "--reps" && v) {
            o.reps = atoi(v);
            i++;
        } else if (a == "--batch-mib" && v) {
            o.batch_mib = (uint32_t)atoi(v);
            i++;
        } else if (a == "--streams" && v) {
            o.streams.clear();
            for (const char *p = v; *p;) {
                o.streams.push_back((uint32_t)strtoul(p, (char **)&p, 10));
                if (*p == ',')
                    p++;
            }
            i++;
        } else if (a == "--no-pageable") {
            o.pageable = false;
        } else if (a == "--pageable-mode" && v) {
            const std::string m = v;
            o.stage = m == "stage" || m == "both";
            o.reg = m == "register" || m == "both";
            i++;
        } else if (a == "--cold") {
            o.cold = true;
        } else if (a == "--codecs" && v) {
            for (const char *p = v; *p;) {
                const char *e = strchr(p, ',');
                const size_t len = e ? (size_t)(e - p) : strlen(p);
                o.codecs.emplace_back(p, len);
                p += len + (e != nullptr);
            }
            i++;
        } else {
            fprintf(stderr,
                    "usage: %s [--gib N] [--reps R] [--batch-mib M] "
                    "[--streams 1,2,4] [--no-pageable] "
                    "[--pageable-mode stage|register|both] [--cold] "
                    "[--codecs sleek,sleek-rel,gfc,falcon,lorenzo-rel]\n",
                    argv[0]);
            exit(2);
        }
    }
    if (o.reps < 1)
        o.reps = 1;
    return o;
}

/* Smooth values with four decimals (a sensor-like series). */
__global__ void fill_smooth(double *v, uint64_t n, uint64_t offset) {
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n;
         i += (uint64_t)gridDim.x * blockDim.x) {
        const double t = (double)(i + offset);
        const double x = 280.0 + 12.0 * sin(t * 1e-6) + 0.8 * sin(t * 0.0137) +
                         0.05 * cos(t * 0.91);
        v[i] = rint(x * 1e4) / 1e4;
    }
}

void generate(double *host, uint64_t n) {
    const uint64_t piece = 64ull << 20; /* values per piece */
    double *d = nullptr;
    CHECK_CUDA(cudaMalloc(&d, piece * sizeof(double)));
    for (uint64_t off = 0; off < n; off += piece) {
        const uint64_t m = n - off < piece ? n - off : piece;
        fill_smooth<<<1024, 256>>>(d, m, off);
        CHECK_CUDA(cudaMemcpy(host + off, d, m * sizeof(double),
                              cudaMemcpyDeviceToHost));
    }
    CHECK_CUDA(cudaFree(d));
}

double copy_gbps(cudaMemcpyKind kind, int reps) {
    const size_t bytes = 1ull << 30;
    void *h = nullptr, *d = nullptr;
    CHECK_CUDA(cudaMallocHost(&h, bytes));
    CHECK_CUDA(cudaMalloc(&d, bytes));
    memset(h, 1, bytes);
    const double ms = bench_time_ms(nullptr, reps, [&] {
        if (kind == cudaMemcpyHostToDevice)
            CHECK_CUDA(cudaMemcpyAsync(d, h, bytes, kind, nullptr));
        else
            CHECK_CUDA(cudaMemcpyAsync(h, d, bytes, kind, nullptr));
    });
    CHECK_CUDA(cudaFreeHost(h));
    CHECK_CUDA(cudaFree(d));
    return bytes / ms / 1e6;
}

struct Bandwidth {
    double h2d, d2h;         /* one way */
    double h2d_dup, d2h_dup; /* both at once */
};

/* Pinned H2D and D2H at the same time, two streams, each direction its
 * own host and device buffers, 1 GiB each way in copies of `piece` bytes
 * (a batch), as the pipeline issues them. Medians over reps. */
void duplex_gbps(int reps, size_t piece, Bandwidth *bw) {
    const size_t bytes = 1ull << 30;
    piece = piece && piece < bytes ? piece : bytes;
    void *h_up = nullptr, *h_down = nullptr, *d_up = nullptr, *d_down = nullptr;
    CHECK_CUDA(cudaMallocHost(&h_up, bytes));
    CHECK_CUDA(cudaMallocHost(&h_down, bytes));
    CHECK_CUDA(cudaMalloc(&d_up, bytes));
    CHECK_CUDA(cudaMalloc(&d_down, bytes));
    memset(h_up, 1, bytes);
    memset(h_down, 2, bytes);
    cudaStream_t up, down;
    CHECK_CUDA(cudaStreamCreateWithFlags(&up, cudaStreamNonBlocking));
    CHECK_CUDA(cudaStreamCreateWithFlags(&down, cudaStreamNonBlocking));
    cudaEvent_t start, up_end, down_end;
    CHECK_CUDA(cudaEventCreate(&start));
    CHECK_CUDA(cudaEventCreate(&up_end));
    CHECK_CUDA(cudaEventCreate(&down_end));
    std::vector<float> t_up, t_down;
    for (int r = 0; r < reps + 2; r++) { /* two warm-ups */
        CHECK_CUDA(cudaEventRecord(start, up));
        CHECK_CUDA(cudaStreamWaitEvent(down, start, 0));
        for (size_t off = 0; off < bytes; off += piece) {
            const size_t n = bytes - off < piece ? bytes - off : piece;
            CHECK_CUDA(cudaMemcpyAsync((uint8_t *)d_up + off,
                                       (uint8_t *)h_up + off, n,
                                       cudaMemcpyHostToDevice, up));
            CHECK_CUDA(cudaMemcpyAsync((uint8_t *)h_down + off,
                                       (uint8_t *)d_down + off, n,
                                       cudaMemcpyDeviceToHost, down));
        }
        CHECK_CUDA(cudaEventRecord(up_end, up));
        CHECK_CUDA(cudaEventRecord(down_end, down));
        CHECK_CUDA(cudaEventSynchronize(up_end));
        CHECK_CUDA(cudaEventSynchronize(down_end));
        float a = 0, b = 0;
        CHECK_CUDA(cudaEventElapsedTime(&a, start, up_end));
        CHECK_CUDA(cudaEventElapsedTime(&b, start, down_end));
        if (r >= 2) {
            t_up.push_back(a);
            t_down.push_back(b);
        }
    }
    bw->h2d_dup = bytes / bench_median(t_up) / 1e6;
    bw->d2h_dup = bytes / bench_median(t_down) / 1e6;
    cudaEventDestroy(start);
    cudaEventDestroy(up_end);
    cudaEventDestroy(down_end);
    cudaStreamDestroy(up);
    cudaStreamDestroy(down);
    CHECK_CUDA(cudaFreeHost(h_up));
    CHECK_CUDA(cudaFreeHost(h_down));
    CHECK_CUDA(cudaFree(d_up));
    CHECK_CUDA(cudaFree(d_down));
}

/* Least time to move `in` bytes up and `out` bytes down: both at the
 * duplex rates until the smaller transfer is done, then the rest of the
 * other at its one-way rate. */
double transfer_limit_s(double in, double out, const Bandwidth &bw) {
    const double t_in = in / (bw.h2d_dup * 1e9),
                 t_out = out / (bw.d2h_dup * 1e9);
    if (t_in >= t_out)
        return t_out + (in - t_out * bw.h2d_dup * 1e9) / (bw.h2d * 1e9);
    return t_in + (out - t_in * bw.d2h_dup * 1e9) / (bw.d2h * 1e9);
}

double seconds_since(std::chrono::steady_clock::time_point a) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - a)
        .count();
}

/* Host-side costs of the pageable path and of REL, on a 1 GiB piece of
 * the (pageable, faulted-in) input. */
void host_costs(const double *src, size_t bytes) {
    const size_t piece = bytes < (1ull << 30) ? bytes : 1ull << 30;
    const int threads = fz_thread_count(0);
    void *pinned = nullptr;
    auto t = std::chrono::steady_clock::now();
    CHECK_CUDA(cudaMallocHost(&pinned, piece));
    const double alloc = seconds_since(t);
    t = std::chrono::steady_clock::now();
    CHECK_CUDA(cudaFreeHost(pinned));
    const double free_s = seconds_since(t);
    CHECK_CUDA(cudaMallocHost(&pinned, piece));
    fz_host_copy(pinned, src, piece, threads); /* warm */
    t = std::chrono::steady_clock::now();
    fz_host_copy(pinned, src, piece, threads);
    const double copy = seconds_since(t);
    t = std::chrono::steady_clock::now();
    fz_host_copy(pinned, src, piece, 1);
    const double copy1 = seconds_since(t);
    CHECK_CUDA(cudaFreeHost(pinned));
    void *reg = const_cast<double *>(src);
    t = std::chrono::steady_clock::now();
    const cudaError_t e = cudaHostRegister(reg, piece, cudaHostRegisterDefault);
    const double regs = seconds_since(t);
    t = std::chrono::steady_clock::now();
    if (e == cudaSuccess)
        CHECK_CUDA(cudaHostUnregister(reg));
    const double unregs = seconds_since(t);
    cudaGetLastError();
    double lo, hi;
    t = std::chrono::steady_clock::now();
    fz_value_range(FZ_F64, src, bytes / sizeof(double), threads, &lo, &hi);
    const double range = seconds_since(t);
    const double g = piece / 1e9;
    printf("# host, 1 GiB: cudaMallocHost %.1f ms (%.1f GB/s), cudaFreeHost "
           "%.1f ms; cudaHostRegister %.1f ms (%.1f GB/s) + unregister %.1f "
           "ms%s\n",
           alloc * 1e3, g / alloc, free_s * 1e3, regs * 1e3, g / regs,
           unregs * 1e3, e == cudaSuccess ? "" : " (register FAILED)");
    printf("# host copy pageable->pinned: %.1f GB/s with %d threads, %.1f GB/s "
           "with 1; REL value range (whole input): %.1f GB/s\n",
           g / copy, threads, g / copy1, bytes / range / 1e9);
}

struct Buffers {
    bool pinned;
    double *src = nullptr, *out = nullptr;
    uint8_t *stream = nullptr;
    Buffers(bool pin, size_t bytes, size_t bound) : pinned(pin) {
        if (pin) {
            CHECK_CUDA(cudaMallocHost(&src, bytes));
            CHECK_CUDA(cudaMallocHost(&out, bytes));
            CHECK_CUDA(cudaMallocHost(&stream, bound));
        } else {
            src = (double *)malloc(bytes);
            out = (double *)malloc(bytes);
            stream = (uint8_t *)malloc(bound);
            if (!src || !out || !stream) {
                fprintf(stderr, "out of host memory\n");
                exit(1);
            }
            memset(out, 0, bytes); /* fault the pages in before timing */
            memset(stream, 0, bound);
        }
    }
    ~Buffers() {
        if (pinned) {
            cudaFreeHost(src);
            cudaFreeHost(out);
            cudaFreeHost(stream);
        } else {
            free(src);
            free(out);
            free(stream);
        }
    }
};

struct Codec {
    const char *name;
    fz_codec codec;
    fz_mode mode;
    double bound;
    bool field3d; /* coded as a 1024 x 1024 x Z field where n allows */
};

/* The codec's params over p0; 3-D codecs get the shape X x Y x Z with
 * X Y = plane when n is a multiple of it. */
fz_params with_codec(const fz_params &p0, const Codec &c, uint64_t plane) {
    fz_params p = p0;
    p.codec = c.codec;
    p.mode = c.mode;
    p.bound = c.bound;
    if (c.field3d && p0.dims[0] % plane == 0) {
        p.ndims = 3;
        p.dims[0] = 1024;
        p.dims[1] = plane / 1024;
        p.dims[2] = p0.dims[0] / plane;
    }
    return p;
}

double seconds_of(const std::function<void()> &fn, int reps) {
    std::vector<float> t;
    for (int r = 0; r < reps + 1; r++) { /* one warm-up */
        auto a = std::chrono::steady_clock::now();
        fn();
        auto b = std::chrono::steady_clock::now();
        if (r > 0)
            t.push_back(std::chrono::duration<float>(b - a).count());
    }
    return bench_median(t);
}

/* Decoded values equal the input (lossless) or lie within eff (REL). */
bool check_decoded(const double *in, const double *out, uint64_t n,
                   fz_mode mode, double eff) {
    if (mode == FZ_MODE_LOSSLESS)
        return memcmp(in, out, n * sizeof(double)) == 0;
    for (uint64_t i = 0; i < n; i++)
        if (!(fabs(out[i] - in[i]) <= eff))
            return false;
    return true;
}

} // namespace

int main(int argc, char **argv) {
    const Options o = parse(argc, argv);
    if (fz_gpu_count() == 0) {
        fprintf(stderr, "bench_pipeline: no usable CUDA GPU\n");
        return 1;
    }
    cudaDeviceProp prop;
    CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
    const uint64_t n = (uint64_t)(o.gib * (1ull << 30)) / sizeof(double);
    const size_t bytes = n * sizeof(double);
    Bandwidth bw;
    bw.h2d = copy_gbps(cudaMemcpyHostToDevice, o.reps);
    bw.d2h = copy_gbps(cudaMemcpyDeviceToHost, o.reps);
    const size_t piece = o.batch_mib ? (size_t)o.batch_mib << 20 : 64ull << 20;
    duplex_gbps(o.reps, piece, &bw);
    const double h2d = bw.h2d, d2h = bw.d2h;
    printf("# bench_pipeline on %s: %.2f GiB float64 (smooth, 4 decimals), "
           "median of %d runs, batch %s MiB\n",
           prop.name, bytes / double(1ull << 30), o.reps,
           o.batch_mib ? std::to_string(o.batch_mib).c_str() : "default");
    printf("# pinned cudaMemcpy 1 GiB: H2D %.2f GB/s, D2H %.2f GB/s\n", h2d,
           d2h);
    printf("# pinned duplex (H2D and D2H at once, 1 GiB each, %zu MiB "
           "copies, 2 streams): H2D %.2f GB/s, D2H %.2f GB/s\n",
           piece >> 20, bw.h2d_dup, bw.d2h_dup);
    printf("# %s calls (cached GPU buffers %s)\n", o.cold ? "cold" : "warm",
           o.cold ? "freed before each" : "reused");
    printf("%-12s %-12s %7s %7s %10s %8s %8s %10s %8s %8s %s\n", "codec",
           "buffers", "streams", "ratio", "comp_GB/s", "xH2D", "xlim",
           "decomp_GB/s", "xD2H", "xlim", "check");

    const Codec all_codecs[] = {
        {"sleek", FZ_CODEC_SLEEK, FZ_MODE_LOSSLESS, 0, false},
        {"sleek-rel", FZ_CODEC_SLEEK, FZ_MODE_REL, 1e-3, false},
        {"gfc", FZ_CODEC_GFC, FZ_MODE_LOSSLESS, 0, false},
        {"falcon", FZ_CODEC_FALCON, FZ_MODE_LOSSLESS, 0, false},
        {"lorenzo-rel", FZ_CODEC_LORENZO, FZ_MODE_REL, 1e-3, true}};
    std::vector<Codec> chosen;
    for (const Codec &c : all_codecs)
        if (o.codecs.empty() || std::find(o.codecs.begin(), o.codecs.end(),
                                          c.name) != o.codecs.end())
            chosen.push_back(c);
    if (chosen.size() != (o.codecs.empty() ? 5 : o.codecs.size())) {
        fprintf(stderr, "unknown or repeated name in --codecs\n");
        exit(2);
    }
    fz_params p0;
    CHECK_FZ(fz_params_init(&p0, FZ_F64, n));
    const uint64_t plane = 1024 * 1024;
    size_t bound = 0;
    for (const Codec &c : chosen) {
        fz_params p = with_codec(p0, c, plane);
        size_t b = 0;
        CHECK_FZ(fz_compress_bound(&p, &b));
        bound = b > bound ? b : bound;
    }
    /* first stream of each codec, to compare the others with */
    std::vector<std::pair<std::string, std::vector<uint8_t>>> refs;
    /* buffer kinds: pinned, pageable staged, pageable registered */
    std::vector<int> kinds{0};
    if (o.pageable && o.stage)
        kinds.push_back(1);
    if (o.pageable && o.reg)
        kinds.push_back(2);
    const char *kind_names[] = {"pinned", "pageable", "pageable-reg"};
    for (int kind : kinds) {
        const bool pinned = kind == 0;
        setenv("FZ_GPU_PAGEABLE", kind == 2 ? "register" : "stage", 1);
        Buffers b(pinned, bytes, bound);
        generate(b.src, n);
        if (kind == 1 || (kind == 2 && !o.stage))
            host_costs(b.src, bytes);
        for (const Codec &c : chosen) {
            fz_params p = with_codec(p0, c, plane);
            p.exec = FZ_EXEC_GPU;
            p.batch_kib = o.batch_mib << 10;
            for (uint32_t s : o.streams) {
                p.gpu_streams = s;
                size_t size = 0, got = 0;
                const double tc = seconds_of(
                    [&] {
                        if (o.cold)
                            fz_gpu_release_cache();
                        CHECK_FZ(fz_compress(&p, b.src, bytes, b.stream, bound,
                                             &size));
                    },
                    o.reps);
                fz_decode_options d;
                memset(&d, 0, sizeof d);
                d.exec = FZ_EXEC_GPU;
                d.gpu_streams = s;
                d.batch_kib = p.batch_kib;
                const double td = seconds_of(
                    [&] {
                        if (o.cold)
                            fz_gpu_release_cache();
                        CHECK_FZ(fz_decompress(b.stream, size, b.out, bytes, &d,
                                               &got));
                    },
                    o.reps);
                fz_info info;
                CHECK_FZ(fz_inspect(b.stream, size, &info));
                /* the same stream for every stream count and buffer kind */
                bool same = true;
                const std::string key = c.name;
                auto it =
                    std::find_if(refs.begin(), refs.end(),
                                 [&](const auto &r) { return r.first == key; });
                if (it == refs.end())
                    refs.emplace_back(
                        key, std::vector<uint8_t>(b.stream, b.stream + size));
                else
                    same = it->second.size() == size &&
                           memcmp(it->second.data(), b.stream, size) == 0;
                const bool ok = same && got == bytes &&
                                check_decoded(b.src, b.out, n, c.mode,
                                              info.bound_effective);
                const double gc = bytes / tc / 1e9, gd = bytes / td / 1e9;
                const double lc = transfer_limit_s((double)bytes, (double)size,
                                                   bw),
                             ld = transfer_limit_s((double)size, (double)bytes,
                                                   bw);
                printf("%-12s %-12s %7u %7.3f %10.2f %8.2f %8.2f %10.2f %8.2f "
                       "%8.2f %s\n",
                       c.name, kind_names[kind], s, bytes / double(size), gc,
                       gc / h2d, lc / tc, gd, gd / d2h, ld / td,
                       ok ? "ok" : "FAILED");
                fflush(stdout);
                if (!ok)
                    return 1;
            }
        }
    }
    /* the link can drift during a long run: the limits again, at the end */
    printf("# pinned cudaMemcpy 1 GiB after the runs: H2D %.2f GB/s, D2H "
           "%.2f GB/s\n",
           copy_gbps(cudaMemcpyHostToDevice, o.reps),
           copy_gbps(cudaMemcpyDeviceToHost, o.reps));
    return 0;
}
