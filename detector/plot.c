/* plot.c - pictures through gnuplot (see plot.h).
 *
 * Files. For a picture P = FOLDER/NAME.png every function writes, next to
 * it, FOLDER/NAME.dat (the numbers, commented) and FOLDER/NAME.gp (the
 * script), then runs gnuplot on the script with FOLDER as its working
 * folder; gnuplot's stdout and stderr go to FOLDER/NAME.log, which is
 * removed again when gnuplot succeeded without a word. The script names
 * its files without the folder, so the three files can be moved together
 * and the picture restyled and redrawn by hand:
 *     cd FOLDER && gnuplot NAME.gp
 *
 * Quoting. File names go into the script as single-quoted gnuplot
 * strings, in which only the quote itself is special (no backquote
 * command substitution, no @macros, no backslash escapes); a path with a
 * single quote or a line break is refused (TUSK_EINVAL). Caller text
 * (titles, axis labels) is quoted the same way, its quotes doubled and its
 * control characters turned into spaces, and drawn `noenhanced`, so that
 * '_', '^' or '{' show as typed.
 *
 * Running: tusk's one gnuplot runner (base/gnuplot.h): no shell, a
 * missing gnuplot or a failure reported with the log's most telling line,
 * the script and the log.
 *
 * Numbers are written in the "C" locale whatever the caller's (uselocale,
 * per thread), since gnuplot reads '.' as the decimal sign. The library
 * keeps no state, prints nothing and never exits. */
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/gnuplot.h"
#include "plot.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* Electrons and holes in Okabe-Ito blue and vermilion (told apart with
 * colour-blindness too); traces dark blue, the hit segment red. */
#define COLOUR_ELECTRON "#0072b2"
#define COLOUR_HOLE "#d55e00"
#define COLOUR_TRACE "#1f4e9a"
#define COLOUR_HIT "#c0392b"

#define MAX_CONTOURS 100

/* ---- files ------------------------------------------------------------------ */

typedef struct plot_files {
    const char *png; /* as given */
    char *dir;       /* the picture's folder; NULL: the current one */
    char *name;      /* NAME (no folder, no .png) */
    char *dat, *gp, *log;
    char *gp_name, *log_name; /* NAME.gp, NAME.log: in the picture's folder */
} plot_files_t;

static char *join(const char *a, size_t alen, const char *b)
{
    size_t blen = strlen(b);
    char *s = malloc(alen + blen + 1);
    if (s) {
        memcpy(s, a, alen);
        memcpy(s + alen, b, blen + 1);
    }
    return s;
}

static void files_free(plot_files_t *f)
{
    free(f->dir);
    free(f->name);
    free(f->dat);
    free(f->gp);
    free(f->log);
    free(f->gp_name);
    free(f->log_name);
    memset(f, 0, sizeof *f);
}

static int files_init(plot_files_t *f, const char *png, tusk_error_t *err)
{
    memset(f, 0, sizeof *f);
    if (!png || !*png)
        return tusk_error_set(err, TUSK_EINVAL, "plot: no file name for the picture");
    size_t len = strlen(png);
    if (len < 4 || strcmp(png + len - 4, ".png") != 0)
        return tusk_error_set(err, TUSK_EINVAL, "plot: '%s': the picture's name must end in .png", png);
    int st = tusk_gnuplot_check_path("plot", png, err);
    if (st != TUSK_OK)
        return st;
    const char *slash = strrchr(png, '/');
    const char *base = slash ? slash + 1 : png;
    size_t stem = strlen(base) - 4;
    if (stem == 0)
        return tusk_error_set(err, TUSK_EINVAL, "plot: '%s': no name before .png", png);
    f->png = png;
    if (slash)
        f->dir = join(png, slash == png ? 1 : (size_t)(slash - png), "");
    f->name = join(base, stem, "");
    f->dat = join(png, len - 4, ".dat");
    f->gp = join(png, len - 4, ".gp");
    f->log = join(png, len - 4, ".log");
    f->gp_name = f->name ? join(f->name, stem, ".gp") : NULL;
    f->log_name = f->name ? join(f->name, stem, ".log") : NULL;
    if ((slash && !f->dir) || !f->name || !f->dat || !f->gp || !f->log || !f->gp_name || !f->log_name) {
        files_free(f);
        return tusk_error_set(err, TUSK_ENOMEM, "plot: out of memory");
    }
    return TUSK_OK;
}

