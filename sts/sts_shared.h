/* sts_shared.h - what the STS reconstruction's host code and its OpenCL
 * kernels share (internal): the records that cross the host/device
 * boundary, the constants, and every formula of the algorithm (spec §4.3,
 * seed 004 §3), written once.
 *
 * Written in the subset of C both compilers read, with the names of
 * opencl/gpu_common.h. The kernel's embedded source is gpu_common.h, this
 * file and kernels/sts.cl, concatenated by tools/embed-text.sh; the host
 * includes the same files.
 *
 * Exactness: the fast backend (CPU threads) and the kernels must give the
 * same clusters and hits bit for bit. Whatever decides which digis form a
 * cluster and which clusters form a hit is integer arithmetic (times in
 * whole ns, channels, charges, sums); the floats (cluster time, position,
 * errors, hit coordinates) are computed by the functions below from those
 * integers, in the same order on both sides, in IEEE arithmetic without
 * contraction into fused multiply-adds (the host files are compiled with
 * -ffp-contract=off, the kernel has `#pragma OPENCL FP_CONTRACT OFF`)
 * and with a correctly rounded division (the kernel is built with
 * -cl-fp32-correctly-rounded-divide-sqrt, or on a device without it
 * divides in double, which rounds to the same float). No square root is
 * taken on the device: errors travel as variances and the host takes
 * the root when it writes the frames. */
#ifndef TUSK_STS_SHARED_H
#define TUSK_STS_SHARED_H

#ifndef __OPENCL_VERSION__
#include "opencl/gpu_common.h"
#else
/* Before any formula: OpenCL C contracts a * b + c into a fused
 * multiply-add unless told not to, and the host does not. */
#pragma OPENCL FP_CONTRACT OFF
#if defined(STS_DIV_VIA_DOUBLE) && STS_DIV_VIA_DOUBLE
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#endif

/* A correctly rounded float division on both sides (see above). */
#if defined(__OPENCL_VERSION__) && defined(STS_DIV_VIA_DOUBLE) && STS_DIV_VIA_DOUBLE
#define STS_DIV(a, b) ((float)((double)(a) / (double)(b)))
#else
#define STS_DIV(a, b) ((a) / (b))
#endif

#define STS_MAX_STRIPS 4096u                 /* strips a side (= ADF_STS_MAX_STRIPS) */
#define STS_MAX_CHANNELS (2u * STS_MAX_STRIPS) /* channels a module */
#define STS_BUCKETS 2048u                    /* time buckets of the cluster sort (a power of two) */
#define STS_NONE 0xFFFFFFFFu

/* The work division of the kernels (sts/README.md, "Load"): each kernel
 * runs over tiles of its modules, one work-group a tile, so that a module
 * of seven times the average size takes seven times the groups instead
 * of one group seven times as long. A module has sts_tiles(its size,
 * tile) tiles of a kind, at least one. The sizes do not depend on the
 * work-group size: each kernel's group walks its tile whatever its size. */
#define STS_TILE_DIGIS 4096u     /* digis a tile: digi sort, heads, clusters */
#define STS_TILE_CHANNELS 256u   /* channels (buckets) a tile: links, column scans */
#define STS_TILE_CLUSTERS 4096u  /* clusters a tile: cluster sort */
#define STS_TILE_FRONTS 512u     /* front clusters a tile: hits */
/* A bucket of a sort (a channel's digis, a time bucket's clusters) of up
 * to this many keys is sorted by ranks, a work-item a key counting the
 * keys below it; a larger one by one work-item (heapsort). */
#define STS_RANK_MAX 1024u
/* The cluster sort's time buckets: as many a side as give about this many
 * clusters a bucket (a module's bucket_shift raised from the timeslice's
 * until they do), at most STS_BUCKETS: the count rows stay short for a
 * small module and the ranks cheap for a large one. */
#define STS_BUCKET_FILL 16u

