/* zf_config.c - the z-finder's settings (tusk/zfinder.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/parse.h"
#include "zf_private.h"

#define PI 3.14159265358979323846

void zf_config_default(zf_config_t *cfg)
{
    cfg->mode = ZF_PAIRS;
    cfg->precision = ZF_PREC_FLOAT;
    cfg->slice_deg = 0.2;
    cfg->z_min_mm = -200.0;
    cfg->z_max_mm = 200.0;
    cfg->bin_mm = 1.0;
    cfg->triplet_dz_mm = 1.0;
    cfg->triplet_dphi = 0.001;
    cfg->second_vertex = false;
}

static const char *const keys[] = {"mode",          "precision",    "slice_deg",     "z_min_mm", "z_max_mm",
                                   "bin_mm",        "triplet_dz_mm", "triplet_dphi", "second_vertex", NULL};

const char *const *zf_config_keys(void)
{
    return keys;
}

const char *zf_mode_name(int mode)
{
    return mode == ZF_PAIRS ? "pairs" : mode == ZF_TRIPLETS ? "triplets" : "?";
}

const char *zf_precision_name(int precision)
{
    return precision == ZF_PREC_FLOAT ? "float" : precision == ZF_PREC_DOUBLE ? "double" : "?";
}

const char *zf_backend_name(int backend)
{
    return backend == ZF_REFERENCE ? "reference" : backend == ZF_FAST ? "fast" : backend == ZF_OPENCL ? "opencl" : "?";
}

static int bad(tusk_error_t *err, const char *key, const char *value, const char *want)
{
    return tusk_error_set(err, TUSK_EPARAM, "z-finder setting '%s': '%s' is not %s", key, value, want);
}

int zf_config_set(zf_config_t *cfg, const char *key, const char *value, tusk_error_t *err)
{
    double *num = NULL;
    double lo = -1e9, hi = 1e9;
    if (!strcmp(key, "mode")) {
        if (!strcmp(value, "pairs"))
            cfg->mode = ZF_PAIRS;
        else if (!strcmp(value, "triplets"))
            cfg->mode = ZF_TRIPLETS;
        else
            return bad(err, key, value, "pairs or triplets");
        return TUSK_OK;
    }
    if (!strcmp(key, "precision")) {
        if (!strcmp(value, "float"))
            cfg->precision = ZF_PREC_FLOAT;
        else if (!strcmp(value, "double"))
            cfg->precision = ZF_PREC_DOUBLE;
        else
            return bad(err, key, value, "float or double");
        return TUSK_OK;
    }
    if (!strcmp(key, "second_vertex")) {
        if (!strcmp(value, "yes") || !strcmp(value, "true") || !strcmp(value, "on") || !strcmp(value, "1"))
            cfg->second_vertex = true;
        else if (!strcmp(value, "no") || !strcmp(value, "false") || !strcmp(value, "off") || !strcmp(value, "0"))
            cfg->second_vertex = false;
        else
            return bad(err, key, value, "yes or no");
        return TUSK_OK;
    }
    if (!strcmp(key, "slice_deg"))
        num = &cfg->slice_deg, lo = 0.01, hi = 30.0;
    else if (!strcmp(key, "z_min_mm"))
        num = &cfg->z_min_mm, lo = -1e5, hi = 1e5;
    else if (!strcmp(key, "z_max_mm"))
        num = &cfg->z_max_mm, lo = -1e5, hi = 1e5;
    else if (!strcmp(key, "bin_mm"))
        num = &cfg->bin_mm, lo = 1e-3, hi = 1e4;
    else if (!strcmp(key, "triplet_dz_mm"))
        num = &cfg->triplet_dz_mm, lo = 0.0, hi = 1e4;
    else if (!strcmp(key, "triplet_dphi"))
        num = &cfg->triplet_dphi, lo = 0.0, hi = 1.0;
    else
        return tusk_error_set(err, TUSK_EPARAM, "unknown z-finder setting '%s'", key);
    if (tusk_parse_double(value, lo, hi, num) != 0) {
        char want[96];
        snprintf(want, sizeof want, "a number from %g to %g", lo, hi);
        return bad(err, key, value, want);
    }
    return TUSK_OK;
}

int zf_config_read(zf_config_t *cfg, const tusk_params_t *params, tusk_error_t *err)
{
    for (const char *const *k = keys; *k; k++) {
        const char *v = tusk_params_get(params, *k);
        if (v) {
            int st = zf_config_set(cfg, *k, v, err);
            if (st != TUSK_OK)
                return st;
        }
    }
    return zf_config_check(cfg, err);
}

unsigned zf_config_bins(const zf_config_t *cfg)
{
    double n = (cfg->z_max_mm - cfg->z_min_mm) / cfg->bin_mm;
    return n >= 1.0 && n < 1e7 ? (unsigned)llround(n) : 0;
}

double zf_zhisto(const zf_config_t *cfg, unsigned bin, uint32_t n, uint64_t zsum)
{
    return (double)n * (cfg->z_min_mm + (double)bin * cfg->bin_mm) +
           (double)zsum * (double)ZF_ZQ_QUANTUM * cfg->bin_mm;
}

int zf_config_check(const zf_config_t *cfg, tusk_error_t *err)
{
    if (cfg->mode != ZF_PAIRS && cfg->mode != ZF_TRIPLETS)
        return tusk_error_set(err, TUSK_EPARAM, "z-finder: mode %d is neither pairs nor triplets", (int)cfg->mode);
    if (cfg->precision != ZF_PREC_FLOAT && cfg->precision != ZF_PREC_DOUBLE)
        return tusk_error_set(err, TUSK_EPARAM, "z-finder: precision %d is neither float nor double", cfg->precision);
    if (!(cfg->slice_deg >= 0.01 && cfg->slice_deg <= 30.0))
        return tusk_error_set(err, TUSK_EPARAM, "z-finder: slice_deg %g is outside 0.01-30", cfg->slice_deg);
    if (!(cfg->z_max_mm > cfg->z_min_mm))
        return tusk_error_set(err, TUSK_EPARAM, "z-finder: z_max_mm %g is not above z_min_mm %g", cfg->z_max_mm,
                              cfg->z_min_mm);
    if (!(cfg->bin_mm > 0.0))
        return tusk_error_set(err, TUSK_EPARAM, "z-finder: bin_mm %g is not positive", cfg->bin_mm);
    double n = (cfg->z_max_mm - cfg->z_min_mm) / cfg->bin_mm;
    unsigned bins = zf_config_bins(cfg);
    if (bins < 3 || bins > ZF_MAX_BINS || fabs(n - (double)bins) > 1e-6 * n)
        return tusk_error_set(err, TUSK_EPARAM,
                              "z-finder: z_min_mm %g to z_max_mm %g in bins of bin_mm %g make %.6g bins; expected a "
                              "whole number from 3 to %d",
                              cfg->z_min_mm, cfg->z_max_mm, cfg->bin_mm, n, ZF_MAX_BINS);
    if (!(cfg->triplet_dz_mm >= 0.0) || !(cfg->triplet_dphi >= 0.0))
        return tusk_error_set(err, TUSK_EPARAM, "z-finder: the triplet tolerances must not be negative");
    return TUSK_OK;
}

uint32_t zf_config_digest(const zf_config_t *cfg)
{
    char text[512];
    snprintf(text, sizeof text, "%d %.17g %.17g %.17g %.17g %.17g %.17g %d", (int)cfg->mode, cfg->slice_deg,
             cfg->z_min_mm, cfg->z_max_mm, cfg->bin_mm, cfg->triplet_dz_mm, cfg->triplet_dphi,
             (int)cfg->second_vertex);
    uint32_t h = 2166136261u; /* FNV-1a, 32 bits */
    for (const char *p = text; *p; p++) {
        h ^= (uint8_t)*p;
        h *= 16777619u;
    }
    return h;
}