static int open_out(FILE **fp, const char *path, tusk_error_t *err)
{
    *fp = fopen(path, "w");
    if (!*fp)
        return tusk_error_set(err, TUSK_EIO, "plot: cannot write %s: %s", path, strerror(errno));
    return TUSK_OK;
}

static int close_out(FILE *fp, const char *path, tusk_error_t *err)
{
    int bad = ferror(fp);
    int e = bad ? EIO : 0;
    if (fclose(fp) != 0) {
        bad = 1;
        e = errno;
    }
    if (bad)
        return tusk_error_set(err, TUSK_EIO, "plot: cannot write %s: %s", path, strerror(e));
    return TUSK_OK;
}

/* ---- script pieces ------------------------------------------------------------ */

/* "set WHAT 'text' noenhanced EXTRA", when there is text. */
static void put_text(FILE *fp, const char *what, const char *text, const char *extra)
{
    if (!text || !*text)
        return;
    fprintf(fp, "set %s ", what);
    tusk_gnuplot_quote(fp, text);
    fprintf(fp, " noenhanced%s%s\n", extra && *extra ? " " : "", extra ? extra : "");
}

/* A file of this picture, by its name in the picture's folder. */
static void put_file(FILE *fp, const plot_files_t *f, const char *ext)
{
    fputc('\'', fp);
    fputs(f->name, fp);
    fputs(ext, fp);
    fputc('\'', fp);
}

static void put_header(FILE *fp, const plot_files_t *f, const char *what, int width, int height, int font)
{
    fprintf(fp,
            "# %s - written by tusk (detector/plot.c); the data are in %s.dat.\n"
            "# Redraw by hand: cd to this folder, then: gnuplot %s.gp\n"
            "set encoding utf8\n"
            "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
            "    set terminal pngcairo enhanced size %d,%d font 'Sans,%d' linewidth 1.2\n"
            "} else {\n"
            "    set terminal png enhanced size %d,%d font 'Sans,%d'\n"
            "}\n"
            "set output ",
            what, f->name, f->name, width, height, font, width, height, font);
    put_file(fp, f, ".png");
    fputs("\n", fp);
}

/* A step of 1, 2 or 5 times a power of ten, about span / n. */
static double nice_step(double span, int n)
{
    if (!(span > 0) || !isfinite(span))
        return 1.0;
    double raw = span / n;
    double p = pow(10.0, floor(log10(raw)));
    double m = raw / p;
    return (m < 1.5 ? 1.0 : m < 3.5 ? 2.0 : m < 7.5 ? 5.0 : 10.0) * p;
}

/* ---- running gnuplot ----------------------------------------------------------- */

static int run_gnuplot(const plot_files_t *f, tusk_error_t *err)
{
    const char *pictures[] = {f->png, NULL};
    return tusk_gnuplot_run(f->dir, f->gp_name, f->log_name, pictures, err);
}

/* Write the data and the script in the "C" locale, then draw. */
typedef int (*write_fn)(const plot_files_t *f, const void *arg, tusk_error_t *err);

static int draw(const char *png, write_fn write_data, write_fn write_script, const void *arg, tusk_error_t *err)
{
    plot_files_t f;
    int st = files_init(&f, png, err);
    if (st)
        return st;
    locale_t old, c = tusk_c_numeric_begin(&old);
    if (c == (locale_t)0) {
        files_free(&f);
        return tusk_error_set(err, TUSK_ENOMEM, "plot: cannot make the C locale: %s", strerror(errno));
    }
    st = write_data(&f, arg, err);
    if (!st)
        st = write_script(&f, arg, err);
    tusk_c_numeric_end(c, old);
    if (!st)
        st = run_gnuplot(&f, err);
    files_free(&f);
    return st;
}

/* ---- maps ------------------------------------------------------------------------ */

typedef struct map_args {
    const char *title, *xlabel, *ylabel, *cblabel;
    const float *values;
    size_t nx, ny;
    double x0, y0, dx, dy;
    unsigned contours;
    double vmin, vmax; /* over the finite values */
    size_t finite;
} map_args_t;

