/* array.c - the array geometry: where each crystal is, frames, ray chords
 * through the crystals' bounding cylinders, the overlap check. See
 * tusk/array.h. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tusk/params.h"
#include "tusk/array.h"
#include "agata.h"
#include "base/textfile.h"
#include "base/grow.h"

#define PI 3.14159265358979323846
#define DEG (PI / 180.0)

struct array {
    size_t n;
    array_place_t *place;  /* sorted by id */
    double (*centre)[3];   /* bounding-sphere centre of each envelope */
    double sphere_r2;      /* its radius squared, a hair larger (rounding) */
    det_crystal_t *crystal;
    double radius, length; /* of the crystal's cylinder */
    double gap;
    double clearance;      /* least clearance between two capsules; INFINITY for one crystal */
    size_t near_a, near_b; /* the pair that has it */
    /* AGATA's layout (agata = IDS): its three shapes, their sides, the
     * passive material around them. */
    bool agata, capsules, cryostats;
    det_crystal_t *shape[AGATA_SHAPES];
    agata_shape_t walls[AGATA_SHAPES];
    /* The envelope each crystal's chords are taken through: a cylinder
     * about its axis holding its germanium and its passive material. */
    double env_r, env_z0, env_z1;
};

/* ---- vectors ------------------------------------------------------------- */

static double dot(const double a[3], const double b[3])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static void cross(const double a[3], const double b[3], double out[3])
{
    out[0] = a[1] * b[2] - a[2] * b[1];
    out[1] = a[2] * b[0] - a[0] * b[2];
    out[2] = a[0] * b[1] - a[1] * b[0];
}

static double clamp01(double x)
{
    return x < 0.0 ? 0.0 : x > 1.0 ? 1.0 : x;
}

/* An angle in [0, 360). */
static double wrap360(double deg)
{
    double w = fmod(deg, 360.0);
    if (w < 0.0)
        w += 360.0;
    return w >= 360.0 ? 0.0 : w;
}

/* The local x, y, z of a crystal whose axis points along (theta, phi),
 * turned by roll about it (the header's convention, poles included). */
static void make_frame(double theta_deg, double phi_deg, double roll_deg, double axis[3][3])
{
    double st = sin(theta_deg * DEG), ct = cos(theta_deg * DEG);
    double sp = sin(phi_deg * DEG), cp = cos(phi_deg * DEG);
    double sr = sin(roll_deg * DEG), cr = cos(roll_deg * DEG);
    double et[3], ep[3] = {-sp, cp, 0.0};
    if (theta_deg == 0.0 || theta_deg == 180.0) {
        et[0] = cp;
        et[1] = sp;
        et[2] = 0.0;
    } else {
        et[0] = ct * cp;
        et[1] = ct * sp;
        et[2] = -st;
    }
    double *x = axis[0], *y = axis[1], *z = axis[2];
    z[0] = st * cp;
    z[1] = st * sp;
    z[2] = ct;
    for (int k = 0; k < 3; k++)
        x[k] = cr * et[k] + sr * ep[k];
    cross(z, x, y);
}

/* Shortest distance between the segments p1-q1 and p2-q2 (Ericson,
 * Real-Time Collision Detection, 5.1.9). Both have positive length. */
static double segment_distance(const double p1[3], const double q1[3], const double p2[3], const double q2[3])
{
    double d1[3], d2[3], r[3];
    for (int k = 0; k < 3; k++) {
        d1[k] = q1[k] - p1[k];
        d2[k] = q2[k] - p2[k];
        r[k] = p1[k] - p2[k];
    }
    double a = dot(d1, d1), e = dot(d2, d2), f = dot(d2, r), c = dot(d1, r), b = dot(d1, d2);
    double denom = a * e - b * b;
    double s = denom > 1e-12 * a * e ? clamp01((b * f - c * e) / denom) : 0.0;
    double t = (b * s + f) / e;
    if (t < 0.0) {
        t = 0.0;
        s = clamp01(-c / a);
    } else if (t > 1.0) {
        t = 1.0;
        s = clamp01((b - c) / a);
    }
    double d[3];
    for (int k = 0; k < 3; k++)
        d[k] = p1[k] + d1[k] * s - p2[k] - d2[k] * t;
    return sqrt(dot(d, d));
}

/* ---- parsing ------------------------------------------------------------- */

/* A crystal as parsed, with the key that made it (for messages). */
typedef struct pending {
    array_place_t place;
    const char *key;
} pending_t;

typedef struct builder {
    const char *origin;
    pending_t *items;
    size_t n, cap;
    double distance;
} builder_t;

/* Room for `more` crystals. */
static int reserve(builder_t *b, size_t more, const char *key, tusk_error_t *err)
{
    if (b->n + more > ARRAY_MAX_CRYSTALS)
        return tusk_error_set(err, TUSK_EPARAM, "%s: %s: more than %d crystals in all", b->origin, key,
                              ARRAY_MAX_CRYSTALS);
    if (tusk_grow(&b->items, &b->cap, b->n + more, sizeof *b->items) != 0)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    return TUSK_OK;
}

