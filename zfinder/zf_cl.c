/* zf_cl.c - the OpenCL backend of the z-finder (tusk/zfinder.h; the
 * kernels are kernels/zfinder.cl, the design zfinder/README.md).
 *
 * A batch goes to the device in chunks of `chunk` RoIs. A chunk is packed
 * on the host (threads over its RoIs): each RoI's points sorted by phi
 * slice (a counting sort, O(N)) into one pinned buffer that also holds the
 * RoI records and slice starts, so one transfer moves it all (seed §7.2).
 * On the device: zf_find, one work-group per (RoI, slice); zf_peak, one
 * per RoI; back come 48 bytes a RoI (and the histograms when asked).
 * With two slots, each with its own queue and buffers, the next chunk is
 * packed and uploaded while the current one's kernels run (the seed's two
 * streams, §7.3, with many RoIs a launch instead of one). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "tusk/cl.h"
#include "zf_private.h"

/* Generated from opencl/gpu_common.h, zf_shared.h, zf_real.h and
 * kernels/zfinder.cl by tools/embed-text.sh. */

#define MAX_SLOTS 2
enum { EV_FIND, EV_PEAK, EV_DONE, EV_N };
#define ALIGN 64u

typedef struct slot {
    cl_command_queue q;
    bool own_queue;
    tusk_cl_pinned_t *in;      /* descs | slice starts | points */
    cl_mem d_in;
    size_t in_cap;             /* bytes */
    cl_mem d_nh, d_zs, d_res;
    tusk_cl_pinned_t *res, *nh, *zs;
    size_t rois_cap;
    size_t first, n;           /* the batch's RoIs in flight */
    cl_event ev[EV_N];         /* EV_FIND, EV_PEAK, EV_DONE */
    bool busy;
} slot_t;

/* Per-thread scratch of the packing. */
typedef struct scratch {
    int32_t *slice;
    float *phi_rel;
    uint32_t *count;
    size_t cap_pt, cap_sl;
    tusk_error_t err;
    size_t err_roi;
} scratch_t;

struct zf_cl {
    zf_config_t cfg;
    zf_cl_config_t clc;
    zf_consts_t k;
    tusk_cl_t *cl;
    tusk_cl_kernels_t *ks;     /* K_FIND, K_PEAK */
    unsigned wg, peak_wg;
    char division[64];         /* the division option (tusk_cl_exact_division) */
    size_t rsize;              /* bytes of ZF_R */
    bool atom64;               /* zHisto's sums by 64-bit atomics (else two 32-bit words) */
    slot_t slot[MAX_SLOTS];
    unsigned slots;
    tusk_pool_t *pool;
    scratch_t *scratch;
    unsigned n_scratch;
    /* the chunk being packed */
    const zf_batch_t *batch;
    size_t pack_first;
    uint8_t *pack_base;
    size_t off_slices, off_points;
    /* every RoI's histograms of the last run (keep_histograms) */
    uint32_t *h_nh;
    uint64_t *h_zs;
    size_t h_cap, h_n;
    tusk_cl_timing_t t_find, t_peak;
    zf_cl_stats_t stats;
    char describe[2 * TUSK_CL_TEXT_MAX + 256];
};

void zf_cl_config_default(zf_cl_config_t *c)
{
    memset(c, 0, sizeof *c);
    c->chunk = 64;
    c->slots = 2;
    c->group_size = 64;
    c->group_points = 1024;
}

static size_t round_up(size_t n, size_t a)
{
    return (n + a - 1) / a * a;
}

/* Let slot s finish and forget what it held. */
static void settle(slot_t *s)
{
    if (s->q)
        clFinish(s->q);
    tusk_cl_events_release(s->ev, EV_N);
    s->busy = false;
}

static void release_slot(zf_cl_t *c, slot_t *s)
{
    settle(s);
    tusk_cl_pinned_destroy(&s->in);
    tusk_cl_pinned_destroy(&s->res);
    tusk_cl_pinned_destroy(&s->nh);
    tusk_cl_pinned_destroy(&s->zs);
    tusk_cl_buffer_release(c->cl, &s->d_in);
    tusk_cl_buffer_release(c->cl, &s->d_nh);
    tusk_cl_buffer_release(c->cl, &s->d_zs);
    tusk_cl_buffer_release(c->cl, &s->d_res);
    if (s->q && s->own_queue)
        clReleaseCommandQueue(s->q);
    s->q = NULL;
    s->in_cap = s->rois_cap = 0;
}

