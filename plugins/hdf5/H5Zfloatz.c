/*
 * H5Zfloatz.c - floatz as an HDF5 filter (H5Z_class2_t) and a dynamic
 * plugin: HDF5 loads libH5Zfloatz.so from HDF5_PLUGIN_PATH through
 * H5PLget_plugin_type / H5PLget_plugin_info; programs that link it may
 * call fz_h5z_register() instead.
 *
 * Each HDF5 chunk becomes one self-describing floatz stream of the chunk's
 * shape. Every failure is loud: an HDF5 error naming the cause (the floatz
 * status text where there is one) and a failed call, never a silent raw
 * chunk nor a buffer of the wrong size handed back to HDF5.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "H5PLextern.h"
#include "hdf5.h"

#include "H5Zfloatz.h"

#if defined(__GNUC__)
#define FZ_H5Z_EXPORT __attribute__((visibility("default")))
#else
#define FZ_H5Z_EXPORT
#endif

/* Push an error on HDF5's stack, in HDF5's own class, under "data filters"
 * so that users find it where other filter errors go (the file name without
 * the build machine's path). */
#define FZ_H5Z_ERROR(minor, ...)                                               \
    H5Epush2(H5E_DEFAULT, "H5Zfloatz.c", __func__, __LINE__, H5E_ERR_CLS,      \
             H5E_PLINE, minor, "floatz: " __VA_ARGS__)

/* ------------------------------------------------------------ datatype */

/* NULL when `type` is an IEEE-754 binary32/binary64 in little-endian byte
 * order (the only layouts floatz stores), else the reason why not. */
static const char *fz_h5z_check_type(hid_t type, fz_dtype *dtype) {
    if (H5Tget_class(type) != H5T_FLOAT)
        return "the datatype is not a floating-point type";
    const size_t size = H5Tget_size(type);
    if (size != 4 && size != 8)
        return "the datatype is neither 4 nor 8 bytes";
    if (H5Tget_order(type) != H5T_ORDER_LE)
        return "the datatype is not little-endian";
    const int f64 = size == 8;
    size_t spos, epos, esize, mpos, msize;
    if (H5Tget_fields(type, &spos, &epos, &esize, &mpos, &msize) < 0 ||
        spos != (f64 ? 63u : 31u) || epos != (f64 ? 52u : 23u) ||
        esize != (f64 ? 11u : 8u) || mpos != 0 || msize != (f64 ? 52u : 23u) ||
        H5Tget_precision(type) != size * 8 || H5Tget_offset(type) != 0 ||
        H5Tget_ebias(type) != (f64 ? 1023u : 127u) ||
        H5Tget_norm(type) != H5T_NORM_IMPLIED)
        return "the datatype is not an IEEE-754 binary32/binary64 layout";
    *dtype = f64 ? FZ_F64 : FZ_F32;
    return NULL;
}

/* ------------------------------------------------------------ cd_values */

/* The user's part of cd_values, field by field for a precise message. */
static int fz_h5z_check_user(const unsigned int *cd) {
    if (cd[FZ_H5Z_CD_VERSION] != FZ_H5Z_CD_LAYOUT_VERSION) {
        FZ_H5Z_ERROR(H5E_BADVALUE,
                     "cd_values layout version %u unknown (this plugin "
                     "knows %d)",
                     cd[FZ_H5Z_CD_VERSION], FZ_H5Z_CD_LAYOUT_VERSION);
        return 0;
    }
    const unsigned int codec = cd[FZ_H5Z_CD_CODEC];
    if (codec > 255 || fz_codec_name((fz_codec)codec) == NULL) {
        FZ_H5Z_ERROR(H5E_BADVALUE, "unknown codec id %u", codec);
        return 0;
    }
    const unsigned int mode = cd[FZ_H5Z_CD_MODE];
    if (mode != FZ_MODE_LOSSLESS && mode != FZ_MODE_ABS &&
        mode != FZ_MODE_REL) {
        FZ_H5Z_ERROR(H5E_BADVALUE, "unknown mode %u", mode);
        return 0;
    }
    const double bound = fz_h5z_cd_bound(cd);
    if (!isfinite(bound) || bound < 0 ||
        (mode == FZ_MODE_LOSSLESS && bound != 0)) {
        FZ_H5Z_ERROR(H5E_BADVALUE,
                     "bound %g invalid (finite and >= 0; 0 when lossless)",
                     bound);
        return 0;
    }
    if ((cd[FZ_H5Z_CD_FLAGS] & ~FZ_FLAG_NO_CHECKSUM) != 0) {
        FZ_H5Z_ERROR(H5E_BADVALUE, "unknown flags 0x%x", cd[FZ_H5Z_CD_FLAGS]);
        return 0;
    }
    return 1;
}

