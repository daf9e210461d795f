/* cl_cache.c - the program-binary cache.
 *
 * A cache file DIR/cl-HASH.bin holds (little-endian, decoded byte by byte):
 *   "TUSKCLB1"                      8 bytes, magic and format version
 *   u32 key length,    key text     device, platform, driver, options
 *   u64 source length, source text  the whole program source
 *   u64 binary length, binary       what clGetProgramInfo(BINARIES) gave
 *   u64 FNV-1a of all bytes before  catches truncated or damaged files
 * HASH only spreads files; a binary is used only when the stored key and
 * source equal the current ones byte for byte, so a changed source,
 * option or driver never gets a stale binary. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/bytes.h"
#include "cl_private.h"
#include "base/fs.h"
#include "base/textfile.h"

static const char magic[8] = {'T', 'U', 'S', 'K', 'C', 'L', 'B', '1'};

/* The file is read whole; refuse absurd sizes (a program binary is MBs). */
#define CACHE_FILE_MAX ((size_t)1 << 30)


#define KEY_FORMAT                                                                                 \
    "tusk-cl-cache 1\nplatform=%s\nplatform_version=%s\ndevice=%s\nvendor=%s\ndriver=%s\n"              \
    "device_version=%s\nc_version=%s\naddress_bits=%u\noptions=%s\n"
#define KEY_ARGS(i, o)                                                                             \
    (i)->platform_name, (i)->platform_version, (i)->name, (i)->vendor, (i)->driver_version, (i)->version, \
        (i)->c_version, (i)->address_bits, (o)

char *tusk_cl_cache_key(const tusk_cl_device_info_t *info, const char *options)
{
    int n = snprintf(NULL, 0, KEY_FORMAT, KEY_ARGS(info, options));
    if (n < 0)
        return NULL;
    char *key = malloc((size_t)n + 1);
    if (key)
        snprintf(key, (size_t)n + 1, KEY_FORMAT, KEY_ARGS(info, options));
    return key;
}

char *tusk_cl_cache_path(const char *dir, const char *key, const char *source, size_t size)
{
    uint64_t h = tusk_fnv1a(TUSK_FNV1A_SEED, key, strlen(key));
    h = tusk_fnv1a(h, source, size);
    size_t n = strlen(dir) + 32;
    char *path = malloc(n);
    if (path)
        snprintf(path, n, "%s/cl-%016llx.bin", dir, (unsigned long long)h);
    return path;
}


/* One length-prefixed field at *at: a `width`-byte length, then that many
 * bytes; false when either runs past n. */
static bool take_field(const unsigned char *data, size_t n, size_t *at, int width, const unsigned char **field,
                       uint64_t *len)
{
    if (n - *at < (size_t)width)
        return false;
    *len = width == 4 ? tusk_get_u32(data + *at) : tusk_get_u64(data + *at);
    *at += (size_t)width;
    if (*len > n - *at)
        return false;
    *field = data + *at;
    *at += (size_t)*len;
    return true;
}

int tusk_cl_cache_parse(const unsigned char *data, size_t n, const char *key, const char *source, size_t size,
                        const unsigned char **binary, size_t *binary_size)
{
    const unsigned char *k, *s, *b;
    uint64_t klen, slen, blen;
    size_t at = sizeof magic;
    if (n < sizeof magic || memcmp(data, magic, sizeof magic) != 0 || !take_field(data, n, &at, 4, &k, &klen) ||
        !take_field(data, n, &at, 8, &s, &slen) || !take_field(data, n, &at, 8, &b, &blen) || blen == 0 ||
        n - at != 8 || tusk_get_u64(data + at) != tusk_fnv1a(TUSK_FNV1A_SEED, data, at))
        return -1;
    if (klen != strlen(key) || memcmp(k, key, (size_t)klen) != 0 || slen != size || memcmp(s, source, size) != 0)
        return -1;
    *binary = b;
    *binary_size = (size_t)blen;
    return 1;
}

