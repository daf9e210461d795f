/* check_tracking_cl.c - the OpenCL backend of gamma-ray tracking
 * (tusk/track_cl.h) against the CPU reference (track_run), on the device
 * TUSK_CL_TEST_DEVICE names (default: any, which is PoCL's CPU device in
 * CI). Skipped (exit 77) only on a host without any OpenCL device.
 *
 * Both backends cluster on the host the same way, so their cluster lists
 * are the same (the recombination's unions, which are listed only where
 * the parts' FoMs let them be kept, in the events without a near-tie);
 * per cluster the rule for agreement is: the same best
 * order (rank), or else a near-tie: the CPU's FoM of the device's order
 * within NEAR_TIE (relative, at least 1) of the CPU's best (the kernel
 * computes in float). Near-ties are counted and bounded; the accepted
 * gammas must then have the same energies and sizes, and the same first
 * and second points except in near-tie clusters.
 *
 * Before that, the records host and kernel share (track_shared.h) have
 * the same size and field offsets on both sides, the constants the same
 * values and the permutation decoding the same orders, measured by a
 * kernel built from the same embedded source. */
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "cllayout.h"
#include "setuputil.h"
#include "testutil.h"
#include "tracking_private.h"
#include "tusk/cl.h"
#include "tusk/sim.h"
#include "tusk/track.h"
#include "tusk/track_cl.h"

#define PI 3.14159265358979323846
#define NEAR_TIE 1e-4

extern const char tusk_track_kernel_source[];
extern const unsigned long tusk_track_kernel_source_size;

static char dir[512], basis_path[600];
static char demo_path[1024], shell_path[1024];

static const char *test_device(void)
{
    const char *d = getenv("TUSK_CL_TEST_DEVICE");
    return d && *d ? d : "any";
}

/* ---- the shared definitions, seen by the kernel ------------------------------------ */

#define FIELDS(X)                                                                                                     \
    X(trk_dev_point_t, x) X(trk_dev_point_t, y) X(trk_dev_point_t, z) X(trk_dev_point_t, energy)                    \
    X(trk_dev_result_t, rank) X(trk_dev_result_t, fom_bits)
#define RECORDS(X) X(trk_dev_point_t) X(trk_dev_result_t)
#define CONSTANTS(X)                                                                                                  \
    X(TRK_MAX_POINTS) X(TRK_NO_RANK) X(TRK_TABLE_N) X(TRK_MU_TOTAL) X(TRK_MU_COMPTON) X(TRK_MU_PHOTO)                \
    X(trk_factorial(TRK_MAX_POINTS)) X(trk_factorial(12))
/* Orders of n points at some ranks (the first, the last, others), packed
 * three bits a place. */
#define RANKS(X)                                                                                                      \
    X(1, 0) X(2, 1) X(3, 4) X(4, 13) X(5, 119) X(6, 360) X(7, 5039) X(7, 2873) X(8, 0) X(8, 40319) X(8, 20160)      \
    X(8, 12345)

static const char layout_kernel[] =
    "\n#line 1 \"check_tracking_cl.c (layout kernel)\"\n"
    "static uint packed(uint n, uint rank)\n"
    "{\n"
    "    uint perm[TRK_MAX_POINTS], v = 0;\n"
    "    trk_perm_of_rank(n, rank, perm);\n"
    "    for (uint i = 0; i < n; i++)\n"
    "        v |= perm[i] << (3 * i);\n"
    "    return v;\n"
    "}\n"
    "__kernel void trk_layout(__global uint *out)\n"
    "{\n"
    "    uint k = 0;\n"
#define DEV_RANK(n, r) "    out[k++] = packed(" #n ", " #r ");\n"
    RECORDS(TU_DEV_SIZE) FIELDS(TU_DEV_FIELD) CONSTANTS(TU_DEV_CONST) RANKS(DEV_RANK)
    "    out[k++] = as_uint(TRK_EPS_MM2);\n"
    "}\n";