/* 1/12, the variance of a uniform distribution over one strip, as the
 * float nearest to it (written in hex so no compiler rounds it). */
#define STS_ONE_TWELFTH 0x1.555556p-4f

/* Status bits of a module on the device. */
#define STS_STATUS_UNSORTED 1u  /* the channel offsets found digis out of order (a bug, never data) */
#define STS_STATUS_HITS 2u      /* more hits than the room the host gave (it retries with more) */

/* ---- the digi: one 64-bit key (adf/FORMAT.md) ----------------------------------
 * channel * 2^48 + time * 2^16 + charge: sorted, the digis of a module go
 * by channel, then time, then charge (the thesis's (channel, time) key
 * with the charge below it, so the order of two digis is never left to
 * the sort: only identical digis compare equal). */
TUSK_FN tusk_u32 sts_key_channel(tusk_u64 key)
{
    return (tusk_u32)(key >> 48);
}
TUSK_FN tusk_u32 sts_key_time(tusk_u64 key)
{
    return (tusk_u32)(key >> 16);
}
TUSK_FN tusk_u32 sts_key_charge(tusk_u64 key)
{
    return (tusk_u32)(key & 0xFFFFu);
}

/* Tiles of `per` items for n items: at least one (every module has a tile 0). */
TUSK_FN tusk_u32 sts_tiles(tusk_u32 n, tusk_u32 per)
{
    return n > per ? n / per + (n % per != 0) : 1u;
}

/* The cluster sort's bucket of a cluster key (floor(time) << 32 | index,
 * the index counted over the module's clusters, the n_front front ones
 * first): the front side's buckets, then the back side's, each
 * floor(time) >> shift (clamped to the last, which only keeps the order:
 * a bucket is sorted by the whole key). */
TUSK_FN tusk_u32 sts_cluster_bucket(tusk_u64 ckey, tusk_u32 n_front, tusk_u32 buckets, tusk_u32 shift)
{
    tusk_u32 b = (tusk_u32)(ckey >> 32) >> shift;
    if (b >= buckets)
        b = buckets - 1;
    return ((tusk_u32)ckey >= n_front ? buckets : 0u) + b;
}

/* ---- records crossing the host/device boundary ------------------------------------ */

/* One module of a launch (host to device): where its data go in the
 * launch's arrays and its geometry, as floats the host computed once.
 * 96 bytes. The fields after first_out are the work division's
 * (sts/README.md, "Load"): a module's work is spread over tiles, a
 * work-group each, as many as its size needs. */
typedef struct sts_dev_module {
    tusk_u32 first;        /* its first digi in the launch's arrays (also of its clusters' room) */
    tusk_u32 n;            /* its digis */
    tusk_u32 strips;       /* strips a side */
    tusk_u32 bucket_shift; /* cluster sort: a cluster's time bucket is floor(time) >> bucket_shift (raised by the
                            * host after the cluster count, see STS_BUCKET_FILL) */
    tusk_u32 first_off;    /* its channel offsets (2 strips + 1) in the launch's digi count area */
    tusk_u32 first_hit;    /* where its hits go in the launch's hit array (set after counting) */
    tusk_u32 first_out;    /* where its clusters go in the launch's packed cluster array (the same) */
    tusk_u32 buckets;      /* time buckets a side: ((length_ns - 1) >> bucket_shift) + 1, at most STS_BUCKETS */
    tusk_u32 first_dcount; /* its digi count area: sts_tiles(n, STS_TILE_DIGIS) + 2 rows of 2 strips + 1 words */
    tusk_u32 first_ccount; /* its cluster count area: sts_tiles(clusters, STS_TILE_CLUSTERS) + 2 rows of
                            * 2 buckets + 1 words (set after the cluster count read-back) */
    tusk_u32 reserved[6];
    tusk_f32 pitch;        /* mm */
    tusk_f32 tan_stereo;   /* tan of the stereo angle */
    tusk_f32 length;       /* strip length, mm */
    tusk_f32 width;        /* strips * pitch, mm */
    tusk_f32 x0, y0, z0;   /* the module's origin, mm (adf/FORMAT.md) */
    tusk_f32 reserved_f;
} sts_dev_module_t;

