/* tpc_config.c - the slice tracker's settings (tusk/tpc.h) and what the
 * arithmetic derives from them. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "base/parse.h"
#include "tpc_private.h"

#define PI 3.14159265358979323846

/* Every setting is a number: one table says its key, where it lives, its
 * range and whether it is whole. */
typedef struct key_spec {
    const char *key;
    size_t offset;
    bool whole;
    double lo, hi;
} key_spec_t;

static const key_spec_t specs[] = {
    {"sigma_y_mm", offsetof(tpc_config_t, sigma_y_mm), false, 0.001, 100.0},
    {"sigma_z_mm", offsetof(tpc_config_t, sigma_z_mm), false, 0.001, 100.0},
    {"area_tan_y", offsetof(tpc_config_t, area_tan_y), false, 0.0, 10.0},
    {"area_tan_z", offsetof(tpc_config_t, area_tan_z), false, 0.0, 10.0},
    {"nf_candidates", offsetof(tpc_config_t, nf_candidates), true, 1, TPC_NF_MAX},
    {"min_bin_mm", offsetof(tpc_config_t, min_bin_mm), false, 0.1, 1e4},
    {"seed_chi2", offsetof(tpc_config_t, seed_chi2), false, 0.0, 1e6},
    {"cluster_chi2", offsetof(tpc_config_t, cluster_chi2), false, 0.0, 1e6},
    {"max_sin_phi", offsetof(tpc_config_t, max_sin_phi), false, 0.1, 0.999},
    {"stop_sigma_y_mm", offsetof(tpc_config_t, stop_sigma_y_mm), false, 0.01, 1e4},
    {"noise", offsetof(tpc_config_t, noise), false, 0.0, 1.0},
    {"min_seed", offsetof(tpc_config_t, min_seed), true, 3, 80},
    {"min_hits", offsetof(tpc_config_t, min_hits), true, 6, TPC_ROWS},
    {"max_gap", offsetof(tpc_config_t, max_gap), true, 0, TPC_ROWS},
    {"sel_gap", offsetof(tpc_config_t, sel_gap), true, 1, TPC_ROWS},
};
#define N_SPECS (sizeof specs / sizeof specs[0])

static const char *const keys[] = {"sigma_y_mm",    "sigma_z_mm",      "area_tan_y", "area_tan_z",
                                   "nf_candidates", "min_bin_mm",      "seed_chi2",  "cluster_chi2",
                                   "max_sin_phi",   "stop_sigma_y_mm", "noise",      "min_seed",
                                   "min_hits",      "max_gap",         "sel_gap",    NULL};
_Static_assert(sizeof keys / sizeof keys[0] == N_SPECS + 1, "one key a setting");

void tpc_config_default(tpc_config_t *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->sigma_y_mm = 0.8;
    cfg->sigma_z_mm = 1.0;
    cfg->area_tan_y = 1.0;
    cfg->area_tan_z = 0.2;
    cfg->nf_candidates = 20;
    cfg->min_bin_mm = 20.0;
    cfg->seed_chi2 = 10.0;
    cfg->cluster_chi2 = 16.0;
    cfg->max_sin_phi = 0.99;
    cfg->stop_sigma_y_mm = 10.0;
    cfg->noise = 0.0;
    cfg->min_seed = 4;
    cfg->min_hits = 10;
    cfg->max_gap = 4;
    cfg->sel_gap = 5;
}

const char *const *tpc_config_keys(void)
{
    return keys;
}

const char *tpc_backend_name(int backend)
{
    return backend == TPC_REFERENCE ? "reference"
           : backend == TPC_FAST    ? "fast"
           : backend == TPC_OPENCL  ? "opencl"
                                    : "?";
}

static double get(const tpc_config_t *cfg, const key_spec_t *s)
{
    const char *at = (const char *)cfg + s->offset;
    return s->whole ? (double)*(const unsigned *)at : *(const double *)at;
}

