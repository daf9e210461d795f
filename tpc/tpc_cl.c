/* tpc_cl.c - the OpenCL backend of the TPC slice tracker (tusk/tpc.h; the
 * kernels are kernels/tpc.cl, the design tpc/README.md).
 *
 * A batch of slices is one launch of each step. The host does step 0
 * (tpc_data.c, on its thread pool) straight into pinned buffers and sends
 * the rows, slices, compressed clusters and grids; on the device the
 * kernels take them from clusters to tracks without the data leaving:
 * neighbours, cleaner, start hits (ordered by a prefix sum), the tracklet
 * constructor and the selector. The host reads the counters twice (the
 * start hits, to size the tracklets; the tracks, to size the output),
 * then the tracks, their parameters and clusters, in tracklet order, and
 * does step VI (tpc_slice.c's output) on its pool. Every step is timed
 * with profiling events. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "tusk/cl.h"
#include "tpc_private.h"

enum { K_NF, K_NC, K_START, K_SCAN_BLOCKS, K_SCAN_TOP, K_SCAN_ADD, K_START_WRITE, K_SLICE_STARTS, K_CONSTRUCT,
       K_SEL_COUNT, K_SEL_WRITE, K_COPY, N_KERNELS };
static const char *const kernel_names[N_KERNELS] = {
    "tpc_neighbours_k", "tpc_clean_k",      "tpc_start_k",     "tpc_scan_blocks",    "tpc_scan_top",
    "tpc_scan_add",     "tpc_start_write",  "tpc_slice_starts", "tpc_construct_k",   "tpc_select_count_k",
    "tpc_select_write_k", "tpc_copy"};

enum { B_ROWS, B_SLICES, B_ROW_OF, B_YZ, B_FBIN, B_UP, B_DN, B_LINK, B_WEIGHT, B_FLAG, B_POS, B_BSUM, B_COUNTERS,
       B_START, B_TRACKLETS, B_HITS, B_NTR, B_NHI, B_TRAT, B_HIAT, B_OUT_TRACKS, B_OUT_PARAMS, B_OUT_HITS, N_BUFS };
static const char *const buf_names[N_BUFS] = {
    "TPC rows",           "TPC slices",       "TPC cluster rows",   "TPC clusters",        "TPC grids",
    "TPC up links",       "TPC down links",   "TPC links",          "TPC cluster weights", "TPC start flags",
    "TPC start places",   "TPC prefix sums",  "TPC counters",       "TPC start hits",      "TPC tracklets",
    "TPC row hits",       "TPC track counts", "TPC hit counts",     "TPC track places",    "TPC hit places",
    "TPC tracks",         "TPC track parameters", "TPC track clusters"};

enum { P_ROWS, P_SLICES, P_YZ, P_ROW_OF, P_FBIN, P_COUNTERS, P_OUT_TRACKS, P_OUT_PARAMS, P_OUT_HITS, N_PINNED };
static const char *const pin_names[N_PINNED] = {
    "TPC rows (pinned)",   "TPC slices (pinned)", "TPC clusters (pinned)", "TPC cluster rows (pinned)",
    "TPC grids (pinned)",  "TPC counters (pinned)", "TPC tracks (pinned)", "TPC track parameters (pinned)",
    "TPC track clusters (pinned)"};

typedef struct dbuf {
    cl_mem mem;
    size_t cap;
} dbuf_t;

struct tpc_cl {
    tpc_config_t cfg;
    tpc_params_t p;
    tpc_cl_config_t clc;
    tusk_cl_t *cl;
    cl_program program;
    cl_kernel k[N_KERNELS];
    unsigned wg;              /* work-items a group, as built */
    char extra[128];          /* the division option */
    dbuf_t d[N_BUFS];
    tusk_cl_pinned_t *pin[N_PINNED];
    tusk_pool_t *pool;
    tpc_data_t data;
    /* step VI */
    const tpc_batch_t *batch;
    tpc_result_t *res;
    const tpc_dev_slice_t *sl;
    const tpc_sel_track_t *tracks;
    const tpc_tracklet_t *params;
    const uint32_t *hits;
    size_t *slice_track;      /* per slice: its first track (n_slices + 1) */
    size_t cap_slice_track;
    tpc_times_t t;
    char describe[2 * TUSK_CL_TEXT_MAX + 256];
};

void tpc_cl_config_default(tpc_cl_config_t *c)
{
    memset(c, 0, sizeof *c);
    c->group_size = 128;
}

static void release_program(tpc_cl_t *c)
{
    for (int i = 0; i < N_KERNELS; i++)
        if (c->k[i]) {
            clReleaseKernel(c->k[i]);
            c->k[i] = NULL;
        }
    if (c->program) {
        clReleaseProgram(c->program);
        c->program = NULL;
    }
}

