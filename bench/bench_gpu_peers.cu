/* GPU benchmark over the datasets: floatz device API and nvCOMP's low-level
 * batched C API side by side, against the copy limits measured in the same
 * run.
 *
 *   bench_gpu_peers [--gib G] [--reps N] [--budget-s S] [--csv FILE]
 *                   [--markdown FILE] [--no-nvcomp] [--no-floatz]
 *                   --data SPEC ...
 *
 * SPEC as for bench_cpu (bench_common.h). Each input is TILED on the device
 * to at least G GiB (default 1): k copies one after the other (3-D arrays
 * along z, so a periodic field stays continuous); the rows say k.
 *
 * What is timed ("device" mode of BENCHMARKING.md): input and output in GPU
 * memory, CUDA events around the one call (everything it enqueues), 2
 * warm-ups, median of N (default 9; calls over 20 ms: one warm-up, median
 * of at most 5, over 100 ms: of 3).
 * Throughput = ORIGINAL bytes / time (1e9 B/s). Limits: cudaMemcpy
 * device-to-device of the same bytes (per dataset), pinned host-to-device
 * and device-to-host (once).
 *
 * floatz: every codec registered in the build, lossless; sleek also REL
 * 1e-2, 1e-3, 1e-4 (the device API computes the range on the device).
 * nvCOMP (when found at build time; else "nvCOMP absent"): Bitcomp,
 * Cascaded, ANS, LZ4 (plain and bitshuffled), GDeflate, Zstd, lossless, and
 * Bitcomp's lossy mode at the same absolute bounds as floatz's REL rows;
 * 64 KiB chunks as nvCOMP advises, each compressed into its own slot (no
 * compaction); the ratio counts 8 bytes per chunk for its size. Every
 * decompression is checked on the device: bit for bit (lossless), or
 * |d - o| <= bound in double for finite values and bit-exact NaN/inf
 * (lossy). Rows flush to the CSV as they come, so a run stopped by a time
 * limit keeps what it measured; --budget-s skips nvCOMP rows past a wall
 * time budget. --no-floatz / --no-nvcomp run one side only (run_bench.sh
 * runs them as two processes, so that a failing peer cannot take the floatz
 * rows with it). Exit status 1 if a floatz row has a violation or an
 * error. */
#include "bench_cuda.cuh"

#include "bench_common.h"

#ifdef FZB_HAVE_NVCOMP
#include <nvcomp.h>
#endif

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

static const double rel_bounds[] = {1e-2, 1e-3, 1e-4};
static const int nrel = 3;

struct Options {
    double gib = 1.0;
    int reps = 9;
    double budget_s = 0;
    const char *csv = nullptr, *markdown = nullptr;
    bool no_nvcomp = false, no_floatz = false;
    std::vector<const char *> specs;
};

struct Ctx {
    Options o;
    cudaStream_t s;
    cudaEvent_t ev0, ev1;
    double t_start;
    FILE *csv = nullptr;
    std::vector<fzb_row> rows;
    bool floatz_failed = false;
};

/* ---------------------------------------------------------------- timing */
/* Median ms of fn() over reps runs after 2 warm-ups; when the first call
 * takes over 20 ms (100 ms): one warm-up and at most 5 (3) runs. fn returns
 * false on failure. */
template <typename Fn>
static bool time_ms(Ctx &c, int reps, Fn fn, double *median) {
    std::vector<double> t;
    for (int r = 0; r < reps + 2; r++) {
        CHECK_CUDA(cudaEventRecord(c.ev0, c.s));
        if (!fn())
            return false;
        CHECK_CUDA(cudaEventRecord(c.ev1, c.s));
        CHECK_CUDA(cudaEventSynchronize(c.ev1));
        float ms = 0;
        CHECK_CUDA(cudaEventElapsedTime(&ms, c.ev0, c.ev1));
        if (r == 0 && ms > 20.0f) { /* slow: fewer runs, one warm-up */
            reps = std::min(reps, ms > 100.0f ? 3 : 5);
            r++;
        }
        if (r >= 2)
            t.push_back(ms);
    }
    *median = fzb_median(t.data(), (int)t.size());
    return true;
}

/* ------------------------------------------------------ device checking */
struct DevErr {
    unsigned long long bad, max_bits, finite;
    double sq;
};

__device__ static bool same_bits(float a, float b) {
    return __float_as_uint(a) == __float_as_uint(b);
}
__device__ static bool same_bits(double a, double b) {
    return __double_as_longlong(a) == __double_as_longlong(b);
}

