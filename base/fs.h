/* fs.h - folders (internal).
 *
 * tusk_mkdir_p makes a folder and every missing parent (mode 0777 before
 * the umask), like `mkdir -p`: a folder that exists already is fine, a
 * path part that exists as a file is an error (TUSK_EIO naming the part
 * and the system's reason). tusk_mkdir_p_mode makes the missing ones with
 * another mode (0700: a user's own cache or work folders). */
#ifndef TUSK_BASE_FS_H
#define TUSK_BASE_FS_H

#include "tusk/export.h"

#include <sys/types.h>

#include "tusk/error.h"

TUSK_INTERNAL int tusk_mkdir_p(const char *dir, tusk_error_t *err);
TUSK_INTERNAL int tusk_mkdir_p_mode(const char *dir, mode_t mode, tusk_error_t *err);

#endif
