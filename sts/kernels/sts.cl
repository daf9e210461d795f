/* sts.cl - the STS local reconstruction on an OpenCL device, the data
 * resident on the device from the unsorted digis to the hits (spec §4.3
 * and §4.6; the host side is sts_cl.c, the design sts/README.md).
 * Preceded in the embedded source by opencl/gpu_common.h and
 * sts_shared.h: the records and every formula come from there.
 *
 * Work division (sts/README.md, "Load"): every kernel runs over tiles, a
 * work-group a tile; a table from the host (uint2: module, tile of the
 * module) names each group's tile, and a module has as many tiles as its
 * size needs (sts_tiles, the STS_TILE_* sizes of sts_shared.h). So a
 * module of seven times the average digis (and some fifty times the
 * average hit pairs) runs on many groups, not on one group for the whole
 * kernel while the device idles. Nothing depends on how the groups are
 * scheduled: sorts are by whole keys, clusters are numbered and hits placed
 * by scans over tiles in a fixed order, and the atomics only add, OR or
 * take maxima.
 *
 * Build-time constants (-D):
 *   STS_CH   channels a module may have at most (2 x strips), local-memory arrays
 *   STS_WG   work-items a group at most (the local scans' room); a kernel may
 *            run with fewer (sts_cl.c: as many as it can, up to the asked size)
 *   STS_DIV_VIA_DOUBLE  divide floats in double (a device without a correctly
 *            rounded float division), see sts_shared.h
 *
 * Kernels, in order, with their tiles:
 *   sts_digi_count     digi tiles: each tile's channel histogram (a row of its
 *                      module's count area); zeroes the connectors
 *   sts_digi_colscan   channel tiles: per channel, the rows scanned down the
 *                      tiles (where each tile's digis of the channel start) and
 *                      the channel's total
 *   sts_digi_scatter   digi tiles: the totals scanned (the channel offsets of
 *                      step 2, written by tile 0), each digi into its channel
 *   sts_digi_rank      digi tiles: each channel's digis by the whole key, a
 *                      digi put at its rank among its channel's (sort by ranks)
 *   sts_link           channel tiles: the two-pointer walk of channel c against
 *                      c + 1 (seed Code 3), links set with atomic ORs
 *   sts_heads          digi tiles: the chain heads (no hasPrevious) of each tile
 *   sts_clusters       digi tiles: the heads numbered in digi order (the earlier
 *                      tiles' heads, then a scan), each cluster computed from its
 *                      chain (seed Code 6); the sides' largest time variance by
 *                      atomic maximum (Code 9), one a group
 *   (the host reads the module counts and makes the cluster tiles)
 *   sts_cl_count, sts_cl_colscan, sts_cl_scatter, sts_cl_rank
 *                      the same four steps for the clusters of both sides by
 *                      (side, floor(time) >> shift), then each bucket by the key
 *                      (floor(time), index)
 *   sts_hits_count     front tiles: a work-item a front cluster in time order,
 *                      its hits counted (Code 7) and its window's start kept
 *   (the host reads the module counts, places each module's hits and clusters)
 *   sts_hits_write     front tiles: the earlier tiles' hits, then a scan, place
 *                      each front cluster's hits; the clusters copied packed
 *   sts_copy           the bandwidth probe: a plain copy */

#ifndef STS_CH
#define STS_CH 2048
#endif
#ifndef STS_WG
#define STS_WG 256
#endif

/* Exclusive prefix sum of a[0..n) in local memory by the whole group:
 * every work-item sums a contiguous piece, the pieces' sums are scanned
 * (Hillis-Steele over STS_WG entries), then added back. Returns the total.
 * Every work-item must call it. */