void tpc_cl_destroy(tpc_cl_t **cl)
{
    if (!cl || !*cl)
        return;
    tpc_cl_t *c = *cl;
    if (c->cl) {
        clFinish(tusk_cl_queue(c->cl));
        for (int i = 0; i < N_BUFS; i++)
            tusk_cl_buffer_release(c->cl, &c->d[i].mem);
        for (int i = 0; i < N_PINNED; i++)
            tusk_cl_pinned_destroy(&c->pin[i]);
    }
    release_program(c);
    tusk_cl_destroy(&c->cl);
    tusk_pool_destroy(&c->pool);
    tpc_data_free(&c->data);
    free(c->slice_track);
    free(c);
    *cl = NULL;
}

/* Build the kernels for c->wg work-items a group; when a kernel cannot run
 * that many, the largest power of two it can, and build again. */
static int build(tpc_cl_t *c, tusk_error_t *err)
{
    for (;;) {
        release_program(c);
        char opt[512], v[32];
        snprintf(opt, sizeof opt, "%s", c->extra);
        int st;
        snprintf(v, sizeof v, "%u", c->wg);
        if ((st = tusk_cl_define(opt, sizeof opt, "TPC_WG", v, err)))
            return st;
        if ((st = tusk_cl_program_build(c->cl, "tpc.cl", tusk_tpc_kernel_source, (size_t)tusk_tpc_kernel_source_size,
                                        opt, &c->program, err)))
            return st;
        size_t least = c->wg;
        for (int i = 0; i < N_KERNELS; i++) {
            if ((st = tusk_cl_kernel_new(c->cl, c->program, kernel_names[i], &c->k[i], err)))
                return st;
            size_t kwg = 0;
            if ((st = tusk_cl_check(clGetKernelWorkGroupInfo(c->k[i], tusk_cl_device(c->cl)->device,
                                                             CL_KERNEL_WORK_GROUP_SIZE, sizeof kwg, &kwg, NULL),
                                    err, "clGetKernelWorkGroupInfo(%s) on %s", kernel_names[i],
                                    tusk_cl_describe(c->cl))))
                return st;
            if (kwg < least)
                least = kwg;
        }
        if (least >= c->wg)
            return TUSK_OK;
        unsigned p2 = 1;
        while (p2 * 2 <= least)
            p2 *= 2;
        if (least < 1)
            return tusk_error_set(err, TUSK_ELIMIT, "tpc.cl on %s: a kernel cannot run at all",
                                  tusk_cl_describe(c->cl));
        c->wg = p2;
    }
}

int tpc_cl_new(tpc_cl_t **out, const tpc_config_t *cfg, const tpc_cl_config_t *clc, tusk_error_t *err)
{
    *out = NULL;
    int st = tpc_config_check(cfg, err);
    if (st != TUSK_OK)
        return st;
    if (clc->group_size < 1 || clc->group_size > 4096 || (clc->group_size & (clc->group_size - 1)))
        return tusk_error_set(err, TUSK_EINVAL, "TPC opencl: group_size %u, expected a power of two from 1 to 4096",
                              clc->group_size);
    if ((st = tusk_cl_refuse_inexact(clc->options, "TPC", "the CPU backends (tpc/README.md)", err)) != TUSK_OK)
        return st;
    tpc_cl_t *c = calloc(1, sizeof *c);
    if (!c)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    c->cfg = *cfg;
    tpc_params_of(cfg, &c->p);
    c->clc = *clc;
    c->clc.device = c->clc.options = NULL; /* not kept */
    tusk_cl_config_t tc;
    memset(&tc, 0, sizeof tc);
    tc.device = clc->device;
    tc.instance = clc->instance;
    tc.build_options = clc->options;
    tc.no_cache = clc->no_cache;
    if ((st = tusk_cl_new(&c->cl, &tc, err)) || (st = tusk_pool_new(&c->pool, clc->threads, err)))
        goto fail;
    const tusk_cl_device_info_t *dev = tusk_cl_device(c->cl);
    cl_device_fp_config fp = 0;
    if ((st = tusk_cl_check(clGetDeviceInfo(dev->device, CL_DEVICE_SINGLE_FP_CONFIG, sizeof fp, &fp, NULL), err,
                            "clGetDeviceInfo(CL_DEVICE_SINGLE_FP_CONFIG) on %s", tusk_cl_describe(c->cl))))
        goto fail;
    if (fp & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT) {
        snprintf(c->extra, sizeof c->extra, "-cl-fp32-correctly-rounded-divide-sqrt");
    } else if (dev->fp64) {
        snprintf(c->extra, sizeof c->extra, "-DTPC_DIV_VIA_DOUBLE=1");
    } else {
        st = tusk_error_set(err, TUSK_ENODEV,
                            "TPC on %s: the device divides floats and takes roots without correct rounding and has no "
                            "fp64, so its tracks could differ from the CPU backends'",
                            tusk_cl_describe(c->cl));
        goto fail;
    }
    c->wg = clc->group_size;
    if (dev->max_work_group_size > 0 && c->wg > dev->max_work_group_size) {
        unsigned p2 = 1;
        while (p2 * 2 <= dev->max_work_group_size)
            p2 *= 2;
        c->wg = p2;
    }
    if ((st = build(c, err)))
        goto fail;
    snprintf(c->describe, sizeof c->describe, "%s; %u work-items a group%s", tusk_cl_describe(c->cl), c->wg,
             c->extra[0] == '-' && c->extra[1] == 'D' ? "; division and roots via double" : "");
    *out = c;
    return TUSK_OK;
fail:
    tpc_cl_destroy(&c);
    return st;
}

