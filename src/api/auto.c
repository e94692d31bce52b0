/* Codec `auto`: compress a sample of the array with every codec that suits
 * the mode and keep the codec whose sample stream is smallest (with a
 * margin in favour of the faster codecs, FZ_AUTO_BALANCED). The sample is
 * the whole array when it is small, else boxes spread along the array's
 * diagonal; the choice is a function of the data alone (docs/DESIGN.md,
 * "Codec auto"). */
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "fz_internal.h"

#define AUTO_BOXES 32u
#define AUTO_BOX_VALUES ((uint64_t)1 << 15)
#define AUTO_WHOLE_VALUES (AUTO_BOXES * AUTO_BOX_VALUES)
/* FZ_AUTO_BALANCED: a later (slower) candidate must be this much smaller */
#define AUTO_MARGIN_PERMILLE 20u

/* Candidates in order of GPU speed, fastest first (README, Performance). */
typedef struct auto_candidate {
    fz_codec codec;
    int32_t option1; /* codec_options[1] */
} auto_candidate;

static const auto_candidate lossless_candidates[] = {
    {FZ_CODEC_SLEEK, 0}, {FZ_CODEC_GFC, 0}, {FZ_CODEC_FALCON, 0}};
static const auto_candidate lossy_candidates[] = {
    {FZ_CODEC_SLEEK, 0}, {FZ_CODEC_LORENZO, 0}, {FZ_CODEC_LORENZO, 1}};

fz_status fz_auto_stand_in(const fz_params *p, fz_params *q) {
    if (!p || p->codec != FZ_CODEC_AUTO)
        return FZ_ERR_INVALID_ARGUMENT;
    if ((p->codec_options[0] != FZ_AUTO_BALANCED &&
         p->codec_options[0] != FZ_AUTO_SMALLEST) ||
        p->codec_options[1] != 0 || p->codec_options[2] != 0 ||
        p->codec_options[3] != 0)
        return FZ_ERR_INVALID_ARGUMENT;
    *q = *p;
    q->codec = FZ_CODEC_SLEEK; /* takes every dtype, shape and mode */
    memset(q->codec_options, 0, sizeof q->codec_options);
    fz_header h;
    return fz_header_from_params(q, &h);
}

uint32_t fz_auto_candidates(const fz_params *p,
                            fz_params out[FZ_AUTO_MAX_CANDIDATES]) {
    const int lossless = p->mode == FZ_MODE_LOSSLESS;
    const auto_candidate *list =
        lossless ? lossless_candidates : lossy_candidates;
    const uint32_t count =
        lossless ? (uint32_t)(sizeof lossless_candidates / sizeof *list)
                 : (uint32_t)(sizeof lossy_candidates / sizeof *list);
    uint32_t n = 0;
    for (uint32_t i = 0; i < count; i++) {
        fz_params q = *p;
        fz_header h;
        q.codec = list[i].codec;
        memset(q.codec_options, 0, sizeof q.codec_options);
        q.codec_options[1] = list[i].option1;
        if (fz_header_from_params(&q, &h) == FZ_OK)
            out[n++] = q;
    }
    return n;
}

fz_status fz_auto_bound(const fz_params *p, size_t *bound) {
    fz_params q, cand[FZ_AUTO_MAX_CANDIDATES];
    fz_status s = fz_auto_stand_in(p, &q);
    if (s != FZ_OK)
        return s;
    const uint32_t n = fz_auto_candidates(p, cand);
    size_t most = 0;
    for (uint32_t i = 0; i < n; i++) {
        size_t b = 0;
        s = fz_compress_bound(&cand[i], &b);
        if (s != FZ_OK)
            return s;
        most = b > most ? b : most;
    }
    *bound = most;
    return n ? FZ_OK : FZ_ERR_UNSUPPORTED;
}

/* ------------------------------------------------------------- sample */

