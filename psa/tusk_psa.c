/* tusk-psa - pulse shape analysis from the command line.
 *
 *   tusk-psa validate --basis FILE [--events N] [--energy KEV] [--seed S]
 *                     [--noise KEV] [--set KEY=VALUE]... [--plot DIR]
 *                     [--threads N] [--backend fast|reference|opencl]
 *                     [--device SETTING] [--array FILE]
 *       simulate decays into one crystal (libtusk-sim), analyse every
 *       read-out crystal (libtusk-psa) and measure the position residuals
 *       PSA - truth per hit segment; a report on stdout, with --plot the
 *       histograms as CSV files and a PNG (gnuplot)
 *   tusk-psa run --basis FILE [--set KEY=VALUE]... [--backend B] [--device D]
 *                [--threads N] [-q] -i IN.adf -o OUT.adf
 *       offline analysis of an ADF file: data:crystal -> data:psa, every
 *       other frame copied unchanged, in order: the psa actor itself, run
 *       on the file by the emulator (emulator/emulator.h, one stage)
 *
 * --set KEY=VALUE: PSA keys (tusk/psa.h: preset, p, mode, mask, include_hit,
 * include_core, residual, refine, subgrid, t0_search, threshold_kev, gain,
 * baseline_samples, max_kev, pretrigger) go to the analysis; with validate, the simulation's
 * keys (tusk/sim.h: source, energy, noise_kev, ...) to the simulation;
 * gain and pretrigger, keys of both, to both (they must agree). --backend opencl runs
 * the grid search on an OpenCL device (tusk/psa_cl.h; full search only).
 *
 * validate's temporary array file (crystal.0 = 0 0: one crystal on the
 * beam axis, facing the target) goes to $TMPDIR or /tmp and is removed
 * once the simulation has read it.
 *
 * Exit statuses (base/exit.h): 0 fine, 1 failure (bad basis,
 * configuration, simulation, input or output file; gnuplot missing), 2
 * usage.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cli.h"
#include "base/clock.h"
#include "base/exit.h"
#include "base/fs.h"
#include "base/gnuplot.h"
#include "base/grow.h"
#include "base/parse.h"
#include "config.h"
#include "emulator/emulator.h"
#include "tusk/adf_crystal.h"
#include "tusk/adf_psa.h"
#include "tusk/adf_truth.h"
#include "tusk/basis.h"
#include "tusk/params.h"
#include "tusk/psa.h"
#include "tusk/psa_cl.h"
#include "tusk/sim.h"

#define PROG "tusk-psa"

#define BATCH 256             /* crystals analysed together */
#define DEFAULT_EVENTS "200000"
#define DEFAULT_ENERGY "1000"
#define HIST_BIN 0.5          /* mm */
#define HIST_AXIS_MAX 40.0    /* per-axis histograms: -40 .. 40 mm */
#define HIST_3D_MAX 80.0      /* 3D: 0 .. 80 mm */
#define PLOT_NAME "psa-residuals"

static void help(FILE *out)
{
    fprintf(out,
            "  validate --basis FILE [--events N] [--energy KEV] [--seed S] [--noise KEV]\n"
            "           [--set KEY=VALUE]... [--plot DIR] [--threads N] [--backend B [--device D]]\n"
            "           [--array FILE]\n"
            "           simulate N decays (" DEFAULT_EVENTS ") of a line (" DEFAULT_ENERGY " keV) into one crystal\n"
            "           facing the target, analyse every read-out crystal and report the\n"
            "           position residuals PSA - truth; --plot: histograms (CSV) and a PNG\n"
            "  run      --basis FILE [--set KEY=VALUE]... [--backend B [--device D]] [--threads N] [-q]\n"
            "           -i IN.adf -o OUT.adf\n"
            "           analyse an ADF file: data:crystal -> data:psa, other frames copied (the psa\n"
            "           actor, from $TUSK_ACTOR_PATH or the installed actors)\n"
            "\n"
            "--set: PSA keys (preset, p, mode, mask, include_hit, include_core, residual, refine, subgrid,\n"
            "t0_search, threshold_kev, gain, baseline_samples, max_kev, pretrigger; psa/README.md); with\n"
            "validate also the simulation's (source, energy, noise_kev, ...; sim/README.md).\n"
            "--backend: fast (default), reference or opencl (--device SETTING: any, gpu, cpu,\n"
            "N, P.D or a name; default $TUSK_CL_DEVICE, else any; full search only).\n"
            "--threads: of the fast backend (0: one per CPU, the default).\n"
            "\n"
            "Exit status: 0 fine, 1 failure (bad basis, configuration, simulation, input\n"
            "or output file; gnuplot missing), 2 bad usage.\n");
}

/* ---- options ------------------------------------------------------------------ */

static bool in_list(const char *const *list, const char *key)
{
    for (; *list; list++)
        if (strcmp(*list, key) == 0)
            return true;
    return false;
}

typedef struct opts {
    bool validate;
    const char *basis, *array, *plot, *in, *out, *backend, *device;
    tusk_params_t *psa; /* PSA settings */
    tusk_params_t *sim; /* simulation settings given (validate) */
    unsigned threads;
    bool quiet;
} opts_t;

static int set_param(tusk_params_t *p, const char *key, const char *value)
{
    tusk_error_t err;
    if (tusk_params_set(p, key, value, &err) != TUSK_OK) {
        fprintf(stderr, PROG ": --set %s=%s: %s\n", key, value, err.message);
        return TUSK_EXIT_USAGE;
    }
    return 0;
}

