/* tusk-track - gamma-ray tracking of an ADF file, offline (what the
 * tracking actor does to a stream, for analysts).
 *
 *   tusk-track run IN.adf -o OUT.adf --array FILE [--points psa|truth|truth_segments]
 *              [--backend reference|fast|opencl] [--threads N] [--device SETTING]
 *              [--set KEY=VALUE]... [-q]
 *
 * Every frame of IN is copied to OUT in order; each event:data:psa
 * composite (psa points) or data:truth frame (truth, truth_segments) is
 * followed by a data:tracked frame with its event number and timestamp.
 * It is the tracking actor itself (actors/tracking.c), run on the file by
 * the emulator (emulator/emulator.h, one stage): the file is tracked in
 * buffers of 8 MiB of whole frames (one batch each, one kernel launch per
 * pass on OpenCL), with the actor's checks; fast and opencl use --threads
 * host threads (0, the default: one per online CPU), reference one; the
 * output is the same file for every number of threads. --set takes the algorithm's
 * keys (tusk/track.h, tracking/README.md); unknown keys are refused. -q
 * drops the summaries (the actor's summary = no), not the warnings.
 *
 * A file with no frame of the type the points take (event:data:psa, or
 * data:truth) but data of other types, say data:crystal frames of
 * events not built yet, fails naming the types that came and what to
 * do: nothing tracked is no result. One with nothing to track and no
 * other data either (an empty file) is copied, with a WARNING.
 *
 *   tusk-track losses IN.adf --array FILE [--set KEY=VALUE]... [--energy E]
 *
 * Where tracking loses gammas (docs/validation.md): the data:truth frames
 * of IN (tusk-sim run) are tracked with every true interaction point (the
 * ideal tracker, the reference backend), and each emitted gamma that left
 * all its energy in the germanium (its points' sum within 1 keV of its
 * energy; --energy: only gammas of that line, +-0.5 keV) is recovered
 * when an accepted gamma is exactly its points, or lost, by cause: its
 * points in several clusters at cone_deg (spread), in one cluster with
 * other gammas' points (shared), alone but more than max_points (oversize:
 * split, or merged and not kept), alone and one point (single) or alone and
 * rejected by its figure of merit (fom). Accepted gammas that are not
 * exactly one emitted gamma's points are counted too (part of one gamma,
 * or of several), and the recovered ones that were merged, accepted in
 * the second pass, single points or recombined (recombine_points). One
 * "cause,gammas,fraction" line each on stdout.
 *
 * Exit statuses (base/exit.h): 0 fine, 1 failure (array, settings,
 * device, input or output file, or the wrong data; messages name the
 * file), 2 usage.
 */
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tracking/tracking_private.h"
#include "base/cli.h"
#include "base/exit.h"
#include "base/grow.h"
#include "base/parse.h"
#include "config.h"
#include "emulator/emulator.h"
#include "tusk/adf_file.h"
#include "tusk/params.h"
#include "tusk/track.h"

#define PROG "tusk-track"

static void help(FILE *out)
{
    fprintf(out,
            "Gamma-ray tracking of an ADF file: every frame is copied, and each event:data:psa\n"
            "composite (or data:truth frame, with the truth points) is followed by its\n"
            "data:tracked frame. losses: the ideal tracker (data:truth points) on the file,\n"
            "and where the full-energy gammas it does not recover are lost, by cause.\n"
            "\n"
            "  -o, --output FILE      the output ADF file (- for standard output)\n"
            "  --array FILE           the array geometry (as the simulation's; required)\n"
            "  --points MODE          psa (event:data:psa hits), truth (every data:truth point)\n"
            "                         or truth_segments (truth merged per segment) (psa)\n"
            "  --backend B            reference (CPU, one thread), fast (CPU, --threads threads)\n"
            "                         or opencl (reference)\n"
            "  --threads N            host threads of fast and opencl (0: one per online CPU; 0)\n"
            "  --device SETTING       OpenCL device (tusk-cl list; default $TUSK_CL_DEVICE, any)\n"
            "  --set KEY=VALUE        an algorithm setting: preset (psa or exact: w0_mm, w1_mm\n"
            "                         and recombine_points for PSA or exact points), cone_deg,\n"
            "                         recluster_deg, max_points,\n"
            "                         oversize, merge_points, recombine_points, fom_max,\n"
            "                         single_min_prob, w0_mm,\n"
            "                         w1_mm, inner_radius_mm, min_point_kev (tracking/README.md)\n"
            "  --energy E             losses: only the full-energy gammas of the line E keV\n"
            "  -q, --quiet            no summary (warnings are printed)\n"
            "  -h, --help             this help\n"
            "\n"
            "Exit status: 0 fine, 1 failure (array, settings, device, input or output\n"
            "file, or no frame of the points' type among data of other types), 2 bad usage.\n");
}

