/* zf_private.h - what the files of libtusk-zfinder share (not installed). */
#ifndef TUSK_ZF_PRIVATE_H
#define TUSK_ZF_PRIVATE_H

#include "tusk/export.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tusk/zfinder.h"
#include "zf_shared.h"
#include "base/pool.h"
#include "base/rng.h"

_Static_assert(ZF_MAX_LAYERS == ADF_IDSP_MAX_LAYERS, "the frames and the algorithm agree on the layers");
_Static_assert((int)ZF_PAIRS == (int)ADF_ZVERTEX_PAIRS && (int)ZF_TRIPLETS == (int)ADF_ZVERTEX_TRIPLETS,
               "mode codes");
_Static_assert((int)ZF_REFERENCE == (int)ADF_ZVERTEX_REFERENCE && (int)ZF_FAST == (int)ADF_ZVERTEX_FAST &&
                   (int)ZF_OPENCL == (int)ADF_ZVERTEX_OPENCL,
               "backend codes");

#define ZF_NONE UINT32_MAX /* end of a list */

/* The settings as the arithmetic uses them; each side converts these
 * doubles to its precision the same way ((float)x or x). */
typedef struct zf_consts {
    double z_min, bin, inv_bin, n_bins, tol_z, tol_phi;
    float inv_slice;          /* 1 / slice width in rad, as float (slices are found in float) */
    unsigned bins;
} zf_consts_t;

void zf_consts_of(const zf_config_t *cfg, zf_consts_t *k);

/* The slice of every point of a RoI, and its phi from phi_min; TUSK_EINVAL
 * naming the RoI and the point for one outside the RoI or in a layer >= 19. */
int zf_slices_of(const zf_consts_t *k, const zf_roi_t *roi, uint32_t n_slices, int wrap, int32_t *slice,
                 float *phi_rel, tusk_error_t *err);

/* ---- the reference, per precision (zf_ref_impl.h) ---- */

typedef struct zf_ref_work {
    zf_consts_t k;
    bool triplets, second;
    uint32_t *first;          /* [slice * ZF_MAX_LAYERS + layer]: a list's first point, ZF_NONE when empty */
    size_t lists_cap;         /* slices the lists hold */
    uint32_t *inext;
    int32_t *slice;
    float *phi_rel;
    float *g_rho, *g_z;       /* a slice and its neighbours, grouped by layer */
    void *g_phi;              /* float or double, shifted across the seam */
    uint8_t *g_layer;
    size_t points_cap;
    uint32_t *nh;
    uint64_t *zs;             /* [bins]: Sum q, zHisto in fixed point (zf_shared.h) */
} zf_ref_work_t;

int zf_ref_roi_f(zf_ref_work_t *w, const zf_config_t *cfg, const zf_roi_t *roi, zf_result_t *res,
                 tusk_error_t *err);
int zf_ref_roi_d(zf_ref_work_t *w, const zf_config_t *cfg, const zf_roi_t *roi, zf_result_t *res,
                 tusk_error_t *err);

int zf_ref_work_init(zf_ref_work_t *w, const zf_config_t *cfg, tusk_error_t *err);
void zf_ref_work_free(zf_ref_work_t *w);
/* Room for a RoI of n points and s slices (lists start empty). */
int zf_ref_work_room(zf_ref_work_t *w, size_t n, size_t s, tusk_error_t *err);

/* Threads: base/pool.h; random numbers: base/rng.h. */

/* The kernels' source, compiled into the library (Makefile.am's ZF_KERNEL_PARTS, by
 * tools/embed-text.sh); exported for the tests that build on it. */
TUSK_INTERNAL extern const char tusk_zfinder_kernel_source[];
TUSK_INTERNAL extern const unsigned long tusk_zfinder_kernel_source_size;

#endif
