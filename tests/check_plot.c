/* check_plot.c - pictures through gnuplot (detector/plot.h): each function
 * writes a PNG of the right size with its data and script next to it; the
 * data hold what was given; the scripts hold what matters (equal scales,
 * the hit panel); bad names and arguments are refused before anything is
 * written; odd characters in paths reach neither a shell nor gnuplot's
 * command substitution; a missing or failing gnuplot is reported with its
 * exit status, its first message and the script.
 *
 * gnuplot is needed (Debian: apt-get install gnuplot-nox; the CI script
 * installs it): without it the tests that draw fail, and say so. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plot.h"
#include "testutil.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* ---- helpers ----------------------------------------------------------------- */

/* Is there a gnuplot to run ($TUSK_GNUPLOT, else gnuplot on PATH)? */
static bool gnuplot_found(void)
{
    const char *env = getenv("TUSK_GNUPLOT");
    if (env && *env)
        return strchr(env, '/') ? access(env, X_OK) == 0 : true;
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/bin:/bin";
    while (*path) {
        size_t n = strcspn(path, ":");
        char p[4096];
        snprintf(p, sizeof p, "%.*s/gnuplot", (int)n, n ? path : ".");
        if (access(p, X_OK) == 0)
            return true;
        path += n + (path[n] == ':');
    }
    return false;
}

static void need_gnuplot(void)
{
    if (!gnuplot_found())
        ck_abort_msg("gnuplot is not installed, and these tests draw with it: install it "
                     "(Debian: apt-get install gnuplot-nox; tusk.sh and CI do)");
}

static void plot_ok(int rc, const tusk_error_t *err)
{
    if (rc != TUSK_OK)
        ck_abort_msg("plot failed (%d): %s%s", rc, err->message,
                     strstr(err->message, "not found") ? " - install gnuplot-nox" : "");
}

/* PATH with its last 4 characters (".png") replaced by ext. */
static void sibling(char *out, size_t cap, const char *png, const char *ext)
{
    size_t n = strlen(png);
    ck_assert_uint_gt(n, 4);
    ck_assert_int_lt(snprintf(out, cap, "%.*s%s", (int)(n - 4), png, ext), (int)cap);
}

static char *slurp(const char *path, size_t *size)
{
    FILE *fp = fopen(path, "rb");
    ck_assert_msg(fp != NULL, "cannot open %s: %s", path, strerror(errno));
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    ck_assert_ptr_nonnull(buf);
    size_t got;
    while ((got = fread(buf + n, 1, cap - n, fp)) > 0) {
        n += got;
        if (n == cap) {
            cap *= 2;
            buf = realloc(buf, cap + 1);
            ck_assert_ptr_nonnull(buf);
        }
    }
    fclose(fp);
    buf[n] = '\0';
    if (size)
        *size = n;
    return buf;
}

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static size_t count_lines(const char *text, bool (*keep)(const char *line))
{
    size_t n = 0;
    for (const char *p = text; *p;) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        char line[256];
        snprintf(line, sizeof line, "%.*s", (int)(len < 255 ? len : 255), p);
        if (keep(line))
            n++;
        p += len + (e != NULL);
    }
    return n;
}

static bool is_data(const char *line)
{
    return line[0] != '\0' && line[0] != '#';
}

static bool is_index_comment(const char *line)
{
    return strncmp(line, "# index ", 8) == 0;
}

/* A PNG of width x height, and its .dat and .gp next to it, no log left. */
static void assert_picture(const char *png, unsigned width, unsigned height)
{
    size_t n;
    unsigned char *b = (unsigned char *)slurp(png, &n);
    static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    ck_assert_msg(n > 100 && memcmp(b, sig, 8) == 0, "%s is not a PNG (%zu bytes)", png, n);
    ck_assert_msg(memcmp(b + 12, "IHDR", 4) == 0, "%s: no IHDR chunk", png);
    unsigned w = (unsigned)b[16] << 24 | (unsigned)b[17] << 16 | (unsigned)b[18] << 8 | b[19];
    unsigned h = (unsigned)b[20] << 24 | (unsigned)b[21] << 16 | (unsigned)b[22] << 8 | b[23];
    ck_assert_msg(w == width && h == height, "%s is %ux%u, expected %ux%u", png, w, h, width, height);
    free(b);
    char p[4096];
    sibling(p, sizeof p, png, ".dat");
    free(slurp(p, &n));
    ck_assert_msg(n > 0, "%s is empty", p);
    sibling(p, sizeof p, png, ".gp");
    free(slurp(p, &n));
    ck_assert_msg(n > 0, "%s is empty", p);
    sibling(p, sizeof p, png, ".log");
    ck_assert_msg(!exists(p), "%s left behind after a silent success", p);
}

