/* sts_cl.c - the OpenCL backend of the STS reconstruction (tusk/sts.h;
 * the kernels are kernels/sts.cl, the design sts/README.md).
 *
 * A batch of modules is one launch. The host copies the digis (the
 * batch's keys, already contiguous) into a pinned buffer and sends them
 * with the module records; on the device seven kernels, one work-group
 * per module each, take them from unsorted digis to hits without the data
 * leaving the device. Between the hit count and the hit writing the host
 * reads the per-module counts (32 bytes a module), places each module's
 * clusters and hits in the packed output, and sends the places back; then
 * the packed clusters and hits come back into pinned buffers and are
 * copied into the result. Every step is timed with profiling events. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "tusk/cl.h"
#include "sts_private.h"

/* Generated from opencl/gpu_common.h, sts_shared.h and kernels/sts.cl by
 * tools/embed-text.sh. */
extern const char tusk_sts_kernel_source[];
extern const unsigned long tusk_sts_kernel_source_size;

enum { K_SORT, K_WITHIN, K_LINK, K_CLUSTERS, K_CSORT, K_HCOUNT, K_HWRITE, K_COPY, N_KERNELS };
static const char *const kernel_names[N_KERNELS] = {"sts_sort_channels", "sts_sort_within", "sts_link",
                                                    "sts_clusters",      "sts_sort_clusters", "sts_hits_count",
                                                    "sts_hits_write",    "sts_copy"};

typedef struct dbuf {
    cl_mem mem;
    size_t cap;               /* bytes */
    const char *what;
} dbuf_t;

enum { B_MOD, B_PARAMS, B_IN, B_KEYS, B_OFF, B_CONN, B_CL, B_CKEY, B_CSORT, B_COUNTS, B_HCOUNT, B_HITS, B_OUT, N_BUFS };
static const char *const buf_names[N_BUFS] = {"STS modules",       "STS settings",      "STS digis",
                                              "STS sorted digis",  "STS channel offsets", "STS connectors",
                                              "STS clusters",      "STS cluster keys",  "STS sorted cluster keys",
                                              "STS module counts", "STS hit counts",    "STS hits",
                                              "STS packed clusters"};

typedef struct pbuf {
    tusk_cl_pinned_t *p;
    const char *what;
} pbuf_t;

enum { P_IN, P_MOD, P_COUNTS, P_OUT, P_HITS, N_PINNED };

struct sts_cl {
    sts_config_t cfg;
    sts_params_t p;
    sts_cl_config_t clc;
    tusk_cl_t *cl;
    cl_program program;
    cl_kernel k[N_KERNELS];
    unsigned wg;              /* work-items a group, as built */
    unsigned ch;              /* STS_CH as built */
    char extra[128];          /* the division option */
    dbuf_t d[N_BUFS];
    pbuf_t pin[N_PINNED];
    tusk_pool_t *pool;
    /* packing */
    const uint64_t *pack_src;
    uint64_t *pack_dst;
    size_t pack_n;
    unsigned pack_parts;
    sts_cl_times_t t;
    char describe[2 * TUSK_CL_TEXT_MAX + 256];
};

void sts_cl_config_default(sts_cl_config_t *c)
{
    memset(c, 0, sizeof *c);
    c->group_size = 256;
}

/* Options that let the compiler change the arithmetic break the
 * bit-for-bit agreement with the fast backend. */
static int check_options(const char *opt, tusk_error_t *err)
{
    static const char *const refused[] = {"-cl-fast-relaxed-math", "-cl-mad-enable", "-cl-unsafe-math-optimizations",
                                          "-cl-finite-math-only", NULL};
    for (const char *const *r = refused; opt && *r; r++)
        if (strstr(opt, *r))
            return tusk_error_set(err, TUSK_EINVAL,
                                  "STS: build option %s would let the kernels round differently from the fast backend "
                                  "(sts/README.md); leave it out",
                                  *r);
    return TUSK_OK;
}

static void release_program(sts_cl_t *c)
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

