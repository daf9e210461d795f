/* sts.cl - the STS local reconstruction on an OpenCL device: one
 * work-group per module in every kernel, the data resident on the device
 * from the unsorted digis to the hits (spec §4.3 and §4.6; the host side
 * is sts_cl.c, the design sts/README.md). Preceded in the embedded source
 * by opencl/gpu_common.h and sts_shared.h: the records and every formula
 * come from there.
 *
 * Build-time constants (-D):
 *   STS_CH   channels a module may have at most (2 x strips), local-memory arrays
 *   STS_WG   work-items of a group (the local scans' room)
 *   STS_DIV_VIA_DOUBLE  divide floats in double (a device without a correctly
 *            rounded float division), see sts_shared.h
 *
 * Kernels, in order (a launch of M modules runs each over M groups):
 *   sts_sort_channels  counting sort of the digis by channel (the 64-bit
 *                      key's top bits): histogram in local memory, scan (the
 *                      channel offsets, step 2), scatter; zeroes the connectors
 *   sts_sort_within    each channel's digis by the rest of the key (time, then
 *                      charge): a work-item a channel
 *   sts_link           the two-pointer walk of channel c against c + 1 (seed
 *                      Code 3), a work-item a channel, links set with atomics
 *   sts_clusters       digi-wise: the chain heads (no hasPrevious) numbered by a
 *                      scan, in digi order, each cluster computed from its chain
 *                      (seed Code 6); the sides' largest time variance by atomic
 *                      maximum (Code 9)
 *   sts_sort_clusters  each side's clusters by (floor(time), index): counting sort
 *                      by time bucket, then each bucket by the whole key
 *   sts_hits_count     a work-item a front cluster: its hits counted (Code 7)
 *   sts_hits_write     the counts scanned, the hits written there, the clusters
 *                      copied to their packed place
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

/* Sort a[0..n) ascending in global memory by one work-item: insertion
 * up to 128 keys (linear on the nearly sorted runs the scatter leaves:
 * the digis arrive nearly in time order), heapsort (no extra room,
 * n log n whatever the order) above. */
static void sort_keys(__global ulong *a, uint n)
{
    if (n < 2)
        return;
    if (n <= 128) {
        for (uint i = 1; i < n; i++) {
            ulong v = a[i];
            uint j = i;
            for (; j > 0 && a[j - 1] > v; j--)
                a[j] = a[j - 1];
            a[j] = v;
        }
        return;
    }
    /* heapsort */
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

/* ---- step 1-2: sort by the 64-bit key, channel offsets ------------------------------------- */

__kernel void sts_sort_channels(__global const sts_dev_module_t *mods, __global const ulong *in, __global ulong *keys,
                                __global uint *off, __global uint *conn)
{
    __local uint hist[STS_CH + 1];
    __local uint part[STS_WG];
    uint m = get_group_id(0), lid = get_local_id(0), wg = get_local_size(0);
    sts_dev_module_t g = mods[m];
    uint C = 2 * g.strips;
    for (uint c = lid; c <= C; c += wg)
        hist[c] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint i = lid; i < g.n; i += wg) {
        atomic_inc(&hist[sts_key_channel(in[g.first + i])]);
        conn[g.first + i] = 0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    scan_local(hist, C + 1, part); /* hist[c]: where channel c starts; hist[C] = n */
    for (uint c = lid; c <= C; c += wg)
        off[g.first_off + c] = hist[c];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint i = lid; i < g.n; i += wg) {
        ulong k = in[g.first + i];
        uint pos = atomic_inc(&hist[sts_key_channel(k)]);
        keys[g.first + pos] = k;
    }
}

__kernel void sts_sort_within(__global const sts_dev_module_t *mods, __global ulong *keys, __global const uint *off)
{
    uint m = get_group_id(0), lid = get_local_id(0), wg = get_local_size(0);
    sts_dev_module_t g = mods[m];
    uint C = 2 * g.strips;
    for (uint c = lid; c < C; c += wg) {
        uint lo = off[g.first_off + c], hi = off[g.first_off + c + 1];
        sort_keys(keys + g.first + lo, hi - lo);
    }
}

/* ---- step 3: neighbour links, channel-wise (seed Code 3) ------------------------------------- */

