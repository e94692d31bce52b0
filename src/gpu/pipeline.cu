/* Host API on the GPU (FZ_EXEC_GPU): a multi-stream pipeline over batches
 * of whole chunks, after Falcon's event-driven scheduler (docs/PIPELINE.md).
 *
 * Compression, batch b on stream b % N: H2D of the batch (from the user's
 * buffer when it is pinned, else through a pinned staging buffer), the
 * device API compresses it into a stand-alone sub-stream, then only its
 * result record and table entries come back (small D2H) and an event is
 * recorded. The host takes the events in launch order: each batch's output
 * offset is then known, so its payload D2H goes straight to its final place
 * in dst. Batches land contiguously with no merge step and no over-sized
 * output buffer; the host writes the header and table hash at the end.
 * Decompression knows every size from the table: each batch's sub-stream
 * (header built on the host, table slice, payload) goes up, is decoded, and
 * comes back to its place in dst. REL: sleek compresses at once with the
 * bound of a sample of the input while each batch's range is reduced on
 * the device, and redoes the batches on a miss (run_speculating); other
 * codecs upload the batches that fit once, keep them on the device while
 * their ranges are reduced there, and compress them from there once the
 * bound is known (resolve_range). */
#include <cfloat>
#include <initializer_list>
#include <mutex>
#include <new>
#include <stdlib.h>
#include <string.h>

#include "../api/fz_internal.h"
#include "fz_gpu.cuh"

namespace {

/* The default batch: a 32nd of the call's data, from 8 to 64 MiB. A call
 * pins 2 x batch of staging per stream for pageable buffers, at 1.4-2.6
 * GB/s on the H100 host: a one-off 0.25 GiB call ran at 1.4-2.0 GB/s with
 * 64 MiB batches and 6-8 GB/s with 8 MiB ones, while 4 GiB of repeated
 * pageable calls needs 64 MiB (falcon 39 GB/s, 24 at 8 MiB; s120). */
constexpr uint64_t kMaxDefaultBatchBytes = 64ull << 20;
constexpr uint64_t kMinDefaultBatchBytes = 8ull << 20;
constexpr uint64_t kDefaultBatchesPerCall = 32;
constexpr uint64_t kMinBatchBytes = 1ull << 20; /* out-of-memory retries */

fz_status from_cuda(cudaError_t e) {
    if (e == cudaSuccess)
        return FZ_OK;
    cudaGetLastError(); /* clear a non-sticky error */
    if (e == cudaErrorMemoryAllocation)
        return FZ_ERR_OUT_OF_MEMORY;
    if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver)
        return FZ_ERR_NO_GPU;
    return FZ_ERR_CUDA;
}

enum class Memory { Pageable, Pinned, Device };

Memory memory_at(const void *p) {
    cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
        cudaGetLastError();
        return Memory::Pageable;
    }
    if (a.type == cudaMemoryTypeHost)
        return Memory::Pinned;
    return a.type == cudaMemoryTypeDevice ? Memory::Device : Memory::Pageable;
}

/* Pinned only if both ends are (else CUDA would stage it synchronously). */
Memory memory_of(const void *p, size_t n) {
    if (!p || n == 0)
        return Memory::Pageable;
    const Memory first = memory_at(p);
    const Memory last = memory_at(static_cast<const uint8_t *>(p) + n - 1);
    if (first == Memory::Device || last == Memory::Device)
        return Memory::Device;
    return first == Memory::Pinned && last == Memory::Pinned ? Memory::Pinned
                                                             : Memory::Pageable;
}

/* Two streams: while one batch is copied up, the other is coded and copied
 * down. Measured on an H100 (docs/PIPELINE.md), 2 beat 4, 8 and 16 for
 * every codec: more streams only add pinned and device memory. */
uint32_t default_streams() {
    return 2;
}

/* Buffer sizes of one stream's slot. */
struct SlotSizes {
    size_t d_in, d_out, scratch, meta, h_in, h_out;
};

/* Grow a device (or pinned, when pinned) buffer to at least want bytes. */
cudaError_t grow(uint8_t **p, size_t *have, size_t want, bool pinned) {
    if (*p && *have >= want)
        return cudaSuccess;
    if (pinned)
        cudaFreeHost(*p);
    else
        cudaFree(*p);
    *p = nullptr;
    *have = 0;
    cudaError_t e = pinned ? cudaMallocHost(p, want) : cudaMalloc(p, want);
    if (e == cudaSuccess)
        *have = want;
    else
        *p = nullptr;
    return e;
}

/* One batch in flight with its buffers. Buffers only grow, so a slot kept
 * in the cache serves any later call that fits. Two streams: `stream`
 * takes the H2D, the kernel and the small result D2H (then meta_done),
 * `out` the output D2H (then done). So the next batch's H2D into d_in
 * need not queue behind this batch's output D2H: only the next kernel,
 * which overwrites d_out, waits for `done`, on the device. */
struct Slot {
    cudaStream_t stream = nullptr, out = nullptr;
    cudaEvent_t meta_done = nullptr, done = nullptr;
    uint8_t *d_in = nullptr, *d_out = nullptr, *d_scratch = nullptr;
    fz_device_result *d_result = nullptr;
    uint8_t *h_meta = nullptr; /* pinned: result record, then table bytes */
    uint8_t *h_in = nullptr, *h_out = nullptr; /* pinned staging or NULL */
    SlotSizes have = {0, 0, 0, 0, 0, 0};
    bool use_h_in = false, use_h_out = false; /* staging in this call */
    /* a staged D2H still to copy to dst */
    bool pending = false;
    uint64_t pending_pos = 0, pending_bytes = 0;

    fz_device_result *h_result() {
        return reinterpret_cast<fz_device_result *>(h_meta);
    }
    uint8_t *h_table() {
        return h_meta + 64;
    }
    /* The device result of the slot's batch, once its meta D2H has landed
     * (waits for it): the call's status, or the kernel's. */
    fz_status landed_result(fz_device_result *r) {
        const fz_status st = from_cuda(cudaEventSynchronize(meta_done));
        if (st != FZ_OK)
            return st;
        *r = *h_result();
        return (fz_status)r->status;
    }
    uint8_t *staging_in() {
        return use_h_in ? h_in : nullptr;
    }
    uint8_t *staging_out() {
        return use_h_out ? h_out : nullptr;
    }

