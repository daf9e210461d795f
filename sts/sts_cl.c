/* sts_cl.c - the OpenCL backend of the STS reconstruction (tusk/sts.h;
 * the kernels are kernels/sts.cl, the design sts/README.md).
 *
 * A batch of modules is one launch. The host copies the digis (the
 * batch's keys, already contiguous) into a pinned buffer with its threads
 * and sends them with a record a module and the tile tables (which
 * work-group does which part of which module: sts/README.md, "Load");
 * on the device the kernels take them from unsorted digis to hits without
 * the data leaving the device. Twice the host reads the module counts
 * (32 bytes a module): after the clusters, to make the cluster and hit
 * tiles, and after the hit count, to place each module's clusters and
 * hits in the packed output. The packed clusters and hits come back into
 * pinned buffers and are copied into the result by the host's threads.
 * Every step is timed with profiling events. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/grow.h"
#include "tusk/cl.h"
#include "sts_private.h"

/* Generated from opencl/gpu_common.h, sts_shared.h and kernels/sts.cl by
 * tools/embed-text.sh. */
extern const char tusk_sts_kernel_source[];
extern const unsigned long tusk_sts_kernel_source_size;

enum { K_DCOUNT, K_DCOLSCAN, K_DSCATTER, K_DRANK, K_LINK, K_HEADS, K_CLUSTERS, K_CCOUNT, K_CCOLSCAN, K_CSCATTER,
       K_CRANK, K_HCOUNT, K_HWRITE, K_COPY, N_KERNELS };
static const char *const kernel_names[N_KERNELS] = {
    "sts_digi_count", "sts_digi_colscan", "sts_digi_scatter", "sts_digi_rank", "sts_link",
    "sts_heads",      "sts_clusters",     "sts_cl_count",     "sts_cl_colscan", "sts_cl_scatter",
    "sts_cl_rank",    "sts_hits_count",   "sts_hits_write",   "sts_copy"};

enum { B_MOD, B_PARAMS, B_IN, B_KEYS, B_TMP, B_DAREA, B_CONN, B_THEADS, B_CL, B_CKEY, B_CSORT, B_CAREA, B_COUNTS,
       B_HCOUNT, B_WSTART, B_THITS, B_HITS, B_OUT, B_T_DIGI, B_T_DCHAN, B_T_CL, B_T_CCHAN, B_T_FRONT, N_BUFS };
static const char *const buf_names[N_BUFS] = {
    "STS modules",          "STS settings",         "STS digis",           "STS sorted digis",
    "STS sort room",        "STS digi count area",  "STS connectors",      "STS heads a tile",
    "STS clusters",         "STS cluster keys",     "STS sorted cluster keys", "STS cluster count area",
    "STS module counts",    "STS hit counts",       "STS window starts",   "STS hits a tile",
    "STS hits",             "STS packed clusters",  "STS digi tiles",      "STS channel tiles",
    "STS cluster tiles",    "STS bucket tiles",     "STS front tiles"};

/* The tile tables: (module, tile of the module) a work-group. */
enum { T_DIGI, T_DCHAN, T_CL, T_CCHAN, T_FRONT, N_TABLES };
static const int table_buf[N_TABLES] = {B_T_DIGI, B_T_DCHAN, B_T_CL, B_T_CCHAN, B_T_FRONT};

typedef struct table {
    uint32_t *v;              /* pairs */
    size_t n, cap;            /* pairs; capacity in words */
} table_t;

enum { P_IN, P_MOD, P_COUNTS, P_OUT, P_HITS, N_PINNED };

/* A copy spread over the host's threads: up to two regions, `parts` pieces each. */
typedef struct copy_job {
    const char *src[2];
    char *dst[2];
    size_t bytes[2];
    size_t parts;
} copy_job_t;

