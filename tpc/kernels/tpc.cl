/* tpc.cl - the TPC slice tracker's steps I-V on an OpenCL device, all
 * slices of a batch in each launch (spec §1.3 and §1.6; the host side is
 * tpc_cl.c, the design tpc/README.md). Preceded in the embedded source by
 * opencl/gpu_common.h and tpc_shared.h: the records and every step's
 * arithmetic come from there; these kernels only map work-items onto it.
 *
 * Build-time constants (-D):
 *   TPC_WG   work-items of a group (the scans' local room)
 *   TPC_DIV_VIA_DOUBLE  divide and take roots in double (a device without a
 *            correctly rounded float division), see tpc_shared.h
 *
 * Kernels, in order:
 *   tpc_neighbours_k   step I, a work-item per cluster
 *   tpc_clean_k        step II, a work-item per cluster
 *   tpc_start_k        step III: a work-item per cluster flags the start hits
 *   tpc_scan_blocks,   an exclusive prefix sum of a u32 array (per group, the
 *   tpc_scan_top,      groups' sums, then added back): the start hits' places
 *   tpc_scan_add       in (row, cluster) order, and later the tracks' places
 *   tpc_start_write    the start hits written there
 *   tpc_slice_starts   each slice's first start hit and count
 *   tpc_construct_k    step IV, a work-item per tracklet: row hits [row][tracklet]
 *                      (coalesced, seed §6.3.1.1), cluster weights by atomic_max
 *   tpc_select_count_k step V, a work-item per tracklet: its tracks and clusters
 *   tpc_select_write_k the tracks and clusters written at their prefix-sum places,
 *                      in tracklet order: the order the CPU makes them in
 *   tpc_copy           the bandwidth probe: a plain copy */

#ifndef TPC_WG
#define TPC_WG 128
#endif

/* The slice, its rows and the row of launch cluster c. */
#define SLICE_OF(c) (row_of[c] / TPC_ROWS)

__kernel void tpc_neighbours_k(__global const tpc_row_t *rows, __global const uint *row_of, __global const uint *yz,
                               __global const ushort *fbin, tpc_params_t p, __global ushort *up, __global ushort *dn,
                               uint n)
{
    uint c = get_global_id(0);
    if (c >= n)
        return;
    uint lr = row_of[c], s = lr / TPC_ROWS, r = lr - s * TPC_ROWS;
    __global const tpc_row_t *sr = rows + s * TPC_ROWS;
    tpc_neighbours(sr, r, c - sr[r].first, yz, fbin, p, up, dn);
}

__kernel void tpc_clean_k(__global const tpc_row_t *rows, __global const uint *row_of, __global const ushort *up,
                          __global const ushort *dn, __global uint *link, uint n)
{
    uint c = get_global_id(0);
    if (c >= n)
        return;
    uint lr = row_of[c], s = lr / TPC_ROWS, r = lr - s * TPC_ROWS;
    __global const tpc_row_t *sr = rows + s * TPC_ROWS;
    tpc_clean(sr, r, c - sr[r].first, up, dn, link);
}

__kernel void tpc_start_k(__global const tpc_row_t *rows, __global const uint *row_of, __global const uint *link,
                          tpc_params_t p, __global uint *flag, uint n)
{
    uint c = get_global_id(0);
    if (c >= n)
        return;
    uint lr = row_of[c], s = lr / TPC_ROWS, r = lr - s * TPC_ROWS;
    __global const tpc_row_t *sr = rows + s * TPC_ROWS;
    flag[c] = tpc_is_start(sr, r, c - sr[r].first, link, p);
}

/* ---- an exclusive prefix sum -------------------------------------------------------------
 * Each group scans TPC_WG x per consecutive entries (per from the host)
 * and writes its total to bsum[group]; tpc_scan_top scans the totals (one
 * group) and writes the grand total to a word of the counters;
 * tpc_scan_add adds each group's offset (block: TPC_WG x per). */

/* The group's exclusive scan of the values each work-item brings, in local
 * memory; returns the item's offset and the group's total in *sum. */