typedef struct opts {
    const char *in, *out, *array, *points, *device, *backend, *threads, *energy;
    bool losses;
    bool quiet;
    tusk_params_t *set;
} opts_t;

/* Input buffers of the one-stage chain (file_producer's <size>), and the
 * tracking actor's output buffers: whole frames, tracked a buffer at a
 * time. */
#define RUN_BUFFER (8u << 20)

/* The tracking actor on the file, run by the emulator (emulator.h: one
 * stage, file_producer -> tracking -> file_writer): the options are its
 * parameters, its failures (naming the file, frame and what is wrong)
 * are the command's. */
static int cmd_run(const opts_t *o)
{
    track_config_t cfg;
    track_config_default(&cfg);
    tusk_error_t err;
    if (o->points) {
        int p = track_points_parse(o->points);
        if (p < 0) {
            fprintf(stderr, PROG ": --points: '%s' is not psa, truth or truth_segments\n", o->points);
            return TUSK_EXIT_USAGE;
        }
        cfg.points = (enum track_points)p;
    }
    /* --set holds the algorithm's keys only, checked here first so that
     * its mistakes are named as --set's. */
    if (track_config_read(&cfg, o->set, true, "--set", &err) != TUSK_OK) {
        fprintf(stderr, PROG ": %s\n", err.message);
        return TUSK_EXIT_FAIL;
    }
    enum { MAX_PARAMS = 64 };
    const char *keys[MAX_PARAMS], *values[MAX_PARAMS];
    unsigned n = 0;
    keys[n] = "array", values[n++] = o->array;
    keys[n] = "points", values[n++] = track_points_name(cfg.points);
    keys[n] = "backend", values[n++] = o->backend;
    if (o->threads)
        keys[n] = "threads", values[n++] = o->threads;
    keys[n] = "summary", values[n++] = o->quiet ? "no" : "yes";
    if (o->device)
        keys[n] = "device", values[n++] = o->device;
    for (size_t i = 0; i < tusk_params_count(o->set) && n < MAX_PARAMS; i++)
        keys[n] = tusk_params_key(o->set, i), values[n++] = tusk_params_value(o->set, i);
    const tusk_emulator_stage_t stage = {.name = "tracking",
                                         .library = "tracking",
                                         .actor_class = TUSK_FILTER,
                                         .in_size = RUN_BUFFER,
                                         .out_size = RUN_BUFFER,
                                         .n_params = n,
                                         .keys = keys,
                                         .values = values};
    tusk_emulator_stage_result_t res;
    if (tusk_emulator_run_stage(&stage, o->in, o->out, NULL, &res, &err) != TUSK_OK) {
        fprintf(stderr, PROG ": %s\n", err.message);
        if (res.ran && strcmp(o->out, "-") != 0)
            unlink(o->out); /* no half-written output passes for a result */
        return TUSK_EXIT_FAIL;
    }
    if (!o->quiet) {
        /* The actor's own line (above) has the tracking's counts and device. */
        const tusk_driver_stats_t *st = &res.stats;
        const uint64_t events = st->frames_out - st->frames_in; /* a data:tracked frame each */
        const double track_s = 1e-9 * (double)st->ns;
        fprintf(stderr, PROG " run: %s: %llu frames, %llu events tracked (%s points, %s backend) -> %s, %llu bytes\n",
                o->in, (unsigned long long)st->frames_in, (unsigned long long)events, track_points_name(cfg.points),
                o->backend, o->out, (unsigned long long)st->bytes_out);
        fprintf(stderr, PROG " run: %.2f s in all, in the tracking actor %.3f s (%.0f events/s)\n", res.seconds,
                track_s, track_s > 0 ? (double)events / track_s : 0.0);
    }
    return 0;
}