void zf_cl_destroy(zf_cl_t **cl)
{
    if (!cl || !*cl)
        return;
    zf_cl_t *c = *cl;
    if (c->cl)
        for (unsigned i = 0; i < MAX_SLOTS; i++)
            release_slot(c, &c->slot[i]);
    tusk_cl_kernels_destroy(&c->ks);
    tusk_cl_destroy(&c->cl);
    tusk_pool_destroy(&c->pool);
    for (unsigned t = 0; t < c->n_scratch; t++) {
        free(c->scratch[t].slice);
        free(c->scratch[t].phi_rel);
        free(c->scratch[t].count);
    }
    free(c->scratch);
    free(c->h_nh);
    free(c->h_zs);
    free(c);
    *cl = NULL;
}

enum { K_FIND, K_PEAK, N_KERNELS };
static const char *const kernel_names[N_KERNELS] = {"zf_find", "zf_peak"};

/* The program's options for `peak_wg` work-items in zf_peak. */
static int options(void *ctx, unsigned peak_wg, char *opt, size_t cap, tusk_error_t *err)
{
    const zf_cl_t *c = ctx;
    const struct {
        const char *name;
        unsigned value;
    } defs[] = {{"ZF_DOUBLE", c->cfg.precision == ZF_PREC_DOUBLE},
                {"ZF_NBINS", c->k.bins},
                {"ZF_CAP", c->clc.group_points},
                {"ZF_PEAK_WG", peak_wg},
                {"ZF_TRIPLETS", c->cfg.mode == ZF_TRIPLETS},
                {"ZF_SECOND", c->cfg.second_vertex},
                {"ZF_BARE", c->clc.bare},
                {"ZF_ATOM64", c->atom64}};
    snprintf(opt, cap, "%s", c->division);
    for (size_t i = 0; i < sizeof defs / sizeof defs[0]; i++) {
        char v[32];
        snprintf(v, sizeof v, "%u", defs[i].value);
        int st = tusk_cl_define(opt, cap, defs[i].name, v, err);
        if (st != TUSK_OK)
            return st;
    }
    return TUSK_OK;
}

