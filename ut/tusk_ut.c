/* tusk-ut - the UT tracking's offline tools (tusk/ut.h): simulated events
 * into a file, the quality tables of tracked files (the paper's Table 3),
 * and their pictures.
 *
 *   tusk-ut sim [--events N] [--seed S] [--set KEY=VALUE]... -o OUT.adf [-q]
 *   tusk-ut qa [--set KEY=VALUE]... [--out DIR] [LABEL=]FILE...
 *   tusk-ut plot FILE [--set KEY=VALUE]... [--out DIR] [--format png|svg]
 *
 * The tracker itself runs on a file as one stage of a chain:
 *   tusk-emulate --only tracker --input IN.adf --output OUT.adf config/ut-demo.xml
 *
 * Exit statuses (base/exit.h): 0 fine, 1 the work failed (a file, the
 * data, gnuplot), 2 bad usage or settings. */
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cli.h"
#include "base/exit.h"
#include "base/grow.h"
#include "base/parse.h"
#include "config.h"
#include "tusk/adf.h"
#include "tusk/ut.h"

#define PROG "tusk-ut"

static void help(FILE *out)
{
    fprintf(out,
            "sim: simulated LHCb events (data:ut_raw, data:velo_tracks and data:ut_truth an event)\n"
            "  --events N          events (100)\n"
            "  --seed S            seed (1)\n"
            "  --set KEY=VALUE     a simulation or geometry key (ut/README.md)\n"
            "  -o, --output FILE   the ADF file\n"
            "  -q, --quiet         no summary\n"
            "\n"
            "qa: the quality tables of tracked files (data:ut_raw, data:velo_tracks, data:ut_tracks\n"
            "and data:ut_truth of every event): efficiency, clones and fakes per category (the\n"
            "paper's Table 3), the momentum resolution\n"
            "  --set KEY=VALUE     a tracker key, as the tracker ran with it\n"
            "  --out DIR           also write DIR/LABEL/summary.csv and momentum.csv\n"
            "\n"
            "plot: the picture of a tracked file (efficiency against p, momentum resolution)\n"
            "  --set KEY=VALUE     a tracker key\n"
            "  --out DIR           where the picture, its data and script go (.)\n"
            "  --format F          png or svg (png)\n"
            "\n"
            "The tracker runs on a file as one stage of a chain:\n"
            "  tusk-emulate --only tracker --input IN.adf --output OUT.adf config/ut-demo.xml\n"
            "\n"
            "Exit status: 0 fine, 1 a file, the data or gnuplot failed, 2 bad usage or settings.\n");
}

/* Every key of params must be one of `known`. */
static bool only_keys(const tusk_params_t *p, const char *const *known, const char *what)
{
    tusk_error_t err;
    if (tusk_params_expect(p, known, &err) != TUSK_OK) {
        fprintf(stderr, PROG " %s: %s\n", what, err.message);
        return false;
    }
    return true;
}

/* ---- sim ---------------------------------------------------------------------------- */