/* fz_params from a complete cd_values array (FZ_H5Z_CD_TOTAL entries, as
 * set_local writes them and the file stores them). fz_compress_bound
 * checks what only the library knows (codec/mode pairs, option ranges). */
static int fz_h5z_params(const unsigned int *cd, size_t n, fz_params *p) {
    if (n != FZ_H5Z_CD_TOTAL) {
        FZ_H5Z_ERROR(H5E_BADVALUE, "%zu cd_values, expected %d", n,
                     FZ_H5Z_CD_TOTAL);
        return 0;
    }
    if (!fz_h5z_check_user(cd))
        return 0;
    const unsigned int dtype = cd[FZ_H5Z_CD_DTYPE];
    const unsigned int ndims = cd[FZ_H5Z_CD_NDIMS];
    if ((dtype != FZ_F32 && dtype != FZ_F64) || ndims < 1 ||
        ndims > FZ_MAX_DIMS) {
        FZ_H5Z_ERROR(H5E_BADVALUE, "cd_values: dtype %u / ndims %u invalid",
                     dtype, ndims);
        return 0;
    }
    uint64_t dims[FZ_MAX_DIMS];
    for (unsigned int d = 0; d < FZ_MAX_DIMS; d++)
        dims[d] = cd[FZ_H5Z_CD_DIM0 + d];
    fz_params_init(p, (fz_dtype)dtype, 0);
    fz_status s = fz_params_set_shape(p, ndims, dims);
    p->codec = (fz_codec)cd[FZ_H5Z_CD_CODEC];
    p->mode = (fz_mode)cd[FZ_H5Z_CD_MODE];
    p->bound = fz_h5z_cd_bound(cd);
    p->flags = cd[FZ_H5Z_CD_FLAGS];
    p->codec_options[0] = fz_h5z_cd_option(cd[FZ_H5Z_CD_OPTION0]);
    p->codec_options[1] = fz_h5z_cd_option(cd[FZ_H5Z_CD_OPTION1]);
    size_t cap;
    if (s == FZ_OK)
        s = fz_compress_bound(p, &cap);
    if (s != FZ_OK) {
        FZ_H5Z_ERROR(H5E_BADVALUE, "parameters refused: %s",
                     fz_status_string(s));
        return 0;
    }
    return 1;
}

/* The chunk shape as floatz dims (fastest first, the reverse of HDF5's
 * order) into cd[FZ_H5Z_CD_NDIMS ..]. floatz takes at most 4 dims: the
 * slowest HDF5 dims of a deeper chunk merge into the last one, which
 * leaves the bytes and their order unchanged. */
static int fz_h5z_chunk_shape(hid_t dcpl, unsigned int *cd) {
    hsize_t chunk[H5S_MAX_RANK];
    const int rank = H5Pget_chunk(dcpl, H5S_MAX_RANK, chunk);
    if (rank < 1) {
        FZ_H5Z_ERROR(H5E_CANTGET, "cannot read the chunk shape");
        return 0;
    }
    uint64_t dims[FZ_MAX_DIMS] = {1, 1, 1, 1};
    for (int d = 0; d < rank; d++) {
        const int k =
            rank - 1 - d < FZ_MAX_DIMS ? rank - 1 - d : FZ_MAX_DIMS - 1;
        dims[k] *= chunk[d];
        if (dims[k] > UINT32_MAX) { /* HDF5 caps chunks below 4 GiB */
            FZ_H5Z_ERROR(H5E_BADVALUE, "chunk too large");
            return 0;
        }
    }
    cd[FZ_H5Z_CD_NDIMS] =
        (unsigned int)(rank < FZ_MAX_DIMS ? rank : FZ_MAX_DIMS);
    for (int k = 0; k < FZ_MAX_DIMS; k++)
        cd[FZ_H5Z_CD_DIM0 + k] = (unsigned int)dims[k];
    return 1;
}

