/* fuzz_file.c - fuzz target: the file reader's sliding window.
 *
 * The input is written to a temporary file (one per process: created with
 * mkstemp under $TMPDIR or /tmp on first use, removed at exit; a process
 * killed by a crash leaves it behind as tusk-fuzz-file-XXXXXX). Then, with
 * both error policies and a small read window of 40 + data[0] % 64 bytes:
 *
 *  1. adf_file_reader with max_frame = ADF_FRAME_MAX, the limit of
 *     adf_reader (which bounds frames by the data alone and reports an
 *     overlong one as truncated), must return exactly what adf_reader
 *     returns on the same bytes in memory: the same codes, frame offsets,
 *     keys, payload bytes, error offsets and messages, and the same
 *     statistics at the end.
 *  2. adf_file_reader with a small max_frame (64 to 4096, from data[1]):
 *     every frame is no longer than max_frame and its payload equals the
 *     input's bytes at its offset; errors have an offset and a message;
 *     with RESYNC frame bytes plus skipped bytes add up to the size, with
 *     STOP the error repeats and the frames before it are exactly
 *     adf_reader's.
 * In both, the window stays within max_frame + 20 bytes and grows only with
 * data read: at most max(window, 2 x the file's size).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_targets.h"
#include "tusk/adf.h"

/* The temporary file, created on first use (libFuzzer runs one input at a
 * time in a process, so one file per process is enough). */
static char *tmp_path;
static int tmp_fd = -1;

static void tmp_remove(void)
{
    if (tmp_fd >= 0)
        close(tmp_fd);
    if (tmp_path)
        unlink(tmp_path);
    free(tmp_path);
    tmp_path = NULL;
    tmp_fd = -1;
}

/* Replace the temporary file's content with data[0 .. size). */
static void tmp_write(const uint8_t *data, size_t size)
{
    if (!tmp_path) {
        const char *dir = getenv("TMPDIR");
        if (!dir || !*dir)
            dir = "/tmp";
        static const char name[] = "/tusk-fuzz-file-XXXXXX";
        size_t len = strlen(dir) + sizeof name;
        tmp_path = malloc(len);
        FUZZ_CHECK(tmp_path != NULL);
        memcpy(tmp_path, dir, strlen(dir));
        memcpy(tmp_path + strlen(dir), name, sizeof name);
        tmp_fd = mkstemp(tmp_path);
        if (tmp_fd < 0) {
            fprintf(stderr, "fuzz_file: cannot create %s: %s\n", tmp_path, strerror(errno));
            abort();
        }
        atexit(tmp_remove);
    }
    /* Overwrite, then cut to size: truncating to 0 first would make some
     * file systems (ext4's auto_da_alloc) flush the file on every close. */
    size_t done = 0;
    while (done < size) {
        ssize_t n = pwrite(tmp_fd, data + done, size - done, (off_t)done);
        if (n < 0 && errno == EINTR)
            continue;
        FUZZ_CHECK(n > 0);
        done += (size_t)n;
    }
    FUZZ_CHECK(ftruncate(tmp_fd, (off_t)size) == 0);
}

/* The read window is bounded by max_frame and by the data that arrived. */
static void check_window(const adf_file_reader_t *fr, size_t window, size_t max_frame, size_t size)
{
    uint64_t max_cap = (uint64_t)max_frame + ADF_KEY_SIZE;
    uint64_t first = window < max_cap ? window : max_cap;
    uint64_t grown = 2 * (uint64_t)size < max_cap ? 2 * (uint64_t)size : max_cap;
    uint64_t ws = adf_file_reader_window_size(fr);
    if (ws > first && ws > grown)
        fprintf(stderr, "fuzz_file: window of %llu bytes for a %zu-byte file (window %zu, max_frame %zu)\n",
                (unsigned long long)ws, size, window, max_frame);
    FUZZ_CHECK(ws <= first || ws <= grown);
}

