/* check_base.c - libtusk-base's small pieces: strict number parsing (every
 * malformed form refused), array growth (capacity, overflow), the clock
 * (monotonic, the three units agree), the gnuplot runner against fake
 * gnuplot programs (success, missing program, failure with the log's line,
 * no picture, stale picture removed) and gnuplot quoting. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/gnuplot.h"
#include "base/grow.h"
#include "base/parse.h"
#include "testutil.h"

START_TEST(parse_whole_numbers)
{
    uint64_t v = 99;
    ck_assert_int_eq(tusk_parse_u64("0", 0, 10, &v), 0);
    ck_assert_uint_eq(v, 0);
    ck_assert_int_eq(tusk_parse_u64("18446744073709551615", 0, UINT64_MAX, &v), 0);
    ck_assert(v == UINT64_MAX);
    static const char *const bad[] = {"", " 7", "7 ", "-1", "+1", "7x", "0x10", "1e3", "18446744073709551616", "abc"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        v = 42;
        ck_assert_msg(tusk_parse_u64(bad[i], 0, UINT64_MAX, &v) == -1, "'%s' taken", bad[i]);
        ck_assert_uint_eq(v, 42);
    }
    ck_assert_int_eq(tusk_parse_u64(NULL, 0, 1, &v), -1);
    ck_assert_int_eq(tusk_parse_u64("11", 0, 10, &v), -1);
    ck_assert_int_eq(tusk_parse_u64("4", 5, 10, &v), -1);
    unsigned u = 0;
    ck_assert_int_eq(tusk_parse_unsigned("4294967295", 0, UINT32_MAX, &u), 0);
    ck_assert_uint_eq(u, 4294967295u);
    ck_assert_int_eq(tusk_parse_unsigned("4294967296", 0, UINT32_MAX, &u), -1);
}
END_TEST

START_TEST(parse_real_numbers)
{
    double d = 0;
    ck_assert_int_eq(tusk_parse_double("-1.5e2", -1e9, 1e9, &d), 0);
    ck_assert(d == -150.0);
    static const char *const bad[] = {"", " 1", "1 ", "nan", "inf", "-inf", "1e999", "1,5", "x", "1.5x"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        d = 7;
        ck_assert_msg(tusk_parse_double(bad[i], -1e300, 1e300, &d) == -1, "'%s' taken", bad[i]);
        ck_assert(d == 7);
    }
    ck_assert_int_eq(tusk_parse_double("2", 0, 1, &d), -1);
}
END_TEST

START_TEST(grow_array)
{
    int *a = NULL;
    size_t cap = 0;
    ck_assert_int_eq(tusk_grow(&a, &cap, 0, sizeof *a), 0);
    ck_assert_ptr_null(a);
    ck_assert_int_eq(tusk_grow(&a, &cap, 1, sizeof *a), 0);
    ck_assert_uint_eq(cap, 16);
    for (int i = 0; i < 1000; i++) {
        ck_assert_int_eq(tusk_grow(&a, &cap, (size_t)i + 1, sizeof *a), 0);
        ck_assert_uint_ge(cap, (size_t)i + 1);
        a[i] = i;
    }
    for (int i = 0; i < 1000; i++)
        ck_assert_int_eq(a[i], i);
    size_t before = cap;
    int *keep = a;
    ck_assert_int_eq(tusk_grow(&a, &cap, SIZE_MAX / 2, sizeof *a), -1);
    ck_assert_uint_eq(cap, before);
    ck_assert_ptr_eq(a, keep);
    ck_assert_int_eq(tusk_grow(&a, &cap, cap + 1, 0), -1);
    free(a);
}
END_TEST

START_TEST(clock_monotonic)
{
    uint64_t a = tusk_clock_ns();
    double s = tusk_clock_s();
    int64_t ms = tusk_clock_ms();
    uint64_t b = tusk_clock_ns();
    ck_assert_uint_ge(b, a);
    ck_assert(s * 1e9 >= (double)a - 1e3 && s * 1e9 <= (double)b + 1e3);
    ck_assert_int_ge(ms, (int64_t)(a / 1000000));
    ck_assert_int_le(ms, (int64_t)(b / 1000000));
}
END_TEST

/* A fake gnuplot: a shell script in the test folder. */
static char *fake(const char *dir, const char *name, const char *body)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *path = malloc(n);
    snprintf(path, n, "%s/%s", dir, name);
    FILE *fp = fopen(path, "w");
    ck_assert_ptr_nonnull(fp);
    fprintf(fp, "#!/bin/sh\n%s\n", body);
    fclose(fp);
    chmod(path, 0755);
    return path;
}

