/* check_psa_cl.c - the OpenCL backend of the PSA grid search
 * (tusk/psa_cl.h) against the reference (psa_search_reference, the
 * oracle), on the device TUSK_CL_TEST_DEVICE names (default: any, which is
 * PoCL's CPU device in CI). Skipped (exit 77) only on a host without any
 * OpenCL device.
 *
 * main makes, before the tests fork, a synthetic basis (random traces on
 * grid points, cores rising 0 -> 1; segments of 1, 127, 128, 129 and
 * random numbers of points, so tiles end everywhere) and a small real one
 * (det_basis_generate, 8 mm points) for psa_analyse on simulated records.
 *
 * The rule for agreement (tusk/psa.h): the same best index, or else the
 * reference's FoM at the device's index within PSA_FOM_TOLERANCE
 * (relative) of the reference minimum; and the device's FoM within
 * PSA_FOM_TOLERANCE of the reference's FoM at the device's index.
 *
 * Before that, the records host and kernel share (psa_shared.h) have the
 * same size and field offsets on both sides, the constants the same
 * values and psa_pow_poly the same results where they are exact,
 * measured by a kernel built from the same embedded source. */
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <time.h>
#include <unistd.h>

#include <check.h>

#include "cllayout.h"
#include "setuputil.h"
#include "testutil.h"
#include "tusk/basis.h"
#include "tusk/cl.h"
#include "tusk/crystal.h"
#include "detector/generate.h"
#include "tusk/psa.h"
#include "tusk/psa_cl.h"
#include "tusk/sim.h"
#include "psa_private.h"
#include "psa_shared.h"

#define SAMPLES 32
#define TOL PSA_FOM_TOLERANCE

extern const char tusk_psa_kernel_source[];
extern const unsigned long tusk_psa_kernel_source_size;

static det_basis_t *basis;        /* synthetic */
static char dir[512], real_basis_path[600], array_path[600];