static void add(builder_t *b, unsigned id, double theta, double phi, double roll, const char *key)
{
    pending_t *p = &b->items[b->n++];
    memset(p, 0, sizeof *p);
    p->key = key;
    p->place.id = id;
    p->place.theta_deg = theta;
    p->place.phi_deg = phi;
    p->place.roll_deg = roll;
    p->place.distance = b->distance;
    make_frame(theta, phi, roll, p->place.axis);
    for (int k = 0; k < 3; k++)
        p->place.front[k] = b->distance * p->place.axis[2][k];
}

/* The decimal number after a key's prefix (digits only, at most max). */
static int key_index(const builder_t *b, const char *key, const char *suffix, unsigned long max, unsigned *out,
                     tusk_error_t *err)
{
    unsigned long v = 0;
    const char *s = suffix;
    for (; *s >= '0' && *s <= '9'; s++) {
        v = v * 10 + (unsigned long)(*s - '0');
        if (v > max)
            break;
    }
    if (s == suffix || *s != '\0' || v > max)
        return tusk_error_set(err, TUSK_EPARAM, "%s: %s: '%s' is not a number from 0 to %lu", b->origin, key,
                              suffix, max);
    *out = (unsigned)v;
    return TUSK_OK;
}

/* "THETA PHI [ROLL]", degrees. */
static int parse_angles(const builder_t *b, const char *key, const char *value, double *theta, double *phi,
                        double *roll, tusk_error_t *err)
{
    double v[3] = {0.0, 0.0, 0.0};
    int n = 0;
    const char *s = value;
    for (;;) {
        while (*s == ' ' || *s == '\t')
            s++;
        if (*s == '\0')
            break;
        if (n == 3)
            return tusk_error_set(err, TUSK_EPARAM, "%s: %s: expected 'THETA PHI [ROLL]' in degrees, got '%s'",
                                  b->origin, key, value);
        char *end;
        double x = strtod(s, &end);
        if (end == s || (*end != '\0' && *end != ' ' && *end != '\t'))
            return tusk_error_set(err, TUSK_EPARAM, "%s: %s: expected 'THETA PHI [ROLL]' in degrees, got '%s'",
                                  b->origin, key, value);
        if (!isfinite(x))
            return tusk_error_set(err, TUSK_EPARAM, "%s: %s: '%.*s' is not a finite angle", b->origin, key,
                                  (int)(end - s), s);
        v[n++] = x;
        s = end;
    }
    if (n < 2)
        return tusk_error_set(err, TUSK_EPARAM, "%s: %s: expected 'THETA PHI [ROLL]' in degrees, got '%s'",
                              b->origin, key, value);
    if (v[0] < 0.0 || v[0] > 180.0)
        return tusk_error_set(err, TUSK_EPARAM, "%s: %s: theta %g is outside [0, 180] degrees", b->origin, key,
                              v[0]);
    *theta = v[0];
    *phi = v[1];
    *roll = v[2];
    return TUSK_OK;
}

static int add_crystal(builder_t *b, const char *key, const char *value, tusk_error_t *err)
{
    unsigned id;
    double th, ph, ro;
    int st = key_index(b, key, key + strlen("crystal."), ARRAY_MAX_ID, &id, err);
    if (!st)
        st = parse_angles(b, key, value, &th, &ph, &ro, err);
    if (!st)
        st = reserve(b, 1, key, err);
    if (!st)
        add(b, id, th, ph, ro, key);
    return st;
}

static int add_triple(builder_t *b, const char *key, const char *value, double spread, tusk_error_t *err)
{
    unsigned k;
    double th, ph, ro;
    int st = key_index(b, key, key + strlen("triple."), (ARRAY_MAX_ID - 2) / 3, &k, err);
    if (!st)
        st = parse_angles(b, key, value, &th, &ph, &ro, err);
    if (!st)
        st = reserve(b, 3, key, err);
    if (st)
        return st;
    /* The cluster's frame: its x at the cluster roll, y = axis cross x. */
    double c[3][3];
    make_frame(th, ph, ro, c);
    double cs = cos(spread * DEG), ss = sin(spread * DEG);
    for (unsigned j = 0; j < 3; j++) {
        double az = 120.0 * j * DEG, u[3];
        for (int i = 0; i < 3; i++)
            u[i] = cs * c[2][i] + ss * (cos(az) * c[0][i] + sin(az) * c[1][i]);
        double theta = atan2(hypot(u[0], u[1]), u[2]) / DEG;
        double phi = wrap360(atan2(u[1], u[0]) / DEG);
        add(b, 3 * k + j, theta, phi, wrap360(ro + 120.0 * j), key);
    }
    return TUSK_OK;
}