static void check_error(const adf_error_t *e, int rc, size_t size)
{
    FUZZ_CHECK(rc == ADF_ETRUNC || rc == ADF_EBADKEY);
    FUZZ_CHECK(e->code == rc);
    FUZZ_CHECK(e->offset < size);
    FUZZ_CHECK(memchr(e->message, '\0', sizeof e->message) != NULL);
    FUZZ_CHECK(e->message[0] != '\0');
}

static adf_file_reader_t *open_file(adf_on_error_t policy, size_t window, size_t max_frame)
{
    adf_file_options_t opt = {.on_error = policy, .window = window, .max_frame = max_frame};
    adf_error_t err;
    adf_file_reader_t *fr = adf_file_reader_open(tmp_path, &opt, &err);
    if (!fr) {
        fprintf(stderr, "fuzz_file: %s\n", err.message);
        FUZZ_CHECK(fr != NULL);
    }
    FUZZ_CHECK(strcmp(adf_file_reader_path(fr), tmp_path) == 0);
    return fr;
}

/* Pass 1: the file reader, with the buffer reader's (absent) limit, against
 * the buffer reader, in lockstep. */
static void compare_readers(const uint8_t *copy, size_t size, adf_on_error_t policy, size_t window)
{
    size_t max_frame = ADF_FRAME_MAX;
    adf_file_reader_t *fr = open_file(policy, window, max_frame);
    adf_reader_t *br = adf_reader_new(policy);
    FUZZ_CHECK(br != NULL);
    adf_reader_reset(br, copy, size, 0);
    uint64_t calls = 0;
    int repeats = 0;
    while (true) {
        FUZZ_CHECK(calls <= (uint64_t)size + 2);
        calls++;
        adf_frame_t a, b;
        int rb = adf_reader_next(br, &b);
        int rf = adf_file_reader_next(fr, &a);
        if (rf != rb)
            fprintf(stderr, "fuzz_file: file reader returned %d, buffer reader %d (call %llu)\n", rf, rb,
                    (unsigned long long)calls);
        FUZZ_CHECK(rf == rb);
        check_window(fr, window, max_frame, size);
        if (rb == ADF_END)
            break;
        if (rb == ADF_OK) {
            FUZZ_CHECK(a.offset == b.offset);
            FUZZ_CHECK(a.key.length == b.key.length && a.key.type == b.key.type && a.key.event == b.key.event &&
                       a.key.timestamp == b.key.timestamp);
            FUZZ_CHECK(a.payload_size == b.payload_size);
            FUZZ_CHECK(a.payload_size == 0 || memcmp(a.payload, b.payload, a.payload_size) == 0);
            continue;
        }
        const adf_error_t *ef = adf_file_reader_error(fr), *eb = adf_reader_error(br);
        check_error(eb, rb, size);
        FUZZ_CHECK(ef->code == eb->code && ef->offset == eb->offset);
        if (strcmp(ef->message, eb->message) != 0)
            fprintf(stderr, "fuzz_file: messages differ:\n  file:   %s\n  buffer: %s\n", ef->message, eb->message);
        FUZZ_CHECK(strcmp(ef->message, eb->message) == 0);
        if (policy == ADF_ON_ERROR_STOP && ++repeats == 2)
            break; /* the error repeated once: that is all STOP does */
    }
    adf_reader_stats_t sf = adf_file_reader_stats(fr), sb = adf_reader_stats(br);
    FUZZ_CHECK(sf.frames == sb.frames && sf.errors == sb.errors && sf.bytes_skipped == sb.bytes_skipped);
    adf_file_reader_destroy(&fr);
    FUZZ_CHECK(fr == NULL);
    adf_reader_destroy(&br);
}

/* Pass 2: a small max_frame (often below the input size); invariants, plus, for
 * STOP, the frames before the first error against the buffer reader. */
