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
#include "base/textfile.h"
#include "base/grow.h"

#define PI 3.14159265358979323846
#define DEG (PI / 180.0)

struct array {
    size_t n;
    array_place_t *place;  /* sorted by id */
    double (*centre)[3];   /* bounding-sphere centre of each bounding cylinder */
    double sphere_r2;      /* its radius squared, a hair larger (rounding) */
    det_crystal_t *crystal;
    double radius, length; /* of the bounding cylinder */
    double gap;
    double clearance;      /* least clearance between two capsules; INFINITY for one crystal */
    size_t near_a, near_b; /* the pair that has it */
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
    double half = 0.5 * a->length, r2 = a->radius * a->radius + half * half;
    a->sphere_r2 = r2 * (1.0 + 1e-9) + 1e-9;
    for (size_t i = 0; i < a->n; i++) {
        a->place[i] = b->items[i].place;
        for (int k = 0; k < 3; k++)
            a->centre[i][k] = a->place[i].front[k] + half * a->place[i].axis[2][k];
    }
    st = check_overlap(a, b->items, b->origin, err);
    if (st) {
        array_destroy(&a);
        return st;
    }
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
    static const char *const known[] = {"distance",  "gap",      "triple_spread_deg", "crystal.*",
                                        "triple.*",  "shell",    "shell_hole_deg",    NULL};
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
    if (!st)
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
    return det_crystal_inside(a->crystal, l[0], l[1], l[2]);
}

/* The stretch [t0, t1] of the ray o + t d (local frame) inside the
 * cylinder x^2 + y^2 <= r^2, 0 <= z <= L; false when there is none. */
static bool cylinder_chord(const double o[3], const double d[3], double r, double L, double *t0, double *t1)
{
    double lo = -INFINITY, hi = INFINITY;
    if (d[2] != 0.0) {
        double a = -o[2] / d[2], b = (L - o[2]) / d[2];
        lo = fmin(a, b);
        hi = fmax(a, b);
    } else if (o[2] < 0.0 || o[2] > L) {
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
        if (!cylinder_chord(o, d, a->radius, a->length, &t0, &t1))
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

size_t array_describe(const array_t *a, char *buf, size_t cap)
{
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