static int add_shell(builder_t *b, unsigned n, double hole_deg, tusk_error_t *err)
{
    int st = reserve(b, n, "shell", err);
    if (st)
        return st;
    const double golden = 180.0 * (3.0 - sqrt(5.0)); /* the golden angle, degrees */
    double zmax = cos(hole_deg * DEG);
    for (unsigned i = 0; i < n; i++) {
        double z = zmax * (1.0 - (2.0 * i + 1.0) / n);
        add(b, i, acos(z) / DEG, wrap360(golden * i), 0.0, "shell");
    }
    return TUSK_OK;
}

static int by_id(const void *x, const void *y)
{
    unsigned a = ((const pending_t *)x)->place.id, b = ((const pending_t *)y)->place.id;
    return (a > b) - (a < b);
}

/* Every pair at least 2 r + gap apart (axis segments), and the least
 * clearance. A pair whose capsules' bounding spheres are further apart
 * than both the gap and the least clearance so far is skipped. */
static int check_overlap(array_t *a, const pending_t *items, const char *origin, tusk_error_t *err)
{
    double r2 = 2.0 * a->radius, L = a->length;
    a->clearance = INFINITY;
    a->near_a = a->near_b = 0;
    for (size_t i = 0; i < a->n; i++) {
        const array_place_t *p = &a->place[i];
        for (size_t j = i + 1; j < a->n; j++) {
            const array_place_t *q = &a->place[j];
            /* Capsule i lies within L/2 + r of centre i: the segments are
             * at least |ci - cj| - L apart. */
            double d[3] = {a->centre[i][0] - a->centre[j][0], a->centre[i][1] - a->centre[j][1],
                           a->centre[i][2] - a->centre[j][2]};
            double bound = fmax(a->gap, a->clearance) + r2 + L;
            if (isfinite(bound) && dot(d, d) >= bound * bound)
                continue;
            double pb[3], qb[3];
            for (int k = 0; k < 3; k++) {
                pb[k] = p->front[k] + L * p->axis[2][k];
                qb[k] = q->front[k] + L * q->axis[2][k];
            }
            double dist = segment_distance(p->front, pb, q->front, qb);
            if (dist - r2 < a->gap)
                return tusk_error_set(err, TUSK_EPARAM,
                                      "%s: crystals %u (%s) and %u (%s) overlap: their axes come within %.2f mm, "
                                      "%g mm needed (radius %g + %g, gap %g)",
                                      origin, p->id, items[i].key, q->id, items[j].key, dist, r2 + a->gap,
                                      a->radius, a->radius, a->gap);
            if (dist - r2 < a->clearance) {
                a->clearance = dist - r2;
                a->near_a = i;
                a->near_b = j;
            }
        }
    }
    return TUSK_OK;
}

/* The bounding spheres of the envelopes (env_* set). */
static void set_envelope(array_t *a)
{
    double mid = 0.5 * (a->env_z0 + a->env_z1), half = 0.5 * (a->env_z1 - a->env_z0);
    double r2 = a->env_r * a->env_r + half * half;
    a->sphere_r2 = r2 * (1.0 + 1e-9) + 1e-9;
    for (size_t i = 0; i < a->n; i++)
        for (int k = 0; k < 3; k++)
            a->centre[i][k] = a->place[i].front[k] + mid * a->place[i].axis[2][k];
}

static int build(array_t **out, builder_t *b, double gap, const det_config_t *cfg, tusk_error_t *err)
{
    if (b->n == 0)
        return tusk_error_set(err, TUSK_EPARAM, "%s: no crystals: give crystal.ID, triple.K or shell", b->origin);
    qsort(b->items, b->n, sizeof *b->items, by_id);
    for (size_t i = 1; i < b->n; i++)
        if (b->items[i].place.id == b->items[i - 1].place.id)
            return tusk_error_set(err, TUSK_EPARAM, "%s: crystal id %u is given twice: by %s and by %s", b->origin,
                                  b->items[i].place.id, b->items[i - 1].key, b->items[i].key);
    array_t *a = calloc(1, sizeof *a);
    if (!a)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    a->place = malloc(b->n * sizeof *a->place);
    a->centre = malloc(b->n * sizeof *a->centre);
    int st = a->place && a->centre ? TUSK_OK : tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    if (!st)
        st = det_crystal_new(&a->crystal, cfg, err);
    if (st) {
        array_destroy(&a);
        return st;
    }
    a->n = b->n;
    a->radius = cfg->radius;
    a->length = cfg->length;
    a->gap = gap;
    a->env_r = a->radius;
    a->env_z0 = 0.0;
    a->env_z1 = a->length;
    for (size_t i = 0; i < a->n; i++)
        a->place[i] = b->items[i].place;
    set_envelope(a);
    st = check_overlap(a, b->items, b->origin, err);
    if (st) {
        array_destroy(&a);
        return st;
    }
    *out = a;
    return TUSK_OK;
}

/* ---- AGATA's layout ------------------------------------------------------- */