/* Checks of a new dataset's cd_values only (not of stored ones, so that
 * files written before them still read): user mistakes that HDF5 would
 * otherwise store and floatz obey without a word. `n` is the count given. */
static int fz_h5z_check_given(const unsigned int *cd, size_t n) {
    /* The bound is one binary64 in two values: 4 values hold only its low
     * word (the bound is then a subnormal, stored almost lossless), and a
     * lossy mode without them runs at bound 0 (stored lossless), while
     * the user asked for lossy compression. */
    if (n == FZ_H5Z_CD_BOUND_HI) {
        FZ_H5Z_ERROR(H5E_BADVALUE,
                     "4 cd_values: the bound takes two, cd[3] (low 32 bits "
                     "of the double) and cd[4] (high 32 bits)");
        return 0;
    }
    if (n == FZ_H5Z_CD_BOUND_LO && cd[FZ_H5Z_CD_MODE] != FZ_MODE_LOSSLESS) {
        FZ_H5Z_ERROR(H5E_BADVALUE,
                     "mode %u without a bound: pass at least 5 cd_values, "
                     "the bound's low and high 32 bits in cd[3] and cd[4]",
                     cd[FZ_H5Z_CD_MODE]);
        return 0;
    }
    /* Swapped words make a subnormal bound from any usual one (its low
     * word, usually 0, becomes the exponent): refuse what no user means. */
    const double bound = fz_h5z_cd_bound(cd);
    if (n <= FZ_H5Z_CD_USER && bound != 0 && bound < DBL_MIN) {
        FZ_H5Z_ERROR(H5E_BADVALUE,
                     "bound %g is subnormal: cd[3] must hold the LOW 32 bits "
                     "of the double and cd[4] the HIGH 32 bits (swapped?)",
                     bound);
        return 0;
    }
    return 1;
}

/* floatz must be the pipeline's first filter, and only once: it compresses
 * the dataset's floating-point values, and a filter before it hands it
 * other bytes. A lossy bound then holds for those bytes, not the values
 * (shuffle, as h5py's shuffle=True or h5repack -f SHUF -f UD=... put it,
 * returned errors of 300 for a bound of 0.5, silently), and filters that
 * change the size (deflate, fletcher32, scaleoffset) made every write fail
 * long after H5Dcreate had succeeded. A later filter sees only the floatz
 * stream and is fine. Checked at creation only: stored pipelines read. */
static int fz_h5z_check_pipeline(hid_t dcpl) {
    const int nf = H5Pget_nfilters(dcpl);
    if (nf < 1) {
        FZ_H5Z_ERROR(H5E_CANTGET, "cannot read the filter pipeline");
        return 0;
    }
    for (int i = 0; i < nf; i++) {
        char name[64] = "";
        const H5Z_filter_t id = H5Pget_filter2(dcpl, (unsigned)i, NULL, NULL,
                                               NULL, sizeof name, name, NULL);
        if (id < 0) {
            FZ_H5Z_ERROR(H5E_CANTGET, "cannot read the filter pipeline");
            return 0;
        }
        if (i == 0 && id != FZ_H5Z_FILTER_ID) {
            FZ_H5Z_ERROR(H5E_CANAPPLY,
                         "floatz must be the first filter of the pipeline, "
                         "but filter %d (%s) comes before it: set it after "
                         "floatz, or not at all",
                         (int)id, name[0] ? name : "unnamed");
            return 0;
        }
        if (i > 0 && id == FZ_H5Z_FILTER_ID) {
            FZ_H5Z_ERROR(H5E_CANAPPLY,
                         "floatz is in the filter pipeline more than once");
            return 0;
        }
    }
    return 1;
}

/* ------------------------------------------------------------ callbacks */

/* Refuse, with the reason on the error stack, whatever floatz cannot store
 * exactly as HDF5 holds it; HDF5 then fails H5Dcreate for a mandatory
 * filter instead of writing anything (for an optional one, set_local
 * refuses it again). */
