/* Device API: asynchronous compression/decompression of device buffers on
 * a caller's stream. Per call: one memset of the scratch head, the codec's
 * kernel, one single-thread finalize kernel, and an optional result copy.
 * No allocation and no synchronisation. */
#include <string.h>

#include "../api/fz_internal.h"
#include "fz_gpu.cuh"

namespace {

/* Compress epilogue: header with payload size and table hash, the padding
 * after the table, and the result record. */
__global__ void finalize_compress(const fz_gpu_args a,
                                  fz_device_result *result) {
    int status = a.scratch->status;
    uint64_t total = a.scratch->payload_total;
    if (status == FZS_OK) {
        uint64_t table_bytes = fz_table_bytes(&a.expect);
        for (uint64_t i = FZ_HDR_BYTES + table_bytes; i < a.payload_off; i++)
            a.dst[i] = 0;
        for (uint32_t i = 0; i < FZ_HDR_BYTES; i++)
            a.dst[i] = a.header[i];
        if (a.expect.mode == 2) /* REL: known only now */
            fz_store64(a.dst + FZ_OFF_BOUND_EFF, a.scratch->bound_eff_bits);
        fz_header_finalize(
            a.dst, total, fz_hash_final(a.scratch->table_sum, table_bytes / 4));
    }
    result->size = status == FZS_OK ? a.payload_off + total : 0;
    result->status = status;
    result->reserved = 0;
}

/* Decompress epilogue: whole-stream checks that need every chunk. */
__global__ void finalize_decompress(const fz_gpu_args a,
                                    fz_device_result *result) {
    int status = a.scratch->status;
    fz_header h;
    if (status == FZS_OK)
        status = fz_gpu_check_stream(a, &h); /* also covers 0 chunks */
    if (status == FZS_OK && a.offsets[a.expect.chunk_count] != h.payload_bytes)
        status = FZS_CORRUPT_HEADER;
    if (status == FZS_OK &&
        fz_hash_final(a.scratch->table_sum, fz_table_bytes(&h) / 4) !=
            h.table_hash)
        status = FZS_TABLE_CHECKSUM;
    result->size = status == FZS_OK ? h.original_bytes : 0;
    result->status = status;
    result->reserved = 0;
}

/* Makes the stream's device current for the call, restores it after. */
struct DeviceScope {
    int previous = -1;
    cudaError_t enter(cudaStream_t stream) {
        cudaError_t err = cudaGetDevice(&previous);
        if (err != cudaSuccess)
            return err;
        int device = previous;
        if (stream != nullptr) {
            err = cudaStreamGetDevice(stream, &device);
            if (err != cudaSuccess)
                return err;
        }
        return device == previous ? cudaSuccess : cudaSetDevice(device);
    }
    ~DeviceScope() {
        int now = -1;
        if (previous >= 0 && cudaGetDevice(&now) == cudaSuccess &&
            now != previous)
            cudaSetDevice(previous);
    }
};

bool aligned16(const void *p) {
    return ((uintptr_t)p & 15) == 0;
}

fz_status cuda_status(cudaError_t err) {
    if (err == cudaSuccess)
        return FZ_OK;
    cudaGetLastError(); /* clear a non-sticky error */
    return err == cudaErrorNoDevice || err == cudaErrorInsufficientDriver
               ? FZ_ERR_NO_GPU
               : FZ_ERR_CUDA;
}

fz_status prepare(const fz_params *p, void *d_scratch, size_t scratch_bytes,
                  fz_device_result *d_result, fz_gpu_args *a) {
    if (!d_scratch || !d_result || !aligned16(d_scratch))
        return FZ_ERR_INVALID_ARGUMENT;
    memset(a, 0, sizeof *a);
    fz_status s = fz_header_from_params(p, &a->expect);
    if (s != FZ_OK)
        return s;
    if (scratch_bytes < fz_gpu_scratch_bytes(&a->expect))
        return FZ_ERR_SCRATCH_TOO_SMALL;
    a->payload_off = fz_payload_offset(&a->expect);
    a->oldest_version = fz_codec_oldest_version(a->expect.codec);
    uint8_t *base = static_cast<uint8_t *>(d_scratch);
    a->scratch = reinterpret_cast<fz_gpu_scratch *>(base);
    a->lookback =
        reinterpret_cast<unsigned long long *>(base + FZ_GPU_SCRATCH_HEAD);
    a->offsets = a->lookback; /* decode uses the same words for offsets */
    a->temp = base + fz_gpu_offsets_end(a->expect.chunk_count);
    a->temp_bytes = fz_gpu_temp_bytes(&a->expect);
    return FZ_OK;
}

typedef cudaError_t (*codec_launch)(const fz_gpu_args *, int, cudaStream_t);

/* The codec's kernels for this header, or null when the GPU backend does
 * not implement it (an unknown codec). */
codec_launch find_launch(const fz_header &h, bool compress) {
    switch (h.codec) {
    case FZ_CODEC_SLEEK:
        return compress ? fz_sleek_gpu_compress : fz_sleek_gpu_decompress;
    case FZ_CODEC_GFC:
        return compress ? fz_gfc_gpu_compress : fz_gfc_gpu_decompress;
    case FZ_CODEC_FALCON:
        return compress ? fz_falcon_gpu_compress : fz_falcon_gpu_decompress;
    case FZ_CODEC_LORENZO:
        return compress ? fz_lorenzo_gpu_compress : fz_lorenzo_gpu_decompress;
    }
    return nullptr;
}

/* The current device's SM count (the codecs size their grids by it). */
cudaError_t current_sm_count(int *sm_count) {
    int device = 0;
    cudaError_t err = cudaGetDevice(&device);
    return err == cudaSuccess
               ? cudaDeviceGetAttribute(sm_count,
                                        cudaDevAttrMultiProcessorCount, device)
               : err;
}

/* Scratch head (+ look-back words) reset, [offsets scan], codec kernel,
 * finalize, optional result copy: all on the stream, nothing waits. */
fz_status enqueue(const fz_gpu_args &a, bool compress,
                  fz_device_result *d_result, fz_device_result *h_result,
                  cudaStream_t stream) {
    codec_launch launch = find_launch(a.expect, compress);
    if (!launch)
        return FZ_ERR_UNSUPPORTED;
    const uint64_t n = a.expect.chunk_count;
    int sm_count = 0;
    cudaError_t err = current_sm_count(&sm_count);
    if (err == cudaSuccess)
        err = cudaMemsetAsync(a.scratch, 0,
                              compress ? FZ_GPU_SCRATCH_HEAD + 8 * n
                                       : FZ_GPU_SCRATCH_HEAD,
                              stream);
    if (err == cudaSuccess && !compress)
        err = fz_gpu_chunk_offsets(&a, a.temp, a.temp_bytes, stream);
    if (err == cudaSuccess && n > 0)
        err = launch(&a, sm_count, stream);
    if (err == cudaSuccess) {
        if (compress)
            finalize_compress<<<1, 1, 0, stream>>>(a, d_result);
        else
            finalize_decompress<<<1, 1, 0, stream>>>(a, d_result);
        err = cudaGetLastError();
    }
    if (err == cudaSuccess && h_result)
        err = cudaMemcpyAsync(h_result, d_result, sizeof *h_result,
                              cudaMemcpyDeviceToHost, stream);
    return cuda_status(err);
}

/* ---------------------------------------------------------- random access
 * fz_device_decompress_range: the chunks that hold the range are copied out
 * of the stream into a stand-alone sub-stream in scratch (a header for
 * them, their table entries, their payloads), which the codec's decoder
 * decodes as it decodes any stream; the range is then copied out of the
 * decoded chunks. The whole stream's header and chunk table are checked as
 * a whole decode checks them (and as the CPU's fz_decompress_range does). */

/* Sums the range kernels gather; the first words of the scratch. */
struct RangeState {
    unsigned int table_sum; /* hash terms of the whole table */
    unsigned int sub_sum;   /* the range's entries at their sub-table place */
    unsigned int oversized; /* an entry larger than its chunk's raw bytes */
};

/* Where everything of a range call lives (bytes into the scratch). */
struct RangePlan {
    uint64_t first_chunk, chunks; /* the chunks holding the range */
    uint64_t skip;                /* bytes of the first chunk before it */
    fz_header sub;                /* the sub-stream's expected header */
    uint64_t whole_at, sub_stream_at, sub_capacity, sub_scratch_at;
    uint64_t decoded_at, total;
};

struct RangeArgs {
    fz_gpu_args whole; /* the stream: header, table, offsets */
    fz_gpu_args sub;   /* the sub-stream in scratch */
    uint8_t *sub_stream;
    RangeState *state;
    uint64_t first_chunk, chunks;
};

uint64_t scratch_align(uint64_t n) {
    return fz_align_up(n, FZ_GPU_SCRATCH_ALIGN);
}

/* The layout for values [first, first + count) of the array of h. */
RangePlan range_plan(const fz_header &h, uint64_t first, uint64_t count) {
    RangePlan r;
    memset(&r, 0, sizeof r);
    const uint64_t esize = fz_dtype_size(h.dtype), cb = h.chunk_bytes;
    const uint64_t lo = first * esize, hi = (first + count) * esize;
    r.first_chunk = count ? lo / cb : 0;
    r.chunks = count ? (hi + cb - 1) / cb - r.first_chunk : 0;
    r.skip = lo - r.first_chunk * cb;
    r.sub = h;
    r.sub.chunk_count = r.chunks;
    const uint64_t end = (r.first_chunk + r.chunks) * cb;
    r.sub.original_bytes =
        (end < h.original_bytes ? end : h.original_bytes) - r.first_chunk * cb;
    if (r.chunks)
        fz_sub_shape(&h, r.sub.original_bytes, &r.sub.ndims, r.sub.dims);
    r.whole_at = FZ_GPU_SCRATCH_ALIGN; /* after the RangeState */
    const uint64_t whole = fz_gpu_offsets_end(h.chunk_count) +
                           fz_gpu_offsets_temp_bytes(h.chunk_count);
    r.sub_stream_at = r.whole_at + scratch_align(whole);
    r.sub_capacity = fz_payload_offset(&r.sub) + r.chunks * cb;
    r.sub_scratch_at = r.sub_stream_at + scratch_align(r.sub_capacity);
    r.decoded_at = r.sub_scratch_at +
                   (r.chunks ? scratch_align(fz_gpu_scratch_bytes(&r.sub)) : 0);
    r.total = r.decoded_at + scratch_align(r.sub.original_bytes);
    return r;
}

/* Hash terms of the whole table and of the range's entries (at their
 * sub-table positions), and entries larger than their chunk. Reads past
 * the stream count as 0 (the header check reports the stream short). */
__global__ void scan_table(const RangeArgs r) {
    const fz_gpu_args &w = r.whole;
    const uint64_t words_per_entry = fz_table_entry_bytes(w.expect.flags) / 4;
    const uint64_t words = w.expect.chunk_count * words_per_entry;
    const uint64_t sub_lo = r.first_chunk * words_per_entry;
    const uint64_t sub_hi = sub_lo + r.chunks * words_per_entry;
    unsigned int sum = 0, sub = 0, big = 0;
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
         i < words; i += (uint64_t)gridDim.x * blockDim.x) {
        const uint64_t at = FZ_HDR_BYTES + 4 * i;
        const uint32_t word = at + 4 <= w.src_size ? fz_load32(w.src + at) : 0;
        sum += fz_hash_term(word, i);
        if (i >= sub_lo && i < sub_hi)
            sub += fz_hash_term(word, i - sub_lo);
        if (i % words_per_entry == 0 &&
            word > fz_chunk_raw_bytes(&w.expect, i / words_per_entry))
            big = 1;
    }
    sum = __reduce_add_sync(FZ_FULL_MASK, sum);
    sub = __reduce_add_sync(FZ_FULL_MASK, sub);
    big = __any_sync(FZ_FULL_MASK, big);
    if ((threadIdx.x & 31) == 0) {
        atomicAdd(&r.state->table_sum, sum);
        atomicAdd(&r.state->sub_sum, sub);
        if (big)
            atomicOr(&r.state->oversized, 1u);
    }
}

