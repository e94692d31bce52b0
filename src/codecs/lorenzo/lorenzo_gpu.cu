/* Lorenzo codec, CUDA backend: byte-identical to the CPU backend. Every
 * size is exact before anything is written, so compression is a fixed
 * sequence of kernels on the caller's stream:
 *   1. REL: the value range (CUB), then a 1-thread kernel resolving the
 *      enforced bound into the scratch head;
 *   2. one grid kernel over (chunk, box of whole Lorenzo tiles), per-chunk
 *      results summed by atomics, one instantiation per predictor
 *      dimensionality: prequantization, exact bound check and checksums,
 *      the box's residuals via registers, shuffles and shared memory,
 *      quant codes and the histogram (hot codes per lane in registers),
 *      the tile corners' lattice residuals (version 2; their terms
 *      fetched by cp.async at the start of a box),
 *      outlier residuals;
 *   3. the code book: the used codes sorted by (frequency, code) (CUB
 *      segmented radix sort over all chunks), then per chunk a block:
 *      package-merge levels merged in parallel (lz_pm_merge, the CPU's
 *      definition cut into per-thread output ranges), lengths, canonical
 *      codes ranked in parallel;
 *   4. grid: sub-block bits (kSubsPerTile Huffman sub-blocks of
 *      LZ_SUB_SYMBOLS codes per tile) and run starts per tile; per chunk: tile
 *      offsets by block scans; grid: run starts compacted, RLE bytes per
 *      tile of runs; per chunk: the workflow, size and table entry;
 *   5. chunk offsets: a CUB exclusive scan of the sizes;
 *   6. write, grid over (chunk, tile): outliers and exceptions compacted
 *      at their tile offsets, runs at theirs, the tile's Huffman sub-blocks
 *      packed by its block in shared memory (16 codes per thread through a
 *      64-bit accumulator at scanned bit offsets) and stored as aligned
 *      words, or the verbatim input (hashed as it is copied: only a
 *      verbatim chunk needs the input's checksum; its last tile writes
 *      the table entry).
 * Decompression: a head kernel, one block per chunk, checks the stream
 * and the chunk head, copies verbatim chunks, parses the code table (one
 * thread, shared memory) and scans the sub-block sizes (or reads the RLE
 * head); then grid kernels over (chunk, tile): Huffman sub-blocks (one
 * thread each, an LZ_LUT_BITS table in shared memory) straight to
 * residuals; RLE runs from tiles of length bytes (counts and sums per
 * tile, scanned per chunk, then each run's start) and their expansion;
 * outliers; the tile corners (version 2: a launch per axis, a warp per
 * lattice line); then over (chunk, box of whole Lorenzo tiles, one
 * instantiation per predictor dimensionality) the x (warp scans), y and z
 * tile prefix sums (in registers, 3-D y in shared memory) and the values,
 * one kernel; exceptions (with the checksum terms summed per chunk), and a
 * per-chunk check at the end. Chunks of a
 * 3-D field are whole slabs of 8 planes (often only tens of chunks), so
 * one block per chunk would leave most SMs idle. Rules: lorenzo_xform.h and
 * docs/FORMAT.md section 12. */
#include <climits>
#include <cuda_pipeline_primitives.h>
#include <cub/block/block_radix_sort.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_segmented_radix_sort.cuh>

#include "../../common/fz_bound.h"
#include "../../common/fz_hash.h"
#include "../../gpu/fz_gpu.cuh"
#include "lorenzo_huff.h"
#include "lorenzo_xform.h"