static htri_t fz_h5z_can_apply(hid_t dcpl, hid_t type, hid_t space) {
    (void)space;
    if (H5Pget_layout(dcpl) != H5D_CHUNKED) {
        FZ_H5Z_ERROR(H5E_CANAPPLY, "the dataset must use a chunked layout");
        return 0;
    }
    fz_dtype dtype;
    const char *why = fz_h5z_check_type(type, &dtype);
    if (why) {
        FZ_H5Z_ERROR(H5E_CANAPPLY, "%s", why);
        return 0;
    }
    return 1;
}

/* Check the pipeline, complete the user's cd_values (defaults for missing
 * entries, dtype and chunk shape appended), validate them all, and store
 * the full set. Also runs when a dataset is copied (h5repack) with its 14
 * values: the user part is kept and the dataset part recomputed for the
 * new chunk shape. */
static herr_t fz_h5z_set_local(hid_t dcpl, hid_t type, hid_t space) {
    (void)space;
    unsigned int flags = 0, user[FZ_H5Z_CD_TOTAL], cd[FZ_H5Z_CD_TOTAL];
    size_t n = FZ_H5Z_CD_TOTAL;
    if (H5Pget_filter_by_id2(dcpl, FZ_H5Z_FILTER_ID, &flags, &n, user, 0, NULL,
                             NULL) < 0) {
        FZ_H5Z_ERROR(H5E_CANTGET, "cannot read the filter's cd_values");
        return -1;
    }
    if (n > FZ_H5Z_CD_USER && n != FZ_H5Z_CD_TOTAL) {
        FZ_H5Z_ERROR(H5E_BADVALUE, "%zu cd_values given, at most %d", n,
                     FZ_H5Z_CD_USER);
        return -1;
    }
    fz_h5z_cd_values(cd, FZ_CODEC_SLEEK, FZ_MODE_LOSSLESS, 0.0, 0, 0);
    memcpy(cd, user, (n < FZ_H5Z_CD_USER ? n : FZ_H5Z_CD_USER) * sizeof *cd);
    if (!fz_h5z_check_pipeline(dcpl) || !fz_h5z_check_user(cd) ||
        !fz_h5z_check_given(cd, n))
        return -1;
    fz_dtype dtype;
    const char *why = fz_h5z_check_type(type, &dtype);
    if (why) {
        FZ_H5Z_ERROR(H5E_BADTYPE, "%s", why);
        return -1;
    }
    cd[FZ_H5Z_CD_DTYPE] = (unsigned int)dtype;
    fz_params p;
    if (!fz_h5z_chunk_shape(dcpl, cd) ||
        !fz_h5z_params(cd, FZ_H5Z_CD_TOTAL, &p))
        return -1;
    if (H5Pmodify_filter(dcpl, FZ_H5Z_FILTER_ID, flags, FZ_H5Z_CD_TOTAL, cd) <
        0) {
        FZ_H5Z_ERROR(H5E_CANTSET, "cannot store the filter's cd_values");
        return -1;
    }
    return 0;
}

/* FLOATZ_HDF5_EXEC: unset, empty or "cpu" = CPU, "gpu" = GPU. Anything
 * else fails rather than guessing what was meant. */
static int fz_h5z_exec(fz_exec *exec) {
    const char *v = getenv("FLOATZ_HDF5_EXEC");
    if (!v || !*v || strcmp(v, "cpu") == 0) {
        *exec = FZ_EXEC_CPU;
        return 1;
    }
    if (strcmp(v, "gpu") == 0) {
        *exec = FZ_EXEC_GPU;
        return 1;
    }
    FZ_H5Z_ERROR(H5E_BADVALUE, "FLOATZ_HDF5_EXEC=%s: expected cpu or gpu", v);
    return 0;
}

