/* crystal.c - crystal configuration and geometry: which points are
 * germanium, which segment they belong to, which contact bounds them. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tusk/crystal.h"
#include "base/textfile.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* What differs between crystal shapes: the outline of the germanium seen
 * without the core hole (at depth z), and whether a turn by one sector
 * maps it onto itself. Segmentation (by angle and depth), the hole and the
 * contacts are common. */
typedef struct shape_ops {
    const char *name;
    bool (*outline)(const det_config_t *g, double x, double y, double z);
    bool symmetric;
} shape_ops_t;

static bool coax_outline(const det_config_t *g, double x, double y, double z)
{
    (void)z;
    return x * x + y * y <= g->radius * g->radius;
}

/* Corner k of a tapered outline at depth z. */
static void corner_at(const det_config_t *g, unsigned k, double z, double w[2])
{
    double t = z / g->length;
    w[0] = g->front[k][0] + (g->back[k][0] - g->front[k][0]) * t;
    w[1] = g->front[k][1] + (g->back[k][1] - g->front[k][1]) * t;
}

/* The signed distance of (x, y) beyond side k (corner k to k + 1) at
 * depth z: negative inside (counter-clockwise corners). */
static double beyond_side(const det_config_t *g, unsigned k, double z, double x, double y)
{
    double a[2], b[2];
    corner_at(g, k, z, a);
    corner_at(g, (k + 1) % g->sides, z, b);
    double ex = b[0] - a[0], ey = b[1] - a[1], len = sqrt(ex * ex + ey * ey);
    return (ey * (x - a[0]) - ex * (y - a[1])) / len;
}

static bool tapered_outline(const det_config_t *g, double x, double y, double z)
{
    if (x * x + y * y > g->radius * g->radius)
        return false;
    for (unsigned k = 0; k < g->sides; k++)
        if (beyond_side(g, k, z, x, y) > 0.0)
            return false;
    return true;
}

static const shape_ops_t shapes[] = {
    [DET_SHAPE_COAX] = {"coax", coax_outline, true},
    [DET_SHAPE_TAPERED] = {"tapered", tapered_outline, false},
};
#define NSHAPES (sizeof shapes / sizeof shapes[0])

struct det_crystal {
    det_config_t cfg;
    double ring_start[DET_MAX_RINGS + 1]; /* z of each ring's front, and the back */
    double sector_width;                  /* radians */
    double offset;                        /* radians */
    bool by_corner;                       /* sectors between the front corners (tapered, sides = sectors) */
    double corner_rel[DET_MAX_SIDES + 1]; /* their angles from corner 0's, increasing; [sides] = 2 pi */
};

void det_config_default(det_config_t *cfg)
{
    static const double rings[6] = {8, 13, 15, 18, 18, 18};
    memset(cfg, 0, sizeof *cfg);
    cfg->shape = DET_SHAPE_COAX;
    cfg->radius = 40.0;
    cfg->length = 90.0;
    cfg->hole_radius = 5.0;
    cfg->hole_front = 13.0;
    cfg->rings = 6;
    cfg->sectors = 6;
    memcpy(cfg->ring_thickness, rings, sizeof rings);
    cfg->sector_offset_deg = 0.0;
    cfg->impurity_front = 1.0;
    cfg->impurity_back = 0.5;
    cfg->bias = 4500.0;
    cfg->field_grid = 1.0;
    cfg->basis_grid = 2.0;
    cfg->samples = 60;
    cfg->sample_ns = 10.0;
    cfg->step_ns = 1.0;
    cfg->preamp_rise_ns = 30.0;
    cfg->symmetry = false;
    cfg->sides = 0;
}

/* ---- parsing ------------------------------------------------------------- */

static int number(const tusk_params_t *p, const char *key, double *v, tusk_error_t *err)
{
    return tusk_params_double(p, key, *v, v, err);
}