/* The range's table entries, the padding and their payloads into the
 * sub-stream (its header comes from write_sub_header). */
__global__ void copy_sub_stream(const RangeArgs r) {
    const fz_gpu_args &w = r.whole;
    const uint64_t entry = fz_table_entry_bytes(w.expect.flags);
    const uint64_t table_end = FZ_HDR_BYTES + r.chunks * entry;
    const uint64_t payload_at = r.sub.payload_off;
    const uint64_t from = w.offsets[r.first_chunk];
    uint64_t payload = w.offsets[r.first_chunk + r.chunks] - from;
    if (payload > r.sub.src_size - payload_at) /* oversized: reported */
        payload = r.sub.src_size - payload_at;
    const uint64_t end = payload_at + payload;
    for (uint64_t i =
             FZ_HDR_BYTES + blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
         i < end; i += (uint64_t)gridDim.x * blockDim.x) {
        uint64_t at = UINT64_MAX; /* padding */
        if (i < table_end)
            at = FZ_HDR_BYTES + r.first_chunk * entry + (i - FZ_HDR_BYTES);
        else if (i >= payload_at)
            at = w.payload_off + from + (i - payload_at);
        r.sub_stream[i] = at < w.src_size ? w.src[at] : 0;
    }
}

/* The sub-stream's header: the stream's, for the range's chunks. A
 * stream whose header does not parse gets none (finalize_range reports
 * the stream's own error). */
