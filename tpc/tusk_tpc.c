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
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cli.h"
#include "base/exit.h"
#include "base/parse.h"
#include "base/textfile.h"
#include "config.h"
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
    static const struct option longs[] = {{"preset", required_argument, NULL, 'P'},
                                          {"tracks", required_argument, NULL, 't'},
                                          {"events", required_argument, NULL, 'n'},
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
        case 'P': ok = tusk_params_set(p, "preset", optarg, &err) == TUSK_OK; break;
        case 't':
            ok = tusk_cli_u64(argv[0], "--tracks", optarg, 1, 1000000, &v) &&
                 tusk_params_set(p, "tracks", optarg, &err) == TUSK_OK;
            break;
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
    if (!only_keys(p, tpc_sim_keys(), "sim"))
        goto done;
    tpc_sim_config_t sc;
    tpc_sim_config_default(&sc);
    if (tpc_sim_config_read(&sc, p, &err) != TUSK_OK) {
        fprintf(stderr, PROG " sim: %s\n", err.message);
        goto done;
    }
    if (sc.events == 0) {
        fprintf(stderr, PROG " sim: events must be at least 1\n");
        goto done;
    }
    rc = TUSK_EXIT_FAIL;
    tpc_sim_t *sim = NULL;
    adf_writer_t *w = adf_writer_new();
    adf_file_writer_t *fw = NULL;
    uint8_t *buf = NULL;
    size_t cap = 0;
    adf_error_t aerr;
    uint64_t clusters = 0, noise = 0, particles = 0;
    if (!w || tpc_sim_new(&sim, &sc, 0, &err) != TUSK_OK) {
        fprintf(stderr, PROG " sim: %s\n", w ? err.message : "out of memory");
        goto sim_done;
    }
    if (!(fw = adf_file_writer_open(out, &aerr))) {
        fprintf(stderr, PROG " sim: %s\n", aerr.message);
        goto sim_done;
    }
    for (uint64_t i = 0; i < sc.events; i++) {
        const tpc_sim_event_t *ev;
        if (tpc_sim_make(sim, i, &ev, &err) != TUSK_OK) {
            fprintf(stderr, PROG " sim: %s\n", err.message);
            goto sim_done;
        }
        for (unsigned s = 0; s < ADF_TPC_SLICES; s++) {
            size_t need = tpc_sim_slice_bytes(sim, s);
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
            if (tpc_sim_encode_slice(sim, s, w, &err) != TUSK_OK) {
                fprintf(stderr, PROG " sim: %s\n", err.message);
                goto sim_done;
            }
            if (adf_file_writer_write(fw, buf, adf_writer_used(w), &aerr) != ADF_OK) {
                fprintf(stderr, PROG " sim: %s\n", aerr.message);
                goto sim_done;
            }
        }
        clusters += ev->clusters;
        noise += ev->noise;
        particles += ev->particles;
    }
    if (adf_file_writer_close(&fw, &aerr) != ADF_OK) {
        fprintf(stderr, PROG " sim: %s\n", aerr.message);
        goto sim_done;
    }
    if (!quiet) {
        double n = (double)sc.events;
        fprintf(stderr,
                PROG " sim: %llu events (%s) of %.0f particles in %.2f T: %.0f clusters an event (%.0f a slice, "
                     "%.2f %% noise)\n",
                (unsigned long long)sc.events, tpc_preset_name(sc.preset), (double)particles / n, sc.bz_tesla,
                (double)clusters / n, (double)clusters / n / ADF_TPC_SLICES,
                clusters ? 100.0 * (double)noise / (double)clusters : 0.0);
    }
    rc = TUSK_EXIT_OK;
sim_done:
    if (fw)
        adf_file_writer_close(&fw, &aerr);
    free(buf);
    adf_writer_destroy(&w);
    tpc_sim_destroy(&sim);
done:
    tusk_params_destroy(&p);
    return rc;
}

/* ---- a file into an analysis ---------------------------------------------------------- */