static int count(const tusk_params_t *p, const char *key, unsigned *v, tusk_error_t *err)
{
    uint64_t x = *v;
    int st = tusk_params_u64(p, key, *v, &x, err);
    if (!st && x > 1000000)
        st = tusk_error_set(err, TUSK_EPARAM, "parameter '%s': %llu is too large", key, (unsigned long long)x);
    if (!st)
        *v = (unsigned)x;
    return st;
}

static int thicknesses(const char *text, det_config_t *cfg, tusk_error_t *err)
{
    unsigned n = 0;
    const char *p = text;
    while (*p) {
        char *end;
        errno = 0;
        double v = strtod(p, &end);
        if (end == p || errno || !isfinite(v))
            return tusk_error_set(err, TUSK_EPARAM,
                                  "parameter 'ring_thickness': expected comma-separated lengths in mm, got '%s'",
                                  text);
        if (n == DET_MAX_RINGS)
            return tusk_error_set(err, TUSK_EPARAM, "parameter 'ring_thickness': more than %d rings",
                                  DET_MAX_RINGS);
        cfg->ring_thickness[n++] = v;
        p = end;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == ',')
            p++;
        else if (*p)
            return tusk_error_set(err, TUSK_EPARAM,
                                  "parameter 'ring_thickness': expected ',' after %g in '%s'", v, text);
    }
    if (n == 0)
        return tusk_error_set(err, TUSK_EPARAM, "parameter 'ring_thickness' is empty");
    cfg->rings = n;
    return TUSK_OK;
}

/* "X1 Y1 X2 Y2 ..." (spaces, tabs or commas between): the corners. */
static int corners(const char *key, const char *text, double xy[DET_MAX_SIDES][2], unsigned *n, tusk_error_t *err)
{
    double v[2 * DET_MAX_SIDES];
    unsigned k = 0;
    const char *p = text;
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == ',')
            p++;
        if (!*p)
            break;
        char *end;
        errno = 0;
        double x = strtod(p, &end);
        if (end == p || errno || !isfinite(x))
            return tusk_error_set(err, TUSK_EPARAM, "parameter '%s': expected corners 'X1 Y1 X2 Y2 ...' in mm, got '%s'",
                                  key, text);
        if (k == 2 * DET_MAX_SIDES)
            return tusk_error_set(err, TUSK_EPARAM, "parameter '%s': more than %d corners", key, DET_MAX_SIDES);
        v[k++] = x;
        p = end;
    }
    if (k % 2)
        return tusk_error_set(err, TUSK_EPARAM, "parameter '%s': %u numbers, not pairs of x and y", key, k);
    for (unsigned i = 0; i < k / 2; i++) {
        xy[i][0] = v[2 * i];
        xy[i][1] = v[2 * i + 1];
    }
    *n = k / 2;
    return TUSK_OK;
}

