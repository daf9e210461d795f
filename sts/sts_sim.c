/* sts_sim.c - simulated STS timeslices (tusk/sts.h; the model and its
 * defaults: sts/README.md).
 *
 * The detector: n stations at z = stations_mm, each tiled around the beam
 * with modules strips x pitch wide, in columns (ladders) that start at the
 * beam's height: each module's strip length is the first of
 * strip_lengths_mm whose polar-angle limit (length_theta_deg) lies beyond
 * the module's point nearest the beam, so modules near the beam are short
 * (CBM's sensors are 2 to 12 cm long for the same reason); a module wholly
 * outside the acceptance circle z tan(theta_max) is left out. A timeslice: `collisions`
 * collisions, Poisson in time at rate_mhz (exponential gaps, the first
 * margin_ns in), each with Poisson(tracks) straight tracks from the
 * target, pseudorapidity Gaussian (eta_mean, eta_sigma) within
 * theta_min..theta_max, azimuth uniform. A track crossing a module leaves
 * a Monte Carlo point; its charge (most probable charge_mpv for a
 * perpendicular track, scaled by the path length, Moyal-distributed with
 * width landau_width) is spread along its path through the sensor, in
 * eight parts each smeared by diffusion_um, over the strips of each side;
 * a strip whose charge plus Gaussian noise (charge_noise) reaches the
 * threshold makes a digi, its time the point's time (collision plus
 * flight) smeared by time_resolution_ns. Noise digis (noise_rate_khz a
 * channel, Poisson in time) come on top, with charges from the noise tail
 * above the threshold. A channel records one hit at a time: a hit less
 * than dead_time_ns after the channel's last digi is lost (of two hits of
 * one collision in one strip, the one simulated first is kept). Digis stay in the order they were made
 * (noise up to a collision, then the collision's tracks one by one): near
 * time order, but not sorted.
 *
 * Timeslice k draws collision c from its own stream (seed, k, c), noise
 * of module m from (seed, k, m): a timeslice is the same whoever makes
 * it. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/parse.h"
#include "sts_private.h"

#define PI 3.14159265358979323846
#define C_MM_NS 299.792458
#define PARTS 8 /* charge parts along a track's path */

static const char *const keys[] = {"seed",          "timeslices",      "collisions",     "rate_mhz",
                                   "stations_mm",   "theta_max_deg",   "strips",         "pitch_um",
                                   "stereo_deg",    "strip_lengths_mm", "length_theta_deg", "thickness_um",   "tracks",
                                   "eta_mean",      "eta_sigma",       "theta_min_deg",  "charge_mpv",
                                   "landau_width",  "diffusion_um",    "charge_noise",   "threshold",
                                   "time_resolution_ns", "noise_rate_khz", "dead_time_ns", "margin_ns",
                                   "truth",         NULL};

const char *const *sts_sim_keys(void)
{
    return keys;
}

void sts_sim_config_default(sts_sim_config_t *c)
{
    memset(c, 0, sizeof *c);
    c->seed = 1;
    c->timeslices = 1;
    c->collisions = 100;
    c->rate_mhz = 10.0;
    c->n_stations = 8;
    for (unsigned s = 0; s < 8; s++)
        c->station_z[s] = 300.0 + 100.0 * s;
    c->theta_max_deg = 25.0;
    c->strips = 1024;
    c->pitch_um = 58.0;
    c->stereo_deg = 7.5;
    c->n_lengths = 3;
    c->strip_length[0] = 20.0;
    c->strip_length[1] = 40.0;
    c->strip_length[2] = 60.0;
    c->length_theta[0] = 5.0;
    c->length_theta[1] = 10.0;
    c->thickness_um = 300.0;
    c->tracks = 600.0;
    c->eta_mean = 2.0;
    c->eta_sigma = 0.7;
    c->theta_min_deg = 2.5;
    c->charge_mpv = 224.0;
    c->landau_width = 0.08;
    c->diffusion_um = 8.0;
    c->charge_noise = 10.0;
    c->threshold = 40.0;
    c->time_resolution_ns = 5.0;
    c->noise_rate_khz = 1.0;
    c->dead_time_ns = 100.0;
    c->margin_ns = 100.0;
    c->truth = true;
}