    cudaError_t reserve(const SlotSizes &z) {
        cudaError_t e = cudaSuccess;
        if (!stream)
            e = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
        if (e == cudaSuccess && !out)
            e = cudaStreamCreateWithFlags(&out, cudaStreamNonBlocking);
        if (e == cudaSuccess && !meta_done)
            e = cudaEventCreateWithFlags(&meta_done, cudaEventDisableTiming);
        if (e == cudaSuccess && !done)
            e = cudaEventCreateWithFlags(&done, cudaEventDisableTiming);
        if (e == cudaSuccess && !d_result)
            e = cudaMalloc(&d_result, sizeof *d_result);
        if (e == cudaSuccess)
            e = grow(&d_in, &have.d_in, z.d_in ? z.d_in : 16, false);
        if (e == cudaSuccess)
            e = grow(&d_out, &have.d_out, z.d_out ? z.d_out : 16, false);
        if (e == cudaSuccess)
            e = grow(&d_scratch, &have.scratch, z.scratch ? z.scratch : 16,
                     false);
        if (e == cudaSuccess)
            e = grow(&h_meta, &have.meta, 64 + z.meta, true);
        if (e == cudaSuccess && z.h_in)
            e = grow(&h_in, &have.h_in, z.h_in, true);
        if (e == cudaSuccess && z.h_out)
            e = grow(&h_out, &have.h_out, z.h_out, true);
        use_h_in = z.h_in != 0;
        use_h_out = z.h_out != 0;
        pending = false;
        return e;
    }
    bool allocated() const {
        return stream != nullptr;
    }
    /* Wait for both streams. */
    cudaError_t synchronize() {
        cudaError_t e = stream ? cudaStreamSynchronize(stream) : cudaSuccess;
        const cudaError_t o = out ? cudaStreamSynchronize(out) : cudaSuccess;
        return e != cudaSuccess ? e : o;
    }
    /* Queue the output D2H on `out` after the kernel (meta_done). */
    cudaError_t copy_out(void *to, const void *from, size_t bytes) {
        cudaError_t e = cudaStreamWaitEvent(out, meta_done, 0);
        if (e == cudaSuccess)
            e = cudaMemcpyAsync(to, from, bytes, cudaMemcpyDeviceToHost, out);
        return e == cudaSuccess ? cudaEventRecord(done, out) : e;
    }
    void destroy() {
        synchronize();
        if (stream)
            cudaStreamDestroy(stream);
        if (out)
            cudaStreamDestroy(out);
        if (meta_done)
            cudaEventDestroy(meta_done);
        if (done)
            cudaEventDestroy(done);
        cudaFree(d_in);
        cudaFree(d_out);
        cudaFree(d_scratch);
        cudaFree(d_result);
        cudaFreeHost(h_meta);
        cudaFreeHost(h_in);
        cudaFreeHost(h_out);
        *this = Slot();
    }
};

struct Pipeline {
    Slot slots[FZ_MAX_GPU_STREAMS];
    uint32_t count = 0; /* slots in use by this call */
    int device = -1;
    size_t scratch_bytes = 0;
    int threads = 1;
    Memory src_mem = Memory::Pageable, dst_mem = Memory::Pageable;
    /* REL: input batches kept on the device, and their value ranges */
    uint8_t *d_resident = nullptr;
    size_t have_resident = 0;
    uint8_t *d_ranges = nullptr;
    size_t have_ranges = 0;
    /* REL with pinned input: the resident uploads on their own stream, the
     * batch ranges on another, an event per batch for each (landed[b],
     * ranged[b]), and the ranges' CUB temp. */
    cudaStream_t upload = nullptr, ranger = nullptr;
    cudaEvent_t *landed = nullptr, *ranged = nullptr;
    uint64_t have_events = 0;
    uint8_t *d_range_temp = nullptr;
    size_t have_range_temp = 0;

    /* The two REL streams and `n` events of each kind. */
    cudaError_t reserve_upload(uint64_t n) {
        cudaError_t e = cudaSuccess;
        if (!upload)
            e = cudaStreamCreateWithFlags(&upload, cudaStreamNonBlocking);
        if (e == cudaSuccess && !ranger)
            e = cudaStreamCreateWithFlags(&ranger, cudaStreamNonBlocking);
        if (e != cudaSuccess || have_events >= n)
            return e;
        destroy_events();
        landed = static_cast<cudaEvent_t *>(calloc(n, sizeof *landed));
        ranged = static_cast<cudaEvent_t *>(calloc(n, sizeof *ranged));
        if (!landed || !ranged)
            return cudaErrorMemoryAllocation;
        for (; e == cudaSuccess && have_events < n; have_events++) {
            e = cudaEventCreateWithFlags(&landed[have_events],
                                         cudaEventDisableTiming);
            if (e == cudaSuccess)
                e = cudaEventCreateWithFlags(&ranged[have_events],
                                             cudaEventDisableTiming);
            if (e != cudaSuccess && landed[have_events])
                cudaEventDestroy(landed[have_events]); /* not counted */
        }
        return e;
    }
    void destroy_events() {
        for (uint64_t i = 0; i < have_events; i++) {
            cudaEventDestroy(landed[i]);
            cudaEventDestroy(ranged[i]);
        }
        free(landed);
        free(ranged);
        landed = ranged = nullptr;
        have_events = 0;
    }
    /* Wait for the REL streams (their work is never left running). */
    cudaError_t sync_upload() {
        cudaError_t e = upload ? cudaStreamSynchronize(upload) : cudaSuccess;
        const cudaError_t r =
            ranger ? cudaStreamSynchronize(ranger) : cudaSuccess;
        return e != cudaSuccess ? e : r;
    }

    /* Free every slot, in use or only kept, and the resident input. */
    void release() {
        for (Slot &s : slots)
            if (s.allocated())
                s.destroy();
        sync_upload();
        if (upload)
            cudaStreamDestroy(upload);
        if (ranger)
            cudaStreamDestroy(ranger);
        upload = ranger = nullptr;
        destroy_events();
        cudaFree(d_resident);
        cudaFree(d_ranges);
        cudaFree(d_range_temp);
        d_resident = d_ranges = d_range_temp = nullptr;
        have_resident = have_ranges = have_range_temp = 0;
        cudaGetLastError();
        count = 0;
    }
    /* Size n slots for this call; slots from an earlier call are reused. */
    fz_status create(uint32_t n, const SlotSizes &z) {
        scratch_bytes = z.scratch;
        for (count = 0; count < n; count++) {
            fz_status s = from_cuda(slots[count].reserve(z));
            if (s != FZ_OK) {
                release();
                return s;
            }
        }
        return FZ_OK;
    }
    Slot &of(uint64_t batch) {
        return slots[batch % count];
    }