int det_config_parse(det_config_t *cfg, const char *text, size_t size, const char *origin, tusk_error_t *err)
{
    static const char *const known[] = {
        "shape",          "radius",         "length",    "hole_radius", "hole_front", "rings",
        "sectors",        "ring_thickness", "sector_offset_deg",        "impurity_front", "impurity_back",
        "bias",           "field_grid",     "basis_grid", "samples",    "sample_ns",  "step_ns",
        "preamp_rise_ns", "symmetry",       "front",      "back",       NULL};
    tusk_params_t *p = tusk_params_new();
    if (!p)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    int st = tusk_params_parse(p, text, size, origin, err);
    if (!st)
        st = tusk_params_expect(p, known, err);
    const char *shape = tusk_params_get(p, "shape");
    if (!st && shape) {
        size_t i = 0;
        while (i < NSHAPES && strcmp(shape, shapes[i].name) != 0)
            i++;
        if (i == NSHAPES)
            st = tusk_error_set(err, TUSK_EPARAM, "parameter 'shape': '%s' is not a known shape (coax, tapered)",
                                shape);
        else
            cfg->shape = (enum det_shape)i;
    }
    const char *rt = tusk_params_get(p, "ring_thickness");
    unsigned rings_given = 0;
    if (!st)
        st = count(p, "rings", &rings_given, err);
    if (!st && rt)
        st = thicknesses(rt, cfg, err);
    if (!st && rings_given && rings_given != cfg->rings)
        st = tusk_error_set(err, TUSK_EPARAM, "parameter 'rings' = %u but 'ring_thickness' lists %u rings",
                            rings_given, cfg->rings);
    if (!st)
        st = number(p, "radius", &cfg->radius, err);
    if (!st)
        st = number(p, "length", &cfg->length, err);
    if (!st)
        st = number(p, "hole_radius", &cfg->hole_radius, err);
    if (!st)
        st = number(p, "hole_front", &cfg->hole_front, err);
    if (!st)
        st = count(p, "sectors", &cfg->sectors, err);
    if (!st)
        st = number(p, "sector_offset_deg", &cfg->sector_offset_deg, err);
    if (!st)
        st = number(p, "impurity_front", &cfg->impurity_front, err);
    if (!st)
        st = number(p, "impurity_back", &cfg->impurity_back, err);
    if (!st)
        st = number(p, "bias", &cfg->bias, err);
    if (!st)
        st = number(p, "field_grid", &cfg->field_grid, err);
    if (!st)
        st = number(p, "basis_grid", &cfg->basis_grid, err);
    if (!st)
        st = count(p, "samples", &cfg->samples, err);
    if (!st)
        st = number(p, "sample_ns", &cfg->sample_ns, err);
    if (!st)
        st = number(p, "step_ns", &cfg->step_ns, err);
    if (!st)
        st = number(p, "preamp_rise_ns", &cfg->preamp_rise_ns, err);
    if (!st)
        st = tusk_params_bool(p, "symmetry", cfg->symmetry, &cfg->symmetry, err);
    const char *front = tusk_params_get(p, "front"), *back = tusk_params_get(p, "back");
    unsigned nf = cfg->sides, nb = cfg->sides;
    if (!st && front)
        st = corners("front", front, cfg->front, &nf, err);
    if (!st && back)
        st = corners("back", back, cfg->back, &nb, err);
    if (!st && nf != nb)
        st = tusk_error_set(err, TUSK_EPARAM, "parameters 'front' and 'back': %u and %u corners, not as many", nf, nb);
    if (!st)
        cfg->sides = nf;
    if (!st && cfg->shape != DET_SHAPE_TAPERED && (front || back))
        st = tusk_error_set(err, TUSK_EPARAM, "parameters 'front' and 'back' are for shape = tapered");
    if (!st && cfg->shape != DET_SHAPE_TAPERED)
        cfg->sides = 0;
    tusk_params_destroy(&p);
    if (!st && (st = det_config_check(cfg, err)))
        tusk_error_prefix(err, "%s", origin);
    return st;
}

int det_config_load(det_config_t *cfg, const char *path, tusk_error_t *err)
{
    char *text;
    size_t n;
    int st = tusk_file_read(path, 1u << 20, &text, &n, err);
    if (st == TUSK_OK)
        st = det_config_parse(cfg, text, n, path, err);
    free(text);
    return st;
}