/* A box of at most AUTO_BOX_VALUES values, grown by doubling each
 * dimension in turn from the fastest, clamped to the array. */
static void box_dims(const fz_params *p, uint64_t b[FZ_MAX_DIMS]) {
    uint64_t vol = 1;
    for (uint32_t d = 0; d < FZ_MAX_DIMS; d++)
        b[d] = 1;
    for (int grew = 1; grew;) {
        grew = 0;
        for (uint32_t d = 0; d < p->ndims; d++) {
            if (b[d] >= p->dims[d] || vol * 2 > AUTO_BOX_VALUES)
                continue;
            const uint64_t nb = b[d] * 2 < p->dims[d] ? b[d] * 2 : p->dims[d];
            vol = vol / b[d] * nb;
            b[d] = nb;
            grew = 1;
        }
    }
}

/* Box k's first index along a dimension of `dim` values: the boxes'
 * centres at (2k + 1) / (2 AUTO_BOXES) of the free span (no overflow). */
static uint64_t box_origin(uint64_t dim, uint64_t b, uint32_t k) {
    const uint64_t span = dim - b, parts = 2u * AUTO_BOXES, odd = 2u * k + 1;
    return span / parts * odd + span % parts * odd / parts;
}

/* The boxes are stacked along the slowest dimension they extend in, so
 * every predictor sees each box whole and the seams are few. */
static uint32_t stack_axis(const uint64_t b[FZ_MAX_DIMS], uint32_t ndims) {
    uint32_t axis = 0;
    for (uint32_t d = 0; d < ndims; d++)
        if (b[d] > 1)
            axis = d;
    return axis;
}

static uint64_t linear(const uint64_t dims[FZ_MAX_DIMS],
                       const uint64_t c[FZ_MAX_DIMS]) {
    return c[0] + dims[0] * (c[1] + dims[1] * (c[2] + dims[2] * c[3]));
}

/* Gather the boxes into sample (row by row, rows of b[0] values) and set
 * sp's shape to the stacked sample's. */
static fz_status gather(const fz_params *p, fz_auto_read_fn read, void *ctx,
                        uint8_t *sample, fz_params *sp) {
    const size_t esize = p->dtype == FZ_F64 ? 8 : 4;
    uint64_t b[FZ_MAX_DIMS], sdims[FZ_MAX_DIMS];
    box_dims(p, b);
    const uint32_t axis = stack_axis(b, p->ndims);
    memcpy(sdims, b, sizeof sdims);
    sdims[axis] *= AUTO_BOXES;
    for (uint32_t k = 0; k < AUTO_BOXES; k++) {
        uint64_t o[FZ_MAX_DIMS];
        for (uint32_t d = 0; d < FZ_MAX_DIMS; d++)
            o[d] = box_origin(p->dims[d], b[d], k);
        for (uint64_t c3 = 0; c3 < b[3]; c3++)
            for (uint64_t c2 = 0; c2 < b[2]; c2++)
                for (uint64_t c1 = 0; c1 < b[1]; c1++) {
                    uint64_t at[FZ_MAX_DIMS] = {o[0], o[1] + c1, o[2] + c2,
                                                o[3] + c3};
                    uint64_t to[FZ_MAX_DIMS] = {0, c1, c2, c3};
                    to[axis] += (uint64_t)k * b[axis];
                    fz_status s = read(ctx, linear(p->dims, at), b[0],
                                       sample + linear(sdims, to) * esize);
                    if (s != FZ_OK)
                        return s;
                }
    }
    *sp = *p;
    fz_params_set_shape(sp, p->ndims, sdims);
    return FZ_OK;
}

/* REL on a sample: ABS at the bound times the sample's finite range (the
 * array's is not known without a pass over it; any bound near the real one
 * ranks the codecs the same way). */
