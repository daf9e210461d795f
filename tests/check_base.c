/* check_base.c - libtusk-base's small pieces: strict number parsing (every
 * malformed form refused), array growth (capacity, overflow), the clock
 * (monotonic, the three units agree), the gnuplot runner against fake
 * gnuplot programs (success, missing program, failure with the log's line,
 * no picture, stale picture removed), gnuplot quoting, the thread pool
 * (every item exactly once, jobs in a row) and the random numbers
 * (splitmix64's published sequence, uniforms strictly inside (0, 1) at
 * the extreme outputs, moments of the draws within bounds that fail about
 * once in 10^9 runs). */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cli.h"
#include "base/clock.h"
#include "base/fs.h"
#include "base/gather.h"
#include "base/gnuplot.h"
#include "base/grow.h"
#include "base/parse.h"
#include "base/pool.h"
#include "base/radix.h"
#include "base/report.h"
#include "base/rng.h"
#include "base/stats.h"
#include "testutil.h"
#include "tusk/params.h"
#include "base/textfile.h"
#include "tusk/version.h"

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

/* tusk_parse_u64x: decimal as tusk_parse_u64, or hexadecimal after 0x. */
START_TEST(parse_whole_numbers_hex)
{
    uint64_t v = 99;
    ck_assert_int_eq(tusk_parse_u64x("0x10", 0, UINT64_MAX, &v), 0);
    ck_assert_uint_eq(v, 16);
    ck_assert_int_eq(tusk_parse_u64x("0XfA010102", 0, UINT32_MAX, &v), 0);
    ck_assert_uint_eq(v, 0xFA010102u);
    ck_assert_int_eq(tusk_parse_u64x("010", 0, UINT64_MAX, &v), 0);
    ck_assert_uint_eq(v, 10); /* no octal */
    ck_assert_int_eq(tusk_parse_u64x("0xFFFFFFFFFFFFFFFF", 0, UINT64_MAX, &v), 0);
    ck_assert(v == UINT64_MAX);
    static const char *const bad[] = {"",     "0x",   "0x 1", "0x-1", "0x1g",  "0x0x5", "-0x1",
                                      " 0x1", "0x1 ", "+5",   "x10",  "0x10000000000000000"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        v = 42;
        ck_assert_msg(tusk_parse_u64x(bad[i], 0, UINT64_MAX, &v) == -1, "'%s' taken", bad[i]);
        ck_assert_uint_eq(v, 42);
    }
    ck_assert_int_eq(tusk_parse_u64x("0x100000000", 0, UINT32_MAX, &v), -1);
    ck_assert_int_eq(tusk_parse_u64x("0x3", 4, 10, &v), -1);
}
END_TEST