/* ---- losses ------------------------------------------------------------------------ */

enum loss {
    L_RECOVERED, L_SPREAD, L_SHARED, L_OVERSIZE, L_SINGLE, L_FOM, L_COUNT
};
static const char *const loss_names[L_COUNT] = {"recovered", "lost_spread", "lost_shared", "lost_oversize",
                                                 "lost_single", "lost_fom"};

#define LOSS_BATCH 2048 /* events tracked at a time */

typedef struct loss_tally {
    uint64_t full, cause[L_COUNT];
    uint64_t accepted, accepted_whole, accepted_part, accepted_mixed;
    uint64_t recovered_merged, recovered_second, recovered_single, recovered_recombined;
} loss_tally_t;

/* One batch's events (their truth in tr[], the gamma of each batch point
 * in gam[]) tracked and tallied. */
static int losses_batch(track_t *t, track_batch_t *b, const adf_truth_t *tr, const uint16_t *gam, double line,
                        loss_tally_t *y, tusk_error_t *err)
{
    const track_config_t *cfg = track_config(t);
    if (track_batch_events(b) == 0)
        return TUSK_OK;
    int st = track_run(t, b, err);
    if (st)
        return st;
    size_t nc = 0;
    trk_cluster_t *cl = track_last_clusters(t, &nc);
    if (!cl && nc)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    /* accepted[p]: the accepted cluster point p ended in (or SIZE_MAX) */
    size_t np = track_batch_points(b);
    size_t *acc = malloc((np ? np : 1) * sizeof *acc);
    unsigned *lab = malloc((np ? np : 1) * sizeof *lab);
    if (!acc || !lab) {
        free(acc);
        free(lab);
        free(cl);
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    }
    for (size_t p = 0; p < np; p++)
        acc[p] = SIZE_MAX;
    for (size_t i = 0; i < nc; i++) {
        if (!cl[i].accepted)
            continue;
        y->accepted++;
        unsigned g0 = gam[cl[i].pt[0]];
        bool one = true;
        for (unsigned k = 0; k < cl[i].m; k++) {
            acc[cl[i].pt[k]] = i;
            one = one && gam[cl[i].pt[k]] == g0;
        }
        if (!one)
            y->accepted_mixed++;
    }
    size_t base = 0;
    for (size_t e = 0; e < track_batch_events(b); e++) {
        size_t n;
        const track_point_t *pts = track_batch_event_points(b, e, &n, NULL, NULL);
        const adf_truth_t *x = &tr[e];
        const uint16_t *eg = gam + base;
        size_t k = track_cluster(pts, n, cfg->cone_deg, lab);
        (void)k;
        for (unsigned g = 0; g < x->n_gammas; g++) {
            /* its points in the batch */
            double dep = 0.0;
            size_t cnt = 0, first = SIZE_MAX;
            for (size_t p = 0; p < n; p++)
                if (eg[p] == g) {
                    dep += pts[p].energy;
                    cnt++;
                    if (first == SIZE_MAX)
                        first = p;
                }
            const double emitted = x->gamma[g].energy;
            if (cnt == 0 || fabs(dep - emitted) > 1.0 || (line > 0.0 && fabs(emitted - line) > 0.5))
                continue;
            y->full++;
            /* recovered: one accepted cluster with exactly its points */
            size_t a = acc[base + first];
            bool whole = a != SIZE_MAX && cl[a].m == cnt;
            for (size_t p = 0; p < n && whole; p++)
                if (eg[p] == g && acc[base + p] != a)
                    whole = false;
            if (whole) {
                y->cause[L_RECOVERED]++;
                y->recovered_merged += (cl[a].flags & TRACK_GAMMA_MERGED) != 0;
                y->recovered_second += cl[a].pass == 1;
                y->recovered_recombined += cl[a].pass == 2;
                y->recovered_single += cnt == 1;
                continue;
            }
            bool spread = false, shared = false;
            for (size_t p = 0; p < n; p++) {
                if (eg[p] == g && lab[p] != lab[first])
                    spread = true;
                if (eg[p] != g && lab[p] == lab[first])
                    shared = true;
            }
            enum loss why = spread ? L_SPREAD : shared ? L_SHARED : cnt > cfg->max_points ? L_OVERSIZE : cnt == 1 ? L_SINGLE : L_FOM;
            y->cause[why]++;
        }
        base += n;
    }
    /* accepted clusters that are one gamma's points: all of them, or a part */
    for (size_t i = 0; i < nc; i++) {
        if (!cl[i].accepted)
            continue;
        unsigned g0 = gam[cl[i].pt[0]];
        bool one = true;
        for (unsigned k = 0; k < cl[i].m; k++)
            one = one && gam[cl[i].pt[k]] == g0;
        if (!one)
            continue;
        /* the gamma's points in the event: all in this cluster? */
        size_t n = 0;
        const track_point_t *pts = track_batch_event_points(b, cl[i].ev, &n, NULL, NULL);
        const size_t ev_first = (size_t)(pts - track_batch_event_points(b, 0, NULL, NULL, NULL));
        size_t cnt = 0;
        for (size_t p = ev_first; p < ev_first + n; p++)
            cnt += gam[p] == g0;
        if (cnt == cl[i].m)
            y->accepted_whole++;
        else
            y->accepted_part++;
    }
    free(acc);
    free(lab);
    free(cl);
    return TUSK_OK;
}

