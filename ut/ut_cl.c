/* ut_cl.c - the OpenCL backend of the UT tracking (tusk/ut.h; the
 * kernels are kernels/ut.cl, the design ut/README.md).
 *
 * A batch of events is one launch. The host copies the batch's arrays
 * (the event table, the banks' sectors and first words, the raw hit words,
 * the VELO tracks: already contiguous) into pinned buffers with its
 * threads and sends them; three kernels, one work-group an event each,
 * decode the banks, search the windows and build the tracklets without
 * the data leaving the device; the tracks and each event's count come back
 * into pinned buffers, and each event's tracks are put in VELO track order
 * (the kernel took their places with an atomic add) by the host's threads.
 * The geometry's sector table, the sector groups' edges, the planes and the
 * settings go to the device once. Every step is timed with profiling
 * events. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "tusk/cl.h"
#include "ut_private.h"

enum { K_DECODE, K_WINDOWS, K_TRACKLETS, K_COPY, N_KERNELS };
static const char *const kernel_names[N_KERNELS] = {"ut_decode", "ut_windows", "ut_tracklets", "ut_copy"};

enum { B_EV, B_BINFO, B_BFIRST, B_WORDS, B_VELO, B_SECTORS, B_GROUPS, B_PLANES, B_PARAMS, B_KEY, B_POS, B_X0, B_Z0,
       B_YB, B_YE, B_W, B_ID, B_GF, B_WIN, B_MASK, B_OUT, B_COUNT, B_NACT, N_BUFS };
static const char *const buf_names[N_BUFS] = {
    "UT events",      "UT bank sectors", "UT bank offsets", "UT hit words",   "UT VELO tracks", "UT sectors",
    "UT group edges", "UT planes",       "UT settings",     "UT sort keys",   "UT placed hits", "UT hit x0",
    "UT hit z0",      "UT hit y begin",  "UT hit y end",    "UT hit weights", "UT hit LHCbIDs", "UT group offsets",
    "UT windows",     "UT window masks", "UT tracks",       "UT track counts", "UT active tracks"};

enum { P_EV, P_BINFO, P_BFIRST, P_WORDS, P_VELO, P_OUT, P_COUNT, P_HITS, N_PINNED };
static const char *const pin_names[N_PINNED] = {"UT events (pinned)", "UT bank sectors (pinned)",
                                                "UT bank offsets (pinned)", "UT hit words (pinned)",
                                                "UT VELO tracks (pinned)", "UT tracks (pinned)",
                                                "UT track counts (pinned)", "UT hits (pinned)"};

struct ut_cl {
    ut_cpu_t c;               /* the settings, geometry and tables (its hits are unused) */
    ut_cl_config_t clc;
    tusk_cl_t *cl;
    tusk_cl_kernels_t *k;
    unsigned wg;
    char division[64];        /* the division option (tusk_cl_exact_division) */
    bool via_double;
    tusk_cl_room_t d[N_BUFS];
    tusk_cl_pinned_t *pin[N_PINNED];
    tusk_pool_t *pool;
    /* the device holds the decoding of this batch (for Compass alone) */
    const ut_batch_t *decoded;
    uint64_t decoded_hits;
    /* packing and unpacking on the pool */
    const ut_batch_t *job_batch;
    ut_result_t *job_res;
    unsigned parts;
    ut_cl_times_t t;
    char describe[2 * TUSK_CL_TEXT_MAX + 256];
};

void ut_cl_config_default(ut_cl_config_t *c)
{
    memset(c, 0, sizeof *c);
    c->group_size = 128;
}

void ut_cl_destroy(ut_cl_t **cl)
{
    if (!cl || !*cl)
        return;
    ut_cl_t *c = *cl;
    tusk_cl_release_all(c->cl, c->d, N_BUFS, c->pin, N_PINNED);
    tusk_cl_kernels_destroy(&c->k);
    tusk_cl_destroy(&c->cl);
    tusk_pool_destroy(&c->pool);
    ut_cpu_free(&c->c);
    free(c);
    *cl = NULL;
}

/* The kernels' options for `wg` work-items a group. */
static int options(void *ctx, unsigned wg, char *opt, size_t cap, tusk_error_t *err)
{
    ut_cl_t *c = ctx;
    char v[32];
    int st;
    snprintf(opt, cap, "%s", c->division);
    snprintf(v, sizeof v, "%u", wg);
    if ((st = tusk_cl_define(opt, cap, "UT_WG", v, err)))
        return st;
    snprintf(v, sizeof v, "%u", c->c.cfg.sectors);
    return tusk_cl_define(opt, cap, "UT_S", v, err);
}

