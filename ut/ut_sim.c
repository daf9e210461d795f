/* ut_sim.c - the event simulation (tusk/ut.h; ut/README.md, "The
 * simulation"): pp collisions at the LHCb interaction point, forward
 * particles with a minimum-bias-like spectrum, VELO tracks (resolution,
 * efficiency, clones, fakes, backward tracks), a kick plane for the
 * magnet's field before the UT, multiple scattering, UT clusters
 * (efficiency, resolution, a strip's one cluster, noise), and whether a
 * particle reaches the SciFi after the main magnet (long or upstream).
 * Event k draws from its own random stream (base/rng.h), so it is the
 * same whoever makes it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/parse.h"
#include "ut_private.h"

#define PI 3.14159265358979323846
#define MAX_COLLISIONS 255u

/* ---- settings ---- */

typedef struct key_spec {
    const char *key;
    size_t offset;
    double lo, hi;
} key_spec_t;

#define OFF(f) offsetof(ut_sim_config_t, f)
static const key_spec_t specs[] = {
    {"interactions", OFF(interactions), 0.0, 100.0},
    {"dndeta", OFF(dndeta), 0.0, 1000.0},
    {"eta_min", OFF(eta_min), 0.5, 10.0},
    {"eta_max", OFF(eta_max), 0.5, 10.0},
    {"backward", OFF(backward), 0.0, 1000.0},
    {"pt_mean_gev", OFF(pt_mean_gev), 0.01, 100.0},
    {"vertex_sigma_z_mm", OFF(vertex_sigma_z_mm), 0.0, 1000.0},
    {"velo_eta_min", OFF(velo_eta_min), 0.5, 10.0},
    {"velo_eta_max", OFF(velo_eta_max), 0.5, 10.0},
    {"velo_efficiency", OFF(velo_efficiency), 0.0, 1.0},
    {"velo_z_mm", OFF(velo_z_mm), -1000.0, 2000.0},
    {"velo_pos_um", OFF(velo_pos_um), 0.0, 10000.0},
    {"velo_slope_mrad", OFF(velo_slope_mrad), 0.0, 100.0},
    {"velo_slope_ms_mrad", OFF(velo_slope_ms_mrad), 0.0, 100.0},
    {"velo_fakes", OFF(velo_fakes), 0.0, 1.0},
    {"velo_clones", OFF(velo_clones), 0.0, 1.0},
    {"kick_gev", OFF(kick_gev), 0.0, 100.0},
    {"kick_z_mm", OFF(kick_z_mm), 0.0, 1e5},
    {"scatter_mrad", OFF(scatter_mrad), 0.0, 1000.0},
    {"hit_efficiency", OFF(hit_efficiency), 0.0, 1.0},
    {"resolution_strips", OFF(resolution_strips), 0.0, 100.0},
    {"noise", OFF(noise), 0.0, 1e5},
    {"main_kick_gev", OFF(main_kick_gev), 0.0, 100.0},
    {"main_z_mm", OFF(main_z_mm), 0.0, 1e5},
    {"scifi_x_mm", OFF(scifi_x_mm), 0.0, 1e5},
    {"scifi_y_mm", OFF(scifi_y_mm), 0.0, 1e5},
    {"scifi_hole_mm", OFF(scifi_hole_mm), 0.0, 1e5},
};
#undef OFF
#define N_SPECS (sizeof specs / sizeof specs[0])

/* The simulation's keys, then the geometry's (a test checks that this
 * list holds every one of ut_geometry_keys). */
static const char *const keys[] = {
    "seed",           "events",          "truth",           "scifi_z_mm",      "interactions",
    "dndeta",         "eta_min",         "eta_max",         "backward",        "pt_mean_gev",
    "vertex_sigma_z_mm", "velo_eta_min", "velo_eta_max",    "velo_efficiency", "velo_z_mm",
    "velo_pos_um",    "velo_slope_mrad", "velo_slope_ms_mrad", "velo_fakes",   "velo_clones",
    "kick_gev",       "kick_z_mm",       "scatter_mrad",    "hit_efficiency",  "resolution_strips",
    "noise",          "main_kick_gev",   "main_z_mm",       "scifi_x_mm",      "scifi_y_mm",
    "scifi_hole_mm",
    "planes_z_mm",    "stereo_deg",      "staves_x",        "staves_uv",       "stave_width_mm",
    "rows",           "pitch_um",        "fine_pitch_um",   "fine_staves",     "inner_staves",
    "inner_rows",     "inner_groups",    "hole_mm",         NULL};
