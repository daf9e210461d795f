/* zf_sim.c - simulated Regions of Interest of the inner detector
 * (tusk/zfinder.h; the model and its defaults: zfinder/README.md).
 *
 * Per RoI: a phi window of roi_deg around a random azimuth; one signal
 * vertex (z from a Gaussian cut at vertex_max_mm) with 1 + Poisson(
 * signal_tracks - 1) stiff tracks (pT from 1/pT^2) inside the window;
 * Poisson(pileup) pile-up vertices from the same z distribution, each with
 * Poisson(pileup_dndeta * 2 eta_max * window / 2 pi) soft tracks (pT
 * exponential above a minimum) over the window widened by 90 degrees on
 * each side (a track turns by at most 90 degrees before it curls); and
 * Poisson(noise * roi_deg / 100) noise hits. Tracks are helices from the
 * beam line in a uniform solenoid field; each crosses a layer (cylinder
 * of radius rho and half-length L) where rho <= 2R and |z| <= L, is
 * recorded with probability `efficiency`, and smeared by sigma_rphi_mm
 * across and sigma_z_mm along the beam. The points of the RoI are sorted
 * by layer and phi (read-out order); truth follows them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/parse.h"
#include "zf_private.h"

#define PI 3.14159265358979323846
#define GEV_MM_PER_T 3335.64095198 /* R[mm] = pT[GeV] * this / B[T] (1 / 0.29979) */

static const double default_radius[ADF_IDSP_MAX_LAYERS] = {50.5, 88.5, 122.5, 160, 200, 250, 299, 335, 371, 407,
                                                           443,  478,  514,   560, 610, 660, 710, 760, 810};
static const double default_half[ADF_IDSP_MAX_LAYERS] = {400.5, 400.5, 400.5, 749, 749, 749, 749, 749, 749, 749,
                                                         749,   749,   749,   749, 749, 749, 749, 749, 749};

/* The presets: what differs between the thesis's two samples (Table 4.2:
 * 333 and 8,104 spacepoints per 100 degree RoI on average). */
typedef struct preset {
    const char *name;
    double pileup, noise;
} preset_t;

static const preset_t presets[] = {
    {"lowlum", 2.76, 10.0},
    {"highlum", 91.0, 200.0},
};

static const char *const keys[] = {"preset",          "seed",          "rois",          "roi_deg",
                                   "layers_mm",       "half_lengths_mm", "field_t",     "eta_max",
                                   "sigma_rphi_mm",   "sigma_z_mm",    "efficiency",    "vertex_sigma_mm",
                                   "vertex_max_mm",   "signal_tracks", "signal_pt_min_gev", "signal_pt_max_gev",
                                   "pileup",          "pileup_dndeta", "pileup_pt_mean_gev", "pileup_pt_min_gev",
                                   "noise",           NULL};

const char *const *zf_sim_keys(void)
{
    return keys;
}

static void apply_preset(zf_sim_config_t *c, const preset_t *p)
{
    snprintf(c->preset, sizeof c->preset, "%s", p->name);
    c->pileup = p->pileup;
    c->noise = p->noise;
}

void zf_sim_config_default(zf_sim_config_t *c)
{
    memset(c, 0, sizeof *c);
    c->seed = 1;
    c->rois = 100;
    c->roi_deg = 100.0;
    c->n_layers = ADF_IDSP_MAX_LAYERS;
    memcpy(c->radius, default_radius, sizeof c->radius);
    memcpy(c->half_length, default_half, sizeof c->half_length);
    c->field_t = 2.0;
    c->eta_max = 2.5;
    c->sigma_rphi_mm = 0.015;
    c->sigma_z_mm = 0.1;
    c->efficiency = 0.98;
    c->vertex_sigma_mm = 50.0;
    c->vertex_max_mm = 150.0;
    c->signal_tracks = 8.0;
    c->signal_pt_min = 2.0;
    c->signal_pt_max = 20.0;
    c->pileup_dndeta = 6.0;
    c->pileup_pt_mean = 0.5;
    c->pileup_pt_min = 0.1;
    apply_preset(c, &presets[0]);
}