static int cmd_losses(const opts_t *o)
{
    track_config_t cfg;
    track_config_default(&cfg);
    cfg.points = TRACK_POINTS_TRUTH;
    tusk_error_t err;
    double line = 0.0;
    if (o->energy && tusk_parse_double(o->energy, 1e-3, 1e5, &line) != 0) {
        fprintf(stderr, PROG ": --energy: '%s' is not an energy in keV above 0\n", o->energy);
        return TUSK_EXIT_USAGE;
    }
    if (track_config_read(&cfg, o->set, true, "--set", &err) != TUSK_OK) {
        fprintf(stderr, PROG ": %s\n", err.message);
        return TUSK_EXIT_FAIL;
    }
    if (o->points && track_points_parse(o->points) != TRACK_POINTS_TRUTH)
        cfg.points = TRACK_POINTS_PSA; /* refused below */
    if (cfg.points != TRACK_POINTS_TRUTH) {
        fprintf(stderr, PROG ": losses: points must be truth (every true point has its gamma)\n");
        return TUSK_EXIT_USAGE;
    }
    array_t *array = NULL;
    track_t *t = NULL;
    track_batch_t *b = track_batch_new();
    adf_truth_t *tr = malloc(LOSS_BATCH * sizeof *tr);
    uint16_t *gam = NULL;
    size_t gam_n = 0, gam_cap = 0;
    adf_file_reader_t *r = NULL;
    int rc = TUSK_EXIT_FAIL;
    loss_tally_t y;
    memset(&y, 0, sizeof y);
    if (!b || !tr) {
        fprintf(stderr, PROG ": out of memory\n");
        goto out;
    }
    if (array_load(&array, o->array, NULL, &err) != TUSK_OK || track_new(&t, &cfg, array, &err) != TUSK_OK) {
        fprintf(stderr, PROG ": %s\n", err.message);
        goto out;
    }
    adf_error_t ae;
    if (!(r = adf_file_reader_open(o->in, NULL, &ae))) {
        fprintf(stderr, PROG ": %s: %s\n", o->in, ae.message);
        goto out;
    }
    size_t events = 0, frames = 0;
    for (;;) {
        adf_frame_t fr;
        const int rr = adf_file_reader_next(r, &fr);
        if (rr != ADF_OK && rr != ADF_END) {
            fprintf(stderr, PROG ": %s: %s\n", o->in, adf_file_reader_error(r)->message);
            goto out;
        }
        const int n = rr == ADF_OK;
        if (n == 0 || track_batch_events(b) == LOSS_BATCH) {
            if (losses_batch(t, b, tr, gam, line, &y, &err) != TUSK_OK) {
                fprintf(stderr, PROG ": %s\n", err.message);
                goto out;
            }
            track_batch_clear(b);
            gam_n = 0;
            if (n == 0)
                break;
        }
        frames++;
        if (fr.key.type != ADF_TYPE_DATA_TRUTH)
            continue;
        adf_truth_t *x = &tr[track_batch_events(b)];
        if (adf_truth_decode(&fr, x, &ae) != ADF_OK) {
            fprintf(stderr, PROG ": %s: offset %llu: %s\n", o->in, (unsigned long long)fr.offset, ae.message);
            goto out;
        }
        size_t before = track_batch_points(b);
        if (track_batch_begin(b, fr.key.event, fr.key.timestamp, &err) != TUSK_OK ||
            track_add_truth(t, b, x, false, &err) != TUSK_OK) {
            fprintf(stderr, PROG ": %s: offset %llu: %s\n", o->in, (unsigned long long)fr.offset, err.message);
            goto out;
        }
        /* the points track_add_truth took: those above min_point_kev, in order */
        if (tusk_grow(&gam, &gam_cap, gam_n + x->n_points, sizeof *gam)) {
            fprintf(stderr, PROG ": out of memory\n");
            goto out;
        }
        for (unsigned i = 0; i < x->n_points; i++)
            if (x->point[i].energy > cfg.min_point_kev)
                gam[gam_n++] = x->point[i].gamma;
        if (gam_n != track_batch_points(b) || track_batch_points(b) - before > x->n_points) {
            fprintf(stderr, PROG ": internal: points of event %u do not match its truth\n", (unsigned)fr.key.event);
            goto out;
        }
        events++;
    }
    if (events == 0) {
        fprintf(stderr, PROG ": %s: no data:truth frame among %zu frames (tusk-sim run writes them, truth = yes)\n",
                o->in, frames);
        goto out;
    }
    printf("cause,gammas,fraction\n");
    printf("full_energy,%llu,1\n", (unsigned long long)y.full);
    for (int c = 0; c < L_COUNT; c++)
        printf("%s,%llu,%.4f\n", loss_names[c], (unsigned long long)y.cause[c],
               y.full ? (double)y.cause[c] / (double)y.full : 0.0);
    printf("recovered_merged,%llu,%.4f\n", (unsigned long long)y.recovered_merged,
           y.full ? (double)y.recovered_merged / (double)y.full : 0.0);
    printf("recovered_second_pass,%llu,%.4f\n", (unsigned long long)y.recovered_second,
           y.full ? (double)y.recovered_second / (double)y.full : 0.0);
    printf("recovered_single,%llu,%.4f\n", (unsigned long long)y.recovered_single,
           y.full ? (double)y.recovered_single / (double)y.full : 0.0);
    printf("recovered_recombined,%llu,%.4f\n", (unsigned long long)y.recovered_recombined,
           y.full ? (double)y.recovered_recombined / (double)y.full : 0.0);
    /* of all accepted gammas (any energy): their shares */
    printf("accepted,%llu,1\n", (unsigned long long)y.accepted);
    printf("accepted_whole_gamma,%llu,%.4f\n", (unsigned long long)y.accepted_whole,
           y.accepted ? (double)y.accepted_whole / (double)y.accepted : 0.0);
    printf("accepted_part_of_gamma,%llu,%.4f\n", (unsigned long long)y.accepted_part,
           y.accepted ? (double)y.accepted_part / (double)y.accepted : 0.0);
    printf("accepted_mixed_gammas,%llu,%.4f\n", (unsigned long long)y.accepted_mixed,
           y.accepted ? (double)y.accepted_mixed / (double)y.accepted : 0.0);
    if (!o->quiet) {
        track_stats_t st;
        char text[1024];
        track_stats(t, &st);
        track_stats_format(&st, text, sizeof text);
        fprintf(stderr, PROG " losses: %s: %zu events; %s\n", o->in, events, text);
    }
    rc = 0;
out:
    adf_file_reader_destroy(&r);
    track_destroy(&t);
    array_destroy(&array);
    track_batch_destroy(&b);
    free(tr);
    free(gam);
    return rc;
}