/* The synthetic core weighting potential of a true coax: ln(R/r)/ln(R/rh)
 * over the ring rh < r < R, NaN elsewhere. */
static float *coax_potential(size_t nx, size_t ny, double x0, double y0, double d)
{
    float *v = malloc(nx * ny * sizeof *v);
    ck_assert_ptr_nonnull(v);
    for (size_t j = 0; j < ny; j++)
        for (size_t i = 0; i < nx; i++) {
            double r = hypot(x0 + i * d, y0 + j * d);
            v[j * nx + i] = r > 40 || r < 5 ? NAN : (float)(log(40 / r) / log(8.0));
        }
    return v;
}

static det_crystal_t *default_crystal(void)
{
    det_config_t cfg;
    det_config_default(&cfg);
    det_crystal_t *c = NULL;
    tusk_error_t err;
    ck_assert_msg(det_crystal_new(&c, &cfg, &err) == TUSK_OK, "%s", err.message);
    return c;
}

/* Saves and restores TUSK_GNUPLOT around a test that sets it (Check may
 * run the tests in one process: CK_FORK=no). */
typedef struct env_saved {
    char *value;
    bool had;
} env_saved_t;

static env_saved_t set_gnuplot(const char *value)
{
    env_saved_t s = {NULL, false};
    const char *old = getenv("TUSK_GNUPLOT");
    if (old) {
        s.value = strdup(old);
        s.had = true;
    }
    if (value)
        ck_assert_int_eq(setenv("TUSK_GNUPLOT", value, 1), 0);
    else
        ck_assert_int_eq(unsetenv("TUSK_GNUPLOT"), 0);
    return s;
}

static void restore_gnuplot(env_saved_t *s)
{
    if (s->had)
        setenv("TUSK_GNUPLOT", s->value, 1);
    else
        unsetenv("TUSK_GNUPLOT");
    free(s->value);
}

static int draw_small_map(const char *png, tusk_error_t *err)
{
    float v[6] = {0, 0.5f, 1, 0.25f, NAN, 0.75f};
    return det_plot_map(png, "small", v, 3, 2, 0, 0, 1, 1, "x (mm)", "y (mm)", "V", 2, err);
}

/* ---- maps ----------------------------------------------------------------------- */

START_TEST(map_draws_png_data_and_script)
{
    need_gnuplot();
    char dir[256], png[512];
    tu_make_dir(dir, sizeof dir);
    snprintf(png, sizeof png, "%s/wp_core.png", dir);
    size_t nx = 91, ny = 81;
    float *v = coax_potential(nx, ny, -45, -40, 1.0);
    tusk_error_t err;
    plot_ok(det_plot_map(png, "core weighting potential_{x}", v, nx, ny, -45, -40, 1.0, 1.0, "x (mm)", "y (mm)",
                         "weighting potential", 9, &err),
            &err);
    assert_picture(png, 900, 800);

    char p[600];
    sibling(p, sizeof p, png, ".dat");
    char *dat = slurp(p, NULL);
    ck_assert_uint_eq(count_lines(dat, is_data), nx * ny);
    ck_assert_ptr_nonnull(strstr(dat, " NaN\n"));
    /* (0, 20): ln(2)/ln(8) = 1/3. */
    ck_assert_msg(strstr(dat, "\n0 20 0.333333343\n") != NULL, "the value at (0, 20) is missing");
    free(dat);
    sibling(p, sizeof p, png, ".gp");
    char *gp = slurp(p, NULL);
    ck_assert_ptr_nonnull(strstr(gp, "set size ratio -1"));
    ck_assert_ptr_nonnull(strstr(gp, "with image"));
    ck_assert_ptr_nonnull(strstr(gp, "levels discrete 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9\n"));
    ck_assert_ptr_nonnull(strstr(gp, "set title 'core weighting potential_{x}' noenhanced"));
    ck_assert_ptr_nonnull(strstr(gp, "set cblabel 'weighting potential' noenhanced"));
    ck_assert_ptr_nonnull(strstr(gp, "set output 'wp_core.png'"));
    ck_assert_ptr_null(strstr(gp, dir)); /* names without the folder */
    free(gp);
    free(v);
    tu_remove_dir(dir);
}
END_TEST

