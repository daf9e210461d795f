/* psa_shared.h - what the PSA grid search's host code and its OpenCL
 * kernels share (internal): the records that cross the host/device
 * boundary, the constants, and the polynomial power function, written
 * once.
 *
 * Written in the subset of C both compilers read, with the names of
 * opencl/gpu_common.h. The kernels' embedded source is gpu_common.h, this
 * file and kernels/psa.cl, concatenated by tools/embed-text.sh; the host
 * includes this file (psa_cl.c for the records and constants,
 * search_fast.c for psa_pow_poly). tests/check_psa_cl.c compares the
 * records' layout and the constants on both sides. */
#ifndef TUSK_PSA_SHARED_H
#define TUSK_PSA_SHARED_H

#ifndef __OPENCL_VERSION__
#include <math.h>

#include "opencl/gpu_common.h"
#endif

/* How the search kernel computes |d|^p (its build option PSA_POW). */
#define PSA_POW_POWR 0   /* powr(|d|, p) */
#define PSA_POW_NATIVE 1 /* native_powr(|d|, p): the hardware's exp2 and log2 */
#define PSA_POW_SQUARE 2 /* d * d, for p = 2 */
#define PSA_POW_ABS 3    /* |d|, for p = 1 */
#define PSA_POW_POLY 4   /* psa_pow_poly, below */
#define PSA_POW_KINDS 5

/* Problems a work-group at most: which of them have a channel is one
 * 32-bit word in the kernel. */
#define PSA_PG_MAX 32

/* One problem of a chunk as the kernels read it (16 bytes). Its traces
 * follow each other in the chunk's trace buffer from trace_at, one per
 * channel of its mask in ascending order, PSA_S samples each. */
typedef struct psa_dev_problem {
    tusk_u32 trace_at; /* index of its first trace sample in the chunk's traces */
    tusk_u32 mask_lo;  /* channel mask: channels 0 to 31 */
    tusk_u32 mask_hi;  /* channels 32 to 63 */
    tusk_u32 segment;  /* the hit segment: which block of the basis */
} psa_dev_problem_t;

/* One work-group of psa_search (16 bytes): a tile of PSA_WG consecutive
 * points of a segment, against `count` consecutive problems of the chunk
 * (all of that segment) from `first`. */
typedef struct psa_dev_work {
    tusk_u32 segment;
    tusk_u32 tile;  /* points tile * PSA_WG .. tile * PSA_WG + PSA_WG - 1 */
    tusk_u32 first; /* the chunk's problem index */
    tusk_u32 count; /* 1 .. PSA_PG */
} psa_dev_work_t;

/* What psa_reduce writes for a problem (8 bytes). */
typedef struct psa_dev_result {
    tusk_u32 best;     /* the point with the lowest FoM (the lowest point among equals) */
    tusk_u32 fom_bits; /* its FoM, a float's bits (+inf for NaN) */
} psa_dev_result_t;

TUSK_STATIC_ASSERT(sizeof(psa_dev_problem_t) == 16, "psa_dev_problem_t is 16 bytes");
TUSK_STATIC_ASSERT(sizeof(psa_dev_work_t) == 16, "psa_dev_work_t is 16 bytes");
TUSK_STATIC_ASSERT(sizeof(psa_dev_result_t) == 8, "psa_dev_result_t is 8 bytes");

/* psa_search's local memory, in 8-byte words: the problems' traces of one
 * channel (pg * s floats) while summing, then the reduction's keys (one
 * ulong a problem and point), in the same place; and the bytes of it all,
 * with each problem's mask (8) and trace offset (4). The host picks the
 * number of problems a group with PSA_LOCAL_BYTES. */
#define PSA_SCRATCH_WORDS(pg, s, wg) ((pg) * (s) > 2 * (pg) * (wg) ? ((pg) * (s) + 1) / 2 : (pg) * (wg))
#define PSA_LOCAL_BYTES(pg, s, wg) (8 * PSA_SCRATCH_WORDS(pg, s, wg) + 12 * (pg))

/* |d|^p as exp2(p log2 |d|) by polynomials, to about 3e-7 relative at
 * p = 0.3, under 2e-6 for p <= 1.5 and |d| <= 16: |d| = 2^e m with m in
 * [sqrt(1/2), sqrt(2)), log2 m by the atanh series, 2^y with y split at
 * the nearest integer. Plain arithmetic without a library call (not even
 * rint, a libm call before SSE4.1), so that it vectorises on CPUs (the
 * fast path's inner loop, search_fast.c, and the kernel on CPU devices).
 * 0 for |d| < 1e-30; NaN and infinite |d| give +inf, as does an overflow. */
