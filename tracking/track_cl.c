/* track_cl.c - the OpenCL backend of gamma-ray tracking (tusk/track_cl.h;
 * the kernel is kernels/track.cl): the pipeline of tracker.c with an
 * evaluator that packs the clusters of 2+ points of a pass, runs one
 * work-group a cluster, and reads back each one's best rank. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracking_private.h"
#include "tusk/cl.h"
#include "tusk/track_cl.h"

/* The kernel's source, tusk_track_kernel_source (tracking_private.h):
 * made by tools/embed-text.sh from opencl/gpu_common.h, track_shared.h and
 * kernels/track.cl. */

#define WG_DEFAULT 64            /* work-items a cluster: 8! = 40320 orders over 64 is 630 each */
#define CHUNK ((size_t)1 << 16)  /* clusters a launch at most */

struct track_cl {
    track_t *t;
    tusk_cl_t *cl;
    cl_program program;
    cl_kernel kernel;
    unsigned wg;
    cl_mem table, pts, count, out;
    size_t cap;                  /* clusters the device buffers hold */
    trk_dev_point_t *h_pts;      /* TRK_MAX_POINTS a cluster */
    cl_uint *h_count;            /* a cluster */
    trk_dev_result_t *h_out;     /* a cluster */
    size_t *map;                 /* device cluster -> index in the pass */
    size_t h_cap;
    tusk_cl_timing_t timing;
    track_cl_stats_t stats;
    char describe[2 * TUSK_CL_TEXT_MAX + 200];
};

static size_t floor_pow2(size_t n)
{
    size_t p = 1;
    while (p <= n / 2)
        p *= 2;
    return p;
}

static int set_arg(track_cl_t *c, cl_uint index, size_t size, const void *value, tusk_error_t *err)
{
    return tusk_cl_check(clSetKernelArg(c->kernel, index, size, value), err,
                         "clSetKernelArg(track_orders, %u, %zu bytes) on %s", (unsigned)index, size,
                         tusk_cl_describe(c->cl));
}

static void unbuild(track_cl_t *c)
{
    if (c->kernel)
        clReleaseKernel(c->kernel);
    if (c->program)
        clReleaseProgram(c->program);
    c->kernel = NULL;
    c->program = NULL;
}

/* Build for c->wg work-items; narrower while the kernel cannot run that
 * wide on the device (registers). */
static int build(track_cl_t *c, tusk_error_t *err)
{
    const tusk_cl_device_info_t *dev = tusk_cl_device(c->cl);
    for (;;) {
        char opt[512] = "", wg[16], mec2[64];
        snprintf(wg, sizeof wg, "%u", c->wg);
        snprintf(mec2, sizeof mec2, "%af", (double)(float)c->t->setup.mec2);
        int st;
        if ((st = tusk_cl_define(opt, sizeof opt, "TRK_WG", wg, err)) ||
            (st = tusk_cl_define(opt, sizeof opt, "TRK_MEC2", mec2, err)))
            return st;
        if ((st = tusk_cl_program_build(c->cl, "track.cl", tusk_track_kernel_source,
                                        (size_t)tusk_track_kernel_source_size, opt, &c->program, err)) ||
            (st = tusk_cl_kernel_new(c->cl, c->program, "track_orders", &c->kernel, err)))
            return st;
        size_t kmax = 0;
        if ((st = tusk_cl_check(clGetKernelWorkGroupInfo(c->kernel, dev->device, CL_KERNEL_WORK_GROUP_SIZE,
                                                         sizeof kmax, &kmax, NULL),
                                err, "clGetKernelWorkGroupInfo(track_orders, CL_KERNEL_WORK_GROUP_SIZE) on %s",
                                tusk_cl_describe(c->cl))))
            return st;
        if (kmax >= c->wg)
            return TUSK_OK;
        unbuild(c);
        if (kmax < 1)
            return tusk_error_set(err, TUSK_ELIMIT, "track_orders on %s: the kernel cannot run at all",
                                  tusk_cl_describe(c->cl));
        c->wg = (unsigned)floor_pow2(kmax);
    }
}

