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

struct tpc_cl {
    tpc_config_t cfg;
    tpc_params_t p;
    tpc_cl_config_t clc;
    tusk_cl_t *cl;
    tusk_cl_kernels_t *k;
    unsigned wg;              /* work-items a group, as built */
    char division[64];        /* the division option (tusk_cl_exact_division) */
    bool via_double;
    tusk_cl_room_t d[N_BUFS];
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

void tpc_cl_destroy(tpc_cl_t **cl)
{
    if (!cl || !*cl)
        return;
    tpc_cl_t *c = *cl;
    tusk_cl_release_all(c->cl, c->d, N_BUFS, c->pin, N_PINNED);
    tusk_cl_kernels_destroy(&c->k);
    tusk_cl_destroy(&c->cl);
    tusk_pool_destroy(&c->pool);
    tpc_data_free(&c->data);
    free(c->slice_track);
    free(c);
    *cl = NULL;
}

/* The kernels' options for `wg` work-items a group. */
static int options(void *ctx, unsigned wg, char *opt, size_t cap, tusk_error_t *err)
{
    const tpc_cl_t *c = ctx;
    char v[32];
    snprintf(opt, cap, "%s", c->division);
    snprintf(v, sizeof v, "%u", wg);
    return tusk_cl_define(opt, cap, "TPC_WG", v, err);
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
    tpc_cl_t *c = calloc(1, sizeof *c);
    if (!c)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    c->cfg = *cfg;
    tpc_params_of(cfg, &c->p);
    c->clc = *clc;
    c->clc.device = c->clc.options = NULL; /* not kept */
    if ((st = tusk_cl_new_exact(&c->cl, clc->device, clc->instance, clc->options, clc->no_cache, "TPC",
                                "the CPU backends (tpc/README.md)", err)) ||
        (st = tusk_pool_new(&c->pool, clc->threads, err)))
        goto fail;
    const tusk_cl_device_info_t *dev = tusk_cl_device(c->cl);
    if ((st = tusk_cl_exact_division(c->cl, "TPC", "the CPU backends'", "TPC_DIV_VIA_DOUBLE", c->division,
                                     sizeof c->division, &c->via_double, err)))
        goto fail;
    c->wg = clc->group_size;
    if (dev->max_work_group_size > 0 && c->wg > dev->max_work_group_size)
        c->wg = (unsigned)tusk_cl_floor_pow2(dev->max_work_group_size);
    tusk_cl_source_t src = {"tpc.cl", tusk_tpc_kernel_source, (size_t)tusk_tpc_kernel_source_size, kernel_names,
                            N_KERNELS};
    if ((st = tusk_cl_kernels_fit(c->cl, &src, TUSK_CL_ALL_KERNELS, options, c, &c->wg, &c->k, err)))
        goto fail;
    snprintf(c->describe, sizeof c->describe, "%s; %u work-items a group%s", tusk_cl_describe(c->cl), c->wg,
             c->via_double ? "; division and roots via double" : "");
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

/* Room for `bytes` in device buffer i, pinned buffer i (contents not kept). */
static int droom(tpc_cl_t *c, int i, size_t bytes, tusk_error_t *err)
{
    return tusk_cl_buffer_room(c->cl, buf_names[i], CL_MEM_READ_WRITE, bytes, &c->d[i], err);
}

static int proom(tpc_cl_t *c, int i, size_t bytes, tusk_error_t *err)
{
    return tusk_cl_pinned_room(c->cl, pin_names[i], bytes, &c->pin[i], err);
}

#define PIN(i) tusk_cl_pinned_ptr(c->pin[i])
#define MEM(i) (c->d[i].mem)

/* Kernel arguments: (size, pointer) pairs. */
typedef tusk_cl_arg_t arg_t;
#define AM(i) {sizeof(cl_mem), &c->d[i].mem}
#define AU(v) {sizeof(cl_uint), &(v)}

static int set_args(tpc_cl_t *c, int k, const arg_t *a, int n, tusk_error_t *err)
{
    return tusk_cl_kernels_args(c->k, k, a, (size_t)n, err);
}

/* items work-items (rounded up to whole groups), or `groups` groups when items is 0. */
static int launch(tpc_cl_t *c, int k, size_t items, size_t groups, cl_event *ev, tusk_error_t *err)
{
    if (items)
        groups = (items + c->wg - 1) / c->wg;
    return tusk_cl_kernels_launch(c->k, k, NULL, groups ? groups : 1, c->wg, ev, err);
}

enum { E_UP0, E_UP1, E_UP2, E_UP3, E_UP4, E_NF, E_NC, E_START, E_SCAN0, E_SCAN1, E_SCAN2, E_SWRITE, E_SSTARTS,
       E_DOWN1, E_TC, E_SCOUNT, E_SCAN3, E_SCAN4, E_SCAN5, E_SCAN6, E_SCAN7, E_SCAN8, E_DOWN2, E_SWRITE2, E_DOWN3,
       E_DOWN4, E_DOWN5, N_EVENTS };

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
    tpc_counters_t *cnt = PIN(P_COUNTERS);
    tpc_dev_slice_t *sl = PIN(P_SLICES);
    if ((st = tusk_cl_write(c->cl, q, MEM(B_ROWS), CL_FALSE, S * TPC_ROWS * sizeof(tpc_row_t), PIN(P_ROWS),
                            &ev[E_UP0], "TPC rows", err)) ||
        (st = tusk_cl_write(c->cl, q, MEM(B_SLICES), CL_FALSE, S * sizeof(tpc_dev_slice_t), sl, &ev[E_UP1],
                            "TPC slices", err)) ||
        (N && (st = tusk_cl_write(c->cl, q, MEM(B_ROW_OF), CL_FALSE, (size_t)N * 4, PIN(P_ROW_OF), &ev[E_UP2],
                                  "TPC cluster rows", err))) ||
        (N && (st = tusk_cl_write(c->cl, q, MEM(B_YZ), CL_FALSE, (size_t)N * 4, PIN(P_YZ), &ev[E_UP3], "TPC clusters",
                                  err))) ||
        (st = tusk_cl_write(c->cl, q, MEM(B_FBIN), CL_FALSE, (size_t)NB * 2, PIN(P_FBIN), &ev[E_UP4], "TPC grids",
                            err)) ||
        (st = tusk_cl_zero(c->cl, q, MEM(B_COUNTERS), sizeof(tpc_counters_t), "TPC counters", err)) ||
        (st = tusk_cl_zero(c->cl, q, MEM(B_WEIGHT), n1 * 4, "TPC cluster weights", err)))
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
    if ((st = tusk_cl_read(c->cl, q, MEM(B_COUNTERS), CL_TRUE, sizeof *cnt, cnt, &ev[E_DOWN1], "TPC counters", err)))
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
    if ((st = tusk_cl_read(c->cl, q, MEM(B_COUNTERS), CL_FALSE, sizeof *cnt, cnt, &ev[E_DOWN2], "TPC counters", err)) ||
        (st = tusk_cl_read(c->cl, q, MEM(B_SLICES), CL_TRUE, S * sizeof *sl, sl, NULL, "TPC slices", err)))
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
        if ((NT && (st = tusk_cl_read(c->cl, q, MEM(B_OUT_TRACKS), CL_FALSE, (size_t)NT * sizeof(tpc_sel_track_t),
                                      PIN(P_OUT_TRACKS), &ev[E_DOWN3], "TPC tracks", err))) ||
            (NT && (st = tusk_cl_read(c->cl, q, MEM(B_OUT_PARAMS), CL_FALSE, (size_t)NT * sizeof(tpc_tracklet_t),
                                      PIN(P_OUT_PARAMS), &ev[E_DOWN4], "TPC track parameters", err))) ||
            (NH && (st = tusk_cl_read(c->cl, q, MEM(B_OUT_HITS), CL_FALSE, (size_t)NH * 4, PIN(P_OUT_HITS),
                                      &ev[E_DOWN5], "TPC track clusters", err))) ||
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
    c->t.upload = tusk_cl_events_ms(&ev[E_UP0], E_UP4 - E_UP0 + 1);
    c->t.neighbours = tusk_cl_event_ms(ev[E_NF]);
    c->t.clean = tusk_cl_event_ms(ev[E_NC]);
    c->t.start = tusk_cl_events_ms(&ev[E_START], E_SSTARTS - E_START + 1);
    c->t.construct = tusk_cl_event_ms(ev[E_TC]);
    c->t.select = tusk_cl_event_ms(ev[E_SCOUNT]) + tusk_cl_event_ms(ev[E_SWRITE2]) +
                  tusk_cl_events_ms(&ev[E_SCAN3], E_SCAN8 - E_SCAN3 + 1);
    c->t.download = tusk_cl_event_ms(ev[E_DOWN1]) + tusk_cl_event_ms(ev[E_DOWN2]) +
                    tusk_cl_events_ms(&ev[E_DOWN3], E_DOWN5 - E_DOWN3 + 1);
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
    return tusk_cl_run_end(q, st, ev, N_EVENTS);
}

int tpc_cl_bandwidth(tpc_cl_t *c, size_t bytes, unsigned repeat, double *gb_s, tusk_error_t *err)
{
    return tusk_cl_kernels_bandwidth(c->k, K_COPY, c->wg, bytes, repeat, "TPC", gb_s, err);
}
