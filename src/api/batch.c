/* Batches of whole chunks, shared by the GPU pipeline and file streaming.
 * Chunks are independent, so a batch compressed as a stand-alone stream
 * has the final stream's chunk payloads and table entries, provided the
 * chunking, the codec parameters, the enforced bound and the codec's view
 * of the shape are the same: fz_plan_batch_params pins them and checks
 * the chunking; fz_sub_shape keeps the shape. */
#include <string.h>

#include "../codecs/fz_codec.h"
#include "../common/fz_bound.h"
#include "fz_internal.h"

static uint64_t batch_chunks(uint32_t chunk_bytes, uint64_t batch_bytes) {
    uint64_t n = batch_bytes / chunk_bytes;
    return n ? n : 1;
}

enum { RAMP_STEPS = 3 };

/* Chunks of ramp batch i (0 = the smallest) for batches of cpb chunks. */
static uint64_t ramp_chunks(uint64_t cpb, uint32_t i) {
    const uint64_t n = cpb >> (RAMP_STEPS - i);
    return n ? n : 1;
}

static uint64_t ramp_total(uint64_t cpb, uint32_t ramp) {
    uint64_t sum = 0;
    for (uint32_t i = 0; i < ramp; i++)
        sum += ramp_chunks(cpb, i);
    return sum;
}

void fz_plan_split(fz_batch_plan *plan, uint64_t batch_bytes, int ramp) {
    const uint64_t cpb = batch_chunks(plan->h.chunk_bytes, batch_bytes);
    const uint64_t chunks = plan->h.chunk_count;
    plan->chunks_per_batch = cpb;
    plan->ramp = 0;
    if (ramp && cpb > 1 && chunks >= 2 * ramp_total(cpb, RAMP_STEPS) + 2 * cpb)
        plan->ramp = RAMP_STEPS;
    const uint64_t middle = chunks - 2 * ramp_total(cpb, plan->ramp);
    plan->batch_count = 2 * plan->ramp + (middle + cpb - 1) / cpb;
}

uint64_t fz_plan_largest_batch(const fz_batch_plan *plan) {
    return plan->ramp;
}

fz_status fz_plan_compress(const fz_params *p, uint64_t batch_bytes,
                           fz_batch_plan *plan) {
    memset(plan, 0, sizeof *plan);
    fz_status s = fz_header_from_params(p, &plan->h);
    if (s != FZ_OK)
        return s;
    plan->params = *p;
    fz_plan_split(plan, batch_bytes, 0);
    return FZ_OK;
}

void fz_plan_decompress(const fz_header *h, uint64_t batch_bytes,
                        fz_batch_plan *plan) {
    memset(plan, 0, sizeof *plan);
    plan->h = *h;
    fz_plan_split(plan, batch_bytes, 0);
}

void fz_plan_set_range(fz_batch_plan *plan, double lo, double hi) {
    double rel;
    memcpy(&rel, &plan->h.bound_bits, sizeof rel);
    const fz_codec_cpu *codec = fz_codec_cpu_find(plan->h.codec);
    plan->abs_bound_bits = fz_rel_abs_bound_bits(rel, lo, hi);
    plan->h.bound_eff_bits =
        codec->effective_bound(&plan->h, plan->abs_bound_bits);
}

void fz_plan_batch(const fz_batch_plan *plan, uint64_t b, uint64_t *first,
                   uint64_t *count, uint64_t *first_byte, uint64_t *bytes) {
    const uint64_t cpb = plan->chunks_per_batch;
    const uint64_t ramp = plan->ramp, up = ramp_total(cpb, plan->ramp);
    const uint64_t middle = plan->h.chunk_count - 2 * up;
    const uint64_t middle_batches = plan->batch_count - 2 * ramp;
    uint64_t f, n;
    if (b < ramp) { /* ramp up */
        f = ramp_total(cpb, (uint32_t)b);
        n = ramp_chunks(cpb, (uint32_t)b);
    } else if (b - ramp < middle_batches) {
        f = up + (b - ramp) * cpb;
        n = middle - (b - ramp) * cpb < cpb ? middle - (b - ramp) * cpb : cpb;
    } else { /* ramp down: the steps of the ramp up in reverse */
        const uint32_t k = (uint32_t)(b - ramp - middle_batches);
        f = up + middle + (up - ramp_total(cpb, RAMP_STEPS - k));
        n = ramp_chunks(cpb, RAMP_STEPS - 1 - k);
    }
    const uint64_t start = f * plan->h.chunk_bytes;
    uint64_t end = (f + n) * plan->h.chunk_bytes;
    if (end > plan->h.original_bytes)
        end = plan->h.original_bytes;
    *first = f;
    *count = n;
    *first_byte = start;
    *bytes = end - start;
}

/* The shape of a batch of `bytes` (whole chunks) of the array of h: the
 * array's own leading extents with the slowest one cut to the batch when
 * the batch holds whole slices, so that a codec that predicts across
 * rows or planes (lorenzo) sees the same geometry; else, in that order,
 * (d0, d1, rest), (d0, rest) and 1-D, the first that gives the array's
 * chunk size. Codecs that ignore the shape accept any of them; a
 * shape-aware codec's chunks are whole slabs of its own view, so the first
 * divisible candidate is that view. */