static uint32_t packed(unsigned n, uint32_t rank)
{
    unsigned perm[TRK_MAX_POINTS];
    trk_perm_of_rank(n, rank, perm);
    uint32_t v = 0;
    for (unsigned i = 0; i < n; i++)
        v |= (uint32_t)perm[i] << (3 * i);
    return v;
}

static size_t host_layout(uint32_t *out)
{
    size_t k = 0;
#define HOST_RANK(n, r) out[k++] = packed(n, r);
    RECORDS(TU_HOST_SIZE) FIELDS(TU_HOST_FIELD) CONSTANTS(TU_HOST_CONST) RANKS(HOST_RANK)
    out[k++] = tusk_f32_bits((float)TRK_EPS_MM2);
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
    tu_cl_layout_check(cl, tusk_track_kernel_source, (size_t)tusk_track_kernel_source_size, layout_kernel,
                       "trk_layout", "-DTRK_WG=64 -DTRK_MEC2=0x1.ff07fp+8f", host, n, "track.cl + layout");
    tusk_cl_destroy(&cl);
    /* the decoding itself, against track_rank_of_perm (its inverse) */
    for (unsigned np = 1; np <= TRK_MAX_POINTS; np++)
        for (uint32_t r = 0; r < trk_factorial(np); r++) {
            unsigned perm[TRK_MAX_POINTS];
            trk_perm_of_rank(np, r, perm);
            ck_assert_uint_eq(track_rank_of_perm(np, perm), r);
        }
}
END_TEST

/* ---- agreement ---------------------------------------------------------------------- */

typedef struct pair {
    track_t *cpu, *dev;
    track_cl_t *cl;
    track_batch_t *a, *b;
} pair_t;

static void pair_open(pair_t *p, const track_config_t *cfg, const array_t *array)
{
    tusk_error_t err;
    memset(p, 0, sizeof *p);
    ck_assert_msg(track_new(&p->cpu, cfg, array, &err) == TUSK_OK, "%s", err.message);
    ck_assert_msg(track_new(&p->dev, cfg, array, &err) == TUSK_OK, "%s", err.message);
    ck_assert_msg(track_cl_new(&p->cl, p->dev, test_device(), 0, &err) == TUSK_OK, "%s", err.message);
    p->a = track_batch_new();
    p->b = track_batch_new();
    ck_assert(p->a && p->b);
}

static void pair_close(pair_t *p)
{
    track_cl_destroy(&p->cl);
    track_destroy(&p->cpu);
    track_destroy(&p->dev);
    track_batch_destroy(&p->a);
    track_batch_destroy(&p->b);
}

/* Add the same event to both batches. */
static void add_event(pair_t *p, const track_point_t *pts, size_t n, uint32_t ev)
{
    tusk_error_t err;
    ck_assert_int_eq(track_batch_begin(p->a, ev, ev, &err), TUSK_OK);
    ck_assert_int_eq(track_batch_begin(p->b, ev, ev, &err), TUSK_OK);
    for (size_t i = 0; i < n; i++) {
        ck_assert_int_eq(track_batch_add(p->a, &pts[i], &err), TUSK_OK);
        ck_assert_int_eq(track_batch_add(p->b, &pts[i], &err), TUSK_OK);
    }
}

typedef struct tally {
    size_t clusters, multi, same, near_ties, gammas, merged, recombined;
    unsigned by_size[TRACK_MAX_CLUSTER + 1];
} tally_t;

