/* fs.h - folders, and files written into them (internal).
 *
 * tusk_mkdir_p makes a folder and every missing parent (mode 0777 before
 * the umask), like `mkdir -p`: a folder that exists already is fine, a
 * path part that exists as a file is an error (TUSK_EIO naming the part
 * and the system's reason). tusk_mkdir_p_mode makes the missing ones with
 * another mode (0700: a user's own cache or work folders).
 *
 * tusk_file_create and tusk_file_close are the two ends of writing a file
 * in a folder (a table, a picture's data or script), with the reports
 * every such file gets: "PATH: the system's reason" when it cannot be
 * made, "PATH: cannot write" when a write failed (TUSK_EIO). */
#ifndef TUSK_BASE_FS_H
#define TUSK_BASE_FS_H

#include "tusk/export.h"

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "tusk/error.h"

TUSK_INTERNAL int tusk_mkdir_p(const char *dir, tusk_error_t *err);
TUSK_INTERNAL int tusk_mkdir_p_mode(const char *dir, mode_t mode, tusk_error_t *err);

/* DIR/NAME made (or emptied) for writing into *fp, its path into path
 * (cap bytes). */
TUSK_INTERNAL int tusk_file_create(const char *dir, const char *name, FILE **fp, char *path, size_t cap,
                                   tusk_error_t *err);

/* Close fp, the file at path: TUSK_OK, or TUSK_EIO when it could not be
 * written (the close reports what a buffered write could not do). */
TUSK_INTERNAL int tusk_file_close(FILE *fp, const char *path, tusk_error_t *err);

#endif