int det_config_check(const det_config_t *c, tusk_error_t *err)
{
#define BAD(...) return tusk_error_set(err, TUSK_EPARAM, __VA_ARGS__)
    if ((size_t)c->shape >= NSHAPES)
        BAD("shape %d is not a known shape", (int)c->shape);
    if (!(c->radius > 0 && c->radius <= 500))
        BAD("radius %g mm: expected (0, 500]", c->radius);
    if (!(c->length > 0 && c->length <= 1000))
        BAD("length %g mm: expected (0, 1000]", c->length);
    if (!(c->hole_radius > 0 && c->hole_radius < c->radius))
        BAD("hole_radius %g mm: expected between 0 and the radius (%g)", c->hole_radius, c->radius);
    if (!(c->hole_front > 0 && c->hole_front < c->length))
        BAD("hole_front %g mm: the hole must end inside the crystal (0, %g)", c->hole_front, c->length);
    if (c->rings < 1 || c->rings > DET_MAX_RINGS)
        BAD("rings %u: expected 1..%d", c->rings, DET_MAX_RINGS);
    if (c->sectors < 1 || c->sectors > DET_MAX_SECTORS)
        BAD("sectors %u: expected 1..%d", c->sectors, DET_MAX_SECTORS);
    double sum = 0;
    for (unsigned i = 0; i < c->rings; i++) {
        if (!(c->ring_thickness[i] > 0))
            BAD("ring_thickness of ring %u is %g mm: expected > 0", i + 1, c->ring_thickness[i]);
        sum += c->ring_thickness[i];
    }
    if (fabs(sum - c->length) > 1e-6 * c->length)
        BAD("ring thicknesses add up to %g mm, the length is %g mm", sum, c->length);
    if (!isfinite(c->sector_offset_deg))
        BAD("sector_offset_deg is not a number");
    if (!isfinite(c->impurity_front) || !isfinite(c->impurity_back) || fabs(c->impurity_front) > 1000 ||
        fabs(c->impurity_back) > 1000)
        BAD("impurities %g, %g (1e10 cm^-3): out of range", c->impurity_front, c->impurity_back);
    if (!(c->bias > 0 && c->bias <= 10000))
        BAD("bias %g V: expected (0, 10000]", c->bias);
    if (!(c->field_grid >= 0.1 && c->field_grid <= c->radius / 4))
        BAD("field_grid %g mm: expected [0.1, radius/4 = %g]", c->field_grid, c->radius / 4);
    if (!(c->basis_grid >= 0.1 && c->basis_grid <= c->radius))
        BAD("basis_grid %g mm: expected [0.1, radius]", c->basis_grid);
    if (c->samples < 1 || c->samples > 10000)
        BAD("samples %u: expected 1..10000", c->samples);
    if (!(c->step_ns > 0 && c->step_ns <= 10))
        BAD("step_ns %g: expected (0, 10]", c->step_ns);
    if (!(c->sample_ns >= c->step_ns && c->sample_ns <= 1000))
        BAD("sample_ns %g: expected [step_ns = %g, 1000]", c->sample_ns, c->step_ns);
    if (!(c->preamp_rise_ns >= 0 && c->preamp_rise_ns <= 1000))
        BAD("preamp_rise_ns %g: expected [0, 1000]", c->preamp_rise_ns);
    if (c->shape == DET_SHAPE_TAPERED) {
        if (c->sides < 3 || c->sides > DET_MAX_SIDES)
            BAD("shape tapered: %u corners (front, back): expected 3 to %d", c->sides, DET_MAX_SIDES);
        for (unsigned k = 0; k < c->sides; k++)
            if (!isfinite(c->front[k][0]) || !isfinite(c->front[k][1]) || !isfinite(c->back[k][0]) ||
                !isfinite(c->back[k][1]))
                BAD("shape tapered: corner %u is not a number", k + 1);
        /* Convex and counter-clockwise at both ends, and the hole inside
         * with 1 mm to spare at every depth. */
        for (int end = 0; end < 2; end++)
            for (unsigned k = 0; k < c->sides; k++) {
                double a[2], b[2], d[2];
                corner_at(c, k, end * c->length, a);
                corner_at(c, (k + 1) % c->sides, end * c->length, b);
                corner_at(c, (k + 2) % c->sides, end * c->length, d);
                double turn = (b[0] - a[0]) * (d[1] - b[1]) - (b[1] - a[1]) * (d[0] - b[0]);
                if (!(turn > 0))
                    BAD("shape tapered: the %s outline is not convex and counter-clockwise at corner %u",
                        end ? "back" : "front", (k + 1) % c->sides + 1);
            }
        for (int i = 0; i <= 16; i++)
            for (unsigned k = 0; k < c->sides; k++) {
                double z = c->length * i / 16.0, room = -beyond_side(c, k, z, 0.0, 0.0);
                if (!(room >= c->hole_radius + 1.0))
                    BAD("shape tapered: side %u passes %.3g mm from the axis at z = %g mm; the hole (radius %g) "
                        "needs %g",
                        k + 1, room, z, c->hole_radius, c->hole_radius + 1.0);
            }
    } else if (c->sides != 0) {
        BAD("shape %s has no corners (sides %u)", shapes[c->shape].name, c->sides);
    }
#undef BAD
    return TUSK_OK;
}