int zf_cl_new(zf_cl_t **out, const zf_config_t *cfg, const zf_cl_config_t *clc, tusk_error_t *err)
{
    *out = NULL;
    int st = zf_config_check(cfg, err);
    if (st != TUSK_OK)
        return st;
    if (clc->chunk < 1 || clc->slots < 1 || clc->slots > MAX_SLOTS || clc->group_size < 1 || clc->group_points < 3 ||
        clc->group_points > ZF_MAX_GROUP_POINTS)
        return tusk_error_set(err, TUSK_EINVAL,
                              "z-finder opencl: chunk %u, slots %u (1 or 2), group_size %u, group_points %u: each must "
                              "be at least 1 (group_points 3 to %u)",
                              clc->chunk, clc->slots, clc->group_size, clc->group_points, ZF_MAX_GROUP_POINTS);
    zf_cl_t *c = calloc(1, sizeof *c);
    if (!c)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    c->cfg = *cfg;
    c->clc = *clc;
    c->clc.device = c->clc.options = NULL; /* not kept */
    zf_consts_of(cfg, &c->k);
    c->slots = clc->slots;
    c->rsize = cfg->precision == ZF_PREC_DOUBLE ? sizeof(cl_double) : sizeof(cl_float);
    tusk_cl_timing_reset(&c->t_find);
    tusk_cl_timing_reset(&c->t_peak);
    if ((st = tusk_cl_new_exact(&c->cl, clc->device, clc->instance, clc->options, clc->no_cache, "z-finder",
                                "the reference (zfinder/README.md)", err)) ||
        (st = tusk_pool_new(&c->pool, clc->threads, err)))
        goto fail;
    const tusk_cl_device_info_t *dev = tusk_cl_device(c->cl);
    /* what the device needs to reproduce the reference */
    bool via_double = false;
    c->atom64 = dev->int64_atomics && !clc->no_int64_atomics;
    if (cfg->precision == ZF_PREC_DOUBLE) {
        if (!dev->fp64) {
            st = tusk_error_set(err, TUSK_ENODEV,
                                "z-finder precision = double on %s: the device lacks cl_khr_fp64 (use precision = float)",
                                tusk_cl_describe(c->cl));
            goto fail;
        }
    } else if ((st = tusk_cl_exact_division(c->cl, "z-finder", "the reference's", "ZF_DIV_VIA_DOUBLE", c->division,
                                            sizeof c->division, &via_double, err))) {
        goto fail;
    }
    /* local memory of zf_find: the points, the histograms, the scans */
    size_t local = (size_t)clc->group_points * (2 * sizeof(cl_float) + (cfg->mode == ZF_TRIPLETS ? c->rsize + 1 : 0)) +
                   (clc->bare ? 0 : (size_t)c->k.bins * 2 * sizeof(cl_uint)) + 5 * ZF_NEIGHBOURS * ZF_LAYER_SLOTS * 4;
    if (local > dev->local_mem) {
        st = tusk_error_set(err, TUSK_ELIMIT,
                            "z-finder on %s: a work-group needs %zu bytes of local memory (group_points %u, %u bins), "
                            "the device has %llu",
                            tusk_cl_describe(c->cl), local, clc->group_points, c->k.bins,
                            (unsigned long long)dev->local_mem);
        goto fail;
    }
    c->wg = clc->group_size;
    if (dev->max_work_group_size > 0 && c->wg > dev->max_work_group_size)
        c->wg = (unsigned)dev->max_work_group_size;
    c->peak_wg = (unsigned)tusk_cl_floor_pow2(
        dev->max_work_group_size > 0 && dev->max_work_group_size < 128 ? dev->max_work_group_size : 128);
    /* zf_peak is built for peak_wg work-items; zf_find runs what it can */
    tusk_cl_source_t src = {"zfinder.cl", tusk_zfinder_kernel_source, (size_t)tusk_zfinder_kernel_source_size,
                            kernel_names, N_KERNELS};
    if ((st = tusk_cl_kernels_fit(c->cl, &src, 1u << K_PEAK, options, c, &c->peak_wg, &c->ks, err)))
        goto fail;
    if (c->wg > tusk_cl_kernels_limit(c->ks, K_FIND))
        c->wg = (unsigned)tusk_cl_kernels_limit(c->ks, K_FIND);
    /* a queue per slot: the first is libtusk-cl's own */
    for (unsigned i = 0; i < c->slots; i++) {
        slot_t *s = &c->slot[i];
        if (i == 0) {
            s->q = tusk_cl_queue(c->cl);
            continue;
        }
        cl_int rc;
        s->q = clCreateCommandQueue(tusk_cl_context(c->cl), dev->device, CL_QUEUE_PROFILING_ENABLE, &rc);
        s->own_queue = true;
        if ((st = tusk_cl_check(rc, err, "clCreateCommandQueue (z-finder slot %u) on %s", i, tusk_cl_describe(c->cl)))) {
            s->q = NULL;
            goto fail;
        }
    }
    c->scratch = calloc(tusk_pool_threads(c->pool), sizeof *c->scratch);
    if (!c->scratch) {
        st = tusk_error_set(err, TUSK_ENOMEM, "out of memory");
        goto fail;
    }
    c->n_scratch = tusk_pool_threads(c->pool);
    snprintf(c->describe, sizeof c->describe, "%s; %u work-items a slice, %u RoIs a launch, %u slot%s%s%s",
             tusk_cl_describe(c->cl), c->wg, clc->chunk, c->slots, c->slots == 1 ? "" : "s",
             via_double ? "; float division via double" : "",
             c->atom64 ? "" : "; zHisto sums by 32-bit atomics");
    *out = c;
    return TUSK_OK;
fail:
    zf_cl_destroy(&c);
    return st;
}

const char *zf_cl_describe(const zf_cl_t *c)
{
    return c->describe;
}

void zf_cl_stats(const zf_cl_t *c, zf_cl_stats_t *stats)
{
    *stats = c->stats;
    stats->find_ms = (double)c->t_find.total_ns * 1e-6;
    stats->peak_ms = (double)c->t_peak.total_ns * 1e-6;
}