/* Room for `bytes` in device buffer i, pinned buffer i (contents not kept). */
static int droom(ut_cl_t *c, int i, size_t bytes, cl_mem_flags flags, tusk_error_t *err)
{
    return tusk_cl_buffer_room(c->cl, buf_names[i], flags, bytes, &c->d[i], err);
}

static int proom(ut_cl_t *c, int i, size_t bytes, tusk_error_t *err)
{
    return tusk_cl_pinned_room(c->cl, pin_names[i], bytes, &c->pin[i], err);
}

#define MEM(i) (c->d[i].mem)

int ut_cl_new(ut_cl_t **out, const ut_config_t *cfg, const ut_cl_config_t *clc, tusk_error_t *err)
{
    *out = NULL;
    if (clc->group_size < 32 || clc->group_size > 1024 || (clc->group_size & (clc->group_size - 1)))
        return tusk_error_set(err, TUSK_EINVAL, "UT opencl: group_size %u, expected a power of two from 32 to 1024",
                              clc->group_size);
    int st;
    ut_cl_t *c = calloc(1, sizeof *c);
    if (!c)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    if ((st = ut_cpu_init(&c->c, cfg, err)) != TUSK_OK) {
        free(c);
        return st;
    }
    c->clc = *clc;
    c->clc.device = c->clc.options = NULL; /* not kept */
    if ((st = tusk_cl_new_exact(&c->cl, clc->device, clc->instance, clc->options, clc->no_cache, "UT",
                                "the CPU backends (ut/README.md)", err)) ||
        (st = tusk_pool_new(&c->pool, clc->threads, err)))
        goto fail;
    const tusk_cl_device_info_t *dev = tusk_cl_device(c->cl);
    cl_bool little = CL_FALSE;
    if ((st = tusk_cl_check(clGetDeviceInfo(dev->device, CL_DEVICE_ENDIAN_LITTLE, sizeof little, &little, NULL), err,
                            "clGetDeviceInfo(CL_DEVICE_ENDIAN_LITTLE) on %s", tusk_cl_describe(c->cl))))
        goto fail;
    if (!little) {
        st = tusk_error_set(err, TUSK_ENODEV, "UT on %s: a big-endian device cannot read the raw banks' words as they are",
                            tusk_cl_describe(c->cl));
        goto fail;
    }
    if ((st = tusk_cl_exact_division(c->cl, "UT", "the CPU backends'", "UT_DIV_VIA_DOUBLE", c->division,
                                     sizeof c->division, &c->via_double, err)))
        goto fail;
    c->wg = clc->group_size;
    if (dev->max_work_group_size > 0 && c->wg > dev->max_work_group_size) {
        unsigned p2 = 32;
        while (p2 * 2 <= dev->max_work_group_size)
            p2 *= 2;
        c->wg = p2;
    }
    size_t local = (2 * (UT_MAX_GROUPS + 1) + c->wg + 2048) * 4; /* ut_decode's */
    size_t local2 = 2 * (size_t)c->wg * 4 + (size_t)c->wg * UT_PLANES * 2 * c->c.cfg.sectors * 2; /* ut_tracklets' */
    if (local2 > local)
        local = local2;
    if (local > dev->local_mem) {
        st = tusk_error_set(err, TUSK_ELIMIT, "UT on %s: a work-group needs %zu bytes of local memory, the device has %llu",
                            tusk_cl_describe(c->cl), local, (unsigned long long)dev->local_mem);
        goto fail;
    }
    tusk_cl_source_t src = {"ut.cl", tusk_ut_kernel_source, (size_t)tusk_ut_kernel_source_size, kernel_names,
                            N_KERNELS};
    if ((st = tusk_cl_kernels_fit(c->cl, &src, TUSK_CL_ALL_KERNELS, options, c, &c->wg, &c->k, err)))
        goto fail;
    /* the tables, once */
    ut_geometry_t *g = c->c.geo;
    if ((st = droom(c, B_SECTORS, g->n_sectors * sizeof(ut_dev_sector_t), CL_MEM_READ_ONLY, err)) ||
        (st = droom(c, B_GROUPS, g->n_groups * sizeof(float), CL_MEM_READ_ONLY, err)) ||
        (st = droom(c, B_PLANES, sizeof c->c.planes, CL_MEM_READ_ONLY, err)) ||
        (st = droom(c, B_PARAMS, sizeof c->c.p, CL_MEM_READ_ONLY, err)) ||
        (st = droom(c, B_NACT, sizeof(cl_uint), CL_MEM_READ_WRITE, err)))
        goto fail;
    if ((st = tusk_cl_write(c->cl, NULL, MEM(B_SECTORS), CL_TRUE, g->n_sectors * sizeof(ut_dev_sector_t),
                            c->c.sectors, NULL, "UT sectors", err)) ||
        (st = tusk_cl_write(c->cl, NULL, MEM(B_GROUPS), CL_TRUE, g->n_groups * sizeof(float), g->group_u_lo, NULL,
                            "UT group edges", err)) ||
        (st = tusk_cl_write(c->cl, NULL, MEM(B_PLANES), CL_TRUE, sizeof c->c.planes, c->c.planes, NULL, "UT planes",
                            err)) ||
        (st = tusk_cl_write(c->cl, NULL, MEM(B_PARAMS), CL_TRUE, sizeof c->c.p, &c->c.p, NULL, "UT settings", err)))
        goto fail;
    snprintf(c->describe, sizeof c->describe, "%s; %u work-items an event%s", tusk_cl_describe(c->cl), c->wg,
             c->via_double ? "; float division via double" : "");
    *out = c;
    return TUSK_OK;
fail:
    ut_cl_destroy(&c);
    return st;
}