/* What the device finds out about a module. 32 bytes. */
typedef struct sts_dev_counts {
    tusk_u32 n_clusters;   /* both sides */
    tusk_u32 n_front;      /* the first n_front are the front side's */
    tusk_u32 max_tvar[2];  /* per side, the largest cluster time variance (the bits of a float >= 0) */
    tusk_u32 n_hits;
    tusk_u32 status;       /* STS_STATUS_* */
    tusk_u32 reserved[2];
} sts_dev_counts_t;

/* The reconstruction's settings as the arithmetic uses them (sts_params_of). 32 bytes. */
typedef struct sts_params {
    tusk_u32 delta;        /* ns: neighbouring strips' digis within delta join */
    tusk_f32 tvar_digi;    /* ns^2: a digi's time variance */
    tusk_f32 qvar;         /* a strip's charge variance (charge units^2) */
    tusk_f32 sys_var;      /* strips^2: the centre of gravity's systematic variance */
    tusk_f32 cut2;         /* the hit time cut factor, squared */
    tusk_f32 y_tol;        /* mm: how far outside the strips' length a crossing may lie */
    tusk_u32 reserved[2];
} sts_params_t;

/* A cluster. 32 bytes. */
typedef struct sts_cluster {
    tusk_u32 channel;      /* first (lowest) channel, module numbering */
    tusk_u32 size;         /* digis */
    tusk_u32 charge;       /* their charge sum */
    tusk_u32 tkey;         /* floor(time): the cluster sort's key */
    tusk_f32 time;         /* ns */
    tusk_f32 tvar;         /* ns^2 */
    tusk_f32 x;            /* strips, on its side */
    tusk_f32 xvar;         /* strips^2 */
} sts_cluster_t;

/* A hit. 40 bytes. */
typedef struct sts_hit {
    tusk_f32 x, y, z;      /* mm, lab frame */
    tusk_f32 xvar, yvar, xycov; /* mm^2 */
    tusk_f32 t, tvar;      /* ns, ns^2 */
    tusk_u32 front, back;  /* cluster indices: in the module, and among its back clusters */
} sts_hit_t;

TUSK_STATIC_ASSERT(sizeof(sts_dev_module_t) == 96, "sts_dev_module_t is 96 bytes");
TUSK_STATIC_ASSERT(sizeof(sts_dev_counts_t) == 32, "sts_dev_counts_t is 32 bytes");
TUSK_STATIC_ASSERT(sizeof(sts_params_t) == 32, "sts_params_t is 32 bytes");
TUSK_STATIC_ASSERT(sizeof(sts_cluster_t) == 32, "sts_cluster_t is 32 bytes");
TUSK_STATIC_ASSERT(sizeof(sts_hit_t) == 40, "sts_hit_t is 40 bytes");

/* ---- cluster finding: the two-pointer walk of spec §4.3 step 3 --------------------
 * For the current digi (time tc) of channel c and the next channel's
 * digi under the pointer (time tn): -1 when tn < tc - delta (too early:
 * move the pointer on), +1 when tn > tc + delta (too late: take the next
 * current digi), 0 when |tn - tc| <= delta (link them, then both move). */
TUSK_FN tusk_i32 sts_link_order(tusk_u32 tc, tusk_u32 tn, tusk_u32 delta)
{
    if ((tusk_u64)tn + delta < (tusk_u64)tc)
        return -1;
    if ((tusk_u64)tn > (tusk_u64)tc + delta)
        return 1;
    return 0;
}

/* The connector of a digi (seed §3.2.3.2): bit 0 hasPrevious, bits 1-31
 * the index of the next digi of its cluster in the module's sorted
 * digis, 0 for none (a next digi lies in a higher channel, so after it:
 * its index is never 0). */
