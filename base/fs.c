/* fs.c - folders, and files written into them (see fs.h). */
#include "base/fs.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

static int one(const char *path, mode_t mode, tusk_error_t *err)
{
    if (mkdir(path, mode) == 0)
        return TUSK_OK;
    int e = errno;
    struct stat st;
    if (e == EEXIST && stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return TUSK_OK;
    return tusk_error_set(err, TUSK_EIO, "cannot make the folder %s: %s", path,
                          e == EEXIST ? "a file of that name is in the way" : strerror(e));
}

int tusk_mkdir_p(const char *dir, tusk_error_t *err)
{
    return tusk_mkdir_p_mode(dir, 0777, err);
}

int tusk_mkdir_p_mode(const char *dir, mode_t mode, tusk_error_t *err)
{
    char path[4096];
    size_t n = dir ? strlen(dir) : 0;
    if (n == 0 || n >= sizeof path)
        return tusk_error_set(err, TUSK_EINVAL, "folder name '%s': empty or longer than %zu characters",
                              dir ? dir : "", sizeof path - 1);
    memcpy(path, dir, n + 1);
    for (size_t i = 1; i < n; i++)
        if (path[i] == '/' && path[i - 1] != '/') {
            path[i] = '\0';
            int st = one(path, mode, err);
            path[i] = '/';
            if (st != TUSK_OK)
                return st;
        }
    return one(path, mode, err);
}

int tusk_file_create(const char *dir, const char *name, FILE **fp, char *path, size_t cap, tusk_error_t *err)
{
    snprintf(path, cap, "%s/%s", dir, name);
    if (!(*fp = fopen(path, "w")))
        return tusk_error_set(err, TUSK_EIO, "%s: %s", path, strerror(errno));
    return TUSK_OK;
}

int tusk_file_close(FILE *fp, const char *path, tusk_error_t *err)
{
    if (fclose(fp) != 0)
        return tusk_error_set(err, TUSK_EIO, "%s: cannot write", path);
    return TUSK_OK;
}