static int cmd_sim(const tusk_cli_t *cli, int argc, char **argv)
{
    static const struct option longs[] = {{"events", required_argument, NULL, 'n'},
                                          {"seed", required_argument, NULL, 's'},
                                          {"set", required_argument, NULL, 'S'},
                                          {"output", required_argument, NULL, 'o'},
                                          {"quiet", no_argument, NULL, 'q'},
                                          {"help", no_argument, NULL, 'h'},
                                          {NULL, 0, NULL, 0}};
    tusk_params_t *p = tusk_params_new();
    const char *out = NULL;
    bool quiet = false;
    int rc = TUSK_EXIT_USAGE, c;
    tusk_error_t err;
    if (!p) {
        fprintf(stderr, PROG ": out of memory\n");
        return TUSK_EXIT_FAIL;
    }
    optind = 1;
    while ((c = tusk_cli_getopt(cli, argc, argv, "o:qh", longs, NULL)) != -1) {
        bool ok = true;
        uint64_t v;
        switch (c) {
        case 'n':
            ok = tusk_cli_u64(argv[0], "--events", optarg, 1, UINT32_MAX, &v) &&
                 tusk_params_set(p, "events", optarg, &err) == TUSK_OK;
            break;
        case 's':
            ok = tusk_cli_u64(argv[0], "--seed", optarg, 0, UINT64_MAX, &v) &&
                 tusk_params_set(p, "seed", optarg, &err) == TUSK_OK;
            break;
        case 'S': ok = tusk_cli_set(argv[0], p, optarg); break;
        case 'o': out = optarg; break;
        case 'q': quiet = true; break;
        case 'h': tusk_params_destroy(&p); return tusk_cli_help(cli);
        default: ok = false;
        }
        if (!ok)
            goto done;
    }
    if (!out || optind != argc) {
        fprintf(stderr, PROG " sim: %s\n", !out ? "-o OUT.adf is required" : "unexpected arguments");
        goto done;
    }
    if (!only_keys(p, ut_sim_keys(), "sim"))
        goto done;
    ut_sim_config_t sc;
    ut_sim_config_default(&sc);
    if (ut_sim_config_read(&sc, p, &err) != TUSK_OK) {
        fprintf(stderr, PROG " sim: %s\n", err.message);
        goto done;
    }
    if (sc.events == 0) {
        fprintf(stderr, PROG " sim: events must be at least 1\n");
        goto done;
    }
    rc = TUSK_EXIT_FAIL;
    ut_sim_t *sim = NULL;
    adf_writer_t *w = adf_writer_new();
    adf_file_writer_t *fw = NULL;
    uint8_t *buf = NULL;
    size_t cap = 0;
    adf_error_t aerr;
    uint64_t hits = 0, velo = 0, parts = 0, noise = 0, coll = 0;
    if (!w || ut_sim_new(&sim, &sc, &err) != TUSK_OK) {
        fprintf(stderr, PROG " sim: %s\n", w ? err.message : "out of memory");
        goto sim_done;
    }
    if (!(fw = adf_file_writer_open(out, &aerr))) {
        fprintf(stderr, PROG " sim: %s\n", aerr.message);
        goto sim_done;
    }
    for (uint64_t i = 0; i < sc.events; i++) {
        const ut_sim_event_t *ev;
        if (ut_sim_make(sim, i, &ev, &err) != TUSK_OK) {
            fprintf(stderr, PROG " sim: %s\n", err.message);
            goto sim_done;
        }
        size_t need = ut_sim_bytes(sim, ev);
        if (tusk_grow(&buf, &cap, need, 1) != 0) {
            fprintf(stderr, PROG " sim: out of memory\n");
            goto sim_done;
        }
        adf_writer_reset(w, buf, cap);
        if (ut_sim_encode(sim, ev, w, &err) != TUSK_OK) {
            fprintf(stderr, PROG " sim: %s\n", err.message);
            goto sim_done;
        }
        if (adf_file_writer_write(fw, buf, adf_writer_used(w), &aerr) != ADF_OK) {
            fprintf(stderr, PROG " sim: %s\n", aerr.message);
            goto sim_done;
        }
        hits += ev->ev.n_hits;
        velo += ev->ev.n_tracks;
        parts += ev->n_particles;
        noise += ev->noise_hits;
        coll += ev->collisions;
    }
    if (adf_file_writer_close(&fw, &aerr) != ADF_OK) {
        fprintf(stderr, PROG " sim: %s\n", aerr.message);
        goto sim_done;
    }
    if (!quiet) {
        double n = (double)sc.events;
        fprintf(stderr,
                PROG " sim: %llu events: %.2f collisions, %.1f particles, %.1f VELO tracks, %.1f UT hits (%.1f noise) "
                     "an event\n",
                (unsigned long long)sc.events, (double)coll / n, (double)parts / n, (double)velo / n, (double)hits / n,
                (double)noise / n);
    }
    rc = TUSK_EXIT_OK;
sim_done:
    if (fw)
        adf_file_writer_close(&fw, &aerr);
    free(buf);
    adf_writer_destroy(&w);
    ut_sim_destroy(&sim);
done:
    tusk_params_destroy(&p);
    return rc;
}

/* ---- a file into an analysis ---------------------------------------------------------- */