template <typename F>
__global__ void check_kernel(const F *o, const F *d, size_t n, int lossless,
                             double abs_bound, DevErr *out) {
    unsigned long long bad = 0, fin = 0;
    double mx = 0.0, sq = 0.0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        const F a = o[i], b = d[i];
        const double da = (double)a, db = (double)b;
        const double e = fabs(db - da);
        if (lossless || !isfinite(da)) {
            bad += !same_bits(a, b);
            if (isfinite(e)) {
                mx = fmax(mx, e);
                sq += e * e;
                fin++;
            }
            continue;
        }
        bad += !(e <= abs_bound);
        if (isfinite(e)) {
            mx = fmax(mx, e);
            sq += e * e;
            fin++;
        } else {
            mx = INFINITY;
        }
    }
    for (int off = 16; off > 0; off >>= 1) {
        bad += __shfl_down_sync(0xffffffffu, bad, off);
        fin += __shfl_down_sync(0xffffffffu, fin, off);
        sq += __shfl_down_sync(0xffffffffu, sq, off);
        mx = fmax(mx, __shfl_down_sync(0xffffffffu, mx, off));
    }
    if ((threadIdx.x & 31) == 0) {
        atomicAdd(&out->bad, bad);
        atomicAdd(&out->finite, fin);
        atomicAdd(&out->sq, sq);
        /* non-negative doubles order like their bit patterns */
        atomicMax(&out->max_bits, (unsigned long long)__double_as_longlong(mx));
    }
}

static fzb_errors device_check(Ctx &c, fz_dtype dtype, const void *orig,
                               const void *dec, uint64_t n, bool lossless,
                               double abs_bound, double range, DevErr *d_err) {
    CHECK_CUDA(cudaMemsetAsync(d_err, 0, sizeof *d_err, c.s));
    if (dtype == FZ_F32)
        check_kernel<<<2048, 256, 0, c.s>>>((const float *)orig,
                                            (const float *)dec, n, lossless,
                                            abs_bound, d_err);
    else
        check_kernel<<<2048, 256, 0, c.s>>>((const double *)orig,
                                            (const double *)dec, n, lossless,
                                            abs_bound, d_err);
    CHECK_CUDA(cudaGetLastError());
    DevErr h;
    CHECK_CUDA(
        cudaMemcpyAsync(&h, d_err, sizeof h, cudaMemcpyDeviceToHost, c.s));
    CHECK_CUDA(cudaStreamSynchronize(c.s));
    fzb_errors e;
    double mx;
    memcpy(&mx, &h.max_bits, sizeof mx);
    e.max_err = mx;
    e.violations = h.bad;
    if (h.finite == 0 || h.sq == 0.0 || !(range > 0.0) || !std::isfinite(range))
        e.psnr = INFINITY;
    else
        e.psnr = 20.0 * log10(range) - 10.0 * log10(h.sq / (double)h.finite);
    return e;
}

/* --------------------------------------------------------------- dataset */
struct DevData {
    const fzb_dataset *d;
    fz_dtype dtype;
    uint32_t ndims;
    uint64_t dims[3], count;
    size_t bytes, tiles;
    double range, memcpy_gbs;
    void *in, *out;
    DevErr *err;
    char note[32];
};

static bool over_budget(const Ctx &c) {
    return c.o.budget_s > 0 && fzb_now() - c.t_start > c.o.budget_s;
}

static void row_init(fzb_row &r, const DevData &dd) {
    memset(&r, 0, sizeof r);
    r.side = "gpu";
    snprintf(r.dataset, sizeof r.dataset, "%s", dd.d->name);
    r.dtype = dd.dtype == FZ_F32 ? "f32" : "f64";
    r.mib = (double)dd.bytes / 1048576.0;
    r.memcpy_gbs = dd.memcpy_gbs;
}

static void emit(Ctx &c, const fzb_row &r) {
    c.rows.push_back(r);
    if (c.csv)
        fzb_csv_row(c.csv, &r);
    if (r.measured)
        fprintf(stderr,
                "  %-26s %-22s %-8s %-7g CR %8.3f  comp %8.1f  decomp %8.1f "
                "GB/s  viol %llu %s\n",
                r.dataset, r.codec, r.mode, r.rel, r.cr, r.comp_gbs,
                r.decomp_gbs, (unsigned long long)r.violations, r.note);
    else
        fprintf(stderr, "  %-26s %-22s %-8s %-7g %s\n", r.dataset, r.codec,
                r.mode, r.rel, r.note);
}

