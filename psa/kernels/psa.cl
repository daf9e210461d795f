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

#if PSA_HAVE_FP64
/* ---- residual subtraction's later rounds (psa_shared.h) -------------------------
 *
 * One submission runs rounds 1 .. R - 1 of a job's crystals of several
 * hits (psa_cl.c): psa_res_round (the previous round's results taken, the
 * interaction time, this round's problems made) and psa_search over them,
 * round after round, and a last psa_res_round taking the last round's
 * results. Odd rounds search every crystal's hits but the strongest, even
 * ones its strongest: two problem lists (kinds), each sorted by segment
 * once by the host. The host's rounds (psa/analyse.c) do the same with
 * the same formulas, in the same order: no contraction into fused
 * multiply-adds here, as on the host. The records' arrays lie in one
 * buffer, `base`, at the byte offsets given. */
#pragma OPENCL FP_CONTRACT OFF

#define PSA_RES_ARRAY(type, off) ((__global type *)(base + (off)))

/* One round of every crystal taking part: a work-group of PSA_RES_LANES
 * work-items a crystal (group r). First, from round 2 on, work-item 0
 * takes the previous round's results of the crystal's hits searched then
 * (kind (round - 1) & 1): for each hit, the best of its `per` T0 shifts
 * (problem slot[...] for shift j - K, the first of equal FoMs), each
 * shift's best point the minimum over the search's tiles (part[problem *
 * stride + tile], as psa_reduce takes it): its point, FoM and where its
 * signal lies; and, for a refinement round still to come, the crystal's
 * interaction time from the core signals of its hits' points so far
 * (core0: S samples a point, segment s's from pt_at[s]). Then (round <
 * rounds) the work-group makes the traces of the crystal's problems of
 * this round (kind round & 1: its strongest hit or its others), a
 * work-item a channel and sample: the hit's calibrated trace resampled at
 * the round's T0 plus the shift, less every other hit found so far (round
 * 1: the strongest; later: all), energy x its point's aligned signal of
 * the channel placed where it lies, divided by the hit's energy. */
__kernel __attribute__((reqd_work_group_size(PSA_RES_LANES, 1, 1))) void
psa_res_round(__global uchar *base, uint rec_off, uint hit_off, uint trace_off, uint slot_off, uint nrec, uint per,
              int K, uint round, uint rounds, __global const ulong *part, uint stride, __global const uint *seg_n,
              __global const psa_dev_problem_t *info, __global float *trace, __global const float *basis,
              __global const ulong *seg_off, __global const float *edge, __global const uint *pt_at,
              __global const float *core0, double basis_t0)
{
    const uint r = (uint)get_group_id(0), lane = (uint)get_local_id(0);
    if (r >= nrec)
        return;
    __global psa_dev_res_record_t *rec = PSA_RES_ARRAY(psa_dev_res_record_t, rec_off);
    __global psa_dev_res_hit_t *hit = PSA_RES_ARRAY(psa_dev_res_hit_t, hit_off);
    __global const float *rtrace = PSA_RES_ARRAY(const float, trace_off);
    __global const uint *slot = PSA_RES_ARRAY(const uint, slot_off);
    const uint first = rec[r].first, nh = rec[r].n, n0 = nrec * per;
    /* slot of hit m's shift j: kind 0 (m = 0) from r * per; kind 1 from n0,
     * the crystal's others after the hits 1 .. of the crystals before. */
#define PSA_RES_SLOT(m, j) ((m) == 0 ? r * per + (j) : n0 + (first - r + (m) - 1) * per + (j))
    if (lane == 0 && round >= 2) {
        const uint pk = (round - 1) & 1u;
        for (uint m = pk ? 1u : 0u; m < (pk ? nh : 1u); m++) {
            uint bj = 0, bq = 0, bbits = 0;
            float bf = 0.0f;
            for (uint j = 0; j < per; j++) {
                const uint p = slot[PSA_RES_SLOT(m, j)];
                const uint tiles = (seg_n[hit[first + m].segment] + PSA_WG - 1) / PSA_WG;
                __global const ulong *pk_ = part + (size_t)p * stride;
                ulong key = pk_[0];
                for (uint t = 1; t < tiles; t++)
                    key = pk_[t] < key ? pk_[t] : key;
                const uint bits = (uint)(key >> 32);
                const float f = as_float(bits);
                if (j == 0 || f < bf) {
                    bf = f;
                    bj = j;
                    bq = (uint)key;
                    bbits = bits;
                }
            }
            hit[first + m].best = bq;
            hit[first + m].fom_bits = bbits;
            hit[first + m].shift = (int)bj - K;
            hit[first + m].at = hit[first + m].placed + (double)((int)bj - K);
        }
        if (round < rounds) {
            float model[PSA_S];
            for (uint t = 0; t < PSA_S; t++)
                model[t] = 0.0f;
            for (uint m = 0; m < nh; m++) {
                const float en = hit[first + m].energy;
                __global const float *one =
                    core0 + ((size_t)pt_at[hit[first + m].segment] + hit[first + m].best) * PSA_S;
                for (uint t = 0; t < PSA_S; t++)
                    model[t] += en * one[t];
            }
            rec[r].inter = psa_interaction_time(model, PSA_S, rec[r].t0, basis_t0);
        }
    }
    barrier(CLK_GLOBAL_MEM_FENCE);
    if (round >= rounds)
        return;
    const uint kd = round & 1u, found = round == 1 ? 1u : nh, n = rec[r].n_samples;
    const double inter = rec[r].inter;
    for (uint m = kd ? 1u : 0u; m < (kd ? nh : 1u); m++) {
        const uint k = first + m, s = hit[k].segment;
        const double t0 = round < 2 ? rec[r].t0 : psa_refined_t0(inter, edge[pt_at[s] + hit[k].best], basis_t0, hit[k].at);
        const float inv = hit[k].inv_energy;
        const ulong mask = (ulong)hit[k].mask_lo | ((ulong)hit[k].mask_hi << 32);
        const uint nch = (uint)popcount(mask);
        for (uint j = 0; j < per; j++) {
            const psa_dev_problem_t in = info[slot[PSA_RES_SLOT(m, j)]];
            const double a = t0 + (double)((int)j - K);
            for (uint x = lane; x < nch * PSA_S; x += PSA_RES_LANES) {
                const uint q = x / PSA_S, t = x - q * PSA_S;
                ulong mm = mask;
                for (uint i = 0; i < q; i++)
                    mm &= mm - 1;
                const uint ch = 63u - (uint)clz(mm & (~mm + 1));
                float v = psa_trace_at(rtrace + hit[k].trace_at + (size_t)q * n, n, a + (double)t);
                for (uint o = first; o < first + found; o++) {
                    if (o == k)
                        continue;
                    const uint so = hit[o].segment, no = seg_n[so];
                    int k0;
                    float f;
                    psa_place_from(a - hit[o].at, &k0, &f);
                    v = psa_subtract_placed(v, basis + seg_off[so] + (size_t)ch * PSA_S * no + hit[o].best, no, PSA_S,
                                            k0, f, hit[o].energy, t);
                }
                trace[in.trace_at + x] = v * inv;
            }
        }
        if (lane == 0)
            hit[k].placed = t0;
    }
#undef PSA_RES_SLOT
}
#endif