static int bad(tusk_error_t *err, const char *key, const char *value, const char *want)
{
    return tusk_error_set(err, TUSK_EPARAM, "STS simulation setting '%s': '%s' is not %s", key, value, want);
}

/* A list of up to `max` numbers from lo to hi, separated by spaces or commas. */
static int parse_list(const char *key, const char *text, unsigned max, double lo, double hi, double *out, unsigned *n,
                      tusk_error_t *err)
{
    char buf[1024];
    if (strlen(text) >= sizeof buf)
        return bad(err, key, text, "a short list");
    strcpy(buf, text);
    unsigned k = 0;
    for (char *save = NULL, *tok = strtok_r(buf, " ,\t", &save); tok; tok = strtok_r(NULL, " ,\t", &save)) {
        if (k == max)
            return tusk_error_set(err, TUSK_EPARAM, "STS simulation setting '%s': more than %u numbers", key, max);
        if (tusk_parse_double(tok, lo, hi, &out[k]) != 0)
            return tusk_error_set(err, TUSK_EPARAM, "STS simulation setting '%s': '%s' is not a number from %g to %g",
                                  key, tok, lo, hi);
        k++;
    }
    *n = k;
    return TUSK_OK;
}

int sts_sim_config_read(sts_sim_config_t *c, const tusk_params_t *params, tusk_error_t *err)
{
    static const struct {
        const char *key;
        size_t off;
        double lo, hi;
    } num[] = {
        {"rate_mhz", offsetof(sts_sim_config_t, rate_mhz), 1e-6, 1e4},
        {"theta_max_deg", offsetof(sts_sim_config_t, theta_max_deg), 0.1, 80.0},
        {"pitch_um", offsetof(sts_sim_config_t, pitch_um), 1.0, 1e4},
        {"stereo_deg", offsetof(sts_sim_config_t, stereo_deg), 0.1, 89.0},
        {"thickness_um", offsetof(sts_sim_config_t, thickness_um), 0.0, 1e4},
        {"tracks", offsetof(sts_sim_config_t, tracks), 0.0, 1e5},
        {"eta_mean", offsetof(sts_sim_config_t, eta_mean), -10.0, 10.0},
        {"eta_sigma", offsetof(sts_sim_config_t, eta_sigma), 0.0, 100.0},
        {"theta_min_deg", offsetof(sts_sim_config_t, theta_min_deg), 0.0, 80.0},
        {"charge_mpv", offsetof(sts_sim_config_t, charge_mpv), 0.0, 1e5},
        {"landau_width", offsetof(sts_sim_config_t, landau_width), 0.0, 10.0},
        {"diffusion_um", offsetof(sts_sim_config_t, diffusion_um), 0.0, 1e4},
        {"charge_noise", offsetof(sts_sim_config_t, charge_noise), 0.0, 1e4},
        {"threshold", offsetof(sts_sim_config_t, threshold), 0.5, 65535.0},
        {"time_resolution_ns", offsetof(sts_sim_config_t, time_resolution_ns), 0.0, 1e4},
        {"noise_rate_khz", offsetof(sts_sim_config_t, noise_rate_khz), 0.0, 1e5},
        {"dead_time_ns", offsetof(sts_sim_config_t, dead_time_ns), 0.0, 1e6},
        {"margin_ns", offsetof(sts_sim_config_t, margin_ns), 0.0, 1e7},
    };
    const char *v;
    for (size_t i = 0; i < sizeof num / sizeof num[0]; i++)
        if ((v = tusk_params_get(params, num[i].key)) &&
            tusk_parse_double(v, num[i].lo, num[i].hi, (double *)((char *)c + num[i].off)) != 0) {
            char want[96];
            snprintf(want, sizeof want, "a number from %g to %g", num[i].lo, num[i].hi);
            return bad(err, num[i].key, v, want);
        }
    if ((v = tusk_params_get(params, "seed")) && tusk_parse_u64(v, 0, UINT64_MAX, &c->seed) != 0)
        return bad(err, "seed", v, "a whole number");
    if ((v = tusk_params_get(params, "timeslices")) && tusk_parse_u64(v, 0, UINT32_MAX, &c->timeslices) != 0)
        return bad(err, "timeslices", v, "a whole number up to 4294967295");
    unsigned u;
    if ((v = tusk_params_get(params, "collisions"))) {
        if (tusk_parse_unsigned(v, 1, 1000000, &u) != 0)
            return bad(err, "collisions", v, "a whole number from 1 to 1000000");
        c->collisions = u;
    }
    if ((v = tusk_params_get(params, "strips"))) {
        if (tusk_parse_unsigned(v, 2, STS_MAX_STRIPS, &u) != 0)
            return bad(err, "strips", v, "a whole number from 2 to 4096");
        c->strips = u;
    }
    if ((v = tusk_params_get(params, "truth"))) {
        if (!strcmp(v, "yes") || !strcmp(v, "true") || !strcmp(v, "on") || !strcmp(v, "1"))
            c->truth = true;
        else if (!strcmp(v, "no") || !strcmp(v, "false") || !strcmp(v, "off") || !strcmp(v, "0"))
            c->truth = false;
        else
            return bad(err, "truth", v, "yes or no");
    }
    unsigned nl = c->n_lengths, nt = c->n_lengths - 1;
    int st;
    if ((v = tusk_params_get(params, "strip_lengths_mm")) &&
        (st = parse_list("strip_lengths_mm", v, STS_SIM_MAX_LENGTHS, 0.1, 1e4, c->strip_length, &nl, err)))
        return st;
    if ((v = tusk_params_get(params, "length_theta_deg")) &&
        (st = parse_list("length_theta_deg", v, STS_SIM_MAX_LENGTHS - 1, 0.0, 90.0, c->length_theta, &nt, err)))
        return st;
    if (nt + 1 != nl)
        return tusk_error_set(err, TUSK_EPARAM,
                              "STS simulation: %u strip lengths want %u polar-angle limits (length_theta_deg), not %u",
                              nl, nl - 1, nt);
    c->n_lengths = nl;
    if ((v = tusk_params_get(params, "stations_mm")) &&
        (st = parse_list("stations_mm", v, STS_SIM_MAX_STATIONS, 1.0, 1e5, c->station_z, &c->n_stations, err)))
        return st;
    return sts_sim_config_check(c, err);
}

