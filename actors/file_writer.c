/* file_writer.c - consumer: writes every incoming buffer to a file.
 *
 * Parameters:
 *   file      the output file (required). "{instance}" in it becomes the
 *             instance number; with several instances it is required, as
 *             they would otherwise overwrite each other's file. "-" is
 *             standard output.
 *   validate  true | false (false): check that each buffer holds whole,
 *             well-formed ADF frames before writing it (TUSK_ACTOR_EDATA
 *             otherwise, and the buffer is not written)
 *   data_dir  a folder: `file` is then a path relative to it, without ".."
 *             parts, and every folder on the way below it is taken as it
 *             is, not through a symbolic link (default: none: `file` as
 *             given, relative to the working directory)
 *   follow_symlinks  true | false (false): whether a symbolic link may
 *             stand where the file (or, with data_dir, a folder below it)
 *             is to be
 *
 * Path policy: a symbolic link as the file itself is refused unless
 * follow_symlinks is true: one planted in a shared folder (/tmp) would
 * make the writer overwrite whatever it points to. With data_dir the file
 * cannot leave that folder at all. (The folders above the file, or above
 * data_dir, are followed as the system resolves them.)
 *
 * The file is created (or truncated) at process_start and closed at
 * process_stop; every failed open, write or close is TUSK_ACTOR_EIO with
 * the path. The bytes written are exactly the bytes received.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define AK_CONSUMER
#include "tusk/actorkit.h"

TUSK_ACTOR_DECLARE("file_writer", "writes every buffer it receives to a file",
                   "file: the output file; {instance} is replaced by the instance number, required with "
                   "several instances (required)\n"
                   "validate: check that each buffer holds whole ADF frames before writing it (false)\n"
                   "data_dir: the folder `file` is relative to; nothing leaves it, no link is followed below it "
                   "(none)\n"
                   "follow_symlinks: allow a symbolic link where the file (or a folder below data_dir) is (false)\n");

typedef struct writer {
    ak_base_t base;
    char *path;             /* `file`, {instance} replaced */
    char *data_dir;         /* NULL: none */
    char *shown;            /* the path in messages (data_dir/file) */
    bool validate, follow;
    adf_reader_t *reader;   /* when validating */
    int fd;                 /* open between process_start and process_stop (-1: closed) */
    uint64_t buffers, bytes;
} writer_t;

typedef struct settings {
    const char *file;
    bool validate;
    const char *data_dir;
    bool follow;
} settings_t;

static const ak_param_t params[] = {
    AK_REQUIRED("file", settings_t, file, "the output file"),
    AK_BOOL("validate", settings_t, validate, false),
    AK_STRING("data_dir", settings_t, data_dir, ""),
    AK_BOOL("follow_symlinks", settings_t, follow, false),
    AK_PARAMS_END,
};

#define INSTANCE_MARK "{instance}"

AK_STANDARD_HOOKS(writer_t)

static void free_writer(writer_t *w)
{
    if (!w)
        return;
    if (w->fd > STDERR_FILENO)
        close(w->fd);
    adf_reader_destroy(&w->reader);
    free(w->path);
    free(w->data_dir);
    free(w->shown);
    free(w);
}

/* A path below data_dir: relative, no empty, "." or ".." parts. */
static bool stays_below(const char *p)
{
    if (!*p || *p == '/')
        return false;
    for (const char *part = p; *part;) {
        size_t n = strcspn(part, "/");
        if (n == 0 || (n == 1 && part[0] == '.') || (n == 2 && part[0] == '.' && part[1] == '.'))
            return false;
        part += n;
        if (*part == '/')
            part++;
        if (!*part && part[-1] == '/')
            return false; /* ends with '/': no file name */
    }
    return true;
}

/* Why an open failed, in the words of the path policy. */
static const char *why_not(int e, bool follow)
{
    if (!follow && (e == ELOOP || e == ENOTDIR))
        return "a symbolic link is in the way (refused: it may point anywhere; follow_symlinks = true allows it)";
    return strerror(e);
}

