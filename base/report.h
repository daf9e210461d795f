/* report.h - a report folder (internal): the tables and pictures that a
 * quality analysis writes into a folder of its own.
 *
 * A report is a list of files, each a name in the folder and the caller's
 * function that writes it: tusk_report_files creates (empties) each with
 * tusk_file_create, calls its function, and closes it with
 * tusk_file_close, so that every file gets the reports of base/fs.h ("PATH:
 * cannot write"); the first file that fails stops the rest.
 * tusk_report_picture writes a picture's data and script that way and runs
 * gnuplot on it (base/gnuplot.h); tusk_report_write makes the folder and
 * writes a report's tables, then its picture, in the C numeric locale (a
 * '.' decimal sign in every number, whatever the caller's locale). */
#ifndef TUSK_BASE_REPORT_H
#define TUSK_BASE_REPORT_H

#include "tusk/export.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "tusk/error.h"

/* One file of a report: NAME in the folder, written by write(fp, ctx,
 * svg); svg says the picture's format, for a script's terminal. */
typedef struct tusk_report_file {
    const char *name;
    void (*write)(FILE *fp, const void *ctx, bool svg);
} tusk_report_file_t;

/* A report's picture, drawn into DIR in FORMAT ("png", "svg" or NULL). */
typedef int (*tusk_report_picture_fn)(const void *ctx, const char *dir, const char *format, tusk_error_t *err);

/* The n files in DIR, in order. */
TUSK_INTERNAL int tusk_report_files(const char *dir, const tusk_report_file_t *files, size_t n, const void *ctx,
                                    bool svg, tusk_error_t *err);

/* The picture DIR/NAME.png or DIR/NAME.svg (by format, as
 * tusk_gnuplot_picture): the n files (its data, and its script NAME.gp)
 * written, then the script run (tusk_gnuplot_draw). A bad format is
 * refused before any file is written. Call it in the C numeric locale. */
TUSK_INTERNAL int tusk_report_picture(const char *dir, const char *name, const char *format,
                                      const tusk_report_file_t *files, size_t n, const void *ctx, tusk_error_t *err);

/* DIR and its missing parents made (tusk_mkdir_p), the n files written
 * into it, then, when picture is not NULL, picture(ctx, dir, format, err):
 * the files and the picture in the C numeric locale
 * (tusk_c_numeric_begin/end). */
TUSK_INTERNAL int tusk_report_write(const char *dir, const tusk_report_file_t *files, size_t n, const void *ctx,
                                    tusk_report_picture_fn picture, const char *format, tusk_error_t *err);

#endif
