/* tusk-basis - make and inspect PSA signal bases.
 *
 *   tusk-basis gen    [-c CONF] [SETTINGS] -o FILE   generate a basis file
 *   tusk-basis info   FILE                           validate and summarise
 *   tusk-basis signal [-c CONF] [SETTINGS] --at X,Y,Z  the traces of one point
 *   tusk-basis plot   [-c CONF] [SETTINGS] [--at X,Y,Z] -d DIR   pictures
 *
 * CONF is a crystal configuration (config/crystal.conf); SETTINGS
 * override it: --grid MM (basis points), --field-grid MM, --bias V.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <float.h>
#include <sys/stat.h>

#include "base/cli.h"
#include "base/clock.h"
#include "base/exit.h"
#include "base/parse.h"
#include "config.h"
#include "plot.h"
#include "tusk/basis.h"
#include "tusk/crystal.h"
#include "tusk/field.h"
#include "detector/generate.h"
#include "tusk/signal.h"
#include "tusk/weighting.h"
#include "base/fs.h"

#define PROG "tusk-basis"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

static void help(FILE *out)
{
    fprintf(out,
            "  gen    [-c CONF] [SETTINGS] [--threads N] [--int16] [-q] -o FILE\n"
            "  info   FILE             exit 1 if the file is bad\n"
            "  signal [-c CONF] [SETTINGS] --at X,Y,Z\n"
            "                          the traces of every electrode for one point (mm)\n"
            "  plot   [-c CONF] [SETTINGS] [--at X,Y,Z] -d DIR\n"
            "                          weighting potentials, drift paths, traces\n"
            "\n"
            "CONF: a crystal configuration (key = value; see config/crystal.conf);\n"
            "without -c, the built-in AGATA-like defaults. SETTINGS override it:\n"
            "  --grid MM        basis point spacing     --field-grid MM  field grid step\n"
            "  --bias V         core voltage            --samples N      samples per trace\n"
            "\n"
            "Exit status: 0 fine, 1 failure (a bad file, the solver, the physics,\n"
            "gnuplot), 2 bad usage or settings.\n");
}

typedef struct opts {
    det_config_t cfg;
    const char *out, *dir;
    double at[3];
    bool have_at, int16, quiet;
    unsigned threads;
} opts_t;

static bool parse_point(const char *text, double p[3])
{
    char *end;
    const char *s = text;
    for (int i = 0; i < 3; i++) {
        errno = 0;
        p[i] = strtod(s, &end);
        if (end == s || errno || !isfinite(p[i]) || (i < 2 ? *end != ',' : *end != '\0')) {
            fprintf(stderr, PROG ": --at: expected X,Y,Z in mm, got '%s'\n", text);
            return false;
        }
        s = end + 1;
    }
    return true;
}

/* Options shared by every command; returns the index of the first operand,
 * -1 (usage error reported) or -2 (a bad configuration reported). */