/* A list of up to ADF_IDSP_MAX_LAYERS numbers, separated by spaces or commas. */
static int parse_list(const char *key, const char *text, double *out, unsigned *n, tusk_error_t *err)
{
    char buf[1024];
    if (strlen(text) >= sizeof buf)
        return tusk_error_set(err, TUSK_EPARAM, "RoI simulation setting '%s': the list is too long", key);
    strcpy(buf, text);
    unsigned k = 0;
    for (char *save = NULL, *tok = strtok_r(buf, " ,\t", &save); tok; tok = strtok_r(NULL, " ,\t", &save)) {
        if (k == ADF_IDSP_MAX_LAYERS)
            return tusk_error_set(err, TUSK_EPARAM, "RoI simulation setting '%s': more than %u layers", key,
                                  ADF_IDSP_MAX_LAYERS);
        if (tusk_parse_double(tok, 1.0, 1e5, &out[k]) != 0)
            return tusk_error_set(err, TUSK_EPARAM, "RoI simulation setting '%s': '%s' is not a length from 1 to 1e5 mm",
                                  key, tok);
        k++;
    }
    *n = k;
    return TUSK_OK;
}

int zf_sim_config_read(zf_sim_config_t *c, const tusk_params_t *params, tusk_error_t *err)
{
    const char *v = tusk_params_get(params, "preset");
    if (v) {
        const preset_t *p = NULL;
        for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++)
            if (!strcmp(v, presets[i].name))
                p = &presets[i];
        if (p)
            apply_preset(c, p);
        else if (!strcmp(v, "none"))
            snprintf(c->preset, sizeof c->preset, "none");
        else
            return tusk_error_set(err, TUSK_EPARAM, "RoI simulation setting 'preset': '%s' is not lowlum, highlum or none",
                                  v);
    }
    static const struct {
        const char *key;
        size_t off;
        double lo, hi;
    } num[] = {
        {"roi_deg", offsetof(zf_sim_config_t, roi_deg), 0.01, 360.0},
        {"field_t", offsetof(zf_sim_config_t, field_t), 0.01, 100.0},
        {"eta_max", offsetof(zf_sim_config_t, eta_max), 0.0, 6.0},
        {"sigma_rphi_mm", offsetof(zf_sim_config_t, sigma_rphi_mm), 0.0, 100.0},
        {"sigma_z_mm", offsetof(zf_sim_config_t, sigma_z_mm), 0.0, 100.0},
        {"efficiency", offsetof(zf_sim_config_t, efficiency), 0.0, 1.0},
        {"vertex_sigma_mm", offsetof(zf_sim_config_t, vertex_sigma_mm), 0.0, 1e4},
        {"vertex_max_mm", offsetof(zf_sim_config_t, vertex_max_mm), 0.0, 1e4},
        {"signal_tracks", offsetof(zf_sim_config_t, signal_tracks), 1.0, 1e4},
        {"signal_pt_min_gev", offsetof(zf_sim_config_t, signal_pt_min), 0.01, 1e5},
        {"signal_pt_max_gev", offsetof(zf_sim_config_t, signal_pt_max), 0.01, 1e5},
        {"pileup", offsetof(zf_sim_config_t, pileup), 0.0, 4000.0},
        {"pileup_dndeta", offsetof(zf_sim_config_t, pileup_dndeta), 0.0, 1e3},
        {"pileup_pt_mean_gev", offsetof(zf_sim_config_t, pileup_pt_mean), 0.001, 1e3},
        {"pileup_pt_min_gev", offsetof(zf_sim_config_t, pileup_pt_min), 0.001, 1e3},
        {"noise", offsetof(zf_sim_config_t, noise), 0.0, 1e6},
    };
    for (size_t i = 0; i < sizeof num / sizeof num[0]; i++)
        if ((v = tusk_params_get(params, num[i].key)) &&
            tusk_parse_double(v, num[i].lo, num[i].hi, (double *)((char *)c + num[i].off)) != 0)
            return tusk_error_set(err, TUSK_EPARAM, "RoI simulation setting '%s': '%s' is not a number from %g to %g",
                                  num[i].key, v, num[i].lo, num[i].hi);
    if ((v = tusk_params_get(params, "seed")) && tusk_parse_u64(v, 0, UINT64_MAX, &c->seed) != 0)
        return tusk_error_set(err, TUSK_EPARAM, "RoI simulation setting 'seed': '%s' is not a whole number", v);
    if ((v = tusk_params_get(params, "rois")) && tusk_parse_u64(v, 0, UINT32_MAX, &c->rois) != 0)
        return tusk_error_set(err, TUSK_EPARAM, "RoI simulation setting 'rois': '%s' is not a whole number up to %u", v,
                              UINT32_MAX);
    unsigned nr = c->n_layers, nh = c->n_layers;
    int st;
    if ((v = tusk_params_get(params, "layers_mm")) && (st = parse_list("layers_mm", v, c->radius, &nr, err)))
        return st;
    if ((v = tusk_params_get(params, "half_lengths_mm")) &&
        (st = parse_list("half_lengths_mm", v, c->half_length, &nh, err)))
        return st;
    /* a single half-length serves every layer */
    if (nh == 1 && nr > 1)
        for (unsigned k = 1; k < nr; k++)
            c->half_length[k] = c->half_length[0];
    else if (nh != nr)
        return tusk_error_set(err, TUSK_EPARAM, "RoI simulation: %u layer radii but %u half-lengths (give one or as many)",
                              nr, nh);
    c->n_layers = nr;
    return zf_sim_config_check(c, err);
}