/* Room in slot s for `bytes` of input and `rois` RoIs. */
static int room(zf_cl_t *c, slot_t *s, size_t bytes, size_t rois, tusk_error_t *err)
{
    int st;
    if (bytes > s->in_cap) {
        size_t cap = round_up(bytes + bytes / 4, 4096);
        tusk_cl_pinned_destroy(&s->in);
        tusk_cl_buffer_release(c->cl, &s->d_in);
        s->in_cap = 0;
        if ((st = tusk_cl_pinned_new(c->cl, "z-finder input (pinned)", cap, &s->in, err)) ||
            (st = tusk_cl_buffer_new(c->cl, "z-finder input", CL_MEM_READ_ONLY, cap, NULL, &s->d_in, err)))
            return st;
        s->in_cap = cap;
    }
    if (rois > s->rois_cap) {
        size_t cap = rois;
        size_t hb = cap * c->k.bins;
        tusk_cl_pinned_destroy(&s->res);
        tusk_cl_pinned_destroy(&s->nh);
        tusk_cl_pinned_destroy(&s->zs);
        tusk_cl_buffer_release(c->cl, &s->d_nh);
        tusk_cl_buffer_release(c->cl, &s->d_zs);
        tusk_cl_buffer_release(c->cl, &s->d_res);
        s->rois_cap = 0;
        if ((st = tusk_cl_buffer_new(c->cl, "z-finder nHisto", CL_MEM_READ_WRITE, hb * sizeof(cl_uint), NULL, &s->d_nh,
                                     err)) ||
            (st = tusk_cl_buffer_new(c->cl, "z-finder zHisto", CL_MEM_READ_WRITE, hb * 2 * sizeof(cl_uint), NULL, &s->d_zs,
                                     err)) ||
            (st = tusk_cl_buffer_new(c->cl, "z-finder results", CL_MEM_READ_WRITE, cap * sizeof(zf_dev_result_t), NULL,
                                     &s->d_res, err)) ||
            (st = tusk_cl_pinned_new(c->cl, "z-finder results (pinned)", cap * sizeof(zf_dev_result_t), &s->res, err)))
            return st;
        if (c->clc.keep_histograms &&
            ((st = tusk_cl_pinned_new(c->cl, "z-finder nHisto (pinned)", hb * sizeof(cl_uint), &s->nh, err)) ||
             (st = tusk_cl_pinned_new(c->cl, "z-finder zHisto (pinned)", hb * 2 * sizeof(cl_uint), &s->zs, err))))
            return st;
        s->rois_cap = cap;
    }
    return TUSK_OK;
}

/* Pack RoI i of the chunk (a pool job): its slices, its points sorted by
 * slice (a counting sort), its slice starts. The RoI records are filled
 * before (offsets). */
static void pack_one(void *ctx, size_t i, unsigned thread)
{
    zf_cl_t *c = ctx;
    scratch_t *sc = &c->scratch[thread];
    zf_roi_t roi;
    zf_batch_roi(c->batch, c->pack_first + i, &roi);
    zf_roi_desc_t *d = (zf_roi_desc_t *)c->pack_base + i;
    uint32_t S = d->n_slices;
    if (roi.n > sc->cap_pt) {
        size_t cap = roi.n + roi.n / 4 + 64;
        int32_t *sl = realloc(sc->slice, cap * sizeof *sl);
        if (sl)
            sc->slice = sl;
        float *pr = realloc(sc->phi_rel, cap * sizeof *pr);
        if (pr)
            sc->phi_rel = pr;
        if (!sl || !pr) {
            if (i < sc->err_roi) {
                sc->err_roi = i;
                tusk_error_set(&sc->err, TUSK_ENOMEM, "out of memory (%zu spacepoints)", cap);
            }
            return;
        }
        sc->cap_pt = cap;
    }
    if (S + 1 > sc->cap_sl) {
        size_t cap = S + 1 + S / 4;
        uint32_t *cn = realloc(sc->count, cap * sizeof *cn);
        if (!cn) {
            if (i < sc->err_roi) {
                sc->err_roi = i;
                tusk_error_set(&sc->err, TUSK_ENOMEM, "out of memory (%zu slices)", cap);
            }
            return;
        }
        sc->count = cn;
        sc->cap_sl = cap;
    }
    tusk_error_t e;
    if (zf_slices_of(&c->k, &roi, S, (int)d->wrap, sc->slice, sc->phi_rel, &e) != TUSK_OK) {
        if (i < sc->err_roi) {
            sc->err_roi = i;
            sc->err = e;
        }
        return;
    }
    uint32_t *start = (uint32_t *)(c->pack_base + c->off_slices) + d->first_slice;
    zf_point_t *out = (zf_point_t *)(c->pack_base + c->off_points) + d->first_point;
    uint32_t *cnt = sc->count;
    memset(cnt, 0, (S + 1) * sizeof *cnt);
    for (uint32_t n = 0; n < roi.n; n++)
        cnt[sc->slice[n] + 1]++;
    for (uint32_t k = 0; k < S; k++)
        cnt[k + 1] += cnt[k];
    memcpy(start, cnt, (S + 1) * sizeof *cnt);
    for (uint32_t n = 0; n < roi.n; n++) {
        zf_point_t *p = &out[cnt[sc->slice[n]]++];
        p->rho = roi.pt[n].rho;
        p->phi = sc->phi_rel[n];
        p->z = roi.pt[n].z;
        p->layer = roi.pt[n].layer;
    }
}