const char *ut_cl_describe(const ut_cl_t *c)
{
    return c->describe;
}

void ut_cl_times(const ut_cl_t *c, ut_cl_times_t *t)
{
    *t = c->t;
}

/* Kernel k's buffer arguments, then k over `groups` events. */
static int run(ut_cl_t *c, int k, size_t n, const cl_mem *mems, size_t groups, cl_event *ev, tusk_error_t *err)
{
    int st = tusk_cl_kernels_buffers(c->k, k, mems, n, err);
    return st ? st : tusk_cl_kernels_launch(c->k, k, NULL, groups, c->wg, ev, err);
}

/* ---- packing and unpacking on the host's threads ---- */

typedef struct copy_part {
    void *dst;
    const void *src;
    size_t bytes;
} copy_part_t;

/* Part i of the batch's five arrays into the pinned buffers: each array
 * cut into c->parts pieces. */
static void pack_part(void *ctx, size_t i, unsigned thread)
{
    (void)thread;
    ut_cl_t *c = ctx;
    const ut_batch_t *b = c->job_batch;
    const copy_part_t arr[5] = {
        {tusk_cl_pinned_ptr(c->pin[P_EV]), b->ev, b->n * sizeof *b->ev},
        {tusk_cl_pinned_ptr(c->pin[P_BINFO]), b->bank_info, b->n_banks * sizeof *b->bank_info},
        {tusk_cl_pinned_ptr(c->pin[P_BFIRST]), b->bank_first, b->n_banks * sizeof *b->bank_first},
        {tusk_cl_pinned_ptr(c->pin[P_WORDS]), b->words, b->n_words * sizeof *b->words},
        {tusk_cl_pinned_ptr(c->pin[P_VELO]), b->velo, b->n_velo * sizeof *b->velo},
    };
    for (int a = 0; a < 5; a++) {
        size_t per = (arr[a].bytes + c->parts - 1) / c->parts, lo = i * per;
        size_t hi = lo + per < arr[a].bytes ? lo + per : arr[a].bytes;
        if (lo < hi)
            memcpy((char *)arr[a].dst + lo, (const char *)arr[a].src + lo, hi - lo);
    }
}

/* Event i's tracks from the device's output into the result, in VELO
 * track order (the device placed them by atomic adds). */
static void unpack_event(void *ctx, size_t i, unsigned thread)
{
    (void)thread;
    ut_cl_t *c = ctx;
    const ut_batch_t *b = c->job_batch;
    ut_result_t *res = c->job_res;
    const ut_dev_track_t *src = (const ut_dev_track_t *)tusk_cl_pinned_ptr(c->pin[P_OUT]) + b->ev[i].first_track;
    const uint32_t *counts = tusk_cl_pinned_ptr(c->pin[P_COUNT]);
    ut_dev_track_t *dst = res->tracks + res->first[i];
    uint32_t n = counts[i];
    for (uint32_t k = 0; k < n; k++) {
        ut_dev_track_t t = src[k];
        uint32_t j = k;
        for (; j > 0 && dst[j - 1].velo > t.velo; j--)
            dst[j] = dst[j - 1];
        dst[j] = t;
    }
    res->count[i] = n;
}