/* ---------------------------------------------------------------- floatz */
static void run_floatz(Ctx &c, DevData &dd) {
    for (uint32_t id = 1; id < 256; id++) {
        const char *name = fz_codec_name((fz_codec)id);
        if (!name || id == FZ_CODEC_LORENZO) /* lossy only, no GPU yet */
            continue;
        const int nmodes = id == FZ_CODEC_SLEEK ? 1 + nrel : 1;
        fz_params p;
        fz_params_init(&p, dd.dtype, dd.count);
        fz_params_set_shape(&p, dd.ndims, dd.dims);
        p.codec = (fz_codec)id;
        p.mode = nmodes > 1 ? FZ_MODE_REL : FZ_MODE_LOSSLESS;
        p.bound = nmodes > 1 ? 1e-3 : 0;
        size_t cap = 0, scratch_bytes = 0, cap2 = 0;
        fz_status st = fz_compress_bound(&p, &cap);
        if (st == FZ_OK)
            st = fz_device_scratch_size(&p, &scratch_bytes);
        p.mode = FZ_MODE_LOSSLESS;
        p.bound = 0;
        if (st == FZ_OK)
            st = fz_compress_bound(&p, &cap2);
        cap = std::max(cap, cap2);
        void *comp = nullptr, *scratch = nullptr;
        fz_device_result *res = nullptr;
        if (st == FZ_OK) {
            CHECK_CUDA(cudaMalloc(&comp, cap));
            CHECK_CUDA(
                cudaMalloc(&scratch, std::max<size_t>(scratch_bytes, 1)));
            CHECK_CUDA(cudaMalloc(&res, sizeof *res));
        }
        for (int m = 0; m < nmodes; m++) {
            fzb_row r;
            row_init(r, dd);
            snprintf(r.codec, sizeof r.codec, "floatz-%s", name);
            snprintf(r.mode, sizeof r.mode, "%s", m ? "REL" : "lossless");
            r.rel = m ? rel_bounds[m - 1] : 0.0;
            r.abs_bound = r.rel * dd.range;
            if (st != FZ_OK) {
                snprintf(r.note, sizeof r.note, "error: %s",
                         fz_status_string(st));
                emit(c, r);
                c.floatz_failed = true;
                continue;
            }
            p.mode = m ? FZ_MODE_REL : FZ_MODE_LOSSLESS;
            p.bound = r.rel;
            fz_status call = FZ_OK;
            double tc = 0, td = 0;
            fz_device_result h;
            bool ok = time_ms(
                c, c.o.reps,
                [&] {
                    call = fz_device_compress(&p, dd.in, comp, cap, scratch,
                                              scratch_bytes, res, nullptr, c.s);
                    return call == FZ_OK;
                },
                &tc);
            if (ok) {
                CHECK_CUDA(
                    cudaMemcpy(&h, res, sizeof h, cudaMemcpyDeviceToHost));
                call = (fz_status)h.status;
                ok = call == FZ_OK;
            }
            const size_t csize = ok ? h.size : 0;
            CHECK_CUDA(cudaMemsetAsync(dd.out, 0, dd.bytes, c.s));
            if (ok)
                ok = time_ms(
                    c, c.o.reps,
                    [&] {
                        call = fz_device_decompress(
                            &p, comp, csize, dd.out, dd.bytes, scratch,
                            scratch_bytes, nullptr, res, nullptr, c.s);
                        return call == FZ_OK;
                    },
                    &td);
            if (ok) {
                CHECK_CUDA(
                    cudaMemcpy(&h, res, sizeof h, cudaMemcpyDeviceToHost));
                call = (fz_status)h.status;
                ok = call == FZ_OK;
            }
            if (!ok) {
                snprintf(r.note, sizeof r.note, "%s: %s",
                         call == FZ_ERR_UNSUPPORTED ? "no GPU path" : "error",
                         fz_status_string(call));
                if (call != FZ_ERR_UNSUPPORTED)
                    c.floatz_failed = true;
                emit(c, r);
                continue;
            }
            fzb_errors e = device_check(c, dd.dtype, dd.in, dd.out, dd.count,
                                        m == 0, r.abs_bound, dd.range, dd.err);
            uint8_t header[FZ_HEADER_BYTES];
            CHECK_CUDA(cudaMemcpy(header, comp, sizeof header,
                                  cudaMemcpyDeviceToHost));
            fz_info info;
            r.measured = 1;
            r.cr = (double)dd.bytes / (double)csize;
            r.comp_gbs = (double)dd.bytes / (tc * 1e6);
            r.decomp_gbs = (double)dd.bytes / (td * 1e6);
            r.max_err = e.max_err;
            r.psnr = e.psnr;
            r.violations = e.violations;
            if (m && fz_inspect(header, sizeof header, &info) == FZ_OK)
                snprintf(r.note, sizeof r.note, "%s, eff. bound %.3g", dd.note,
                         info.bound_effective);
            else
                snprintf(r.note, sizeof r.note, "%s", dd.note);
            if (e.violations)
                c.floatz_failed = true;
            emit(c, r);
        }
        cudaFree(comp);
        cudaFree(scratch);
        cudaFree(res);
    }
}

/* ---------------------------------------------------------------- nvCOMP */
#ifdef FZB_HAVE_NVCOMP
#define NVC_CHUNK ((size_t)65536)

/* One traits struct per algorithm: the batched API has the same shape for
 * all of them. */