const char *tpc_cl_describe(const tpc_cl_t *c)
{
    return c->describe;
}

void tpc_cl_times(const tpc_cl_t *c, tpc_times_t *t)
{
    *t = c->t;
}

/* Room for `bytes` in device buffer i (contents not kept). */
static int droom(tpc_cl_t *c, int i, size_t bytes, tusk_error_t *err)
{
    dbuf_t *b = &c->d[i];
    if (bytes <= b->cap && b->mem)
        return TUSK_OK;
    size_t cap = bytes + bytes / 4 + 4096;
    tusk_cl_buffer_release(c->cl, &b->mem);
    b->cap = 0;
    int st = tusk_cl_buffer_new(c->cl, buf_names[i], CL_MEM_READ_WRITE, cap, NULL, &b->mem, err);
    if (st == TUSK_OK)
        b->cap = cap;
    return st;
}

static int proom(tpc_cl_t *c, int i, size_t bytes, tusk_error_t *err)
{
    if (c->pin[i] && tusk_cl_pinned_size(c->pin[i]) >= bytes)
        return TUSK_OK;
    tusk_cl_pinned_destroy(&c->pin[i]);
    size_t cap = bytes + bytes / 4 + 4096;
    return tusk_cl_pinned_new(c->cl, pin_names[i], cap, &c->pin[i], err);
}

#define PIN(i) tusk_cl_pinned_ptr(c->pin[i])
#define MEM(i) (c->d[i].mem)

/* Kernel arguments: (size, pointer) pairs. */
typedef struct arg {
    size_t size;
    const void *ptr;
} arg_t;
#define AM(i) {sizeof(cl_mem), &c->d[i].mem}
#define AU(v) {sizeof(cl_uint), &(v)}

static int set_args(tpc_cl_t *c, int k, const arg_t *a, int n, tusk_error_t *err)
{
    for (int i = 0; i < n; i++) {
        int st = tusk_cl_check(clSetKernelArg(c->k[k], (cl_uint)i, a[i].size, a[i].ptr), err,
                               "clSetKernelArg(%s, %d) on %s", kernel_names[k], i, tusk_cl_describe(c->cl));
        if (st)
            return st;
    }
    return TUSK_OK;
}

/* items work-items (rounded up to whole groups), or `groups` groups when items is 0. */
static int launch(tpc_cl_t *c, int k, size_t items, size_t groups, cl_event *ev, tusk_error_t *err)
{
    size_t local = c->wg;
    size_t global = items ? (items + local - 1) / local * local : groups * local;
    if (global == 0)
        global = local;
    return tusk_cl_check(clEnqueueNDRangeKernel(tusk_cl_queue(c->cl), c->k[k], 1, NULL, &global, &local, 0, NULL, ev),
                         err, "clEnqueueNDRangeKernel(%s, %zu work-items in groups of %zu) on %s", kernel_names[k],
                         global, local, tusk_cl_describe(c->cl));
}

/* ms of a finished event. */
static double ev_ms(cl_event ev)
{
    cl_ulong a = 0, b = 0;
    if (!ev || clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof a, &a, NULL) != CL_SUCCESS ||
        clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof b, &b, NULL) != CL_SUCCESS)
        return 0.0;
    return b > a ? (double)(b - a) * 1e-6 : 0.0;
}

enum { E_UP0, E_UP1, E_UP2, E_UP3, E_UP4, E_NF, E_NC, E_START, E_SCAN0, E_SCAN1, E_SCAN2, E_SWRITE, E_SSTARTS,
       E_DOWN1, E_TC, E_SCOUNT, E_SCAN3, E_SCAN4, E_SCAN5, E_SCAN6, E_SCAN7, E_SCAN8, E_DOWN2, E_SWRITE2, E_DOWN3,
       E_DOWN4, E_DOWN5, N_EVENTS };

static void release_events(cl_event *ev)
{
    for (int i = 0; i < N_EVENTS; i++)
        if (ev[i]) {
            clReleaseEvent(ev[i]);
            ev[i] = NULL;
        }
}

