/*
 * H5Zfloatz.h - the floatz HDF5 filter: its id, the layout of its
 * cd_values, and a helper that fills them. Header only: using it needs
 * floatz.h for the enums but links nothing (the plugin itself is loaded by
 * HDF5 from HDF5_PLUGIN_PATH). plugins/hdf5/README.md has the full guide.
 *
 *     unsigned int cd[FZ_H5Z_CD_USER];
 *     size_t n = fz_h5z_cd_values(cd, FZ_CODEC_SLEEK, FZ_MODE_ABS, 1e-3,
 *                                 0, 0);
 *     H5Pset_chunk(dcpl, rank, chunk_dims);
 *     H5Pset_filter(dcpl, FZ_H5Z_FILTER_ID, H5Z_FLAG_MANDATORY, n, cd);
 */
#ifndef H5ZFLOATZ_H
#define H5ZFLOATZ_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "floatz.h"

#ifdef __cplusplus
extern "C" {
#endif

/* PROVISIONAL filter id, from HDF5's range 256..511 that is reserved for
 * testing and unregistered filters. It will change once an id is
 * registered with The HDF Group; files written with 310 stay readable only
 * by a plugin that answers to 310. */
#define FZ_H5Z_FILTER_ID 310

/* Version of the cd_values layout below (cd[0]). */
#define FZ_H5Z_CD_LAYOUT_VERSION 1

/* cd_values given by the user, indices: every entry is optional from the
 * end (pass fewer values; a missing entry takes its default), but the
 * bound's two words go together: 4 values are refused, and ABS / REL need
 * at least 5. Each value is 32 bits (unsigned int).
 *   VERSION   layout version, FZ_H5Z_CD_LAYOUT_VERSION (default 1)
 *   CODEC     fz_codec (default FZ_CODEC_SLEEK)
 *   MODE      fz_mode (default FZ_MODE_LOSSLESS)
 *   BOUND_LO  the bound, an IEEE-754 binary64: the LOW 32 bits of its bit
 *             pattern (default 0.0)
 *   BOUND_HI  the HIGH 32 bits (sign, exponent, top of the significand)
 *   FLAGS     FZ_FLAG_* (FZ_FLAG_NO_CHECKSUM), default 0
 *   OPTION0   fz_params.codec_options[0], an int32 as its two's complement
 *             bits, default 0
 *   OPTION1   fz_params.codec_options[1], default 0 */
#define FZ_H5Z_CD_VERSION 0
#define FZ_H5Z_CD_CODEC 1
#define FZ_H5Z_CD_MODE 2
#define FZ_H5Z_CD_BOUND_LO 3
#define FZ_H5Z_CD_BOUND_HI 4
#define FZ_H5Z_CD_FLAGS 5
#define FZ_H5Z_CD_OPTION0 6
#define FZ_H5Z_CD_OPTION1 7
#define FZ_H5Z_CD_USER 8 /* at most this many values from the user */

/* Appended by the plugin when the dataset is created (set_local); the user
 * never passes these:
 *   DTYPE     fz_dtype: FZ_F32 or FZ_F64
 *   NDIMS     floatz dims of a chunk, 1..4
 *   DIM0..+3  the chunk dims, FASTEST varying first (the reverse of HDF5's
 *             order), unused ones 1. A chunk of more than 4 dims has its
 *             slowest dims merged into the last (their product). */
#define FZ_H5Z_CD_DTYPE 8
#define FZ_H5Z_CD_NDIMS 9
#define FZ_H5Z_CD_DIM0 10
#define FZ_H5Z_CD_TOTAL 14 /* cd_values stored in the file, always */

/* Fill cd[0 .. FZ_H5Z_CD_USER) for H5Pset_filter; returns FZ_H5Z_CD_USER,
 * the count to pass. codec_options[1] (gfc values per chunk, lorenzo
 * zero runs) is set to 0: write cd[FZ_H5Z_CD_OPTION1] afterwards to change
 * it. No check here: the plugin validates when the dataset is created. */
static inline size_t fz_h5z_cd_values(unsigned int *cd, fz_codec codec,
                                      fz_mode mode, double bound,
                                      uint32_t flags, int32_t codec_option0) {
    uint64_t bits;
    memcpy(&bits, &bound, sizeof bits);
    cd[FZ_H5Z_CD_VERSION] = FZ_H5Z_CD_LAYOUT_VERSION;
    cd[FZ_H5Z_CD_CODEC] = (unsigned int)codec;
    cd[FZ_H5Z_CD_MODE] = (unsigned int)mode;
    cd[FZ_H5Z_CD_BOUND_LO] = (unsigned int)(bits & 0xffffffffu);
    cd[FZ_H5Z_CD_BOUND_HI] = (unsigned int)(bits >> 32);
    cd[FZ_H5Z_CD_FLAGS] = (unsigned int)flags;
    cd[FZ_H5Z_CD_OPTION0] = (unsigned int)(uint32_t)codec_option0;
    cd[FZ_H5Z_CD_OPTION1] = 0;
    return FZ_H5Z_CD_USER;
}

/* The bound stored in cd[FZ_H5Z_CD_BOUND_LO], cd[FZ_H5Z_CD_BOUND_HI]. */
static inline double fz_h5z_cd_bound(const unsigned int *cd) {
    uint64_t bits = (uint64_t)(cd[FZ_H5Z_CD_BOUND_HI] & 0xffffffffu) << 32 |
                    (cd[FZ_H5Z_CD_BOUND_LO] & 0xffffffffu);
    double bound;
    memcpy(&bound, &bits, sizeof bound);
    return bound;
}

/* A codec option stored as 32 bits, back as a signed value. */
static inline int32_t fz_h5z_cd_option(unsigned int v) {
    uint32_t u = (uint32_t)v;
    return u <= INT32_MAX ? (int32_t)u : -(int32_t)(UINT32_MAX - u) - 1;
}

/* Register the filter with HDF5 without HDF5_PLUGIN_PATH, for programs
 * that link libH5Zfloatz directly (the only symbol here that needs it).
 * Returns 0 on success, negative on failure. */
int fz_h5z_register(void);

#ifdef __cplusplus
}
#endif
#endif /* H5ZFLOATZ_H */