int zf_sim_config_check(const zf_sim_config_t *c, tusk_error_t *err)
{
    if (c->n_layers < 2 || c->n_layers > ADF_IDSP_MAX_LAYERS)
        return tusk_error_set(err, TUSK_EPARAM, "RoI simulation: %u layers, expected 2 to %u", c->n_layers,
                              ADF_IDSP_MAX_LAYERS);
    for (unsigned k = 1; k < c->n_layers; k++)
        if (!(c->radius[k] > c->radius[k - 1]))
            return tusk_error_set(err, TUSK_EPARAM,
                                  "RoI simulation: layer radii must grow from the beam outwards (%g mm after %g mm)",
                                  c->radius[k], c->radius[k - 1]);
    if (!(c->signal_pt_max >= c->signal_pt_min))
        return tusk_error_set(err, TUSK_EPARAM, "RoI simulation: signal_pt_max_gev %g is below signal_pt_min_gev %g",
                              c->signal_pt_max, c->signal_pt_min);
    if (c->vertex_sigma_mm > 0.0 && !(c->vertex_max_mm > 0.0))
        return tusk_error_set(err, TUSK_EPARAM, "RoI simulation: vertex_max_mm must be positive");
    return TUSK_OK;
}

/* ---- the simulation ------------------------------------------------------------- */

typedef struct hit {
    adf_idsp_point_t p;
    adf_idtruth_point_t t;
} hit_t;

struct zf_sim {
    zf_sim_config_t cfg;
    float phi_width;          /* the RoI's width as the frames carry it */
    hit_t *hit;
    size_t n_hit, cap_hit;
    adf_idsp_point_t *pt;
    adf_idtruth_point_t *tp;
    size_t cap_pt;
    adf_idtruth_t truth;
    zf_sim_roi_t out;
};

int zf_sim_new(zf_sim_t **out, const zf_sim_config_t *cfg, tusk_error_t *err)
{
    *out = NULL;
    int st = zf_sim_config_check(cfg, err);
    if (st != TUSK_OK)
        return st;
    zf_sim_t *s = calloc(1, sizeof *s);
    if (!s)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    s->cfg = *cfg;
    s->phi_width = cfg->roi_deg >= 360.0 ? ZF_TWO_PI_F : (float)(cfg->roi_deg * PI / 180.0);
    *out = s;
    return TUSK_OK;
}

void zf_sim_destroy(zf_sim_t **sim)
{
    if (!sim || !*sim)
        return;
    free((*sim)->hit);
    free((*sim)->pt);
    free((*sim)->tp);
    free(*sim);
    *sim = NULL;
}

const zf_sim_config_t *zf_sim_config(const zf_sim_t *sim)
{
    return &sim->cfg;
}

static double wrap_pi(double phi)
{
    phi = fmod(phi + PI, 2.0 * PI);
    if (phi < 0)
        phi += 2.0 * PI;
    return phi - PI;
}

static double vertex_z(zf_sim_t *s, uint64_t *rng)
{
    if (s->cfg.vertex_sigma_mm <= 0.0)
        return 0.0;
    for (;;) {
        double z = s->cfg.vertex_sigma_mm * tusk_rng_gauss(rng);
        if (fabs(z) <= s->cfg.vertex_max_mm)
            return z;
    }
}