TUSK_FN tusk_f32 psa_pow_poly(tusk_f32 d, tusk_f32 p)
{
    const tusk_u32 bits = tusk_f32_bits(d) & 0x7FFFFFFFu;
    const tusk_f32 x = tusk_bits_f32(bits); /* |d| */
    tusk_i32 e = (tusk_i32)((bits >> 23) & 0xFFu) - 127;
    tusk_f32 m = tusk_bits_f32((bits & 0x7FFFFFu) | 0x3F800000u);
    const tusk_i32 big = m > 1.41421356f;
    m = big ? 0.5f * m : m;
    e += big;
    const tusk_f32 r = (m - 1.0f) / (m + 1.0f), r2 = r * r;
    const tusk_f32 l =
        r * (2.88539008f + r2 * (0.961796694f + r2 * (0.577078016f + r2 * (0.412198583f + r2 * 0.320598517f))));
    tusk_f32 y = p * ((tusk_f32)e + l);
    y = y < -126.0f ? -126.0f : (y > 128.0f ? 128.0f : y); /* 2^128 builds +inf */
    /* The nearest integer (y > -127): truncation of a positive number. */
    const tusk_i32 ni = (tusk_i32)(y + 127.5f) - 127;
    const tusk_f32 n = (tusk_f32)ni, f = (y - n) * 0.693147181f;
    const tusk_f32 q =
        1.0f + f * (1.0f + f * (0.5f + f * (0.166666672f + f * (0.0416666679f + f * (0.00833333377f +
                                                                                        f * 0.00138888892f)))));
    tusk_f32 res = q * tusk_bits_f32((tusk_u32)(ni + 127) << 23);
    res = x <= 3.4028235e38f ? res : INFINITY; /* NaN and inf */
    return x < 1e-30f ? 0.0f : res;
}

/* ---- residual subtraction's later rounds on a device (psa_cl.c) ----------------
 *
 * With residual = yes, psa_analyse searches a crystal of several hits in
 * rounds (psa/analyse.c): round 0 its strongest hit as it is; then, round
 * after round, its other hits or its strongest again, each with the signal
 * found so far of every other hit subtracted. psa_cl runs the rounds after
 * the first on the device, all of them in one submission (psa.cl:
 * psa_res_round and psa_search, round after round), from these
 * records and with these formulas, which the host's rounds use too: both
 * make the same problems, bit for bit. They need double precision: on a
 * device without it (no cl_khr_fp64) the kernels are left out and the
 * host makes the rounds. */
#if !defined(__OPENCL_VERSION__)
#define PSA_HAVE_FP64 1
#elif defined(cl_khr_fp64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define PSA_HAVE_FP64 1
#else
#define PSA_HAVE_FP64 0
#endif

#if PSA_HAVE_FP64
#ifdef __OPENCL_VERSION__
/* These formulas give the host's results: no fused multiply-adds (the
 * host's C11 build makes none), from here to the end of the part. */
#pragma OPENCL FP_CONTRACT OFF
#endif
/* A crystal taking part in the later rounds (32 bytes). */
typedef struct psa_dev_res_record {
    double t0;          /* its T0: samples from its first sample */
    double inter;       /* a refinement round's interaction time (psa_res_round; NaN: none) */
    tusk_u32 first;     /* its hits: first .. first + n - 1, the strongest first */
    tusk_u32 n;
    tusk_u32 n_samples; /* of each of its calibrated traces */
    tusk_u32 unused;
} psa_dev_res_record_t;

/* One of its hits (56 bytes): what the host knows after round 0, and
 * what each round's search leaves. */
typedef struct psa_dev_res_hit {
    double at;           /* where its signal lies: its last search's T0 plus the best shift (samples) */
    double placed;       /* the T0 its traces were aligned at in its last search */
    tusk_u32 record;
    tusk_u32 segment;
    tusk_f32 energy;
    tusk_f32 inv_energy; /* 1 / energy, divided on the host (a kernel's division may round otherwise) */
    tusk_u32 best;       /* its point so far */
    tusk_u32 fom_bits;   /* its last search's FoM */
    tusk_u32 mask_lo;    /* its problems' channels (psa_engine_mask, the other hits left out) */
    tusk_u32 mask_hi;
    tusk_u32 trace_at;   /* those channels' calibrated traces, ascending, n_samples each */
    tusk_i32 shift;      /* its last search's best T0 shift */
} psa_dev_res_hit_t;

/* Work-items a crystal in psa_res_round. */
#define PSA_RES_LANES 64

TUSK_STATIC_ASSERT(sizeof(psa_dev_res_record_t) == 32, "psa_dev_res_record_t is 32 bytes");
TUSK_STATIC_ASSERT(sizeof(psa_dev_res_hit_t) == 56, "psa_dev_res_hit_t is 56 bytes");