static uint group_scan(uint v, __local uint *part, uint *sum)
{
    uint lid = get_local_id(0), wg = get_local_size(0);
    part[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint d = 1; d < wg; d *= 2) {
        uint x = lid >= d ? part[lid - d] : 0u;
        barrier(CLK_LOCAL_MEM_FENCE);
        part[lid] += x;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    uint incl = part[lid];
    *sum = part[wg - 1];
    barrier(CLK_LOCAL_MEM_FENCE);
    return incl - v;
}

__kernel void tpc_scan_blocks(__global const uint *in, __global uint *out, uint n, uint per, __global uint *bsum)
{
    __local uint part[TPC_WG];
    uint lid = get_local_id(0), wg = get_local_size(0), g = get_group_id(0);
    uint lo = (g * wg + lid) * per;
    uint sum = 0;
    for (uint k = 0; k < per; k++)
        sum += lo + k < n ? in[lo + k] : 0u;
    uint total;
    uint off = group_scan(sum, part, &total);
    for (uint k = 0; k < per; k++)
        if (lo + k < n) {
            uint v = in[lo + k];
            out[lo + k] = off;
            off += v;
        }
    if (lid == 0)
        bsum[g] = total;
}

__kernel void tpc_scan_top(__global uint *bsum, uint nb, __global tpc_counters_t *counters, uint which)
{
    __local uint part[TPC_WG];
    uint lid = get_local_id(0), wg = get_local_size(0);
    uint per = (nb + wg - 1) / wg, lo = lid * per;
    uint sum = 0;
    for (uint k = 0; k < per; k++)
        sum += lo + k < nb ? bsum[lo + k] : 0u;
    uint all;
    uint off = group_scan(sum, part, &all);
    for (uint k = 0; k < per; k++)
        if (lo + k < nb) {
            uint v = bsum[lo + k];
            bsum[lo + k] = off;
            off += v;
        }
    if (lid == 0)
        ((__global uint *)counters)[which] = all;
}

__kernel void tpc_scan_add(__global uint *out, uint n, uint block, __global const uint *bsum)
{
    uint i = get_global_id(0);
    if (i >= n)
        return;
    out[i] += bsum[i / block];
}

__kernel void tpc_start_write(__global const uint *flag, __global const uint *pos, __global uint *start, uint n)
{
    uint c = get_global_id(0);
    if (c < n && flag[c])
        start[pos[c]] = c;
}

__kernel void tpc_slice_starts(__global tpc_dev_slice_t *slices, __global const uint *pos, uint n, uint n_slices,
                               __global tpc_counters_t *counters)
{
    uint s = get_global_id(0);
    if (s >= n_slices)
        return;
    uint total = counters->n_start;
    uint fc = slices[s].first_cluster, lc = fc + slices[s].n_clusters;
    uint a = fc < n ? pos[fc] : total, b = lc < n ? pos[lc] : total;
    slices[s].first_start = a;
    slices[s].n_start = b - a;
    if (b - a > TPC_MAX_TRACKLETS)
        atomic_or(&counters->status, TPC_STATUS_TRACKLETS);
}

/* ---- step IV ---------------------------------------------------------------------------- */

__kernel void tpc_construct_k(__global const tpc_row_t *rows, __global tpc_dev_slice_t *slices,
                              __global const uint *row_of, __global const uint *yz, __global const ushort *fbin,
                              __global const uint *link, tpc_params_t p, __global const uint *start, uint n_start,
                              __global ushort *hits, __global tpc_tracklet_t *tracklets, __global uint *weight,
                              __global tpc_counters_t *counters)
{
    uint t = get_global_id(0);
    if (t >= n_start)
        return;
    uint c = start[t];
    uint lr = row_of[c], s = lr / TPC_ROWS, r0 = lr - s * TPC_ROWS;
    __global const tpc_row_t *sr = rows + s * TPC_ROWS;
    __global ushort *h = hits + t;
    __global tpc_tracklet_t *tl = tracklets + t;
    tpc_construct(sr, yz, fbin, link, p, slices[s].bzk, r0, c - sr[r0].first, h, n_start, tl);
    uint nh = tl->n_hits;
    if (nh == 0u)
        return;
    atomic_inc(&counters->n_tracklets);
    atomic_inc(&slices[s].n_tracklets);
    uint key = tpc_weight_key(nh, t - slices[s].first_start);
    for (uint r = tl->first_row; r <= tl->last_row; r++) {
        uint k = h[r * n_start];
        if (k != TPC_NONE)
            atomic_max(&weight[sr[r].first + k], key);
    }
}

/* ---- step V ----------------------------------------------------------------------------- */

__kernel void tpc_select_count_k(__global const tpc_row_t *rows, __global const tpc_dev_slice_t *slices,
                                 __global const uint *row_of, tpc_params_t p, __global const uint *start,
                                 uint n_start, __global const ushort *hits, __global const tpc_tracklet_t *tracklets,
                                 __global const uint *weight, __global uint *n_tracks, __global uint *n_hits)
{
    uint t = get_global_id(0);
    if (t >= n_start)
        return;
    uint nh = tracklets[t].n_hits;
    n_tracks[t] = 0u;
    n_hits[t] = 0u;
    if (nh == 0u)
        return;
    uint lr = row_of[start[t]], s = lr / TPC_ROWS;
    tpc_segments_t seg;
    tpc_select(rows + s * TPC_ROWS, weight, tpc_weight_key(nh, t - slices[s].first_start), tracklets[t].first_row,
               tracklets[t].last_row, p, hits + t, n_start, &seg);
    n_tracks[t] = seg.n;
    n_hits[t] = seg.total;
}

__kernel void tpc_select_write_k(__global const tpc_row_t *rows, __global const tpc_dev_slice_t *slices,
                                 __global const uint *row_of, tpc_params_t p, __global const uint *start,
                                 uint n_start, __global const ushort *hits, __global const tpc_tracklet_t *tracklets,
                                 __global const uint *weight, __global const uint *track_at,
                                 __global const uint *hit_at, __global tpc_sel_track_t *out_tracks,
                                 __global tpc_tracklet_t *out_params, __global uint *out_hits)
{
    uint t = get_global_id(0);
    if (t >= n_start)
        return;
    uint nh = tracklets[t].n_hits;
    if (nh == 0u)
        return;
    uint lr = row_of[start[t]], s = lr / TPC_ROWS;
    __global const tpc_row_t *sr = rows + s * TPC_ROWS;
    uint key = tpc_weight_key(nh, t - slices[s].first_start);
    tpc_segments_t seg;
    tpc_select(sr, weight, key, tracklets[t].first_row, tracklets[t].last_row, p, hits + t, n_start, &seg);
    uint ti = track_at[t], hi = hit_at[t];
    for (uint g = 0; g < seg.n; g++) {
        uint got = tpc_select_emit(sr, weight, key, seg.first[g], seg.last[g], hits + t, n_start, out_hits + hi);
        tpc_sel_track_t o;
        o.tracklet = t;
        o.first_hit = hi;
        o.n_hits = got;
        o.first_row = seg.first[g];
        out_tracks[ti] = o;
        out_params[ti] = tracklets[t];
        ti++;
        hi += got;
    }
}

/* ---- the bandwidth probe ------------------------------------------------------------------- */

__kernel void tpc_copy(__global const uint4 *a, __global uint4 *b, uint n)
{
    for (uint i = get_global_id(0); i < n; i += get_global_size(0))
        b[i] = a[i];
}