#define FZB_NVCOMP_TRAITS(Algo)                                                \
    struct Nv##Algo {                                                          \
        typedef nvcompBatched##Algo##CompressOpts_t COpts;                     \
        typedef nvcompBatched##Algo##DecompressOpts_t DOpts;                   \
        static nvcompStatus_t c_temp(size_t n, size_t m, COpts o, size_t *t,   \
                                     size_t total, cudaStream_t s) {           \
            return nvcompBatched##Algo##CompressGetTempSize(n, m, o, t, total, \
                                                            s);                \
        }                                                                      \
        static nvcompStatus_t c_max(size_t m, COpts o, size_t *b) {            \
            return nvcompBatched##Algo##CompressGetMaxOutputChunkSize(m, o,    \
                                                                      b);      \
        }                                                                      \
        static nvcompStatus_t c_align(COpts o,                                 \
                                      nvcompAlignmentRequirements_t *a) {      \
            return nvcompBatched##Algo##CompressGetRequiredAlignments(o, a);   \
        }                                                                      \
        static nvcompStatus_t compress(const void *const *in,                  \
                                       const size_t *in_bytes, size_t m,       \
                                       size_t n, void *temp, size_t tb,        \
                                       void *const *out, size_t *out_bytes,    \
                                       COpts o, nvcompStatus_t *st,            \
                                       cudaStream_t s) {                       \
            return nvcompBatched##Algo##CompressAsync(                         \
                in, in_bytes, m, n, temp, tb, out, out_bytes, o, st, s);       \
        }                                                                      \
        static nvcompStatus_t d_temp(size_t n, size_t m, DOpts o, size_t *t,   \
                                     size_t total, cudaStream_t s) {           \
            return nvcompBatched##Algo##DecompressGetTempSize(n, m, o, t,      \
                                                              total, s);       \
        }                                                                      \
        static nvcompStatus_t                                                  \
        decompress(const void *const *in, const size_t *in_bytes,              \
                   const size_t *cap_bytes, size_t *out_bytes, size_t n,       \
                   void *temp, size_t tb, void *const *out, DOpts o,           \
                   nvcompStatus_t *st, cudaStream_t s) {                       \
            return nvcompBatched##Algo##DecompressAsync(                       \
                in, in_bytes, cap_bytes, out_bytes, n, temp, tb, out, o, st,   \
                s);                                                            \
        }                                                                      \
    };
FZB_NVCOMP_TRAITS(Bitcomp)
FZB_NVCOMP_TRAITS(Cascaded)
FZB_NVCOMP_TRAITS(ANS)
FZB_NVCOMP_TRAITS(LZ4)
FZB_NVCOMP_TRAITS(Gdeflate)
FZB_NVCOMP_TRAITS(Zstd)

__global__ void fill_chunks(size_t n, size_t total, const char *in, char *out,
                            size_t slot, const void **in_ptrs, size_t *in_bytes,
                            void **out_ptrs) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        in_ptrs[i] = in + i * NVC_CHUNK;
        const size_t left = total - i * NVC_CHUNK;
        in_bytes[i] = left < NVC_CHUNK ? left : NVC_CHUNK;
        out_ptrs[i] = out + i * slot;
    }
}

/* Device arrays for one batch, reused by every algorithm of a dataset. */
struct NvBatch {
    size_t n = 0;
    const void **in_ptrs = nullptr; /* chunks of the input */
    size_t *in_bytes = nullptr;
    void **dec_ptrs = nullptr; /* chunks of the output */
    size_t *dec_bytes = nullptr;
    size_t *act_bytes = nullptr; /* sizes decompression reports */
    void **comp_ptrs = nullptr;  /* compressed slots */
    size_t *comp_bytes = nullptr;
    nvcompStatus_t *status = nullptr;
    void *comp = nullptr;
    size_t comp_cap = 0;
};

static bool statuses_ok(Ctx &c, const NvBatch &b, nvcompStatus_t *first_bad) {
    std::vector<nvcompStatus_t> h(b.n);
    CHECK_CUDA(cudaMemcpyAsync(h.data(), b.status, b.n * sizeof h[0],
                               cudaMemcpyDeviceToHost, c.s));
    CHECK_CUDA(cudaStreamSynchronize(c.s));
    for (size_t i = 0; i < b.n; i++)
        if (h[i] != nvcompSuccess) {
            *first_bad = h[i];
            return false;
        }
    return true;
}

