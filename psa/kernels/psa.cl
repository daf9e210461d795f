/* psa.cl - the PSA grid search on a device (psa/psa_cl.c, tusk/psa_cl.h;
 * the design is in psa/README.md, "OpenCL backend").
 *
 * Prepended when embedded: opencl/gpu_common.h and psa/psa_shared.h (the
 * records psa_dev_problem_t, psa_dev_work_t and psa_dev_result_t, the
 * PSA_POW_* codes, PSA_PG_MAX, the local memory's size and psa_pow_poly).
 *
 * OpenCL C 1.2 only (PoCL and NVIDIA): no work-group functions, no
 * sub-groups, no 64-bit atomics.
 *
 * The basis of a segment is [channel][sample][point], point fastest. A
 * work-group takes one tile of PSA_WG consecutive points of one segment
 * (a work-item a point) and up to PSA_PG problems of that segment. It
 * walks the union of the problems' channels in ascending order; for each
 * channel it copies those problems' traces of that channel into local
 * memory, then every work-item reads its point's basis row once per sample
 * (coalesced) and adds |m - b|^p to the FoM of every problem that has the
 * channel. Each basis value read from global memory so serves PSA_PG
 * problems, and every problem's FoM is summed in the reference's order
 * (its channels ascending, then samples). Then, problem by problem, the
 * group's minimum of (FoM, point) - the lowest point on equal FoMs, NaN
 * counted as +inf - goes to part[problem * stride + tile]; psa_reduce
 * takes the minimum over the tiles.
 *
 * Build options (psa_cl.c passes them all):
 *   -DPSA_S=N      samples per trace
 *   -DPSA_WG=N     work-group size, a power of two
 *   -DPSA_PG=N     problems per work-group, 1 to PSA_PG_MAX
 *   -DPSA_P=X      the exponent, a float literal (hexadecimal: exact)
 *   -DPSA_POW=K    |d|^p by PSA_POW_POWR, _NATIVE, _SQUARE (p = 2), _ABS
 *                  (p = 1) or _POLY (psa_pow_poly)
 */

#if !defined(PSA_S) || !defined(PSA_WG) || !defined(PSA_PG) || !defined(PSA_P) || !defined(PSA_POW)
#error "psa.cl is built with -DPSA_S, -DPSA_WG, -DPSA_PG, -DPSA_P and -DPSA_POW (psa_cl.c)"
#endif
#if PSA_PG < 1 || PSA_PG > PSA_PG_MAX
#error "PSA_PG is 1 to PSA_PG_MAX"
#endif

#if PSA_POW == PSA_POW_POLY
#define PSA_TERM(d) psa_pow_poly(d, PSA_P)
#elif PSA_POW == PSA_POW_POWR
#define PSA_TERM(d) powr(fabs(d), PSA_P)
#elif PSA_POW == PSA_POW_NATIVE
#define PSA_TERM(d) native_powr(fabs(d), PSA_P)
#elif PSA_POW == PSA_POW_SQUARE
#define PSA_TERM(d) ((d) * (d))
#elif PSA_POW == PSA_POW_ABS
#define PSA_TERM(d) fabs(d)
#else
#error "PSA_POW is one of the PSA_POW_* codes"
#endif

/* A FoM and a point as one key whose order is (FoM, point): a FoM is
 * never negative, and the bits of non-negative floats order as the
 * floats; NaN counts as +inf. */
inline ulong psa_key(float f, uint q)
{
    return ((ulong)as_uint(isnan(f) ? INFINITY : f) << 32) | q;
}

/* info[k]: problem k of the chunk; work[g]: work-group g + wbase.
 * seg_off: where each segment's block starts in `basis` (floats); seg_n:
 * points per segment. part[k * stride + tile]: the key of the tile's best
 * point for problem k. Local memory: the problems' traces of one channel
 * while summing, the reduction's keys after (PSA_SCRATCH_WORDS). */