/* A --set KEY=VALUE: where it goes. */
static int route_set(opts_t *o, char *arg)
{
    char *eq = strchr(arg, '=');
    if (!eq || eq == arg) {
        fprintf(stderr, PROG ": --set %s: expected KEY=VALUE\n", arg);
        return TUSK_EXIT_USAGE;
    }
    *eq = '\0';
    const char *key = arg, *value = eq + 1;
    int st = 0;
    /* The engine's keys (psa_config_keys), threads being --threads. */
    bool is_psa = in_list(psa_config_keys(), key) && strcmp(key, "threads") != 0;
    bool is_sim = o->validate && in_list(sim_known_keys(), key);
    if (is_sim && (strcmp(key, "basis") == 0 || strcmp(key, "array") == 0 || strcmp(key, "truth") == 0)) {
        fprintf(stderr, PROG ": --set %s: not a setting here (%s)\n", key,
                strcmp(key, "truth") == 0 ? "validate needs the truth" : "use --basis and --array");
        return TUSK_EXIT_USAGE;
    }
    if (!is_psa && !is_sim) {
        fprintf(stderr, PROG ": --set %s: unknown key; PSA keys:", key);
        for (const char *const *k = psa_config_keys(); *k; k++)
            if (strcmp(*k, "threads") != 0)
                fprintf(stderr, "%s %s", k == psa_config_keys() ? "" : ",", *k);
        fprintf(stderr, "%s\n",
                o->validate ? "; simulation keys: see sim/README.md (source, energy, noise_kev, ...)" : "");
        return TUSK_EXIT_USAGE;
    }
    if (is_psa)
        st = set_param(o->psa, key, value);
    if (!st && is_sim)
        st = set_param(o->sim, key, value);
    return st;
}

static int parse_options(const tusk_cli_t *cli, int argc, char **argv, opts_t *o)
{
    enum { O_BASIS = 256, O_EVENTS, O_ENERGY, O_SEED, O_NOISE, O_SET, O_PLOT, O_THREADS, O_BACKEND, O_ARRAY, O_DEVICE };
    static const struct option longs[] = {{"basis", required_argument, NULL, O_BASIS},
                                          {"events", required_argument, NULL, O_EVENTS},
                                          {"energy", required_argument, NULL, O_ENERGY},
                                          {"seed", required_argument, NULL, O_SEED},
                                          {"noise", required_argument, NULL, O_NOISE},
                                          {"set", required_argument, NULL, O_SET},
                                          {"plot", required_argument, NULL, O_PLOT},
                                          {"threads", required_argument, NULL, O_THREADS},
                                          {"backend", required_argument, NULL, O_BACKEND},
                                          {"array", required_argument, NULL, O_ARRAY},
                                          {"device", required_argument, NULL, O_DEVICE},
                                          {"input", required_argument, NULL, 'i'},
                                          {"output", required_argument, NULL, 'o'},
                                          {"quiet", no_argument, NULL, 'q'},
                                          {"help", no_argument, NULL, 'h'},
                                          {NULL, 0, NULL, 0}};
    o->backend = "fast";
    int c, st;
    uint64_t u;
    double d;
    optind = 1;
    int li = -1;
    while ((c = tusk_cli_getopt(cli, argc, argv, "i:o:qh", longs, &li)) != -1) {
        /* Options of one command only. */
        bool sim_only = c == O_EVENTS || c == O_ENERGY || c == O_SEED || c == O_NOISE || c == O_PLOT || c == O_ARRAY;
        bool run_only = c == 'i' || c == 'o' || c == 'q';
        if ((sim_only && !o->validate) || (run_only && o->validate)) {
            if (c >= 256 || li >= 0)
                fprintf(stderr, "%s: --%s is not an option of %s\n", argv[0], longs[li].name,
                        o->validate ? "validate" : "run");
            else
                fprintf(stderr, "%s: -%c is not an option of %s\n", argv[0], c, o->validate ? "validate" : "run");
            return TUSK_EXIT_USAGE;
        }
        li = -1;
        switch (c) {
        case O_BASIS: o->basis = optarg; break;
        case O_EVENTS:
            if (!tusk_cli_u64(argv[0], "--events", optarg, 1, UINT64_C(1) << 40, &u))
                return TUSK_EXIT_USAGE;
            if ((st = set_param(o->sim, "events", optarg)))
                return st;
            break;
        case O_ENERGY:
            if (!tusk_cli_double(argv[0], "--energy", optarg, 1.0, 10000.0, &d))
                return TUSK_EXIT_USAGE;
            if ((st = set_param(o->sim, "energy", optarg)))
                return st;
            break;
        case O_SEED:
            if (!tusk_cli_u64(argv[0], "--seed", optarg, 0, UINT64_MAX, &u))
                return TUSK_EXIT_USAGE;
            if ((st = set_param(o->sim, "seed", optarg)))
                return st;
            break;
        case O_NOISE:
            if (!tusk_cli_double(argv[0], "--noise", optarg, 0.0, 1000.0, &d))
                return TUSK_EXIT_USAGE;
            if ((st = set_param(o->sim, "noise_kev", optarg)))
                return st;
            break;
        case O_SET:
            if ((st = route_set(o, optarg)))
                return st;
            break;
        case O_PLOT: o->plot = optarg; break;
        case O_THREADS:
            if (!tusk_cli_unsigned(argv[0], "--threads", optarg, 0, 256, &o->threads))
                return TUSK_EXIT_USAGE;
            break;
        case O_BACKEND:
            if (strcmp(optarg, "fast") != 0 && strcmp(optarg, "reference") != 0 && strcmp(optarg, "opencl") != 0) {
                fprintf(stderr, PROG ": --backend: expected fast, reference or opencl, got '%s'\n", optarg);
                return TUSK_EXIT_USAGE;
            }
            o->backend = optarg;
            break;
        case O_ARRAY: o->array = optarg; break;
        case O_DEVICE: o->device = optarg; break;
        case 'i': o->in = optarg; break;
        case 'o': o->out = optarg; break;
        case 'q': o->quiet = true; break;
        case 'h': tusk_cli_help(cli); return -1;
        default: return TUSK_EXIT_USAGE;
        }
    }
    if (optind != argc) {
        fprintf(stderr, PROG ": unexpected argument '%s'\n", argv[optind]);
        return TUSK_EXIT_USAGE;
    }
    if (!o->basis) {
        fprintf(stderr, PROG ": --basis FILE is required (make one with tusk-basis gen)\n");
        return TUSK_EXIT_USAGE;
    }
    if (o->device && strcmp(o->backend, "opencl") != 0) {
        fprintf(stderr, PROG ": --device is for --backend opencl\n");
        return TUSK_EXIT_USAGE;
    }
    if (!o->validate && (!o->in || !o->out)) {
        fprintf(stderr, PROG " run: -i IN.adf and -o OUT.adf are required\n");
        return TUSK_EXIT_USAGE;
    }
    return 0;
}

/* ---- shared: basis, engine, backend ----------------------------------------------- */

