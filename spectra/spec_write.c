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
#include <sys/stat.h>

#include <tusk/spectrum.h>

/* mkdir -p */
static int make_dir(const char *dir, tusk_error_t *err)
{
    char path[SPEC_OUT_MAX + 64];
    size_t n = strlen(dir);
    if (n >= sizeof path)
        return tusk_error_set(err, TUSK_EINVAL, "spectra: folder name too long: %s", dir);
    memcpy(path, dir, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (path[i] != '/' && path[i] != '\0')
            continue;
        char c = path[i];
        path[i] = '\0';
        if (mkdir(path, 0777) != 0 && errno != EEXIST)
            return tusk_error_set(err, TUSK_EIO, "spectra: cannot create folder %s: %s", path, strerror(errno));
        path[i] = c;
    }
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return tusk_error_set(err, TUSK_EIO, "spectra: %s is not a folder", dir);
    return TUSK_OK;
}

int spec_write(spec_t *spec, const char *dir, FILE *report, tusk_error_t *err)
{
    if (!spec)
        return tusk_error_set(err, TUSK_EINVAL, "spec_write: no spectra");
    if (!dir)
        dir = spec_config(spec)->out;
    spec_finish(spec);
    int st = make_dir(dir, err);
    if (st)
        return st;
    spec_row_t *rows = malloc(3 * SPEC_MAX_LINES * sizeof *rows);
    if (!rows)
        return tusk_error_set(err, TUSK_ENOMEM, "spectra: out of memory");
    /* gnuplot and CSV readers take '.' as the decimal sign. */
    locale_t c = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    locale_t old = c != (locale_t)0 ? uselocale(c) : (locale_t)0;
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
    if (c != (locale_t)0) {
        uselocale(old);
        freelocale(c);
    }
    free(rows);
    return st;
}