_Static_assert(sizeof keys / sizeof keys[0] == N_SPECS + 4 + 13 + 1, "one key a setting");

const char *const *ut_sim_keys(void)
{
    return keys;
}

void ut_sim_config_default(ut_sim_config_t *c)
{
    memset(c, 0, sizeof *c);
    c->seed = 1;
    c->events = 100;
    c->interactions = 7.6;
    c->dndeta = 6.0;
    c->eta_min = 1.8;
    c->eta_max = 5.2;
    c->backward = 5.0;
    c->pt_mean_gev = 0.55;
    c->vertex_sigma_z_mm = 45.0;
    c->velo_eta_min = 2.0;
    c->velo_eta_max = 5.0;
    c->velo_efficiency = 0.99;
    c->velo_z_mm = 770.0;
    c->velo_pos_um = 15.0;
    c->velo_slope_mrad = 0.05;
    c->velo_slope_ms_mrad = 0.5;
    c->velo_fakes = 0.02;
    c->velo_clones = 0.0;
    c->kick_gev = 0.035;
    c->kick_z_mm = 1780.0;
    c->scatter_mrad = 3.0;
    c->hit_efficiency = 0.99;
    c->resolution_strips = 0.25;
    c->noise = 20.0;
    c->main_kick_gev = 1.2;
    c->main_z_mm = 5300.0;
    c->scifi_z_mm[0] = 7830.0;
    c->scifi_z_mm[1] = 9410.0;
    c->scifi_x_mm = 3000.0;
    c->scifi_y_mm = 2400.0;
    c->scifi_hole_mm = 100.0;
    ut_geometry_config_default(&c->geo);
    c->truth = true;
}

static int set_key(ut_sim_config_t *c, const char *key, const char *v, tusk_error_t *err)
{
    if (strcmp(key, "seed") == 0) {
        if (tusk_parse_u64x(v, 0, UINT64_MAX, &c->seed) != 0)
            return tusk_error_set(err, TUSK_EPARAM, "UT simulation setting 'seed': '%s' is not a whole number", v);
        return TUSK_OK;
    }
    if (strcmp(key, "events") == 0) {
        if (tusk_parse_u64(v, 0, UINT32_MAX, &c->events) != 0)
            return tusk_error_set(err, TUSK_EPARAM,
                                  "UT simulation setting 'events': '%s' is not a whole number from 0 to 2^32 - 1", v);
        return TUSK_OK;
    }
    if (strcmp(key, "truth") == 0) {
        if (strcmp(v, "yes") == 0 || strcmp(v, "true") == 0 || strcmp(v, "1") == 0 || strcmp(v, "on") == 0)
            c->truth = true;
        else if (strcmp(v, "no") == 0 || strcmp(v, "false") == 0 || strcmp(v, "0") == 0 || strcmp(v, "off") == 0)
            c->truth = false;
        else
            return tusk_error_set(err, TUSK_EPARAM, "UT simulation setting 'truth': '%s' is not yes or no", v);
        return TUSK_OK;
    }
    if (strcmp(key, "scifi_z_mm") == 0) {
        double z[2];
        char buf[128], *save = NULL;
        int n = 0;
        if (strlen(v) < sizeof buf) {
            strcpy(buf, v);
            for (char *tok = strtok_r(buf, " \t,", &save); tok; tok = strtok_r(NULL, " \t,", &save)) {
                if (n == 2 || tusk_parse_double(tok, 0.0, 1e5, &z[n]) != 0) {
                    n = -1;
                    break;
                }
                n++;
            }
        }
        if (n != 2 || !(z[1] >= z[0]))
            return tusk_error_set(err, TUSK_EPARAM,
                                  "UT simulation setting 'scifi_z_mm': '%s' is not two z positions (mm), the first "
                                  "before the second",
                                  v);
        c->scifi_z_mm[0] = z[0];
        c->scifi_z_mm[1] = z[1];
        return TUSK_OK;
    }
    for (size_t i = 0; i < N_SPECS; i++) {
        if (strcmp(key, specs[i].key) != 0)
            continue;
        double *num = (double *)((char *)c + specs[i].offset);
        if (tusk_parse_double(v, specs[i].lo, specs[i].hi, num) != 0)
            return tusk_error_set(err, TUSK_EPARAM, "UT simulation setting '%s': '%s' is not a number from %g to %g",
                                  key, v, specs[i].lo, specs[i].hi);
        return TUSK_OK;
    }
    for (const char *const *k = ut_geometry_keys(); *k; k++)
        if (strcmp(key, *k) == 0)
            return ut_geometry_config_set(&c->geo, key, v, err);
    return tusk_error_set(err, TUSK_EPARAM, "unknown UT simulation setting '%s'", key);
}