int sts_sim_config_check(const sts_sim_config_t *c, tusk_error_t *err)
{
    if (c->n_stations < 1 || c->n_stations > STS_SIM_MAX_STATIONS)
        return tusk_error_set(err, TUSK_EPARAM, "STS simulation: %u stations, expected 1 to %d", c->n_stations,
                              STS_SIM_MAX_STATIONS);
    for (unsigned k = 1; k < c->n_stations; k++)
        if (!(c->station_z[k] > c->station_z[k - 1]))
            return tusk_error_set(err, TUSK_EPARAM,
                                  "STS simulation: stations must follow each other downstream (%g mm after %g mm)",
                                  c->station_z[k], c->station_z[k - 1]);
    if (c->n_lengths < 1 || c->n_lengths > STS_SIM_MAX_LENGTHS)
        return tusk_error_set(err, TUSK_EPARAM, "STS simulation: %u strip lengths, expected 1 to %d", c->n_lengths,
                              STS_SIM_MAX_LENGTHS);
    for (unsigned k = 0; k < c->n_lengths; k++)
        if (!(c->strip_length[k] >= 0.1))
            return tusk_error_set(err, TUSK_EPARAM, "STS simulation: a strip length of %g mm", c->strip_length[k]);
    for (unsigned k = 1; k + 1 < c->n_lengths; k++)
        if (!(c->length_theta[k] > c->length_theta[k - 1]))
            return tusk_error_set(err, TUSK_EPARAM, "STS simulation: length_theta_deg must grow (%g after %g)",
                                  c->length_theta[k], c->length_theta[k - 1]);
    if (!(c->theta_min_deg < c->theta_max_deg))
        return tusk_error_set(err, TUSK_EPARAM, "STS simulation: theta_min_deg %g is not below theta_max_deg %g",
                              c->theta_min_deg, c->theta_max_deg);
    if (c->strips < 2 || c->strips > STS_MAX_STRIPS)
        return tusk_error_set(err, TUSK_EPARAM, "STS simulation: %u strips, expected 2 to %u", (unsigned)c->strips,
                              STS_MAX_STRIPS);
    double length = c->collisions / (c->rate_mhz * 1e-3) * 3.0 + 2.0 * c->margin_ns;
    if (length > 4.0e9)
        return tusk_error_set(err, TUSK_EPARAM,
                              "STS simulation: %u collisions at %g MHz make a timeslice too long for 32-bit ns times",
                              (unsigned)c->collisions, c->rate_mhz);
    return TUSK_OK;
}