void fz_sub_shape(const fz_header *h, uint64_t bytes, uint32_t *ndims,
                  uint64_t dims[4]) {
    const fz_codec_cpu *codec = fz_codec_cpu_find(h->codec);
    const uint64_t n = bytes / fz_dtype_size(h->dtype);
    for (uint32_t lead = h->ndims - 1; lead >= 1 && lead <= 3; lead--) {
        uint64_t slice = 1;
        for (uint32_t d = 0; d < lead; d++)
            slice *= h->dims[d];
        if (slice == 0 || n % slice != 0)
            continue;
        fz_header t = *h;
        t.ndims = lead + 1;
        for (uint32_t d = 0; d < 4; d++)
            t.dims[d] = d < lead ? h->dims[d] : d == lead ? n / slice : 1;
        t.original_bytes = bytes;
        if (!codec || codec->chunk_bytes(&t) == h->chunk_bytes) {
            *ndims = t.ndims;
            memcpy(dims, t.dims, sizeof t.dims);
            return;
        }
    }
    *ndims = 1;
    dims[0] = n;
    dims[1] = dims[2] = dims[3] = 1;
}

/* Whether batch params bp (for chunks of bytes) chunk and code exactly as
 * the final header h. */
static int batch_matches(const fz_params *bp, const fz_header *h) {
    fz_header bh;
    if (fz_header_from_params(bp, &bh) != FZ_OK)
        return 0;
    if (bh.chunk_bytes != h->chunk_bytes || bh.codec != h->codec ||
        bh.codec_version != h->codec_version ||
        bh.bound_eff_bits != h->bound_eff_bits || bh.flags != h->flags)
        return 0;
    for (int k = 0; k < 4; k++)
        if (bh.codec_params[k] != h->codec_params[k])
            return 0;
    return 1;
}

fz_status fz_plan_batch_params(const fz_batch_plan *plan, uint64_t b,
                               fz_params *bp) {
    uint64_t first, count, first_byte, bytes;
    fz_plan_batch(plan, b, &first, &count, &first_byte, &bytes);
    *bp = plan->params;
    if (count != plan->h.chunk_count) { /* a part of the array */
        uint32_t ndims;
        uint64_t dims[4];
        fz_sub_shape(&plan->h, bytes, &ndims, dims);
        fz_params_set_shape(bp, ndims, dims);
    }
    if (plan->h.mode == FZ_MODE_REL) {
        bp->mode = FZ_MODE_ABS;
        memcpy(&bp->bound, &plan->abs_bound_bits, sizeof bp->bound);
    }
    /* Resolved codec parameters first (a default may depend on the size),
     * the caller's options as given otherwise. */
    fz_params pinned = *bp;
    for (int k = 0; k < 4; k++)
        pinned.codec_options[k] = (int32_t)plan->h.codec_params[k];
    if (batch_matches(&pinned, &plan->h)) {
        *bp = pinned;
        return FZ_OK;
    }
    return batch_matches(bp, &plan->h) ? FZ_OK : FZ_ERR_UNSUPPORTED;
}

uint64_t fz_entries_payload(const fz_header *h, const uint8_t *entries,
                            uint64_t count) {
    const uint32_t entry = fz_table_entry_bytes(h->flags);
    uint64_t sum = 0;
    for (uint64_t i = 0; i < count; i++)
        sum += fz_load32(entries + i * entry);
    return sum;
}

void fz_sub_header(const fz_header *h, uint64_t first, uint64_t count,
                   const uint8_t *entries, uint64_t payload_bytes,
                   uint8_t *out) {
    fz_header sub = *h;
    if (count != h->chunk_count) {
        uint64_t end = (first + count) * h->chunk_bytes;
        if (end > h->original_bytes)
            end = h->original_bytes;
        sub.original_bytes = end - first * h->chunk_bytes;
        fz_sub_shape(h, sub.original_bytes, &sub.ndims, sub.dims);
        sub.chunk_count = count;
    }
    sub.payload_bytes = payload_bytes;
    sub.table_hash = fz_table_hash(entries, fz_table_bytes(&sub));
    fz_header_write(&sub, out);
}

void fz_table_scan_add(const fz_header *h, fz_table_scan *t,
                       const uint8_t *entries, uint64_t count) {
    const uint32_t entry = fz_table_entry_bytes(h->flags);
    const uint64_t word0 = t->next_chunk * entry / 4;
    t->hash_sum += fz_hash_sum_bytes(entries, count * entry, word0);
    for (uint64_t i = 0; i < count; i++) {
        const uint32_t size = fz_load32(entries + i * entry);
        if (size > fz_chunk_raw_bytes(h, t->next_chunk + i))
            t->oversized = 1;
        t->payload += size;
    }
    t->next_chunk += count;
}

fz_status fz_table_scan_end(const fz_header *h, const fz_table_scan *t,
                            int padding_ok, uint64_t avail) {
    if (t->next_chunk != h->chunk_count ||
        fz_hash_final(t->hash_sum, fz_table_bytes(h) / 4) != h->table_hash)
        return FZ_ERR_TABLE_CHECKSUM;
    if (!padding_ok)
        return FZ_ERR_CORRUPT_HEADER;
    if (t->oversized)
        return FZ_ERR_CORRUPT_CHUNK;
    if (t->payload != h->payload_bytes)
        return FZ_ERR_CORRUPT_HEADER;
    if (avail < fz_payload_offset(h) + t->payload)
        return FZ_ERR_TRUNCATED;
    return FZ_OK;
}

fz_status fz_header_read(const uint8_t *src, uint64_t avail, fz_header *h) {
    int s = fz_header_parse(src, avail, h);
    if (s != FZS_OK)
        return (fz_status)s;
    const fz_codec_cpu *codec = fz_codec_cpu_find(h->codec);
    if (!codec)
        return FZ_ERR_CORRUPT_HEADER;
    return (fz_status)codec->check_header(h);
}