/* The exclusive prefix sum of n words of buffer `in` into `out`; the total
 * into counters word `which`. Three events from ev. */
static int scan(tpc_cl_t *c, int in, int out, cl_uint n, cl_uint which, cl_event *ev, tusk_error_t *err)
{
    cl_uint per = 8, block = c->wg * per;
    cl_uint nb = (n + block - 1) / block;
    if (nb == 0)
        nb = 1;
    int st = droom(c, B_BSUM, (size_t)nb * 4, err);
    if (st)
        return st;
    arg_t a1[] = {AM(in), AM(out), AU(n), AU(per), AM(B_BSUM)};
    arg_t a2[] = {AM(B_BSUM), AU(nb), AM(B_COUNTERS), AU(which)};
    arg_t a3[] = {AM(out), AU(n), AU(block), AM(B_BSUM)};
    if ((st = set_args(c, K_SCAN_BLOCKS, a1, 5, err)) || (st = launch(c, K_SCAN_BLOCKS, 0, nb, &ev[0], err)) ||
        (st = set_args(c, K_SCAN_TOP, a2, 4, err)) || (st = launch(c, K_SCAN_TOP, 0, 1, &ev[1], err)) ||
        (st = set_args(c, K_SCAN_ADD, a3, 4, err)) || (st = launch(c, K_SCAN_ADD, n, 0, &ev[2], err)))
        return st;
    return TUSK_OK;
}

/* Step VI, slice s: its tracks are [slice_track[s], slice_track[s + 1]). */
static void output_slice(void *ctx, size_t s, unsigned thread)
{
    tpc_cl_t *c = ctx;
    tpc_slice_res_t *r = &c->res->sl[s];
    tpc_chunk_t *ch = &c->res->chunk[thread];
    tpc_slice_t slice;
    tpc_batch_slice(c->batch, s, &slice);
    size_t a = c->slice_track[s], b = c->slice_track[s + 1];
    uint64_t nh = 0;
    for (size_t k = a; k < b; k++)
        nh += c->tracks[k].n_hits;
    r->chunk = thread;
    r->n_start = c->sl[s].n_start;
    r->n_tracklets = c->sl[s].n_tracklets;
    if (tpc_chunk_room(ch, b - a, nh) != 0) {
        r->n_tracks = UINT32_MAX; /* reported by the caller */
        return;
    }
    r->t_off = ch->nt;
    r->h_off = ch->nh;
    double cs[2];
    tpc_slice_angle(slice.hdr.slice, &cs[0], &cs[1]);
    for (size_t k = a; k < b; k++) {
        const tpc_sel_track_t *t = &c->tracks[k];
        tpc_output_track(&c->data, s, &slice, &c->params[k], t->tracklet - c->sl[s].first_start, c->hits + t->first_hit,
                         t->n_hits, &ch->t[ch->nt], &ch->h[ch->nh], cs);
        ch->nt++;
        ch->nh += t->n_hits;
        r->n_tracks++;
        r->n_hits += t->n_hits;
    }
}

