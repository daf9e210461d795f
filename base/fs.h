/* fs.h - folders (internal).
 *
 * tusk_mkdir_p makes a folder and every missing parent (mode 0777 before
 * the umask), like `mkdir -p`: a folder that exists already is fine, a
 * path part that exists as a file is an error (TUSK_EIO naming the part
 * and the system's reason). */
#ifndef TUSK_BASE_FS_H
#define TUSK_BASE_FS_H

#include "tusk/error.h"

int tusk_mkdir_p(const char *dir, tusk_error_t *err);

#endif
