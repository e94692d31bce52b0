// Falcon's GPU kernels (src/codecs/falcon/falcon_gpu.cu: the warp kernel
// and the reference kernel) run on the host by a lock-step warp emulator,
// against the CPU codec: the stream bytes, the decoded values, and the
// accept/reject decision (and output) for every byte flip of small streams.
//
// Lanes are coroutines on one OS thread. A warp collective (shuffle,
// ballot, vote, reduction) posts the lane's value and yields; once all 32
// lanes have posted, each lane reads the round's values (stub/
// cuda_runtime.h). Warps are interleaved at collectives, so the decoupled
// look-back's spin-waits make progress. Not modelled: timing, memory
// ordering between warps, shared-memory banks; a collective reached by a
// subset of the lanes is reported as divergence.
//
// ctest runs it (quick, one test per kernel) where a C++ compiler is
// available; by hand: tools/falcon_warp_emu/run.sh [quick] [warp|reference]
#define FALCON_GPU_EMULATION
#include "codecs/falcon/falcon_gpu.cu"

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include "api/fz_internal.h"
extern "C" {
#include "falcon_data.h"
}

EmuWarp *emu_warp;
unsigned emu_lane;
EmuIdx threadIdx;
/* The kernels' dynamic shared memory: the emulated warps are the warps of
 * one block (warp w: threads 32 w..32 w + 31), each with its part of it;
 * the kernels' block-scope extern names this unnamed-namespace array. */
namespace {
alignas(16) uint8_t smem_raw[96 * 1024];
}

/* ------------------------------------------------------------ coroutines */
#if defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
/* Save the callee-saved registers on the current stack, switch stacks,
 * restore them from the other stack (System V x86-64). */
extern "C" void emu_switch(void **save, void *load);
asm(".text\n.globl emu_switch\n.type emu_switch,@function\nemu_switch:\n"
    "pushq %rbp\npushq %rbx\npushq %r12\npushq %r13\npushq %r14\npushq %r15\n"
    "movq %rsp, (%rdi)\nmovq %rsi, %rsp\n"
    "popq %r15\npopq %r14\npopq %r13\npopq %r12\npopq %rbx\npopq %rbp\n"
    "ret\n");
static void *sched_sp;
static void ctx_init(EmuLane &ln, size_t size, void (*entry)()) {
    uintptr_t top = (uintptr_t)(ln.stack + size) & ~(uintptr_t)15;
    void **sp = (void **)top;
    *--sp = nullptr;       /* entry's return address (never used) */
    *--sp = (void *)entry; /* where emu_switch's ret goes */
    for (int i = 0; i < 6; i++)
        *--sp = nullptr; /* rbp, rbx, r12..r15 */
    ln.sp = sp;
}
static void ctx_resume(EmuLane &ln) {
    emu_switch(&sched_sp, ln.sp);
}
void emu_yield() {
    emu_switch(&emu_warp->lane[emu_lane].sp, sched_sp);
}
static void ctx_free(EmuLane &) {}
#else
#include <ucontext.h>
static ucontext_t sched_ctx;
static void ctx_init(EmuLane &ln, size_t size, void (*entry)()) {
    ucontext_t *c = new ucontext_t;
    getcontext(c);
    c->uc_stack.ss_sp = ln.stack;
    c->uc_stack.ss_size = size;
    c->uc_link = nullptr;
    makecontext(c, entry, 0);
    ln.sp = c;
}
static void ctx_resume(EmuLane &ln) {
    swapcontext(&sched_ctx, (ucontext_t *)ln.sp);
}
void emu_yield() {
    swapcontext((ucontext_t *)emu_warp->lane[emu_lane].sp, &sched_ctx);
}
static void ctx_free(EmuLane &ln) {
    delete (ucontext_t *)ln.sp;
}
#endif

static const std::function<void()> *g_fn;
static const size_t kStack = 1 << 20;

static void lane_main() {
    (*g_fn)();
    emu_warp->lane[emu_lane].done = true;
    emu_yield(); /* never resumed */
    abort();
}

/* Round-robin over the warps; a warp advances one collective round at a
 * time: each of its 32 lanes runs to its next collective or to its end. */