static uint scan_local(__local uint *a, uint n, __local uint *part)
{
    uint lid = get_local_id(0), wg = get_local_size(0);
    uint per = (n + wg - 1) / wg, lo = min(n, lid * per), hi = min(n, lo + per);
    uint sum = 0;
    for (uint i = lo; i < hi; i++) {
        uint v = a[i];
        a[i] = sum;
        sum += v;
    }
    part[lid] = sum;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint d = 1; d < wg; d *= 2) {
        uint v = lid >= d ? part[lid - d] : 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        part[lid] += v;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    uint before = lid > 0 ? part[lid - 1] : 0, total = part[wg - 1];
    for (uint i = lo; i < hi; i++)
        a[i] += before;
    barrier(CLK_LOCAL_MEM_FENCE);
    return total;
}

/* Sort a[0..n) ascending in global memory by one work-item: heapsort
 * (no extra room, n log n whatever the order). Only for a bucket larger
 * than STS_RANK_MAX, which real data do not make. */
static void heapsort_keys(__global ulong *a, uint n)
{
    if (n < 2)
        return;
    for (uint start = n / 2; start-- > 0;) {
        uint root = start;
        ulong v = a[root];
        for (;;) {
            uint child = 2 * root + 1;
            if (child >= n)
                break;
            if (child + 1 < n && a[child + 1] > a[child])
                child++;
            if (a[child] <= v)
                break;
            a[root] = a[child];
            root = child;
        }
        a[root] = v;
    }
    for (uint end = n - 1; end > 0; end--) {
        ulong v = a[end];
        a[end] = a[0];
        uint root = 0;
        for (;;) {
            uint child = 2 * root + 1;
            if (child >= end)
                break;
            if (child + 1 < end && a[child + 1] > a[child])
                child++;
            if (a[child] <= v)
                break;
            a[root] = a[child];
            root = child;
        }
        a[root] = v;
    }
}

/* The sum of v over the group, for every work-item (integers: the order
 * of the additions does not matter). Every work-item must call it. */
static uint sum_local(uint v, __local uint *acc)
{
    if (get_local_id(0) == 0)
        *acc = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (v)
        atomic_add(acc, v);
    barrier(CLK_LOCAL_MEM_FENCE);
    uint s = *acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    return s;
}

/* The sum of the first j entries of a[0..) by the group (the items of a
 * module's earlier tiles: at most a few hundred). */
static uint sum_before(__global const uint *a, uint j, __local uint *acc)
{
    uint s = 0;
    for (uint q = get_local_id(0); q < j; q += get_local_size(0))
        s += a[q];
    return sum_local(s, acc);
}

/* A tile's contiguous share for a work-item: [*a, *b) of [lo, hi), the
 * shares in work-item order (so that one scan over the group numbers
 * what the tile holds in order). */
static void share(uint lo, uint hi, uint *a, uint *b)
{
    uint wg = get_local_size(0), per = (hi - lo + wg - 1) / wg;
    *a = min(hi, lo + (uint)get_local_id(0) * per);
    *b = min(hi, *a + per);
}

/* ---- sorting a module's keys by bucket (digis by channel, clusters by side and time) ------------
 * A module's count area has rows of `width` (= buckets + 1) words: rows
 * 0 .. tiles - 1 each tile's bucket counts (then, scanned, where its keys
 * of each bucket start within the bucket), row `tiles` the buckets'
 * totals, row tiles + 1 the buckets' offsets (an exclusive scan, the last
 * entry the total). The count and the scatter walk a tile's keys in the
 * same order; within a tile the order of a bucket's keys is left to local
 * atomics, which the rank step makes irrelevant. */

/* Rows 0 .. rows - 1 scanned down, per bucket of [b_lo, b_hi); row `rows` the totals. */
static void column_scan(__global uint *area, uint rows, uint width, uint b_lo, uint b_hi)
{
    for (uint b = b_lo + get_local_id(0); b < b_hi; b += get_local_size(0)) {
        uint s = 0;
        for (uint r = 0; r < rows; r++) {
            uint v = area[r * width + b];
            area[r * width + b] = s;
            s += v;
        }
        area[rows * width + b] = s;
    }
}

/* hist[0 .. B): where tile j's keys of each bucket go in the module; the
 * offsets row written by tile 0. */