    /* Copy a staged batch output to its place in dst. */
    fz_status drain(Slot &s, uint8_t *dst) {
        if (!s.pending)
            return FZ_OK;
        fz_status st = from_cuda(cudaEventSynchronize(s.done));
        if (st == FZ_OK)
            fz_host_copy(dst + s.pending_pos, s.staging_out(),
                         (size_t)s.pending_bytes, threads);
        s.pending = false;
        return st;
    }
    /* Wait for every stream; copy the staged outputs still pending. */
    fz_status finish_all(uint8_t *dst) {
        fz_status st = from_cuda(sync_upload());
        for (uint32_t i = 0; i < count; i++) {
            fz_status d = drain(slots[i], dst);
            fz_status w = from_cuda(slots[i].synchronize());
            st = st != FZ_OK ? st : d != FZ_OK ? d : w;
        }
        return st;
    }
};

uint64_t max_u64(uint64_t a, uint64_t b) {
    return a > b ? a : b;
}

/* The batches that can differ in size or shape: the ramp up with the first
 * whole batch, and the last middle batch with the ramp down
 * (fz_plan_split). Every other batch is like one of them. */
template <typename F>
fz_status for_each_batch_kind(const fz_batch_plan &plan, F f) {
    const uint64_t nb = plan.batch_count, edge = plan.ramp;
    for (uint64_t b = 0; b < nb;
         b = b == edge && nb > 2 * edge + 1 ? nb - 1 - edge : b + 1) {
        const fz_status s = f(b);
        if (s != FZ_OK)
            return s;
    }
    return FZ_OK;
}

/* ------------------------------------------------------------ compress */

struct Compressor {
    Pipeline &pl;
    fz_batch_plan &plan;
    const uint8_t *src;
    uint8_t *dst;
    size_t capacity;
    uint64_t pos = 0; /* where the next batch payload goes in dst */
    uint32_t entry = 0;
    uint32_t table_sum = 0;   /* of the entries placed so far (fz_hash.h) */
    uint64_t resident = 0;    /* REL: batches [0, resident) go to d_resident */
    uint64_t stride = 0;      /* bytes between resident batches (aligned) */
    bool loaded = false;      /* the resident batches are on the device */
    bool in_flight = false;   /* ... or on their way: wait for landed[b] */
    bool track_range = false; /* reduce each batch's range into d_ranges */

    /* Buffer sizes that fit every batch (for_each_batch_kind). */
    fz_status sizes(SlotSizes *z) {
        memset(z, 0, sizeof *z);
        const fz_status s = for_each_batch_kind(plan, [&](uint64_t b) {
            fz_params bp;
            size_t bound = 0, scratch = 0;
            fz_status st = fz_plan_batch_params(&plan, b, &bp);
            if (st == FZ_OK)
                st = fz_compress_bound(&bp, &bound);
            if (st == FZ_OK)
                st = fz_device_scratch_size(&bp, &scratch);
            if (st != FZ_OK)
                return st;
            uint64_t first, n, first_byte, bytes;
            fz_plan_batch(&plan, b, &first, &n, &first_byte, &bytes);
            z->d_in = (size_t)max_u64(z->d_in, bytes);
            z->d_out = (size_t)max_u64(z->d_out, bound);
            z->scratch = (size_t)max_u64(z->scratch, scratch);
            z->meta = (size_t)max_u64(z->meta, n * entry);
            if (plan.h.mode == FZ_MODE_REL) /* range reduction temp */
                z->scratch = (size_t)max_u64(
                    z->scratch,
                    fz_gpu_values_range_temp_bytes(
                        plan.h.dtype, bytes / fz_dtype_size(plan.h.dtype)));
            return FZ_OK;
        });
        if (s != FZ_OK)
            return s;
        z->h_in = pl.src_mem == Memory::Pinned ? 0 : z->d_in;
        z->h_out = pl.dst_mem == Memory::Pinned ? 0 : z->d_in;
        return FZ_OK;
    }

    fz_status launch(uint64_t b) {
        Slot &s = pl.of(b);
        uint64_t first, n, first_byte, bytes;
        fz_plan_batch(&plan, b, &first, &n, &first_byte, &bytes);
        fz_params bp;
        fz_status st = fz_plan_batch_params(&plan, b, &bp);
        if (st != FZ_OK)
            return st;
        size_t bound = 0;
        fz_compress_bound(&bp, &bound);
        uint8_t *d_src = b < resident ? pl.d_resident + b * stride : s.d_in;
        if (b < resident && in_flight)
            st = from_cuda(cudaStreamWaitEvent(s.stream, pl.landed[b], 0));
        if (st == FZ_OK && !(b < resident && loaded)) {
            const uint8_t *in = src + first_byte;
            if (s.staging_in()) {
                fz_host_copy(s.staging_in(), in, (size_t)bytes, pl.threads);
                in = s.staging_in();
            }
            st = from_cuda(cudaMemcpyAsync(d_src, in, (size_t)bytes,
                                           cudaMemcpyHostToDevice, s.stream));
        }
        if (st == FZ_OK && track_range && !(b < resident && in_flight))
            st = from_cuda(fz_gpu_values_range(
                plan.h.dtype, d_src, bytes / fz_dtype_size(plan.h.dtype),
                reinterpret_cast<double *>(pl.d_ranges) + 2 * b, s.d_scratch,
                pl.scratch_bytes, s.stream));
        if (st == FZ_OK) /* d_out free: the previous output D2H is done */
            st = from_cuda(cudaStreamWaitEvent(s.stream, s.done, 0));
        if (st == FZ_OK)
            st = fz_device_compress(&bp, d_src, s.d_out, bound, s.d_scratch,
                                    pl.scratch_bytes, s.d_result, s.h_result(),
                                    s.stream);
        if (st == FZ_OK)
            st = from_cuda(cudaMemcpyAsync(s.h_table(), s.d_out + FZ_HDR_BYTES,
                                           (size_t)(n * entry),
                                           cudaMemcpyDeviceToHost, s.stream));
        if (st == FZ_OK)
            st = from_cuda(cudaEventRecord(s.meta_done, s.stream));
        return st;
    }

