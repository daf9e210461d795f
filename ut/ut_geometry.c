/* ut_geometry.c - the UT's planes, staves, sectors and sector groups
 * (tusk/ut.h; ut/README.md, "The detector").
 *
 * A plane is tiled by staves side by side in u = x - y tan(stereo) (so
 * the U and V planes' staves lean with their strips), each stave a column
 * of `rows` square sensors, centred on the beam. The central staves
 * (fine_staves) have half the pitch and two sector groups each; the
 * innermost (inner_staves) have half-height sectors in their central
 * rows (inner_rows). Sectors are numbered plane by plane, stave by stave
 * in u, and within a stave in readout order, from the middle outwards:
 * the rows above y = 0 upwards, then those below downwards. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/parse.h"
#include "ut_private.h"

#define PI 3.14159265358979323846

void ut_geometry_config_default(ut_geometry_config_t *g)
{
    memset(g, 0, sizeof *g);
    g->plane_z[0] = 2327.5;
    g->plane_z[1] = 2372.5;
    g->plane_z[2] = 2597.5;
    g->plane_z[3] = 2642.5;
    g->stereo_deg = 5.0;
    g->staves_x = 16;
    g->staves_uv = 18;
    g->stave_width_mm = 97.28;
    g->rows = 14;
    g->pitch_um = 190.0;
    g->fine_pitch_um = 95.0;
    g->fine_staves = 4;
    g->inner_staves = 2;
    g->inner_rows = 4;
    g->inner_groups = 2;
    g->hole_mm = 33.0;
}

static const char *const geo_keys[] = {"planes_z_mm",   "stereo_deg",  "staves_x",     "staves_uv",
                                       "stave_width_mm", "rows",        "pitch_um",     "fine_pitch_um",
                                       "fine_staves",   "inner_staves", "inner_rows",   "inner_groups",
                                       "hole_mm",       NULL};

const char *const *ut_geometry_keys(void)
{
    return geo_keys;
}

static int bad(tusk_error_t *err, const char *key, const char *value, const char *what)
{
    return tusk_error_set(err, TUSK_EPARAM, "UT geometry setting '%s': '%s' is not %s", key, value, what);
}

int ut_geometry_config_set(ut_geometry_config_t *g, const char *key, const char *value, tusk_error_t *err)
{
    if (strcmp(key, "planes_z_mm") == 0) {
        double z[4];
        char buf[256];
        if (strlen(value) >= sizeof buf)
            return bad(err, key, value, "four numbers");
        strcpy(buf, value);
        int n = 0;
        for (char *save = NULL, *tok = strtok_r(buf, " \t,", &save); tok; tok = strtok_r(NULL, " \t,", &save)) {
            if (n == 4 || tusk_parse_double(tok, 1.0, 1e5, &z[n]) != 0)
                return bad(err, key, value, "four z positions from 1 to 100000 mm");
            n++;
        }
        if (n != 4)
            return bad(err, key, value, "four z positions from 1 to 100000 mm");
        memcpy(g->plane_z, z, sizeof z);
        return TUSK_OK;
    }
    struct {
        const char *key;
        double *d;
        unsigned *u;
        double lo, hi;
    } spec[] = {
        {"stereo_deg", &g->stereo_deg, NULL, 0.0, 45.0},     {"staves_x", NULL, &g->staves_x, 1, UT_MAX_STAVES},
        {"staves_uv", NULL, &g->staves_uv, 1, UT_MAX_STAVES}, {"stave_width_mm", &g->stave_width_mm, NULL, 1.0, 1000.0},
        {"rows", NULL, &g->rows, 1, UT_MAX_ROWS},            {"pitch_um", &g->pitch_um, NULL, 1.0, 10000.0},
        {"fine_pitch_um", &g->fine_pitch_um, NULL, 1.0, 10000.0}, {"fine_staves", NULL, &g->fine_staves, 0, UT_MAX_STAVES},
        {"inner_staves", NULL, &g->inner_staves, 0, UT_MAX_STAVES}, {"inner_rows", NULL, &g->inner_rows, 0, UT_MAX_ROWS},
        {"inner_groups", NULL, &g->inner_groups, 1, 16},
        {"hole_mm", &g->hole_mm, NULL, 0.0, 1000.0},
    };
    for (size_t i = 0; i < sizeof spec / sizeof spec[0]; i++) {
        if (strcmp(key, spec[i].key) != 0)
            continue;
        char what[64];
        if (spec[i].d) {
            snprintf(what, sizeof what, "a number from %g to %g", spec[i].lo, spec[i].hi);
            if (tusk_parse_double(value, spec[i].lo, spec[i].hi, spec[i].d) != 0)
                return bad(err, key, value, what);
        } else {
            snprintf(what, sizeof what, "a whole number from %g to %g", spec[i].lo, spec[i].hi);
            if (tusk_parse_unsigned(value, (unsigned)spec[i].lo, (unsigned)spec[i].hi, spec[i].u) != 0)
                return bad(err, key, value, what);
        }
        return TUSK_OK;
    }
    return tusk_error_set(err, TUSK_EPARAM, "unknown UT geometry setting '%s'", key);
}

int ut_geometry_config_read(ut_geometry_config_t *g, const tusk_params_t *params, tusk_error_t *err)
{
    for (const char *const *k = geo_keys; *k; k++) {
        const char *v = tusk_params_get(params, *k);
        if (v) {
            int st = ut_geometry_config_set(g, *k, v, err);
            if (st != TUSK_OK)
                return st;
        }
    }
    return TUSK_OK;
}

/* Strips of a sensor of this pitch: the stave's width over it, a whole
 * number (the pitch is adjusted to tile the width exactly). */