int ut_sim_config_read(ut_sim_config_t *c, const tusk_params_t *params, tusk_error_t *err)
{
    for (const char *const *k = keys; *k; k++) {
        const char *v = tusk_params_get(params, *k);
        if (v) {
            int st = set_key(c, *k, v, err);
            if (st != TUSK_OK)
                return st;
        }
    }
    return ut_sim_config_check(c, err);
}

int ut_sim_config_check(const ut_sim_config_t *c, tusk_error_t *err)
{
    for (size_t i = 0; i < N_SPECS; i++) {
        double v = *(const double *)((const char *)c + specs[i].offset);
        if (!(v >= specs[i].lo && v <= specs[i].hi))
            return tusk_error_set(err, TUSK_EPARAM, "UT simulation setting '%s' is %g, outside %g to %g", specs[i].key, v,
                                  specs[i].lo, specs[i].hi);
    }
    if (!(c->eta_max > c->eta_min) || !(c->velo_eta_max > c->velo_eta_min))
        return tusk_error_set(err, TUSK_EPARAM,
                              "UT simulation: eta_min %g to eta_max %g, velo_eta_min %g to velo_eta_max %g (each range "
                              "must be increasing)",
                              c->eta_min, c->eta_max, c->velo_eta_min, c->velo_eta_max);
    if (!(c->kick_z_mm > c->velo_z_mm && c->kick_z_mm < c->geo.plane_z[0] && c->main_z_mm > c->geo.plane_z[3] &&
          c->scifi_z_mm[0] > c->main_z_mm))
        return tusk_error_set(err, TUSK_EPARAM,
                              "UT simulation: the VELO state (velo_z_mm %g), the kick (kick_z_mm %g), the UT (%g to %g), "
                              "the main magnet (main_z_mm %g) and the SciFi (from %g) must follow each other in z",
                              c->velo_z_mm, c->kick_z_mm, c->geo.plane_z[0], c->geo.plane_z[3], c->main_z_mm,
                              c->scifi_z_mm[0]);
    return TUSK_OK;
}

/* ---- the simulation ---- */

typedef struct hit {
    uint16_t sector, strip;
    uint16_t word;
    uint32_t particle;
    uint32_t order;           /* made in this order: the first of a strip keeps it */
} hit_t;

struct ut_sim {
    ut_sim_config_t cfg;
    ut_geometry_t *geo;
    ut_sim_event_t out;
    adf_ut_particle_t *part;
    size_t cap_part;
    hit_t *hits;
    size_t n_hits, cap_hits;
    adf_velo_track_t *velo;
    uint32_t *velo_part;
    size_t n_velo, cap_velo, cap_velo_part;
    adf_ut_bank_t *banks;
    size_t cap_banks;
    uint16_t *words;
    uint32_t *hit_part;
    size_t cap_words, cap_hit_part;
};

int ut_sim_new(ut_sim_t **out, const ut_sim_config_t *cfg, tusk_error_t *err)
{
    *out = NULL;
    int st = ut_sim_config_check(cfg, err);
    if (st != TUSK_OK)
        return st;
    ut_sim_t *s = calloc(1, sizeof *s);
    if (!s)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    s->cfg = *cfg;
    if ((st = ut_geometry_new(&s->geo, &cfg->geo, err)) != TUSK_OK) {
        free(s);
        return st;
    }
    *out = s;
    return TUSK_OK;
}

void ut_sim_destroy(ut_sim_t **sim)
{
    if (!sim || !*sim)
        return;
    ut_sim_t *s = *sim;
    ut_geometry_destroy(&s->geo);
    free(s->part);
    free(s->hits);
    free(s->velo);
    free(s->velo_part);
    free(s->banks);
    free(s->words);
    free(s->hit_part);
    free(s);
    *sim = NULL;
}

