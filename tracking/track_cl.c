/* track_cl.c - the OpenCL backend of gamma-ray tracking (tusk/track_cl.h;
 * the kernel is kernels/track.cl): the pipeline of pipeline.c with an
 * evaluator that packs the clusters of 2+ points of a pass of every chunk
 * into pinned host memory (on the tracker's threads), queues the launches
 * (one work-group a cluster), and reads back each one's best rank. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
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
    cl_mem table;
    tusk_cl_room_t pts, count, out; /* a piece of a pass: points, sizes, best orders */
    tusk_cl_pinned_t *h_pts;     /* a pass: TRK_MAX_POINTS trk_dev_point_t a cluster */
    tusk_cl_pinned_t *h_count;   /*   cl_uint a cluster */
    tusk_cl_pinned_t *h_out;     /*   trk_dev_result_t a cluster */
    cl_event *ev;                /* a pass's kernels */
    size_t ev_cap;
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
        tusk_cl_buffer_release(c->cl, &c->pts.mem);
        tusk_cl_buffer_release(c->cl, &c->count.mem);
        tusk_cl_buffer_release(c->cl, &c->out.mem);
        tusk_cl_pinned_destroy(&c->h_pts);
        tusk_cl_pinned_destroy(&c->h_count);
        tusk_cl_pinned_destroy(&c->h_out);
    }
    unbuild(c);
    tusk_cl_destroy(&c->cl);
    free(c->ev);
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

/* Host (pinned) and device room for m clusters of a pass. */
static int room(track_cl_t *c, size_t m, tusk_error_t *err)
{
    int st;
    if ((st = tusk_cl_pinned_room(c->cl, "tracking cluster points (pinned)",
                                  m * TRK_MAX_POINTS * sizeof(trk_dev_point_t), &c->h_pts, err)) ||
        (st = tusk_cl_pinned_room(c->cl, "tracking cluster sizes (pinned)", m * sizeof(cl_uint), &c->h_count, err)) ||
        (st = tusk_cl_pinned_room(c->cl, "tracking best orders (pinned)", m * sizeof(trk_dev_result_t), &c->h_out,
                                  err)))
        return st;
    size_t need = m < CHUNK ? m : CHUNK;
    if ((st = tusk_cl_buffer_room(c->cl, "tracking cluster points", CL_MEM_READ_ONLY,
                                  need * TRK_MAX_POINTS * sizeof(trk_dev_point_t), &c->pts, err)) ||
        (st = tusk_cl_buffer_room(c->cl, "tracking cluster sizes", CL_MEM_READ_ONLY, need * sizeof(cl_uint),
                                  &c->count, err)) ||
        (st = tusk_cl_buffer_room(c->cl, "tracking best orders", CL_MEM_WRITE_ONLY, need * sizeof(trk_dev_result_t),
                                  &c->out, err)))
        return st;
    if (tusk_grow(&c->ev, &c->ev_cap, (m + CHUNK - 1) / CHUNK, sizeof *c->ev))
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    return TUSK_OK;
}

/* Pack a chunk's clusters of 2+ points of the pass at its place (on the
 * pipeline's threads). */
typedef struct pack_job {
    track_cl_t *c;
    const track_t *t;
    const track_batch_t *b;
} pack_job_t;

static void pack_chunk(void *ctx, size_t k, unsigned thread)
{
    const pack_job_t *j = ctx;
    const trk_chunk_t *ch = &j->t->chunk[k];
    trk_dev_point_t *pts = tusk_cl_pinned_ptr(j->c->h_pts);
    cl_uint *count = tusk_cl_pinned_ptr(j->c->h_count);
    (void)thread;
    size_t d = ch->dev;
    for (size_t i = ch->from; i < ch->cl_n; i++) {
        const trk_cluster_t *x = &ch->cl[i];
        if (x->n < 2)
            continue;
        trk_dev_point_t *p = pts + d * TRK_MAX_POINTS;
        memset(p, 0, TRK_MAX_POINTS * sizeof *p);
        track_point_t merged[TRACK_MAX_CLUSTER];
        if (x->m > x->n)
            track_cluster_points(j->b, x, merged);
        for (unsigned q = 0; q < x->n; q++) {
            const track_point_t *y = x->m > x->n ? &merged[q] : &j->b->pt[x->pt[q]];
            p[q].x = y->pos[0];
            p[q].y = y->pos[1];
            p[q].z = y->pos[2];
            p[q].energy = y->energy;
        }
        count[d++] = x->n;
    }
}

/* Every launch of a pass, in pieces of at most CHUNK clusters, queued
 * (in order) without waiting; then one wait, and the kernels' times. */