static int feed_file(ut_qa_t *qa, const char *path)
{
    adf_error_t aerr;
    adf_file_reader_t *r = adf_file_reader_open(path, NULL, &aerr);
    if (!r) {
        fprintf(stderr, PROG ": %s\n", aerr.message);
        return TUSK_EXIT_FAIL;
    }
    adf_frame_t f;
    int rc;
    tusk_error_t err;
    while ((rc = adf_file_reader_next(r, &f)) == ADF_OK)
        /* a frame's bytes as a buffer of its own: the key lies just before the payload */
        if (ut_qa_feed(qa, f.payload - ADF_KEY_SIZE, f.key.length, f.offset, &err) != TUSK_OK) {
            fprintf(stderr, PROG ": %s: %s\n", path, err.message);
            adf_file_reader_destroy(&r);
            return TUSK_EXIT_FAIL;
        }
    if (rc != ADF_END) {
        fprintf(stderr, PROG ": %s: %s\n", path, adf_file_reader_error(r)->message);
        adf_file_reader_destroy(&r);
        return TUSK_EXIT_FAIL;
    }
    adf_file_reader_destroy(&r);
    if (ut_qa_finish(qa, &err) != TUSK_OK) {
        fprintf(stderr, PROG ": %s: %s\n", path, err.message);
        return TUSK_EXIT_FAIL;
    }
    return TUSK_EXIT_OK;
}

/* The label of a [LABEL=]FILE argument. */
static bool label_of(const char *arg, char *label, size_t cap, const char **path)
{
    const char *eq = strchr(arg, '=');
    *path = eq ? eq + 1 : arg;
    if (eq) {
        size_t n = (size_t)(eq - arg);
        if (n == 0 || n >= cap || memchr(arg, ',', n) || memchr(arg, '/', n)) {
            fprintf(stderr, PROG ": '%.*s' is not a label (1-%zu characters, no comma or slash)\n", (int)n, arg,
                    cap - 1);
            return false;
        }
        snprintf(label, cap, "%.*s", (int)n, arg);
        return true;
    }
    const char *base = strrchr(arg, '/');
    snprintf(label, cap, "%s", base ? base + 1 : arg);
    char *dot = strrchr(label, '.');
    if (dot && dot != label)
        *dot = '\0';
    for (char *q = label; *q; q++)
        if (*q == ',')
            *q = '_';
    return true;
}

/* ---- qa ------------------------------------------------------------------------------- */

static int cmd_qa(const tusk_cli_t *cli, int argc, char **argv)
{
    static const struct option longs[] = {{"set", required_argument, NULL, 'S'},
                                          {"out", required_argument, NULL, 'o'},
                                          {"help", no_argument, NULL, 'h'},
                                          {NULL, 0, NULL, 0}};
    tusk_params_t *p = tusk_params_new();
    const char *out = NULL;
    int rc = TUSK_EXIT_USAGE, c;
    if (!p) {
        fprintf(stderr, PROG ": out of memory\n");
        return TUSK_EXIT_FAIL;
    }
    optind = 1;
    while ((c = tusk_cli_getopt(cli, argc, argv, "h", longs, NULL)) != -1) {
        bool ok = true;
        switch (c) {
        case 'S': ok = tusk_cli_set(argv[0], p, optarg); break;
        case 'o': out = optarg; break;
        case 'h': tusk_params_destroy(&p); return tusk_cli_help(cli);
        default: ok = false;
        }
        if (!ok)
            goto done;
    }
    if (optind == argc) {
        fprintf(stderr, PROG " qa: no file\n");
        goto done;
    }
    ut_qa_config_t qc;
    ut_qa_config_default(&qc);
    tusk_error_t err;
    if (!only_keys(p, ut_config_keys(), "qa"))
        goto done;
    if (ut_config_read(&qc.alg, p, &err) != TUSK_OK) {
        fprintf(stderr, PROG " qa: %s\n", err.message);
        goto done;
    }
    rc = TUSK_EXIT_OK;
    for (int i = optind; i < argc && rc == TUSK_EXIT_OK; i++) {
        const char *path;
        if (!label_of(argv[i], qc.label, sizeof qc.label, &path)) {
            rc = TUSK_EXIT_USAGE;
            break;
        }
        ut_qa_t *qa = NULL;
        if (ut_qa_new(&qa, &qc, &err) != TUSK_OK) {
            fprintf(stderr, PROG " qa: %s\n", err.message);
            rc = TUSK_EXIT_FAIL;
            break;
        }
        rc = feed_file(qa, path);
        if (rc == TUSK_EXIT_OK)
            ut_qa_print(qa, stdout);
        if (rc == TUSK_EXIT_OK && out) {
            char dir[1200];
            snprintf(dir, sizeof dir, "%s/%s", out, qc.label);
            if (ut_qa_write(qa, dir, false, "png", &err) != TUSK_OK) {
                fprintf(stderr, PROG " qa: %s\n", err.message);
                rc = TUSK_EXIT_FAIL;
            }
        }
        ut_qa_destroy(&qa);
    }
done:
    tusk_params_destroy(&p);
    return rc;
}