__global__ void write_sub_header(const RangeArgs r) {
    fz_header h;
    if (fz_header_parse(r.whole.src, r.whole.src_size, &h) != FZS_OK) {
        for (uint32_t i = 0; i < FZ_HDR_BYTES; i++)
            r.sub_stream[i] = 0;
        return;
    }
    const fz_header &e = r.sub.expect;
    h.chunk_count = e.chunk_count;
    h.original_bytes = e.original_bytes;
    h.ndims = e.ndims;
    for (int d = 0; d < 4; d++)
        h.dims[d] = e.dims[d];
    const unsigned long long *off = r.whole.offsets;
    h.payload_bytes = off[r.first_chunk + r.chunks] - off[r.first_chunk];
    h.table_hash = fz_hash_final(r.state->sub_sum, fz_table_bytes(&h) / 4);
    fz_header_write(&h, r.sub_stream);
    fz_header_finalize(r.sub_stream, h.payload_bytes, h.table_hash);
}

/* The whole stream's checks in the CPU's order (header, table hash,
 * entry sizes, payload total), then the sub-stream decode's. */
__global__ void finalize_range(const RangeArgs r, uint64_t out_bytes,
                               fz_device_result *result) {
    fz_header h;
    int status = fz_gpu_check_stream(r.whole, &h);
    if (status == FZS_OK &&
        fz_hash_final(r.state->table_sum, fz_table_bytes(&h) / 4) !=
            h.table_hash)
        status = FZS_TABLE_CHECKSUM;
    if (status == FZS_OK && r.state->oversized)
        status = FZS_CORRUPT_CHUNK;
    if (status == FZS_OK &&
        r.whole.offsets[r.whole.expect.chunk_count] != h.payload_bytes)
        status = FZS_CORRUPT_HEADER;
    if (status == FZS_OK && r.chunks) {
        fz_header sh;
        status = r.sub.scratch->status;
        if (status == FZS_OK)
            status = fz_gpu_check_stream(r.sub, &sh);
        if (status == FZS_OK &&
            (r.sub.offsets[r.chunks] != sh.payload_bytes ||
             fz_hash_final(r.sub.scratch->table_sum, fz_table_bytes(&sh) / 4) !=
                 sh.table_hash))
            status = FZS_CORRUPT_CHUNK; /* cannot happen: built to match */
    }
    result->size = status == FZS_OK ? out_bytes : 0;
    result->status = status;
    result->reserved = 0;
}

