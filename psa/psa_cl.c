/* psa_cl.c - the OpenCL backend of the PSA grid search (tusk/psa_cl.h;
 * kernels in kernels/psa.cl; the design in README.md, "OpenCL backend").
 *
 * psa_cl_search, for a batch:
 *   1. checks it (nothing is changed when it is refused);
 *   2. sorts its problems by hit segment (counting sort; perm[k] is the
 *      batch index of sorted problem k) and cuts the sorted list into
 *      chunks;
 *   3. per chunk: packs the problems' info, mask-channel traces and the
 *      work list (one entry per work-group: segment, tile of points, first
 *      problem, problem count) into pinned host memory, enqueues their
 *      uploads on the upload queue (non-blocking, into buffer set k % 2,
 *      after chunk k - 2's kernels are done with it), then on the compute
 *      queue the search kernel (after the uploads) and the reduction over
 *      tiles, which writes (best, FoM) into the batch-wide output buffer;
 *      chunk k + 1 is packed and uploaded while chunk k's kernels run;
 *   4. reads the output buffer with one blocking read and scatters it back
 *      through the permutation.
 * The basis is uploaded once by psa_cl_new: one buffer holding every
 * segment's block, or, when that exceeds the device's largest allocation,
 * several buffers of consecutive segments (a search launch per buffer). */
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "psa_private.h"
#include "psa_shared.h"
#include "tusk/cl.h"
#include "tusk/psa_cl.h"

/* The kernels' source, tusk_psa_kernel_source (psa_private.h): made by
 * tools/embed-text.sh from opencl/gpu_common.h, psa_shared.h and
 * kernels/psa.cl. */

#define WG_DEFAULT 128          /* points (work-items) per work-group */
#define PG_DEFAULT 8            /* problems per work-group (PSA_PG_MAX at most) */
#define CHUNK_MIN 2048          /* problems per chunk: at least ... */
#define CHUNK_MAX 16384         /* ... at most, aiming at CHUNK_PARTS chunks */
#define CHUNK_PARTS 4
#define CHUNK_FLOATS ((size_t)1 << 24) /* trace floats per chunk, at most (64 MiB) */
#define REDUCE_ROUND 64
#define PSA_CL_FLIGHTS PSA_JOBS_IN_FLIGHT /* batches searched at once (psa_cl_submit) */
/* The power function's check: |d|^p for |d| from POW_CHECK_LO to
 * POW_CHECK_HI (log-spaced) and 0, each within POW_TERM_TOLERANCE
 * (relative) of the exact value, or the search falls back to powr. A FoM's
 * relative error is at most its worst term's plus the float sum's. */
#define POW_CHECK_N 4096
#define POW_CHECK_LO 1e-6
#define POW_CHECK_HI 16.0
#define POW_TERM_TOLERANCE 2e-6

/* Indexed by the PSA_POW_* codes (psa_shared.h). */
static const char *const pow_names[PSA_POW_KINDS] = {
    [PSA_POW_POWR] = "powr", [PSA_POW_NATIVE] = "native_powr", [PSA_POW_SQUARE] = "d*d (p = 2)",
    [PSA_POW_ABS] = "fabs (p = 1)", [PSA_POW_POLY] = "polynomial pow"};
/* The kernel's 64-bit channel mask holds every channel. */
_Static_assert(PSA_CHANNELS <= 64, "a problem's channels fit psa_dev_problem_t's mask");

typedef struct basis_part {
    cl_mem basis;               /* the blocks of segments first .. last */
    cl_mem offsets;             /* ulong[PSA_SEGMENTS]: block starts in basis (floats) */
    unsigned first, last;
} basis_part_t;

typedef struct buffer_set {
    cl_mem info, trace, work, part;
    size_t info_cap, trace_cap, work_cap, part_cap; /* in elements */
} buffer_set_t;

typedef struct chunk {
    size_t begin, end;          /* sorted problems */
    size_t floats, groups;      /* trace floats, work-groups */
    size_t trace_at, work_at;   /* in the staging area: floats, work entries before this chunk's */
} chunk_t;

typedef struct event_list {
    cl_event *ev;
    size_t n, cap;
} event_list_t;

/* A job's later rounds of residual subtraction on the device (res_begin,
 * res_submit): its layout in the staging area (byte offsets: crystals,
 * hits, hits' traces and each problem's place in the sorted lists, the
 * first in_bytes of it copied to `in`; then, for the host, the problems
 * and the hits by kind), the problem info and work lists (kind 0: each
 * crystal's strongest hit, kind 1: its others), and the flight's own
 * device buffers. */
typedef struct res_flight {
    bool on;
    unsigned rounds;            /* the job's: rounds 1 .. rounds - 1 here */
    size_t records, hits, per, groups_max;
    size_t off_rec, off_hit, off_trace, off_slot, in_bytes, off_prob, off_kind, off_info, off_work;
    uint64_t searched;          /* problems over all the rounds */
    cl_mem in, info, work, trace, part;
    size_t in_cap, info_cap, work_cap, trace_cap, part_cap;
} res_flight_t;

/* A batch being searched, from psa_cl_submit to psa_cl_collect: its plan,
 * its staging area, its commands' events and its results. */
typedef struct flight {
    psa_batch_t *batch;         /* NULL: the flight is free */
    size_t n, nchunks;
    uint32_t *perm;             /* perm[k]: the batch index of sorted problem k */
    psa_dev_result_t *result;   /* per sorted problem */
    size_t perm_cap, result_cap;
    chunk_t *chunks;
    size_t chunks_cap;
    event_list_t up_ev, k_ev;   /* uploads; kernels */
    cl_event read;              /* the results' download */
    cl_mem out;                 /* psa_dev_result_t per sorted problem */
    size_t out_cap;
    tusk_cl_pinned_t *stage;    /* the packed problems, pinned */
    res_flight_t res;           /* residual's later rounds (res.on), instead of a batch's search */
    bool enqueued;              /* its commands enqueued (or failed: enq_status) by the submitter */
    int enq_status;
    tusk_error_t enq_err;
} flight_t;

struct psa_cl {
    const psa_engine_t *e;
    tusk_cl_t *cl;
    cl_command_queue upq;       /* uploads; the compute queue is tusk_cl_queue */
    cl_program program;
    cl_kernel search, reduce;
    cl_kernel res_round;        /* residual's later rounds (NULL: made on the host) */
    cl_mem core0, edge, pt_at;  /* for them: every point's core signal as the basis has it, its leading edge,
                                   each segment's first point in both */
    bool res_begun;             /* psa_cl_res_begin made room in the next flight */
    /* The submitter: a thread of its own plans, packs and enqueues each
     * flight's commands, in the order they were submitted, so that the
     * caller's thread goes on at once (its OpenCL calls cost 10 - 15 us
     * each on an H200's driver); psa_cl_collect waits for a flight's
     * enqueueing before its results. Started by the first submission;
     * without it (pthread_create failed) the caller's thread enqueues. */
    pthread_t worker;
    bool worker_on, worker_failed, stop, broken;
    pthread_mutex_t mu;
    pthread_cond_t cv_task, cv_done;
    bool sync_made;             /* mu and the conditions made */
    unsigned fifo[PSA_CL_FLIGHTS]; /* the flights handed over, not enqueued yet: queued of them from fifo_head */
    unsigned fifo_head, queued;
    uint64_t launched;          /* kernels enqueued by the flight being enqueued (the enqueuer's own) */
    bool in_caller;             /* the caller's thread enqueues (hand_over's `here`) */
    unsigned wg, pg, pow;
    double pow_error;           /* the power function's largest relative error, as checked */
    unsigned samples;
    unsigned tiles_max;         /* tiles of the largest segment: the partials' stride */
    basis_part_t part[PSA_SEGMENTS];
    unsigned nparts;
    unsigned seg_part[PSA_SEGMENTS];
    cl_mem seg_n;               /* uint[PSA_SEGMENTS] */
    /* The chunks' device buffers: chunk after chunk, of every batch in
     * flight, takes the next set; its uploads wait for the reduction of
     * the set's last chunk (set_free, retained). */
    buffer_set_t set[2];
    cl_event set_free[2];
    unsigned next_set;
    size_t chunk_override;      /* $TUSK_PSA_CL_CHUNK, 0: automatic */
    size_t part_limit;          /* bytes a basis buffer: the largest allocation, or $TUSK_PSA_CL_PART_BYTES */
    /* Batches in flight: `flying` of them, the oldest at `head`. */
    flight_t flight[PSA_CL_FLIGHTS];
    unsigned head, flying;
    psa_cl_stats_t stats;
    char describe[3 * TUSK_CL_TEXT_MAX + 160];
};

/* ---- small helpers ---------------------------------------------------------- */

static size_t floor_pow2(size_t n)
{
    size_t p = 1;
    while (p <= n / 2)
        p *= 2;
    return p;
}

static int env_unsigned(const char *name, unsigned long lo, unsigned long hi, unsigned long *out, tusk_error_t *err)
{
    const char *v = getenv(name);
    *out = 0;
    if (!v || !*v)
        return TUSK_OK;
    char *end;
    unsigned long x = strtoul(v, &end, 10);
    if (*end || x < lo || x > hi || v[0] == '-')
        return tusk_error_set(err, TUSK_EPARAM, "$%s = %s: must be a whole number from %lu to %lu", name, v, lo, hi);
    *out = x;
    return TUSK_OK;
}

static int grow_array(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap : 16;
    while (c < need)
        c *= 2;
    void *q = realloc(*p, c * elem);
    if (!q)
        return -1;
    *p = q;
    *cap = c;
    return 0;
}

static int events_push(event_list_t *l, cl_event ev)
{
    if (grow_array((void **)&l->ev, &l->cap, l->n + 1, sizeof *l->ev) != 0)
        return -1;
    l->ev[l->n++] = ev;
    return 0;
}

static void events_release(event_list_t *l)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->ev[i])
            clReleaseEvent(l->ev[i]);
    l->n = 0;
}

/* Total START..END of the events (all complete), in ms. */
static int events_ms(psa_cl_t *c, const event_list_t *l, const char *what, double *ms, tusk_error_t *err)
{
    uint64_t ns = 0;
    for (size_t i = 0; i < l->n; i++) {
        cl_ulong a = 0, b = 0;
        int st = tusk_cl_check(clGetEventProfilingInfo(l->ev[i], CL_PROFILING_COMMAND_START, sizeof a, &a, NULL),
                               err, "clGetEventProfilingInfo(%s, START) on %s", what, tusk_cl_describe(c->cl));
        if (!st)
            st = tusk_cl_check(clGetEventProfilingInfo(l->ev[i], CL_PROFILING_COMMAND_END, sizeof b, &b, NULL), err,
                               "clGetEventProfilingInfo(%s, END) on %s", what, tusk_cl_describe(c->cl));
        if (st)
            return st;
        ns += b > a ? (uint64_t)(b - a) : 0;
    }
    *ms += (double)ns * 1e-6;
    return TUSK_OK;
}