size_t det_config_format(const det_config_t *c, char *buf, size_t cap)
{
    char rings[DET_MAX_RINGS * 24] = "";
    size_t used = 0;
    for (unsigned i = 0; i < c->rings; i++)
        used += (size_t)snprintf(rings + used, sizeof rings - used, "%s%.17g", i ? "," : "", c->ring_thickness[i]);
    /* A tapered shape's corners, after the rest. */
    char outline[2 * (16 + 2 * DET_MAX_SIDES * 26)] = "";
    if (c->shape == DET_SHAPE_TAPERED) {
        size_t at = 0;
        for (int end = 0; end < 2; end++) {
            at += (size_t)snprintf(outline + at, sizeof outline - at, "%s =", end ? "back" : "front");
            for (unsigned k = 0; k < c->sides && k < DET_MAX_SIDES; k++) {
                const double *v = end ? c->back[k] : c->front[k];
                at += (size_t)snprintf(outline + at, sizeof outline - at, " %.17g %.17g", v[0], v[1]);
            }
            at += (size_t)snprintf(outline + at, sizeof outline - at, "\n");
        }
    }
    int n = snprintf(buf, cap,
                     "shape = %s\nradius = %.17g\nlength = %.17g\nhole_radius = %.17g\nhole_front = %.17g\n"
                     "sectors = %u\nring_thickness = %s\nsector_offset_deg = %.17g\nimpurity_front = %.17g\n"
                     "impurity_back = %.17g\nbias = %.17g\nfield_grid = %.17g\nbasis_grid = %.17g\n"
                     "samples = %u\nsample_ns = %.17g\nstep_ns = %.17g\npreamp_rise_ns = %.17g\nsymmetry = %s\n%s",
                     shapes[c->shape].name, c->radius, c->length, c->hole_radius, c->hole_front, c->sectors, rings,
                     c->sector_offset_deg,
                     c->impurity_front, c->impurity_back, c->bias, c->field_grid, c->basis_grid, c->samples,
                     c->sample_ns, c->step_ns, c->preamp_rise_ns, c->symmetry ? "on" : "off", outline);
    return n < 0 ? 0 : (size_t)n;
}

/* ---- the crystal ------------------------------------------------------------ */

int det_crystal_new(det_crystal_t **out, const det_config_t *cfg, tusk_error_t *err)
{
    *out = NULL;
    int st = det_config_check(cfg, err);
    if (st)
        return st;
    det_crystal_t *c = calloc(1, sizeof *c);
    if (!c)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    c->cfg = *cfg;
    double z = 0;
    for (unsigned i = 0; i < cfg->rings; i++) {
        c->ring_start[i] = z;
        z += cfg->ring_thickness[i];
    }
    c->ring_start[cfg->rings] = cfg->length;
    c->sector_width = 2 * M_PI / cfg->sectors;
    c->offset = cfg->sector_offset_deg * M_PI / 180;
    if (cfg->shape == DET_SHAPE_TAPERED && cfg->sides == cfg->sectors) {
        /* Convex around the axis: the corners' angles increase. */
        c->by_corner = true;
        double a0 = atan2(cfg->front[0][1], cfg->front[0][0]);
        for (unsigned k = 0; k < cfg->sides; k++) {
            double a = fmod(atan2(cfg->front[k][1], cfg->front[k][0]) - a0, 2 * M_PI);
            c->corner_rel[k] = a < 0 ? a + 2 * M_PI : a;
        }
        c->corner_rel[cfg->sides] = 2 * M_PI;
        c->offset = a0;
    }
    *out = c;
    return TUSK_OK;
}

