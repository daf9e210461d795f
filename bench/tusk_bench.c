/* tusk-bench - measured figures for BENCHMARKS.md (never timed tests).
 *
 *   tusk-bench psa --basis FILE [OPTIONS]
 *
 * PSA grid-search speed, every backend in one run on the same events:
 * events simulated into one crystal with the basis (tusk/sim.h), sorted
 * into single- and multi-hit-segment events, prepared into search
 * problems once (psa_prepare), then searched by the reference, the fast
 * CPU path on one thread and on all, and OpenCL on each --device. A row
 * gives events/s and FoM terms/s; "search" rows time the search alone
 * (for OpenCL: uploads, kernels and downloads), the "end to end" rows
 * psa_analyse from data:crystal records (preprocessing included, on
 * --threads threads). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cli.h"
#include "base/clock.h"
#include "base/exit.h"
#include "base/parse.h"
#include "bench_track.h"
#include "bench_sts.h"
#include "bench_tpc.h"
#include "bench_ut.h"
#include "bench_zfinder.h"
#include "config.h"
#include "tusk/basis.h"
#include "tusk/psa.h"
#include "tusk/psa_cl.h"
#include "tusk/sim.h"

#define PROG "tusk-bench"
#define MAX_DEVICES 8

static void help(FILE *out)
{
    fprintf(out,
            "psa (track, zfinder, sts, ut and tpc: " PROG " track --help, " PROG " zfinder --help, " PROG " sts --help, "
            PROG " ut --help, " PROG " tpc --help):\n"
            "  --basis FILE        the signal basis (tusk-basis gen)\n"
            "  --events N          distinct simulated events of each kind (2000)\n"
            "  --batch N           events per search launch; the distinct ones repeat (20000)\n"
            "  --seconds S         least time per measurement (2)\n"
            "  --reference N       events for the (slow) reference (200)\n"
            "  --threads N         threads of the all-cores fast row (0: one per CPU)\n"
            "  --device SETTING    an OpenCL device to measure (repeatable; tusk-cl list)\n"
            "  --seed S            simulation seed (1)\n"
            "  --end-to-end N      data:crystal records per psa_analyse call in the end-to-end rows\n"
            "                      (the simulated ones repeated; 78 kB each in memory) (4000)\n"
            "\n"
            "Exit status: 0 fine, 1 failure (a file, a device, results that differ from\n"
            "the reference), 2 bad usage.\n");
}

typedef struct opts {
    const char *basis;
    unsigned events, batch, reference, threads;
    uint64_t seed;
    unsigned e2e;
    double seconds;
    const char *device[MAX_DEVICES];
    unsigned devices;
} opts_t;

/* Simulated data:crystal records of one crystal, split by hit segments. */
typedef struct records {
    adf_crystal_t *single, *multi;
    size_t n_single, n_multi;
} records_t;

static int simulate(const opts_t *o, const psa_config_t *pc, records_t *r, char *tmpdir)
{
    char arr[600], text[1200];
    snprintf(arr, sizeof arr, "%s/one.conf", tmpdir);
    FILE *f = fopen(arr, "w");
    if (!f || fputs("crystal.0 = 0 0\n", f) < 0 || fclose(f) != 0) {
        fprintf(stderr, PROG ": %s: cannot write\n", arr);
        return TUSK_EXIT_FAIL;
    }
    snprintf(text, sizeof text, "basis = %s\narray = %s\nsource = line\nenergy = 1332.5\nevents = 0\nseed = %" PRIu64 "\n",
             o->basis, arr, o->seed);
    tusk_params_t *p = tusk_params_new();
    tusk_error_t err;
    sim_t *sim = NULL;
    if (!p || tusk_params_parse(p, text, strlen(text), "bench", &err) != TUSK_OK ||
        sim_new(&sim, p, "simulation", &err) != TUSK_OK) {
        fprintf(stderr, PROG ": %s\n", err.message);
        tusk_params_destroy(&p);
        remove(arr);
        return TUSK_EXIT_FAIL;
    }
    tusk_params_destroy(&p);
    remove(arr);
    r->single = malloc(o->events * sizeof *r->single);
    r->multi = malloc(o->events * sizeof *r->multi);
    if (!r->single || !r->multi) {
        fprintf(stderr, PROG ": out of memory (%u events)\n", o->events);
        sim_destroy(&sim);
        return TUSK_EXIT_FAIL;
    }
    const sim_event_t *ev;
    while ((r->n_single < o->events || r->n_multi < o->events) && sim_next(sim, &ev, &err) == TUSK_OK && ev) {
        unsigned hits = 0;
        for (unsigned s = 0; s < 36; s++)
            hits += ev->crystal[0].segment_energy[s] >= pc->threshold_kev;
        if (hits == 1 && r->n_single < o->events)
            r->single[r->n_single++] = ev->crystal[0];
        else if (hits > 1 && r->n_multi < o->events)
            r->multi[r->n_multi++] = ev->crystal[0];
    }
    sim_destroy(&sim);
    return 0;
}

