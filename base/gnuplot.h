/* gnuplot.h - the one gnuplot runner of tusk (internal).
 *
 * Every picture tusk draws is a script plus its data, written by the
 * caller next to the picture, and gnuplot run on the script:
 *
 *     cd DIR && gnuplot ./SCRIPT          (stdout and stderr into DIR/LOG)
 *
 * so that the files can be moved together and the picture restyled and
 * redrawn by hand. gnuplot ($TUSK_GNUPLOT, else "gnuplot" from PATH) is
 * started with fork and execvp, no shell in between, stdin from /dev/null.
 * A missing gnuplot, a failed start, a signal, a non-zero exit status or a
 * missing picture is an error (TUSK_EIO) naming the script, with the log's
 * most telling line (gnuplot's `"file" line N:` message, else its first).
 * An empty log is removed. The runner keeps no state and prints nothing.
 *
 * Quoting: file names and caller text go into scripts as single-quoted
 * gnuplot strings (tusk_gnuplot_quote), in which only the quote itself is
 * special; a picture path with a single quote or a line break is refused
 * by tusk_gnuplot_check_path. Scripts must be written with '.' as the
 * decimal sign: write them between tusk_c_numeric_begin/end. */
#ifndef TUSK_BASE_GNUPLOT_H
#define TUSK_BASE_GNUPLOT_H

#include "tusk/export.h"

#include <locale.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "tusk/error.h"

/* Run gnuplot on SCRIPT (a name inside DIR; DIR NULL or "" = the current
 * folder) with DIR as its working folder, logging to LOG (a name inside
 * DIR). PICTURES (NULL-terminated, paths as seen from the caller, may be
 * NULL) are removed first, so no stale picture passes for a new one, and
 * must exist and be non-empty afterwards. */
TUSK_INTERNAL int tusk_gnuplot_run(const char *dir, const char *script, const char *log, const char *const *pictures,
                                   tusk_error_t *err);

/* Refuse (TUSK_EINVAL, naming WHO) a path that cannot go into a script:
 * empty, or with a single quote or a line break. */
TUSK_INTERNAL int tusk_gnuplot_check_path(const char *who, const char *path, tusk_error_t *err);

/* Write S as a gnuplot single-quoted string: quotes doubled, control
 * characters as spaces (a string cannot span lines). */
TUSK_INTERNAL void tusk_gnuplot_quote(FILE *fp, const char *s);

/* A picture's format: NULL or "png" (*svg false) or "svg" (*svg true);
 * anything else is TUSK_EINVAL "picture format 'F': png or svg". */
TUSK_INTERNAL int tusk_gnuplot_format(const char *format, bool *svg, tusk_error_t *err);

/* The picture DIR/NAME.svg or DIR/NAME.png (by format, as
 * tusk_gnuplot_format): its path into pic (cap bytes), checked as
 * tusk_gnuplot_check_path does. */
TUSK_INTERNAL int tusk_gnuplot_picture(const char *dir, const char *name, const char *format, bool *svg, char *pic,
                                       size_t cap, tusk_error_t *err);

/* tusk_gnuplot_run of the script NAME.gp in DIR (its log NAME.log) that
 * draws the picture pic. */
TUSK_INTERNAL int tusk_gnuplot_draw(const char *dir, const char *name, const char *pic, tusk_error_t *err);

/* The head of the script NAME.gp that draws NAME.svg or NAME.png, WIDTH x
 * HEIGHT: a comment (written by SOURCE, its data in DATA, how to redraw
 * it), the terminal (svg; for png pngcairo when gnuplot has it, else png)
 * and the output, one line each. */
TUSK_INTERNAL void tusk_gnuplot_head(FILE *fp, const char *name, const char *source, const char *data, bool svg,
                                     int width, int height);

/* The "C" numeric locale for this thread (uselocale), so that printf
 * writes '.' as the decimal sign; end restores the previous one.
 * begin returns (locale_t)0 with errno set when it cannot make it. */
TUSK_INTERNAL locale_t tusk_c_numeric_begin(locale_t *previous);
TUSK_INTERNAL void tusk_c_numeric_end(locale_t c, locale_t previous);

#endif