static int feed_file(tpc_qa_t *qa, const char *path)
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
        if (tpc_qa_feed(qa, f.payload - ADF_KEY_SIZE, f.key.length, f.offset, &err) != TUSK_OK) {
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
    if (tpc_qa_finish(qa, &err) != TUSK_OK) {
        fprintf(stderr, PROG ": %s: %s\n", path, err.message);
        return TUSK_EXIT_FAIL;
    }
    tpc_qa_summary_t s;
    tpc_qa_summary(qa, &s);
    if (s.slices == 0) {
        fprintf(stderr, PROG ": %s: no slice with data:tpc_clusters, data:tpc_truth and data:tpc_tracks\n", path);
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

/* The analysis's own options (qa and plot). */
static bool qa_option(int c, const char *prog, tpc_qa_config_t *qc)
{
    unsigned u;
    double d;
    switch (c) {
    case 'm':
        if (!tusk_cli_unsigned(prog, "--min-clusters", optarg, 1, 4 * ADF_TPC_ROWS, &u))
            return false;
        qc->min_clusters = u;
        return true;
    case 'M':
        if (!tusk_cli_double(prog, "--match", optarg, 0.51, 1.0, &d))
            return false;
        qc->match = d;
        return true;
    case 'R':
        if (!tusk_cli_double(prog, "--ref-p", optarg, 0.0, 1e4, &d))
            return false;
        qc->ref_p_gev = d;
        return true;
    default: return false;
    }
}

/* ---- qa ------------------------------------------------------------------------------- */

static int cmd_qa(const tusk_cli_t *cli, int argc, char **argv)
{
    static const struct option longs[] = {{"set", required_argument, NULL, 'S'},
                                          {"min-clusters", required_argument, NULL, 'm'},
                                          {"match", required_argument, NULL, 'M'},
                                          {"ref-p", required_argument, NULL, 'R'},
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
    tpc_qa_config_t qc;
    tpc_qa_config_default(&qc);
    optind = 1;
    while ((c = tusk_cli_getopt(cli, argc, argv, "h", longs, NULL)) != -1) {
        bool ok = true;
        switch (c) {
        case 'S': ok = tusk_cli_set(argv[0], p, optarg); break;
        case 'm':
        case 'M':
        case 'R': ok = qa_option(c, argv[0], &qc); break;
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
    tusk_error_t err;
    if (!only_keys(p, tpc_config_keys(), "qa"))
        goto done;
    if (tpc_config_read(&qc.alg, p, &err) != TUSK_OK) {
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
        tpc_qa_t *qa = NULL;
        if (tpc_qa_new(&qa, &qc, &err) != TUSK_OK) {
            fprintf(stderr, PROG " qa: %s\n", err.message);
            rc = TUSK_EXIT_FAIL;
            break;
        }
        rc = feed_file(qa, path);
        if (rc == TUSK_EXIT_OK)
            tpc_qa_print(qa, stdout);
        if (rc == TUSK_EXIT_OK && out) {
            char dir[1200];
            snprintf(dir, sizeof dir, "%s/%s", out, qc.label);
            if (tpc_qa_write(qa, dir, false, "png", &err) != TUSK_OK) {
                fprintf(stderr, PROG " qa: %s\n", err.message);
                rc = TUSK_EXIT_FAIL;
            }
        }
        tpc_qa_destroy(&qa);
    }
done:
    tusk_params_destroy(&p);
    return rc;
}

/* ---- plot ----------------------------------------------------------------------------- */

static int cmd_plot(const tusk_cli_t *cli, int argc, char **argv)
{
    static const struct option longs[] = {{"set", required_argument, NULL, 'S'},
                                          {"min-clusters", required_argument, NULL, 'm'},
                                          {"match", required_argument, NULL, 'M'},
                                          {"ref-p", required_argument, NULL, 'R'},
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
    tpc_qa_config_t qc;
    tpc_qa_config_default(&qc);
    optind = 1;
    while ((c = tusk_cli_getopt(cli, argc, argv, "h", longs, NULL)) != -1) {
        bool ok = true;
        switch (c) {
        case 'S': ok = tusk_cli_set(argv[0], p, optarg); break;
        case 'm':
        case 'M':
        case 'R': ok = qa_option(c, argv[0], &qc); break;
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
    tusk_error_t err;
    if (!only_keys(p, tpc_config_keys(), "plot"))
        goto done;
    if (tpc_config_read(&qc.alg, p, &err) != TUSK_OK) {
        fprintf(stderr, PROG " plot: %s\n", err.message);
        goto done;
    }
    const char *path;
    if (!label_of(argv[optind], qc.label, sizeof qc.label, &path))
        goto done;
    tpc_qa_t *qa = NULL;
    if (tpc_qa_new(&qa, &qc, &err) != TUSK_OK) {
        fprintf(stderr, PROG " plot: %s\n", err.message);
        rc = TUSK_EXIT_FAIL;
        goto done;
    }
    rc = feed_file(qa, path);
    if (rc == TUSK_EXIT_OK && tpc_qa_write(qa, out, true, format, &err) != TUSK_OK) {
        fprintf(stderr, PROG " plot: %s\n", err.message);
        rc = TUSK_EXIT_FAIL;
    }
    if (rc == TUSK_EXIT_OK)
        printf("%s/efficiency.%s\n", out, format);
    tpc_qa_destroy(&qa);
done:
    tusk_params_destroy(&p);
    return rc;
}

/* ---- diff ----------------------------------------------------------------------------- */

static int cmd_diff(const tusk_cli_t *cli, int argc, char **argv)
{
    static const struct option longs[] = {{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    int c;
    optind = 1;
    while ((c = tusk_cli_getopt(cli, argc, argv, "h", longs, NULL)) != -1) {
        if (c == 'h')
            return tusk_cli_help(cli);
        return TUSK_EXIT_USAGE;
    }
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
