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

/* Every key of params must be one of `known`. */
static bool only_keys(const tusk_params_t *p, const char *const *known, const char *what)
{
    tusk_error_t err;
    if (tusk_params_expect(p, known, &err) != TUSK_OK) {
        fprintf(stderr, PROG ": %s: %s\n", what, err.message);
        return false;
    }
    return true;
}

/* ---- sim ---------------------------------------------------------------------------- */

static int cmd_sim(const tusk_cli_t *cli, int argc, char **argv)
{
    static const struct option longs[] = {{"preset", required_argument, NULL, 'p'}, {"rois", required_argument, NULL, 'n'},
                                          {"seed", required_argument, NULL, 's'},   {"set", required_argument, NULL, 'S'},
                                          {"output", required_argument, NULL, 'o'}, {"quiet", no_argument, NULL, 'q'},
                                          {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0}};
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
        switch (c) {
        case 'p': ok = tusk_params_set(p, "preset", optarg, &err) == TUSK_OK; break;
        case 'n': {
            uint64_t v;
            ok = tusk_cli_u64(PROG " sim", "--rois", optarg, 1, UINT32_MAX, &v) &&
                 tusk_params_set(p, "rois", optarg, &err) == TUSK_OK;
            break;
        }
        case 's': {
            uint64_t v;
            ok = tusk_cli_u64(PROG " sim", "--seed", optarg, 0, UINT64_MAX, &v) &&
                 tusk_params_set(p, "seed", optarg, &err) == TUSK_OK;
            break;
        }
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
    if (!only_keys(p, zf_sim_keys(), "sim"))
        goto done;
    zf_sim_config_t sc;
    zf_sim_config_default(&sc);
    if (!tusk_params_get(p, "rois"))
        sc.rois = 100;
    if (zf_sim_config_read(&sc, p, &err) != TUSK_OK) {
        fprintf(stderr, PROG " sim: %s\n", err.message);
        goto done;
    }
    if (sc.rois == 0) {
        fprintf(stderr, PROG " sim: rois must be at least 1\n");
        goto done;
    }
    rc = TUSK_EXIT_FAIL;
    zf_sim_t *sim = NULL;
    adf_writer_t *w = adf_writer_new();
    adf_file_writer_t *fw = NULL;
    uint8_t *buf = NULL;
    size_t cap = 0;
    adf_error_t aerr;
    double points = 0, points2 = 0, signal = 0, pileup = 0;
    if (!w || zf_sim_new(&sim, &sc, &err) != TUSK_OK) {
        fprintf(stderr, PROG " sim: %s\n", w ? err.message : "out of memory");
        goto sim_done;
    }
    if (!(fw = adf_file_writer_open(out, &aerr))) {
        fprintf(stderr, PROG " sim: %s\n", aerr.message);
        goto sim_done;
    }
    for (uint64_t i = 0; i < sc.rois; i++) {
        const zf_sim_roi_t *r;
        if (zf_sim_make(sim, i, &r, &err) != TUSK_OK) {
            fprintf(stderr, PROG " sim: %s\n", err.message);
            goto sim_done;
        }
        if (tusk_grow(&buf, &cap, zf_sim_bytes(r), 1) != 0) {
            fprintf(stderr, PROG " sim: out of memory\n");
            goto sim_done;
        }
        adf_writer_reset(w, buf, cap);
        if (zf_sim_encode(r, w, &err) != TUSK_OK) {
            fprintf(stderr, PROG " sim: %s\n", err.message);
            goto sim_done;
        }
        if (adf_file_writer_write(fw, buf, adf_writer_used(w), &aerr) != ADF_OK) {
            fprintf(stderr, PROG " sim: %s\n", aerr.message);
            goto sim_done;
        }
        points += r->roi.n;
        points2 += (double)r->roi.n * r->roi.n;
        signal += r->signal_tracks;
        pileup += r->truth->n_pileup;
    }
    if (adf_file_writer_close(&fw, &aerr) != ADF_OK) {
        fprintf(stderr, PROG " sim: %s\n", aerr.message);
        goto sim_done;
    }
    if (!quiet) {
        double n = (double)sc.rois, mean = points / n, sd = sqrt(fmax(0.0, points2 / n - mean * mean));
        fprintf(stderr,
                PROG " sim: %llu RoIs (preset %s, %g degrees): %.1f +- %.1f spacepoints a RoI (spread %.1f), %.2f "
                     "signal tracks, %.2f pile-up vertices\n",
                (unsigned long long)sc.rois, sc.preset, sc.roi_deg, mean, sd / sqrt(n), sd, signal / n, pileup / n);
    }
    rc = TUSK_EXIT_OK;
sim_done:
    if (fw)
        adf_file_writer_close(&fw, &aerr);
    free(buf);
    adf_writer_destroy(&w);
    zf_sim_destroy(&sim);
done:
    tusk_params_destroy(&p);
    return rc;
}

/* ---- reading a file frame by frame ---------------------------------------------------- */

typedef int (*frame_fn)(void *ctx, const adf_frame_t *f, tusk_error_t *err);

static int each_frame(const char *path, frame_fn fn, void *ctx)
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
        if (fn(ctx, &f, &err) != TUSK_OK) {
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
    return TUSK_EXIT_OK;
}

/* A frame's bytes as a buffer of its own (the key lies just before the payload). */
static int feed_qa(void *ctx, const adf_frame_t *f, tusk_error_t *err)
{
    return zf_qa_feed(ctx, f->payload - ADF_KEY_SIZE, f->key.length, f->offset, err);
}

/* ---- qa ------------------------------------------------------------------------------- */

static int cmd_qa(const tusk_cli_t *cli, int argc, char **argv)
{
    static const struct option longs[] = {{"set", required_argument, NULL, 'S'},
                                          {"no-reference", no_argument, NULL, 'R'},
                                          {"out", required_argument, NULL, 'o'},
                                          {"help", no_argument, NULL, 'h'},
                                          {NULL, 0, NULL, 0}};
    tusk_params_t *p = tusk_params_new();
    const char *out = NULL;
    bool reference = true;
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
        case 'R': reference = false; break;
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
    zf_qa_config_t qc;
    zf_qa_config_default(&qc);
    qc.reference = reference;
    tusk_error_t err;
    if (!only_keys(p, zf_config_keys(), "qa"))
        goto done;
    if (zf_config_read(&qc.alg, p, &err) != TUSK_OK) {
        fprintf(stderr, PROG " qa: %s\n", err.message);
        goto done;
    }
    rc = TUSK_EXIT_OK;
    for (int i = optind; i < argc && rc == TUSK_EXIT_OK; i++) {
        const char *arg = argv[i], *eq = strchr(arg, '='), *path = eq ? eq + 1 : arg;
        size_t n = eq ? (size_t)(eq - arg) : strlen(arg);
        if (eq) {
            if (n == 0 || n >= sizeof qc.label || memchr(arg, ',', n) || memchr(arg, '/', n)) {
                fprintf(stderr, PROG " qa: '%.*s' is not a label (1-%zu characters, no comma or slash)\n", (int)n, arg,
                        sizeof qc.label - 1);
                rc = TUSK_EXIT_USAGE;
                break;
            }
            snprintf(qc.label, sizeof qc.label, "%.*s", (int)n, arg);
        } else {
            const char *base = strrchr(arg, '/');
            snprintf(qc.label, sizeof qc.label, "%s", base ? base + 1 : arg);
            char *dot = strrchr(qc.label, '.');
            if (dot && dot != qc.label)
                *dot = '\0';
            for (char *q = qc.label; *q; q++)
                if (*q == ',')
                    *q = '_';
        }
        zf_qa_t *qa = NULL;
        if (zf_qa_new(&qa, &qc, &err) != TUSK_OK) {
            fprintf(stderr, PROG " qa: %s\n", err.message);
            rc = TUSK_EXIT_FAIL;
            break;
        }
        rc = each_frame(path, feed_qa, qa);
        if (rc == TUSK_EXIT_OK && zf_qa_finish(qa, &err) != TUSK_OK) {
            fprintf(stderr, PROG " qa: %s: %s\n", path, err.message);
            rc = TUSK_EXIT_FAIL;
        }
        if (rc == TUSK_EXIT_OK) {
            const zf_qa_row_t *rows;
            if (zf_qa_rows(qa, &rows) == 0) {
                fprintf(stderr, PROG " qa: %s: no RoI with both a data:zvertex and a data:id_truth frame\n", path);
                rc = TUSK_EXIT_FAIL;
            } else {
                if (i == optind)
                    zf_qa_print(qa, stdout);
                else {
                    /* the rows only, under the first file's header */
                    char *text = NULL;
                    size_t len = 0;
                    FILE *mem = open_memstream(&text, &len);
                    if (mem) {
                        zf_qa_print(qa, mem);
                        fclose(mem);
                        const char *nl = strchr(text, '\n');
                        fputs(nl ? nl + 1 : text, stdout);
                        free(text);
                    }
                }
            }
        }
        if (rc == TUSK_EXIT_OK && out) {
            char dir[1200];
            snprintf(dir, sizeof dir, "%s/%s", out, qc.label);
            if (zf_qa_write(qa, dir, false, "png", &err) != TUSK_OK) {
                fprintf(stderr, PROG " qa: %s\n", err.message);
                rc = TUSK_EXIT_FAIL;
            }
        }
        zf_qa_destroy(&qa);
    }
done:
    tusk_params_destroy(&p);
    return rc;
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
    static const struct option longs[] = {{"roi", required_argument, NULL, 'r'},   {"set", required_argument, NULL, 'S'},
                                          {"out", required_argument, NULL, 'o'},   {"format", required_argument, NULL, 'f'},
                                          {"help", no_argument, NULL, 'h'},        {NULL, 0, NULL, 0}};
    tusk_params_t *p = tusk_params_new();
    const char *out = ".", *format = "png";
    uint64_t roi = UINT64_MAX;
    int rc = TUSK_EXIT_USAGE, c;
    find_roi_t fr = {0, NULL, {0}, false, NAN};
    if (!p) {
        fprintf(stderr, PROG ": out of memory\n");
        return TUSK_EXIT_FAIL;
    }
    optind = 1;
    while ((c = tusk_cli_getopt(cli, argc, argv, "h", longs, NULL)) != -1) {
        bool ok = true;
        switch (c) {
        case 'r': ok = tusk_cli_u64(PROG " plot", "--roi", optarg, 0, UINT32_MAX, &roi); break;
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
    if (optind + 1 != argc || roi == UINT64_MAX) {
        fprintf(stderr, PROG " plot: %s\n", roi == UINT64_MAX ? "--roi N is required" : "one FILE expected");
        goto done;
    }
    zf_config_t cfg;
    zf_config_default(&cfg);
    tusk_error_t err;
    if (!only_keys(p, zf_config_keys(), "plot"))
        goto done;
    if (zf_config_read(&cfg, p, &err) != TUSK_OK) {
        fprintf(stderr, PROG " plot: %s\n", err.message);
        goto done;
    }
    fr.roi = (uint32_t)roi;
    if ((rc = each_frame(argv[optind], find_frames, &fr)) != TUSK_EXIT_OK)
        goto done;
    rc = TUSK_EXIT_FAIL;
    if (!fr.found) {
        fprintf(stderr, PROG " plot: %s has no data:id_spacepoints of RoI %u\n", argv[optind], (unsigned)fr.roi);
        goto done;
    }
    char stem[64], title[300];
    snprintf(stem, sizeof stem, "histograms-roi%u", (unsigned)fr.roi);
    const char *base = strrchr(argv[optind], '/');
    snprintf(title, sizeof title, "%s, RoI %u: %u spacepoints, true vertex at %.2f mm", base ? base + 1 : argv[optind],
             (unsigned)fr.roi, (unsigned)fr.r.n, fr.z_true);
    if (zf_plot_roi(&cfg, &fr.r, fr.z_true, title, out, stem, format, &err) != TUSK_OK) {
        fprintf(stderr, PROG " plot: %s\n", err.message);
        goto done;
    }
    printf("%s/%s.%s\n", out, stem, format);
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