int tpc_cl_run(tpc_cl_t *c, const tpc_batch_t *b, tpc_result_t *res, tusk_error_t *err)
{
    double t_start = tusk_clock_s();
    memset(&c->t, 0, sizeof c->t);
    size_t S = tpc_batch_count(b);
    unsigned threads = tusk_pool_threads(c->pool);
    int st = tpc_result_reset(res, S, threads, err);
    if (st != TUSK_OK || S == 0)
        return st;
    const char *dev = tusk_cl_describe(c->cl);
    cl_command_queue q = tusk_cl_queue(c->cl);
    /* step 0 into the pinned buffers */
    tpc_data_t *d = &c->data;
    if ((st = tpc_data_plan(d, b, c->cfg.min_bin_mm, c->pool, err)))
        return st;
    cl_uint N = (cl_uint)d->n_clusters, NB = (cl_uint)d->n_bins, NS = (cl_uint)S;
    size_t n1 = N ? N : 1;
    if ((st = proom(c, P_ROWS, S * TPC_ROWS * sizeof(tpc_row_t), err)) ||
        (st = proom(c, P_SLICES, S * sizeof(tpc_dev_slice_t), err)) || (st = proom(c, P_YZ, n1 * 4, err)) ||
        (st = proom(c, P_ROW_OF, n1 * 4, err)) || (st = proom(c, P_FBIN, (size_t)NB * 2, err)) ||
        (st = proom(c, P_COUNTERS, sizeof(tpc_counters_t), err)))
        return st;
    if ((st = tpc_data_fill(d, PIN(P_YZ), PIN(P_ROW_OF), PIN(P_FBIN), c->pool, err)))
        return st;
    memcpy(PIN(P_ROWS), d->row, S * TPC_ROWS * sizeof(tpc_row_t));
    memcpy(PIN(P_SLICES), d->slice, S * sizeof(tpc_dev_slice_t));
    c->t.init = (tusk_clock_s() - t_start) * 1e3;
    if ((st = droom(c, B_ROWS, S * TPC_ROWS * sizeof(tpc_row_t), err)) ||
        (st = droom(c, B_SLICES, S * sizeof(tpc_dev_slice_t), err)) || (st = droom(c, B_ROW_OF, n1 * 4, err)) ||
        (st = droom(c, B_YZ, n1 * 4, err)) || (st = droom(c, B_FBIN, (size_t)NB * 2, err)) ||
        (st = droom(c, B_UP, n1 * 2, err)) || (st = droom(c, B_DN, n1 * 2, err)) ||
        (st = droom(c, B_LINK, n1 * 4, err)) || (st = droom(c, B_WEIGHT, n1 * 4, err)) ||
        (st = droom(c, B_FLAG, n1 * 4, err)) || (st = droom(c, B_POS, n1 * 4, err)) ||
        (st = droom(c, B_START, n1 * 4, err)) || (st = droom(c, B_COUNTERS, sizeof(tpc_counters_t), err)))
        return st;
    cl_event ev[N_EVENTS] = {NULL};
    const cl_uint zero = 0;
    tpc_counters_t *cnt = PIN(P_COUNTERS);
    tpc_dev_slice_t *sl = PIN(P_SLICES);
    if ((st = tusk_cl_check(clEnqueueWriteBuffer(q, MEM(B_ROWS), CL_FALSE, 0, S * TPC_ROWS * sizeof(tpc_row_t),
                                                 PIN(P_ROWS), 0, NULL, &ev[E_UP0]),
                            err, "clEnqueueWriteBuffer(TPC rows) on %s", dev)) ||
        (st = tusk_cl_check(clEnqueueWriteBuffer(q, MEM(B_SLICES), CL_FALSE, 0, S * sizeof(tpc_dev_slice_t), sl, 0,
                                                 NULL, &ev[E_UP1]),
                            err, "clEnqueueWriteBuffer(TPC slices) on %s", dev)) ||
        (N && (st = tusk_cl_check(clEnqueueWriteBuffer(q, MEM(B_ROW_OF), CL_FALSE, 0, (size_t)N * 4, PIN(P_ROW_OF), 0,
                                                       NULL, &ev[E_UP2]),
                                  err, "clEnqueueWriteBuffer(TPC cluster rows) on %s", dev))) ||
        (N && (st = tusk_cl_check(clEnqueueWriteBuffer(q, MEM(B_YZ), CL_FALSE, 0, (size_t)N * 4, PIN(P_YZ), 0, NULL,
                                                       &ev[E_UP3]),
                                  err, "clEnqueueWriteBuffer(TPC clusters, %u) on %s", (unsigned)N, dev))) ||
        (st = tusk_cl_check(clEnqueueWriteBuffer(q, MEM(B_FBIN), CL_FALSE, 0, (size_t)NB * 2, PIN(P_FBIN), 0, NULL,
                                                 &ev[E_UP4]),
                            err, "clEnqueueWriteBuffer(TPC grids) on %s", dev)) ||
        (st = tusk_cl_check(clEnqueueFillBuffer(q, MEM(B_COUNTERS), &zero, sizeof zero, 0, sizeof(tpc_counters_t), 0,
                                                NULL, NULL),
                            err, "clEnqueueFillBuffer(TPC counters) on %s", dev)) ||
        (st = tusk_cl_check(clEnqueueFillBuffer(q, MEM(B_WEIGHT), &zero, sizeof zero, 0, n1 * 4, 0, NULL, NULL), err,
                            "clEnqueueFillBuffer(TPC cluster weights) on %s", dev)))
        goto done;
    /* steps I-III */
    {
        arg_t a1[] = {AM(B_ROWS), AM(B_ROW_OF), AM(B_YZ), AM(B_FBIN), {sizeof c->p, &c->p}, AM(B_UP), AM(B_DN), AU(N)};
        arg_t a2[] = {AM(B_ROWS), AM(B_ROW_OF), AM(B_UP), AM(B_DN), AM(B_LINK), AU(N)};
        arg_t a3[] = {AM(B_ROWS), AM(B_ROW_OF), AM(B_LINK), {sizeof c->p, &c->p}, AM(B_FLAG), AU(N)};
        arg_t a4[] = {AM(B_FLAG), AM(B_POS), AM(B_START), AU(N)};
        arg_t a5[] = {AM(B_SLICES), AM(B_POS), AU(N), AU(NS), AM(B_COUNTERS)};
        if ((st = set_args(c, K_NF, a1, 8, err)) || (st = launch(c, K_NF, N, 0, &ev[E_NF], err)) ||
            (st = set_args(c, K_NC, a2, 6, err)) || (st = launch(c, K_NC, N, 0, &ev[E_NC], err)) ||
            (st = set_args(c, K_START, a3, 6, err)) || (st = launch(c, K_START, N, 0, &ev[E_START], err)) ||
            (st = scan(c, B_FLAG, B_POS, N, 0, &ev[E_SCAN0], err)) || (st = set_args(c, K_START_WRITE, a4, 4, err)) ||
            (st = launch(c, K_START_WRITE, N, 0, &ev[E_SWRITE], err)) ||
            (st = set_args(c, K_SLICE_STARTS, a5, 5, err)) ||
            (st = launch(c, K_SLICE_STARTS, NS, 0, &ev[E_SSTARTS], err)))
            goto done;
    }
    if ((st = tusk_cl_check(clEnqueueReadBuffer(q, MEM(B_COUNTERS), CL_TRUE, 0, sizeof *cnt, cnt, 0, NULL,
                                                &ev[E_DOWN1]),
                            err, "clEnqueueReadBuffer(TPC counters) on %s", dev)))
        goto done;
    if (cnt->status & TPC_STATUS_TRACKLETS) {
        st = tusk_error_set(err, TUSK_ELIMIT, "TPC on %s: a slice has more than %u start hits (the cluster weights' "
                                              "16-bit tracklet ids)",
                            dev, TPC_MAX_TRACKLETS);
        goto done;
    }
    cl_uint T = cnt->n_start;
    if (T > N) {
        st = tusk_error_set(err, TUSK_ECL, "TPC on %s: %u start hits of %u clusters", dev, (unsigned)T, (unsigned)N);
        goto done;
    }
    size_t t1 = T ? T : 1;
    if ((st = droom(c, B_TRACKLETS, t1 * sizeof(tpc_tracklet_t), err)) ||
        (st = droom(c, B_HITS, t1 * TPC_ROWS * 2, err)) || (st = droom(c, B_NTR, t1 * 4, err)) ||
        (st = droom(c, B_NHI, t1 * 4, err)) || (st = droom(c, B_TRAT, t1 * 4, err)) ||
        (st = droom(c, B_HIAT, t1 * 4, err)))
        goto done;
    /* steps IV and V (counting) */
    {
        arg_t a6[] = {AM(B_ROWS), AM(B_SLICES), AM(B_ROW_OF), AM(B_YZ), AM(B_FBIN), AM(B_LINK), {sizeof c->p, &c->p},
                      AM(B_START), AU(T), AM(B_HITS), AM(B_TRACKLETS), AM(B_WEIGHT), AM(B_COUNTERS)};
        arg_t a7[] = {AM(B_ROWS), AM(B_SLICES), AM(B_ROW_OF), {sizeof c->p, &c->p}, AM(B_START), AU(T), AM(B_HITS),
                      AM(B_TRACKLETS), AM(B_WEIGHT), AM(B_NTR), AM(B_NHI)};
        if ((st = set_args(c, K_CONSTRUCT, a6, 13, err)) || (st = launch(c, K_CONSTRUCT, T, 0, &ev[E_TC], err)) ||
            (st = set_args(c, K_SEL_COUNT, a7, 11, err)) || (st = launch(c, K_SEL_COUNT, T, 0, &ev[E_SCOUNT], err)) ||
            (st = scan(c, B_NTR, B_TRAT, T, 2, &ev[E_SCAN3], err)) ||
            (st = scan(c, B_NHI, B_HIAT, T, 3, &ev[E_SCAN6], err)))
            goto done;
    }
    if ((st = tusk_cl_check(clEnqueueReadBuffer(q, MEM(B_COUNTERS), CL_FALSE, 0, sizeof *cnt, cnt, 0, NULL,
                                                &ev[E_DOWN2]),
                            err, "clEnqueueReadBuffer(TPC counters) on %s", dev)) ||
        (st = tusk_cl_check(clEnqueueReadBuffer(q, MEM(B_SLICES), CL_TRUE, 0, S * sizeof *sl, sl, 0, NULL, NULL), err,
                            "clEnqueueReadBuffer(TPC slices) on %s", dev)))
        goto done;
    cl_uint NT = cnt->n_tracks, NH = cnt->n_hits;
    if ((st = droom(c, B_OUT_TRACKS, ((size_t)NT + 1) * sizeof(tpc_sel_track_t), err)) ||
        (st = droom(c, B_OUT_PARAMS, ((size_t)NT + 1) * sizeof(tpc_tracklet_t), err)) ||
        (st = droom(c, B_OUT_HITS, ((size_t)NH + 1) * 4, err)) ||
        (st = proom(c, P_OUT_TRACKS, ((size_t)NT + 1) * sizeof(tpc_sel_track_t), err)) ||
        (st = proom(c, P_OUT_PARAMS, ((size_t)NT + 1) * sizeof(tpc_tracklet_t), err)) ||
        (st = proom(c, P_OUT_HITS, ((size_t)NH + 1) * 4, err)))
        goto done;
    /* step V (writing), then the tracks back */
    {
        arg_t a8[] = {AM(B_ROWS),      AM(B_SLICES),     AM(B_ROW_OF), {sizeof c->p, &c->p}, AM(B_START),
                      AU(T),           AM(B_HITS),       AM(B_TRACKLETS), AM(B_WEIGHT),      AM(B_TRAT),
                      AM(B_HIAT),      AM(B_OUT_TRACKS), AM(B_OUT_PARAMS), AM(B_OUT_HITS)};
        if ((st = set_args(c, K_SEL_WRITE, a8, 14, err)) || (st = launch(c, K_SEL_WRITE, T, 0, &ev[E_SWRITE2], err)))
            goto done;
        if ((NT && (st = tusk_cl_check(clEnqueueReadBuffer(q, MEM(B_OUT_TRACKS), CL_FALSE, 0,
                                                           (size_t)NT * sizeof(tpc_sel_track_t), PIN(P_OUT_TRACKS), 0,
                                                           NULL, &ev[E_DOWN3]),
                                       err, "clEnqueueReadBuffer(TPC tracks) on %s", dev))) ||
            (NT && (st = tusk_cl_check(clEnqueueReadBuffer(q, MEM(B_OUT_PARAMS), CL_FALSE, 0,
                                                           (size_t)NT * sizeof(tpc_tracklet_t), PIN(P_OUT_PARAMS), 0,
                                                           NULL, &ev[E_DOWN4]),
                                       err, "clEnqueueReadBuffer(TPC track parameters) on %s", dev))) ||
            (NH && (st = tusk_cl_check(clEnqueueReadBuffer(q, MEM(B_OUT_HITS), CL_FALSE, 0, (size_t)NH * 4,
                                                           PIN(P_OUT_HITS), 0, NULL, &ev[E_DOWN5]),
                                       err, "clEnqueueReadBuffer(TPC track clusters) on %s", dev))) ||
            (st = tusk_cl_check(clFinish(q), err, "clFinish after the TPC tracks on %s", dev)))
            goto done;
    }
    /* step VI: each slice's tracks (tracklet order is slice order) */
    double t6 = tusk_clock_s();
    if (S + 1 > c->cap_slice_track) {
        free(c->slice_track);
        c->slice_track = malloc((S + 1) * sizeof *c->slice_track);
        c->cap_slice_track = c->slice_track ? S + 1 : 0;
        if (!c->slice_track) {
            st = tusk_error_set(err, TUSK_ENOMEM, "out of memory");
            goto done;
        }
    }
    c->tracks = PIN(P_OUT_TRACKS);
    c->params = PIN(P_OUT_PARAMS);
    c->hits = PIN(P_OUT_HITS);
    c->sl = sl;
    size_t k = 0;
    for (size_t s = 0; s < S; s++) {
        c->slice_track[s] = k;
        uint32_t end = sl[s].first_start + sl[s].n_start;
        while (k < NT && c->tracks[k].tracklet < end) {
            if (c->tracks[k].tracklet < sl[s].first_start || c->tracks[k].first_hit + c->tracks[k].n_hits > NH) {
                st = tusk_error_set(err, TUSK_ECL, "TPC on %s: track %zu (tracklet %u) is out of place", dev, k,
                                    (unsigned)c->tracks[k].tracklet);
                goto done;
            }
            k++;
        }
    }
    c->slice_track[S] = k;
    if (k != NT) {
        st = tusk_error_set(err, TUSK_ECL, "TPC on %s: %u tracks, %zu of them in slices", dev, (unsigned)NT, k);
        goto done;
    }
    c->batch = b;
    c->res = res;
    tusk_pool_run(c->pool, S, output_slice, c);
    for (size_t s = 0; s < S; s++)
        if (res->sl[s].n_tracks == UINT32_MAX) {
            st = tusk_error_set(err, TUSK_ENOMEM, "out of memory (tracks of slice %zu)", s);
            goto done;
        }
    c->t.output = (tusk_clock_s() - t6) * 1e3;
    c->t.upload = ev_ms(ev[E_UP0]) + ev_ms(ev[E_UP1]) + ev_ms(ev[E_UP2]) + ev_ms(ev[E_UP3]) + ev_ms(ev[E_UP4]);
    c->t.neighbours = ev_ms(ev[E_NF]);
    c->t.clean = ev_ms(ev[E_NC]);
    c->t.start = ev_ms(ev[E_START]) + ev_ms(ev[E_SCAN0]) + ev_ms(ev[E_SCAN1]) + ev_ms(ev[E_SCAN2]) +
                 ev_ms(ev[E_SWRITE]) + ev_ms(ev[E_SSTARTS]);
    c->t.construct = ev_ms(ev[E_TC]);
    c->t.select = ev_ms(ev[E_SCOUNT]) + ev_ms(ev[E_SWRITE2]);
    for (int e = E_SCAN3; e <= E_SCAN8; e++)
        c->t.select += ev_ms(ev[e]);
    c->t.download = ev_ms(ev[E_DOWN1]) + ev_ms(ev[E_DOWN2]) + ev_ms(ev[E_DOWN3]) + ev_ms(ev[E_DOWN4]) +
                    ev_ms(ev[E_DOWN5]);
    c->t.bytes_up = S * (TPC_ROWS * sizeof(tpc_row_t) + sizeof(tpc_dev_slice_t)) + (uint64_t)N * 8 + (uint64_t)NB * 2;
    c->t.bytes_down = 2 * sizeof(tpc_counters_t) + S * sizeof(tpc_dev_slice_t) +
                      (uint64_t)NT * (sizeof(tpc_sel_track_t) + sizeof(tpc_tracklet_t)) + (uint64_t)NH * 4;
    /* the kernels' least traffic (tpc/README.md): I-III read each cluster's
     * row, coordinates, links, flags and places; IV and V each tracklet's
     * row hits twice and record; V writes the tracks */
    c->t.kernel_bytes = (uint64_t)N * (12 + 16 + 12 + 16 + 8) + (uint64_t)NB * 2 +
                        (uint64_t)T * (2 * TPC_ROWS * 2 + 3 * sizeof(tpc_tracklet_t) + 16) +
                        (uint64_t)NT * (sizeof(tpc_sel_track_t) + sizeof(tpc_tracklet_t)) + (uint64_t)NH * 4;
    c->t.total = (tusk_clock_s() - t_start) * 1e3;
done:
    if (st != TUSK_OK)
        clFinish(q);
    release_events(ev);
    return st;
}