int tusk_cl_cache_load(const char *path, const char *key, const char *source, size_t size, unsigned char **binary,
                       size_t *binary_size)
{
    *binary = NULL;
    *binary_size = 0;
    char *data = NULL;
    size_t n = 0;
    int st = tusk_file_read(path, CACHE_FILE_MAX, &data, &n, NULL);
    if (st != TUSK_OK)
        return st == TUSK_EIO && errno == ENOENT ? 0 : -1;
    int rc = -1;
    const unsigned char *b;
    size_t bn;
    if (n > 0 && tusk_cl_cache_parse((const unsigned char *)data, n, key, source, size, &b, &bn) == 1 &&
        (*binary = malloc(bn))) {
        memcpy(*binary, b, bn);
        *binary_size = bn;
        rc = 1;
    }
    free(data);
    return rc;
}

unsigned char *tusk_cl_cache_encode(const char *key, const char *source, size_t size, const unsigned char *binary,
                                    size_t binary_size, size_t *total_size)
{
    size_t klen = strlen(key);
    if (klen > UINT32_MAX || binary_size == 0 || size > CACHE_FILE_MAX || binary_size > CACHE_FILE_MAX ||
        klen > CACHE_FILE_MAX)
        return NULL;
    size_t total = sizeof magic + 4 + klen + 8 + size + 8 + binary_size + 8;
    if (total > CACHE_FILE_MAX)
        return NULL;
    unsigned char *data = malloc(total);
    if (!data)
        return NULL;
    size_t at = 0;
    memcpy(data, magic, sizeof magic);
    at += sizeof magic;
    tusk_put_u32(data + at, (uint32_t)klen);
    at += 4;
    memcpy(data + at, key, klen);
    at += klen;
    tusk_put_u64(data + at, size);
    at += 8;
    memcpy(data + at, source, size);
    at += size;
    tusk_put_u64(data + at, binary_size);
    at += 8;
    memcpy(data + at, binary, binary_size);
    at += binary_size;
    tusk_put_u64(data + at, tusk_fnv1a(TUSK_FNV1A_SEED, data, at));
    *total_size = total;
    return data;
}

bool tusk_cl_cache_store(const char *dir, const char *path, const char *key, const char *source, size_t size,
                         const unsigned char *binary, size_t binary_size)
{
    size_t total = 0;
    unsigned char *data = tusk_cl_cache_encode(key, source, size, binary, binary_size, &total);
    if (!data)
        return false;

    /* Write a temporary file and rename it: instances building the same
     * program at once each see a whole file or none. */
    size_t tn = strlen(dir) + 16;
    char *tmp = malloc(tn);
    bool ok = false;
    if (tmp) {
        snprintf(tmp, tn, "%s/.cl-XXXXXX", dir);
        int fd = mkstemp(tmp);
        if (fd >= 0) {
            size_t done = 0;
            while (done < total) {
                ssize_t w = write(fd, data + done, total - done);
                if (w < 0 && errno == EINTR)
                    continue;
                if (w <= 0)
                    break;
                done += (size_t)w;
            }
            ok = close(fd) == 0 && done == total && rename(tmp, path) == 0;
            if (!ok)
                unlink(tmp);
        }
        free(tmp);
    }
    free(data);
    return ok;
}

/* mkdir -p with mode 0700 (the cache is per user), and writable. */
static bool make_dirs(const char *path)
{
    return tusk_mkdir_p_mode(path, 0700, NULL) == TUSK_OK && access(path, W_OK | X_OK) == 0;
}

char *tusk_cl_cache_resolve_dir(const char *configured)
{
    char *dir = NULL;
    const char *env;
    if (configured && *configured)
        dir = strdup(configured);
    else if ((env = getenv("TUSK_CL_CACHE_DIR")) && *env)
        dir = strdup(env);
    else {
        const char *base = getenv("XDG_CACHE_HOME");
        const char *sub = "/tusk";
        if (!base || base[0] != '/') { /* XDG: a relative value is to be ignored */
            base = getenv("HOME");
            sub = "/.cache/tusk";
        }
        if (!base || !*base)
            return NULL;
        size_t n = strlen(base) + strlen(sub) + 1;
        if ((dir = malloc(n)))
            snprintf(dir, n, "%s%s", base, sub);
    }
    if (dir && !make_dirs(dir)) {
        free(dir);
        dir = NULL;
    }
    return dir;
}