    /* Batch b's sizes are back: fix its offset, send its payload there. */
    fz_status place(uint64_t b) {
        Slot &s = pl.of(b);
        fz_device_result r;
        fz_status st = s.landed_result(&r);
        if (st != FZ_OK)
            return st;
        uint64_t first, n, first_byte, bytes;
        fz_plan_batch(&plan, b, &first, &n, &first_byte, &bytes);
        const uint64_t sub_off =
            fz_align_up(FZ_HDR_BYTES + n * entry, FZ_PAYLOAD_ALIGN);
        if (r.size < sub_off || r.size - sub_off > bytes)
            return FZ_ERR_CUDA; /* cannot happen with a sound device API */
        const uint64_t payload = r.size - sub_off;
        if (pos + payload > capacity)
            return FZ_ERR_DST_TOO_SMALL;
        st = pl.drain(s, dst); /* the staging of the slot's previous batch */
        if (st != FZ_OK)
            return st;
        uint8_t *to = s.staging_out() ? s.staging_out() : dst + pos;
        st = from_cuda(s.copy_out(to, s.d_out + sub_off, (size_t)payload));
        s.pending = s.staging_out() != nullptr;
        s.pending_pos = pos;
        s.pending_bytes = payload;
        pos += payload;
        /* with the payload on its way: the entries to their place, hashed
         * there (the slot's next batch reuses h_table only after this) */
        memcpy(dst + FZ_HDR_BYTES + first * entry, s.h_table(),
               (size_t)(n * entry));
        table_sum +=
            fz_hash_sum_bytes(s.h_table(), n * entry, first * entry / 4);
        return st;
    }

    /* How many leading batches REL keeps on the device: as many as fit in
     * half the free device memory (a cached resident buffer counts as
     * free) and in FZ_GPU_RESIDENT_MIB when that is set. */
    uint64_t resident_batches() {
        uint64_t first, n, first_byte, bytes;
        fz_plan_batch(&plan, fz_plan_largest_batch(&plan), &first, &n,
                      &first_byte, &bytes);
        stride = fz_align_up(bytes, FZ_GPU_SCRATCH_ALIGN);
        size_t free_bytes = 0, total = 0;
        if (cudaMemGetInfo(&free_bytes, &total) != cudaSuccess) {
            cudaGetLastError();
            return 0;
        }
        uint64_t budget = ((uint64_t)free_bytes + pl.have_resident) / 2;
        const char *cap = getenv("FZ_GPU_RESIDENT_MIB");
        if (cap && *cap) {
            const uint64_t mib = strtoull(cap, nullptr, 10);
            if (mib < (budget >> 20))
                budget = mib << 20;
        }
        const uint64_t r = budget / stride;
        return r < plan.batch_count ? r : plan.batch_count;
    }

    /* The resident buffer and the range records of `ranges` batches;
     * false when short of memory (then nothing stays resident). */
    bool reserve_resident(uint64_t ranges) {
        cudaError_t e = cudaSuccess;
        if (resident)
            e = grow(&pl.d_resident, &pl.have_resident,
                     (size_t)(resident * stride), false);
        if (e == cudaSuccess)
            e = grow(&pl.d_ranges, &pl.have_ranges,
                     (size_t)(ranges * 2 * sizeof(double)), false);
        cudaGetLastError();
        return e == cudaSuccess;
    }

    /* H2D of batches [0, resident) into the resident buffer, each one's
     * range reduced on its stream as soon as it has landed. */
    fz_status upload_resident() {
        const uint32_t esize = fz_dtype_size(plan.h.dtype);
        for (uint64_t b = 0; b < resident; b++) {
            Slot &s = pl.of(b);
            uint64_t first, n, first_byte, bytes;
            fz_plan_batch(&plan, b, &first, &n, &first_byte, &bytes);
            const uint8_t *in = src + first_byte;
            uint8_t *to = pl.d_resident + b * stride;
            fz_status st = FZ_OK;
            if (s.staging_in()) { /* free once its last H2D is done */
                if (b >= pl.count)
                    st = from_cuda(cudaEventSynchronize(s.meta_done));
                if (st != FZ_OK)
                    return st;
                fz_host_copy(s.staging_in(), in, (size_t)bytes, pl.threads);
                in = s.staging_in();
            }
            st = from_cuda(cudaMemcpyAsync(to, in, (size_t)bytes,
                                           cudaMemcpyHostToDevice, s.stream));
            if (st == FZ_OK)
                st = from_cuda(cudaEventRecord(s.meta_done, s.stream));
            double *lo_hi = reinterpret_cast<double *>(pl.d_ranges) + 2 * b;
            if (st == FZ_OK)
                st = from_cuda(fz_gpu_values_range(
                    plan.h.dtype, to, bytes / esize, lo_hi, s.d_scratch,
                    pl.scratch_bytes, s.stream));
            if (st != FZ_OK)
                return st;
        }
        return FZ_OK;
    }

    /* Min and max of the ranges of batches [0, count) into lo, hi. */
    fz_status device_range(uint64_t count, double *lo, double *hi) {
        fz_status st = FZ_OK;
        for (uint32_t i = 0; i < pl.count; i++) {
            const fz_status w = from_cuda(pl.slots[i].synchronize());
            st = st != FZ_OK ? st : w;
        }
        const size_t bytes = (size_t)(count * 2 * sizeof(double));
        double *lo_hi = static_cast<double *>(malloc(bytes));
        if (st == FZ_OK && !lo_hi)
            st = FZ_ERR_OUT_OF_MEMORY;
        if (st == FZ_OK)
            st = from_cuda(
                cudaMemcpy(lo_hi, pl.d_ranges, bytes, cudaMemcpyDeviceToHost));
        for (uint64_t b = 0; st == FZ_OK && b < count; b++) {
            *lo = lo_hi[2 * b] < *lo ? lo_hi[2 * b] : *lo;
            *hi = lo_hi[2 * b + 1] > *hi ? lo_hi[2 * b + 1] : *hi;
        }
        free(lo_hi);
        return st;
    }

    /* REL: the range of the whole input, then the bound it implies. The
     * leading batches that fit go up once and stay (their ranges are
     * reduced on the device); the host scans the rest meanwhile. Min and
     * max are exact, so the bound is fz_compress's whatever the split. */
    fz_status resolve_range() {
        resident = plan.batch_count ? resident_batches() : 0;
        if (resident && !reserve_resident(resident))
            resident = 0;
        if (resident && pl.src_mem == Memory::Pinned &&
            reserve_range_overlap() == cudaSuccess)
            return resolve_range_overlapped();
        cudaGetLastError();
        fz_status st = upload_resident();
        loaded = true;
        double lo = DBL_MAX, hi = -DBL_MAX;
        if (st == FZ_OK) /* overlaps the uploads of pinned input */
            host_range(resident, plan.batch_count, &lo, &hi);
        if (st == FZ_OK && resident)
            st = device_range(resident, &lo, &hi);
        return st == FZ_OK ? set_range(lo, hi) : st;
    }