static void run_warps(int warps, const std::function<void()> &fn) {
    g_fn = &fn;
    std::vector<EmuWarp *> ws;
    for (int w = 0; w < warps; w++) {
        EmuWarp *wp = new EmuWarp();
        for (unsigned l = 0; l < 32; l++) {
            wp->lane[l].stack = new char[kStack];
            wp->lane[l].done = false;
            wp->lane_round[l] = 0;
            ctx_init(wp->lane[l], kStack, lane_main);
        }
        ws.push_back(wp);
    }
    std::vector<bool> finished(warps, false);
    for (int live = warps; live;) {
        for (int w = 0; w < warps; w++) {
            if (finished[w])
                continue;
            EmuWarp *wp = ws[w];
            int done = 0;
            for (unsigned l = 0; l < 32; l++) {
                emu_warp = wp;
                emu_lane = l;
                threadIdx.x = 32 * (unsigned)w + l; /* one block */
                ctx_resume(wp->lane[l]);
                done += wp->lane[l].done;
            }
            for (unsigned l = 1; l < 32; l++)
                if (wp->lane_round[l] != wp->lane_round[0] ||
                    wp->lane[l].done != wp->lane[0].done) {
                    fprintf(stderr, "warp divergence at a collective\n");
                    exit(2);
                }
            if (done == 32) {
                finished[w] = true;
                live--;
            }
        }
    }
    for (auto *wp : ws) {
        for (auto &ln : wp->lane) {
            ctx_free(ln);
            delete[] ln.stack;
        }
        delete wp;
    }
}

/* --------------------------------------------------- the device API part */
static bool g_reference = false; /* which kernel */
static int g_warps = 3;          /* concurrent warps (reference: 1) */

struct Scratch {
    std::vector<uint64_t> mem;
    fz_gpu_scratch *head;
    unsigned long long *words;
    static constexpr uint64_t kHead = FZ_GPU_SCRATCH_HEAD / 8;
    explicit Scratch(uint64_t n) : mem(kHead + n + 2, 0) {
        head = reinterpret_cast<fz_gpu_scratch *>(mem.data());
        words = reinterpret_cast<unsigned long long *>(mem.data() + kHead);
    }
};

template <typename T> static void kernel(const fz_gpu_args &a, bool enc) {
    if (g_reference) {
        if (enc)
            falcon_compress_ref<T>(a);
        else
            falcon_decompress_ref<T>(a);
    } else {
        if (enc)
            falcon_compress_warp<T>(a);
        else if (a.verify)
            falcon_decompress_warp<T, true>(a);
        else
            falcon_decompress_warp<T, false>(a);
    }
}

static void launch(const fz_gpu_args &a, bool enc) {
    if (a.expect.chunk_count == 0)
        return;
    if ((size_t)g_warps * WarpSmem<uint64_t>::encode > sizeof smem_raw) {
        fprintf(stderr, "emulated shared memory too small\n");
        exit(2);
    }
    run_warps(g_reference ? 1 : g_warps, [&] {
        if (a.expect.dtype == 1)
            kernel<uint32_t>(a, enc);
        else
            kernel<uint64_t>(a, enc);
    });
}

/* fz_device_compress + finalize_compress (device_api.cu). */
static int emu_compress(const fz_params *p, const void *src,
                        std::vector<uint8_t> &out) {
    fz_gpu_args a;
    memset(&a, 0, sizeof a);
    if (fz_header_from_params(p, &a.expect) != FZ_OK)
        return -1;
    size_t bound = 0;
    fz_compress_bound(p, &bound);
    out.assign(bound, 0xEE);
    Scratch s(a.expect.chunk_count);
    a.scratch = s.head;
    a.lookback = s.words;
    a.payload_off = fz_payload_offset(&a.expect);
    a.src = static_cast<const uint8_t *>(src);
    a.dst = out.data();
    a.src_size = a.expect.original_bytes;
    a.dst_capacity = bound;
    fz_header_write(&a.expect, a.header);
    launch(a, true);
    if (s.head->status)
        return s.head->status;
    const uint64_t table_bytes = fz_table_bytes(&a.expect);
    for (uint64_t i = FZ_HDR_BYTES + table_bytes; i < a.payload_off; i++)
        out[i] = 0;
    memcpy(out.data(), a.header, FZ_HDR_BYTES);
    fz_header_finalize(out.data(), s.head->payload_total,
                       fz_hash_final(s.head->table_sum, table_bytes / 4));
    out.resize(a.payload_off + s.head->payload_total);
    return 0;
}

/* fz_device_decompress: the CUB scan, the kernel, finalize_decompress. */
static int emu_decompress(const fz_params *p, const uint8_t *stream,
                          size_t size, std::vector<uint8_t> &out, int verify) {
    fz_gpu_args a;
    memset(&a, 0, sizeof a);
    if (fz_header_from_params(p, &a.expect) != FZ_OK)
        return -1;
    const uint64_t n = a.expect.chunk_count;
    out.assign(a.expect.original_bytes, 0xCD);
    Scratch s(n + 1);
    a.scratch = s.head;
    a.offsets = s.words;
    a.payload_off = fz_payload_offset(&a.expect);
    a.src = stream;
    a.dst = out.data();
    a.src_size = size;
    a.dst_capacity = out.size();
    a.verify = verify;
    unsigned long long sum = 0;
    for (uint64_t c = 0; c <= n; c++) {
        a.offsets[c] = sum;
        if (c < n && size >= FZ_HDR_BYTES) {
            const uint64_t entry = fz_table_entry_bytes(stream[FZ_OFF_FLAGS]);
            const uint64_t pos = FZ_HDR_BYTES + c * entry;
            sum += pos + 4 <= size ? fz_load32(stream + pos) : 0;
        }
    }
    launch(a, false);
    int status = s.head->status;
    fz_header h;
    if (status == 0)
        status = fz_gpu_check_stream(a, &h);
    if (status == 0 && a.offsets[n] != h.payload_bytes)
        status = FZS_CORRUPT_HEADER;
    if (status == 0 && fz_hash_final(s.head->table_sum,
                                     fz_table_bytes(&h) / 4) != h.table_hash)
        status = FZS_TABLE_CHECKSUM;
    return status;
}