template <typename T>
static void run_nvcomp(Ctx &c, DevData &dd, NvBatch &b, const char *name,
                       typename T::COpts co, typename T::DOpts dop,
                       double rel) {
    fzb_row r;
    row_init(r, dd);
    snprintf(r.codec, sizeof r.codec, "nvcomp-%s", name);
    snprintf(r.mode, sizeof r.mode, "%s", rel > 0 ? "REL" : "lossless");
    r.rel = rel;
    r.abs_bound = rel * dd.range;
    if (over_budget(c)) {
        snprintf(r.note, sizeof r.note, "skipped: time budget");
        emit(c, r);
        return;
    }
    nvcompStatus_t st;
    size_t max_out = 0, ctemp = 0, dtemp = 0;
    nvcompAlignmentRequirements_t al;
    st = T::c_max(NVC_CHUNK, co, &max_out);
    if (st == nvcompSuccess)
        st = T::c_align(co, &al);
    if (st == nvcompSuccess)
        st = T::c_temp(b.n, NVC_CHUNK, co, &ctemp, dd.bytes, c.s);
    if (st == nvcompSuccess)
        st = T::d_temp(b.n, NVC_CHUNK, dop, &dtemp, dd.bytes, c.s);
    if (st != nvcompSuccess) {
        snprintf(r.note, sizeof r.note, "error: %s", nvcompGetStatusString(st));
        emit(c, r);
        return;
    }
    size_t align = std::max<size_t>(256, al.output);
    size_t slot = (max_out + align - 1) / align * align;
    if (slot * b.n > b.comp_cap) {
        cudaFree(b.comp);
        b.comp_cap = slot * b.n;
        if (cudaMalloc(&b.comp, b.comp_cap) != cudaSuccess) {
            cudaGetLastError();
            b.comp = nullptr;
            b.comp_cap = 0;
            snprintf(r.note, sizeof r.note, "error: out of device memory");
            emit(c, r);
            return;
        }
    }
    void *temp = nullptr;
    const size_t temp_bytes = std::max(ctemp, dtemp);
    if (temp_bytes && cudaMalloc(&temp, temp_bytes) != cudaSuccess) {
        cudaGetLastError();
        snprintf(r.note, sizeof r.note, "error: out of device memory (temp)");
        emit(c, r);
        return;
    }
    fill_chunks<<<1024, 256, 0, c.s>>>(b.n, dd.bytes, (const char *)dd.in,
                                       (char *)b.comp, slot, b.in_ptrs,
                                       b.in_bytes, b.comp_ptrs);
    fill_chunks<<<1024, 256, 0, c.s>>>(
        b.n, dd.bytes, (const char *)dd.out, (char *)b.comp, slot,
        (const void **)b.dec_ptrs, b.dec_bytes, b.comp_ptrs);
    CHECK_CUDA(cudaGetLastError());
    double tc = 0, td = 0;
    nvcompStatus_t bad = nvcompSuccess;
    bool ok = time_ms(
        c, c.o.reps,
        [&] {
            st = T::compress(b.in_ptrs, b.in_bytes, NVC_CHUNK, b.n, temp,
                             temp_bytes, b.comp_ptrs, b.comp_bytes, co,
                             b.status, c.s);
            return st == nvcompSuccess;
        },
        &tc);
    CHECK_CUDA(cudaStreamSynchronize(c.s));
    if (ok && !statuses_ok(c, b, &bad)) {
        ok = false;
        st = bad;
    }
    size_t csize = 0;
    if (ok) {
        std::vector<size_t> sizes(b.n);
        CHECK_CUDA(cudaMemcpy(sizes.data(), b.comp_bytes, b.n * sizeof(size_t),
                              cudaMemcpyDeviceToHost));
        for (size_t s : sizes)
            csize += s + 8;
        CHECK_CUDA(cudaMemsetAsync(dd.out, 0, dd.bytes, c.s));
        /* decode capacities: the chunk sizes (dec_bytes holds them) */
        ok = time_ms(
            c, c.o.reps,
            [&] {
                st = T::decompress((const void *const *)b.comp_ptrs,
                                   b.comp_bytes, b.dec_bytes, b.act_bytes, b.n,
                                   temp, temp_bytes, b.dec_ptrs, dop, b.status,
                                   c.s);
                return st == nvcompSuccess;
            },
            &td);
        CHECK_CUDA(cudaStreamSynchronize(c.s));
        if (ok && !statuses_ok(c, b, &bad)) {
            ok = false;
            st = bad;
        }
    }
    cudaFree(temp);
    if (!ok) {
        snprintf(r.note, sizeof r.note, "error: %s", nvcompGetStatusString(st));
        emit(c, r);
        return;
    }
    fzb_errors e = device_check(c, dd.dtype, dd.in, dd.out, dd.count, rel == 0,
                                r.abs_bound, dd.range, dd.err);
    r.measured = 1;
    r.cr = (double)dd.bytes / (double)csize;
    r.comp_gbs = (double)dd.bytes / (tc * 1e6);
    r.decomp_gbs = (double)dd.bytes / (td * 1e6);
    r.max_err = e.max_err;
    r.psnr = e.psnr;
    r.violations = e.violations;
    snprintf(r.note, sizeof r.note, "%s", dd.note);
    emit(c, r);
}

