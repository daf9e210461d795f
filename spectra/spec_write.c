/* spec_write.c - everything written at the end (spec_write, see
 * tusk/spectrum.h): the folder, the CSV files of the spectra (spectrum.c),
 * the summary and its table (peaks.c) and the pictures (spectra_plot.c),
 * with the C numeric locale. The top of libtusk-spectra: it calls those
 * files, none of them calls back. */
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>

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