#define STS_HAS_PREVIOUS 1u
TUSK_FN tusk_u32 sts_conn_next(tusk_u32 c)
{
    return c >> 1;
}

/* Two digis of neighbouring channels in the original algorithm's status
 * array belong together when their times differ by at most delta. */
TUSK_FN int sts_in_delta(tusk_u32 ta, tusk_u32 tb, tusk_u32 delta)
{
    return (ta > tb ? ta - tb : tb - ta) <= delta;
}

/* ---- a cluster from its digis ----------------------------------------------------------
 * The sums are integers, so the order the digis are added in does not
 * matter; sts_cluster_finish turns them into the cluster. */
typedef struct sts_acc {
    tusk_u32 first;        /* first channel */
    tusk_u32 n;            /* digis */
    tusk_u32 q;            /* charge sum */
    tusk_u32 reserved;
    tusk_u64 qi;           /* sum of charge * (channel - first) */
    tusk_u64 t;            /* sum of times */
} sts_acc_t;

TUSK_FN void sts_acc_start(sts_acc_t *a, tusk_u64 key)
{
    a->first = sts_key_channel(key);
    a->n = 1;
    a->q = sts_key_charge(key);
    a->reserved = 0;
    a->qi = 0;
    a->t = sts_key_time(key);
}

/* Add a digi of a channel above the first. */
TUSK_FN void sts_acc_add(sts_acc_t *a, tusk_u64 key)
{
    tusk_u32 q = sts_key_charge(key);
    a->n += 1;
    a->q += q;
    a->qi += (tusk_u64)q * (tusk_u64)(sts_key_channel(key) - a->first);
    a->t += sts_key_time(key);
}

/* The cluster (sts/README.md, "Clusters"):
 *   time  = the mean of the digi times, floor part exact, the rest divided;
 *   tvar  = tvar_digi / n;
 *   x     = the centre of gravity in strips on its side: strip k's centre is
 *           k + 1/2; one strip: its centre, x variance 1/12;
 *   xvar  = sys_var + qvar * sum_i (i - xr)^2 / Q^2 for n >= 2 digis at
 *           offsets i = 0..n-1 from the first strip, xr = sum q_i i / Q (the
 *           error of the charges propagated to the centre of gravity), with
 *           sum_i (i - xr)^2 = n (n^2 - 1) / 12 + n (xr - (n - 1) / 2)^2;
 *           a cluster of charge 0 sits at its geometric centre. */
TUSK_FN void sts_cluster_finish(const sts_acc_t *a, tusk_u32 strips, tusk_f32 tvar_digi, tusk_f32 qvar,
                                tusk_f32 sys_var, sts_cluster_t *c)
{
    tusk_u32 n = a->n;
    tusk_u64 tq = a->t / n, tr = a->t % n;
    tusk_u32 strip0 = a->first >= strips ? a->first - strips : a->first;
    c->channel = a->first;
    c->size = n;
    c->charge = a->q;
    c->tkey = (tusk_u32)tq;
    c->time = (tusk_f32)tq + STS_DIV((tusk_f32)tr, (tusk_f32)n);
    c->tvar = STS_DIV(tvar_digi, (tusk_f32)n);
    if (n == 1) {
        c->x = (tusk_f32)strip0 + 0.5f;
        c->xvar = STS_ONE_TWELFTH;
        return;
    }
    tusk_f32 mid = (tusk_f32)(n - 1) * 0.5f;
    tusk_f32 xr = a->q > 0 ? STS_DIV((tusk_f32)a->qi, (tusk_f32)a->q) : mid;
    c->x = ((tusk_f32)strip0 + 0.5f) + xr;
    tusk_u64 nn = (tusk_u64)n * ((tusk_u64)n * n - 1);
    tusk_f32 d = xr - mid;
    tusk_f32 spread = STS_DIV((tusk_f32)nn, 12.0f) + ((tusk_f32)n * d) * d;
    tusk_f32 qf = a->q > 0 ? (tusk_f32)a->q : 1.0f;
    c->xvar = sys_var + STS_DIV(qvar * spread, qf * qf);
}