static void run_nvcomp_all(Ctx &c, DevData &dd) {
    NvBatch b;
    b.n = (dd.bytes + NVC_CHUNK - 1) / NVC_CHUNK;
    CHECK_CUDA(cudaMalloc(&b.in_ptrs, b.n * sizeof(void *)));
    CHECK_CUDA(cudaMalloc(&b.in_bytes, b.n * sizeof(size_t)));
    CHECK_CUDA(cudaMalloc(&b.dec_ptrs, b.n * sizeof(void *)));
    CHECK_CUDA(cudaMalloc(&b.dec_bytes, b.n * sizeof(size_t)));
    CHECK_CUDA(cudaMalloc(&b.act_bytes, b.n * sizeof(size_t)));
    CHECK_CUDA(cudaMalloc(&b.comp_ptrs, b.n * sizeof(void *)));
    CHECK_CUDA(cudaMalloc(&b.comp_bytes, b.n * sizeof(size_t)));
    CHECK_CUDA(cudaMalloc(&b.status, b.n * sizeof(nvcompStatus_t)));
    const bool f32 = dd.dtype == FZ_F32;
    const nvcompType_t itype = f32 ? NVCOMP_TYPE_UINT : NVCOMP_TYPE_ULONGLONG;

    {
        NvBitcomp::COpts co = nvcompBatchedBitcompCompressDefaultOpts;
        co.data_type = itype;
        run_nvcomp<NvBitcomp>(c, dd, b, "bitcomp", co,
                              nvcompBatchedBitcompDecompressDefaultOpts, 0);
    }
    {
        NvCascaded::COpts co = nvcompBatchedCascadedCompressDefaultOpts;
        co.common_opts.data_type = itype;
        NvCascaded::DOpts dop = nvcompBatchedCascadedDecompressDefaultOpts;
        dop.common_opts = co.common_opts;
        run_nvcomp<NvCascaded>(c, dd, b, "cascaded", co, dop, 0);
    }
    run_nvcomp<NvANS>(c, dd, b, "ans", nvcompBatchedANSCompressDefaultOpts,
                      nvcompBatchedANSDecompressDefaultOpts, 0);
    if (f32) {
        NvANS::COpts co = nvcompBatchedANSCompressDefaultOpts;
        co.data_type = NVCOMP_TYPE_FLOAT32;
        run_nvcomp<NvANS>(c, dd, b, "ans-f32", co,
                          nvcompBatchedANSDecompressDefaultOpts, 0);
    }
    run_nvcomp<NvLZ4>(c, dd, b, "lz4", nvcompBatchedLZ4CompressDefaultOpts,
                      nvcompBatchedLZ4DecompressDefaultOpts, 0);
    {
        NvLZ4::COpts co = nvcompBatchedLZ4CompressDefaultOpts;
        co.data_type = itype;
        co.bitshuffle_mode = NVCOMP_BITSHUFFLE_MSB_FIRST;
        NvLZ4::DOpts dop = nvcompBatchedLZ4DecompressDefaultOpts;
        dop.data_type = itype;
        dop.bitshuffle_mode = NVCOMP_BITSHUFFLE_MSB_FIRST;
        run_nvcomp<NvLZ4>(c, dd, b, "lz4-bitshuf", co, dop, 0);
    }
    for (int m = 0; m < nrel; m++) {
        /* error <= delta / 2, delta rounded down to a power of two */
        const double delta = 2.0 * rel_bounds[m] * dd.range;
        const double lo = f32 ? (double)FLT_MIN : DBL_MIN;
        const double hi = f32 ? (double)FLT_MAX : DBL_MAX;
        if (!(delta >= lo && delta <= hi)) {
            fzb_row r;
            row_init(r, dd);
            snprintf(r.codec, sizeof r.codec, "nvcomp-bitcomp-lossy");
            snprintf(r.mode, sizeof r.mode, "REL");
            r.rel = rel_bounds[m];
            snprintf(r.note, sizeof r.note, "n/a: delta %g not normal", delta);
            emit(c, r);
            continue;
        }
        NvBitcomp::COpts co = nvcompBatchedBitcompCompressDefaultOpts;
        co.data_type = f32 ? NVCOMP_TYPE_FLOAT32 : NVCOMP_TYPE_FLOAT64;
        co.mode = BITCOMP_LOSSY_FP_TO_SIGNED;
        co.delta = delta;
        run_nvcomp<NvBitcomp>(c, dd, b, "bitcomp-lossy", co,
                              nvcompBatchedBitcompDecompressDefaultOpts,
                              rel_bounds[m]);
    }
    run_nvcomp<NvGdeflate>(c, dd, b, "gdeflate",
                           nvcompBatchedGdeflateCompressDefaultOpts,
                           nvcompBatchedGdeflateDecompressDefaultOpts, 0);
    run_nvcomp<NvZstd>(c, dd, b, "zstd", nvcompBatchedZstdCompressDefaultOpts,
                       nvcompBatchedZstdDecompressDefaultOpts, 0);
    cudaFree(b.in_ptrs);
    cudaFree(b.in_bytes);
    cudaFree(b.dec_ptrs);
    cudaFree(b.dec_bytes);
    cudaFree(b.act_bytes);
    cudaFree(b.comp_ptrs);
    cudaFree(b.comp_bytes);
    cudaFree(b.status);
    cudaFree(b.comp);
}
#endif

