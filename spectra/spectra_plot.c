/* spectra_plot.c - the pictures of the spectra, drawn by gnuplot.
 *
 * DIR/spectra.dat holds the spectra drawn (columns: bin centre in keV,
 * singles, addback, tracked). DIR/spectra.gp overlays them with a log
 * scale; DIR/lines.gp zooms on each configured line (one panel per line,
 * linear scale, up to LINES_DRAWN of them) from the same data. Scripts name
 * their files without the folder, so `cd DIR && gnuplot spectra.gp`
 * redraws by hand.
 *
 * gnuplot runs through tusk's one runner (base/gnuplot.h): in DIR, no
 * shell, its output in DIR/NAME.log (removed when empty after success). A
 * missing program, a failing exit status or no picture is TUSK_EIO naming
 * the script (and the log). */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tusk/spectrum.h>

#include "base/gnuplot.h"

#define LINES_DRAWN 8
#define PATH_CAP (SPEC_OUT_MAX + 64)

/* The spectra drawn, in spectra.dat's column order (2, 3, 4). */
static const spec_kind_t drawn[] = {SPEC_SINGLES, SPEC_ADDBACK, SPEC_TRACKED};
static const char *const colours[] = {"#000000", "#d55e00", "#0072b2"};

static const char *ext_of(spec_format_t f)
{
    return f == SPEC_SVG ? "svg" : "png";
}

static int run_gnuplot(const char *dir, const char *name, const char *picture, tusk_error_t *err)
{
    char script[64], log[64];
    snprintf(script, sizeof script, "%s.gp", name);
    snprintf(log, sizeof log, "%s.log", name);
    const char *pictures[] = {picture, NULL};
    return tusk_gnuplot_run(dir, script, log, pictures, err);
}

static void put_terminal(FILE *fp, spec_format_t format, const char *name, int width, int height)
{
    tusk_gnuplot_head(fp, name, "spectra/spectra_plot.c", "spectra.dat", format == SPEC_SVG, width, height);
}

static int close_script(FILE *fp, const char *path, tusk_error_t *err)
{
    int bad = ferror(fp);
    if (fclose(fp) != 0)
        bad = 1;
    return bad ? tusk_error_set(err, TUSK_EIO, "spectra: cannot write %s", path) : TUSK_OK;
}

/* `plot` clauses for the spectra with counts; false when none has any. */
static bool put_series(FILE *fp, const bool *has, bool log_scale)
{
    bool any = false;
    for (size_t k = 0; k < 3; k++) {
        if (!has[k])
            continue;
        fprintf(fp, "%s'spectra.dat' using 1:%s with histeps lc rgb '%s' title '%s'", any ? ", \\\n     " : "plot ",
                log_scale ? (k == 0 ? "($2 > 0 ? $2 : 0.1)" : k == 1 ? "($3 > 0 ? $3 : 0.1)" : "($4 > 0 ? $4 : 0.1)")
                          : (k == 0 ? "2" : k == 1 ? "3" : "4"),
                colours[k], spec_kind_name(drawn[k]));
        any = true;
    }
    if (any)
        fputc('\n', fp);
    return any;
}

int spec_plot(const spec_t *spec, const char *dir, tusk_error_t *err)
{
    if (!spec || !dir || !*dir)
        return tusk_error_set(err, TUSK_EINVAL, "spec_plot: no spectra or no folder");
    if (strlen(dir) >= SPEC_OUT_MAX)
        return tusk_error_set(err, TUSK_EINVAL, "spectra: folder name too long");
    const spec_config_t *c = spec_config(spec);
    size_t nbins = spec_bins(spec);
    const uint64_t *h[3];
    bool has[3];
    for (size_t k = 0; k < 3; k++) {
        h[k] = spec_histogram(spec, drawn[k]);
        has[k] = spec_total_counts(h[k], nbins, c->bin_kev, 0.0) > 0;
    }
    char path[PATH_CAP], picture[PATH_CAP];
    snprintf(path, sizeof path, "%s/spectra.dat", dir);
    FILE *fp = fopen(path, "w");
    if (!fp)
        return tusk_error_set(err, TUSK_EIO, "spectra: cannot write %s: %s", path, strerror(errno));
    fputs("# energy_kev singles addback tracked (counts per bin)\n", fp);
    for (size_t b = 0; b < nbins; b++)
        fprintf(fp, "%.10g %llu %llu %llu\n", spec_bin_centre(spec, b), (unsigned long long)h[0][b],
                (unsigned long long)h[1][b], (unsigned long long)h[2][b]);
    int st = close_script(fp, path, err);
    if (st)
        return st;

    /* The whole range, log scale. */
    snprintf(path, sizeof path, "%s/spectra.gp", dir);
    if (!(fp = fopen(path, "w")))
        return tusk_error_set(err, TUSK_EIO, "spectra: cannot write %s: %s", path, strerror(errno));
    put_terminal(fp, c->format, "spectra", 1200, 700);
    fprintf(fp,
            "set title 'Energy spectra' noenhanced\n"
            "set xlabel 'Energy (keV)'\n"
            "set ylabel 'Counts per %g keV'\n"
            "set xrange [0:%.10g]\n"
            "set grid\n"
            "set key top right\n",
            c->bin_kev, (double)nbins * c->bin_kev);
    if (has[0] || has[1] || has[2]) {
        /* Empty bins drawn at 0.1, under the axis: a step needs both its
         * ends, and a lone full bin between empty ones would vanish. */
        fputs("set logscale y\nset yrange [0.5:*]\n", fp);
        put_series(fp, has, true);
    } else {
        fputs("set label 'no counts' at graph 0.5, 0.5 center\nset yrange [0:1]\nplot 0 notitle\n", fp);
    }
    if ((st = close_script(fp, path, err)))
        return st;
    snprintf(picture, sizeof picture, "%s/spectra.%s", dir, ext_of(c->format));
    if ((st = run_gnuplot(dir, "spectra", picture, err)))
        return st;

    if (c->n_lines == 0 || !(has[0] || has[1] || has[2]))
        return TUSK_OK;
    /* A panel per line, linear scale. */
    unsigned n = c->n_lines < LINES_DRAWN ? c->n_lines : LINES_DRAWN;
    unsigned cols = n < 3 ? n : 3, rows = (n + cols - 1) / cols;
    snprintf(path, sizeof path, "%s/lines.gp", dir);
    if (!(fp = fopen(path, "w")))
        return tusk_error_set(err, TUSK_EIO, "spectra: cannot write %s: %s", path, strerror(errno));
    put_terminal(fp, c->format, "lines", 500 * (int)cols, 400 * (int)rows);
    if (c->n_lines > n)
        fprintf(fp, "# %u lines configured, the first %u drawn\n", c->n_lines, n);
    fprintf(fp, "set multiplot layout %u,%u title 'Peaks (+-2 x peak_window_kev)' noenhanced\n", rows, cols);
    fputs("set grid\nset xlabel 'Energy (keV)'\nset key top right\n", fp);
    for (unsigned l = 0; l < n; l++) {
        double w = 2 * c->peak_window_kev;
        fprintf(fp, "set title '%.2f keV'\nset xrange [%.10g:%.10g]\n", c->lines[l], c->lines[l] - w,
                c->lines[l] + w);
        put_series(fp, has, false);
    }
    fputs("unset multiplot\n", fp);
    if ((st = close_script(fp, path, err)))
        return st;
    snprintf(picture, sizeof picture, "%s/lines.%s", dir, ext_of(c->format));
    return run_gnuplot(dir, "lines", picture, err);
}
