/* zf_shared.h - what the z-finder's host code and its OpenCL kernel share
 * (internal): the records that cross the host/device boundary, the
 * constants, and the formulas of spec §2.3 (seed 001, §3), written once.
 *
 * Written in the subset of C both compilers read, with the names of
 * opencl/gpu_common.h. The kernel's embedded source is gpu_common.h, this
 * file, zf_real.h and kernels/zfinder.cl, concatenated by
 * tools/embed-text.sh; the host includes the same files. The formulas
 * that depend on the precision of the arithmetic (float or double) are in
 * zf_real.h, which is read once per precision.
 *
 * Exactness: the reference and the kernel must put every intercept into
 * the same bin. Both evaluate the same expressions, in the same order, in
 * IEEE arithmetic without contraction into fused multiply-adds (the host
 * files are compiled with -ffp-contract=off, the kernel has
 * `#pragma OPENCL FP_CONTRACT OFF`) and with a correctly rounded division
 * (the kernel is built with -cl-fp32-correctly-rounded-divide-sqrt, or on a
 * device without it divides in double, which rounds to the same float;
 * double division is always correctly rounded in OpenCL). */
#ifndef TUSK_ZF_SHARED_H
#define TUSK_ZF_SHARED_H

#ifndef __OPENCL_VERSION__
#include "opencl/gpu_common.h"
#else
/* Before any formula: OpenCL C contracts a * b + c into a fused
 * multiply-add unless told not to, and the host does not. */
#pragma OPENCL FP_CONTRACT OFF
#if ZF_DOUBLE || (defined(ZF_DIV_VIA_DOUBLE) && ZF_DIV_VIA_DOUBLE)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#if ZF_ATOM64
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#endif
#endif

/* The inner detector's layers (IdScan_MaxNumLayers, seed §5.4.2): 19, and
 * one more slot for the total in the per-layer scans. */
#define ZF_MAX_LAYERS 19
#define ZF_LAYER_SLOTS (ZF_MAX_LAYERS + 1)

/* A work-group's slices: its own (the central one) and its two neighbours. */
#define ZF_NEIGHBOURS 3

/* 2 pi as the float every side uses for phi wrapping. */
#define ZF_TWO_PI_F 6.28318530717958647692f

/* zHisto in fixed point (tusk's choice, zfinder/README.md "zHisto in
 * fixed point"). An intercept's place inside its bin, frac = t - bin with
 * t = (z_V - z_min) / width as zf_bin computes it (0 <= frac < 1, exact),
 * is added as the integer q = ZF_ZQ(frac) = floor(frac 2^ZF_ZQ_BITS) <
 * 2^24: a quantum of width 2^-24, 6.0e-8 mm for the default 1 mm bins. A
 * bin keeps its entries n and Sum q; its zHisto is n (z_min + bin width)
 * + Sum q width 2^-24. Integer sums do not depend on the order of the
 * adds, so the reference, the fast backend and the kernel get the same
 * bits. In float the quantization loses nothing: above the first bin t
 * has no bits below 2^-23, so q is exactly frac 2^24.
 *
 * Bounds (tests/check_zfinder.c, quantization_bounds): a RoI's bin has
 * fewer than 2^32 entries (nHisto is 32 bits), so Sum q < 2^56 in 64 bits;
 * a window's sum zf_window_sum < 3 2^56 + 3 2^56 < 2^59. The kernel
 * adds q into a 32-bit word of local memory: a word that wraps (more than
 * 256 entries of one bin in one work-group can) is seen by the one
 * atomic_add that wrapped it, which adds its 2^32 to the RoI's 64-bit sum
 * in global memory, so any count of entries stays exact. */
#define ZF_ZQ_BITS 24
#define ZF_ZQ_SCALE 16777216.0f /* 2^ZF_ZQ_BITS, exact in float and double */
#define ZF_ZQ_QUANTUM 5.9604644775390625e-8f /* 2^-ZF_ZQ_BITS, exact in float and double */
#define ZF_ZQ(frac) ((tusk_u32)((frac) * ZF_ZQ_SCALE))

/* The fixed-point sum of a window of three bins from its first bin, in
 * quanta: bins 1 and 2 lie 1 and 2 bin widths (2^ZF_ZQ_BITS quanta) above
 * the first. n1, n2: their entries; s0..s2: their Sum q. */