static int map_data(const plot_files_t *f, const void *arg, tusk_error_t *err)
{
    const map_args_t *a = arg;
    FILE *fp;
    int st = open_out(&fp, f->dat, err);
    if (st)
        return st;
    fprintf(fp,
            "# tusk map: %zu x %zu cells, x = %.9g + i * %.9g, y = %.9g + j * %.9g (cell centres)\n"
            "# columns: x y value; one block per row (constant y); NaN: no value (drawn blank)\n",
            a->nx, a->ny, a->x0, a->dx, a->y0, a->dy);
    for (size_t j = 0; j < a->ny; j++) {
        double y = a->y0 + (double)j * a->dy;
        for (size_t i = 0; i < a->nx; i++) {
            float v = a->values[j * a->nx + i];
            double x = a->x0 + (double)i * a->dx;
            if (isfinite(v))
                fprintf(fp, "%.9g %.9g %.9g\n", x, y, (double)v);
            else
                fprintf(fp, "%.9g %.9g NaN\n", x, y);
        }
        fputc('\n', fp);
    }
    return close_out(fp, f->dat, err);
}

static void put_viridis(FILE *fp)
{
    fputs("set palette defined (0 '#440154', 1 '#482878', 2 '#3e4989', 3 '#31688e', 4 '#26828e', \\\n"
          "                     5 '#1f9e89', 6 '#35b779', 7 '#6ece58', 8 '#b5de2b', 9 '#fde725')\n",
          fp);
}

static int map_script(const plot_files_t *f, const void *arg, tusk_error_t *err)
{
    const map_args_t *a = arg;
    FILE *fp;
    int st = open_out(&fp, f->gp, err);
    if (st)
        return st;
    put_header(fp, f, "a map", 900, 800, 16);
    put_text(fp, "title", a->title, "font ',18'");
    put_text(fp, "xlabel", a->xlabel, NULL);
    put_text(fp, "ylabel", a->ylabel, NULL);
    put_text(fp, "cblabel", a->cblabel, "offset 1,0");
    /* '%g': 0.2, not 0.2000000, so the colour bar's labels fit. */
    fputs("set format cb '%g'\n", fp);
    double xlo = a->x0 - 0.5 * a->dx, xhi = a->x0 + ((double)a->nx - 0.5) * a->dx;
    double ylo = a->y0 - 0.5 * a->dy, yhi = a->y0 + ((double)a->ny - 0.5) * a->dy;
    double cmin = 0, cmax = 1;
    if (a->finite) {
        cmin = a->vmin;
        cmax = a->vmax;
        if (!(cmax > cmin)) {
            double pad = cmin != 0 ? 0.05 * fabs(cmin) : 0.5;
            cmin -= pad;
            cmax += pad;
        }
    }
    fprintf(fp,
            "set size ratio -1            # equal scales on x and y\n"
            "set xrange [%.9g:%.9g]\n"
            "set yrange [%.9g:%.9g]\n"
            "set cbrange [%.9g:%.9g]\n"
            "set tics out nomirror\n"
            "set mxtics 2\n"
            "set mytics 2\n"
            "set border lw 1.2\n",
            xlo, xhi, ylo, yhi, cmin, cmax);
    put_viridis(fp);
    if (!a->finite)
        fputs("set label 1 'no finite values' at graph 0.5, graph 0.5 center font ',16'\n", fp);
    /* Contours: `contours` levels a step apart, the step (range /
     * (contours + 1)) rounded to two digits and the levels on its
     * multiples: 0.1 .. 0.9 for 9 levels over 0.0003 .. 0.9997. */
    double step = 0, first = 0;
    unsigned n = 0;
    if (a->contours > 0 && a->finite > 0 && a->vmax > a->vmin) {
        step = (a->vmax - a->vmin) / (a->contours + 1);
        double p = pow(10.0, floor(log10(step)));
        step = round(step / p * 10) / 10 * p;
        first = (floor(a->vmin / step) + 1) * step;
        while (n < a->contours && first + n * step < a->vmax)
            n++;
    }
    if (n > 0) {
        fputs("# contour lines at evenly spaced levels, traced by splot into a data block\n"
              "set contour base\n"
              "unset surface\n"
              "set cntrparam linear\n"
              "set cntrparam levels discrete ",
              fp);
        for (unsigned k = 0; k < n; k++)
            fprintf(fp, "%s%.6g", k ? ", " : "", first + k * step);
        fputs("\nset table $contours\n"
              "splot ",
              fp);
        put_file(fp, f, ".dat");
        fputs(" using 1:2:3 with lines notitle\n"
              "unset table\n"
              "unset contour\n"
              "set surface\n"
              "set key below samplen 3 height 0.8\n",
              fp);
        fprintf(fp, "plot ");
        put_file(fp, f, ".dat");
        fprintf(fp,
                " using 1:2:3 with image notitle, \\\n"
                "     $contours using 1:2 with lines lc rgb '#ffffff' lw 1 \\\n"
                "     title sprintf('white lines: contours from %%g to %%g, step %%g', %.6g, %.6g, %.6g)\n",
                first, first + (n - 1) * step, step);
    } else {
        fputs("plot ", fp);
        put_file(fp, f, ".dat");
        fputs(" using 1:2:3 with image notitle\n", fp);
    }
    return close_out(fp, f->gp, err);
}