/* --------------------------------------------------------------- the run */
static void run_dataset(Ctx &c, const fzb_dataset &d) {
    DevData dd;
    memset(&dd, 0, sizeof dd);
    dd.d = &d;
    dd.dtype = d.dtype;
    const size_t target = (size_t)(c.o.gib * 1073741824.0);
    dd.tiles = std::max<size_t>(1, (target + d.bytes - 1) / d.bytes);
    dd.bytes = d.bytes * dd.tiles;
    dd.count = d.count * dd.tiles;
    dd.ndims = d.ndims;
    memcpy(dd.dims, d.dims, sizeof dd.dims);
    if (d.ndims == 3)
        dd.dims[2] *= dd.tiles;
    else
        dd.dims[0] = dd.count;
    snprintf(dd.note, sizeof dd.note, "tiled x%zu", dd.tiles);
    dd.range = fzb_finite_range(d.dtype, d.data, d.count);
    char shape[64];
    fzb_shape_string(&d, shape, sizeof shape);
    fprintf(stderr, "== %s %s %s: %.2f MiB tiled x%zu to %.0f MiB (%s)\n",
            d.name, d.dtype == FZ_F32 ? "f32" : "f64", shape,
            d.bytes / 1048576.0, dd.tiles, dd.bytes / 1048576.0, d.source);
    if (c.o.no_floatz && over_budget(c)) {
        /* past the budget with only peers to run: no upload, every peer
         * row says skipped */
#ifdef FZB_HAVE_NVCOMP
        if (!c.o.no_nvcomp)
            run_nvcomp_all(c, dd);
#endif
        return;
    }
    if (cudaMalloc(&dd.in, dd.bytes) != cudaSuccess ||
        cudaMalloc(&dd.out, dd.bytes) != cudaSuccess) {
        cudaGetLastError();
        fprintf(stderr, "bench_gpu_peers: no device memory for %s\n", d.name);
        cudaFree(dd.in);
        return;
    }
    CHECK_CUDA(cudaMalloc(&dd.err, sizeof(DevErr)));
    /* tile: one upload, then doubling device-to-device copies */
    CHECK_CUDA(cudaMemcpy(dd.in, d.data, d.bytes, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaDeviceSynchronize()); /* pageable copy: DMA done */
    for (size_t have = d.bytes; have < dd.bytes;) {
        size_t n = std::min(have, dd.bytes - have);
        CHECK_CUDA(cudaMemcpyAsync((char *)dd.in + have, dd.in, n,
                                   cudaMemcpyDeviceToDevice, c.s));
        have += n;
    }
    double tm = 0;
    time_ms(
        c, c.o.reps,
        [&] {
            CHECK_CUDA(cudaMemcpyAsync(dd.out, dd.in, dd.bytes,
                                       cudaMemcpyDeviceToDevice, c.s));
            return true;
        },
        &tm);
    dd.memcpy_gbs = (double)dd.bytes / (tm * 1e6);

    if (!c.o.no_floatz)
        run_floatz(c, dd);
#ifdef FZB_HAVE_NVCOMP
    if (!c.o.no_nvcomp)
        run_nvcomp_all(c, dd);
#endif
    cudaFree(dd.in);
    cudaFree(dd.out);
    cudaFree(dd.err);
}

static void describe(FILE *f, const Ctx &c, const cudaDeviceProp &prop,
                     double h2d, double d2h, double d2d) {
    fprintf(f,
            "- GPU: %s (%d SMs, %.0f GiB); floatz %s (device API, "
            "checksums on)%s\n",
            prop.name, prop.multiProcessorCount,
            prop.totalGlobalMem / 1073741824.0, fz_version_string(),
            c.o.no_floatz ? ": not run here (--no-floatz)" : "");
#ifdef FZB_HAVE_NVCOMP
    nvcompProperties_t np;
    if (c.o.no_nvcomp)
        fprintf(f, "- nvCOMP: not run (--no-nvcomp)\n");
    else if (nvcompGetProperties(&np) == nvcompSuccess)
        fprintf(f,
                "- nvCOMP %u.%u.%u (built with CUDA runtime %u), "
                "low-level batched C API, 64 KiB chunks, +8 B per chunk "
                "in CR\n",
                np.version / 1000, np.version % 1000 / 100, np.version % 100,
                np.cudart_version);
    else
        fprintf(f, "- nvCOMP: present, version unknown\n");
#else
    (void)c;
    fprintf(f, "- nvCOMP absent (not found at build time: set FZ_NVCOMP_ROOT "
               "or install the nvidia-libnvcomp-cu13 wheel)\n");
#endif
    fprintf(f,
            "- every input tiled on the device to >= %.2f GiB (the row "
            "note says how many copies); timed: CUDA events around the "
            "call, 2 warm-ups, median of %d (calls > 20 ms: 1 warm-up, "
            "median of <= 5; > 100 ms: of 3)\n",
            c.o.gib, c.o.reps);
    fprintf(f,
            "- limits (%.2f GiB): cudaMemcpy D2D %.0f GB/s (per dataset "
            "in the CSV), pinned H2D %.1f GB/s, pinned D2H %.1f GB/s\n",
            c.o.gib, d2d, h2d, d2h);
}

int main(int argc, char **argv) {
    Ctx c;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : nullptr;
        if (!strcmp(a, "--gib") && v)
            c.o.gib = atof(v), i++;
        else if (!strcmp(a, "--reps") && v)
            c.o.reps = atoi(v), i++;
        else if (!strcmp(a, "--budget-s") && v)
            c.o.budget_s = atof(v), i++;
        else if (!strcmp(a, "--csv") && v)
            c.o.csv = v, i++;
        else if (!strcmp(a, "--markdown") && v)
            c.o.markdown = v, i++;
        else if (!strcmp(a, "--no-nvcomp"))
            c.o.no_nvcomp = true;
        else if (!strcmp(a, "--no-floatz"))
            c.o.no_floatz = true;
        else if (!strcmp(a, "--data") && v)
            c.o.specs.push_back(v), i++;
        else {
            fprintf(stderr,
                    "usage: bench_gpu_peers [--gib G] [--reps N] [--budget-s "
                    "S] [--csv FILE] [--markdown FILE] [--no-nvcomp] "
                    "[--no-floatz] --data NAME:TYPE:SHAPE:PATH ...\n");
            return 2;
        }
    }
    if (c.o.gib <= 0 || c.o.reps < 1 || c.o.specs.empty()) {
        fprintf(stderr,
                "bench_gpu_peers: need --data, positive --gib/--reps\n");
        return 2;
    }
    if (fz_gpu_count() == 0) {
        fprintf(stderr, "bench_gpu_peers: no CUDA device\n");
        return 1;
    }
    cudaDeviceProp prop;
    CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
    CHECK_CUDA(cudaStreamCreateWithFlags(&c.s, cudaStreamNonBlocking));
    CHECK_CUDA(cudaEventCreate(&c.ev0));
    CHECK_CUDA(cudaEventCreate(&c.ev1));
    if (c.o.csv) {
        c.csv = fopen(c.o.csv, "w");
        if (!c.csv) {
            fprintf(stderr, "bench_gpu_peers: cannot write %s\n", c.o.csv);
            return 1;
        }
        fzb_csv_header(c.csv);
    }
    c.t_start = fzb_now();

    /* the copy limits at the tile size */
    const size_t lim = (size_t)(c.o.gib * 1073741824.0);
    void *h = nullptr, *d0 = nullptr, *d1 = nullptr;
    CHECK_CUDA(cudaMallocHost(&h, lim));
    CHECK_CUDA(cudaMalloc(&d0, lim));
    CHECK_CUDA(cudaMalloc(&d1, lim));
    memset(h, 1, lim);
    double th = 0, tdh = 0, tdd = 0;
    const int lreps = std::min(c.o.reps, 5);
    time_ms(
        c, lreps,
        [&] {
            CHECK_CUDA(
                cudaMemcpyAsync(d0, h, lim, cudaMemcpyHostToDevice, c.s));
            return true;
        },
        &th);
    time_ms(
        c, lreps,
        [&] {
            CHECK_CUDA(
                cudaMemcpyAsync(h, d0, lim, cudaMemcpyDeviceToHost, c.s));
            return true;
        },
        &tdh);
    time_ms(
        c, c.o.reps,
        [&] {
            CHECK_CUDA(
                cudaMemcpyAsync(d1, d0, lim, cudaMemcpyDeviceToDevice, c.s));
            return true;
        },
        &tdd);
    cudaFreeHost(h);
    cudaFree(d0);
    cudaFree(d1);
    const double h2d = lim / (th * 1e6), d2h = lim / (tdh * 1e6),
                 d2d = lim / (tdd * 1e6);
    describe(stderr, c, prop, h2d, d2h, d2d);

    for (const char *spec : c.o.specs) {
        fzb_dataset d;
        char err[256];
        if (fzb_load(spec, &d, err, sizeof err) != 0) {
            fprintf(stderr, "bench_gpu_peers: %s (skipped)\n", err);
            continue;
        }
        run_dataset(c, d);
        fzb_free(&d);
    }
    const double elapsed = fzb_now() - c.t_start;
    FILE *outs[2] = {stdout, nullptr};
    if (c.o.markdown && !(outs[1] = fopen(c.o.markdown, "w")))
        fprintf(stderr, "bench_gpu_peers: cannot write %s\n", c.o.markdown);
    for (FILE *f : outs) {
        if (!f)
            continue;
        describe(f, c, prop, h2d, d2h, d2d);
        fprintf(f, "- run time %.0f s%s\n\n", elapsed,
                c.o.budget_s > 0 ? " (nvCOMP rows past the time budget are "
                                   "skipped)"
                                 : "");
        fzb_md_header(f);
        for (const fzb_row &r : c.rows)
            fzb_md_row(f, &r);
        if (f != stdout)
            fclose(f);
    }
    if (c.csv)
        fclose(c.csv);
    return c.floatz_failed ? 1 : 0;
}
