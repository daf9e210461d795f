/* tusk-tpc - the TPC slice tracker's offline tools (tusk/tpc.h):
 * simulated events into a file, the quality tables of tracked files
 * (Table 9.1), their efficiency picture, and the track-by-track
 * comparison of two tracked files.
 *
 *   tusk-tpc sim [--preset P] [--tracks N] [--events N] [--seed S] [--set KEY=VALUE]... -o OUT.adf [-q]
 *   tusk-tpc qa [--set KEY=VALUE]... [--min-clusters N] [--match F] [--ref-p P] [--out DIR] [LABEL=]FILE...
 *   tusk-tpc plot FILE [--set KEY=VALUE]... [--out DIR] [--format png|svg]
 *   tusk-tpc diff A.adf B.adf
 *
 * The tracker itself runs on a file as one stage of a chain:
 *   tusk-emulate --only tracker --input IN.adf --output OUT.adf config/tpc-demo.xml
 *
 * Exit statuses (base/exit.h): 0 fine, 1 the work failed (a file, the
 * data, gnuplot; diff: the files differ), 2 bad usage or settings. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/cli.h"
#include "base/exit.h"
#include "base/textfile.h"
#include "config.h"
#include "tools/reco_tool.h"
#include "tusk/adf.h"
#include "tusk/tpc.h"

#define PROG "tusk-tpc"

static void help(FILE *out)
{
    fprintf(out,
            "sim: simulated TPC events (data:tpc_clusters and data:tpc_truth, one pair a slice)\n"
            "  --preset P          pp, noncentral or central: the multiplicity (central)\n"
            "  --tracks N          primary particles an event (the preset's)\n"
            "  --events N          events (1)\n"
            "  --seed S            seed (1)\n"
            "  --set KEY=VALUE     a simulation key (tpc/README.md)\n"
            "  -o, --output FILE   the ADF file\n"
            "  -q, --quiet         no summary\n"
            "\n"
            "qa: the quality tables of tracked files (data:tpc_clusters, data:tpc_truth and\n"
            "data:tpc_tracks of every slice): efficiency, clone and fake rates (Table 9.1),\n"
            "resolutions and pulls\n"
            "  --set KEY=VALUE     a tracker key, as the tracker ran with it\n"
            "  --min-clusters N    a particle's clusters in a slice to be reconstructible (30)\n"
            "  --match F           the fraction of a track's clusters from one particle (0.9)\n"
            "  --ref-p P           reference particles: momentum at least P GeV/c (1)\n"
            "  --out DIR           also write DIR/LABEL/summary.csv and momentum.csv\n"
            "\n"
            "plot: the efficiency picture of a tracked file\n"
            "  --set KEY=VALUE     a tracker key\n"
            "  --out DIR           where the picture, its data and script go (.)\n"
            "  --format F          png or svg (png)\n"
            "\n"
            "diff: two tracked files' tracks, slice by slice and track by track (the same\n"
            "tracklet and first row): equal bit for bit, the same clusters, or different\n"
            "\n"
            "The tracker runs on a file as one stage of a chain:\n"
            "  tusk-emulate --only tracker --input IN.adf --output OUT.adf config/tpc-demo.xml\n"
            "\n"
            "Exit status: 0 fine, 1 a file, the data or gnuplot failed (diff: the tracks\n"
            "differ), 2 bad usage or settings.\n");
}

/* ---- sim ---------------------------------------------------------------------------- */

typedef struct sim {
    tpc_sim_config_t sc;
    tpc_sim_t *sim;
    uint64_t clusters, noise, particles;
} sim_t;

static int sim_configure(void *ctx, const tusk_params_t *p, uint64_t *items, tusk_error_t *err)
{
    sim_t *c = ctx;
    tpc_sim_config_default(&c->sc);
    int st = tpc_sim_config_read(&c->sc, p, err);
    *items = c->sc.events;
    return st;
}

static int sim_start(void *ctx, tusk_error_t *err)
{
    sim_t *c = ctx;
    return tpc_sim_new(&c->sim, &c->sc, 0, err);
}

/* An event, written slice by slice. */
static int sim_make(void *ctx, uint64_t i, size_t *parts, tusk_error_t *err)
{
    sim_t *c = ctx;
    const tpc_sim_event_t *ev;
    int st = tpc_sim_make(c->sim, i, &ev, err);
    if (st != TUSK_OK)
        return st;
    *parts = ADF_TPC_SLICES;
    c->clusters += ev->clusters;
    c->noise += ev->noise;
    c->particles += ev->particles;
    return TUSK_OK;
}

static size_t sim_bytes(void *ctx, size_t slice)
{
    return tpc_sim_slice_bytes(((sim_t *)ctx)->sim, (unsigned)slice);
}

static int sim_encode(void *ctx, size_t slice, adf_writer_t *w, tusk_error_t *err)
{
    return tpc_sim_encode_slice(((sim_t *)ctx)->sim, (unsigned)slice, w, err);
}

static void sim_summary(void *ctx, const char *prog)
{
    const sim_t *c = ctx;
    double n = (double)c->sc.events;
    fprintf(stderr,
            "%s: %llu events (%s) of %.0f particles in %.2f T: %.0f clusters an event (%.0f a slice, %.2f %% noise)\n",
            prog, (unsigned long long)c->sc.events, tpc_preset_name(c->sc.preset), (double)c->particles / n,
            c->sc.bz_tesla, (double)c->clusters / n, (double)c->clusters / n / ADF_TPC_SLICES,
            c->clusters ? 100.0 * (double)c->noise / (double)c->clusters : 0.0);
}

