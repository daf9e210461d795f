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
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cli.h"
#include "base/exit.h"
#include "base/parse.h"
#include "config.h"
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
    static const struct option longs[] = {{"collisions", required_argument, NULL, 'c'},
                                          {"timeslices", required_argument, NULL, 'n'},
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
        case 'c':
            ok = tusk_cli_u64(argv[0], "--collisions", optarg, 1, 1000000, &v) &&
                 tusk_params_set(p, "collisions", optarg, &err) == TUSK_OK;
            break;
        case 'n':
            ok = tusk_cli_u64(argv[0], "--timeslices", optarg, 1, UINT32_MAX, &v) &&
                 tusk_params_set(p, "timeslices", optarg, &err) == TUSK_OK;
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
    if (!only_keys(p, sts_sim_keys(), "sim"))
        goto done;
    sts_sim_config_t sc;
    sts_sim_config_default(&sc);
    if (sts_sim_config_read(&sc, p, &err) != TUSK_OK) {
        fprintf(stderr, PROG " sim: %s\n", err.message);
        goto done;
    }
    if (sc.timeslices == 0) {
        fprintf(stderr, PROG " sim: timeslices must be at least 1\n");
        goto done;
    }
    rc = TUSK_EXIT_FAIL;
    sts_sim_t *sim = NULL;
    adf_writer_t *w = adf_writer_new();
    adf_file_writer_t *fw = NULL;
    uint8_t *buf = NULL;
    size_t cap = 0;
    adf_error_t aerr;
    uint64_t digis = 0, noise = 0, lost = 0, points = 0;
    double length = 0;
    if (!w || sts_sim_new(&sim, &sc, &err) != TUSK_OK) {
        fprintf(stderr, PROG " sim: %s\n", w ? err.message : "out of memory");
        goto sim_done;
    }
    if (!(fw = adf_file_writer_open(out, &aerr))) {
        fprintf(stderr, PROG " sim: %s\n", aerr.message);
        goto sim_done;
    }
    for (uint64_t i = 0; i < sc.timeslices; i++) {
        const sts_sim_ts_t *ts;
        if (sts_sim_make(sim, i, &ts, &err) != TUSK_OK) {
            fprintf(stderr, PROG " sim: %s\n", err.message);
            goto sim_done;
        }
        for (size_t m = 0; m < sts_sim_modules(sim); m++) {
            size_t need = sts_sim_module_bytes(sim, m);
            if (need > cap) {
                uint8_t *b = realloc(buf, need);
                if (!b) {
                    fprintf(stderr, PROG " sim: out of memory\n");
                    goto sim_done;
                }
                buf = b;
                cap = need;
            }
            adf_writer_reset(w, buf, cap);
            if (sts_sim_encode_module(sim, m, w, &err) != TUSK_OK) {
                fprintf(stderr, PROG " sim: %s\n", err.message);
                goto sim_done;
            }
            if (adf_file_writer_write(fw, buf, adf_writer_used(w), &aerr) != ADF_OK) {
                fprintf(stderr, PROG " sim: %s\n", aerr.message);
                goto sim_done;
            }
        }
        digis += ts->digis;
        noise += ts->noise_digis;
        lost += ts->lost;
        points += ts->points;
        length += ts->length_ns;
    }
    if (adf_file_writer_close(&fw, &aerr) != ADF_OK) {
        fprintf(stderr, PROG " sim: %s\n", aerr.message);
        goto sim_done;
    }
    if (!quiet) {
        double n = (double)sc.timeslices;
        fprintf(stderr,
                PROG " sim: %llu timeslices of %u collisions (%.1f us each) over %zu modules: %.0f digis a timeslice "
                     "(%.0f a collision, %.2f %% noise), %.0f Monte Carlo points, %.0f hits lost in dead time\n",
                (unsigned long long)sc.timeslices, (unsigned)sc.collisions, length / n * 1e-3, sts_sim_modules(sim),
                (double)digis / n, (double)digis / n / sc.collisions,
                digis ? 100.0 * (double)noise / (double)digis : 0.0, (double)points / n, (double)lost / n);
    }
    rc = TUSK_EXIT_OK;
sim_done:
    if (fw)
        adf_file_writer_close(&fw, &aerr);
    free(buf);
    adf_writer_destroy(&w);
    sts_sim_destroy(&sim);
done:
    tusk_params_destroy(&p);
    return rc;
}