int det_plot_map(const char *png, const char *title, const float *values, size_t nx, size_t ny, double x0, double y0,
                 double dx, double dy, const char *xlabel, const char *ylabel, const char *cblabel, unsigned contours,
                 tusk_error_t *err)
{
    if (!values)
        return tusk_error_set(err, TUSK_EINVAL, "plot map: no values");
    if (nx < 2 || ny < 2)
        return tusk_error_set(err, TUSK_EINVAL, "plot map: %zu x %zu cells; a map needs at least 2 x 2", nx, ny);
    if (nx > SIZE_MAX / sizeof(float) / ny)
        return tusk_error_set(err, TUSK_EINVAL, "plot map: %zu x %zu cells is too many", nx, ny);
    if (!isfinite(x0) || !isfinite(y0) || !isfinite(dx) || !isfinite(dy) || !(dx > 0) || !(dy > 0))
        return tusk_error_set(err, TUSK_EINVAL,
                              "plot map: origin (%g, %g) and steps (%g, %g) must be finite, the steps positive", x0,
                              y0, dx, dy);
    if (contours > MAX_CONTOURS)
        return tusk_error_set(err, TUSK_EINVAL, "plot map: %u contour levels (at most %d)", contours, MAX_CONTOURS);
    map_args_t a = {.title = title, .xlabel = xlabel, .ylabel = ylabel, .cblabel = cblabel, .values = values,
                    .nx = nx, .ny = ny, .x0 = x0, .y0 = y0, .dx = dx, .dy = dy, .contours = contours};
    for (size_t k = 0; k < nx * ny; k++) {
        double v = values[k];
        if (!isfinite(v))
            continue;
        if (!a.finite || v < a.vmin)
            a.vmin = v;
        if (!a.finite || v > a.vmax)
            a.vmax = v;
        a.finite++;
    }
    return draw(png, map_data, map_script, &a, err);
}

/* ---- drift paths ------------------------------------------------------------------- */

typedef struct paths_args {
    const char *title;
    const det_config_t *cfg;
    char projection;
    size_t npaths;
    const size_t *lens;
    const double *const *xyz;
    const char *kinds;
    size_t electrons, holes; /* paths with points */
} paths_args_t;

/* A point of the projection: 'z': (x, y); 'r': (z, r). */
static void project(char projection, const double *p, double *u, double *v)
{
    if (projection == 'z') {
        *u = p[0];
        *v = p[1];
    } else {
        *u = p[2];
        *v = sqrt(p[0] * p[0] + p[1] * p[1]);
    }
}

static void put_circle(FILE *fp, double r)
{
    for (int k = 0; k <= 360; k++)
        fprintf(fp, "%.6f %.6f\n", r * cos(k * M_PI / 180), r * sin(k * M_PI / 180));
    fputc('\n', fp);
}

static void put_paths(FILE *fp, const paths_args_t *a, char kind)
{
    for (size_t p = 0; p < a->npaths; p++) {
        if (a->kinds[p] != kind || a->lens[p] == 0)
            continue;
        fprintf(fp, "# path %zu\n", p);
        for (size_t k = 0; k < a->lens[p]; k++) {
            double u, v;
            project(a->projection, a->xyz[p] + 3 * k, &u, &v);
            fprintf(fp, "%.6g %.6g\n", u, v);
        }
        fputc('\n', fp);
    }
}