namespace {

constexpr int kThreads = 1024;
constexpr int kWarps = kThreads / 32;
/* Values (or list entries) per tile of the grid kernels: kSubsPerTile
 * Huffman sub-blocks. */
constexpr uint32_t kTile = 4096;
constexpr uint32_t kSubsPerTile = kTile / LZ_SUB_SYMBOLS;
static_assert(kTile % LZ_SUB_SYMBOLS == 0, "whole sub-blocks per tile");
static_assert(kSubsPerTile == 4,
              "a tile's sub-blocks: lanes 4j..4j+3 (xor 1, 2)");

__host__ __device__ uint64_t tile_count(uint64_t n) {
    return (n + kTile - 1) / kTile;
}
/* Alphabets up to this size keep their histogram in shared memory. */
constexpr uint32_t kSharedHist = 4096;
typedef cub::BlockScan<uint32_t, kThreads> Scan;

/* A chunk's workflow: the stream's flow byte, or verbatim (no byte). */
enum : uint32_t {
    kHuffman = LZ_FLOW_HUFFMAN,
    kRle = LZ_FLOW_RLE,
    kZeroRuns = LZ_FLOW_ZRUNS,
    kVerbatim = 3
};

/* Where a chunk stands with the zero-run workflow (headers that allow
 * it): none (it cannot win), tallied (run symbols counted, book built),
 * coded (its exact lower bound beats Huffman and RLE: symbols written,
 * their bits summed). */
enum : uint32_t { kZrNone = 0, kZrTally = 1, kZrCoded = 2 };

/* What the plan kernel decided for a chunk, read by the write kernel. */
struct ChunkPlan {
    uint32_t flow, size, nout, nexc, runs, lo, hi;
    uint32_t data; /* bytes of the Huffman sub-blocks */
    /* zero runs: state (kZr*), symbols, their book's code range and run
     * symbols, bytes of their sub-blocks, and sum freq x len of the book */
    uint32_t zstate, zm, zlo, zhi, zk, zdata;
    unsigned long long zbits;
};

/* Per-chunk sums of the compression grid kernels (zeroed per call).
 * hash_raw, the input's checksum sum, is only needed for a verbatim chunk:
 * the write kernel takes it while it copies, tile by tile, and the last
 * tile (raw_tiles counts them) writes the table entry. */
struct ChunkAcc {
    uint32_t hash_recon, hash_raw, nexc, raw_tiles;
    uint32_t zruns; /* maximal runs of the zero residual's code */
};

enum : uint32_t { kDecodeOk = 0, kDecodeDone = 1, kDecodeFailed = 2 };

/* What the head kernel parsed for a chunk, read by the grid kernels. A
 * chunk whose head kernel did not reach the end stays kDecodeFailed
 * (verbatim chunks are kDecodeDone), and every later kernel skips it. */
struct ChunkDecode {
    lz_huff_table t;
    unsigned long long lists_at; /* outlier list, bytes into a.src */
    unsigned long long data_at;  /* Huffman sub-blocks or RLE codes */
    unsigned long long lens_at;  /* RLE lengths, bytes into a.src */
    uint32_t lens_bytes;
    unsigned long long ebx2_bits, eb_bits; /* 2 eb; eb (exception checks) */
    uint32_t state, flow, nout, nexc, runs, want;
    uint32_t hash, zeros, bad, check;
};

/* Per-call work arrays after the generic temp region (see work_layout). */
struct Work {
    int32_t *q;      /* compress: outlier residuals; decode: residuals */
    uint16_t *codes; /* quant codes */
    uint32_t *aux;   /* run starts */
    uint32_t *hist;  /* per-chunk histograms */
    uint8_t *book;   /* per-chunk code book (and package-merge lists) */
    uint64_t *keys, *keys_alt;    /* per-chunk sort keys, CUB double buffer */
    int *seg;                     /* segment offsets of one sort call */
    uint32_t *sub_bits, *sub_off; /* per sub-block bits, byte offsets */
    ChunkPlan *plan;
    ChunkAcc *acc;
    /* per (chunk, tile) counts, scanned in place into offsets: outliers,
     * exceptions, run starts (value tiles), RLE bytes (tiles of runs) */
    uint32_t *tile_out, *tile_exc, *tile_runs, *tile_rle;
    ChunkDecode *dec; /* decode: per-chunk state */
    unsigned long long *sizes, *offs;
    void *cub, *sort_tmp;
    size_t cub_bytes, sort_bytes;
    uint64_t book_stride, subs_per_chunk, tiles_per_chunk;
    uint64_t sort_chunks; /* chunks per segmented sort call */
    int sort_end_bit;     /* key bits to sort: code and frequency */
    uint32_t nsym;        /* quant codes: 2 R */
    uint32_t book_syms;   /* symbols of a book: nsym (+ zero-run symbols) */
    /* compression with zero runs allowed (else null): each chunk's run
     * symbols (at its first value), their book, sub-block bits and byte
     * offsets, symbols per value tile (scanned into offsets), and the
     * counts of the run symbols Z_k (LZ_ZRUN_SYMBOLS per chunk) */
    uint16_t *zcodes;
    uint8_t *zbook;
    uint32_t *zsub_bits, *zsub_off, *tile_zsym, *zcount;
    /* per value tile the first value that is not the zero residual's code
     * R (or none), then (tile_scan_kernel) the first after the tile (or n):
     * where a run of R open at a tile's end ends */
    uint32_t *tile_nonr;
};

uint64_t align_up(uint64_t v) {
    return fz_align_up(v, FZ_GPU_SCRATCH_ALIGN);
}

/* Package-merge scratch of one chunk (leaves, two level lists, leaf
 * flags of every level) for an alphabet of nsym symbols. */
__host__ __device__ uint64_t pm_bytes(uint32_t nsym) {
    return 8ull * nsym + 32ull * nsym +
           4ull * LZ_HUFF_MAXLEN * lz_pm_words(nsym);
}

/* Alphabets whose package-merge scratch fits this much shared memory
 * (the default 1024 symbols: 45 KiB) build their book there; larger ones
 * in the chunk's book in global memory. */
constexpr uint64_t kSharedPm = 96u << 10;

/* Book of one chunk (nsym symbols): code u32 (decode: syms), len u8; for
 * alphabets too large for shared memory then the package-merge lists and
 * leaf flags (the leaves are the sorted keys). */
uint64_t book_bytes(uint32_t nsym) {
    const uint64_t head = fz_align_up(5ull * nsym, 16);
    return pm_bytes(nsym) <= kSharedPm
               ? head
               : head + fz_align_up(pm_bytes(nsym) - 8ull * nsym, 16);
}

/* Sort keys: code in bits 0..15, frequency (at most the values of a
 * chunk) above. */
int sort_end_bit(const fz_header *h) {
    uint64_t cv = h->chunk_bytes / fz_dtype_size(h->dtype);
    int bits = 0;
    for (; cv; cv >>= 1)
        bits++;
    return 16 + bits;
}

size_t sort_temp_bytes(const Work &w) {
    size_t bytes = 0;
    cub::DoubleBuffer<uint64_t> keys(nullptr, nullptr);
    cub::DeviceSegmentedRadixSort::SortKeys(
        nullptr, bytes, keys, (int)(w.sort_chunks * w.book_syms),
        (int)w.sort_chunks, (const int *)nullptr, (const int *)nullptr, 0,
        w.sort_end_bit);
    return bytes;
}

size_t scan_temp_bytes(uint64_t chunks) {
    size_t bytes = 0;
    cub::DeviceScan::ExclusiveSum(
        nullptr, bytes, (const unsigned long long *)nullptr,
        (unsigned long long *)nullptr, (int64_t)(chunks ? chunks : 1));
    return bytes;
}

/* Lays the work arrays out from base (null: sizes only); returns bytes. */
uint64_t work_layout(const fz_header *h, uint8_t *base, Work *w) {
    const uint32_t es = fz_dtype_size(h->dtype);
    const uint64_t n = h->original_bytes / es, C = h->chunk_count;
    const uint64_t cv = h->chunk_bytes / es;
    memset(w, 0, sizeof *w);
    w->nsym = 2 * h->codec_params[0];
    w->book_syms = lz_book_symbols(h);
    w->book_stride = book_bytes(w->book_syms);
    w->subs_per_chunk = lz_sub_count(cv);
    w->tiles_per_chunk = tile_count(cv);
    uint64_t at = 0;
    auto take = [&](uint64_t bytes) {
        uint8_t *p = base ? base + at : nullptr;
        at += align_up(bytes);
        return p;
    };
    w->q = (int32_t *)take(4 * n);
    w->codes = (uint16_t *)take(2 * n);
    w->aux = (uint32_t *)take(4 * n);
    w->hist = (uint32_t *)take(4ull * C * w->nsym);
    w->book = take(C * w->book_stride);
    const uint32_t S = w->book_syms; /* the larger alphabet sorted */
    w->sort_chunks = C < (uint64_t)INT_MAX / S ? C : INT_MAX / S;
    w->sort_end_bit = sort_end_bit(h);
    w->keys = (uint64_t *)take(8 * C * S);
    w->keys_alt = (uint64_t *)take(8 * C * S);
    w->seg = (int *)take(4 * (w->sort_chunks + 1));
    w->sort_bytes = sort_temp_bytes(*w);
    w->sort_tmp = take(w->sort_bytes);
    w->sub_bits = (uint32_t *)take(4 * C * w->subs_per_chunk);
    w->sub_off = (uint32_t *)take(4 * C * w->subs_per_chunk);
    w->plan = (ChunkPlan *)take(sizeof(ChunkPlan) * C);
    w->acc = (ChunkAcc *)take(sizeof(ChunkAcc) * C);
    w->tile_out = (uint32_t *)take(4 * C * w->tiles_per_chunk);
    w->tile_exc = (uint32_t *)take(4 * C * w->tiles_per_chunk);
    w->tile_runs = (uint32_t *)take(4 * C * w->tiles_per_chunk);
    w->tile_rle = (uint32_t *)take(4 * C * w->tiles_per_chunk);
    w->dec = (ChunkDecode *)take(sizeof(ChunkDecode) * C);
    w->sizes = (unsigned long long *)take(8 * C);
    w->offs = (unsigned long long *)take(8 * C);
    w->cub_bytes = scan_temp_bytes(C);
    w->cub = take(w->cub_bytes);
    if (lz_zero_runs(h)) {
        w->zcodes = (uint16_t *)take(2 * n);
        w->zbook = take(C * w->book_stride);
        w->zsub_bits = (uint32_t *)take(4 * C * w->subs_per_chunk);
        w->zsub_off = (uint32_t *)take(4 * C * w->subs_per_chunk);
        w->tile_zsym = (uint32_t *)take(4 * C * w->tiles_per_chunk);
        w->zcount = (uint32_t *)take(4ull * C * LZ_ZRUN_SYMBOLS);
        w->tile_nonr = (uint32_t *)take(4 * C * w->tiles_per_chunk);
    }
    return at;
}

/* ----------------------------------------------------- per-type parts */
template <int ES> struct Val;
template <> struct Val<4> {
    typedef uint32_t U;
    static __device__ uint32_t hash(U b, uint64_t i) {
        return fz_hash_value32(b, i);
    }
    static __device__ U recon(int32_t q, double ebx2) {
        const float f = lz_recon32(q, ebx2);
        U r;
        memcpy(&r, &f, 4);
        return r;
    }
    /* 1, q and the reconstruction r when b quantizes; else 0 (an
     * exception), q = 0, r = b */
    static __device__ bool quant(U b, const lz_quant &z, int32_t *q, U *r) {
        return lz_prequant32(b, &z, q, r);
    }
};
template <> struct Val<8> {
    typedef uint64_t U;
    static __device__ uint32_t hash(U b, uint64_t i) {
        return fz_hash_value64(b, i);
    }
    static __device__ U recon(int32_t q, double ebx2) {
        const double d = lz_recon64(q, ebx2);
        U r;
        memcpy(&r, &d, 8);
        return r;
    }
    static __device__ bool quant(U b, const lz_quant &z, int32_t *q, U *r) {
        return lz_prequant64(b, &z, q, r);
    }
};

__device__ double double_of(uint64_t bits) {
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

/* Block-wide sum, the same value returned to every thread. */
__device__ uint32_t block_sum(uint32_t x, uint32_t *sm) {
    x = __reduce_add_sync(FZ_FULL_MASK, x);
    __syncthreads(); /* sm may still be read by a previous call */
    if ((threadIdx.x & 31) == 0)
        sm[threadIdx.x >> 5] = x;
    __syncthreads();
    uint32_t t = 0;
    for (int k = 0; k < kWarps; k++)
        t += sm[k];
    return t;
}

struct ChunkSpan {
    uint64_t first; /* first value */
    uint32_t n;     /* values */
    uint64_t raw;   /* bytes */
};

__device__ ChunkSpan chunk_span(const fz_header &h, uint64_t c, uint32_t es) {
    ChunkSpan s;
    const uint64_t cv = h.chunk_bytes / es, total = h.original_bytes / es;
    s.first = c * cv;
    s.n = (uint32_t)(total - s.first < cv ? total - s.first : cv);
    s.raw = (uint64_t)s.n * es;
    return s;
}

/* The book of chunk c. */
struct Book {
    uint32_t *code; /* canonical code per symbol (decode: sorted syms) */
    uint8_t *len;
};

__device__ Book book_at(const Work &w, uint8_t *books, uint64_t c) {
    uint8_t *p = books + c * w.book_stride;
    Book b;
    b.code = (uint32_t *)p;
    b.len = p + 4ull * w.book_syms;
    return b;
}

__device__ Book book_of(const Work &w, uint64_t c) {
    return book_at(w, w.book, c);
}

/* ------------------------------------- boxes of whole Lorenzo tiles */
/* Threads of the grid kernels over (chunk, tile or box). */
constexpr int kTileThreads = 256;

/* Warp k of a tile (or box) block owns kWarpItems consecutive items, in
 * kWarpSteps steps of 32 lanes (coalesced): tile compaction, and the x
 * scans of the fused decoding. */
constexpr uint32_t kTileWarps = kTileThreads / 32;
constexpr uint32_t kWarpItems = kTile / kTileWarps;
constexpr uint32_t kWarpSteps = kWarpItems / 32;
static_assert(kWarpItems % 32 == 0 && kWarpSteps * 32 * kTileWarps == kTile,
              "a tile is whole warp steps");

/* Boxes of the fused quantization and of the fused decoding: whole
 * Lorenzo tiles, kTile values (1-D: 4096 x 1 x 1, 2-D: 256 x 16, 3-D:
 * 64 x 8 x 8), so every value's predecessors are in its box. A chunk (whole
 * slabs) is seen as Xc x Yc x Zc values, x fastest; boxes at its far edges are
 * partial. */
struct BoxGeom {
    uint32_t Xc, Yc, Zc;      /* chunk extents in values */
    uint32_t bx_log, by_log;  /* box extents 2^bx_log x 2^by_log x ... */
    uint32_t mx, my, mz;      /* tile extent - 1 (powers of two) */
    uint32_t nbx, nby, boxes; /* boxes along x, y and in all */
};
static_assert((LZ_TILE1 & (LZ_TILE1 - 1)) == 0 &&
                  (LZ_TILE2 & (LZ_TILE2 - 1)) == 0 &&
                  (LZ_TILE3X & (LZ_TILE3X - 1)) == 0 &&
                  (LZ_TILE3Y & (LZ_TILE3Y - 1)) == 0 &&
                  (LZ_TILE3Z & (LZ_TILE3Z - 1)) == 0,
              "tile extents are powers of two");
static_assert(kTile % LZ_TILE1 == 0 && kTile % (LZ_TILE2 * LZ_TILE2) == 0 &&
                  kTile % (LZ_TILE3X * LZ_TILE3Y * LZ_TILE3Z) == 0 &&
                  kTile / (LZ_TILE3Y * LZ_TILE3Z) >= 32 &&
                  kTile / LZ_TILE2 >= 32 && kTile % kTileThreads == 0,
              "boxes are whole tiles, rows of whole warps");

__host__ __device__ uint32_t log2_of(uint32_t v) {
    uint32_t l = 0;
    while ((1u << l) < v)
        l++;
    return l;
}

/* The boxes of a chunk of n values (a chunk is whole rows and planes). */
__host__ __device__ BoxGeom box_geom(const fz_header &h, uint32_t n) {
    const lz_geom g = lz_geometry(&h);
    BoxGeom b;
    b.Xc = g.pd == 1 ? n : (uint32_t)g.X;
    b.Yc = g.pd == 1 ? 1u : g.pd == 2 ? n / b.Xc : (uint32_t)g.Y;
    b.Zc = g.pd == 3 ? n / (b.Xc * b.Yc) : 1u;
    b.by_log = log2_of(g.ty);
    b.bx_log = log2_of(kTile / (g.ty * g.tz));
    b.mx = g.tx - 1;
    b.my = g.ty - 1;
    b.mz = g.tz - 1;
    b.nbx = (b.Xc + (1u << b.bx_log) - 1) >> b.bx_log;
    b.nby = (b.Yc + g.ty - 1) / g.ty;
    b.boxes = n ? b.nbx * b.nby * ((b.Zc + g.tz - 1) / g.tz) : 0u;
    return b;
}

/* One value of a box: coordinates in the chunk, chunk index i. */
struct BoxValue {
    uint32_t x, y, z, i;
    bool valid;
};

/* The first value of box number box. */
__device__ BoxValue box_origin(const BoxGeom &b, uint32_t box) {
    BoxValue o;
    o.x = (box % b.nbx) << b.bx_log;
    o.y = ((box / b.nbx) % b.nby) << b.by_log;
    o.z = box / (b.nbx * b.nby) * (b.mz + 1);
    o.i = 0;
    o.valid = false;
    return o;
}

/* Value k of the box at o (x fastest). */
__device__ BoxValue box_value(const BoxGeom &b, const BoxValue &o, uint32_t k) {
    BoxValue v;
    v.x = o.x + (k & ((1u << b.bx_log) - 1));
    v.y = o.y + ((k >> b.bx_log) & ((1u << b.by_log) - 1));
    v.z = o.z + (k >> (b.bx_log + b.by_log));
    v.valid = v.x < b.Xc && v.y < b.Yc && v.z < b.Zc;
    v.i = v.valid ? (v.z * b.Yc + v.y) * b.Xc + v.x : 0u;
    return v;
}

/* The fused kernels' boxes with compile-time shapes, one instantiation
 * per predictor dimensionality PD: BX x BY x BZ values (x fastest, as
 * box_geom), thread t holding the values k = t + kTileThreads j, j = 0..
 * kBoxSteps - 1. So a thread's x is fixed (1-D: x = t + 256 j), and its
 * y and z follow from j: 2-D y = j; 3-D y = t / 64 + 4 (j & 1), z =
 * j / 2. Boxes start on tile borders, so which Lorenzo predecessors lie
 * in the tile is known per thread (x) or at compile time (y, z). The
 * decoding's 1-D boxes are warp-striped instead (kStripedStep). */
constexpr uint32_t kBoxSteps = kTile / kTileThreads;
template <int PD> struct BoxShape {
    static constexpr uint32_t BY = PD == 1   ? 1u
                                   : PD == 2 ? LZ_TILE2
                                             : LZ_TILE3Y;
    static constexpr uint32_t BZ = PD == 3 ? LZ_TILE3Z : 1u;
    static constexpr uint32_t BX = kTile / (BY * BZ);
    static constexpr uint32_t TX = PD == 1   ? LZ_TILE1
                                   : PD == 2 ? LZ_TILE2
                                             : LZ_TILE3X;
};
static_assert(BoxShape<1>::BX == kTile && BoxShape<1>::TX == kTileThreads,
              "1-D: a thread's x steps by whole tiles");
static_assert(BoxShape<2>::BX == kTileThreads && 32 % BoxShape<2>::TX == 0,
              "2-D: a row per step, x tiles inside warps");
static_assert(BoxShape<3>::BX * BoxShape<3>::BY == 2 * kTileThreads &&
                  BoxShape<3>::BX % 32 == 0 && 32 % BoxShape<3>::TX == 0 &&
                  BoxShape<3>::BZ * 2 == kBoxSteps,
              "3-D: half a plane per step, x tiles inside warps");

/* 1-D step of the decoding: warp w holds the box's kWarpItems values from
 * w kWarpItems on, 32 consecutive ones per step (k = w kWarpItems + 32 j +
 * lane), so that an x tile's prefix sum stays in the warp. */
constexpr uint32_t kStripedStep = 32;
static_assert(kWarpSteps == kBoxSteps, "a warp's items are its steps");

/* This thread's values of one box: value j is at chunk index
 * i0 + (PD 1: Step1 j; PD 2: j Xc; PD 3: (j & 1) 4 Xc + (j >> 1) Xc Yc). */
template <int PD, uint32_t Step1 = kTileThreads> struct BoxLane {
    uint32_t i0;      /* index of value 0 (used only where valid) */
    uint32_t row;     /* PD 2: Xc; PD 3: 4 Xc (odd j) */
    uint32_t plane;   /* PD 3: Xc Yc */
    uint32_t left;    /* PD 1: Xc; PD 2: rows, PD 3: planes in the chunk */
    bool in0, in1;    /* x (PD 2, 3) and y (PD 3: even, odd j) inside */
    bool bx, by_even; /* an x predecessor in the tile; PD 3 even j: y */

    __device__ uint32_t offset(uint32_t j) const { /* index(j) - i0 */
        if (PD == 1)
            return Step1 * j;
        if (PD == 2)
            return j * row;
        return (j & 1) * row + (j >> 1) * plane;
    }
    __device__ uint32_t index(uint32_t j) const {
        return i0 + offset(j);
    }
    __device__ bool valid(uint32_t j) const {
        if (PD == 1)
            return index(j) < left;
        if (PD == 2)
            return in0 && j < left;
        return ((j & 1) ? in1 : in0) && (j >> 1) < left;
    }
    /* The same test as one compare per value: valid(j) == valid_in(j, lim)
     * with lim = {limit(false), limit(true)}, taken once per box. */
    __device__ uint32_t limit(bool odd) const {
        if (PD == 1)
            return i0 < left ? left - i0 : 0u;
        return (PD == 3 && odd ? in1 : in0) ? left : 0u;
    }
    __device__ bool valid_in(uint32_t j, const uint32_t (&lim)[2]) const {
        if (PD == 1)
            return offset(j) < lim[0];
        if (PD == 2)
            return j < lim[0];
        return (j >> 1) < lim[j & 1];
    }
};

/* The lane of thread t in box number box. In 2-D and 3-D, when the
 * thread's first value (k = t) is outside the chunk, so are all of its
 * values (they share its x, and its y but for + 4 in 3-D). */
template <int PD, uint32_t Step1 = kTileThreads>
__device__ BoxLane<PD, Step1> box_lane(const BoxGeom &b, uint32_t box) {
    typedef BoxShape<PD> S;
    static_assert(Step1 == kTileThreads || Step1 == kStripedStep,
                  "1-D: block-strided or warp-striped");
    const BoxValue o = box_origin(b, box);
    const uint32_t t = threadIdx.x;
    BoxLane<PD, Step1> L;
    L.row = PD == 3 ? (kTileThreads / S::BX) * b.Xc : b.Xc;
    L.plane = b.Xc * b.Yc;
    L.bx = (t & (S::TX - 1)) != 0;
    L.by_even = PD == 3 && t >= S::BX;
    if (PD == 1) { /* the index itself is checked */
        L.i0 = o.x +
               (Step1 == kTileThreads ? t : (t >> 5) * kWarpItems + (t & 31));
        L.left = b.Xc;
        L.in0 = L.in1 = true;
    } else {
        const BoxValue v = box_value(b, o, t);
        L.i0 = v.i;
        L.in0 = v.valid;
        L.in1 = v.valid && v.y + kTileThreads / S::BX < b.Yc;
        L.left = PD == 2 ? b.Yc - o.y : b.Zc - o.z;
    }
    return L;
}

/* p, hidden from the optimizer: p[offset] then costs one 32-bit
 * multiply-add instead of the 64-bit index arithmetic it would be
 * reassociated into (the address space is lost with it: access through
 * __ldg / __ldcg / __stcg, which are global). */
template <typename T> __device__ T *opaque(T *p) {
    asm("" : "+l"(p));
    return p;
}

/* ------------------------------------------------------- compression */
__global__ void resolve_bound(const fz_gpu_args a) {
    const fz_header &h = a.expect;
    uint64_t bits = h.bound_bits;
    if (h.mode == 2) {
        const double rel = double_of(h.bound_bits);
        bits = fz_rel_abs_bound_bits(rel, a.scratch->range_lo,
                                     a.scratch->range_hi);
    }
    a.scratch->bound_eff_bits = bits; /* lorenzo enforces the bound itself */
}

__device__ void put32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

/* ----------------------------------------------------- decompression */
/* Huffman decoding: one thread per sub-block, blocks of kSubThreads (the
 * 16 KiB table built per block serves 128 sub-blocks). */
constexpr int kSubThreads = 128;
constexpr uint32_t kLutSize = 1u << LZ_LUT_BITS;

struct __align__(16) DecodeShared {
    fz_header hdr;
    uint32_t sums[kWarps];
    uint32_t want, nout, nexc, flow;
    int ok;
    unsigned long long lists;
};

/* The RLE stream's head (one thread): the run count and where the codes
 * and the lengths are; the necessary conditions a thread can check: every
 * run has one code and 1..LZ_LEB_MAX length bytes, the last byte ends a
 * length. The rest is checked by the RLE grid kernels. */
__device__ bool parse_rle_head(const uint8_t *p, uint64_t plen, uint32_t n,
                               uint32_t *runs, uint32_t *lens_bytes) {
    if (plen < 4)
        return false;
    const uint64_t r = fz_load32(p);
    if (r == 0 || r > n || (plen - 4) / 2 < r)
        return false;
    const uint64_t lb = plen - 4 - 2 * r;
    if (lb < r || lb > LZ_LEB_MAX * r || (p[plen - 1] & 0x80))
        return false;
    *runs = (uint32_t)r;
    *lens_bytes = (uint32_t)lb;
    return true;
}

/* Alphabets up to this size parse their code table in shared memory. */
constexpr uint32_t kHeadSyms = 4096;
typedef cub::BlockScan<unsigned long long, kThreads> Scan64;

constexpr uint32_t kLens = LZ_HUFF_MAXLEN + 1;

/* Canonical order inside a round of kThreads symbols (block-wide: every
 * thread calls it, with its symbol's code length l, 0 = unused): the
 * symbol's place among those of its length, next[l] plus the symbols of
 * that length before it in the round (its warp by __match_any_sync, the
 * warps before it by a scan per length); next[l] then moves past the
 * round. warp_len is kWarps x kLens scratch. Used by the code book
 * (canonical codes) and by the decoder's table (symbols in code order). */
__device__ uint32_t rank_in_length(uint32_t l, uint32_t (*warp_len)[kLens],
                                   uint32_t *next) {
    const uint32_t lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (uint32_t k = threadIdx.x; k < kWarps * kLens; k += kThreads)
        (&warp_len[0][0])[k] = 0;
    __syncthreads();
    const uint32_t peers = __match_any_sync(FZ_FULL_MASK, l);
    if (l && lane == (uint32_t)__ffs(peers) - 1)
        warp_len[warp][l] = (uint32_t)__popc(peers);
    __syncthreads();
    if (threadIdx.x >= 1 && threadIdx.x < kLens) {
        uint32_t run = next[threadIdx.x];
        for (uint32_t w = 0; w < kWarps; w++) {
            const uint32_t c = warp_len[w][threadIdx.x];
            warp_len[w][threadIdx.x] = run;
            run += c;
        }
        next[threadIdx.x] = run;
    }
    __syncthreads();
    const uint32_t r =
        l ? warp_len[warp][l] + (uint32_t)__popc(peers & ((1u << lane) - 1))
          : 0u;
    __syncthreads(); /* warp_len is cleared by the next round */
    return r;
}

struct __align__(16) HeadShared {
    Scan64::TempStorage scan;
    lz_huff_table t;
    uint32_t lo, hi, zk, head, tbytes;
    int ok;
    uint32_t warp_len[kWarps][kLens]; /* symbols per length in each warp */
    uint32_t carry[kLens];            /* of each length in the earlier rounds */
    uint32_t syms[kHeadSyms];
    uint8_t len[kHeadSyms];
    uint8_t tab[5 + (5 * kHeadSyms + 7) / 8]; /* lz_table_bytes */
};

/* Table entry of symbol sym (lz_huff_parse_head's order: the codes lo..hi,
 * then Z_0..Z_zk-1 from zsym on), or UINT32_MAX when it has none. */
__device__ uint32_t table_entry(uint32_t sym, uint32_t lo, uint32_t hi,
                                uint32_t zsym, uint32_t zk) {
    if (sym >= lo && sym <= hi)
        return sym - lo;
    if (sym >= zsym && sym - zsym < zk)
        return hi - lo + 1 + sym - zsym;
    return UINT32_MAX;
}

/* lz_huff_parse_head by the whole block (one thread took ~100 us per
 * chunk: four serial loops over the alphabet): the same checks, the same
 * len, t and syms, and the same return value in every thread. The lengths
 * are read and counted in parallel (warp-aggregated shared atomics); the
 * symbols are placed in code order by rank_in_length. Zero-run symbols
 * from zsym on (none when zsym = nsym). */
__device__ uint32_t parse_table_block(const uint8_t *p, uint64_t size,
                                      uint32_t n, uint32_t nsym, uint32_t zsym,
                                      uint8_t *len, uint32_t *syms,
                                      HeadShared &hs) {
    const uint32_t tid = threadIdx.x, lane = tid & 31;
    if (tid == 0) {
        const bool zero_runs = zsym < nsym;
        bool ok = size >= (zero_runs ? 5u : 4u);
        const uint32_t lo = ok ? fz_load16(p) : 0,
                       hi = ok ? fz_load16(p + 2) : 0;
        const uint32_t zk = ok && zero_runs ? p[4] : 0u;
        ok = ok && lo <= hi && hi < zsym && zk <= nsym - zsym;
        const uint32_t head =
            ok ? lz_table_bytes(zero_runs, lz_table_entries(lo, hi, zk)) : 0;
        ok = ok && size >= head &&
             (size - head) / LZ_SUB_SIZE >= lz_sub_count(n);
        hs.lo = lo, hs.hi = hi, hs.zk = zk, hs.head = head;
        hs.tbytes = head - (zero_runs ? 5u : 4u);
        hs.ok = ok;
    }
    if (tid < kLens)
        hs.t.count[tid] = hs.carry[tid] = 0;
    __syncthreads();
    if (!hs.ok)
        return 0;
    const uint32_t lo = hs.lo, hi = hs.hi, zk = hs.zk, tbytes = hs.tbytes;
    const uint8_t *tab = p + (hs.head - tbytes);
    bool too_long = false;
    for (uint32_t base = 0; base < nsym; base += kThreads) {
        const uint32_t sym = base + tid;
        const uint32_t e = table_entry(sym, lo, hi, zsym, zk);
        uint32_t l = 0;
        if (e != UINT32_MAX)
            l = lz_peek(tab, tbytes, 5 * (uint64_t)e) >> (LZ_HUFF_MAXLEN - 5);
        too_long |= l > LZ_HUFF_MAXLEN;
        if (sym < nsym)
            len[sym] = (uint8_t)(l > LZ_HUFF_MAXLEN ? 0 : l);
        const uint32_t key = sym < nsym && l <= LZ_HUFF_MAXLEN ? l : kLens;
        const uint32_t peers = __match_any_sync(FZ_FULL_MASK, key);
        if (key < kLens && lane == (uint32_t)__ffs(peers) - 1)
            atomicAdd(&hs.t.count[key], (uint32_t)__popc(peers));
    }
    if (__syncthreads_or(too_long))
        return 0;
    if (tid == 0) {
        const uint32_t tbits = 5 * lz_table_entries(lo, hi, zk);
        bool ok = len[lo] && len[hi] && (!zk || len[zsym + zk - 1]) &&
                  !(tbits & 7 && tab[tbytes - 1] & (0xFFu >> (tbits & 7)));
        const uint32_t used = nsym - hs.t.count[0];
        const uint64_t kraft =
            lz_canonical_counts(hs.t.count, hs.t.first, hs.t.base);
        ok = ok && (used == 1 ? len[lo] == 1 : kraft == (1u << LZ_HUFF_MAXLEN));
        uint32_t minlen = 1;
        while (ok && !hs.t.count[minlen])
            minlen++;
        hs.t.minlen = minlen;
        hs.ok = ok;
    }
    __syncthreads();
    if (!hs.ok)
        return 0;
    for (uint32_t base = 0; base < nsym; base += kThreads) {
        const uint32_t sym = base + tid;
        const uint32_t l = sym < nsym ? len[sym] : 0u;
        const uint32_t rank = rank_in_length(l, hs.warp_len, hs.carry);
        if (l)
            syms[hs.t.base[l] + rank] = sym;
    }
    __syncthreads(); /* the caller reads syms (racecheck: it copied them
                      * out before the last round's writes had landed) */
    return hs.head;
}

/* Parses the Huffman table of n symbols (alphabet nsym, zero-run symbols
 * from zsym on; by the block, on a shared copy of the table for small
 * alphabets) and the sub-block sizes (a scan of their byte counts): fills
 * the decoding table, the sorted symbols, sub-block bits and offsets. The
 * same answer in every thread. */
__device__ __noinline__ bool parse_huffman(const uint8_t *p, uint64_t size,
                                           uint32_t n, uint32_t nsym,
                                           uint32_t zsym, const Book &bk,
                                           lz_huff_table *t, uint32_t *sub_bits,
                                           uint32_t *sub_off, uint64_t *data_at,
                                           HeadShared &hs) {
    const bool in_shared = nsym <= kHeadSyms;
    if (in_shared) {
        const uint64_t most = lz_table_bytes(zsym < nsym, nsym);
        for (uint64_t k = threadIdx.x; k < size && k < most; k += kThreads)
            hs.tab[k] = p[k];
        __syncthreads();
    }
    /* code: sorted syms */
    const uint32_t at = parse_table_block(in_shared ? hs.tab : p, size, n, nsym,
                                          zsym, in_shared ? hs.len : bk.len,
                                          in_shared ? hs.syms : bk.code, hs);
    if (!at)
        return false;
    for (uint32_t k = threadIdx.x; k < sizeof(lz_huff_table) / 4; k += kThreads)
        reinterpret_cast<uint32_t *>(t)[k] =
            reinterpret_cast<const uint32_t *>(&hs.t)[k]; /* all words */
    if (in_shared) {
        const uint32_t used = hs.t.base[LZ_HUFF_MAXLEN] +
                              hs.t.count[LZ_HUFF_MAXLEN]; /* all lengths */
        for (uint32_t k = threadIdx.x; k < used; k += kThreads)
            bk.code[k] = hs.syms[k];
    }
    const uint32_t nsub = (uint32_t)lz_sub_count(n);
    const uint8_t *sizes = p + at;
    unsigned long long done = 0;
    for (uint32_t base = 0; base < nsub; base += kThreads) {
        const uint32_t b = base + threadIdx.x;
        const uint32_t bits =
            b < nsub ? fz_load16(sizes + (uint64_t)LZ_SUB_SIZE * b) : 0u;
        unsigned long long rank, agg;
        Scan64(hs.scan).ExclusiveSum(((unsigned long long)bits + 7) / 8, rank,
                                     agg);
        if (b < nsub) { /* offsets are < 2^32 when the total checks */
            sub_bits[b] = bits;
            sub_off[b] = (uint32_t)(done + rank);
        }
        done += agg;
        __syncthreads(); /* hs.scan is reused */
    }
    *data_at = at + (uint64_t)LZ_SUB_SIZE * nsub;
    return done == size - at - (uint64_t)LZ_SUB_SIZE * nsub;
}

/* Per chunk (one block): stream and chunk head checks, verbatim chunks,
 * the code table or the runs; the rest is left to the grid kernels. */
template <int ES>
__global__ void __launch_bounds__(kThreads)
    decode_head_kernel(const fz_gpu_args a, const Work w) {
    typedef Val<ES> V;
    typedef typename V::U U;
    __shared__ DecodeShared sh;
    __shared__ HeadShared hs;
    const uint64_t c = blockIdx.x;
    ChunkDecode &cd = w.dec[c];
    if (threadIdx.x == 0) {
        cd.state = kDecodeFailed; /* until the end of this kernel */
        const int st = fz_gpu_check_stream(a, &sh.hdr);
        if (st != FZS_OK)
            fz_gpu_fail(a.scratch, st);
        sh.ok = st == FZS_OK;
    }
    __syncthreads();
    if (!sh.ok)
        return;
    const fz_header &h = sh.hdr;
    const ChunkSpan sp = chunk_span(h, c, ES);
    const uint32_t n = sp.n, S = w.nsym;
    const uint64_t off = a.offsets[c], size = a.offsets[c + 1] - off;
    const uint8_t *in = a.src + a.payload_off + off;
    U *out = reinterpret_cast<U *>(a.dst) + sp.first;
    const bool check = a.verify && (h.flags & FZ_HDR_FLAG_CHECKSUMS);
    if (threadIdx.x == 0)
        sh.want = fz_gpu_take_entry(a, h.flags, c, (uint32_t)size);
    if (size > sp.raw || off + size > h.payload_bytes) {
        if (threadIdx.x == 0)
            fz_gpu_fail(a.scratch, FZS_CORRUPT_CHUNK);
        return;
    }
    __syncthreads();
    if (size == sp.raw) { /* verbatim */
        uint32_t hash = 0;
        for (uint32_t i = threadIdx.x; i < n; i += kThreads) {
            U b = 0;
            for (int k = ES - 1; k >= 0; k--)
                b = (b << 8) | in[(uint64_t)i * ES + k];
            out[i] = b;
            hash += V::hash(b, i);
        }
        hash = block_sum(hash, sh.sums);
        if (threadIdx.x == 0) {
            if (check && fz_hash_final(hash, sp.raw / 4) != sh.want)
                fz_gpu_fail(a.scratch, FZS_DATA_CHECKSUM);
            cd.state = kDecodeDone;
        }
        return;
    }
    if (threadIdx.x == 0) {
        bool ok = size >= LZ_CHUNK_HEAD && in[0] <= lz_last_flow(&h) &&
                  !in[1] && !in[2] && !in[3] &&
                  double_of(h.bound_eff_bits) != 0.0;
        if (ok) {
            sh.flow = in[0];
            sh.nout = fz_load32(in + 4);
            sh.nexc = fz_load32(in + 8);
            sh.lists = (unsigned long long)sh.nout * LZ_OUTLIER_BYTES +
                       (unsigned long long)sh.nexc * (4 + ES);
            ok = sh.nout <= n && sh.nexc <= n &&
                 size - LZ_CHUNK_HEAD >= sh.lists;
        }
        sh.ok = ok;
    }
    __syncthreads();
    bool ok = sh.ok;
    /* the code stream */
    const uint8_t *payload = in + LZ_CHUNK_HEAD + sh.lists;
    const uint64_t plen = size - LZ_CHUNK_HEAD - sh.lists;
    uint64_t d = 4; /* RLE: the codes after the run count */
    uint32_t runs = 0, lens_bytes = 0;
    if (ok && sh.flow == LZ_FLOW_RLE) {
        if (threadIdx.x == 0)
            ok = parse_rle_head(payload, plen, n, &runs, &lens_bytes);
    } else if (ok && sh.flow == LZ_FLOW_ZRUNS) {
        /* u32 symbol count m (1..n; every thread reads it), then their
         * Huffman coding; runs = m */
        const uint32_t m = plen >= 4 ? fz_load32(payload) : 0u;
        ok = m >= 1 && m <= n &&
             parse_huffman(payload + 4, plen - 4, m, S + LZ_ZRUN_SYMBOLS, S,
                           book_of(w, c), &cd.t,
                           w.sub_bits + c * w.subs_per_chunk,
                           w.sub_off + c * w.subs_per_chunk, &d, hs);
        d += 4;
        runs = m;
    } else if (ok) {
        ok = parse_huffman(payload, plen, n, S, S, book_of(w, c), &cd.t,
                           w.sub_bits + c * w.subs_per_chunk,
                           w.sub_off + c * w.subs_per_chunk, &d, hs);
    }
    if (threadIdx.x != 0)
        return;
    if (ok) {
        const uint64_t lists_at = a.payload_off + off + LZ_CHUNK_HEAD;
        cd.lists_at = lists_at;
        cd.data_at = lists_at + sh.lists + d;
        cd.lens_at = cd.data_at + 2ull * runs;
        cd.lens_bytes = lens_bytes;
        cd.ebx2_bits = 0;
        const double ebx2 = lz_ebx2(double_of(h.bound_eff_bits));
        memcpy(&cd.ebx2_bits, &ebx2, sizeof ebx2);
        cd.eb_bits = h.bound_eff_bits;
        cd.flow = sh.flow;
        cd.nout = sh.nout;
        cd.nexc = sh.nexc;
        cd.runs = runs;
        cd.want = check ? sh.want : 0;
        cd.hash = cd.zeros = cd.bad = 0;
        cd.check = check ? 1u : 0u;
        cd.state = kDecodeOk;
    } else {
        fz_gpu_fail(a.scratch, FZS_CORRUPT_CHUNK);
    }
}

/* The chunk of a grid block (blockIdx.x) and whether it is being
 * decoded. Only the state, which no grid kernel changes, decides: the
 * answer is the same for every thread of a block (the bad flag may flip
 * under a running kernel). A chunk found bad is still carried through, on
 * checked indices only, and reported by decode_finish_kernel. */
__device__ bool chunk_live(const Work &w, ChunkDecode **cd) {
    *cd = &w.dec[blockIdx.x];
    return (*cd)->state == kDecodeOk;
}

__device__ void mark_bad(ChunkDecode *cd) {
    atomicExch(&cd->bad, 1u);
}

/* Block-wide sum for the tile kernels, valid in thread 0. */
__device__ uint32_t tile_sum(uint32_t x, uint32_t *sm) {
    x = __reduce_add_sync(FZ_FULL_MASK, x);
    if ((threadIdx.x & 31) == 0)
        sm[threadIdx.x >> 5] = x;
    __syncthreads();
    uint32_t t = 0;
    if (threadIdx.x == 0)
        for (int k = 0; k < kTileThreads / 32; k++)
            t += sm[k];
    return t;
}

/* Words loaded ahead of their use: at ~1-2 bits per code one word lasts
 * 15-30 codes (a few hundred cycles), less than a loaded GPU's memory
 * latency; three words in flight cover it. */
constexpr int kReadAhead = 3;

/* MSB-first reader of one sub-block of `bytes` bytes at p: aligned 32-bit
 * loads (bytes outside the sub-block read as zeros, so the bits are those
 * lz_peek sees), kReadAhead words loaded ahead of their use so that the
 * load latency overlaps the decoding. buf holds the next 64 bits of the
 * stream, the first `have` of them loaded (the rest zero). */
struct BitReader {
    const uint8_t *p;
    uintptr_t head; /* p & 3: bytes of word 0 before p */
    uint32_t bytes, nwords, next, have;
    uint32_t ahead[kReadAhead]; /* words next - kReadAhead .. next - 1 */
    uint64_t buf;
};

/* Word k of the sub-block (the aligned word at p - head + 4k) MSB first. */
__device__ uint32_t load_word(const BitReader &br, uint32_t k) {
    const int64_t at = 4 * (int64_t)k - (int64_t)br.head; /* byte of p */
    if (at >= 0 && at + 4 <= (int64_t)br.bytes)
        return __byte_perm(*reinterpret_cast<const uint32_t *>(br.p + at), 0,
                           0x0123);
    uint32_t w = 0;
    for (int64_t j = at; j < at + 4; j++)
        w = (w << 8) | (j >= 0 && j < (int64_t)br.bytes ? br.p[j] : 0u);
    return w;
}

__device__ void reader_init(BitReader *br, const uint8_t *p, uint32_t bytes) {
    br->p = p;
    br->head = (uintptr_t)p & 3;
    br->bytes = bytes;
    br->nwords = (uint32_t)((br->head + bytes + 3) / 4);
    br->buf = (uint64_t)load_word(*br, 0) << (32 + 8 * br->head);
    br->have = 32 - 8 * (uint32_t)br->head;
#pragma unroll
    for (int k = 0; k < kReadAhead; k++)
        br->ahead[k] = 1u + k < br->nwords ? load_word(*br, 1u + k) : 0u;
    br->next = 1 + kReadAhead;
}

/* At least 33 bits in buf (or all that is left). */
__device__ void reader_fill(BitReader *br) {
    if (br->have > 32)
        return;
    br->buf |= (uint64_t)br->ahead[0] << (32 - br->have);
    br->have += 32;
#pragma unroll
    for (int k = 0; k + 1 < kReadAhead; k++)
        br->ahead[k] = br->ahead[k + 1];
    br->ahead[kReadAhead - 1] =
        br->next < br->nwords ? load_word(*br, br->next) : 0u;
    br->next++;
}

/* The codes of one table look-up: their symbols (16 bits each, the first
 * lowest), how many (0: no code starts here) and their bits. */
struct Codes {
    uint64_t syms;
    uint32_t k, used;
};

static_assert(sizeof(lz_lut_entry) == 8 && offsetof(lz_lut_entry, sym) == 0 &&
                  offsetof(lz_lut_entry, len1) == 6 &&
                  offsetof(lz_lut_entry, packed) == 7,
              "a table entry is read as one little-endian 64-bit word");

/* Entry v as one 64-bit shared load: sym[0..2] in bits 0-47, len1 in
 * 48-55, packed in 56-63. */
__device__ uint64_t lut_word(const lz_lut_entry *lut, uint32_t v) {
    uint64_t e;
    memcpy(&e, lut + v, sizeof e);
    return e;
}

/* A code longer than LZ_LUT_BITS (the table decides none here) at the top
 * of buf (>= LZ_HUFF_MAXLEN bits loaded): the canonical search from length
 * LZ_LUT_BITS + 1 on, as lz_huff_next finds it (no shorter code is a
 * prefix of these bits, or the table would have decided it). */
__device__ Codes long_code(uint64_t buf, const lz_huff_table &t,
                           const uint32_t *syms) {
    const uint32_t v = (uint32_t)(buf >> (64 - LZ_HUFF_MAXLEN));
    for (uint32_t l = LZ_LUT_BITS + 1; l <= LZ_HUFF_MAXLEN; l++) {
        const uint32_t c = v >> (LZ_HUFF_MAXLEN - l);
        if (c - t.first[l] < t.count[l])
            return Codes{syms[t.base[l] + c - t.first[l]], 1, l};
    }
    return Codes{0, 0, 0};
}

/* The codes of the next look-up, at most `room` (>= 1): the entry's codes,
 * or only its first when it holds more than room, or the long code. */
__device__ Codes next_codes(BitReader *br, const lz_huff_table &t,
                            const lz_lut_entry *lut, const uint32_t *syms,
                            uint32_t room) {
    const uint64_t e = lut_word(lut, (uint32_t)(br->buf >> (64 - LZ_LUT_BITS)));
    Codes c{e, (uint32_t)(e >> 60), (uint32_t)(e >> 56) & 0xFu};
    if (c.k > room) {
        c.k = 1;
        c.used = (uint32_t)(e >> 48) & 0xFFu;
    }
    if (c.k == 0) {
        reader_fill(br); /* the group's fill may have left only 13 bits */
        c = long_code(br->buf, t, syms);
    }
    return c;
}

/* Residuals per store: 32 bytes, one sector (sub-blocks start 4 KiB apart
 * and chunks on multiples of 8 values, so the stores are aligned). */
constexpr uint32_t kStoreRes = 8;
/* Look-ups per reader fill: a fill leaves >= 33 bits, two look-ups take
 * <= 22 (a long code fills again itself). */
constexpr int kGroup = 2;
/* A thread's residuals decoded but not stored, in a ring of shared slots:
 * < kStoreRes before a group, which adds at most kGroup LZ_LUT_CODES, and
 * each look-up writes all LZ_LUT_CODES slots from its first (the ones past
 * its codes are rewritten before they are stored). */
constexpr uint32_t kRing = 16;
static_assert(kStoreRes - 1 + kGroup * LZ_LUT_CODES <= kRing,
              "a group's writes stay clear of the pending residuals");

/* Decodes one sub-block of `count` codes straight to residuals code - R:
 * exactly `bits` bits, zero padding. Per iteration every thread does
 * kGroup look-ups of up to LZ_LUT_CODES codes each (no divergence on the
 * number of codes), their residuals go to the thread's column of the
 * ring (`ring`, slots kSubThreads apart: no bank conflicts), 8 at a time
 * to `out`. k codes at once accept and reject what k single look-ups
 * would (lz_huff_read_sub). Returns false on any error; *zeros counts the
 * zero codes (outlier places). Zero-run symbols (zsym != 0, R = 0):
 * *covered sums the codes they stand for (zrun_codes). */
__device__ bool decode_sub(const lz_huff_table &t, const lz_lut_entry *lut,
                           const uint32_t *syms, const uint8_t *p,
                           uint32_t bits, int32_t R, int32_t *out,
                           uint32_t count, int32_t *ring, uint32_t *zeros,
                           uint32_t zsym, uint64_t *covered) {
    *zeros = 0;
    uint64_t cov = 0;
    if (!lz_sub_bits_ok(bits, count))
        return false;
    BitReader br;
    reader_init(&br, p, (bits + 7) / 8);
    uint32_t pos = 0, i = 0, stored = 0, z = 0;
    bool ok = true;
    while (ok && i < count) {
        reader_fill(&br);
#pragma unroll
        for (int g = 0; g < kGroup; g++) {
            if (!ok || i >= count)
                break;
            const Codes c = next_codes(&br, t, lut, syms, count - i);
            pos += c.used;
            br.buf <<= c.used;
            br.have -= c.used;
            ok = c.k != 0 && pos <= bits;
#pragma unroll
            for (uint32_t j = 0; j < LZ_LUT_CODES; j++)
                ring[((i + j) % kRing) * kSubThreads] =
                    (int32_t)((c.syms >> (16 * j)) & 0xFFFFu) - R;
            i += c.k;
        }
        if (ok && i - stored >= kStoreRes) {
            const int32_t *s = ring + (stored % kRing) * kSubThreads;
            int32_t r[kStoreRes];
#pragma unroll
            for (uint32_t j = 0; j < kStoreRes; j++) {
                r[j] = s[j * kSubThreads];
                z += r[j] == -R;
            }
            if (zsym) { /* block-uniform: the chunk's workflow */
#pragma unroll
                for (uint32_t j = 0; j < kStoreRes; j++)
                    cov += lz_zrun_codes((uint32_t)r[j], zsym);
            }
            int4 *o = reinterpret_cast<int4 *>(out + stored);
            o[0] = make_int4(r[0], r[1], r[2], r[3]);
            o[1] = make_int4(r[4], r[5], r[6], r[7]);
            stored += kStoreRes;
        }
    }
    if (ok) /* the last count % 8 of the sub-block */
        for (; stored < i; stored++) {
            const int32_t r = ring[(stored % kRing) * kSubThreads];
            z += r == -R;
            cov += zsym ? lz_zrun_codes((uint32_t)r, zsym) : 0u;
            out[stored] = r;
        }
    reader_fill(&br); /* the padding bits of the last byte are in buf */
    *zeros = z;
    *covered = cov;
    return ok && pos == bits && (br.buf >> 56) == 0;
}

/* Huffman sub-blocks: grid (chunks, sub-block groups), a thread each.
 * Huffman chunks: residuals out to q, zero codes counted per chunk;
 * zero-run chunks: their m symbols out to aux, as int32, and per tile of
 * kTile symbols (kSubsPerTile sub-blocks, neighbouring lanes) the codes
 * they stand for into tile_rle, capped at n + 1 (expanded by
 * zrun_starts_kernel and decode_runs_kernel, which count the zero codes).
 * The block first builds the table of up to LZ_LUT_CODES codes per look-up
 * in two passes (the CPU's definition: first codes, then the codes after
 * them). */
__global__ void __launch_bounds__(kSubThreads)
    decode_huffman_kernel(const fz_gpu_args a, const Work w) {
    __shared__ lz_huff_table t;
    __shared__ __align__(8) lz_lut_entry lut[kLutSize];
    __shared__ int32_t ring[kRing * kSubThreads];
    ChunkDecode *cd;
    if (!chunk_live(w, &cd) ||
        (cd->flow != LZ_FLOW_HUFFMAN && cd->flow != LZ_FLOW_ZRUNS))
        return;
    const bool zero_runs = cd->flow == LZ_FLOW_ZRUNS;
    const uint64_t c = blockIdx.x;
    const ChunkSpan sp = chunk_span(a.expect, c, fz_dtype_size(a.expect.dtype));
    const uint32_t n = zero_runs ? cd->runs : sp.n;
    const uint32_t nsub = (uint32_t)lz_sub_count(n);
    const uint32_t b = blockIdx.y * kSubThreads + threadIdx.x;
    if (blockIdx.y * kSubThreads >= nsub)
        return; /* the whole block: no sub-block */
    if (threadIdx.x == 0)
        t = cd->t;
    __syncthreads();
    const uint32_t *syms = book_of(w, c).code;
    for (uint32_t v = threadIdx.x; v < kLutSize; v += kSubThreads)
        lz_lut_first(&lut[v], lz_lut_code(&t, syms, v));
    __syncthreads();
    for (uint32_t v = threadIdx.x; v < kLutSize; v += kSubThreads)
        lz_lut_extend(lut, v);
    __syncthreads();
    uint32_t zeros = 0;
    uint64_t covered = 0;
    if (b < nsub) {
        const uint32_t *sub_bits = w.sub_bits + c * w.subs_per_chunk;
        const uint32_t *sub_off = w.sub_off + c * w.subs_per_chunk;
        const uint32_t from = b * LZ_SUB_SYMBOLS;
        const uint32_t count =
            n - from < LZ_SUB_SYMBOLS ? n - from : LZ_SUB_SYMBOLS;
        const int32_t R = (int32_t)a.expect.codec_params[0];
        int32_t *out = zero_runs ? reinterpret_cast<int32_t *>(w.aux) : w.q;
        if (!decode_sub(t, lut, syms, a.src + cd->data_at + sub_off[b],
                        sub_bits[b], zero_runs ? 0 : R, out + sp.first + from,
                        count, ring + threadIdx.x, &zeros,
                        zero_runs ? w.nsym : 0u, &covered))
            mark_bad(cd);
    }
    covered += __shfl_xor_sync(FZ_FULL_MASK, covered, 1);
    covered += __shfl_xor_sync(FZ_FULL_MASK, covered, 2);
    if (zero_runs && b < nsub && b % kSubsPerTile == 0)
        w.tile_rle[c * w.tiles_per_chunk + b / kSubsPerTile] =
            (uint32_t)(covered > sp.n ? sp.n + 1ull : covered);
    zeros = __reduce_add_sync(FZ_FULL_MASK, zero_runs ? 0u : zeros);
    if ((threadIdx.x & 31) == 0 && zeros)
        atomicAdd(&cd->zeros, zeros);
}

/* Grid (chunks, tiles) of kTileThreads: the tile's values [lo, hi). */
struct TileSpan {
    ChunkSpan sp;
    uint32_t lo, hi;
};

__device__ bool tile_of(const fz_gpu_args &a, uint32_t items, TileSpan *ts) {
    ts->sp = chunk_span(a.expect, blockIdx.x, fz_dtype_size(a.expect.dtype));
    ts->lo = blockIdx.y * kTile;
    ts->hi = items - ts->lo < kTile ? items : ts->lo + kTile;
    return ts->lo < items;
}

/* The grid block's chunk (blockIdx.x) and its values. */
__device__ ChunkSpan block_span(const fz_gpu_args &a) {
    return chunk_span(a.expect, blockIdx.x, fz_dtype_size(a.expect.dtype));
}
__device__ uint32_t chunk_n(const fz_gpu_args &a) {
    return block_span(a).n;
}

/* The last run (symbol) starting at or before value i: starts[0..runs)
 * increase strictly in a valid chunk (starts[0] = 0). */
__device__ uint32_t run_at(const uint32_t *starts, uint32_t runs, uint32_t i) {
    uint32_t lo = 0, hi = runs - 1;
    while (lo < hi) {
        const uint32_t mid = (lo + hi + 1) / 2;
        if (starts[mid] <= i)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* Values per thread of decode_runs_kernel: one search, then a walk. */
constexpr uint32_t kRunValues = kTile / kTileThreads;
static_assert(kRunValues % 4 == 0, "whole int4 stores");

/* RLE and zero runs: each value's residual from the last run (symbol)
 * starting at or before it, zero codes counted per chunk. A thread owns
 * kRunValues consecutive values: one binary search for the first (was:
 * one per value, ~22 dependent loads at 4 Mi runs), then it walks the
 * run starts forward, at most kRunValues steps (a valid chunk's runs
 * cover at least a value each; a damaged one is reported anyway), and
 * stores the residuals 4 at a time. */
__global__ void __launch_bounds__(kTileThreads)
    decode_runs_kernel(const fz_gpu_args a, const Work w) {
    __shared__ uint32_t sums[kTileThreads / 32];
    ChunkDecode *cd;
    if (!chunk_live(w, &cd) ||
        (cd->flow != LZ_FLOW_RLE && cd->flow != LZ_FLOW_ZRUNS))
        return;
    TileSpan ts;
    if (!tile_of(a, chunk_n(a), &ts))
        return;
    const int32_t R = (int32_t)a.expect.codec_params[0];
    const uint32_t *aux = w.aux + ts.sp.first;
    const uint16_t *syms = w.codes + ts.sp.first;
    int32_t *v = w.q + ts.sp.first;
    const uint32_t runs = cd->runs; /* >= 1: the runs cover n >= 1 */
    const uint32_t first = ts.lo + threadIdx.x * kRunValues;
    uint32_t zeros = 0;
    if (first < ts.hi) {
        uint32_t j = run_at(aux, runs, first), walked = 0;
        uint32_t next = j + 1 < runs ? aux[j + 1] : UINT32_MAX;
        uint32_t sym = syms[j];
        int32_t r[kRunValues];
#pragma unroll
        for (uint32_t k = 0; k < kRunValues; k++) {
            while (first + k >= next && walked < kRunValues) {
                j++, walked++;
                next = j + 1 < runs ? aux[j + 1] : UINT32_MAX;
                sym = syms[j];
            }
            r[k] = (int32_t)sym - R;
            zeros += first + k < ts.hi && sym == 0;
        }
        if (ts.hi - first >= kRunValues) { /* 16-byte aligned: first % 16 */
            int4 *o = reinterpret_cast<int4 *>(v + first);
#pragma unroll
            for (uint32_t k = 0; k < kRunValues / 4; k++)
                o[k] = make_int4(r[4 * k], r[4 * k + 1], r[4 * k + 2],
                                 r[4 * k + 3]);
        } else {
#pragma unroll
            for (uint32_t k = 0; k < kRunValues; k++)
                if (first + k < ts.hi)
                    v[first + k] = r[k];
        }
    }
    zeros = tile_sum(zeros, sums);
    if (threadIdx.x == 0 && zeros)
        atomicAdd(&cd->zeros, zeros);
}

/* Outliers: indices strictly increasing, in range, on zero codes (the
 * residual -R), deltas outside the radius; the residual replaced. Each
 * index is read and written by one thread only. */
__global__ void __launch_bounds__(kTileThreads)
    decode_outlier_kernel(const fz_gpu_args a, const Work w) {
    ChunkDecode *cd;
    if (!chunk_live(w, &cd))
        return;
    TileSpan ts;
    if (!tile_of(a, cd->nout, &ts))
        return;
    const uint32_t n = ts.sp.n, R = a.expect.codec_params[0];
    const uint8_t *outl = a.src + cd->lists_at;
    int32_t *v = w.q + ts.sp.first;
    bool bad = false;
    for (uint32_t k = ts.lo + threadIdx.x; k < ts.hi; k += kTileThreads) {
        const uint32_t idx = fz_load32(outl + 8ull * k);
        const int32_t delta = (int32_t)fz_load32(outl + 8ull * k + 4);
        const bool ok = idx < n && lz_code_of(delta, R) == 0 &&
                        (k == 0 || idx > fz_load32(outl + 8ull * (k - 1)));
        if (ok && v[idx] == -(int32_t)R)
            v[idx] = delta;
        else
            bad = true;
    }
    if (bad)
        mark_bad(cd);
}

/* The fused decoding of a box: the tile prefix sums along x, y, z (the
 * inverse of the Lorenzo differences) and the values. */
static_assert(kWarpItems % LZ_TILE1 == 0 && kBoxSteps * 32 == kWarpItems,
              "1-D: a warp's items are whole x tiles");

/* y plus y of the lane d below in this lane's group of W lanes, where
 * there is one: the shuffle's own in-range predicate guards the add (no
 * lane test, no select). */
template <uint32_t W> __device__ uint32_t add_lane_below(uint32_t y, int d) {
    asm volatile("{\n\t.reg .u32 u;\n\t.reg .pred p;\n\t"
                 "shfl.sync.up.b32 u|p, %0, %1, %2, -1;\n\t"
                 "@p add.u32 %0, %0, u;\n\t}"
                 : "+r"(y)
                 : "r"(d), "n"((32 - W) << 8));
    return y;
}

/* Prefix sums along x of a thread's values (x tiles of TX values starting
 * on box rows; a step of a warp is 32 consecutive values of a row):
 * shuffle scans in groups of min(TX, 32) lanes, the sum carried over the
 * steps of a longer tile (1-D, warp-striped). Wrapping arithmetic. */
template <uint32_t TX> __device__ void scan_x(uint32_t (&x)[kBoxSteps]) {
    constexpr uint32_t W = TX < 32 ? TX : 32u;
    static_assert(TX < 32 ? 32 % TX == 0 : kWarpItems % TX == 0 && TX % 32 == 0,
                  "x tiles in whole lane groups or whole warp steps");
    uint32_t carry = 0;
#pragma unroll
    for (uint32_t s = 0; s < kBoxSteps; s++) {
        uint32_t y = x[s];
#pragma unroll
        for (int d = 1; d < (int)W; d <<= 1)
            y = add_lane_below<W>(y, d);
        if (TX > 32) {
            if ((32 * s) % TX) /* not a tile's first step */
                y += carry;
            carry = __shfl_sync(FZ_FULL_MASK, y, 31);
        }
        x[s] = y;
    }
}

/* Prefix sums along the axis a thread holds whole (its values share x):
 * 2-D y (value j - 1), 3-D z (value j - 2: the same y). */
template <int PD> __device__ void scan_thread(uint32_t (&x)[kBoxSteps]) {
#pragma unroll
    for (uint32_t j = 1; j < kBoxSteps; j++) {
        if (PD == 2)
            x[j] += x[j - 1];
        if (PD == 3 && j >= 2)
            x[j] += x[j - 2];
    }
}

/* 3-D: prefix sums along y of the box in shared memory (value k = x +
 * BX y + BX BY z): a thread per column of BY values, consecutive threads
 * consecutive x (no bank conflicts). */
__device__ void scan_y(uint32_t *sq) {
    typedef BoxShape<3> S;
    constexpr uint32_t kColumns = kTile / S::BY;
    static_assert(kColumns % kTileThreads == 0, "whole columns per thread");
#pragma unroll
    for (uint32_t m = 0; m < kColumns / kTileThreads; m++) {
        const uint32_t c = threadIdx.x + kTileThreads * m;
        const uint32_t k0 = c % S::BX + c / S::BX * (S::BX * S::BY);
        uint32_t acc = sq[k0];
#pragma unroll
        for (uint32_t y = 1; y < S::BY; y++) {
            acc += sq[k0 + S::BX * y];
            sq[k0 + S::BX * y] = acc;
        }
    }
}

/* Blocks of the fused decoding per SM: 48 registers (as many allocation
 * units as the 46 of the unspecialized kernel), 62.5% occupancy; unbounded,
 * nvcc takes 80 registers to keep all 16 addresses of a thread. */
constexpr int kDecodeBoxBlocks = 5;

/* Grid (chunk, boxes strided over gridDim.y), the boxes of
 * quant_codes_kernel, one instantiation per predictor dimensionality PD:
 * per box the residuals (invalid values 0: the zero padding of partial
 * tiles, and they only follow valid ones) loaded all at once (the lanes of
 * box_lane; 1-D warp-striped), the x sums by warp shuffles, the sums
 * along the axis the thread holds in registers (2-D y, 3-D z), 3-D y in
 * shared memory, then per valid value the |q| check, the value and its
 * checksum term (summed per chunk). One read of 4 B and one write of ES B
 * per value. q goes back to w.q only for chunks with exceptions:
 * decode_exception_kernel, which runs next, accepts an exception only
 * where q is 0 (as the CPU does); no other kernel reads q again. */
template <int ES, int PD>
__global__ void __launch_bounds__(kTileThreads, kDecodeBoxBlocks)
    decode_box_kernel(const fz_gpu_args a, const Work w) {
    typedef Val<ES> V;
    typedef typename V::U U;
    constexpr uint32_t kStep1 = kStripedStep;
    __shared__ uint32_t sq[PD == 3 ? kTile : 1];
    __shared__ uint32_t sums[kTileWarps];
    ChunkDecode *cd;
    if (!chunk_live(w, &cd))
        return; /* block-uniform, as the next return */
    const ChunkSpan sp = chunk_span(a.expect, blockIdx.x, ES);
    const BoxGeom bg = box_geom(a.expect, sp.n);
    if (blockIdx.y >= bg.boxes)
        return;
    const double ebx2 = double_of(cd->ebx2_bits);
    const bool keep_q = cd->nexc != 0;
    int32_t *q = w.q + sp.first;
    U *out = reinterpret_cast<U *>(a.dst) + sp.first;
    const uint32_t t = threadIdx.x;
    uint32_t hash = 0;
    /* the largest q + 2^27 - 1 (wrapping): |q| < 2^27 iff at most
     * 2^28 - 2. Taken over every value of the box: where invalid, the
     * sums hold 0 or q of the nearest valid value of the tile (the padding
     * is 0), so the verdict is that of the valid values. */
    constexpr uint32_t kQLimit = (uint32_t)LZ_Q_LIMIT;
    uint32_t worst = 0;
    for (uint32_t box = blockIdx.y; box < bg.boxes; box += gridDim.y) {
        const BoxLane<PD, kStep1> L = box_lane<PD, kStep1>(bg, box);
        /* this thread's values: lane_q[L.offset(j)] (formed only, never
         * accessed, where the lane is outside the chunk) */
        int32_t *lane_q = opaque(q + L.i0);
        U *lane_out = opaque(out + L.i0);
        const uint32_t lim[2] = {L.limit(false), L.limit(true)};
        uint32_t x[kBoxSteps];
#pragma unroll
        for (uint32_t j = 0; j < kBoxSteps; j++)
            x[j] = L.valid_in(j, lim) ? (uint32_t)__ldcg(lane_q + L.offset(j))
                                      : 0u;
        scan_x<BoxShape<PD>::TX>(x);
        scan_thread<PD>(x);
        if (PD == 3) { /* block-uniform: every thread reaches the syncs */
#pragma unroll
            for (uint32_t j = 0; j < kBoxSteps; j++)
                sq[t + kTileThreads * j] = x[j];
            __syncthreads();
            scan_y(sq);
            __syncthreads(); /* the next box writes only after its reads */
#pragma unroll
            for (uint32_t j = 0; j < kBoxSteps; j++)
                x[j] = sq[t + kTileThreads * j];
        }
#pragma unroll
        for (uint32_t j = 0; j < kBoxSteps; j++) { /* branch-free */
            const bool valid = L.valid_in(j, lim);
            const int32_t qv = (int32_t)x[j];
            worst = max(worst, x[j] + (kQLimit - 1));
            const U r = V::recon(qv, ebx2);
            hash += V::hash(r, L.index(j)) & (0u - (uint32_t)valid);
            if (valid)
                __stcg(lane_out + L.offset(j), r);
            if (valid && keep_q)
                __stcg(lane_q + L.offset(j), qv);
        }
    }
    if (worst > 2 * kQLimit - 2)
        mark_bad(cd);
    hash = tile_sum(hash, sums);
    if (threadIdx.x == 0)
        atomicAdd(&cd->hash, hash);
}

/* Version 2: the tile corners' lattice residuals back to q, before the
 * in-tile prefix sums: prefix sums over the lattice of tile corners along
 * x, then y, then z (the inverse of lz_corner_term's Lorenzo prediction),
 * one launch per axis, a warp per lattice line over a grid of (chunk,
 * line groups) so that thousands of lines run at once. A warp loads
 * kCornerRun corners per lane before it scans them (warp scans with a
 * carry), so a line of up to 32 kCornerRun corners costs one round trip
 * to memory. The loads are few and strided: a corner per 256 or 2048
 * values. */
constexpr uint32_t kCornerRun = 4;

/* Corners along x, y, z of a chunk of n values (whole rows and planes). */
__host__ __device__ void corner_counts(const fz_header &h, uint32_t n,
                                       uint32_t cnt[3]) {
    const lz_geom g = lz_geometry(&h);
    const BoxGeom bg = box_geom(h, n);
    const uint32_t ext[3] = {bg.Xc, bg.Yc, bg.Zc};
    const uint32_t tile[3] = {g.tx, g.ty, g.tz};
    for (int d = 0; d < 3; d++)
        cnt[d] = n ? (ext[d] + tile[d] - 1) / tile[d] : 0u;
}

__device__ void corner_line_scan(int32_t *q, uint32_t start, uint32_t step,
                                 uint32_t len) {
    const uint32_t lane = threadIdx.x & 31;
    uint32_t carry = 0;
    for (uint32_t s = 0; s < len; s += 32 * kCornerRun) {
        uint32_t v[kCornerRun];
#pragma unroll
        for (uint32_t r = 0; r < kCornerRun; r++) {
            const uint32_t k = s + 32 * r + lane;
            v[r] = k < len ? (uint32_t)__ldcg(q + start + k * step) : 0u;
        }
#pragma unroll
        for (uint32_t r = 0; r < kCornerRun; r++) {
#pragma unroll
            for (uint32_t d = 1; d < 32; d <<= 1) {
                const uint32_t u = __shfl_up_sync(FZ_FULL_MASK, v[r], d);
                v[r] += lane >= d ? u : 0u;
            }
            v[r] += carry;
            carry = __shfl_sync(FZ_FULL_MASK, v[r], 31);
            const uint32_t k = s + 32 * r + lane;
            if (k < len)
                __stcg(q + start + k * step, (int32_t)v[r]);
        }
    }
}

/* Lines of corners along `axis` (blockIdx.y: groups of kTileWarps). */
__global__ void __launch_bounds__(kTileThreads)
    decode_corners_kernel(const fz_gpu_args a, const Work w, uint32_t es,
                          int axis) {
    ChunkDecode *cd;
    /* the stream's version (validated by the head kernel), not expect's */
    if (!chunk_live(w, &cd) || a.src[FZ_OFF_CODEC_VERSION] < 2)
        return;
    const ChunkSpan sp = chunk_span(a.expect, blockIdx.x, es);
    const lz_geom g = lz_geometry(&a.expect);
    const BoxGeom bg = box_geom(a.expect, sp.n);
    uint32_t cnt[3];
    corner_counts(a.expect, sp.n, cnt);
    const uint32_t stride[3] = {g.tx, g.ty * bg.Xc, g.tz * bg.Xc * bg.Yc};
    /* the two other axes span the lines of this one */
    const int u = axis == 0 ? 1 : 0, v = axis == 2 ? 1 : 2;
    const uint32_t lines = cnt[u] * cnt[v];
    const uint32_t l = blockIdx.y * kTileWarps + (threadIdx.x >> 5);
    if (l >= lines || cnt[axis] < 2)
        return; /* warp-uniform */
    const uint32_t start = (l % cnt[u]) * stride[u] + (l / cnt[u]) * stride[v];
    corner_line_scan(w.q + sp.first, start, stride[axis], cnt[axis]);
}

/* decode_corners_kernel once per predictor axis, each launch over the
 * lines of the largest chunk (the first). */
void launch_decode_corners(const fz_gpu_args &a, const Work &w,
                           cudaStream_t stream) {
    const fz_header &h = a.expect;
    const uint32_t es = h.dtype == 1 ? 4u : 8u;
    const uint64_t cv = h.chunk_bytes / es, total = h.original_bytes / es;
    uint32_t cnt[3];
    corner_counts(h, (uint32_t)(total < cv ? total : cv), cnt);
    for (int axis = 0; axis < (int)lz_geometry(&h).pd; axis++) {
        const uint32_t lines = cnt[axis == 0 ? 1 : 0] * cnt[axis == 2 ? 1 : 2];
        const dim3 grid((unsigned)h.chunk_count,
                        (lines + kTileWarps - 1) / kTileWarps);
        if (grid.x && grid.y)
            decode_corners_kernel<<<grid, kTileThreads, 0, stream>>>(a, w, es,
                                                                     axis);
    }
}

/* The fused decoding for the header's predictor dimensionality. */
template <int ES>
void launch_decode_box(const fz_gpu_args &a, const Work &w, dim3 grid,
                       cudaStream_t stream) {
    const uint32_t pd = lz_geometry(&a.expect).pd;
    if (pd == 1)
        decode_box_kernel<ES, 1><<<grid, kTileThreads, 0, stream>>>(a, w);
    else if (pd == 2)
        decode_box_kernel<ES, 2><<<grid, kTileThreads, 0, stream>>>(a, w);
    else
        decode_box_kernel<ES, 3><<<grid, kTileThreads, 0, stream>>>(a, w);
}

/* Exceptions: indices strictly increasing, in range, on zero values; the
 * exact bytes over the reconstruction, the checksum term swapped. */
template <int ES>
__global__ void __launch_bounds__(kTileThreads)
    decode_exception_kernel(const fz_gpu_args a, const Work w) {
    typedef Val<ES> V;
    typedef typename V::U U;
    __shared__ uint32_t sums[kTileThreads / 32];
    ChunkDecode *cd;
    if (!chunk_live(w, &cd))
        return;
    TileSpan ts;
    if (!tile_of(a, cd->nexc, &ts))
        return;
    const uint32_t n = ts.sp.n;
    const double ebx2 = double_of(cd->ebx2_bits);
    /* at an exception, version 1 has q = 0; version 2 the q that the
     * quantizer gives the stored value, which must be an exception */
    const bool zero_q = a.src[FZ_OFF_CODEC_VERSION] < 2;
    const lz_quant z = lz_quant_of(double_of(cd->eb_bits));
    const uint8_t *excl =
        a.src + cd->lists_at + (uint64_t)cd->nout * LZ_OUTLIER_BYTES;
    const int32_t *v = w.q + ts.sp.first;
    U *out = reinterpret_cast<U *>(a.dst) + ts.sp.first;
    uint32_t hash = 0;
    bool bad = false;
    for (uint32_t k = ts.lo + threadIdx.x; k < ts.hi; k += kTileThreads) {
        const uint8_t *e = excl + (4ull + ES) * k;
        const uint32_t idx = fz_load32(e);
        U b = 0;
        for (int j = ES - 1; j >= 0; j--)
            b = (b << 8) | e[4 + j];
        int32_t qe;
        U re;
        const bool quantizes = V::quant(b, z, &qe, &re);
        if (idx >= n || (k > 0 && idx <= fz_load32(e - (4 + ES))) ||
            (zero_q ? v[idx] != 0 : quantizes || v[idx] != qe)) {
            bad = true;
            continue;
        }
        out[idx] = b; /* over the reconstruction of q, hashed by decode_box */
        hash += V::hash(b, idx) - V::hash(V::recon(v[idx], ebx2), idx);
    }
    if (bad)
        mark_bad(cd);
    hash = tile_sum(hash, sums);
    if (threadIdx.x == 0)
        atomicAdd(&cd->hash, hash);
}

/* Per chunk: the outliers were exactly the zero codes, no check failed,
 * the checksum. */
__global__ void decode_finish_kernel(const fz_gpu_args a, const Work w) {
    const uint64_t c = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= a.expect.chunk_count)
        return;
    const ChunkDecode &cd = w.dec[c];
    if (cd.state != kDecodeOk)
        return; /* verbatim and failed chunks are reported already */
    const uint64_t raw =
        chunk_span(a.expect, c, fz_dtype_size(a.expect.dtype)).raw;
    if (cd.bad || cd.zeros != cd.nout)
        fz_gpu_fail(a.scratch, FZS_CORRUPT_CHUNK);
    else if (cd.check && fz_hash_final(cd.hash, raw / 4) != cd.want)
        fz_gpu_fail(a.scratch, FZS_DATA_CHECKSUM);
}

/* ------------------------------------------------ compression (grid) */
typedef cub::BlockScan<uint32_t, kTileThreads> TileScan;
constexpr uint32_t kPerThread = kTile / kTileThreads;
/* 32-bit words of the largest sub-block (every code LZ_HUFF_MAXLEN). */
constexpr uint32_t kSubWords = LZ_SUB_SYMBOLS * LZ_HUFF_MAXLEN / 32;
/* Threads whose kPerThread codes make up one sub-block. */
constexpr uint32_t kThreadsPerSub = LZ_SUB_SYMBOLS / kPerThread;
static_assert(LZ_SUB_SIZE == 2, "u16 sub-block sizes");
static_assert(kThreadsPerSub * kSubsPerTile == kTileThreads, "sub-blocks");
constexpr uint32_t kWarpsPerSub = kThreadsPerSub / 32;
static_assert(kWarpsPerSub * 32 == kThreadsPerSub, "whole warps per sub-block");

/* Codes of a thread: kPerThread consecutive codes, two per word (the
 * first in the low half). */
struct ThreadCodes {
    uint32_t w[kPerThread / 2];
    __device__ uint32_t at(uint32_t j) const {
        return (w[j / 2] >> (16 * (j & 1))) & 0xFFFFu;
    }
};

/* Loads codes[first, first + kPerThread) below hi (zeros past it) and
 * returns how many are below hi. Whole groups come as two 16-byte loads:
 * codes starts on 16 bytes (the work arrays are 256-byte aligned in a
 * 16-byte aligned scratch), a chunk on a whole slab (a multiple of 8
 * values) and first on a multiple of kPerThread within a tile; the
 * alignment is checked all the same. The partial group at the end of a
 * chunk comes one code at a time. */
__device__ uint32_t load_codes(const uint16_t *codes, uint32_t first,
                               uint32_t hi, ThreadCodes *c) {
    static_assert(kPerThread == 16, "two 16-byte loads");
    const uint16_t *p = codes + first;
    if (first + kPerThread <= hi && ((uintptr_t)p & 15) == 0) {
        const uint4 a = reinterpret_cast<const uint4 *>(p)[0];
        const uint4 b = reinterpret_cast<const uint4 *>(p)[1];
        c->w[0] = a.x, c->w[1] = a.y, c->w[2] = a.z, c->w[3] = a.w;
        c->w[4] = b.x, c->w[5] = b.y, c->w[6] = b.z, c->w[7] = b.w;
        return kPerThread;
    }
#pragma unroll
    for (uint32_t j = 0; j < kPerThread / 2; j++)
        c->w[j] = 0;
#pragma unroll
    for (uint32_t j = 0; j < kPerThread; j++)
        if (first + j < hi)
            c->w[j / 2] |= (uint32_t)p[j] << (16 * (j & 1));
    return first < hi ? (hi - first < kPerThread ? hi - first : kPerThread)
                      : 0u;
}

__device__ uint32_t *tile_slot(const Work &w, uint32_t *arr) {
    return arr + blockIdx.x * w.tiles_per_chunk + blockIdx.y;
}

__device__ bool bound_is_zero(const fz_gpu_args &a) {
    return double_of(a.scratch->bound_eff_bits) == 0.0;
}

/* Alphabets up to kSharedBook symbols: the bits and write kernels copy
 * the chunk's used code range [lo, hi] into shared memory as one u32 per
 * symbol, code << 5 | length (default radius 512: 1024 symbols, 4 KiB);
 * larger alphabets (radius up to 32768) look codes up in the global
 * book. */
constexpr uint32_t kSharedBook = 4096;
static_assert(LZ_HUFF_MAXLEN + 5 <= 32, "code << 5 | length in a u32");

template <bool kShared> struct TileBook {
    const uint32_t *sm; /* null for the global book */
    Book g;
    /* code << 5 | length of a used symbol */
    __device__ uint32_t entry(uint32_t s) const {
        if constexpr (kShared)
            return sm[s];
        else
            return g.code[s] << 5 | g.len[s];
    }
    __device__ uint32_t len(uint32_t s) const {
        if constexpr (kShared)
            return sm[s] & 31;
        else
            return g.len[s];
    }
};

/* A book g for a tile block; kShared: its used symbols lo..hi copied
 * into sm (4 book_syms bytes of dynamic shared memory), ready after the
 * caller's next __syncthreads. Unused symbols in [lo, hi] get 0 (their
 * code is stale). */
template <bool kShared>
__device__ TileBook<kShared> tile_book_of(const Book &g, uint32_t lo,
                                          uint32_t hi, uint32_t *sm) {
    TileBook<kShared> t;
    /* the global variant keeps no shared pointer: with one, nvcc 13 was
     * seen to read the global book through shared loads (an out-of-bounds
     * shared read under compute-sanitizer) */
    t.sm = kShared ? sm : nullptr;
    t.g = g;
    if (kShared) {
        for (uint32_t s = lo + threadIdx.x; s <= hi; s += kTileThreads) {
            const uint32_t l = t.g.len[s];
            sm[s] = l ? t.g.code[s] << 5 | l : 0u;
        }
    }
    return t;
}

/* The chunk's code book for a tile block (tile_book_of). */
template <bool kShared>
__device__ TileBook<kShared> tile_book(const Work &w, uint64_t c,
                                       uint32_t *sm) {
    return tile_book_of<kShared>(book_of(w, c), w.plan[c].lo, w.plan[c].hi, sm);
}

/* The chunk's zero-run book for a tile block: codes zlo.. and the run
 * symbols up to Z_(zk - 1). */
template <bool kShared>
__device__ TileBook<kShared> zrun_tile_book(const Work &w, uint64_t c,
                                            uint32_t *sm) {
    const ChunkPlan &p = w.plan[c];
    return tile_book_of<kShared>(book_at(w, w.zbook, c), p.zlo,
                                 p.zk ? w.nsym + p.zk - 1 : p.zhi, sm);
}

/* The items of a tile with pred(i), in increasing order: emit(i, base +
 * rank). The flags of a warp's steps stay in registers as ballots, the
 * warps' counts are scanned in warp_sums (kTileWarps words, shared). */
template <typename Pred, typename Emit>
__device__ void tile_compact(const TileSpan &ts, uint32_t base,
                             uint32_t *warp_sums, Pred pred, Emit emit) {
    const uint32_t lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const uint32_t first = ts.lo + warp * kWarpItems + lane;
    uint32_t flags[kWarpSteps];
    uint32_t count = 0;
#pragma unroll
    for (uint32_t j = 0; j < kWarpSteps; j++) {
        const uint32_t i = first + 32 * j;
        flags[j] = __ballot_sync(FZ_FULL_MASK, i < ts.hi && pred(i));
        count += (uint32_t)__popc(flags[j]);
    }
    __syncthreads(); /* warp_sums may still be read by a previous call */
    if (lane == 0)
        warp_sums[warp] = count;
    __syncthreads();
    uint32_t r = base;
    for (uint32_t k = 0; k < warp; k++)
        r += warp_sums[k];
    const uint32_t below = (1u << lane) - 1;
#pragma unroll
    for (uint32_t j = 0; j < kWarpSteps; j++) {
        if ((flags[j] >> lane) & 1)
            emit(first + 32 * j, r + (uint32_t)__popc(flags[j] & below));
        r += (uint32_t)__popc(flags[j]);
    }
}

/* Items of this grid block's tile, from the scanned tile offsets arr (the
 * chunk's T tiles) and the chunk's total. */
__device__ uint32_t tile_items(const Work &w, const uint32_t *arr, uint32_t T,
                               uint32_t total) {
    const uint32_t *at = tile_slot(w, const_cast<uint32_t *>(arr));
    return (blockIdx.y + 1 < T ? at[1] : total) - at[0];
}

/* Adds the warp's flagged values to the per-tile counts arr of the
 * chunk. A warp's valid lanes are consecutive values of one row, so they
 * span at most two tiles of kTile values: one atomic for each. Returns
 * the warp's flagged count in one lane, 0 in the others (per-lane sums
 * then count every flag once) and nothing is spent when no lane is
 * flagged. */
__device__ uint32_t add_tile_count(uint32_t *arr, bool flag, uint32_t i) {
    const uint32_t flags = __ballot_sync(FZ_FULL_MASK, flag);
    if (__builtin_expect(flags == 0, 1)) /* warp-uniform */
        return 0;
    const uint32_t lane = threadIdx.x & 31, lead = __ffs(flags) - 1;
    const uint32_t t0 = __shfl_sync(FZ_FULL_MASK, i / kTile, lead);
    const uint32_t first = __ballot_sync(FZ_FULL_MASK, flag && i / kTile == t0);
    const uint32_t rest = flags & ~first; /* in tile t0 + 1 */
    if (lane == lead)
        atomicAdd(&arr[t0], (uint32_t)__popc(first));
    if (rest && lane == (uint32_t)__ffs(rest) - 1)
        atomicAdd(&arr[i / kTile], (uint32_t)__popc(rest));
    return lane == lead ? (uint32_t)__popc(flags) : 0u;
}

/* One count of a code into the chunk's histogram: the block's shared copy
 * (alphabets up to kSharedHist) or global memory, never a generic
 * atomic. */
__device__ void hist_add(bool shared_hist, uint32_t *sh, uint32_t *global,
                         uint32_t code, uint32_t n) {
    if (shared_hist)
        atomicAdd(&sh[code], n);
    else
        atomicAdd(&global[code], n);
}

/* Blocks of the fused kernel per SM (48 registers): 5 x 32.9 KB of
 * shared memory fit, 62.5% occupancy. */
constexpr int kQuantBlocks = 5;

/* Whether value j of thread t of a box is a tile corner (local x, y, z
 * multiples of the tile extents):
 * boxes start on tile borders, so this follows from t and j (BoxShape). */
template <int PD> __device__ bool corner_lane(uint32_t t, uint32_t j) {
    if (PD == 1)
        return t == 0; /* x = t + 256 j */
    if (PD == 2)
        return j == 0 && (t & (LZ_TILE2 - 1)) == 0; /* y = j, x = t */
    return j == 0 && t < BoxShape<3>::BX && (t & (LZ_TILE3X - 1)) == 0;
}

/* Version 2: a box's tile corners (lz_corner_term): PD 1: thread 0,
 * j = c; PD 2: thread 16 c, j = 0; PD 3: thread 32 c, j = 0 (corner_lane).
 * Each of their lattice terms (2^PD - 1 per corner) is one value of a
 * tile before, prequantized again from the input by its own thread at the
 * start of the box, so its load overlaps the box's own. */
template <int PD> struct BoxCorners {
    static constexpr uint32_t kCorners =
        PD == 1 ? kBoxSteps : BoxShape<PD>::BX / BoxShape<PD>::TX;
    static constexpr uint32_t kTerms = (1u << PD) - 1;
    static __device__ uint32_t of_lane(uint32_t t, uint32_t j) {
        return PD == 1 ? j : t / BoxShape<PD>::TX;
    }
};
static_assert(BoxCorners<2>::kCorners * BoxCorners<2>::kTerms <= kTileThreads,
              "a thread per term");

/* Term m (1 .. 2^PD - 1, lz_corner_term) of corner c of the box: the
 * index of its value and its sign; false where it falls outside the
 * chunk. The geometry from the box's, with compile-time tile extents. */
template <int PD>
__device__ bool corner_term_at(const BoxGeom &bg, uint32_t box, uint32_t c,
                               uint32_t m, uint32_t *at, bool *plus) {
    lz_geom g;
    g.pd = PD;
    g.X = bg.Xc;
    g.Y = bg.Yc;
    g.Z = bg.Zc;
    g.tx = BoxShape<PD>::TX;
    g.ty = BoxShape<PD>::BY;
    g.tz = BoxShape<PD>::BZ;
    g.unit_values = 0; /* unused */
    const BoxValue o = box_origin(bg, box);
    const uint32_t x = o.x + c * g.tx;
    uint64_t back;
    int p;
    if (x >= bg.Xc || !lz_corner_term(&g, x, o.y, o.z, m, &back, &p))
        return false;
    *at = (o.z * bg.Yc + o.y) * bg.Xc + x - (uint32_t)back;
    *plus = p;
    return true;
}

/* Grid (chunk, boxes strided): prequantization, checksums of what
 * decoding returns and of the input (summed per chunk), the box's
 * partial Lorenzo residuals in shared memory, then quant codes, the
 * histogram, exceptions and zero codes (outliers) per tile of kTile
 * values, and the residual of every outlier into w.q (q itself is never
 * stored; write finds the exceptions of a tile that has some by
 * quantizing again). Residuals: the differences along the axes commute,
 * so the first pass takes those found in the thread (z in 3-D, y in 2-D:
 * the same x, earlier j) and along x from the lane below (__shfl_up: a
 * tile row of 16 or 32 values lies in one warp), the second pass the
 * rest from shared memory (3-D y: k - 64; 1-D x: k - 1). Hot codes R - 1,
 * R, R + 1 (residuals -1, 0, 1) are counted per lane in the bytes of one
 * register, zero codes and exceptions from the tile-count ballots; both
 * are flushed per box. */
template <int ES, int PD>
__global__ void __launch_bounds__(kTileThreads, kQuantBlocks)
    quant_codes_kernel(const fz_gpu_args a, const Work w) {
    typedef Val<ES> V;
    typedef typename V::U U;
    typedef BoxShape<PD> S;
    __shared__ int32_t sq[kTile];
    __shared__ uint32_t hist[kSharedHist];
    __shared__ uint32_t sums[3][kTileWarps];
    typedef BoxCorners<PD> BC;
    __shared__ int32_t corner_terms[BC::kCorners * BC::kTerms];
    __shared__ U term_bits[BC::kCorners * BC::kTerms];
    __shared__ int8_t term_sign[BC::kCorners * BC::kTerms];
    const ChunkSpan sp = chunk_span(a.expect, blockIdx.x, ES);
    const BoxGeom bg = box_geom(a.expect, sp.n);
    if (blockIdx.y >= bg.boxes)
        return;
    const lz_quant z = lz_quant_of(double_of(a.scratch->bound_eff_bits));
    const bool coded = z.eb != 0.0; /* else verbatim: checksums only */
    const bool corners = a.expect.codec_version >= 2;
    const uint32_t R = a.expect.codec_params[0], nsym = w.nsym;
    const bool shared_hist = nsym <= kSharedHist;
    uint32_t *chunk_hist = w.hist + (uint64_t)blockIdx.x * nsym;
    if (shared_hist)
        for (uint32_t s = threadIdx.x; s < nsym; s += kTileThreads)
            hist[s] = 0;
    const U *src = reinterpret_cast<const U *>(a.src) + sp.first;
    int32_t *outlier = w.q + sp.first;
    uint16_t *codes = w.codes + sp.first;
    uint32_t *tile_out = w.tile_out + blockIdx.x * w.tiles_per_chunk;
    uint32_t *tile_exc = w.tile_exc + blockIdx.x * w.tiles_per_chunk;
    const uint32_t t = threadIdx.x;
    uint32_t hash_recon = 0, nexc = 0;
    for (uint32_t box = blockIdx.y; box < bg.boxes; box += gridDim.y) {
        const BoxLane<PD> L = box_lane<PD>(bg, box);
        /* this thread's values: lane_src[L.offset(j)] (formed only, never
         * read, where the lane is outside the chunk) */
        const U *lane_src = opaque(src + L.i0);
        /* corner terms: copied to shared memory now (cp.async: no register
         * held), quantized after the box's own loads */
        if (corners && t < BC::kCorners * BC::kTerms) {
            uint32_t at = 0;
            bool plus = false;
            const bool term = corner_term_at<PD>(
                bg, box, t / BC::kTerms, t % BC::kTerms + 1, &at, &plus);
            term_sign[t] = term ? (plus ? 1 : -1) : 0;
            if (term)
                __pipeline_memcpy_async(&term_bits[t], src + at, sizeof(U));
            __pipeline_commit();
        }
        int32_t earlier[2] = {0, 0}; /* q of j - 1 (2-D), j - 2 (3-D) */
#pragma unroll
        for (uint32_t j = 0; j < kBoxSteps; j++) {
            /* branch-free: a value outside the chunk quantizes 0 (q = 0,
             * no exception) and adds no checksum term */
            const bool valid = L.valid(j);
            const uint32_t i = L.index(j);
            const U b = valid ? __ldg(lane_src + L.offset(j)) : U(0);
            int32_t q;
            U r;
            const bool ok = V::quant(b, z, &q, &r);
            const uint32_t mask = 0u - (uint32_t)valid; /* no branches */
            hash_recon += V::hash(r, i) & mask;
            nexc += add_tile_count(tile_exc, !ok, i);
            int32_t e = q;
            if (PD == 2) {
                e -= j ? earlier[0] : 0;
                earlier[0] = q;
            }
            if (PD == 3) {
                e -= j >= 2 ? earlier[j & 1] : 0;
                earlier[j & 1] = q;
            }
            if (PD >= 2) {
                const int32_t below = __shfl_up_sync(FZ_FULL_MASK, e, 1);
                e -= L.bx ? below : 0;
            }
            sq[t + kTileThreads * j] = e;
        }
        if (corners && t < BC::kCorners * BC::kTerms) {
            __pipeline_wait_prior(0);
            int32_t q = 0;
            U r;
            if (term_sign[t])
                V::quant(term_bits[t], z, &q, &r);
            corner_terms[t] =
                term_sign[t] > 0 ? q : (int32_t)(0u - (uint32_t)q);
        }
        __syncthreads(); /* sq, corner_terms complete; orders hist zeroing */
        if (coded) {
            uint16_t *lane_codes = opaque(codes + L.i0);
            int32_t *lane_outlier = opaque(outlier + L.i0);
            uint32_t hot = 0, zeros = 0; /* hot: bytes R - 1, R, R + 1 */
#pragma unroll
            for (uint32_t j = 0; j < kBoxSteps; j++) {
                const uint32_t k = t + kTileThreads * j, o = L.offset(j);
                const bool valid = L.valid(j);
                int32_t d = sq[k];
                if (PD == 1)
                    d -= L.bx ? sq[k - 1] : 0;
                if (PD == 3)
                    d -= (j & 1) || L.by_even ? sq[k - S::BX] : 0;
                if (corners && corner_lane<PD>(t, j) && valid) {
                    const int32_t *ct =
                        corner_terms + BC::of_lane(t, j) * BC::kTerms;
                    uint32_t p = 0;
#pragma unroll
                    for (uint32_t k = 0; k < BC::kTerms; k++)
                        p += (uint32_t)ct[k];
                    d = (int32_t)((uint32_t)d - p);
                }
                const uint32_t code = lz_code_of(d, R);
                if (valid)
                    __stcg(lane_codes + o, (unsigned short)code);
                const bool zero = valid && code == 0;
                if (zero)
                    __stcg(lane_outlier + o, d);
                zeros += add_tile_count(tile_out, zero, L.index(j));
                const uint32_t h = (uint32_t)d + 1u; /* 0, 1, 2: hot */
                hot += valid && h < 3 ? 1u << (8 * h) : 0u;
                if (valid && h >= 3 && code != 0) /* cold codes: few */
                    hist_add(shared_hist, hist, chunk_hist, code, 1);
            }
            /* per lane at most kBoxSteps per byte: no carry */
            const uint32_t n[4] = {
                __reduce_add_sync(FZ_FULL_MASK, zeros),
                __reduce_add_sync(FZ_FULL_MASK, hot & 0xFF),
                __reduce_add_sync(FZ_FULL_MASK, (hot >> 8) & 0xFF),
                __reduce_add_sync(FZ_FULL_MASK, hot >> 16)};
            /* R - 1 >= 1, R + 1 < nsym: distinct */
            const uint32_t sym[4] = {0, R - 1, R, R + 1};
            if ((t & 31) == 0)
                for (int c = 0; c < 4; c++)
                    if (n[c])
                        hist_add(shared_hist, hist, chunk_hist, sym[c], n[c]);
        }
        __syncthreads(); /* sq is rewritten by the next box; hist final */
    }
    if (coded && shared_hist)
        for (uint32_t s = threadIdx.x; s < nsym; s += kTileThreads)
            if (hist[s])
                atomicAdd(&chunk_hist[s], hist[s]);
    hash_recon = tile_sum(hash_recon, sums[0]);
    nexc = tile_sum(nexc, sums[2]);
    if (threadIdx.x == 0) {
        ChunkAcc *acc = &w.acc[blockIdx.x];
        atomicAdd(&acc->hash_recon, hash_recon);
        atomicAdd(&acc->nexc, nexc);
    }
}

/* The fused kernel for the header's predictor dimensionality. */
template <int ES>
void launch_quant_codes(const fz_gpu_args &a, const Work &w, dim3 grid,
                        cudaStream_t stream) {
    const uint32_t pd = lz_geometry(&a.expect).pd;
    if (pd == 1)
        quant_codes_kernel<ES, 1><<<grid, kTileThreads, 0, stream>>>(a, w);
    else if (pd == 2)
        quant_codes_kernel<ES, 2><<<grid, kTileThreads, 0, stream>>>(a, w);
    else
        quant_codes_kernel<ES, 3><<<grid, kTileThreads, 0, stream>>>(a, w);
}

/* ------------------------------------------------------ code book */
/* Frequency of symbol s of chunk c in the code book, or (zero_runs) in
 * the zero-run book: the codes' counts but the zero residual's (R), then
 * the run symbols Z_k. */
__device__ uint32_t book_freq(const Work &w, uint64_t c, uint32_t s,
                              bool zero_runs) {
    if (!zero_runs)
        return w.hist[c * w.nsym + s];
    if (s >= w.nsym)
        return w.zcount[c * LZ_ZRUN_SYMBOLS + (s - w.nsym)];
    return s == w.nsym / 2 ? 0u : w.hist[c * w.nsym + s];
}

/* Sort keys of every (chunk, symbol) of the code book (or the zero-run
 * book): frequency << 16 | symbol (unused symbols have frequency 0 and
 * sort first); the segment offsets of a sort call. */
__global__ void book_keys_kernel(const Work w, uint64_t chunks,
                                 bool zero_runs) {
    const uint32_t S = zero_runs ? w.book_syms : w.nsym;
    const uint64_t total = chunks * S;
    const uint64_t step = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
         i < total; i += step) {
        const uint64_t c = i / S;
        const uint32_t s = (uint32_t)(i - c * S);
        w.keys[i] = lz_pm_key(book_freq(w, c, s, zero_runs), s);
    }
    for (uint64_t k = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
         k <= w.sort_chunks; k += step)
        w.seg[k] = (int)(k * S);
}

/* Package-merge scratch: leaves (shared memory only), two level lists,
 * leaf flags of each level. */
struct PmSpace {
    const uint64_t *leaves;
    uint64_t *list[2];
    uint32_t *bits;
};

__device__ PmSpace pm_space(uint8_t *p, uint32_t m, const uint64_t *leaves) {
    PmSpace sp;
    if (!leaves) { /* shared memory: the leaves are copied there */
        leaves = (const uint64_t *)p;
        p += 8ull * m;
    }
    sp.leaves = leaves;
    sp.list[0] = (uint64_t *)p;
    sp.list[1] = (uint64_t *)(p + 16ull * m);
    sp.bits = (uint32_t *)(p + 32ull * m);
    return sp;
}

/* Lists of at most this many items are merged one item per thread (a
 * binary search each, the flags by ballot: conflict-free shared-memory
 * access); longer ones in ranges of whole flag words per thread. */
constexpr uint32_t kItemMerge = 4 * kThreads;

/* The list and leaf flags of one package-merge level (size items). */
__device__ void pm_level(const PmSpace &sp, uint32_t n, const uint64_t *below,
                         uint32_t nbelow, uint32_t size, uint64_t *list,
                         uint32_t *bits) {
    if (size <= kItemMerge) {
        for (uint32_t base = 0; base < size; base += kThreads) {
            const uint32_t d = base + threadIdx.x; /* warp-uniform trips */
            uint32_t is_leaf = 0;
            if (d < size)
                list[d] = lz_pm_item(sp.leaves, n, below, nbelow, d, &is_leaf);
            const uint32_t word = __ballot_sync(FZ_FULL_MASK, is_leaf);
            if ((threadIdx.x & 31) == 0 && d < size)
                bits[d >> 5] = word;
        }
        return;
    }
    const uint32_t span = 32 * ((size + 32 * kThreads - 1) / (32 * kThreads));
    const uint32_t d0 = threadIdx.x * span;
    if (d0 < size)
        lz_pm_merge(sp.leaves, n, below, nbelow, d0,
                    size - d0 < span ? size : d0 + span, list, bits);
}

/* The package-merge levels of n >= 2 leaves, then the leaves taken per
 * level (the same for every thread) into take. */
__device__ void pm_levels(const PmSpace &sp, uint32_t n, uint32_t words,
                          uint32_t *take, uint32_t *sm) {
    const uint64_t *below = sp.list[1];
    uint32_t nbelow = 0;
    for (uint32_t j = LZ_HUFF_MAXLEN; j >= 1; j--) {
        uint64_t *list = sp.list[j & 1];
        const uint32_t size = n + nbelow / 2;
        pm_level(sp, n, below, nbelow, size, list, sp.bits + (j - 1) * words);
        __syncthreads(); /* this level is read next; `below` is reused */
        below = list;
        nbelow = size;
    }
    uint32_t m = 2 * n - 2;
    for (uint32_t j = 0; j < LZ_HUFF_MAXLEN; j++) {
        const uint32_t *bits = sp.bits + j * words;
        uint32_t x = 0;
        for (uint32_t k = threadIdx.x; k < (m + 31) / 32; k += kThreads)
            x += lz_popc(lz_pm_flags(bits, k, m));
        take[j] = block_sum(x, sm);
        m = 2 * (m - take[j]);
    }
}

struct BookShared {
    uint32_t sums[kWarps];
    uint32_t count[LZ_HUFF_MAXLEN + 1], first[LZ_HUFF_MAXLEN + 1];
    uint32_t base[LZ_HUFF_MAXLEN + 1];
    uint32_t warp_off[kWarps][kLens];
    uint32_t lo, hi, zk;
    unsigned long long bits;
};

/* Canonical codes of the chunk's lengths (sh.first: each length's first
 * code): symbols in rounds of kThreads, each one's code its rank within
 * its length (rank_in_length) from the length's first code. */
__device__ void book_codes(const Book &bk, uint32_t S, BookShared &sh) {
    for (uint32_t base = 0; base < S; base += kThreads) {
        const uint32_t s = base + threadIdx.x;
        const uint32_t l = s < S ? bk.len[s] : 0u;
        const uint32_t code = rank_in_length(l, sh.warp_off, sh.first);
        if (l)
            bk.code[s] = code;
    }
}

/* Alphabets of at most kBlockSortKeys symbols are sorted by book_kernel
 * itself, kBlockSortKeys / kThreads keys per thread (was: a CUB
 * segmented sort over all chunks, ~7 launches of ~7 us whatever the
 * size); larger ones by sort_book_keys. */
constexpr uint32_t kBlockSortKeys = 2048;
typedef cub::BlockRadixSort<uint64_t, kThreads, kBlockSortKeys / kThreads>
    BlockSort;

__host__ __device__ bool block_sorted(uint32_t S) {
    return S <= kBlockSortKeys && pm_bytes(S) <= kSharedPm;
}

/* The chunk's S unsorted keys sorted by (frequency, symbol), those of
 * used symbols (all but the `unused` first) into leaves (shared). */
__device__ void sort_leaves(const uint64_t *keys, uint32_t S, uint32_t unused,
                            int end_bit, uint64_t *leaves) {
    __shared__ typename BlockSort::TempStorage tmp;
    constexpr uint32_t kPer = kBlockSortKeys / kThreads;
    uint64_t k[kPer];
#pragma unroll
    for (uint32_t j = 0; j < kPer; j++) {
        const uint32_t i = threadIdx.x * kPer + j;
        k[j] = i < S ? keys[i] : ~0ull; /* past S: sorts last (S < 2^16) */
    }
    BlockSort(tmp).Sort(k, 0, end_bit);
#pragma unroll
    for (uint32_t j = 0; j < kPer; j++) {
        const uint32_t i = threadIdx.x * kPer + j;
        if (i < S && i >= unused)
            leaves[i - unused] = k[j];
    }
    __syncthreads();
}

/* One block per chunk: from the chunk's keys (sorted here when
 * block_sorted(S), else by sort_book_keys into `sorted`), the
 * package-merge code lengths (the CPU's lz_huff_lengths), canonical
 * codes and the used code range. Scratch in dynamic shared memory when
 * pm_bytes(S) <= kSharedPm, else in the chunk's book. zero_runs: the
 * book of the run symbols of the chunks tallied for them (the alphabet
 * book_syms: codes, then the Z_k), its range of used codes and of run
 * symbols, and its total bits sum freq x len (the exact lower bound's
 * part). */
__global__ void __launch_bounds__(kThreads)
    book_kernel(const fz_gpu_args a, const Work w, const uint64_t *sorted,
                bool zero_runs) {
    extern __shared__ __align__(16) uint8_t pm_shared[];
    __shared__ BookShared sh;
    const uint64_t c = blockIdx.x;
    if (bound_is_zero(a) || (zero_runs && w.plan[c].zstate == kZrNone))
        return;
    const uint32_t S = zero_runs ? w.book_syms : w.nsym, zsym = w.nsym;
    const bool by_block = block_sorted(S);
    const uint64_t *keys = (by_block ? w.keys : sorted) + c * S;
    uint8_t *books = zero_runs ? w.zbook : w.book;
    const Book bk = book_at(w, books, c);
    uint32_t unused = 0;
    for (uint32_t s = threadIdx.x; s < S; s += kThreads) {
        unused += lz_pm_weight(keys[s]) == 0;
        bk.len[s] = 0;
    }
    unused = block_sum(unused, sh.sums);
    const uint32_t n = S - unused; /* >= 1: a chunk has values */
    const uint64_t *leaves = keys + unused;
    const bool in_shared = pm_bytes(S) <= kSharedPm;
    const PmSpace sp = in_shared
                           ? pm_space(pm_shared, S, nullptr)
                           : pm_space(books + c * w.book_stride +
                                          fz_align_up(5ull * w.book_syms, 16),
                                      S, leaves);
    if (by_block)
        sort_leaves(keys, S, unused, w.sort_end_bit, (uint64_t *)sp.leaves);
    else if (in_shared)
        for (uint32_t i = threadIdx.x; i < n; i += kThreads)
            ((uint64_t *)sp.leaves)[i] = leaves[i];
    if (threadIdx.x <= LZ_HUFF_MAXLEN)
        sh.count[threadIdx.x] = 0;
    if (threadIdx.x == 0) {
        sh.lo = UINT32_MAX;
        sh.hi = sh.zk = 0;
        sh.bits = 0;
    }
    __syncthreads();
    uint32_t take[LZ_HUFF_MAXLEN];
    if (n >= 2)
        pm_levels(sp, n, lz_pm_words(S), take, sh.sums);
    for (uint32_t base = 0; base < n; base += kThreads) {
        const uint32_t i = base + threadIdx.x;
        uint32_t l = 0, sym = 0;
        unsigned long long bits = 0;
        if (i < n) {
            sym = lz_pm_symbol(sp.leaves[i]);
            l = n == 1 ? 1u : lz_pm_length(take, LZ_HUFF_MAXLEN, i);
            bk.len[sym] = (uint8_t)l;
            bits = lz_pm_weight(sp.leaves[i]) * l;
        }
        const uint32_t peers = __match_any_sync(FZ_FULL_MASK, l);
        if (l && (threadIdx.x & 31) == (uint32_t)__ffs(peers) - 1)
            atomicAdd(&sh.count[l], (uint32_t)__popc(peers));
        const bool code = i < n && sym < zsym;
        const uint32_t lo = __reduce_min_sync(FZ_FULL_MASK, code ? sym : ~0u);
        const uint32_t hi = __reduce_max_sync(FZ_FULL_MASK, code ? sym : 0u);
        const uint32_t zk = __reduce_max_sync(
            FZ_FULL_MASK, i < n && sym >= zsym ? sym - zsym + 1 : 0u);
        for (int d = 16; d > 0; d >>= 1)
            bits += __shfl_down_sync(FZ_FULL_MASK, bits, d);
        if ((threadIdx.x & 31) == 0) {
            atomicMin(&sh.lo, lo);
            atomicMax(&sh.hi, hi);
            atomicMax(&sh.zk, zk);
            atomicAdd(&sh.bits, bits);
        }
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        lz_canonical_counts(sh.count, sh.first, sh.base);
        ChunkPlan *p = &w.plan[c];
        if (zero_runs) {
            p->zlo = sh.lo;
            p->zhi = sh.hi;
            p->zk = sh.zk;
            p->zbits = sh.bits;
        } else {
            p->lo = sh.lo;
            p->hi = sh.hi;
        }
    }
    __syncthreads();
    book_codes(bk, S, sh);
}

/* Sorts every chunk's keys of the code book (or the zero-run book) by
 * (frequency, symbol) in calls of at most w.sort_chunks segments;
 * *sorted: the buffer holding the result. */
cudaError_t sort_book_keys(const Work &w, uint64_t C, bool zero_runs,
                           cudaStream_t stream, const uint64_t **sorted) {
    const uint64_t S = zero_runs ? w.book_syms : w.nsym;
    book_keys_kernel<<<
        (unsigned)((C * S + 255) / 256 < 4096 ? (C * S + 255) / 256 : 4096),
        256, 0, stream>>>(w, C, zero_runs);
    cudaError_t err = cudaGetLastError();
    *sorted = nullptr;
    if (block_sorted((uint32_t)S)) /* book_kernel sorts them */
        return err;
    int selector = -1;
    for (uint64_t c0 = 0; c0 < C && err == cudaSuccess; c0 += w.sort_chunks) {
        const uint64_t cs = C - c0 < w.sort_chunks ? C - c0 : w.sort_chunks;
        cub::DoubleBuffer<uint64_t> keys(w.keys + c0 * S, w.keys_alt + c0 * S);
        size_t bytes = w.sort_bytes;
        err = cub::DeviceSegmentedRadixSort::SortKeys(
            w.sort_tmp, bytes, keys, (int)(cs * S), (int)cs, w.seg, w.seg + 1,
            0, w.sort_end_bit, stream);
        if (err == cudaSuccess && selector < 0)
            selector = keys.selector;
        else if (err == cudaSuccess && keys.selector != selector)
            err = cudaMemcpyAsync(keys.d_buffers[selector], keys.Current(),
                                  8 * cs * S, cudaMemcpyDeviceToDevice, stream);
    }
    *sorted = selector == 1 ? w.keys_alt : w.keys;
    return err;
}

/* Bits of each of the tile's sub-blocks and run starts per tile (with
 * zero runs allowed, also the runs of the zero residual's code R, per
 * chunk): a thread's kPerThread codes from registers (its predecessor
 * from the lane before), each sub-block summed by its kThreadsPerSub
 * threads' warps. */
template <bool kShared>
__global__ void __launch_bounds__(kTileThreads)
    bits_kernel(const fz_gpu_args a, const Work w) {
    extern __shared__ uint32_t book_sm[];
    __shared__ uint32_t bit_sums[kTileWarps], start_sums[kTileWarps];
    __shared__ uint32_t zrun_sums[kTileWarps], nonr_mins[kTileWarps];
    TileSpan ts;
    if (bound_is_zero(a) || !tile_of(a, chunk_n(a), &ts))
        return;
    const uint32_t R = a.expect.codec_params[0];
    const bool zero_runs = lz_zero_runs(&a.expect);
    const uint16_t *codes = w.codes + ts.sp.first;
    const uint32_t first = ts.lo + threadIdx.x * kPerThread;
    ThreadCodes tc;
    const uint32_t cnt = load_codes(codes, first, ts.hi, &tc);
    const TileBook<kShared> bk = tile_book<kShared>(w, blockIdx.x, book_sm);
    /* the code before first: the lane before's last (a whole group, as
     * first < hi), lane 0's from memory */
    uint32_t prev = __shfl_up_sync(FZ_FULL_MASK, tc.at(kPerThread - 1), 1);
    if ((threadIdx.x & 31) == 0 && cnt && first)
        prev = codes[first - 1];
    __syncthreads(); /* the shared book */
    uint32_t bits = 0, starts = 0, zruns = 0, nonr = UINT32_MAX;
#pragma unroll
    for (uint32_t j = 0; j < kPerThread; j++)
        if (j < cnt) {
            const uint32_t code = tc.at(j);
            const bool start = (first + j == 0) || code != prev;
            bits += bk.len(code);
            starts += start;
            zruns += start && code == R;
            nonr = code != R && nonr == UINT32_MAX ? first + j : nonr;
            prev = code;
        }
    bits = __reduce_add_sync(FZ_FULL_MASK, bits);
    starts = __reduce_add_sync(FZ_FULL_MASK, starts);
    zruns = __reduce_add_sync(FZ_FULL_MASK, zruns);
    nonr = __reduce_min_sync(FZ_FULL_MASK, nonr);
    const uint32_t lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) {
        bit_sums[warp] = bits;
        start_sums[warp] = starts;
        zrun_sums[warp] = zruns;
        nonr_mins[warp] = nonr;
    }
    __syncthreads();
    const uint32_t nsub = (uint32_t)lz_sub_count(ts.sp.n);
    const uint32_t b = blockIdx.y * kSubsPerTile + threadIdx.x;
    if (threadIdx.x < kSubsPerTile && b < nsub) {
        uint32_t total = 0;
        for (uint32_t k = 0; k < kWarpsPerSub; k++)
            total += bit_sums[threadIdx.x * kWarpsPerSub + k];
        w.sub_bits[blockIdx.x * w.subs_per_chunk + b] = total;
    }
    if (threadIdx.x == 0) {
        uint32_t total = 0, ztotal = 0, first_nonr = UINT32_MAX;
        for (uint32_t k = 0; k < kTileWarps; k++) {
            total += start_sums[k];
            ztotal += zrun_sums[k];
            first_nonr = min(first_nonr, nonr_mins[k]);
        }
        *tile_slot(w, w.tile_runs) = total;
        if (zero_runs) {
            *tile_slot(w, w.tile_nonr) = first_nonr;
            if (ztotal)
                atomicAdd(&w.acc[blockIdx.x].zruns, ztotal);
        }
    }
}

/* out[k] = sum of f(in[j]) over j < k for k < T (in == out allowed);
 * returns the total. One block. */
template <typename F>
__device__ uint32_t scan_tiles(const uint32_t *in, uint32_t *out, uint32_t T,
                               Scan::TempStorage &tmp, F f) {
    uint32_t done = 0;
    for (uint32_t base = 0; base < T; base += kThreads) {
        const uint32_t k = base + threadIdx.x;
        const uint32_t x = k < T ? f(in[k]) : 0u;
        uint32_t rank, agg;
        Scan(tmp).ExclusiveSum(x, rank, agg);
        if (k < T)
            out[k] = done + rank;
        done += agg;
        __syncthreads(); /* tmp is reused */
    }
    return done;
}

/* Bytes of the chunk's Huffman coding (plan: range, data bytes). */
__device__ uint64_t huffman_bytes(const ChunkPlan &p, uint32_t n) {
    return lz_code_head_bytes(0, p.lo, p.hi, 0, n) + p.data;
}

/* Whether the RLE coding may be smaller than the Huffman one: every run
 * takes at least 3 bytes (u16 code, one length byte), so with 4 + 3 runs
 * >= the Huffman bytes the chunk never uses RLE and its run starts and
 * RLE sizes are not needed. */
__device__ bool rle_may_win(const ChunkPlan &p, uint32_t n) {
    return 4 + 3ull * p.runs < huffman_bytes(p, n);
}

/* Whether the zero-run coding may be smaller than the Huffman one (the
 * best coding is at most that): its m >= n - zeros + zruns symbols (each
 * run of the zero residual's code R gives at least one) take a bit each
 * at least, after a head of at least 4 + 6 bytes (one code listed) and 2
 * bytes per sub-block. A chunk of R alone never uses it (RLE's one run is
 * smaller). */
__device__ bool zr_may_win(const Work &w, const ChunkPlan &p, uint64_t c,
                           uint32_t n) {
    if (!w.zcodes)
        return false;
    const uint32_t zeros = w.hist[c * w.nsym + w.nsym / 2];
    const uint64_t m = (uint64_t)n - zeros + w.acc[c].zruns;
    return zeros < n && 4 + lz_table_bytes(1, 1) +
                                LZ_SUB_SIZE * lz_sub_count(m) + (m + 7) / 8 <
                            huffman_bytes(p, n);
}

/* first[k] (the first value of tile k that is not R, or none) becomes
 * the first after tile k, or n: a min-scan from the last tile down. */
__device__ void next_nonr(uint32_t *first, uint32_t T, uint32_t n,
                          Scan::TempStorage &tmp) {
    auto lesser = [](uint32_t x, uint32_t y) { return x < y ? x : y; };
    uint32_t after = n; /* the first in the tiles of earlier rounds */
    for (uint32_t base = 0; base < T; base += kThreads) {
        const uint32_t k = T - 1 - (base + threadIdx.x); /* wraps past 0 */
        const bool in = base + threadIdx.x < T;
        const uint32_t x = in ? first[k] : UINT32_MAX;
        uint32_t later, all;
        Scan(tmp).ExclusiveScan(x, later, UINT32_MAX, lesser, all);
        if (in)
            first[k] = lesser(later, after);
        after = lesser(after, all);
        __syncthreads(); /* tmp is reused */
    }
}

/* Per chunk: byte offsets of the sub-blocks; tile offsets of the run
 * starts, outliers and exceptions; the run count and the Huffman data
 * bytes; whether zero runs are worth a tally. */
__global__ void __launch_bounds__(kThreads)
    tile_scan_kernel(const fz_gpu_args a, const Work w) {
    __shared__ Scan::TempStorage tmp;
    if (bound_is_zero(a))
        return;
    const uint64_t c = blockIdx.x, at = c * w.tiles_per_chunk;
    const uint64_t sub_at = c * w.subs_per_chunk;
    const uint32_t n = chunk_n(a), T = (uint32_t)tile_count(n);
    auto bytes = [](uint32_t bits) { return (bits + 7) / 8; };
    auto same = [](uint32_t x) { return x; };
    const uint32_t data = scan_tiles(w.sub_bits + sub_at, w.sub_off + sub_at,
                                     (uint32_t)lz_sub_count(n), tmp, bytes);
    const uint32_t runs =
        scan_tiles(w.tile_runs + at, w.tile_runs + at, T, tmp, same);
    scan_tiles(w.tile_out + at, w.tile_out + at, T, tmp, same);
    scan_tiles(w.tile_exc + at, w.tile_exc + at, T, tmp, same);
    ChunkPlan p = w.plan[c];
    p.runs = runs;
    p.data = data;
    p.zstate = zr_may_win(w, p, c, n) ? kZrTally : kZrNone;
    if (p.zstate != kZrNone)
        next_nonr(w.tile_nonr + at, T, n, tmp);
    __syncthreads(); /* every thread has read the plan */
    if (threadIdx.x == 0)
        w.plan[c] = p;
}

/* ------------------------------------------------ RLE decoding (grid) */
/* Length bytes per thread and per tile: 5 x kTile bytes, so a chunk has
 * at most as many tiles of lengths as of values (lengths <= 5 runs). */
constexpr uint32_t kLebPerThread = 20;
constexpr uint32_t kLebTile = kThreads * kLebPerThread;
static_assert(kLebTile == LZ_LEB_MAX * kTile, "length tiles");

/* The RLE chunk of a grid block (blockIdx.x) and its tile of lengths
 * (blockIdx.y); false when there is none. */
__device__ bool leb_tile(const Work &w, ChunkDecode **cd, uint32_t *lo,
                         uint32_t *hi) {
    if (!chunk_live(w, cd) || (*cd)->flow != LZ_FLOW_RLE)
        return false;
    const uint32_t bytes = (*cd)->lens_bytes, t = blockIdx.y * kLebTile;
    *lo = t + threadIdx.x * kLebPerThread;
    *hi = bytes - *lo < kLebPerThread ? bytes : *lo + kLebPerThread;
    if (*lo > bytes)
        *lo = *hi = bytes;
    return t < bytes;
}

/* The lengths ending in bytes [lo, hi) of the lengths region (a length
 * ends at a byte with the high bit clear and starts after the previous
 * one): visit(value), the value 0 when it is not a valid LEB128 of at most
 * LZ_LEB_MAX bytes, or exceeds n. Returns false after such a length. */
template <typename F>
__device__ bool leb_each(const uint8_t *lens, uint32_t lo, uint32_t hi,
                         uint32_t n, F visit) {
    bool ok = true;
    for (uint32_t q = lo; q < hi; q++) {
        if (lens[q] & 0x80)
            continue;
        uint32_t k = 0; /* continuation bytes before q, up to one too many */
        while (k < LZ_LEB_MAX && k < q && (lens[q - k - 1] & 0x80))
            k++;
        uint64_t v = lz_leb_value(lens + q - k, k + 1);
        if (v == 0 || v > n) {
            ok = false;
            v = 0;
        }
        visit((uint32_t)v);
    }
    return ok;
}

/* The number and the sum of the lengths ending in bytes [lo, hi). */
__device__ bool leb_tally(const uint8_t *lens, uint32_t lo, uint32_t hi,
                          uint32_t n, uint32_t *count,
                          unsigned long long *sum) {
    uint32_t c = 0;
    unsigned long long t = 0;
    const bool ok = leb_each(lens, lo, hi, n, [&](uint32_t v) {
        c++;
        t += v;
    });
    *count = c;
    *sum = t;
    return ok;
}

/* Block-wide sum of 64-bit terms, valid in thread 0. */
__device__ unsigned long long block_sum64(unsigned long long x,
                                          unsigned long long *sm) {
    for (int d = 16; d > 0; d >>= 1)
        x += __shfl_down_sync(FZ_FULL_MASK, x, d);
    __syncthreads(); /* sm may still be read by a previous call */
    if ((threadIdx.x & 31) == 0)
        sm[threadIdx.x >> 5] = x;
    __syncthreads();
    if (threadIdx.x >= 32)
        return 0;
    x = threadIdx.x < kWarps ? sm[threadIdx.x] : 0ull;
    for (int d = 16; d > 0; d >>= 1)
        x += __shfl_down_sync(FZ_FULL_MASK, x, d);
    return x;
}

/* Per tile of lengths: the lengths ending in it (tile_runs) and their sum
 * (tile_rle, capped at n + 1: a tile of a valid chunk sums to at most n). */
__global__ void __launch_bounds__(kThreads)
    rle_count_kernel(const fz_gpu_args a, const Work w) {
    __shared__ unsigned long long sums[kWarps];
    ChunkDecode *cd;
    uint32_t lo, hi;
    if (!leb_tile(w, &cd, &lo, &hi))
        return;
    const uint32_t n = chunk_n(a);
    uint32_t count;
    unsigned long long sum;
    if (!leb_tally(a.src + cd->lens_at, lo, hi, n, &count, &sum))
        mark_bad(cd);
    count = (uint32_t)block_sum64(count, sums);
    sum = block_sum64(sum, sums);
    if (threadIdx.x == 0) {
        *tile_slot(w, w.tile_runs) = count;
        *tile_slot(w, w.tile_rle) = (uint32_t)(sum > n ? n + 1ull : sum);
    }
}

/* Per RLE chunk: tile offsets of the run indices and of the run starts;
 * the lengths must be exactly the runs and sum to n (summed in 64 bits,
 * so the 32-bit offsets are exact whenever this holds). Per zero-run
 * chunk: tile offsets of the symbols' starts, the codes they stand for
 * summing to n. */
__global__ void __launch_bounds__(kThreads)
    rle_scan_kernel(const fz_gpu_args a, const Work w) {
    __shared__ Scan::TempStorage tmp;
    __shared__ unsigned long long sums[kWarps];
    ChunkDecode *cd;
    if (!chunk_live(w, &cd) ||
        (cd->flow != LZ_FLOW_RLE && cd->flow != LZ_FLOW_ZRUNS))
        return;
    const bool zero_runs = cd->flow == LZ_FLOW_ZRUNS;
    const uint64_t at = blockIdx.x * w.tiles_per_chunk;
    const uint32_t T = zero_runs ? (uint32_t)tile_count(cd->runs)
                                 : (cd->lens_bytes + kLebTile - 1) / kLebTile;
    unsigned long long total = 0;
    for (uint32_t k = threadIdx.x; k < T; k += kThreads)
        total += w.tile_rle[at + k];
    total = block_sum64(total, sums);
    auto same = [](uint32_t x) { return x; };
    const uint32_t runs =
        zero_runs
            ? cd->runs
            : scan_tiles(w.tile_runs + at, w.tile_runs + at, T, tmp, same);
    scan_tiles(w.tile_rle + at, w.tile_rle + at, T, tmp, same);
    if (threadIdx.x == 0 && (runs != cd->runs || total != chunk_n(a)))
        mark_bad(cd);
}

/* Per tile of lengths: each run's start (its index and start from the
 * tile offsets and block scans) into aux, its code into codes; codes in
 * range, neighbours different. */
__global__ void __launch_bounds__(kThreads)
    rle_starts_kernel(const fz_gpu_args a, const Work w) {
    __shared__ Scan::TempStorage tmp;
    ChunkDecode *cd;
    uint32_t lo, hi;
    if (!leb_tile(w, &cd, &lo, &hi))
        return;
    const ChunkSpan sp = block_span(a);
    const uint8_t *lens = a.src + cd->lens_at;
    const uint8_t *codes = a.src + cd->data_at;
    const uint32_t runs = cd->runs, nsym = w.nsym;
    uint32_t count, r, start;
    unsigned long long sum;
    leb_tally(lens, lo, hi, sp.n, &count, &sum);
    Scan(tmp).ExclusiveSum(count, r);
    __syncthreads();                              /* tmp is reused */
    Scan(tmp).ExclusiveSum((uint32_t)sum, start); /* exact for valid chunks */
    r += *tile_slot(w, w.tile_runs);
    start += *tile_slot(w, w.tile_rle);
    uint32_t *aux = w.aux + sp.first;
    uint16_t *syms = w.codes + sp.first;
    bool bad = false;
    leb_each(lens, lo, hi, sp.n, [&](uint32_t v) {
        if (r < runs) { /* else the count check failed already */
            const uint32_t sym = fz_load16(codes + 2ull * r);
            bad |= sym >= nsym ||
                   (r > 0 && sym == fz_load16(codes + 2ull * (r - 1)));
            aux[r] = start;
            syms[r] = (uint16_t)sym;
        }
        r++;
        start += v;
    });
    if (bad)
        mark_bad(cd);
}

/* ------------------------------------ zero-run expansion (grid) */
/* Per tile of zero-run symbols: each symbol's first code (tile offset +
 * block scan) into aux, in place of the symbol, and the code it repeats
 * into codes (Z_k: the zero residual's code R), so that decode_runs_kernel
 * expands them as runs. A thread reads and writes only its own
 * kPerZrun symbols. */
constexpr uint32_t kPerZrun = kTile / kThreads;
__global__ void __launch_bounds__(kThreads)
    zrun_starts_kernel(const fz_gpu_args a, const Work w) {
    __shared__ Scan::TempStorage tmp;
    ChunkDecode *cd;
    TileSpan ts; /* a tile of kTile symbols */
    if (!chunk_live(w, &cd) || cd->flow != LZ_FLOW_ZRUNS ||
        !tile_of(a, cd->runs, &ts))
        return;
    const uint32_t zsym = w.nsym, R = a.expect.codec_params[0], hi = ts.hi;
    uint32_t *aux = w.aux + ts.sp.first;
    uint16_t *codes = w.codes + ts.sp.first;
    const uint32_t first = ts.lo + threadIdx.x * kPerZrun;
    uint32_t sym[kPerZrun], count = 0;
#pragma unroll
    for (uint32_t k = 0; k < kPerZrun; k++) {
        sym[k] = first + k < hi ? aux[first + k] : 0u;
        /* exact for valid chunks (every partial sum <= n) */
        count += first + k < hi ? (uint32_t)lz_zrun_codes(sym[k], zsym) : 0u;
    }
    uint32_t start;
    Scan(tmp).ExclusiveSum(count, start);
    start += *tile_slot(w, w.tile_rle);
#pragma unroll
    for (uint32_t k = 0; k < kPerZrun; k++)
        if (first + k < hi) {
            aux[first + k] = start;
            codes[first + k] = (uint16_t)(sym[k] < zsym ? sym[k] : R);
            start += (uint32_t)lz_zrun_codes(sym[k], zsym);
        }
}

/* Run starts in order into aux (chunks that may use RLE). */
__global__ void __launch_bounds__(kTileThreads)
    run_starts_kernel(const fz_gpu_args a, const Work w) {
    __shared__ uint32_t warp_sums[kTileWarps];
    TileSpan ts;
    if (bound_is_zero(a) || !tile_of(a, chunk_n(a), &ts) ||
        !rle_may_win(w.plan[blockIdx.x], ts.sp.n))
        return;
    const uint16_t *codes = w.codes + ts.sp.first;
    uint32_t *aux = w.aux + ts.sp.first;
    tile_compact(
        ts, *tile_slot(w, w.tile_runs), warp_sums,
        [&](uint32_t i) { return i == 0 || codes[i] != codes[i - 1]; },
        [&](uint32_t i, uint32_t r) { aux[r] = i; });
}

/* RLE bytes of one run: u16 symbol, LEB128 length. */
__device__ uint32_t run_bytes(const uint32_t *aux, uint32_t r, uint32_t runs,
                              uint32_t n) {
    return 2 + lz_leb_bytes((r + 1 < runs ? aux[r + 1] : n) - aux[r]);
}

/* RLE bytes per tile of runs. */
__global__ void __launch_bounds__(kTileThreads)
    rle_tile_kernel(const fz_gpu_args a, const Work w) {
    __shared__ uint32_t sums[kTileThreads / 32];
    TileSpan ts;
    if (bound_is_zero(a) || !tile_of(a, w.plan[blockIdx.x].runs, &ts) ||
        !rle_may_win(w.plan[blockIdx.x], ts.sp.n))
        return;
    const uint32_t *aux = w.aux + ts.sp.first;
    const uint32_t runs = w.plan[blockIdx.x].runs;
    uint32_t bytes = 0;
    for (uint32_t r = ts.lo + threadIdx.x; r < ts.hi; r += kTileThreads)
        bytes += run_bytes(aux, r, runs, ts.sp.n);
    bytes = tile_sum(bytes, sums);
    if (threadIdx.x == 0)
        *tile_slot(w, w.tile_rle) = bytes;
}

/* ------------------------------------- zero-run coding (grid) */
/* A thread's kPerThread consecutive values of a value tile, read as
 * zero-run symbols (the CPU's zero_run_symbols): a code other than R is
 * one symbol, itself; a maximal run of R of length L is popc(L) symbols
 * Z_k (the set bits k of L, highest first), owned by the thread where the
 * run starts. */
struct ThreadRuns {
    ThreadCodes tc;
    uint32_t rmask;    /* bit j: value first + j is R (below cnt) */
    uint32_t starts;   /* bit j: a run of R starts at value first + j */
    uint32_t cnt;      /* values below the tile's end */
    uint32_t first;    /* chunk index of the first value */
    uint32_t last_end; /* where the thread's last run ends */
};

/* The thread's codes, its masks of R and of run starts, and the end of
 * its last run, should it be a run of R reaching the thread's last value:
 * the first value after the thread's that is not R, in the tile (a suffix
 * min over the later threads' first such values: warp shuffles, then the
 * later warps' minima in warp_min) or after it (tile_nonr), else n. Every
 * other run of the thread ends inside it. */
__device__ void thread_runs(const Work &w, const TileSpan &ts,
                            uint32_t *warp_min, ThreadRuns *tr) {
    const uint16_t *codes = w.codes + ts.sp.first;
    const uint32_t R = w.nsym / 2;
    tr->first = ts.lo + threadIdx.x * kPerThread;
    tr->cnt = load_codes(codes, tr->first, ts.hi, &tr->tc);
    /* the code before first: as in bits_kernel */
    uint32_t prev = __shfl_up_sync(FZ_FULL_MASK, tr->tc.at(kPerThread - 1), 1);
    if ((threadIdx.x & 31) == 0 && tr->cnt && tr->first)
        prev = codes[tr->first - 1];
    tr->rmask = 0;
#pragma unroll
    for (uint32_t j = 0; j < kPerThread; j++)
        tr->rmask |= (uint32_t)(tr->tc.at(j) == R) << j;
    tr->rmask &= (1u << tr->cnt) - 1; /* cnt <= 16 */
    /* a run starts at an R whose value before is not R, or at the chunk's
     * first value */
    tr->starts =
        tr->rmask & ~(tr->rmask << 1 | (uint32_t)(tr->first != 0 && prev == R));
    const uint32_t nonr = ~tr->rmask & ((1u << tr->cnt) - 1);
    /* the thread's first value not R */
    uint32_t mine = nonr ? tr->first + __ffs(nonr) - 1 : UINT32_MAX;
    const uint32_t lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    uint32_t suffix = mine; /* min over lanes >= lane */
    for (uint32_t d = 1; d < 32; d <<= 1) {
        const uint32_t o = __shfl_down_sync(FZ_FULL_MASK, suffix, d);
        suffix = lane + d < 32 && o < suffix ? o : suffix;
    }
    uint32_t later = __shfl_down_sync(FZ_FULL_MASK, suffix, 1);
    later = lane < 31 ? later : UINT32_MAX;
    if (lane == 0)
        warp_min[warp] = suffix;
    __syncthreads();
    for (uint32_t k = warp + 1; k < kTileWarps; k++)
        later = warp_min[k] < later ? warp_min[k] : later;
    tr->last_end = later != UINT32_MAX ? later : *tile_slot(w, w.tile_nonr);
}

/* Length of the run of R starting at value first + s: up to the thread's
 * first value after it that is not R (*closed), or to last_end when it
 * reaches the thread's last value (rmask is 0 past cnt). */
__device__ uint32_t run_length(const ThreadRuns &tr, uint32_t s, bool *closed) {
    const uint32_t L = __ffs(~(tr.rmask >> s)) - 1;
    *closed = s + L < tr.cnt;
    return *closed ? L : tr.last_end - (tr.first + s);
}

/* The thread's symbols in order: code(c) for a code other than R, run(L)
 * for a run of R starting in its values (at its start: only R lies between
 * it and the next code). */
template <typename Code, typename Run>
__device__ void walk_runs(const ThreadRuns &tr, Code code, Run run) {
#pragma unroll
    for (uint32_t j = 0; j < kPerThread; j++)
        if (tr.starts >> j & 1) {
            bool closed;
            run(run_length(tr, j, &closed));
        } else if (j < tr.cnt && !(tr.rmask >> j & 1))
            code(tr.tc.at(j));
}

/* The runs of R that start in the thread's values, in any order:
 * closed(L) for a run that ends inside the thread (L <= 15), open(L) for
 * the one that reaches its last value (at most one). */
template <typename Closed, typename Open>
__device__ void for_each_run(const ThreadRuns &tr, Closed closed, Open open) {
    for (uint32_t st = tr.starts; st; st &= st - 1) {
        bool inside;
        const uint32_t L = run_length(tr, __ffs(st) - 1, &inside);
        if (inside)
            closed(L);
        else
            open(L);
    }
}

/* Symbols of the thread's values: one per code other than R, popc(L) per
 * run of R. */
__device__ uint32_t thread_symbols(const ThreadRuns &tr) {
    uint32_t syms = tr.cnt - __popc(tr.rmask);
    const auto add = [&](uint32_t L) { syms += (uint32_t)__popc(L); };
    for_each_run(tr, add, add);
    return syms;
}

/* The value tile of a grid block (chunk blockIdx.x, tile blockIdx.y)
 * whose chunk stands at `state` with zero runs; false when there is none. */
__device__ bool zrun_tile(const fz_gpu_args &a, const Work &w, uint32_t state,
                          TileSpan *ts) {
    return !bound_is_zero(a) && w.plan[blockIdx.x].zstate == state &&
           tile_of(a, chunk_n(a), ts);
}

/* Per value tile of the chunks tallied for zero runs: its symbols
 * (tile_zsym) and, per chunk, the counts of the run symbols Z_k. */
__global__ void __launch_bounds__(kTileThreads)
    zrun_tally_kernel(const fz_gpu_args a, const Work w) {
    __shared__ uint32_t zk[LZ_ZRUN_SYMBOLS], sums[kTileWarps];
    __shared__ uint32_t warp_min[kTileWarps];
    TileSpan ts;
    if (!zrun_tile(a, w, kZrTally, &ts))
        return;
    if (threadIdx.x < LZ_ZRUN_SYMBOLS)
        zk[threadIdx.x] = 0;
    ThreadRuns tr;
    thread_runs(w, ts, warp_min, &tr); /* syncs: zk zeroed */
    /* Z_k of runs inside the thread (L <= 15, so k <= 3) as four 5-bit
     * counters (at most 8 runs per thread): bit k of L lands at 5k by
     * copying L to 0, 4, 8, 12 and masking; summed once per warp. The run
     * open at the thread's end (any length) takes shared atomics. */
    uint32_t syms = tr.cnt - __popc(tr.rmask), packed = 0;
    for_each_run(
        tr,
        [&](uint32_t L) {
            syms += (uint32_t)__popc(L);
            packed += (L * 0x1111u) & 0x8421u;
        },
        [&](uint32_t L) {
            syms += (uint32_t)__popc(L);
            for (; L; L &= L - 1)
                atomicAdd(&zk[__ffs(L) - 1], 1u);
        });
    /* Z_0, Z_2 and Z_1, Z_3 in 16-bit halves (a warp's sum <= 256) */
    const uint32_t even = __reduce_add_sync(
        FZ_FULL_MASK, (packed & 0x1Fu) | (packed >> 10 & 0x1Fu) << 16);
    const uint32_t odd = __reduce_add_sync(
        FZ_FULL_MASK, (packed >> 5 & 0x1Fu) | (packed >> 15 & 0x1Fu) << 16);
    if ((threadIdx.x & 31) == 0) {
        const uint32_t z[4] = {even & 0xFFFFu, odd & 0xFFFFu, even >> 16,
                               odd >> 16};
#pragma unroll
        for (int k = 0; k < 4; k++)
            if (z[k])
                atomicAdd(&zk[k], z[k]);
    }
    syms = tile_sum(syms, sums); /* syncs: zk complete */
    if (threadIdx.x == 0)
        *tile_slot(w, w.tile_zsym) = syms;
    if (threadIdx.x < LZ_ZRUN_SYMBOLS && zk[threadIdx.x])
        atomicAdd(&w.zcount[blockIdx.x * LZ_ZRUN_SYMBOLS + threadIdx.x],
                  zk[threadIdx.x]);
}

/* The best of the Huffman and the RLE coding (Huffman wins ties), given
 * the RLE bytes when RLE may win (else unused). */
__device__ uint64_t best_bytes(const ChunkPlan &p, uint32_t n, uint64_t rle) {
    const uint64_t huff = huffman_bytes(p, n);
    return rle_may_win(p, n) && rle < huff ? rle : huff;
}

/* Bytes of the chunk's zero-run coding but its sub-blocks' data: u32
 * symbol count, table head and lengths, sub-block sizes. */
__device__ uint64_t zrun_head_bytes(const ChunkPlan &p) {
    return 4 + lz_code_head_bytes(1, p.zlo, p.zhi, p.zk, p.zm);
}

/* Per tallied chunk: tile offsets of the symbols, their count m, and the
 * exact lower bound of the zero-run coding (its head plus the book's
 * total bits in whole bytes: each sub-block rounds up) against the best
 * of Huffman and RLE; a chunk that may win is coded. Chunks with no code
 * but R never get here (zr_may_win), so the book lists a code. */
__global__ void __launch_bounds__(kThreads)
    zrun_plan_kernel(const fz_gpu_args a, const Work w) {
    __shared__ Scan::TempStorage tmp;
    __shared__ uint32_t sums[kWarps];
    const uint64_t c = blockIdx.x;
    const ChunkPlan p0 = w.plan[c];
    if (bound_is_zero(a) || p0.zstate != kZrTally)
        return;
    const uint32_t n = chunk_n(a);
    const uint64_t at = c * w.tiles_per_chunk;
    const uint32_t m =
        scan_tiles(w.tile_zsym + at, w.tile_zsym + at, (uint32_t)tile_count(n),
                   tmp, [](uint32_t x) { return x; });
    uint32_t rle = 0;
    if (rle_may_win(p0, n)) {
        const uint32_t *tiles = w.tile_rle + at;
        for (uint32_t k = threadIdx.x; k < tile_count(p0.runs); k += kThreads)
            rle += tiles[k];
        rle = 4 + block_sum(rle, sums);
    }
    if (threadIdx.x != 0)
        return;
    ChunkPlan p = p0;
    p.zm = m;
    const uint64_t bound = zrun_head_bytes(p) + (p.zbits + 7) / 8;
    p.zstate =
        p.zlo <= p.zhi && bound < best_bytes(p, n, rle) ? kZrCoded : kZrNone;
    w.plan[c] = p;
}

/* The symbols of each coded chunk's value tile into zcodes, at the
 * tile's offset plus a block scan. */
__global__ void __launch_bounds__(kTileThreads)
    zrun_symbols_kernel(const fz_gpu_args a, const Work w) {
    __shared__ TileScan::TempStorage tmp;
    /* a tile's symbols: its values but the runs of R (which take at least
     * as many values as their symbols), plus those of the run open at its
     * end (at most LZ_ZRUN_SYMBOLS for at least one value) */
    __shared__ uint16_t syms[kTile + LZ_ZRUN_SYMBOLS];
    __shared__ uint32_t warp_min[kTileWarps];
    TileSpan ts;
    if (!zrun_tile(a, w, kZrCoded, &ts))
        return;
    ThreadRuns tr;
    thread_runs(w, ts, warp_min, &tr);
    const uint32_t zsym = w.nsym;
    uint32_t at, total;
    TileScan(tmp).ExclusiveSum(thread_symbols(tr), at, total);
    walk_runs(
        tr, [&](uint32_t c) { syms[at++] = (uint16_t)c; },
        [&](uint32_t L) {
            for (; L; L &= ~(1u << (31 - __clz(L))))
                syms[at++] = (uint16_t)(zsym + 31 - __clz(L));
        });
    __syncthreads();
    /* stored by consecutive lanes (was: each thread its own symbols, a
     * warp's stores 32 B apart) */
    uint16_t *out = w.zcodes + ts.sp.first + *tile_slot(w, w.tile_zsym);
    for (uint32_t k = threadIdx.x; k < total; k += kTileThreads)
        out[k] = syms[k];
}

/* The tile's sub-block sums of each thread's bits into out (the
 * chunk's sub-blocks, of `items` symbols in all). */
__device__ void store_sub_bits(uint32_t bits, uint32_t *bit_sums,
                               uint32_t items, uint32_t *out) {
    bits = __reduce_add_sync(FZ_FULL_MASK, bits);
    if ((threadIdx.x & 31) == 0)
        bit_sums[threadIdx.x >> 5] = bits;
    __syncthreads();
    const uint32_t b = blockIdx.y * kSubsPerTile + threadIdx.x;
    if (threadIdx.x < kSubsPerTile && b < lz_sub_count(items)) {
        uint32_t total = 0;
        for (uint32_t k = 0; k < kWarpsPerSub; k++)
            total += bit_sums[threadIdx.x * kWarpsPerSub + k];
        out[b] = total;
    }
}

/* Sub-block bits of each coded chunk's tile of symbols (zsub_bits). */
template <bool kShared>
__global__ void __launch_bounds__(kTileThreads)
    zrun_bits_kernel(const fz_gpu_args a, const Work w) {
    extern __shared__ uint32_t book_sm[];
    __shared__ uint32_t bit_sums[kTileWarps];
    const ChunkPlan &p = w.plan[blockIdx.x];
    TileSpan ts;
    if (bound_is_zero(a) || p.zstate != kZrCoded || !tile_of(a, p.zm, &ts))
        return;
    const uint32_t first = ts.lo + threadIdx.x * kPerThread;
    ThreadCodes tc;
    const uint32_t cnt = load_codes(w.zcodes + ts.sp.first, first, ts.hi, &tc);
    const TileBook<kShared> bk =
        zrun_tile_book<kShared>(w, blockIdx.x, book_sm);
    __syncthreads(); /* the shared book */
    uint32_t bits = 0;
#pragma unroll
    for (uint32_t j = 0; j < kPerThread; j++)
        if (j < cnt)
            bits += bk.len(tc.at(j));
    store_sub_bits(bits, bit_sums, p.zm,
                   w.zsub_bits + blockIdx.x * w.subs_per_chunk);
}

/* Per chunk: RLE tile offsets (zero runs: sub-block offsets), the
 * workflow (the CPU's choice: the smaller of Huffman and RLE, Huffman on
 * a tie, then zero runs only when strictly smaller), size and table
 * entry. */
template <int ES>
__global__ void __launch_bounds__(kThreads)
    finalize_kernel(const fz_gpu_args a, const Work w) {
    __shared__ Scan::TempStorage tmp;
    const fz_header &h = a.expect;
    const uint64_t c = blockIdx.x;
    const ChunkSpan sp = chunk_span(h, c, ES);
    const ChunkAcc acc = w.acc[c];
    if (bound_is_zero(a)) { /* REL of constant data: verbatim */
        if (threadIdx.x == 0) {
            ChunkPlan p = {};
            p.flow = kVerbatim;
            p.size = (uint32_t)sp.raw;
            w.plan[c] = p; /* the entry: write_kernel, with its checksum */
            w.sizes[c] = sp.raw;
            atomicAdd(&a.scratch->payload_total, (unsigned long long)sp.raw);
        }
        return;
    }
    ChunkPlan p = w.plan[c];
    uint32_t *rle_tiles = w.tile_rle + c * w.tiles_per_chunk;
    const uint64_t huff = huffman_bytes(p, sp.n);
    /* without run sizes (RLE cannot win) the lower bound decides alike */
    const uint64_t rle =
        !rle_may_win(p, sp.n)
            ? 4 + 3ull * p.runs
            : 4 + (uint64_t)scan_tiles(rle_tiles, rle_tiles,
                                       (uint32_t)tile_count(p.runs), tmp,
                                       [](uint32_t x) { return x; });
    uint64_t zr = UINT64_MAX;
    if (p.zstate == kZrCoded) {
        const uint64_t at = c * w.subs_per_chunk;
        p.zdata = scan_tiles(w.zsub_bits + at, w.zsub_off + at,
                             (uint32_t)lz_sub_count(p.zm), tmp,
                             [](uint32_t bits) { return (bits + 7) / 8; });
        zr = zrun_head_bytes(p) + p.zdata;
    }
    if (threadIdx.x != 0)
        return;
    const uint32_t nout = w.hist[c * w.nsym];
    const uint64_t lists = LZ_CHUNK_HEAD + (uint64_t)nout * LZ_OUTLIER_BYTES +
                           (uint64_t)acc.nexc * (4 + ES);
    const bool use_rle = rle < huff;
    const uint64_t best = use_rle ? rle : huff;
    const bool use_zr = zr < best;
    const uint64_t total = lists + (use_zr ? zr : best);
    p.flow = total >= sp.raw ? kVerbatim
             : use_zr        ? kZeroRuns
             : use_rle       ? kRle
                             : kHuffman;
    p.size = (uint32_t)(p.flow == kVerbatim ? sp.raw : total);
    p.nout = nout;
    p.nexc = acc.nexc;
    w.plan[c] = p;
    w.sizes[c] = p.size;
    if (p.flow != kVerbatim) /* verbatim: write_kernel writes the entry */
        fz_gpu_put_entry(a, c, p.size, acc.hash_recon, sp.raw);
    atomicAdd(&a.scratch->payload_total, (unsigned long long)p.size);
}

/* 32-bit words of a tile's sub-blocks, byte-aligned one after the other
 * as in the stream, plus one word for the skew (encode_tile). */
constexpr uint32_t kTileWords = kSubsPerTile * kSubWords + 1;

struct __align__(16) WriteShared {
    TileScan::TempStorage scan;
    uint32_t warp_sums[kTileWarps];
    uint32_t start[kSubsPerTile];
    uint32_t words[kTileWords];
};

/* Appends a thread's cnt codes, MSB first, at bit `bit` of words (zeroed
 * where other threads may write): a 64-bit accumulator (the pending < 32
 * bits plus one code of at most 20) emits whole 32-bit words. Only the
 * first word (when it starts mid-word: bits of the thread before) and the
 * last, partial one (bits of the thread after, or zero padding) may be
 * shared, so they take an atomicOr; the words between are the thread's
 * alone and are stored. */
template <bool kShared>
__device__ void pack_codes(const ThreadCodes &tc, uint32_t cnt, uint32_t bit,
                           const TileBook<kShared> &bk, uint32_t *words) {
    uint32_t *wp = words + (bit >> 5);
    uint32_t pending = bit & 31; /* zeros standing for the earlier bits */
    bool shared_head = pending != 0;
    uint64_t acc = 0;
#pragma unroll
    for (uint32_t j = 0; j < kPerThread; j++) {
        if (j >= cnt)
            break;
        const uint32_t e = bk.entry(tc.at(j)), l = e & 31;
        acc = (acc << l) | (e >> 5);
        pending += l;
        if (pending >= 32) {
            pending -= 32;
            const uint32_t v = (uint32_t)(acc >> pending);
            if (shared_head)
                atomicOr(wp, v);
            else
                *wp = v;
            shared_head = false;
            wp++;
        }
    }
    if (pending)
        atomicOr(wp, (uint32_t)(acc << (32 - pending)));
}

/* The tile's sub-blocks (the chunk's sub_bits, sub_off from sub-block
 * ts.lo / LZ_SUB_SYMBOLS on), exact bytes as lz_huff_write_sub: MSB-first
 * codes, each sub-block from a byte, zero padding. The tile's bytes form
 * one string in shared words (big-endian: word k holds bytes 4k..4k+3 MSB
 * first) shifted by the output's misalignment `skew`, so shared word k is
 * the aligned output word k: each thread's codes (kPerThread, from
 * registers) packed at its sub-block's byte times 8 plus its bit offset in
 * the sub-block (a tile scan less the sub-block's start), then whole words
 * stored as u32 (a warp: 128 B), the partial first and last bytewise. */
template <bool kShared>
__device__ void encode_tile(const uint16_t *codes, const TileSpan &ts,
                            const uint32_t *sub_bits, const uint32_t *sub_off,
                            const TileBook<kShared> &bk, uint8_t *data,
                            WriteShared &sh) {
    const uint32_t s0 = ts.lo / LZ_SUB_SYMBOLS;
    const uint32_t last =
        s0 + (ts.hi - ts.lo + LZ_SUB_SYMBOLS - 1) / LZ_SUB_SYMBOLS - 1;
    const uint32_t base = sub_off[s0];
    uint8_t *out = data + base;
    const uint32_t skew = (uint32_t)((uintptr_t)out & 3);
    const uint32_t end = skew + sub_off[last] + (sub_bits[last] + 7) / 8 - base;
    const uint32_t nwords = (end + 3) / 4; /* <= kTileWords */
    const uint32_t first = ts.lo + threadIdx.x * kPerThread;
    ThreadCodes tc;
    const uint32_t cnt = load_codes(codes, first, ts.hi, &tc);
    for (uint32_t k = threadIdx.x; k < nwords; k += kTileThreads)
        sh.words[k] = 0;
    uint32_t mine = 0;
#pragma unroll
    for (uint32_t j = 0; j < kPerThread; j++)
        if (j < cnt)
            mine += bk.len(tc.at(j));
    uint32_t pos;
    TileScan(sh.scan).ExclusiveSum(mine, pos);
    const uint32_t sub = threadIdx.x / kThreadsPerSub;
    if (threadIdx.x % kThreadsPerSub == 0)
        sh.start[sub] = pos;
    __syncthreads(); /* also orders the zeroing */
    if (cnt)         /* then s0 + sub <= last */
        pack_codes(tc, cnt,
                   8 * (skew + sub_off[s0 + sub] - base) + pos - sh.start[sub],
                   bk, sh.words);
    __syncthreads();
    uint32_t *out32 = reinterpret_cast<uint32_t *>(out - skew);
    for (uint32_t k = threadIdx.x; k < nwords; k += kTileThreads) {
        const uint32_t v = __byte_perm(sh.words[k], 0, 0x0123); /* LE bytes */
        if (4 * k >= skew && 4 * k + 4 <= end) {
            out32[k] = v;
            continue;
        }
        uint8_t *o = reinterpret_cast<uint8_t *>(out32 + k);
        for (uint32_t b = 0; b < 4; b++)
            if (4 * k + b >= skew && 4 * k + b < end)
                o[b] = (uint8_t)(v >> (8 * b));
    }
}

/* A verbatim chunk's checksum: each tile block adds its values' terms
 * [v0, v1) and counts itself; the chunk's last tile block (the fences
 * order the sums before the count) writes its table entry. */
template <int ES>
__device__ void verbatim_checksum(const fz_gpu_args &a, const Work &w,
                                  uint64_t c, const uint8_t *in, uint64_t v0,
                                  uint64_t v1, const ChunkSpan &sp,
                                  WriteShared &sh) {
    typedef Val<ES> V;
    const typename V::U *vals = reinterpret_cast<const typename V::U *>(in);
    uint32_t sum = 0;
    for (uint64_t k = v0 + threadIdx.x; k < v1; k += kTileThreads)
        sum += V::hash(vals[k], k);
    sum = tile_sum(sum, sh.warp_sums);
    if (threadIdx.x != 0)
        return;
    ChunkAcc *acc = &w.acc[c];
    atomicAdd(&acc->hash_raw, sum);
    __threadfence();
    if (atomicAdd(&acc->raw_tiles, 1u) + 1 != tile_count(sp.n))
        return;
    __threadfence();
    const uint32_t total = atomicAdd(&acc->hash_raw, 0u);
    fz_gpu_put_entry(a, c, (uint32_t)sp.raw, total, sp.raw);
}

/* Grid (chunks, tiles): the tile's share of the chunk's bytes. */
template <int ES, bool kShared>
__global__ void __launch_bounds__(kTileThreads, kShared ? 6 : 4)
    write_kernel(const fz_gpu_args a, const Work w) {
    extern __shared__ uint32_t book_sm[];
    __shared__ WriteShared sh;
    const fz_header &h = a.expect;
    const uint64_t c = blockIdx.x;
    const uint32_t t = blockIdx.y;
    const ChunkSpan sp = chunk_span(h, c, ES);
    const uint32_t n = sp.n;
    const ChunkPlan p = w.plan[c];
    const uint64_t at = a.payload_off + w.offs[c];
    if (at + p.size > a.dst_capacity) {
        if (threadIdx.x == 0 && t == 0)
            fz_gpu_fail(a.scratch, FZS_DST_TOO_SMALL);
        return;
    }
    uint8_t *out = a.dst + at;
    const uint8_t *in = a.src + sp.first * ES;
    if (p.flow == kVerbatim) {
        const uint64_t lo = (uint64_t)t * kTile * ES;
        const uint64_t hi = sp.raw - lo < kTile * ES ? sp.raw : lo + kTile * ES;
        if (lo >= sp.raw)
            return;
        if (((uintptr_t)out & 3) == 0) /* lo, hi: multiples of 4 */
            for (uint64_t k = lo / 4 + threadIdx.x; k < hi / 4;
                 k += kTileThreads)
                reinterpret_cast<uint32_t *>(out)[k] =
                    reinterpret_cast<const uint32_t *>(in)[k];
        else
            for (uint64_t k = lo + threadIdx.x; k < hi; k += kTileThreads)
                out[k] = in[k];
        verbatim_checksum<ES>(a, w, c, in, lo / ES, hi / ES, sp, sh);
        return;
    }
    const int32_t *q = w.q + sp.first;
    const uint16_t *codes = w.codes + sp.first;
    const uint32_t *aux = w.aux + sp.first;
    const typename Val<ES>::U *vals =
        reinterpret_cast<const typename Val<ES>::U *>(in);
    const lz_quant z = lz_quant_of(double_of(a.scratch->bound_eff_bits));
    if (threadIdx.x == 0 && t == 0) {
        out[0] = (uint8_t)p.flow;
        out[1] = out[2] = out[3] = 0;
        put32(out + 4, p.nout);
        put32(out + 8, p.nexc);
    }
    uint8_t *o = out + LZ_CHUNK_HEAD;
    uint8_t *e = o + (uint64_t)p.nout * LZ_OUTLIER_BYTES;
    uint8_t *s = e + (uint64_t)p.nexc * (4 + ES);
    TileSpan ts;
    const uint32_t T = (uint32_t)tile_count(n);
    /* tiles without outliers (exceptions) skip their compaction */
    if (tile_of(a, n, &ts) && tile_items(w, w.tile_out, T, p.nout))
        tile_compact(
            ts, *tile_slot(w, w.tile_out), sh.warp_sums,
            [&](uint32_t i) { return codes[i] == 0; },
            [&](uint32_t i, uint32_t r) {
                put32(o + (uint64_t)r * LZ_OUTLIER_BYTES, i);
                put32(o + (uint64_t)r * LZ_OUTLIER_BYTES + 4, (uint32_t)q[i]);
            });
    /* exceptions: the quantization's verdict again, in tiles with some */
    if (tile_of(a, n, &ts) && tile_items(w, w.tile_exc, T, p.nexc))
        tile_compact(
            ts, *tile_slot(w, w.tile_exc), sh.warp_sums,
            [&](uint32_t i) {
                int32_t qi;
                typename Val<ES>::U r;
                return !Val<ES>::quant(vals[i], z, &qi, &r);
            },
            [&](uint32_t i, uint32_t r) {
                uint8_t *d = e + (uint64_t)r * (4 + ES);
                put32(d, i);
                for (int k = 0; k < ES; k++)
                    d[4 + k] = in[(uint64_t)i * ES + k];
            });
    if (p.flow == kRle) {
        if (threadIdx.x == 0 && t == 0)
            put32(s, p.runs);
        if (!tile_of(a, p.runs, &ts))
            return;
        const uint32_t first = ts.lo + threadIdx.x * kPerThread;
        uint32_t mine = 0;
        for (uint32_t j = 0; j < kPerThread; j++)
            if (first + j < ts.hi)
                mine += run_bytes(aux, first + j, p.runs, n);
        uint32_t rank;
        TileScan(sh.scan).ExclusiveSum(mine, rank);
        /* rank: bytes of the runs before `first` as (code, length)
         * records; their lengths alone start 2 first bytes earlier */
        const uint64_t leb_at = *tile_slot(w, w.tile_rle) + rank - 2ull * first;
        uint8_t *d = s + 4 + 2ull * p.runs + leb_at;
        for (uint32_t j = 0; j < kPerThread && first + j < ts.hi; j++) {
            const uint32_t r = first + j;
            const uint32_t sym = codes[aux[r]];
            uint32_t v = (r + 1 < p.runs ? aux[r + 1] : n) - aux[r];
            s[4 + 2ull * r] = (uint8_t)sym;
            s[5 + 2ull * r] = (uint8_t)(sym >> 8);
            for (; v >= 128; v >>= 7)
                *d++ = (uint8_t)(0x80 | (v & 0x7F));
            *d++ = (uint8_t)v;
        }
        return;
    }
    /* Huffman: range, 5-bit lengths, sub-block sizes, sub-blocks; zero
     * runs: u32 symbol count, then the symbols coded alike with the run
     * symbols' count zk after the range and their lengths after the
     * codes' */
    const bool zr = p.flow == kZeroRuns;
    const Book book = zr ? book_at(w, w.zbook, c) : book_of(w, c);
    const uint32_t items = zr ? p.zm : n;
    const uint32_t lo = zr ? p.zlo : p.lo, hi = zr ? p.zhi : p.hi;
    const uint32_t zk = zr ? p.zk : 0u, count = hi - lo + 1;
    const uint32_t head = lz_table_bytes(zr, 0);
    const uint32_t tbytes = lz_table_bytes(zr, count + zk) - head;
    if (zr) {
        if (threadIdx.x == 0 && t == 0)
            put32(s, items);
        s += 4;
    }
    if (t == 0) {
        if (threadIdx.x == 0) {
            s[0] = (uint8_t)lo;
            s[1] = (uint8_t)(lo >> 8);
            s[2] = (uint8_t)hi;
            s[3] = (uint8_t)(hi >> 8);
            if (zr)
                s[4] = (uint8_t)zk;
        }
        for (uint32_t j = threadIdx.x; j < tbytes; j += kTileThreads) {
            uint32_t byte = 0;
            for (uint32_t k = 0; k < 8; k++) {
                const uint32_t pos = 8 * j + k, e = pos / 5;
                const uint32_t sym = e < count ? lo + e : w.nsym + e - count;
                const uint32_t bit =
                    e < count + zk ? (book.len[sym] >> (4 - pos % 5)) & 1u : 0u;
                byte |= bit << (7 - k);
            }
            s[head + j] = (uint8_t)byte;
        }
    }
    const uint32_t nsub = (uint32_t)lz_sub_count(items);
    const uint32_t b = t * kSubsPerTile + threadIdx.x;
    if (t * kSubsPerTile >= nsub)
        return;
    uint8_t *sizes = s + head + tbytes;
    uint8_t *data = sizes + (uint64_t)LZ_SUB_SIZE * nsub;
    const uint64_t sub_at = c * w.subs_per_chunk;
    const uint32_t *sub_bits = (zr ? w.zsub_bits : w.sub_bits) + sub_at;
    const uint32_t *sub_off = (zr ? w.zsub_off : w.sub_off) + sub_at;
    if (threadIdx.x < kSubsPerTile && b < nsub) {
        sizes[(uint64_t)LZ_SUB_SIZE * b] = (uint8_t)sub_bits[b];
        sizes[(uint64_t)LZ_SUB_SIZE * b + 1] = (uint8_t)(sub_bits[b] >> 8);
    }
    const TileBook<kShared> bk = zr ? zrun_tile_book<kShared>(w, c, book_sm)
                                    : tile_book<kShared>(w, c, book_sm);
    __syncthreads(); /* the compactions are done, the shared book is in */
    tile_of(a, items, &ts); /* a tile of symbols: t < nsub / kSubsPerTile */
    encode_tile(zr ? w.zcodes + sp.first : codes, ts, sub_bits, sub_off, bk,
                data, sh);
}

/* The grid of the box kernels: (chunk, boxes of the largest chunk,
 * strided over at most 65535 blocks). */
dim3 box_grid(const fz_header &h) {
    const uint32_t boxes =
        box_geom(h, (uint32_t)(h.chunk_bytes / fz_dtype_size(h.dtype))).boxes;
    return dim3((unsigned)h.chunk_count,
                boxes < 65535u ? (boxes ? boxes : 1u) : 65535u);
}

/* The zero-run coding of the chunks where it may win (headers that
 * allow it): run symbols tallied, their book, the exact lower bound, then
 * the symbols and their sub-block bits where that bound may win. */
cudaError_t zero_run_plan(const fz_gpu_args *a, const Work &w, bool book_shared,
                          size_t book_sm, cudaStream_t stream) {
    const fz_header &h = a->expect;
    const unsigned C = (unsigned)h.chunk_count;
    const dim3 per_tile(C, (unsigned)w.tiles_per_chunk);
    zrun_tally_kernel<<<per_tile, kTileThreads, 0, stream>>>(*a, w);
    const uint64_t *sorted = nullptr;
    cudaError_t err = cudaGetLastError();
    if (err == cudaSuccess)
        err = sort_book_keys(w, h.chunk_count, true, stream, &sorted);
    if (err != cudaSuccess)
        return err;
    const uint64_t pm_shared =
        pm_bytes(w.book_syms) <= kSharedPm ? pm_bytes(w.book_syms) : 0;
    book_kernel<<<C, kThreads, pm_shared, stream>>>(*a, w, sorted, true);
    zrun_plan_kernel<<<C, kThreads, 0, stream>>>(*a, w);
    zrun_symbols_kernel<<<per_tile, kTileThreads, 0, stream>>>(*a, w);
    if (book_shared)
        zrun_bits_kernel<true>
            <<<per_tile, kTileThreads, book_sm, stream>>>(*a, w);
    else
        zrun_bits_kernel<false><<<per_tile, kTileThreads, 0, stream>>>(*a, w);
    return cudaGetLastError();
}

Work work_of(const fz_gpu_args *a) {
    Work w;
    work_layout(&a->expect,
                static_cast<uint8_t *>(a->temp) +
                    fz_gpu_base_temp_bytes(&a->expect),
                &w);
    return w;
}

} // namespace