void zf_config_format(const zf_config_t *cfg, char *buf, size_t cap)
{
    int n = snprintf(buf, cap, "%s, %s, %g deg slices, %u bins of %g mm from %g mm", zf_mode_name(cfg->mode),
                     zf_precision_name(cfg->precision), cfg->slice_deg, zf_config_bins(cfg), cfg->bin_mm,
                     cfg->z_min_mm);
    if (n > 0 && (size_t)n < cap && cfg->mode == ZF_TRIPLETS)
        n += snprintf(buf + n, cap - (size_t)n, ", third point within %g mm and %g rad", cfg->triplet_dz_mm,
                      cfg->triplet_dphi);
    if (n > 0 && (size_t)n < cap && cfg->second_vertex)
        snprintf(buf + n, cap - (size_t)n, ", second vertex");
}

uint32_t zf_roi_slices(const zf_config_t *cfg, float phi_width, int *wrap)
{
    double slice = cfg->slice_deg * PI / 180.0;
    /* a width of a whole number of slices, rounded to float, makes that
     * many (not one more, nearly empty) */
    double n = ceil((double)phi_width / slice * (1.0 - 1e-6));
    *wrap = phi_width >= ZF_TWO_PI_F;
    return n < 1.0 ? 1u : (uint32_t)n;
}

void zf_consts_of(const zf_config_t *cfg, zf_consts_t *k)
{
    k->bins = zf_config_bins(cfg);
    k->z_min = cfg->z_min_mm;
    k->bin = cfg->bin_mm;
    k->inv_bin = 1.0 / cfg->bin_mm;
    k->n_bins = (double)k->bins;
    k->tol_z = cfg->triplet_dz_mm;
    k->tol_phi = cfg->triplet_dphi;
    k->inv_slice = (float)(180.0 / (cfg->slice_deg * PI));
}

int zf_slices_of(const zf_consts_t *k, const zf_roi_t *roi, uint32_t n_slices, int wrap, int32_t *slice,
                 float *phi_rel, tusk_error_t *err)
{
    if (wrap && n_slices < ZF_NEIGHBOURS)
        return tusk_error_set(err, TUSK_EINVAL,
                              "RoI %u: a 360 degree RoI needs at least %d phi slices, these settings make %u",
                              (unsigned)roi->event, ZF_NEIGHBOURS, (unsigned)n_slices);
    for (uint32_t i = 0; i < roi->n; i++) {
        const adf_idsp_point_t *p = &roi->pt[i];
        if (p->layer >= ZF_MAX_LAYERS)
            return tusk_error_set(err, TUSK_EINVAL, "RoI %u: spacepoint %u is in layer %u, the detector has %d",
                                  (unsigned)roi->event, (unsigned)i, (unsigned)p->layer, ZF_MAX_LAYERS);
        float pr = zf_phi_rel(p->phi, roi->phi_min);
        int32_t s = zf_slice_of(pr, roi->phi_width, k->inv_slice, (tusk_i32)n_slices, wrap);
        if (s < 0)
            return tusk_error_set(err, TUSK_EINVAL,
                                  "RoI %u: spacepoint %u at phi %.9g rad lies outside the RoI (%.9g rad, %.9g rad wide, "
                                  "%u slices)",
                                  (unsigned)roi->event, (unsigned)i, (double)p->phi, (double)roi->phi_min,
                                  (double)roi->phi_width, (unsigned)n_slices);
        slice[i] = s;
        phi_rel[i] = pr;
    }
    return TUSK_OK;
}
