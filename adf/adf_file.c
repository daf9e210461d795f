/* adf_file.c - stream frames from and to files.
 *
 * The reader keeps a window of the file in memory and runs the scanner
 * over it. When the scanner needs bytes past the window, the consumed part
 * is dropped, the window grows if one frame needs it (never beyond
 * max_frame + one key) and more of the file is read. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "adf_private.h"

struct adf_file_reader {
    char *path;
    int fd;
    uint8_t *buf;
    size_t cap;          /* allocated window */
    size_t max_cap;      /* the window never grows beyond this */
    size_t len;          /* bytes of the file in buf */
    uint64_t win_offset; /* file offset of buf[0] */
    bool eof;
    adf_scan_t scan;
};

static char *dup_string(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

adf_file_reader_t *adf_file_reader_open(const char *path, const adf_file_options_t *options,
                                        adf_error_t *err)
{
    adf_file_options_t opt = {ADF_ON_ERROR_STOP, 0, 0};
    if (options)
        opt = *options;
    if (opt.max_frame == 0)
        opt.max_frame = ADF_FILE_DEFAULT_MAX_FRAME;
    if (opt.window == 0)
        opt.window = ADF_FILE_DEFAULT_WINDOW;
    if (opt.max_frame < ADF_KEY_SIZE || opt.max_frame > ADF_FRAME_MAX) {
        adf_error_set(err, ADF_EINVAL, ADF_NO_OFFSET, "%s: max_frame %zu outside [%u, %u]", path,
                      opt.max_frame, ADF_KEY_SIZE, (unsigned)ADF_FRAME_MAX);
        return NULL;
    }
    /* The window holds a frame plus one key: keep that sum inside size_t
     * (it matters only where size_t has 32 bits). */
    if (opt.max_frame > SIZE_MAX - ADF_KEY_SIZE)
        opt.max_frame = SIZE_MAX - ADF_KEY_SIZE;
    if (opt.window < 2 * ADF_KEY_SIZE)
        opt.window = 2 * ADF_KEY_SIZE;

    adf_file_reader_t *r = calloc(1, sizeof *r);
    if (!r) {
        adf_error_set(err, ADF_ENOMEM, ADF_NO_OFFSET, "%s: out of memory", path);
        return NULL;
    }
    r->fd = -1;
    r->path = dup_string(path);
    r->max_cap = opt.max_frame + ADF_KEY_SIZE;
    r->cap = opt.window < r->max_cap ? opt.window : r->max_cap;
    r->buf = malloc(r->cap);
    if (!r->path || !r->buf) {
        adf_error_set(err, ADF_ENOMEM, ADF_NO_OFFSET, "%s: cannot allocate a %zu-byte read window", path,
                      r->cap);
        adf_file_reader_destroy(&r);
        return NULL;
    }
    if (strcmp(path, "-") == 0) {
        r->fd = STDIN_FILENO;
    } else {
        r->fd = open(path, O_RDONLY | O_CLOEXEC);
        if (r->fd < 0) {
            adf_error_set(err, ADF_EIO, ADF_NO_OFFSET, "%s: cannot open: %s", path, strerror(errno));
            adf_file_reader_destroy(&r);
            return NULL;
        }
    }
    adf_scan_init(&r->scan, opt.on_error, opt.max_frame);
    return r;
}

void adf_file_reader_destroy(adf_file_reader_t **reader)
{
    if (!reader || !*reader)
        return;
    adf_file_reader_t *r = *reader;
    if (r->fd > STDIN_FILENO)
        close(r->fd);
    free(r->buf);
    free(r->path);
    free(r);
    *reader = NULL;
}

/* Read until at least `need` bytes are in the window or the file ends.
 * The window doubles only while data keeps arriving, so a corrupt length
 * claiming a huge frame near the end of a file costs no memory. */
static int fill(adf_file_reader_t *r, size_t need)
{
    while (r->len < need && !r->eof) {
        if (r->len == r->cap) {
            /* need <= max_cap (the scanner bounds frames by max_frame). */
            size_t cap = r->cap * 2 < r->max_cap ? r->cap * 2 : r->max_cap;
            uint8_t *nb = realloc(r->buf, cap);
            if (!nb) {
                adf_error_set(&r->scan.error, ADF_ENOMEM, r->win_offset,
                              "%s: cannot grow the read window to %zu bytes for the frame at offset %llu",
                              r->path, cap, (unsigned long long)r->win_offset);
                return ADF_ENOMEM;
            }
            r->buf = nb;
            r->cap = cap;
        }
        ssize_t n = read(r->fd, r->buf + r->len, r->cap - r->len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            uint64_t at = r->win_offset + r->len;
            adf_error_set(&r->scan.error, ADF_EIO, at, "%s: read failed at offset %llu: %s", r->path,
                          (unsigned long long)at, strerror(errno));
            r->scan.stats.errors++;
            return ADF_EIO;
        }
        if (n == 0)
            r->eof = true;
        r->len += (size_t)n;
    }
    return ADF_OK;
}

int adf_file_reader_next(adf_file_reader_t *r, adf_frame_t *frame)
{
    if (r->scan.error.code == ADF_EIO)
        return ADF_EIO;
    while (true) {
        int rc = adf_scan_next(&r->scan, r->buf, r->len, r->eof, r->win_offset, frame);
        if (rc != ADF_SCAN_MORE)
            return rc;
        /* Drop what was consumed, so scan.pos becomes 0, then read on. */
        if (r->scan.pos) {
            size_t keep = r->len - r->scan.pos;
            memmove(r->buf, r->buf + r->scan.pos, keep);
            r->win_offset += r->scan.pos;
            r->len = keep;
            r->scan.pos = 0;
        }
        rc = fill(r, r->scan.need);
        if (rc != ADF_OK)
            return rc;
    }
}

const adf_error_t *adf_file_reader_error(const adf_file_reader_t *r)
{
    return &r->scan.error;
}

adf_reader_stats_t adf_file_reader_stats(const adf_file_reader_t *r)
{
    return r->scan.stats;
}

const char *adf_file_reader_path(const adf_file_reader_t *r)
{
    return r->path;
}

size_t adf_file_reader_window_size(const adf_file_reader_t *r)
{
    return r->cap;
}

struct adf_file_writer {
    char *path;
    FILE *fp;
    bool is_stdout;
    uint64_t bytes;
};

adf_file_writer_t *adf_file_writer_open(const char *path, adf_error_t *err)
{
    adf_file_writer_t *w = calloc(1, sizeof *w);
    if (!w || !(w->path = dup_string(path))) {
        free(w);
        adf_error_set(err, ADF_ENOMEM, ADF_NO_OFFSET, "%s: out of memory", path);
        return NULL;
    }
    if (strcmp(path, "-") == 0) {
        w->fp = stdout;
        w->is_stdout = true;
    } else {
        w->fp = fopen(path, "wbe");
        if (!w->fp) {
            adf_error_set(err, ADF_EIO, ADF_NO_OFFSET, "%s: cannot create: %s", path, strerror(errno));
            free(w->path);
            free(w);
            return NULL;
        }
    }
    return w;
}

int adf_file_writer_write(adf_file_writer_t *w, const void *data, size_t size, adf_error_t *err)
{
    if (size && fwrite(data, 1, size, w->fp) != size)
        return adf_error_set(err, ADF_EIO, w->bytes, "%s: write failed at offset %llu: %s", w->path,
                             (unsigned long long)w->bytes, strerror(errno));
    w->bytes += size;
    return ADF_OK;
}

int adf_file_writer_close(adf_file_writer_t **writer, adf_error_t *err)
{
    if (!writer || !*writer)
        return ADF_OK;
    adf_file_writer_t *w = *writer;
    int rc = ADF_OK;
    if (fflush(w->fp) != 0 || ferror(w->fp))
        rc = adf_error_set(err, ADF_EIO, w->bytes, "%s: write failed: %s", w->path, strerror(errno));
    if (!w->is_stdout && fclose(w->fp) != 0 && rc == ADF_OK)
        rc = adf_error_set(err, ADF_EIO, w->bytes, "%s: close failed: %s", w->path, strerror(errno));
    free(w->path);
    free(w);
    *writer = NULL;
    return rc;
}

uint64_t adf_file_writer_bytes(const adf_file_writer_t *w)
{
    return w->bytes;
}
