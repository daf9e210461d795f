/* selftest_shared.h - what tusk_cl_selftest (selftest.c) and its kernels
 * (kernels/selftest.cl) share (internal): the sizes and the chi-square's
 * term, written once.
 *
 * Written in the subset of C both compilers read, with the names of
 * gpu_common.h. The kernels' embedded source is gpu_common.h, this file
 * and kernels/selftest.cl, concatenated by tools/embed-text.sh; the host
 * includes this file. */
#ifndef TUSK_SELFTEST_SHARED_H
#define TUSK_SELFTEST_SHARED_H

#ifndef __OPENCL_VERSION__
#include "opencl/gpu_common.h"
#endif

#define ST_LEN 64   /* samples per signal */
#define ST_BASIS 32 /* basis signals */

/* The chi-square's arithmetic: float on the device, double on the host,
 * which checks the device against the more precise sum. */
#ifdef __OPENCL_VERSION__
#define ST_R float
#else
#define ST_R double
#endif

/* One sample's term of the chi-square of a signal against a basis signal. */
TUSK_FN ST_R st_chi2_term(tusk_f32 s, tusk_f32 b)
{
    const ST_R d = (ST_R)s - (ST_R)b;
    return d * d;
}

#endif