/* "0-179", "0-14,20,30-32": AGATA crystal numbers, each once. */
static int agata_ids(const char *origin, const char *text, bool chosen[AGATA_CRYSTALS], tusk_error_t *err)
{
    memset(chosen, 0, AGATA_CRYSTALS * sizeof *chosen);
    const char *s = text;
    unsigned count = 0;
    for (;;) {
        while (*s == ' ' || *s == '\t' || *s == ',')
            s++;
        if (!*s)
            break;
        unsigned long lo = 0, hi;
        const char *d = s;
        while (*s >= '0' && *s <= '9' && lo <= AGATA_CRYSTALS)
            lo = lo * 10 + (unsigned long)(*s++ - '0');
        if (s == d)
            return tusk_error_set(err, TUSK_EPARAM, "%s: agata: expected crystal numbers and ranges (0-179), got '%s'",
                                  origin, text);
        hi = lo;
        if (*s == '-') {
            d = ++s;
            hi = 0;
            while (*s >= '0' && *s <= '9' && hi <= AGATA_CRYSTALS)
                hi = hi * 10 + (unsigned long)(*s++ - '0');
            if (s == d)
                return tusk_error_set(err, TUSK_EPARAM, "%s: agata: a range without its end in '%s'", origin, text);
        }
        if (*s && *s != ',' && *s != ' ' && *s != '\t')
            return tusk_error_set(err, TUSK_EPARAM, "%s: agata: unexpected '%c' in '%s'", origin, *s, text);
        if (lo > hi || hi >= AGATA_CRYSTALS)
            return tusk_error_set(err, TUSK_EPARAM, "%s: agata: %lu-%lu: AGATA's crystals are 0 to %d", origin, lo, hi,
                                  AGATA_CRYSTALS - 1);
        for (unsigned long i = lo; i <= hi; i++) {
            if (chosen[i])
                return tusk_error_set(err, TUSK_EPARAM, "%s: agata: crystal %lu is given twice", origin, i);
            chosen[i] = true;
            count++;
        }
    }
    if (count == 0)
        return tusk_error_set(err, TUSK_EPARAM, "%s: agata: no crystal given", origin);
    return TUSK_OK;
}

static int passive_refused(const tusk_params_t *p, const char *origin, tusk_error_t *err)
{
    static const char *const keys[] = {"capsules", "cryostats"};
    for (int k = 0; k < 2; k++)
        if (tusk_params_get(p, keys[k]))
            return tusk_error_set(err, TUSK_EPARAM, "%s: %s: passive material goes with AGATA's crystals (agata = IDS)",
                                  origin, keys[k]);
    return TUSK_OK;
}

/* The direction angles of a crystal placed by its frame. */
static void angles_of(array_place_t *pl)
{
    const double *z = pl->axis[2], *x = pl->axis[0];
    pl->theta_deg = atan2(hypot(z[0], z[1]), z[2]) / DEG;
    pl->phi_deg = wrap360(atan2(z[1], z[0]) / DEG);
    double f[3][3];
    make_frame(pl->theta_deg, pl->phi_deg, 0.0, f); /* roll 0: x = e_theta */
    pl->roll_deg = wrap360(atan2(dot(x, f[1]), dot(x, f[0])) / DEG);
    pl->distance = sqrt(dot(pl->front, pl->front));
}