static void tile_bases(__global uint *area, uint rows, uint B, uint j, __local uint *hist, __local uint *part)
{
    uint lid = get_local_id(0), wg = get_local_size(0), width = B + 1;
    for (uint b = lid; b < B; b += wg)
        hist[b] = area[rows * width + b];
    if (lid == 0)
        hist[B] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    scan_local(hist, B + 1, part); /* hist[B]: the total */
    if (j == 0)
        for (uint b = lid; b <= B; b += wg)
            area[(rows + 1) * width + b] = hist[b];
    for (uint b = lid; b < B; b += wg)
        hist[b] += area[j * width + b];
    barrier(CLK_LOCAL_MEM_FENCE);
}

/* The key at position i of src (a module's keys, grouped by bucket; its
 * bucket [lo, hi)) put at its place in dst: lo + the keys of the bucket
 * below it, and the equal ones before it (equal keys are identical
 * digis, interchangeable). A bucket above STS_RANK_MAX keys is copied and
 * sorted by the work-item of its first position instead. */
static void rank_place(__global const ulong *src, __global ulong *dst, uint i, uint lo, uint hi)
{
    ulong key = src[i];
    if (hi - lo <= STS_RANK_MAX) {
        uint r = 0;
        for (uint q = lo; q < hi; q++) {
            ulong v = src[q];
            r += v < key || (v == key && q < i);
        }
        dst[lo + r] = key;
    } else if (i == lo) {
        for (uint q = lo; q < hi; q++)
            dst[q] = src[q];
        heapsort_keys(dst + lo, hi - lo);
    }
}

/* ---- steps 1-2: the digis sorted by the 64-bit key; the channel offsets ------------------------- */

__kernel void sts_digi_count(__global const sts_dev_module_t *mods, __global const uint2 *tiles,
                             __global const ulong *in, __global uint *area, __global uint *conn)
{
    __local uint hist[STS_CH];
    uint2 t = tiles[get_group_id(0)];
    uint lid = get_local_id(0), wg = get_local_size(0), j = t.y;
    sts_dev_module_t g = mods[t.x];
    uint C = 2 * g.strips, lo = j * STS_TILE_DIGIS, hi = min(g.n, lo + STS_TILE_DIGIS);
    for (uint c = lid; c < C; c += wg)
        hist[c] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint i = lo + lid; i < hi; i += wg) {
        atomic_inc(&hist[sts_key_channel(in[g.first + i])]);
        conn[g.first + i] = 0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    __global uint *row = area + g.first_dcount + j * (C + 1);
    for (uint c = lid; c < C; c += wg)
        row[c] = hist[c];
}

__kernel void sts_digi_colscan(__global const sts_dev_module_t *mods, __global const uint2 *tiles,
                               __global uint *area)
{
    uint2 t = tiles[get_group_id(0)];
    sts_dev_module_t g = mods[t.x];
    uint C = 2 * g.strips, lo = t.y * STS_TILE_CHANNELS;
    column_scan(area + g.first_dcount, sts_tiles(g.n, STS_TILE_DIGIS), C + 1, lo, min(C, lo + STS_TILE_CHANNELS));
}

__kernel void sts_digi_scatter(__global const sts_dev_module_t *mods, __global const uint2 *tiles,
                               __global const ulong *in, __global uint *area, __global ulong *tmp)
{
    __local uint hist[STS_CH + 1];
    __local uint part[STS_WG];
    uint2 t = tiles[get_group_id(0)];
    uint lid = get_local_id(0), wg = get_local_size(0), j = t.y;
    sts_dev_module_t g = mods[t.x];
    uint C = 2 * g.strips, lo = j * STS_TILE_DIGIS, hi = min(g.n, lo + STS_TILE_DIGIS);
    tile_bases(area + g.first_dcount, sts_tiles(g.n, STS_TILE_DIGIS), C, j, hist, part);
    for (uint i = lo + lid; i < hi; i += wg) {
        ulong k = in[g.first + i];
        tmp[g.first + atomic_inc(&hist[sts_key_channel(k)])] = k;
    }
}