static int cmd_sim(const tusk_cli_t *cli, int argc, char **argv)
{
    static const tusk_cli_option_t options[] = {
        {.name = "preset", .kind = TUSK_CLI_PARAM, .key = "preset"},
        {.name = "tracks", .kind = TUSK_CLI_PARAM, .key = "tracks", .min = 1, .max = 1000000},
        {.name = "events", .kind = TUSK_CLI_PARAM, .key = "events", .min = 1, .max = UINT32_MAX},
        {.name = NULL}};
    static const reco_sim_t spec = {options,  tpc_sim_keys, "events",   sim_configure, sim_start,
                                    sim_make, sim_bytes,    sim_encode, sim_summary,   false};
    sim_t c = {0};
    int rc = reco_sim(cli, argc, argv, &spec, &c);
    tpc_sim_destroy(&c.sim);
    return rc;
}

/* ---- qa and plot ---------------------------------------------------------------------- */

RECO_QA_ADAPT(tpc)

static const char *nothing(const void *qa)
{
    tpc_qa_summary_t s;
    tpc_qa_summary(qa, &s);
    return s.slices ? NULL : "no slice with data:tpc_clusters, data:tpc_truth and data:tpc_tracks";
}

static const reco_qa_t qa_ops = {RECO_QA_OPS(tpc), .nothing = nothing, .picture = "efficiency"};

/* qa and plot: the analysis's options into qc. */
static int qa_or_plot(const tusk_cli_t *cli, int argc, char **argv, bool plot)
{
    tpc_qa_config_t qc;
    tpc_qa_config_default(&qc);
    const tusk_cli_option_t options[] = {
        {.name = "min-clusters", .kind = TUSK_CLI_UNSIGNED, .to = &qc.min_clusters, .min = 1, .max = 4 * ADF_TPC_ROWS},
        {.name = "match", .kind = TUSK_CLI_DOUBLE, .to = &qc.match, .lo = 0.51, .hi = 1.0},
        {.name = "ref-p", .kind = TUSK_CLI_DOUBLE, .to = &qc.ref_p_gev, .lo = 0.0, .hi = 1e4},
        {.name = NULL}};
    return (plot ? reco_plot : reco_qa)(cli, argc, argv, &qa_ops, &qc, qc.label, sizeof qc.label, options);
}

static int cmd_qa(const tusk_cli_t *cli, int argc, char **argv)
{
    return qa_or_plot(cli, argc, argv, false);
}

static int cmd_plot(const tusk_cli_t *cli, int argc, char **argv)
{
    return qa_or_plot(cli, argc, argv, true);
}

/* ---- diff ----------------------------------------------------------------------------- */

static int cmd_diff(const tusk_cli_t *cli, int argc, char **argv)
{
    static const tusk_cli_option_t none[] = {{.name = NULL}};
    int c = tusk_cli_options(cli, argc, argv, none, NULL, NULL);
    if (c != TUSK_CLI_RUN)
        return c;
    if (optind + 2 != argc) {
        fprintf(stderr, PROG " diff: two files expected\n");
        return TUSK_EXIT_USAGE;
    }
    char *a = NULL, *b = NULL;
    size_t na = 0, nb = 0;
    tusk_error_t err;
    int rc = TUSK_EXIT_FAIL;
    if (tusk_file_read(argv[optind], (size_t)1 << 34, &a, &na, &err) != TUSK_OK ||
        tusk_file_read(argv[optind + 1], (size_t)1 << 34, &b, &nb, &err) != TUSK_OK) {
        fprintf(stderr, PROG " diff: %s\n", err.message);
        goto done;
    }
    tpc_compare_t cmp;
    if (tpc_compare_buffers(a, na, b, nb, &cmp, &err) != TUSK_OK) {
        fprintf(stderr, PROG " diff: %s\n", err.message);
        goto done;
    }
    printf(
        "%llu slices: %llu and %llu tracks; %llu the same bit for bit, %llu with the same clusters (largest relative "
        "parameter difference %.3g), %llu only in the first, %llu only in the second; %llu of %llu cluster "
        "references differ (%.6f %%)\n",
        (unsigned long long)cmp.slices, (unsigned long long)cmp.tracks_a, (unsigned long long)cmp.tracks_b,
        (unsigned long long)cmp.same, (unsigned long long)cmp.same_clusters, cmp.max_param_diff,
        (unsigned long long)cmp.only_a, (unsigned long long)cmp.only_b, (unsigned long long)cmp.hits_differ,
        (unsigned long long)cmp.hits_compared,
        cmp.hits_compared ? 100.0 * (double)cmp.hits_differ / (double)cmp.hits_compared : 0.0);
    rc = cmp.same == cmp.tracks_a && cmp.same == cmp.tracks_b ? TUSK_EXIT_OK : TUSK_EXIT_FAIL;
done:
    free(a);
    free(b);
    return rc;
}

static const tusk_cli_command_t commands[] = {
    {"sim", cmd_sim, "simulated TPC events into an ADF file"},
    {"qa", cmd_qa, "the tracker's quality tables of files (Table 9.1)"},
    {"plot", cmd_plot, "the efficiency picture of a tracked file"},
    {"diff", cmd_diff, "two tracked files compared track by track"},
    {NULL, NULL, NULL}};

int main(int argc, char **argv)
{
    static const tusk_cli_t cli = {PROG, PACKAGE_VERSION,
                                   "sim [OPTIONS] -o OUT.adf\nqa [OPTIONS] [LABEL=]FILE...\nplot FILE [OPTIONS]\n"
                                   "diff A.adf B.adf",
                                   commands, NULL, help};
    return tusk_cli_main(&cli, argc, argv);
}