static void rel_to_abs(fz_params *sp, const void *sample, uint64_t n) {
    double lo, hi;
    fz_value_range((uint32_t)sp->dtype, sample, n, fz_thread_count(sp->threads),
                   &lo, &hi);
    double abs = 0.0;
    if (sp->bound != 0.0 && lo < hi) {
        abs = sp->bound * (hi - lo); /* hi - lo may be inf */
        if (!(abs <= DBL_MAX))
            abs = DBL_MAX;
    }
    sp->mode = FZ_MODE_ABS;
    sp->bound = abs;
}

/* ------------------------------------------------------------- trials */

typedef struct trials {
    uint8_t *buf[2]; /* the best stream so far and the current trial */
    size_t cap, best_size;
    int best; /* index of the best candidate, -1 before the first */
} trials;

static int better(const fz_params *p, size_t size, size_t best) {
    if (p->codec_options[0] == FZ_AUTO_SMALLEST)
        return size < best;
    /* size < best (1 - margin); sizes below 2^53 compare exactly */
    return (double)size * 1000.0 <
           (double)best * (double)(1000u - AUTO_MARGIN_PERMILLE);
}

static fz_status run_trials(const fz_params *p, const fz_params *cand,
                            uint32_t n, const fz_params *sp, const void *sample,
                            trials *t) {
    fz_status s = FZ_OK;
    t->cap = 0;
    for (uint32_t i = 0; i < n && s == FZ_OK; i++) {
        fz_params q = *sp;
        q.codec = cand[i].codec;
        memcpy(q.codec_options, cand[i].codec_options, sizeof q.codec_options);
        size_t b = 0;
        s = fz_compress_bound(&q, &b);
        t->cap = b > t->cap ? b : t->cap;
    }
    for (int k = 0; k < 2 && s == FZ_OK; k++)
        if (!(t->buf[k] = (uint8_t *)malloc(t->cap ? t->cap : 1)))
            s = FZ_ERR_OUT_OF_MEMORY;
    fz_params probe = *sp;
    probe.exec = FZ_EXEC_CPU; /* small: no GPU round trip; same bytes */
    uint64_t bytes = 0;
    if (s == FZ_OK)
        s = fz_params_count(&probe, NULL, &bytes);
    t->best = -1;
    for (uint32_t i = 0; i < n && s == FZ_OK; i++) {
        fz_params q = probe;
        q.codec = cand[i].codec;
        memcpy(q.codec_options, cand[i].codec_options, sizeof q.codec_options);
        size_t size = 0;
        s = fz_compress(&q, sample, (size_t)bytes, t->buf[1], t->cap, &size);
        if (s == FZ_OK && (t->best < 0 || better(p, size, t->best_size))) {
            uint8_t *swap = t->buf[0];
            t->buf[0] = t->buf[1];
            t->buf[1] = swap;
            t->best = (int)i;
            t->best_size = size;
        }
    }
    return s;
}