/* Data sets (gnuplot `index`), in this order: 0 the crystal's outline,
 * 1 the segment boundaries, then the electrons' and holes' paths and the
 * start points, each only when there is one. */
static int paths_data(const plot_files_t *f, const void *arg, tusk_error_t *err)
{
    const paths_args_t *a = arg;
    const det_config_t *g = a->cfg;
    FILE *fp;
    int st = open_out(&fp, f->dat, err);
    if (st)
        return st;
    fprintf(fp, "# tusk drift paths, projection %s; lengths in mm\n",
            a->projection == 'z' ? "along the axis: columns x y" : "radius against depth: columns z r");
    int index = 0;
    fprintf(fp, "# index %d: the crystal's outline\n", index++);
    if (a->projection == 'z') {
        put_circle(fp, g->radius);
        put_circle(fp, g->hole_radius);
    } else {
        /* Front face, mantle, back face, hole wall, hole bottom. */
        fprintf(fp, "0 0\n0 %.6g\n%.6g %.6g\n%.6g %.6g\n%.6g %.6g\n%.6g 0\n\n", g->radius, g->length, g->radius,
                g->length, g->hole_radius, g->hole_front, g->hole_radius, g->hole_front);
    }
    fprintf(fp, "\n# index %d: segment boundaries\n", index++);
    if (a->projection == 'z') {
        for (unsigned s = 0; s < g->sectors; s++) {
            double t = (g->sector_offset_deg + s * 360.0 / g->sectors) * M_PI / 180;
            fprintf(fp, "%.6f %.6f\n%.6f %.6f\n\n", g->hole_radius * cos(t), g->hole_radius * sin(t),
                    g->radius * cos(t), g->radius * sin(t));
        }
    } else {
        double z = 0;
        for (unsigned r = 0; r + 1 < g->rings; r++) {
            z += g->ring_thickness[r];
            fprintf(fp, "%.6g %.6g\n%.6g %.6g\n\n", z, z > g->hole_front ? g->hole_radius : 0.0, z, g->radius);
        }
    }
    if (a->electrons) {
        fprintf(fp, "\n# index %d: electrons\n", index++);
        put_paths(fp, a, 'e');
    }
    if (a->holes) {
        fprintf(fp, "\n# index %d: holes\n", index++);
        put_paths(fp, a, 'h');
    }
    if (a->electrons + a->holes) {
        fprintf(fp, "\n# index %d: start points\n", index++);
        for (size_t p = 0; p < a->npaths; p++) {
            if (a->lens[p] == 0)
                continue;
            double u, v;
            project(a->projection, a->xyz[p], &u, &v);
            fprintf(fp, "%.6g %.6g\n", u, v);
        }
    }
    return close_out(fp, f->dat, err);
}