void sts_cl_destroy(sts_cl_t **cl)
{
    if (!cl || !*cl)
        return;
    sts_cl_t *c = *cl;
    if (c->cl) {
        clFinish(tusk_cl_queue(c->cl));
        for (int i = 0; i < N_BUFS; i++)
            tusk_cl_buffer_release(c->cl, &c->d[i].mem);
        for (int i = 0; i < N_PINNED; i++)
            tusk_cl_pinned_destroy(&c->pin[i].p);
    }
    release_program(c);
    tusk_cl_destroy(&c->cl);
    tusk_pool_destroy(&c->pool);
    free(c);
    *cl = NULL;
}

/* Build the kernels for `ch` channels a module and c->wg work-items a
 * group; when a kernel cannot run that many, the largest power of two it
 * can, and build again. */
static int build(sts_cl_t *c, unsigned ch, tusk_error_t *err)
{
    for (;;) {
        release_program(c);
        char opt[512], v[32];
        snprintf(opt, sizeof opt, "%s", c->extra);
        int st;
        snprintf(v, sizeof v, "%u", ch);
        if ((st = tusk_cl_define(opt, sizeof opt, "STS_CH", v, err)))
            return st;
        snprintf(v, sizeof v, "%u", c->wg);
        if ((st = tusk_cl_define(opt, sizeof opt, "STS_WG", v, err)))
            return st;
        if ((st = tusk_cl_program_build(c->cl, "sts.cl", tusk_sts_kernel_source, (size_t)tusk_sts_kernel_source_size,
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
        c->ch = ch;
        if (least >= c->wg)
            return TUSK_OK;
        unsigned p2 = 1;
        while (p2 * 2 <= least)
            p2 *= 2;
        if (p2 < 1 || least < 1)
            return tusk_error_set(err, TUSK_ELIMIT, "sts.cl on %s: a kernel cannot run at all", tusk_cl_describe(c->cl));
        c->wg = p2;
    }
}

int sts_cl_new(sts_cl_t **out, const sts_config_t *cfg, const sts_cl_config_t *clc, tusk_error_t *err)
{
    *out = NULL;
    int st = sts_config_check(cfg, err);
    if (st != TUSK_OK)
        return st;
    if (clc->group_size < 1 || clc->group_size > 4096)
        return tusk_error_set(err, TUSK_EINVAL, "STS opencl: group_size %u, expected 1 to 4096", clc->group_size);
    if ((st = check_options(clc->options, err)) != TUSK_OK)
        return st;
    sts_cl_t *c = calloc(1, sizeof *c);
    if (!c)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    c->cfg = *cfg;
    sts_params_of(cfg, &c->p);
    c->clc = *clc;
    c->clc.device = c->clc.options = NULL; /* not kept */
    for (int i = 0; i < N_BUFS; i++)
        c->d[i].what = buf_names[i];
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
        snprintf(c->extra, sizeof c->extra, "-DSTS_DIV_VIA_DOUBLE=1");
    } else {
        st = tusk_error_set(err, TUSK_ENODEV,
                            "STS on %s: the device divides floats without correct rounding and has no fp64, so its "
                            "clusters could differ from the fast backend's",
                            tusk_cl_describe(c->cl));
        goto fail;
    }
    c->wg = clc->group_size;
    if (dev->max_work_group_size > 0 && c->wg > dev->max_work_group_size)
        c->wg = (unsigned)dev->max_work_group_size;
    /* local memory: the channel histogram and the scans' room */
    size_t local = (2u * 1024 + 1) * 4 + 2 * (size_t)c->wg * 4;
    if (STS_BUCKETS * 4 + 2 * (size_t)c->wg * 4 > local)
        local = STS_BUCKETS * 4 + 2 * (size_t)c->wg * 4;
    if (local > dev->local_mem) {
        st = tusk_error_set(err, TUSK_ELIMIT, "STS on %s: a work-group needs %zu bytes of local memory, the device has %llu",
                            tusk_cl_describe(c->cl), local, (unsigned long long)dev->local_mem);
        goto fail;
    }
    if ((st = build(c, 2048, err)))
        goto fail;
    snprintf(c->describe, sizeof c->describe, "%s; %u work-items a module%s", tusk_cl_describe(c->cl), c->wg,
             c->extra[0] == '-' && c->extra[1] == 'D' ? "; float division via double" : "");
    *out = c;
    return TUSK_OK;
fail:
    sts_cl_destroy(&c);
    return st;
}

const char *sts_cl_describe(const sts_cl_t *c)
{
    return c->describe;
}

void sts_cl_times(const sts_cl_t *c, sts_cl_times_t *t)
{
    *t = c->t;
}

/* Room for `bytes` in device buffer i (contents not kept). */
static int droom(sts_cl_t *c, int i, size_t bytes, cl_mem_flags flags, tusk_error_t *err)
{
    dbuf_t *b = &c->d[i];
    if (bytes <= b->cap && b->mem)
        return TUSK_OK;
    size_t cap = bytes + bytes / 4 + 4096;
    tusk_cl_buffer_release(c->cl, &b->mem);
    b->cap = 0;
    int st = tusk_cl_buffer_new(c->cl, b->what, flags, cap, NULL, &b->mem, err);
    if (st == TUSK_OK)
        b->cap = cap;
    return st;
}

static int proom(sts_cl_t *c, int i, size_t bytes, tusk_error_t *err)
{
    static const char *const names[N_PINNED] = {"STS digis (pinned)", "STS modules (pinned)", "STS counts (pinned)",
                                                "STS clusters (pinned)", "STS hits (pinned)"};
    if (c->pin[i].p && tusk_cl_pinned_size(c->pin[i].p) >= bytes)
        return TUSK_OK;
    tusk_cl_pinned_destroy(&c->pin[i].p);
    size_t cap = bytes + bytes / 4 + 4096;
    return tusk_cl_pinned_new(c->cl, names[i], cap, &c->pin[i].p, err);
}

static void pack_part(void *ctx, size_t i, unsigned thread)
{
    (void)thread;
    sts_cl_t *c = ctx;
    size_t per = (c->pack_n + c->pack_parts - 1) / c->pack_parts, lo = i * per;
    size_t hi = lo + per < c->pack_n ? lo + per : c->pack_n;
    if (lo < hi)
        memcpy(c->pack_dst + lo, c->pack_src + lo, (hi - lo) * sizeof *c->pack_dst);
}

static int set_args(sts_cl_t *c, int k, int n, const cl_mem *mems, tusk_error_t *err)
{
    for (int i = 0; i < n; i++) {
        int st = tusk_cl_check(clSetKernelArg(c->k[k], (cl_uint)i, sizeof(cl_mem), &mems[i]), err,
                               "clSetKernelArg(%s, %d) on %s", kernel_names[k], i, tusk_cl_describe(c->cl));
        if (st)
            return st;
    }
    return TUSK_OK;
}

static int launch(sts_cl_t *c, int k, size_t groups, cl_event *ev, tusk_error_t *err)
{
    size_t global = groups * c->wg, local = c->wg;
    return tusk_cl_check(clEnqueueNDRangeKernel(tusk_cl_queue(c->cl), c->k[k], 1, NULL, &global, &local, 0, NULL, ev),
                         err, "clEnqueueNDRangeKernel(%s, %zu groups of %zu) on %s", kernel_names[k], groups, local,
                         tusk_cl_describe(c->cl));
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

enum { E_UP_MOD, E_UP_IN, E_SORT, E_WITHIN, E_LINK, E_CLUSTERS, E_CSORT, E_HCOUNT, E_DOWN_COUNTS, E_UP_MOD2,
       E_HWRITE, E_DOWN_OUT, E_DOWN_HITS, N_EVENTS };

static void release_events(cl_event *ev)
{
    for (int i = 0; i < N_EVENTS; i++)
        if (ev[i]) {
            clReleaseEvent(ev[i]);
            ev[i] = NULL;
        }
}

int sts_cl_run(sts_cl_t *c, const sts_batch_t *b, sts_result_t *res, tusk_error_t *err)
{
    double t_start = tusk_clock_s();
    memset(&c->t, 0, sizeof c->t);
    size_t M = sts_batch_count(b);
    uint64_t N = sts_batch_digis(b);
    int st = sts_result_reset(res, M, 1, err);
    if (st != TUSK_OK || M == 0)
        return st;
    if (N > UINT32_MAX / 2)
        return tusk_error_set(err, TUSK_ELIMIT, "STS opencl: a batch of %llu digis; at most 2^31 a launch",
                              (unsigned long long)N);
    const char *dev = tusk_cl_describe(c->cl);
    cl_command_queue q = tusk_cl_queue(c->cl);
    /* the module records; the kernels' channel room */
    unsigned max_strips = 1;
    for (size_t i = 0; i < M; i++) {
        sts_module_t m;
        sts_batch_module(b, i, &m);
        if (m.hdr.strips > max_strips)
            max_strips = m.hdr.strips;
    }
    if (2 * max_strips > c->ch) {
        unsigned ch = c->ch;
        while (ch < 2 * max_strips)
            ch *= 2;
        const tusk_cl_device_info_t *d = tusk_cl_device(c->cl);
        if ((size_t)(ch + 1) * 4 + 2 * (size_t)c->wg * 4 > d->local_mem)
            return tusk_error_set(err, TUSK_ELIMIT, "STS on %s: modules of %u strips a side need %zu bytes of local memory",
                                  dev, max_strips, (size_t)(ch + 1) * 4 + 2 * (size_t)c->wg * 4);
        if ((st = build(c, ch, err)))
            return st;
    }
    size_t n_off = 0;
    if ((st = proom(c, P_MOD, M * sizeof(sts_dev_module_t), err)) || (st = proom(c, P_IN, N * 8, err)) ||
        (st = proom(c, P_COUNTS, M * sizeof(sts_dev_counts_t), err)))
        return st;
    sts_dev_module_t *mods = tusk_cl_pinned_ptr(c->pin[P_MOD].p);
    uint64_t first = 0;
    for (size_t i = 0; i < M; i++) {
        sts_module_t m;
        sts_batch_module(b, i, &m);
        sts_dev_module_of(&m, &mods[i]);
        mods[i].first = (uint32_t)first;
        mods[i].first_off = (uint32_t)n_off;
        first += m.hdr.n_digis;
        n_off += 2u * m.hdr.strips + 1;
    }
    size_t n_alloc = N ? N : 1;
    if ((st = droom(c, B_MOD, M * sizeof(sts_dev_module_t), CL_MEM_READ_ONLY, err)) ||
        (st = droom(c, B_PARAMS, sizeof(sts_params_t), CL_MEM_READ_ONLY, err)) ||
        (st = droom(c, B_IN, n_alloc * 8, CL_MEM_READ_ONLY, err)) ||
        (st = droom(c, B_KEYS, n_alloc * 8, CL_MEM_READ_WRITE, err)) ||
        (st = droom(c, B_OFF, n_off * 4, CL_MEM_READ_WRITE, err)) ||
        (st = droom(c, B_CONN, n_alloc * 4, CL_MEM_READ_WRITE, err)) ||
        (st = droom(c, B_CL, n_alloc * sizeof(sts_cluster_t), CL_MEM_READ_WRITE, err)) ||
        (st = droom(c, B_CKEY, n_alloc * 8, CL_MEM_READ_WRITE, err)) ||
        (st = droom(c, B_CSORT, n_alloc * 8, CL_MEM_READ_WRITE, err)) ||
        (st = droom(c, B_COUNTS, M * sizeof(sts_dev_counts_t), CL_MEM_READ_WRITE, err)) ||
        (st = droom(c, B_HCOUNT, n_alloc * 4, CL_MEM_READ_WRITE, err)))
        return st;
    /* pack: the batch's keys are one array already */
    double t0 = tusk_clock_s();
    sts_module_t m0;
    sts_batch_module(b, 0, &m0);
    c->pack_src = m0.digi;
    c->pack_dst = tusk_cl_pinned_ptr(c->pin[P_IN].p);
    c->pack_n = N;
    c->pack_parts = tusk_pool_threads(c->pool);
    tusk_pool_run(c->pool, c->pack_parts, pack_part, c);
    c->t.pack = (tusk_clock_s() - t0) * 1e3;

    cl_event ev[N_EVENTS] = {NULL};
    const cl_uint zero = 0;
    cl_uint delta = c->p.delta;
#define MEM(i) (c->d[i].mem)
    if ((st = tusk_cl_check(clEnqueueWriteBuffer(q, MEM(B_MOD), CL_FALSE, 0, M * sizeof *mods, mods, 0, NULL,
                                                 &ev[E_UP_MOD]),
                            err, "clEnqueueWriteBuffer(STS modules) on %s", dev)) ||
        (st = tusk_cl_check(clEnqueueWriteBuffer(q, MEM(B_PARAMS), CL_FALSE, 0, sizeof c->p, &c->p, 0, NULL, NULL), err,
                            "clEnqueueWriteBuffer(STS settings) on %s", dev)) ||
        (N && (st = tusk_cl_check(clEnqueueWriteBuffer(q, MEM(B_IN), CL_FALSE, 0, N * 8, c->pack_dst, 0, NULL,
                                                       &ev[E_UP_IN]),
                                  err, "clEnqueueWriteBuffer(STS digis, %llu bytes) on %s", (unsigned long long)N * 8,
                                  dev))) ||
        (st = tusk_cl_check(clEnqueueFillBuffer(q, MEM(B_COUNTS), &zero, sizeof zero, 0, M * sizeof(sts_dev_counts_t), 0,
                                                NULL, NULL),
                            err, "clEnqueueFillBuffer(STS module counts) on %s", dev)))
        goto done;
    {
        cl_mem a1[] = {MEM(B_MOD), MEM(B_IN), MEM(B_KEYS), MEM(B_OFF), MEM(B_CONN)};
        cl_mem a2[] = {MEM(B_MOD), MEM(B_KEYS), MEM(B_OFF)};
        cl_mem a3[] = {MEM(B_MOD), MEM(B_KEYS), MEM(B_OFF), MEM(B_CONN)};
        cl_mem a4[] = {MEM(B_MOD), MEM(B_KEYS), MEM(B_CONN), MEM(B_CL), MEM(B_CKEY), MEM(B_COUNTS), MEM(B_PARAMS)};
        cl_mem a5[] = {MEM(B_MOD), MEM(B_CKEY), MEM(B_CSORT), MEM(B_COUNTS)};
        cl_mem a6[] = {MEM(B_MOD), MEM(B_CL), MEM(B_CSORT), MEM(B_COUNTS), MEM(B_HCOUNT), MEM(B_PARAMS)};
        if ((st = set_args(c, K_SORT, 5, a1, err)) || (st = launch(c, K_SORT, M, &ev[E_SORT], err)) ||
            (st = set_args(c, K_WITHIN, 3, a2, err)) || (st = launch(c, K_WITHIN, M, &ev[E_WITHIN], err)) ||
            (st = set_args(c, K_LINK, 4, a3, err)) ||
            (st = tusk_cl_check(clSetKernelArg(c->k[K_LINK], 4, sizeof delta, &delta), err,
                                "clSetKernelArg(sts_link, 4) on %s", dev)) ||
            (st = launch(c, K_LINK, M, &ev[E_LINK], err)) || (st = set_args(c, K_CLUSTERS, 7, a4, err)) ||
            (st = launch(c, K_CLUSTERS, M, &ev[E_CLUSTERS], err)) || (st = set_args(c, K_CSORT, 4, a5, err)) ||
            (st = launch(c, K_CSORT, M, &ev[E_CSORT], err)) || (st = set_args(c, K_HCOUNT, 6, a6, err)) ||
            (st = launch(c, K_HCOUNT, M, &ev[E_HCOUNT], err)))
            goto done;
    }
    sts_dev_counts_t *counts = tusk_cl_pinned_ptr(c->pin[P_COUNTS].p);
    if ((st = tusk_cl_check(clEnqueueReadBuffer(q, MEM(B_COUNTS), CL_TRUE, 0, M * sizeof *counts, counts, 0, NULL,
                                                &ev[E_DOWN_COUNTS]),
                            err, "clEnqueueReadBuffer(STS module counts) on %s", dev)))
        goto done;
    /* where each module's clusters and hits go */
    uint64_t n_cl = 0, n_hits = 0;
    for (size_t i = 0; i < M; i++) {
        if (counts[i].n_front > counts[i].n_clusters || counts[i].n_clusters > mods[i].n) {
            st = tusk_error_set(err, TUSK_ECL, "STS on %s: module %zu came back with %u clusters (%u front) of %u digis",
                                dev, i, (unsigned)counts[i].n_clusters, (unsigned)counts[i].n_front,
                                (unsigned)mods[i].n);
            goto done;
        }
        mods[i].first_out = (uint32_t)n_cl;
        mods[i].first_hit = (uint32_t)n_hits;
        n_cl += counts[i].n_clusters;
        n_hits += counts[i].n_hits;
    }
    if (n_hits > UINT32_MAX / 2) {
        st = tusk_error_set(err, TUSK_ELIMIT, "STS on %s: %llu hits in one launch; give it fewer modules", dev,
                            (unsigned long long)n_hits);
        goto done;
    }
    if ((st = droom(c, B_HITS, (n_hits ? n_hits : 1) * sizeof(sts_hit_t), CL_MEM_WRITE_ONLY, err)) ||
        (st = droom(c, B_OUT, (n_cl ? n_cl : 1) * sizeof(sts_cluster_t), CL_MEM_WRITE_ONLY, err)) ||
        (st = proom(c, P_OUT, (n_cl ? n_cl : 1) * sizeof(sts_cluster_t), err)) ||
        (st = proom(c, P_HITS, (n_hits ? n_hits : 1) * sizeof(sts_hit_t), err)))
        goto done;
    {
        cl_mem a7[] = {MEM(B_MOD), MEM(B_CL), MEM(B_CSORT), MEM(B_COUNTS), MEM(B_HCOUNT), MEM(B_HITS), MEM(B_OUT),
                       MEM(B_PARAMS)};
        if ((st = tusk_cl_check(clEnqueueWriteBuffer(q, MEM(B_MOD), CL_FALSE, 0, M * sizeof *mods, mods, 0, NULL,
                                                     &ev[E_UP_MOD2]),
                                err, "clEnqueueWriteBuffer(STS modules) on %s", dev)) ||
            (st = set_args(c, K_HWRITE, 8, a7, err)) || (st = launch(c, K_HWRITE, M, &ev[E_HWRITE], err)) ||
            (n_cl && (st = tusk_cl_check(clEnqueueReadBuffer(q, MEM(B_OUT), CL_FALSE, 0, n_cl * sizeof(sts_cluster_t),
                                                             tusk_cl_pinned_ptr(c->pin[P_OUT].p), 0, NULL,
                                                             &ev[E_DOWN_OUT]),
                                         err, "clEnqueueReadBuffer(STS clusters) on %s", dev))) ||
            (n_hits && (st = tusk_cl_check(clEnqueueReadBuffer(q, MEM(B_HITS), CL_FALSE, 0, n_hits * sizeof(sts_hit_t),
                                                               tusk_cl_pinned_ptr(c->pin[P_HITS].p), 0, NULL,
                                                               &ev[E_DOWN_HITS]),
                                           err, "clEnqueueReadBuffer(STS hits) on %s", dev))) ||
            (st = tusk_cl_check(clEnqueueReadBuffer(q, MEM(B_COUNTS), CL_TRUE, 0, M * sizeof *counts, counts, 0, NULL,
                                                    NULL),
                                err, "clEnqueueReadBuffer(STS module counts) on %s", dev)))
            goto done;
    }
#undef MEM
    for (size_t i = 0; i < M; i++)
        if (counts[i].status) {
            st = tusk_error_set(err, TUSK_ECL, "STS on %s: module %zu: the kernels report status 0x%x (hits %s)", dev, i,
                                (unsigned)counts[i].status,
                                counts[i].status & STS_STATUS_HITS ? "written do not match their count" : "?");
            goto done;
        }
    /* the results */
    t0 = tusk_clock_s();
    sts_chunk_t *ch = &res->chunk[0];
    if (sts_chunk_room(ch, n_cl, n_hits) != 0) {
        st = tusk_error_set(err, TUSK_ENOMEM, "out of memory (%llu clusters, %llu hits)", (unsigned long long)n_cl,
                            (unsigned long long)n_hits);
        goto done;
    }
    if (n_cl)
        memcpy(ch->c, tusk_cl_pinned_ptr(c->pin[P_OUT].p), n_cl * sizeof *ch->c);
    if (n_hits)
        memcpy(ch->h, tusk_cl_pinned_ptr(c->pin[P_HITS].p), n_hits * sizeof *ch->h);
    ch->nc = n_cl;
    ch->nh = n_hits;
    for (size_t i = 0; i < M; i++) {
        sts_mod_res_t *r = &res->mod[i];
        r->chunk = 0;
        r->n_front = counts[i].n_front;
        r->n_back = counts[i].n_clusters - counts[i].n_front;
        r->n_hits = counts[i].n_hits;
        r->c_off = mods[i].first_out;
        r->h_off = mods[i].first_hit;
    }
    c->t.unpack = (tusk_clock_s() - t0) * 1e3;
    c->t.upload = ev_ms(ev[E_UP_MOD]) + ev_ms(ev[E_UP_IN]) + ev_ms(ev[E_UP_MOD2]);
    c->t.sort_digis = ev_ms(ev[E_SORT]) + ev_ms(ev[E_WITHIN]);
    c->t.find_clusters = ev_ms(ev[E_LINK]);
    c->t.compute_clusters = ev_ms(ev[E_CLUSTERS]);
    c->t.sort_clusters = ev_ms(ev[E_CSORT]);
    c->t.find_hits = ev_ms(ev[E_HCOUNT]) + ev_ms(ev[E_HWRITE]);
    c->t.download = ev_ms(ev[E_DOWN_COUNTS]) + ev_ms(ev[E_DOWN_OUT]) + ev_ms(ev[E_DOWN_HITS]);
    c->t.bytes_up = N * 8 + 2 * M * sizeof *mods;
    c->t.bytes_down = n_cl * sizeof(sts_cluster_t) + n_hits * sizeof(sts_hit_t) + M * sizeof *counts;
    /* the kernels' least traffic (sts/README.md) */
    c->t.kernel_bytes = N * (16 + 12 + 16 + 8 + 12) + n_cl * (40 + 40 + 2 * 40 + 64) + n_hits * 40;
    c->t.total = (tusk_clock_s() - t_start) * 1e3;
done:
    if (st != TUSK_OK)
        clFinish(q);
    release_events(ev);
    return st;
}

int sts_cl_bandwidth(sts_cl_t *c, size_t bytes, unsigned repeat, double *gb_s, tusk_error_t *err)
{
    const tusk_cl_device_info_t *d = tusk_cl_device(c->cl);
    bytes = bytes / 16 * 16;
    if (bytes > d->max_alloc)
        bytes = (size_t)d->max_alloc / 16 * 16;
    if (bytes < 16 || repeat < 1)
        return tusk_error_set(err, TUSK_EINVAL, "STS bandwidth probe: %zu bytes, %u runs", bytes, repeat);
    cl_mem a = NULL, bm = NULL;
    int st;
    cl_uint n = (cl_uint)(bytes / 16 < UINT32_MAX ? bytes / 16 : UINT32_MAX);
    const cl_uint zero = 0;
    double best = 0;
    if ((st = tusk_cl_buffer_new(c->cl, "STS bandwidth source", CL_MEM_READ_ONLY, bytes, NULL, &a, err)) ||
        (st = tusk_cl_buffer_new(c->cl, "STS bandwidth target", CL_MEM_WRITE_ONLY, bytes, NULL, &bm, err)) ||
        (st = tusk_cl_check(clEnqueueFillBuffer(tusk_cl_queue(c->cl), a, &zero, sizeof zero, 0, bytes, 0, NULL, NULL),
                            err, "clEnqueueFillBuffer(STS bandwidth source) on %s", tusk_cl_describe(c->cl))) ||
        (st = tusk_cl_check(clSetKernelArg(c->k[K_COPY], 0, sizeof a, &a), err, "clSetKernelArg(sts_copy, 0)")) ||
        (st = tusk_cl_check(clSetKernelArg(c->k[K_COPY], 1, sizeof bm, &bm), err, "clSetKernelArg(sts_copy, 1)")) ||
        (st = tusk_cl_check(clSetKernelArg(c->k[K_COPY], 2, sizeof n, &n), err, "clSetKernelArg(sts_copy, 2)")))
        goto done;
    size_t groups = (size_t)d->compute_units * 16;
    if (groups < 1)
        groups = 1;
    for (unsigned r = 0; r <= repeat; r++) {
        cl_event ev = NULL;
        if ((st = launch(c, K_COPY, groups, &ev, err)) ||
            (st = tusk_cl_check(clWaitForEvents(1, &ev), err, "waiting for sts_copy on %s", tusk_cl_describe(c->cl)))) {
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