/* ---- hits ------------------------------------------------------------------------------------ */

/* The time test of a front and a back cluster (seed §3.5.1): |tf - tb| <=
 * k sqrt(tvar_f + tvar_b), as squares. */
TUSK_FN int sts_hit_time_ok(tusk_f32 tf, tusk_f32 tvf, tusk_f32 tb, tusk_f32 tvb, tusk_f32 cut2)
{
    tusk_f32 dt = tf - tb;
    return dt * dt <= cut2 * (tvf + tvb);
}

/* The crossing of a front and a back cluster on the module (spec §4.3
 * step 6; the geometry is tusk's, adf/FORMAT.md): the front measures x;
 * the back measures x - y tan(stereo) modulo the width, so y = (xf - xb)
 * / tan (one width added when the difference is below -y_tol tan). No
 * hit (0) when y falls outside [-y_tol, length + y_tol]. The errors
 * propagate the clusters' variances (x from the front alone; y from both). */
TUSK_FN int sts_hit_make(sts_cluster_t f, sts_cluster_t b, tusk_f32 pitch, tusk_f32 tan_stereo, tusk_f32 length,
                         tusk_f32 width, tusk_f32 x0, tusk_f32 y0, tusk_f32 z0, tusk_f32 y_tol, sts_hit_t *h)
{
    tusk_f32 xf = f.x * pitch;
    tusk_f32 xb = b.x * pitch;
    tusk_f32 d = xf - xb;
    if (d < -(y_tol * tan_stereo))
        d = d + width;
    tusk_f32 y = STS_DIV(d, tan_stereo);
    if (!(y >= -y_tol && y <= length + y_tol))
        return 0;
    tusk_f32 p2 = pitch * pitch;
    h->x = x0 + xf;
    h->y = y0 + y;
    h->z = z0;
    h->xvar = f.xvar * p2;
    h->yvar = STS_DIV((f.xvar + b.xvar) * p2, tan_stereo * tan_stereo);
    h->xycov = STS_DIV(f.xvar * p2, tan_stereo);
    h->t = (f.time + b.time) * 0.5f;
    h->tvar = (f.tvar + b.tvar) * 0.25f;
    h->front = 0;
    h->back = 0;
    return 1;
}

/* The range of back clusters a front cluster at time tf can pair with,
 * whatever their errors: |tf - tb| <= w, w = k sqrt(maxvar_f + maxvar_b)
 * (the sides' largest cluster time variances, seed §3.5.2) plus a margin.
 * Back clusters are sorted by tkey = floor(time): the walk starts at the
 * first with tkey >= sts_window_low and stops at the first with tkey >
 * sts_window_high. The window only saves work: a pair outside it fails
 * sts_hit_time_ok anyway, so the hits do not depend on how w is rounded. */
TUSK_FN tusk_u32 sts_window_low(tusk_f32 tf, tusk_f32 w)
{
    tusk_f32 lo = tf - w - 1.0f;
    return lo > 0.0f ? (tusk_u32)lo : 0u;
}
TUSK_FN int sts_window_past(tusk_u32 tkey, tusk_f32 tf, tusk_f32 w)
{
    return (tusk_f32)tkey > tf + w;
}

/* The largest time variance of a side as an order-preserving word: the
 * bits of a float >= 0 sort as the float does (spec §4.3, Code 9's
 * atomic maximum on them). */
TUSK_FN tusk_u32 sts_var_bits(tusk_f32 v)
{
#ifdef __OPENCL_VERSION__
    return as_uint(v);
#else
    tusk_u32 u;
    __builtin_memcpy(&u, &v, sizeof u);
    return u;
#endif
}

#endif