__kernel void sts_link(__global const sts_dev_module_t *mods, __global const ulong *keys, __global const uint *off,
                       __global uint *conn, uint delta)
{
    uint m = get_group_id(0), lid = get_local_id(0), wg = get_local_size(0);
    sts_dev_module_t g = mods[m];
    uint C = 2 * g.strips;
    __global const ulong *k = keys + g.first;
    __global uint *cn = conn + g.first;
    __global const uint *o = off + g.first_off;
    for (uint c = lid; c + 1 < C; c += wg) {
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

/* Digis a work-item takes per tile in the digi-wise kernels (contiguous
 * runs, so that one scan numbers STS_RUN x STS_WG of them). */
#define STS_RUN 8

__kernel void sts_clusters(__global const sts_dev_module_t *mods, __global const ulong *keys,
                           __global const uint *conn, __global sts_cluster_t *cl, __global ulong *ckey,
                           __global sts_dev_counts_t *counts, __constant sts_params_t *p)
{
    __local uint flag[STS_WG];
    __local uint part[STS_WG];
    __local uint front;
    uint m = get_group_id(0), lid = get_local_id(0), wg = get_local_size(0);
    sts_dev_module_t g = mods[m];
    __global const ulong *k = keys + g.first;
    __global const uint *cn = conn + g.first;
    if (lid == 0)
        front = 0;
    uint base = 0, tile = wg * STS_RUN;
    for (uint t0 = 0; t0 < g.n; t0 += tile) {
        uint lo = t0 + lid * STS_RUN, hi = min(g.n, lo + STS_RUN), heads = 0;
        for (uint i = lo; i < hi; i++)
            heads += !(cn[i] & STS_HAS_PREVIOUS);
        flag[lid] = heads;
        barrier(CLK_LOCAL_MEM_FENCE);
        uint total = scan_local(flag, wg, part);
        uint idx = base + flag[lid], fronts = 0;
        for (uint i = lo; i < hi; i++) {
            if (cn[i] & STS_HAS_PREVIOUS)
                continue;
            sts_acc_t a;
            sts_acc_start(&a, k[i]);
            for (uint j = sts_conn_next(cn[i]); j; j = sts_conn_next(cn[j]))
                sts_acc_add(&a, k[j]);
            sts_cluster_t c;
            sts_cluster_finish(&a, g.strips, p->tvar_digi, p->qvar, p->sys_var, &c);
            cl[g.first + idx] = c;
            ckey[g.first + idx] = (ulong)c.tkey << 32 | idx;
            uint side = a.first >= g.strips;
            atomic_max(&counts[m].max_tvar[side], sts_var_bits(c.tvar));
            fronts += !side;
            idx++;
        }
        if (fronts)
            atomic_add(&front, fronts);
        base += total;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) {
        counts[m].n_clusters = base;
        counts[m].n_front = front;
    }
}

/* ---- step 5: clusters by time, each side ---------------------------------------------------------- */

__kernel void sts_sort_clusters(__global const sts_dev_module_t *mods, __global const ulong *ckey,
                                __global ulong *sorted, __global const sts_dev_counts_t *counts)
{
    __local uint hist[STS_BUCKETS];
    __local uint part[STS_WG];
    uint m = get_group_id(0), lid = get_local_id(0), wg = get_local_size(0);
    sts_dev_module_t g = mods[m];
    uint nc = counts[m].n_clusters, nf = counts[m].n_front;
    for (uint side = 0; side < 2; side++) {
        uint lo = side ? nf : 0, hi = side ? nc : nf;
        __global const ulong *src = ckey + g.first + lo;
        __global ulong *dst = sorted + g.first + lo;
        uint n = hi - lo;
        for (uint b = lid; b < STS_BUCKETS; b += wg)
            hist[b] = 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint i = lid; i < n; i += wg)
            atomic_inc(&hist[(uint)(src[i] >> 32) >> g.bucket_shift]);
        barrier(CLK_LOCAL_MEM_FENCE);
        scan_local(hist, STS_BUCKETS, part);
        for (uint i = lid; i < n; i += wg) {
            ulong key = src[i];
            dst[atomic_inc(&hist[(uint)(key >> 32) >> g.bucket_shift])] = key;
        }
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
        /* hist[b] is now where bucket b ends */
        for (uint b = lid; b < STS_BUCKETS; b += wg) {
            uint start = b ? hist[b - 1] : 0;
            sort_keys(dst + start, hist[b] - start);
        }
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    }
}

/* ---- step 6: hits (seed Code 7): counted, then written where a scan puts them --------------------- */

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

__kernel void sts_hits_count(__global const sts_dev_module_t *mods, __global const sts_cluster_t *cl,
                             __global const ulong *sorted, __global sts_dev_counts_t *counts, __global uint *hcount,
                             __constant sts_params_t *p)
{
    __local uint total;
    uint m = get_group_id(0), lid = get_local_id(0), wg = get_local_size(0);
    sts_dev_module_t g = mods[m];
    uint nc = counts[m].n_clusters, nf = counts[m].n_front, nb = nc - nf;
    float w = module_window(&counts[m], p);
    __global const sts_cluster_t *c = cl + g.first;
    __global const ulong *back = sorted + g.first + nf;
    if (lid == 0)
        total = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    uint mine = 0;
    for (uint i = lid; i < nf; i += wg) {
        sts_cluster_t f = c[(uint)sorted[g.first + i]];
        uint count = 0;
        for (uint j = window_start(back, nb, f.time, w); j < nb; j++) {
            sts_cluster_t b = c[(uint)back[j]];
            if (sts_window_past(b.tkey, f.time, w))
                break;
            if (!sts_hit_time_ok(f.time, f.tvar, b.time, b.tvar, p->cut2))
                continue;
            sts_hit_t h;
            count += sts_hit_make(f, b, g.pitch, g.tan_stereo, g.length, g.width, g.x0, g.y0, g.z0, p->y_tol, &h);
        }
        hcount[g.first + i] = count;
        mine += count;
    }
    atomic_add(&total, mine);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0)
        counts[m].n_hits = total;
}