typedef struct analysis {
    det_basis_t *basis;
    psa_engine_t *engine;
    psa_cl_t *cl;
    psa_backend_t backend;
    psa_config_t cfg;
} analysis_t;

static void analysis_free(analysis_t *a)
{
    psa_cl_destroy(&a->cl);
    psa_engine_destroy(&a->engine);
    det_basis_destroy(&a->basis);
}

static int analysis_open(analysis_t *a, const opts_t *o)
{
    memset(a, 0, sizeof *a);
    tusk_error_t err;
    psa_config_default(&a->cfg);
    if (psa_config_read(&a->cfg, o->psa, "--set", &err) != TUSK_OK) {
        fprintf(stderr, PROG ": %s\n", err.message);
        return TUSK_EXIT_FAIL;
    }
    det_basis_expect_t expect = {PSA_SEGMENTS, PSA_CHANNELS, 0, 0.0};
    if (det_basis_load(&a->basis, o->basis, &expect, &err) != TUSK_OK) {
        fprintf(stderr, PROG ": %s\n", err.message);
        return TUSK_EXIT_FAIL;
    }
    if (psa_engine_new(&a->engine, a->basis, &a->cfg, &err) != TUSK_OK) {
        fprintf(stderr, PROG ": %s: %s\n", o->basis, err.message);
        analysis_free(a);
        return TUSK_EXIT_FAIL;
    }
    if (strcmp(o->backend, "opencl") == 0) {
        if (a->cfg.mode == PSA_MODE_ADAPTIVE) {
            fprintf(stderr, PROG ": mode = adaptive runs on the CPU backends only (--backend fast or reference)\n");
            analysis_free(a);
            return TUSK_EXIT_FAIL;
        }
        if (psa_cl_new(&a->cl, a->engine, o->device, 0, &err) != TUSK_OK) {
            fprintf(stderr, PROG ": --backend opencl: %s\n", err.message);
            analysis_free(a);
            return TUSK_EXIT_FAIL;
        }
        a->backend = psa_backend_cl(a->cl);
    } else {
        a->backend = strcmp(o->backend, "reference") == 0 ? psa_backend_reference() : psa_backend_fast(o->threads);
    }
    return 0;
}

static const char *yes_no(bool b)
{
    return b ? "yes" : "no";
}

static void describe_psa(FILE *f, const analysis_t *a, const char *backend)
{
    static const char *const masks[] = {"neighbours", "square", "all"};
    const psa_config_t *c = &a->cfg;
    fprintf(f,
            "PSA: backend %s%s%s, p = %g, mode %s, mask %s, include_hit %s, include_core %s, residual %s, "
            "refine %u, t0_search %u, threshold %g keV, pretrigger %u\n",
            backend, a->cl ? " on " : "", a->cl ? psa_cl_describe(a->cl) : "", c->p, c->mode == PSA_MODE_ADAPTIVE ? "adaptive" : "full", masks[c->mask], yes_no(c->include_hit),
            yes_no(c->include_core), yes_no(c->residual), c->residual ? c->refine : 0, c->t0_search, c->threshold_kev,
            c->pretrigger);
}

/* ---- statistics ------------------------------------------------------------------ */

typedef struct vec {
    double *v;
    size_t n, cap;
} vec_t;

static bool vec_push(vec_t *v, double x)
{
    if (tusk_grow(&v->v, &v->cap, v->n + 1, sizeof *v->v) != 0)
        return false;
    v->v[v->n++] = x;
    return true;
}

static void vec_free(vec_t *v)
{
    free(v->v);
    memset(v, 0, sizeof *v);
}

typedef struct hist {
    double lo;
    size_t bins;
    uint64_t *count;
    uint64_t under, over, total;
} hist_t;

static bool hist_make(hist_t *h, const vec_t *v, double lo, double hi)
{
    memset(h, 0, sizeof *h);
    h->lo = lo;
    h->bins = (size_t)llround((hi - lo) / HIST_BIN);
    h->count = calloc(h->bins, sizeof *h->count);
    if (!h->count)
        return false;
    for (size_t i = 0; i < v->n; i++) {
        double k = floor((v->v[i] - lo) / HIST_BIN);
        if (k < 0)
            h->under++;
        else if (k >= (double)h->bins)
            h->over++;
        else
            h->count[(size_t)k]++;
    }
    h->total = v->n;
    return true;
}

static double bin_centre(const hist_t *h, size_t i)
{
    return h->lo + ((double)i + 0.5) * HIST_BIN;
}

/* Full width at half maximum: from the highest bin outwards to the first
 * bin at or below half of it on each side, the crossing interpolated
 * linearly between bin centres. NAN when a side never drops that low. */
static double hist_fwhm(const hist_t *h)
{
    size_t m = 0;
    for (size_t i = 1; i < h->bins; i++)
        if (h->count[i] > h->count[m])
            m = i;
    if (h->count[m] == 0)
        return NAN;
    double half = 0.5 * (double)h->count[m];
    double left = NAN, right = NAN;
    for (size_t i = m; i > 0; i--)
        if ((double)h->count[i - 1] <= half) {
            double a = (double)h->count[i - 1], b = (double)h->count[i];
            left = bin_centre(h, i - 1) + (half - a) / (b - a) * HIST_BIN;
            break;
        }
    for (size_t i = m; i + 1 < h->bins; i++)
        if ((double)h->count[i + 1] <= half) {
            double a = (double)h->count[i], b = (double)h->count[i + 1];
            right = bin_centre(h, i) + (a - half) / (a - b) * HIST_BIN;
            break;
        }
    return right - left;
}

typedef struct moments {
    double mean, rms, sd;
} moments_t;