static int parse_options(const tusk_cli_t *cli, int argc, char **argv, opts_t *o)
{
    enum { O_GRID = 256, O_FIELD, O_BIAS, O_SAMPLES, O_THREADS, O_INT16, O_AT };
    static const struct option longs[] = {{"config", required_argument, NULL, 'c'},
                                          {"output", required_argument, NULL, 'o'},
                                          {"dir", required_argument, NULL, 'd'},
                                          {"quiet", no_argument, NULL, 'q'},
                                          {"grid", required_argument, NULL, O_GRID},
                                          {"field-grid", required_argument, NULL, O_FIELD},
                                          {"bias", required_argument, NULL, O_BIAS},
                                          {"samples", required_argument, NULL, O_SAMPLES},
                                          {"threads", required_argument, NULL, O_THREADS},
                                          {"int16", no_argument, NULL, O_INT16},
                                          {"at", required_argument, NULL, O_AT},
                                          {NULL, 0, NULL, 0}};
    det_config_default(&o->cfg);
    o->threads = 2;
    const char *conf = NULL;
    double grid = 0, field = 0, bias = 0;
    unsigned samples = 0;
    int c;
    optind = 1;
    while ((c = tusk_cli_getopt(cli, argc, argv, "c:o:d:q", longs, NULL)) != -1) {
        switch (c) {
        case 'c': conf = optarg; break;
        case 'o': o->out = optarg; break;
        case 'd': o->dir = optarg; break;
        case 'q': o->quiet = true; break;
        case O_GRID: if (!tusk_cli_double(argv[0], "--grid", optarg, -DBL_MAX, DBL_MAX, &grid)) return -1; break;
        case O_FIELD:
            if (!tusk_cli_double(argv[0], "--field-grid", optarg, -DBL_MAX, DBL_MAX, &field))
                return -1;
            break;
        case O_BIAS: if (!tusk_cli_double(argv[0], "--bias", optarg, -DBL_MAX, DBL_MAX, &bias)) return -1; break;
        case O_SAMPLES:
            if (!tusk_cli_unsigned(argv[0], "--samples", optarg, 1, 10000, &samples))
                return -1;
            break;
        case O_THREADS:
            if (!tusk_cli_unsigned(argv[0], "--threads", optarg, 1, 64, &o->threads))
                return -1;
            break;
        case O_INT16: o->int16 = true; break;
        case O_AT:
            if (!parse_point(optarg, o->at))
                return -1;
            o->have_at = true;
            break;
        default: return -1;
        }
    }
    if (conf) {
        tusk_error_t err;
        if (det_config_load(&o->cfg, conf, &err)) {
            fprintf(stderr, PROG ": %s\n", err.message);
            return -2;
        }
    }
    if (grid > 0)
        o->cfg.basis_grid = grid;
    if (field > 0)
        o->cfg.field_grid = field;
    if (bias > 0)
        o->cfg.bias = bias;
    if (samples > 0)
        o->cfg.samples = samples;
    tusk_error_t err;
    if (det_config_check(&o->cfg, &err)) {
        fprintf(stderr, PROG ": %s\n", err.message);
        return -2;
    }
    return optind;
}

static void progress(void *user, const char *line)
{
    if (!*(const bool *)user)
        fprintf(stderr, PROG ": %s\n", line);
}

static int fail(const tusk_error_t *err)
{
    fprintf(stderr, PROG ": %s\n", err->message);
    return TUSK_EXIT_FAIL;
}

/* ---- gen ----------------------------------------------------------------- */

static int cmd_gen(opts_t *o)
{
    if (!o->out) {
        fprintf(stderr, PROG " gen: -o FILE is required\n");
        return TUSK_EXIT_USAGE;
    }
    det_generate_options_t g;
    memset(&g, 0, sizeof g);
    g.threads = o->threads;
    g.progress = progress;
    g.user = &o->quiet;
    det_generate_stats_t stats;
    det_basis_t *basis = NULL;
    tusk_error_t err;
    double t0 = tusk_clock_s();
    if (det_basis_generate(&o->cfg, &g, &basis, &stats, &err))
        return fail(&err);
    int st = det_basis_save(basis, o->out, o->int16 ? DET_SAMPLE_INT16 : DET_SAMPLE_FLOAT32, &err);
    double total = tusk_clock_s() - t0;
    det_basis_destroy(&basis);
    if (st)
        return fail(&err);
    struct stat sb;
    long long bytes = stat(o->out, &sb) == 0 ? (long long)sb.st_size : -1;
    printf("%s: %zu points, %u weighting potentials solved, %lld bytes (%s)\n", o->out, stats.points,
           stats.fields_solved, bytes, o->int16 ? "int16" : "float32");
    printf("time: potential %.1f s, weighting %.1f s, signals %.1f s, total %.1f s on %u thread%s\n",
           stats.potential_s, stats.weighting_s, stats.signals_s, total, o->threads, o->threads == 1 ? "" : "s");
    printf("collection: %zu of %zu points collected on another segment than the one they lie in (%.1f %%)\n",
           stats.moved, stats.points, stats.points ? 100.0 * (double)stats.moved / (double)stats.points : 0.0);
    if (stats.incomplete)
        printf("note: %zu points with a carrier that did not reach a contact (%zu whose holes reach no segment: "
               "kept with the segment they lie in)\n",
               stats.incomplete, stats.uncollected);
    return 0;
}