static int parse_agata(array_t **out, const tusk_params_t *p, const builder_t *b, const det_config_t *cfg,
                       tusk_error_t *err)
{
    const char *origin = b->origin;
    if (b->n > 0)
        return tusk_error_set(err, TUSK_EPARAM, "%s: agata: AGATA's layout does not mix with crystal.ID, triple.K or "
                              "shell", origin);
    if (tusk_params_get(p, "distance") || tusk_params_get(p, "triple_spread_deg") || tusk_params_get(p, "gap"))
        return tusk_error_set(err, TUSK_EPARAM, "%s: agata: AGATA's crystals sit where AGATA puts them (front faces "
                              "235 mm from the target): distance, gap and triple_spread_deg do not apply", origin);
    bool chosen[AGATA_CRYSTALS];
    int st = agata_ids(origin, tusk_params_get(p, "agata"), chosen, err);
    bool capsules = true, cryostats = true;
    if (st)
        return st;
    if ((st = tusk_params_bool(p, "capsules", true, &capsules, err)) != TUSK_OK ||
        (st = tusk_params_bool(p, "cryostats", true, &cryostats, err)) != TUSK_OK) {
        tusk_error_prefix(err, "%s", origin);
        return st;
    }
    array_t *a = calloc(1, sizeof *a);
    if (!a)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    size_t n = 0;
    for (unsigned i = 0; i < AGATA_CRYSTALS; i++)
        n += chosen[i];
    a->place = calloc(n, sizeof *a->place);
    a->centre = malloc(n * sizeof *a->centre);
    st = a->place && a->centre ? TUSK_OK : tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    a->agata = true;
    a->capsules = capsules;
    a->cryostats = cryostats;
    a->radius = cfg->radius;
    a->length = cfg->length;
    a->clearance = INFINITY;
    if (!st)
        st = det_crystal_new(&a->crystal, cfg, err);
    /* The three shapes, from crystals 0, 1 and 2. */
    double back_r = 0.0;
    for (unsigned s = 0; s < AGATA_SHAPES && !st; s++) {
        agata_shape_t *w = &a->walls[s];
        st = array_agata_derive(s, cfg->length, w, err);
        det_config_t c = *cfg;
        c.shape = DET_SHAPE_TAPERED;
        c.sides = w->sides;
        for (unsigned k = 0; !st && k < w->sides; k++) {
            memcpy(c.front[k], w->front[k], sizeof c.front[k]);
            memcpy(c.back[k], w->back[k], sizeof c.back[k]);
            back_r = fmax(back_r, hypot(w->back[k][0], w->back[k][1]));
        }
        if (!st && (st = det_crystal_new(&a->shape[s], &c, err)) != TUSK_OK)
            tusk_error_prefix(err, "%s: agata: crystal shape %c", origin, 'A' + (int)s);
    }
    for (unsigned i = 0; !st && i < AGATA_CRYSTALS; i++) {
        if (!chosen[i])
            continue;
        array_place_t *pl = &a->place[a->n++];
        pl->id = i;
        pl->shape = i % AGATA_SHAPES;
        array_agata_place(i, pl->front, pl->axis);
        angles_of(pl);
        pl->distance = AGATA_RADIUS; /* what array_agata_place put it at, without the rounding of |front| */
    }
    if (st) {
        array_destroy(&a);
        return st;
    }
    /* The envelope: the germanium's corners at the back lie within back_r
     * of the axis; the cryostat's walls, at most 4.2 mm out from the
     * sides, within back_r + 2 x 4.2 (a corner of 120 degrees moves by
     * 4.2 / sin 60); the capsule's back 1.2 mm behind the germanium. */
    double out_side = cryostats ? AGATA_HALF_BETWEEN : capsules ? AGATA_CAPSULE_GAP + AGATA_CAPSULE_WALL : 0.0;
    a->env_r = fmax(back_r, a->radius) + 2.0 * out_side;
    a->env_z0 = -(cryostats ? AGATA_HALF_BETWEEN - 0.25 : capsules ? AGATA_CAPSULE_GAP + AGATA_CAPSULE_WALL : 0.0);
    a->env_z1 = a->length + (capsules ? AGATA_CAPSULE_GAP + AGATA_CAPSULE_WALL : 0.0);
    set_envelope(a);
    *out = a;
    return TUSK_OK;
}

/* A number from the text: the parameter's own message, with the origin. */
static int scalar(const tusk_params_t *p, const char *origin, const char *key, double fallback, double *v,
                  tusk_error_t *err)
{
    int st = tusk_params_double(p, key, fallback, v, err);
    if (st)
        tusk_error_prefix(err, "%s", origin);
    return st;
}

static int parse_params(array_t **out, const tusk_params_t *p, const char *origin, const det_config_t *cfg,
                        tusk_error_t *err)
{
    static const char *const known[] = {"distance", "gap",   "triple_spread_deg", "crystal.*", "triple.*",
                                        "shell",    "shell_hole_deg", "agata",    "capsules",  "cryostats", NULL};
    int st = tusk_params_expect(p, known, err);
    if (st) {
        tusk_error_prefix(err, "%s", origin);
        return st;
    }
    double distance, gap, spread, hole;
    if ((st = scalar(p, origin, "distance", 235.0, &distance, err)) ||
        (st = scalar(p, origin, "gap", 1.0, &gap, err)) ||
        (st = scalar(p, origin, "triple_spread_deg", 12.0, &spread, err)) ||
        (st = scalar(p, origin, "shell_hole_deg", 20.0, &hole, err)))
        return st;
    if (distance <= 0.0)
        return tusk_error_set(err, TUSK_EPARAM, "%s: distance: %g mm is not positive", origin, distance);
    if (gap < 0.0)
        return tusk_error_set(err, TUSK_EPARAM, "%s: gap: %g mm is negative", origin, gap);
    if (!(spread > 0.0 && spread <= 90.0))
        return tusk_error_set(err, TUSK_EPARAM, "%s: triple_spread_deg: %g is outside (0, 90] degrees", origin,
                              spread);
    if (!(hole >= 0.0 && hole < 90.0))
        return tusk_error_set(err, TUSK_EPARAM, "%s: shell_hole_deg: %g is outside [0, 90) degrees", origin, hole);
    uint64_t shell = 0;
    if (tusk_params_get(p, "shell")) {
        if ((st = tusk_params_u64(p, "shell", 0, &shell, err))) {
            tusk_error_prefix(err, "%s", origin);
            return st;
        }
        if (shell == 0 || shell > ARRAY_MAX_CRYSTALS)
            return tusk_error_set(err, TUSK_EPARAM, "%s: shell: %llu crystals: give 1 to %d", origin,
                                  (unsigned long long)shell, ARRAY_MAX_CRYSTALS);
    }

    builder_t b = {.origin = origin, .distance = distance};
    for (size_t i = 0; i < tusk_params_count(p) && !st; i++) {
        const char *key = tusk_params_key(p, i), *value = tusk_params_value(p, i);
        if (strncmp(key, "crystal.", 8) == 0)
            st = add_crystal(&b, key, value, err);
        else if (strncmp(key, "triple.", 7) == 0)
            st = add_triple(&b, key, value, spread, err);
    }
    if (!st && shell)
        st = add_shell(&b, (unsigned)shell, hole, err);
    if (!st && tusk_params_get(p, "agata"))
        st = parse_agata(out, p, &b, cfg, err);
    else if (!st)
        st = passive_refused(p, origin, err);
    if (!st && !*out)
        st = build(out, &b, gap, cfg, err);
    free(b.items);
    return st;
}