int tpc_config_set(tpc_config_t *cfg, const char *key, const char *value, tusk_error_t *err)
{
    for (size_t i = 0; i < N_SPECS; i++) {
        const key_spec_t *s = &specs[i];
        if (strcmp(key, s->key) != 0)
            continue;
        char *at = (char *)cfg + s->offset;
        if (s->whole) {
            if (tusk_parse_unsigned(value, (unsigned)s->lo, (unsigned)s->hi, (unsigned *)at) != 0)
                return tusk_error_set(err, TUSK_EPARAM, "TPC setting '%s': '%s' is not a whole number from %g to %g",
                                      key, value, s->lo, s->hi);
        } else if (tusk_parse_double(value, s->lo, s->hi, (double *)at) != 0)
            return tusk_error_set(err, TUSK_EPARAM, "TPC setting '%s': '%s' is not a number from %g to %g", key, value,
                                  s->lo, s->hi);
        return TUSK_OK;
    }
    return tusk_error_set(err, TUSK_EPARAM, "unknown TPC setting '%s'", key);
}

int tpc_config_read(tpc_config_t *cfg, const tusk_params_t *params, tusk_error_t *err)
{
    for (const char *const *k = keys; *k; k++) {
        const char *v = tusk_params_get(params, *k);
        if (v) {
            int st = tpc_config_set(cfg, *k, v, err);
            if (st != TUSK_OK)
                return st;
        }
    }
    return tpc_config_check(cfg, err);
}

int tpc_config_check(const tpc_config_t *cfg, tusk_error_t *err)
{
    for (size_t i = 0; i < N_SPECS; i++) {
        double v = get(cfg, &specs[i]);
        if (!(v >= specs[i].lo && v <= specs[i].hi))
            return tusk_error_set(err, TUSK_EPARAM, "TPC setting '%s' is %g, outside %g to %g", specs[i].key, v,
                                  specs[i].lo, specs[i].hi);
    }
    return TUSK_OK;
}

uint32_t tpc_config_digest(const tpc_config_t *cfg)
{
    char text[640];
    size_t n = 0;
    for (size_t i = 0; i < N_SPECS && n < sizeof text; i++)
        n += (size_t)snprintf(text + n, sizeof text - n, "%.17g ", get(cfg, &specs[i]));
    uint32_t h = 2166136261u; /* FNV-1a, 32 bits */
    for (const char *p = text; *p; p++) {
        h ^= (uint8_t)*p;
        h *= 16777619u;
    }
    return h;
}

void tpc_config_format(const tpc_config_t *cfg, char *buf, size_t cap)
{
    snprintf(buf, cap,
             "cluster errors %g x %g mm, hit areas %g x %g per mm (%u candidates), bins of %g mm or more, seed "
             "chi2/ndf %g, cluster chi2 %g, "
             "seeds of %u, tracks of %u clusters, gaps %u / %u rows, |sin(phi)| %g, stop at %g mm, noise %g",
             cfg->sigma_y_mm, cfg->sigma_z_mm, cfg->area_tan_y, cfg->area_tan_z, cfg->nf_candidates, cfg->min_bin_mm,
             cfg->seed_chi2, cfg->cluster_chi2, cfg->min_seed, cfg->min_hits, cfg->max_gap, cfg->sel_gap,
             cfg->max_sin_phi, cfg->stop_sigma_y_mm, cfg->noise);
}

void tpc_params_of(const tpc_config_t *cfg, tpc_params_t *p)
{
    memset(p, 0, sizeof *p);
    p->sy2 = (float)(cfg->sigma_y_mm * cfg->sigma_y_mm);
    p->sz2 = (float)(cfg->sigma_z_mm * cfg->sigma_z_mm);
    p->tan_y = (float)cfg->area_tan_y;
    p->tan_z = (float)cfg->area_tan_z;
    p->seed_chi2 = (float)cfg->seed_chi2;
    p->cluster_chi2 = (float)cfg->cluster_chi2;
    p->max_sin_phi = (float)cfg->max_sin_phi;
    p->max_c00 = (float)(cfg->stop_sigma_y_mm * cfg->stop_sigma_y_mm);
    /* the seed's starting variances: "huge numbers" (seed §2.1.3) against
     * what the first clusters measure */
    p->init_c22 = 1.0f;
    p->init_c33 = 1.0f;
    p->init_c44 = 100.0f;
    p->noise = (float)cfg->noise;
    p->nf_max = cfg->nf_candidates;
    p->min_seed = cfg->min_seed;
    p->min_hits = cfg->min_hits;
    p->max_gap = cfg->max_gap;
    p->sel_gap = cfg->sel_gap;
}

void tpc_slice_angle(unsigned slice, double *cos_a, double *sin_a)
{
    double a = ((double)(slice % 18u) * 20.0 + 10.0) * PI / 180.0;
    *cos_a = cos(a);
    *sin_a = sin(a);
}