/* ---- plot ----------------------------------------------------------------------------- */

static int cmd_plot(const tusk_cli_t *cli, int argc, char **argv)
{
    static const struct option longs[] = {{"set", required_argument, NULL, 'S'},
                                          {"out", required_argument, NULL, 'o'},
                                          {"format", required_argument, NULL, 'f'},
                                          {"help", no_argument, NULL, 'h'},
                                          {NULL, 0, NULL, 0}};
    tusk_params_t *p = tusk_params_new();
    const char *out = ".", *format = "png";
    int rc = TUSK_EXIT_USAGE, c;
    if (!p) {
        fprintf(stderr, PROG ": out of memory\n");
        return TUSK_EXIT_FAIL;
    }
    optind = 1;
    while ((c = tusk_cli_getopt(cli, argc, argv, "h", longs, NULL)) != -1) {
        bool ok = true;
        switch (c) {
        case 'S': ok = tusk_cli_set(argv[0], p, optarg); break;
        case 'o': out = optarg; break;
        case 'f':
            format = optarg;
            ok = !strcmp(format, "png") || !strcmp(format, "svg");
            if (!ok)
                fprintf(stderr, PROG " plot: --format is png or svg, not '%s'\n", format);
            break;
        case 'h': tusk_params_destroy(&p); return tusk_cli_help(cli);
        default: ok = false;
        }
        if (!ok)
            goto done;
    }
    if (optind + 1 != argc) {
        fprintf(stderr, PROG " plot: one FILE expected\n");
        goto done;
    }
    ut_qa_config_t qc;
    ut_qa_config_default(&qc);
    tusk_error_t err;
    if (!only_keys(p, ut_config_keys(), "plot"))
        goto done;
    if (ut_config_read(&qc.alg, p, &err) != TUSK_OK) {
        fprintf(stderr, PROG " plot: %s\n", err.message);
        goto done;
    }
    const char *path;
    if (!label_of(argv[optind], qc.label, sizeof qc.label, &path))
        goto done;
    ut_qa_t *qa = NULL;
    if (ut_qa_new(&qa, &qc, &err) != TUSK_OK) {
        fprintf(stderr, PROG " plot: %s\n", err.message);
        rc = TUSK_EXIT_FAIL;
        goto done;
    }
    rc = feed_file(qa, path);
    if (rc == TUSK_EXIT_OK && ut_qa_write(qa, out, true, format, &err) != TUSK_OK) {
        fprintf(stderr, PROG " plot: %s\n", err.message);
        rc = TUSK_EXIT_FAIL;
    }
    if (rc == TUSK_EXIT_OK)
        printf("%s/ut-qa.%s\n", out, format);
    ut_qa_destroy(&qa);
done:
    tusk_params_destroy(&p);
    return rc;
}

static const tusk_cli_command_t commands[] = {
    {"sim", cmd_sim, "simulated LHCb events (UT raw banks, VELO tracks, truth) into an ADF file"},
    {"qa", cmd_qa, "the tracking's quality tables of files (Table 3)"},
    {"plot", cmd_plot, "the picture of a tracked file (efficiency against p, momentum resolution)"},
    {NULL, NULL, NULL}};

int main(int argc, char **argv)
{
    static const tusk_cli_t cli = {PROG, PACKAGE_VERSION, "sim [OPTIONS] -o OUT.adf\nqa [OPTIONS] [LABEL=]FILE...\n"
                                   "plot FILE [OPTIONS]", commands, NULL, help};
    return tusk_cli_main(&cli, argc, argv);
}