static int launch_all(track_cl_t *c, size_t m, tusk_error_t *err)
{
    cl_command_queue q = tusk_cl_queue(c->cl);
    const char *dev = tusk_cl_describe(c->cl);
    const track_t *t = c->t;
    cl_float inner = (cl_float)t->setup.inner, w0 = (cl_float)t->setup.w0, w1 = (cl_float)t->setup.w1;
    cl_float ln_e0 = (cl_float)t->setup.ln_e0, inv_step = (cl_float)t->setup.inv_step;
    const char *hp = tusk_cl_pinned_ptr(c->h_pts), *hc = tusk_cl_pinned_ptr(c->h_count);
    char *ho = tusk_cl_pinned_ptr(c->h_out);
    int st;
    if ((st = set_arg(c, 0, sizeof c->pts.mem, &c->pts.mem, err)) ||
        (st = set_arg(c, 1, sizeof c->count.mem, &c->count.mem, err)) ||
        (st = set_arg(c, 2, sizeof c->table, &c->table, err)) ||
        (st = set_arg(c, 3, sizeof c->out.mem, &c->out.mem, err)) ||
        (st = set_arg(c, 4, sizeof inner, &inner, err)) || (st = set_arg(c, 5, sizeof w0, &w0, err)) ||
        (st = set_arg(c, 6, sizeof w1, &w1, err)) || (st = set_arg(c, 7, sizeof ln_e0, &ln_e0, err)) ||
        (st = set_arg(c, 8, sizeof inv_step, &inv_step, err)))
        return st;
    size_t n_ev = 0;
    for (size_t first = 0; first < m && !st; first += CHUNK) {
        const size_t k = m - first < CHUNK ? m - first : CHUNK;
        const size_t pbytes = k * TRK_MAX_POINTS * sizeof(trk_dev_point_t);
        const size_t global = k * c->wg, local = c->wg;
        cl_event ev = NULL;
        if ((st = tusk_cl_check(clEnqueueWriteBuffer(q, c->pts.mem, CL_FALSE, 0, pbytes,
                                                     hp + first * TRK_MAX_POINTS * sizeof(trk_dev_point_t), 0, NULL,
                                                     NULL),
                                err, "clEnqueueWriteBuffer(tracking cluster points, %zu bytes) on %s", pbytes, dev)) ||
            (st = tusk_cl_check(clEnqueueWriteBuffer(q, c->count.mem, CL_FALSE, 0, k * sizeof(cl_uint),
                                                     hc + first * sizeof(cl_uint), 0, NULL, NULL),
                                err, "clEnqueueWriteBuffer(tracking cluster sizes) on %s", dev)) ||
            (st = tusk_cl_check(clEnqueueNDRangeKernel(q, c->kernel, 1, NULL, &global, &local, 0, NULL, &ev), err,
                                "clEnqueueNDRangeKernel(track_orders, global %zu, local %zu) on %s", global, local,
                                dev)))
            break;
        c->ev[n_ev++] = ev;
        c->stats.launches++;
        st = tusk_cl_check(clEnqueueReadBuffer(q, c->out.mem, CL_FALSE, 0, k * sizeof(trk_dev_result_t),
                                               ho + first * sizeof(trk_dev_result_t), 0, NULL, NULL),
                           err, "clEnqueueReadBuffer(tracking best orders) on %s", dev);
    }
    /* whatever was queued ends before the host buffers are touched again */
    int fin = tusk_cl_check(clFinish(q), st ? NULL : err, "clFinish on %s", dev);
    if (!st)
        st = fin;
    for (size_t i = 0; i < n_ev; i++) {
        if (!st)
            st = tusk_cl_timing_add(&c->timing, c->ev[i], err);
        clReleaseEvent(c->ev[i]);
    }
    return st;
}

/* A pass of every chunk: places, packing on the threads, the launches. */
static int eval_pass(void *ctx, track_t *t, const track_batch_t *b, tusk_error_t *err)
{
    track_cl_t *c = ctx;
    size_t m = 0;
    uint64_t orders = 0;
    for (size_t k = 0; k < t->n_chunks; k++) {
        t->chunk[k].dev = m;
        m += t->chunk[k].multi;
        orders += t->chunk[k].multi_orders;
    }
    if (m == 0)
        return TUSK_OK;
    if (m > UINT32_MAX)
        return tusk_error_set(err, TUSK_ELIMIT, "%zu clusters in a pass: more than a launch can number", m);
    int st = room(c, m, err);
    if (st)
        return st;
    pack_job_t j = {c, t, b};
    trk_chunks_run(t, pack_chunk, &j);
    if ((st = launch_all(c, m, err)))
        return st;
    c->stats.clusters += m;
    c->stats.orders += orders;
    return TUSK_OK;
}

/* The ranks of a chunk's clusters, checked. */
static int eval_fetch(void *ctx, const track_t *t, trk_chunk_t *ch, tusk_error_t *err)
{
    const track_cl_t *c = ctx;
    const trk_dev_result_t *out = tusk_cl_pinned_ptr(c->h_out);
    (void)t;
    size_t d = ch->dev;
    for (size_t i = ch->from; i < ch->cl_n; i++) {
        trk_cluster_t *x = &ch->cl[i];
        if (x->n < 2)
            continue;
        uint32_t rank = out[d++].rank;
        if (rank >= trk_factorial(x->n))
            return tusk_error_set(err, TUSK_ECL, "%s: track_orders returned rank %u for a cluster of %u points",
                                  tusk_cl_describe(c->cl), (unsigned)rank, (unsigned)x->n);
        x->rank = rank;
    }
    return TUSK_OK;
}

int track_cl_run(track_cl_t *cl, track_batch_t *batch, tusk_error_t *err)
{
    const trk_eval_t e = {cl, NULL, eval_pass, eval_fetch};
    return trk_pipeline(cl->t, batch, 0, batch->n_ev, &e, err);
}

int track_cl_run_range(track_cl_t *cl, track_batch_t *batch, size_t first, size_t n, tusk_error_t *err)
{
    const trk_eval_t e = {cl, NULL, eval_pass, eval_fetch};
    return trk_pipeline(cl->t, batch, first, n, &e, err);
}