static int paths_script(const plot_files_t *f, const void *arg, tusk_error_t *err)
{
    const paths_args_t *a = arg;
    const det_config_t *g = a->cfg;
    FILE *fp;
    int st = open_out(&fp, f->gp, err);
    if (st)
        return st;
    double R = g->radius, L = g->length;
    if (a->projection == 'z') {
        put_header(fp, f, "drift paths seen along the crystal axis", 1150, 900, 14);
        fputs("set key outside right center vertical samplen 2 spacing 1.3\n", fp);
        fprintf(fp,
                "set xlabel 'x (mm)'\n"
                "set ylabel 'y (mm)'\n"
                "set xrange [%.6g:%.6g]\n"
                "set yrange [%.6g:%.6g]\n",
                -1.15 * R, 1.15 * R, -1.15 * R, 1.15 * R);
        fputs("# sector names, outside the mantle\n", fp);
        char name[8];
        for (unsigned s = 0; s < g->sectors; s++) {
            double t = (g->sector_offset_deg + (s + 0.5) * 360.0 / g->sectors) * M_PI / 180;
            snprintf(name, sizeof name, "%c", 'A' + (int)s);
            fprintf(fp, "set label %u '%s' at %.4f, %.4f center font ',16'\n", s + 1, name, 1.08 * R * cos(t),
                    1.08 * R * sin(t));
        }
    } else {
        /* Depth z across (the front face at the left), radius r = sqrt(x^2 +
         * y^2) upwards: the crystal's half section, all sectors folded onto
         * one. */
        put_header(fp, f, "drift paths, radius against depth", 1300, 800, 14);
        fputs("set key below horizontal samplen 2 height 1\n", fp);
        fprintf(fp,
                "set xlabel 'z (mm), depth behind the front face'\n"
                "set ylabel 'r (mm)'\n"
                "set xrange [%.6g:%.6g]\n"
                "set yrange [0:%.6g]\n",
                -0.03 * L, 1.03 * L, 1.15 * R);
        fputs("# ring numbers, above the mantle\n", fp);
        double z = 0;
        for (unsigned r = 0; r < g->rings; r++) {
            double mid = z + 0.5 * g->ring_thickness[r];
            z += g->ring_thickness[r];
            fprintf(fp, "set label %u '%s%u' at %.4f, %.4f center font ',13'\n", r + 1, r == 0 ? "ring " : "",
                    r + 1, mid, 1.07 * R);
        }
    }
    put_text(fp, "title", a->title, "font ',16'");
    fputs("set size ratio -1            # equal scales\n"
          "set tics out nomirror\n"
          "set border lw 1.2\n",
          fp);
    fputs("plot ", fp);
    put_file(fp, f, ".dat");
    fputs(" index 0 with lines lc rgb '#000000' lw 2.5 title 'crystal', \\\n"
          "     '' index 1 with lines lc rgb '#808080' dt 2 lw 1.2 title ",
          fp);
    fputs(a->projection == 'z' ? "'sector boundaries'" : "'ring boundaries'", fp);
    int index = 2;
    if (a->electrons)
        fprintf(fp, ", \\\n     '' index %d with lines lc rgb '%s' lw 1.5 title 'electrons'", index++,
                COLOUR_ELECTRON);
    if (a->holes)
        fprintf(fp, ", \\\n     '' index %d with lines lc rgb '%s' lw 1.5 title 'holes'", index++, COLOUR_HOLE);
    if (a->electrons + a->holes)
        fprintf(fp, ", \\\n     '' index %d with points pt 7 ps 0.8 lc rgb '#000000' title 'start points'", index++);
    fputs("\n", fp);
    return close_out(fp, f->gp, err);
}

int det_plot_paths(const char *png, const char *title, const det_crystal_t *crystal, char projection, size_t npaths,
                   const size_t *lens, const double *const *xyz, const char *kinds, tusk_error_t *err)
{
    if (!crystal)
        return tusk_error_set(err, TUSK_EINVAL, "plot paths: no crystal");
    if (projection != 'z' && projection != 'r')
        return tusk_error_set(err, TUSK_EINVAL, "plot paths: projection '%c' (expected 'z' or 'r')",
                              projection ? projection : '0');
    if (npaths && (!lens || !xyz || !kinds))
        return tusk_error_set(err, TUSK_EINVAL, "plot paths: %zu paths without lengths, points or kinds", npaths);
    paths_args_t a = {.title = title, .cfg = det_crystal_config(crystal), .projection = projection,
                      .npaths = npaths, .lens = lens, .xyz = xyz, .kinds = kinds};
    for (size_t p = 0; p < npaths; p++) {
        if (kinds[p] != 'e' && kinds[p] != 'h')
            return tusk_error_set(err, TUSK_EINVAL, "plot paths: path %zu is of kind '%c' (expected 'e' or 'h')", p,
                                  kinds[p] ? kinds[p] : '0');
        if (lens[p] == 0)
            continue;
        if (!xyz[p])
            return tusk_error_set(err, TUSK_EINVAL, "plot paths: path %zu has %zu points but none given", p, lens[p]);
        for (size_t k = 0; k < 3 * lens[p]; k++)
            if (!isfinite(xyz[p][k]))
                return tusk_error_set(err, TUSK_EINVAL, "plot paths: path %zu, point %zu is not finite", p, k / 3);
        if (kinds[p] == 'e')
            a.electrons++;
        else
            a.holes++;
    }
    return draw(png, paths_data, paths_script, &a, err);
}

/* ---- traces ------------------------------------------------------------------------- */