static int set_arg(psa_cl_t *c, cl_kernel k, const char *kname, cl_uint index, size_t size, const void *value,
                   tusk_error_t *err)
{
    return tusk_cl_check(clSetKernelArg(k, index, size, value), err, "clSetKernelArg(%s, %u, %zu bytes) on %s",
                         kname, (unsigned)index, size, tusk_cl_describe(c->cl));
}

/* Make *mem hold at least `need` elements of `elem` bytes (content lost).
 * Only while the device is idle. */
static int ensure_buffer(psa_cl_t *c, cl_mem *mem, size_t *cap, size_t need, size_t elem, cl_mem_flags flags,
                         const char *what, tusk_error_t *err)
{
    if (need == 0)
        need = 1;
    if (*mem && *cap >= need)
        return TUSK_OK;
    size_t n = need + need / 4; /* some room for the next, larger batch */
    tusk_cl_buffer_release(c->cl, mem);
    *cap = 0;
    int st = tusk_cl_buffer_new(c->cl, what, flags, n * elem, NULL, mem, err);
    if (st == TUSK_ELIMIT && n > need) { /* the room did not fit: exactly what is needed */
        n = need;
        st = tusk_cl_buffer_new(c->cl, what, flags, n * elem, NULL, mem, err);
    }
    if (st == TUSK_OK)
        *cap = n;
    return st;
}

/* ---- construction ------------------------------------------------------------ */

static void unbuild(psa_cl_t *c)
{
    if (c->search)
        clReleaseKernel(c->search);
    if (c->reduce)
        clReleaseKernel(c->reduce);
    if (c->res_round)
        clReleaseKernel(c->res_round);
    c->res_round = NULL;
    if (c->program)
        clReleaseProgram(c->program);
    c->search = c->reduce = NULL;
    c->program = NULL;
}

static int build(psa_cl_t *c, tusk_error_t *err)
{
    const tusk_cl_device_info_t *dev = tusk_cl_device(c->cl);
    for (;;) {
        char opt[512] = "", val[64];
        int st;
        float p = (float)c->e->cfg.p;
        snprintf(val, sizeof val, "%af", (double)p);
        char s_[16], wg_[16], pg_[16], pw_[16];
        snprintf(s_, sizeof s_, "%u", c->samples);
        snprintf(wg_, sizeof wg_, "%u", c->wg);
        snprintf(pg_, sizeof pg_, "%u", c->pg);
        snprintf(pw_, sizeof pw_, "%u", c->pow);
        if ((st = tusk_cl_define(opt, sizeof opt, "PSA_S", s_, err)) ||
            (st = tusk_cl_define(opt, sizeof opt, "PSA_WG", wg_, err)) ||
            (st = tusk_cl_define(opt, sizeof opt, "PSA_PG", pg_, err)) ||
            (st = tusk_cl_define(opt, sizeof opt, "PSA_P", val, err)) ||
            (st = tusk_cl_define(opt, sizeof opt, "PSA_POW", pw_, err)))
            return st;
        if ((st = tusk_cl_program_build(c->cl, "psa.cl", tusk_psa_kernel_source,
                                        (size_t)tusk_psa_kernel_source_size, opt, &c->program, err)) ||
            (st = tusk_cl_kernel_new(c->cl, c->program, "psa_search", &c->search, err)) ||
            (st = tusk_cl_kernel_new(c->cl, c->program, "psa_reduce", &c->reduce, err)))
            return st;
        size_t kmax = 0;
        cl_ulong lmem = 0;
        if ((st = tusk_cl_check(clGetKernelWorkGroupInfo(c->search, dev->device, CL_KERNEL_WORK_GROUP_SIZE,
                                                         sizeof kmax, &kmax, NULL),
                                err, "clGetKernelWorkGroupInfo(psa_search, CL_KERNEL_WORK_GROUP_SIZE) on %s",
                                tusk_cl_describe(c->cl))) ||
            (st = tusk_cl_check(clGetKernelWorkGroupInfo(c->search, dev->device, CL_KERNEL_LOCAL_MEM_SIZE,
                                                         sizeof lmem, &lmem, NULL),
                                err, "clGetKernelWorkGroupInfo(psa_search, CL_KERNEL_LOCAL_MEM_SIZE) on %s",
                                tusk_cl_describe(c->cl))))
            return st;
        if (kmax >= c->wg && lmem <= dev->local_mem)
            return TUSK_OK;
        /* The kernel cannot run that wide (registers), or its local memory
         * does not fit: narrower, or fewer problems a group. */
        unbuild(c);
        if (kmax < c->wg && kmax >= 1)
            c->wg = (unsigned)floor_pow2(kmax);
        else if (lmem > dev->local_mem && c->pg > 1)
            c->pg /= 2;
        else
            return tusk_error_set(err, TUSK_ELIMIT,
                                  "psa_search on %s: %zu work-items a group at most and %llu bytes of local memory "
                                  "needed of %llu",
                                  tusk_cl_describe(c->cl), kmax, (unsigned long long)lmem,
                                  (unsigned long long)dev->local_mem);
    }
}

/* The basis into device buffers: as many segments a buffer as the largest
 * allocation (part_limit) takes. */
static int upload_basis(psa_cl_t *c, tusk_error_t *err)
{
    const psa_engine_t *e = c->e;
    const size_t per_point = (size_t)PSA_CHANNELS * c->samples * sizeof(float);
    cl_command_queue q = tusk_cl_queue(c->cl);
    cl_uint n[PSA_SEGMENTS];
    size_t largest = 0;
    for (unsigned s = 0; s < PSA_SEGMENTS; s++) {
        n[s] = (cl_uint)e->npoints[s];
        largest = e->npoints[s] > largest ? e->npoints[s] : largest;
    }
    c->tiles_max = (unsigned)((largest + c->wg - 1) / c->wg);
    if (largest > UINT32_MAX / PSA_CHANNELS / PSA_MAX_SAMPLES)
        return tusk_error_set(err, TUSK_ELIMIT, "a segment of %zu basis points: too many for the kernel's indexes",
                              largest);
    int st = tusk_cl_buffer_new(c->cl, "PSA points per segment", CL_MEM_READ_ONLY, sizeof n, NULL, &c->seg_n, err);
    if (st)
        return st;
    st = tusk_cl_check(clEnqueueWriteBuffer(q, c->seg_n, CL_TRUE, 0, sizeof n, n, 0, NULL, NULL), err,
                       "clEnqueueWriteBuffer(PSA points per segment) on %s", tusk_cl_describe(c->cl));
    if (st)
        return st;
    /* Parts of consecutive segments. */
    unsigned s = 0;
    c->nparts = 0;
    while (s < PSA_SEGMENTS) {
        basis_part_t *p = &c->part[c->nparts];
        size_t bytes = 0;
        p->first = s;
        while (s < PSA_SEGMENTS) {
            size_t b = e->npoints[s] * per_point;
            if (bytes > 0 && bytes + b > c->part_limit)
                break;
            bytes += b;
            c->seg_part[s] = c->nparts;
            s++;
        }
        p->last = s - 1;
        c->nparts++;
        char what[96];
        snprintf(what, sizeof what, "PSA basis, segments %u to %u", p->first, p->last);
        cl_ulong off[PSA_SEGMENTS] = {0};
        size_t at = 0;
        for (unsigned t = p->first; t <= p->last; t++) {
            off[t] = at;
            at += e->npoints[t] * (size_t)PSA_CHANNELS * c->samples;
        }
        if ((st = tusk_cl_buffer_new(c->cl, what, CL_MEM_READ_ONLY, bytes ? bytes : sizeof(float), NULL, &p->basis,
                                     err)) ||
            (st = tusk_cl_buffer_new(c->cl, "PSA basis offsets", CL_MEM_READ_ONLY, sizeof off, NULL, &p->offsets,
                                     err)))
            return st;
        st = tusk_cl_check(clEnqueueWriteBuffer(q, p->offsets, CL_TRUE, 0, sizeof off, off, 0, NULL, NULL), err,
                           "clEnqueueWriteBuffer(PSA basis offsets) on %s", tusk_cl_describe(c->cl));
        for (unsigned t = p->first; t <= p->last && !st; t++)
            if (e->npoints[t])
                st = tusk_cl_check(clEnqueueWriteBuffer(q, p->basis, CL_TRUE, off[t] * sizeof(float),
                                                        e->npoints[t] * per_point, e->block[t], 0, NULL, NULL),
                                   err, "clEnqueueWriteBuffer(PSA basis of segment %u, %zu bytes) on %s", t,
                                   e->npoints[t] * per_point, tusk_cl_describe(c->cl));
        if (st)
            return st;
    }
    return TUSK_OK;
}

/* Run psa_pow_check on values spanning what the search meets; the largest
 * relative error against pow in double precision into c->pow_error. */
static int check_pow(psa_cl_t *c, tusk_error_t *err)
{
    const cl_uint n = POW_CHECK_N;
    const double p = (double)(float)c->e->cfg.p;
    float *x = malloc(2 * n * sizeof *x);
    if (!x)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    float *y = x + n;
    x[0] = 0.0f;
    for (cl_uint i = 1; i < n; i++) {
        double v = POW_CHECK_LO * pow(POW_CHECK_HI / POW_CHECK_LO, (double)(i - 1) / (n - 2));
        x[i] = (float)(i % 2 ? v : -v);
    }
    cl_kernel k = NULL;
    cl_mem mx = NULL, my = NULL;
    const char *dev = tusk_cl_describe(c->cl);
    cl_command_queue q = tusk_cl_queue(c->cl);
    const size_t global = n;
    int st;
    if (!(st = tusk_cl_kernel_new(c->cl, c->program, "psa_pow_check", &k, err)) &&
        !(st = tusk_cl_buffer_new(c->cl, "PSA power check in", CL_MEM_READ_ONLY, n * sizeof *x, NULL, &mx, err)) &&
        !(st = tusk_cl_buffer_new(c->cl, "PSA power check out", CL_MEM_WRITE_ONLY, n * sizeof *y, NULL, &my, err)) &&
        !(st = tusk_cl_check(clEnqueueWriteBuffer(q, mx, CL_TRUE, 0, n * sizeof *x, x, 0, NULL, NULL), err,
                             "clEnqueueWriteBuffer(PSA power check) on %s", dev)) &&
        !(st = set_arg(c, k, "psa_pow_check", 0, sizeof mx, &mx, err)) &&
        !(st = set_arg(c, k, "psa_pow_check", 1, sizeof my, &my, err)) &&
        !(st = set_arg(c, k, "psa_pow_check", 2, sizeof n, &n, err)) &&
        !(st = tusk_cl_run(c->cl, k, 1, &global, NULL, NULL, err)))
        st = tusk_cl_check(clEnqueueReadBuffer(q, my, CL_TRUE, 0, n * sizeof *y, y, 0, NULL, NULL), err,
                           "clEnqueueReadBuffer(PSA power check) on %s", dev);
    if (!st) {
        double worst = y[0] == 0.0f ? 0.0 : INFINITY;
        for (cl_uint i = 1; i < n; i++) {
            double exact = pow(fabs((double)x[i]), p);
            double rel = fabs((double)y[i] - exact) / exact;
            if (!(rel <= worst)) /* NaN too */
                worst = isnan(rel) ? INFINITY : rel;
        }
        c->pow_error = worst;
    }
    tusk_cl_buffer_release(c->cl, &mx);
    tusk_cl_buffer_release(c->cl, &my);
    if (k)
        clReleaseKernel(k);
    free(x);
    return st;
}

