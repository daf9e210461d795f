/* tusk-sts - the STS reconstruction's offline tools (tusk/sts.h):
 * simulated timeslices into a file, the quality tables of reconstructed
 * files, and their residual pictures.
 *
 *   tusk-sts sim [--collisions N] [--timeslices N] [--seed S] [--set KEY=VALUE]... -o OUT.adf [-q]
 *   tusk-sts qa [--set KEY=VALUE]... [--no-compare] [--out DIR] [LABEL=]FILE...
 *   tusk-sts plot FILE [--set KEY=VALUE]... [--out DIR] [--format png|svg]
 *
 * The reconstruction itself runs on a file as one stage of a chain:
 *   tusk-emulate --only hitfinder --input IN.adf --output OUT.adf config/sts-demo.xml
 *
 * Exit statuses (base/exit.h): 0 fine, 1 the work failed (a file, the
 * data, gnuplot), 2 bad usage or settings. */
#include <stdint.h>
#include <stdio.h>

#include "base/cli.h"
#include "config.h"
#include "tools/reco_tool.h"
#include "tusk/adf.h"
#include "tusk/sts.h"

#define PROG "tusk-sts"

static void help(FILE *out)
{
    fprintf(out,
            "sim: simulated STS timeslices (data:sts_digis and data:sts_truth, one pair a module)\n"
            "  --collisions N      collisions a timeslice (100; about 15,000 digis each)\n"
            "  --timeslices N      timeslices (1)\n"
            "  --seed S            seed (1)\n"
            "  --set KEY=VALUE     a simulation key (sts/README.md)\n"
            "  -o, --output FILE   the ADF file\n"
            "  -q, --quiet         no summary\n"
            "\n"
            "qa: the quality tables of reconstructed files (data:sts_digis, data:sts_truth,\n"
            "data:sts_clusters and data:sts_hits of every module): efficiencies, fakes, residuals\n"
            "and pulls per side and station, and the clusters the original and the parallel\n"
            "cluster finder do not share\n"
            "  --set KEY=VALUE     a reconstruction key, as the reconstruction ran with it\n"
            "  --no-compare        do not run the two cluster finders again\n"
            "  --out DIR           also write DIR/LABEL/summary.csv and stations.csv\n"
            "\n"
            "plot: the residual picture of a reconstructed file\n"
            "  --set KEY=VALUE     a reconstruction key\n"
            "  --out DIR           where the picture, its data and script go (.)\n"
            "  --format F          png or svg (png)\n"
            "\n"
            "The reconstruction runs on a file as one stage of a chain:\n"
            "  tusk-emulate --only hitfinder --input IN.adf --output OUT.adf config/sts-demo.xml\n"
            "\n"
            "Exit status: 0 fine, 1 a file, the data or gnuplot failed, 2 bad usage or settings.\n");
}

/* ---- sim ---------------------------------------------------------------------------- */

typedef struct sim {
    sts_sim_config_t sc;
    sts_sim_t *sim;
    const sts_sim_ts_t *ts;
    uint64_t digis, noise, lost, points;
    double length;
} sim_t;

static int sim_configure(void *ctx, const tusk_params_t *p, uint64_t *items, tusk_error_t *err)
{
    sim_t *c = ctx;
    sts_sim_config_default(&c->sc);
    int st = sts_sim_config_read(&c->sc, p, err);
    *items = c->sc.timeslices;
    return st;
}

static int sim_start(void *ctx, tusk_error_t *err)
{
    sim_t *c = ctx;
    return sts_sim_new(&c->sim, &c->sc, err);
}

/* A timeslice, written module by module. */
static int sim_make(void *ctx, uint64_t i, size_t *parts, tusk_error_t *err)
{
    sim_t *c = ctx;
    int st = sts_sim_make(c->sim, i, &c->ts, err);
    if (st != TUSK_OK)
        return st;
    *parts = sts_sim_modules(c->sim);
    c->digis += c->ts->digis;
    c->noise += c->ts->noise_digis;
    c->lost += c->ts->lost;
    c->points += c->ts->points;
    c->length += c->ts->length_ns;
    return TUSK_OK;
}