static moments_t moments(const vec_t *v)
{
    moments_t m = {NAN, NAN, NAN};
    if (!v->n)
        return m;
    double s = 0, s2 = 0;
    for (size_t i = 0; i < v->n; i++) {
        s += v->v[i];
        s2 += v->v[i] * v->v[i];
    }
    m.mean = s / (double)v->n;
    m.rms = sqrt(s2 / (double)v->n);
    double var = s2 / (double)v->n - m.mean * m.mean;
    m.sd = sqrt(var > 0 ? var : 0);
    return m;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct dist3 {
    size_t n;
    double median, mean, within5, within10; /* fractions */
} dist3_t;

/* Sorts v. */
static dist3_t dist3(vec_t *v)
{
    dist3_t d = {v->n, NAN, NAN, NAN, NAN};
    if (!v->n)
        return d;
    qsort(v->v, v->n, sizeof *v->v, cmp_double);
    d.median = v->n % 2 ? v->v[v->n / 2] : 0.5 * (v->v[v->n / 2 - 1] + v->v[v->n / 2]);
    double s = 0;
    size_t w5 = 0, w10 = 0;
    for (size_t i = 0; i < v->n; i++) {
        s += v->v[i];
        w5 += v->v[i] <= 5.0;
        w10 += v->v[i] <= 10.0;
    }
    d.mean = s / (double)v->n;
    d.within5 = (double)w5 / (double)v->n;
    d.within10 = (double)w10 / (double)v->n;
    return d;
}

/* ---- validate ------------------------------------------------------------------------ */

/* The truth of one read-out crystal, by segment. */
typedef struct seg_truth {
    unsigned n;           /* interaction points */
    double energy;        /* keV */
    double wsum[3];       /* energy-weighted position sum */
    float first[3];       /* the first point's position */
} seg_truth_t;

typedef struct rec_truth {
    seg_truth_t seg[PSA_SEGMENTS];
    double after_ns; /* the interaction time after the key's timestamp (sim_event_t) */
} rec_truth_t;

typedef struct results {
    uint64_t events, records, hits, single, multi, no_truth, outside_points;
    vec_t axis[3];        /* single: PSA - truth, x y z */
    vec_t d3;             /* single: 3D */
    vec_t d3_alone;       /* single, in a crystal with one hit segment */
    vec_t d3_shared;      /* single, in a crystal with other hit segments */
    vec_t d3_shared1;     /* of those, where every other hit segment has one interaction */
    vec_t dt;             /* single: hit time - interaction time (ns) */
    vec_t d3_multi;       /* several points: 3D to their energy-weighted centroid */
    vec_t multi_axis[3];
    double sim_s, psa_s;
    psa_stats_t stats;
} results_t;

static void results_free(results_t *r)
{
    for (int a = 0; a < 3; a++) {
        vec_free(&r->axis[a]);
        vec_free(&r->multi_axis[a]);
    }
    vec_free(&r->d3);
    vec_free(&r->d3_alone);
    vec_free(&r->d3_shared);
    vec_free(&r->d3_shared1);
    vec_free(&r->dt);
    vec_free(&r->d3_multi);
}

static void truth_of(const adf_truth_t *t, unsigned crystal, double after_ns, rec_truth_t *rt, results_t *r)
{
    memset(rt, 0, sizeof *rt);
    rt->after_ns = after_ns;
    for (unsigned i = 0; i < t->n_points; i++) {
        const adf_truth_point_t *p = &t->point[i];
        if (p->crystal != crystal)
            continue;
        if (p->segment < 0 || p->segment >= PSA_SEGMENTS) {
            r->outside_points++;
            continue;
        }
        seg_truth_t *s = &rt->seg[p->segment];
        if (s->n == 0)
            memcpy(s->first, p->local, sizeof s->first);
        s->n++;
        s->energy += p->energy;
        for (int a = 0; a < 3; a++)
            s->wsum[a] += (double)p->energy * p->local[a];
    }
}

/* Analyse n records and compare with their truth. */
static int analyse_batch(analysis_t *an, const adf_crystal_t *rec, const rec_truth_t *rt, size_t n, adf_psa_t *out,
                         results_t *r)
{
    tusk_error_t err;
    double t0 = tusk_clock_s();
    if (psa_analyse(an->engine, &an->backend, rec, n, out, &r->stats, &err) != TUSK_OK) {
        fprintf(stderr, PROG ": analysing the simulated crystals: %s\n", err.message);
        return TUSK_EXIT_FAIL;
    }
    r->psa_s += tusk_clock_s() - t0;
    bool ok = true;
    for (size_t k = 0; k < n; k++) {
        const adf_psa_t *p = &out[k];
        r->records++;
        for (unsigned h = 0; h < p->n_hits; h++) {
            const adf_psa_hit_t *hit = &p->hit[h];
            r->hits++;
            if (hit->segment < 0 || hit->segment >= PSA_SEGMENTS) {
                r->no_truth++;
                continue;
            }
            const seg_truth_t *s = &rt[k].seg[hit->segment];
            const double pos[3] = {hit->x, hit->y, hit->z};
            double d[3], d2 = 0;
            if (s->n == 0) {
                r->no_truth++;
            } else if (s->n == 1) {
                r->single++;
                for (int a = 0; a < 3; a++) {
                    d[a] = pos[a] - s->first[a];
                    d2 += d[a] * d[a];
                    ok = ok && vec_push(&r->axis[a], d[a]);
                }
                ok = ok && vec_push(&r->d3, sqrt(d2));
                ok = ok && vec_push(&r->dt, hit->time - rt[k].after_ns);
                if (p->n_hits == 1) {
                    ok = ok && vec_push(&r->d3_alone, sqrt(d2));
                } else {
                    bool others1 = true;
                    for (unsigned o = 0; o < p->n_hits; o++)
                        if (o != h && p->hit[o].segment >= 0 && p->hit[o].segment < PSA_SEGMENTS)
                            others1 = others1 && rt[k].seg[p->hit[o].segment].n == 1;
                    ok = ok && vec_push(&r->d3_shared, sqrt(d2));
                    if (others1)
                        ok = ok && vec_push(&r->d3_shared1, sqrt(d2));
                }
            } else {
                r->multi++;
                for (int a = 0; a < 3; a++) {
                    d[a] = pos[a] - (s->energy > 0 ? s->wsum[a] / s->energy : s->first[a]);
                    d2 += d[a] * d[a];
                    ok = ok && vec_push(&r->multi_axis[a], d[a]);
                }
                ok = ok && vec_push(&r->d3_multi, sqrt(d2));
            }
        }
    }
    if (!ok) {
        fprintf(stderr, PROG ": out of memory\n");
        return TUSK_EXIT_FAIL;
    }
    return 0;
}

/* A temporary array configuration: one crystal facing the target. */
static int temp_array(char *path, size_t cap)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(path, cap, "%s/tusk-psa-array-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    int fd = mkstemp(path);
    if (fd < 0) {
        fprintf(stderr, PROG ": cannot make a temporary array file %s: %s\n", path, strerror(errno));
        return TUSK_EXIT_FAIL;
    }
    static const char text[] = "# tusk-psa validate: one crystal facing the target\ncrystal.0 = 0 0\n";
    ssize_t w = write(fd, text, sizeof text - 1);
    int e = errno;
    if (close(fd) != 0 || w != (ssize_t)(sizeof text - 1)) {
        fprintf(stderr, PROG ": cannot write %s: %s\n", path, strerror(w < 0 ? e : errno ? errno : EIO));
        unlink(path);
        return TUSK_EXIT_FAIL;
    }
    return 0;
}

static void fmt_mm(char *buf, size_t cap, double v)
{
    if (isfinite(v))
        snprintf(buf, cap, "%.2f", v);
    else
        snprintf(buf, cap, "n/a");
}

static void print_dist3(FILE *f, const char *title, const dist3_t *d)
{
    fprintf(f, "%s (%zu hits):\n", title, d->n);
    if (!d->n) {
        fprintf(f, "  (none)\n");
        return;
    }
    fprintf(f, "  median          %.2f mm\n", d->median);
    fprintf(f, "  mean            %.2f mm\n", d->mean);
    fprintf(f, "  within 5 mm     %.1f %%\n", 100.0 * d->within5);
    fprintf(f, "  within 10 mm    %.1f %%\n", 100.0 * d->within10);
}

typedef struct report {
    hist_t axis[3], d3, d3_alone, d3_multi;
    moments_t m[3];
    double fwhm[3];
    dist3_t single, alone, multi, shared, shared1;
    moments_t dt;
    double dt_median; /* |hit time - interaction time| */
} report_t;

static void report_free(report_t *rep)
{
    for (int a = 0; a < 3; a++)
        free(rep->axis[a].count);
    free(rep->d3.count);
    free(rep->d3_alone.count);
    free(rep->d3_multi.count);
}

static void print_report(FILE *f, const opts_t *o, const analysis_t *an, sim_t *sim, results_t *r, report_t *rep)
{
    const det_basis_shape_t *bs = det_basis_shape(an->basis);
    double g = bs->grid_mm;
    static const char axes[3] = {'x', 'y', 'z'};
    fprintf(f, "tusk-psa validate: basis %s: %zu points on a %.2f mm grid, %u samples of %.1f ns\n", o->basis,
            det_basis_points(an->basis), g, bs->samples, bs->sample_ns);
    fprintf(f, "simulation:\n");
    const char *desc = sim_describe(sim);
    for (const char *p = desc; *p;) {
        const char *nl = strchr(p, '\n');
        int len = nl ? (int)(nl - p) : (int)strlen(p);
        fprintf(f, "  %.*s\n", len, p);
        p += len + (nl ? 1 : 0);
    }
    describe_psa(f, an, o->backend);
    sim_stats_t ss = sim_stats(sim);
    fprintf(f, "\n");
    fprintf(f, "decays                        %llu\n", (unsigned long long)ss.decays);
    fprintf(f, "events                        %llu (crystal records analysed: %llu)\n",
            (unsigned long long)r->events, (unsigned long long)r->records);
    fprintf(f, "hits                          %llu (hit segments found by PSA)\n", (unsigned long long)r->hits);
    fprintf(f, "single-interaction hits       %llu (one truth point in the hit segment)\n",
            (unsigned long long)r->single);
    fprintf(f, "multi-interaction hits        %llu (several truth points in the segment)\n",
            (unsigned long long)r->multi);
    fprintf(f, "hits without a truth point    %llu (no interaction in that segment)\n",
            (unsigned long long)r->no_truth);
    if (r->outside_points)
        fprintf(f, "truth points in no segment    %llu (not matched)\n", (unsigned long long)r->outside_points);
    fprintf(f, "\nresiduals PSA - truth, single-interaction hits (mm; FWHM from 0.5 mm bins):\n");
    fprintf(f, "  axis     mean      RMS    sigma     FWHM\n");
    for (int a = 0; a < 3; a++) {
        char fw[32];
        fmt_mm(fw, sizeof fw, rep->fwhm[a]);
        fprintf(f, "  %c     %7.2f  %7.2f  %7.2f  %7s\n", axes[a], rep->m[a].mean, rep->m[a].rms, rep->m[a].sd, fw);
    }
    fprintf(f, "\n");
    print_dist3(f, "3D distance, single-interaction hits", &rep->single);
    print_dist3(f, "3D distance, single-interaction hits in crystals with one hit segment", &rep->alone);
    print_dist3(f, "3D distance, single-interaction hits in crystals with other hit segments", &rep->shared);
    print_dist3(f, "  of those, where every other hit segment has one interaction", &rep->shared1);
    print_dist3(f, "3D distance to the energy-weighted centroid, multi-interaction hits", &rep->multi);
    fprintf(f, "\nhit time - interaction time, single-interaction hits (ns; both from the key's timestamp):\n"
               "  mean %.2f, RMS %.2f, median of |difference| %.2f\n",
            rep->dt.mean, rep->dt.rms, rep->dt_median);
    fprintf(f,
            "\nbasis grid step %.2f mm: the nearest basis point, what a perfect search finds, is up to\n"
            "g*sqrt(3)/2 = %.2f mm away in 3D and g/2 = %.2f mm per axis (uniform: RMS g/sqrt(12) = %.2f mm,\n"
            "FWHM about g), more next to a segment border, where the segment's own points are sparser.\n",
            g, g * sqrt(3.0) / 2, g / 2, g / sqrt(12.0));
    fprintf(f, "search: %llu problems, %.4g FoM terms (%.3g a crystal)\n", (unsigned long long)r->stats.problems,
            (double)r->stats.fom_terms, r->records ? (double)r->stats.fom_terms / (double)r->records : 0.0);
    fprintf(f, "time: simulation %.2f s, PSA %.2f s (%.0f crystals/s, %.0f hits/s)\n", r->sim_s, r->psa_s,
            r->psa_s > 0 ? (double)r->records / r->psa_s : 0.0, r->psa_s > 0 ? (double)r->hits / r->psa_s : 0.0);
}

/* ---- plot -------------------------------------------------------------------------- */

static char *path_in(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s", dir, name);
    return p;
}

static int write_csv(const char *dir, const char *name, const char *header, const hist_t *h, size_t nh)
{
    char *path = path_in(dir, name);
    FILE *f = path ? fopen(path, "w") : NULL;
    if (!f) {
        fprintf(stderr, PROG ": cannot write %s/%s: %s\n", dir, name, path ? strerror(errno) : "out of memory");
        free(path);
        return TUSK_EXIT_FAIL;
    }
    fprintf(f, "%s\n", header);
    for (size_t i = 0; i < h[0].bins; i++) {
        fprintf(f, "%.2f,%.2f", h[0].lo + (double)i * HIST_BIN, h[0].lo + (double)(i + 1) * HIST_BIN);
        for (size_t k = 0; k < nh; k++)
            fprintf(f, ",%llu", (unsigned long long)h[k].count[i]);
        fputc('\n', f);
    }
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        fprintf(stderr, PROG ": cannot write %s: %s\n", path, strerror(errno ? errno : EIO));
        free(path);
        return TUSK_EXIT_FAIL;
    }
    free(path);
    return 0;
}

