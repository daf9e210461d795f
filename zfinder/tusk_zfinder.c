/* tusk-zfinder - the z-finder's offline tools (tusk/zfinder.h): simulated
 * RoIs into a file, the quality table of files, a RoI's histograms.
 *
 *   tusk-zfinder sim [--preset P] [--rois N] [--seed S] [--set KEY=VALUE]... -o OUT.adf [-q]
 *   tusk-zfinder qa [--set KEY=VALUE]... [--no-reference] [--out DIR] [LABEL=]FILE...
 *   tusk-zfinder plot FILE --roi N [--set KEY=VALUE]... [--out DIR] [--format png|svg]
 *
 * The z-finder itself runs on a file as one stage of a chain:
 *   tusk-emulate --only zfinder --input IN.adf --output OUT.adf config/zfinder-demo.xml
 *
 * Exit statuses (base/exit.h): 0 fine, 1 the work failed (a file, the
 * data, gnuplot), 2 bad usage or settings. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cli.h"
#include "base/exit.h"
#include "config.h"
#include "tools/reco_tool.h"
#include "tusk/adf.h"
#include "tusk/zfinder.h"

#define PROG "tusk-zfinder"

static void help(FILE *out)
{
    fprintf(out,
            "sim: simulated inner-detector RoIs (data:id_spacepoints, data:id_truth)\n"
            "  --preset P          lowlum (333 spacepoints a 100 degree RoI) or highlum (8,104) (lowlum)\n"
            "  --rois N            RoIs (100)\n"
            "  --seed S            seed (1)\n"
            "  --set KEY=VALUE     a simulation key (zfinder/README.md)\n"
            "  -o, --output FILE   the ADF file (- for standard output)\n"
            "  -q, --quiet         no summary\n"
            "\n"
            "qa: the quality table (Table 5.1) of files with data:zvertex, data:id_truth and\n"
            "data:id_spacepoints frames (a z-finder's output); one table row per file and code\n"
            "  --set KEY=VALUE     a z-finder key, as the z-finder ran with it\n"
            "  --no-reference      no double-precision reference (no spacepoints needed)\n"
            "  --out DIR           also write DIR/LABEL/summary.csv and rois.csv\n"
            "\n"
            "plot: the pair- and triplet-mode histograms of one RoI (double precision)\n"
            "  --roi N             the RoI number\n"
            "  --set KEY=VALUE     a z-finder key\n"
            "  --out DIR           where the picture, its data and script go (.)\n"
            "  --format F          png or svg (png)\n"
            "\n"
            "The z-finder runs on a file as one stage of a chain:\n"
            "  tusk-emulate --only zfinder --input IN.adf --output OUT.adf config/zfinder-demo.xml\n"
            "\n"
            "Exit status: 0 fine, 1 a file, the data or gnuplot failed, 2 bad usage or settings.\n");
}

/* ---- sim ---------------------------------------------------------------------------- */

typedef struct sim {
    zf_sim_config_t sc;
    zf_sim_t *sim;
    const zf_sim_roi_t *r;
    double points, points2, signal, pileup;
} sim_t;

static int sim_configure(void *ctx, const tusk_params_t *p, uint64_t *items, tusk_error_t *err)
{
    sim_t *c = ctx;
    zf_sim_config_default(&c->sc);
    if (!tusk_params_get(p, "rois"))
        c->sc.rois = 100;
    int st = zf_sim_config_read(&c->sc, p, err);
    *items = c->sc.rois;
    return st;
}

static int sim_start(void *ctx, tusk_error_t *err)
{
    sim_t *c = ctx;
    return zf_sim_new(&c->sim, &c->sc, err);
}

/* A RoI, written as one buffer. */
static int sim_make(void *ctx, uint64_t i, size_t *parts, tusk_error_t *err)
{
    sim_t *c = ctx;
    int st = zf_sim_make(c->sim, i, &c->r, err);
    if (st != TUSK_OK)
        return st;
    *parts = 1;
    c->points += c->r->roi.n;
    c->points2 += (double)c->r->roi.n * c->r->roi.n;
    c->signal += c->r->signal_tracks;
    c->pileup += c->r->truth->n_pileup;
    return TUSK_OK;
}