/* Open the output as the path policy says (see the top of the file). */
static int open_output(writer_t *w, const char **why)
{
    int nofollow = w->follow ? 0 : O_NOFOLLOW;
    int flags = O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC;
    if (!w->data_dir) {
        int fd = open(w->path, flags | nofollow, 0666);
        if (fd < 0)
            *why = why_not(errno, w->follow);
        return fd;
    }
    int dir = open(w->data_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) {
        *why = strerror(errno);
        return -1;
    }
    /* Down the folders of `file`, each as it is, then the file. */
    char part[4096];
    const char *p = w->path;
    while (true) {
        size_t n = strcspn(p, "/");
        if (n >= sizeof part) {
            close(dir);
            *why = strerror(ENAMETOOLONG);
            return -1;
        }
        memcpy(part, p, n);
        part[n] = '\0';
        if (!p[n]) {
            int fd = openat(dir, part, flags | nofollow, 0666);
            int e = errno;
            close(dir);
            if (fd < 0)
                *why = why_not(e, w->follow);
            return fd;
        }
        int next = openat(dir, part, O_RDONLY | O_DIRECTORY | O_CLOEXEC | nofollow);
        int e = errno;
        close(dir);
        if (next < 0) {
            *why = why_not(e, w->follow);
            return -1;
        }
        dir = next;
        p += n + 1;
    }
}

/* `pattern` with every "{instance}" replaced by `instance`; NULL when out
 * of memory. */
static char *substitute(const char *pattern, unsigned instance)
{
    char num[16];
    int nlen = snprintf(num, sizeof num, "%u", instance);
    size_t mark = strlen(INSTANCE_MARK), count = 0;
    for (const char *s = strstr(pattern, INSTANCE_MARK); s; s = strstr(s + mark, INSTANCE_MARK))
        count++;
    char *out = malloc(strlen(pattern) + count * (size_t)nlen + 1);
    if (!out)
        return NULL;
    char *o = out;
    const char *s = pattern;
    for (const char *m = strstr(s, INSTANCE_MARK); m; m = strstr(s, INSTANCE_MARK)) {
        memcpy(o, s, (size_t)(m - s));
        o += m - s;
        memcpy(o, num, (size_t)nlen);
        o += nlen;
        s = m + mark;
    }
    strcpy(o, s);
    return out;
}

void *process_register_dir(const char *directory_path, char *message, unsigned int message_size,
                           unsigned int *error_code)
{
    ak_config_t cfg;
    settings_t set;
    writer_t *w = NULL;
    if (!ak_config_open(&cfg, directory_path, "file_writer", params, &set, message, message_size, error_code))
        goto fail;
    w = calloc(1, sizeof *w);
    if (!w) {
        ak_config_fail(&cfg, TUSK_ACTOR_ERESOURCE, "out of memory");
        goto fail;
    }
    const char *file = set.file;
    w->fd = -1;
    w->validate = set.validate;
    w->follow = set.follow;
    if (!ak_config_base(&cfg, &w->base))
        goto fail;
    if (*set.data_dir && !stays_below(file)) {
        ak_config_fail(&cfg, TUSK_ACTOR_ECONFIG,
                       "parameter 'file': '%s' must be a path below data_dir '%s' (relative, without '.' or '..' "
                       "parts)",
                       file, set.data_dir);
        goto fail;
    }
    if (w->base.instances > 1 && !strstr(file, INSTANCE_MARK)) {
        ak_config_fail(&cfg, TUSK_ACTOR_ECONFIG,
                       "parameter 'file': '%s' has no " INSTANCE_MARK " but the actor has %u instances, which "
                       "would overwrite each other's file (put " INSTANCE_MARK " in the name)",
                       file, w->base.instances);
        goto fail;
    }
    w->path = substitute(file, w->base.instance);
    if (w->path && *set.data_dir) {
        w->data_dir = strdup(set.data_dir);
        w->shown = malloc(strlen(set.data_dir) + strlen(w->path) + 2);
        if (w->shown)
            sprintf(w->shown, "%s/%s", set.data_dir, w->path);
    } else if (w->path) {
        w->shown = strdup(w->path);
    }
    if (!w->path || !w->shown || (*set.data_dir && !w->data_dir) ||
        (w->validate && !(w->reader = adf_reader_new(ADF_ON_ERROR_STOP)))) {
        ak_config_fail(&cfg, TUSK_ACTOR_ERESOURCE, "out of memory");
        goto fail;
    }
    ak_config_close(&cfg);
    return w;
fail:
    free_writer(w);
    ak_config_close(&cfg);
    return NULL;
}