__kernel void sts_digi_rank(__global const sts_dev_module_t *mods, __global const uint2 *tiles,
                            __global const ulong *tmp, __global const uint *area, __global ulong *keys)
{
    uint2 t = tiles[get_group_id(0)];
    uint lid = get_local_id(0), wg = get_local_size(0);
    sts_dev_module_t g = mods[t.x];
    uint lo = t.y * STS_TILE_DIGIS, hi = min(g.n, lo + STS_TILE_DIGIS);
    __global const uint *o = area + g.first_off;
    for (uint i = lo + lid; i < hi; i += wg) {
        uint c = sts_key_channel(tmp[g.first + i]);
        rank_place(tmp + g.first, keys + g.first, i, o[c], o[c + 1]);
    }
}

/* ---- step 3: neighbour links, channel-wise (seed Code 3) ------------------------------------- */

__kernel void sts_link(__global const sts_dev_module_t *mods, __global const uint2 *tiles,
                       __global const ulong *keys, __global const uint *area, __global uint *conn, uint delta)
{
    uint2 t = tiles[get_group_id(0)];
    uint lid = get_local_id(0), wg = get_local_size(0);
    sts_dev_module_t g = mods[t.x];
    uint C = 2 * g.strips, c_lo = t.y * STS_TILE_CHANNELS, c_hi = min(C - 1, c_lo + STS_TILE_CHANNELS);
    __global const ulong *k = keys + g.first;
    __global uint *cn = conn + g.first;
    __global const uint *o = area + g.first_off;
    for (uint c = c_lo + lid; c < c_hi; c += wg) {
        if (c == g.strips - 1)
            continue; /* the front side's last strip and the back side's first are not neighbours */
        uint cur = o[c], cur_end = o[c + 1], next = o[c + 1], next_end = o[c + 2];
        for (; cur < cur_end; cur++) {
            uint tc = sts_key_time(k[cur]);
            while (next < next_end) {
                int ord = sts_link_order(tc, sts_key_time(k[next]), delta);
                if (ord > 0)
                    break;
                if (ord < 0) {
                    next++;
                    continue;
                }
                atomic_or(&cn[cur], next << 1);
                atomic_or(&cn[next], STS_HAS_PREVIOUS);
                next++;
                break;
            }
        }
    }
}

/* ---- step 4: clusters, digi-wise (seed Code 6) -------------------------------------------------- */

__kernel void sts_heads(__global const sts_dev_module_t *mods, __global const uint2 *tiles,
                        __global const uint *conn, __global uint *theads)
{
    __local uint acc;
    uint2 t = tiles[get_group_id(0)];
    uint lid = get_local_id(0), wg = get_local_size(0);
    sts_dev_module_t g = mods[t.x];
    uint lo = t.y * STS_TILE_DIGIS, hi = min(g.n, lo + STS_TILE_DIGIS), heads = 0;
    for (uint i = lo + lid; i < hi; i += wg)
        heads += !(conn[g.first + i] & STS_HAS_PREVIOUS);
    heads = sum_local(heads, &acc);
    if (lid == 0)
        theads[get_group_id(0)] = heads;
}