static const char *test_device(void)
{
    const char *d = getenv("TUSK_CL_TEST_DEVICE");
    return d && *d ? d : "any";
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* ---- setup ---------------------------------------------------------------------- */

static void need(bool ok, const char *what)
{
    su_need(ok, "check_psa_cl", what);
}

static unsigned points_of_segment(unsigned s)
{
    switch (s) {
    case 0: return 1;
    case 1: return 128;
    case 2: return 129;
    case 3: return 127;
    case 4: return 300;
    default: return 20 + tu_below(281);
    }
}

/* Random segment traces, a core rising 0 -> 1 (a tanh step), points at
 * grid nodes (i % 20, i / 20, segment). */
static void make_synthetic_basis(void)
{
    det_config_t dc;
    det_config_default(&dc);
    dc.samples = SAMPLES;
    char text[8192];
    need(det_config_format(&dc, text, sizeof text) < sizeof text, "det_config_format");
    const double g = 2.0;
    det_basis_shape_t sh = {PSA_SEGMENTS, PSA_CHANNELS, SAMPLES, 10.0, g, text, "check_psa_cl"};
    tusk_error_t err;
    need(det_basis_new(&basis, &sh, &err) == TUSK_OK, "det_basis_new");
    float tr[PSA_CHANNELS * SAMPLES];
    for (unsigned s = 0; s < PSA_SEGMENTS; s++) {
        unsigned n = points_of_segment(s);
        for (unsigned i = 0; i < n; i++) {
            for (unsigned c = 0; c < PSA_SEGMENTS; c++)
                for (unsigned t = 0; t < SAMPLES; t++)
                    tr[c * SAMPLES + t] = (float)(1.5 * tu_uniform() - 0.4);
            double t0 = 6.0 + 8.0 * tu_uniform(), w = 1.0 + 2.0 * tu_uniform();
            for (unsigned t = 0; t < SAMPLES; t++)
                tr[PSA_CORE * SAMPLES + t] = (float)(0.5 * (1.0 + tanh((t - t0) / w)));
            float pos[3] = {(float)((i % 20 + 0.5) * g), (float)((i / 20 + 0.5) * g), (float)((s + 0.5) * g)};
            need(det_basis_add(basis, s, pos, tr, &err) == TUSK_OK, "det_basis_add");
        }
    }
}

/* A small real basis and a one-crystal array for the simulation. */
static void make_real_basis(void)
{
    snprintf(real_basis_path, sizeof real_basis_path, "%s/basis.tbs", dir);
    su_coarse_basis(real_basis_path, DET_SAMPLE_FLOAT32, "check_psa_cl");
    snprintf(array_path, sizeof array_path, "%s/one.conf", dir);
    su_write_file(array_path, "crystal.0 = 0 0\n", "check_psa_cl");
}

/* ---- helpers ---------------------------------------------------------------------- */

static psa_engine_t *engine_of(double p, enum psa_mask mask, bool include_hit, bool include_core)
{
    psa_config_t cfg;
    psa_config_default(&cfg);
    cfg.p = p;
    cfg.mask = mask;
    cfg.include_hit = include_hit;
    cfg.include_core = include_core;
    psa_engine_t *e = NULL;
    tusk_error_t err;
    ck_assert_msg(psa_engine_new(&e, basis, &cfg, &err) == TUSK_OK, "%s", err.message);
    return e;
}

static psa_cl_t *cl_of(const psa_engine_t *e)
{
    psa_cl_t *cl = NULL;
    tusk_error_t err;
    int rc = psa_cl_new(&cl, e, test_device(), 0, &err);
    ck_assert_msg(rc == TUSK_OK, "psa_cl_new on '%s': %s", test_device(), err.message);
    ck_assert_ptr_nonnull(cl);
    return cl;
}

static psa_batch_t *batch_new(size_t cap)
{
    psa_batch_t *b = NULL;
    tusk_error_t err;
    ck_assert_int_eq(psa_batch_new(&b, SAMPLES, cap, &err), TUSK_OK);
    return b;
}

enum kind { NOISY, RANDOM, PLANTED, ANY_CHANNELS, KINDS };

/* Append a problem of segment s. NOISY: a random point's traces plus noise
 * of a random size; RANDOM: random traces; PLANTED: point *q's traces
 * exactly (*q < 0: a random point; the point is returned); ANY_CHANNELS:
 * a random ascending set of any basis channels (one at least), noisy.
 * Channels from psa_engine_mask with the other hits others_in, or random
 * ones when NULL, except for ANY_CHANNELS. (A problem of no channel is
 * refused by every backend: test_no_channel_refused.) */
static long add_problem_with(const psa_engine_t *e, psa_batch_t *b, unsigned s, enum kind kind, long *planted,
                             const bool *others_in)
{
    const unsigned S = b->samples;
    const size_t N = det_basis_segment_points(basis, s);
    uint8_t ch[PSA_CHANNELS];
    unsigned nch = 0;
    if (kind == ANY_CHANNELS) {
        double frac = tu_below(4) == 0 ? 0.0 : tu_uniform();
        for (unsigned c = 0; c < PSA_CHANNELS; c++)
            if (tu_uniform() < frac)
                ch[nch++] = (uint8_t)c;
        if (nch == 0)
            ch[nch++] = (uint8_t)tu_below(PSA_CHANNELS);
    } else {
        bool others[PSA_SEGMENTS] = {false};
        double frac = kind == PLANTED ? 0.0 : 0.3 * tu_uniform(); /* planted: channels enough to tell points apart */
        for (unsigned t = 0; t < PSA_SEGMENTS; t++)
            others[t] = t != s && tu_uniform() < frac;
        nch = psa_engine_mask(e, s, others_in ? others_in : others, ch, NULL);
    }
    long i = psa_batch_add(b, s);
    ck_assert_int_ge(i, 0);
    b->n_channels[i] = (uint16_t)nch;
    memcpy(b->channel + (size_t)i * PSA_CHANNELS, ch, nch);
    long q = planted && *planted >= 0 ? *planted : (long)tu_below((uint32_t)N);
    if (planted)
        *planted = q;
    double noise = kind == PLANTED ? 0.0 : 0.001 + 0.05 * tu_uniform();
    float tr[SAMPLES];
    for (unsigned j = 0; j < nch; j++) {
        float *m = b->trace + ((size_t)i * PSA_CHANNELS + j) * S;
        psa_engine_trace(e, s, (size_t)q, ch[j], tr); /* the aligned basis the engine searches */
        for (unsigned t = 0; t < S; t++)
            m[t] = kind == RANDOM ? (float)(2.0 * tu_uniform() - 0.5)
                                  : tr[t] + (float)(noise * (2.0 * tu_uniform() - 1.0));
    }
    return i;
}

static long add_problem(const psa_engine_t *e, psa_batch_t *b, unsigned s, enum kind kind, long *planted)
{
    return add_problem_with(e, b, s, kind, planted, NULL);
}

typedef struct agreement {
    size_t problems, index_differs;
    double max_rel_fom;           /* |device FoM - reference FoM at that index| / reference */
    double max_rel_min;           /* where the index differs: (ref FoM at device's - ref min) / ref min */
} agreement_t;

/* Run the device on b, then the reference, and check the rule. */
static agreement_t check_against_reference(psa_cl_t *cl, const psa_engine_t *e, psa_batch_t *b)
{
    tusk_error_t err;
    const size_t n = b->n;
    for (size_t i = 0; i < n; i++) { /* poison */
        b->best[i] = UINT32_MAX;
        b->fom[i] = -1.0f;
    }
    int rc = psa_cl_search(cl, b, &err);
    ck_assert_msg(rc == TUSK_OK, "psa_cl_search: %s", err.message);
    uint32_t *best = malloc((n ? n : 1) * sizeof *best);
    float *fom = malloc((n ? n : 1) * sizeof *fom);
    ck_assert_ptr_nonnull(best);
    ck_assert_ptr_nonnull(fom);
    memcpy(best, b->best, n * sizeof *best);
    memcpy(fom, b->fom, n * sizeof *fom);
    ck_assert_int_eq(psa_search_reference(e, b, &err), TUSK_OK);
    agreement_t a = {n, 0, 0.0, 0.0};
    for (size_t i = 0; i < n; i++) {
        const unsigned s = b->segment[i];
        const size_t N = det_basis_segment_points(basis, s);
        ck_assert_msg(best[i] < N, "problem %zu (segment %u, %zu points): device's best %u", i, s, N, best[i]);
        const float rmin = b->fom[i];
        const float at = psa_fom(e, b, i, best[i]);
        if (isinf(rmin)) { /* every FoM inf or NaN: point 0, inf */
            ck_assert_msg(best[i] == b->best[i] && isinf(fom[i]),
                          "problem %zu: reference (%u, %g), device (%u, %g)", i, b->best[i], rmin, best[i],
                          fom[i]);
            continue;
        }
        double rel = fabs((double)fom[i] - at) / fmax(fabs(at), 1e-30);
        if (rel > a.max_rel_fom)
            a.max_rel_fom = rel;
        ck_assert_msg(fabs((double)fom[i] - at) <= TOL * fabs(at) + 1e-30,
                      "problem %zu (segment %u, %u channels): device FoM %.9g at point %u, the reference's there "
                      "%.9g",
                      i, s, b->n_channels[i], fom[i], best[i], at);
        if (best[i] != b->best[i]) {
            a.index_differs++;
            double d = ((double)at - rmin) / fmax(rmin, 1e-30);
            if (d > a.max_rel_min)
                a.max_rel_min = d;
            ck_assert_msg(at - rmin <= TOL * rmin,
                          "problem %zu (segment %u): device's point %u has FoM %.9g, the reference's best %u has "
                          "%.9g",
                          i, s, best[i], at, b->best[i], rmin);
        }
    }
    free(best);
    free(fom);
    return a;
}

static void print_agreement(const char *what, const psa_cl_t *cl, agreement_t a)
{
    printf("%s on %s: %zu problems, %zu other index (near-ties), FoM max relative difference %.3g, "
           "other-index excess %.3g\n",
           what, psa_cl_describe(cl), a.problems, a.index_differs, a.max_rel_fom, a.max_rel_min);
}

/* ---- the shared definitions, seen by the kernel ------------------------------------ */

#define FIELDS(X)                                                                                                     \
    X(psa_dev_problem_t, trace_at) X(psa_dev_problem_t, mask_lo) X(psa_dev_problem_t, mask_hi)                      \
    X(psa_dev_problem_t, segment) X(psa_dev_work_t, segment) X(psa_dev_work_t, tile) X(psa_dev_work_t, first)        \
    X(psa_dev_work_t, count) X(psa_dev_result_t, best) X(psa_dev_result_t, fom_bits)                               \
    X(psa_dev_res_record_t, t0) X(psa_dev_res_record_t, inter) X(psa_dev_res_record_t, first)                      \
    X(psa_dev_res_record_t, n) X(psa_dev_res_record_t, n_samples) X(psa_dev_res_hit_t, at)                         \
    X(psa_dev_res_hit_t, placed) X(psa_dev_res_hit_t, record) X(psa_dev_res_hit_t, segment)                        \
    X(psa_dev_res_hit_t, energy) X(psa_dev_res_hit_t, inv_energy) X(psa_dev_res_hit_t, best)                       \
    X(psa_dev_res_hit_t, fom_bits) X(psa_dev_res_hit_t, mask_lo) X(psa_dev_res_hit_t, mask_hi)                     \
    X(psa_dev_res_hit_t, trace_at) X(psa_dev_res_hit_t, shift)
#define RECORDS(X)                                                                                                    \
    X(psa_dev_problem_t) X(psa_dev_work_t) X(psa_dev_result_t) X(psa_dev_res_record_t) X(psa_dev_res_hit_t)
/* The constants, and the local memory's size at a few shapes (an odd
 * number of trace floats among them). */
#define CONSTANTS(X)                                                                                                  \
    X(PSA_POW_POWR) X(PSA_POW_NATIVE) X(PSA_POW_SQUARE) X(PSA_POW_ABS) X(PSA_POW_POLY) X(PSA_POW_KINDS)              \
    X(PSA_PG_MAX) X(PSA_SCRATCH_WORDS(8, 60, 128)) X(PSA_LOCAL_BYTES(8, 60, 128)) X(PSA_LOCAL_BYTES(3, 257, 4))     \
    X(PSA_LOCAL_BYTES(32, 256, 1)) X(PSA_LOCAL_BYTES(1, 1, 1024)) X(PSA_RES_LANES)
/* psa_pow_poly where it is exact whatever the device's rounding (a power
 * of two to a power that leaves a power of two; 0, tiny, NaN, infinite
 * and overflowing |d|): d, p and |d|^p. */
#define POW_EXACT(X)                                                                                                  \
    X(1.0f, 0.3f, 1.0f) X(4.0f, 0.5f, 2.0f) X(-16.0f, 0.25f, 2.0f) X(0.25f, 1.5f, 0.125f) X(0.0f, 0.3f, 0.0f)      \
    X(-0.0f, 0.3f, 0.0f) X(1e-31f, 0.3f, 0.0f) X(INFINITY, 0.3f, INFINITY) X(-INFINITY, 0.3f, INFINITY)           \
    X(NAN, 0.3f, INFINITY) X(3e38f, 1.5f, INFINITY)

static const char layout_kernel[] =
    "\n#line 1 \"check_psa_cl.c (layout kernel)\"\n"
    "__kernel void psa_layout(__global uint *out)\n"
    "{\n"
    "    uint k = 0;\n"
#define DEV_POW(d, p, want) "    out[k++] = as_uint(psa_pow_poly(" #d ", " #p "));\n"
    RECORDS(TU_DEV_SIZE) FIELDS(TU_DEV_FIELD) CONSTANTS(TU_DEV_CONST) POW_EXACT(DEV_POW)
    "}\n";

static size_t host_layout(uint32_t *out)
{
    size_t k = 0;
#define HOST_POW(d, p, want) out[k++] = tusk_f32_bits(psa_pow_poly(d, p));
    RECORDS(TU_HOST_SIZE) FIELDS(TU_HOST_FIELD) CONSTANTS(TU_HOST_CONST) POW_EXACT(HOST_POW)
    return k;
}

START_TEST(test_shared_definitions_agree)
{
    tusk_cl_t *cl = NULL;
    tusk_error_t err;
    tusk_cl_config_t cfg = {test_device(), 0, NULL, NULL, true};
    ck_assert_msg(tusk_cl_new(&cl, &cfg, &err) == TUSK_OK, "%s", err.message);
    uint32_t host[TU_LAYOUT_MAX];
    const size_t n = host_layout(host);
    /* every power function: the records and constants must not depend on it */
    for (unsigned pw = 0; pw < PSA_POW_KINDS; pw++) {
        char opt[256], what[64];
        snprintf(opt, sizeof opt, "-DPSA_S=%d -DPSA_WG=64 -DPSA_PG=8 -DPSA_P=0x1.333334p-2f -DPSA_POW=%u", SAMPLES,
                 pw);
        snprintf(what, sizeof what, "psa.cl + layout, PSA_POW %u", pw);
        tu_cl_layout_check(cl, tusk_psa_kernel_source, (size_t)tusk_psa_kernel_source_size, layout_kernel,
                           "psa_layout", opt, host, n, what);
    }
    tusk_cl_destroy(&cl);
    /* what the exact powers are, so that a wrong formula on both sides fails too */
#define POW_CHECK(d, p, want)                                                                                        \
    ck_assert_msg(tusk_f32_bits(psa_pow_poly(d, p)) == tusk_f32_bits(want), "psa_pow_poly(%g, %g) = %g, not %g",   \
                  (double)(d), (double)(p), (double)psa_pow_poly(d, p), (double)(want));
    POW_EXACT(POW_CHECK)
}
END_TEST

/* ---- tests ---------------------------------------------------------------------- */

START_TEST(test_random_problems_agree)
{
    psa_engine_t *e = engine_of(0.3, PSA_MASK_NEIGHBOURS, false, false);
    psa_cl_t *cl = cl_of(e);
    psa_batch_t *b = batch_new(16);
    for (int i = 0; i < 800; i++)
        add_problem(e, b, tu_below(PSA_SEGMENTS), (enum kind)tu_below(KINDS), NULL);
    agreement_t a = check_against_reference(cl, e, b);
    print_agreement("random problems, p = 0.3", cl, a);
    /* Near-ties are rare: random traces have well-separated FoMs. */
    ck_assert_uint_le(a.index_differs, 8);
    psa_batch_destroy(&b);
    psa_cl_destroy(&cl);
    ck_assert_ptr_null(cl);
    psa_engine_destroy(&e);
}
END_TEST

/* A problem whose traces are exactly point q's: q itself, FoM 0 (every
 * other point has random, different traces, so no tie). Points at the
 * tile edges and the last point of every segment. */
START_TEST(test_planted_points_exact)
{
    psa_engine_t *e = engine_of(0.3, PSA_MASK_NEIGHBOURS, false, false);
    psa_cl_t *cl = cl_of(e);
    psa_batch_t *b = batch_new(16);
    long want[PSA_SEGMENTS * 6];
    size_t k = 0;
    for (unsigned s = 0; s < PSA_SEGMENTS; s++) {
        const long N = (long)det_basis_segment_points(basis, s);
        const long qs[] = {0, N - 1, 127, 128, 129, -1};
        for (size_t j = 0; j < sizeof qs / sizeof qs[0]; j++) {
            long q = qs[j];
            if (q >= N)
                continue;
            add_problem(e, b, s, PLANTED, &q);
            want[k++] = q;
        }
    }
    tusk_error_t err;
    ck_assert_int_eq(psa_cl_search(cl, b, &err), TUSK_OK);
    for (size_t i = 0; i < b->n; i++) {
        ck_assert_msg(b->best[i] == (uint32_t)want[i], "problem %zu (segment %u): planted %ld, found %u (FoM %g)", i,
                      b->segment[i], want[i], b->best[i], b->fom[i]);
        ck_assert_msg(b->fom[i] == 0.0f, "problem %zu: FoM %g at the planted point", i, b->fom[i]);
    }
    agreement_t a = check_against_reference(cl, e, b);
    ck_assert_uint_eq(a.index_differs, 0);
    psa_batch_destroy(&b);
    psa_cl_destroy(&cl);
    psa_engine_destroy(&e);
}
END_TEST

START_TEST(test_batch_of_one_and_empty)
{
    psa_engine_t *e = engine_of(0.3, PSA_MASK_NEIGHBOURS, false, false);
    psa_cl_t *cl = cl_of(e);
    psa_batch_t *b = batch_new(1);
    tusk_error_t err;
    psa_cl_stats_t st0, st1;
    /* Empty: nothing launched, nothing written. */
    psa_cl_stats(cl, &st0);
    ck_assert_int_eq(psa_cl_search(cl, b, &err), TUSK_OK);
    psa_cl_stats(cl, &st1);
    ck_assert_uint_eq(st1.launches, st0.launches);
    ck_assert_uint_eq(st1.problems, 0);
    /* One problem, a few times over (each segment kind). */
    for (int r = 0; r < 6; r++) {
        psa_batch_clear(b);
        long q = -1;
        unsigned s = r < 5 ? (unsigned)r : tu_below(PSA_SEGMENTS);
        add_problem(e, b, s, r % 2 ? NOISY : PLANTED, &q);
        agreement_t a = check_against_reference(cl, e, b);
        ck_assert_uint_eq(a.index_differs, 0);
        if (r % 2 == 0)
            ck_assert_uint_eq(b->best[0], (uint32_t)q);
    }
    psa_cl_stats(cl, &st1);
    ck_assert_uint_eq(st1.problems, 6);
    ck_assert_uint_ge(st1.launches, 12); /* a search and a reduction each */
    /* Empty again after use. */
    psa_batch_clear(b);
    ck_assert_int_eq(psa_cl_search(cl, b, &err), TUSK_OK);
    psa_cl_stats(cl, &st0);
    ck_assert_uint_eq(st0.launches, st1.launches);
    psa_batch_destroy(&b);
    psa_cl_destroy(&cl);
    psa_engine_destroy(&e);
}
END_TEST

/* Several thousand problems over every segment: several chunks, both
 * buffer sets, the uploads overlapping the kernels. */
START_TEST(test_big_batch_all_segments)
{
    psa_engine_t *e = engine_of(0.3, PSA_MASK_NEIGHBOURS, false, false);
    psa_cl_t *cl = cl_of(e);
    psa_batch_t *b = batch_new(64);
    const size_t n = 6000;
    for (size_t i = 0; i < n; i++)
        add_problem(e, b, i < PSA_SEGMENTS ? (unsigned)i : tu_below(PSA_SEGMENTS),
                    tu_below(3) ? NOISY : (enum kind)tu_below(KINDS), NULL);
    psa_cl_stats_t st0, st1;
    psa_cl_stats(cl, &st0);
    double t0 = now_ms();
    tusk_error_t err;
    ck_assert_int_eq(psa_cl_search(cl, b, &err), TUSK_OK);
    double dev_ms = now_ms() - t0;
    psa_cl_stats(cl, &st1);
    ck_assert_uint_eq(st1.problems - st0.problems, n);
    ck_assert_uint_ge(st1.launches - st0.launches, 6); /* 6000 problems: 3 chunks at least */
    ck_assert(st1.kernel_ms > st0.kernel_ms);
    ck_assert(st1.upload_ms >= st0.upload_ms && st1.download_ms >= st0.download_ms);
    t0 = now_ms();
    agreement_t a = check_against_reference(cl, e, b);
    double both_ms = now_ms() - t0;
    print_agreement("6000 problems", cl, a);
    printf("6000 problems: device %.1f ms (kernels %.1f, uploads %.2f, download %.2f ms), reference about %.0f ms\n",
           dev_ms, st1.kernel_ms - st0.kernel_ms, st1.upload_ms - st0.upload_ms, st1.download_ms - st0.download_ms,
           both_ms - dev_ms);
    ck_assert_uint_le(a.index_differs, 30);
    psa_batch_destroy(&b);
    psa_cl_destroy(&cl);
    psa_engine_destroy(&e);
}
END_TEST

/* Small chunks ($TUSK_PSA_CL_CHUNK): many chunks through two buffer sets;
 * batches growing and shrinking on one psa_cl_t. */
START_TEST(test_chunks_and_growth)
{
    setenv("TUSK_PSA_CL_CHUNK", "97", 1);
    psa_engine_t *e = engine_of(0.3, PSA_MASK_SQUARE, false, false);
    psa_cl_t *cl = cl_of(e);
    unsetenv("TUSK_PSA_CL_CHUNK");
    const size_t sizes[] = {3, 250, 1500, 40, 2100, 1};
    for (size_t r = 0; r < sizeof sizes / sizeof sizes[0]; r++) {
        psa_batch_t *b = batch_new(1);
        for (size_t i = 0; i < sizes[r]; i++)
            add_problem(e, b, tu_below(PSA_SEGMENTS), (enum kind)tu_below(KINDS), NULL);
        psa_cl_stats_t st0, st1;
        psa_cl_stats(cl, &st0);
        agreement_t a = check_against_reference(cl, e, b);
        psa_cl_stats(cl, &st1);
        ck_assert_uint_ge(st1.launches - st0.launches, 2 * ((sizes[r] + 96) / 97));
        ck_assert_uint_le(a.index_differs, 1 + sizes[r] / 200);
        psa_batch_destroy(&b);
    }
    psa_cl_destroy(&cl);
    psa_engine_destroy(&e);
}
END_TEST

/* Batches in flight (psa_cl_submit / psa_cl_collect): up to
 * PSA_JOBS_IN_FLIGHT at a time, of random sizes, one empty, in small
 * chunks, so that the two buffer sets pass from one batch to the next and
 * grow while other batches' kernels may run: each batch gets, bit for
 * bit, what psa_cl_search gives it alone. Refused: one batch more, the
 * same batch twice, collecting out of order or with none in flight,
 * psa_cl_search while PSA_JOBS_IN_FLIGHT are (behind fewer it gives the
 * same as alone, and the others stay in flight). */
START_TEST(test_submit_collect)
{
    setenv("TUSK_PSA_CL_CHUNK", "61", 1);
    psa_engine_t *e = engine_of(0.3, PSA_MASK_NEIGHBOURS, false, false);
    psa_cl_t *cl = cl_of(e);
    unsetenv("TUSK_PSA_CL_CHUNK");
    tusk_error_t err;
    enum { F = PSA_JOBS_IN_FLIGHT, B = F + 3 };
    uint32_t lo[B], span[B];
    for (int k = 0; k < B; k++) {
        lo[k] = k == 2 ? 0 : 1 + 100 * (uint32_t)tu_below(3);
        span[k] = k == 2 ? 1 : 100 + (uint32_t)tu_below(600); /* batch 2: empty */
    }
    psa_batch_t *b[B];
    uint32_t *best[B];
    float *fom[B];
    size_t total = 0;
    for (int k = 0; k < B; k++) {
        b[k] = batch_new(1);
        size_t n = lo[k] + tu_below(span[k]);
        for (size_t i = 0; i < n; i++)
            add_problem(e, b[k], tu_below(PSA_SEGMENTS), (enum kind)tu_below(KINDS), NULL);
        total += n;
        ck_assert_msg(psa_cl_search(cl, b[k], &err) == TUSK_OK, "%s", err.message);
        best[k] = malloc((n ? n : 1) * sizeof *best[k]);
        fom[k] = malloc((n ? n : 1) * sizeof *fom[k]);
        ck_assert(best[k] && fom[k]);
        memcpy(best[k], b[k]->best, n * sizeof *best[k]);
        memcpy(fom[k], b[k]->fom, n * sizeof *fom[k]);
        for (size_t i = 0; i < n; i++) {
            b[k]->best[i] = UINT32_MAX;
            b[k]->fom[i] = NAN;
        }
    }
    psa_cl_stats_t st0, st1;
    psa_cl_stats(cl, &st0);
    ck_assert_int_eq(psa_cl_collect(cl, b[0], &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "no batch is being searched");
    ck_assert_msg(psa_cl_submit(cl, b[0], &err) == TUSK_OK, "%s", err.message);
    ck_assert_int_eq(psa_cl_submit(cl, b[0], &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "being searched already");
    for (int k = 1; k < F; k++)
        ck_assert_msg(psa_cl_submit(cl, b[k], &err) == TUSK_OK, "%s", err.message);
    ck_assert_int_eq(psa_cl_submit(cl, b[F], &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "collect one first");
    ck_assert_int_eq(psa_cl_collect(cl, b[1], &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "not the oldest");
    ck_assert_int_eq(psa_cl_search(cl, b[F], &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "collect one first");
    /* The oldest. */
    ck_assert_msg(psa_cl_collect(cl, b[0], &err) == TUSK_OK, "%s", err.message);
    /* A search behind the ones in flight, which stay in flight. */
    ck_assert_msg(psa_cl_search(cl, b[0], &err) == TUSK_OK, "%s", err.message);
    for (size_t i = 0; i < b[0]->n; i++)
        ck_assert_msg(b[0]->best[i] == best[0][i] && memcmp(&b[0]->fom[i], &fom[0][i], sizeof fom[0][i]) == 0,
                      "search behind a batch in flight: problem %zu", i);
    ck_assert_int_eq(psa_cl_collect(cl, b[0], &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "not the oldest");
    total += b[0]->n; /* searched twice */
    /* In order, a new one submitted after each collect while there are. */
    for (int k = 1; k < B; k++) {
        if (k + F - 1 < B)
            ck_assert_msg(psa_cl_submit(cl, b[k + F - 1], &err) == TUSK_OK, "%s", err.message);
        ck_assert_msg(psa_cl_collect(cl, b[k], &err) == TUSK_OK, "%s", err.message);
    }
    psa_cl_stats(cl, &st1);
    ck_assert_uint_eq(st1.problems - st0.problems, total);
    for (int k = 0; k < B; k++) {
        ck_assert_msg(memcmp(best[k], b[k]->best, b[k]->n * sizeof *best[k]) == 0 &&
                          memcmp(fom[k], b[k]->fom, b[k]->n * sizeof *fom[k]) == 0,
                      "batch %d (%zu problems): other results in flight than alone", k, b[k]->n);
        free(best[k]);
        free(fom[k]);
        psa_batch_destroy(&b[k]);
    }
    printf("%zu problems in %d batches, %d in flight: the results of each alone\n", total, B, F);
    /* Again usable for a plain search, and destroyed with a batch in flight. */
    psa_batch_t *one = batch_new(1);
    add_problem(e, one, 3, PLANTED, NULL);
    ck_assert_msg(psa_cl_search(cl, one, &err) == TUSK_OK, "%s", err.message);
    ck_assert_msg(psa_cl_submit(cl, one, &err) == TUSK_OK, "%s", err.message);
    psa_cl_destroy(&cl);
    psa_batch_destroy(&one);
    psa_engine_destroy(&e);
}
END_TEST

/* A basis split over several device buffers (as when it exceeds the
 * device's largest allocation): a search launch per buffer. */
START_TEST(test_split_basis)
{
    setenv("TUSK_PSA_CL_PART_BYTES", "2000000", 1);
    setenv("TUSK_PSA_CL_CHUNK", "300", 1);
    psa_engine_t *e = engine_of(0.3, PSA_MASK_NEIGHBOURS, false, true);
    psa_cl_t *cl = cl_of(e);
    unsetenv("TUSK_PSA_CL_PART_BYTES");
    unsetenv("TUSK_PSA_CL_CHUNK");
    psa_batch_t *b = batch_new(16);
    for (int i = 0; i < 1000; i++)
        add_problem(e, b, i < PSA_SEGMENTS ? (unsigned)i : tu_below(PSA_SEGMENTS), (enum kind)tu_below(KINDS), NULL);
    long q = 299;
    add_problem(e, b, 4, PLANTED, &q);
    psa_cl_stats_t st0, st1;
    psa_cl_stats(cl, &st0);
    agreement_t a = check_against_reference(cl, e, b);
    psa_cl_stats(cl, &st1);
    /* 4 chunks of about 10 segments each; a segment's block is 0.1 to
     * 1.4 MB, so a chunk's segments lie in several buffers: more than a
     * search and a reduction per chunk. */
    ck_assert_uint_ge(st1.launches - st0.launches, 4 * 3);
    ck_assert_uint_le(a.index_differs, 3);
    ck_assert_uint_eq(b->best[b->n - 1], 299);
    psa_batch_destroy(&b);
    psa_cl_destroy(&cl);
    psa_engine_destroy(&e);
}
END_TEST

/* Candidate lists are the adaptive mode's: refused, nothing changed. An
 * all-empty candidate list is a full search. */
START_TEST(test_candidates_refused)
{
    psa_engine_t *e = engine_of(0.3, PSA_MASK_NEIGHBOURS, false, false);
    psa_cl_t *cl = cl_of(e);
    psa_batch_t *b = batch_new(8);
    for (int i = 0; i < 5; i++)
        add_problem(e, b, tu_below(PSA_SEGMENTS), NOISY, NULL);
    b->cand_cap = 16;
    b->cand = calloc(b->cand_cap, sizeof *b->cand);
    ck_assert_ptr_nonnull(b->cand);
    for (size_t i = 0; i <= b->n; i++)
        b->cand_start[i] = 0;
    /* Empty ranges: searched in full. */
    agreement_t a = check_against_reference(cl, e, b);
    ck_assert_uint_eq(a.index_differs, 0);
    /* Problem 3 gets a list of 2 points. */
    b->cand_start[4] = b->cand_start[5] = 2;
    for (size_t i = 0; i < b->n; i++) {
        b->best[i] = 77;
        b->fom[i] = 7.0f;
    }
    tusk_error_t err;
    ck_assert_int_eq(psa_cl_search(cl, b, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "candidate");
    ck_assert_ptr_nonnull(strstr(err.message, "problem 3"));
    for (size_t i = 0; i < b->n; i++)
        ck_assert(b->best[i] == 77 && b->fom[i] == 7.0f);
    /* And so psa_analyse's backend says it takes none. */
    ck_assert(!psa_backend_cl(cl).candidates);
    psa_batch_destroy(&b);
    psa_cl_destroy(&cl);
    psa_engine_destroy(&e);
}
END_TEST

START_TEST(test_bad_batches_refused)
{
    psa_engine_t *e = engine_of(0.3, PSA_MASK_NEIGHBOURS, false, false);
    psa_cl_t *cl = cl_of(e);
    tusk_error_t err;
    /* Other samples than the basis'. */
    psa_batch_t *b = NULL;
    ck_assert_int_eq(psa_batch_new(&b, SAMPLES + 1, 4, &err), TUSK_OK);
    psa_batch_add(b, 5);
    ck_assert_int_eq(psa_cl_search(cl, b, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "samples");
    psa_batch_destroy(&b);
    /* Channels not ascending, a channel past the core, a bad segment. */
    b = batch_new(4);
    add_problem(e, b, 7, NOISY, NULL);
    long i = add_problem(e, b, 9, PLANTED, NULL);
    ck_assert_uint_ge(b->n_channels[i], 2);
    uint8_t *ch = b->channel + (size_t)i * PSA_CHANNELS;
    uint8_t keep = ch[1];
    ch[1] = ch[0];
    ck_assert_int_eq(psa_cl_search(cl, b, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "problem 1");
    ch[1] = keep;
    keep = ch[b->n_channels[i] - 1];
    ch[b->n_channels[i] - 1] = PSA_CHANNELS;
    ck_assert_int_eq(psa_cl_search(cl, b, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "channel 37");
    ch[b->n_channels[i] - 1] = keep;
    b->segment[0] = PSA_SEGMENTS;
    ck_assert_int_eq(psa_cl_search(cl, b, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "segment 36");
    b->segment[0] = 7;
    agreement_t a = check_against_reference(cl, e, b);
    ck_assert_uint_eq(a.index_differs, 0);
    psa_batch_destroy(&b);
    psa_cl_destroy(&cl);
    psa_engine_destroy(&e);
}
END_TEST

/* NaN and inf in a trace make every FoM NaN or inf: the reference keeps
 * point 0 with inf, and so must the device. Problems 4 - 6 are the seeds
 * that once failed (TUSK_TEST_SEED=1795531260520126508: segment 5 with
 * every mask segment another hit; 1795700000000000654: segment 4 so): the
 * mask left no channel and the test wrote before the problem's traces; it
 * is now the hit's own trace. */
START_TEST(test_nan_and_inf_traces)
{
    psa_engine_t *e = engine_of(0.3, PSA_MASK_NEIGHBOURS, false, false);
    psa_cl_t *cl = cl_of(e);
    psa_batch_t *b = batch_new(8);
    const float bad[] = {NAN, INFINITY, -INFINITY, INFINITY, NAN, NAN};
    static const struct {
        unsigned s;
        int others[16]; /* -1 ends */
    } seeds[] = {
        {5, {0, 4, 6, 10, 11, 12, 15, 16, 19, 20, 22, 24, 35, -1}}, /* 1795531260520126508 */
        {4, {3, 5, 6, 7, 8, 10, 16, 19, 31, 34, -1}},               /* 1795700000000000654 */
        {4, {3, 5, 10, 34, -1}},                                    /* exactly its mask */
    };
    for (int k = 0; k < 6; k++) {
        long i;
        if (k < 3) {
            i = add_problem(e, b, 4 + (unsigned)k, NOISY, NULL);
        } else {
            bool others[PSA_SEGMENTS] = {false};
            for (int j = 0; seeds[k - 3].others[j] >= 0; j++)
                others[seeds[k - 3].others[j]] = true;
            i = add_problem_with(e, b, seeds[k - 3].s, NOISY, NULL, others);
            ck_assert_uint_eq(b->n_channels[i], 1); /* the own trace */
            ck_assert_uint_eq(b->channel[(size_t)i * PSA_CHANNELS], seeds[k - 3].s);
        }
        ck_assert_uint_ge(b->n_channels[i], 1);
        b->trace[((size_t)i * PSA_CHANNELS + b->n_channels[i] - 1) * SAMPLES + 3] = bad[k];
    }
    add_problem(e, b, 4, NOISY, NULL);
    check_against_reference(cl, e, b);
    for (int k = 0; k < 6; k++)
        ck_assert_msg(b->best[k] == 0 && isinf(b->fom[k]), "problem %d: point %u, FoM %g", k, b->best[k], b->fom[k]);
    ck_assert(isfinite(b->fom[6]));
    psa_batch_destroy(&b);
    psa_cl_destroy(&cl);
    psa_engine_destroy(&e);
}
END_TEST

/* Every mask segment of the hit another hit (tusk/psa.h): the problem is
 * the hit's own trace, for every segment and each mask; the device finds
 * the reference's point, and a planted point's own trace (random in this
 * basis, so no other point has it) finds that point with FoM 0. */
START_TEST(test_crowded_hit_own_trace)
{
    const enum psa_mask masks[] = {PSA_MASK_NEIGHBOURS, PSA_MASK_SQUARE};
    for (size_t m = 0; m < 2; m++) {
        psa_engine_t *e = engine_of(0.3, masks[m], false, m == 1);
        psa_cl_t *cl = cl_of(e);
        psa_batch_t *b = batch_new(PSA_SEGMENTS * 2);
        long want[PSA_SEGMENTS];
        for (unsigned s = 0; s < PSA_SEGMENTS; s++) {
            uint8_t ch[PSA_CHANNELS];
            bool own = true, others[PSA_SEGMENTS] = {false};
            unsigned n = psa_engine_mask(e, s, NULL, ch, &own);
            ck_assert(!own);
            for (unsigned j = 0; j < n; j++)
                if (ch[j] < PSA_SEGMENTS)
                    others[ch[j]] = true;
            n = psa_engine_mask(e, s, others, ch, &own);
            ck_assert(own);
            ck_assert_uint_eq(n, m == 1 ? 2 : 1); /* s, and the core with include_core */
            ck_assert_uint_eq(ch[0], s);
            want[s] = -1;
            long i = add_problem_with(e, b, s, PLANTED, &want[s], others);
            ck_assert_uint_eq(b->n_channels[i], n);
            add_problem_with(e, b, s, NOISY, NULL, others);
        }
        agreement_t a = check_against_reference(cl, e, b);
        ck_assert_uint_le(a.index_differs, 2);
        for (unsigned s = 0; s < PSA_SEGMENTS; s++)
            ck_assert_msg(b->best[2 * s] == (uint32_t)want[s] && b->fom[2 * s] == 0.0f,
                          "segment %u: planted %ld, found %u with FoM %g", s, want[s],
                          b->best[2 * s], b->fom[2 * s]);
        psa_batch_destroy(&b);
        psa_cl_destroy(&cl);
        psa_engine_destroy(&e);
    }
}
END_TEST

/* A problem of no channel would match every point with FoM 0: every
 * backend refuses the batch, naming the problem, before writing a result. */
START_TEST(test_no_channel_refused)
{
    psa_engine_t *e = engine_of(0.3, PSA_MASK_NEIGHBOURS, false, false);
    psa_cl_t *cl = cl_of(e);
    psa_batch_t *b = batch_new(4);
    add_problem(e, b, 7, NOISY, NULL);
    long i = add_problem(e, b, 9, NOISY, NULL);
    add_problem(e, b, 11, NOISY, NULL);
    b->n_channels[i] = 0;
    for (int backend = 0; backend < 3; backend++) {
        for (size_t k = 0; k < b->n; k++) {
            b->best[k] = 77;
            b->fom[k] = 7.0f;
        }
        tusk_error_t err;
        int rc = backend == 0 ? psa_cl_search(cl, b, &err)
                 : backend == 1 ? psa_search_reference(e, b, &err)
                                : psa_search_fast(e, b, 1, &err);
        ck_assert_int_eq(rc, TUSK_EINVAL);
        tu_assert_error(&err, TUSK_EINVAL, "problem 1 (segment 9) has no channel");
        for (size_t k = 0; k < b->n; k++)
            ck_assert(b->best[k] == 77 && b->fom[k] == 7.0f);
    }
    psa_batch_destroy(&b);
    psa_cl_destroy(&cl);
    psa_engine_destroy(&e);
}
END_TEST

/* Other exponents (p = 1 and 2 take exact forms), every channel with the
 * hit segment and the core (mask bits past 31), each power function. The
 * one in use has passed psa_cl_new's check (its terms within 2e-6 of the
 * exact |d|^p), falling back to powr where the chosen one did not (the
 * polynomials at p = 3.9 on some devices). */
START_TEST(test_exponents_and_masks)
{
    static const struct {
        double p;
        enum psa_mask mask;
        bool hit, core;
        const char *pow;
        const char *needle;
    } cases[] = {
        {1.0, PSA_MASK_ALL, true, true, NULL, "fabs"},
        {2.0, PSA_MASK_NEIGHBOURS, false, true, NULL, "d*d"},
        {0.5, PSA_MASK_ALL, true, true, "native", "native_powr"},
        {1.7, PSA_MASK_SQUARE, false, true, "powr", "powr"},
        {0.3, PSA_MASK_NEIGHBOURS, true, false, "native", "native_powr"},
        {0.3, PSA_MASK_ALL, false, false, "poly", "polynomial"},
        {0.3, PSA_MASK_SQUARE, false, true, "powr", "powr"},
        {3.9, PSA_MASK_NEIGHBOURS, false, false, "poly", "pow"},
        {0.3, PSA_MASK_NEIGHBOURS, false, false, NULL, "pow"}, /* the device's default */
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        if (cases[c].pow)
            setenv("TUSK_PSA_CL_POW", cases[c].pow, 1);
        else
            unsetenv("TUSK_PSA_CL_POW");
        psa_engine_t *e = engine_of(cases[c].p, cases[c].mask, cases[c].hit, cases[c].core);
        psa_cl_t *cl = cl_of(e);
        const char *d = psa_cl_describe(cl);
        ck_assert_msg(strstr(d, cases[c].needle), "%s", d);
        const char *within = strstr(d, "terms within ");
        ck_assert_msg(within && strtod(within + 13, NULL) <= 2e-6, "%s", d);
        psa_batch_t *b = batch_new(16);
        for (int i = 0; i < 300; i++)
            add_problem(e, b, tu_below(PSA_SEGMENTS), (enum kind)tu_below(KINDS), NULL);
        long q = 17;
        add_problem(e, b, 4, PLANTED, &q);
        agreement_t a = check_against_reference(cl, e, b);
        char what[64];
        snprintf(what, sizeof what, "p = %g", cases[c].p);
        print_agreement(what, cl, a);
        ck_assert_uint_le(a.index_differs, 3);
        ck_assert_uint_eq(b->best[b->n - 1], 17);
        ck_assert(b->fom[b->n - 1] == 0.0f);
        psa_batch_destroy(&b);
        psa_cl_destroy(&cl);
        psa_engine_destroy(&e);
    }
    unsetenv("TUSK_PSA_CL_POW");
}
END_TEST

START_TEST(test_setup_errors)
{
    psa_engine_t *e = engine_of(0.3, PSA_MASK_NEIGHBOURS, false, false);
    psa_cl_t *cl = (psa_cl_t *)&cl;
    tusk_error_t err;
    ck_assert_int_eq(psa_cl_new(&cl, e, "no-such-device-zq", 0, &err), TUSK_ENODEV);
    ck_assert_ptr_null(cl);
    tu_assert_error(&err, TUSK_ENODEV, "no-such-device-zq");
    setenv("TUSK_PSA_CL_POW", "fast", 1);
    ck_assert_int_eq(psa_cl_new(&cl, e, test_device(), 0, &err), TUSK_EPARAM);
    tu_assert_error(&err, TUSK_EPARAM, "TUSK_PSA_CL_POW");
    unsetenv("TUSK_PSA_CL_POW");
    setenv("TUSK_PSA_CL_PG", "0", 1);
    ck_assert_int_eq(psa_cl_new(&cl, e, test_device(), 0, &err), TUSK_EPARAM);
    tu_assert_error(&err, TUSK_EPARAM, "TUSK_PSA_CL_PG");
    unsetenv("TUSK_PSA_CL_PG");
    /* Odd work-group shapes still agree: 1 problem, 32 points a group. */
    setenv("TUSK_PSA_CL_PG", "1", 1);
    setenv("TUSK_PSA_CL_WG", "32", 1);
    cl = cl_of(e);
    ck_assert_ptr_nonnull(strstr(psa_cl_describe(cl), "32 points x 1 problems"));
    psa_batch_t *b = batch_new(16);
    for (int i = 0; i < 200; i++)
        add_problem(e, b, tu_below(PSA_SEGMENTS), (enum kind)tu_below(KINDS), NULL);
    agreement_t a = check_against_reference(cl, e, b);
    ck_assert_uint_le(a.index_differs, 2);
    psa_batch_destroy(&b);
    psa_cl_destroy(&cl);
    psa_cl_destroy(&cl); /* twice: a no-op */
    psa_cl_destroy(NULL);
    unsetenv("TUSK_PSA_CL_PG");
    unsetenv("TUSK_PSA_CL_WG");
    psa_engine_destroy(&e);
}
END_TEST

/* psa_analyse with the device's backend and with the reference, on
 * records of the simulation (the real basis): the same hits. */
START_TEST(test_analyse_matches_reference)
{
    tusk_error_t err;
    det_basis_t *rb = NULL;
    ck_assert_msg(det_basis_load(&rb, real_basis_path, NULL, &err) == TUSK_OK, "%s", err.message);
    tusk_params_t *p = tusk_params_new();
    char text[2048];
    snprintf(text, sizeof text, "basis = %s\narray = %s\nsource = co60\nevents = 2000000\nseed = %llu\n",
             real_basis_path, array_path, (unsigned long long)tu_rand());
    ck_assert_msg(tusk_params_parse(p, text, strlen(text), "test", &err) == TUSK_OK, "%s", err.message);
    sim_t *sim = NULL;
    ck_assert_msg(sim_new(&sim, p, "test", &err) == TUSK_OK, "%s", err.message);
    const size_t want = 300; /* about 500 problems: the traces packed on the engine's threads */
    adf_crystal_t *rec = malloc(want * sizeof *rec);
    ck_assert_ptr_nonnull(rec);
    size_t n = 0;
    const sim_event_t *ev;
    while (n < want && sim_next(sim, &ev, &err) == TUSK_OK && ev)
        for (size_t i = 0; i < ev->n_crystals && n < want; i++)
            rec[n++] = ev->crystal[i];
    ck_assert_uint_eq(n, want);
    psa_config_t cfg;
    psa_config_default(&cfg);
    /* Hit for hit: every hit's problem the same on both sides, so no
     * residual subtraction, where a near-tie in one hit would change the
     * problems of the crystal's next ones (that mode: below). */
    cfg.residual = false;
    psa_engine_t *e = NULL;
    ck_assert_msg(psa_engine_new(&e, rb, &cfg, &err) == TUSK_OK, "%s", err.message);
    psa_cl_t *cl = cl_of(e);
    adf_psa_t *out_ref = malloc(n * sizeof *out_ref), *out_cl = malloc(n * sizeof *out_cl);
    ck_assert(out_ref && out_cl);
    psa_stats_t s_ref = {0}, s_cl = {0};
    psa_backend_t be_ref = psa_backend_reference(), be_cl = psa_backend_cl(cl);
    ck_assert_msg(psa_analyse(e, &be_ref, rec, n, out_ref, &s_ref, &err) == TUSK_OK, "%s", err.message);
    ck_assert_msg(psa_analyse(e, &be_cl, rec, n, out_cl, &s_cl, &err) == TUSK_OK, "%s", err.message);
    ck_assert_uint_eq(s_ref.hits, s_cl.hits);
    ck_assert_uint_eq(s_ref.problems, s_cl.problems);
    ck_assert_uint_gt(s_cl.hits, n / 2);
    size_t same = 0, hits = 0;
    for (size_t c = 0; c < n; c++) {
        ck_assert_uint_eq(out_ref[c].n_hits, out_cl[c].n_hits);
        ck_assert_uint_eq(out_ref[c].crystal_id, out_cl[c].crystal_id);
        for (unsigned h = 0; h < out_ref[c].n_hits; h++) {
            const adf_psa_hit_t *r = &out_ref[c].hit[h], *d = &out_cl[c].hit[h];
            hits++;
            ck_assert_int_eq(r->segment, d->segment);
            ck_assert(r->energy == d->energy);
            if (r->x == d->x && r->y == d->y && r->z == d->z)
                same++;
            if (r->x == d->x && r->y == d->y && r->z == d->z)
                ck_assert(r->time == d->time); /* a hit's time depends on its point's own edge */
            else /* a near-tie: the device's FoM within tolerance of the reference minimum */
                ck_assert_msg(d->fom - r->fom <= 2 * TOL * r->fom,
                              "crystal %zu hit %u: reference (%g %g %g) FoM %.9g, device (%g %g %g) FoM %.9g", c, h,
                              r->x, r->y, r->z, r->fom, d->x, d->y, d->z, d->fom);
            ck_assert_msg(fabs((double)d->fom - r->fom) <= 2 * TOL * r->fom + 1e-30, "crystal %zu hit %u: FoM %.9g, "
                          "reference %.9g", c, h, d->fom, r->fom);
        }
    }
    printf("psa_analyse, %zu simulated crystals: %zu hits, %zu at the reference's point\n", n, hits, same);
    ck_assert_uint_ge(same, hits - hits / 50);
    for (int sub = 0; sub < 2; sub++) {
        /* Residual subtraction and refinement rounds (residual = yes,
         * refine = 1), on the device as on the host; a near-tie may move
         * a crystal's later hits as well. Then with the positions fitted
         * between the grid points (subgrid = yes, from every hit's last
         * point: the device's rounds' too). */
        psa_config_t dcfg;
        psa_config_default(&dcfg);
        dcfg.residual = true;
        dcfg.subgrid = sub;
        ck_assert(dcfg.refine >= 1);
        psa_engine_t *de = NULL;
        ck_assert_msg(psa_engine_new(&de, rb, &dcfg, &err) == TUSK_OK, "%s", err.message);
        psa_cl_t *dcl = cl_of(de);
        psa_backend_t d_cl = psa_backend_cl(dcl);
        psa_stats_t a = {0}, b = {0};
        ck_assert_msg(psa_analyse(de, &be_ref, rec, n, out_ref, &a, &err) == TUSK_OK, "%s", err.message);
        ck_assert_msg(psa_analyse(de, &d_cl, rec, n, out_cl, &b, &err) == TUSK_OK, "%s", err.message);
        ck_assert_uint_eq(a.problems, b.problems);
        ck_assert_uint_gt(a.problems, a.hits); /* the refinement rounds ran */
        size_t dsame = 0, dhits = 0;
        for (size_t c = 0; c < n; c++) {
            ck_assert_uint_eq(out_ref[c].n_hits, out_cl[c].n_hits);
            for (unsigned h = 0; h < out_ref[c].n_hits; h++, dhits++) {
                const adf_psa_hit_t *r = &out_ref[c].hit[h], *d = &out_cl[c].hit[h];
                ck_assert_int_eq(r->segment, d->segment);
                dsame += r->x == d->x && r->y == d->y && r->z == d->z && r->time == d->time;
            }
        }
        printf("psa_analyse, default settings (residual, refine %u%s): %zu hits, %zu the reference's\n", dcfg.refine,
               sub ? ", subgrid" : "", dhits, dsame);
        ck_assert_uint_ge(dsame, dhits - dhits / 20);
        psa_cl_destroy(&dcl);
        psa_engine_destroy(&de);
    }
    /* Crowded: every mask segment of each record's first hit made a hit
     * too (60 keV): that hit is searched on its own trace, flagged, on
     * both backends alike. */
    size_t crowded = 0;
    for (size_t c = 0; c < n; c++) {
        if (out_ref[c].n_hits == 0)
            continue;
        uint8_t ch[PSA_CHANNELS];
        unsigned nch = psa_engine_mask(e, (unsigned)out_ref[c].hit[0].segment, NULL, ch, NULL);
        for (unsigned j = 0; j < nch; j++)
            if (ch[j] < PSA_SEGMENTS && rec[c].segment_energy[ch[j]] < 60.0f)
                rec[c].segment_energy[ch[j]] = 60.0f;
        crowded++;
    }
    memset(&s_ref, 0, sizeof s_ref);
    memset(&s_cl, 0, sizeof s_cl);
    ck_assert_msg(psa_analyse(e, &be_ref, rec, n, out_ref, &s_ref, &err) == TUSK_OK, "%s", err.message);
    ck_assert_msg(psa_analyse(e, &be_cl, rec, n, out_cl, &s_cl, &err) == TUSK_OK, "%s", err.message);
    ck_assert_uint_ge(s_ref.own_trace, crowded);
    ck_assert_uint_eq(s_ref.own_trace, s_cl.own_trace);
    size_t flagged = 0;
    for (size_t c = 0; c < n; c++) {
        ck_assert_uint_eq(out_ref[c].n_hits, out_cl[c].n_hits);
        for (unsigned h = 0; h < out_ref[c].n_hits; h++) {
            const adf_psa_hit_t *r = &out_ref[c].hit[h], *d = &out_cl[c].hit[h];
            ck_assert_uint_eq(r->status, d->status);
            flagged += (r->status & PSA_HIT_OWN_TRACE) != 0;
            ck_assert(isfinite(r->fom) && r->fom > 0.0f); /* no empty mask's FoM 0 */
            ck_assert_msg(fabs((double)d->fom - r->fom) <= 2 * TOL * r->fom + 1e-30, "crowded crystal %zu hit %u: "
                          "FoM %.9g, reference %.9g", c, h, d->fom, r->fom);
        }
    }
    ck_assert_uint_eq(flagged, s_ref.own_trace);
    printf("psa_analyse, %zu crowded crystals: %zu hits on their own trace, flagged alike\n", crowded, flagged);
    /* Adaptive mode needs candidate lists: refused with this backend. */
    psa_engine_destroy(&e);
    cfg.mode = PSA_MODE_ADAPTIVE;
    ck_assert_int_eq(psa_engine_new(&e, rb, &cfg, &err), TUSK_OK);
    ck_assert_int_eq(psa_analyse(e, &be_cl, rec, 1, out_cl, NULL, &err), TUSK_EINVAL);
    psa_engine_destroy(&e);
    psa_cl_destroy(&cl);
    free(out_ref);
    free(out_cl);
    free(rec);
    sim_destroy(&sim);
    tusk_params_destroy(&p);
    det_basis_destroy(&rb);
}
END_TEST

/* A failure on psa_cl's submitter thread (here: the residual's rounds
 * handed a crystal of three hits with two hits) is reported by the
 * collect of that flight, naming what failed; the flight handed over
 * before it is collected as usual, the one after it is abandoned with it,
 * and the device searches on. */
START_TEST(test_submitter_failure_reported)
{
    psa_engine_t *e = engine_of(0.3, PSA_MASK_NEIGHBOURS, false, false);
    psa_cl_t *cl = cl_of(e);
    psa_backend_t be = psa_backend_cl(cl);
    ck_assert_ptr_nonnull(be.ext); /* residual = yes by default: its rounds on the device */
    tusk_error_t err;
    psa_batch_t *before = batch_new(1), *bad = batch_new(1), *after = batch_new(1), *again = batch_new(1);
    psa_batch_t *fill[3] = {before, after, again};
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < 40; i++)
            add_problem(e, fill[k], tu_below(PSA_SEGMENTS), (enum kind)tu_below(KINDS), NULL);
    ck_assert_msg(psa_cl_submit(cl, before, &err) == TUSK_OK, "%s", err.message);
    psa_res_view_t v;
    ck_assert_msg(be.ext->res_begin(be.ctx, bad, 1, 2, 2 * SAMPLES, &v, &err) == TUSK_OK, "%s", err.message);
    v.records[0] = (psa_dev_res_record_t){10.0, NAN, 0, 3, SAMPLES, 0};
    memset(v.hits, 0, 2 * sizeof *v.hits);
    memset(v.traces, 0, 2 * SAMPLES * sizeof *v.traces);
    ck_assert_msg(be.ext->res_submit(be.ctx, bad, 4, &err) == TUSK_OK, "%s", err.message); /* handed over */
    ck_assert_msg(psa_cl_submit(cl, after, &err) == TUSK_OK, "%s", err.message);
    ck_assert_msg(psa_cl_collect(cl, before, &err) == TUSK_OK, "%s", err.message);
    for (size_t i = 0; i < before->n; i++)
        ck_assert(isfinite(before->fom[i]) && before->best[i] < e->npoints[before->segment[i]]);
    ck_assert_int_eq(psa_cl_collect(cl, bad, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "later rounds of 2 hits, but the crystals have 3");
    ck_assert_int_eq(psa_cl_collect(cl, after, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "no batch is being searched");
    /* The device goes on: the same problems as `before`, the same results. */
    uint32_t *best = malloc(before->n * sizeof *best);
    ck_assert_ptr_nonnull(best);
    memcpy(best, before->best, before->n * sizeof *best);
    ck_assert_msg(psa_cl_search(cl, before, &err) == TUSK_OK, "%s", err.message);
    ck_assert(memcmp(best, before->best, before->n * sizeof *best) == 0);
    ck_assert_msg(psa_cl_submit(cl, again, &err) == TUSK_OK, "%s", err.message);
    ck_assert_msg(psa_cl_collect(cl, again, &err) == TUSK_OK, "%s", err.message);
    free(best);
    for (int k = 0; k < 3; k++)
        psa_batch_destroy(&fill[k]);
    psa_batch_destroy(&bad);
    psa_cl_destroy(&cl);
    psa_engine_destroy(&e);
}
END_TEST

/* Simulated 60Co records of the real basis (fresh seed), decoded (rec)
 * and as data:crystal frames read in place (views, into `in`): the input
 * of the analyses through psa_analyse and through psa_analyse_start. */
typedef struct sim_frames {
    det_basis_t *rb;
    adf_crystal_t *rec;
    adf_crystal_view_t *views;
    uint8_t *in;
    size_t n;
} sim_frames_t;

static void sim_frames_make(sim_frames_t *f, size_t want)
{
    tusk_error_t err;
    memset(f, 0, sizeof *f);
    ck_assert_msg(det_basis_load(&f->rb, real_basis_path, NULL, &err) == TUSK_OK, "%s", err.message);
    tusk_params_t *p = tusk_params_new();
    char text[2048];
    snprintf(text, sizeof text, "basis = %s\narray = %s\nsource = co60\nevents = 2000000\nseed = %llu\n",
             real_basis_path, array_path, (unsigned long long)tu_rand());
    ck_assert_msg(tusk_params_parse(p, text, strlen(text), "test", &err) == TUSK_OK, "%s", err.message);
    sim_t *sim = NULL;
    ck_assert_msg(sim_new(&sim, p, "test", &err) == TUSK_OK, "%s", err.message);
    const size_t cap = want * (ADF_KEY_SIZE + adf_crystal_payload_size(ADF_CRYSTAL_MAX_SAMPLES));
    f->rec = malloc(want * sizeof *f->rec);
    f->views = malloc(want * sizeof *f->views);
    f->in = malloc(cap);
    adf_writer_t *w = adf_writer_new();
    adf_reader_t *r = adf_reader_new(ADF_ON_ERROR_STOP);
    ck_assert(f->rec && f->views && f->in && w && r);
    const sim_event_t *ev;
    while (f->n < want && sim_next(sim, &ev, &err) == TUSK_OK && ev)
        for (size_t i = 0; i < ev->n_crystals && f->n < want; i++)
            f->rec[f->n++] = ev->crystal[i];
    ck_assert_uint_eq(f->n, want);
    adf_writer_reset(w, f->in, cap);
    for (size_t i = 0; i < f->n; i++)
        ck_assert_int_eq(adf_crystal_encode(w, (uint32_t)i, i, &f->rec[i], NULL), ADF_OK);
    adf_frame_t fr;
    size_t nv = 0;
    adf_reader_reset(r, f->in, adf_writer_used(w), 0);
    while (adf_reader_next(r, &fr) == ADF_OK && nv < want)
        ck_assert_int_eq(adf_crystal_view(&fr, &f->views[nv++], NULL), ADF_OK);
    ck_assert_uint_eq(nv, f->n);
    adf_writer_destroy(&w);
    adf_reader_destroy(&r);
    sim_destroy(&sim);
    tusk_params_destroy(&p);
}

static void sim_frames_free(sim_frames_t *f)
{
    free(f->rec);
    free(f->views);
    free(f->in);
    det_basis_destroy(&f->rb);
}

/* psa_analyse_start / psa_analyse_finish on simulated records read in
 * place (data:crystal frames), with the device's backend: each buffer's
 * search submitted before the previous one is collected, as the actor
 * does, in buffers of random sizes; the data:psa bytes are those of
 * psa_analyse on the decoded records with the same backend, every buffer
 * submitted. Loop 0: residual = no; loop 1: residual (its first round
 * submitted, the rest searched by psa_analyse_finish while the next
 * buffer's search is in flight). */
START_TEST(test_analyse_pipelined_same_bytes)
{
    tusk_error_t err;
    sim_frames_t f;
    sim_frames_make(&f, 150);
    const size_t n = f.n;
    const det_basis_t *rb = f.rb;
    const adf_crystal_t *rec = f.rec;
    const adf_crystal_view_t *views = f.views;
    adf_psa_t *out_a = malloc(n * sizeof *out_a), *out_b = malloc(n * sizeof *out_b);
    const size_t ocap = n * (ADF_KEY_SIZE + adf_psa_payload_size(ADF_PSA_MAX_HITS, true));
    uint8_t *bytes_a = malloc(ocap), *bytes_b = malloc(ocap);
    adf_writer_t *w = adf_writer_new();
    ck_assert(out_a && out_b && bytes_a && bytes_b && w);
    psa_config_t cfg;
    psa_config_default(&cfg);
    cfg.threads = 1 + tu_below(3);
    cfg.residual = _i == 1; /* residual: rounds for a crystal of several hits */
    psa_engine_t *e = NULL;
    ck_assert_msg(psa_engine_new(&e, rb, &cfg, &err) == TUSK_OK, "%s", err.message);
    psa_cl_t *cl = cl_of(e);
    psa_backend_t be = psa_backend_cl(cl);
    psa_stats_t st_a = {0}, st_b = {0};
    ck_assert_msg(psa_analyse(e, &be, rec, n, out_a, &st_a, &err) == TUSK_OK, "%s", err.message);
    /* Buffers of 1 to 40 records, alternating between two jobs. */
    psa_job_t *job[2];
    ck_assert_int_eq(psa_job_new(&job[0], e, &err), TUSK_OK);
    ck_assert_int_eq(psa_job_new(&job[1], e, &err), TUSK_OK);
    size_t at = 0, buffers = 0, pending = 0, expect_pending = 0;
    int held = -1;
    while (at < n) {
        size_t m = 1 + tu_below(40);
        m = m > n - at ? n - at : m;
        const int j = held == 0 ? 1 : 0;
        ck_assert_msg(psa_analyse_start(e, &be, job[j], views + at, m, out_b + at, &st_b, &err) == TUSK_OK, "%s",
                      err.message);
        if (held >= 0)
            ck_assert_msg(psa_analyse_finish(e, &be, job[held], &err) == TUSK_OK, "%s", err.message);
        pending += psa_job_pending(job[j]);
        bool hits = false;
        for (size_t i = at; i < at + m; i++)
            hits |= out_a[i].n_hits > 0;
        expect_pending += hits;
        ck_assert_msg(psa_job_pending(job[j]) == hits, "buffer %zu (records %zu to %zu): submitted %d, expected %d",
                      buffers, at, at + m - 1, (int)psa_job_pending(job[j]), (int)hits);
        held = psa_job_pending(job[j]) ? j : -1;
        at += m;
        buffers++;
    }
    if (held >= 0)
        ck_assert_msg(psa_analyse_finish(e, &be, job[held], &err) == TUSK_OK, "%s", err.message);
    ck_assert_uint_eq(pending, expect_pending);
    ck_assert_uint_eq(pending, buffers);
    adf_writer_reset(w, bytes_a, ocap);
    for (size_t i = 0; i < n; i++)
        ck_assert_int_eq(adf_psa_encode(w, (uint32_t)i, i, &out_a[i], NULL), ADF_OK);
    const size_t used_a = adf_writer_used(w);
    adf_writer_reset(w, bytes_b, ocap);
    for (size_t i = 0; i < n; i++)
        ck_assert_int_eq(adf_psa_encode(w, (uint32_t)i, i, &out_b[i], NULL), ADF_OK);
    ck_assert_uint_eq(used_a, adf_writer_used(w));
    ck_assert_msg(memcmp(bytes_a, bytes_b, used_a) == 0, "pipelined: other data:psa bytes");
    ck_assert(st_a.crystals == st_b.crystals && st_a.hits == st_b.hits && st_a.problems == st_b.problems &&
              st_a.fom_terms == st_b.fom_terms && st_a.own_trace == st_b.own_trace);
    printf("%zu simulated records in %zu buffers, %zu searches left running: the data:psa bytes of psa_analyse\n", n,
           buffers, pending);
    psa_job_destroy(&job[0]);
    psa_job_destroy(&job[1]);
    psa_cl_destroy(&cl);
    psa_engine_destroy(&e);
    adf_writer_destroy(&w);
    free(out_a);
    free(out_b);
    free(bytes_a);
    free(bytes_b);
    sim_frames_free(&f);
}
END_TEST

/* Residual subtraction's later rounds made and searched on the device
 * (psa_res_* kernels, one submission a job) against the same rounds made
 * on the host and searched on the device ($TUSK_PSA_CL_RESIDUAL = host):
 * the same problems (the formulas of psa_shared.h, no fused multiply-
 * adds), so the same points, FoMs and times, bit for bit, with T0 shifts
 * and one or two refinement passes; through psa_analyse and through
 * psa_analyse_start / _step with several jobs in flight. */
START_TEST(test_residual_rounds_on_device)
{
    tusk_error_t err;
    sim_frames_t f;
    sim_frames_make(&f, 200);
    const size_t n = f.n;
    const adf_crystal_t *rec = f.rec;
    const adf_crystal_view_t *views = f.views;
    adf_psa_t *out[3];
    for (int i = 0; i < 3; i++) {
        out[i] = malloc(n * sizeof *out[i]);
        ck_assert_ptr_nonnull(out[i]);
    }
    psa_config_t cfg;
    psa_config_default(&cfg);
    cfg.residual = true;
    cfg.refine = 1 + tu_below(2);
    cfg.t0_search = tu_below(2);
    cfg.threads = 1 + tu_below(3);
    psa_engine_t *e = NULL;
    ck_assert_msg(psa_engine_new(&e, f.rb, &cfg, &err) == TUSK_OK, "%s", err.message);
    setenv("TUSK_PSA_CL_RESIDUAL", "host", 1);
    psa_cl_t *cl_host = cl_of(e);
    unsetenv("TUSK_PSA_CL_RESIDUAL");
    psa_cl_t *cl_dev = cl_of(e);
    ck_assert_msg(strstr(psa_cl_describe(cl_host), "residual rounds made on the host"), "%s",
                  psa_cl_describe(cl_host));
    ck_assert_msg(strstr(psa_cl_describe(cl_dev), "residual rounds on the device"), "%s (the device has no double "
                  "precision?)", psa_cl_describe(cl_dev));
    psa_backend_t be_host = psa_backend_cl(cl_host), be_dev = psa_backend_cl(cl_dev);
    ck_assert_ptr_null(be_host.ext);
    ck_assert_ptr_nonnull(be_dev.ext);
    psa_stats_t st[3] = {{0}, {0}, {0}};
    ck_assert_msg(psa_analyse(e, &be_host, rec, n, out[0], &st[0], &err) == TUSK_OK, "%s", err.message);
    ck_assert_msg(psa_analyse(e, &be_dev, rec, n, out[1], &st[1], &err) == TUSK_OK, "%s", err.message);
    /* Pipelined: buffers of 1 to 50 records, up to 3 jobs in flight, a
     * step at a time taken with the job whose round was submitted first
     * (the device's results come back in that order), as the psa actor
     * does. */
    psa_job_t *job[3];
    unsigned long ticket[3] = {0, 0, 0}, clock = 0;
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(psa_job_new(&job[i], e, &err), TUSK_OK);
    size_t at = 0, next = 0, multi = 0;
    for (;;) {
        int oldest = -1;
        for (int i = 0; i < 3; i++)
            if (psa_job_pending(job[i]) && (oldest < 0 || ticket[i] < ticket[oldest]))
                oldest = i;
        if (at < n && !psa_job_pending(job[next])) {
            size_t m = 1 + tu_below(50);
            m = m > n - at ? n - at : m;
            ck_assert_msg(psa_analyse_start(e, &be_dev, job[next], views + at, m, out[2] + at, &st[2], &err) ==
                              TUSK_OK, "%s", err.message);
            ticket[next] = ++clock;
            next = (next + 1) % 3;
            at += m;
        } else if (oldest >= 0) {
            ck_assert_msg(psa_analyse_step(e, &be_dev, job[oldest], &err) == TUSK_OK, "%s", err.message);
            ticket[oldest] = ++clock;
        } else
            break;
    }
    for (int i = 1; i < 3; i++)
        ck_assert(st[0].crystals == st[i].crystals && st[0].hits == st[i].hits && st[0].problems == st[i].problems &&
                  st[0].fom_terms == st[i].fom_terms && st[0].own_trace == st[i].own_trace);
    for (size_t c = 0; c < n; c++) {
        multi += out[0][c].n_hits > 1;
        for (int i = 1; i < 3; i++) {
            ck_assert_uint_eq(out[0][c].n_hits, out[i][c].n_hits);
            for (unsigned h = 0; h < out[0][c].n_hits; h++) {
                const adf_psa_hit_t *a = &out[0][c].hit[h], *b = &out[i][c].hit[h];
                ck_assert_msg(a->segment == b->segment && a->status == b->status && a->x == b->x && a->y == b->y &&
                                  a->z == b->z && a->energy == b->energy && a->time == b->time && a->fom == b->fom,
                              "%s, crystal %zu hit %u: host's rounds (%g %g %g) %.9g ns FoM %.9g, the device's (%g "
                              "%g %g) %.9g ns FoM %.9g", i == 1 ? "psa_analyse" : "pipelined", c, h, a->x, a->y,
                              a->z, a->time, a->fom, b->x, b->y, b->z, b->time, b->fom);
            }
        }
    }
    ck_assert_uint_gt(multi, n / 10);
    ck_assert_uint_gt(st[0].problems, st[0].hits);
    printf("residual rounds (refine %u, t0_search %u) on the device: %zu records, %zu of several hits, %llu problems: "
           "the host's rounds' results, bit for bit\n", cfg.refine, cfg.t0_search, n, multi,
           (unsigned long long)st[0].problems);
    for (int i = 0; i < 3; i++) {
        psa_job_destroy(&job[i]);
        free(out[i]);
    }
    psa_cl_destroy(&cl_host);
    psa_cl_destroy(&cl_dev);
    psa_engine_destroy(&e);
    sim_frames_free(&f);
}
END_TEST

int main(void)
{
    tu_seed();
    int skip = tu_cl_device_or_skip("check_psa_cl");
    if (skip)
        return skip;
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/tusk-psa-cl-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    need(mkdtemp(dir) != NULL, "mkdtemp");
    /* The program-binary cache in the test folder, not the user's. */
    char cache[600];
    snprintf(cache, sizeof cache, "%s/cache", dir);
    setenv("TUSK_CL_CACHE_DIR", cache, 1);
    unsetenv("TUSK_PSA_CL_POW");
    unsetenv("TUSK_PSA_CL_WG");
    unsetenv("TUSK_PSA_CL_PG");
    unsetenv("TUSK_PSA_CL_CHUNK");
    unsetenv("TUSK_PSA_CL_PART_BYTES");
    unsetenv("TUSK_PSA_CL_RESIDUAL");
    make_synthetic_basis();
    make_real_basis();

    Suite *s = suite_create("psa_cl");
    TCase *tc = tcase_create("search");
    /* PoCL compiles each program with LLVM, and the reference is slow. */
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_shared_definitions_agree);
    tcase_add_test(tc, test_random_problems_agree);
    tcase_add_test(tc, test_planted_points_exact);
    tcase_add_test(tc, test_batch_of_one_and_empty);
    tcase_add_test(tc, test_big_batch_all_segments);
    tcase_add_test(tc, test_chunks_and_growth);
    tcase_add_test(tc, test_split_basis);
    tcase_add_test(tc, test_candidates_refused);
    tcase_add_test(tc, test_bad_batches_refused);
    tcase_add_test(tc, test_nan_and_inf_traces);
    tcase_add_test(tc, test_crowded_hit_own_trace);
    tcase_add_test(tc, test_no_channel_refused);
    tcase_add_test(tc, test_exponents_and_masks);
    tcase_add_test(tc, test_setup_errors);
    suite_add_tcase(s, tc);
    tc = tcase_create("analyse");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_analyse_matches_reference);
    suite_add_tcase(s, tc);
    tc = tcase_create("pipeline");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_submit_collect);
    tcase_add_loop_test(tc, test_analyse_pipelined_same_bytes, 0, 2);
    tcase_add_test(tc, test_residual_rounds_on_device);
    tcase_add_test(tc, test_submitter_failure_reported);
    suite_add_tcase(s, tc);
    int rc = tu_run(s);

    det_basis_destroy(&basis);
    remove(real_basis_path);
    remove(array_path);
    DIR *d = opendir(cache);
    if (d) {
        struct dirent *f;
        while ((f = readdir(d)) != NULL)
            if (f->d_name[0] != '.') {
                char path[1200];
                snprintf(path, sizeof path, "%s/%s", cache, f->d_name);
                remove(path);
            }
        closedir(d);
    }
    rmdir(cache);
    rmdir(dir);
    return rc;
}