/* Arguments of the whole stream and of the sub-stream over the scratch. */
RangeArgs range_args(const fz_gpu_args &base, const RangePlan &plan,
                     uint8_t *scratch) {
    RangeArgs r;
    memset(&r, 0, sizeof r);
    r.state = reinterpret_cast<RangeState *>(scratch);
    r.first_chunk = plan.first_chunk;
    r.chunks = plan.chunks;
    r.whole = base;
    r.whole.dst = nullptr;
    r.whole.dst_capacity = base.expect.original_bytes;
    uint8_t *w = scratch + plan.whole_at;
    r.whole.scratch = reinterpret_cast<fz_gpu_scratch *>(w);
    r.whole.lookback =
        reinterpret_cast<unsigned long long *>(w + FZ_GPU_SCRATCH_HEAD);
    r.whole.offsets = r.whole.lookback;
    r.whole.temp = w + fz_gpu_offsets_end(base.expect.chunk_count);
    r.whole.temp_bytes = fz_gpu_offsets_temp_bytes(base.expect.chunk_count);
    r.sub_stream = scratch + plan.sub_stream_at;
    r.sub = base;
    r.sub.expect = plan.sub;
    r.sub.src = r.sub_stream;
    r.sub.src_size = plan.sub_capacity;
    r.sub.dst = scratch + plan.decoded_at;
    r.sub.dst_capacity = plan.sub.original_bytes;
    r.sub.payload_off = fz_payload_offset(&plan.sub);
    uint8_t *ss = scratch + plan.sub_scratch_at;
    r.sub.scratch = reinterpret_cast<fz_gpu_scratch *>(ss);
    r.sub.lookback =
        reinterpret_cast<unsigned long long *>(ss + FZ_GPU_SCRATCH_HEAD);
    r.sub.offsets = r.sub.lookback;
    r.sub.temp = ss + fz_gpu_offsets_end(plan.chunks);
    r.sub.temp_bytes = fz_gpu_temp_bytes(&plan.sub);
    return r;
}