typedef int (*search_fn)(void *ctx, const psa_engine_t *e, psa_batch_t *b, tusk_error_t *err);

static uint64_t terms_of(const psa_engine_t *e, const psa_batch_t *b)
{
    const det_basis_t *basis = psa_engine_basis(e);
    uint64_t t = 0;
    for (size_t i = 0; i < b->n; i++)
        t += (uint64_t)b->n_channels[i] * b->samples * det_basis_segment_points(basis, b->segment[i]);
    return t;
}

/* Repeat searches of the batch for at least `seconds`; events/s, terms/s. */
static int measure(const char *row, const char *kind, search_fn fn, void *ctx, const psa_engine_t *e, psa_batch_t *b,
                   size_t events, double seconds)
{
    tusk_error_t err;
    uint64_t terms = terms_of(e, b);
    unsigned reps = 0;
    double t0 = tusk_clock_s(), t;
    do {
        if (fn(ctx, e, b, &err) != TUSK_OK) {
            fprintf(stderr, PROG ": %s: %s\n", row, err.message);
            return TUSK_EXIT_FAIL;
        }
        reps++;
        t = tusk_clock_s() - t0;
    } while (t < seconds);
    printf("| %s | %s | %zu | %.3f | %.0f | %.3g |\n", row, kind, events * reps, t, events * reps / t,
           (double)terms * reps / t);
    fflush(stdout);
    return 0;
}

/* A batch of at least `want` events' problems: the records' problems,
 * repeated whole. */
static int build_batch(const psa_engine_t *e, const adf_crystal_t *rec, size_t n, size_t want, psa_batch_t **out,
                       size_t *events)
{
    tusk_error_t err;
    psa_batch_t *one, *b;
    if (psa_batch_new(&one, psa_engine_samples(e), n * 2, &err) != TUSK_OK ||
        psa_prepare(e, rec, n, one, &err) != TUSK_OK || psa_batch_new(&b, one->samples, 0, &err) != TUSK_OK) {
        fprintf(stderr, PROG ": %s\n", err.message);
        return TUSK_EXIT_FAIL;
    }
    size_t per = one->n, S = one->samples;
    *events = 0;
    while (*events < want) {
        for (size_t i = 0; i < per; i++) {
            long k = psa_batch_add(b, one->segment[i]);
            if (k < 0) {
                fprintf(stderr, PROG ": out of memory (batch)\n");
                return TUSK_EXIT_FAIL;
            }
            b->n_channels[k] = one->n_channels[i];
            memcpy(b->channel + (size_t)k * PSA_CHANNELS, one->channel + i * PSA_CHANNELS, PSA_CHANNELS);
            memcpy(b->trace + (size_t)k * PSA_CHANNELS * S, one->trace + i * PSA_CHANNELS * S,
                   PSA_CHANNELS * S * sizeof(float));
        }
        *events += n;
    }
    psa_batch_destroy(&one);
    *out = b;
    return 0;
}

static int ref_fn(void *ctx, const psa_engine_t *e, psa_batch_t *b, tusk_error_t *err)
{
    (void)ctx;
    return psa_search_reference(e, b, err);
}

static int fast_fn(void *ctx, const psa_engine_t *e, psa_batch_t *b, tusk_error_t *err)
{
    return psa_search_fast(e, b, (unsigned)(uintptr_t)ctx, err);
}

static int cl_fn(void *ctx, const psa_engine_t *e, psa_batch_t *b, tusk_error_t *err)
{
    (void)e;
    return psa_cl_search(ctx, b, err);
}

/* psa_analyse over `want` records (the simulated ones repeated), repeated
 * for `seconds`. */