void det_crystal_destroy(det_crystal_t **c)
{
    if (c) {
        free(*c);
        *c = NULL;
    }
}

const det_config_t *det_crystal_config(const det_crystal_t *c)
{
    return &c->cfg;
}

unsigned det_crystal_segments(const det_crystal_t *c)
{
    return c->cfg.rings * c->cfg.sectors;
}

unsigned det_crystal_electrodes(const det_crystal_t *c)
{
    return det_crystal_segments(c) + 1;
}

unsigned det_crystal_core(const det_crystal_t *c)
{
    return det_crystal_segments(c);
}

/* Where a point is: THE geometry rule. det_crystal_inside and
 * det_crystal_contact_of both answer from it, so a point is either
 * germanium or outside next to exactly one kind of surface, never both
 * or neither (no second formula: comparing sqrt(x^2 + y^2) with the hole
 * radius instead of x^2 + y^2 with its square disagrees on points within
 * an ulp of the hole's wall, where a drift's bisection ends). */
enum region {
    REGION_GERMANIUM, /* closed surfaces included */
    REGION_HOLE,      /* the core hole, its bottom and its opening beyond the back: the core contact */
    REGION_BACK,      /* beyond the back face: passivated */
    REGION_MANTLE     /* beyond the mantle or the front face (and their edge): the segments */
};

static enum region region_of(const det_config_t *g, double x, double y, double z)
{
    /* The hole is open to the back and ends hole_front behind the front. */
    if (z > g->hole_front && x * x + y * y < g->hole_radius * g->hole_radius)
        return REGION_HOLE;
    if (z >= 0 && z <= g->length && shapes[g->shape].outline(g, x, y, z))
        return REGION_GERMANIUM;
    return z > g->length ? REGION_BACK : REGION_MANTLE;
}

bool det_crystal_inside(const det_crystal_t *c, double x, double y, double z)
{
    return region_of(&c->cfg, x, y, z) == REGION_GERMANIUM;
}

/* The signed area of the triangle (0, a, b) within the circle of radius r
 * about 0 (positive when a to b turns counter-clockwise). */
static double triangle_in_circle(const double a[2], const double b[2], double r)
{
    double ax = a[0], ay = a[1], dx = b[0] - a[0], dy = b[1] - a[1];
    /* Where the segment a + t d crosses the circle, t in (0, 1). */
    double qa = dx * dx + dy * dy, qb = 2 * (ax * dx + ay * dy), qc = ax * ax + ay * ay - r * r;
    double ts[4] = {0.0, 0.0, 0.0, 1.0};
    int n = 1;
    double disc = qb * qb - 4 * qa * qc;
    if (qa > 0 && disc > 0) {
        double sq = sqrt(disc), t1 = (-qb - sq) / (2 * qa), t2 = (-qb + sq) / (2 * qa);
        if (t1 > 0 && t1 < 1)
            ts[n++] = t1;
        if (t2 > 0 && t2 < 1)
            ts[n++] = t2;
    }
    ts[n++] = 1.0;
    double area = 0;
    for (int i = 0; i + 1 < n; i++) {
        double p[2] = {ax + ts[i] * dx, ay + ts[i] * dy}, q[2] = {ax + ts[i + 1] * dx, ay + ts[i + 1] * dy};
        double m[2] = {0.5 * (p[0] + q[0]), 0.5 * (p[1] + q[1])};
        if (m[0] * m[0] + m[1] * m[1] <= r * r)
            area += 0.5 * (p[0] * q[1] - p[1] * q[0]); /* a triangle */
        else
            area += 0.5 * r * r * atan2(p[0] * q[1] - p[1] * q[0], p[0] * q[0] + p[1] * q[1]); /* a sector */
    }
    return area;
}