/* Add a hit if it lies inside the RoI (as the z-finder will see it). */
static int add_hit(zf_sim_t *s, float phi_min, double rho, double phi, double z, unsigned layer, uint32_t particle,
                   uint16_t vertex, tusk_error_t *err)
{
    float fphi = (float)wrap_pi(phi);
    float rel = zf_phi_rel(fphi, phi_min);
    if (s->phi_width < ZF_TWO_PI_F && !(rel < s->phi_width))
        return TUSK_OK;
    if (s->n_hit >= ADF_IDSP_MAX_POINTS)
        return tusk_error_set(err, TUSK_ELIMIT, "RoI simulation: more than %u spacepoints in one RoI (lower pileup or noise)",
                              ADF_IDSP_MAX_POINTS);
    if (tusk_grow(&s->hit, &s->cap_hit, s->n_hit + 1, sizeof *s->hit) != 0)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory (%zu spacepoints)", s->n_hit + 1);
    hit_t *h = &s->hit[s->n_hit++];
    h->p.rho = (float)rho;
    h->p.phi = fphi;
    h->p.z = (float)z;
    h->p.layer = (uint8_t)layer;
    h->t.particle = particle;
    h->t.vertex = vertex;
    return TUSK_OK;
}

/* One helix from (0, 0, zv): its crossings with every layer it reaches. */
static int track(zf_sim_t *s, uint64_t *rng, float phi_min, double zv, double pt, double phi0, double eta, int charge,
                 uint32_t particle, uint16_t vertex, tusk_error_t *err)
{
    const zf_sim_config_t *c = &s->cfg;
    double radius = pt * GEV_MM_PER_T / c->field_t, cot = sinh(eta);
    for (unsigned l = 0; l < c->n_layers; l++) {
        double rho = c->radius[l];
        if (rho > 2.0 * radius)
            break; /* curls up inside this layer */
        double turn = asin(rho / (2.0 * radius));
        double z = zv + 2.0 * radius * turn * cot;
        if (fabs(z) > c->half_length[l])
            continue;
        if (tusk_rng_uniform(rng) >= c->efficiency)
            continue;
        double phi = phi0 - charge * turn + c->sigma_rphi_mm / rho * tusk_rng_gauss(rng);
        z += c->sigma_z_mm * tusk_rng_gauss(rng);
        int st = add_hit(s, phi_min, rho, phi, z, l, particle, vertex, err);
        if (st != TUSK_OK)
            return st;
    }
    return TUSK_OK;
}

static int by_readout(const void *a, const void *b)
{
    const hit_t *x = a, *y = b;
    if (x->p.layer != y->p.layer)
        return x->p.layer < y->p.layer ? -1 : 1;
    if (x->p.phi != y->p.phi)
        return x->p.phi < y->p.phi ? -1 : 1;
    return x->p.z < y->p.z ? -1 : x->p.z > y->p.z;
}