static size_t sim_bytes(void *ctx, size_t part)
{
    (void)part;
    return zf_sim_bytes(((sim_t *)ctx)->r);
}

static int sim_encode(void *ctx, size_t part, adf_writer_t *w, tusk_error_t *err)
{
    (void)part;
    return zf_sim_encode(((sim_t *)ctx)->r, w, err);
}

static void sim_summary(void *ctx, const char *prog)
{
    const sim_t *c = ctx;
    double n = (double)c->sc.rois, mean = c->points / n, sd = sqrt(fmax(0.0, c->points2 / n - mean * mean));
    fprintf(stderr,
            "%s: %llu RoIs (preset %s, %g degrees): %.1f +- %.1f spacepoints a RoI (spread %.1f), %.2f signal "
            "tracks, %.2f pile-up vertices\n",
            prog, (unsigned long long)c->sc.rois, c->sc.preset, c->sc.roi_deg, mean, sd / sqrt(n), sd,
            c->signal / n, c->pileup / n);
}

static int cmd_sim(const tusk_cli_t *cli, int argc, char **argv)
{
    static const tusk_cli_option_t options[] = {
        {.name = "preset", .kind = TUSK_CLI_PARAM, .key = "preset"},
        {.name = "rois", .kind = TUSK_CLI_PARAM, .key = "rois", .min = 1, .max = UINT32_MAX},
        {.name = NULL}};
    static const reco_sim_t spec = {options,  zf_sim_keys, "rois",     sim_configure, sim_start,
                                    sim_make, sim_bytes,   sim_encode, sim_summary,   true};
    sim_t c = {0};
    int rc = reco_sim(cli, argc, argv, &spec, &c);
    zf_sim_destroy(&c.sim);
    return rc;
}

/* ---- qa ------------------------------------------------------------------------------- */

RECO_QA_ADAPT(zf)

static const char *nothing(const void *qa)
{
    const zf_qa_row_t *rows;
    return zf_qa_rows(qa, &rows) ? NULL : "no RoI with both a data:zvertex and a data:id_truth frame";
}

static const reco_qa_t qa_ops = {RECO_QA_OPS(zf), .nothing = nothing, .header_once = true, .zf_names = true};

static int cmd_qa(const tusk_cli_t *cli, int argc, char **argv)
{
    zf_qa_config_t qc;
    zf_qa_config_default(&qc);
    const tusk_cli_option_t options[] = {{.name = "no-reference", .kind = TUSK_CLI_FALSE, .to = &qc.reference},
                                         {.name = NULL}};
    return reco_qa(cli, argc, argv, &qa_ops, &qc, qc.label, sizeof qc.label, options);
}

/* ---- plot ----------------------------------------------------------------------------- */

typedef struct find_roi {
    uint32_t roi;
    adf_idsp_point_t *pt;
    zf_roi_t r;
    bool found;
    double z_true;
} find_roi_t;

static int find_frames(void *ctx, const adf_frame_t *f, tusk_error_t *err)
{
    find_roi_t *fr = ctx;
    if (f->key.event != fr->roi)
        return TUSK_OK;
    adf_error_t e;
    if (f->key.type == ADF_TYPE_DATA_ID_SPACEPOINTS && !fr->found) {
        adf_idsp_t sp;
        if (adf_idsp_decode(f, &sp, &e) != ADF_OK)
            return tusk_error_set(err, TUSK_EINVAL, "%s", e.message);
        if (!(fr->pt = malloc((sp.n_points ? sp.n_points : 1) * sizeof *fr->pt)))
            return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
        for (uint32_t i = 0; i < sp.n_points; i++)
            adf_idsp_point(&sp, i, &fr->pt[i]);
        fr->r = (zf_roi_t){f->key.event, f->key.timestamp, sp.phi_min, sp.phi_width, sp.n_points, fr->pt};
        fr->found = true;
    } else if (f->key.type == ADF_TYPE_DATA_ID_TRUTH && isnan(fr->z_true)) {
        adf_idtruth_t *t = malloc(sizeof *t);
        if (!t)
            return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
        int rc = adf_idtruth_decode(f, t, &e);
        if (rc == ADF_OK)
            fr->z_true = t->z_signal;
        free(t);
        if (rc != ADF_OK)
            return tusk_error_set(err, TUSK_EINVAL, "%s", e.message);
    }
    return TUSK_OK;
}