TUSK_FN tusk_u64 zf_window_sum(tusk_u32 n1, tusk_u32 n2, tusk_u64 s0, tusk_u64 s1, tusk_u64 s2)
{
    return s0 + s1 + s2 + (((tusk_u64)n1 + 2 * (tusk_u64)n2) << ZF_ZQ_BITS);
}

/* Status bits of a RoI on the device. */
#define ZF_STATUS_OVERFLOW 1u /* a slice and its neighbours held more points than a work-group keeps */

/* One spacepoint as the kernel reads it: 16 bytes. phi is relative to the
 * RoI's phi_min (zf_phi_rel), the points of a RoI are sorted by slice. */
typedef struct zf_point {
    tusk_f32 rho;   /* mm */
    tusk_f32 phi;   /* rad, 0 <= phi < 2 pi, from the RoI's phi_min */
    tusk_f32 z;     /* mm */
    tusk_u32 layer; /* < ZF_MAX_LAYERS */
} zf_point_t;

/* One RoI of a launch: where its points and slice starts are in the
 * launch's input. 32 bytes. The work-groups of a launch go slice by
 * slice: group g is slice g / n_rois of RoI g % n_rois (zfinder.cl). */
typedef struct zf_roi_desc {
    tusk_u32 first_point; /* index of its first zf_point_t */
    tusk_u32 first_slice; /* index of its slice-start array (n_slices + 1 entries, relative to first_point) */
    tusk_u32 n_slices;
    tusk_u32 wrap;        /* 1: a 360 degree RoI, slices 0 and n_slices - 1 are neighbours */
    tusk_u32 reserved[4];
} zf_roi_desc_t;

/* What the device returns for one RoI: 48 bytes. z0 is the bit pattern of
 * the float (low 32 bits) or double the kernel computed. */
typedef struct zf_dev_result {
    tusk_u32 n_vertices;  /* 0, 1 or 2 */
    tusk_u32 bin[2];      /* first bin of each vertex's window */
    tusk_u32 count[2];    /* nHisto summed over the window */
    tusk_u32 pairs;       /* pairs formed */
    tusk_u32 entries;     /* intercepts in the histogram */
    tusk_u32 status;      /* ZF_STATUS_* bits */
    tusk_u64 z0_bits[2];
} zf_dev_result_t;

TUSK_STATIC_ASSERT(sizeof(zf_point_t) == 16, "zf_point_t is 16 bytes");
TUSK_STATIC_ASSERT(sizeof(zf_roi_desc_t) == 32, "zf_roi_desc_t is 32 bytes");
TUSK_STATIC_ASSERT(sizeof(zf_dev_result_t) == 48, "zf_dev_result_t is 48 bytes");

/* The azimuth of a point from the RoI's lower edge, in [0, 2 pi). */
TUSK_FN tusk_f32 zf_phi_rel(tusk_f32 phi, tusk_f32 phi_min)
{
    tusk_f32 d = phi - phi_min;
    if (d < 0.0f)
        d = d + ZF_TWO_PI_F;
    else if (d >= ZF_TWO_PI_F)
        d = d - ZF_TWO_PI_F;
    return d;
}

/* The phi slice of a point (phi_rel from zf_phi_rel; inv_slice = 1 /
 * slice width): floor(phi_rel / width), the last slice for what rounding
 * puts beyond it. -1 for a point outside the RoI (phi_rel not below
 * phi_width, or not a number); a 360 degree RoI (wrap) takes every phi. */
TUSK_FN tusk_i32 zf_slice_of(tusk_f32 phi_rel, tusk_f32 phi_width, tusk_f32 inv_slice, tusk_i32 n_slices,
                             tusk_i32 wrap)
{
    if (!(phi_rel >= 0.0f) || (!wrap && !(phi_rel < phi_width)))
        return -1;
    tusk_i32 s = (tusk_i32)(phi_rel * inv_slice);
    return s < n_slices ? s : n_slices - 1;
}

/* The peak is the window of three adjacent bins with the largest nHisto
 * sum, the lowest first bin among equals (seed §3.2): does window
 * (count_a, bin_a) beat (count_b, bin_b)? */
TUSK_FN int zf_window_better(tusk_u32 count_a, tusk_u32 bin_a, tusk_u32 count_b, tusk_u32 bin_b)
{
    return count_a > count_b || (count_a == count_b && bin_a < bin_b);
}

#endif