static unsigned strips_of(double width, double pitch_um)
{
    double n = floor(width / (pitch_um * 1e-3) + 0.5);
    return n < 1 ? 1u : n > 1e6 ? 1000000u : (unsigned)n;
}

int ut_geometry_new(ut_geometry_t **out, const ut_geometry_config_t *cfg, tusk_error_t *err)
{
    *out = NULL;
    const ut_geometry_config_t *c = cfg;
    for (int p = 1; p < 4; p++)
        if (!(c->plane_z[p] > c->plane_z[p - 1]))
            return tusk_error_set(err, TUSK_EPARAM, "UT geometry: planes_z_mm must increase (%g after %g)",
                                  c->plane_z[p], c->plane_z[p - 1]);
    if (c->staves_x < 1 || c->staves_uv < 1 || c->staves_x > UT_MAX_STAVES || c->staves_uv > UT_MAX_STAVES ||
        c->rows < 1 || c->rows > UT_MAX_ROWS)
        return tusk_error_set(err, TUSK_EPARAM, "UT geometry: %u and %u staves of %u rows (1-%d staves, 1-%d rows)",
                              c->staves_x, c->staves_uv, c->rows, UT_MAX_STAVES, UT_MAX_ROWS);
    unsigned so = strips_of(c->stave_width_mm, c->pitch_um), sf = strips_of(c->stave_width_mm, c->fine_pitch_um);
    if (so > UT_MAX_STRIPS || sf > UT_MAX_STRIPS || sf < 2)
        return tusk_error_set(err, TUSK_EPARAM,
                              "UT geometry: sensors of %g mm make %u strips at %g um and %u at %g um; a sector holds "
                              "2 to %u (a hit word's 10 bits)",
                              c->stave_width_mm, so, c->pitch_um, sf, c->fine_pitch_um, UT_MAX_STRIPS);
    ut_geometry_t *g = calloc(1, sizeof *g);
    if (!g)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    g->cfg = *c;
    g->width = c->stave_width_mm;
    g->height = c->stave_width_mm; /* square sensors */
    g->y_max = 0.5 * c->rows * g->height;
    double tan_st = tan(c->stereo_deg * PI / 180.0);
    unsigned ns = 0, ng = 0;
    for (unsigned p = 0; p < UT_PLANES; p++) {
        unsigned n = (p == 0 || p == 3) ? c->staves_x : c->staves_uv;
        g->staves[p] = n;
        ut_dev_plane_t *pl = &g->plane[p];
        pl->z = (float)c->plane_z[p];
        pl->dxdy = (float)(p == 1 ? tan_st : p == 2 ? -tan_st : 0.0);
        pl->u_min = (float)(-0.5 * n * g->width);
        pl->u_max = (float)(0.5 * n * g->width);
        pl->y_max = (float)g->y_max;
        pl->first_group = ng;
        for (unsigned k = 0; k < n; k++) {
            double u_lo = ((double)k - 0.5 * n) * g->width, centre = u_lo + 0.5 * g->width;
            bool fine = fabs(centre) < 0.5 * c->fine_staves * g->width;
            bool inner = fabs(centre) < 0.5 * c->inner_staves * g->width;
            unsigned strips = fine ? sf : so;
            unsigned group = ng, parts = inner ? c->inner_groups : fine ? 2u : 1u;
            if (ng + parts > UT_MAX_GROUPS || strips % parts != 0) {
                free(g);
                return tusk_error_set(err, TUSK_EPARAM,
                                      "UT geometry: more than %u sector groups, or %u strips a sensor not in %u equal "
                                      "groups",
                                      UT_MAX_GROUPS, strips, parts);
            }
            for (unsigned k2 = 0; k2 < parts; k2++)
                g->group_u_lo[ng++] = (float)(u_lo + (double)k2 * g->width / parts);
            /* the rows and their sectors, bottom to top: y key order */
            unsigned ykey_of[UT_MAX_ROWS][2], halves[UT_MAX_ROWS], ykey = 0;
            for (unsigned r = 0; r < c->rows; r++) {
                double y_lo = ((double)r - 0.5 * c->rows) * g->height, yc = y_lo + 0.5 * g->height;
                halves[r] = inner && fabs(yc) < 0.5 * c->inner_rows * g->height ? 2u : 1u;
                for (unsigned h = 0; h < halves[r]; h++)
                    ykey_of[r][h] = ykey++;
            }
            /* readout order: the upper rows upwards, then the lower ones downwards */
            unsigned upper0 = c->rows / 2; /* rows [upper0, rows) lie above y = 0 (rows even), else the middle one is upper */
            for (unsigned pass = 0; pass < 2; pass++) {
                for (unsigned j = 0; j < c->rows; j++) {
                    unsigned r;
                    if (pass == 0) {
                        r = upper0 + j;
                        if (r >= c->rows)
                            break;
                    } else {
                        if (j >= upper0)
                            break;
                        r = upper0 - 1 - j;
                    }
                    for (unsigned hh = 0; hh < halves[r]; hh++) {
                        unsigned h = pass == 0 ? hh : halves[r] - 1 - hh; /* outwards */
                        if (ns >= UT_MAX_SECTORS) {
                            free(g);
                            return tusk_error_set(err, TUSK_EPARAM, "UT geometry: more than %u sectors", UT_MAX_SECTORS);
                        }
                        double y_lo = ((double)r - 0.5 * c->rows) * g->height;
                        double hgt = g->height / halves[r];
                        ut_dev_sector_t *s = &g->sector[ns];
                        s->group = group;
                        s->parts = parts;
                        s->strips = strips;
                        s->ykey = ykey_of[r][h];
                        s->plane = p;
                        s->u_lo = (float)u_lo;
                        s->qpitch = (float)(g->width / strips / 4.0);
                        s->y_begin = (float)(y_lo + h * hgt);
                        s->y_end = (float)(y_lo + (h + 1) * hgt);
                        s->z = (float)c->plane_z[p];
                        s->weight = 0.0f; /* the tracker's (ut_sectors_of) */
                        ut_sector_info_t *in = &g->info[ns];
                        in->plane = p;
                        in->stave = k;
                        in->row = r;
                        in->strips = strips;
                        in->pitch_mm = g->width / strips;
                        in->u_lo_mm = u_lo;
                        in->y_begin_mm = y_lo + h * hgt; /* exact: the device's floats round these */
                        in->y_end_mm = y_lo + (h + 1) * hgt;
                        in->z_mm = c->plane_z[p];
                        in->region = halves[r] == 2 ? 2u : fine ? 1u : 0u;
                        g->where[p][k][r][h] = (uint16_t)ns;
                        if (halves[r] == 1)
                            g->where[p][k][r][1] = (uint16_t)ns;
                        ns++;
                    }
                }
            }
        }
        pl->n_groups = ng - pl->first_group;
    }
    g->n_sectors = ns;
    g->n_groups = ng;
    g->digest = ut_geometry_config_digest(c);
    *out = g;
    return TUSK_OK;
}