static int write_script(const char *dir, const analysis_t *an, const results_t *r, const report_t *rep)
{
    char *path = path_in(dir, PLOT_NAME ".gp");
    FILE *f = path ? fopen(path, "w") : NULL;
    if (!f) {
        fprintf(stderr, PROG ": cannot write %s/" PLOT_NAME ".gp: %s\n", dir, path ? strerror(errno) : "out of memory");
        free(path);
        return TUSK_EXIT_FAIL;
    }
    const psa_config_t *c = &an->cfg;
    double g = det_basis_shape(an->basis)->grid_mm;
    /* The per-axis range: most of the distribution, at least two grid steps. */
    double span = 0;
    for (int a = 0; a < 3; a++)
        if (isfinite(rep->m[a].rms) && 4 * rep->m[a].rms > span)
            span = 4 * rep->m[a].rms;
    if (span < 2 * g)
        span = 2 * g;
    span = ceil(span / 5) * 5;
    if (span > HIST_AXIS_MAX)
        span = HIST_AXIS_MAX;
    double span3 = 0;
    if (isfinite(rep->single.median))
        span3 = 4 * rep->single.median;
    if (span3 < 2 * g)
        span3 = 2 * g;
    span3 = ceil(span3 / 5) * 5;
    if (span3 > HIST_3D_MAX)
        span3 = HIST_3D_MAX;
    char title[512];
    static const char *const masks[] = {"neighbours", "square", "all"};
    snprintf(title, sizeof title, "PSA - truth: %.1f mm basis, p = %g, %s search, %s mask%s%s", g, c->p,
             c->mode == PSA_MODE_ADAPTIVE ? "adaptive" : "full", masks[c->mask], c->include_hit ? " + hit" : "",
             c->include_core ? " + core" : "");
    double ns = r->single ? (double)r->single : 1, nm = r->multi ? (double)r->multi : 1;
    double na = r->d3_alone.n ? (double)r->d3_alone.n : 1;
    fprintf(f,
            "# " PLOT_NAME ".gp - written by tusk-psa validate; the data are in " PLOT_NAME "-axes.csv and\n"
            "# " PLOT_NAME "-3d.csv (counts per 0.5 mm bin). Redraw: cd to this folder; gnuplot " PLOT_NAME ".gp\n"
            "set encoding utf8\n"
            "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
            "    set terminal pngcairo size 1000,420 font 'Sans,10'\n"
            "} else {\n"
            "    set terminal png size 1000,420 font 'Sans,10'\n"
            "}\n"
            "set output '" PLOT_NAME ".png'\n"
            "set datafile separator ','\n"
            "g = %.6g          # basis grid step, mm\n"
            "n_single = %.0f\n"
            "n_alone = %.0f\n"
            "n_multi = %.0f\n"
            "set multiplot layout 1,2 title ",
            g, ns, na, nm);
    tusk_gnuplot_quote(f, title);
    fprintf(f,
            " noenhanced\n"
            "set style data histeps\n"
            "set tics out nomirror\n"
            "set grid lc rgb '#dddddd'\n"
            "set key top right\n"
            "set title sprintf('per axis, %%d single-interaction hits', n_single) noenhanced\n"
            "set xlabel 'PSA - truth (mm)'\n"
            "set ylabel 'fraction of hits per 0.5 mm'\n"
            "set xrange [%.6g:%.6g]\n"
            "set yrange [0:*]\n"
            "set arrow 1 from -g/2, graph 0 to -g/2, graph 1 nohead dt 2 lc rgb '#888888'\n"
            "set arrow 2 from g/2, graph 0 to g/2, graph 1 nohead dt 2 lc rgb '#888888'\n"
            "set label 1 '±g/2' at g/2, graph 0.75 offset 0.5,0 tc rgb '#666666'\n"
            "plot '" PLOT_NAME "-axes.csv' skip 1 using (($1+$2)/2):($3/n_single) title 'x' lw 1.5 lc rgb '#0072b2', \\\n"
            "     '' skip 1 using (($1+$2)/2):($4/n_single) title 'y' lw 1.5 lc rgb '#d55e00', \\\n"
            "     '' skip 1 using (($1+$2)/2):($5/n_single) title 'z' lw 1.5 lc rgb '#009e73'\n"
            "unset arrow\n"
            "unset label\n"
            "set title '3D distance' noenhanced\n"
            "set xlabel 'distance (mm)'\n"
            "set xrange [0:%.6g]\n"
            "set arrow 1 from g*sqrt(3)/2, graph 0 to g*sqrt(3)/2, graph 1 nohead dt 2 lc rgb '#888888'\n"
            "set label 1 'g√3/2' at g*sqrt(3)/2, graph 0.75 offset 0.5,0 tc rgb '#666666'\n"
            "plot '" PLOT_NAME "-3d.csv' skip 1 using (($1+$2)/2):($3/n_single) title 'single interaction: to the "
            "point' lw 1.5 lc rgb '#0072b2', \\\n"
            "     '' skip 1 using (($1+$2)/2):($4/n_alone) title 'single, the crystal''s only hit' lw 1.5 lc rgb "
            "'#009e73', \\\n"
            "     '' skip 1 using (($1+$2)/2):($5/n_multi) title 'several: to their centroid' lw 1.5 dt 2 lc rgb "
            "'#d55e00'\n"
            "unset multiplot\n",
            -span, span, span3);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        fprintf(stderr, PROG ": cannot write %s: %s\n", path, strerror(errno ? errno : EIO));
        free(path);
        return TUSK_EXIT_FAIL;
    }
    free(path);
    return 0;
}