/* ---- the detector ------------------------------------------------------------------ */

typedef struct module {
    adf_sts_digis_t hdr;      /* geometry; n_digis set per timeslice */
    uint64_t *keys;
    uint32_t *digi_point;
    size_t n, cap;
    adf_sts_point_t *pt;
    size_t np, cap_p;
    uint32_t *last;           /* per channel: its last digi (index), STS_NONE when none */
    uint64_t rng;             /* the noise's stream */
    double next_noise;        /* ns: the next noise hit */
} module_t;

typedef struct station {
    double z, x_lo;           /* the first column's left edge */
    int nx;                   /* columns */
    uint32_t *col_first;      /* nx + 1: column c's modules are col_first[c] .. col_first[c + 1] - 1, by y */
} station_t;

struct sts_sim {
    sts_sim_config_t cfg;
    station_t st[STS_SIM_MAX_STATIONS];
    module_t *mod;
    size_t n_mod;
    double width, pitch, tan_stereo;
    sts_sim_ts_t ts;
    uint64_t lost;            /* hits lost in a channel's dead time */
    bool oom;
    /* a strip's charges while one point is shared out */
    uint32_t touched[4 * PARTS];
    double qstrip[4 * PARTS];
};

const sts_sim_config_t *sts_sim_config(const sts_sim_t *s)
{
    return &s->cfg;
}

size_t sts_sim_modules(const sts_sim_t *s)
{
    return s->n_mod;
}

void sts_sim_destroy(sts_sim_t **sim)
{
    if (!sim || !*sim)
        return;
    sts_sim_t *s = *sim;
    for (size_t m = 0; m < s->n_mod; m++) {
        free(s->mod[m].keys);
        free(s->mod[m].digi_point);
        free(s->mod[m].pt);
        free(s->mod[m].last);
    }
    free(s->mod);
    for (unsigned k = 0; k < STS_SIM_MAX_STATIONS; k++)
        free(s->st[k].col_first);
    free(s);
    *sim = NULL;
}