__kernel void sts_hits_write(__global const sts_dev_module_t *mods, __global const sts_cluster_t *cl,
                             __global const ulong *sorted, __global sts_dev_counts_t *counts,
                             __global const uint *hcount, __global sts_hit_t *hits, __global sts_cluster_t *out,
                             __constant sts_params_t *p)
{
    __local uint pos[STS_WG];
    __local uint part[STS_WG];
    uint m = get_group_id(0), lid = get_local_id(0), wg = get_local_size(0);
    sts_dev_module_t g = mods[m];
    uint nc = counts[m].n_clusters, nf = counts[m].n_front, nb = nc - nf;
    float w = module_window(&counts[m], p);
    __global const sts_cluster_t *c = cl + g.first;
    __global const ulong *back = sorted + g.first + nf;
    for (uint i = lid; i < nc; i += wg)
        out[g.first_out + i] = c[i];
    uint base = 0, tile = wg * STS_RUN;
    for (uint t0 = 0; t0 < nf; t0 += tile) {
        uint lo = t0 + lid * STS_RUN, hi = min(nf, lo + STS_RUN), mine = 0;
        for (uint i = lo; i < hi; i++)
            mine += hcount[g.first + i];
        pos[lid] = mine;
        barrier(CLK_LOCAL_MEM_FENCE);
        uint total = scan_local(pos, wg, part);
        uint at = g.first_hit + base + pos[lid];
        for (uint i = lo; i < hi; i++) {
            uint fi = (uint)sorted[g.first + i], want = hcount[g.first + i], written = 0;
            sts_cluster_t f = c[fi];
            for (uint j = window_start(back, nb, f.time, w); j < nb && written < want; j++) {
                uint bi = (uint)back[j];
                sts_cluster_t b = c[bi];
                if (sts_window_past(b.tkey, f.time, w))
                    break;
                if (!sts_hit_time_ok(f.time, f.tvar, b.time, b.tvar, p->cut2))
                    continue;
                sts_hit_t h;
                if (!sts_hit_make(f, b, g.pitch, g.tan_stereo, g.length, g.width, g.x0, g.y0, g.z0, p->y_tol, &h))
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
        base += total;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

/* ---- the bandwidth probe ------------------------------------------------------------------------ */

__kernel void sts_copy(__global const uint4 *a, __global uint4 *b, uint n)
{
    for (uint i = get_global_id(0); i < n; i += get_global_size(0))
        b[i] = a[i];
}