int track_cl_new(track_cl_t **out, track_t *tracker, const char *setting, unsigned instance, tusk_error_t *err)
{
    *out = NULL;
    if (!tracker)
        return tusk_error_set(err, TUSK_EINVAL, "track_cl_new: no tracker");
    track_cl_t *c = calloc(1, sizeof *c);
    if (!c)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    c->t = tracker;
    tusk_cl_timing_reset(&c->timing);
    tusk_cl_config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.device = setting;
    cfg.instance = instance;
    int st = tusk_cl_new(&c->cl, &cfg, err);
    if (st)
        goto fail;
    const tusk_cl_device_info_t *dev = tusk_cl_device(c->cl);
    c->wg = WG_DEFAULT;
    if (dev->max_work_group_size > 0 && c->wg > dev->max_work_group_size)
        c->wg = (unsigned)floor_pow2(dev->max_work_group_size);
    if ((st = build(c, err)))
        goto fail;
    /* The attenuation tables, as float. */
    cl_float tab[3 * TRK_TABLE_N];
    for (int i = 0; i < 3 * TRK_TABLE_N; i++)
        tab[i] = (cl_float)tracker->mu[i];
    if ((st = tusk_cl_buffer_new(c->cl, "tracking attenuation table", CL_MEM_READ_ONLY, sizeof tab, NULL, &c->table,
                                 err)) ||
        (st = tusk_cl_check(clEnqueueWriteBuffer(tusk_cl_queue(c->cl), c->table, CL_TRUE, 0, sizeof tab, tab, 0, NULL,
                                                 NULL),
                            err, "clEnqueueWriteBuffer(tracking attenuation table) on %s", tusk_cl_describe(c->cl))))
        goto fail;
    snprintf(c->describe, sizeof c->describe, "%s; %u work-items a cluster", tusk_cl_describe(c->cl), c->wg);
    *out = c;
    return TUSK_OK;
fail:
    track_cl_destroy(&c);
    return st;
}

void track_cl_destroy(track_cl_t **cl)
{
    if (!cl || !*cl)
        return;
    track_cl_t *c = *cl;
    if (c->cl) {
        clFinish(tusk_cl_queue(c->cl));
        tusk_cl_buffer_release(c->cl, &c->table);
        tusk_cl_buffer_release(c->cl, &c->pts);
        tusk_cl_buffer_release(c->cl, &c->count);
        tusk_cl_buffer_release(c->cl, &c->out);
    }
    unbuild(c);
    tusk_cl_destroy(&c->cl);
    free(c->h_pts);
    free(c->h_count);
    free(c->h_out);
    free(c->map);
    free(c);
    *cl = NULL;
}

const char *track_cl_describe(const track_cl_t *cl)
{
    return cl->describe;
}

void track_cl_stats(const track_cl_t *cl, track_cl_stats_t *stats)
{
    *stats = cl->stats;
    stats->kernel_ms = (double)cl->timing.total_ns * 1e-6;
}

/* Host and device room for m clusters. */
static int room(track_cl_t *c, size_t m, tusk_error_t *err)
{
    if (m > c->h_cap) {
        size_t n = m + m / 4;
        trk_dev_point_t *p = realloc(c->h_pts, n * TRK_MAX_POINTS * sizeof *p);
        if (p)
            c->h_pts = p;
        cl_uint *k = realloc(c->h_count, n * sizeof *k);
        if (k)
            c->h_count = k;
        trk_dev_result_t *o = realloc(c->h_out, n * sizeof *o);
        if (o)
            c->h_out = o;
        size_t *mp = realloc(c->map, n * sizeof *mp);
        if (mp)
            c->map = mp;
        if (!p || !k || !o || !mp)
            return tusk_error_set(err, TUSK_ENOMEM, "out of memory (%zu clusters)", n);
        c->h_cap = n;
    }
    size_t need = m < CHUNK ? m : CHUNK;
    if (need > c->cap) {
        size_t n = need + need / 4;
        if (n > CHUNK)
            n = CHUNK;
        tusk_cl_buffer_release(c->cl, &c->pts);
        tusk_cl_buffer_release(c->cl, &c->count);
        tusk_cl_buffer_release(c->cl, &c->out);
        c->cap = 0;
        int st;
        if ((st = tusk_cl_buffer_new(c->cl, "tracking cluster points", CL_MEM_READ_ONLY,
                                     n * TRK_MAX_POINTS * sizeof(trk_dev_point_t), NULL, &c->pts, err)) ||
            (st = tusk_cl_buffer_new(c->cl, "tracking cluster sizes", CL_MEM_READ_ONLY, n * sizeof(cl_uint), NULL,
                                     &c->count, err)) ||
            (st = tusk_cl_buffer_new(c->cl, "tracking best orders", CL_MEM_WRITE_ONLY, n * sizeof(trk_dev_result_t),
                                     NULL, &c->out, err)))
            return st;
        c->cap = n;
    }
    return TUSK_OK;
}