uint32_t ut_geometry_config_digest(const ut_geometry_config_t *c)
{
    char text[512];
    snprintf(text, sizeof text,
             "ut-geometry-1 %.17g %.17g %.17g %.17g %.17g %u %u %.17g %u %.17g %.17g %u %u %u %u %.17g", c->plane_z[0],
             c->plane_z[1], c->plane_z[2], c->plane_z[3], c->stereo_deg, c->staves_x, c->staves_uv, c->stave_width_mm,
             c->rows, c->pitch_um, c->fine_pitch_um, c->fine_staves, c->inner_staves, c->inner_rows, c->inner_groups,
             c->hole_mm);
    return ut_digest_text(text);
}

void ut_geometry_destroy(ut_geometry_t **geo)
{
    if (geo && *geo) {
        free(*geo);
        *geo = NULL;
    }
}

const ut_geometry_config_t *ut_geometry_config(const ut_geometry_t *g)
{
    return &g->cfg;
}

uint32_t ut_geometry_digest(const ut_geometry_t *g)
{
    return g->digest;
}

unsigned ut_geometry_sectors(const ut_geometry_t *g)
{
    return g->n_sectors;
}

unsigned ut_geometry_groups(const ut_geometry_t *g)
{
    return g->n_groups;
}

void ut_geometry_sector(const ut_geometry_t *g, unsigned sector, ut_sector_info_t *info)
{
    *info = g->info[sector < g->n_sectors ? sector : 0];
}