uint64_t fz_lorenzo_gpu_work_bytes(const fz_header *h) {
    Work w;
    return work_layout(h, nullptr, &w);
}

cudaError_t fz_lorenzo_gpu_compress(const fz_gpu_args *a, int sm_count,
                                    cudaStream_t stream) {
    (void)sm_count;
    const Work w = work_of(a);
    const fz_header &h = a->expect;
    const unsigned C = (unsigned)h.chunk_count;
    const dim3 per_tile(C, (unsigned)w.tiles_per_chunk);
    const bool f32 = h.dtype == 1;
    cudaError_t err =
        cudaMemsetAsync(w.hist, 0, 4ull * h.chunk_count * w.nsym, stream);
    if (err == cudaSuccess)
        err =
            cudaMemsetAsync(w.acc, 0, sizeof(ChunkAcc) * h.chunk_count, stream);
    const uint64_t tiles = 4ull * h.chunk_count * w.tiles_per_chunk;
    if (err == cudaSuccess)
        err = cudaMemsetAsync(w.tile_out, 0, tiles, stream);
    if (err == cudaSuccess)
        err = cudaMemsetAsync(w.tile_exc, 0, tiles, stream);
    if (err == cudaSuccess && w.zcount)
        err = cudaMemsetAsync(w.zcount, 0,
                              4ull * h.chunk_count * LZ_ZRUN_SYMBOLS, stream);
    if (err == cudaSuccess && h.mode == 2)
        err = fz_gpu_value_range(a, stream);
    if (err != cudaSuccess)
        return err;
    resolve_bound<<<1, 1, 0, stream>>>(*a);
    const dim3 per_box = box_grid(h);
    if (f32)
        launch_quant_codes<4>(*a, w, per_box, stream);
    else
        launch_quant_codes<8>(*a, w, per_box, stream);
    err = cudaGetLastError();
    const uint64_t *sorted = nullptr;
    if (err == cudaSuccess)
        err = sort_book_keys(w, h.chunk_count, false, stream, &sorted);
    /* dynamic shared memory of the package-merge (the zero-run book's
     * alphabet is the larger) */
    auto pm_shared = [](uint32_t S) {
        return pm_bytes(S) <= kSharedPm ? pm_bytes(S) : 0;
    };
    if (err == cudaSuccess)
        err = cudaFuncSetAttribute(book_kernel,
                                   cudaFuncAttributeMaxDynamicSharedMemorySize,
                                   (int)pm_shared(w.book_syms));
    if (err != cudaSuccess)
        return err;
    book_kernel<<<C, kThreads, pm_shared(w.nsym), stream>>>(*a, w, sorted,
                                                            false);
    /* the zero-run book's alphabet is the larger: one choice for both */
    const bool book_shared = w.book_syms <= kSharedBook;
    const size_t book_sm = book_shared ? 4ull * w.book_syms : 0;
    if (book_shared)
        bits_kernel<true><<<per_tile, kTileThreads, book_sm, stream>>>(*a, w);
    else
        bits_kernel<false><<<per_tile, kTileThreads, 0, stream>>>(*a, w);
    tile_scan_kernel<<<C, kThreads, 0, stream>>>(*a, w);
    run_starts_kernel<<<per_tile, kTileThreads, 0, stream>>>(*a, w);
    rle_tile_kernel<<<per_tile, kTileThreads, 0, stream>>>(*a, w);
    if (w.zcodes) {
        err = cudaGetLastError();
        if (err == cudaSuccess)
            err = zero_run_plan(a, w, book_shared, book_sm, stream);
        if (err != cudaSuccess)
            return err;
    }
    if (f32)
        finalize_kernel<4><<<C, kThreads, 0, stream>>>(*a, w);
    else
        finalize_kernel<8><<<C, kThreads, 0, stream>>>(*a, w);
    err = cudaGetLastError();
    if (err != cudaSuccess)
        return err;
    size_t cub_bytes = w.cub_bytes;
    err = cub::DeviceScan::ExclusiveSum(w.cub, cub_bytes, w.sizes, w.offs,
                                        (int64_t)h.chunk_count, stream);
    if (err != cudaSuccess)
        return err;
    if (f32 && book_shared)
        write_kernel<4, true>
            <<<per_tile, kTileThreads, book_sm, stream>>>(*a, w);
    else if (f32)
        write_kernel<4, false><<<per_tile, kTileThreads, 0, stream>>>(*a, w);
    else if (book_shared)
        write_kernel<8, true>
            <<<per_tile, kTileThreads, book_sm, stream>>>(*a, w);
    else
        write_kernel<8, false><<<per_tile, kTileThreads, 0, stream>>>(*a, w);
    return cudaGetLastError();
}