int sts_sim_new(sts_sim_t **out, const sts_sim_config_t *cfg, tusk_error_t *err)
{
    *out = NULL;
    int rc = sts_sim_config_check(cfg, err);
    if (rc != TUSK_OK)
        return rc;
    sts_sim_t *s = calloc(1, sizeof *s);
    if (!s)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    s->cfg = *cfg;
    s->pitch = cfg->pitch_um * 1e-3;
    s->width = cfg->strips * s->pitch;
    s->tan_stereo = tan(cfg->stereo_deg * PI / 180.0);
    double tmax = tan(cfg->theta_max_deg * PI / 180.0);
    size_t cap = 0;
    for (unsigned k = 0; k < cfg->n_stations; k++) {
        station_t *st = &s->st[k];
        double half = cfg->station_z[k] * tmax;
        st->z = cfg->station_z[k];
        st->nx = 2 * (int)ceil(half / s->width);
        st->x_lo = -0.5 * st->nx * s->width;
        if (!(st->col_first = malloc(((size_t)st->nx + 1) * sizeof *st->col_first))) {
            sts_sim_destroy(&s);
            return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
        }
        for (int col = 0; col < st->nx; col++) {
            st->col_first[col] = (uint32_t)s->n_mod;
            double x0 = st->x_lo + col * s->width;
            double nx = x0 > 0 ? x0 : x0 + s->width < 0 ? x0 + s->width : 0; /* nearest the beam */
            /* the column from y = -half up: modules placed outwards from y = 0 both ways */
            double ys[2 * 4096];
            double ls[2 * 4096];
            unsigned n = 0;
            for (int dir = -1; dir <= 1; dir += 2) {
                double y = 0;
                while (y < half && n < 2 * 4096) {
                    double r = sqrt(nx * nx + y * y), theta = atan2(r, st->z) * 180.0 / PI;
                    unsigned li = 0;
                    while (li + 1 < cfg->n_lengths && theta >= cfg->length_theta[li])
                        li++;
                    double L = cfg->strip_length[li];
                    if (r < half) {
                        ys[n] = dir > 0 ? y : -y - L;
                        ls[n] = L;
                        n++;
                    }
                    y += L;
                }
            }
            /* by y: the lower half was made from the middle down */
            unsigned lower = 0;
            while (lower < n && ys[lower] < 0)
                lower++;
            for (unsigned i = 0; i < n; i++) {
                unsigned j = i < lower ? lower - 1 - i : i;
                if (s->n_mod > ADF_STS_MAX_MODULE || tusk_grow(&s->mod, &cap, s->n_mod + 1, sizeof *s->mod) != 0) {
                    sts_sim_destroy(&s);
                    return tusk_error_set(err, TUSK_EPARAM, "STS simulation: more than %u modules",
                                          ADF_STS_MAX_MODULE + 1);
                }
                module_t *m = &s->mod[s->n_mod];
                memset(m, 0, sizeof *m);
                s->n_mod++;
                if (!(m->last = malloc(2 * cfg->strips * sizeof *m->last))) {
                    sts_sim_destroy(&s);
                    return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
                }
                m->hdr.module = (uint16_t)(s->n_mod - 1);
                m->hdr.station = (uint8_t)k;
                m->hdr.strips = (uint16_t)cfg->strips;
                m->hdr.pitch_mm = (float)s->pitch;
                m->hdr.stereo_deg = (float)cfg->stereo_deg;
                m->hdr.length_mm = (float)ls[j];
                m->hdr.origin[0] = (float)x0;
                m->hdr.origin[1] = (float)ys[j];
                m->hdr.origin[2] = (float)st->z;
            }
        }
        st->col_first[st->nx] = (uint32_t)s->n_mod;
    }
    for (size_t m = 0; m < s->n_mod; m++)
        s->mod[m].hdr.modules = (uint16_t)s->n_mod;
    *out = s;
    return TUSK_OK;
}

/* ---- one timeslice -------------------------------------------------------------------- */

/* An independent stream for (seed, timeslice, part). */
static uint64_t stream(uint64_t seed, uint64_t ts, uint64_t part)
{
    uint64_t s = seed ^ UINT64_C(0x5354535349444953); /* "STSSIDIS" */
    tusk_rng_next(&s);
    s ^= ts * UINT64_C(0x9E3779B97F4A7C15);
    tusk_rng_next(&s);
    s ^= part * UINT64_C(0xC2B2AE3D27D4EB4F);
    return tusk_rng_next(&s);
}

static uint32_t clamp_time(double t, uint32_t length)
{
    double r = floor(t + 0.5);
    return r < 0 ? 0u : r >= length ? length - 1 : (uint32_t)r;
}

static uint32_t clamp_charge(double q)
{
    double r = floor(q + 0.5);
    return r < 1 ? 1u : r > 65535 ? 65535u : (uint32_t)r;
}

/* A hit in a channel: a digi, unless it falls within dead_time_ns of the
 * channel's last digi. Hits come nearly in time order (collision by
 * collision); of two hits of one collision in one strip the one made
 * first is kept, so every channel's digis are at least the dead time
 * apart. */
static void add_digi(sts_sim_t *s, module_t *m, uint32_t channel, uint32_t time, uint32_t charge, uint32_t point)
{
    uint32_t last = m->last[channel];
    if (last != STS_NONE && s->cfg.dead_time_ns > 0 &&
        !((double)time >= (double)adf_sts_key_time(m->keys[last]) + s->cfg.dead_time_ns)) {
        s->lost++;
        return;
    }
    if (m->n == m->cap) {
        size_t cap = m->cap;
        if (tusk_grow(&m->keys, &cap, m->n + 1, sizeof *m->keys) != 0) {
            s->oom = true;
            return;
        }
        uint32_t *dp = realloc(m->digi_point, cap * sizeof *dp);
        if (!dp) {
            s->oom = true;
            return;
        }
        m->digi_point = dp;
        m->cap = cap;
    }
    m->last[channel] = (uint32_t)m->n;
    m->keys[m->n] = adf_sts_key(channel, time, charge);
    m->digi_point[m->n] = point;
    m->n++;
}