int tpc_cl_bandwidth(tpc_cl_t *c, size_t bytes, unsigned repeat, double *gb_s, tusk_error_t *err)
{
    const tusk_cl_device_info_t *d = tusk_cl_device(c->cl);
    bytes = bytes / 16 * 16;
    if (bytes > d->max_alloc)
        bytes = (size_t)d->max_alloc / 16 * 16;
    if (bytes < 16 || repeat < 1)
        return tusk_error_set(err, TUSK_EINVAL, "TPC bandwidth probe: %zu bytes, %u runs", bytes, repeat);
    cl_mem a = NULL, bm = NULL;
    int st;
    cl_uint n = (cl_uint)(bytes / 16 < UINT32_MAX ? bytes / 16 : UINT32_MAX);
    const cl_uint zero = 0;
    double best = 0;
    if ((st = tusk_cl_buffer_new(c->cl, "TPC bandwidth source", CL_MEM_READ_ONLY, bytes, NULL, &a, err)) ||
        (st = tusk_cl_buffer_new(c->cl, "TPC bandwidth target", CL_MEM_WRITE_ONLY, bytes, NULL, &bm, err)) ||
        (st = tusk_cl_check(clEnqueueFillBuffer(tusk_cl_queue(c->cl), a, &zero, sizeof zero, 0, bytes, 0, NULL, NULL),
                            err, "clEnqueueFillBuffer(TPC bandwidth source) on %s", tusk_cl_describe(c->cl))) ||
        (st = tusk_cl_check(clSetKernelArg(c->k[K_COPY], 0, sizeof a, &a), err, "clSetKernelArg(tpc_copy, 0)")) ||
        (st = tusk_cl_check(clSetKernelArg(c->k[K_COPY], 1, sizeof bm, &bm), err, "clSetKernelArg(tpc_copy, 1)")) ||
        (st = tusk_cl_check(clSetKernelArg(c->k[K_COPY], 2, sizeof n, &n), err, "clSetKernelArg(tpc_copy, 2)")))
        goto done;
    size_t groups = (size_t)d->compute_units * 16;
    if (groups < 1)
        groups = 1;
    for (unsigned r = 0; r <= repeat; r++) {
        cl_event ev = NULL;
        if ((st = launch(c, K_COPY, 0, groups, &ev, err)) ||
            (st = tusk_cl_check(clWaitForEvents(1, &ev), err, "waiting for tpc_copy on %s", tusk_cl_describe(c->cl)))) {
            if (ev)
                clReleaseEvent(ev);
            goto done;
        }
        double ms = ev_ms(ev);
        clReleaseEvent(ev);
        if (r > 0 && ms > 0) { /* the first run warms up */
            double g = 2.0 * (double)bytes / (ms * 1e-3) / 1e9;
            if (g > best)
                best = g;
        }
    }
    *gb_s = best;
done:
    tusk_cl_buffer_release(c->cl, &a);
    tusk_cl_buffer_release(c->cl, &bm);
    return st;
}