START_TEST(parse_real_numbers)
{
    double d = 0;
    ck_assert_int_eq(tusk_parse_double("-1.5e2", -1e9, 1e9, &d), 0);
    ck_assert(d == -150.0);
    static const char *const bad[] = {"", " 1", "\t1", "\r1", "\v1", "1 ", "nan", "inf", "-inf", "1e999", "1,5", "x",
                                      "1.5x"};
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
    uint64_t ms = tusk_clock_ms();
    uint64_t b = tusk_clock_ns();
    ck_assert_uint_ge(b, a);
    ck_assert(s * 1e9 >= (double)a - 1e3 && s * 1e9 <= (double)b + 1e3);
    ck_assert_uint_ge(ms, a / 1000000);
    ck_assert_uint_le(ms, b / 1000000);
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

START_TEST(rng_known_values)
{
    /* splitmix64 from state 0 (reference sequence of the published
     * algorithm). */
    uint64_t s = 0;
    ck_assert_uint_eq(tusk_rng_next(&s), UINT64_C(0xE220A8397B1DCDAF));
    ck_assert_uint_eq(tusk_rng_next(&s), UINT64_C(0x6E789E6AA1B965F4));
    s = tu_rand();
    double sum = 0.0;
    for (int i = 0; i < 1000000; i++) {
        double u = tusk_rng_uniform(&s);
        tu_check(u > 0.0 && u < 1.0);
        sum += u;
    }
    ck_assert(fabs(sum / 1e6 - 0.5) < 5.0 * sqrt(1.0 / 12.0 / 1e6));
    /* The extreme outputs map strictly inside (0, 1): states whose next
     * output is all zeros / all ones are found by stepping back. */
    const uint64_t gamma = UINT64_C(0x9E3779B97F4A7C15);
    uint64_t z0 = 0, z1 = 0;
    /* Inverse of splitmix64's output mix, to build the states. */
    for (int w = 0; w < 2; w++) {
        uint64_t v = w ? UINT64_MAX : 0;
        v ^= v >> 31 ^ v >> 62;
        v *= UINT64_C(0x319642B2D24D8EC3);
        v ^= v >> 27 ^ v >> 54;
        v *= UINT64_C(0x96DE1B173F119089);
        v ^= v >> 30 ^ v >> 60;
        *(w ? &z1 : &z0) = v - gamma;
    }
    uint64_t t0 = z0, t1 = z1;
    ck_assert_uint_eq(tusk_rng_next(&t0), 0);
    ck_assert_uint_eq(tusk_rng_next(&t1), UINT64_MAX);
    t0 = z0;
    t1 = z1;
    double umin = tusk_rng_uniform(&t0), umax = tusk_rng_uniform(&t1);
    ck_assert(umin > 0.0 && umin < 1e-15);
    ck_assert(umax < 1.0 && umax > 1.0 - 1e-15);
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

/* ---- base/cli.h ------------------------------------------------------------------ */

/* What a command-line call printed and returned: fds 1 and 2 into files. */
typedef struct run {
    int status;
    char out[4096], err[4096];
} run_t;

static void slurp(FILE *fp, char *buf, size_t cap)
{
    rewind(fp);
    size_t n = fread(buf, 1, cap - 1, fp);
    buf[n] = '\0';
    fclose(fp);
}

static run_t run_cli(const tusk_cli_t *cli, int argc, const char *const *args)
{
    char *argv[16];
    ck_assert_int_lt(argc, 16);
    for (int i = 0; i < argc; i++)
        argv[i] = (char *)args[i];
    argv[argc] = NULL;
    FILE *o = tmpfile(), *e = tmpfile();
    ck_assert(o && e);
    fflush(stdout);
    fflush(stderr);
    int so = dup(1), se = dup(2);
    ck_assert(so >= 0 && se >= 0 && dup2(fileno(o), 1) >= 0 && dup2(fileno(e), 2) >= 0);
    run_t r;
    r.status = tusk_cli_main(cli, argc, argv);
    fflush(stdout);
    fflush(stderr);
    dup2(so, 1);
    dup2(se, 2);
    close(so);
    close(se);
    slurp(o, r.out, sizeof r.out);
    slurp(e, r.err, sizeof r.err);
    return r;
}

/* What the last handler saw. */
static struct {
    int argc;
    char argv0[64], arg1[64];
} seen;

static int cmd_alpha(const tusk_cli_t *cli, int argc, char **argv)
{
    (void)cli;
    seen.argc = argc;
    snprintf(seen.argv0, sizeof seen.argv0, "%s", argv[0]);
    snprintf(seen.arg1, sizeof seen.arg1, "%s", argc > 1 ? argv[1] : "");
    return 7;
}

/* Options through tusk_cli_getopt: prints "q", "o=V", "set=V" or "seed=V"
 * per option, "?" on an error (after the message), then the operands. */
static int cmd_opts(const tusk_cli_t *cli, int argc, char **argv)
{
    static const struct option longs[] = {{"out", required_argument, NULL, 'o'},
                                          {"quiet", no_argument, NULL, 'q'},
                                          {"set", required_argument, NULL, 's'},
                                          {"seed", required_argument, NULL, 'S'},
                                          {NULL, 0, NULL, 0}};
    int c;
    while ((c = tusk_cli_getopt(cli, argc, argv, "o:q", longs, NULL)) != -1) {
        switch (c) {
        case 'q': printf("q "); break;
        case 'o': printf("o=%s ", optarg); break;
        case 's': printf("set=%s ", optarg); break;
        case 'S': printf("seed=%s ", optarg); break;
        default: printf("? "); return 2;
        }
    }
    for (int i = optind; i < argc; i++)
        printf("[%s] ", argv[i]);
    return 0;
}

static void alpha_help(FILE *out)
{
    fputs("OPTIONS TEXT\n", out);
}

static const tusk_cli_command_t commands[] = {{"alpha", cmd_alpha, "the first command"},
                                              {"opts", cmd_opts, "options"},
                                              {NULL, NULL, NULL}};
static const tusk_cli_t tool = {"tusk-x", "9.8.7", "COMMAND [OPTIONS]\nother FORM", commands, NULL, alpha_help};

/* The dispatcher: usage, --help, --version, a command with argv[0]
 * "PROG CMD" and its status, unknown commands and options. */
START_TEST(cli_dispatch)
{
    run_t r = run_cli(&tool, 1, (const char *const[]){"x"});
    ck_assert_int_eq(r.status, 2);
    ck_assert_str_eq(r.out, "");
    ck_assert_str_eq(r.err, "usage: tusk-x COMMAND [OPTIONS]\n"
                            "       tusk-x other FORM\n"
                            "       tusk-x --help | --version\n"
                            "\n"
                            "commands:\n"
                            "  alpha  the first command\n"
                            "  opts   options\n"
                            "\n"
                            "OPTIONS TEXT\n");
    char usage[4096];
    snprintf(usage, sizeof usage, "%s", r.err);
    for (int h = 0; h < 2; h++) {
        r = run_cli(&tool, 2, (const char *const[]){"x", h ? "-h" : "--help"});
        ck_assert_int_eq(r.status, 0);
        ck_assert_str_eq(r.out, usage);
        ck_assert_str_eq(r.err, "");
    }
    /* --version: the libraries' version, and the tool's own when the tool
     * was built as another version (9.8.7 here). */
    r = run_cli(&tool, 3, (const char *const[]){"x", "--version", "alpha"});
    ck_assert_int_eq(r.status, 0);
    ck_assert_str_eq(r.out, "tusk-x (tusk) 9.8.7 (libraries " TUSK_VERSION ")\n");
    ck_assert_str_eq(tusk_version(), TUSK_VERSION);
    char numbers[64];
    snprintf(numbers, sizeof numbers, "%d.%d.%d", TUSK_VERSION_MAJOR, TUSK_VERSION_MINOR, TUSK_VERSION_PATCH);
    ck_assert_str_eq(numbers, TUSK_VERSION);
    ck_assert(TUSK_VERSION_NUMBER == TUSK_VERSION_ENCODE(TUSK_VERSION_MAJOR, TUSK_VERSION_MINOR, TUSK_VERSION_PATCH));
    ck_assert(TUSK_VERSION_ENCODE(0, 10, 0) > TUSK_VERSION_ENCODE(0, 9, 99));
    static const tusk_cli_t same = {"tusk-v", TUSK_VERSION, "X", NULL, cmd_alpha, NULL};
    r = run_cli(&same, 2, (const char *const[]){"v", "--version"});
    ck_assert_int_eq(r.status, 0);
    ck_assert_str_eq(r.out, "tusk-v (tusk) " TUSK_VERSION "\n");
    static const tusk_cli_t unversioned = {"tusk-u", NULL, "X", NULL, cmd_alpha, NULL};
    r = run_cli(&unversioned, 2, (const char *const[]){"u", "--version"});
    ck_assert_str_eq(r.out, "tusk-u (tusk) " TUSK_VERSION "\n");
    r = run_cli(&tool, 4, (const char *const[]){"x", "alpha", "one", "two"});
    ck_assert_int_eq(r.status, 7);
    ck_assert_int_eq(seen.argc, 3);
    ck_assert_str_eq(seen.argv0, "tusk-x alpha");
    ck_assert_str_eq(seen.arg1, "one");
    r = run_cli(&tool, 2, (const char *const[]){"x", "frob"});
    ck_assert_int_eq(r.status, 2);
    ck_assert_str_eq(r.out, "");
    ck_assert_str_eq(r.err, "tusk-x: unknown command 'frob' (commands: alpha, opts; tusk-x --help says more)\n");
    r = run_cli(&tool, 3, (const char *const[]){"x", "--frob", "alpha"});
    ck_assert_int_eq(r.status, 2);
    ck_assert_str_eq(r.err, "tusk-x: unknown option '--frob' (commands: alpha, opts; tusk-x --help says more)\n");
    r = run_cli(&tool, 2, (const char *const[]){"x", "alph"});
    ck_assert_int_eq(r.status, 2); /* no abbreviations of commands */
}
END_TEST

/* tusk_cli_getopt: one message style for every option error. */
START_TEST(cli_getopt_messages)
{
    static const struct {
        const char *args[6];
        int argc;
        const char *out, *err;
    } cases[] = {
        {{"x", "opts", "-q", "--out", "f", "g"}, 6, "q o=f [g] ", ""},
        {{"x", "opts", "--out=f", "-qof"}, 4, "o=f q o=f ", ""},
        {{"x", "opts", "--se=1"}, 3, "? ", "tusk-x opts: ambiguous option '--se' (--set, --seed)\n"},
        {{"x", "opts", "--see", "1"}, 4, "seed=1 ", ""},
        {{"x", "opts", "--bogus"}, 3, "? ", "tusk-x opts: unknown option '--bogus' (tusk-x --help lists the options)\n"},
        {{"x", "opts", "-x"}, 3, "? ", "tusk-x opts: unknown option '-x' (tusk-x --help lists the options)\n"},
        {{"x", "opts", "-qx"}, 3, "q ? ", "tusk-x opts: unknown option '-x' (tusk-x --help lists the options)\n"},
        {{"x", "opts", "--quiet", "-xq"}, 4, "q ? ",
         "tusk-x opts: unknown option '-x' (tusk-x --help lists the options)\n"},
        {{"x", "opts", "-o"}, 3, "? ", "tusk-x opts: option '-o' needs a value\n"},
        {{"x", "opts", "--out"}, 3, "? ", "tusk-x opts: option '--out' needs a value\n"},
        {{"x", "opts", "--quiet=1"}, 3, "? ", "tusk-x opts: option '--quiet' takes no value\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run_t r = run_cli(&tool, cases[i].argc, cases[i].args);
        ck_assert_msg(strcmp(r.out, cases[i].out) == 0 && strcmp(r.err, cases[i].err) == 0,
                      "case %zu: out '%s' err '%s'", i, r.out, r.err);
        ck_assert_int_eq(r.status, strcmp(cases[i].err, "") == 0 ? 0 : 2);
    }
}
END_TEST

static int run_alone(const tusk_cli_t *cli, int argc, char **argv)
{
    static const struct option longs[] = {{"version", no_argument, NULL, 'V'}, {NULL, 0, NULL, 0}};
    int c;
    while ((c = tusk_cli_getopt(cli, argc, argv, "", longs, NULL)) != -1)
        if (c == 'V')
            return tusk_cli_version(cli);
    seen.argc = argc;
    snprintf(seen.argv0, sizeof seen.argv0, "%s", argv[0]);
    return 5;
}

/* A tool without commands: its handler gets every argument, argv[0] PROG. */
START_TEST(cli_without_commands)
{
    static const tusk_cli_t alone = {"tusk-y", "1.2", "[OPTIONS] FILE", NULL, run_alone, NULL};
    run_t r = run_cli(&alone, 1, (const char *const[]){"./lt-tusk-y"});
    ck_assert_int_eq(r.status, 2);
    ck_assert_str_eq(r.err, "usage: tusk-y [OPTIONS] FILE\n       tusk-y --help | --version\n");
    r = run_cli(&alone, 3, (const char *const[]){"./lt-tusk-y", "a", "b"});
    ck_assert_int_eq(r.status, 5);
    ck_assert_int_eq(seen.argc, 3);
    ck_assert_str_eq(seen.argv0, "tusk-y");
    r = run_cli(&alone, 2, (const char *const[]){"y", "--version"});
    ck_assert_str_eq(r.out, "tusk-y (tusk) 1.2 (libraries " TUSK_VERSION ")\n");
    r = run_cli(&alone, 3, (const char *const[]){"y", "a", "--version"});
    ck_assert_int_eq(r.status, 0);
    ck_assert_str_eq(r.out, "tusk-y (tusk) 1.2 (libraries " TUSK_VERSION ")\n");
    r = run_cli(&alone, 2, (const char *const[]){"y", "--frob"});
    ck_assert_str_eq(r.err, "tusk-y: unknown option '--frob' (tusk-y --help lists the options)\n");
}
END_TEST

/* ---- tusk_cli_options: a command's options by a table ------------------------- */

static void tab_usage(FILE *out)
{
    fputs("TAB USAGE\n", out);
}

static bool even(void *to, const char *prog, const char *text)
{
    unsigned v;
    if (!tusk_cli_unsigned(prog, "--even", text, 0, 100, &v))
        return false;
    if (v % 2) {
        fprintf(stderr, "%s: --even wants an even number, not %u\n", prog, v);
        return false;
    }
    *(unsigned *)to = v;
    return true;
}

/* Every kind of entry; prints what the table filled, then the operands. */
static int cmd_table(const tusk_cli_t *cli, int argc, char **argv)
{
    bool quiet = false, check = true;
    const char *out = "-", *dev[2] = {NULL, NULL};
    uint64_t n = 1;
    unsigned u = 0, nd = 0, ev = 0;
    double x = 0.5;
    int fmt = 0;
    tusk_params_t *p = tusk_params_new();
    const tusk_cli_option_t opts[] = {
        {.name = "quiet", .letter = 'q', .kind = TUSK_CLI_TRUE, .to = &quiet},
        {.name = "no-check", .kind = TUSK_CLI_FALSE, .to = &check},
        {.name = "out", .letter = 'o', .kind = TUSK_CLI_TEXT, .to = &out},
        {.name = "count", .kind = TUSK_CLI_U64, .to = &n, .min = 1, .max = 9},
        {.name = "width", .kind = TUSK_CLI_UNSIGNED, .to = &u, .max = 100},
        {.name = "fraction", .kind = TUSK_CLI_DOUBLE, .to = &x, .lo = 0.0, .hi = 1.0},
        {.name = "format", .kind = TUSK_CLI_CHOICE, .to = &fmt, .key = "png|svg|pdf"},
        {.name = "device", .kind = TUSK_CLI_LIST, .to = dev, .max = 2, .n = &nd},
        {.name = "seed", .kind = TUSK_CLI_PARAM, .key = "seed", .max = UINT64_MAX},
        {.name = "preset", .kind = TUSK_CLI_PARAM, .key = "preset"},
        {.name = "set", .kind = TUSK_CLI_SET},
        {.name = "even", .kind = TUSK_CLI_CALL, .to = &ev, .call = even},
        {.name = NULL}};
    int rc = tusk_cli_options(cli, argc, argv, opts, p, strstr(argv[0], "own") ? tab_usage : NULL);
    if (rc == TUSK_CLI_RUN) {
        printf("q%d c%d o=%s n=%llu u=%u x=%g f=%d d=%u%s%s e=%u seed=%s preset=%s k=%s", quiet, check, out,
               (unsigned long long)n, u, x, fmt, nd, nd ? ":" : "", nd ? dev[nd - 1] : "", ev,
               tusk_params_get(p, "seed") ? tusk_params_get(p, "seed") : "-",
               tusk_params_get(p, "preset") ? tusk_params_get(p, "preset") : "-",
               tusk_params_get(p, "k") ? tusk_params_get(p, "k") : "-");
        for (int i = optind; i < argc; i++)
            printf(" [%s]", argv[i]);
        rc = 0;
    }
    tusk_params_destroy(&p);
    return rc;
}

static const tusk_cli_command_t table_commands[] = {
    {"tab", cmd_table, "a table"}, {"own", cmd_table, "a table, its own usage"}, {NULL, NULL, NULL}};
static const tusk_cli_t table_tool = {"tusk-t", NULL, "tab [OPTIONS]", table_commands, NULL, NULL};

START_TEST(cli_options_table)
{
    static const struct {
        const char *args[8];
        int argc, status;
        const char *out, *err;
    } cases[] = {
        {{"t", "tab"}, 2, 0, "q0 c1 o=- n=1 u=0 x=0.5 f=0 d=0 e=0 seed=- preset=- k=-", ""},
        {{"t", "tab", "-qo", "f", "--no-check", "a", "b"}, 7, 0,
         "q1 c0 o=f n=1 u=0 x=0.5 f=0 d=0 e=0 seed=- preset=- k=- [a] [b]", ""},
        {{"t", "tab", "--count=3", "--width", "100", "--fraction", "0.25"}, 7, 0,
         "q0 c1 o=- n=3 u=100 x=0.25 f=0 d=0 e=0 seed=- preset=- k=-", ""},
        {{"t", "tab", "--format", "pdf", "--device", "a", "--device=b"}, 7, 0,
         "q0 c1 o=- n=1 u=0 x=0.5 f=2 d=2:b e=0 seed=- preset=- k=-", ""},
        {{"t", "tab", "--seed", "0x10", "--preset", "central", "--set=k=v"}, 7, 2, "",
         "tusk-t tab: --seed wants a whole number, not '0x10'\n"},
        {{"t", "tab", "--seed", "17", "--preset", "central", "--set=k=v"}, 7, 0,
         "q0 c1 o=- n=1 u=0 x=0.5 f=0 d=0 e=0 seed=17 preset=central k=v", ""},
        {{"t", "tab", "--even", "4"}, 4, 0, "q0 c1 o=- n=1 u=0 x=0.5 f=0 d=0 e=4 seed=- preset=- k=-", ""},
        {{"t", "tab", "--even", "5", "--count", "0"}, 6, 2, "", "tusk-t tab: --even wants an even number, not 5\n"},
        {{"t", "tab", "--count", "0", "--even", "5"}, 6, 2, "",
         "tusk-t tab: --count wants a whole number from 1 to 9, not '0'\n"},
        {{"t", "tab", "--width", "101"}, 4, 2, "",
         "tusk-t tab: --width wants a whole number from 0 to 100, not '101'\n"},
        {{"t", "tab", "--fraction", "2"}, 4, 2, "",
         "tusk-t tab: --fraction wants a finite number from 0 to 1, not '2'\n"},
        {{"t", "tab", "--format", "gif"}, 4, 2, "", "tusk-t tab: --format is png, svg or pdf, not 'gif'\n"},
        {{"t", "tab", "--format", "pn"}, 4, 2, "", "tusk-t tab: --format is png, svg or pdf, not 'pn'\n"},
        {{"t", "tab", "--device", "a", "--device", "b", "--device", "c"}, 8, 2, "", "tusk-t tab: at most 2 --device\n"},
        {{"t", "tab", "--preset", "a\nb"}, 4, 2, "",
         "tusk-t tab: --preset: parameter 'preset': the value must be a single line\n"},
        {{"t", "tab", "--set", "k"}, 4, 2, "", "tusk-t tab: --set wants KEY=VALUE, not 'k'\n"},
        {{"t", "tab", "--quiet=1"}, 3, 2, "", "tusk-t tab: option '--quiet' takes no value\n"},
        {{"t", "tab", "--s", "1"}, 4, 2, "", "tusk-t tab: ambiguous option '--s' (--seed, --set)\n"},
        {{"t", "tab", "-x"}, 3, 2, "", "tusk-t tab: unknown option '-x' (tusk-t --help lists the options)\n"},
        {{"t", "tab", "--count", "2", "-h", "--count", "x"}, 6, 0, "usage: tusk-t tab [OPTIONS]\n", ""},
        {{"t", "own", "--help"}, 3, 0, "TAB USAGE\n", ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run_t r = run_cli(&table_tool, cases[i].argc, cases[i].args);
        ck_assert_msg(strncmp(r.out, cases[i].out, strlen(cases[i].out)) == 0 && (cases[i].out[0] || !r.out[0]) &&
                          strcmp(r.err, cases[i].err) == 0 && r.status == cases[i].status,
                      "case %zu: status %d out '%s' err '%s'", i, r.status, r.out, r.err);
    }
}
END_TEST

/* tusk_cli_label: LABEL= or the file's name; tusk_cli_keys. */
START_TEST(cli_labels_and_keys)
{
    static const struct {
        const char *arg, *label, *path;
    } good[] = {{"a=x/y.adf", "a", "x/y.adf"},   {"x/y.adf", "y", "x/y.adf"},     {".hidden", ".hidden", ".hidden"},
                {"d/a,b.c.adf", "a_b.c", "d/a,b.c.adf"}, {"run", "run", "run"}, {"l=", "l", ""}};
    char label[8];
    const char *path;
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        ck_assert(tusk_cli_label("p", good[i].arg, label, sizeof label, &path));
        ck_assert_str_eq(label, good[i].label);
        ck_assert_str_eq(path, good[i].path);
    }
    static const char *const bad[] = {"=f", "a,b=f", "a/b=f", "12345678=f"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert(!tusk_cli_label("p", bad[i], label, sizeof label, &path));
    tusk_params_t *p = tusk_params_new();
    static const char *const known[] = {"alpha", "beta", NULL};
    ck_assert(tusk_cli_keys("p", p, known));
    ck_assert(tusk_cli_set("p", p, "beta=1"));
    ck_assert(tusk_cli_keys("p", p, known));
    ck_assert(tusk_cli_set("p", p, "gamma=1"));
    ck_assert(!tusk_cli_keys("p", p, known));
    tusk_params_destroy(&p);
}
END_TEST

/* ---- records by key, gathered parts ------------------------------------------------ */

typedef struct rec {
    uint64_t key;
    int value;
} rec_t;

START_TEST(grow_records_by_key)
{
    rec_t *r = NULL;
    size_t n = 0, cap = 0;
    for (int round = 0; round < 2; round++)
        for (uint64_t k = 0; k < 100; k++) {
            rec_t *x = tusk_grow_find(&r, &n, &cap, sizeof *r, k * 7919);
            ck_assert_ptr_nonnull(x);
            ck_assert(x->key == k * 7919);
            ck_assert_int_eq(x->value, round ? (int)k : 0); /* a new one zeroed, an old one found */
            x->value = (int)k;
        }
    ck_assert_uint_eq(n, 100);
    tusk_grow_drop(r, &n, sizeof *r, 10); /* the last takes its place */
    ck_assert_uint_eq(n, 99);
    ck_assert(r[10].key == 99 * 7919 && r[10].value == 99);
    tusk_grow_drop(r, &n, sizeof *r, n - 1);
    ck_assert_uint_eq(n, 98);
    ck_assert(r[97].key == 97 * 7919);
    free(r);
}
END_TEST

typedef struct part_rec {
    tusk_part_t head;
    char *held;
} part_rec_t;

static int released;

static void release_part(void *rec)
{
    part_rec_t *p = rec;
    free(p->held);
    released++;
}

START_TEST(gather_parts_and_units)
{
    tusk_gather_t g;
    tusk_error_t err;
    released = 0;
    tusk_gather_init(&g, sizeof(part_rec_t), release_part, "timeslice", "module");
    part_rec_t *a = tusk_gather_part(&g, 7, 1, &err), *b = tusk_gather_part(&g, 7, 2, &err);
    ck_assert(a && b && a != b);
    ck_assert(a->head.unit == 7 && a->head.part == 1 && a->head.have == 0 && !a->held);
    a->head.have |= 1;
    a->held = malloc(10);
    ck_assert_ptr_eq(tusk_gather_part(&g, 7, 1, &err), a);
    ck_assert_int_eq(tusk_gather_unit(&g, 7, 2, &err), TUSK_OK);
    ck_assert_int_eq(tusk_gather_unit(&g, 8, 5, &err), TUSK_OK);
    ck_assert_int_eq(tusk_gather_unit(&g, 7, 3, &err), TUSK_EINVAL);
    ck_assert_str_eq(err.message, "timeslice 7: modules announce 2 and 3 modules");
    ck_assert_int_eq(tusk_gather_unit(&g, 7, 2, &err), TUSK_OK);
    const tusk_unit_t *u = tusk_gather_short(&g);
    ck_assert(u && u->unit == 8 && u->seen == 1 && u->expected == 5);
    const tusk_part_t *open = tusk_gather_open(&g);
    ck_assert(open && open->unit == 7 && open->part == 1);
    char missing[64];
    tusk_gather_missing(open->have, (const char *const[]){"digis", "truth", "hits"}, 3, missing, sizeof missing);
    ck_assert_str_eq(missing, "truth, hits");
    tusk_gather_missing(7, (const char *const[]){"digis", "truth", "hits"}, 3, missing, sizeof missing);
    ck_assert_str_eq(missing, "");
    tusk_gather_close(&g, a); /* b takes its place */
    ck_assert_int_eq(released, 1);
    ck_assert_uint_eq(g.n, 1);
    ck_assert(tusk_gather_open(&g)->part == 2);
    tusk_gather_free(&g);
    ck_assert_int_eq(released, 2);
    ck_assert_ptr_null(tusk_gather_open(&g));
    ck_assert_ptr_null(tusk_gather_short(&g));
}
END_TEST

/* tusk_gather_lowest: the open record of the lowest (unit, part), whatever
 * the order they were opened and closed in. */
START_TEST(gather_lowest_open_record)
{
    tusk_gather_t g;
    tusk_error_t err;
    tusk_gather_init(&g, sizeof(part_rec_t), NULL, "event", "part");
    ck_assert_ptr_null(tusk_gather_lowest(&g));
    part_rec_t *a = tusk_gather_part(&g, 9, 0, &err), *b = tusk_gather_part(&g, 3, 2, &err);
    part_rec_t *c = tusk_gather_part(&g, 3, 1, &err);
    ck_assert(a && b && c);
    ck_assert_ptr_eq(tusk_gather_lowest(&g), &c->head);
    ck_assert_ptr_eq(tusk_gather_open(&g), &a->head); /* the first opened, as before */
    tusk_gather_close(&g, c);
    const tusk_part_t *low = tusk_gather_lowest(&g);
    ck_assert(low && low->unit == 3 && low->part == 2);
    tusk_gather_close(&g, (void *)low);
    low = tusk_gather_lowest(&g);
    ck_assert(low && low->unit == 9 && low->part == 0);
    tusk_gather_free(&g);
    ck_assert_ptr_null(tusk_gather_lowest(&g));
}
END_TEST

/* tusk_cmp_double: qsort's ascending order of doubles. */
START_TEST(stats_order_of_doubles)
{
    double v[64];
    for (int i = 0; i < 64; i++)
        v[i] = (double)((i * 37) % 64) - 20.5;
    qsort(v, 64, sizeof *v, tusk_cmp_double);
    for (int i = 0; i < 64; i++)
        ck_assert(v[i] == (double)i - 20.5);
    double a = 1.5, b = 2.5;
    ck_assert(tusk_cmp_double(&a, &b) < 0 && tusk_cmp_double(&b, &a) > 0 && tusk_cmp_double(&a, &a) == 0);
}
END_TEST

/* ---- report folders ------------------------------------------------------------------ */

static void report_a(FILE *fp, const void *ctx, bool svg)
{
    fprintf(fp, "a,%g,%s,%d\n", 0.5, (const char *)ctx, (int)svg);
}

static void report_b(FILE *fp, const void *ctx, bool svg)
{
    (void)ctx;
    fprintf(fp, "b %s\n", svg ? "svg" : "png");
}

static int pictures;

static int report_picture(const void *ctx, const char *dir, const char *format, tusk_error_t *err)
{
    pictures++;
    ck_assert_str_eq((const char *)ctx, "ctx");
    ck_assert_str_eq(format, "svg");
    static const tusk_report_file_t files[] = {{"p.dat", report_a}, {"p.gp", report_b}};
    return tusk_report_picture(dir, "p", format, files, 2, ctx, err);
}

static void assert_file(const char *dir, const char *name, const char *want)
{
    char path[700], *text = NULL;
    size_t len;
    tusk_error_t err;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    ck_assert_msg(tusk_file_read(path, 4096, &text, &len, &err) == TUSK_OK, "%s", err.message);
    ck_assert_str_eq(text, want);
    free(text);
}

/* tusk_report_write: the folder made, each file written in order, then the
 * picture (its files and gnuplot run: a fake one here); a folder that
 * cannot be made, a file that cannot, a bad picture format: errors naming
 * them, the picture's files not written. */
START_TEST(report_folder)
{
    char dir[512], sub[700], path[800];
    tu_make_dir(dir, sizeof dir);
    snprintf(sub, sizeof sub, "%s/r/s", dir);
    char *gp = fake(dir, "gp.sh", "[ \"$1\" = ./p.gp ] && [ -f p.dat ] && echo SVG > p.svg");
    setenv("TUSK_GNUPLOT", gp, 1);
    tusk_error_t err;
    static const tusk_report_file_t files[] = {{"a.csv", report_a}, {"b.csv", report_b}};
    pictures = 0;
    ck_assert_int_eq(tusk_report_write(sub, files, 2, "ctx", NULL, "svg", &err), TUSK_OK);
    ck_assert_int_eq(pictures, 0);
    assert_file(sub, "a.csv", "a,0.5,ctx,0\n");
    assert_file(sub, "b.csv", "b png\n");
    ck_assert_int_eq(tusk_report_write(sub, files, 2, "ctx", report_picture, "svg", &err), TUSK_OK);
    ck_assert_int_eq(pictures, 1);
    assert_file(sub, "p.dat", "a,0.5,ctx,1\n");
    assert_file(sub, "p.gp", "b svg\n");
    assert_file(sub, "p.svg", "SVG\n");
    /* a bad format: refused before the picture's files are written */
    snprintf(path, sizeof path, "%s/q", dir);
    ck_assert_int_eq(tusk_report_picture(dir, "q", "gif", files, 2, "ctx", &err), TUSK_EINVAL);
    ck_assert_str_eq(err.message, "picture format 'gif': png or svg");
    snprintf(path, sizeof path, "%s/a.csv", dir);
    ck_assert_int_ne(access(path, F_OK), 0);
    /* a folder in the way of a file, a file in the way of the folder */
    snprintf(path, sizeof path, "%s/b.csv", sub);
    ck_assert_int_eq(unlink(path), 0);
    ck_assert_int_eq(mkdir(path, 0755), 0);
    ck_assert_int_eq(tusk_report_write(sub, files, 2, "ctx", report_picture, "svg", &err), TUSK_EIO);
    ck_assert_ptr_nonnull(strstr(err.message, "/r/s/b.csv: "));
    ck_assert_int_eq(pictures, 1);
    ck_assert_int_eq(rmdir(path), 0);
    snprintf(path, sizeof path, "%s/a.csv/x", sub);
    ck_assert_int_eq(tusk_report_write(path, files, 2, "ctx", NULL, NULL, &err), TUSK_EIO);
    ck_assert_ptr_nonnull(strstr(err.message, "a.csv"));
    unsetenv("TUSK_GNUPLOT");
    free(gp);
    tu_remove_dir(sub);
    snprintf(path, sizeof path, "%s/r", dir);
    ck_assert_int_eq(rmdir(path), 0);
    tu_remove_dir(dir);
}
END_TEST

/* ---- sums for mean and spread ------------------------------------------------------- */

START_TEST(stats_moments)
{
    tusk_moments_t m = {0}, a = {0}, b = {0};
    ck_assert(tusk_moments_mean(&m) == 0 && tusk_moments_rms(&m) == 0 && tusk_moments_std(&m) == 0 &&
              tusk_moments_sd(&m) == 0);
    static const double x[] = {1, 2, 3, 4};
    for (int i = 0; i < 4; i++) {
        tusk_moments_add(&m, x[i]);
        tusk_moments_add(i < 2 ? &a : &b, x[i]);
    }
    ck_assert(tusk_moments_mean(&m) == 2.5);
    ck_assert(fabs(tusk_moments_rms(&m) - sqrt(7.5)) < 1e-15);
    ck_assert(fabs(tusk_moments_std(&m) - sqrt(1.25)) < 1e-15);
    ck_assert(fabs(tusk_moments_sd(&m) - sqrt(5.0 / 3.0)) < 1e-15);
    tusk_moments_merge(&a, &b);
    ck_assert(a.n == m.n && a.s == m.s && a.s2 == m.s2);
    tusk_moments_t one = {0};
    tusk_moments_add(&one, 1e8 + 0.1); /* a rounding remainder is no negative variance */
    ck_assert(tusk_moments_std(&one) >= 0 && tusk_moments_sd(&one) == 0);
    ck_assert(tusk_pct(1, 4) == 25.0 && tusk_pct(3, 0) == 0.0);
}
END_TEST

/* ---- files into a folder, a picture's script ------------------------------------ */

START_TEST(files_and_script_head)
{
    char dir[512], path[700];
    tu_make_dir(dir, sizeof dir);
    tusk_error_t err;
    FILE *fp;
    ck_assert_int_eq(tusk_file_create(dir, "a.csv", &fp, path, sizeof path, &err), TUSK_OK);
    ck_assert(strstr(path, "/a.csv") && strncmp(path, dir, strlen(dir)) == 0);
    tusk_gnuplot_head(fp, "pic", "here.c", "pic.dat", false, 640, 480);
    ck_assert_int_eq(tusk_file_close(fp, path, &err), TUSK_OK);
    char *text = NULL;
    size_t len;
    ck_assert_int_eq(tusk_file_read(path, 4096, &text, &len, &err), TUSK_OK);
    ck_assert_str_eq(text, "# pic.gp - written by tusk (here.c); data in pic.dat.\n"
                           "# Redraw by hand: cd to this folder, then: gnuplot pic.gp\n"
                           "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
                           "    set terminal pngcairo size 640,480 font 'Sans,11'\n"
                           "} else {\n"
                           "    set terminal png size 640,480\n"
                           "}\n"
                           "set output 'pic.png'\n");
    free(text);
    char missing_dir[700];
    snprintf(missing_dir, sizeof missing_dir, "%s/no/such", dir);
    ck_assert_int_eq(tusk_file_create(missing_dir, "a.csv", &fp, path, sizeof path, &err), TUSK_EIO);
    ck_assert_ptr_nonnull(strstr(err.message, "/no/such/a.csv: "));
    bool svg = false;
    char pic[700];
    ck_assert_int_eq(tusk_gnuplot_picture(dir, "p", "svg", &svg, pic, sizeof pic, &err), TUSK_OK);
    ck_assert(svg && strstr(pic, "/p.svg"));
    ck_assert_int_eq(tusk_gnuplot_picture(dir, "p", NULL, &svg, pic, sizeof pic, &err), TUSK_OK);
    ck_assert(!svg && strstr(pic, "/p.png"));
    ck_assert_int_eq(tusk_gnuplot_picture(dir, "p", "gif", &svg, pic, sizeof pic, &err), TUSK_EINVAL);
    ck_assert_str_eq(err.message, "picture format 'gif': png or svg");
    ck_assert_int_eq(tusk_gnuplot_picture("it's", "p", "png", &svg, pic, sizeof pic, &err), TUSK_EINVAL);
    tu_remove_dir(dir);
}
END_TEST

/* tusk_file_read: a file read whole (its size the first guess, one byte
 * past the limit refused), a missing one with errno ENOENT. */
START_TEST(file_read_whole)
{
    char dir[512], path[700];
    tu_make_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/f", dir);
    for (size_t n = 0; n < 10000; n = n * 3 + 1) {
        FILE *fp = fopen(path, "wb");
        ck_assert_ptr_nonnull(fp);
        for (size_t i = 0; i < n; i++)
            fputc((int)(i * 7 % 251), fp);
        fclose(fp);
        char *d = NULL;
        size_t size = 99;
        tusk_error_t err;
        ck_assert_int_eq(tusk_file_read(path, n, &d, &size, &err), TUSK_OK);
        ck_assert_uint_eq(size, n);
        ck_assert_int_eq(d[n], '\0');
        for (size_t i = 0; i < n; i++)
            ck_assert_int_eq((unsigned char)d[i], i * 7 % 251);
        free(d);
        if (n > 0) {
            ck_assert_int_eq(tusk_file_read(path, n - 1, &d, &size, &err), TUSK_ELIMIT);
            ck_assert_ptr_null(d);
        }
    }
    remove(path);
    char *d = NULL;
    size_t size;
    tusk_error_t err;
    ck_assert_int_eq(tusk_file_read(path, 100, &d, &size, &err), TUSK_EIO);
    ck_assert_int_eq(errno, ENOENT);
    ck_assert_ptr_nonnull(strstr(err.message, "cannot open"));
    tu_remove_dir(dir);
}
END_TEST

/* tusk_mkdir_p_mode: the missing folders with the mode given. */
START_TEST(mkdir_mode)
{
    char dir[512], path[700];
    tu_make_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/p/q", dir);
    mode_t old = umask(022);
    tusk_error_t err;
    ck_assert_msg(tusk_mkdir_p_mode(path, 0700, &err) == TUSK_OK, "%s", err.message);
    umask(old);
    struct stat st;
    ck_assert(stat(path, &st) == 0 && S_ISDIR(st.st_mode));
    ck_assert_uint_eq(st.st_mode & 0777, 0700);
    rmdir(path);
    snprintf(path, sizeof path, "%s/p", dir);
    ck_assert(stat(path, &st) == 0 && (st.st_mode & 0777) == 0700);
    rmdir(path);
    tu_remove_dir(dir);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("base");
    TCase *tc = tcase_create("base");
    tcase_add_test(tc, parse_whole_numbers);
    tcase_add_test(tc, parse_whole_numbers_hex);
    tcase_add_test(tc, parse_real_numbers);
    tcase_add_test(tc, grow_array);
    tcase_add_test(tc, clock_monotonic);
    tcase_add_test(tc, gnuplot_runner);
    tcase_add_test(tc, gnuplot_quoting);
    tcase_add_test(tc, pool_every_item_once);
    tcase_add_test(tc, rng_known_values);
    tcase_add_test(tc, rng_draws);
    tcase_add_test(tc, radix_sort_u64);
    tcase_add_test(tc, mkdir_nested);
    tcase_add_test(tc, cli_set_pairs);
    tcase_add_test(tc, cli_dispatch);
    tcase_add_test(tc, cli_getopt_messages);
    tcase_add_test(tc, cli_without_commands);
    tcase_add_test(tc, file_read_whole);
    tcase_add_test(tc, mkdir_mode);
    tcase_add_test(tc, cli_options_table);
    tcase_add_test(tc, cli_labels_and_keys);
    tcase_add_test(tc, grow_records_by_key);
    tcase_add_test(tc, gather_parts_and_units);
    tcase_add_test(tc, gather_lowest_open_record);
    tcase_add_test(tc, report_folder);
    tcase_add_test(tc, stats_order_of_doubles);
    tcase_add_test(tc, stats_moments);
    tcase_add_test(tc, files_and_script_head);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
