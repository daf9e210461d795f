/* check_adf_file.c - ADF files: streaming reads through a small window give
 * exactly what the in-memory reader gives (valid, truncated and corrupted
 * files, both error policies), memory stays bounded on files much larger
 * than the window, and every I/O failure names the file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"
#include "base/bytes.h"

#define MAX_PAYLOAD 1000

static void write_file(const char *path, const void *data, size_t size)
{
    adf_error_t err;
    adf_file_writer_t *w = adf_file_writer_open(path, &err);
    ck_assert_msg(w != NULL, "%s", err.message);
    ck_assert_int_eq(adf_file_writer_write(w, data, size, &err), ADF_OK);
    ck_assert_uint_eq(adf_file_writer_bytes(w), size);
    ck_assert_int_eq(adf_file_writer_close(&w, &err), ADF_OK);
    ck_assert_ptr_null(w);
}

/* One step of a reader's output, for comparing two readers. */
typedef struct step {
    int rc;
    uint64_t offset;
    adf_key_t key;
    const uint8_t *payload;
    uint32_t payload_size;
} step_t;

/* Read `path` through a window of `window` bytes and compare every step
 * with the buffer reader on the same bytes. */
static void compare_with_buffer_reader(const char *path, const uint8_t *data, size_t size, size_t window,
                                       adf_on_error_t policy)
{
    /* No frame limit, as in the buffer reader, so both judge a corrupt
     * length the same way (truncated frame). */
    adf_file_options_t opt = {policy, window, ADF_FRAME_MAX};
    adf_error_t err;
    adf_file_reader_t *fr = adf_file_reader_open(path, &opt, &err);
    ck_assert_msg(fr != NULL, "%s", err.message);
    adf_reader_t *br = adf_reader_new(policy);
    adf_reader_reset(br, data, size, 0);
    for (size_t calls = 0;; calls++) {
        tu_check((calls) <= (size + 2));
        adf_frame_t a, b;
        int ra = adf_file_reader_next(fr, &a);
        int rb = adf_reader_next(br, &b);
        if (ra != rb)
            ck_abort_msg("window %zu step %zu: file reader %d, buffer reader %d (%s / %s)", window, calls, ra, rb,
                         adf_file_reader_error(fr)->message, adf_reader_error(br)->message);
        if (ra == ADF_OK) {
            tu_check((a.offset) == (b.offset));
            tu_check((a.key.length) == (b.key.length));
            tu_check((a.key.type) == (b.key.type));
            tu_check((a.key.event) == (b.key.event));
            tu_check((a.key.timestamp) == (b.key.timestamp));
            tu_check((a.payload_size) == (b.payload_size));
            tu_check((memcmp(a.payload, b.payload, a.payload_size)) == (0));
        } else if (ra < 0) {
            tu_check((adf_file_reader_error(fr)->offset) == (adf_reader_error(br)->offset));
            tu_check(strcmp(adf_file_reader_error(fr)->message, adf_reader_error(br)->message) == 0);
            if (policy == ADF_ON_ERROR_STOP)
                break;
        } else {
            break;
        }
    }
    adf_reader_stats_t sa = adf_file_reader_stats(fr), sb = adf_reader_stats(br);
    tu_check((sa.frames) == (sb.frames));
    tu_check((sa.errors) == (sb.errors));
    tu_check((sa.bytes_skipped) == (sb.bytes_skipped));
    adf_reader_destroy(&br);
    adf_file_reader_destroy(&fr);
}

static const size_t windows[] = {1, 40, 41, 57, 100, 333, 1024, 4096, 0 /* default */};
#define N_WINDOWS (sizeof windows / sizeof windows[0])

START_TEST(stream_equals_buffer_valid)
{
    enum { N = 60 };
    size_t cap = N * (MAX_PAYLOAD * 2 + 100);
    uint8_t *buf = malloc(cap);
    size_t size = tu_make_frames(buf, cap, N, MAX_PAYLOAD, NULL, NULL);
    char *path = tu_temp_path();
    write_file(path, buf, size);
    for (size_t w = 0; w < N_WINDOWS; w++)
        compare_with_buffer_reader(path, buf, size, windows[w], ADF_ON_ERROR_STOP);
    unlink(path);
    free(path);
    free(buf);
}
END_TEST