START_TEST(map_without_contours_or_values)
{
    need_gnuplot();
    char dir[256], png[512];
    tu_make_dir(dir, sizeof dir);
    tusk_error_t err;
    float v[12];
    /* Constant: no contour can be drawn, the picture still is. */
    for (int k = 0; k < 12; k++)
        v[k] = 0.5f;
    snprintf(png, sizeof png, "%s/constant.png", dir);
    plot_ok(det_plot_map(png, NULL, v, 4, 3, 0, 0, 1, 1, NULL, NULL, NULL, 5, &err), &err);
    assert_picture(png, 900, 800);
    /* Nothing finite at all. */
    for (int k = 0; k < 12; k++)
        v[k] = k % 2 ? NAN : INFINITY;
    snprintf(png, sizeof png, "%s/empty.png", dir);
    plot_ok(det_plot_map(png, "empty", v, 4, 3, 0, 0, 1, 1, "x", "y", "v", 5, &err), &err);
    assert_picture(png, 900, 800);
    char p[600];
    sibling(p, sizeof p, png, ".gp");
    char *gp = slurp(p, NULL);
    ck_assert_ptr_null(strstr(gp, "set contour"));
    ck_assert_ptr_nonnull(strstr(gp, "no finite values"));
    free(gp);
    /* Negative values, no contours asked for. */
    for (int k = 0; k < 12; k++)
        v[k] = (float)(k - 6) * 0.01f;
    snprintf(png, sizeof png, "%s/none.png", dir);
    plot_ok(det_plot_map(png, "t", v, 4, 3, -1.5, -1, 1, 1, "x", "y", "v", 0, &err), &err);
    assert_picture(png, 900, 800);
    tu_remove_dir(dir);
}
END_TEST