/* ---- info ----------------------------------------------------------------- */

static int cmd_info(const char *path)
{
    det_basis_t *b = NULL;
    tusk_error_t err;
    if (det_basis_load(&b, path, NULL, &err))
        return fail(&err);
    const det_basis_shape_t *s = det_basis_shape(b);
    printf("%s: valid basis\n", path);
    printf("  generator     %s\n", s->generator);
    printf("  points        %zu on a %.2f mm grid\n", det_basis_points(b), s->grid_mm);
    printf("  channels      %u (%u segments + core)\n", s->channels, s->segments);
    printf("  samples       %u of %.1f ns\n", s->samples, s->sample_ns);
    printf("  sample type   %s\n", det_basis_sample_type(b) == DET_SAMPLE_INT16 ? "int16" : "float32");
    printf("  points per segment:");
    for (unsigned seg = 0; seg < s->segments; seg++)
        printf("%s%zu", seg % 12 ? " " : "\n    ", det_basis_segment_points(b, seg));
    /* Where the charge goes: points by the ring they lie in, and how many
     * collect on another segment (another ring, another sector). */
    det_config_t cfg;
    det_config_default(&cfg);
    tusk_error_t cerr;
    if (det_config_parse(&cfg, s->config, strlen(s->config), path, &cerr) == TUSK_OK &&
        cfg.rings * cfg.sectors == s->segments) {
        size_t all[DET_MAX_RINGS] = {0}, moved[DET_MAX_RINGS] = {0}, ring[DET_MAX_RINGS] = {0}, total = 0,
               total_moved = 0;
        for (unsigned seg = 0; seg < s->segments; seg++)
            for (size_t i = 0; i < det_basis_segment_points(b, seg); i++) {
                unsigned slab = det_basis_slab(b, seg, i), r = slab % cfg.rings;
                all[r]++;
                total++;
                if (slab != seg) {
                    moved[r]++;
                    total_moved++;
                    ring[r] += seg % cfg.rings != r;
                }
            }
        printf("\n  collection: %zu of %zu points (%.1f %%) collected on another segment than the one they lie in\n",
               total_moved, total, total ? 100.0 * (double)total_moved / (double)total : 0.0);
        printf("    ring  points  elsewhere   %%     of them on another ring\n");
        for (unsigned r = 0; r < cfg.rings; r++)
            printf("    %4u  %6zu  %9zu  %5.1f  %zu\n", r + 1, all[r], moved[r],
                   all[r] ? 100.0 * (double)moved[r] / (double)all[r] : 0.0, ring[r]);
    }
    printf("\n  configuration:\n");
    for (const char *p = s->config; *p;) {
        const char *nl = strchr(p, '\n');
        int n = nl ? (int)(nl - p) : (int)strlen(p);
        printf("    %.*s\n", n, p);
        p += n + (nl ? 1 : 0);
    }
    det_basis_destroy(&b);
    return 0;
}

/* ---- the fields for signal and plot ------------------------------------------ */

typedef struct world {
    det_crystal_t *crystal;
    det_field_t *potential;
    det_weighting_t *weighting;
    det_signals_t *signals;
} world_t;

static void world_free(world_t *w)
{
    det_signals_destroy(&w->signals);
    det_weighting_destroy(&w->weighting);
    det_field_destroy(&w->potential);
    det_crystal_destroy(&w->crystal);
}