/* Collect a finished slot's results into res (and the histograms). */
static int collect(zf_cl_t *c, slot_t *s, zf_result_t *res, tusk_error_t *err)
{
    if (!s->busy)
        return TUSK_OK;
    s->busy = false;
    int st = tusk_cl_check(clWaitForEvents(1, &s->ev[EV_DONE]), err, "waiting for the z-finder on %s",
                           tusk_cl_describe(c->cl));
    if (!st)
        st = tusk_cl_timing_add(&c->t_find, s->ev[EV_FIND], err);
    if (!st && s->ev[EV_PEAK])
        st = tusk_cl_timing_add(&c->t_peak, s->ev[EV_PEAK], err);
    tusk_cl_events_release(s->ev, EV_N);
    if (st)
        return st;
    const zf_dev_result_t *dr = tusk_cl_pinned_ptr(s->res);
    for (size_t i = 0; i < s->n; i++) {
        const zf_dev_result_t *d = &dr[i];
        zf_result_t *r = &res[s->first + i];
        if (d->status & ZF_STATUS_OVERFLOW) {
            zf_roi_t roi;
            zf_batch_roi(c->batch, s->first + i, &roi);
            return tusk_error_set(err, TUSK_ELIMIT,
                                  "RoI %u: a phi slice and its neighbours hold more than the %u spacepoints a work-group "
                                  "keeps (z-finder group_points; zfinder/README.md)",
                                  (unsigned)roi.event, c->clc.group_points);
        }
        memset(r, 0, sizeof *r);
        r->pairs = d->pairs;
        r->entries = d->entries;
        r->n_vertices = c->clc.bare ? 0 : d->n_vertices > 2 ? 2 : d->n_vertices;
        for (unsigned v = 0; v < r->n_vertices; v++) {
            if (c->rsize == sizeof(double)) {
                double z;
                memcpy(&z, &d->z0_bits[v], sizeof z);
                r->vertex[v].z0 = z;
            } else {
                uint32_t u = (uint32_t)d->z0_bits[v];
                float z;
                memcpy(&z, &u, sizeof z);
                r->vertex[v].z0 = (double)z;
            }
            r->vertex[v].count = d->count[v];
            r->vertex[v].bin = d->bin[v];
        }
    }
    if (c->clc.keep_histograms) {
        size_t nb = c->k.bins;
        memcpy(c->h_nh + s->first * nb, tusk_cl_pinned_ptr(s->nh), s->n * nb * sizeof(uint32_t));
        const uint32_t *zs = tusk_cl_pinned_ptr(s->zs); /* the low word, then the high word of each bin */
        for (size_t j = 0; j < s->n * nb; j++)
            c->h_zs[s->first * nb + j] = (uint64_t)zs[2 * j] | (uint64_t)zs[2 * j + 1] << 32;
    }
    return TUSK_OK;
}

/* Set kernel k's arguments first .. first + n - 1 to v[0 .. n), in the arithmetic's precision. */
static int set_reals(zf_cl_t *c, int k, cl_uint first, const double *v, size_t n, tusk_error_t *err)
{
    int st = TUSK_OK;
    for (size_t i = 0; i < n && st == TUSK_OK; i++) {
        cl_double d = v[i];
        cl_float f = (cl_float)v[i];
        st = c->rsize == sizeof d ? tusk_cl_kernels_arg(c->ks, k, first + (cl_uint)i, sizeof d, &d, err)
                                  : tusk_cl_kernels_arg(c->ks, k, first + (cl_uint)i, sizeof f, &f, err);
    }
    return st;
}