struct sts_cl {
    sts_config_t cfg;
    sts_params_t p;
    sts_cl_config_t clc;
    tusk_cl_t *cl;
    tusk_cl_kernels_t *k;
    unsigned asked;           /* work-items a group asked for */
    unsigned wg;              /* the most a group may have (STS_WG as built): asked, or the device's maximum */
    unsigned lsz[N_KERNELS];  /* work-items of each kernel's groups: wg, or less where the kernel allows less */
    unsigned ch;              /* STS_CH as built */
    char division[64];        /* the division option (tusk_cl_exact_division) */
    bool via_double;
    tusk_cl_room_t d[N_BUFS];
    tusk_cl_pinned_t *pin[N_PINNED];
    table_t tab[N_TABLES];
    uint32_t *last_ns;        /* per module of the launch: its timeslice's last ns */
    size_t cap_last;
    tusk_pool_t *pool;
    copy_job_t job;
    sts_cl_times_t t;
    char describe[2 * TUSK_CL_TEXT_MAX + 1024];
};

void sts_cl_config_default(sts_cl_config_t *c)
{
    memset(c, 0, sizeof *c);
    c->group_size = 256;
}

void sts_cl_destroy(sts_cl_t **cl)
{
    if (!cl || !*cl)
        return;
    sts_cl_t *c = *cl;
    tusk_cl_release_all(c->cl, c->d, N_BUFS, c->pin, N_PINNED);
    for (int i = 0; i < N_TABLES; i++)
        free(c->tab[i].v);
    free(c->last_ns);
    tusk_cl_kernels_destroy(&c->k);
    tusk_cl_destroy(&c->cl);
    tusk_pool_destroy(&c->pool);
    free(c);
    *cl = NULL;
}

/* Build the kernels for `ch` channels a module and groups of at most
 * c->wg work-items; then each kernel's group size: c->wg, or where the
 * kernel cannot run that many (its CL_KERNEL_WORK_GROUP_SIZE, which on a
 * GPU falls with the registers it needs) the largest power of two it can.
 * The kernels work for any group size (sts.cl), so one kernel's limit
 * does not shrink the others'. */
static int build(sts_cl_t *c, unsigned ch, tusk_error_t *err)
{
    char opt[512], v[32];
    snprintf(opt, sizeof opt, "%s", c->division);
    int st;
    snprintf(v, sizeof v, "%u", ch);
    if ((st = tusk_cl_define(opt, sizeof opt, "STS_CH", v, err)))
        return st;
    snprintf(v, sizeof v, "%u", c->wg);
    tusk_cl_source_t src = {"sts.cl", tusk_sts_kernel_source, (size_t)tusk_sts_kernel_source_size, kernel_names,
                            N_KERNELS};
    tusk_cl_kernels_t *k = NULL;
    if ((st = tusk_cl_define(opt, sizeof opt, "STS_WG", v, err)) ||
        (st = tusk_cl_kernels_new(c->cl, &src, opt, &k, err)))
        return st; /* the kernels built before, if any, stay */
    tusk_cl_kernels_destroy(&c->k);
    c->k = k;
    for (int i = 0; i < N_KERNELS; i++)
        c->lsz[i] = (unsigned)tusk_cl_kernels_group(c->k, i, c->wg);
    c->ch = ch;
    return TUSK_OK;
}

/* "DEVICE; groups of N work-items (asked A ...)": what was asked, what
 * each kernel runs with and why it differs. */
static void make_describe(sts_cl_t *c)
{
    const tusk_cl_device_info_t *dev = tusk_cl_device(c->cl);
    size_t at = 0, cap = sizeof c->describe;
#define PUT(...)                                                                                                       \
    do {                                                                                                               \
        int w_ = snprintf(c->describe + at, cap - at, __VA_ARGS__);                                                    \
        if (w_ > 0)                                                                                                    \
            at = at + (size_t)w_ < cap ? at + (size_t)w_ : cap - 1;                                                    \
    } while (0)
    PUT("%s; work-groups of %u work-items", tusk_cl_describe(c->cl), c->wg);
    if (c->asked != c->wg)
        PUT(" (asked %u; the device allows at most %zu a group)", c->asked, (size_t)dev->max_work_group_size);
    else
        PUT(" (as asked)");
    int fewer = 0;
    for (int i = 0; i < N_KERNELS; i++)
        if (c->lsz[i] < c->wg && i != K_COPY) {
            PUT("%s %s %u (the kernel allows at most %zu: its CL_KERNEL_WORK_GROUP_SIZE)", fewer++ ? "," : "; but",
                kernel_names[i], c->lsz[i], tusk_cl_kernels_limit(c->k, i));
        }
    PUT("; tiles of %u digis, %u clusters, %u front clusters", STS_TILE_DIGIS, STS_TILE_CLUSTERS, STS_TILE_FRONTS);
    if (c->via_double)
        PUT("; float division via double");
#undef PUT
}