/* Track both batches and compare (the rule above). */
static void run_and_compare(pair_t *p, tally_t *tl)
{
    tusk_error_t err;
    track_cl_stats_t s0, s1;
    track_cl_stats(p->cl, &s0);
    ck_assert_msg(track_run(p->cpu, p->a, &err) == TUSK_OK, "%s", err.message);
    ck_assert_msg(track_cl_run(p->cl, p->b, &err) == TUSK_OK, "%s", err.message);
    track_cl_stats(p->cl, &s1);
    /* many events a launch: at most one launch a pass (and chunk) */
    ck_assert_uint_le(s1.launches - s0.launches, 2 + (s1.clusters - s0.clusters) / 65536);
    /* both passes, through the cluster lists of the last run */
    size_t nc = 0, nd = 0;
    trk_cluster_t *cc = track_last_clusters(p->cpu, &nc), *dc = track_last_clusters(p->dev, &nd);
    ck_assert(cc && dc);
    /* The clusters of the first two passes one for one; then the
     * recombination's unions (pass 2, listed last), which are listed only
     * when they could be kept (the pruning compares bounds with the
     * parts' FoMs): one for one in the events without a near-tie, whose
     * parts are the same on both sides. */
    size_t pc = 0, pd = 0;
    while (pc < nc && cc[pc].pass != 2)
        pc++;
    while (pd < nd && dc[pd].pass != 2)
        pd++;
    ck_assert_uint_eq(pc, pd);
    const size_t events = track_batch_events(p->a);
    bool *tie = calloc(nc + 1, sizeof *tie), *ev_tie = calloc(events + 1, sizeof *ev_tie);
    ck_assert(tie && ev_tie);
    for (size_t i = 0; i < pc; i++) {
        const trk_cluster_t *c = &cc[i], *d = &dc[i];
        ck_assert_uint_eq(c->ev, d->ev);
        ck_assert_uint_eq(c->n, d->n);
        ck_assert_uint_eq(c->m, d->m);
        ck_assert(memcmp(c->pt, d->pt, c->m * sizeof c->pt[0]) == 0);
        ck_assert(memcmp(c->grp, d->grp, c->m * sizeof c->grp[0]) == 0);
        tl->clusters++;
        tl->by_size[c->n]++;
        tl->merged += c->m > c->n;
        if (c->n < 2)
            continue;
        tl->multi++;
        if (c->rank == d->rank) {
            tl->same++;
            ck_assert(c->fom == d->fom || (isnan(c->fom) && isnan(d->fom)));
            ck_assert_uint_eq(c->accepted, d->accepted);
            continue;
        }
        /* the device's order may only be a near-tie of the best */
        ck_assert_msg(d->fom >= c->fom, "the CPU's best %.9g is above the FoM %.9g of the device's order", c->fom,
                      d->fom);
        ck_assert_msg(d->fom - c->fom <= NEAR_TIE * fmax(1.0, fabs(c->fom)),
                      "cluster of %u points: device order rank %u FoM %.9g, CPU best rank %u FoM %.9g", c->n,
                      (unsigned)d->rank, d->fom, (unsigned)c->rank, c->fom);
        tl->near_ties++;
        tie[i] = true;
        ck_assert_uint_lt(c->ev, events);
        ev_tie[c->ev] = true;
    }
    /* Unions of the events without a near-tie, in list order on both sides. */
    size_t ui = pc, uj = pd;
    for (;;) {
        while (ui < nc && ev_tie[cc[ui].ev])
            ui++;
        while (uj < nd && ev_tie[dc[uj].ev])
            uj++;
        if (ui == nc || uj == nd)
            break;
        const trk_cluster_t *c = &cc[ui++], *d = &dc[uj++];
        ck_assert_uint_eq(c->pass, 2);
        ck_assert_uint_eq(d->pass, 2);
        ck_assert_uint_eq(c->ev, d->ev);
        ck_assert_uint_eq(c->n, d->n);
        ck_assert_uint_eq(c->m, d->m);
        ck_assert(memcmp(c->pt, d->pt, c->m * sizeof c->pt[0]) == 0);
        ck_assert(memcmp(c->grp, d->grp, c->m * sizeof c->grp[0]) == 0);
        ck_assert_uint_eq(c->rank, d->rank);
        ck_assert(c->fom == d->fom || (isnan(c->fom) && isnan(d->fom)));
        ck_assert_uint_eq(c->accepted, d->accepted);
        tl->clusters++;
        tl->by_size[c->n]++;
        tl->multi += c->n >= 2;
        tl->same++;
        tl->recombined++; /* scored on the host from the parts' device orders */
    }
    ck_assert_msg(ui == nc && uj == nd, "unions of events without a near-tie: %zu on the CPU, %zu on the device left over",
                  nc - ui, nd - uj);
    free(ev_tie);
    /* the gammas: same energies and sizes; same points but in near-ties */
    for (size_t e = 0; e < track_batch_events(p->a); e++) {
        adf_tracked_t x, y;
        track_batch_result(p->a, e, &x);
        track_batch_result(p->b, e, &y);
        size_t ties = 0;
        for (size_t i = 0; i < nc; i++)
            ties += tie[i] && cc[i].ev == e;
        if (ties == 0) {
            ck_assert_uint_eq(x.n_gammas, y.n_gammas);
            ck_assert_uint_eq(x.status, y.status);
            ck_assert(memcmp(x.gamma, y.gamma, x.n_gammas * sizeof x.gamma[0]) == 0);
        } else {
            ck_assert_int_le(abs((int)x.n_gammas - (int)y.n_gammas), (int)ties);
        }
        tl->gammas += x.n_gammas;
    }
    free(tie);
    free(cc);
    free(dc);
}