/* Noise of module m up to time `until` (ns). */
static void noise_until(sts_sim_t *s, module_t *m, double until, uint32_t length, uint64_t *count)
{
    const sts_sim_config_t *c = &s->cfg;
    double per_ns = c->noise_rate_khz * 1e-6 * 2.0 * c->strips;
    if (!(per_ns > 0))
        return;
    double tail = c->charge_noise * c->charge_noise / c->threshold;
    while (m->next_noise < until && m->next_noise < length) {
        uint32_t ch = (uint32_t)(tusk_rng_uniform(&m->rng) * 2.0 * c->strips);
        double q = c->threshold + (tail > 0 ? tusk_rng_exponential(&m->rng, tail) : 0.0);
        add_digi(s, m, ch, (uint32_t)m->next_noise, clamp_charge(q), ADF_STS_NOISE);
        (*count)++;
        m->next_noise += tusk_rng_exponential(&m->rng, 1.0 / per_ns);
    }
}

/* Share a point's charge q over one side's strips: PARTS parts from u0 to
 * u1 (strips), each smeared by the diffusion; wrap: the back side (strips
 * continue across the edges); then noise, threshold, digis. */
static void share(sts_sim_t *s, uint64_t *rng, module_t *m, uint32_t point, double u0, double u1, bool back, double q,
                  double t, uint32_t length)
{
    const sts_sim_config_t *c = &s->cfg;
    double sd = c->diffusion_um * 1e-3 / s->pitch;
    unsigned nt = 0;
    int S = (int)c->strips;
    for (int k = 0; k < PARTS; k++) {
        double u = u0 + (u1 - u0) * (k + 0.5) / PARTS;
        if (sd > 0)
            u += sd * tusk_rng_gauss(rng);
        int strip = (int)floor(u);
        if (back)
            strip = ((strip % S) + S) % S;
        else if (strip < 0 || strip >= S)
            continue; /* off the sensor's edge */
        unsigned j = 0;
        while (j < nt && s->touched[j] != (uint32_t)strip)
            j++;
        if (j == nt) {
            s->touched[nt] = (uint32_t)strip;
            s->qstrip[nt++] = 0;
        }
        s->qstrip[j] += q / PARTS;
    }
    for (unsigned j = 0; j < nt; j++) {
        double qs = s->qstrip[j] + c->charge_noise * tusk_rng_gauss(rng);
        if (qs < c->threshold)
            continue;
        double tt = t + c->time_resolution_ns * tusk_rng_gauss(rng);
        add_digi(s, m, (back ? c->strips : 0) + s->touched[j], clamp_time(tt, length), clamp_charge(qs), point);
    }
}