/* gnuplot on DIR/NAME.gp in DIR (base/gnuplot.h), its output into
 * DIR/NAME.log (removed when empty). */
static int run_gnuplot(const char *dir)
{
    char *png = path_in(dir, PLOT_NAME ".png");
    if (!png) {
        fprintf(stderr, PROG ": out of memory\n");
        return TUSK_EXIT_FAIL;
    }
    const char *pictures[] = {png, NULL};
    tusk_error_t err;
    int rc = 0;
    if (tusk_gnuplot_run(dir, PLOT_NAME ".gp", PLOT_NAME ".log", pictures, &err) != TUSK_OK) {
        fprintf(stderr, PROG ": %s; no picture: the histograms are in %s/" PLOT_NAME "-axes.csv and -3d.csv\n",
                err.message, dir);
        rc = TUSK_EXIT_FAIL;
    }
    free(png);
    return rc;
}

static int plot(const opts_t *o, const analysis_t *an, const results_t *r, const report_t *rep, const char *text)
{
    tusk_error_t err;
    if (tusk_mkdir_p(o->plot, &err) != TUSK_OK) {
        fprintf(stderr, PROG ": --plot: %s\n", err.message);
        return TUSK_EXIT_FAIL;
    }
    const hist_t three[3] = {rep->d3, rep->d3_alone, rep->d3_multi};
    int rc = write_csv(o->plot, PLOT_NAME "-axes.csv", "bin_low_mm,bin_high_mm,x,y,z", rep->axis, 3);
    if (!rc)
        rc = write_csv(o->plot, PLOT_NAME "-3d.csv", "bin_low_mm,bin_high_mm,single,single_one_hit_segment,multi_centroid",
                       three, 3);
    if (!rc) {
        char *path = path_in(o->plot, PLOT_NAME ".txt");
        FILE *f = path ? fopen(path, "w") : NULL;
        if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
            fprintf(stderr, PROG ": cannot write %s/" PLOT_NAME ".txt\n", o->plot);
            rc = TUSK_EXIT_FAIL;
        }
        free(path);
    }
    if (!rc)
        rc = write_script(o->plot, an, r, rep);
    if (!rc)
        rc = run_gnuplot(o->plot);
    if (!rc)
        printf("%s/" PLOT_NAME ".png (data: " PLOT_NAME "-axes.csv, " PLOT_NAME "-3d.csv, report: " PLOT_NAME
               ".txt, script: " PLOT_NAME ".gp)\n",
               o->plot);
    return rc;
}

