/* testutil.h - helpers shared by the Check test programs.
 *
 * Random inputs are fresh on every run (seeded from the clock) and
 * reproducible: the seed is printed, and TUSK_TEST_SEED=N replays it. */
#ifndef TUSK_TESTUTIL_H
#define TUSK_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>

#include <check.h>

#include "tusk/adf.h"

/* Seed the generator (once per process) and return the seed. */
uint64_t tu_seed(void);
uint64_t tu_rand(void);
/* Uniform in [0, n) (n > 0). */
uint32_t tu_below(uint32_t n);
double tu_uniform(void);
void tu_fill(void *p, size_t n);
/* A float with random bits: any value, NaNs and infinities included. */
float tu_any_float(void);

/* Encode a frame directly (key + payload) at buf, independent of the
 * writer; returns the frame length. */
size_t tu_put_frame(uint8_t *buf, uint32_t type, uint32_t event, uint64_t ts, const void *payload,
                    size_t payload_size);

/* Fill buf with n valid frames of random types (simple and composite) and
 * sizes up to max_payload; record each frame's offset and key. Returns the
 * bytes used (cap must be at least n * (max_payload + 20 * 4)). */
size_t tu_make_frames(uint8_t *buf, size_t cap, unsigned n, size_t max_payload, size_t *offsets,
                      adf_key_t *keys);

/* A path for a temporary file (mkstemp in $TMPDIR or /tmp); caller frees
 * and unlinks. */
char *tu_temp_path(void);

/* A temporary folder (mkdtemp in $TMPDIR or /tmp) into dir, and its
 * removal with the files in it (no subfolders). */
void tu_make_dir(char *dir, size_t size);
void tu_remove_dir(const char *dir);

/* The source tree: `make check` exports abs_top_srcdir / top_srcdir;
 * otherwise the parent folder (a build folder) or the current one - the
 * first that holds the file `probe` (relative to it). Aborts the test
 * when none does. */
const char *tu_source_dir(const char *probe);

/* Run a suite and return the process exit status (0 when all passed). */
int tu_run(Suite *s);

/* Check's ck_assert_* record every passing assertion, which makes loops of
 * millions of them slow (minutes under valgrind). In hot loops use this:
 * it costs nothing unless it fails. */
#define tu_check(cond)                                                                           \
    do {                                                                                         \
        if (!(cond))                                                                             \
            ck_abort_msg("%s:%d: failed: %s", __FILE__, __LINE__, #cond);                        \
    } while (0)

/* Assert an error report (adf_error_t or tusk_error_t): its code, and a
 * non-empty message containing `needle`. */
#define tu_assert_error(err, expect_code, needle)                                                   \
    tu_assert_error_at((err)->code, (err)->message, (expect_code), (needle), __FILE__, __LINE__)
void tu_assert_error_at(int code, const char *message, int expect_code, const char *needle, const char *file,
                        int line);

#endif