START_TEST(stream_equals_buffer_corrupted)
{
    enum { N = 30 };
    size_t cap = N * (MAX_PAYLOAD * 2 + 100);
    uint8_t *orig = malloc(cap), *buf = malloc(cap);
    size_t size0 = tu_make_frames(orig, cap, N, MAX_PAYLOAD, NULL, NULL);
    char *path = tu_temp_path();
    for (int trial = 0; trial < 60; trial++) {
        size_t size = size0;
        memcpy(buf, orig, size);
        int edits = 1 + (int)tu_below(5);
        for (int e = 0; e < edits; e++) {
            size_t at = tu_below((uint32_t)size);
            if (tu_below(2))
                buf[at] ^= (uint8_t)(1u << tu_below(8));
            else
                buf[at] = (uint8_t)tu_rand();
        }
        if (tu_below(3) == 0)
            size = tu_below((uint32_t)size);
        write_file(path, buf, size);
        for (size_t w = 0; w < N_WINDOWS; w++) {
            compare_with_buffer_reader(path, buf, size, windows[w], ADF_ON_ERROR_STOP);
            compare_with_buffer_reader(path, buf, size, windows[w], ADF_ON_ERROR_RESYNC);
        }
    }
    unlink(path);
    free(path);
    free(buf);
    free(orig);
}
END_TEST

START_TEST(truncated_file_names_offset)
{
    uint8_t buf[256];
    size_t n = tu_put_frame(buf, ADF_TYPE_DATA_PSA, 1, 2, "0123456789", 10);
    size_t m = tu_put_frame(buf + n, ADF_TYPE_DATA_PSA, 3, 4, "abcdefghij", 10);
    char *path = tu_temp_path();
    write_file(path, buf, n + m - 3);
    adf_error_t err;
    adf_file_reader_t *r = adf_file_reader_open(path, NULL, &err);
    ck_assert_ptr_nonnull(r);
    ck_assert_str_eq(adf_file_reader_path(r), path);
    adf_frame_t f;
    ck_assert_int_eq(adf_file_reader_next(r, &f), ADF_OK);
    ck_assert_int_eq(adf_file_reader_next(r, &f), ADF_ETRUNC);
    const adf_error_t *e = adf_file_reader_error(r);
    ck_assert_uint_eq(e->offset, n);
    ck_assert_msg(strstr(e->message, "offset 30") && strstr(e->message, "only 27 remain"), "%s", e->message);
    adf_file_reader_destroy(&r);
    unlink(path);
    free(path);
}
END_TEST

/* A file 100 times bigger than the window streams with the window unchanged. */
START_TEST(memory_stays_bounded)
{
    enum { FRAME = 1000, FRAMES = 20000 };
    char *path = tu_temp_path();
    adf_error_t err;
    adf_file_writer_t *w = adf_file_writer_open(path, &err);
    uint8_t frame[FRAME];
    uint8_t payload[FRAME - ADF_KEY_SIZE];
    for (int i = 0; i < FRAMES; i++) {
        memset(payload, i & 0xFF, sizeof payload);
        tu_put_frame(frame, ADF_TYPE_DATA_CRYSTAL, (uint32_t)i, (uint64_t)i * 100, payload, sizeof payload);
        tu_check((adf_file_writer_write(w, frame, FRAME, &err)) == (ADF_OK));
    }
    tu_check((adf_file_writer_close(&w, &err)) == (ADF_OK));

    adf_file_options_t opt = {ADF_ON_ERROR_STOP, 4096, 8192};
    adf_file_reader_t *r = adf_file_reader_open(path, &opt, &err);
    ck_assert_ptr_nonnull(r);
    adf_frame_t f;
    int rc, i = 0;
    while ((rc = adf_file_reader_next(r, &f)) == ADF_OK) {
        tu_check((f.key.event) == ((uint32_t)i));
        tu_check((f.offset) == ((uint64_t)i * FRAME));
        tu_check((f.payload[0]) == ((uint8_t)(i & 0xFF)));
        tu_check((f.payload[f.payload_size - 1]) == ((uint8_t)(i & 0xFF)));
        i++;
    }
    tu_check((rc) == (ADF_END));
    tu_check((i) == (FRAMES));
    tu_check((adf_file_reader_window_size(r)) == (4096));
    adf_file_reader_destroy(&r);
    unlink(path);
    free(path);
}
END_TEST