/* ---- a file into an analysis ---------------------------------------------------------- */

static int feed_file(sts_qa_t *qa, const char *path)
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
        if (sts_qa_feed(qa, f.payload - ADF_KEY_SIZE, f.key.length, f.offset, &err) != TUSK_OK) {
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
    if (sts_qa_finish(qa, &err) != TUSK_OK) {
        fprintf(stderr, PROG ": %s: %s\n", path, err.message);
        return TUSK_EXIT_FAIL;
    }
    sts_qa_summary_t s;
    sts_qa_summary(qa, &s);
    if (s.modules == 0) {
        fprintf(stderr, PROG ": %s: no module with data:sts_digis, data:sts_truth, data:sts_clusters and data:sts_hits\n",
                path);
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
                                          {"no-compare", no_argument, NULL, 'C'},
                                          {"out", required_argument, NULL, 'o'},
                                          {"help", no_argument, NULL, 'h'},
                                          {NULL, 0, NULL, 0}};
    tusk_params_t *p = tusk_params_new();
    const char *out = NULL;
    bool compare = true;
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
        case 'C': compare = false; break;
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
    sts_qa_config_t qc;
    sts_qa_config_default(&qc);
    qc.compare = compare;
    tusk_error_t err;
    if (!only_keys(p, sts_config_keys(), "qa"))
        goto done;
    if (sts_config_read(&qc.alg, p, &err) != TUSK_OK) {
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
        sts_qa_t *qa = NULL;
        if (sts_qa_new(&qa, &qc, &err) != TUSK_OK) {
            fprintf(stderr, PROG " qa: %s\n", err.message);
            rc = TUSK_EXIT_FAIL;
            break;
        }
        rc = feed_file(qa, path);
        if (rc == TUSK_EXIT_OK)
            sts_qa_print(qa, stdout);
        if (rc == TUSK_EXIT_OK && out) {
            char dir[1200];
            snprintf(dir, sizeof dir, "%s/%s", out, qc.label);
            if (sts_qa_write(qa, dir, false, "png", &err) != TUSK_OK) {
                fprintf(stderr, PROG " qa: %s\n", err.message);
                rc = TUSK_EXIT_FAIL;
            }
        }
        sts_qa_destroy(&qa);
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
    sts_qa_config_t qc;
    sts_qa_config_default(&qc);
    qc.compare = false;
    tusk_error_t err;
    if (!only_keys(p, sts_config_keys(), "plot"))
        goto done;
    if (sts_config_read(&qc.alg, p, &err) != TUSK_OK) {
        fprintf(stderr, PROG " plot: %s\n", err.message);
        goto done;
    }
    const char *path;
    if (!label_of(argv[optind], qc.label, sizeof qc.label, &path))
        goto done;
    sts_qa_t *qa = NULL;
    if (sts_qa_new(&qa, &qc, &err) != TUSK_OK) {
        fprintf(stderr, PROG " plot: %s\n", err.message);
        rc = TUSK_EXIT_FAIL;
        goto done;
    }
    rc = feed_file(qa, path);
    if (rc == TUSK_EXIT_OK && sts_qa_write(qa, out, true, format, &err) != TUSK_OK) {
        fprintf(stderr, PROG " plot: %s\n", err.message);
        rc = TUSK_EXIT_FAIL;
    }
    if (rc == TUSK_EXIT_OK)
        printf("%s/residuals.%s\n", out, format);
    sts_qa_destroy(&qa);
done:
    tusk_params_destroy(&p);
    return rc;
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
