/* tusk_spectra.c - tusk-spectra: the spectra actor's analysis, offline, on
 * ADF files (as file_writer writes them), for analysts replaying data.
 *
 *   tusk-spectra [--set key=value ...] [--out DIR] FILE.adf ...
 *
 * Files are read in order as one stream. Exit status (base/exit.h): 0
 * done, 1 a file could not be read or held a malformed frame (named with
 * its offset), or the output could not be written; 2 bad usage or a bad
 * setting. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tusk/adf.h>
#include <tusk/spectrum.h>

#include "base/cli.h"
#include "base/exit.h"
#include "config.h"

#define PROG "tusk-spectra"

static void help(FILE *fp)
{
    fputs("Energy spectra and peak analysis of ADF files (data:psa, event:data:psa, data:tracked, data:truth\n"
          "frames), as the spectra actor does at the end of a run: writes DIR/core.csv, singles.csv,\n"
          "addback.csv, tracked.csv, truth.csv, summary.csv and the pictures, and prints the summary.\n"
          "\n"
          "  --set key=value   a setting (repeatable):\n"
          "      bin_kev          bin width, keV (1)\n"
          "      max_kev          spectra cover 0 to max_kev (4096)\n"
          "      addback_group    crystals per cluster for addback: crystal_id / N (3)\n"
          "      lines            energies of the peaks to analyse, keV, e.g. \"1173.2 1332.5\" (none)\n"
          "      peak_window_kev  half-width of a peak region; side bands as wide on both sides (8)\n"
          "      threshold_kev    peak-to-total counts bins from this energy on (10)\n"
          "      emitted          emitted gammas: one count for all lines or one per line (from data:truth)\n"
          "      out              output folder (spectra)\n"
          "      format           png | svg (png)\n"
          "      plot             yes | no: draw pictures with gnuplot (yes)\n"
          "  --out DIR         the output folder (the same as --set out=DIR)\n"
          "  -h, --help        this help\n"
          "\n"
          "gnuplot is $TUSK_GNUPLOT or gnuplot from PATH. See spectra/README.md.\n"
          "\n"
          "Exit status: 0 done, 1 a file could not be read or held a malformed frame, or\n"
          "the output could not be written; 2 bad usage or a bad setting.\n",
          fp);
}

static int read_file(spec_t *spec, const char *path)
{
    adf_error_t ae;
    adf_file_reader_t *r = adf_file_reader_open(path, NULL, &ae);
    if (!r) {
        fprintf(stderr, PROG ": %s\n", ae.message);
        return TUSK_EXIT_FAIL;
    }
    adf_frame_t f;
    int rc, status = 0;
    tusk_error_t err;
    while ((rc = adf_file_reader_next(r, &f)) == ADF_OK) {
        if (spec_feed_frame(spec, &f, &err) != TUSK_OK) {
            fprintf(stderr, PROG ": %s: %s\n", path, err.message);
            status = TUSK_EXIT_FAIL;
            break;
        }
    }
    if (!status && rc != ADF_END) {
        const char *msg = adf_file_reader_error(r)->message;
        /* The reader's messages mostly name the file already. */
        if (strstr(msg, path))
            fprintf(stderr, PROG ": %s\n", msg);
        else
            fprintf(stderr, PROG ": %s: %s\n", path, msg);
        status = TUSK_EXIT_FAIL;
    }
    adf_file_reader_destroy(&r);
    return status;
}

static int run(const tusk_cli_t *cli, int argc, char **argv)
{
    static const struct option longopts[] = {{"set", required_argument, NULL, 's'},
                                             {"out", required_argument, NULL, 'o'},
                                             {"help", no_argument, NULL, 'h'},
                                             {"version", no_argument, NULL, 'V'},
                                             {NULL, 0, NULL, 0}};
    spec_config_t cfg;
    spec_config_init(&cfg);
    tusk_error_t err;
    int c;
    while ((c = tusk_cli_getopt(cli, argc, argv, "s:o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 's': {
            char *eq = strchr(optarg, '=');
            if (!eq || eq == optarg) {
                fprintf(stderr, PROG ": --set %s: expected key=value\n", optarg);
                return TUSK_EXIT_USAGE;
            }
            *eq = '\0';
            if (spec_config_set(&cfg, optarg, eq + 1, &err) != TUSK_OK) {
                fprintf(stderr, PROG ": --set: %s\n", err.message);
                return TUSK_EXIT_USAGE;
            }
            break;
        }
        case 'o':
            if (spec_config_set(&cfg, "out", optarg, &err) != TUSK_OK) {
                fprintf(stderr, PROG ": --out: %s\n", err.message);
                return TUSK_EXIT_USAGE;
            }
            break;
        case 'h': return tusk_cli_help(cli);
        case 'V': return tusk_cli_version(cli);
        default: return TUSK_EXIT_USAGE;
        }
    }
    if (optind == argc) {
        fprintf(stderr, PROG ": no input file (" PROG " --help says more)\n");
        return TUSK_EXIT_USAGE;
    }
    spec_t *spec = spec_new(&cfg, &err);
    if (!spec) {
        fprintf(stderr, PROG ": %s\n", err.message);
        return err.code == TUSK_ENOMEM ? TUSK_EXIT_FAIL : TUSK_EXIT_USAGE;
    }
    int status = 0;
    for (int i = optind; i < argc && !status; i++)
        status = read_file(spec, argv[i]);
    if (!status) {
        if (spec_write(spec, NULL, stdout, &err) != TUSK_OK) {
            fprintf(stderr, PROG ": %s\n", err.message);
            status = TUSK_EXIT_FAIL;
        } else {
            printf("written: %s/ (core.csv, singles.csv, addback.csv, tracked.csv, truth.csv, summary.csv%s)\n",
                   cfg.out, cfg.plot ? (cfg.format == SPEC_SVG ? ", *.svg" : ", *.png") : "");
        }
    }
    spec_destroy(&spec);
    return status;
}

int main(int argc, char **argv)
{
    static const tusk_cli_t cli = {PROG, PACKAGE_VERSION, "[--set key=value ...] [--out DIR] FILE.adf ...", NULL, run,
                                   help};
    return tusk_cli_main(&cli, argc, argv);
}