cudaError_t fz_lorenzo_gpu_decompress(const fz_gpu_args *a, int sm_count,
                                      cudaStream_t stream) {
    (void)sm_count;
    const Work w = work_of(a);
    const fz_header &h = a->expect;
    const unsigned C = (unsigned)h.chunk_count;
    const dim3 per_tile(C, (unsigned)w.tiles_per_chunk);
    const dim3 per_sub(
        C, (unsigned)((w.subs_per_chunk + kSubThreads - 1) / kSubThreads));
    const bool f32 = h.dtype == 1;
    const bool zero_runs = lz_zero_runs(&h);
    if (f32)
        decode_head_kernel<4><<<C, kThreads, 0, stream>>>(*a, w);
    else
        decode_head_kernel<8><<<C, kThreads, 0, stream>>>(*a, w);
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess)
        return err;
    decode_huffman_kernel<<<per_sub, kSubThreads, 0, stream>>>(*a, w);
    rle_count_kernel<<<per_tile, kThreads, 0, stream>>>(*a, w);
    rle_scan_kernel<<<C, kThreads, 0, stream>>>(*a, w);
    rle_starts_kernel<<<per_tile, kThreads, 0, stream>>>(*a, w);
    if (zero_runs)
        zrun_starts_kernel<<<per_tile, kThreads, 0, stream>>>(*a, w);
    decode_runs_kernel<<<per_tile, kTileThreads, 0, stream>>>(*a, w);
    decode_outlier_kernel<<<per_tile, kTileThreads, 0, stream>>>(*a, w);
    err = cudaGetLastError();
    if (err != cudaSuccess)
        return err;
    launch_decode_corners(*a, w, stream);
    const dim3 per_box = box_grid(h);
    if (f32) {
        launch_decode_box<4>(*a, w, per_box, stream);
        decode_exception_kernel<4>
            <<<per_tile, kTileThreads, 0, stream>>>(*a, w);
    } else {
        launch_decode_box<8>(*a, w, per_box, stream);
        decode_exception_kernel<8>
            <<<per_tile, kTileThreads, 0, stream>>>(*a, w);
    }
    decode_finish_kernel<<<(C + 255) / 256, 256, 0, stream>>>(*a, w);
    return cudaGetLastError();
}
