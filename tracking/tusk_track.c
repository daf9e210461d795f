/* tusk-track - gamma-ray tracking of an ADF file, offline (what the
 * tracking actor does to a stream, for analysts).
 *
 *   tusk-track run IN.adf -o OUT.adf --array FILE [--points psa|truth|truth_segments]
 *              [--backend reference|opencl] [--device SETTING] [--set KEY=VALUE]... [-q]
 *
 * Every frame of IN is copied to OUT in order; each event:data:psa
 * composite (psa points) or data:truth frame (truth, truth_segments) is
 * followed by a data:tracked frame with its event number and timestamp.
 * The file is tracked in chunks of about 4096 events (one batch each, one
 * kernel launch per pass on OpenCL). --set takes the algorithm's keys
 * (tusk/track.h, tracking/README.md); unknown keys are refused.
 *
 * Exit statuses (base/exit.h): 0 fine, 1 failure (array, settings,
 * device, input or output file; messages name the file), 2 usage.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cli.h"
#include "base/clock.h"
#include "base/exit.h"
#include "base/grow.h"
#include "base/parse.h"
#include "config.h"
#include "tusk/adf_file.h"
#include "tusk/adf_key.h"
#include "tusk/adf_writer.h"
#include "tusk/params.h"
#include "tusk/array.h"
#include "tusk/track.h"
#include "tusk/track_cl.h"

#define PROG "tusk-track"
#define CHUNK_EVENTS 4096
#define CHUNK_BYTES (8u << 20)

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
            "  --backend B            reference (CPU) or opencl (reference)\n"
            "  --device SETTING       OpenCL device (tusk-cl list; default $TUSK_CL_DEVICE, any)\n"
            "  --set KEY=VALUE        an algorithm setting: cone_deg, recluster_deg, max_points,\n"
            "                         fom_max, single_min_prob, w0_mm, w1_mm, inner_radius_mm,\n"
            "                         min_point_kev (tracking/README.md)\n"
            "  -q, --quiet            no summary\n"
            "  -h, --help             this help\n"
            "\n"
            "Exit status: 0 fine, 1 failure (array, settings, device, input or output\n"
            "file), 2 bad usage.\n");
}

typedef struct opts {
    const char *in, *out, *array, *points, *device;
    bool opencl, quiet;
    tusk_params_t *set;
} opts_t;

typedef struct runner {
    const opts_t *o;
    track_t *t;
    track_cl_t *cl;
    track_batch_t *b;
    adf_writer_t *w;
    adf_file_writer_t *fw;
    uint8_t *pending, *out;
    size_t n, cap, out_cap;
    uint64_t base;            /* file offset of the first pending byte */
    uint64_t frames, sources, events;
    double track_s;
} runner_t;