static size_t sim_bytes(void *ctx, size_t module)
{
    return sts_sim_module_bytes(((sim_t *)ctx)->sim, module);
}

static int sim_encode(void *ctx, size_t module, adf_writer_t *w, tusk_error_t *err)
{
    return sts_sim_encode_module(((sim_t *)ctx)->sim, module, w, err);
}

static void sim_summary(void *ctx, const char *prog)
{
    const sim_t *c = ctx;
    double n = (double)c->sc.timeslices;
    fprintf(stderr,
            "%s: %llu timeslices of %u collisions (%.1f us each) over %zu modules: %.0f digis a timeslice "
            "(%.0f a collision, %.2f %% noise), %.0f Monte Carlo points, %.0f hits lost in dead time\n",
            prog, (unsigned long long)c->sc.timeslices, (unsigned)c->sc.collisions, c->length / n * 1e-3,
            sts_sim_modules(c->sim), (double)c->digis / n, (double)c->digis / n / c->sc.collisions,
            c->digis ? 100.0 * (double)c->noise / (double)c->digis : 0.0, (double)c->points / n, (double)c->lost / n);
}

static int cmd_sim(const tusk_cli_t *cli, int argc, char **argv)
{
    static const tusk_cli_option_t options[] = {
        {.name = "collisions", .kind = TUSK_CLI_PARAM, .key = "collisions", .min = 1, .max = 1000000},
        {.name = "timeslices", .kind = TUSK_CLI_PARAM, .key = "timeslices", .min = 1, .max = UINT32_MAX},
        {.name = NULL}};
    static const reco_sim_t spec = {options,   sts_sim_keys, "timeslices", sim_configure, sim_start,
                                    sim_make,  sim_bytes,    sim_encode,   sim_summary,   false};
    sim_t c = {0};
    int rc = reco_sim(cli, argc, argv, &spec, &c);
    sts_sim_destroy(&c.sim);
    return rc;
}

/* ---- qa and plot ---------------------------------------------------------------------- */

RECO_QA_ADAPT(sts)

static const char *nothing(const void *qa)
{
    sts_qa_summary_t s;
    sts_qa_summary(qa, &s);
    return s.modules ? NULL : "no module with data:sts_digis, data:sts_truth, data:sts_clusters and data:sts_hits";
}

static const reco_qa_t qa_ops = {RECO_QA_OPS(sts), .nothing = nothing, .picture = "residuals"};

static int cmd_qa(const tusk_cli_t *cli, int argc, char **argv)
{
    sts_qa_config_t qc;
    sts_qa_config_default(&qc);
    const tusk_cli_option_t options[] = {{.name = "no-compare", .kind = TUSK_CLI_FALSE, .to = &qc.compare},
                                         {.name = NULL}};
    return reco_qa(cli, argc, argv, &qa_ops, &qc, qc.label, sizeof qc.label, options);
}

static int cmd_plot(const tusk_cli_t *cli, int argc, char **argv)
{
    sts_qa_config_t qc;
    sts_qa_config_default(&qc);
    qc.compare = false;
    return reco_plot(cli, argc, argv, &qa_ops, &qc, qc.label, sizeof qc.label, NULL);
}

static const tusk_cli_command_t commands[] = {
    {"sim", cmd_sim, "simulated STS timeslices into an ADF file"},
    {"qa", cmd_qa, "the reconstruction's quality tables of files"},
    {"plot", cmd_plot, "the residual picture of a reconstructed file"},
    {NULL, NULL, NULL}};

int main(int argc, char **argv)
{
    static const tusk_cli_t cli = {PROG, PACKAGE_VERSION, "sim [OPTIONS] -o OUT.adf\nqa [OPTIONS] [LABEL=]FILE...\n"
                                   "plot FILE [OPTIONS]", commands, NULL, help};
    return tusk_cli_main(&cli, argc, argv);
}