/* ----------------------------------------------------------------- checks */
static unsigned cases, flips;

[[noreturn]] static void fail(const char *what, const char *ctx) {
    fprintf(stderr, "FAIL [%s kernel]: %s (%s)\n",
            g_reference ? "reference" : "warp", what, ctx);
    exit(1);
}

/* A version 1 stream (fz_hash data checksums) decodes and is verified as
 * such: the decoder's second pass over its output (version1_checksum). */
static void check_version1(const fz_params &p, const std::vector<uint8_t> &v2,
                           const void *src, size_t bytes, const char *ctx) {
    std::vector<uint8_t> v1 = v2, dec;
    tu_restamp_version(v1.data(), v1.size(), src, 1, FZ_SUM_MIX);
    if (emu_decompress(&p, v1.data(), v1.size(), dec, 1) ||
        memcmp(dec.data(), src, bytes))
        fail("version 1 stream", ctx);
    tu_restamp_version(v1.data(), v1.size(), src, 1, FZ_SUM_SQUARE);
    if (emu_decompress(&p, v1.data(), v1.size(), dec, 1) != FZS_DATA_CHECKSUM)
        fail("version 1 stream with version 2 checksums accepted", ctx);
}

static void check_case(const fz_params &p, const void *src, size_t bytes,
                       const char *ctx, bool damage) {
    size_t bound = 0, size = 0;
    fz_compress_bound(&p, &bound);
    std::vector<uint8_t> cpu(bound);
    fz_params q = p;
    q.threads = 1;
    if (fz_compress(&q, src, bytes, cpu.data(), bound, &size) != FZ_OK)
        fail("cpu compress", ctx);
    cpu.resize(size);
    std::vector<uint8_t> gpu, dec;
    if (emu_compress(&p, src, gpu))
        fail("compress status", ctx);
    if (gpu != cpu) {
        size_t k = 0;
        while (k < gpu.size() && k < cpu.size() && gpu[k] == cpu[k])
            k++;
        fprintf(stderr,
                "sizes %zu (emulated) %zu (cpu), first difference at "
                "byte %zu\n",
                gpu.size(), cpu.size(), k);
        fail("stream bytes differ", ctx);
    }
    for (int v = 0; v < 2; v++) {
        if (emu_decompress(&p, cpu.data(), cpu.size(), dec, v))
            fail("decompress status", ctx);
        if (bytes && memcmp(dec.data(), src, bytes))
            fail("decompressed values", ctx);
    }
    if (!(p.flags & FZ_FLAG_NO_CHECKSUM) && bytes)
        check_version1(p, cpu, src, bytes, ctx);
    cases++;
    if (!damage)
        return;
    const uint8_t masks[] = {0x01, 0x10, 0x80, 0xFF};
    std::vector<uint8_t> copy = cpu, cdec(bytes ? bytes : 1);
    for (size_t pos = 0; pos < copy.size(); pos++)
        for (uint8_t m : masks) {
            copy[pos] ^= m;
            fz_decode_options o;
            memset(&o, 0, sizeof o);
            o.threads = 1;
            size_t got;
            const int cs = fz_decompress(copy.data(), copy.size(), cdec.data(),
                                         bytes, &o, &got);
            const int gs = emu_decompress(&p, copy.data(), copy.size(), dec, 1);
            if ((cs == 0) != (gs == 0)) {
                fprintf(stderr,
                        "byte %zu ^ 0x%02x: cpu status %d, emulated "
                        "%d\n",
                        pos, m, cs, gs);
                fail("accept/reject differs", ctx);
            }
            if (cs == 0 && bytes && memcmp(cdec.data(), dec.data(), bytes))
                fail("damaged stream decodes differently", ctx);
            copy[pos] ^= m;
            flips++;
        }
}

/* The narrow transposes (deltas or planes of width <= 8, 16 or 24) against
 * transpose32 on random matrices, widths 0..W: rows q < width of the
 * encoder's form, every row of the decoder's. */
