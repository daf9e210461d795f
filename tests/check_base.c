/* check_base.c - libtusk-base's small pieces: strict number parsing (every
 * malformed form refused), array growth (capacity, overflow), the clock
 * (monotonic, the three units agree), the gnuplot runner against fake
 * gnuplot programs (success, missing program, failure with the log's line,
 * no picture, stale picture removed), gnuplot quoting, the thread pool
 * (every item exactly once, jobs in a row) and the random draws (moments
 * within bounds that fail about once in 10^9 runs). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/fs.h"
#include "base/gnuplot.h"
#include "base/grow.h"
#include "base/parse.h"
#include "base/pool.h"
#include "base/radix.h"
#include "base/rng.h"
#include "testutil.h"
#include "tusk/params.h"

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


typedef struct pool_job {
    unsigned *hits;
    unsigned threads;
    unsigned bad_thread;
} pool_job_t;

static void count_item(void *ctx, size_t item, unsigned thread)
{
    pool_job_t *j = ctx;
    __atomic_fetch_add(&j->hits[item], 1, __ATOMIC_RELAXED);
    if (thread >= j->threads)
        __atomic_fetch_add(&j->bad_thread, 1, __ATOMIC_RELAXED);
}

START_TEST(pool_every_item_once)
{
    static const unsigned sizes[] = {1, 2, 3, 7};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        tusk_pool_t *p = NULL;
        tusk_error_t err;
        ck_assert_int_eq(tusk_pool_new(&p, sizes[s], &err), TUSK_OK);
        ck_assert_uint_eq(tusk_pool_threads(p), sizes[s]);
        for (size_t n = 0; n < 2000; n += 1 + n / 2) {
            pool_job_t j = {calloc(n + 1, sizeof(unsigned)), sizes[s], 0};
            tusk_pool_run(p, n, count_item, &j);
            for (size_t i = 0; i < n; i++)
                tu_check(j.hits[i] == 1);
            ck_assert_uint_eq(j.hits[n], 0);
            ck_assert_uint_eq(j.bad_thread, 0);
            free(j.hits);
        }
        tusk_pool_destroy(&p);
        ck_assert_ptr_null(p);
    }
    tusk_pool_t *p = NULL;
    tusk_error_t err;
    ck_assert_int_eq(tusk_pool_new(&p, 0, &err), TUSK_OK);
    ck_assert_uint_ge(tusk_pool_threads(p), 1);
    tusk_pool_destroy(&p);
}
END_TEST

START_TEST(rng_draws)
{
    uint64_t state = tu_seed(), a = 5, b = 5;
    ck_assert(tusk_rng_next(&a) == tusk_rng_next(&b));
    const unsigned n = 200000;
    double s1 = 0, s2 = 0, e1 = 0, u_min = 1, u_max = 0;
    uint64_t p1 = 0;
    for (unsigned i = 0; i < n; i++) {
        double g = tusk_rng_gauss(&state);
        s1 += g;
        s2 += g * g;
        e1 += tusk_rng_exponential(&state, 2.0);
        p1 += tusk_rng_poisson(&state, 45.5);
        double u = tusk_rng_uniform(&state);
        u_min = u < u_min ? u : u_min;
        u_max = u > u_max ? u : u_max;
    }
    /* 6 standard errors: mean 0 (se 1/sqrt(n)), variance 1 (se sqrt(2/n)),
     * exponential mean 2 (se 2/sqrt(n)), Poisson mean 45.5 (se sqrt(45.5/n)). */
    double m = s1 / n, v = s2 / n - m * m;
    ck_assert_msg(fabs(m) < 6.0 / sqrt(n), "gauss mean %g", m);
    ck_assert_msg(fabs(v - 1.0) < 6.0 * sqrt(2.0 / n), "gauss variance %g", v);
    ck_assert_msg(fabs(e1 / n - 2.0) < 6.0 * 2.0 / sqrt(n), "exponential mean %g", e1 / n);
    ck_assert_msg(fabs((double)p1 / n - 45.5) < 6.0 * sqrt(45.5 / n), "poisson mean %g", (double)p1 / n);
    ck_assert(u_min > 0.0 && u_max < 1.0);
    ck_assert_uint_eq(tusk_rng_poisson(&state, 0.0), 0);
}
END_TEST

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* tusk_radix_sort_u64 against qsort: short and long arrays, keys of a few
 * low bits (most digits skipped), of every bit, with many duplicates. */
