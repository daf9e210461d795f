/* track.cl - the search over orders of gamma-ray tracking (tusk/track_cl.h,
 * tracking/README.md).
 *
 * Prepended when embedded: opencl/gpu_common.h and tracking/track_shared.h
 * (the records trk_dev_point_t and trk_dev_result_t, the constants, and
 * the figure of merit and permutation decoding of tracker.c, here in
 * float).
 *
 * One work-group a cluster of 2..TRK_MAX_POINTS points; its work-items
 * take the permutation ranks lid, lid + WG, ..., decode each (factorial
 * number system: lexicographic order), compute the order's figure of merit
 * with the host's formulas (trk_fom_of), keep their lowest (the lowest
 * rank among equals, as ranks rise), then the group reduces to the lowest
 * FoM, the lowest rank on ties. NaN never wins.
 *
 * Constants from the host: TRK_WG (work-items a group, a power of two) and
 * TRK_MEC2 (keV, a float literal).
 */

#if !defined(TRK_WG) || !defined(TRK_MEC2)
#error "track.cl is built with -DTRK_WG and -DTRK_MEC2 (track_cl.c)"
#endif

/* pts[c * TRK_MAX_POINTS + i]: point i of cluster c, count[c] of them;
 * table: the attenuation tables (track_shared.h); the figure of merit's
 * settings as float. */
__kernel __attribute__((reqd_work_group_size(TRK_WG, 1, 1))) void
track_orders(__global const trk_dev_point_t *pts, __global const uint *count, __global const float *table,
             __global trk_dev_result_t *out, const float inner, const float w0, const float w1, const float ln_e0,
             const float inv_step)
{
    const uint c = get_group_id(0);
    const uint lid = get_local_id(0);
    __local float lf[TRK_WG];
    __local uint lr[TRK_WG];

    trk_setup_t su;
    su.inner = inner;
    su.w0 = w0;
    su.w1 = w1;
    su.ln_e0 = ln_e0;
    su.inv_step = inv_step;
    su.mec2 = TRK_MEC2;
    const uint n = min(count[c], (uint)TRK_MAX_POINTS);
    trk_geo_t g;
    g.n = 0;
    g.e0 = 0.0f;
    for (uint i = 0; i < n; i++) {
        const trk_dev_point_t p = pts[c * TRK_MAX_POINTS + i];
        trk_geo_add(&g, &su, p.x, p.y, p.z, p.energy);
    }
    const uint nf = trk_factorial(n);
    float best = INFINITY;
    uint best_rank = TRK_NO_RANK;
    for (uint rank = lid; rank < nf; rank += TRK_WG) {
        uint perm[TRK_MAX_POINTS];
        trk_perm_of_rank(n, rank, perm);
        const float fom = trk_fom_of(&g, table, &su, perm);
        if (fom < best) { /* NaN never */
            best = fom;
            best_rank = rank;
        }
    }
    lf[lid] = best;
    lr[lid] = best_rank;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = TRK_WG / 2; s > 0; s >>= 1) {
        if (lid < s) {
            float fo = lf[lid + s];
            uint ro = lr[lid + s];
            if (fo < lf[lid] || (fo == lf[lid] && ro < lr[lid])) {
                lf[lid] = fo;
                lr[lid] = ro;
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) {
        trk_dev_result_t r;
        r.rank = lr[0] == TRK_NO_RANK ? 0u : lr[0];
        r.fom_bits = as_uint(lf[0]);
        out[c] = r;
    }
}