fz_status fz_auto_pick(const fz_params *p, const void *whole,
                       fz_auto_read_fn read, void *ctx, fz_params *chosen,
                       uint8_t **stream, size_t *stream_size) {
    fz_params q, cand[FZ_AUTO_MAX_CANDIDATES];
    fz_status s = fz_auto_stand_in(p, &q);
    if (s != FZ_OK)
        return s;
    const uint32_t n = fz_auto_candidates(p, cand);
    if (n == 0)
        return FZ_ERR_UNSUPPORTED;
    uint64_t values = 0, bytes = 0;
    fz_params_count(&q, &values, &bytes);
    const int is_whole = values <= AUTO_WHOLE_VALUES;
    fz_params sp = q;
    uint8_t *sample = NULL;
    const void *data = whole;
    if (!is_whole || !whole) {
        const size_t esize = p->dtype == FZ_F64 ? 8 : 4;
        const uint64_t take = is_whole ? values : AUTO_WHOLE_VALUES;
        sample = (uint8_t *)malloc(take ? (size_t)(take * esize) : 1);
        if (!sample)
            return FZ_ERR_OUT_OF_MEMORY;
        s = is_whole ? read(ctx, 0, values, sample)
                     : gather(p, read, ctx, sample, &sp);
        data = sample;
    }
    if (s == FZ_OK && !is_whole && sp.mode == FZ_MODE_REL) {
        uint64_t sv = 0;
        fz_params_count(&sp, &sv, NULL);
        rel_to_abs(&sp, sample, sv);
    }
    trials t = {{NULL, NULL}, 0, 0, -1};
    if (s == FZ_OK)
        s = run_trials(p, cand, n, &sp, data, &t);
    if (s == FZ_OK && t.best < 0)
        s = FZ_ERR_UNSUPPORTED;
    if (s == FZ_OK) {
        *chosen = *p;
        chosen->codec = cand[t.best].codec;
        memcpy(chosen->codec_options, cand[t.best].codec_options,
               sizeof chosen->codec_options);
        if (stream && is_whole) { /* the trial is the stream */
            *stream = t.buf[0];
            *stream_size = t.best_size;
            t.buf[0] = NULL;
        } else if (stream) {
            *stream = NULL;
        }
    }
    free(t.buf[0]);
    free(t.buf[1]);
    free(sample);
    return s;
}

/* ------------------------------------------------------- host memory */

typedef struct memory_source {
    const uint8_t *src;
    size_t esize;
} memory_source;

static fz_status read_memory(void *ctx, uint64_t first, uint64_t count,
                             void *dst) {
    const memory_source *m = (const memory_source *)ctx;
    if (count) /* an empty array's src may be NULL: no memcpy from NULL */
        memcpy(dst, m->src + first * m->esize, (size_t)(count * m->esize));
    return FZ_OK;
}

static fz_status check_source(const fz_params *p, const void *src,
                              size_t src_bytes) {
    fz_params q;
    uint64_t bytes = 0;
    fz_status s = fz_auto_stand_in(p, &q);
    if (s == FZ_OK)
        s = fz_params_count(&q, NULL, &bytes);
    if (s == FZ_OK && src_bytes != bytes)
        s = FZ_ERR_SIZE_MISMATCH;
    if (s == FZ_OK && !src && src_bytes != 0)
        s = FZ_ERR_INVALID_ARGUMENT;
    return s;
}

fz_status fz_auto_choose(const fz_params *p, const void *src, size_t src_bytes,
                         fz_params *chosen) {
    if (!p || !chosen || p->threads < 0)
        return FZ_ERR_INVALID_ARGUMENT;
    fz_status s = check_source(p, src, src_bytes);
    if (s != FZ_OK)
        return s;
    memory_source m = {(const uint8_t *)src, p->dtype == FZ_F64 ? 8u : 4u};
    return fz_auto_pick(p, src, read_memory, &m, chosen, NULL, NULL);
}

fz_status fz_auto_compress(const fz_params *p, const void *src,
                           size_t src_bytes, void *dst, size_t dst_capacity,
                           size_t *compressed_size) {
    fz_status s = check_source(p, src, src_bytes);
    if (s != FZ_OK)
        return s;
    memory_source m = {(const uint8_t *)src, p->dtype == FZ_F64 ? 8u : 4u};
    fz_params chosen;
    uint8_t *stream = NULL;
    size_t size = 0;
    /* on the GPU the chosen codec runs there even for a small array, so
     * that GPU errors (no device) are those of the codec itself */
    s = fz_auto_pick(p, src, read_memory, &m, &chosen,
                     p->exec == FZ_EXEC_CPU ? &stream : NULL, &size);
    if (s != FZ_OK)
        return s;
    if (!stream)
        return fz_compress(&chosen, src, src_bytes, dst, dst_capacity,
                           compressed_size);
    if (size <= dst_capacity) {
        memcpy(dst, stream, size);
        *compressed_size = size;
    } else {
        s = FZ_ERR_DST_TOO_SMALL;
    }
    free(stream);
    return s;
}