int ut_cl_run(ut_cl_t *c, const ut_batch_t *b, ut_result_t *res, tusk_error_t *err)
{
    return ut_cl_run_stages(c, b, UT_ALL, res, err);
}

enum { E_UP0, E_UP1, E_UP2, E_UP3, E_UP4, E_DECODE, E_WINDOWS, E_TRACKLETS, E_DOWN_COUNT, E_DOWN_OUT, E_DOWN_HITS,
       N_EVENTS = E_DOWN_HITS + 7 };

int ut_cl_run_stages(ut_cl_t *c, const ut_batch_t *b, int stages, ut_result_t *res, tusk_error_t *err)
{
    double t_start = tusk_clock_s();
    memset(&c->t, 0, sizeof c->t);
    if (stages < UT_DECODE || stages > UT_ALL)
        return tusk_error_set(err, TUSK_EINVAL, "UT: stages %d, expected 1 (decode), 2 (Compass) or 3 (both)", stages);
    if (!(stages & UT_DECODE) && (c->decoded != b || c->decoded_hits != ut_batch_hits(b)))
        return tusk_error_set(err, TUSK_EINVAL, "UT: Compass alone needs the decoding of the same batch first");
    int st = ut_result_reset(res, b, err);
    if (st != TUSK_OK || b->n == 0)
        return st;
    const char *dev = tusk_cl_describe(c->cl);
    cl_command_queue q = tusk_cl_queue(c->cl);
    uint32_t G = c->c.p.n_groups, S = c->c.cfg.sectors;
    size_t E = b->n, NW = b->n_words ? b->n_words : 1, NV = b->n_velo ? b->n_velo : 1, NB = b->n_banks ? b->n_banks : 1;
    if (E > UINT32_MAX / (G + 1))
        return tusk_error_set(err, TUSK_ELIMIT, "UT opencl: %zu events in one launch", E);
    cl_event ev[N_EVENTS] = {NULL};
    if (stages & UT_DECODE) {
        c->decoded = NULL;
        if ((st = droom(c, B_EV, E * sizeof(ut_dev_event_t), CL_MEM_READ_ONLY, err)) ||
            (st = droom(c, B_BINFO, NB * 4, CL_MEM_READ_ONLY, err)) ||
            (st = droom(c, B_BFIRST, NB * 4, CL_MEM_READ_ONLY, err)) ||
            (st = droom(c, B_WORDS, NW * 2, CL_MEM_READ_ONLY, err)) ||
            (st = droom(c, B_VELO, NV * sizeof(ut_dev_velo_t), CL_MEM_READ_ONLY, err)) ||
            (st = droom(c, B_KEY, NW * 4, CL_MEM_READ_WRITE, err)) ||
            (st = droom(c, B_POS, NW * 4, CL_MEM_READ_WRITE, err)) ||
            (st = droom(c, B_X0, NW * 4, CL_MEM_READ_WRITE, err)) ||
            (st = droom(c, B_Z0, NW * 4, CL_MEM_READ_WRITE, err)) ||
            (st = droom(c, B_YB, NW * 4, CL_MEM_READ_WRITE, err)) ||
            (st = droom(c, B_YE, NW * 4, CL_MEM_READ_WRITE, err)) ||
            (st = droom(c, B_W, NW * 4, CL_MEM_READ_WRITE, err)) ||
            (st = droom(c, B_ID, NW * 4, CL_MEM_READ_WRITE, err)) ||
            (st = droom(c, B_GF, E * (G + 1) * 4, CL_MEM_READ_WRITE, err)) ||
            (st = proom(c, P_EV, E * sizeof(ut_dev_event_t), err)) || (st = proom(c, P_BINFO, NB * 4, err)) ||
            (st = proom(c, P_BFIRST, NB * 4, err)) || (st = proom(c, P_WORDS, NW * 2, err)) ||
            (st = proom(c, P_VELO, NV * sizeof(ut_dev_velo_t), err)))
            return st;
        double t0 = tusk_clock_s();
        c->job_batch = b;
        c->parts = tusk_pool_threads(c->pool);
        tusk_pool_run(c->pool, c->parts, pack_part, c);
        c->t.pack = (tusk_clock_s() - t0) * 1e3;
        const struct {
            int buf, pin;
            size_t bytes;
        } up[5] = {{B_EV, P_EV, E * sizeof(ut_dev_event_t)},
                   {B_BINFO, P_BINFO, b->n_banks * 4},
                   {B_BFIRST, P_BFIRST, b->n_banks * 4},
                   {B_WORDS, P_WORDS, b->n_words * 2},
                   {B_VELO, P_VELO, b->n_velo * sizeof(ut_dev_velo_t)}};
        for (int i = 0; i < 5; i++) {
            if (!up[i].bytes)
                continue;
            void *from = tusk_cl_pinned_ptr(c->pin[up[i].pin]);
            if ((st = tusk_cl_write(c->cl, q, MEM(up[i].buf), CL_FALSE, up[i].bytes, from, &ev[E_UP0 + i],
                                    buf_names[up[i].buf], err)))
                goto done;
            c->t.bytes_up += up[i].bytes;
        }
        cl_mem a[] = {MEM(B_EV), MEM(B_BINFO), MEM(B_BFIRST), MEM(B_WORDS), MEM(B_SECTORS), MEM(B_PARAMS), MEM(B_KEY),
                      MEM(B_POS), MEM(B_X0), MEM(B_Z0), MEM(B_YB), MEM(B_YE), MEM(B_W), MEM(B_ID), MEM(B_GF)};
        if ((st = run(c, K_DECODE, 15, a, E, &ev[E_DECODE], err)))
            goto done;
    }
    if (stages & UT_COMPASS) {
        if ((st = droom(c, B_WIN, NV * UT_PLANES * 2 * S * 2, CL_MEM_READ_WRITE, err)) ||
            (st = droom(c, B_MASK, NV * 4, CL_MEM_READ_WRITE, err)) ||
            (st = droom(c, B_OUT, NV * sizeof(ut_dev_track_t), CL_MEM_WRITE_ONLY, err)) ||
            (st = droom(c, B_COUNT, E * 4, CL_MEM_READ_WRITE, err)) ||
            (st = proom(c, P_OUT, NV * sizeof(ut_dev_track_t), err)) || (st = proom(c, P_COUNT, E * 4, err)))
            goto done;
        cl_mem a1[] = {MEM(B_EV), MEM(B_VELO), MEM(B_PLANES), MEM(B_GROUPS), MEM(B_PARAMS), MEM(B_X0),
                       MEM(B_YB), MEM(B_YE), MEM(B_GF), MEM(B_WIN), MEM(B_MASK), MEM(B_NACT)};
        cl_mem a2[] = {MEM(B_EV), MEM(B_VELO), MEM(B_PLANES), MEM(B_PARAMS), MEM(B_X0), MEM(B_W),
                       MEM(B_ID), MEM(B_WIN), MEM(B_MASK), MEM(B_OUT), MEM(B_COUNT)};
        if ((st = tusk_cl_zero(c->cl, q, MEM(B_COUNT), E * 4, "UT track counts", err)) ||
            (st = tusk_cl_zero(c->cl, q, MEM(B_NACT), 4, "UT active tracks", err)) ||
            (st = run(c, K_WINDOWS, 12, a1, E, &ev[E_WINDOWS], err)) ||
            (st = run(c, K_TRACKLETS, 11, a2, E, &ev[E_TRACKLETS], err)))
            goto done;
        cl_uint n_active = 0;
        if ((st = tusk_cl_read(c->cl, q, MEM(B_COUNT), CL_FALSE, E * 4, tusk_cl_pinned_ptr(c->pin[P_COUNT]),
                               &ev[E_DOWN_COUNT], "UT track counts", err)) ||
            (b->n_velo && (st = tusk_cl_read(c->cl, q, MEM(B_OUT), CL_FALSE, b->n_velo * sizeof(ut_dev_track_t),
                                             tusk_cl_pinned_ptr(c->pin[P_OUT]), &ev[E_DOWN_OUT], "UT tracks", err))) ||
            (st = tusk_cl_read(c->cl, q, MEM(B_NACT), CL_TRUE, 4, &n_active, NULL, "UT active tracks", err)))
            goto done;
        c->t.active_tracks = n_active;
        c->t.bytes_down += E * 4 + b->n_velo * sizeof(ut_dev_track_t);
        const uint32_t *counts = tusk_cl_pinned_ptr(c->pin[P_COUNT]);
        for (size_t i = 0; i < E; i++)
            if (counts[i] > b->ev[i].n_tracks) {
                st = tusk_error_set(err, TUSK_ECL, "UT on %s: event %u came back with %u tracks of %u VELO tracks", dev,
                                    (unsigned)b->number[i], (unsigned)counts[i], (unsigned)b->ev[i].n_tracks);
                goto done;
            }
        double t0 = tusk_clock_s();
        c->job_batch = b;
        c->job_res = res;
        tusk_pool_run(c->pool, E, unpack_event, c);
        c->t.unpack = (tusk_clock_s() - t0) * 1e3;
    }
    if ((stages & UT_DECODE) && res->keep_hits) {
        /* the decoded hits: six arrays and the group offsets */
        size_t nh = b->n_words, ng = E * ((size_t)G + 1), bytes = nh * 4 * 6 + ng * 4;
        if ((st = proom(c, P_HITS, bytes + 4, err)) || (st = ut_hits_room(&res->hits, b, G, err)))
            goto done;
        char *h = tusk_cl_pinned_ptr(c->pin[P_HITS]);
        const int bufs[6] = {B_X0, B_Z0, B_YB, B_YE, B_W, B_ID};
        for (int i = 0; i < 6; i++)
            if (nh && (st = tusk_cl_read(c->cl, q, MEM(bufs[i]), CL_FALSE, nh * 4, h + i * nh * 4,
                                         &ev[E_DOWN_HITS + i], buf_names[bufs[i]], err)))
                goto done;
        if ((st = tusk_cl_read(c->cl, q, MEM(B_GF), CL_TRUE, ng * 4, h + 6 * nh * 4, &ev[E_DOWN_HITS + 6],
                               "UT group offsets", err)))
            goto done;
        memcpy(res->hits.x0, h, nh * 4);
        memcpy(res->hits.z0, h + nh * 4, nh * 4);
        memcpy(res->hits.yb, h + 2 * nh * 4, nh * 4);
        memcpy(res->hits.ye, h + 3 * nh * 4, nh * 4);
        memcpy(res->hits.w, h + 4 * nh * 4, nh * 4);
        memcpy(res->hits.id, h + 5 * nh * 4, nh * 4);
        memcpy(res->hits.group_first, h + 6 * nh * 4, ng * 4);
        for (size_t i = 0; i < E; i++)
            res->n_hits[i] = b->ev[i].n_hits;
        res->has_hits = true;
        c->t.bytes_down += bytes;
    }
    if ((st = tusk_cl_check(clFinish(q), err, "clFinish on %s", dev)))
        goto done;
    if (stages & UT_DECODE) {
        c->decoded = b;
        c->decoded_hits = ut_batch_hits(b);
    }
    c->t.upload = tusk_cl_events_ms(&ev[E_UP0], E_UP4 - E_UP0 + 1);
    c->t.decode = tusk_cl_event_ms(ev[E_DECODE]);
    c->t.windows = tusk_cl_event_ms(ev[E_WINDOWS]);
    c->t.tracklets = tusk_cl_event_ms(ev[E_TRACKLETS]);
    c->t.download = tusk_cl_events_ms(&ev[E_DOWN_COUNT], N_EVENTS - E_DOWN_COUNT);
    /* the kernels' least traffic (ut/README.md): decoding reads a word, its
     * bank's two words and sector (16 B), writes and reads the placed key
     * and word (16 B), writes the hit (24 B); the windows read a track (24 B)
     * and write its windows; the tracklets read them back and write a track */
    uint64_t win_bytes = (uint64_t)UT_PLANES * 2 * S * 2;
    if (stages & UT_DECODE)
        c->t.kernel_bytes += (uint64_t)b->n_words * (16 + 16 + 24) + E * ((uint64_t)G + 1) * 4;
    if (stages & UT_COMPASS)
        c->t.kernel_bytes += (uint64_t)b->n_velo * (24 + 2 * win_bytes + 8 + 24) + ut_result_total(res) * 32;
    c->t.total = (tusk_clock_s() - t_start) * 1e3;
done:
    return tusk_cl_run_end(q, st, ev, N_EVENTS);
}

int ut_cl_bandwidth(ut_cl_t *c, size_t bytes, unsigned repeat, double *gb_s, tusk_error_t *err)
{
    return tusk_cl_kernels_bandwidth(c->k, K_COPY, c->wg, bytes, repeat, "UT", gb_s, err);
}
