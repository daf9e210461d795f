/* textfile.c - a whole small file into memory (see base/textfile.h). */
#include "base/textfile.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int tusk_file_read(const char *path, size_t max, char **data, size_t *size, tusk_error_t *err)
{
    *data = NULL;
    *size = 0;
    FILE *f = fopen(path, "rbe");
    if (!f) {
        int e = errno;
        tusk_error_set(err, TUSK_EIO, "%s: cannot open: %s", path, strerror(e));
        errno = e;
        return TUSK_EIO;
    }
    size_t cap = 0, len = 0;
    char *buf = NULL;
    int rc = TUSK_OK;
    /* A regular file's size is the first guess (+2: the NUL, and room to
     * see the end in the same read); it may still grow while read. */
    struct stat st;
    size_t first = 4096;
    if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= 0 && (uint64_t)st.st_size < max)
        first = (size_t)st.st_size + 2;
    for (;;) {
        if (len + 1 >= cap) {
            if (cap > max + 1) {
                rc = tusk_error_set(err, TUSK_ELIMIT, "%s: larger than %zu bytes", path, max);
                break;
            }
            size_t ncap = cap ? (cap > SIZE_MAX / 2 ? SIZE_MAX : 2 * cap) : first;
            if (ncap > max + 2)
                ncap = max + 2; /* room for one byte over the limit and the NUL */
            char *nb = realloc(buf, ncap);
            if (!nb) {
                rc = tusk_error_set(err, TUSK_ENOMEM, "%s: out of memory", path);
                break;
            }
            buf = nb;
            cap = ncap;
        }
        size_t got = fread(buf + len, 1, cap - 1 - len, f);
        len += got;
        if (len > max) {
            rc = tusk_error_set(err, TUSK_ELIMIT, "%s: larger than %zu bytes", path, max);
            break;
        }
        if (got == 0) {
            if (ferror(f))
                rc = tusk_error_set(err, TUSK_EIO, "%s: cannot read: %s", path, strerror(errno));
            break;
        }
    }
    fclose(f);
    if (rc != TUSK_OK) {
        free(buf);
        return rc;
    }
    if (!buf && !(buf = malloc(1)))
        return tusk_error_set(err, TUSK_ENOMEM, "%s: out of memory", path);
    buf[len] = '\0';
    *data = buf;
    *size = len;
    return TUSK_OK;
}