static void random_dir(double d[3])
{
    double z = 2.0 * tu_uniform() - 1.0, f = 2.0 * PI * tu_uniform(), s = sqrt(1.0 - z * z);
    d[0] = s * cos(f);
    d[1] = s * sin(f);
    d[2] = z;
}

/* Random clusters (not physical tracks: any energies, any geometry) of 1
 * to max_points points, several a event, many events a batch. Every size
 * is there by construction: event m - 1 (m = 1 .. max_points) holds one
 * cluster alone, of m points within a few degrees, which the clustering
 * (20 degrees) keeps whole, and events max_points .. 15 one of 9 to 16
 * points, whose nearest points are merged (oversize = merge); the other
 * events' clusters may merge or be split. */
START_TEST(test_random_clusters)
{
    track_config_t cfg;
    track_config_default(&cfg);
    cfg.max_points = _i == 0 ? 7 : 8;
    cfg.fom_max = 4.0 + 4.0 * tu_uniform();
    cfg.recombine_points = cfg.max_points; /* the recombination's parts are the device's */
    pair_t p;
    pair_open(&p, &cfg, NULL);
    tally_t tl;
    memset(&tl, 0, sizeof tl);
    const unsigned events = _i == 0 ? 400 : 40;
    for (unsigned ev = 0; ev < events; ev++) {
        track_point_t pts[64];
        size_t n = 0;
        const bool alone = ev < 16; /* one cluster of ev + 1 points (merged beyond max_points) */
        unsigned k = alone ? 1 : 1 + tu_below(4);
        for (unsigned c = 0; c < k; c++) {
            double d[3];
            random_dir(d);
            /* sizes 1..max_points, the large ones rarer on the 8 run (8! orders each) */
            unsigned m = 1 + tu_below(cfg.max_points);
            if (_i == 1 && m < 7 && tu_below(2))
                m = 7 + tu_below(2);
            if (alone)
                m = ev + 1;
            for (unsigned j = 0; j < m; j++) {
                double q[3];
                memcpy(q, d, sizeof q);
                double r = 235.0 + 90.0 * tu_uniform();
                for (int a = 0; a < 3; a++)
                    q[a] = q[a] * r + 12.0 * (tu_uniform() - 0.5); /* within a few degrees */
                pts[n].pos[0] = (float)q[0];
                pts[n].pos[1] = (float)q[1];
                pts[n].pos[2] = (float)q[2];
                pts[n].energy = (float)(10.0 + 700.0 * tu_uniform());
                pts[n].crystal = 0;
                pts[n].segment = 0;
                n++;
            }
        }
        add_event(&p, pts, n, ev);
    }
    run_and_compare(&p, &tl);
    printf("check_tracking_cl: random (max_points %u): %zu clusters (%zu of 2+ points, %zu merged, %zu recombined), "
           "%zu same order, %zu near-ties; %zu gammas\n",
           cfg.max_points, tl.clusters, tl.multi, tl.merged, tl.recombined, tl.same, tl.near_ties, tl.gammas);
    ck_assert_uint_ge(tl.recombined, 1);
    for (unsigned n = 1; n <= cfg.max_points; n++)
        ck_assert_msg(tl.by_size[n] > 0, "no cluster of %u points", n);
    ck_assert_uint_ge(tl.multi, _i == 0 ? 300 : 30);
    ck_assert_uint_ge(tl.merged, 16 - cfg.max_points);
    ck_assert_msg(tl.near_ties * 100 <= tl.multi, "%zu near-ties in %zu clusters", tl.near_ties, tl.multi);
    pair_close(&p);
}
END_TEST