/* Pack RoIs [first, first + n) into slot s and start them on its queue. */
static int launch(zf_cl_t *c, slot_t *s, size_t first, size_t n, tusk_error_t *err)
{
    /* the layout: RoI records, slice starts, points; the work-groups go
     * slice by slice over the RoIs (zfinder.cl), as many slices as the
     * widest RoI has */
    size_t n_slices = 0, n_points = 0, max_slices = 0;
    for (size_t i = 0; i < n; i++) {
        zf_roi_t roi;
        int wrap;
        zf_batch_roi(c->batch, first + i, &roi);
        uint32_t S = zf_roi_slices(&c->cfg, roi.phi_width, &wrap);
        n_slices += S + 1;
        n_points += roi.n;
        if (S > max_slices)
            max_slices = S;
    }
    size_t groups = max_slices * n;
    size_t off_slices = round_up(n * sizeof(zf_roi_desc_t), ALIGN);
    size_t off_points = round_up(off_slices + n_slices * sizeof(uint32_t), ALIGN);
    size_t bytes = off_points + n_points * sizeof(zf_point_t);
    if (bytes > UINT32_MAX || groups > UINT32_MAX / 2)
        return tusk_error_set(err, TUSK_ELIMIT, "z-finder: a launch of %zu RoIs needs %zu bytes; lower chunk", n, bytes);
    int st = room(c, s, bytes, n, err);
    if (st)
        return st;
    double t0 = tusk_clock_s();
    uint8_t *base = tusk_cl_pinned_ptr(s->in);
    zf_roi_desc_t *d = (zf_roi_desc_t *)base;
    uint32_t fp = 0, fs = 0;
    for (size_t i = 0; i < n; i++) {
        zf_roi_t roi;
        int wrap;
        zf_batch_roi(c->batch, first + i, &roi);
        uint32_t S = zf_roi_slices(&c->cfg, roi.phi_width, &wrap);
        memset(&d[i], 0, sizeof d[i]);
        d[i].first_point = fp;
        d[i].first_slice = fs;
        d[i].n_slices = S;
        d[i].wrap = (tusk_u32)wrap;
        fp += roi.n;
        fs += S + 1;
    }
    c->pack_first = first;
    c->pack_base = base;
    c->off_slices = off_slices;
    c->off_points = off_points;
    for (unsigned t = 0; t < c->n_scratch; t++)
        c->scratch[t].err_roi = SIZE_MAX;
    tusk_pool_run(c->pool, n, pack_one, c);
    c->stats.pack_s += tusk_clock_s() - t0;
    size_t worst = SIZE_MAX;
    for (unsigned t = 0; t < c->n_scratch; t++)
        if (c->scratch[t].err_roi < worst) {
            worst = c->scratch[t].err_roi;
            if (err)
                *err = c->scratch[t].err;
        }
    if (worst != SIZE_MAX)
        return err ? err->code : TUSK_EINVAL;

    const char *dev = tusk_cl_describe(c->cl);
    size_t hb = n * c->k.bins;
    cl_uint a_slices = (cl_uint)off_slices, a_points = (cl_uint)off_points, a_n = (cl_uint)n;
    if ((st = tusk_cl_write(c->cl, s->q, s->d_in, CL_FALSE, bytes, base, NULL, "z-finder input", err)) ||
        (st = tusk_cl_zero(c->cl, s->q, s->d_res, n * sizeof(zf_dev_result_t), "z-finder results", err)))
        return st;
    if (!c->clc.bare && ((st = tusk_cl_zero(c->cl, s->q, s->d_nh, hb * sizeof(cl_uint), "z-finder nHisto", err)) ||
                         (st = tusk_cl_zero(c->cl, s->q, s->d_zs, hb * 2 * sizeof(cl_uint), "z-finder zHisto", err))))
        return st;
    const tusk_cl_arg_t a_find[] = {TUSK_CL_ARG(s->d_in), TUSK_CL_ARG(a_slices), TUSK_CL_ARG(a_points),
                                    TUSK_CL_ARG(a_n),    TUSK_CL_ARG(s->d_nh),  TUSK_CL_ARG(s->d_zs),
                                    TUSK_CL_ARG(s->d_res)};
    const double r_find[] = {c->k.z_min, c->k.inv_bin, c->k.n_bins, c->k.tol_z, c->k.tol_phi};
    if ((st = tusk_cl_kernels_args(c->ks, K_FIND, a_find, 7, err)) || (st = set_reals(c, K_FIND, 7, r_find, 5, err)) ||
        (st = tusk_cl_kernels_launch(c->ks, K_FIND, s->q, groups, c->wg, &s->ev[EV_FIND], err)))
        return st;
    s->busy = true; /* from here on the slot holds events to wait for */
    s->first = first;
    s->n = n;
    if (!c->clc.bare) {
        const cl_mem a_peak[] = {s->d_nh, s->d_zs, s->d_res};
        const double r_peak[] = {c->k.z_min, c->k.bin};
        if ((st = tusk_cl_kernels_buffers(c->ks, K_PEAK, a_peak, 3, err)) ||
            (st = set_reals(c, K_PEAK, 3, r_peak, 2, err)) ||
            (st = tusk_cl_kernels_launch(c->ks, K_PEAK, s->q, n, c->peak_wg, &s->ev[EV_PEAK], err)))
            return st;
    }
    if (c->clc.keep_histograms && !c->clc.bare &&
        ((st = tusk_cl_read(c->cl, s->q, s->d_nh, CL_FALSE, hb * sizeof(cl_uint), tusk_cl_pinned_ptr(s->nh), NULL,
                            "z-finder nHisto", err)) ||
         (st = tusk_cl_read(c->cl, s->q, s->d_zs, CL_FALSE, hb * 2 * sizeof(cl_uint), tusk_cl_pinned_ptr(s->zs), NULL,
                            "z-finder zHisto", err))))
        return st;
    if ((st = tusk_cl_read(c->cl, s->q, s->d_res, CL_FALSE, n * sizeof(zf_dev_result_t), tusk_cl_pinned_ptr(s->res),
                           &s->ev[EV_DONE], "z-finder results", err)) ||
        (st = tusk_cl_check(clFlush(s->q), err, "clFlush on %s", dev)))
        return st;
    c->stats.launches++;
    c->stats.rois += n;
    c->stats.groups += groups;
    return TUSK_OK;
}