static int cmd_validate(opts_t *o)
{
    analysis_t an;
    int rc = analysis_open(&an, o);
    if (rc)
        return rc;
    char array[4096] = "";
    bool temp = false;
    if (!o->array) {
        if ((rc = temp_array(array, sizeof array))) {
            analysis_free(&an);
            return rc;
        }
        temp = true;
    }
    /* Defaults, then what was given (o->sim's entries replace them). */
    tusk_params_t *p = tusk_params_new();
    tusk_error_t err;
    rc = p ? 0 : TUSK_EXIT_FAIL;
    const char *defaults[][2] = {{"basis", o->basis},   {"array", temp ? array : o->array}, {"source", "line"},
                                 {"energy", DEFAULT_ENERGY}, {"events", DEFAULT_EVENTS},     {"truth", "yes"}};
    for (size_t i = 0; !rc && i < sizeof defaults / sizeof defaults[0]; i++)
        if (tusk_params_set(p, defaults[i][0], defaults[i][1], &err) != TUSK_OK)
            rc = TUSK_EXIT_FAIL;
    for (size_t i = 0; !rc && i < tusk_params_count(o->sim); i++)
        if (tusk_params_set(p, tusk_params_key(o->sim, i), tusk_params_value(o->sim, i), &err) != TUSK_OK)
            rc = TUSK_EXIT_FAIL;
    sim_t *sim = NULL;
    if (rc)
        fprintf(stderr, PROG ": %s\n", p ? err.message : "out of memory");
    else if (sim_new(&sim, p, "simulation", &err) != TUSK_OK) {
        fprintf(stderr, PROG ": %s\n", err.message);
        rc = TUSK_EXIT_FAIL;
    }
    tusk_params_destroy(&p);
    if (temp)
        unlink(array);
    if (rc) {
        analysis_free(&an);
        return rc;
    }
    adf_crystal_t *rec = malloc(BATCH * sizeof *rec);
    rec_truth_t *rt = malloc(BATCH * sizeof *rt);
    adf_psa_t *out = malloc(BATCH * sizeof *out);
    results_t r;
    memset(&r, 0, sizeof r);
    if (!rec || !rt || !out) {
        fprintf(stderr, PROG ": out of memory\n");
        rc = TUSK_EXIT_FAIL;
    }
    size_t n = 0;
    double t0 = tusk_clock_s();
    while (!rc) {
        const sim_event_t *ev;
        if (sim_next(sim, &ev, &err) != TUSK_OK) {
            fprintf(stderr, PROG ": simulating: %s\n", err.message);
            rc = TUSK_EXIT_FAIL;
            break;
        }
        if (!ev)
            break;
        r.events++;
        for (size_t c = 0; c < ev->n_crystals; c++) {
            rec[n] = ev->crystal[c];
            truth_of(ev->truth, ev->crystal[c].crystal_id, ev->after_ns, &rt[n], &r);
            if (++n == BATCH) {
                rc = analyse_batch(&an, rec, rt, n, out, &r);
                n = 0;
                if (rc)
                    break;
            }
        }
    }
    if (!rc && n)
        rc = analyse_batch(&an, rec, rt, n, out, &r);
    r.sim_s = tusk_clock_s() - t0 - r.psa_s;
    free(rec);
    free(rt);
    free(out);
    report_t rep;
    memset(&rep, 0, sizeof rep);
    if (!rc) {
        bool ok = true;
        for (int a = 0; a < 3; a++) {
            ok = ok && hist_make(&rep.axis[a], &r.axis[a], -HIST_AXIS_MAX, HIST_AXIS_MAX);
            rep.m[a] = moments(&r.axis[a]);
            rep.fwhm[a] = ok ? hist_fwhm(&rep.axis[a]) : NAN;
        }
        ok = ok && hist_make(&rep.d3, &r.d3, 0, HIST_3D_MAX) && hist_make(&rep.d3_alone, &r.d3_alone, 0, HIST_3D_MAX) &&
             hist_make(&rep.d3_multi, &r.d3_multi, 0, HIST_3D_MAX);
        rep.single = dist3(&r.d3);
        rep.alone = dist3(&r.d3_alone);
        rep.shared = dist3(&r.d3_shared);
        rep.shared1 = dist3(&r.d3_shared1);
        rep.dt = moments(&r.dt);
        for (size_t i = 0; i < r.dt.n; i++)
            r.dt.v[i] = fabs(r.dt.v[i]);
        rep.dt_median = dist3(&r.dt).median;
        rep.multi = dist3(&r.d3_multi);
        if (!ok) {
            fprintf(stderr, PROG ": out of memory\n");
            rc = TUSK_EXIT_FAIL;
        }
    }
    if (!rc) {
        char *text = NULL;
        size_t len = 0;
        FILE *mem = open_memstream(&text, &len);
        if (!mem) {
            fprintf(stderr, PROG ": out of memory\n");
            rc = TUSK_EXIT_FAIL;
        } else {
            print_report(mem, o, &an, sim, &r, &rep);
            fclose(mem);
            fputs(text, stdout);
            if (r.single == 0) {
                fprintf(stderr, PROG ": no single-interaction hits to measure: simulate more decays (--events)\n");
                rc = TUSK_EXIT_FAIL;
            } else if (o->plot) {
                rc = plot(o, &an, &r, &rep, text);
            }
        }
        free(text);
    }
    report_free(&rep);
    results_free(&r);
    sim_destroy(&sim);
    analysis_free(&an);
    return rc;
}