static int world_make(world_t *w, opts_t *o, tusk_error_t *err)
{
    memset(w, 0, sizeof *w);
    det_solve_options_t so;
    memset(&so, 0, sizeof so);
    so.progress = progress;
    so.user = &o->quiet;
    int st = det_crystal_new(&w->crystal, &o->cfg, err);
    if (!st)
        st = det_field_solve_potential(&w->potential, w->crystal, o->cfg.field_grid, &so, err);
    if (!st)
        st = det_field_check_depletion(w->potential, o->cfg.bias, 0.0, err);
    if (!st)
        st = det_weighting_new(&w->weighting, w->crystal, o->cfg.field_grid, &so, o->threads, err);
    if (!st)
        st = det_signals_new(&w->signals, w->crystal, w->potential, w->weighting, NULL, err);
    if (st)
        world_free(w);
    return st;
}

static const char *end_name(enum det_drift_end e)
{
    switch (e) {
    case DET_DRIFT_COLLECTED: return "collected";
    case DET_DRIFT_PASSIVATED: return "stopped on the passivated back face";
    case DET_DRIFT_STUCK: return "stuck (no field)";
    case DET_DRIFT_TIMEOUT: return "still drifting";
    }
    return "?";
}

static int cmd_signal(opts_t *o)
{
    if (!o->have_at) {
        fprintf(stderr, PROG " signal: --at X,Y,Z is required\n");
        return TUSK_EXIT_USAGE;
    }
    world_t w;
    tusk_error_t err;
    if (world_make(&w, o, &err))
        return fail(&err);
    unsigned ne = det_crystal_electrodes(w.crystal), ns = o->cfg.samples;
    float *tr = malloc((size_t)ne * ns * sizeof *tr);
    det_signal_info_t info;
    int st = tr ? det_signals_compute(w.signals, o->at, tr, &info, NULL, &err)
                : tusk_error_set(&err, TUSK_ENOMEM, "out of memory");
    if (!st) {
        char name[8];
        printf("# point (%.2f, %.2f, %.2f) mm, segment %s\n", o->at[0], o->at[1], o->at[2],
               info.segment >= 0 ? det_crystal_electrode_name(w.crystal, (unsigned)info.segment, name, sizeof name)
                                 : "-");
        static const char *const who[2] = {"electrons", "holes"};
        for (int c = 0; c < 2; c++)
            printf("# %s: %s%s%s after %.0f ns\n", who[c], end_name(info.end[c]),
                   info.electrode[c] >= 0 ? " at " : "",
                   info.electrode[c] >= 0
                       ? det_crystal_electrode_name(w.crystal, (unsigned)info.electrode[c], name, sizeof name)
                       : "",
                   info.drift_ns[c]);
        printf("t_ns");
        for (unsigned e = 0; e < ne; e++)
            printf(" %s", det_crystal_electrode_name(w.crystal, e, name, sizeof name));
        printf("\n");
        for (unsigned s = 0; s < ns; s++) {
            printf("%.1f", s * o->cfg.sample_ns);
            for (unsigned e = 0; e < ne; e++)
                printf(" %.5f", tr[(size_t)e * ns + s]);
            printf("\n");
        }
    }
    free(tr);
    world_free(&w);
    return st ? fail(&err) : 0;
}

/* ---- plot ------------------------------------------------------------------- */

/* A slice of a field: z = const (x-y), or the half-plane through the
 * middle of sector A (r-z). */
static float *slice(const det_crystal_t *c, const det_weighting_t *wt, const det_field_t *f, int electrode,
                    bool xy, double where, double step, size_t *nx, size_t *ny)
{
    const det_config_t *g = det_crystal_config(c);
    size_t n1 = (size_t)(2 * g->radius / step) + 1, n2 = xy ? n1 : (size_t)(g->length / step) + 1;
    if (!xy)
        n1 = (size_t)(g->radius / step) + 1;
    float *v = malloc(n1 * n2 * sizeof *v);
    if (!v)
        return NULL;
    double amid = (g->sector_offset_deg + 180.0 / g->sectors) * M_PI / 180.0;
    for (size_t j = 0; j < n2; j++)
        for (size_t i = 0; i < n1; i++) {
            double x = xy ? -g->radius + i * step : i * step * cos(amid);
            double y = xy ? -g->radius + j * step : i * step * sin(amid);
            double z = xy ? where : j * step;
            double val = NAN;
            if (det_crystal_inside(c, x, y, z))
                val = electrode >= 0 ? det_weighting_value(wt, (unsigned)electrode, x, y, z)
                                     : det_field_value(f, x, y, z);
            v[j * n1 + i] = (float)val;
        }
    *nx = n1;
    *ny = n2;
    return v;
}