/* After a failure: let every slot finish, forget what it held. */
static void drain(zf_cl_t *c)
{
    for (unsigned i = 0; i < c->slots; i++)
        settle(&c->slot[i]);
}

int zf_cl_run(zf_cl_t *c, const zf_batch_t *b, zf_result_t *res, tusk_error_t *err)
{
    size_t n = zf_batch_count(b);
    c->batch = b;
    c->h_n = 0;
    if (c->clc.keep_histograms && n > c->h_cap) {
        uint32_t *nh = realloc(c->h_nh, n * c->k.bins * sizeof *nh);
        if (nh)
            c->h_nh = nh;
        uint64_t *zs = realloc(c->h_zs, n * c->k.bins * sizeof *zs);
        if (zs)
            c->h_zs = zs;
        if (!nh || !zs)
            return tusk_error_set(err, TUSK_ENOMEM, "out of memory (histograms of %zu RoIs)", n);
        c->h_cap = n;
    }
    int st = TUSK_OK;
    unsigned next = 0;
    for (size_t first = 0; first < n && !st; first += c->clc.chunk) {
        slot_t *s = &c->slot[next];
        next = (next + 1) % c->slots;
        /* the slot's previous chunk first: its buffers are reused */
        if ((st = collect(c, s, res, err)))
            break;
        st = launch(c, s, first, n - first < c->clc.chunk ? n - first : c->clc.chunk, err);
    }
    for (unsigned i = 0; i < c->slots && !st; i++)
        st = collect(c, &c->slot[(next + i) % c->slots], res, err);
    if (st) {
        drain(c);
        return st;
    }
    c->h_n = c->clc.keep_histograms ? n : 0;
    return TUSK_OK;
}

int zf_cl_histograms(const zf_cl_t *c, size_t i, uint32_t *nh, uint64_t *zsum, tusk_error_t *err)
{
    if (i >= c->h_n)
        return tusk_error_set(err, TUSK_EINVAL,
                              "z-finder opencl: no histograms of RoI %zu (the last run had %zu; keep_histograms %s)", i,
                              c->h_n, c->clc.keep_histograms ? "on" : "off");
    memcpy(nh, c->h_nh + i * c->k.bins, c->k.bins * sizeof *nh);
    memcpy(zsum, c->h_zs + i * c->k.bins, c->k.bins * sizeof *zsum);
    return TUSK_OK;
}