typedef struct traces_args {
    const char *title;
    const det_crystal_t *crystal;
    const float *traces;
    unsigned electrodes, samples;
    double sample_ns;
    int hit;
} traces_args_t;

/* One data set (gnuplot `index`) per electrode, in electrode order. */
static int traces_data(const plot_files_t *f, const void *arg, tusk_error_t *err)
{
    const traces_args_t *a = arg;
    FILE *fp;
    int st = open_out(&fp, f->dat, err);
    if (st)
        return st;
    fprintf(fp,
            "# tusk traces: %u electrodes x %u samples, %.6g ns per sample\n"
            "# columns: time (ns), signal; one data set (gnuplot index) per electrode\n",
            a->electrodes, a->samples, a->sample_ns);
    char name[16];
    for (unsigned e = 0; e < a->electrodes; e++) {
        fprintf(fp, "%s# index %u: %s\n", e ? "\n\n" : "", e,
                det_crystal_electrode_name(a->crystal, e, name, sizeof name));
        for (unsigned s = 0; s < a->samples; s++) {
            float v = a->traces[(size_t)e * a->samples + s];
            if (isfinite(v))
                fprintf(fp, "%.6g %.9g\n", s * a->sample_ns, (double)v);
            else
                fprintf(fp, "%.6g NaN\n", s * a->sample_ns);
        }
    }
    return close_out(fp, f->dat, err);
}