void ut_geometry_format(const ut_geometry_t *g, char *buf, size_t cap)
{
    const ut_geometry_config_t *c = &g->cfg;
    snprintf(buf, cap,
             "4 planes at z %.1f, %.1f, %.1f, %.1f mm (X, U +%g deg, V -%g deg, X), %u/%u staves of %u sensors of "
             "%.2f mm, pitch %g um (%g um in the %u central staves), %u sectors, %u sector groups, beam hole %g mm; "
             "digest 0x%08X",
             c->plane_z[0], c->plane_z[1], c->plane_z[2], c->plane_z[3], c->stereo_deg, c->stereo_deg, c->staves_x,
             c->staves_uv, c->rows, c->stave_width_mm, c->pitch_um, c->fine_pitch_um, c->fine_staves, g->n_sectors,
             g->n_groups, c->hole_mm, (unsigned)g->digest);
}

bool ut_geometry_locate(const ut_geometry_t *g, unsigned p, double x, double y, unsigned *sector, double *strip_pos)
{
    if (fabs(x) < g->cfg.hole_mm && fabs(y) < g->cfg.hole_mm)
        return false;
    const ut_dev_plane_t *pl = &g->plane[p];
    double u = x - y * (double)pl->dxdy;
    /* in double throughout (the plane's float edges would disagree with
     * the sectors' by float rounding) */
    double u_min = -0.5 * g->staves[p] * g->width;
    double fk = floor((u - u_min) / g->width), fr = floor((y + g->y_max) / g->height);
    if (fk < 0 || fk >= g->staves[p] || fr < 0 || fr >= g->cfg.rows)
        return false;
    unsigned k = (unsigned)fk, r = (unsigned)fr;
    double y_lo = ((double)r - 0.5 * g->cfg.rows) * g->height;
    unsigned h = y - y_lo >= 0.5 * g->height ? 1u : 0u;
    unsigned s = g->where[p][k][r][h];
    const ut_sector_info_t *in = &g->info[s];
    double pos = (u - in->u_lo_mm) / in->pitch_mm;
    /* the stave was found by u_min + k width, its strips start at
     * (k - n / 2) width: the two round apart by far less than a strip */
    if (pos < 0 && pos > -1e-6)
        pos = 0;
    if (pos >= in->strips && pos < in->strips + 1e-6)
        pos = nextafter((double)in->strips, 0.0);
    if (!(pos >= 0 && pos < in->strips))
        return false;
    *sector = s;
    *strip_pos = pos;
    return true;
}