    /* Streams, events and CUB temp of the overlapped range. */
    cudaError_t reserve_range_overlap() {
        uint64_t first, n, first_byte, bytes;
        fz_plan_batch(&plan, fz_plan_largest_batch(&plan), &first, &n,
                      &first_byte, &bytes);
        cudaError_t e = pl.reserve_upload(resident);
        if (e == cudaSuccess)
            e = grow(&pl.d_range_temp, &pl.have_range_temp,
                     fz_gpu_values_range_temp_bytes(
                         plan.h.dtype, bytes / fz_dtype_size(plan.h.dtype)),
                     false);
        return e;
    }

    /* Pinned input: batches [0, resident) go up back to back on the upload
     * stream (landed[b] after each), and each one's range is reduced on
     * the range stream once it has landed (ranged[b]). Nothing waits. */
    fz_status queue_uploads() {
        const uint32_t esize = fz_dtype_size(plan.h.dtype);
        cudaError_t e = cudaSuccess;
        for (uint64_t b = 0; e == cudaSuccess && b < resident; b++) {
            uint64_t first, n, first_byte, bytes;
            fz_plan_batch(&plan, b, &first, &n, &first_byte, &bytes);
            uint8_t *to = pl.d_resident + b * stride;
            e = cudaMemcpyAsync(to, src + first_byte, (size_t)bytes,
                                cudaMemcpyHostToDevice, pl.upload);
            if (e == cudaSuccess)
                e = cudaEventRecord(pl.landed[b], pl.upload);
            if (e == cudaSuccess)
                e = cudaStreamWaitEvent(pl.ranger, pl.landed[b], 0);
            if (e == cudaSuccess)
                e = fz_gpu_values_range(
                    plan.h.dtype, to, bytes / esize,
                    reinterpret_cast<double *>(pl.d_ranges) + 2 * b,
                    pl.d_range_temp, pl.have_range_temp, pl.ranger);
            if (e == cudaSuccess)
                e = cudaEventRecord(pl.ranged[b], pl.ranger);
        }
        return from_cuda(e);
    }

    /* Host range of batches [from, to). */
    void host_range(uint64_t from, uint64_t to, double *lo, double *hi) {
        if (from >= to)
            return;
        uint64_t first, n, begin, end, bytes;
        fz_plan_batch(&plan, from, &first, &n, &begin, &bytes);
        end = plan.h.original_bytes;
        if (to < plan.batch_count)
            fz_plan_batch(&plan, to, &first, &n, &end, &bytes);
        const uint64_t esize = fz_dtype_size(plan.h.dtype);
        double l = DBL_MAX, h = -DBL_MAX;
        fz_value_range(plan.h.dtype, src + begin, (end - begin) / esize,
                       pl.threads, &l, &h);
        *lo = l < *lo ? l : *lo;
        *hi = h > *hi ? h : *hi;
    }

    /* REL with pinned input (docs/PIPELINE.md): the range is taken from
     * both ends at once. The uploads go up from the first batch while the
     * host scans from the last one down, batch by batch, until it meets a
     * batch that has landed: the device has (or is reducing) the ranges of
     * every batch up to that one. So the bound is known about halfway
     * through the uploads, and the batches already there are compressed
     * while the rest go up (launch waits for landed[b]), instead of after
     * the last upload. */
    fz_status resolve_range_overlapped() {
        fz_status st = queue_uploads();
        double lo = DBL_MAX, hi = -DBL_MAX;
        uint64_t gpu_part = resident; /* batches [0, gpu_part) on the device */
        if (st == FZ_OK) {
            host_range(resident, plan.batch_count, &lo, &hi); /* not resident */
            for (; gpu_part > 0; gpu_part--) {
                const cudaError_t e = cudaEventQuery(pl.landed[gpu_part - 1]);
                if (e != cudaErrorNotReady)
                    break; /* landed (or failed: the sync below says so) */
                host_range(gpu_part - 1, gpu_part, &lo, &hi);
            }
            cudaGetLastError();
        }
        if (st == FZ_OK && gpu_part) /* ranged[] in order: all done */
            st = from_cuda(cudaEventSynchronize(pl.ranged[gpu_part - 1]));
        if (st == FZ_OK && gpu_part) /* the slots are idle: no wait */
            st = device_range(gpu_part, &lo, &hi);
        loaded = in_flight = true;
        return st == FZ_OK ? set_range(lo, hi) : st;
    }

    /* Fix the bound from a range; it may change a codec's buffer sizes:
     * grow them. */
    fz_status set_range(double lo, double hi) {
        fz_plan_set_range(&plan, lo, hi);
        SlotSizes z;
        fz_status st = plan.batch_count ? sizes(&z) : FZ_OK;
        return st == FZ_OK && plan.batch_count ? pl.create(pl.count, z) : st;
    }

    /* sleek REL (docs/PIPELINE.md): the stream depends on the range only
     * through the bound's power of two, which a sample of the input almost
     * always gets right. So the batches are compressed at once with the
     * sample's bound, as for ABS, while each batch's exact range is
     * reduced on the device after its upload (kept resident where it
     * fits). If the whole input's bound is the sample's, the stream is
     * done; else it is compressed again with the right one, from the
     * resident copy where there is one. If the guess ran out of dst, the
     * range is computed first (resolve_range), as for other codecs. */
    fz_status run_speculating(size_t *compressed_size) {
        const uint64_t n = plan.h.original_bytes / fz_dtype_size(plan.h.dtype);
        fz_status st = FZ_OK;
        resident = plan.batch_count ? resident_batches() : 0;
        if (plan.batch_count && !reserve_resident(plan.batch_count)) {
            resident = 0; /* the range records alone, then */
            if (!reserve_resident(plan.batch_count))
                st = FZ_ERR_OUT_OF_MEMORY;
        }
        /* Pinned input: the resident batches start going up (and their
         * ranges are reduced as they land) before the host samples, so the
         * sample's scattered reads (milliseconds on 4 GiB) overlap the
         * uploads instead of delaying the first one. */
        loaded = in_flight = false;
        if (st == FZ_OK && resident && pl.src_mem == Memory::Pinned) {
            if (reserve_range_overlap() == cudaSuccess) {
                st = queue_uploads();
                loaded = in_flight = st == FZ_OK;
            }
            cudaGetLastError();
        }
        double lo = DBL_MAX, hi = -DBL_MAX;
        fz_sample_range(plan.h.dtype, src, n, pl.threads, &lo, &hi);
        if (st == FZ_OK)
            st = set_range(lo, hi);
        const uint64_t guess = plan.h.bound_eff_bits;
        track_range = true;
        size_t size = 0;
        if (st == FZ_OK)
            st = run(&size);
        track_range = false;
        if (st == FZ_ERR_DST_TOO_SMALL) { /* maybe not with the right bound */
            st = resolve_range();
            return st == FZ_OK ? run(compressed_size) : st;
        }
        lo = DBL_MAX;
        hi = -DBL_MAX;
        if (st == FZ_OK)
            st = device_range(plan.batch_count, &lo, &hi);
        if (st == FZ_OK)
            st = set_range(lo, hi);
        if (st != FZ_OK || plan.h.bound_eff_bits == guess) {
            if (st == FZ_OK)
                *compressed_size = size;
            return st;
        }
        loaded = true; /* a miss: again, with the whole input's bound */
        return run(compressed_size);
    }