static int traces_script(const plot_files_t *f, const void *arg, tusk_error_t *err)
{
    const traces_args_t *a = arg;
    const det_config_t *g = det_crystal_config(a->crystal);
    unsigned segments = det_crystal_segments(a->crystal);
    FILE *fp;
    int st = open_out(&fp, f->gp, err);
    if (st)
        return st;

    double lo = 0, hi = 0;
    bool any = false;
    for (size_t k = 0; k < (size_t)a->electrodes * a->samples; k++) {
        double v = a->traces[k];
        if (!isfinite(v))
            continue;
        if (!any || v < lo)
            lo = v;
        if (!any || v > hi)
            hi = v;
        any = true;
    }
    if (!any) {
        lo = -1;
        hi = 1;
    } else if (!(hi > lo)) {
        double pad = lo != 0 ? 0.1 * fabs(lo) : 1.0;
        lo -= pad;
        hi += pad;
    } else {
        double pad = 0.06 * (hi - lo);
        lo -= pad;
        hi += pad;
    }
    double tmax = (a->samples - 1) * a->sample_ns;

    put_header(fp, f, "the traces of all electrodes", 1400, 1000, 11);
    fprintf(fp,
            "# one panel per segment (rows: rings, front ring on top; columns: sectors),\n"
            "# the core across the bottom; the same vertical scale everywhere\n"
            "rings = %u\n"
            "sectors = %u\n"
            "core = %u                     # the core's data set (gnuplot index)\n"
            "hit = %d                      # the hit segment's (-1: none)\n"
            "ylo = %.6g\n"
            "yhi = %.6g\n"
            "tmax = %.6g\n"
            "colour = '%s'\n"
            "hitcolour = '%s'\n"
            "array names[%u] = [",
            g->rings, g->sectors, segments, a->hit, lo, hi, tmax, COLOUR_TRACE, COLOUR_HIT, a->electrodes);
    char name[16], label[32];
    for (unsigned e = 0; e < a->electrodes; e++) {
        det_crystal_electrode_name(a->crystal, e, name, sizeof name);
        snprintf(label, sizeof label, "%s%s", name, (int)e == a->hit ? " (hit)" : e == segments ? " (core)" : "");
        fputs(e ? ", " : "", fp);
        tusk_gnuplot_quote(fp, label);
    }
    fprintf(fp,
            "]\n"
            "# the panels' layout, in screen fractions\n"
            "left = 0.075; right = 0.985; top = 0.925; bottom = 0.075\n"
            "gapx = 0.007; gapy = 0.012; coreh = 0.12; coregap = 0.055\n"
            "pw = (right - left - (sectors - 1) * gapx) / sectors\n"
            "ph = (top - bottom - coreh - coregap - (rings - 1) * gapy) / rings\n"
            "\n"
            "set xrange [0:tmax]\n"
            "set yrange [ylo:yhi]\n"
            "xstep = %.6g                  # time ticks of the segments' panels\n"
            "corexstep = %.6g              # and of the core's\n"
            "set mxtics 2\n"
            "set ytics %.6g\n"
            "set tics out nomirror scale 0.6\n"
            "set grid xtics ytics lc rgb '#e4e4e4' lw 1\n"
            "set xzeroaxis lc rgb '#a0a0a0' dt 2 lw 1\n"
            "set border 3 lw 1\n"
            "unset key\n"
            "set style textbox opaque noborder margins 1,1\n"
            "set multiplot\n",
            nice_step(tmax, 3), nice_step(tmax, 6), nice_step(hi - lo, 3));
    put_text(fp, "label 101", a->title, "at screen 0.5, screen 0.97 center font ',16'");
    fputs("set label 102 'time (ns)' at screen (left + right) / 2, screen 0.018 center font ',13'\n"
          "set label 103 'charge (normalised)' at screen 0.018, screen 0.5 center rotate by 90 font ',13'\n"
          "do for [e = 0:core] {\n"
          "    if (e < core) {\n"
          "        ring = e % rings\n"
          "        sector = e / rings\n"
          "        x0 = left + sector * (pw + gapx)\n"
          "        y1 = top - ring * (ph + gapy)\n"
          "        set lmargin at screen x0\n"
          "        set rmargin at screen x0 + pw\n"
          "        set tmargin at screen y1\n"
          "        set bmargin at screen y1 - ph\n"
          "        set format x (ring == rings - 1 ? '%g' : '')\n"
          "        set format y (sector == 0 ? '%g' : '')\n"
          "        set xtics xstep\n"
          "    } else {\n"
          "        set lmargin at screen left\n"
          "        set rmargin at screen right\n"
          "        set tmargin at screen bottom + coreh\n"
          "        set bmargin at screen bottom\n"
          "        set format x '%g'\n"
          "        set format y '%g'\n"
          "        set xtics corexstep\n"
          "    }\n"
          "    if (e == hit) {\n"
          "        set object 1 rect from graph 0, graph 0 to graph 1, graph 1 behind fc rgb '#fbe9e7' fs solid noborder\n"
          "    } else {\n"
          "        unset object 1\n"
          "    }\n"
          "    set label 1 names[e + 1] at graph 0.03, graph 0.86 left front boxed font (e == hit ? 'Sans Bold,11' : "
          "',11') tc rgb (e == hit ? hitcolour : '#000000')\n"
          "    plot ",
          fp);
    put_file(fp, f, ".dat");
    fputs(" index e using 1:2 with lines lw (e == hit ? 2.5 : 1.5) lc rgb (e == hit ? hitcolour : colour)\n"
          "    if (e == 0) {\n"
          "        unset label 101\n"
          "        unset label 102\n"
          "        unset label 103\n"
          "    }\n"
          "}\n"
          "unset multiplot\n",
          fp);
    return close_out(fp, f->gp, err);
}

int det_plot_traces(const char *png, const char *title, const det_crystal_t *crystal, const float *traces,
                    unsigned samples, double sample_ns, int hit, tusk_error_t *err)
{
    if (!crystal)
        return tusk_error_set(err, TUSK_EINVAL, "plot traces: no crystal");
    if (!traces)
        return tusk_error_set(err, TUSK_EINVAL, "plot traces: no traces");
    if (samples < 2)
        return tusk_error_set(err, TUSK_EINVAL, "plot traces: %u samples; a trace needs at least 2", samples);
    if (!isfinite(sample_ns) || !(sample_ns > 0))
        return tusk_error_set(err, TUSK_EINVAL, "plot traces: sample period %g ns (must be positive)", sample_ns);
    unsigned segments = det_crystal_segments(crystal);
    if (hit >= (int)segments)
        return tusk_error_set(err, TUSK_EINVAL, "plot traces: hit segment %d of %u", hit, segments);
    traces_args_t a = {.title = title, .crystal = crystal, .traces = traces,
                       .electrodes = det_crystal_electrodes(crystal), .samples = samples, .sample_ns = sample_ns,
                       .hit = hit < 0 ? -1 : hit};
    return draw(png, traces_data, traces_script, &a, err);
}
