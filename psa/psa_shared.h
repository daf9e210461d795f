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

#endif