/* Trace v of n samples at fractional sample x: v[0] where x <= 0, v[n -
 * 1] where x >= n - 1, else v[k] + f (v[k + 1] - v[k]), k = (unsigned)x, f
 * = (float)(x - k). How a problem's traces are resampled at its T0. */
TUSK_FN tusk_f32 psa_trace_at(TUSK_GLOBAL const tusk_f32 *v, tusk_u32 n, double x)
{
    if (x <= 0.0)
        return v[0];
    if (x >= (double)(n - 1))
        return v[n - 1];
    const tusk_u32 k = (tusk_u32)x;
    const tusk_f32 f = (tusk_f32)(x - (double)k);
    return v[k] + f * (v[k + 1] - v[k]);
}

/* A basis signal placed `from` samples after a problem's first sample:
 * whole samples k0 = floor(from) (kept within +-2^16: a signal that far
 * lies wholly before or after the problem) and the fraction f. */
TUSK_FN void psa_place_from(double from, tusk_i32 *k0, tusk_f32 *f)
{
    double fl = floor(from);
    *f = (tusk_f32)(from - fl);
    if (!(fl >= -65536.0)) /* NaN too: nothing of it falls on the problem */
        fl = -65536.0;
    if (fl > 65536.0)
        fl = 65536.0;
    *k0 = (tusk_i32)fl;
}

/* m less energy x that signal at the problem's sample t, its samples
 * g[0], g[stride], ..., g[(S - 1) stride]: i = k0 + t; nothing where i <
 * 0, or i = 0 with f = 0 (no charge has moved yet); its last sample where
 * i >= S - 1; else g[i] + f (g[i + 1] - g[i]). */
TUSK_FN tusk_f32 psa_subtract_placed(tusk_f32 m, TUSK_GLOBAL const tusk_f32 *g, tusk_u32 stride, tusk_u32 S,
                                     tusk_i32 k0, tusk_f32 f, tusk_f32 energy, tusk_u32 t)
{
    const tusk_i32 i = k0 + (tusk_i32)t;
    if (i < 0 || (i == 0 && f == 0.0f))
        return m;
    if (i >= (tusk_i32)S - 1)
        return m - energy * g[(S - 1) * stride];
    const tusk_f32 b0 = g[(tusk_u32)i * stride], b1 = g[((tusk_u32)i + 1) * stride];
    return m - energy * (b0 + f * (b1 - b0));
}

/* The leading-edge time (samples) of a trace starting at its sample 0:
 * the line through its 10 % and 50 % crossings of `amplitude`, at 0.
 * NaN if it never crosses. */
TUSK_FN double psa_leading_edge(const tusk_f32 *tr, tusk_u32 n, double amplitude)
{
    double lv[2], at[2];
    lv[0] = 0.1 * amplitude;
    lv[1] = 0.5 * amplitude;
    if (!(amplitude > 0.0))
        return NAN;
    for (int k = 0; k < 2; k++) {
        at[k] = NAN;
        for (tusk_u32 t = 1; t < n; t++)
            if (tr[t] >= lv[k] && tr[t - 1] < lv[k]) {
                at[k] = (double)(t - 1) + (lv[k] - tr[t - 1]) / (tr[t] - tr[t - 1]);
                break;
            }
        if (isnan(at[k]))
            return NAN;
    }
    /* The line through (at0, 0.1 A) and (at1, 0.5 A), at 0. */
    return at[0] - 0.1 * (at[1] - at[0]) / 0.4;
}

/* A refinement round's interaction time of a crystal (record samples;
 * NaN where there is none): where `model`, the sum of its hits' core
 * signals so far (energy x the point's core signal as the basis has it,
 * from the interaction; S samples), has its leading edge, the measured
 * core's lying at t0 + basis_t0. */
TUSK_FN double psa_interaction_time(const tusk_f32 *model, tusk_u32 S, double t0, double basis_t0)
{
    const double le = psa_leading_edge(model, S, (double)model[S - 1]);
    return isfinite(le) ? t0 + basis_t0 - le : NAN;
}

/* A refinement round's T0 of a hit whose point so far has its leading
 * edge `edge` samples after the interaction (the aligned basis has every
 * point's at basis_t0); without an interaction time, where it was. */
TUSK_FN double psa_refined_t0(double inter, tusk_f32 edge, double basis_t0, double at)
{
    return isfinite(inter) ? inter + (double)edge - basis_t0 : at;
}
#ifdef __OPENCL_VERSION__
#pragma OPENCL FP_CONTRACT ON
#endif
#endif

#endif