    bool ready(uint64_t b) {
        cudaError_t e = cudaEventQuery(pl.of(b).meta_done);
        if (e == cudaErrorNotReady)
            return false;
        cudaGetLastError();
        return true; /* done, or an error that place() reports */
    }

    fz_status run(size_t *compressed_size) {
        const uint64_t payload_off = fz_payload_offset(&plan.h);
        if (capacity < payload_off)
            return FZ_ERR_DST_TOO_SMALL;
        pos = payload_off;
        table_sum = 0;
        const uint64_t nb = plan.batch_count, n = pl.count;
        uint64_t placed = 0;
        fz_status st = FZ_OK;
        for (uint64_t b = 0; st == FZ_OK && b < nb; b++) {
            while (st == FZ_OK && b >= n && placed <= b - n)
                st = place(placed++);
            if (st == FZ_OK)
                st = launch(b);
            while (st == FZ_OK && placed <= b && ready(placed))
                st = place(placed++);
        }
        while (st == FZ_OK && placed < nb)
            st = place(placed++);
        const fz_status fin = pl.finish_all(dst);
        if (st == FZ_OK)
            st = fin;
        if (st != FZ_OK)
            return st;
        fz_header h = plan.h;
        const uint64_t table_bytes = fz_table_bytes(&h);
        h.payload_bytes = pos - payload_off;
        h.table_hash = fz_hash_final(table_sum, table_bytes / 4);
        memset(dst + FZ_HDR_BYTES + table_bytes, 0,
               (size_t)(payload_off - FZ_HDR_BYTES - table_bytes));
        fz_header_write(&h, dst);
        *compressed_size = (size_t)pos;
        return FZ_OK;
    }
};

/* ---------------------------------------------------------- decompress */

struct Decompressor {
    Pipeline &pl;
    fz_batch_plan &plan;
    const uint8_t *src;
    uint8_t *dst;
    const fz_decode_options *opts;
    uint64_t in_pos = 0; /* next batch payload in src */
    uint32_t entry = 0;

    uint64_t sub_offset(uint64_t n) const {
        return fz_align_up(FZ_HDR_BYTES + n * entry, FZ_PAYLOAD_ALIGN);
    }

    /* Parameters of batch b's sub-stream; its header goes to head. */
    fz_status batch_params(uint64_t b, uint8_t *head, fz_params *bp) {
        uint64_t first, n, first_byte, bytes;
        fz_plan_batch(&plan, b, &first, &n, &first_byte, &bytes);
        const uint8_t *entries = src + FZ_HDR_BYTES + first * entry;
        fz_sub_header(&plan.h, first, n, entries,
                      fz_entries_payload(&plan.h, entries, n), head);
        fz_header sh;
        if (fz_header_parse(head, FZ_HDR_BYTES, &sh) != FZS_OK)
            return FZ_ERR_CORRUPT_HEADER; /* the table was validated */
        fz_info info;
        fz_info_from_header(&sh, &info);
        *bp = info.params;
        return FZ_OK;
    }

    fz_status sizes(SlotSizes *z) {
        memset(z, 0, sizeof *z);
        uint64_t first0, n, first_byte0, bytes; /* the most chunks */
        fz_plan_batch(&plan, fz_plan_largest_batch(&plan), &first0, &n,
                      &first_byte0, &bytes);
        const fz_status s = for_each_batch_kind(plan, [&](uint64_t b) {
            fz_params bp;
            uint8_t head[FZ_HDR_BYTES];
            size_t scratch = 0;
            fz_status st = batch_params(b, head, &bp);
            if (st == FZ_OK)
                st = fz_device_scratch_size(&bp, &scratch);
            if (st == FZ_OK)
                z->scratch = (size_t)max_u64(z->scratch, scratch);
            return st;
        });
        if (s != FZ_OK)
            return s;
        z->d_in = (size_t)(sub_offset(n) + bytes);
        z->d_out = (size_t)bytes;
        z->meta = (size_t)sub_offset(n);
        z->h_in = pl.src_mem == Memory::Pinned ? 0 : (size_t)bytes;
        z->h_out = pl.dst_mem == Memory::Pinned ? 0 : (size_t)bytes;
        return FZ_OK;
    }