static int end_to_end(const char *row, psa_engine_t *e, const psa_backend_t *be, const adf_crystal_t *sim, size_t nsim,
                      size_t want, double seconds)
{
    size_t n = want;
    adf_psa_t *out = malloc(n * sizeof *out);
    adf_crystal_t *rec = malloc(n * sizeof *rec);
    tusk_error_t err;
    if (!out || !rec || !nsim) {
        fprintf(stderr, PROG ": out of memory (%zu records)\n", n);
        free(out);
        free(rec);
        return TUSK_EXIT_FAIL;
    }
    for (size_t i = 0; i < n; i++)
        rec[i] = sim[i % nsim];
    psa_stats_t st = {0};
    unsigned reps = 0;
    double t0 = tusk_clock_s(), t;
    do {
        if (psa_analyse(e, be, rec, n, out, &st, &err) != TUSK_OK) {
            fprintf(stderr, PROG ": %s: %s\n", row, err.message);
            free(out);
            free(rec);
            return TUSK_EXIT_FAIL;
        }
        reps++;
        t = tusk_clock_s() - t0;
    } while (t < seconds);
    printf("| %s | single, end to end | %zu | %.3f | %.0f | %.3g |\n", row, n * reps, t, n * reps / t,
           (double)st.fom_terms / t);
    free(out);
    free(rec);
    return 0;
}

static int cmd_psa(const opts_t *o)
{
    tusk_error_t err;
    det_basis_t *basis = NULL;
    if (det_basis_load(&basis, o->basis, NULL, &err) != TUSK_OK) {
        fprintf(stderr, PROG ": %s\n", err.message);
        return TUSK_EXIT_FAIL;
    }
    psa_config_t pc;
    psa_config_default(&pc);
    pc.threads = (unsigned)o->threads;
    psa_engine_t *e = NULL;
    if (psa_engine_new(&e, basis, &pc, &err) != TUSK_OK) {
        fprintf(stderr, PROG ": %s: %s\n", o->basis, err.message);
        det_basis_destroy(&basis);
        return TUSK_EXIT_FAIL;
    }
    char tmpdir[] = "/tmp/tusk-bench-XXXXXX";
    if (!mkdtemp(tmpdir)) {
        fprintf(stderr, PROG ": mkdtemp: %s\n", strerror(errno));
        return TUSK_EXIT_FAIL;
    }
    records_t r = {0};
    int rc = simulate(o, &pc, &r, tmpdir);
    rmdir(tmpdir);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned all = o->threads ? (unsigned)o->threads : (unsigned)(cpus > 0 ? cpus : 1);
    const det_basis_shape_t *sh = det_basis_shape(basis);
    if (rc == 0) {
        printf("basis %s: %zu points, %.1f mm grid, %u samples; p = %g, full grid search, mask neighbours; "
               "%zu single- and %zu multi-hit-segment events (1332.5 keV, one crystal); %ld CPUs\n\n",
               o->basis, det_basis_points(basis), sh->grid_mm, sh->samples, pc.p, r.n_single, r.n_multi, cpus);
        printf("| backend | events | events run | seconds | events/s | FoM terms/s |\n| --- | --- | ---: | ---: | ---: "
               "| ---: |\n");
    }
    psa_batch_t *single = NULL, *multi = NULL, *small = NULL;
    size_t ns = 0, nm = 0, nr = 0;
    if (rc == 0)
        rc = build_batch(e, r.single, r.n_single, o->batch, &single, &ns);
    if (rc == 0)
        rc = build_batch(e, r.multi, r.n_multi, o->batch, &multi, &nm);
    if (rc == 0)
        rc = build_batch(e, r.single, r.n_single < o->reference ? r.n_single : o->reference, o->reference, &small,
                         &nr);
    if (rc == 0)
        rc = measure("reference CPU (1 thread)", "single", ref_fn, NULL, e, small, nr, o->seconds);
    char row[160];
    if (rc == 0)
        rc = measure("fast CPU, 1 thread", "single", fast_fn, (void *)(uintptr_t)1, e, single, ns, o->seconds);
    if (rc == 0)
        rc = measure("fast CPU, 1 thread", "multi", fast_fn, (void *)(uintptr_t)1, e, multi, nm, o->seconds);
    snprintf(row, sizeof row, "fast CPU, %u thread%s", all, all == 1 ? "" : "s");
    if (rc == 0)
        rc = measure(row, "single", fast_fn, (void *)(uintptr_t)all, e, single, ns, o->seconds);
    if (rc == 0)
        rc = measure(row, "multi", fast_fn, (void *)(uintptr_t)all, e, multi, nm, o->seconds);
    if (rc == 0) {
        psa_backend_t be = psa_backend_fast(all);
        rc = end_to_end(row, e, &be, r.single, r.n_single, o->e2e, o->seconds);
    }
    for (unsigned d = 0; rc == 0 && d < o->devices; d++) {
        psa_cl_t *cl = NULL;
        if (psa_cl_new(&cl, e, o->device[d], 0, &err) != TUSK_OK) {
            fprintf(stderr, PROG ": --device %s: %s\n", o->device[d], err.message);
            rc = TUSK_EXIT_FAIL;
            break;
        }
        snprintf(row, sizeof row, "OpenCL %s", psa_cl_describe(cl));
        rc = measure(row, "single", cl_fn, cl, e, single, ns, o->seconds);
        if (rc == 0)
            rc = measure(row, "multi", cl_fn, cl, e, multi, nm, o->seconds);
        if (rc == 0) {
            psa_backend_t be = psa_backend_cl(cl);
            rc = end_to_end(row, e, &be, r.single, r.n_single, o->e2e, o->seconds);
        }
        psa_cl_destroy(&cl);
    }
    psa_batch_destroy(&single);
    psa_batch_destroy(&multi);
    psa_batch_destroy(&small);
    free(r.single);
    free(r.multi);
    psa_engine_destroy(&e);
    det_basis_destroy(&basis);
    return rc;
}