/* One collision at time t0. */
static void collision(sts_sim_t *s, uint64_t *rng, uint32_t index, double t0, uint32_t length, uint64_t *track_no)
{
    const sts_sim_config_t *c = &s->cfg;
    double tmin = c->theta_min_deg * PI / 180.0, tmax = c->theta_max_deg * PI / 180.0;
    unsigned n = tusk_rng_poisson(rng, c->tracks);
    for (unsigned k = 0; k < n; k++) {
        double theta;
        do {
            double eta = c->eta_mean + c->eta_sigma * tusk_rng_gauss(rng);
            theta = 2.0 * atan(exp(-eta));
        } while (!(theta >= tmin && theta <= tmax));
        double phi = 2.0 * PI * tusk_rng_uniform(rng);
        double tx = tan(theta) * cos(phi), ty = tan(theta) * sin(phi);
        double path = sqrt(1.0 + tx * tx + ty * ty); /* per unit z */
        uint32_t track = (uint32_t)(*track_no)++;
        for (unsigned st = 0; st < c->n_stations; st++) {
            const station_t *S = &s->st[st];
            double x = tx * S->z, y = ty * S->z;
            int col = (int)floor((x - S->x_lo) / s->width);
            if (col < 0 || col >= S->nx)
                continue;
            /* the column's modules by y: the last whose lower edge is at or below y */
            uint32_t lo = S->col_first[col], hi = S->col_first[col + 1];
            while (hi - lo > 1) {
                uint32_t mid = lo + (hi - lo) / 2;
                if (s->mod[mid].hdr.origin[1] <= y)
                    lo = mid;
                else
                    hi = mid;
            }
            if (lo == S->col_first[col + 1] || y < s->mod[lo].hdr.origin[1] ||
                y >= s->mod[lo].hdr.origin[1] + s->mod[lo].hdr.length_mm)
                continue;
            module_t *m = &s->mod[lo];
            double xl = x - m->hdr.origin[0], yl = y - m->hdr.origin[1];
            double t = t0 + S->z * path / C_MM_NS;
            /* the charge: Moyal(-ln Z^2) about the most probable value, times the path */
            double z = tusk_rng_gauss(rng);
            double moyal = z != 0.0 ? -log(z * z) : 0.0;
            double q = c->charge_mpv * path * (1.0 + c->landau_width * moyal);
            if (q < 0)
                q = 0;
            double d = c->thickness_um * 1e-3, ub = (xl - yl * s->tan_stereo) / s->pitch;
            double uw = fmod(ub, (double)c->strips);
            if (uw < 0)
                uw += c->strips;
            if (tusk_grow(&m->pt, &m->cap_p, m->np + 1, sizeof *m->pt) != 0) {
                s->oom = true;
                return;
            }
            uint32_t point = (uint32_t)m->np;
            adf_sts_point_t *p = &m->pt[m->np++];
            p->track = track;
            p->collision = index;
            p->x = (float)x;
            p->y = (float)y;
            p->z = (float)S->z;
            p->time = (float)t;
            p->u_front = (float)(xl / s->pitch);
            p->u_back = (float)uw;
            p->charge = (float)q;
            /* the path through the sensor, from its entry to its exit */
            double dxf = tx * d / s->pitch, dxb = (tx - ty * s->tan_stereo) * d / s->pitch;
            double uf = xl / s->pitch;
            share(s, rng, m, point, uf - 0.5 * dxf, uf + 0.5 * dxf, false, q, t, length);
            share(s, rng, m, point, uw - 0.5 * dxb, uw + 0.5 * dxb, true, q, t, length);
        }
    }
}