template <int W> static void check_narrow(uint64_t *rng) {
    for (int t = 0; t < 20000; t++) {
        const int width = t % (W + 1);
        const uint32_t keep = width == 32 ? ~0u : (1u << width) - 1;
        uint32_t x[32], full[32], narrow[32];
        for (int b = 0; b < 32; b++) {
            *rng = *rng * 6364136223846793005ull + 1442695040888963407ull;
            x[b] = (uint32_t)(*rng >> 32) & keep;
            full[b] = narrow[b] = x[b];
        }
        transpose32(full);
        transpose_narrow<W>(narrow);
        for (int q = 0; q < width; q++)
            if (narrow[q] != full[q])
                fail("transpose_narrow differs from transpose32", "");
        /* planes: full holds rows q < width, zero above */
        for (int q = 0; q < 32; q++)
            narrow[q] = full[q];
        transpose32(full);
        untranspose_narrow<W>(narrow);
        for (int b = 0; b < 32; b++)
            if (narrow[b] != x[b] || full[b] != x[b])
                fail("untranspose_narrow differs from transpose32", "");
    }
}

static void run_all(bool quick) {

    char ctx[200];
    const fz_dtype dts[] = {FZ_F32, FZ_F64};
    const size_t sizes[] = {1, 2, 3, 33, 100, 1025, 1026, 2100};
    for (fz_dtype dt : dts)
        for (size_t n : sizes)
            for (int g = 0; g < FD_COUNT; g++)
                for (int32_t chunk : {0, 40, 7}) {
                    if ((quick || n > 1026) && chunk == 7)
                        continue;
                    std::vector<uint8_t> src(n * 8);
                    fd_fill((fd_gen)g, dt, src.data(), n, n + (uint64_t)g);
                    snprintf(ctx, sizeof ctx, "%s %s n=%zu chunk=%d",
                             tu_dtype_name(dt), fd_gen_name((fd_gen)g), n,
                             chunk);
                    /* odd sizes with checksums, even ones without */
                    fz_params p = fd_params(dt, n, (n & 1) ? 0 : 1, chunk);
                    const bool damage = !quick && chunk == 0 &&
                                        (n == 3 || n == 100) &&
                                        (g % 3 == (int)(n & 1) || g == 5);
                    check_case(p, src.data(), n * tu_dtype_size(dt), ctx,
                               damage);
                }
    for (fz_dtype dt : dts)
        for (int g = 0; g < TU_GEN_COUNT; g++)
            for (size_t n : {5, 1025, 3000}) {
                std::vector<uint8_t> src(n * 8);
                tu_fill((tu_gen)g, dt, src.data(), n, n);
                snprintf(ctx, sizeof ctx, "%s shared %s n=%zu",
                         tu_dtype_name(dt), tu_gen_name((tu_gen)g), n);
                fz_params p = fd_params(dt, n, 1, 0);
                check_case(p, src.data(), n * tu_dtype_size(dt), ctx,
                           n == 5 && !quick);
            }
    /* default chunks, several per warp (three warps), so that a warp's
     * guess from its last chunk is tried on 1025 values: late_miss's
     * guesses fail rows into the chunk, whose integers are put back */
    for (fz_dtype dt : dts)
        for (uint32_t flags : {0u, (uint32_t)FZ_FLAG_NO_CHECKSUM}) {
            const size_t n = 12 * 1025 + 7;
            std::vector<uint8_t> src(n * 8);
            fd_fill(FD_LATE_MISS, dt, src.data(), n, 17);
            snprintf(ctx, sizeof ctx, "%s late_miss n=%zu%s", tu_dtype_name(dt),
                     n, flags ? " no checksums" : "");
            check_case(fd_params(dt, n, flags, 0), src.data(),
                       n * tu_dtype_size(dt), ctx, false);
        }
}

int main(int argc, char **argv) {
    bool quick = false;
    const char *only = nullptr;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "quick") == 0)
            quick = true;
        else if (strcmp(argv[i], "warp") == 0 ||
                 strcmp(argv[i], "reference") == 0)
            only = argv[i];
        else {
            fprintf(stderr, "usage: falcon_warp_emu [quick] "
                            "[warp|reference]\n");
            return 2;
        }
    }
    uint64_t rng = 12345;
    check_narrow<8>(&rng);
    check_narrow<16>(&rng);
    check_narrow<24>(&rng);
    printf("narrow transposes: as transpose32\n");
    for (int k = 0; k < 2; k++) {
        g_reference = k == 1;
        if (only && strcmp(only, g_reference ? "reference" : "warp") != 0)
            continue;
        cases = flips = 0;
        run_all(quick);
        printf("%s kernel: %u cases, %u damaged streams: all as the CPU\n",
               g_reference ? "reference" : "warp", cases, flips);
    }
    return 0;
}