/* The host's threads change nothing on the device either: random
 * clusters (as above) tracked with 1 host thread in one chunk and with 2,
 * 3 and 4 threads in chunks of 1, 5 and the automatic number of events:
 * the same clusters, orders, gammas and statistics, to the bit, and the
 * same launches. */
START_TEST(test_host_threads)
{
    track_config_t cfg;
    track_config_default(&cfg);
    pair_t p;
    pair_open(&p, &cfg, NULL);
    const unsigned events = 200;
    for (unsigned ev = 0; ev < events; ev++) {
        track_point_t pts[64];
        size_t n = 0;
        for (unsigned c = tu_below(5); c > 0; c--) {
            double d[3];
            random_dir(d);
            for (unsigned j = 1 + tu_below(cfg.max_points + 3); j > 0; j--) {
                double r = 235.0 + 90.0 * tu_uniform();
                for (int a = 0; a < 3; a++)
                    pts[n].pos[a] = (float)(d[a] * r + 12.0 * (tu_uniform() - 0.5));
                pts[n].energy = (float)(10.0 + 700.0 * tu_uniform());
                pts[n].crystal = 0;
                pts[n].segment = 0;
                n++;
            }
        }
        add_event(&p, pts, n, ev);
    }
    tusk_error_t err;
    track_cl_stats_t l0, l1;
    p.dev->chunk_events = events;
    track_cl_stats(p.cl, &l0);
    ck_assert_msg(track_cl_run(p.cl, p.a, &err) == TUSK_OK, "%s", err.message);
    track_cl_stats(p.cl, &l1);
    const uint64_t launches = l1.launches - l0.launches; /* one a pass with clusters of 2+ points */
    ck_assert(launches == 1 || launches == 2);
    size_t n1 = 0;
    trk_cluster_t *c1 = track_last_clusters(p.dev, &n1);
    track_stats_t s1;
    track_stats(p.dev, &s1);
    static const unsigned threads[] = {2, 3, 4};
    static const size_t chunks[] = {0, 1, 5};
    for (size_t i = 0; i < 3; i++)
        for (size_t k = 0; k < 3; k++) {
            ck_assert_int_eq(track_set_threads(p.dev, threads[i], &err), TUSK_OK);
            p.dev->chunk_events = chunks[k];
            track_stats_reset(p.dev);
            track_cl_stats(p.cl, &l0);
            ck_assert_msg(track_cl_run(p.cl, p.b, &err) == TUSK_OK, "%s", err.message);
            track_cl_stats(p.cl, &l1);
            ck_assert_uint_eq(l1.launches - l0.launches, launches);
            track_stats_t s;
            track_stats(p.dev, &s);
            ck_assert_msg(memcmp(&s, &s1, sizeof s) == 0, "%u threads, chunks of %zu: the statistics differ",
                          threads[i], chunks[k]);
            size_t n = 0;
            trk_cluster_t *c = track_last_clusters(p.dev, &n);
            ck_assert_uint_eq(n, n1);
            for (size_t j = 0; j < n; j++)
                ck_assert(c[j].ev == c1[j].ev && c[j].n == c1[j].n && c[j].rank == c1[j].rank &&
                          memcmp(c[j].pt, c1[j].pt, c[j].n * sizeof c[j].pt[0]) == 0 &&
                          memcmp(&c[j].fom, &c1[j].fom, sizeof c[j].fom) == 0);
            free(c);
            for (size_t e = 0; e < events; e++) {
                adf_tracked_t x, y;
                track_batch_result(p.a, e, &x);
                track_batch_result(p.b, e, &y);
                ck_assert_uint_eq(x.n_gammas, y.n_gammas);
                ck_assert_uint_eq(x.status, y.status);
                ck_assert(memcmp(x.gamma, y.gamma, x.n_gammas * sizeof x.gamma[0]) == 0);
            }
        }
    ck_assert_uint_ge(s1.clusters, 300);
    free(c1);
    pair_close(&p);
}
END_TEST