static void small_max_frame(const uint8_t *copy, size_t size, adf_on_error_t policy, size_t window,
                            size_t max_frame)
{
    adf_file_reader_t *fr = open_file(policy, window, max_frame);
    adf_reader_t *br = adf_reader_new(ADF_ON_ERROR_STOP);
    FUZZ_CHECK(br != NULL);
    adf_reader_reset(br, copy, size, 0);
    bool follow = policy == ADF_ON_ERROR_STOP; /* compare with br */
    uint64_t calls = 0, frames = 0, errors = 0, frame_bytes = 0, end = 0;
    int rc;
    adf_frame_t a, b;
    while (true) {
        FUZZ_CHECK(calls <= (uint64_t)size + 2);
        calls++;
        rc = adf_file_reader_next(fr, &a);
        check_window(fr, window, max_frame, size);
        int rb = follow ? adf_reader_next(br, &b) : ADF_END;
        if (rc == ADF_END) {
            FUZZ_CHECK(!follow || rb == ADF_END);
            break;
        }
        if (rc < 0) {
            const adf_error_t *e = adf_file_reader_error(fr);
            check_error(e, rc, size);
            errors++;
            if (follow) {
                /* The buffer reader, with a larger limit, meets the same
                 * frame: it too fails there, or accepts a frame that is
                 * over this reader's limit. */
                if (rb == ADF_OK)
                    FUZZ_CHECK(b.offset == e->offset && b.key.length > max_frame);
                else
                    FUZZ_CHECK(rb < 0 && adf_reader_error(br)->offset == e->offset);
                adf_error_t first = *e;
                FUZZ_CHECK(adf_file_reader_next(fr, &a) == rc);
                e = adf_file_reader_error(fr);
                FUZZ_CHECK(e->code == first.code && e->offset == first.offset &&
                           strcmp(e->message, first.message) == 0);
                break;
            }
            continue;
        }
        FUZZ_CHECK(rc == ADF_OK);
        FUZZ_CHECK(a.key.length >= ADF_KEY_SIZE && a.key.length <= max_frame);
        FUZZ_CHECK(a.payload_size == a.key.length - ADF_KEY_SIZE);
        FUZZ_CHECK(a.offset >= end && a.offset <= size && a.key.length <= size - a.offset);
        FUZZ_CHECK(a.payload_size == 0 || memcmp(a.payload, copy + a.offset + ADF_KEY_SIZE, a.payload_size) == 0);
        adf_key_t k;
        adf_error_t kerr;
        FUZZ_CHECK(adf_key_decode(copy + a.offset, ADF_KEY_SIZE, &k, &kerr) == ADF_OK);
        FUZZ_CHECK(k.length == a.key.length && k.type == a.key.type && k.event == a.key.event &&
                   k.timestamp == a.key.timestamp);
        if (follow)
            FUZZ_CHECK(rb == ADF_OK && b.offset == a.offset && b.key.length == a.key.length);
        end = a.offset + a.key.length;
        frames++;
        frame_bytes += a.key.length;
    }
    adf_reader_stats_t st = adf_file_reader_stats(fr);
    FUZZ_CHECK(st.frames == frames && st.errors == errors);
    if (policy == ADF_ON_ERROR_RESYNC) {
        FUZZ_CHECK(frame_bytes + st.bytes_skipped == size);
        FUZZ_CHECK(adf_file_reader_next(fr, &a) == ADF_END);
    } else {
        FUZZ_CHECK(st.bytes_skipped == 0);
        FUZZ_CHECK(errors > 0 || frame_bytes == size);
    }
    adf_file_reader_destroy(&fr);
    adf_reader_destroy(&br);
}

int fuzz_file_one(const uint8_t *data, size_t size)
{
    uint8_t *copy = malloc(size);
    if (!copy && size)
        return 0;
    if (size)
        memcpy(copy, data, size);
    tmp_write(copy, size);
    size_t window = 40u + (size ? data[0] % 64u : 0u);
    size_t max_frame = 64u * (1u + (size > 1 ? data[1] % 64u : 0u)); /* 64 .. 4096 */
    compare_readers(copy, size, ADF_ON_ERROR_STOP, window);
    compare_readers(copy, size, ADF_ON_ERROR_RESYNC, window);
    small_max_frame(copy, size, ADF_ON_ERROR_STOP, window, max_frame);
    small_max_frame(copy, size, ADF_ON_ERROR_RESYNC, window, max_frame);
    free(copy);
    return 0;
}

#ifdef FUZZ_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_file_one(data, size);
}
#endif
