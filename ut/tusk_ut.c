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
#include <stdint.h>
#include <stdio.h>

#include "base/cli.h"
#include "config.h"
#include "tools/reco_tool.h"
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

/* ---- sim ---------------------------------------------------------------------------- */

typedef struct sim {
    ut_sim_config_t sc;
    ut_sim_t *sim;
    const ut_sim_event_t *ev;
    uint64_t hits, velo, parts, noise, coll;
} sim_t;

static int sim_configure(void *ctx, const tusk_params_t *p, uint64_t *items, tusk_error_t *err)
{
    sim_t *c = ctx;
    ut_sim_config_default(&c->sc);
    int st = ut_sim_config_read(&c->sc, p, err);
    *items = c->sc.events;
    return st;
}

static int sim_start(void *ctx, tusk_error_t *err)
{
    sim_t *c = ctx;
    return ut_sim_new(&c->sim, &c->sc, err);
}

/* An event, written as one buffer. */
static int sim_make(void *ctx, uint64_t i, size_t *parts, tusk_error_t *err)
{
    sim_t *c = ctx;
    int st = ut_sim_make(c->sim, i, &c->ev, err);
    if (st != TUSK_OK)
        return st;
    *parts = 1;
    c->hits += c->ev->ev.n_hits;
    c->velo += c->ev->ev.n_tracks;
    c->parts += c->ev->n_particles;
    c->noise += c->ev->noise_hits;
    c->coll += c->ev->collisions;
    return TUSK_OK;
}

static size_t sim_bytes(void *ctx, size_t part)
{
    (void)part;
    const sim_t *c = ctx;
    return ut_sim_bytes(c->sim, c->ev);
}

static int sim_encode(void *ctx, size_t part, adf_writer_t *w, tusk_error_t *err)
{
    (void)part;
    const sim_t *c = ctx;
    return ut_sim_encode(c->sim, c->ev, w, err);
}

static void sim_summary(void *ctx, const char *prog)
{
    const sim_t *c = ctx;
    double n = (double)c->sc.events;
    fprintf(stderr, "%s: %llu events: %.2f collisions, %.1f particles, %.1f VELO tracks, %.1f UT hits (%.1f noise) "
                    "an event\n",
            prog, (unsigned long long)c->sc.events, (double)c->coll / n, (double)c->parts / n, (double)c->velo / n,
            (double)c->hits / n, (double)c->noise / n);
}

static int cmd_sim(const tusk_cli_t *cli, int argc, char **argv)
{
    static const tusk_cli_option_t options[] = {
        {.name = "events", .kind = TUSK_CLI_PARAM, .key = "events", .min = 1, .max = UINT32_MAX},
        {.name = NULL}};
    static const reco_sim_t spec = {options,  ut_sim_keys, "events",   sim_configure, sim_start,
                                    sim_make, sim_bytes,   sim_encode, sim_summary,   false};
    sim_t c = {0};
    int rc = reco_sim(cli, argc, argv, &spec, &c);
    ut_sim_destroy(&c.sim);
    return rc;
}

/* ---- qa and plot ---------------------------------------------------------------------- */

RECO_QA_ADAPT(ut)

static const reco_qa_t qa_ops = {RECO_QA_OPS(ut), .picture = "ut-qa"};

static int cmd_qa(const tusk_cli_t *cli, int argc, char **argv)
{
    ut_qa_config_t qc;
    ut_qa_config_default(&qc);
    return reco_qa(cli, argc, argv, &qa_ops, &qc, qc.label, sizeof qc.label, NULL);
}

static int cmd_plot(const tusk_cli_t *cli, int argc, char **argv)
{
    ut_qa_config_t qc;
    ut_qa_config_default(&qc);
    return reco_plot(cli, argc, argv, &qa_ops, &qc, qc.label, sizeof qc.label, NULL);
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