    fz_status launch(uint64_t b) {
        Slot &s = pl.of(b);
        uint64_t first, n, first_byte, bytes;
        fz_plan_batch(&plan, b, &first, &n, &first_byte, &bytes);
        const uint8_t *entries = src + FZ_HDR_BYTES + first * entry;
        const uint64_t payload = fz_entries_payload(&plan.h, entries, n);
        const uint64_t sub_off = sub_offset(n);
        uint8_t *meta = s.h_table();
        fz_params bp;
        fz_status st = batch_params(b, meta, &bp);
        if (st != FZ_OK)
            return st;
        memcpy(meta + FZ_HDR_BYTES, entries, (size_t)(n * entry));
        memset(meta + FZ_HDR_BYTES + n * entry, 0,
               (size_t)(sub_off - FZ_HDR_BYTES - n * entry));
        const uint8_t *in = src + fz_payload_offset(&plan.h) + in_pos;
        in_pos += payload;
        if (s.staging_in()) {
            fz_host_copy(s.staging_in(), in, (size_t)payload, pl.threads);
            in = s.staging_in();
        }
        st = from_cuda(cudaMemcpyAsync(s.d_in, meta, (size_t)sub_off,
                                       cudaMemcpyHostToDevice, s.stream));
        if (st == FZ_OK)
            st =
                from_cuda(cudaMemcpyAsync(s.d_in + sub_off, in, (size_t)payload,
                                          cudaMemcpyHostToDevice, s.stream));
        if (st == FZ_OK) /* d_out free: the previous output D2H is done */
            st = from_cuda(cudaStreamWaitEvent(s.stream, s.done, 0));
        if (st == FZ_OK)
            st = fz_device_decompress(&bp, s.d_in, (size_t)(sub_off + payload),
                                      s.d_out, (size_t)bytes, s.d_scratch,
                                      pl.scratch_bytes, opts, s.d_result,
                                      s.h_result(), s.stream);
        if (st == FZ_OK)
            st = from_cuda(cudaEventRecord(s.meta_done, s.stream));
        if (st == FZ_OK) /* the staging of the slot's previous batch */
            st = pl.drain(s, dst);
        uint8_t *to = s.staging_out() ? s.staging_out() : dst + first_byte;
        if (st == FZ_OK)
            st = from_cuda(s.copy_out(to, s.d_out, (size_t)bytes));
        s.pending = s.staging_out() != nullptr;
        s.pending_pos = first_byte;
        s.pending_bytes = bytes;
        return st;
    }

    /* Batch b is decoded (its output may still be on its way down): check
     * its result. Then the slot's pinned header, table, staging input and
     * result record are free for the next batch. */
    fz_status check(uint64_t b) {
        Slot &s = pl.of(b);
        fz_device_result r;
        const fz_status st = s.landed_result(&r);
        if (st != FZ_OK)
            return st;
        uint64_t first, n, first_byte, bytes;
        fz_plan_batch(&plan, b, &first, &n, &first_byte, &bytes);
        if (r.size != bytes)
            return FZ_ERR_CUDA; /* cannot happen with a sound device API */
        return FZ_OK;
    }

    fz_status run() {
        const uint64_t nb = plan.batch_count, n = pl.count;
        in_pos = 0;
        uint64_t checked = 0;
        fz_status st = FZ_OK;
        for (uint64_t b = 0; st == FZ_OK && b < nb; b++) {
            while (st == FZ_OK && b >= n && checked <= b - n)
                st = check(checked++);
            if (st == FZ_OK)
                st = launch(b);
        }
        while (st == FZ_OK && checked < nb)
            st = check(checked++);
        const fz_status fin = pl.finish_all(dst);
        return st != FZ_OK ? st : fin;
    }
};

/* Host-side validation of the whole stream, as the CPU decoder does. */
fz_status validate(const uint8_t *src, size_t src_size, fz_header *h) {
    fz_status s = fz_header_read(src, src_size, h);
    if (s != FZ_OK)
        return s;
    const uint64_t table_end = FZ_HDR_BYTES + fz_table_bytes(h);
    const uint64_t payload_off = fz_payload_offset(h);
    if (src_size < payload_off)
        return FZ_ERR_TRUNCATED;
    fz_table_scan t = {0, 0, 0, 0};
    fz_table_scan_add(h, &t, src + FZ_HDR_BYTES, h->chunk_count);
    int padding_ok = 1;
    for (uint64_t i = table_end; i < payload_off; i++)
        padding_ok &= src[i] == 0;
    return fz_table_scan_end(h, &t, padding_ok, src_size);
}

/* Process-wide cache of one pipeline (streams, events, device buffers and
 * pinned staging), so that repeated calls do not pay cudaMalloc and page
 * pinning (cudaMallocHost: tens of ms per GiB) each time. A call leases the
 * cached pipeline exclusively; a concurrent call builds its own and frees
 * it after. fz_gpu_release_cache() and process exit free the cache. */
std::mutex cache_mutex;
Pipeline *cached_pipeline = nullptr;
bool exit_hook_set = false;

void release_cached_pipeline() {
    cache_mutex.lock();
    Pipeline *p = cached_pipeline;
    cached_pipeline = nullptr;
    cache_mutex.unlock();
    if (p) {
        p->release();
        delete p;
    }
}

void release_at_exit() {
    release_cached_pipeline();
}

struct Lease {
    Pipeline *pl = nullptr;
    bool keep = false; /* set once the call succeeded */

    Lease() {
        cache_mutex.lock();
        pl = cached_pipeline;
        cached_pipeline = nullptr;
        cache_mutex.unlock();
        if (!pl)
            pl = new (std::nothrow) Pipeline;
        int device = -1;
        if (pl && cudaGetDevice(&device) == cudaSuccess &&
            device != pl->device) {
            pl->release(); /* slots of another device */
            pl->device = device;
        }
        cudaGetLastError();
    }
    ~Lease() {
        if (!pl)
            return;
        for (Slot &s : pl->slots)
            if (s.allocated() && s.synchronize() != cudaSuccess)
                keep = false;
        if (pl->sync_upload() != cudaSuccess)
            keep = false;
        pl->count = 0;
        if (keep) {
            cache_mutex.lock();
            if (!cached_pipeline) {
                cached_pipeline = pl;
                pl = nullptr;
                if (!exit_hook_set)
                    exit_hook_set = atexit(release_at_exit) == 0;
            }
            cache_mutex.unlock();
        }
        if (pl) {
            pl->release();
            delete pl;
        }
    }
};

/* FZ_GPU_PAGEABLE=register page-locks a pageable user buffer for the call
 * (cudaHostRegister) so its DMA goes direct, instead of staging it through
 * pinned buffers (the default, FZ_GPU_PAGEABLE=stage). */
bool register_pageable() {
    const char *e = getenv("FZ_GPU_PAGEABLE");
    return e && strcmp(e, "register") == 0;
}

/* A pageable buffer page-locked for one call; unregistered at scope end,
 * after the pipeline (declared later) has synchronised its streams. */
struct Registration {
    void *base = nullptr;

    /* Register [p, p + n) if asked to; on success it counts as pinned. */
    void apply(Memory *m, const void *p, size_t n) {
        if (*m != Memory::Pageable || !p || n == 0 || !register_pageable())
            return;
        if (cudaHostRegister(const_cast<void *>(p), n,
                             cudaHostRegisterDefault) != cudaSuccess) {
            cudaGetLastError(); /* read-only or overlapping: stage it */
            return;
        }
        base = const_cast<void *>(p);
        *m = Memory::Pinned;
    }
    ~Registration() {
        if (base)
            cudaHostUnregister(base);
        cudaGetLastError();
    }
};