int zf_sim_make(zf_sim_t *s, uint64_t index, const zf_sim_roi_t **out, tusk_error_t *err)
{
    const zf_sim_config_t *c = &s->cfg;
    /* RoI `index` has its own stream, so RoIs do not depend on each other */
    uint64_t rng = c->seed ^ (index * UINT64_C(0xD1B54A32D192ED03));
    tusk_rng_next(&rng);
    s->n_hit = 0;
    double width = (double)s->phi_width;
    double centre = -PI + 2.0 * PI * tusk_rng_uniform(&rng);
    float phi_min = (float)wrap_pi(centre - 0.5 * width);
    uint32_t particle = 0;
    int st;
    /* the signal: stiff tracks inside the RoI */
    double zs = vertex_z(s, &rng);
    unsigned n_sig = 1 + tusk_rng_poisson(&rng, c->signal_tracks - 1.0);
    for (unsigned i = 0; i < n_sig; i++) {
        double u = tusk_rng_uniform(&rng);
        double pt = 1.0 / (1.0 / c->signal_pt_min - u * (1.0 / c->signal_pt_min - 1.0 / c->signal_pt_max));
        double phi0 = (double)phi_min + width * tusk_rng_uniform(&rng);
        double eta = c->eta_max * (2.0 * tusk_rng_uniform(&rng) - 1.0);
        int q = tusk_rng_uniform(&rng) < 0.5 ? -1 : 1;
        if ((st = track(s, &rng, phi_min, zs, pt, phi0, eta, q, particle++, 0, err)))
            return st;
    }
    /* pile-up: soft tracks over the RoI widened by 90 degrees a side */
    double window = width + PI < 2.0 * PI ? width + PI : 2.0 * PI;
    unsigned n_pu = tusk_rng_poisson(&rng, c->pileup);
    if (n_pu > ADF_IDTRUTH_MAX_PILEUP)
        n_pu = ADF_IDTRUTH_MAX_PILEUP;
    double per_vertex = c->pileup_dndeta * 2.0 * c->eta_max * window / (2.0 * PI);
    unsigned n_pu_tracks = 0;
    for (unsigned v = 0; v < n_pu; v++) {
        double zp = vertex_z(s, &rng);
        s->truth.z_pileup[v] = (float)zp;
        unsigned n = tusk_rng_poisson(&rng, per_vertex);
        for (unsigned i = 0; i < n; i++) {
            double pt = c->pileup_pt_min - c->pileup_pt_mean * log(tusk_rng_uniform(&rng));
            double phi0 = centre - 0.5 * window + window * tusk_rng_uniform(&rng);
            double eta = c->eta_max * (2.0 * tusk_rng_uniform(&rng) - 1.0);
            int q = tusk_rng_uniform(&rng) < 0.5 ? -1 : 1;
            if ((st = track(s, &rng, phi_min, zp, pt, phi0, eta, q, particle++, (uint16_t)(v + 1), err)))
                return st;
        }
        n_pu_tracks += n;
    }
    /* noise */
    unsigned n_noise = tusk_rng_poisson(&rng, c->noise * c->roi_deg / 100.0);
    for (unsigned i = 0; i < n_noise; i++) {
        unsigned l = (unsigned)(tusk_rng_uniform(&rng) * c->n_layers);
        if (l >= c->n_layers)
            l = c->n_layers - 1;
        double phi = (double)phi_min + width * tusk_rng_uniform(&rng);
        double z = c->half_length[l] * (2.0 * tusk_rng_uniform(&rng) - 1.0);
        if ((st = add_hit(s, phi_min, c->radius[l], phi, z, l, ADF_IDTRUTH_NOISE_PARTICLE, ADF_IDTRUTH_NOISE_VERTEX,
                          err)))
            return st;
    }
    if (s->n_hit > 1)
        qsort(s->hit, s->n_hit, sizeof *s->hit, by_readout);
    if (s->n_hit > s->cap_pt) {
        size_t cap = s->n_hit + s->n_hit / 4;
        adf_idsp_point_t *p = realloc(s->pt, cap * sizeof *p);
        if (p)
            s->pt = p;
        adf_idtruth_point_t *t = realloc(s->tp, cap * sizeof *t);
        if (t)
            s->tp = t;
        if (!p || !t)
            return tusk_error_set(err, TUSK_ENOMEM, "out of memory (%zu spacepoints)", cap);
        s->cap_pt = cap;
    }
    for (size_t i = 0; i < s->n_hit; i++) {
        s->pt[i] = s->hit[i].p;
        s->tp[i] = s->hit[i].t;
    }
    s->truth.z_signal = (float)zs;
    s->truth.n_pileup = (uint16_t)n_pu;
    s->truth.flags = 0;
    s->truth.n_points = (uint32_t)s->n_hit;
    s->truth.raw = NULL;
    zf_sim_roi_t *o = &s->out;
    o->roi.event = (uint32_t)index;
    o->roi.timestamp = index & ADF_TIMESTAMP_MAX;
    o->roi.phi_min = phi_min;
    o->roi.phi_width = s->phi_width;
    o->roi.n = (uint32_t)s->n_hit;
    o->roi.pt = s->pt;
    o->truth = &s->truth;
    o->truth_points = s->tp;
    o->signal_tracks = n_sig;
    o->pileup_tracks = n_pu_tracks;
    *out = o;
    return TUSK_OK;
}

size_t zf_sim_bytes(const zf_sim_roi_t *r)
{
    return 2 * ADF_KEY_SIZE + adf_idsp_payload_size(r->roi.n) + adf_idtruth_payload_size(r->truth->n_pileup, r->roi.n);
}

int zf_sim_encode(const zf_sim_roi_t *r, adf_writer_t *w, tusk_error_t *err)
{
    adf_idsp_t h = {r->roi.n, r->roi.phi_min, r->roi.phi_width, 0, NULL};
    adf_error_t e;
    if (adf_idsp_encode(w, r->roi.event, r->roi.timestamp, &h, r->roi.pt, &e) != ADF_OK ||
        adf_idtruth_encode(w, r->roi.event, r->roi.timestamp, r->truth, r->truth_points, &e) != ADF_OK)
        return tusk_error_set(err, e.code == ADF_EFULL || e.code == ADF_ETOOBIG ? TUSK_ELIMIT : TUSK_EINVAL,
                              "RoI %u: %s", (unsigned)r->roi.event, e.message);
    return TUSK_OK;
}