static int parse_options(const tusk_cli_t *cli, int argc, char **argv, opts_t *o)
{
    static const struct option longs[] = {
        {"output", required_argument, NULL, 'o'}, {"array", required_argument, NULL, 'a'},
        {"points", required_argument, NULL, 'p'}, {"backend", required_argument, NULL, 'B'},
        {"device", required_argument, NULL, 'd'}, {"set", required_argument, NULL, 's'},
        {"threads", required_argument, NULL, 't'}, {"quiet", no_argument, NULL, 'q'},
        {"energy", required_argument, NULL, 'e'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    optind = 1;
    int c;
    while ((c = tusk_cli_getopt(cli, argc, argv, "o:qh", longs, NULL)) != -1) {
        switch (c) {
        case 'o':
            o->out = optarg;
            break;
        case 'a':
            o->array = optarg;
            break;
        case 'p':
            o->points = optarg;
            break;
        case 'B':
            if (strcmp(optarg, "opencl") != 0 && strcmp(optarg, "fast") != 0 && strcmp(optarg, "reference") != 0) {
                fprintf(stderr, "%s: --backend: '%s' is not reference, fast or opencl\n", argv[0], optarg);
                return TUSK_EXIT_USAGE;
            }
            o->backend = optarg;
            break;
        case 't': {
            unsigned v;
            if (!tusk_cli_unsigned(argv[0], "--threads", optarg, 0, 1024, &v))
                return TUSK_EXIT_USAGE;
            o->threads = optarg;
            break;
        }
        case 'd':
            o->device = optarg;
            break;
        case 'e':
            o->energy = optarg;
            break;
        case 's':
            if (!tusk_cli_set(argv[0], o->set, optarg))
                return TUSK_EXIT_USAGE;
            break;
        case 'q':
            o->quiet = true;
            break;
        case 'h':
            tusk_cli_help(cli);
            return -1;
        default:
            return TUSK_EXIT_USAGE;
        }
    }
    if (optind + 1 != argc) {
        fprintf(stderr, "%s: give one input file\n", argv[0]);
        return TUSK_EXIT_USAGE;
    }
    o->in = argv[optind];
    if (o->losses && !o->out)
        o->out = "-"; /* losses writes no file */
    if (!o->losses && o->energy) {
        fprintf(stderr, "%s: --energy is an option of losses\n", argv[0]);
        return TUSK_EXIT_USAGE;
    }
    if (!o->out || !o->array) {
        fprintf(stderr, "%s: %s is required\n", argv[0], !o->out ? "-o OUT.adf" : "--array FILE");
        return TUSK_EXIT_USAGE;
    }
    return 0;
}

static int cmd_any(const tusk_cli_t *cli, int argc, char **argv, bool losses)
{
    opts_t o;
    memset(&o, 0, sizeof o);
    o.backend = "reference";
    o.losses = losses;
    o.set = tusk_params_new();
    if (!o.set) {
        fprintf(stderr, PROG ": out of memory\n");
        return TUSK_EXIT_FAIL;
    }
    int rc = parse_options(cli, argc, argv, &o);
    if (rc == -1)
        rc = 0;
    else if (rc == 0)
        rc = o.losses ? cmd_losses(&o) : cmd_run(&o);
    tusk_params_destroy(&o.set);
    return rc;
}

static int cmd(const tusk_cli_t *cli, int argc, char **argv)
{
    return cmd_any(cli, argc, argv, false);
}

static int cmd_l(const tusk_cli_t *cli, int argc, char **argv)
{
    return cmd_any(cli, argc, argv, true);
}

static const tusk_cli_command_t commands[] = {
    {"run", cmd, "track an ADF file: a data:tracked frame after each event"},
    {"losses", cmd_l, "where the ideal tracker loses full-energy gammas, by cause (data:truth)"},
    {NULL, NULL, NULL}};

int main(int argc, char **argv)
{
    static const tusk_cli_t cli = {PROG, PACKAGE_VERSION, "run IN.adf -o OUT.adf --array FILE [OPTIONS]\nlosses IN.adf --array FILE [--energy E] [--set KEY=VALUE]...", commands,
                                   NULL, help};
    return tusk_cli_main(&cli, argc, argv);
}