START_TEST(radix_sort_u64)
{
    static const size_t sizes[] = {0, 1, 2, 63, 64, 65, 1000, 100000};
    static const unsigned bits[] = {1, 8, 20, 48, 64};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        for (size_t j = 0; j < sizeof bits / sizeof bits[0]; j++) {
            size_t n = sizes[i];
            uint64_t *a = malloc((n + 1) * sizeof *a), *b = malloc((n + 1) * sizeof *b), *t = malloc((n + 1) * sizeof *t);
            uint64_t mask = bits[j] == 64 ? UINT64_MAX : (UINT64_C(1) << bits[j]) - 1;
            uint64_t high = bits[j] == 48 ? tu_rand() << 48 : 0; /* a constant high part: skipped digits */
            for (size_t k = 0; k < n; k++)
                a[k] = b[k] = (tu_rand() & mask) | high;
            tusk_radix_sort_u64(a, t, n);
            if (n)
                qsort(b, n, sizeof *b, cmp_u64);
            ck_assert_msg(n == 0 || memcmp(a, b, n * sizeof *a) == 0, "%zu keys of %u bits: not sorted as qsort does",
                          n, bits[j]);
            free(a);
            free(b);
            free(t);
        }
}
END_TEST

/* tusk_mkdir_p: nested folders made, an existing one fine, a file in the
 * way refused with its name. */
START_TEST(mkdir_nested)
{
    char dir[512], path[700];
    tu_make_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/a/b//c", dir);
    tusk_error_t err;
    ck_assert_msg(tusk_mkdir_p(path, &err) == TUSK_OK, "%s", err.message);
    ck_assert_msg(tusk_mkdir_p(path, &err) == TUSK_OK, "%s", err.message);
    struct stat st;
    ck_assert(stat(path, &st) == 0 && S_ISDIR(st.st_mode));
    snprintf(path, sizeof path, "%s/file", dir);
    FILE *fp = fopen(path, "w");
    ck_assert_ptr_nonnull(fp);
    fclose(fp);
    snprintf(path, sizeof path, "%s/file/sub", dir);
    ck_assert_int_eq(tusk_mkdir_p(path, &err), TUSK_EIO);
    ck_assert_ptr_nonnull(strstr(err.message, "file"));
    ck_assert_int_eq(tusk_mkdir_p("", &err), TUSK_EINVAL);
    char rm[1200];
    snprintf(rm, sizeof rm, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(rm), 0);
}
END_TEST

/* tusk_cli_set: KEY=VALUE into parameters, a later value replacing an
 * earlier one; no '=' or an empty key refused. */
START_TEST(cli_set_pairs)
{
    tusk_params_t *p = tusk_params_new();
    ck_assert(tusk_cli_set("test", p, "alpha=1"));
    ck_assert(tusk_cli_set("test", p, "alpha=two=2"));
    ck_assert_str_eq(tusk_params_get(p, "alpha"), "two=2");
    ck_assert(tusk_cli_set("test", p, "empty="));
    ck_assert_str_eq(tusk_params_get(p, "empty"), "");
    ck_assert(!tusk_cli_set("test", p, "novalue"));
    ck_assert(!tusk_cli_set("test", p, "=x"));
    tusk_params_destroy(&p);
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
    tcase_add_test(tc, pool_every_item_once);
    tcase_add_test(tc, rng_draws);
    tcase_add_test(tc, radix_sort_u64);
    tcase_add_test(tc, mkdir_nested);
    tcase_add_test(tc, cli_set_pairs);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