__kernel __attribute__((reqd_work_group_size(PSA_WG, 1, 1))) void
psa_search(__global const float *basis, __global const ulong *seg_off, __global const uint *seg_n,
           __global const psa_dev_work_t *work, uint wbase, __global const psa_dev_problem_t *info,
           __global const float *trace, uint stride, __global ulong *part)
{
    __local ulong scratch[PSA_SCRATCH_WORDS(PSA_PG, PSA_S, PSA_WG)];
    __local float *lm = (__local float *)scratch;
    __local ulong *keys = scratch;
    __local ulong lmask[PSA_PG];
    __local uint loff[PSA_PG];

    const uint lid = (uint)get_local_id(0);
    const psa_dev_work_t w = work[wbase + (uint)get_group_id(0)];
    const uint s = w.segment, tile = w.tile, first = w.first, count = w.count;
    const uint n = seg_n[s];
    const uint q = tile * PSA_WG + lid;
    const bool active = q < n;
    __global const float *blk = basis + seg_off[s];

    if (lid < PSA_PG) {
        ulong m = 0;
        uint off = 0;
        if (lid < count) {
            const psa_dev_problem_t in = info[first + lid];
            off = in.trace_at;
            m = (ulong)in.mask_lo | ((ulong)in.mask_hi << 32);
        }
        lmask[lid] = m;
        loff[lid] = off;
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    ulong all = 0;
    for (uint p = 0; p < PSA_PG; p++)
        all |= lmask[p];

    float acc[PSA_PG];
#pragma unroll
    for (uint p = 0; p < PSA_PG; p++)
        acc[p] = 0.0f;

    while (all != 0) {
        const ulong low = all & (~all + 1);
        const uint c = 63u - (uint)clz(low);
        all ^= low;
        /* Which problems have channel c; their traces of it into local memory. */
        uint has = 0;
        for (uint p = 0; p < PSA_PG; p++)
            has |= (uint)((lmask[p] >> c) & 1) << p;
        const ulong below = low - 1;
        barrier(CLK_LOCAL_MEM_FENCE); /* the last channel's traces are read */
        for (uint k = lid; k < PSA_PG * PSA_S; k += PSA_WG) {
            const uint p = k / PSA_S, t = k - p * PSA_S;
            if ((has >> p) & 1)
                lm[k] = trace[loff[p] + (uint)popcount(lmask[p] & below) * PSA_S + t];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (active) {
            /* acc + term rounded as the reference rounds it: no fused
             * multiply-add of the p = 2 square into the sum. */
#pragma OPENCL FP_CONTRACT OFF
            __global const float *row = blk + (size_t)c * PSA_S * n + q;
            for (uint t = 0; t < PSA_S; t++) {
                const float b = row[(size_t)t * n];
#pragma unroll
                for (uint p = 0; p < PSA_PG; p++)
                    if ((has >> p) & 1) {
                        const float d = lm[p * PSA_S + t] - b;
                        acc[p] += PSA_TERM(d);
                    }
            }
        }
    }

    /* The group's minimum for every problem at once: a tree over keys. */
    barrier(CLK_LOCAL_MEM_FENCE); /* lm is read no more: keys take its place */
#pragma unroll
    for (uint p = 0; p < PSA_PG; p++)
        keys[p * PSA_WG + lid] = active ? psa_key(acc[p], q) : ~(ulong)0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint step = PSA_WG / 2; step > 0; step >>= 1) {
        if (lid < step)
            for (uint p = 0; p < count; p++) {
                const ulong a = keys[p * PSA_WG + lid], b = keys[p * PSA_WG + lid + step];
                keys[p * PSA_WG + lid] = b < a ? b : a;
            }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid < count)
        part[(size_t)(first + lid) * stride + tile] = keys[lid * PSA_WG];
}

/* The minimum over a problem's tiles: out[obase + k] for problem k of the
 * chunk. */
__kernel void psa_reduce(__global const psa_dev_problem_t *info, __global const uint *seg_n, uint nprob, uint stride,
                         __global const ulong *part, uint obase, __global psa_dev_result_t *out)
{
    const uint k = (uint)get_global_id(0);
    if (k >= nprob)
        return;
    const uint tiles = (seg_n[info[k].segment] + PSA_WG - 1) / PSA_WG;
    __global const ulong *pk = part + (size_t)k * stride;
    ulong best = pk[0];
    for (uint t = 1; t < tiles; t++)
        best = pk[t] < best ? pk[t] : best;
    psa_dev_result_t r;
    r.best = (uint)best;
    r.fom_bits = (uint)(best >> 32);
    out[obase + k] = r;
}

/* y[i] = |x[i]|^p as the search computes it: psa_cl.c checks the power
 * function against the host's once, after the build. */
__kernel void psa_pow_check(__global const float *x, __global float *y, uint n)
{
    const uint i = (uint)get_global_id(0);
    if (i < n)
        y[i] = PSA_TERM(x[i]);
}