/* Residual subtraction's later rounds on the device (psa_cl_res_submit),
 * with residual = yes, where the kernels were built (the device has double
 * precision), the basis lies in one buffer and `want` ($TUSK_PSA_CL_RESIDUAL
 * is not "host"): the kernels, and every basis point's core signal as the
 * basis has it (from the interaction) and leading edge (the engine's), for
 * the interaction time and the refinement's T0. Otherwise nothing: the
 * host makes those rounds' problems and the device searches them. */
static int res_setup(psa_cl_t *c, bool want, tusk_error_t *err)
{
    const psa_engine_t *e = c->e;
    const char *dev = tusk_cl_describe(c->cl);
    if (!want || !e->cfg.residual || c->nparts != 1)
        return TUSK_OK;
    cl_int rc;
    int st;
    c->res_round = clCreateKernel(c->program, "psa_res_round", &rc);
    if (rc == CL_INVALID_KERNEL_NAME) { /* built without double precision */
        c->res_round = NULL;
        return TUSK_OK;
    }
    if ((st = tusk_cl_check(rc, err, "clCreateKernel(psa_res_round) on %s", dev)))
        return st;
    const unsigned S = c->samples;
    cl_uint at[PSA_SEGMENTS];
    size_t total = 0;
    for (unsigned s = 0; s < PSA_SEGMENTS; s++) {
        at[s] = (cl_uint)total;
        total += e->npoints[s];
    }
    if (total > UINT32_MAX / PSA_MAX_SAMPLES)
        return tusk_error_set(err, TUSK_ELIMIT, "%zu basis points: too many for the residual kernels' indexes", total);
    float *core = malloc((total ? total : 1) * (S + 1) * sizeof *core);
    if (!core)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory (the basis' core signals, %zu points)", total);
    float *edge = core + total * S;
    for (unsigned s = 0; s < PSA_SEGMENTS; s++)
        for (size_t q = 0; q < e->npoints[s]; q++) {
            det_basis_trace(e->basis, s, q, PSA_CORE, core + (at[s] + q) * S);
            edge[at[s] + q] = e->edge[s][q];
        }
    cl_command_queue q = tusk_cl_queue(c->cl);
    const size_t nc = total ? total * S : 1, ne = total ? total : 1;
    if (!(st = tusk_cl_buffer_new(c->cl, "PSA core signals", CL_MEM_READ_ONLY, nc * sizeof *core, NULL, &c->core0,
                                  err)) &&
        !(st = tusk_cl_buffer_new(c->cl, "PSA leading edges", CL_MEM_READ_ONLY, ne * sizeof *edge, NULL, &c->edge,
                                  err)) &&
        !(st = tusk_cl_buffer_new(c->cl, "PSA first point of each segment", CL_MEM_READ_ONLY, sizeof at, NULL,
                                  &c->pt_at, err)) &&
        !(st = tusk_cl_check(clEnqueueWriteBuffer(q, c->core0, CL_TRUE, 0, total * S * sizeof *core, core, 0, NULL,
                                                  NULL),
                             err, "clEnqueueWriteBuffer(PSA core signals, %zu points) on %s", total, dev)) &&
        !(st = tusk_cl_check(clEnqueueWriteBuffer(q, c->edge, CL_TRUE, 0, total * sizeof *edge, edge, 0, NULL, NULL),
                             err, "clEnqueueWriteBuffer(PSA leading edges) on %s", dev)))
        st = tusk_cl_check(clEnqueueWriteBuffer(q, c->pt_at, CL_TRUE, 0, sizeof at, at, 0, NULL, NULL), err,
                           "clEnqueueWriteBuffer(PSA first points) on %s", dev);
    free(core);
    return st;
}

int psa_cl_new(psa_cl_t **out, const psa_engine_t *engine, const char *setting, unsigned instance, tusk_error_t *err)
{
    *out = NULL;
    if (!engine)
        return tusk_error_set(err, TUSK_EINVAL, "psa_cl_new: no engine");
    unsigned long pow_env = 0, wg_env, pg_env, chunk_env, part_env;
    const char *pw = getenv("TUSK_PSA_CL_POW");
    if (pw && *pw) {
        if (strcmp(pw, "powr") == 0)
            pow_env = 1 + PSA_POW_POWR;
        else if (strcmp(pw, "native") == 0)
            pow_env = 1 + PSA_POW_NATIVE;
        else if (strcmp(pw, "poly") == 0)
            pow_env = 1 + PSA_POW_POLY;
        else
            return tusk_error_set(err, TUSK_EPARAM, "$TUSK_PSA_CL_POW = %s: must be powr, native or poly", pw);
    }
    int st;
    if ((st = env_unsigned("TUSK_PSA_CL_WG", 1, 1024, &wg_env, err)) ||
        (st = env_unsigned("TUSK_PSA_CL_PG", 1, PSA_PG_MAX, &pg_env, err)) ||
        (st = env_unsigned("TUSK_PSA_CL_CHUNK", 1, 1u << 24, &chunk_env, err)) ||
        (st = env_unsigned("TUSK_PSA_CL_PART_BYTES", 1, ULONG_MAX, &part_env, err)))
        return st;
    const char *res_env = getenv("TUSK_PSA_CL_RESIDUAL");
    if (res_env && *res_env && strcmp(res_env, "device") != 0 && strcmp(res_env, "host") != 0)
        return tusk_error_set(err, TUSK_EPARAM, "$TUSK_PSA_CL_RESIDUAL = %s: must be device or host", res_env);
    const bool res_device = !(res_env && strcmp(res_env, "host") == 0);
    psa_cl_t *c = calloc(1, sizeof *c);
    if (!c)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    c->e = engine;
    c->samples = engine->samples;
    c->chunk_override = chunk_env;
    if (pthread_mutex_init(&c->mu, NULL) == 0) {
        if (pthread_cond_init(&c->cv_task, NULL) == 0) {
            if (pthread_cond_init(&c->cv_done, NULL) == 0)
                c->sync_made = true;
            else
                pthread_cond_destroy(&c->cv_task);
        }
        if (!c->sync_made)
            pthread_mutex_destroy(&c->mu);
    }
    tusk_cl_config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.device = setting;
    cfg.instance = instance;
    if ((st = tusk_cl_new(&c->cl, &cfg, err)) != TUSK_OK)
        goto fail;
    const tusk_cl_device_info_t *dev = tusk_cl_device(c->cl);
    c->part_limit = part_env && part_env < dev->max_alloc ? part_env : (size_t)dev->max_alloc;
    cl_int rc;
    c->upq = clCreateCommandQueue(tusk_cl_context(c->cl), dev->device, CL_QUEUE_PROFILING_ENABLE, &rc);
    if ((st = tusk_cl_check(rc, err, "clCreateCommandQueue (PSA uploads) on %s", tusk_cl_describe(c->cl))))
        goto fail;

    /* Kernel shape: WG points a group (a power of two within the device's
     * limit), PG problems a group (local memory permitting). */
    size_t wg = wg_env ? floor_pow2(wg_env) : WG_DEFAULT;
    if (dev->max_work_group_size > 0 && wg > dev->max_work_group_size)
        wg = floor_pow2(dev->max_work_group_size);
    c->wg = (unsigned)wg;
    c->pg = pg_env ? (unsigned)pg_env : PG_DEFAULT;
    /* the kernel's local memory: traces of a channel, or the reduction's keys */
    while (c->pg > 1 && PSA_LOCAL_BYTES((size_t)c->pg, (size_t)c->samples, wg) > dev->local_mem)
        c->pg /= 2;
    const float p = (float)engine->cfg.p;
    if (p == 2.0f)
        c->pow = PSA_POW_SQUARE;
    else if (p == 1.0f)
        c->pow = PSA_POW_ABS;
    else if (pow_env)
        c->pow = (unsigned)(pow_env - 1);
    else /* GPUs: the hardware's exp2 and log2; CPUs: polynomials, which vectorise (README.md) */
        c->pow = dev->type & CL_DEVICE_TYPE_GPU ? PSA_POW_NATIVE : PSA_POW_POLY;
    if ((st = build(c, err)) || (st = check_pow(c, err)))
        goto fail;
    if (c->pow_error > POW_TERM_TOLERANCE && c->pow != PSA_POW_POWR) {
        /* Not good enough on this device: the precise function. */
        unbuild(c);
        c->pow = PSA_POW_POWR;
        if ((st = build(c, err)) || (st = check_pow(c, err)))
            goto fail;
    }
    if (c->pow_error > POW_TERM_TOLERANCE) {
        st = tusk_error_set(err, TUSK_ECL, "%s: |d|^%g by %s is off by %.3g (relative), more than %g",
                            tusk_cl_describe(c->cl), engine->cfg.p, pow_names[c->pow], c->pow_error,
                            POW_TERM_TOLERANCE);
        goto fail;
    }
    if ((st = upload_basis(c, err)) || (st = res_setup(c, res_device, err)))
        goto fail;
    snprintf(c->describe, sizeof c->describe, "%s; %u points x %u problems a work-group, %s (terms within %.2g)%s",
             tusk_cl_describe(c->cl), c->wg, c->pg, pow_names[c->pow], c->pow_error,
             !engine->cfg.residual ? ""
             : c->res_round      ? "; residual rounds on the device"
                                 : "; residual rounds made on the host");
    *out = c;
    return TUSK_OK;
fail:
    psa_cl_destroy(&c);
    return st;
}

void psa_cl_destroy(psa_cl_t **cl)
{
    if (!cl || !*cl)
        return;
    psa_cl_t *c = *cl;
    if (c->worker_on) { /* what was handed over is enqueued, then the thread ends */
        pthread_mutex_lock(&c->mu);
        c->stop = true;
        pthread_cond_signal(&c->cv_task);
        pthread_mutex_unlock(&c->mu);
        pthread_join(c->worker, NULL);
        c->worker_on = false;
    }
    if (c->sync_made) {
        pthread_cond_destroy(&c->cv_done);
        pthread_cond_destroy(&c->cv_task);
        pthread_mutex_destroy(&c->mu);
        c->sync_made = false;
    }
    if (c->cl) {
        if (c->upq)
            clFinish(c->upq);
        clFinish(tusk_cl_queue(c->cl));
        for (unsigned i = 0; i < PSA_SEGMENTS; i++) {
            tusk_cl_buffer_release(c->cl, &c->part[i].basis);
            tusk_cl_buffer_release(c->cl, &c->part[i].offsets);
        }
        for (int i = 0; i < 2; i++) {
            tusk_cl_buffer_release(c->cl, &c->set[i].info);
            tusk_cl_buffer_release(c->cl, &c->set[i].trace);
            tusk_cl_buffer_release(c->cl, &c->set[i].work);
            tusk_cl_buffer_release(c->cl, &c->set[i].part);
        }
        tusk_cl_buffer_release(c->cl, &c->seg_n);
        for (unsigned f = 0; f < PSA_CL_FLIGHTS; f++) {
            res_flight_t *r = &c->flight[f].res;
            tusk_cl_buffer_release(c->cl, &c->flight[f].out);
            tusk_cl_pinned_destroy(&c->flight[f].stage);
            tusk_cl_buffer_release(c->cl, &r->in);
            tusk_cl_buffer_release(c->cl, &r->info);
            tusk_cl_buffer_release(c->cl, &r->work);
            tusk_cl_buffer_release(c->cl, &r->trace);
            tusk_cl_buffer_release(c->cl, &r->part);
        }
        tusk_cl_buffer_release(c->cl, &c->core0);
        tusk_cl_buffer_release(c->cl, &c->edge);
        tusk_cl_buffer_release(c->cl, &c->pt_at);
    }
    for (unsigned f = 0; f < PSA_CL_FLIGHTS; f++) {
        flight_t *fl = &c->flight[f];
        events_release(&fl->up_ev);
        events_release(&fl->k_ev);
        if (fl->read)
            clReleaseEvent(fl->read);
        free(fl->up_ev.ev);
        free(fl->k_ev.ev);
        free(fl->perm);
        free(fl->result);
        free(fl->chunks);
    }
    for (int i = 0; i < 2; i++)
        if (c->set_free[i])
            clReleaseEvent(c->set_free[i]);
    unbuild(c);
    if (c->upq)
        clReleaseCommandQueue(c->upq);
    tusk_cl_destroy(&c->cl);
    free(c);
    *cl = NULL;
}

const char *psa_cl_describe(const psa_cl_t *cl)
{
    return cl->describe;
}

void psa_cl_stats(const psa_cl_t *cl, psa_cl_stats_t *stats)
{
    psa_cl_t *c = (psa_cl_t *)cl; /* its lock: the submitter counts too */
    if (c->worker_on)
        pthread_mutex_lock(&c->mu);
    *stats = cl->stats;
    if (c->worker_on)
        pthread_mutex_unlock(&c->mu);
}

/* ---- the search ------------------------------------------------------------------ */

/* Refuse what the kernels cannot take: before anything is changed. */
static int check_batch(const psa_cl_t *c, const psa_batch_t *b, tusk_error_t *err)
{
    int st = psa_batch_check(c->e, b, err);
    if (st != TUSK_OK)
        return st;
    for (size_t i = 0; i < b->n; i++) {
        if (b->cand && b->cand_start[i + 1] > b->cand_start[i])
            return tusk_error_set(err, TUSK_EINVAL,
                                  "problem %zu has a candidate list of %u points: the OpenCL backend searches "
                                  "every point (full mode only)",
                                  i, (unsigned)(b->cand_start[i + 1] - b->cand_start[i]));
    }
    return TUSK_OK;
}

static size_t tiles_of(const psa_cl_t *c, unsigned s)
{
    return (c->e->npoints[s] + c->wg - 1) / c->wg;
}

/* Sort by segment and cut into chunks; sizes of everything. */
static int plan(psa_cl_t *c, flight_t *fl, const psa_batch_t *b, size_t *groups_total, size_t *floats_total,
                tusk_error_t *err)
{
    const size_t n = b->n, S = c->samples;
    if (grow_array((void **)&fl->perm, &fl->perm_cap, n, sizeof *fl->perm) != 0)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory (%zu problems)", n);
    if (grow_array((void **)&fl->result, &fl->result_cap, n, sizeof *fl->result) != 0)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory (%zu problems)", n);
    size_t count[PSA_SEGMENTS] = {0}, start[PSA_SEGMENTS];
    for (size_t i = 0; i < n; i++)
        count[b->segment[i]]++;
    size_t at = 0;
    for (unsigned s = 0; s < PSA_SEGMENTS; s++) {
        start[s] = at;
        at += count[s];
    }
    for (size_t i = 0; i < n; i++)
        fl->perm[start[b->segment[i]]++] = (uint32_t)i;

    size_t per = c->chunk_override;
    if (!per) {
        per = (n + CHUNK_PARTS - 1) / CHUNK_PARTS;
        per = per < CHUNK_MIN ? CHUNK_MIN : per > CHUNK_MAX ? CHUNK_MAX : per;
    }
    size_t k = 0, i = 0, G = 0, F = 0;
    while (i < n) {
        if (grow_array((void **)&fl->chunks, &fl->chunks_cap, k + 1, sizeof *fl->chunks) != 0)
            return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
        chunk_t *ch = &fl->chunks[k];
        ch->begin = i;
        ch->floats = 0;
        ch->groups = 0;
        ch->trace_at = F;
        ch->work_at = G;
        size_t run = 0; /* problems of the current segment so far in this chunk */
        while (i < n && i - ch->begin < per) {
            const size_t pi = fl->perm[i];
            size_t f = (size_t)b->n_channels[pi] * S;
            if (i > ch->begin && ch->floats + f > CHUNK_FLOATS)
                break;
            if (i > ch->begin && b->segment[fl->perm[i - 1]] != b->segment[pi])
                run = 0;
            if (run % c->pg == 0)
                ch->groups += tiles_of(c, b->segment[pi]);
            run++;
            ch->floats += f;
            i++;
        }
        ch->end = i;
        G += ch->groups;
        F += ch->floats;
        k++;
    }
    fl->n = n;
    fl->nchunks = k;
    *groups_total = G;
    *floats_total = F;
    return TUSK_OK;
}

/* Device and pinned memory for the flight's plan. A set's buffers may
 * still be read by the kernels of a batch in flight when they grow: the
 * old buffers go when those are done (clReleaseMemObject), and the new
 * ones are not in use. */
static int reserve(psa_cl_t *c, flight_t *fl, size_t G, size_t F, tusk_error_t *err)
{
    size_t mp = 0, mf = 0, mg = 0;
    for (size_t k = 0; k < fl->nchunks; k++) {
        const chunk_t *ch = &fl->chunks[k];
        mp = ch->end - ch->begin > mp ? ch->end - ch->begin : mp;
        mf = ch->floats > mf ? ch->floats : mf;
        mg = ch->groups > mg ? ch->groups : mg;
    }
    int st = TUSK_OK;
    for (int s = 0; s < 2 && !st; s++) {
        buffer_set_t *b = &c->set[s];
        char what[4][48];
        snprintf(what[0], sizeof what[0], "PSA problem info %d", s);
        snprintf(what[1], sizeof what[1], "PSA problem traces %d", s);
        snprintf(what[2], sizeof what[2], "PSA work list %d", s);
        snprintf(what[3], sizeof what[3], "PSA partial minima %d", s);
        if ((st = ensure_buffer(c, &b->info, &b->info_cap, mp, sizeof(psa_dev_problem_t), CL_MEM_READ_ONLY, what[0],
                                err)) ||
            (st = ensure_buffer(c, &b->trace, &b->trace_cap, mf, sizeof(float), CL_MEM_READ_ONLY, what[1], err)) ||
            (st = ensure_buffer(c, &b->work, &b->work_cap, mg, sizeof(psa_dev_work_t), CL_MEM_READ_ONLY, what[2],
                                err)) ||
            (st = ensure_buffer(c, &b->part, &b->part_cap, mp * c->tiles_max, sizeof(cl_ulong),
                                CL_MEM_READ_WRITE, what[3], err)))
            return st;
    }
    if ((st = ensure_buffer(c, &fl->out, &fl->out_cap, fl->n, sizeof(psa_dev_result_t), CL_MEM_WRITE_ONLY,
                            "PSA results", err)))
        return st;
    size_t need = fl->n * sizeof(psa_dev_problem_t) + G * sizeof(psa_dev_work_t) + F * sizeof(float);
    if (!fl->stage || tusk_cl_pinned_size(fl->stage) < need) {
        tusk_cl_pinned_destroy(&fl->stage);
        size_t want = need + need / 4;
        st = tusk_cl_pinned_new(c->cl, "PSA staging (pinned)", want, &fl->stage, err);
        if (st == TUSK_ELIMIT)
            st = tusk_cl_pinned_new(c->cl, "PSA staging (pinned)", need, &fl->stage, err);
    }
    return st;
}

/* The work list of np problems sorted by segment (info[i].segment): for
 * each run of one segment, groups of pg problems, each over every tile of
 * the segment, their first problem counted from `base`; basis part p's
 * entries pbegin[p] .. pend[p] - 1 (parts are runs of segments). The
 * entries written. */
static size_t work_list(const psa_cl_t *c, const psa_dev_problem_t *info, size_t np, size_t base,
                        psa_dev_work_t *work, size_t pbegin[PSA_SEGMENTS], size_t pend[PSA_SEGMENTS])
{
    bool seen[PSA_SEGMENTS] = {false};
    for (unsigned p = 0; p < c->nparts; p++)
        pbegin[p] = pend[p] = 0;
    size_t i = 0, g = 0;
    while (i < np) {
        const unsigned s = info[i].segment, part = c->seg_part[s];
        size_t e = i;
        while (e < np && info[e].segment == s)
            e++;
        if (!seen[part])
            pbegin[part] = g;
        seen[part] = true;
        const size_t tiles = tiles_of(c, s);
        for (size_t first = i; first < e; first += c->pg) {
            size_t cnt = e - first < c->pg ? e - first : c->pg;
            for (size_t t = 0; t < tiles; t++) {
                psa_dev_work_t *w = &work[g++];
                w->segment = s;
                w->tile = (tusk_u32)t;
                w->first = (tusk_u32)(base + first);
                w->count = (tusk_u32)cnt;
            }
        }
        pend[part] = g;
        i = e;
    }
    return g;
}

/* A chunk's problems into the staging area: each one's info (its
 * trace_at already set) and its traces. */
typedef struct copy_job {
    const psa_batch_t *b;
    const uint32_t *perm;       /* from the chunk's first problem */
    psa_dev_problem_t *info;
    float *trace;
    size_t S;
} copy_job_t;

static void copy_traces(void *ctx, size_t first, size_t step, size_t end)
{
    const copy_job_t *j = ctx;
    const psa_batch_t *b = j->b;
    for (size_t r = first; r < end; r += step) {
        const size_t pi = j->perm[r];
        const unsigned nch = b->n_channels[pi];
        uint64_t mask = 0;
        for (unsigned k = 0; k < nch; k++)
            mask |= (uint64_t)1 << b->channel[pi * PSA_CHANNELS + k];
        psa_dev_problem_t *in = &j->info[r];
        in->mask_lo = (tusk_u32)(mask & 0xFFFFFFFFu);
        in->mask_hi = (tusk_u32)(mask >> 32);
        in->segment = b->segment[pi];
        memcpy(j->trace + in->trace_at, b->trace + pi * PSA_CHANNELS * j->S, (size_t)nch * j->S * sizeof(float));
    }
}

/* Problems a chunk at least for the traces to be copied on the engine's
 * threads. */
#define COPY_PARALLEL_MIN 256

/* Chunk k's info, traces and work list into the staging area; the work
 * list's range for each basis part. The problems' masks and traces go in
 * on the engine's threads where its analyses made them (this runs
 * between analyses, on the thread that runs them). */
static void pack(psa_cl_t *c, const flight_t *fl, const psa_batch_t *b, size_t k, psa_dev_problem_t *info,
                 psa_dev_work_t *work, float *trace, size_t pbegin[PSA_SEGMENTS], size_t pend[PSA_SEGMENTS])
{
    const chunk_t *ch = &fl->chunks[k];
    const size_t S = c->samples;
    /* Where each problem's traces go (in order: a running sum), then its
     * mask and traces, on the threads. */
    size_t f = 0;
    for (size_t i = ch->begin; i < ch->end; i++) {
        info[i - ch->begin].trace_at = (tusk_u32)f;
        f += (size_t)b->n_channels[fl->perm[i]] * S;
    }
    const size_t np = ch->end - ch->begin;
    copy_job_t cj = {b, fl->perm + ch->begin, info, trace, S};
    /* On the engine's threads when the caller's thread packs; the
     * submitter packs alone (the engine's pool serves the caller's
     * analyses meanwhile). */
    const bool pool = (!c->worker_on || c->in_caller) && c->e->pool && np >= COPY_PARALLEL_MIN;
    psa_parallel_blocks(pool ? c->e->pool : NULL, 0, np, pool ? c->e->cfg.threads : 1, copy_traces, &cj);
    work_list(c, info, np, 0, work, pbegin, pend);
}

/* Everything enqueued is finished or abandoned, every flight free (after
 * a failure: the batches in flight are lost). */
static void settle(psa_cl_t *c)
{
    if (c->worker_on) { /* every flight handed over enqueued (or skipped) first */
        pthread_mutex_lock(&c->mu);
        while (c->queued > 0)
            pthread_cond_wait(&c->cv_done, &c->mu);
        c->broken = false;
        pthread_mutex_unlock(&c->mu);
    }
    c->fifo_head = 0;
    clFinish(c->upq);
    clFinish(tusk_cl_queue(c->cl));
    for (unsigned f = 0; f < PSA_CL_FLIGHTS; f++) {
        flight_t *fl = &c->flight[f];
        events_release(&fl->up_ev);
        events_release(&fl->k_ev);
        if (fl->read)
            clReleaseEvent(fl->read);
        fl->read = NULL;
        fl->batch = NULL;
        fl->res.on = false;
    }
    c->head = 0;
    c->flying = 0;
    c->res_begun = false;
}

/* The set for the next chunk: the event its uploads wait for (NULL: none). */
static unsigned take_set(psa_cl_t *c, cl_event *wait_free)
{
    const unsigned s = c->next_set;
    c->next_set ^= 1u;
    *wait_free = c->set_free[s];
    return s;
}

/* A kernel's event kept in fl->k_ev (its profiling times), the launch
 * counted; released when there is no room. */
static int keep_kernel(psa_cl_t *c, flight_t *fl, cl_event ev, tusk_error_t *err)
{
    if (events_push(&fl->k_ev, ev) != 0) {
        clReleaseEvent(ev);
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory (events)");
    }
    c->launched++;
    return TUSK_OK;
}

/* The search of the np problems of `info` (work list entries pbegin[p]
 * .. pend[p] - 1 for basis part p; the first launch after the `nwait`
 * events), then their reduction into out[obase ..]: its event in *done
 * (kept in fl->k_ev too). `what` names them in errors. */
static int enqueue_search(psa_cl_t *c, flight_t *fl, const char *what, cl_mem work, cl_mem info, cl_mem trace,
                          cl_mem part, const size_t pbegin[PSA_SEGMENTS], const size_t pend[PSA_SEGMENTS],
                          cl_uint nwait, const cl_event *wait, size_t np, cl_mem out, size_t obase, cl_event *done,
                          tusk_error_t *err)
{
    const char *dev = tusk_cl_describe(c->cl);
    cl_command_queue q = tusk_cl_queue(c->cl);
    const cl_uint stride = c->tiles_max;
    bool first = true;
    int st;
    cl_int rc;
    /* One launch per basis part with problems here. */
    for (unsigned p = 0; p < c->nparts; p++) {
        if (pend[p] == pbegin[p])
            continue;
        const cl_uint wbase = (cl_uint)pbegin[p];
        if ((st = set_arg(c, c->search, "psa_search", 0, sizeof(cl_mem), &c->part[p].basis, err)) ||
            (st = set_arg(c, c->search, "psa_search", 1, sizeof(cl_mem), &c->part[p].offsets, err)) ||
            (st = set_arg(c, c->search, "psa_search", 2, sizeof(cl_mem), &c->seg_n, err)) ||
            (st = set_arg(c, c->search, "psa_search", 3, sizeof(cl_mem), &work, err)) ||
            (st = set_arg(c, c->search, "psa_search", 4, sizeof wbase, &wbase, err)) ||
            (st = set_arg(c, c->search, "psa_search", 5, sizeof(cl_mem), &info, err)) ||
            (st = set_arg(c, c->search, "psa_search", 6, sizeof(cl_mem), &trace, err)) ||
            (st = set_arg(c, c->search, "psa_search", 7, sizeof stride, &stride, err)) ||
            (st = set_arg(c, c->search, "psa_search", 8, sizeof(cl_mem), &part, err)))
            return st;
        const size_t local = c->wg, global = (pend[p] - pbegin[p]) * local;
        cl_event kev = NULL;
        rc = clEnqueueNDRangeKernel(q, c->search, 1, NULL, &global, &local, first ? nwait : 0, first ? wait : NULL,
                                    &kev);
        if ((st = tusk_cl_check(rc, err,
                                "clEnqueueNDRangeKernel(psa_search, %s, segments %u to %u, global %zu, local %zu) on %s",
                                what, c->part[p].first, c->part[p].last, global, local, dev)))
            return st;
        if ((st = keep_kernel(c, fl, kev, err)))
            return st;
        first = false;
    }
    const cl_uint nprob = (cl_uint)np, ob = (cl_uint)obase;
    if ((st = set_arg(c, c->reduce, "psa_reduce", 0, sizeof(cl_mem), &info, err)) ||
        (st = set_arg(c, c->reduce, "psa_reduce", 1, sizeof(cl_mem), &c->seg_n, err)) ||
        (st = set_arg(c, c->reduce, "psa_reduce", 2, sizeof nprob, &nprob, err)) ||
        (st = set_arg(c, c->reduce, "psa_reduce", 3, sizeof stride, &stride, err)) ||
        (st = set_arg(c, c->reduce, "psa_reduce", 4, sizeof(cl_mem), &part, err)) ||
        (st = set_arg(c, c->reduce, "psa_reduce", 5, sizeof ob, &ob, err)) ||
        (st = set_arg(c, c->reduce, "psa_reduce", 6, sizeof(cl_mem), &out, err)))
        return st;
    const size_t global = (np + REDUCE_ROUND - 1) / REDUCE_ROUND * REDUCE_ROUND;
    cl_event rev = NULL;
    rc = clEnqueueNDRangeKernel(q, c->reduce, 1, NULL, &global, NULL, first ? nwait : 0, first ? wait : NULL, &rev);
    if ((st = tusk_cl_check(rc, err, "clEnqueueNDRangeKernel(psa_reduce, %s, global %zu) on %s", what, global, dev)) ||
        (st = keep_kernel(c, fl, rev, err)))
        return st;
    *done = rev;
    return TUSK_OK;
}

static int enqueue_chunk(psa_cl_t *c, flight_t *fl, const psa_batch_t *b, size_t k, size_t G, tusk_error_t *err)
{
    const chunk_t *ch = &fl->chunks[k];
    cl_event wait_free;
    const unsigned set = take_set(c, &wait_free);
    const buffer_set_t *bs = &c->set[set];
    const char *dev = tusk_cl_describe(c->cl);
    char *base = tusk_cl_pinned_ptr(fl->stage);
    psa_dev_problem_t *info_all = (psa_dev_problem_t *)(void *)base;
    psa_dev_work_t *work_all = (psa_dev_work_t *)(void *)(info_all + fl->n);
    float *trace_all = (float *)(void *)(work_all + G);
    psa_dev_problem_t *info = info_all + ch->begin;
    psa_dev_work_t *work = work_all + ch->work_at;
    float *trace = trace_all + ch->trace_at;
    size_t pbegin[PSA_SEGMENTS], pend[PSA_SEGMENTS];
    pack(c, fl, b, k, info, work, trace, pbegin, pend);

    const size_t np = ch->end - ch->begin;
    cl_event ev[3] = {NULL, NULL, NULL};
    int nev = 0, st;
    cl_int rc = clEnqueueWriteBuffer(c->upq, bs->info, CL_FALSE, 0, np * sizeof *info, info, wait_free ? 1 : 0,
                                     wait_free ? &wait_free : NULL, &ev[nev]);
    if ((st = tusk_cl_check(rc, err, "clEnqueueWriteBuffer(PSA problem info, chunk %zu, %zu problems) on %s", k, np,
                            dev)))
        return st;
    nev++;
    rc = clEnqueueWriteBuffer(c->upq, bs->work, CL_FALSE, 0, ch->groups * sizeof *work, work, 0, NULL, &ev[nev]);
    if ((st = tusk_cl_check(rc, err, "clEnqueueWriteBuffer(PSA work list, chunk %zu, %zu groups) on %s", k,
                            ch->groups, dev))) {
        events_push(&fl->up_ev, ev[0]);
        return st;
    }
    nev++;
    if (ch->floats) {
        rc = clEnqueueWriteBuffer(c->upq, bs->trace, CL_FALSE, 0, ch->floats * sizeof(float), trace, 0, NULL,
                                  &ev[nev]);
        if ((st = tusk_cl_check(rc, err, "clEnqueueWriteBuffer(PSA problem traces, chunk %zu, %zu floats) on %s", k,
                                ch->floats, dev))) {
            for (int i = 0; i < nev; i++)
                events_push(&fl->up_ev, ev[i]);
            return st;
        }
        nev++;
    }
    for (int i = 0; i < nev; i++)
        if (events_push(&fl->up_ev, ev[i]) != 0) {
            for (int j = i; j < nev; j++)
                clReleaseEvent(ev[j]);
            return tusk_error_set(err, TUSK_ENOMEM, "out of memory (events)");
        }
    if ((st = tusk_cl_check(clFlush(c->upq), err, "clFlush (PSA uploads) on %s", dev)))
        return st;

    char what[48];
    snprintf(what, sizeof what, "chunk %zu", k);
    cl_event rev = NULL;
    if ((st = enqueue_search(c, fl, what, bs->work, bs->info, bs->trace, bs->part, pbegin, pend, (cl_uint)nev, ev, np,
                             fl->out, ch->begin, &rev, err)))
        return st;
    /* The set is free again once this reduction has run. */
    if ((st = tusk_cl_check(clRetainEvent(rev), err, "clRetainEvent (PSA reduction) on %s", dev)))
        return st;
    if (c->set_free[set])
        clReleaseEvent(c->set_free[set]);
    c->set_free[set] = rev;
    return tusk_cl_check(clFlush(tusk_cl_queue(c->cl)), err, "clFlush (PSA kernels) on %s", dev);
}

/* Plan, pack and enqueue a checked batch into the next free flight, the
 * results' download last. */
static int launch(psa_cl_t *c, flight_t *fl, tusk_error_t *err)
{
    psa_batch_t *b = fl->batch;
    size_t G = 0, F = 0;
    int st;
    fl->n = 0;
    fl->nchunks = 0;
    if (b->n > 0 && ((st = plan(c, fl, b, &G, &F, err)) || (st = reserve(c, fl, G, F, err))))
        return st;
    for (size_t k = 0; k < fl->nchunks; k++)
        if ((st = enqueue_chunk(c, fl, b, k, G, err)))
            return st;
    if (fl->n == 0)
        return TUSK_OK;
    cl_int rc = clEnqueueReadBuffer(tusk_cl_queue(c->cl), fl->out, CL_FALSE, 0, fl->n * sizeof *fl->result,
                                    fl->result, 0, NULL, &fl->read);
    if ((st = tusk_cl_check(rc, err, "clEnqueueReadBuffer(PSA results, %zu problems) on %s", fl->n,
                            tusk_cl_describe(c->cl))))
        return st;
    return tusk_cl_check(clFlush(tusk_cl_queue(c->cl)), err, "clFlush (PSA results) on %s",
                         tusk_cl_describe(c->cl));
}

/* ---- the submitter ---------------------------------------------------------------- */

static int res_enqueue(psa_cl_t *c, flight_t *fl, tusk_error_t *err);

/* Flight fl's commands enqueued (a batch's search or a job's later
 * rounds); the time it took in *ms, the kernels in c->launched. */
static int enqueue_flight(psa_cl_t *c, flight_t *fl, double *ms, tusk_error_t *err)
{
    const uint64_t t0 = tusk_clock_ns();
    c->launched = 0;
    int st = fl->res.on ? res_enqueue(c, fl, err) : launch(c, fl, err);
    *ms = (double)(tusk_clock_ns() - t0) * 1e-6;
    return st;
}

/* Its counts into the stats (under the lock where there is a submitter). */
static void count_enqueued(psa_cl_t *c, int st, double ms)
{
    c->stats.submit_ms += ms;
    c->stats.batches += st == TUSK_OK;
    c->stats.launches += c->launched;
}

static void *submitter(void *arg)
{
    psa_cl_t *c = arg;
    pthread_mutex_lock(&c->mu);
    for (;;) {
        while (!c->stop && c->queued == 0)
            pthread_cond_wait(&c->cv_task, &c->mu);
        if (c->queued == 0)
            break; /* stopped, nothing left */
        flight_t *fl = &c->flight[c->fifo[c->fifo_head]];
        const bool broken = c->broken;
        pthread_mutex_unlock(&c->mu);
        tusk_error_t e;
        double ms = 0.0;
        c->launched = 0;
        int st = broken ? tusk_error_set(&e, TUSK_ECL, "PSA search on %s abandoned: an earlier batch's commands "
                                         "failed", tusk_cl_describe(c->cl))
                        : enqueue_flight(c, fl, &ms, &e);
        pthread_mutex_lock(&c->mu);
        count_enqueued(c, st, ms);
        fl->enq_status = st;
        if (st) {
            fl->enq_err = e;
            c->broken = true;
        }
        fl->enqueued = true;
        c->fifo_head = (c->fifo_head + 1) % PSA_CL_FLIGHTS;
        c->queued--;
        pthread_cond_broadcast(&c->cv_done);
    }
    pthread_mutex_unlock(&c->mu);
    return NULL;
}

/* Flight fl (the next one, its batch set) taken and handed to the
 * submitter; without one, or `here` (psa_cl_search: the caller waits for
 * it anyway, and packs on the engine's threads), enqueued on the caller's
 * thread once the submitter has enqueued what it was handed before (a
 * failure abandons everything in flight). */
static int hand_over(psa_cl_t *c, flight_t *fl, bool here, tusk_error_t *err)
{
    fl->enqueued = false;
    fl->enq_status = TUSK_OK;
    c->flying++;
    if (!here && !c->worker_on && !c->worker_failed && c->sync_made) {
        c->stop = false;
        if (pthread_create(&c->worker, NULL, submitter, c) == 0)
            c->worker_on = true;
        else
            c->worker_failed = true;
    }
    if (here || !c->worker_on) {
        if (c->worker_on) {
            pthread_mutex_lock(&c->mu);
            while (c->queued > 0)
                pthread_cond_wait(&c->cv_done, &c->mu);
            pthread_mutex_unlock(&c->mu);
        }
        double ms = 0.0;
        c->in_caller = true;
        int st = enqueue_flight(c, fl, &ms, err);
        c->in_caller = false;
        if (c->worker_on)
            pthread_mutex_lock(&c->mu);
        count_enqueued(c, st, ms);
        if (c->worker_on)
            pthread_mutex_unlock(&c->mu);
        fl->enqueued = true;
        if (st)
            settle(c); /* commands may have been enqueued: everything in flight is abandoned */
        return st;
    }
    pthread_mutex_lock(&c->mu);
    c->fifo[(c->fifo_head + c->queued) % PSA_CL_FLIGHTS] = (unsigned)(fl - c->flight);
    c->queued++;
    pthread_cond_signal(&c->cv_task);
    pthread_mutex_unlock(&c->mu);
    return TUSK_OK;
}

/* Wait until the submitter has enqueued flight fl: its status (err
 * filled when it failed). */
static int wait_enqueued(psa_cl_t *c, flight_t *fl, tusk_error_t *err)
{
    if (c->worker_on) {
        pthread_mutex_lock(&c->mu);
        while (!fl->enqueued)
            pthread_cond_wait(&c->cv_done, &c->mu);
        pthread_mutex_unlock(&c->mu);
    }
    if (fl->enq_status && err)
        *err = fl->enq_err;
    return fl->enq_status;
}

/* psa_cl_submit, the flight enqueued by the submitter or `here`. */
static int submit_batch(psa_cl_t *c, psa_batch_t *b, bool here, tusk_error_t *err)
{
    if (c->flying == PSA_CL_FLIGHTS)
        return tusk_error_set(err, TUSK_EINVAL, "psa_cl_submit: %d batches are being searched already; collect one "
                              "first", PSA_CL_FLIGHTS);
    for (unsigned f = 0; f < c->flying; f++)
        if (c->flight[(c->head + f) % PSA_CL_FLIGHTS].batch == b)
            return tusk_error_set(err, TUSK_EINVAL, "psa_cl_submit: that batch is being searched already");
    int st = check_batch(c, b, err);
    if (st)
        return st;
    if (b->n > UINT32_MAX / 4)
        return tusk_error_set(err, TUSK_EINVAL, "a batch of %zu problems: too many for one search", b->n);
    flight_t *fl = &c->flight[(c->head + c->flying) % PSA_CL_FLIGHTS];
    fl->batch = b;
    fl->res.on = false;
    return hand_over(c, fl, here, err);
}

/* Wait for flight fl (of batch b) and fill b's results; the flight is
 * free again (the caller takes it off the ring). */
static int take_flight(psa_cl_t *c, flight_t *fl, psa_batch_t *b, tusk_error_t *err)
{
    const char *dev = tusk_cl_describe(c->cl);
    int st = wait_enqueued(c, fl, err);
    if (st) {
        settle(c);
        return st;
    }
    if (fl->read) {
        const uint64_t t0 = tusk_clock_ns();
        st = tusk_cl_check(clWaitForEvents(1, &fl->read), err, "clWaitForEvents (PSA results, %zu problems) on %s",
                           fl->n, dev);
        c->stats.wait_ms += (double)(tusk_clock_ns() - t0) * 1e-6;
        if (!st && fl->up_ev.n)
            st = tusk_cl_check(clWaitForEvents((cl_uint)fl->up_ev.n, fl->up_ev.ev), err,
                               "clWaitForEvents (PSA uploads) on %s", dev);
        event_list_t r = {&fl->read, 1, 1};
        if (!st)
            st = events_ms(c, &fl->up_ev, "PSA upload", &c->stats.upload_ms, err);
        if (!st)
            st = events_ms(c, &fl->k_ev, "PSA kernel", &c->stats.kernel_ms, err);
        if (!st)
            st = events_ms(c, &r, "PSA result download", &c->stats.download_ms, err);
    }
    if (st) {
        settle(c);
        return st;
    }
    events_release(&fl->up_ev);
    events_release(&fl->k_ev);
    if (fl->read)
        clReleaseEvent(fl->read);
    fl->read = NULL;
    for (size_t k = 0; k < fl->n; k++) {
        const size_t i = fl->perm[k];
        b->best[i] = fl->result[k].best;
        b->fom[i] = tusk_bits_f32(fl->result[k].fom_bits);
    }
    c->stats.problems += fl->res.on ? fl->res.searched : fl->n;
    fl->res.on = false;
    fl->batch = NULL;
    return TUSK_OK;
}

int psa_cl_collect(psa_cl_t *c, psa_batch_t *b, tusk_error_t *err)
{
    if (c->flying == 0)
        return tusk_error_set(err, TUSK_EINVAL, "psa_cl_collect: no batch is being searched");
    flight_t *fl = &c->flight[c->head];
    if (fl->batch != b)
        return tusk_error_set(err, TUSK_EINVAL, "psa_cl_collect: not the oldest batch being searched (batches are "
                              "collected in the order they were submitted)");
    int st = take_flight(c, fl, b, err);
    if (st)
        return st;
    c->head = (c->head + 1) % PSA_CL_FLIGHTS;
    c->flying--;
    return TUSK_OK;
}

int psa_cl_submit(psa_cl_t *c, psa_batch_t *b, tusk_error_t *err)
{
    return submit_batch(c, b, false, err);
}

int psa_cl_search(psa_cl_t *c, psa_batch_t *b, tusk_error_t *err)
{
    if (c->flying == PSA_CL_FLIGHTS)
        return tusk_error_set(err, TUSK_EINVAL, "psa_cl_search: %u batches submitted and not collected yet: collect "
                              "one first", c->flying);
    /* Submitted behind the batches in flight (the queue runs in order),
     * and taken back as the newest: they stay in flight. */
    int st = submit_batch(c, b, true, err);
    if (st)
        return st;
    flight_t *fl = &c->flight[(c->head + c->flying - 1) % PSA_CL_FLIGHTS];
    if ((st = take_flight(c, fl, b, err)))
        return st;
    c->flying--;
    return TUSK_OK;
}

/* ---- residual subtraction's later rounds on the device ------------------------ */

static size_t align64(size_t x)
{
    return (x + 63) & ~(size_t)63;
}

/* Room in the next flight's staging area for a job's later rounds: the
 * crystals, hits and traces that psa_analyse writes (the view), then the
 * problem lists psa_cl_res_submit makes. */
static int res_begin(void *ctx, psa_batch_t *b, size_t records, size_t hits, size_t floats, psa_res_view_t *view,
                     tusk_error_t *err)
{
    psa_cl_t *c = ctx;
    (void)b;
    if (!c->res_round)
        return tusk_error_set(err, TUSK_EINVAL, "psa_cl: the residual's rounds are not made on %s",
                              tusk_cl_describe(c->cl));
    if (c->flying == PSA_CL_FLIGHTS)
        return tusk_error_set(err, TUSK_EINVAL, "psa_cl: %d batches are being searched already; collect one first",
                              PSA_CL_FLIGHTS);
    flight_t *fl = &c->flight[(c->head + c->flying) % PSA_CL_FLIGHTS];
    res_flight_t *r = &fl->res;
    const size_t per = 2 * (size_t)c->e->cfg.t0_search + 1, P = hits * per;
    if (records == 0 || hits < 2 * records || P > UINT32_MAX / PSA_CHANNELS / PSA_MAX_SAMPLES ||
        floats > UINT32_MAX / 2)
        return tusk_error_set(err, TUSK_EINVAL, "psa_cl: later rounds of %zu crystals, %zu hits, %zu trace samples: "
                              "%s", records, hits, floats, records == 0 || hits < 2 * records ? "a crystal of "
                              "fewer than two hits" : "too many for one submission");
    size_t o = 0;
    r->records = records;
    r->hits = hits;
    r->per = per;
    r->off_rec = o;
    o = align64(o + records * sizeof(psa_dev_res_record_t));
    r->off_hit = o;
    o = align64(o + hits * sizeof(psa_dev_res_hit_t));
    r->off_trace = o;
    o = align64(o + floats * sizeof(float));
    r->off_slot = o;
    o = align64(o + P * sizeof(tusk_u32));
    r->in_bytes = o; /* what the device reads; the rest the host's lists */
    r->off_prob = o;
    o = align64(o + P * sizeof(tusk_u32));
    r->off_kind = o;
    o = align64(o + hits * sizeof(tusk_u32));
    r->off_info = o;
    o = align64(o + P * sizeof(psa_dev_problem_t));
    /* A kind's runs of one segment make at most pg-sized groups and one
     * more each, each over every tile of the segment. */
    r->groups_max = (P + 2 * PSA_SEGMENTS) * c->tiles_max;
    r->off_work = o;
    o = align64(o + r->groups_max * sizeof(psa_dev_work_t));
    if (r->in_bytes > UINT32_MAX)
        return tusk_error_set(err, TUSK_EINVAL, "psa_cl: later rounds of %zu crystals: %zu bytes, too many for one "
                              "submission", records, r->in_bytes);
    int st = TUSK_OK;
    if (!fl->stage || tusk_cl_pinned_size(fl->stage) < o) {
        tusk_cl_pinned_destroy(&fl->stage);
        st = tusk_cl_pinned_new(c->cl, "PSA staging (pinned)", o + o / 4, &fl->stage, err);
        if (st == TUSK_ELIMIT)
            st = tusk_cl_pinned_new(c->cl, "PSA staging (pinned)", o, &fl->stage, err);
        if (st)
            return st;
    }
    char *base = tusk_cl_pinned_ptr(fl->stage);
    view->records = (psa_dev_res_record_t *)(void *)(base + r->off_rec);
    view->hits = (psa_dev_res_hit_t *)(void *)(base + r->off_hit);
    view->traces = (float *)(void *)(base + r->off_trace);
    c->res_begun = true;
    return TUSK_OK;
}

/* Sort the problems of one kind's hits (hits[kind_hit[i]], i < nh, each
 * with `per` T0 shifts) by segment from pbase, counting: each problem's
 * hit into prob_hit, each hit's shifts' places into slot[i * per + j]. */
static void res_sort_kind(const psa_dev_res_hit_t *hit, const tusk_u32 *kind_hit, size_t nh, size_t per,
                          size_t pbase, tusk_u32 *prob_hit, tusk_u32 *slot)
{
    size_t count[PSA_SEGMENTS] = {0}, start[PSA_SEGMENTS];
    for (size_t i = 0; i < nh; i++)
        count[hit[kind_hit[i]].segment] += per;
    size_t at = pbase;
    for (unsigned s = 0; s < PSA_SEGMENTS; s++) {
        start[s] = at;
        at += count[s];
    }
    for (size_t i = 0; i < nh; i++) {
        const tusk_u32 k = kind_hit[i];
        for (size_t j = 0; j < per; j++) {
            const size_t pos = start[hit[k].segment]++;
            prob_hit[pos] = k;
            slot[i * per + j] = (tusk_u32)pos;
        }
    }
}

/* Launch kernel k over `global` work-items, `local` a group, after
 * *nwait events (the first command only), its event kept in fl->k_ev. */
static int res_launch(psa_cl_t *c, flight_t *fl, cl_kernel k, const char *name, size_t global, size_t local,
                      cl_uint *nwait, const cl_event *wait, tusk_error_t *err)
{
    cl_event ev = NULL;
    cl_int rc = clEnqueueNDRangeKernel(tusk_cl_queue(c->cl), k, 1, NULL, &global, &local, *nwait,
                                       *nwait ? wait : NULL, &ev);
    int st = tusk_cl_check(rc, err, "clEnqueueNDRangeKernel(%s, global %zu, local %zu) on %s", name, global, local,
                           tusk_cl_describe(c->cl));
    if (st)
        return st;
    *nwait = 0;
    return keep_kernel(c, fl, ev, err);
}

/* The lists, the uploads and rounds 1 .. rounds - 1 (psa.cl), then the
 * hits' download; the flight taken from here on. */
static int res_enqueue(psa_cl_t *c, flight_t *fl, tusk_error_t *err)
{
    res_flight_t *r = &fl->res;
    const unsigned rounds = r->rounds;
    const char *dev = tusk_cl_describe(c->cl);
    const int K = (int)c->e->cfg.t0_search;
    const size_t per = r->per, S = c->samples, R = r->records, H = r->hits;
    char *base = tusk_cl_pinned_ptr(fl->stage);
    const psa_dev_res_record_t *rec = (const psa_dev_res_record_t *)(const void *)(base + r->off_rec);
    const psa_dev_res_hit_t *hit = (const psa_dev_res_hit_t *)(const void *)(base + r->off_hit);
    tusk_u32 *prob_hit = (tusk_u32 *)(void *)(base + r->off_prob);
    tusk_u32 *kind = (tusk_u32 *)(void *)(base + r->off_kind), *slot = (tusk_u32 *)(void *)(base + r->off_slot);
    psa_dev_problem_t *info = (psa_dev_problem_t *)(void *)(base + r->off_info);
    psa_dev_work_t *work = (psa_dev_work_t *)(void *)(base + r->off_work);
    /* Kind 0: each crystal's strongest hit; kind 1: its others. */
    size_t k1 = R;
    for (size_t i = 0; i < R; i++) {
        kind[i] = rec[i].first;
        for (tusk_u32 m = 1; m < rec[i].n; m++)
            kind[k1++] = rec[i].first + m;
    }
    if (k1 != H)
        return tusk_error_set(err, TUSK_EINVAL, "psa_cl: later rounds of %zu hits, but the crystals have %zu", H, k1);
    const size_t n0 = R * per, n1 = (H - R) * per;
    res_sort_kind(hit, kind, R, per, 0, prob_hit, slot);
    res_sort_kind(hit, kind + R, H - R, per, n0, prob_hit, slot + n0);
    size_t F = 0;
    for (size_t p = 0; p < n0 + n1; p++) {
        const psa_dev_res_hit_t *h = &hit[prob_hit[p]];
        const size_t nch = (size_t)__builtin_popcountll(((uint64_t)h->mask_hi << 32) | h->mask_lo);
        info[p].trace_at = (tusk_u32)F;
        info[p].mask_lo = h->mask_lo;
        info[p].mask_hi = h->mask_hi;
        info[p].segment = h->segment;
        F += nch * S;
    }
    size_t pb[2][PSA_SEGMENTS], pe[2][PSA_SEGMENTS];
    const size_t g0 = work_list(c, info, n0, 0, work, pb[0], pe[0]);
    const size_t g1 = work_list(c, info + n0, n1, n0, work + g0, pb[1], pe[1]);
    for (unsigned p = 0; p < c->nparts; p++) {
        pb[1][p] += g0;
        pe[1][p] += g0;
    }
    if (g0 + g1 > r->groups_max)
        return tusk_error_set(err, TUSK_EINVAL, "psa_cl: %zu work-groups for the later rounds, room for %zu",
                              g0 + g1, r->groups_max);
    int st;
    if ((st = ensure_buffer(c, &r->in, &r->in_cap, r->in_bytes, 1, CL_MEM_READ_WRITE, "PSA residual records", err)) ||
        (st = ensure_buffer(c, &r->info, &r->info_cap, n0 + n1, sizeof *info, CL_MEM_READ_ONLY,
                            "PSA residual problem info", err)) ||
        (st = ensure_buffer(c, &r->work, &r->work_cap, g0 + g1, sizeof *work, CL_MEM_READ_ONLY,
                            "PSA residual work list", err)) ||
        (st = ensure_buffer(c, &r->trace, &r->trace_cap, F, sizeof(float), CL_MEM_READ_WRITE,
                            "PSA residual problem traces", err)) ||
        (st = ensure_buffer(c, &r->part, &r->part_cap, (n0 + n1) * c->tiles_max, sizeof(cl_ulong), CL_MEM_READ_WRITE,
                            "PSA residual partial minima", err)))
        return st;
    fl->n = 0;
    fl->nchunks = 0;
    r->searched = (uint64_t)(rounds / 2) * n1 + (uint64_t)((rounds - 1) / 2) * n0;
    cl_event up[3] = {NULL, NULL, NULL};
    const struct {
        cl_mem mem;
        size_t bytes;
        const void *from;
        const char *what;
    } w[3] = {{r->in, r->in_bytes, base, "records, hits and traces"},
              {r->info, (n0 + n1) * sizeof *info, info, "problem info"},
              {r->work, (g0 + g1) * sizeof *work, work, "work list"}};
    for (int i = 0; i < 3; i++) {
        cl_int rc = clEnqueueWriteBuffer(c->upq, w[i].mem, CL_FALSE, 0, w[i].bytes, w[i].from, 0, NULL, &up[i]);
        if ((st = tusk_cl_check(rc, err, "clEnqueueWriteBuffer(PSA residual %s, %zu bytes) on %s", w[i].what,
                                w[i].bytes, dev)))
            return st;
        if (events_push(&fl->up_ev, up[i]) != 0) {
            clReleaseEvent(up[i]);
            return tusk_error_set(err, TUSK_ENOMEM, "out of memory (events)");
        }
    }
    if ((st = tusk_cl_check(clFlush(c->upq), err, "clFlush (PSA residual uploads) on %s", dev)))
        return st;
    /* The arguments once; a round changes psa_res_round's round and
     * psa_search's first work entry (its kind's list). */
    cl_uint nwait = 3;
    const cl_uint rec_off = (cl_uint)r->off_rec, hit_off = (cl_uint)r->off_hit, trace_off = (cl_uint)r->off_trace,
                  slot_off = (cl_uint)r->off_slot, nrec = (cl_uint)R, per_arg = (cl_uint)per, rnds = rounds,
                  stride = c->tiles_max;
    const cl_int k_arg = K;
    const double bt0 = c->e->basis_t0;
    cl_kernel rk = c->res_round, sk = c->search;
    const char *rn = "psa_res_round", *sn = "psa_search";
    if ((st = set_arg(c, rk, rn, 0, sizeof(cl_mem), &r->in, err)) ||
        (st = set_arg(c, rk, rn, 1, sizeof rec_off, &rec_off, err)) ||
        (st = set_arg(c, rk, rn, 2, sizeof hit_off, &hit_off, err)) ||
        (st = set_arg(c, rk, rn, 3, sizeof trace_off, &trace_off, err)) ||
        (st = set_arg(c, rk, rn, 4, sizeof slot_off, &slot_off, err)) ||
        (st = set_arg(c, rk, rn, 5, sizeof nrec, &nrec, err)) ||
        (st = set_arg(c, rk, rn, 6, sizeof per_arg, &per_arg, err)) ||
        (st = set_arg(c, rk, rn, 7, sizeof k_arg, &k_arg, err)) ||
        (st = set_arg(c, rk, rn, 9, sizeof rnds, &rnds, err)) ||
        (st = set_arg(c, rk, rn, 10, sizeof(cl_mem), &r->part, err)) ||
        (st = set_arg(c, rk, rn, 11, sizeof stride, &stride, err)) ||
        (st = set_arg(c, rk, rn, 12, sizeof(cl_mem), &c->seg_n, err)) ||
        (st = set_arg(c, rk, rn, 13, sizeof(cl_mem), &r->info, err)) ||
        (st = set_arg(c, rk, rn, 14, sizeof(cl_mem), &r->trace, err)) ||
        (st = set_arg(c, rk, rn, 15, sizeof(cl_mem), &c->part[0].basis, err)) ||
        (st = set_arg(c, rk, rn, 16, sizeof(cl_mem), &c->part[0].offsets, err)) ||
        (st = set_arg(c, rk, rn, 17, sizeof(cl_mem), &c->edge, err)) ||
        (st = set_arg(c, rk, rn, 18, sizeof(cl_mem), &c->pt_at, err)) ||
        (st = set_arg(c, rk, rn, 19, sizeof(cl_mem), &c->core0, err)) ||
        (st = set_arg(c, rk, rn, 20, sizeof bt0, &bt0, err)) ||
        (st = set_arg(c, sk, sn, 0, sizeof(cl_mem), &c->part[0].basis, err)) ||
        (st = set_arg(c, sk, sn, 1, sizeof(cl_mem), &c->part[0].offsets, err)) ||
        (st = set_arg(c, sk, sn, 2, sizeof(cl_mem), &c->seg_n, err)) ||
        (st = set_arg(c, sk, sn, 3, sizeof(cl_mem), &r->work, err)) ||
        (st = set_arg(c, sk, sn, 5, sizeof(cl_mem), &r->info, err)) ||
        (st = set_arg(c, sk, sn, 6, sizeof(cl_mem), &r->trace, err)) ||
        (st = set_arg(c, sk, sn, 7, sizeof stride, &stride, err)) ||
        (st = set_arg(c, sk, sn, 8, sizeof(cl_mem), &r->part, err)))
        return st;
    const size_t groups = R * PSA_RES_LANES;
    for (cl_uint round = 1; round <= rounds; round++) {
        if ((st = set_arg(c, rk, rn, 8, sizeof round, &round, err)) ||
            (st = res_launch(c, fl, rk, rn, groups, PSA_RES_LANES, &nwait, up, err)))
            return st;
        if (round == rounds)
            break;
        const int kd = (int)(round & 1u);
        const cl_uint wbase = (cl_uint)pb[kd][0];
        const size_t gs = (pe[kd][0] - pb[kd][0]) * c->wg;
        if ((st = set_arg(c, sk, sn, 4, sizeof wbase, &wbase, err)) ||
            (st = res_launch(c, fl, sk, sn, gs, c->wg, &nwait, up, err)))
            return st;
    }
    cl_int rc = clEnqueueReadBuffer(tusk_cl_queue(c->cl), r->in, CL_FALSE, r->off_hit, H * sizeof *hit,
                                    base + r->off_hit, 0, NULL, &fl->read);
    if ((st = tusk_cl_check(rc, err, "clEnqueueReadBuffer(PSA residual hits, %zu) on %s", H, dev)))
        return st;
    return tusk_cl_check(clFlush(tusk_cl_queue(c->cl)), err, "clFlush (PSA residual rounds) on %s", dev);
}

static int res_submit(void *ctx, psa_batch_t *b, unsigned rounds, tusk_error_t *err)
{
    psa_cl_t *c = ctx;
    if (!c->res_begun)
        return tusk_error_set(err, TUSK_EINVAL, "psa_cl: the residual's rounds submitted without room made for them");
    c->res_begun = false;
    if (rounds < 2)
        return TUSK_OK;
    flight_t *fl = &c->flight[(c->head + c->flying) % PSA_CL_FLIGHTS];
    fl->batch = b;
    fl->res.on = true;
    fl->res.rounds = rounds;
    return hand_over(c, fl, false, err);
}

static int res_wait(void *ctx, psa_batch_t *b, tusk_error_t *err)
{
    psa_cl_t *c = ctx;
    if (c->flying == 0)
        return tusk_error_set(err, TUSK_EINVAL, "psa_cl: no residual rounds are being searched");
    flight_t *fl = &c->flight[(c->head + c->flying - 1) % PSA_CL_FLIGHTS];
    if (fl->batch != b || !fl->res.on)
        return tusk_error_set(err, TUSK_EINVAL, "psa_cl: the last submission is not that job's residual rounds");
    int st = take_flight(c, fl, b, err);
    if (st)
        return st;
    c->flying--;
    return TUSK_OK;
}

static const struct psa_backend_ext cl_ext = {res_begin, res_submit, res_wait};

/* ---- as a psa_analyse backend --------------------------------------------------- */

static int backend_check(const psa_cl_t *c, const psa_engine_t *e, tusk_error_t *err)
{
    if (e != c->e)
        return tusk_error_set(err, TUSK_EINVAL, "psa_backend_cl: the engine is not the one the device was set up for");
    return TUSK_OK;
}

static int backend_search(void *ctx, const psa_engine_t *e, psa_batch_t *b, tusk_error_t *err)
{
    int st = backend_check(ctx, e, err);
    return st ? st : psa_cl_search(ctx, b, err);
}

static int backend_submit(void *ctx, const psa_engine_t *e, psa_batch_t *b, tusk_error_t *err)
{
    int st = backend_check(ctx, e, err);
    return st ? st : psa_cl_submit(ctx, b, err);
}

static int backend_collect(void *ctx, psa_batch_t *b, tusk_error_t *err)
{
    return psa_cl_collect(ctx, b, err);
}

psa_backend_t psa_backend_cl(psa_cl_t *cl)
{
    return (psa_backend_t){backend_search, cl, false, backend_submit, backend_collect,
                           cl->res_round ? &cl_ext : NULL};
}