__kernel void sts_clusters(__global const sts_dev_module_t *mods, __global const uint2 *tiles,
                           __global const ulong *keys, __global const uint *conn, __global const uint *theads,
                           __global sts_cluster_t *cl, __global ulong *ckey, __global sts_dev_counts_t *counts,
                           __constant sts_params_t *p)
{
    __local uint flag[STS_WG];
    __local uint part[STS_WG];
    __local uint acc[4];      /* the sum's room; fronts; the two sides' largest time variance */
    uint gid = get_group_id(0);
    uint2 t = tiles[gid];
    uint lid = get_local_id(0), m = t.x, j = t.y;
    sts_dev_module_t g = mods[m];
    __global const ulong *k = keys + g.first;
    __global const uint *cn = conn + g.first;
    uint base = sum_before(theads + gid - j, j, &acc[0]); /* the heads of the module's earlier tiles */
    if (lid == 0)
        acc[1] = acc[2] = acc[3] = 0;
    uint lo = j * STS_TILE_DIGIS, hi = min(g.n, lo + STS_TILE_DIGIS), a, b, heads = 0;
    share(lo, hi, &a, &b);
    for (uint i = a; i < b; i++)
        heads += !(cn[i] & STS_HAS_PREVIOUS);
    flag[lid] = heads;
    barrier(CLK_LOCAL_MEM_FENCE);
    uint total = scan_local(flag, get_local_size(0), part);
    uint idx = base + flag[lid], fronts = 0, max_front = 0, max_back = 0;
    for (uint i = a; i < b; i++) {
        if (cn[i] & STS_HAS_PREVIOUS)
            continue;
        sts_acc_t s;
        sts_acc_start(&s, k[i]);
        for (uint q = sts_conn_next(cn[i]); q; q = sts_conn_next(cn[q]))
            sts_acc_add(&s, k[q]);
        sts_cluster_t c;
        sts_cluster_finish(&s, g.strips, p->tvar_digi, p->qvar, p->sys_var, &c);
        cl[g.first + idx] = c;
        ckey[g.first + idx] = (ulong)c.tkey << 32 | idx;
        if (s.first < g.strips) {
            max_front = max(max_front, sts_var_bits(c.tvar));
            fronts++;
        } else {
            max_back = max(max_back, sts_var_bits(c.tvar));
        }
        idx++;
    }
    if (fronts)
        atomic_add(&acc[1], fronts);
    if (max_front)
        atomic_max(&acc[2], max_front);
    if (max_back)
        atomic_max(&acc[3], max_back);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0 && total) {
        atomic_add(&counts[m].n_clusters, total);
        atomic_add(&counts[m].n_front, acc[1]);
        atomic_max(&counts[m].max_tvar[0], acc[2]);
        atomic_max(&counts[m].max_tvar[1], acc[3]);
    }
}

/* ---- step 5: clusters by time, each side ---------------------------------------------------------- */

__kernel void sts_cl_count(__global const sts_dev_module_t *mods, __global const uint2 *tiles,
                           __global const ulong *ckey, __global const sts_dev_counts_t *counts, __global uint *area)
{
    __local uint hist[2 * STS_BUCKETS];
    uint2 t = tiles[get_group_id(0)];
    uint lid = get_local_id(0), wg = get_local_size(0), j = t.y;
    sts_dev_module_t g = mods[t.x];
    uint nc = counts[t.x].n_clusters, nf = counts[t.x].n_front, B = 2 * g.buckets;
    uint lo = j * STS_TILE_CLUSTERS, hi = min(nc, lo + STS_TILE_CLUSTERS);
    for (uint b = lid; b < B; b += wg)
        hist[b] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint i = lo + lid; i < hi; i += wg)
        atomic_inc(&hist[sts_cluster_bucket(ckey[g.first + i], nf, g.buckets, g.bucket_shift)]);
    barrier(CLK_LOCAL_MEM_FENCE);
    __global uint *row = area + g.first_ccount + j * (B + 1);
    for (uint b = lid; b < B; b += wg)
        row[b] = hist[b];
}

__kernel void sts_cl_colscan(__global const sts_dev_module_t *mods, __global const uint2 *tiles,
                             __global const sts_dev_counts_t *counts, __global uint *area)
{
    uint2 t = tiles[get_group_id(0)];
    sts_dev_module_t g = mods[t.x];
    uint B = 2 * g.buckets, lo = t.y * STS_TILE_CHANNELS;
    column_scan(area + g.first_ccount, sts_tiles(counts[t.x].n_clusters, STS_TILE_CLUSTERS), B + 1, lo,
                min(B, lo + STS_TILE_CHANNELS));
}

