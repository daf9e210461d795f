/* ut_config.c - the tracker's settings (tusk/ut.h) and what the
 * arithmetic derives from them and the geometry: every constant that
 * takes a division is computed here, once, for every backend. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "base/parse.h"
#include "ut_private.h"

/* The numeric settings: one table says the key, where it lives, its range. */
typedef struct key_spec {
    const char *key;
    size_t offset;
    double lo, hi;
} key_spec_t;

static const key_spec_t specs[] = {
    {"p_min_gev", offsetof(ut_config_t, p_min_gev), 0.05, 1e4},
    {"pt_min_gev", offsetof(ut_config_t, pt_min_gev), 0.0, 1e3},
    {"kick_gev", offsetof(ut_config_t, kick_gev), 1e-4, 100.0},
    {"z_kick_mm", offsetof(ut_config_t, z_kick_mm), 0.0, 1e5},
    {"x_tol_mm", offsetof(ut_config_t, x_tol_mm), 0.0, 1e3},
    {"y_tol_mm", offsetof(ut_config_t, y_tol_mm), 0.0, 1e3},
    {"dtx_tol", offsetof(ut_config_t, dtx_tol), 0.0, 1.0},
    {"kink_tol_mm", offsetof(ut_config_t, kink_tol_mm), 0.0, 1e3},
    {"hit_tol_mm", offsetof(ut_config_t, hit_tol_mm), 0.0, 1e3},
    {"max_chi2", offsetof(ut_config_t, max_chi2), 0.0, 1e9},
    {"hit_sigma_strips", offsetof(ut_config_t, hit_sigma_strips), 0.01, 100.0},
    {"kink_sigma_mm", offsetof(ut_config_t, kink_sigma_mm), 1e-3, 1e3},
};
#define N_SPECS (sizeof specs / sizeof specs[0])

/* The tracker's keys, then the geometry's (ut_geometry_keys; a test
 * checks that this list holds every one of them). */
#define N_OWN_KEYS 14
static const char *const all_keys[] = {
    "sectors",     "candidates",    "p_min_gev",     "pt_min_gev",   "kick_gev",   "z_kick_mm",
    "x_tol_mm",    "y_tol_mm",      "dtx_tol",       "kink_tol_mm",  "hit_tol_mm", "max_chi2",
    "hit_sigma_strips", "kink_sigma_mm",
    "planes_z_mm", "stereo_deg",    "staves_x",      "staves_uv",    "stave_width_mm", "rows",
    "pitch_um",    "fine_pitch_um", "fine_staves",   "inner_staves", "inner_rows",  "inner_groups",
    "hole_mm",     NULL};
_Static_assert(N_OWN_KEYS == N_SPECS + 2, "one key a setting");

void ut_config_default(ut_config_t *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->sectors = 5;
    cfg->candidates = 8;
    cfg->p_min_gev = 1.0;
    cfg->pt_min_gev = 0.0;
    cfg->kick_gev = 0.035;
    cfg->z_kick_mm = 1780.0;
    cfg->x_tol_mm = 3.0;
    cfg->y_tol_mm = 3.0;
    cfg->dtx_tol = 0.005;
    cfg->kink_tol_mm = 2.0;
    cfg->hit_tol_mm = 0.5;
    cfg->max_chi2 = 100.0;
    cfg->hit_sigma_strips = 0.25;
    cfg->kink_sigma_mm = 1.0;
    ut_geometry_config_default(&cfg->geo);
}

const char *const *ut_config_keys(void)
{
    return all_keys;
}

const char *ut_backend_name(int backend)
{
    return backend == UT_REFERENCE ? "reference" : backend == UT_FAST ? "fast" : backend == UT_OPENCL ? "opencl" : "?";
}

int ut_config_set(ut_config_t *cfg, const char *key, const char *value, tusk_error_t *err)
{
    if (strcmp(key, "sectors") == 0) {
        unsigned v;
        if (tusk_parse_unsigned(value, 1, 5, &v) != 0 || (v != 1 && v != 3 && v != 5))
            return tusk_error_set(err, TUSK_EPARAM, "UT setting 'sectors': '%s' is not 1, 3 or 5", value);
        cfg->sectors = v;
        return TUSK_OK;
    }
    if (strcmp(key, "candidates") == 0) {
        if (tusk_parse_unsigned(value, 1, 16, &cfg->candidates) != 0)
            return tusk_error_set(err, TUSK_EPARAM, "UT setting 'candidates': '%s' is not a whole number from 1 to 16",
                                  value);
        return TUSK_OK;
    }
    for (size_t i = 0; i < N_SPECS; i++) {
        if (strcmp(key, specs[i].key) != 0)
            continue;
        double *num = (double *)((char *)cfg + specs[i].offset);
        if (tusk_parse_double(value, specs[i].lo, specs[i].hi, num) != 0)
            return tusk_error_set(err, TUSK_EPARAM, "UT setting '%s': '%s' is not a number from %g to %g", key, value,
                                  specs[i].lo, specs[i].hi);
        return TUSK_OK;
    }
    for (const char *const *k = ut_geometry_keys(); *k; k++)
        if (strcmp(key, *k) == 0)
            return ut_geometry_config_set(&cfg->geo, key, value, err);
    return tusk_error_set(err, TUSK_EPARAM, "unknown UT setting '%s'", key);
}

