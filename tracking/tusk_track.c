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
 * Exit statuses (base/exit.h): 0 fine, 1 failure (array, settings,
 * device, input or output file, or the wrong data; messages name the
 * file), 2 usage.
 */
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cli.h"
#include "base/exit.h"
#include "base/parse.h"
#include "config.h"
#include "emulator/emulator.h"
#include "tusk/params.h"
#include "tusk/track.h"

#define PROG "tusk-track"

static void help(FILE *out)
{
    fprintf(out,
            "Gamma-ray tracking of an ADF file: every frame is copied, and each event:data:psa\n"
            "composite (or data:truth frame, with the truth points) is followed by its\n"
            "data:tracked frame.\n"
            "\n"
            "  -o, --output FILE      the output ADF file (- for standard output)\n"
            "  --array FILE           the array geometry (as the simulation's; required)\n"
            "  --points MODE          psa (event:data:psa hits), truth (every data:truth point)\n"
            "                         or truth_segments (truth merged per segment) (psa)\n"
            "  --backend B            reference (CPU, one thread), fast (CPU, --threads threads)\n"
            "                         or opencl (reference)\n"
            "  --threads N            host threads of fast and opencl (0: one per online CPU; 0)\n"
            "  --device SETTING       OpenCL device (tusk-cl list; default $TUSK_CL_DEVICE, any)\n"
            "  --set KEY=VALUE        an algorithm setting: cone_deg, recluster_deg, max_points,\n"
            "                         fom_max, single_min_prob, w0_mm, w1_mm, inner_radius_mm,\n"
            "                         min_point_kev (tracking/README.md)\n"
            "  -q, --quiet            no summary (warnings are printed)\n"
            "  -h, --help             this help\n"
            "\n"
            "Exit status: 0 fine, 1 failure (array, settings, device, input or output\n"
            "file, or no frame of the points' type among data of other types), 2 bad usage.\n");
}

typedef struct opts {
    const char *in, *out, *array, *points, *device, *backend, *threads;
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

static int parse_options(const tusk_cli_t *cli, int argc, char **argv, opts_t *o)
{
    static const struct option longs[] = {
        {"output", required_argument, NULL, 'o'}, {"array", required_argument, NULL, 'a'},
        {"points", required_argument, NULL, 'p'}, {"backend", required_argument, NULL, 'B'},
        {"device", required_argument, NULL, 'd'}, {"set", required_argument, NULL, 's'},
        {"threads", required_argument, NULL, 't'}, {"quiet", no_argument, NULL, 'q'},
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
    if (!o->out || !o->array) {
        fprintf(stderr, "%s: %s is required\n", argv[0], !o->out ? "-o OUT.adf" : "--array FILE");
        return TUSK_EXIT_USAGE;
    }
    return 0;
}

static int cmd(const tusk_cli_t *cli, int argc, char **argv)
{
    opts_t o;
    memset(&o, 0, sizeof o);
    o.backend = "reference";
    o.set = tusk_params_new();
    if (!o.set) {
        fprintf(stderr, PROG ": out of memory\n");
        return TUSK_EXIT_FAIL;
    }
    int rc = parse_options(cli, argc, argv, &o);
    if (rc == -1)
        rc = 0;
    else if (rc == 0)
        rc = cmd_run(&o);
    tusk_params_destroy(&o.set);
    return rc;
}

static const tusk_cli_command_t commands[] = {
    {"run", cmd, "track an ADF file: a data:tracked frame after each event"},
    {NULL, NULL, NULL}};

int main(int argc, char **argv)
{
    static const tusk_cli_t cli = {PROG, PACKAGE_VERSION, "run IN.adf -o OUT.adf --array FILE [OPTIONS]", commands,
                                   NULL, help};
    return tusk_cli_main(&cli, argc, argv);
}
