/* spec_write.c - everything written at the end (spec_write, see
 * tusk/spectrum.h): the folder, the CSV files of the spectra (spectrum.c),
 * the summary and its table (peaks.c) and the pictures (spectra_plot.c),
 * with the C numeric locale. The top of libtusk-spectra: it calls those
 * files, none of them calls back. */
#include <errno.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tusk/spectrum.h>

#include "base/fs.h"
#include "base/gnuplot.h"

int spec_write(spec_t *spec, const char *dir, FILE *report, tusk_error_t *err)
{
    if (!spec)
        return tusk_error_set(err, TUSK_EINVAL, "spec_write: no spectra");
    if (!dir)
        dir = spec_config(spec)->out;
    spec_finish(spec);
    int st = tusk_mkdir_p(dir, err);
    if (st)
        return st;
    spec_row_t *rows = malloc(3 * SPEC_MAX_LINES * sizeof *rows);
    if (!rows)
        return tusk_error_set(err, TUSK_ENOMEM, "spectra: out of memory");
    /* gnuplot and CSV readers take '.' as the decimal sign. */
    locale_t old, c = tusk_c_numeric_begin(&old);
    size_t n = 0;
    char path[SPEC_OUT_MAX + 64];
    snprintf(path, sizeof path, "%s/summary.csv", dir);
    if (!(st = spec_write_spectra(spec, dir, err)) && !(st = spec_summary(spec, rows, &n, err)) &&
        !(st = spec_write_summary(rows, n, path, err))) {
        if (report)
            spec_print_report(spec, rows, n, report);
        if (spec_config(spec)->plot)
            st = spec_plot(spec, dir, err);
    }
    tusk_c_numeric_end(c, old);
    free(rows);
    return st;
}

int spec_write_live(const spec_t *spec, const char *dir, tusk_error_t *err)
{
    if (!spec || !dir || !*dir)
        return tusk_error_set(err, TUSK_EINVAL, "spec_write_live: no spectra or no folder");
    char draw[SPEC_OUT_MAX + 16];
    if ((size_t)snprintf(draw, sizeof draw, "%s/.draw", dir) >= sizeof draw)
        return tusk_error_set(err, TUSK_EINVAL, "spectra: folder name too long");
    int st = tusk_mkdir_p(draw, err);
    if (st)
        return st;
    locale_t old, c = tusk_c_numeric_begin(&old);
    st = spec_plot(spec, draw, err);
    tusk_c_numeric_end(c, old);
    if (st)
        return st;
    const char *ext = spec_config(spec)->format == SPEC_SVG ? "svg" : "png";
    static const char *const names[] = {"spectra", "lines"};
    for (size_t i = 0; i < 2; i++) {
        char from[SPEC_OUT_MAX + 48], to[SPEC_OUT_MAX + 48];
        snprintf(from, sizeof from, "%s/%s.%s", draw, names[i], ext);
        snprintf(to, sizeof to, "%s/%s.%s", dir, names[i], ext);
        if (rename(from, to) != 0 && (errno != ENOENT || i == 0))
            return tusk_error_set(err, TUSK_EIO, "spectra: cannot rename %s to %s: %s", from, to, strerror(errno));
    }
    return TUSK_OK;
}