int ut_config_read(ut_config_t *cfg, const tusk_params_t *params, tusk_error_t *err)
{
    for (const char *const *k = ut_config_keys(); *k; k++) {
        const char *v = tusk_params_get(params, *k);
        if (v) {
            int st = ut_config_set(cfg, *k, v, err);
            if (st != TUSK_OK)
                return st;
        }
    }
    return ut_config_check(cfg, err);
}

int ut_config_check(const ut_config_t *cfg, tusk_error_t *err)
{
    if (cfg->sectors != 1 && cfg->sectors != 3 && cfg->sectors != 5)
        return tusk_error_set(err, TUSK_EPARAM, "UT setting 'sectors' is %u, expected 1, 3 or 5", cfg->sectors);
    if (cfg->candidates < 1 || cfg->candidates > 16)
        return tusk_error_set(err, TUSK_EPARAM, "UT setting 'candidates' is %u, expected 1 to 16", cfg->candidates);
    for (size_t i = 0; i < N_SPECS; i++) {
        double v = *(const double *)((const char *)cfg + specs[i].offset);
        if (!(v >= specs[i].lo && v <= specs[i].hi))
            return tusk_error_set(err, TUSK_EPARAM, "UT setting '%s' is %g, outside %g to %g", specs[i].key, v,
                                  specs[i].lo, specs[i].hi);
    }
    if (!(cfg->z_kick_mm < cfg->geo.plane_z[0]))
        return tusk_error_set(err, TUSK_EPARAM, "UT setting 'z_kick_mm' is %g, not before the first plane at %g mm",
                              cfg->z_kick_mm, cfg->geo.plane_z[0]);
    return TUSK_OK;
}

uint32_t ut_config_digest(const ut_config_t *cfg)
{
    const ut_geometry_config_t *g = &cfg->geo;
    char text[1024];
    snprintf(text, sizeof text,
             "ut-1 %u %u %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g | %.17g %.17g %.17g "
             "%.17g %.17g %u %u %.17g %u %.17g %.17g %u %u %u %u %.17g",
             cfg->sectors, cfg->candidates, cfg->p_min_gev, cfg->pt_min_gev, cfg->kick_gev, cfg->z_kick_mm,
             cfg->x_tol_mm, cfg->y_tol_mm, cfg->dtx_tol, cfg->kink_tol_mm, cfg->hit_tol_mm, cfg->max_chi2,
             cfg->hit_sigma_strips, cfg->kink_sigma_mm, g->plane_z[0], g->plane_z[1], g->plane_z[2], g->plane_z[3],
             g->stereo_deg, g->staves_x, g->staves_uv, g->stave_width_mm, g->rows, g->pitch_um, g->fine_pitch_um,
             g->fine_staves, g->inner_staves, g->inner_rows, g->inner_groups, g->hole_mm);
    return ut_digest_text(text);
}

void ut_config_format(const ut_config_t *cfg, char *buf, size_t cap)
{
    snprintf(buf, cap,
             "%u sectors, %u candidates, p > %g GeV, pT > %g GeV, kick %g GeV at z %g mm, tolerances x %g mm, y %g "
             "mm, dtx %g, kink %g mm, hit %g mm, chi2 < %g, hit error %g strips, kink error %g mm",
             cfg->sectors, cfg->candidates, cfg->p_min_gev, cfg->pt_min_gev, cfg->kick_gev, cfg->z_kick_mm,
             cfg->x_tol_mm, cfg->y_tol_mm, cfg->dtx_tol, cfg->kink_tol_mm, cfg->hit_tol_mm, cfg->max_chi2,
             cfg->hit_sigma_strips, cfg->kink_sigma_mm);
}

void ut_params_of(const ut_config_t *cfg, const ut_geometry_t *geo, ut_params_t *p, ut_dev_plane_t planes[UT_PLANES])
{
    memset(p, 0, sizeof *p);
    const double *z = geo->cfg.plane_z;
    double reach = cfg->kick_gev / cfg->p_min_gev; /* the largest slope change the windows allow for */
    p->sectors = cfg->sectors;
    p->candidates = cfg->candidates;
    p->n_groups = geo->n_groups;
    p->z_kick = (float)cfg->z_kick_mm;
    p->z_mid = (float)(0.5 * (z[0] + z[3]));
    p->inv_kick = (float)(1.0 / cfg->kick_gev);
    p->max_dtx = (float)(reach + cfg->dtx_tol);
    p->kink_tol = (float)cfg->kink_tol_mm;
    p->hit_tol = (float)cfg->hit_tol_mm;
    p->y_tol = (float)cfg->y_tol_mm;
    p->w_kink = (float)(1.0 / (cfg->kink_sigma_mm * cfg->kink_sigma_mm));
    p->max_chi2 = (float)cfg->max_chi2;
    p->pt_min2 = (float)(cfg->pt_min_gev * cfg->pt_min_gev);
    p->inv_dz_fwd = (float)(1.0 / (z[2] - z[0]));
    p->inv_dz_bwd = (float)(1.0 / (z[1] - z[3]));
    for (unsigned q = 0; q < UT_PLANES; q++) {
        planes[q] = geo->plane[q];
        planes[q].win = (float)(reach * (z[q] - cfg->z_kick_mm) + cfg->x_tol_mm);
    }
}

void ut_sectors_of(const ut_config_t *cfg, const ut_geometry_t *geo, ut_dev_sector_t *sectors)
{
    for (unsigned s = 0; s < geo->n_sectors; s++) {
        sectors[s] = geo->sector[s];
        double sigma = cfg->hit_sigma_strips * geo->info[s].pitch_mm;
        sectors[s].weight = (float)(1.0 / (sigma * sigma));
    }
}