static int launch(track_cl_t *c, size_t first, size_t m, tusk_error_t *err)
{
    cl_command_queue q = tusk_cl_queue(c->cl);
    const char *dev = tusk_cl_describe(c->cl);
    const track_t *t = c->t;
    cl_float inner = (cl_float)t->setup.inner, w0 = (cl_float)t->setup.w0, w1 = (cl_float)t->setup.w1;
    cl_float ln_e0 = (cl_float)t->setup.ln_e0, inv_step = (cl_float)t->setup.inv_step;
    size_t pbytes = m * TRK_MAX_POINTS * sizeof(trk_dev_point_t);
    int st;
    if ((st = tusk_cl_check(clEnqueueWriteBuffer(q, c->pts, CL_FALSE, 0, pbytes, c->h_pts + first * TRK_MAX_POINTS, 0,
                                                 NULL, NULL),
                            err, "clEnqueueWriteBuffer(tracking cluster points, %zu bytes) on %s", pbytes, dev)) ||
        (st = tusk_cl_check(clEnqueueWriteBuffer(q, c->count, CL_FALSE, 0, m * sizeof(cl_uint), c->h_count + first, 0,
                                                 NULL, NULL),
                            err, "clEnqueueWriteBuffer(tracking cluster sizes) on %s", dev)) ||
        (st = set_arg(c, 0, sizeof c->pts, &c->pts, err)) || (st = set_arg(c, 1, sizeof c->count, &c->count, err)) ||
        (st = set_arg(c, 2, sizeof c->table, &c->table, err)) || (st = set_arg(c, 3, sizeof c->out, &c->out, err)) ||
        (st = set_arg(c, 4, sizeof inner, &inner, err)) || (st = set_arg(c, 5, sizeof w0, &w0, err)) ||
        (st = set_arg(c, 6, sizeof w1, &w1, err)) || (st = set_arg(c, 7, sizeof ln_e0, &ln_e0, err)) ||
        (st = set_arg(c, 8, sizeof inv_step, &inv_step, err)))
        return st;
    size_t global = m * c->wg, local = c->wg;
    if ((st = tusk_cl_run(c->cl, c->kernel, 1, &global, &local, &c->timing, err)))
        return st;
    c->stats.launches++;
    return tusk_cl_check(clEnqueueReadBuffer(q, c->out, CL_TRUE, 0, m * sizeof(trk_dev_result_t), c->h_out + first, 0,
                                             NULL, NULL),
                         err, "clEnqueueReadBuffer(tracking best orders) on %s", dev);
}

static int eval_cl(void *ctx, track_t *t, const track_batch_t *b, trk_cluster_t *cl, size_t n, tusk_error_t *err)
{
    track_cl_t *c = ctx;
    (void)t;
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        m += cl[i].n >= 2;
    if (m == 0)
        return TUSK_OK;
    int st = room(c, m, err);
    if (st)
        return st;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (cl[i].n < 2)
            continue;
        trk_dev_point_t *p = c->h_pts + k * TRK_MAX_POINTS;
        memset(p, 0, TRK_MAX_POINTS * sizeof *p);
        for (unsigned j = 0; j < cl[i].n; j++) {
            const track_point_t *q = &b->pt[cl[i].pt[j]];
            p[j].x = q->pos[0];
            p[j].y = q->pos[1];
            p[j].z = q->pos[2];
            p[j].energy = q->energy;
        }
        c->h_count[k] = cl[i].n;
        c->map[k] = i;
        c->stats.orders += trk_factorial(cl[i].n);
        k++;
    }
    for (size_t first = 0; first < m && !st; first += CHUNK)
        st = launch(c, first, m - first < CHUNK ? m - first : CHUNK, err);
    if (st)
        return st;
    c->stats.clusters += m;
    for (k = 0; k < m; k++) {
        trk_cluster_t *x = &cl[c->map[k]];
        uint32_t rank = c->h_out[k].rank;
        if (rank >= trk_factorial(x->n))
            return tusk_error_set(err, TUSK_ECL, "%s: track_orders returned rank %u for a cluster of %u points",
                                  tusk_cl_describe(c->cl), (unsigned)rank, (unsigned)x->n);
        x->rank = rank;
    }
    return TUSK_OK;
}

int track_cl_run(track_cl_t *cl, track_batch_t *batch, tusk_error_t *err)
{
    return trk_pipeline(cl->t, batch, 0, batch->n_ev, eval_cl, cl, err);
}

int track_cl_run_range(track_cl_t *cl, track_batch_t *batch, size_t first, size_t n, tusk_error_t *err)
{
    return trk_pipeline(cl->t, batch, first, n, eval_cl, cl, err);
}