static int plot_slice(const char *dir, const char *file, const char *title, world_t *w, int electrode, bool xy,
                      double z, const char *cblabel, tusk_error_t *err)
{
    const det_config_t *g = det_crystal_config(w->crystal);
    double step = g->field_grid / 2;
    size_t nx, ny;
    float *v = slice(w->crystal, w->weighting, w->potential, electrode, xy, z, step, &nx, &ny);
    if (!v)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    char png[4096];
    snprintf(png, sizeof png, "%s/%s", dir, file);
    int st = det_plot_map(png, title, v, nx, ny, xy ? -g->radius : 0, xy ? -g->radius : 0, step, step,
                          xy ? "x (mm)" : "r (mm), through the middle of sector A", xy ? "y (mm)" : "z (mm), from the front face",
                          cblabel, 10, err);
    free(v);
    if (!st)
        printf("%s\n", png);
    return st;
}

static int cmd_plot(opts_t *o)
{
    if (!o->dir) {
        fprintf(stderr, PROG " plot: -d DIR is required\n");
        return TUSK_EXIT_USAGE;
    }
    world_t w;
    tusk_error_t err;
    if (tusk_mkdir_p(o->dir, &err) != TUSK_OK)
        return fail(&err);
    if (world_make(&w, o, &err))
        return fail(&err);
    const det_config_t *g = &o->cfg;
    char title[256], name[8];
    double zmid = g->length / 2;
    unsigned hit_ring = 3;
    unsigned seg = hit_ring; /* sector A, ring 4: A4 */
    int st = plot_slice(o->dir, "potential-rz.png", "Electric potential (V), r-z plane", &w, -1, false, 0, "V", &err);
    if (!st) {
        snprintf(title, sizeof title, "Weighting potential of the core, z = %.0f mm", zmid);
        st = plot_slice(o->dir, "weighting-core-xy.png", title, &w, (int)det_crystal_core(w.crystal), true, zmid,
                        "weighting potential", &err);
    }
    double zring = 0;
    for (unsigned r = 0; r < hit_ring; r++)
        zring += g->ring_thickness[r];
    zring += g->ring_thickness[hit_ring] / 2;
    if (!st) {
        snprintf(title, sizeof title, "Weighting potential of segment %s, z = %.1f mm",
                 det_crystal_electrode_name(w.crystal, seg, name, sizeof name), zring);
        st = plot_slice(o->dir, "weighting-segment-xy.png", title, &w, (int)seg, true, zring, "weighting potential",
                        &err);
    }
    if (!st) {
        snprintf(title, sizeof title, "Weighting potential of segment %s, r-z plane through sector A",
                 det_crystal_electrode_name(w.crystal, seg, name, sizeof name));
        st = plot_slice(o->dir, "weighting-segment-rz.png", title, &w, (int)seg, false, 0, "weighting potential",
                        &err);
    }
    /* Drift paths from points along a line through the crystal at mid-depth. */
    enum { NP = 8 };
    det_path_t paths[2 * NP];
    memset(paths, 0, sizeof paths);
    size_t lens[2 * NP];
    const double *xyz[2 * NP];
    char kinds[2 * NP];
    size_t np = 0;
    for (int i = 0; !st && i < NP; i++) {
        double r = g->hole_radius + (g->radius - g->hole_radius) * (i + 0.5) / NP;
        double a = 0.3 + 0.6 * i, p[3] = {r * cos(a), r * sin(a), zmid - 20 + 5.0 * i};
        if (!det_crystal_inside(w.crystal, p[0], p[1], p[2]))
            continue;
        float *tr = malloc((size_t)det_crystal_electrodes(w.crystal) * g->samples * sizeof *tr);
        st = tr ? det_signals_compute(w.signals, p, tr, NULL, &paths[np], &err)
                : tusk_error_set(&err, TUSK_ENOMEM, "out of memory");
        free(tr);
        for (int c = 0; !st && c < 2; c++) {
            lens[np + c] = paths[np + c].n;
            xyz[np + c] = paths[np + c].xyz;
            kinds[np + c] = c == DET_ELECTRON ? 'e' : 'h';
        }
        np += 2;
    }
    char png[4096];
    if (!st) {
        snprintf(png, sizeof png, "%s/paths-xy.png", o->dir);
        st = det_plot_paths(png, "Drift paths seen along the axis", w.crystal, 'z', np, lens, xyz, kinds, &err);
        if (!st)
            printf("%s\n", png);
    }
    if (!st) {
        snprintf(png, sizeof png, "%s/paths-rz.png", o->dir);
        st = det_plot_paths(png, "Drift paths, radius against depth", w.crystal, 'r', np, lens, xyz, kinds, &err);
        if (!st)
            printf("%s\n", png);
    }
    for (size_t i = 0; i < np; i++)
        det_path_free(&paths[i]);
    /* The 37 traces of one point. */
    double at[3] = {25 * cos(0.5), 25 * sin(0.5), zring};
    if (o->have_at)
        memcpy(at, o->at, sizeof at);
    unsigned ne = det_crystal_electrodes(w.crystal);
    float *tr = st ? NULL : malloc((size_t)ne * g->samples * sizeof *tr);
    if (!st && !tr)
        st = tusk_error_set(&err, TUSK_ENOMEM, "out of memory");
    det_signal_info_t info;
    if (!st)
        st = det_signals_compute(w.signals, at, tr, &info, NULL, &err);
    if (!st) {
        snprintf(png, sizeof png, "%s/traces.png", o->dir);
        snprintf(title, sizeof title, "Signals of an interaction at (%.1f, %.1f, %.1f) mm", at[0], at[1], at[2]);
        st = det_plot_traces(png, title, w.crystal, tr, g->samples, g->sample_ns, info.segment, &err);
        if (!st)
            printf("%s\n", png);
    }
    free(tr);
    world_free(&w);
    return st ? fail(&err) : 0;
}