static char *in(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *path = malloc(n);
    snprintf(path, n, "%s/%s", dir, name);
    return path;
}

START_TEST(gnuplot_runner)
{
    char dir[256];
    tu_make_dir(dir, sizeof dir);
    char *script = in(dir, "p.gp"), *png = in(dir, "p.png"), *log = in(dir, "p.log");
    FILE *fp = fopen(script, "w");
    fputs("# nothing\n", fp);
    fclose(fp);
    const char *pictures[] = {png, NULL};
    tusk_error_t err;

    /* Success: runs in DIR on ./p.gp, writes the picture, silent -> no log. */
    char *ok = fake(dir, "ok.sh", "[ \"$1\" = ./p.gp ] && [ -f p.gp ] && echo PNG > p.png");
    setenv("TUSK_GNUPLOT", ok, 1);
    ck_assert_msg(tusk_gnuplot_run(dir, "p.gp", "p.log", pictures, &err) == TUSK_OK, "%s", err.message);
    struct stat st;
    ck_assert_int_eq(stat(png, &st), 0);
    ck_assert_int_ne(stat(log, &st), 0);

    /* Failure: the log's telling line and the script are named; the old
     * picture is gone. */
    char *bad = fake(dir, "bad.sh", "echo first; echo '\"p.gp\" line 3: undefined variable: x' >&2; exit 1");
    setenv("TUSK_GNUPLOT", bad, 1);
    ck_assert_int_eq(tusk_gnuplot_run(dir, "p.gp", "p.log", pictures, &err), TUSK_EIO);
    tu_assert_error(&err, TUSK_EIO, "line 3: undefined variable");
    ck_assert_ptr_nonnull(strstr(err.message, "exit status 1"));
    ck_assert_ptr_nonnull(strstr(err.message, script));
    ck_assert_int_ne(stat(png, &st), 0);

    /* Exit 0 but no picture. */
    char *none = fake(dir, "none.sh", "echo hello");
    setenv("TUSK_GNUPLOT", none, 1);
    ck_assert_int_eq(tusk_gnuplot_run(dir, "p.gp", "p.log", pictures, &err), TUSK_EIO);
    tu_assert_error(&err, TUSK_EIO, "wrote no picture");
    ck_assert_ptr_nonnull(strstr(err.message, "hello"));

    /* Missing program. */
    setenv("TUSK_GNUPLOT", "/nonexistent/gnuplot", 1);
    ck_assert_int_eq(tusk_gnuplot_run(dir, "p.gp", "p.log", pictures, &err), TUSK_EIO);
    tu_assert_error(&err, TUSK_EIO, "gnuplot not found");

    /* Killed by a signal. */
    char *sig = fake(dir, "sig.sh", "kill -9 $$");
    setenv("TUSK_GNUPLOT", sig, 1);
    ck_assert_int_eq(tusk_gnuplot_run(dir, "p.gp", "p.log", pictures, &err), TUSK_EIO);
    tu_assert_error(&err, TUSK_EIO, "signal 9");

    unsetenv("TUSK_GNUPLOT");
    free(ok);
    free(bad);
    free(none);
    free(sig);
    free(script);
    free(png);
    free(log);
    tu_remove_dir(dir);
}
END_TEST

START_TEST(gnuplot_quoting)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    tusk_gnuplot_quote(fp, "it's a\nname");
    fclose(fp);
    ck_assert_str_eq(buf, "'it''s a name'");
    free(buf);
    tusk_error_t err;
    ck_assert_int_eq(tusk_gnuplot_check_path("t", "a/b.png", &err), TUSK_OK);
    ck_assert_int_eq(tusk_gnuplot_check_path("t", "a'b.png", &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "single quote");
    ck_assert_int_eq(tusk_gnuplot_check_path("t", "a\nb.png", &err), TUSK_EINVAL);
    ck_assert_int_eq(tusk_gnuplot_check_path("t", "", &err), TUSK_EINVAL);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("base");
    TCase *tc = tcase_create("base");
    tcase_add_test(tc, parse_whole_numbers);
    tcase_add_test(tc, parse_real_numbers);
    tcase_add_test(tc, grow_array);
    tcase_add_test(tc, clock_monotonic);
    tcase_add_test(tc, gnuplot_runner);
    tcase_add_test(tc, gnuplot_quoting);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