/* Grid for a grid-stride loop over n items: enough blocks to fill the
 * GPU, no more than the items need. */
unsigned grid_for(uint64_t n, int sm_count) {
    const uint64_t blocks = (n + 255) / 256, cap = 8ull * (uint64_t)sm_count;
    return (unsigned)(blocks < 1 ? 1 : blocks < cap ? blocks : cap);
}

/* Every step of a range call, on the stream; nothing waits. */
fz_status enqueue_range(const RangeArgs &r, const RangePlan &plan,
                        uint64_t out_bytes, void *d_dst,
                        fz_device_result *d_result, fz_device_result *h_result,
                        cudaStream_t stream) {
    codec_launch launch = find_launch(r.whole.expect, false);
    if (!launch)
        return FZ_ERR_UNSUPPORTED;
    int sm_count = 0;
    cudaError_t err = current_sm_count(&sm_count);
    if (err == cudaSuccess)
        err = cudaMemsetAsync(r.state, 0, sizeof(RangeState), stream);
    if (err == cudaSuccess)
        err = cudaMemsetAsync(r.whole.scratch, 0, FZ_GPU_SCRATCH_HEAD, stream);
    if (err == cudaSuccess)
        err = fz_gpu_chunk_offsets(&r.whole, r.whole.temp,
                                   (size_t)r.whole.temp_bytes, stream);
    const uint64_t words = r.whole.expect.chunk_count *
                           fz_table_entry_bytes(r.whole.expect.flags) / 4;
    if (err == cudaSuccess) {
        scan_table<<<grid_for(words, sm_count), 256, 0, stream>>>(r);
        err = cudaGetLastError();
    }
    if (err == cudaSuccess && plan.chunks) {
        copy_sub_stream<<<grid_for(plan.sub_capacity, sm_count), 256, 0,
                          stream>>>(r);
        write_sub_header<<<1, 1, 0, stream>>>(r);
        err = cudaGetLastError();
        if (err == cudaSuccess)
            err =
                cudaMemsetAsync(r.sub.scratch, 0, FZ_GPU_SCRATCH_HEAD, stream);
        if (err == cudaSuccess)
            err = fz_gpu_chunk_offsets(&r.sub, r.sub.temp,
                                       (size_t)r.sub.temp_bytes, stream);
        if (err == cudaSuccess)
            err = launch(&r.sub, sm_count, stream);
        if (err == cudaSuccess && out_bytes)
            err =
                cudaMemcpyAsync(d_dst, r.sub.dst + plan.skip, (size_t)out_bytes,
                                cudaMemcpyDeviceToDevice, stream);
    }
    if (err == cudaSuccess) {
        finalize_range<<<1, 1, 0, stream>>>(r, out_bytes, d_result);
        err = cudaGetLastError();
    }
    if (err == cudaSuccess && h_result)
        err = cudaMemcpyAsync(h_result, d_result, sizeof *h_result,
                              cudaMemcpyDeviceToHost, stream);
    return cuda_status(err);
}

} // namespace