START_TEST(map_refuses_bad_arguments)
{
    char dir[256], png[512];
    tu_make_dir(dir, sizeof dir);
    snprintf(png, sizeof png, "%s/m.png", dir);
    float v[4] = {0, 1, 2, 3};
    tusk_error_t err;
    ck_assert_int_eq(det_plot_map(png, "t", NULL, 2, 2, 0, 0, 1, 1, "x", "y", "v", 0, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "no values");
    ck_assert_int_eq(det_plot_map(png, "t", v, 1, 4, 0, 0, 1, 1, "x", "y", "v", 0, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "at least 2 x 2");
    ck_assert_int_eq(det_plot_map(png, "t", v, 2, 2, 0, 0, 0, 1, "x", "y", "v", 0, &err), TUSK_EINVAL);
    ck_assert_int_eq(det_plot_map(png, "t", v, 2, 2, 0, 0, 1, -1, "x", "y", "v", 0, &err), TUSK_EINVAL);
    ck_assert_int_eq(det_plot_map(png, "t", v, 2, 2, NAN, 0, 1, 1, "x", "y", "v", 0, &err), TUSK_EINVAL);
    ck_assert_int_eq(det_plot_map(png, "t", v, 2, 2, 0, 0, 1, 1, "x", "y", "v", 1000, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "contour");
    ck_assert_int_eq(det_plot_map(png, "t", v, SIZE_MAX / 2, 4, 0, 0, 1, 1, "x", "y", "v", 0, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "too many");
    ck_assert(!exists(png));
    tu_remove_dir(dir); /* fails if anything was written */
}
END_TEST

/* ---- names -------------------------------------------------------------------- */

START_TEST(names_must_end_in_png)
{
    char dir[256], png[512];
    tu_make_dir(dir, sizeof dir);
    tusk_error_t err;
    const char *bad[] = {"m.jpg", "m", "m.png.txt", ".png", "m.PNG", "mpng"};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        snprintf(png, sizeof png, "%s/%s", dir, bad[k]);
        ck_assert_int_eq(draw_small_map(png, &err), TUSK_EINVAL);
        tu_assert_error(&err, TUSK_EINVAL, ".png");
    }
    ck_assert_int_eq(draw_small_map(NULL, &err), TUSK_EINVAL);
    ck_assert_int_eq(draw_small_map("", &err), TUSK_EINVAL);
    tu_remove_dir(dir); /* fails if anything was written */
}
END_TEST

START_TEST(names_with_quotes_or_line_breaks_are_refused)
{
    char dir[256], png[512];
    tu_make_dir(dir, sizeof dir);
    tusk_error_t err;
    det_crystal_t *c = default_crystal();
    float tr[37 * 4] = {0};
    size_t len = 1;
    double pt[3] = {10, 0, 20};
    const double *xyz[1] = {pt};
    snprintf(png, sizeof png, "%s/it's.png", dir);
    ck_assert_int_eq(draw_small_map(png, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "single quote");
    ck_assert_int_eq(det_plot_paths(png, "p", c, 'z', 1, &len, xyz, "e", &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "single quote");
    ck_assert_int_eq(det_plot_traces(png, "t", c, tr, 4, 10, 0, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "single quote");
    snprintf(png, sizeof png, "%s/two\nlines.png", dir);
    ck_assert_int_eq(draw_small_map(png, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "line break");
    det_crystal_destroy(&c);
    tu_remove_dir(dir); /* fails if anything was written */
}
END_TEST

/* Spaces, shell and gnuplot metacharacters (backquotes are gnuplot's
 * command substitution, @ its macros) are only characters. */
START_TEST(odd_characters_in_names_are_harmless)
{
    need_gnuplot();
    char dir[256], png[512], probe[512];
    tu_make_dir(dir, sizeof dir);
    snprintf(png, sizeof png, "%s/a b $(touch x1) `touch x2` @m; \"q\" \\n #c.png", dir);
    tusk_error_t err;
    plot_ok(draw_small_map(png, &err), &err);
    assert_picture(png, 900, 800);
    snprintf(probe, sizeof probe, "%s/x1", dir);
    ck_assert(!exists(probe));
    snprintf(probe, sizeof probe, "%s/x2", dir);
    ck_assert(!exists(probe));
    ck_assert(!exists("x1") && !exists("x2"));
    /* Titles and labels, too. */
    float v[4] = {0, 1, 2, 3};
    snprintf(png, sizeof png, "%s/labels.png", dir);
    plot_ok(det_plot_map(png, "it's `touch x3` @m", v, 2, 2, 0, 0, 1, 1, "a'b", "c\nd", "e\\f", 0, &err), &err);
    assert_picture(png, 900, 800);
    snprintf(probe, sizeof probe, "%s/x3", dir);
    ck_assert(!exists(probe) && !exists("x3"));
    char p[600];
    sibling(p, sizeof p, png, ".gp");
    char *gp = slurp(p, NULL);
    ck_assert_ptr_nonnull(strstr(gp, "set title 'it''s `touch x3` @m' noenhanced"));
    ck_assert_ptr_nonnull(strstr(gp, "set ylabel 'c d' noenhanced"));
    free(gp);
    tu_remove_dir(dir);
}
END_TEST

/* A relative name is drawn where it says, relative to the current folder,
 * and a relative TUSK_GNUPLOT is found although gnuplot runs elsewhere. */
START_TEST(relative_names)
{
    need_gnuplot();
    char dir[256], sub[300], old[4096], wrapper[300];
    ck_assert_ptr_nonnull(getcwd(old, sizeof old));
    tu_make_dir(dir, sizeof dir);
    snprintf(sub, sizeof sub, "%s/sub", dir);
    ck_assert_int_eq(mkdir(sub, 0755), 0);
    ck_assert_int_eq(chdir(dir), 0);
    tusk_error_t err;
    plot_ok(draw_small_map("here.png", &err), &err);
    assert_picture("here.png", 900, 800);
    /* A wrapper that runs the real gnuplot and leaves a mark. */
    const char *real = getenv("TUSK_GNUPLOT");
    snprintf(wrapper, sizeof wrapper, "%s/gp.sh", dir);
    FILE *fp = fopen(wrapper, "w");
    ck_assert_ptr_nonnull(fp);
    fprintf(fp, "#!/bin/sh\necho ran > wrapper-ran\nexec '%s' \"$@\"\n", real && *real ? real : "gnuplot");
    fclose(fp);
    ck_assert_int_eq(chmod(wrapper, 0755), 0);
    env_saved_t saved = set_gnuplot("./gp.sh");
    plot_ok(draw_small_map("sub/there.png", &err), &err);
    restore_gnuplot(&saved);
    assert_picture("sub/there.png", 900, 800);
    ck_assert(exists("sub/wrapper-ran")); /* it ran in the picture's folder */
    char *gp = slurp("sub/there.gp", NULL);
    ck_assert_ptr_nonnull(strstr(gp, "'there.dat'"));
    free(gp);
    ck_assert_int_eq(chdir(old), 0);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "%s/sub", dir);
    tu_remove_dir(cmd);
    tu_remove_dir(dir);
}
END_TEST

/* ---- running gnuplot -------------------------------------------------------------- */

START_TEST(gnuplot_not_found)
{
    char dir[256], png[512], gp[600], dat[600];
    tu_make_dir(dir, sizeof dir);
    snprintf(png, sizeof png, "%s/m.png", dir);
    sibling(gp, sizeof gp, png, ".gp");
    sibling(dat, sizeof dat, png, ".dat");
    env_saved_t saved = set_gnuplot("/nonexistent");
    tusk_error_t err;
    int rc = draw_small_map(png, &err);
    restore_gnuplot(&saved);
    ck_assert_int_eq(rc, TUSK_EIO);
    tu_assert_error(&err, TUSK_EIO, "gnuplot not found");
    tu_assert_error(&err, TUSK_EIO, "gnuplot-nox");
    tu_assert_error(&err, TUSK_EIO, gp);
    tu_assert_error(&err, TUSK_EIO, "/nonexistent");
    /* The script and the data stay for drawing by hand. */
    ck_assert(exists(gp) && exists(dat) && !exists(png));
    tu_remove_dir(dir);
}
END_TEST

START_TEST(gnuplot_exit_status)
{
    char dir[256], png[512], gp[600];
    tu_make_dir(dir, sizeof dir);
    snprintf(png, sizeof png, "%s/m.png", dir);
    sibling(gp, sizeof gp, png, ".gp");
    env_saved_t saved = set_gnuplot("/bin/false");
    tusk_error_t err;
    int rc = draw_small_map(png, &err);
    restore_gnuplot(&saved);
    ck_assert_int_eq(rc, TUSK_EIO);
    tu_assert_error(&err, TUSK_EIO, "gnuplot (/bin/false) failed with exit status 1");
    tu_assert_error(&err, TUSK_EIO, gp);
    tu_remove_dir(dir);
}
END_TEST

/* A failing gnuplot's telling line reaches the message, and an old picture
 * of the same name does not pass for a new one. */
START_TEST(gnuplot_failure_message)
{
    char dir[256], png[512], gp[600], tool[300], log[600];
    tu_make_dir(dir, sizeof dir);
    snprintf(png, sizeof png, "%s/m.png", dir);
    sibling(gp, sizeof gp, png, ".gp");
    sibling(log, sizeof log, png, ".log");
    snprintf(tool, sizeof tool, "%s/fake gnuplot", dir);
    FILE *fp = fopen(tool, "w");
    ck_assert_ptr_nonnull(fp);
    fputs("#!/bin/sh\necho 'some chatter' >&2\necho '\"./m.gp\" line 7: undefined variable: foo' >&2\nexit 3\n", fp);
    fclose(fp);
    ck_assert_int_eq(chmod(tool, 0755), 0);
    fp = fopen(png, "w");
    ck_assert_ptr_nonnull(fp);
    fputs("an old picture", fp);
    fclose(fp);

    env_saved_t saved = set_gnuplot(tool);
    tusk_error_t err;
    int rc = draw_small_map(png, &err);
    ck_assert_int_eq(rc, TUSK_EIO);
    tu_assert_error(&err, TUSK_EIO, "exit status 3");
    tu_assert_error(&err, TUSK_EIO, "line 7: undefined variable: foo");
    tu_assert_error(&err, TUSK_EIO, gp);
    tu_assert_error(&err, TUSK_EIO, log);
    ck_assert(!exists(png));
    ck_assert(exists(log));

    /* Exit 0 without a picture is no success either. */
    ck_assert_int_eq(setenv("TUSK_GNUPLOT", "/bin/true", 1), 0);
    rc = draw_small_map(png, &err);
    restore_gnuplot(&saved);
    ck_assert_int_eq(rc, TUSK_EIO);
    tu_assert_error(&err, TUSK_EIO, "wrote no picture");
    tu_remove_dir(dir);
}
END_TEST

/* ---- drift paths ------------------------------------------------------------------ */

typedef struct paths {
    size_t n;
    size_t lens[24];
    double *xyz[24];
    char kinds[24];
} paths_t;

/* Electrons towards the core, holes out to the mantle, from 12 points. */
static void make_paths(paths_t *p)
{
    p->n = 24;
    for (int k = 0; k < 12; k++) {
        double a = k * M_PI / 6 + 0.2, r0 = 12 + 2.3 * k, z0 = 15 + 5.5 * k;
        for (int h = 0; h < 2; h++) {
            int q = 2 * k + h;
            size_t n = 20 + (size_t)k;
            p->kinds[q] = h ? 'h' : 'e';
            p->lens[q] = n;
            p->xyz[q] = malloc(3 * n * sizeof(double));
            ck_assert_ptr_nonnull(p->xyz[q]);
            for (size_t s = 0; s < n; s++) {
                double t = (double)s / (double)(n - 1), r = r0 + ((h ? 40 : 5) - r0) * t;
                p->xyz[q][3 * s + 0] = r * cos(a);
                p->xyz[q][3 * s + 1] = r * sin(a);
                p->xyz[q][3 * s + 2] = z0 + (h ? 3 : -2) * t * t;
            }
        }
    }
}

static void free_paths(paths_t *p)
{
    for (size_t k = 0; k < p->n; k++)
        free(p->xyz[k]);
}

START_TEST(paths_in_both_projections)
{
    need_gnuplot();
    char dir[256], png[512], p[600];
    tu_make_dir(dir, sizeof dir);
    det_crystal_t *c = default_crystal();
    paths_t pa;
    make_paths(&pa);
    size_t points = 0;
    for (size_t k = 0; k < pa.n; k++)
        points += pa.lens[k];
    tusk_error_t err;

    snprintf(png, sizeof png, "%s/paths z.png", dir);
    plot_ok(det_plot_paths(png, "drift paths", c, 'z', pa.n, pa.lens, (const double *const *)pa.xyz, pa.kinds, &err),
            &err);
    assert_picture(png, 1150, 900);
    sibling(p, sizeof p, png, ".dat");
    char *dat = slurp(p, NULL);
    /* Outline (2 circles of 361), 6 sector boundaries of 2, the paths, a
     * start point per path. */
    ck_assert_uint_eq(count_lines(dat, is_data), 2 * 361 + 6 * 2 + points + pa.n);
    ck_assert_uint_eq(count_lines(dat, is_index_comment), 5);
    free(dat);
    sibling(p, sizeof p, png, ".gp");
    char *gp = slurp(p, NULL);
    ck_assert_ptr_nonnull(strstr(gp, "set size ratio -1"));
    ck_assert_ptr_nonnull(strstr(gp, "title 'electrons'"));
    ck_assert_ptr_nonnull(strstr(gp, "title 'holes'"));
    ck_assert_ptr_nonnull(strstr(gp, "set xlabel 'x (mm)'"));
    ck_assert_ptr_nonnull(strstr(gp, "'F' at"));
    ck_assert_ptr_nonnull(strstr(gp, "title 'sector boundaries'"));
    free(gp);

    snprintf(png, sizeof png, "%s/paths_r.png", dir);
    plot_ok(det_plot_paths(png, "drift paths", c, 'r', pa.n, pa.lens, (const double *const *)pa.xyz, pa.kinds, &err),
            &err);
    assert_picture(png, 1300, 800);
    sibling(p, sizeof p, png, ".dat");
    dat = slurp(p, NULL);
    /* The half section: 6 corners from the axis round to the hole bottom;
     * the first ring boundary at z = 8 runs from the axis, the later ones
     * (behind the hole's end at 13) from the hole wall. */
    ck_assert_ptr_nonnull(strstr(dat, "0 0\n0 40\n90 40\n90 5\n13 5\n13 0\n"));
    ck_assert_ptr_nonnull(strstr(dat, "8 0\n8 40\n"));
    ck_assert_ptr_nonnull(strstr(dat, "21 5\n21 40\n"));
    /* The first path's start: r = 12, z = 15. */
    ck_assert_ptr_nonnull(strstr(dat, "# path 0\n15 12\n"));
    free(dat);
    sibling(p, sizeof p, png, ".gp");
    gp = slurp(p, NULL);
    ck_assert_ptr_nonnull(strstr(gp, "set xlabel 'z (mm)"));
    ck_assert_ptr_nonnull(strstr(gp, "set ylabel 'r (mm)'"));
    ck_assert_ptr_nonnull(strstr(gp, "'ring 1'"));
    ck_assert_ptr_nonnull(strstr(gp, "title 'ring boundaries'"));
    free(gp);

    /* Electrons only, and no paths at all. */
    for (size_t k = 0; k < pa.n; k++)
        pa.kinds[k] = 'e';
    snprintf(png, sizeof png, "%s/electrons.png", dir);
    plot_ok(det_plot_paths(png, NULL, c, 'z', pa.n, pa.lens, (const double *const *)pa.xyz, pa.kinds, &err), &err);
    assert_picture(png, 1150, 900);
    sibling(p, sizeof p, png, ".gp");
    gp = slurp(p, NULL);
    ck_assert_ptr_null(strstr(gp, "'holes'"));
    free(gp);
    snprintf(png, sizeof png, "%s/outline.png", dir);
    plot_ok(det_plot_paths(png, "outline", c, 'r', 0, NULL, NULL, NULL, &err), &err);
    assert_picture(png, 1300, 800);

    free_paths(&pa);
    det_crystal_destroy(&c);
    tu_remove_dir(dir);
}
END_TEST

START_TEST(paths_refuse_bad_arguments)
{
    char dir[256], png[512];
    tu_make_dir(dir, sizeof dir);
    snprintf(png, sizeof png, "%s/p.png", dir);
    det_crystal_t *c = default_crystal();
    double pt[6] = {10, 0, 20, 11, 0, 20};
    const double *xyz[2] = {pt, NULL};
    size_t lens[2] = {2, 0};
    tusk_error_t err;
    ck_assert_int_eq(det_plot_paths(png, "p", NULL, 'z', 1, lens, xyz, "e", &err), TUSK_EINVAL);
    ck_assert_int_eq(det_plot_paths(png, "p", c, 'x', 1, lens, xyz, "e", &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "projection 'x'");
    ck_assert_int_eq(det_plot_paths(png, "p", c, 'z', 1, lens, xyz, "p", &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "kind 'p'");
    ck_assert_int_eq(det_plot_paths(png, "p", c, 'z', 1, NULL, xyz, "e", &err), TUSK_EINVAL);
    lens[1] = 1;
    ck_assert_int_eq(det_plot_paths(png, "p", c, 'z', 2, lens, xyz, "eh", &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "path 1");
    lens[1] = 0;
    pt[4] = NAN;
    ck_assert_int_eq(det_plot_paths(png, "p", c, 'r', 2, lens, xyz, "eh", &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "path 0, point 1");
    det_crystal_destroy(&c);
    tu_remove_dir(dir); /* fails if anything was written */
}
END_TEST

/* ---- traces ------------------------------------------------------------------------- */

/* Rising edges on the hit segment and the core, small transients with
 * both signs on the neighbours. */
static float *make_traces(const det_crystal_t *c, unsigned samples, int hit)
{
    unsigned e_n = det_crystal_electrodes(c), sectors = det_crystal_config(c)->sectors;
    float *t = calloc((size_t)e_n * samples, sizeof *t);
    ck_assert_ptr_nonnull(t);
    for (unsigned e = 0; e < e_n; e++)
        for (unsigned s = 0; s < samples; s++) {
            double x = (s * 10.0 - 100) / 250;
            double edge = x < 0 ? 0 : x > 1 ? 1 : x * x * (3 - 2 * x);
            double v;
            if ((int)e == hit || e == det_crystal_core(c)) {
                v = edge;
            } else {
                int d = abs((int)(e / sectors) - hit / (int)sectors) + abs((int)(e % sectors) - hit % (int)sectors);
                v = (d == 1 ? 0.15 : 0.02) * sin(M_PI * edge) * (e % 2 ? 1 : -1);
            }
            t[(size_t)e * samples + s] = (float)v;
        }
    return t;
}

START_TEST(traces_draw_all_electrodes)
{
    need_gnuplot();
    char dir[256], png[512], p[600];
    tu_make_dir(dir, sizeof dir);
    snprintf(png, sizeof png, "%s/traces.png", dir);
    det_crystal_t *c = default_crystal();
    unsigned samples = 60, hit = 14; /* C3 */
    float *t = make_traces(c, samples, (int)hit);
    t[5 * samples + 7] = -0.4f; /* the lowest value anywhere */
    t[samples + 3] = NAN;       /* drawn as a gap */
    tusk_error_t err;
    plot_ok(det_plot_traces(png, "traces of a point in C3", c, t, samples, 10.0, (int)hit, &err), &err);
    assert_picture(png, 1400, 1000);

    sibling(p, sizeof p, png, ".dat");
    char *dat = slurp(p, NULL);
    ck_assert_uint_eq(count_lines(dat, is_index_comment), 37);
    ck_assert_uint_eq(count_lines(dat, is_data), 37 * samples);
    ck_assert_ptr_nonnull(strstr(dat, "# index 14: C3\n"));
    ck_assert_ptr_nonnull(strstr(dat, "# index 36: CC\n"));
    ck_assert_ptr_nonnull(strstr(dat, "\n590 1\n")); /* time in ns */
    ck_assert_ptr_nonnull(strstr(dat, "\n30 NaN\n"));
    ck_assert_ptr_null(strstr(dat, "\n\n\n\n")); /* data sets counted right */
    free(dat);
    sibling(p, sizeof p, png, ".gp");
    char *gp = slurp(p, NULL);
    ck_assert_ptr_nonnull(strstr(gp, "'C3 (hit)'"));
    ck_assert_ptr_nonnull(strstr(gp, "'A1', 'A2', 'A3'")); /* AGATA order: sector, then ring */
    ck_assert_ptr_nonnull(strstr(gp, "'CC (core)']"));
    ck_assert_ptr_nonnull(strstr(gp, "hit = 14 "));
    ck_assert_ptr_nonnull(strstr(gp, "set multiplot"));
    /* The common scale: -0.4 .. 1 and 6 % either side. */
    ck_assert_ptr_nonnull(strstr(gp, "ylo = -0.484\n"));
    ck_assert_ptr_nonnull(strstr(gp, "yhi = 1.084\n"));
    ck_assert_ptr_nonnull(strstr(gp, "tmax = 590\n"));
    free(gp);

    /* No hit, and all traces flat. */
    memset(t, 0, 37 * samples * sizeof *t);
    snprintf(png, sizeof png, "%s/flat.png", dir);
    plot_ok(det_plot_traces(png, NULL, c, t, samples, 4.0, -1, &err), &err);
    assert_picture(png, 1400, 1000);
    sibling(p, sizeof p, png, ".gp");
    gp = slurp(p, NULL);
    ck_assert_ptr_null(strstr(gp, "(hit)"));
    free(gp);
    free(t);
    det_crystal_destroy(&c);
    tu_remove_dir(dir);
}
END_TEST

START_TEST(traces_refuse_bad_arguments)
{
    char dir[256], png[512];
    tu_make_dir(dir, sizeof dir);
    snprintf(png, sizeof png, "%s/t.png", dir);
    det_crystal_t *c = default_crystal();
    float t[37 * 4] = {0};
    tusk_error_t err;
    ck_assert_int_eq(det_plot_traces(png, "t", NULL, t, 4, 10, 0, &err), TUSK_EINVAL);
    ck_assert_int_eq(det_plot_traces(png, "t", c, NULL, 4, 10, 0, &err), TUSK_EINVAL);
    ck_assert_int_eq(det_plot_traces(png, "t", c, t, 1, 10, 0, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "at least 2");
    ck_assert_int_eq(det_plot_traces(png, "t", c, t, 4, 0, 0, &err), TUSK_EINVAL);
    ck_assert_int_eq(det_plot_traces(png, "t", c, t, 4, NAN, 0, &err), TUSK_EINVAL);
    ck_assert_int_eq(det_plot_traces(png, "t", c, t, 4, 10, 36, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "hit segment 36");
    det_crystal_destroy(&c);
    tu_remove_dir(dir); /* fails if anything was written */
}
END_TEST

int main(void)
{
    Suite *s = suite_create("plot");
    TCase *tc = tcase_create("maps");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, map_draws_png_data_and_script);
    tcase_add_test(tc, map_without_contours_or_values);
    tcase_add_test(tc, map_refuses_bad_arguments);
    suite_add_tcase(s, tc);
    tc = tcase_create("names");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, names_must_end_in_png);
    tcase_add_test(tc, names_with_quotes_or_line_breaks_are_refused);
    tcase_add_test(tc, odd_characters_in_names_are_harmless);
    tcase_add_test(tc, relative_names);
    suite_add_tcase(s, tc);
    tc = tcase_create("gnuplot");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, gnuplot_not_found);
    tcase_add_test(tc, gnuplot_exit_status);
    tcase_add_test(tc, gnuplot_failure_message);
    suite_add_tcase(s, tc);
    tc = tcase_create("paths");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, paths_in_both_projections);
    tcase_add_test(tc, paths_refuse_bad_arguments);
    suite_add_tcase(s, tc);
    tc = tcase_create("traces");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, traces_draw_all_electrodes);
    tcase_add_test(tc, traces_refuse_bad_arguments);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