/* Track the pending frames and append the result to the output file. */
static int flush(runner_t *r)
{
    if (r->n == 0)
        return 0;
    tusk_error_t err;
    if (track_frames_read(r->t, r->b, r->pending, r->n, r->base, &err) != TUSK_OK) {
        fprintf(stderr, PROG ": %s: %s\n", r->o->in, err.message);
        return TUSK_EXIT_FAIL;
    }
    double t0 = tusk_clock_s();
    int st = r->cl ? track_cl_run(r->cl, r->b, &err) : track_run(r->t, r->b, &err);
    r->track_s += tusk_clock_s() - t0;
    if (st != TUSK_OK) {
        fprintf(stderr, PROG ": %s: %s\n", r->o->in, err.message);
        return TUSK_EXIT_FAIL;
    }
    r->events += track_batch_events(r->b);
    size_t need = r->n + track_frames_extra(r->b);
    if (tusk_grow(&r->out, &r->out_cap, need, 1) != 0) {
        fprintf(stderr, PROG ": out of memory (%zu bytes)\n", need);
        return TUSK_EXIT_FAIL;
    }
    adf_writer_reset(r->w, r->out, r->out_cap);
    if (track_frames_write(r->t, r->b, r->pending, r->n, r->w, &err) != TUSK_OK) {
        fprintf(stderr, PROG ": %s: %s\n", r->o->out, err.message);
        return TUSK_EXIT_FAIL;
    }
    adf_error_t ae;
    if (adf_file_writer_write(r->fw, r->out, adf_writer_used(r->w), &ae) != ADF_OK) {
        fprintf(stderr, PROG ": %s\n", ae.message);
        return TUSK_EXIT_FAIL;
    }
    r->base += r->n;
    r->n = 0;
    r->sources = 0;
    return 0;
}

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
    if (track_config_read(&cfg, o->set, true, "--set", &err) != TUSK_OK) {
        fprintf(stderr, PROG ": %s\n", err.message);
        return TUSK_EXIT_FAIL;
    }
    runner_t r;
    memset(&r, 0, sizeof r);
    r.o = o;
    array_t *array = NULL;
    int rc = 0;
    adf_file_reader_t *in = NULL;
    adf_error_t ae;
    if (array_load(&array, o->array, NULL, &err) != TUSK_OK || track_new(&r.t, &cfg, array, &err) != TUSK_OK) {
        fprintf(stderr, PROG ": %s\n", err.message);
        rc = TUSK_EXIT_FAIL;
        goto done;
    }
    if (o->opencl && track_cl_new(&r.cl, r.t, o->device, 0, &err) != TUSK_OK) {
        fprintf(stderr, PROG ": --backend opencl: %s\n", err.message);
        rc = TUSK_EXIT_FAIL;
        goto done;
    }
    r.b = track_batch_new();
    r.w = adf_writer_new();
    if (!r.b || !r.w) {
        fprintf(stderr, PROG ": out of memory\n");
        rc = TUSK_EXIT_FAIL;
        goto done;
    }
    if (!(in = adf_file_reader_open(o->in, NULL, &ae))) {
        fprintf(stderr, PROG ": %s\n", ae.message);
        rc = TUSK_EXIT_FAIL;
        goto done;
    }
    if (!(r.fw = adf_file_writer_open(o->out, &ae))) {
        fprintf(stderr, PROG ": %s\n", ae.message);
        rc = TUSK_EXIT_FAIL;
        goto done;
    }
    const uint32_t source = cfg.points == TRACK_POINTS_PSA ? ADF_TYPE_EVENT_DATA_PSA : ADF_TYPE_DATA_TRUTH;
    double t0 = tusk_clock_s();
    adf_frame_t fr;
    while (!rc) {
        int st = adf_file_reader_next(in, &fr);
        if (st == ADF_END)
            break;
        if (st != ADF_OK) {
            fprintf(stderr, PROG ": %s: %s\n", o->in, adf_file_reader_error(in)->message);
            rc = TUSK_EXIT_FAIL;
            break;
        }
        r.frames++;
        size_t len = ADF_KEY_SIZE + (size_t)fr.payload_size;
        if (tusk_grow(&r.pending, &r.cap, r.n + len, 1) != 0) {
            fprintf(stderr, PROG ": out of memory\n");
            rc = TUSK_EXIT_FAIL;
            break;
        }
        if (adf_key_encode(&fr.key, r.pending + r.n, &ae) != ADF_OK) {
            fprintf(stderr, PROG ": %s: offset %llu: %s\n", o->in, (unsigned long long)fr.offset, ae.message);
            rc = TUSK_EXIT_FAIL;
            break;
        }
        memcpy(r.pending + r.n + ADF_KEY_SIZE, fr.payload, fr.payload_size);
        r.n += len;
        r.sources += fr.key.type == source;
        if (r.sources >= CHUNK_EVENTS || r.n >= CHUNK_BYTES)
            rc = flush(&r);
    }
    if (!rc)
        rc = flush(&r);
    double dt = tusk_clock_s() - t0;
    uint64_t bytes = adf_file_writer_bytes(r.fw);
    if (adf_file_writer_close(&r.fw, &ae) != ADF_OK && !rc) {
        fprintf(stderr, PROG ": %s\n", ae.message);
        rc = TUSK_EXIT_FAIL;
    }
    if (rc && strcmp(o->out, "-") != 0)
        unlink(o->out); /* no half-written output passes for a result */
    if (!rc && !o->quiet) {
        track_stats_t s;
        track_stats(r.t, &s);
        char line[768];
        track_stats_format(&s, line, sizeof line);
        fprintf(stderr, PROG " run: %s: %llu frames, %llu events tracked (%s points, %s%s) -> %s, %llu bytes\n",
                o->in, (unsigned long long)r.frames, (unsigned long long)r.events, track_points_name(cfg.points),
                r.cl ? "opencl on " : "reference backend", r.cl ? track_cl_describe(r.cl) : "", o->out,
                (unsigned long long)bytes);
        fprintf(stderr, PROG " run: %s\n", line);
        fprintf(stderr, PROG " run: %.2f s in all, tracking %.3f s (%.0f events/s)\n", dt, r.track_s,
                r.track_s > 0 ? (double)r.events / r.track_s : 0.0);
        if (r.events == 0)
            fprintf(stderr,
                    PROG " run: note: no %s frames in %s%s\n", cfg.points == TRACK_POINTS_PSA ? "event:data:psa" :
                    "data:truth", o->in,
                    cfg.points == TRACK_POINTS_PSA ? " (build events first: event_builder; or --points truth on "
                                                     "simulated data)"
                                                   : " (simulate with truth = yes)");
    }
done:
    adf_file_reader_destroy(&in);
    if (r.fw)
        adf_file_writer_close(&r.fw, &ae);
    track_cl_destroy(&r.cl);
    track_destroy(&r.t);
    array_destroy(&array);
    track_batch_destroy(&r.b);
    adf_writer_destroy(&r.w);
    free(r.pending);
    free(r.out);
    return rc;
}

static int parse_options(const tusk_cli_t *cli, int argc, char **argv, opts_t *o)
{
    static const struct option longs[] = {
        {"output", required_argument, NULL, 'o'}, {"array", required_argument, NULL, 'a'},
        {"points", required_argument, NULL, 'p'}, {"backend", required_argument, NULL, 'B'},
        {"device", required_argument, NULL, 'd'}, {"set", required_argument, NULL, 's'},
        {"quiet", no_argument, NULL, 'q'},        {"help", no_argument, NULL, 'h'},
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
            if (strcmp(optarg, "opencl") == 0) {
                o->opencl = true;
            } else if (strcmp(optarg, "reference") == 0) {
                o->opencl = false;
            } else {
                fprintf(stderr, "%s: --backend: '%s' is not reference or opencl\n", argv[0], optarg);
                return TUSK_EXIT_USAGE;
            }
            break;
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