bool fz_gpu_implements(const fz_header *h) {
    return find_launch(*h, true) != nullptr;
}

extern "C" {

int fz_gpu_supports(const fz_params *p) {
    fz_header h;
    if (p && p->codec == FZ_CODEC_AUTO) { /* the host API: every candidate */
        fz_params q, cand[FZ_AUTO_MAX_CANDIDATES];
        if (fz_auto_stand_in(p, &q) != FZ_OK)
            return 0;
        const uint32_t n = fz_auto_candidates(p, cand);
        for (uint32_t i = 0; i < n; i++)
            if (!fz_gpu_supports(&cand[i]))
                return 0;
        return n > 0;
    }
    return p && fz_header_from_params(p, &h) == FZ_OK && fz_gpu_implements(&h);
}

int fz_gpu_count(void) {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return n;
}

fz_status fz_device_scratch_size(const fz_params *p, size_t *bytes) {
    fz_header h;
    if (!bytes)
        return FZ_ERR_INVALID_ARGUMENT;
    if (p && p->codec == FZ_CODEC_AUTO) /* no host round trip here */
        return FZ_ERR_UNSUPPORTED;
    fz_status s = fz_header_from_params(p, &h);
    if (s != FZ_OK)
        return s;
    *bytes = (size_t)fz_gpu_scratch_bytes(&h);
    return FZ_OK;
}

fz_status fz_device_compress(const fz_params *p, const void *d_src, void *d_dst,
                             size_t dst_capacity, void *d_scratch,
                             size_t scratch_bytes, fz_device_result *d_result,
                             fz_device_result *h_result,
                             fz_cuda_stream stream) {
    if (p && p->codec == FZ_CODEC_AUTO) /* fz_auto_choose on a host copy */
        return FZ_ERR_UNSUPPORTED;
    fz_gpu_args a;
    fz_status s = prepare(p, d_scratch, scratch_bytes, d_result, &a);
    if (s != FZ_OK)
        return s;
    if ((!d_src && a.expect.original_bytes) || !d_dst || !aligned16(d_src) ||
        !aligned16(d_dst))
        return FZ_ERR_INVALID_ARGUMENT;
    if (dst_capacity < a.payload_off)
        return FZ_ERR_DST_TOO_SMALL;
    a.src = static_cast<const uint8_t *>(d_src);
    a.dst = static_cast<uint8_t *>(d_dst);
    a.src_size = a.expect.original_bytes;
    a.dst_capacity = dst_capacity;
    fz_header_write(&a.expect, a.header);
    DeviceScope scope;
    s = cuda_status(scope.enter(stream));
    if (s != FZ_OK)
        return s;
    return enqueue(a, true, d_result, h_result, stream);
}

fz_status
fz_device_decompress(const fz_params *p, const void *d_src, size_t src_size,
                     void *d_dst, size_t dst_capacity, void *d_scratch,
                     size_t scratch_bytes, const fz_decode_options *opts,
                     fz_device_result *d_result, fz_device_result *h_result,
                     fz_cuda_stream stream) {
    fz_gpu_args a;
    fz_status s = prepare(p, d_scratch, scratch_bytes, d_result, &a);
    if (s != FZ_OK)
        return s;
    if (!d_src || (!d_dst && a.expect.original_bytes) || !aligned16(d_src) ||
        !aligned16(d_dst) || !fz_decode_options_valid(opts))
        return FZ_ERR_INVALID_ARGUMENT;
    if (dst_capacity < a.expect.original_bytes)
        return FZ_ERR_DST_TOO_SMALL;
    a.src = static_cast<const uint8_t *>(d_src);
    a.dst = static_cast<uint8_t *>(d_dst);
    a.src_size = src_size;
    a.dst_capacity = dst_capacity;
    a.verify = !(opts && (opts->flags & FZ_DECODE_SKIP_CHECKSUM));
    DeviceScope scope;
    s = cuda_status(scope.enter(stream));
    if (s != FZ_OK)
        return s;
    return enqueue(a, false, d_result, h_result, stream);
}

fz_status fz_device_range_scratch_size(const fz_params *p, uint64_t first,
                                       uint64_t count, size_t *bytes) {
    fz_header h;
    if (!bytes)
        return FZ_ERR_INVALID_ARGUMENT;
    if (p && p->codec == FZ_CODEC_AUTO)
        return FZ_ERR_UNSUPPORTED;
    fz_status s = fz_header_from_params(p, &h);
    if (s != FZ_OK)
        return s;
    const uint64_t values = h.original_bytes / fz_dtype_size(h.dtype);
    if (first > values || count > values - first)
        return FZ_ERR_INVALID_ARGUMENT;
    *bytes = (size_t)range_plan(h, first, count).total;
    return FZ_OK;
}

fz_status
fz_device_decompress_range(const fz_params *p, const void *d_src,
                           size_t src_size, uint64_t first, uint64_t count,
                           void *d_dst, size_t dst_capacity, void *d_scratch,
                           size_t scratch_bytes, const fz_decode_options *opts,
                           fz_device_result *d_result,
                           fz_device_result *h_result, fz_cuda_stream stream) {
    if (p && p->codec == FZ_CODEC_AUTO)
        return FZ_ERR_UNSUPPORTED;
    if (!d_scratch || !d_result || !aligned16(d_scratch) || !d_src ||
        !aligned16(d_src) || !fz_decode_options_valid(opts))
        return FZ_ERR_INVALID_ARGUMENT;
    fz_gpu_args a;
    memset(&a, 0, sizeof a);
    fz_status s = fz_header_from_params(p, &a.expect);
    if (s != FZ_OK)
        return s;
    s = fz_check_range(&a.expect, first, count, d_dst, dst_capacity);
    if (s != FZ_OK)
        return s;
    const RangePlan plan = range_plan(a.expect, first, count);
    if (scratch_bytes < plan.total)
        return FZ_ERR_SCRATCH_TOO_SMALL;
    a.src = static_cast<const uint8_t *>(d_src);
    a.src_size = src_size;
    a.payload_off = fz_payload_offset(&a.expect);
    a.oldest_version = fz_codec_oldest_version(a.expect.codec);
    a.verify = !(opts && (opts->flags & FZ_DECODE_SKIP_CHECKSUM));
    const RangeArgs r = range_args(a, plan, static_cast<uint8_t *>(d_scratch));
    DeviceScope scope;
    s = cuda_status(scope.enter(stream));
    if (s != FZ_OK)
        return s;
    return enqueue_range(r, plan, count * fz_dtype_size(a.expect.dtype), d_dst,
                         d_result, h_result, stream);
}

} // extern "C"