int sts_sim_make(sts_sim_t *s, uint64_t index, const sts_sim_ts_t **out, tusk_error_t *err)
{
    const sts_sim_config_t *c = &s->cfg;
    if (index > UINT32_MAX)
        return tusk_error_set(err, TUSK_EINVAL, "STS simulation: timeslice %llu: numbers end at 2^32",
                              (unsigned long long)index);
    for (size_t m = 0; m < s->n_mod; m++)
        s->mod[m].n = s->mod[m].np = 0;
    s->oom = false;
    /* the collision times first: they fix the timeslice's length */
    uint64_t rng = stream(c->seed, index, UINT64_MAX);
    double *t0 = malloc((c->collisions ? c->collisions : 1) * sizeof *t0);
    if (!t0)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    double t = c->margin_ns, per_ns = c->rate_mhz * 1e-3;
    for (uint32_t k = 0; k < c->collisions; k++) {
        if (k)
            t += tusk_rng_exponential(&rng, 1.0 / per_ns);
        t0[k] = t;
    }
    double len = ceil(t + c->margin_ns);
    if (len > 4.0e9) {
        free(t0);
        return tusk_error_set(err, TUSK_EINVAL, "STS simulation: timeslice %llu is %.0f ns long, beyond 32-bit times",
                              (unsigned long long)index, len);
    }
    uint32_t length = (uint32_t)len;
    uint64_t tracks = 0, noise = 0;
    double noise_per_ns = c->noise_rate_khz * 1e-6 * 2.0 * c->strips;
    s->lost = 0;
    for (size_t m = 0; m < s->n_mod; m++) {
        module_t *md = &s->mod[m];
        for (uint32_t ch = 0; ch < 2 * c->strips; ch++)
            md->last[ch] = STS_NONE;
        md->rng = stream(c->seed, index, (uint64_t)1 << 40 | m);
        md->next_noise = noise_per_ns > 0 ? tusk_rng_exponential(&md->rng, 1.0 / noise_per_ns) : 1e300;
    }
    for (uint32_t k = 0; k < c->collisions && !s->oom; k++) {
        for (size_t m = 0; m < s->n_mod; m++)
            noise_until(s, &s->mod[m], t0[k], length, &noise);
        uint64_t r = stream(c->seed, index, k);
        collision(s, &r, k, t0[k], length, &tracks);
    }
    free(t0);
    for (size_t m = 0; m < s->n_mod; m++)
        noise_until(s, &s->mod[m], (double)length, length, &noise);
    if (s->oom)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory (STS timeslice %llu)", (unsigned long long)index);
    s->ts.timeslice = (uint32_t)index;
    s->ts.length_ns = length;
    /* timeslices follow each other, one nominal length (collisions / rate + margins) apart */
    double slot = ceil((c->collisions / per_ns + 2.0 * c->margin_ns) / 10.0);
    s->ts.timestamp = (uint64_t)index * (uint64_t)slot;
    s->ts.collisions = c->collisions;
    s->ts.tracks = tracks;
    s->ts.noise_digis = noise;
    s->ts.lost = s->lost;
    s->ts.digis = s->ts.points = 0;
    for (size_t m = 0; m < s->n_mod; m++) {
        s->mod[m].hdr.n_digis = (uint32_t)s->mod[m].n;
        s->mod[m].hdr.length_ns = length;
        s->ts.digis += s->mod[m].n;
        s->ts.points += s->mod[m].np;
        if (s->mod[m].n > ADF_STS_MAX_DIGIS)
            return tusk_error_set(err, TUSK_EINVAL, "STS simulation: module %zu has %zu digis, a frame holds %u", m,
                                  s->mod[m].n, ADF_STS_MAX_DIGIS);
    }
    *out = &s->ts;
    return TUSK_OK;
}

void sts_sim_module(const sts_sim_t *s, size_t m, sts_module_t *out)
{
    out->timeslice = s->ts.timeslice;
    out->timestamp = s->ts.timestamp;
    out->hdr = s->mod[m].hdr;
    out->hdr.raw = NULL;
    out->digi = s->mod[m].keys;
}

size_t sts_sim_module_bytes(const sts_sim_t *s, size_t m)
{
    const module_t *md = &s->mod[m];
    size_t b = ADF_KEY_SIZE + adf_sts_digis_payload_size((uint32_t)md->n);
    if (s->cfg.truth)
        b += ADF_KEY_SIZE + adf_sts_truth_payload_size((uint32_t)md->np, (uint32_t)md->n);
    return b;
}

int sts_sim_encode_module(const sts_sim_t *s, size_t m, adf_writer_t *w, tusk_error_t *err)
{
    const module_t *md = &s->mod[m];
    adf_error_t e;
    if (adf_sts_digis_encode(w, s->ts.timeslice, s->ts.timestamp, &md->hdr, md->keys, &e) != ADF_OK)
        return tusk_error_set(err, e.code == ADF_ETOOBIG ? TUSK_ELIMIT : TUSK_EINVAL, "%s", e.message);
    if (s->cfg.truth) {
        adf_sts_truth_t h = {(uint32_t)md->np, (uint32_t)md->n, md->hdr.module, 0, NULL, NULL};
        if (adf_sts_truth_encode(w, s->ts.timeslice, s->ts.timestamp, &h, md->pt, md->digi_point, &e) != ADF_OK)
            return tusk_error_set(err, e.code == ADF_ETOOBIG ? TUSK_ELIMIT : TUSK_EINVAL, "%s", e.message);
    }
    return TUSK_OK;
}

void sts_sim_truth(const sts_sim_t *s, size_t m, const adf_sts_point_t **points, uint32_t *n_points,
                   const uint32_t **digi_point)
{
    *points = s->mod[m].pt;
    *n_points = (uint32_t)s->mod[m].np;
    *digi_point = s->mod[m].digi_point;
}