static sim_t *make_sim(const char *array, const char *source, uint64_t decays)
{
    char text[2048];
    snprintf(text, sizeof text, "basis = %s\narray = %s\n%s\nevents = %llu\nseed = %llu\ntruth = yes\n", basis_path,
             array, source, (unsigned long long)decays, (unsigned long long)(tu_rand() % 1000000 + 1));
    tusk_params_t *p = tusk_params_new();
    tusk_error_t err;
    ck_assert_int_eq(tusk_params_parse(p, text, strlen(text), "test", &err), TUSK_OK);
    sim_t *s = NULL;
    ck_assert_msg(sim_new(&s, p, "test", &err) == TUSK_OK, "%s", err.message);
    tusk_params_destroy(&p);
    return s;
}

/* Simulated events: 60Co in the demonstrator (truth and truth_segments
 * points), multiplicity 30 in the 86-crystal shell (truth_segments). */
START_TEST(test_simulated)
{
    static const struct {
        const char *source;
        int shell;
        uint64_t decays;
        enum track_points points;
    } runs[] = {{"source = co60", 0, 3000, TRACK_POINTS_TRUTH},
                {"source = co60", 0, 3000, TRACK_POINTS_TRUTH_SEGMENTS},
                {"source = multiplicity\nmultiplicity = 30", 1, 30, TRACK_POINTS_TRUTH_SEGMENTS}};
    sim_t *s = make_sim(runs[_i].shell ? shell_path : demo_path, runs[_i].source, runs[_i].decays);
    track_config_t cfg;
    track_config_default(&cfg);
    cfg.points = runs[_i].points;
    pair_t p;
    pair_open(&p, &cfg, sim_array(s));
    tally_t tl;
    memset(&tl, 0, sizeof tl);
    const sim_event_t *ev;
    tusk_error_t err;
    for (;;) {
        ck_assert_msg(sim_next(s, &ev, &err) == TUSK_OK, "%s", err.message);
        if (!ev)
            break;
        bool seg = cfg.points == TRACK_POINTS_TRUTH_SEGMENTS;
        ck_assert_int_eq(track_batch_begin(p.a, ev->event, ev->timestamp, &err), TUSK_OK);
        ck_assert_int_eq(track_batch_begin(p.b, ev->event, ev->timestamp, &err), TUSK_OK);
        ck_assert_int_eq(track_add_truth(p.cpu, p.a, ev->truth, seg, &err), TUSK_OK);
        ck_assert_int_eq(track_add_truth(p.dev, p.b, ev->truth, seg, &err), TUSK_OK);
    }
    ck_assert_uint_ge(track_batch_events(p.a), 20);
    run_and_compare(&p, &tl);
    printf("check_tracking_cl: simulated %s, %s points: %zu events, %zu clusters (%zu of 2+ points), %zu same "
           "order, %zu near-ties; %zu gammas\n",
           runs[_i].shell ? "M30 (shell)" : "60Co (demonstrator)", track_points_name(cfg.points),
           track_batch_events(p.a), tl.clusters, tl.multi, tl.same, tl.near_ties, tl.gammas);
    ck_assert_msg(tl.near_ties * 100 <= tl.multi, "%zu near-ties in %zu clusters", tl.near_ties, tl.multi);
    track_stats_t a, b;
    track_stats(p.cpu, &a);
    track_stats(p.dev, &b);
    ck_assert_uint_eq(a.permutations, b.permutations);
    ck_assert_uint_eq(a.clusters, b.clusters);
    if (tl.near_ties == 0)
        ck_assert_uint_eq(a.accepted, b.accepted);
    pair_close(&p);
    sim_destroy(&s);
}
END_TEST