void process_initialise(void *algo_data, unsigned int *error_code)
{
    (void)algo_data;
    ak_ok(error_code);
}

void process_start(void *algo_data, unsigned int *error_code)
{
    writer_t *w = algo_data;
    ak_ok(error_code);
    if (w->fd >= 0) {
        ak_fail(&w->base, error_code, TUSK_ACTOR_ESTATE, "%s: process_start while the file is open (no process_stop)",
                w->shown);
        return;
    }
    const char *why = NULL;
    w->fd = strcmp(w->path, "-") == 0 && !w->data_dir ? STDOUT_FILENO : open_output(w, &why);
    if (w->fd < 0)
        ak_fail(&w->base, error_code, TUSK_ACTOR_EIO, "%s: cannot create: %s", w->shown, why);
    w->buffers = 0;
    w->bytes = 0;
}

/* Close the file, reporting a failed close (standard output stays open). */
static void close_file(writer_t *w, unsigned *error_code)
{
    if (w->fd < 0)
        return;
    int fd = w->fd;
    w->fd = -1;
    if (fd != STDOUT_FILENO && close(fd) != 0)
        ak_fail(&w->base, error_code, TUSK_ACTOR_EIO, "%s: write failed: %s", w->shown, strerror(errno));
}

void process_stop(void *algo_data, unsigned int *error_code)
{
    ak_ok(error_code);
    close_file(algo_data, error_code);
}

void process_reset(void *algo_data, unsigned int *error_code)
{
    ak_ok(error_code);
    close_file(algo_data, error_code);
}

void process_unload(void *algo_data, unsigned int *error_code)
{
    ak_ok(error_code);
    free_writer(algo_data);
}

void process_block(void *algo_data, void *input_buffer, unsigned int size_of_input_buffer,
                   unsigned int *error_code)
{
    writer_t *w = algo_data;
    ak_ok(error_code);
    w->buffers++;
    if (w->fd < 0) {
        ak_fail(&w->base, error_code, TUSK_ACTOR_ESTATE, "%s: process_block before process_start: the file is "
                "not open", w->shown);
        return;
    }
    if (!input_buffer)
        size_of_input_buffer = 0;
    if (w->validate) {
        adf_frame_t f;
        int rc;
        adf_reader_reset(w->reader, input_buffer, size_of_input_buffer, 0);
        while ((rc = adf_reader_next(w->reader, &f)) == ADF_OK)
            continue;
        if (rc != ADF_END) {
            ak_fail(&w->base, error_code, TUSK_ACTOR_EDATA,
                    "input buffer %llu (%u bytes) is not whole ADF frames, not written to %s: %s",
                    (unsigned long long)w->buffers, size_of_input_buffer, w->shown,
                    adf_reader_error(w->reader)->message);
            return;
        }
    }
    const char *p = input_buffer;
    size_t left = size_of_input_buffer;
    while (left) {
        ssize_t n = write(w->fd, p, left);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            ak_fail(&w->base, error_code, TUSK_ACTOR_EIO, "%s: write failed at offset %llu: %s", w->shown,
                    (unsigned long long)w->bytes, n < 0 ? strerror(errno) : "nothing written");
            return;
        }
        p += n;
        left -= (size_t)n;
        w->bytes += (uint64_t)n;
    }
}