/* ---- run: the psa actor between two files ------------------------------------------ */

/* Input buffers of the one-stage chain (file_producer's <size>), and the
 * psa actor's output buffers: whole frames, analysed a buffer at a time. */
#define RUN_BUFFER (8u << 20)

/* The psa actor on the file, run by the emulator (emulator.h: one stage,
 * file_producer -> psa -> file_writer): the same analysis, rejections,
 * summaries and failures as in any chain. The options are the actor's
 * parameters. */
static int cmd_run(opts_t *o)
{
    /* --set is checked here first, so its mistakes are named as --set's. */
    psa_config_t cfg;
    psa_config_default(&cfg);
    tusk_error_t err;
    if (psa_config_read(&cfg, o->psa, "--set", &err) != TUSK_OK) {
        fprintf(stderr, PROG ": %s\n", err.message);
        return TUSK_EXIT_FAIL;
    }
    enum { MAX_PARAMS = 64 };
    const char *keys[MAX_PARAMS], *values[MAX_PARAMS];
    char threads[32];
    snprintf(threads, sizeof threads, "%u", o->threads);
    unsigned n = 0;
    keys[n] = "basis", values[n++] = o->basis;
    keys[n] = "backend", values[n++] = o->backend;
    keys[n] = "threads", values[n++] = threads;
    keys[n] = "summary", values[n++] = o->quiet ? "no" : "yes"; /* -q: silent but for warnings */
    if (o->device)
        keys[n] = "device", values[n++] = o->device;
    for (size_t i = 0; i < tusk_params_count(o->psa) && n < MAX_PARAMS; i++)
        keys[n] = tusk_params_key(o->psa, i), values[n++] = tusk_params_value(o->psa, i);
    const tusk_emulator_stage_t stage = {.name = "psa",
                                         .library = "psa",
                                         .actor_class = TUSK_FILTER,
                                         .in_size = RUN_BUFFER,
                                         .out_size = RUN_BUFFER,
                                         .n_params = n,
                                         .keys = keys,
                                         .values = values};
    tusk_emulator_stage_result_t res;
    int rc = tusk_emulator_run_stage(&stage, o->in, o->out, NULL, &res, &err) == TUSK_OK ? 0 : TUSK_EXIT_FAIL;
    if (rc) {
        fprintf(stderr, PROG ": %s\n", err.message);
        if (res.ran && strcmp(o->out, "-") != 0)
            unlink(o->out); /* no half-written output passes for a result */
        return rc;
    }
    if (!o->quiet) {
        analysis_t an = {.cfg = cfg};
        describe_psa(stderr, &an, o->backend);
        const tusk_driver_stats_t *st = &res.stats;
        fprintf(stderr,
                PROG " run: %s: %llu frames (data:crystal -> data:psa, other frames copied) -> %s: %llu frames, "
                     "%llu bytes in %.2f s (PSA %.2f s)\n",
                o->in, (unsigned long long)st->frames_in, o->out, (unsigned long long)st->frames_out,
                (unsigned long long)st->bytes_out, res.seconds, 1e-9 * (double)st->ns);
    }
    return 0;
}

static int cmd(const tusk_cli_t *cli, int argc, char **argv)
{
    opts_t o;
    memset(&o, 0, sizeof o);
    o.validate = strcmp(strchr(argv[0], ' ') + 1, "validate") == 0;
    o.psa = tusk_params_new();
    o.sim = tusk_params_new();
    int rc;
    if (!o.psa || !o.sim) {
        fprintf(stderr, PROG ": out of memory\n");
        rc = TUSK_EXIT_FAIL;
    } else {
        rc = parse_options(cli, argc, argv, &o);
        if (rc == -1)
            rc = 0; /* --help */
        else if (rc == 0)
            rc = o.validate ? cmd_validate(&o) : cmd_run(&o);
    }
    tusk_params_destroy(&o.psa);
    tusk_params_destroy(&o.sim);
    return rc;
}

static const tusk_cli_command_t commands[] = {
    {"validate", cmd, "simulate decays into one crystal and measure the PSA's position residuals"},
    {"run", cmd, "analyse an ADF file offline: data:crystal -> data:psa"},
    {NULL, NULL, NULL}};

int main(int argc, char **argv)
{
    static const tusk_cli_t cli = {PROG, PACKAGE_VERSION, "COMMAND [OPTIONS]", commands, NULL, help};
    return tusk_cli_main(&cli, argc, argv);
}
