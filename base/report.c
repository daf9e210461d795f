/* report.c - a report folder: tables and pictures written into it (see
 * report.h). */
#include "base/report.h"

#include <locale.h>

#include "base/fs.h"
#include "base/gnuplot.h"

int tusk_report_files(const char *dir, const tusk_report_file_t *files, size_t n, const void *ctx, bool svg,
                      tusk_error_t *err)
{
    for (size_t i = 0; i < n; i++) {
        char path[1200];
        FILE *fp;
        int st = tusk_file_create(dir, files[i].name, &fp, path, sizeof path, err);
        if (st != TUSK_OK)
            return st;
        files[i].write(fp, ctx, svg);
        if ((st = tusk_file_close(fp, path, err)) != TUSK_OK)
            return st;
    }
    return TUSK_OK;
}

int tusk_report_picture(const char *dir, const char *name, const char *format, const tusk_report_file_t *files,
                        size_t n, const void *ctx, tusk_error_t *err)
{
    bool svg;
    char pic[1200];
    int st = tusk_gnuplot_picture(dir, name, format, &svg, pic, sizeof pic, err);
    if (st == TUSK_OK)
        st = tusk_report_files(dir, files, n, ctx, svg, err);
    return st == TUSK_OK ? tusk_gnuplot_draw(dir, name, pic, err) : st;
}

int tusk_report_write(const char *dir, const tusk_report_file_t *files, size_t n, const void *ctx,
                      tusk_report_picture_fn picture, const char *format, tusk_error_t *err)
{
    int st = tusk_mkdir_p(dir, err);
    if (st != TUSK_OK)
        return st;
    locale_t prev, c = tusk_c_numeric_begin(&prev);
    st = tusk_report_files(dir, files, n, ctx, false, err);
    if (st == TUSK_OK && picture)
        st = picture(ctx, dir, format, err);
    if (c != (locale_t)0)
        tusk_c_numeric_end(c, prev);
    return st;
}
