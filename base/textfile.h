/* textfile.h - reading a whole small file (configurations, topologies)
 * into memory, with a size limit, for the parsers that take bytes. */
#ifndef TUSK_TEXTFILE_H
#define TUSK_TEXTFILE_H

#include "tusk/export.h"

#include <stddef.h>

#include "tusk/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Read all of `path` into *data (malloc'd, NUL-terminated, the caller
 * frees it) and its length into *size. Reads at most one byte over `max`
 * (pipes have no size to ask; `max` at most SIZE_MAX / 2; a regular
 * file's size is the first guess of the buffer's). Fails with TUSK_EIO ("PATH: cannot open:
 * REASON", errno left as the failed open set it, so callers can tell a
 * missing file), TUSK_ELIMIT ("PATH: larger than MAX bytes") or
 * TUSK_ENOMEM; *data is then NULL. */
TUSK_INTERNAL int tusk_file_read(const char *path, size_t max, char **data, size_t *size, tusk_error_t *err);

#ifdef __cplusplus
}
#endif
#endif