const ut_sim_config_t *ut_sim_config(const ut_sim_t *s)
{
    return &s->cfg;
}

const ut_geometry_t *ut_sim_geometry(const ut_sim_t *s)
{
    return s->geo;
}

/* pT from a Gamma(2) distribution of the given mean. */
static double gamma2(uint64_t *rng, double mean)
{
    return -0.5 * mean * log(tusk_rng_uniform(rng) * tusk_rng_uniform(rng));
}

static int add_hit(ut_sim_t *s, unsigned sector, double pos, uint32_t particle, uint64_t *rng)
{
    const ut_sector_info_t *in = &s->geo->info[sector];
    double q = floor(pos * 4.0);
    if (q < 0)
        q = 0;
    if (q > 4.0 * in->strips - 1)
        q = 4.0 * in->strips - 1;
    unsigned q4 = (unsigned)q, quarter = q4 & 3u;
    /* charge sharing: a cluster near a strip's edge takes its neighbour too */
    unsigned size = (quarter == 0 || quarter == 3) ? 2u : 1u;
    if (tusk_rng_uniform(rng) < 0.05)
        size++;
    if (tusk_grow(&s->hits, &s->cap_hits, s->n_hits + 1, sizeof *s->hits) != 0)
        return -1;
    hit_t *h = &s->hits[s->n_hits];
    h->sector = (uint16_t)sector;
    h->strip = (uint16_t)(q4 >> 2);
    h->word = adf_ut_word(q4 >> 2, quarter, size, 0);
    h->particle = particle;
    h->order = (uint32_t)s->n_hits;
    s->n_hits++;
    return 0;
}

static int add_velo(ut_sim_t *s, const adf_velo_track_t *t, uint32_t particle)
{
    if (tusk_grow(&s->velo, &s->cap_velo, s->n_velo + 1, sizeof *s->velo) != 0 ||
        tusk_grow(&s->velo_part, &s->cap_velo_part, s->n_velo + 1, sizeof *s->velo_part) != 0)
        return -1;
    s->velo[s->n_velo] = *t;
    s->velo_part[s->n_velo] = particle;
    s->n_velo++;
    return 0;
}

/* A smeared VELO track of the line through (vx, vy, vz) with slopes (tx,
 * ty), momentum p (GeV; 0 for a fake, whose resolution is the constant
 * term's). */
static adf_velo_track_t velo_track(const ut_sim_config_t *c, uint64_t *rng, double vx, double vy, double vz, double tx,
                                   double ty, double p, bool backward)
{
    adf_velo_track_t t;
    double st = c->velo_slope_mrad * 1e-3, ms = p > 0 ? c->velo_slope_ms_mrad * 1e-3 / p : 0.0;
    double sigma = sqrt(st * st + ms * ms), sp = c->velo_pos_um * 1e-3;
    double z = backward ? vz - 200.0 : c->velo_z_mm; /* a backward track's state: just upstream of its vertex */
    t.x = (float)(vx + tx * (z - vz) + sp * tusk_rng_gauss(rng));
    t.y = (float)(vy + ty * (z - vz) + sp * tusk_rng_gauss(rng));
    t.z = (float)z;
    t.tx = (float)(tx + sigma * tusk_rng_gauss(rng));
    t.ty = (float)(ty + sigma * tusk_rng_gauss(rng));
    t.flags = backward ? ADF_VELO_BACKWARD : 0u;
    return t;
}