/* The same batch in ranges (the actor's `batch`) gives the same results
 * as in one go; an unknown device names the devices there are. */
START_TEST(test_ranges_and_errors)
{
    track_config_t cfg;
    track_config_default(&cfg);
    cfg.points = TRACK_POINTS_TRUTH_SEGMENTS;
    sim_t *s = make_sim(demo_path, "source = co60", 800);
    pair_t p;
    pair_open(&p, &cfg, sim_array(s));
    const sim_event_t *ev;
    tusk_error_t err;
    while (sim_next(s, &ev, &err) == TUSK_OK && ev) {
        ck_assert_int_eq(track_batch_begin(p.a, ev->event, ev->timestamp, &err), TUSK_OK);
        ck_assert_int_eq(track_batch_begin(p.b, ev->event, ev->timestamp, &err), TUSK_OK);
        ck_assert_int_eq(track_add_truth(p.cpu, p.a, ev->truth, true, &err), TUSK_OK);
        ck_assert_int_eq(track_add_truth(p.dev, p.b, ev->truth, true, &err), TUSK_OK);
    }
    size_t n = track_batch_events(p.a);
    ck_assert_uint_ge(n, 20);
    ck_assert_int_eq(track_cl_run(p.cl, p.a, &err), TUSK_OK);
    for (size_t first = 0; first < n; first += 7)
        ck_assert_int_eq(track_cl_run_range(p.cl, p.b, first, n - first < 7 ? n - first : 7, &err), TUSK_OK);
    for (size_t e = 0; e < n; e++) {
        adf_tracked_t x, y;
        track_batch_result(p.a, e, &x);
        track_batch_result(p.b, e, &y);
        ck_assert_uint_eq(x.n_gammas, y.n_gammas);
        ck_assert(memcmp(x.gamma, y.gamma, x.n_gammas * sizeof x.gamma[0]) == 0);
    }
    ck_assert_int_eq(track_cl_run_range(p.cl, p.b, n, 1, &err), TUSK_EINVAL);
    track_cl_t *bad = NULL;
    ck_assert_int_eq(track_cl_new(&bad, p.cpu, "no-such-device-xyz", 0, &err), TUSK_ENODEV);
    ck_assert_ptr_null(bad);
    tu_assert_error(&err, TUSK_ENODEV, "no-such-device-xyz");
    ck_assert_ptr_nonnull(strstr(track_cl_describe(p.cl), "work-items a cluster"));
    pair_close(&p);
    sim_destroy(&s);
}
END_TEST

int main(void)
{
    int skip = tu_cl_device_or_skip("check_tracking_cl");
    if (skip)
        return skip;
    setenv("TUSK_CL_CACHE", "off", 1); /* no program binaries in the user's cache */
    const char *src = tu_source_dir("config/array-demonstrator.conf");
    snprintf(demo_path, sizeof demo_path, "%s/config/array-demonstrator.conf", src);
    snprintf(shell_path, sizeof shell_path, "%s/config/array-shell.conf", src);
    su_make_dir(dir, sizeof dir, "check_tracking_cl");
    snprintf(basis_path, sizeof basis_path, "%s/basis.tbs", dir);
    su_coarse_basis(basis_path, DET_SAMPLE_INT16, "check_tracking_cl");
    Suite *s = suite_create("tracking_cl");
    TCase *tc = tcase_create("agreement");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_shared_definitions_agree);
    tcase_add_loop_test(tc, test_random_clusters, 0, 2);
    tcase_add_loop_test(tc, test_simulated, 0, 3);
    tcase_add_test(tc, test_ranges_and_errors);
    tcase_add_test(tc, test_host_threads);
    suite_add_tcase(s, tc);
    int rc = tu_run(s);
    remove(basis_path);
    su_need(rmdir(dir) == 0, "check_tracking_cl", "removing the test folder");
    return rc;
}