static int cmd_plot(const tusk_cli_t *cli, int argc, char **argv)
{
    tusk_params_t *p = tusk_params_new();
    const char *out = ".";
    int format = 0;
    uint64_t roi = UINT64_MAX;
    find_roi_t fr = {0, NULL, {0}, false, NAN};
    if (!p) {
        fprintf(stderr, PROG ": out of memory\n");
        return TUSK_EXIT_FAIL;
    }
    const tusk_cli_option_t options[] = {
        {.name = "roi", .kind = TUSK_CLI_U64, .to = &roi, .min = 0, .max = UINT32_MAX},
        {.name = "set", .kind = TUSK_CLI_SET},
        {.name = "out", .kind = TUSK_CLI_TEXT, .to = &out},
        {.name = "format", .kind = TUSK_CLI_CHOICE, .to = &format, .key = "png|svg"},
        {.name = NULL}};
    int rc = tusk_cli_options(cli, argc, argv, options, p, NULL);
    if (rc != TUSK_CLI_RUN)
        goto done;
    rc = TUSK_EXIT_USAGE;
    if (optind + 1 != argc || roi == UINT64_MAX) {
        fprintf(stderr, PROG " plot: %s\n", roi == UINT64_MAX ? "--roi N is required" : "one FILE expected");
        goto done;
    }
    zf_config_t cfg;
    zf_config_default(&cfg);
    tusk_error_t err;
    if (!tusk_cli_keys(PROG ": plot", p, zf_config_keys()))
        goto done;
    if (zf_config_read(&cfg, p, &err) != TUSK_OK) {
        fprintf(stderr, PROG " plot: %s\n", err.message);
        goto done;
    }
    fr.roi = (uint32_t)roi;
    if ((rc = reco_each_frame(PROG, argv[optind], find_frames, &fr)) != TUSK_EXIT_OK)
        goto done;
    rc = TUSK_EXIT_FAIL;
    if (!fr.found) {
        fprintf(stderr, PROG " plot: %s has no data:id_spacepoints of RoI %u\n", argv[optind], (unsigned)fr.roi);
        goto done;
    }
    const char *fmt = format ? "svg" : "png";
    char stem[64], title[300];
    snprintf(stem, sizeof stem, "histograms-roi%u", (unsigned)fr.roi);
    const char *base = strrchr(argv[optind], '/');
    snprintf(title, sizeof title, "%s, RoI %u: %u spacepoints, true vertex at %.2f mm", base ? base + 1 : argv[optind],
             (unsigned)fr.roi, (unsigned)fr.r.n, fr.z_true);
    if (zf_plot_roi(&cfg, &fr.r, fr.z_true, title, out, stem, fmt, &err) != TUSK_OK) {
        fprintf(stderr, PROG " plot: %s\n", err.message);
        goto done;
    }
    printf("%s/%s.%s\n", out, stem, fmt);
    rc = TUSK_EXIT_OK;
done:
    free(fr.pt);
    tusk_params_destroy(&p);
    return rc;
}

static const tusk_cli_command_t commands[] = {
    {"sim", cmd_sim, "simulated inner-detector RoIs into an ADF file"},
    {"qa", cmd_qa, "the quality table (Table 5.1) of z-finder output files"},
    {"plot", cmd_plot, "the pair- and triplet-mode histograms of one RoI"},
    {NULL, NULL, NULL}};

int main(int argc, char **argv)
{
    static const tusk_cli_t cli = {PROG, PACKAGE_VERSION, "sim [OPTIONS] -o OUT.adf\nqa [OPTIONS] [LABEL=]FILE...\n"
                                   "plot FILE --roi N [OPTIONS]", commands, NULL, help};
    return tusk_cli_main(&cli, argc, argv);
}