/* The batch size asked for, or the default for `bytes` of data. */
uint64_t batch_bytes_of(uint32_t kib, uint64_t bytes) {
    if (kib)
        return (uint64_t)kib << 10;
    const uint64_t b = bytes / kDefaultBatchesPerCall;
    return b < kMinDefaultBatchBytes   ? kMinDefaultBatchBytes
           : b > kMaxDefaultBatchBytes ? kMaxDefaultBatchBytes
                                       : b;
}

/* Slots for the plan; on out-of-memory, halve the batch, then the stream
 * count, and plan again. */
template <typename Job>
fz_status create_slots(Pipeline &pl, fz_batch_plan &plan, Job &job,
                       uint32_t streams, uint64_t batch_bytes) {
    for (;;) {
        fz_plan_split(&plan, batch_bytes, 1);
        const uint32_t n =
            (uint32_t)(plan.batch_count < streams ? plan.batch_count : streams);
        SlotSizes z;
        fz_status s = job.sizes(&z);
        if (s == FZ_OK)
            s = pl.create(n ? n : 1, z);
        if (s != FZ_ERR_OUT_OF_MEMORY)
            return s;
        if (batch_bytes / 2 >= kMinBatchBytes &&
            batch_bytes / 2 >= plan.h.chunk_bytes)
            batch_bytes /= 2;
        else if (streams > 1)
            streams /= 2;
        else
            return s;
    }
}

} // namespace

extern "C" fz_status fz_gpu_host_compress(const fz_params *p, const void *src,
                                          size_t src_bytes, void *dst,
                                          size_t dst_capacity,
                                          size_t *compressed_size) {
    if (fz_gpu_count() == 0)
        return FZ_ERR_NO_GPU;
    const uint64_t batch_bytes = batch_bytes_of(p->batch_kib, src_bytes);
    fz_batch_plan plan;
    fz_status s = fz_plan_compress(p, batch_bytes, &plan);
    if (s != FZ_OK)
        return s;
    if (!fz_gpu_implements(&plan.h))
        return FZ_ERR_UNSUPPORTED;
    Memory src_mem = memory_of(src, src_bytes);
    Memory dst_mem = memory_of(dst, dst_capacity);
    if (src_mem == Memory::Device || dst_mem == Memory::Device)
        return FZ_ERR_INVALID_ARGUMENT; /* device buffers: the device API */
    Registration src_reg, dst_reg; /* outlive the lease: streams end first */
    src_reg.apply(&src_mem, src, src_bytes);
    dst_reg.apply(&dst_mem, dst, dst_capacity);
    Lease lease;
    if (!lease.pl)
        return FZ_ERR_OUT_OF_MEMORY;
    Pipeline &pl = *lease.pl;
    pl.threads = fz_thread_count(p->threads);
    pl.src_mem = src_mem;
    pl.dst_mem = dst_mem;
    if (plan.h.mode == FZ_MODE_REL) /* for sizing; the data's comes later */
        fz_plan_set_range(&plan, 0.0, 0.0);
    Compressor job{pl, plan, static_cast<const uint8_t *>(src),
                   static_cast<uint8_t *>(dst), dst_capacity};
    job.entry = fz_table_entry_bytes(plan.h.flags);
    if (plan.batch_count > 0) {
        const uint32_t streams =
            p->gpu_streams ? p->gpu_streams : default_streams();
        s = create_slots(pl, plan, job, streams, batch_bytes);
        if (s != FZ_OK)
            return s;
    }
    if (plan.h.mode == FZ_MODE_REL && plan.h.codec == FZ_CODEC_SLEEK) {
        s = job.run_speculating(compressed_size);
    } else {
        if (plan.h.mode == FZ_MODE_REL)
            s = job.resolve_range();
        if (s == FZ_OK)
            s = job.run(compressed_size);
    }
    lease.keep = s == FZ_OK;
    return s;
}

extern "C" fz_status fz_gpu_host_decompress(const void *src, size_t src_size,
                                            void *dst, size_t dst_capacity,
                                            const fz_decode_options *o,
                                            size_t *decompressed_size) {
    if (fz_gpu_count() == 0)
        return FZ_ERR_NO_GPU;
    fz_header h;
    const uint8_t *in = static_cast<const uint8_t *>(src);
    Memory src_mem = memory_of(src, src_size);
    Memory dst_mem = memory_of(dst, dst_capacity);
    if (src_mem == Memory::Device || dst_mem == Memory::Device)
        return FZ_ERR_INVALID_ARGUMENT; /* device buffers: the device API */
    fz_status s = validate(in, src_size, &h);
    if (s != FZ_OK)
        return s;
    if (!fz_gpu_implements(&h))
        return FZ_ERR_UNSUPPORTED;
    if (dst_capacity < h.original_bytes || (!dst && h.original_bytes))
        return dst ? FZ_ERR_DST_TOO_SMALL : FZ_ERR_INVALID_ARGUMENT;
    Registration src_reg, dst_reg; /* outlive the lease: streams end first */
    src_reg.apply(&src_mem, src, src_size);
    dst_reg.apply(&dst_mem, dst, (size_t)h.original_bytes);
    Lease lease;
    if (!lease.pl)
        return FZ_ERR_OUT_OF_MEMORY;
    Pipeline &pl = *lease.pl;
    pl.threads = fz_thread_count(o ? o->threads : 0);
    pl.src_mem = src_mem;
    pl.dst_mem = dst_mem;
    const uint64_t batch_bytes =
        batch_bytes_of(o ? o->batch_kib : 0, h.original_bytes);
    fz_batch_plan plan;
    fz_plan_decompress(&h, batch_bytes, &plan);
    Decompressor job{pl, plan, in, static_cast<uint8_t *>(dst), o};
    job.entry = fz_table_entry_bytes(h.flags);
    if (plan.batch_count > 0) {
        const uint32_t streams =
            o && o->gpu_streams ? o->gpu_streams : default_streams();
        s = create_slots(pl, plan, job, streams, batch_bytes);
        if (s == FZ_OK)
            s = job.run();
        if (s != FZ_OK)
            return s;
    }
    lease.keep = true;
    *decompressed_size = (size_t)h.original_bytes;
    return FZ_OK;
}

extern "C" void fz_gpu_release_cache(void) {
    release_cached_pipeline();
}