/* The outline's area at depth z, mm^2 (hole not taken out). */
static double outline_area(const det_config_t *g, double z)
{
    if (g->shape != DET_SHAPE_TAPERED)
        return M_PI * g->radius * g->radius;
    double area = 0;
    for (unsigned k = 0; k < g->sides; k++) {
        double a[2], b[2];
        corner_at(g, k, z, a);
        corner_at(g, (k + 1) % g->sides, z, b);
        area += triangle_in_circle(a, b, g->radius);
    }
    return area;
}

double det_crystal_volume(const det_crystal_t *c, unsigned steps)
{
    const det_config_t *g = &c->cfg;
    if (steps == 0)
        steps = 1;
    double v = 0, dz = g->length / steps;
    for (unsigned i = 0; i < steps; i++) {
        double z = (i + 0.5) * dz;
        v += outline_area(g, z) * dz;
    }
    v -= M_PI * g->hole_radius * g->hole_radius * (g->length - g->hole_front);
    return v / 1000.0;
}

static unsigned sector_of(const det_crystal_t *c, double x, double y)
{
    double a = atan2(y, x) - c->offset;
    a = fmod(a, 2 * M_PI);
    if (a < 0)
        a += 2 * M_PI;
    if (c->by_corner) {
        unsigned s = 0;
        while (s + 1 < c->cfg.sectors && a >= c->corner_rel[s + 1])
            s++;
        return s;
    }
    unsigned s = (unsigned)(a / c->sector_width);
    return s < c->cfg.sectors ? s : c->cfg.sectors - 1;
}

static unsigned ring_of(const det_crystal_t *c, double z)
{
    for (unsigned i = 1; i < c->cfg.rings; i++)
        if (z < c->ring_start[i])
            return i - 1;
    return c->cfg.rings - 1;
}

int det_crystal_segment_of(const det_crystal_t *c, double x, double y, double z)
{
    if (!det_crystal_inside(c, x, y, z))
        return -1;
    return (int)(sector_of(c, x, y) * c->cfg.rings + ring_of(c, z));
}

unsigned det_crystal_ring_of_segment(const det_crystal_t *c, unsigned segment)
{
    return segment % c->cfg.rings;
}

unsigned det_crystal_sector_of_segment(const det_crystal_t *c, unsigned segment)
{
    return segment / c->cfg.rings;
}

int det_crystal_contact_of(const det_crystal_t *c, double x, double y, double z)
{
    switch (region_of(&c->cfg, x, y, z)) {
    case REGION_HOLE:
        return (int)det_crystal_core(c);
    case REGION_MANTLE:
        return (int)(sector_of(c, x, y) * c->cfg.rings + ring_of(c, z < 0 ? 0 : z));
    case REGION_GERMANIUM:
    case REGION_BACK:
        break;
    }
    return -1;
}

const char *det_crystal_electrode_name(const det_crystal_t *c, unsigned e, char *buf, size_t cap)
{
    if (e == det_crystal_core(c))
        snprintf(buf, cap, "CC");
    else if (e < det_crystal_segments(c))
        snprintf(buf, cap, "%c%u", 'A' + (int)(e / c->cfg.rings), e % c->cfg.rings + 1);
    else
        snprintf(buf, cap, "?%u", e);
    return buf;
}

double det_crystal_impurity(const det_crystal_t *c, double z)
{
    double t = z / c->cfg.length;
    if (t < 0)
        t = 0;
    if (t > 1)
        t = 1;
    return c->cfg.impurity_front + (c->cfg.impurity_back - c->cfg.impurity_front) * t;
}

bool det_crystal_symmetric(const det_crystal_t *c)
{
    return shapes[c->cfg.shape].symmetric;
}

void det_crystal_rotate(const det_crystal_t *c, int steps, double *x, double *y)
{
    double a = steps * c->sector_width, ca = cos(a), sa = sin(a);
    double nx = ca * *x - sa * *y, ny = sa * *x + ca * *y;
    *x = nx;
    *y = ny;
}