/* Local memory of the largest group: a histogram of `ch` channels or of
 * both sides' time buckets, whichever is larger, and the scan's room. */
static size_t local_bytes(unsigned ch, unsigned wg)
{
    size_t h = ch > 2 * STS_BUCKETS ? ch : 2 * STS_BUCKETS;
    return (h + 1) * 4 + (size_t)wg * 4 + 16;
}

int sts_cl_new(sts_cl_t **out, const sts_config_t *cfg, const sts_cl_config_t *clc, tusk_error_t *err)
{
    *out = NULL;
    int st = sts_config_check(cfg, err);
    if (st != TUSK_OK)
        return st;
    if (clc->group_size < 1 || clc->group_size > 4096)
        return tusk_error_set(err, TUSK_EINVAL, "STS opencl: group_size %u, expected 1 to 4096", clc->group_size);
    sts_cl_t *c = calloc(1, sizeof *c);
    if (!c)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    c->cfg = *cfg;
    sts_params_of(cfg, &c->p);
    c->clc = *clc;
    c->clc.device = c->clc.options = NULL; /* not kept */
    if ((st = tusk_cl_new_exact(&c->cl, clc->device, clc->instance, clc->options, clc->no_cache, "STS",
                                "the fast backend (sts/README.md)", err)) ||
        (st = tusk_pool_new(&c->pool, clc->threads, err)))
        goto fail;
    const tusk_cl_device_info_t *dev = tusk_cl_device(c->cl);
    if ((st = tusk_cl_exact_division(c->cl, "STS", "the fast backend's", "STS_DIV_VIA_DOUBLE", c->division,
                                     sizeof c->division, &c->via_double, err)))
        goto fail;
    c->asked = c->wg = clc->group_size;
    if (dev->max_work_group_size > 0 && c->wg > dev->max_work_group_size)
        c->wg = (unsigned)dev->max_work_group_size;
    /* local memory: the largest histogram (channels, or both sides' time buckets) and the scan's room */
    size_t local = local_bytes(2u * 1024, c->wg);
    if (local > dev->local_mem) {
        st = tusk_error_set(err, TUSK_ELIMIT, "STS on %s: a work-group needs %zu bytes of local memory, the device has %llu",
                            tusk_cl_describe(c->cl), local, (unsigned long long)dev->local_mem);
        goto fail;
    }
    if ((st = build(c, 2048, err)))
        goto fail;
    make_describe(c);
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

/* Room for `bytes` in device buffer i, pinned buffer i (contents not kept). */
static int droom(sts_cl_t *c, int i, size_t bytes, cl_mem_flags flags, tusk_error_t *err)
{
    return tusk_cl_buffer_room(c->cl, buf_names[i], flags, bytes, &c->d[i], err);
}

static int proom(sts_cl_t *c, int i, size_t bytes, tusk_error_t *err)
{
    static const char *const names[N_PINNED] = {"STS digis (pinned)", "STS modules (pinned)", "STS counts (pinned)",
                                                "STS clusters (pinned)", "STS hits (pinned)"};
    return tusk_cl_pinned_room(c->cl, names[i], bytes, &c->pin[i], err);
}

/* Piece i of the copy job: region i / parts, its (i mod parts)-th piece. */
static void copy_part(void *ctx, size_t i, unsigned thread)
{
    (void)thread;
    const copy_job_t *j = ctx;
    size_t r = i / j->parts, k = i % j->parts;
    size_t per = ((j->bytes[r] + j->parts - 1) / j->parts + 63) / 64 * 64, lo = k * per;
    size_t hi = lo + per < j->bytes[r] ? lo + per : j->bytes[r];
    if (lo < hi)
        memcpy(j->dst[r] + lo, j->src[r] + lo, hi - lo);
}

/* Copy up to two regions with the pool's threads. */
static void copy_threads(sts_cl_t *c, int regions, void *dst0, const void *src0, size_t n0, void *dst1,
                         const void *src1, size_t n1)
{
    copy_job_t *j = &c->job;
    j->dst[0] = dst0;
    j->src[0] = src0;
    j->bytes[0] = n0;
    j->dst[1] = dst1;
    j->src[1] = src1;
    j->bytes[1] = regions > 1 ? n1 : 0;
    j->parts = 4 * (size_t)tusk_pool_threads(c->pool);
    tusk_pool_run(c->pool, (size_t)regions * j->parts, copy_part, j);
}

/* Set kernel k's buffer arguments and run it over table tb's tiles. */
static int run_tiles(sts_cl_t *c, int k, int tb, int n, const cl_mem *mems, cl_event *ev, tusk_error_t *err)
{
    int st = tusk_cl_kernels_buffers(c->k, k, mems, (size_t)n, err);
    return st ? st : tusk_cl_kernels_launch(c->k, k, NULL, c->tab[tb].n, c->lsz[k], ev, err);
}

enum { E_UP_MOD, E_UP_IN, E_UP_T1, E_UP_T2, E_DCOUNT, E_DCOLSCAN, E_DSCATTER, E_DRANK, E_LINK, E_HEADS, E_CLUSTERS,
       E_DOWN_C1, E_UP_MOD2, E_UP_T3, E_UP_T4, E_UP_T5, E_CCOUNT, E_CCOLSCAN, E_CSCATTER, E_CRANK, E_HCOUNT,
       E_DOWN_C2, E_UP_MOD3, E_HWRITE, E_DOWN_OUT, E_DOWN_HITS, N_EVENTS };

/* Start table tb afresh. */
static void table_clear(sts_cl_t *c, int tb)
{
    c->tab[tb].n = 0;
}

/* Module m's tiles 0 .. tiles - 1 appended to table tb. */
static int table_add(sts_cl_t *c, int tb, uint32_t m, uint32_t tiles)
{
    table_t *t = &c->tab[tb];
    if (tusk_grow(&t->v, &t->cap, 2 * (t->n + tiles), sizeof *t->v) != 0)
        return -1;
    for (uint32_t j = 0; j < tiles; j++) {
        t->v[2 * (t->n + j)] = m;
        t->v[2 * (t->n + j) + 1] = j;
    }
    t->n += tiles;
    return 0;
}

/* Send table tb (its device buffer made large enough). */
static int table_send(sts_cl_t *c, int tb, cl_event *ev, tusk_error_t *err)
{
    table_t *t = &c->tab[tb];
    int i = table_buf[tb];
    size_t bytes = t->n * 2 * sizeof *t->v;
    int st = droom(c, i, bytes, CL_MEM_READ_ONLY, err);
    if (st)
        return st;
    return tusk_cl_write(c->cl, NULL, c->d[i].mem, CL_FALSE, bytes, t->v, ev, buf_names[i], err);
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
    if (N > UINT32_MAX / 2 || M > UINT32_MAX / 2)
        return tusk_error_set(err, TUSK_ELIMIT, "STS opencl: a batch of %llu digis in %zu modules; at most 2^31 a launch",
                              (unsigned long long)N, M);
    const char *dev = tusk_cl_describe(c->cl);
    cl_command_queue q = tusk_cl_queue(c->cl);
    /* the kernels' channel room */
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
        if (local_bytes(ch, c->wg) > d->local_mem)
            return tusk_error_set(err, TUSK_ELIMIT, "STS on %s: modules of %u strips a side need %zu bytes of local memory",
                                  dev, max_strips, local_bytes(ch, c->wg));
        if ((st = build(c, ch, err)))
            return st;
    }
    if ((st = proom(c, P_MOD, M * sizeof(sts_dev_module_t), err)) || (st = proom(c, P_IN, N * 8, err)) ||
        (st = proom(c, P_COUNTS, M * sizeof(sts_dev_counts_t), err)))
        return st;
    if (tusk_grow(&c->last_ns, &c->cap_last, M, sizeof *c->last_ns) != 0)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory (%zu modules)", M);
    /* the module records and the digi and channel tiles */
    sts_dev_module_t *mods = tusk_cl_pinned_ptr(c->pin[P_MOD]);
    uint64_t first = 0, darea = 0;
    table_clear(c, T_DIGI);
    table_clear(c, T_DCHAN);
    for (size_t i = 0; i < M; i++) {
        sts_module_t m;
        sts_batch_module(b, i, &m);
        sts_dev_module_of(&m, &mods[i]);
        uint32_t C = 2u * m.hdr.strips, tiles = sts_tiles(m.hdr.n_digis, STS_TILE_DIGIS);
        mods[i].first = (uint32_t)first;
        c->last_ns[i] = m.hdr.length_ns ? m.hdr.length_ns - 1 : 0; /* the latest time a digi (and a cluster) can have */
        mods[i].buckets = (c->last_ns[i] >> mods[i].bucket_shift) + 1;
        mods[i].first_dcount = (uint32_t)darea;
        mods[i].first_off = (uint32_t)(darea + (uint64_t)(tiles + 1) * (C + 1));
        first += m.hdr.n_digis;
        darea += (uint64_t)(tiles + 2) * (C + 1);
        if (darea > UINT32_MAX / 2 || table_add(c, T_DIGI, (uint32_t)i, tiles) != 0 ||
            table_add(c, T_DCHAN, (uint32_t)i, sts_tiles(C, STS_TILE_CHANNELS)) != 0)
            return tusk_error_set(err, darea > UINT32_MAX / 2 ? TUSK_ELIMIT : TUSK_ENOMEM,
                                  "STS opencl: no room for the tiles of %zu modules", M);
    }
    size_t n_alloc = N ? N : 1;
    if ((st = droom(c, B_MOD, M * sizeof(sts_dev_module_t), CL_MEM_READ_ONLY, err)) ||
        (st = droom(c, B_PARAMS, sizeof(sts_params_t), CL_MEM_READ_ONLY, err)) ||
        (st = droom(c, B_IN, n_alloc * 8, CL_MEM_READ_ONLY, err)) ||
        (st = droom(c, B_KEYS, n_alloc * 8, CL_MEM_READ_WRITE, err)) ||
        (st = droom(c, B_TMP, n_alloc * 8, CL_MEM_READ_WRITE, err)) ||
        (st = droom(c, B_DAREA, darea * 4, CL_MEM_READ_WRITE, err)) ||
        (st = droom(c, B_CONN, n_alloc * 4, CL_MEM_READ_WRITE, err)) ||
        (st = droom(c, B_THEADS, c->tab[T_DIGI].n * 4, CL_MEM_READ_WRITE, err)) ||
        (st = droom(c, B_CL, n_alloc * sizeof(sts_cluster_t), CL_MEM_READ_WRITE, err)) ||
        (st = droom(c, B_CKEY, n_alloc * 8, CL_MEM_READ_WRITE, err)) ||
        (st = droom(c, B_CSORT, n_alloc * 8, CL_MEM_READ_WRITE, err)) ||
        (st = droom(c, B_COUNTS, M * sizeof(sts_dev_counts_t), CL_MEM_READ_WRITE, err)) ||
        (st = droom(c, B_HCOUNT, n_alloc * 4, CL_MEM_READ_WRITE, err)) ||
        (st = droom(c, B_WSTART, n_alloc * 4, CL_MEM_READ_WRITE, err)))
        return st;
    /* pack: the batch's keys are one array already */
    double t0 = tusk_clock_s();
    sts_module_t m0;
    sts_batch_module(b, 0, &m0);
    uint64_t *packed = tusk_cl_pinned_ptr(c->pin[P_IN]);
    copy_threads(c, 1, packed, m0.digi, N * 8, NULL, NULL, 0);
    c->t.pack = (tusk_clock_s() - t0) * 1e3;

    cl_event ev[N_EVENTS] = {NULL};
    cl_uint delta = c->p.delta;
    sts_dev_counts_t *counts = tusk_cl_pinned_ptr(c->pin[P_COUNTS]);
#define MEM(i) (c->d[i].mem)
    if ((st = tusk_cl_write(c->cl, q, MEM(B_MOD), CL_FALSE, M * sizeof *mods, mods, &ev[E_UP_MOD], "STS modules",
                            err)) ||
        (st = tusk_cl_write(c->cl, q, MEM(B_PARAMS), CL_FALSE, sizeof c->p, &c->p, NULL, "STS settings", err)) ||
        (N && (st = tusk_cl_write(c->cl, q, MEM(B_IN), CL_FALSE, N * 8, packed, &ev[E_UP_IN], "STS digis", err))) ||
        (st = table_send(c, T_DIGI, &ev[E_UP_T1], err)) || (st = table_send(c, T_DCHAN, &ev[E_UP_T2], err)) ||
        (st = tusk_cl_zero(c->cl, q, MEM(B_COUNTS), M * sizeof(sts_dev_counts_t), "STS module counts", err)))
        goto done;
    {
        cl_mem a_dcount[] = {MEM(B_MOD), MEM(B_T_DIGI), MEM(B_IN), MEM(B_DAREA), MEM(B_CONN)};
        cl_mem a_dcol[] = {MEM(B_MOD), MEM(B_T_DCHAN), MEM(B_DAREA)};
        cl_mem a_dscat[] = {MEM(B_MOD), MEM(B_T_DIGI), MEM(B_IN), MEM(B_DAREA), MEM(B_TMP)};
        cl_mem a_drank[] = {MEM(B_MOD), MEM(B_T_DIGI), MEM(B_TMP), MEM(B_DAREA), MEM(B_KEYS)};
        cl_mem a_link[] = {MEM(B_MOD), MEM(B_T_DCHAN), MEM(B_KEYS), MEM(B_DAREA), MEM(B_CONN)};
        cl_mem a_heads[] = {MEM(B_MOD), MEM(B_T_DIGI), MEM(B_CONN), MEM(B_THEADS)};
        cl_mem a_cl[] = {MEM(B_MOD),  MEM(B_T_DIGI), MEM(B_KEYS),   MEM(B_CONN),  MEM(B_THEADS),
                         MEM(B_CL),   MEM(B_CKEY),   MEM(B_COUNTS), MEM(B_PARAMS)};
        if ((st = run_tiles(c, K_DCOUNT, T_DIGI, 5, a_dcount, &ev[E_DCOUNT], err)) ||
            (st = run_tiles(c, K_DCOLSCAN, T_DCHAN, 3, a_dcol, &ev[E_DCOLSCAN], err)) ||
            (st = run_tiles(c, K_DSCATTER, T_DIGI, 5, a_dscat, &ev[E_DSCATTER], err)) ||
            (st = run_tiles(c, K_DRANK, T_DIGI, 5, a_drank, &ev[E_DRANK], err)) ||
            (st = tusk_cl_kernels_arg(c->k, K_LINK, 5, sizeof delta, &delta, err)) ||
            (st = run_tiles(c, K_LINK, T_DCHAN, 5, a_link, &ev[E_LINK], err)) ||
            (st = run_tiles(c, K_HEADS, T_DIGI, 4, a_heads, &ev[E_HEADS], err)) ||
            (st = run_tiles(c, K_CLUSTERS, T_DIGI, 9, a_cl, &ev[E_CLUSTERS], err)) ||
            (st = tusk_cl_read(c->cl, q, MEM(B_COUNTS), CL_TRUE, M * sizeof *counts, counts, &ev[E_DOWN_C1],
                               "STS module counts", err)))
            goto done;
    }
    /* the cluster, bucket and front tiles */
    const uint32_t *last_ns = c->last_ns;
    uint64_t carea = 0, n_cl = 0, n_front = 0;
    table_clear(c, T_CL);
    table_clear(c, T_CCHAN);
    table_clear(c, T_FRONT);
    for (size_t i = 0; i < M; i++) {
        if (counts[i].n_front > counts[i].n_clusters || counts[i].n_clusters > mods[i].n) {
            st = tusk_error_set(err, TUSK_ECL, "STS on %s: module %zu came back with %u clusters (%u front) of %u digis",
                                dev, i, (unsigned)counts[i].n_clusters, (unsigned)counts[i].n_front,
                                (unsigned)mods[i].n);
            goto done;
        }
        /* time buckets: about STS_BUCKET_FILL clusters each on the fuller side */
        uint32_t side = counts[i].n_front > counts[i].n_clusters - counts[i].n_front
                            ? counts[i].n_front
                            : counts[i].n_clusters - counts[i].n_front;
        uint32_t want = side / STS_BUCKET_FILL > 1 ? side / STS_BUCKET_FILL : 1;
        while (mods[i].buckets > want && mods[i].bucket_shift < 31) {
            mods[i].bucket_shift++;
            mods[i].buckets = (last_ns[i] >> mods[i].bucket_shift) + 1;
        }
        uint32_t B = 2 * mods[i].buckets, tiles = sts_tiles(counts[i].n_clusters, STS_TILE_CLUSTERS);
        mods[i].first_ccount = (uint32_t)carea;
        carea += (uint64_t)(tiles + 2) * (B + 1);
        n_cl += counts[i].n_clusters;
        n_front += counts[i].n_front;
        if (carea > UINT32_MAX / 2 || table_add(c, T_CL, (uint32_t)i, tiles) != 0 ||
            table_add(c, T_CCHAN, (uint32_t)i, sts_tiles(B, STS_TILE_CHANNELS)) != 0 ||
            table_add(c, T_FRONT, (uint32_t)i, sts_tiles(counts[i].n_front, STS_TILE_FRONTS)) != 0) {
            st = tusk_error_set(err, carea > UINT32_MAX / 2 ? TUSK_ELIMIT : TUSK_ENOMEM,
                                "STS opencl: no room for the tiles of %zu modules", M);
            goto done;
        }
    }
    if ((st = droom(c, B_CAREA, carea * 4, CL_MEM_READ_WRITE, err)) ||
        (st = droom(c, B_THITS, c->tab[T_FRONT].n * 4, CL_MEM_READ_WRITE, err)) ||
        (st = tusk_cl_write(c->cl, q, MEM(B_MOD), CL_FALSE, M * sizeof *mods, mods, &ev[E_UP_MOD2], "STS modules",
                            err)) ||
        (st = table_send(c, T_CL, &ev[E_UP_T3], err)) || (st = table_send(c, T_CCHAN, &ev[E_UP_T4], err)) ||
        (st = table_send(c, T_FRONT, &ev[E_UP_T5], err)))
        goto done;
    {
        cl_mem a_ccount[] = {MEM(B_MOD), MEM(B_T_CL), MEM(B_CKEY), MEM(B_COUNTS), MEM(B_CAREA)};
        cl_mem a_ccol[] = {MEM(B_MOD), MEM(B_T_CCHAN), MEM(B_COUNTS), MEM(B_CAREA)};
        cl_mem a_cscat[] = {MEM(B_MOD), MEM(B_T_CL), MEM(B_CKEY), MEM(B_COUNTS), MEM(B_CAREA), MEM(B_TMP)};
        cl_mem a_crank[] = {MEM(B_MOD), MEM(B_T_CL), MEM(B_TMP), MEM(B_COUNTS), MEM(B_CAREA), MEM(B_CSORT)};
        cl_mem a_hcount[] = {MEM(B_MOD),    MEM(B_T_FRONT), MEM(B_CL),    MEM(B_CSORT), MEM(B_COUNTS),
                             MEM(B_HCOUNT), MEM(B_WSTART),  MEM(B_THITS), MEM(B_PARAMS)};
        if ((st = run_tiles(c, K_CCOUNT, T_CL, 5, a_ccount, &ev[E_CCOUNT], err)) ||
            (st = run_tiles(c, K_CCOLSCAN, T_CCHAN, 4, a_ccol, &ev[E_CCOLSCAN], err)) ||
            (st = run_tiles(c, K_CSCATTER, T_CL, 6, a_cscat, &ev[E_CSCATTER], err)) ||
            (st = run_tiles(c, K_CRANK, T_CL, 6, a_crank, &ev[E_CRANK], err)) ||
            (st = run_tiles(c, K_HCOUNT, T_FRONT, 9, a_hcount, &ev[E_HCOUNT], err)) ||
            (st = tusk_cl_read(c->cl, q, MEM(B_COUNTS), CL_TRUE, M * sizeof *counts, counts, &ev[E_DOWN_C2],
                               "STS module counts", err)))
            goto done;
    }
    /* where each module's clusters and hits go */
    uint64_t n_hits = 0;
    n_cl = 0;
    for (size_t i = 0; i < M; i++) {
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
        cl_mem a_hwrite[] = {MEM(B_MOD),    MEM(B_T_FRONT), MEM(B_CL),    MEM(B_CSORT), MEM(B_COUNTS), MEM(B_HCOUNT),
                             MEM(B_WSTART), MEM(B_THITS),   MEM(B_HITS),  MEM(B_OUT),   MEM(B_PARAMS)};
        if ((st = tusk_cl_write(c->cl, q, MEM(B_MOD), CL_FALSE, M * sizeof *mods, mods, &ev[E_UP_MOD3], "STS modules",
                                err)) ||
            (st = run_tiles(c, K_HWRITE, T_FRONT, 11, a_hwrite, &ev[E_HWRITE], err)) ||
            (n_cl && (st = tusk_cl_read(c->cl, q, MEM(B_OUT), CL_FALSE, n_cl * sizeof(sts_cluster_t),
                                        tusk_cl_pinned_ptr(c->pin[P_OUT]), &ev[E_DOWN_OUT], "STS clusters", err))) ||
            (n_hits && (st = tusk_cl_read(c->cl, q, MEM(B_HITS), CL_FALSE, n_hits * sizeof(sts_hit_t),
                                          tusk_cl_pinned_ptr(c->pin[P_HITS]), &ev[E_DOWN_HITS], "STS hits", err))) ||
            (st = tusk_cl_read(c->cl, q, MEM(B_COUNTS), CL_TRUE, M * sizeof *counts, counts, NULL, "STS module counts",
                               err)))
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
    copy_threads(c, 2, ch->c, tusk_cl_pinned_ptr(c->pin[P_OUT]), n_cl * sizeof *ch->c, ch->h,
                 tusk_cl_pinned_ptr(c->pin[P_HITS]), n_hits * sizeof *ch->h);
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
#define MS(first, last) tusk_cl_events_ms(&ev[first], (size_t)(last - first + 1)) /* events first .. last */
    c->t.upload = MS(E_UP_MOD, E_UP_T2) + MS(E_UP_MOD2, E_UP_T5) + MS(E_UP_MOD3, E_UP_MOD3);
    c->t.sort_digis = MS(E_DCOUNT, E_DRANK);
    c->t.find_clusters = MS(E_LINK, E_LINK);
    c->t.compute_clusters = MS(E_HEADS, E_CLUSTERS);
    c->t.sort_clusters = MS(E_CCOUNT, E_CRANK);
    c->t.find_hits = MS(E_HCOUNT, E_HCOUNT) + MS(E_HWRITE, E_HWRITE);
    c->t.download = MS(E_DOWN_C1, E_DOWN_C1) + MS(E_DOWN_C2, E_DOWN_C2) + MS(E_DOWN_OUT, E_DOWN_HITS);
#undef MS
    size_t tables = 0;
    for (int i = 0; i < N_TABLES; i++)
        tables += c->tab[i].n * 8;
    c->t.bytes_up = N * 8 + 3 * M * sizeof *mods + tables;
    c->t.bytes_down = n_cl * sizeof(sts_cluster_t) + n_hits * sizeof(sts_hit_t) + 3 * M * sizeof *counts;
    /* The kernels' least traffic (sts/README.md, "Memory traffic"): what each must read and write once. */
    uint64_t nb = n_cl - n_front;
    c->t.bytes_sort_digis = N * (12 + 16 + 24) + darea * 4 * 5;
    c->t.bytes_find_clusters = N * 12;
    c->t.bytes_compute_clusters = N * 16 + n_cl * 40;
    c->t.bytes_sort_clusters = n_cl * (8 + 16 + 24) + carea * 4 * 5;
    c->t.bytes_hits = 2 * (n_front * 48 + nb * 40) + n_hits * 40 + n_cl * 64;
    c->t.kernel_bytes = c->t.bytes_sort_digis + c->t.bytes_find_clusters + c->t.bytes_compute_clusters +
                        c->t.bytes_sort_clusters + c->t.bytes_hits;
    c->t.groups_digis = c->tab[T_DIGI].n;
    c->t.groups_clusters = c->tab[T_CL].n;
    c->t.groups_hits = c->tab[T_FRONT].n;
    c->t.total = (tusk_clock_s() - t_start) * 1e3;
done:
    return tusk_cl_run_end(q, st, ev, N_EVENTS);
}

int sts_cl_bandwidth(sts_cl_t *c, size_t bytes, unsigned repeat, double *gb_s, tusk_error_t *err)
{
    return tusk_cl_kernels_bandwidth(c->k, K_COPY, c->lsz[K_COPY], bytes, repeat, "STS", gb_s, err);
}
