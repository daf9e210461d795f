/* sts_config.c - the STS reconstruction's settings (tusk/sts.h) and what
 * the arithmetic derives from them and from a module's header. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "base/parse.h"
#include "sts_private.h"

#define PI 3.14159265358979323846

/* Every setting is a number: one table says its key, where it lives and
 * its range. */
typedef struct key_spec {
    const char *key;
    size_t offset;
    double lo, hi;
} key_spec_t;

static const key_spec_t specs[] = {
    {"time_resolution_ns", offsetof(sts_config_t, time_resolution_ns), 0.01, 1e4},
    {"delta_sigmas", offsetof(sts_config_t, delta_sigmas), 0.0, 100.0},
    {"charge_noise", offsetof(sts_config_t, charge_noise), 0.0, 1e4},
    {"cog_sys_strips", offsetof(sts_config_t, cog_sys_strips), 0.0, 10.0},
    {"hit_time_cut", offsetof(sts_config_t, hit_time_cut), 0.0, 1e3},
    {"hit_y_tol_mm", offsetof(sts_config_t, hit_y_tol_mm), 0.0, 1e3},
};
#define N_SPECS (sizeof specs / sizeof specs[0])

static const char *const keys[] = {"time_resolution_ns", "delta_sigmas", "charge_noise", "cog_sys_strips",
                                   "hit_time_cut",       "hit_y_tol_mm", NULL};
_Static_assert(sizeof keys / sizeof keys[0] == N_SPECS + 1, "one key a setting");

void sts_config_default(sts_config_t *cfg)
{
    cfg->time_resolution_ns = 5.0;
    cfg->delta_sigmas = 3.0;
    cfg->charge_noise = 10.0;
    cfg->cog_sys_strips = 0.15;
    cfg->hit_time_cut = 4.0;
    cfg->hit_y_tol_mm = 0.5;
}

const char *const *sts_config_keys(void)
{
    return keys;
}

const char *sts_backend_name(int backend)
{
    return backend == STS_REFERENCE ? "reference" : backend == STS_FAST ? "fast" : backend == STS_OPENCL ? "opencl" : "?";
}

int sts_config_set(sts_config_t *cfg, const char *key, const char *value, tusk_error_t *err)
{
    for (size_t i = 0; i < N_SPECS; i++) {
        if (strcmp(key, specs[i].key) != 0)
            continue;
        double *num = (double *)((char *)cfg + specs[i].offset);
        if (tusk_parse_double(value, specs[i].lo, specs[i].hi, num) != 0)
            return tusk_error_set(err, TUSK_EPARAM, "STS setting '%s': '%s' is not a number from %g to %g", key, value,
                                  specs[i].lo, specs[i].hi);
        return TUSK_OK;
    }
    return tusk_error_set(err, TUSK_EPARAM, "unknown STS setting '%s'", key);
}

int sts_config_read(sts_config_t *cfg, const tusk_params_t *params, tusk_error_t *err)
{
    for (const char *const *k = keys; *k; k++) {
        const char *v = tusk_params_get(params, *k);
        if (v) {
            int st = sts_config_set(cfg, *k, v, err);
            if (st != TUSK_OK)
                return st;
        }
    }
    return sts_config_check(cfg, err);
}

int sts_config_check(const sts_config_t *cfg, tusk_error_t *err)
{
    for (size_t i = 0; i < N_SPECS; i++) {
        double v = *(const double *)((const char *)cfg + specs[i].offset);
        if (!(v >= specs[i].lo && v <= specs[i].hi))
            return tusk_error_set(err, TUSK_EPARAM, "STS setting '%s' is %g, outside %g to %g", specs[i].key, v,
                                  specs[i].lo, specs[i].hi);
    }
    return TUSK_OK;
}

uint32_t sts_config_delta(const sts_config_t *cfg)
{
    double d = floor(cfg->delta_sigmas * sqrt(2.0) * cfg->time_resolution_ns + 1e-9);
    return d < 0 ? 0u : d > 1e9 ? 1000000000u : (uint32_t)d;
}

uint32_t sts_config_digest(const sts_config_t *cfg)
{
    char text[512];
    snprintf(text, sizeof text, "%.17g %.17g %.17g %.17g %.17g %.17g", cfg->time_resolution_ns, cfg->delta_sigmas,
             cfg->charge_noise, cfg->cog_sys_strips, cfg->hit_time_cut, cfg->hit_y_tol_mm);
    uint32_t h = 2166136261u; /* FNV-1a, 32 bits */
    for (const char *p = text; *p; p++) {
        h ^= (uint8_t)*p;
        h *= 16777619u;
    }
    return h;
}

void sts_config_format(const sts_config_t *cfg, char *buf, size_t cap)
{
    snprintf(buf, cap,
             "delta %u ns (%g x sqrt 2 x %g ns), charge noise %g, centre-of-gravity error %g strips, hit time cut "
             "%g sigma, crossing tolerance %g mm",
             (unsigned)sts_config_delta(cfg), cfg->delta_sigmas, cfg->time_resolution_ns, cfg->charge_noise,
             cfg->cog_sys_strips, cfg->hit_time_cut, cfg->hit_y_tol_mm);
}

void sts_params_of(const sts_config_t *cfg, sts_params_t *p)
{
    memset(p, 0, sizeof *p);
    p->delta = sts_config_delta(cfg);
    p->tvar_digi = (float)(cfg->time_resolution_ns * cfg->time_resolution_ns);
    p->qvar = (float)(cfg->charge_noise * cfg->charge_noise);
    p->sys_var = (float)(cfg->cog_sys_strips * cfg->cog_sys_strips);
    p->cut2 = (float)(cfg->hit_time_cut * cfg->hit_time_cut);
    p->y_tol = (float)cfg->hit_y_tol_mm;
}

uint32_t sts_bucket_shift(uint32_t length_ns)
{
    uint32_t s = 0, last = length_ns > 0 ? length_ns - 1 : 0;
    while (s < 31 && (last >> s) >= STS_BUCKETS)
        s++;
    return s;
}

void sts_dev_module_of(const sts_module_t *m, sts_dev_module_t *g)
{
    memset(g, 0, sizeof *g);
    g->n = m->hdr.n_digis;
    g->strips = m->hdr.strips;
    g->bucket_shift = sts_bucket_shift(m->hdr.length_ns);
    g->pitch = m->hdr.pitch_mm;
    g->tan_stereo = (float)tan((double)m->hdr.stereo_deg * PI / 180.0);
    g->length = m->hdr.length_mm;
    g->width = (float)((double)m->hdr.strips * (double)m->hdr.pitch_mm);
    g->x0 = m->hdr.origin[0];
    g->y0 = m->hdr.origin[1];
    g->z0 = m->hdr.origin[2];
}