/* Compress the chunk in *buf into a new buffer that replaces it. */
static size_t fz_h5z_encode(const fz_params *p, uint64_t chunk_bytes,
                            size_t nbytes, size_t *buf_size, void **buf) {
    if (nbytes != chunk_bytes) {
        FZ_H5Z_ERROR(H5E_CANTFILTER, "chunk of %zu bytes, expected %llu",
                     nbytes, (unsigned long long)chunk_bytes);
        return 0;
    }
    size_t cap = 0, size = 0;
    fz_status s = fz_compress_bound(p, &cap);
    void *out = s == FZ_OK ? H5allocate_memory(cap, 0) : NULL;
    if (s == FZ_OK && !out)
        s = FZ_ERR_OUT_OF_MEMORY;
    if (s == FZ_OK)
        s = fz_compress(p, *buf, nbytes, out, cap, &size);
    if (s != FZ_OK) {
        H5free_memory(out);
        FZ_H5Z_ERROR(H5E_CANTFILTER, "compression failed: %s",
                     fz_status_string(s));
        return 0;
    }
    H5free_memory(*buf);
    *buf = out;
    *buf_size = cap;
    return size;
}

/* Decompress the floatz stream in *buf; it must decode to exactly one
 * chunk of this dataset (HDF5 trusts the size we return). */
static size_t fz_h5z_decode(const fz_params *p, uint64_t chunk_bytes,
                            size_t nbytes, size_t *buf_size, void **buf) {
    fz_info info;
    fz_status s = fz_inspect(*buf, nbytes, &info);
    if (s == FZ_OK &&
        (info.original_bytes != chunk_bytes || info.params.dtype != p->dtype)) {
        FZ_H5Z_ERROR(H5E_CANTFILTER,
                     "chunk stream holds %llu bytes of dtype %d, the "
                     "dataset's chunks are %llu bytes of dtype %d",
                     (unsigned long long)info.original_bytes,
                     (int)info.params.dtype, (unsigned long long)chunk_bytes,
                     (int)p->dtype);
        return 0;
    }
    void *out = NULL;
    size_t size = 0;
    if (s == FZ_OK && !(out = H5allocate_memory((size_t)chunk_bytes, 0)))
        s = FZ_ERR_OUT_OF_MEMORY;
    fz_decode_options opts = {0}; /* checksums verified */
    opts.exec = p->exec;
    if (s == FZ_OK)
        s = fz_decompress(*buf, nbytes, out, (size_t)chunk_bytes, &opts, &size);
    if (s == FZ_OK && size != chunk_bytes)
        s = FZ_ERR_SIZE_MISMATCH;
    if (s != FZ_OK) {
        H5free_memory(out);
        FZ_H5Z_ERROR(H5E_CANTFILTER, "decompression failed: %s",
                     fz_status_string(s));
        return 0;
    }
    H5free_memory(*buf);
    *buf = out;
    *buf_size = (size_t)chunk_bytes;
    return size;
}

/* The filter: 0 (with an error pushed) on any failure. */
static size_t fz_h5z_filter(unsigned int flags, size_t cd_nelmts,
                            const unsigned int cd_values[], size_t nbytes,
                            size_t *buf_size, void **buf) {
    fz_params p; /* threads 0: all cores */
    uint64_t chunk_bytes = 0;
    if (!fz_h5z_params(cd_values, cd_nelmts, &p) || !fz_h5z_exec(&p.exec) ||
        fz_params_count(&p, NULL, &chunk_bytes) != FZ_OK)
        return 0;
    if (flags & H5Z_FLAG_REVERSE)
        return fz_h5z_decode(&p, chunk_bytes, nbytes, buf_size, buf);
    return fz_h5z_encode(&p, chunk_bytes, nbytes, buf_size, buf);
}

/* ------------------------------------------------------------ entry points */

static const H5Z_class2_t fz_h5z_class = {
    H5Z_CLASS_T_VERS,
    (H5Z_filter_t)FZ_H5Z_FILTER_ID,
    1, /* encoder present */
    1, /* decoder present */
    "floatz",
    fz_h5z_can_apply,
    fz_h5z_set_local,
    fz_h5z_filter,
};

H5PL_type_t H5PLget_plugin_type(void) {
    return H5PL_TYPE_FILTER;
}

const void *H5PLget_plugin_info(void) {
    return &fz_h5z_class;
}

FZ_H5Z_EXPORT int fz_h5z_register(void) {
    return H5Zregister(&fz_h5z_class) < 0 ? -1 : 0;
}