static int by_strip(const void *a, const void *b)
{
    const hit_t *x = a, *y = b;
    if (x->sector != y->sector)
        return x->sector < y->sector ? -1 : 1;
    if (x->strip != y->strip)
        return x->strip < y->strip ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

static bool in_scifi(const ut_sim_config_t *c, double x, double y)
{
    return fabs(x) < c->scifi_x_mm && fabs(y) < c->scifi_y_mm &&
           !(fabs(x) < c->scifi_hole_mm && fabs(y) < c->scifi_hole_mm);
}

int ut_sim_make(ut_sim_t *s, uint64_t index, const ut_sim_event_t **out, tusk_error_t *err)
{
    const ut_sim_config_t *c = &s->cfg;
    if (index > UINT32_MAX)
        return tusk_error_set(err, TUSK_EINVAL, "UT simulation: event %llu: event numbers have 32 bits",
                              (unsigned long long)index);
    uint64_t rng = c->seed ^ (index * UINT64_C(0xD1B54A32D192ED03));
    tusk_rng_next(&rng);
    s->n_hits = s->n_velo = 0;
    size_t np = 0;
    unsigned n_coll = tusk_rng_poisson(&rng, c->interactions);
    if (n_coll > MAX_COLLISIONS)
        n_coll = MAX_COLLISIONS;
    unsigned n_real_velo = 0;
    for (unsigned v = 0; v < n_coll; v++) {
        double vz = c->vertex_sigma_z_mm * tusk_rng_gauss(&rng);
        double vx = 0.03 * tusk_rng_gauss(&rng), vy = 0.03 * tusk_rng_gauss(&rng);
        unsigned n_fwd = tusk_rng_poisson(&rng, c->dndeta * (c->eta_max - c->eta_min));
        unsigned n_bwd = tusk_rng_poisson(&rng, c->backward);
        for (unsigned k = 0; k < n_fwd + n_bwd; k++) {
            bool backward = k >= n_fwd;
            double eta = backward ? -(c->velo_eta_min + (c->velo_eta_max - c->velo_eta_min) * tusk_rng_uniform(&rng))
                                  : c->eta_min + (c->eta_max - c->eta_min) * tusk_rng_uniform(&rng);
            double phi = 2.0 * PI * tusk_rng_uniform(&rng);
            double pt = gamma2(&rng, c->pt_mean_gev);
            int q = tusk_rng_uniform(&rng) < 0.5 ? -1 : 1;
            double theta = 2.0 * atan(exp(-eta)); /* from the +z axis: above pi/2 for a backward one */
            double tant = tan(theta);
            double tx = tant * cos(phi), ty = tant * sin(phi);
            double p = pt / sin(theta);
            if (tusk_grow(&s->part, &s->cap_part, np + 1, sizeof *s->part) != 0)
                goto oom;
            adf_ut_particle_t *x = &s->part[np];
            x->p = (float)p;
            x->tx = (float)tx;
            x->ty = (float)ty;
            x->charge = (int8_t)q;
            x->planes = 0;
            x->vertex = (uint8_t)v;
            x->flags = 0;
            uint32_t pid = (uint32_t)np++;
            double aeta = fabs(eta);
            bool velo = aeta >= c->velo_eta_min && aeta <= c->velo_eta_max;
            if (velo)
                x->flags |= ADF_UT_VELO;
            if (backward) {
                x->flags |= ADF_UT_BACKWARD;
                if (tusk_rng_uniform(&rng) < c->velo_efficiency) {
                    adf_velo_track_t t = velo_track(c, &rng, vx, vy, vz, tx, ty, p, true);
                    if (add_velo(s, &t, pid) != 0)
                        goto oom;
                }
                continue;
            }
            if (velo && tusk_rng_uniform(&rng) < c->velo_efficiency) {
                adf_velo_track_t t = velo_track(c, &rng, vx, vy, vz, tx, ty, p, false);
                if (add_velo(s, &t, pid) != 0)
                    goto oom;
                n_real_velo++;
                if (tusk_rng_uniform(&rng) < c->velo_clones) {
                    t = velo_track(c, &rng, vx, vy, vz, tx, ty, p, false);
                    if (add_velo(s, &t, pid) != 0)
                        goto oom;
                }
            }
            /* the kick and the scattering at z_kick, then straight through the UT */
            double xk = vx + tx * (c->kick_z_mm - vz), yk = vy + ty * (c->kick_z_mm - vz);
            double ms = c->scatter_mrad * 1e-3 / p;
            double tx2 = tx + c->kick_gev * q / p + ms * tusk_rng_gauss(&rng), ty2 = ty + ms * tusk_rng_gauss(&rng);
            for (unsigned pl = 0; pl < UT_PLANES; pl++) {
                double dz = c->geo.plane_z[pl] - c->kick_z_mm;
                unsigned sector;
                double pos;
                if (!ut_geometry_locate(s->geo, pl, xk + tx2 * dz, yk + ty2 * dz, &sector, &pos))
                    continue;
                if (tusk_rng_uniform(&rng) >= c->hit_efficiency)
                    continue;
                pos += c->resolution_strips * tusk_rng_gauss(&rng);
                if (add_hit(s, sector, pos, pid, &rng) != 0)
                    goto oom;
            }
            /* the main magnet; long when it crosses the SciFi's first and last station */
            double xm = xk + tx2 * (c->main_z_mm - c->kick_z_mm), ym = yk + ty2 * (c->main_z_mm - c->kick_z_mm);
            double tx3 = tx2 + c->main_kick_gev * q / p;
            bool lng = true;
            for (int st = 0; st < 2; st++) {
                double dz = c->scifi_z_mm[st] - c->main_z_mm;
                lng = lng && in_scifi(c, xm + tx3 * dz, ym + ty2 * dz);
            }
            if (lng)
                x->flags |= ADF_UT_LONG;
        }
    }
    /* fake VELO tracks: lines from a collision, in the VELO's acceptance */
    unsigned n_fake = n_coll ? tusk_rng_poisson(&rng, c->velo_fakes * n_real_velo) : 0;
    for (unsigned f = 0; f < n_fake; f++) {
        double vz = c->vertex_sigma_z_mm * tusk_rng_gauss(&rng);
        double eta = c->velo_eta_min + (c->velo_eta_max - c->velo_eta_min) * tusk_rng_uniform(&rng);
        double phi = 2.0 * PI * tusk_rng_uniform(&rng), tant = tan(2.0 * atan(exp(-eta)));
        adf_velo_track_t t = velo_track(c, &rng, 0.0, 0.0, vz, tant * cos(phi), tant * sin(phi), 0.0, false);
        if (add_velo(s, &t, ADF_UT_NONE) != 0)
            goto oom;
    }
    /* noise clusters anywhere in the UT */
    unsigned n_noise = tusk_rng_poisson(&rng, c->noise);
    for (unsigned k = 0; k < n_noise; k++) {
        unsigned sector = (unsigned)(tusk_rng_uniform(&rng) * s->geo->n_sectors);
        if (sector >= s->geo->n_sectors)
            sector = s->geo->n_sectors - 1;
        double pos = tusk_rng_uniform(&rng) * s->geo->info[sector].strips;
        if (add_hit(s, sector, pos, ADF_UT_NONE, &rng) != 0)
            goto oom;
    }
    /* a strip records one cluster: the first made keeps it */
    qsort(s->hits, s->n_hits, sizeof *s->hits, by_strip);
    size_t nh = 0;
    for (size_t i = 0; i < s->n_hits; i++)
        if (nh == 0 || s->hits[i].sector != s->hits[nh - 1].sector || s->hits[i].strip != s->hits[nh - 1].strip)
            s->hits[nh++] = s->hits[i];
    s->n_hits = nh;
    /* banks, words, the truth of each word and the particles' planes */
    if (tusk_grow(&s->words, &s->cap_words, nh + 1, sizeof *s->words) != 0 ||
        tusk_grow(&s->hit_part, &s->cap_hit_part, nh + 1, sizeof *s->hit_part) != 0 ||
        tusk_grow(&s->banks, &s->cap_banks, nh + 1, sizeof *s->banks) != 0)
        goto oom;
    size_t nb = 0;
    for (size_t i = 0; i < nh; i++) {
        const hit_t *h = &s->hits[i];
        if (nb == 0 || s->banks[nb - 1].sector != h->sector) {
            s->banks[nb].sector = h->sector;
            s->banks[nb].n_hits = 0;
            nb++;
        }
        s->banks[nb - 1].n_hits++;
        s->words[i] = h->word;
        s->hit_part[i] = h->particle;
        if (h->particle != ADF_UT_NONE)
            s->part[h->particle].planes |= (uint8_t)(1u << s->geo->info[h->sector].plane);
    }
    if (nh > UT_MAX_EVENT_HITS)
        return tusk_error_set(err, TUSK_ELIMIT,
                              "UT simulation: event %llu has %zu hits, more than a UT event may (%u): fewer "
                              "interactions or less noise",
                              (unsigned long long)index, nh, UT_MAX_EVENT_HITS);
    /* the VELO tracks in no particular order (a fixed shuffle of the event's stream) */
    for (size_t i = s->n_velo; i > 1; i--) {
        size_t j = (size_t)(tusk_rng_uniform(&rng) * (double)i);
        if (j >= i)
            j = i - 1;
        adf_velo_track_t t = s->velo[i - 1];
        s->velo[i - 1] = s->velo[j];
        s->velo[j] = t;
        uint32_t pp = s->velo_part[i - 1];
        s->velo_part[i - 1] = s->velo_part[j];
        s->velo_part[j] = pp;
    }
    ut_sim_event_t *o = &s->out;
    memset(o, 0, sizeof *o);
    o->ev.event = (uint32_t)index;
    o->ev.timestamp = (index * 5u / 2u) & ADF_TIMESTAMP_MAX; /* 25 ns crossings in 10 ns ticks */
    o->ev.geometry = s->geo->digest;
    o->ev.n_banks = (uint32_t)nb;
    o->ev.n_hits = (uint32_t)nh;
    o->ev.n_tracks = (uint32_t)s->n_velo;
    o->ev.banks = s->banks;
    o->ev.words = s->words;
    o->ev.velo = s->velo;
    o->n_particles = (uint32_t)np;
    o->particles = s->part;
    o->hit_particle = s->hit_part;
    o->velo_particle = s->velo_part;
    o->collisions = n_coll;
    o->noise_hits = 0;
    for (size_t i = 0; i < nh; i++)
        o->noise_hits += s->hit_part[i] == ADF_UT_NONE;
    *out = o;
    return TUSK_OK;
oom:
    return tusk_error_set(err, TUSK_ENOMEM, "out of memory (UT simulation, event %llu)", (unsigned long long)index);
}

size_t ut_sim_bytes(const ut_sim_t *s, const ut_sim_event_t *e)
{
    size_t n = 4 * ADF_KEY_SIZE + adf_ut_raw_payload_size(e->ev.n_banks, e->ev.n_hits) +
               adf_velo_tracks_payload_size(e->ev.n_tracks);
    if (s->cfg.truth)
        n += adf_ut_truth_payload_size(e->n_particles, e->ev.n_hits, e->ev.n_tracks);
    return n;
}

int ut_sim_encode(const ut_sim_t *s, const ut_sim_event_t *e, adf_writer_t *w, tusk_error_t *err)
{
    adf_error_t ae;
    adf_ut_raw_t raw = {e->ev.geometry, (uint16_t)e->ev.n_banks, 0, e->ev.n_hits, NULL};
    adf_velo_tracks_t vt = {e->ev.n_tracks, 0, NULL};
    adf_ut_truth_t tr = {e->n_particles, e->ev.n_hits, e->ev.n_tracks, 0, NULL, NULL, NULL};
    if (e->ev.n_banks > UINT16_MAX)
        return tusk_error_set(err, TUSK_ELIMIT, "UT simulation: event %u has %u banks", (unsigned)e->ev.event,
                              (unsigned)e->ev.n_banks);
    /* one event:data:ut frame: the event's frames travel together */
    adf_key_t key = {0, ADF_TYPE_EVENT_DATA_UT, e->ev.event, e->ev.timestamp};
    if (adf_writer_begin(w, &key) != ADF_OK)
        return tusk_error_set(err, TUSK_EIO, "UT simulation, event %u: %s", (unsigned)e->ev.event,
                              adf_writer_error(w)->message);
    if (adf_ut_raw_encode(w, e->ev.event, e->ev.timestamp, &raw, e->ev.banks, e->ev.words, &ae) != ADF_OK ||
        adf_velo_tracks_encode(w, e->ev.event, e->ev.timestamp, &vt, e->ev.velo, &ae) != ADF_OK ||
        (s->cfg.truth && adf_ut_truth_encode(w, e->ev.event, e->ev.timestamp, &tr, e->particles, e->hit_particle,
                                             e->velo_particle, &ae) != ADF_OK)) {
        adf_writer_abort(w);
        return tusk_error_set(err, TUSK_EIO, "UT simulation, event %u: %s", (unsigned)e->ev.event, ae.message);
    }
    if (adf_writer_end(w) != ADF_OK)
        return tusk_error_set(err, TUSK_EIO, "UT simulation, event %u: %s", (unsigned)e->ev.event,
                              adf_writer_error(w)->message);
    return TUSK_OK;
}