static int bench_psa_main(const tusk_cli_t *cli, int argc, char **argv)
{
    opts_t o = {NULL, 2000, 20000, 200, 0, 1, 4000, 2.0, {NULL}, 0};
    static const struct option longs[] = {
        {"basis", required_argument, NULL, 'b'},   {"events", required_argument, NULL, 'n'},
        {"batch", required_argument, NULL, 'B'},   {"seconds", required_argument, NULL, 's'},
        {"reference", required_argument, NULL, 'r'}, {"threads", required_argument, NULL, 't'},
        {"device", required_argument, NULL, 'd'},  {"seed", required_argument, NULL, 'S'},
        {"end-to-end", required_argument, NULL, 'e'},
        {"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0}};
    optind = 1;
    int c;
    while ((c = tusk_cli_getopt(cli, argc, argv, "b:n:h", longs, NULL)) != -1) {
        bool ok = true;
        switch (c) {
        case 'b':
            o.basis = optarg;
            break;
        case 'n': ok = tusk_cli_unsigned(argv[0], "--events", optarg, 1, UINT_MAX, &o.events); break;
        case 'B': ok = tusk_cli_unsigned(argv[0], "--batch", optarg, 1, UINT_MAX, &o.batch); break;
        case 'r': ok = tusk_cli_unsigned(argv[0], "--reference", optarg, 1, UINT_MAX, &o.reference); break;
        case 't': ok = tusk_cli_unsigned(argv[0], "--threads", optarg, 0, 1024, &o.threads); break;
        case 'S': ok = tusk_cli_u64(argv[0], "--seed", optarg, 0, UINT64_MAX, &o.seed); break;
        case 'e': ok = tusk_cli_unsigned(argv[0], "--end-to-end", optarg, 1, UINT_MAX, &o.e2e); break;
        case 's': ok = tusk_cli_double(argv[0], "--seconds", optarg, 0.0, 3600.0, &o.seconds); break;
        case 'd':
            if (o.devices == MAX_DEVICES) {
                fprintf(stderr, "%s: at most %d --device\n", argv[0], MAX_DEVICES);
                return TUSK_EXIT_USAGE;
            }
            o.device[o.devices++] = optarg;
            break;
        case 'h': return tusk_cli_help(cli);
        default: ok = false;
        }
        if (!ok)
            return TUSK_EXIT_USAGE;
    }
    if (!o.basis || optind != argc) {
        if (!o.basis)
            fprintf(stderr, "%s: --basis FILE is required\n", argv[0]);
        else
            fprintf(stderr, "%s: unexpected argument '%s'\n", argv[0], argv[optind]);
        return TUSK_EXIT_USAGE;
    }
    return cmd_psa(&o);
}

static const tusk_cli_command_t commands[] = {
    {"psa", bench_psa_main, "PSA grid-search speed: reference, fast path, OpenCL"},
    {"track", bench_track_main, "gamma-ray tracking speed (reference and OpenCL)"},
    {"zfinder", bench_zfinder_main, "the z-finder's speed on lowlum and highlum RoIs"},
    {"sts", bench_sts_main, "the CBM STS local reconstruction's time per timeslice, 2 M to 30 M digis"},
    {"ut", bench_ut_main, "the LHCb UT decoding and Compass tracking's events/s"},
    {"tpc", bench_tpc_main, "the ALICE TPC slice tracker's time per event, pp to central Pb-Pb"},
    {NULL, NULL, NULL}};

int main(int argc, char **argv)
{
    static const tusk_cli_t cli = {PROG, PACKAGE_VERSION, "psa --basis FILE [OPTIONS]\ntrack --basis FILE [OPTIONS]\n"
                                   "zfinder [OPTIONS]\nsts [OPTIONS]\nut [OPTIONS]\ntpc [OPTIONS]", commands, NULL, help};
    return tusk_cli_main(&cli, argc, argv);
}