/* A frame bigger than the window grows it (up to max_frame + a key). */
START_TEST(window_grows_for_big_frame)
{
    size_t big = 100000;
    uint8_t *buf = malloc(big + 64);
    uint8_t *payload = malloc(big);
    tu_fill(payload, big);
    size_t n = tu_put_frame(buf, ADF_TYPE_DATA_CRYSTAL, 1, 1, payload, big);
    n += tu_put_frame(buf + n, ADF_TYPE_META_EOF, 2, 2, NULL, 0);
    char *path = tu_temp_path();
    write_file(path, buf, n);
    adf_file_options_t opt = {ADF_ON_ERROR_STOP, 64, 200000};
    adf_error_t err;
    adf_file_reader_t *r = adf_file_reader_open(path, &opt, &err);
    adf_frame_t f;
    ck_assert_int_eq(adf_file_reader_next(r, &f), ADF_OK);
    ck_assert_uint_eq(f.payload_size, big);
    ck_assert_int_eq(memcmp(f.payload, payload, big), 0);
    ck_assert_uint_ge(adf_file_reader_window_size(r), big + ADF_KEY_SIZE);
    ck_assert_uint_le(adf_file_reader_window_size(r), 200000 + ADF_KEY_SIZE);
    ck_assert_int_eq(adf_file_reader_next(r, &f), ADF_OK);
    ck_assert_uint_eq(f.key.type, ADF_TYPE_META_EOF);
    ck_assert_int_eq(adf_file_reader_next(r, &f), ADF_END);
    adf_file_reader_destroy(&r);

    /* Over max_frame it is a malformed key, not an allocation. */
    opt.max_frame = 50000;
    r = adf_file_reader_open(path, &opt, &err);
    ck_assert_int_eq(adf_file_reader_next(r, &f), ADF_EBADKEY);
    tu_assert_error(adf_file_reader_error(r), ADF_EBADKEY, "exceeds the limit of 50000");
    ck_assert_uint_le(adf_file_reader_window_size(r), 64);
    adf_file_reader_destroy(&r);
    unlink(path);
    free(path);
    free(payload);
    free(buf);
}
END_TEST

START_TEST(missing_file)
{
    adf_error_t err;
    adf_file_reader_t *r = adf_file_reader_open("/nonexistent/dir/run42.adf", NULL, &err);
    ck_assert_ptr_null(r);
    tu_assert_error(&err, ADF_EIO, "/nonexistent/dir/run42.adf: cannot open");
    adf_file_writer_t *w = adf_file_writer_open("/nonexistent/dir/out.adf", &err);
    ck_assert_ptr_null(w);
    tu_assert_error(&err, ADF_EIO, "/nonexistent/dir/out.adf: cannot create");
}
END_TEST

START_TEST(bad_options)
{
    adf_error_t err;
    adf_file_options_t opt = {ADF_ON_ERROR_STOP, 0, 10};
    ck_assert_ptr_null(adf_file_reader_open("/dev/null", &opt, &err));
    tu_assert_error(&err, ADF_EINVAL, "max_frame 10");
    /* An empty file is simply the end. */
    adf_file_reader_t *r = adf_file_reader_open("/dev/null", NULL, &err);
    adf_frame_t f;
    ck_assert_int_eq(adf_file_reader_next(r, &f), ADF_END);
    adf_file_reader_destroy(&r);
}
END_TEST

/* A full disk shows up as an error, at the latest when closing. */
START_TEST(full_disk_is_reported)
{
    if (access("/dev/full", W_OK) != 0)
        return; /* not on this system: nothing to test */
    adf_error_t err;
    adf_file_writer_t *w = adf_file_writer_open("/dev/full", &err);
    ck_assert_ptr_nonnull(w);
    static uint8_t data[1 << 16];
    int rc = ADF_OK;
    for (int i = 0; i < 64 && rc == ADF_OK; i++)
        rc = adf_file_writer_write(w, data, sizeof data, &err);
    if (rc == ADF_OK)
        rc = adf_file_writer_close(&w, &err);
    else
        adf_file_writer_close(&w, NULL);
    ck_assert_int_eq(rc, ADF_EIO);
    tu_assert_error(&err, ADF_EIO, "/dev/full");
    ck_assert_ptr_null(w);
}
END_TEST

/* Reading a directory fails at the first read, with the path. */
START_TEST(read_error_is_reported)
{
    adf_error_t err;
    adf_file_reader_t *r = adf_file_reader_open("/", NULL, &err);
    ck_assert_ptr_nonnull(r);
    adf_frame_t f;
    ck_assert_int_eq(adf_file_reader_next(r, &f), ADF_EIO);
    tu_assert_error(adf_file_reader_error(r), ADF_EIO, "/: read failed");
    ck_assert_int_eq(adf_file_reader_next(r, &f), ADF_EIO);
    adf_file_reader_destroy(&r);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("adf_file");
    TCase *tc = tcase_create("streaming");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, stream_equals_buffer_valid);
    tcase_add_test(tc, stream_equals_buffer_corrupted);
    tcase_add_test(tc, truncated_file_names_offset);
    tcase_add_test(tc, memory_stays_bounded);
    tcase_add_test(tc, window_grows_for_big_frame);
    suite_add_tcase(s, tc);
    tc = tcase_create("errors");
    tcase_add_test(tc, missing_file);
    tcase_add_test(tc, bad_options);
    tcase_add_test(tc, full_disk_is_reported);
    tcase_add_test(tc, read_error_is_reported);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