/* The options, then the operands: one FILE for info, none for the rest. */
static int run_command(const tusk_cli_t *cli, int argc, char **argv)
{
    const char *cmd = strchr(argv[0], ' ') + 1;
    opts_t o;
    memset(&o, 0, sizeof o);
    int first = parse_options(cli, argc, argv, &o);
    if (first == -2)
        return TUSK_EXIT_FAIL;
    if (first < 0)
        return TUSK_EXIT_USAGE;
    int operands = argc - first;
    if (strcmp(cmd, "info") == 0) {
        if (operands != 1) {
            fprintf(stderr, "%s: expected one FILE\n", argv[0]);
            return TUSK_EXIT_USAGE;
        }
        return cmd_info(argv[first]);
    }
    if (operands != 0) {
        fprintf(stderr, "%s: unexpected argument '%s'\n", argv[0], argv[first]);
        return TUSK_EXIT_USAGE;
    }
    if (strcmp(cmd, "gen") == 0)
        return cmd_gen(&o);
    if (strcmp(cmd, "signal") == 0)
        return cmd_signal(&o);
    return cmd_plot(&o);
}

static const tusk_cli_command_t commands[] = {
    {"gen", run_command, "solve the fields, drift from every basis point, write the basis"},
    {"info", run_command, "validate a basis file and summarise it"},
    {"signal", run_command, "the traces of every electrode for one point, as a table"},
    {"plot", run_command, "pictures (gnuplot): weighting potentials, drift paths, traces"},
    {NULL, NULL, NULL}};

int main(int argc, char **argv)
{
    static const tusk_cli_t cli = {PROG, PACKAGE_VERSION, "COMMAND [OPTIONS]", commands, NULL, help};
    return tusk_cli_main(&cli, argc, argv);
}