__kernel void sts_cl_scatter(__global const sts_dev_module_t *mods, __global const uint2 *tiles,
                             __global const ulong *ckey, __global const sts_dev_counts_t *counts,
                             __global uint *area, __global ulong *tmp)
{
    __local uint hist[2 * STS_BUCKETS + 1];
    __local uint part[STS_WG];
    uint2 t = tiles[get_group_id(0)];
    uint lid = get_local_id(0), wg = get_local_size(0), j = t.y;
    sts_dev_module_t g = mods[t.x];
    uint nc = counts[t.x].n_clusters, nf = counts[t.x].n_front;
    uint lo = j * STS_TILE_CLUSTERS, hi = min(nc, lo + STS_TILE_CLUSTERS);
    tile_bases(area + g.first_ccount, sts_tiles(nc, STS_TILE_CLUSTERS), 2 * g.buckets, j, hist, part);
    for (uint i = lo + lid; i < hi; i += wg) {
        ulong key = ckey[g.first + i];
        tmp[g.first + atomic_inc(&hist[sts_cluster_bucket(key, nf, g.buckets, g.bucket_shift)])] = key;
    }
}

__kernel void sts_cl_rank(__global const sts_dev_module_t *mods, __global const uint2 *tiles,
                          __global const ulong *tmp, __global const sts_dev_counts_t *counts,
                          __global const uint *area, __global ulong *sorted)
{
    uint2 t = tiles[get_group_id(0)];
    uint lid = get_local_id(0), wg = get_local_size(0);
    sts_dev_module_t g = mods[t.x];
    uint nc = counts[t.x].n_clusters, nf = counts[t.x].n_front, B = 2 * g.buckets;
    uint lo = t.y * STS_TILE_CLUSTERS, hi = min(nc, lo + STS_TILE_CLUSTERS);
    __global const uint *o = area + g.first_ccount + (sts_tiles(nc, STS_TILE_CLUSTERS) + 1) * (B + 1);
    for (uint i = lo + lid; i < hi; i += wg) {
        uint b = sts_cluster_bucket(tmp[g.first + i], nf, g.buckets, g.bucket_shift);
        rank_place(tmp + g.first, sorted + g.first, i, o[b], o[b + 1]);
    }
}

/* ---- step 6: hits (seed Code 7): counted, then written where the scans put them ------------------- */

/* The first back cluster of a front cluster's window: a binary search on
 * the sorted keys back[0..nb). */