int array_parse(array_t **out, const char *text, size_t size, const char *origin,
                const det_config_t *crystal, tusk_error_t *err)
{
    *out = NULL;
    det_config_t def;
    if (!crystal) {
        det_config_default(&def);
        crystal = &def;
    }
    if (!origin)
        origin = "array";
    tusk_params_t *p = tusk_params_new();
    if (!p)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    int st = tusk_params_parse(p, text ? text : "", text ? size : 0, origin, err);
    if (!st)
        st = parse_params(out, p, origin, crystal, err);
    tusk_params_destroy(&p);
    return st;
}

int array_load(array_t **out, const char *path, const det_config_t *crystal, tusk_error_t *err)
{
    *out = NULL;
    char *text;
    size_t n;
    int st = tusk_file_read(path, 1u << 20, &text, &n, err);
    if (st == TUSK_OK)
        st = array_parse(out, text, n, path, crystal, err);
    free(text);
    return st;
}

void array_destroy(array_t **array)
{
    if (!array || !*array)
        return;
    array_t *a = *array;
    det_crystal_destroy(&a->crystal);
    for (int s = 0; s < AGATA_SHAPES; s++)
        det_crystal_destroy(&a->shape[s]);
    free(a->place);
    free(a->centre);
    free(a);
    *array = NULL;
}

/* ---- queries ------------------------------------------------------------- */

size_t array_count(const array_t *a)
{
    return a->n;
}

const array_place_t *array_place(const array_t *a, size_t i)
{
    return i < a->n ? &a->place[i] : NULL;
}

const det_crystal_t *array_crystal(const array_t *a)
{
    return a->crystal;
}

const det_crystal_t *array_crystal_of(const array_t *a, size_t i)
{
    if (i >= a->n)
        return NULL;
    return a->agata ? a->shape[a->place[i].shape] : a->crystal;
}

double array_germanium_cm3(const array_t *a)
{
    double v[AGATA_SHAPES + 1] = {0.0};
    for (int s = 0; s < AGATA_SHAPES; s++)
        if (a->shape[s])
            v[s] = det_crystal_volume(a->shape[s], 900);
    v[AGATA_SHAPES] = det_crystal_volume(a->crystal, 900);
    double sum = 0.0;
    for (size_t i = 0; i < a->n; i++)
        sum += a->agata ? v[a->place[i].shape] : v[AGATA_SHAPES];
    return sum;
}

int array_index_of(const array_t *a, unsigned id)
{
    size_t lo = 0, hi = a->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (a->place[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < a->n && a->place[lo].id == id ? (int)lo : -1;
}

void array_to_local(const array_t *a, size_t i, const double world[3], double local[3])
{
    const array_place_t *p = &a->place[i];
    double v[3] = {world[0] - p->front[0], world[1] - p->front[1], world[2] - p->front[2]};
    for (int k = 0; k < 3; k++)
        local[k] = dot(p->axis[k], v);
}

void array_to_world(const array_t *a, size_t i, const double local[3], double world[3])
{
    const array_place_t *p = &a->place[i];
    double l[3] = {local[0], local[1], local[2]}; /* local may alias world */
    for (int k = 0; k < 3; k++)
        world[k] = p->front[k] + l[0] * p->axis[0][k] + l[1] * p->axis[1][k] + l[2] * p->axis[2][k];
}

void array_dir_to_local(const array_t *a, size_t i, const double world_dir[3], double local_dir[3])
{
    const array_place_t *p = &a->place[i];
    double v[3] = {world_dir[0], world_dir[1], world_dir[2]};
    for (int k = 0; k < 3; k++)
        local_dir[k] = dot(p->axis[k], v);
}

bool array_inside(const array_t *a, size_t i, const double world[3])
{
    double l[3];
    array_to_local(a, i, world, l);
    return det_crystal_inside(array_crystal_of(a, i), l[0], l[1], l[2]);
}

/* Within the germanium's outline moved out by `grow` (the sides, the
 * cylinder, the front and the back): the capsule's surfaces. */
static bool in_grown(const array_t *a, const agata_shape_t *w, double grow, const double l[3])
{
    if (l[2] < -grow || l[2] > a->length + grow)
        return false;
    double r = a->radius + grow;
    if (l[0] * l[0] + l[1] * l[1] > r * r)
        return false;
    for (unsigned k = 0; k < w->sides; k++)
        if (dot(w->side[k].n, l) > w->side[k].d + grow)
            return false;
    return true;
}

/* Within a cryostat's surface `out` mm beyond the germanium: its front and
 * its sides towards other clusters that far out, the sides within its
 * cluster on the planes halfway to the neighbours; open at the back. */
static bool in_cryostat(const array_t *a, const agata_shape_t *w, double out, const double l[3])
{
    if (l[2] < -out || l[2] > a->length)
        return false;
    for (unsigned k = 0; k < w->sides; k++)
        if (dot(w->side[k].n, l) > w->side[k].d + (w->side[k].between ? out : AGATA_HALF_IN_CLUSTER))
            return false;
    return true;
}

enum array_material array_material_at(const array_t *a, size_t i, const double world[3])
{
    double l[3];
    array_to_local(a, i, world, l);
    if (det_crystal_inside(array_crystal_of(a, i), l[0], l[1], l[2]))
        return ARRAY_GERMANIUM;
    if (!a->agata)
        return ARRAY_VACUUM;
    const agata_shape_t *w = &a->walls[a->place[i].shape];
    const double cap_in = AGATA_CAPSULE_GAP, cap_out = cap_in + AGATA_CAPSULE_WALL;
    if (a->capsules && in_grown(a, w, cap_out, l) && !in_grown(a, w, cap_in, l))
        return ARRAY_ALUMINIUM;
    const double cryo_in = cap_out + AGATA_CRYOSTAT_GAP, cryo_out = cryo_in + AGATA_CRYOSTAT_WALL;
    if (a->cryostats && in_cryostat(a, w, cryo_out, l) && !in_cryostat(a, w, cryo_in, l))
        return ARRAY_ALUMINIUM;
    return ARRAY_VACUUM;
}

bool array_passive(const array_t *a)
{
    return a->agata && (a->capsules || a->cryostats);
}

/* The stretch [t0, t1] of the ray o + t d (local frame) inside the
 * cylinder x^2 + y^2 <= r^2, z0 <= z <= z1; false when there is none. */
static bool cylinder_chord(const double o[3], const double d[3], double r, double z0, double z1, double *t0,
                           double *t1)
{
    double lo = -INFINITY, hi = INFINITY;
    if (d[2] != 0.0) {
        double a = (z0 - o[2]) / d[2], b = (z1 - o[2]) / d[2];
        lo = fmin(a, b);
        hi = fmax(a, b);
    } else if (o[2] < z0 || o[2] > z1) {
        return false;
    }
    double qa = d[0] * d[0] + d[1] * d[1];
    double qb = 2.0 * (o[0] * d[0] + o[1] * d[1]);
    double qc = o[0] * o[0] + o[1] * o[1] - r * r;
    if (qa == 0.0) {
        if (qc > 0.0)
            return false;
    } else {
        double disc = qb * qb - 4.0 * qa * qc;
        if (disc <= 0.0)
            return false;
        double q = -0.5 * (qb + copysign(sqrt(disc), qb));
        if (q == 0.0)
            return false;
        double ra = q / qa, rb = qc / q;
        lo = fmax(lo, fmin(ra, rb));
        hi = fmin(hi, fmax(ra, rb));
    }
    lo = fmax(lo, 0.0);
    if (!(hi > lo))
        return false;
    *t0 = lo;
    *t1 = hi;
    return true;
}

size_t array_chords(const array_t *a, const double origin[3], const double dir[3], array_chord_t *chords,
                    size_t max, size_t *total)
{
    size_t found = 0, written = 0;
    double dd = dot(dir, dir);
    for (size_t i = 0; i < a->n; i++) {
        /* Bounding sphere: the ray's closest approach to its centre. */
        double w[3] = {a->centre[i][0] - origin[0], a->centre[i][1] - origin[1], a->centre[i][2] - origin[2]};
        double tc = dot(w, dir) / dd, d2;
        if (tc <= 0.0) {
            d2 = dot(w, w);
        } else {
            double e[3] = {w[0] - tc * dir[0], w[1] - tc * dir[1], w[2] - tc * dir[2]};
            d2 = dot(e, e);
        }
        if (d2 > a->sphere_r2)
            continue;
        double o[3], d[3], t0, t1;
        array_to_local(a, i, origin, o);
        array_dir_to_local(a, i, dir, d);
        if (!cylinder_chord(o, d, a->env_r, a->env_z0, a->env_z1, &t0, &t1))
            continue;
        found++;
        /* Keep the first `max` by t_in, sorted (insertion). */
        if (written == max && (max == 0 || t0 >= chords[max - 1].t_in))
            continue;
        size_t k = written < max ? written++ : max - 1;
        while (k > 0 && chords[k - 1].t_in > t0) {
            chords[k] = chords[k - 1];
            k--;
        }
        chords[k] = (array_chord_t){.crystal = i, .t_in = t0, .t_out = t1};
    }
    if (total)
        *total = found;
    return written;
}

/* The solid angle (sr) of crystal i's germanium seen from the target. Its
 * sides come closer to the target's lines at its front than at its back
 * (they are moved in by a fixed distance), and the cylinder cuts more at
 * the back: at each of 720 azimuths about the axis the widest angle from
 * the axis over 19 depths, and 720 triangles about the front face's
 * centre through those directions (Van Oosterom and Strackee). */
static double crystal_solid_angle(const array_t *a, size_t i)
{
    const array_place_t *pl = &a->place[i];
    const agata_shape_t *w = &a->walls[pl->shape];
    enum { N = 720, DEPTHS = 19 };
    double sum = 0.0, prev[3] = {0.0, 0.0, 0.0}, first[3] = {0.0, 0.0, 0.0};
    const double *c = pl->front;
    for (int k = 0; k <= N; k++) {
        double phi = 2.0 * PI * (k % N) / N, ux = cos(phi), uy = sin(phi), p[3] = {0.0, 0.0, 0.0}, widest = -1.0;
        for (int j = 0; j < DEPTHS; j++) {
            double z = a->length * j / (DEPTHS - 1), r = a->radius;
            for (unsigned s = 0; s < w->sides; s++) {
                double along = w->side[s].n[0] * ux + w->side[s].n[1] * uy;
                if (along > 0.0)
                    r = fmin(r, (w->side[s].d - w->side[s].n[2] * z) / along);
            }
            double local[3] = {r * ux, r * uy, z}, q[3];
            array_to_world(a, i, local, q);
            double angle = acos(fmin(1.0, dot(q, pl->axis[2]) / sqrt(dot(q, q))));
            if (angle > widest) {
                widest = angle;
                for (int m = 0; m < 3; m++)
                    p[m] = q[m] * (pl->distance / sqrt(dot(q, q)));
            }
        }
        if (k == 0) {
            memcpy(first, p, sizeof p);
        } else {
            const double *q = k == N ? first : p;
            double bc[3];
            cross(prev, q, bc);
            double la = sqrt(dot(c, c)), lb = sqrt(dot(prev, prev)), lc = sqrt(dot(q, q));
            double num = fabs(dot(c, bc));
            double den = la * lb * lc + dot(c, prev) * lc + dot(c, q) * lb + dot(prev, q) * la;
            sum += 2.0 * atan2(num, den);
        }
        memcpy(prev, p, sizeof p);
    }
    return sum;
}

size_t array_describe(const array_t *a, char *buf, size_t cap)
{
    if (a->agata) {
        unsigned count[AGATA_SHAPES] = {0};
        double cover = 0.0;
        for (size_t i = 0; i < a->n; i++) {
            count[a->place[i].shape]++;
            cover += crystal_solid_angle(a, i) / (4.0 * PI);
        }
        int n = snprintf(buf, cap,
                         "%zu crystal%s of AGATA's 4 pi layout (A180), ids %u to %u: %u A, %u B, %u C (%.0f, %.0f and "
                         "%.0f cm3 of germanium), %.0f cm3 in all; front faces %g mm from the target; capsules %s, "
                         "cryostats %s; the germanium covers %.1f %% of 4 pi",
                         a->n, a->n == 1 ? "" : "s", a->place[0].id, a->place[a->n - 1].id, count[0], count[1],
                         count[2], det_crystal_volume(a->shape[0], 900), det_crystal_volume(a->shape[1], 900),
                         det_crystal_volume(a->shape[2], 900), array_germanium_cm3(a), round(a->place[0].distance),
                         a->capsules ? "yes" : "no", a->cryostats ? "yes" : "no", 100.0 * cover);
        return n < 0 ? 0 : (size_t)n;
    }
    double dmin = INFINITY, dmax = -INFINITY, cover = 0.0;
    for (size_t i = 0; i < a->n; i++) {
        double d = a->place[i].distance;
        dmin = fmin(dmin, d);
        dmax = fmax(dmax, d);
        cover += 0.5 * (1.0 - d / hypot(d, a->radius));
    }
    char dist[64], clear[160];
    if (dmin == dmax)
        snprintf(dist, sizeof dist, "%g mm", dmin);
    else
        snprintf(dist, sizeof dist, "%g to %g mm", dmin, dmax);
    if (a->n < 2)
        snprintf(clear, sizeof clear, "no neighbours");
    else
        snprintf(clear, sizeof clear, "least clearance %.2f mm (crystals %u and %u; gap %g mm)", a->clearance,
                 a->place[a->near_a].id, a->place[a->near_b].id, a->gap);
    int n = snprintf(buf, cap,
                     "%zu crystal%s, ids %u to %u, front faces %s from the target; radius %g mm, length %g mm; "
                     "%s; front faces cover %.1f %% of 4 pi",
                     a->n, a->n == 1 ? "" : "s", a->place[0].id, a->place[a->n - 1].id, dist, a->radius, a->length,
                     clear, 100.0 * cover);
    return n < 0 ? 0 : (size_t)n;
}