static uint window_start(__global const ulong *back, uint nb, float tf, float w)
{
    ulong lo_key = (ulong)sts_window_low(tf, w) << 32;
    uint lo = 0, hi = nb;
    while (lo < hi) {
        uint mid = lo + (hi - lo) / 2;
        if (back[mid] < lo_key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The window of a module: what no pair of its clusters can exceed. */
static float module_window(__global const sts_dev_counts_t *c, __constant sts_params_t *p)
{
    return sqrt(p->cut2 * (as_float(c->max_tvar[0]) + as_float(c->max_tvar[1]))) + 1.0f;
}

__kernel void sts_hits_count(__global const sts_dev_module_t *mods, __global const uint2 *tiles,
                             __global const sts_cluster_t *cl, __global const ulong *sorted,
                             __global sts_dev_counts_t *counts, __global uint *hcount, __global uint *wstart,
                             __global uint *thits, __constant sts_params_t *p)
{
    __local uint acc;
    uint gid = get_group_id(0);
    uint2 t = tiles[gid];
    uint lid = get_local_id(0), wg = get_local_size(0), m = t.x;
    sts_dev_module_t g = mods[m];
    uint nc = counts[m].n_clusters, nf = counts[m].n_front, nb = nc - nf;
    float w = module_window(&counts[m], p);
    __global const sts_cluster_t *c = cl + g.first;
    __global const ulong *back = sorted + g.first + nf;
    uint lo = t.y * STS_TILE_FRONTS, hi = min(nf, lo + STS_TILE_FRONTS), mine = 0;
    for (uint i = lo + lid; i < hi; i += wg) {
        sts_cluster_t f = c[(uint)sorted[g.first + i]];
        uint count = 0, start = window_start(back, nb, f.time, w);
        for (uint j = start; j < nb; j++) {
            sts_cluster_t b = c[(uint)back[j]];
            if (sts_window_past(b.tkey, f.time, w))
                break;
            if (!sts_hit_time_ok(f.time, f.tvar, b.time, b.tvar, p->cut2))
                continue;
            sts_hit_t h;
            count += sts_hit_make(f, b, g.pitch, g.tan_stereo, g.length, g.width, g.x0, g.y0, g.z0, p->y_tol, &h);
        }
        hcount[g.first + i] = count;
        wstart[g.first + i] = start;
        mine += count;
    }
    mine = sum_local(mine, &acc);
    if (lid == 0) {
        thits[gid] = mine;
        if (mine)
            atomic_add(&counts[m].n_hits, mine);
    }
}

__kernel void sts_hits_write(__global const sts_dev_module_t *mods, __global const uint2 *tiles,
                             __global const sts_cluster_t *cl, __global const ulong *sorted,
                             __global sts_dev_counts_t *counts, __global const uint *hcount,
                             __global const uint *wstart, __global const uint *thits, __global sts_hit_t *hits,
                             __global sts_cluster_t *out, __constant sts_params_t *p)
{
    __local uint pos[STS_WG];
    __local uint part[STS_WG];
    __local uint acc;
    uint gid = get_group_id(0);
    uint2 t = tiles[gid];
    uint lid = get_local_id(0), wg = get_local_size(0), m = t.x, j = t.y;
    sts_dev_module_t g = mods[m];
    uint nc = counts[m].n_clusters, nf = counts[m].n_front, nb = nc - nf, tiles_m = sts_tiles(nf, STS_TILE_FRONTS);
    float w = module_window(&counts[m], p);
    __global const sts_cluster_t *c = cl + g.first;
    __global const ulong *back = sorted + g.first + nf;
    /* this tile's share of the module's clusters, copied to their packed place */
    uint c_lo = (uint)((ulong)nc * j / tiles_m), c_hi = (uint)((ulong)nc * (j + 1) / tiles_m);
    for (uint i = c_lo + lid; i < c_hi; i += wg)
        out[g.first_out + i] = c[i];
    uint base = sum_before(thits + gid - j, j, &acc); /* the hits of the module's earlier tiles */
    uint lo = j * STS_TILE_FRONTS, hi = min(nf, lo + STS_TILE_FRONTS), a, b, mine = 0;
    share(lo, hi, &a, &b);
    for (uint i = a; i < b; i++)
        mine += hcount[g.first + i];
    pos[lid] = mine;
    barrier(CLK_LOCAL_MEM_FENCE);
    scan_local(pos, wg, part);
    uint at = g.first_hit + base + pos[lid];
    for (uint i = a; i < b; i++) {
        uint fi = (uint)sorted[g.first + i], want = hcount[g.first + i], written = 0;
        sts_cluster_t f = c[fi];
        for (uint q = wstart[g.first + i]; q < nb && written < want; q++) {
            uint bi = (uint)back[q];
            sts_cluster_t bc = c[bi];
            if (sts_window_past(bc.tkey, f.time, w))
                break;
            if (!sts_hit_time_ok(f.time, f.tvar, bc.time, bc.tvar, p->cut2))
                continue;
            sts_hit_t h;
            if (!sts_hit_make(f, bc, g.pitch, g.tan_stereo, g.length, g.width, g.x0, g.y0, g.z0, p->y_tol, &h))
                continue;
            h.front = fi;
            h.back = bi - nf;
            hits[at + written] = h;
            written++;
        }
        if (written != want)
            atomic_or(&counts[m].status, STS_STATUS_HITS);
        at += written;
    }
}

/* ---- the bandwidth probe ------------------------------------------------------------------------ */

__kernel void sts_copy(__global const uint4 *a, __global uint4 *b, uint n)
{
    for (uint i = get_global_id(0); i < n; i += get_global_size(0))
        b[i] = a[i];
}
