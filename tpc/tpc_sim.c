/* tpc_sim.c - the event simulation of the TPC slice tracker's producer
 * (spec §1.2; tpc/README.md "The simulation"): primary charged particles
 * from a vertex near the origin, helices in a uniform solenoid field,
 * their crossings with the 159 pad rows of the 36 slices, Gaussian
 * smearing, noise clusters, truth.
 *
 * Event k is the same for the same seed whoever makes it and however many
 * threads help: particle j draws from its own random stream (seed, k, j),
 * the threads take blocks of particles and the blocks are joined in
 * order; the noise comes from the event's own stream. Each slice's
 * clusters are ordered by row, then y (a cluster finder's pad order). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/parse.h"
#include "base/radix.h"
#include "tpc_private.h"

#define PI 3.14159265358979323846
#define TWO_PI (2.0 * PI)
#define BLOCK 64                   /* particles a pool item */
#define INNER_MM 800.0             /* the sampling's radial window around the rows */
#define OUTER_MM 2520.0
#define TIMESTAMP_STEP 100000u     /* 1 ms between events, in 10 ns ticks */

/* ---- settings ---------------------------------------------------------------------------------- */

static const char *const preset_names[] = {"pp", "noncentral", "central", NULL};
/* The particles of each preset: tuned so that the tracker finds about as
 * many slice tracks as the thesis's events had (tpc/README.md). */
static const uint32_t preset_tracks[] = {160, 2500, 15000};

uint32_t tpc_preset_tracks(int preset)
{
    return preset >= 0 && preset <= TPC_PRESET_CENTRAL ? preset_tracks[preset] : 0;
}

const char *tpc_preset_name(int preset)
{
    return preset >= 0 && preset <= TPC_PRESET_CENTRAL ? preset_names[preset] : "?";
}

typedef struct key_spec {
    const char *key;
    size_t offset;
    double lo, hi;
} key_spec_t;

static const key_spec_t dspecs[] = {
    {"bz_tesla", offsetof(tpc_sim_config_t, bz_tesla), -20.0, 20.0},
    {"eta_max", offsetof(tpc_sim_config_t, eta_max), 0.0, 5.0},
    {"pt_slope_gev", offsetof(tpc_sim_config_t, pt_slope_gev), 0.01, 100.0},
    {"pt_min_gev", offsetof(tpc_sim_config_t, pt_min_gev), 0.01, 1000.0},
    {"pt_max_gev", offsetof(tpc_sim_config_t, pt_max_gev), 0.01, 1000.0},
    {"vertex_sigma_z_mm", offsetof(tpc_sim_config_t, vertex_sigma_z_mm), 0.0, 1000.0},
    {"vertex_sigma_xy_mm", offsetof(tpc_sim_config_t, vertex_sigma_xy_mm), 0.0, 100.0},
    {"sigma_y_mm", offsetof(tpc_sim_config_t, sigma_y_mm), 0.0, 100.0},
    {"sigma_z_mm", offsetof(tpc_sim_config_t, sigma_z_mm), 0.0, 100.0},
    {"noise_per_row", offsetof(tpc_sim_config_t, noise_per_row), 0.0, 10000.0},
    {"efficiency", offsetof(tpc_sim_config_t, efficiency), 0.0, 1.0},
    {"max_turns", offsetof(tpc_sim_config_t, max_turns), 0.0, 20.0},
    {"drift_mm", offsetof(tpc_sim_config_t, drift_mm), 100.0, 10000.0},
};
#define N_DSPECS (sizeof dspecs / sizeof dspecs[0])

static const char *const keys[] = {"seed",       "events",       "preset",         "tracks",
                                   "bz_tesla",   "eta_max",      "pt_slope_gev",   "pt_min_gev",
                                   "pt_max_gev", "vertex_sigma_z_mm", "vertex_sigma_xy_mm", "sigma_y_mm",
                                   "sigma_z_mm", "noise_per_row", "efficiency",    "max_turns",
                                   "drift_mm",   "truth",        NULL};

void tpc_sim_config_default(tpc_sim_config_t *c)
{
    memset(c, 0, sizeof *c);
    c->seed = 1;
    c->events = 1;
    c->preset = TPC_PRESET_CENTRAL;
    c->tracks = 0;
    c->bz_tesla = 0.5;
    c->eta_max = 0.9;
    c->pt_slope_gev = 0.3;
    c->pt_min_gev = 0.05;
    c->pt_max_gev = 20.0;
    c->vertex_sigma_z_mm = 50.0;
    c->vertex_sigma_xy_mm = 0.1;
    c->sigma_y_mm = 0.8;
    c->sigma_z_mm = 1.0;
    c->noise_per_row = 1.0;
    c->efficiency = 1.0;
    c->max_turns = 1.0;
    c->drift_mm = 2500.0;
    c->truth = true;
}

const char *const *tpc_sim_keys(void)
{
    return keys;
}

static bool parse_bool(const char *v, bool *out)
{
    if (!strcmp(v, "yes") || !strcmp(v, "true") || !strcmp(v, "on") || !strcmp(v, "1"))
        *out = true;
    else if (!strcmp(v, "no") || !strcmp(v, "false") || !strcmp(v, "off") || !strcmp(v, "0"))
        *out = false;
    else
        return false;
    return true;
}

int tpc_sim_config_read(tpc_sim_config_t *c, const tusk_params_t *params, tusk_error_t *err)
{
    const char *v;
    uint64_t u;
    if ((v = tusk_params_get(params, "seed")) && tusk_parse_u64x(v, 0, UINT64_MAX, &c->seed) != 0)
        return tusk_error_set(err, TUSK_EPARAM, "TPC simulation 'seed': '%s' is not a whole number", v);
    if ((v = tusk_params_get(params, "events")) && tusk_parse_u64(v, 0, UINT32_MAX, &c->events) != 0)
        return tusk_error_set(err, TUSK_EPARAM, "TPC simulation 'events': '%s' is not a whole number from 0 to %u", v,
                              UINT32_MAX);
    if ((v = tusk_params_get(params, "preset"))) {
        int k = -1;
        for (int i = 0; preset_names[i]; i++)
            if (!strcmp(v, preset_names[i]))
                k = i;
        if (k < 0)
            return tusk_error_set(err, TUSK_EPARAM, "TPC simulation 'preset': '%s', expected pp, noncentral or central",
                                  v);
        c->preset = k;
    }
    if ((v = tusk_params_get(params, "tracks"))) {
        if (tusk_parse_u64(v, 0, 1000000, &u) != 0)
            return tusk_error_set(err, TUSK_EPARAM,
                                  "TPC simulation 'tracks': '%s' is not a whole number from 0 to 1000000", v);
        c->tracks = (uint32_t)u;
    }
    if ((v = tusk_params_get(params, "truth")) && !parse_bool(v, &c->truth))
        return tusk_error_set(err, TUSK_EPARAM, "TPC simulation 'truth': '%s', expected yes or no", v);
    for (size_t i = 0; i < N_DSPECS; i++)
        if ((v = tusk_params_get(params, dspecs[i].key)) &&
            tusk_parse_double(v, dspecs[i].lo, dspecs[i].hi, (double *)((char *)c + dspecs[i].offset)) != 0)
            return tusk_error_set(err, TUSK_EPARAM, "TPC simulation '%s': '%s' is not a number from %g to %g",
                                  dspecs[i].key, v, dspecs[i].lo, dspecs[i].hi);
    return tpc_sim_config_check(c, err);
}

int tpc_sim_config_check(const tpc_sim_config_t *c, tusk_error_t *err)
{
    for (size_t i = 0; i < N_DSPECS; i++) {
        double v = *(const double *)((const char *)c + dspecs[i].offset);
        if (!(v >= dspecs[i].lo && v <= dspecs[i].hi))
            return tusk_error_set(err, TUSK_EPARAM, "TPC simulation '%s' is %g, outside %g to %g", dspecs[i].key, v,
                                  dspecs[i].lo, dspecs[i].hi);
    }
    if (c->preset < 0 || c->preset > TPC_PRESET_CENTRAL)
        return tusk_error_set(err, TUSK_EPARAM, "TPC simulation: preset %d is none of pp, noncentral, central",
                              c->preset);
    if (fabs(c->bz_tesla) < 0.01)
        return tusk_error_set(err, TUSK_EPARAM, "TPC simulation 'bz_tesla' is %g; the tracker needs a field of at "
                              "least 0.01 T", c->bz_tesla);
    if (!(c->pt_max_gev > c->pt_min_gev))
        return tusk_error_set(err, TUSK_EPARAM, "TPC simulation: pt_max_gev %g is not above pt_min_gev %g",
                              c->pt_max_gev, c->pt_min_gev);
    if (c->events > UINT32_MAX)
        return tusk_error_set(err, TUSK_EPARAM, "TPC simulation: %llu events, at most %u",
                              (unsigned long long)c->events, UINT32_MAX);
    return TUSK_OK;
}

/* ---- the simulation ------------------------------------------------------------------------------ */

/* A crossing that made a cluster. */
typedef struct simcl {
    float y, z;
    uint32_t particle;        /* its number in the event, ADF_TPC_NOISE */
    uint16_t srow;            /* slice x 159 + row */
} simcl_t;

typedef struct block {
    simcl_t *c;
    size_t n, cap;
    uint64_t crossings;
    int failed;
} block_t;

typedef struct slice_out {
    size_t first, n;          /* in the sorted clusters */
    adf_tpc_particle_t *pt;   /* the particles with clusters here */
    uint32_t n_pt, cap_pt;
    uint32_t *cp;             /* cluster -> index into pt */
    size_t cap_cp;
} slice_out_t;

struct tpc_sim {
    tpc_sim_config_t cfg;
    tusk_pool_t *pool;
    uint32_t n_particles;     /* this event's */
    adf_tpc_particle_t *particle;
    size_t cap_particle;
    block_t *blk;
    size_t n_blk, cap_blk;
    simcl_t *all;             /* joined, then sorted */
    size_t n_all, cap_all;
    simcl_t *tmp;
    size_t cap_tmp;
    uint64_t *keys, *ktmp;
    size_t cap_keys;
    adf_tpc_cluster_t *cl;    /* the frames' clusters, slice after slice */
    size_t cap_cl;
    uint32_t *seen;           /* per particle: the slice it was last listed for + 1, and its index there */
    uint32_t *seen_at;
    size_t cap_seen, cap_ktmp;
    size_t start[TPC_SLICES * TPC_ROWS + 1], cur[TPC_SLICES * TPC_ROWS];
    slice_out_t sl[TPC_SLICES];
    double cos_a[18], sin_a[18];
    tpc_sim_event_t ev;
    uint64_t index;
};

static uint64_t stream(uint64_t seed, uint64_t a, uint64_t b)
{
    uint64_t s = seed ^ (a * UINT64_C(0x9E3779B97F4A7C15)) ^ (b * UINT64_C(0xC2B2AE3D27D4EB4F) + UINT64_C(0x165667B1));
    tusk_rng_next(&s);
    return s;
}

int tpc_sim_new(tpc_sim_t **out, const tpc_sim_config_t *cfg, unsigned threads, tusk_error_t *err)
{
    *out = NULL;
    int st = tpc_sim_config_check(cfg, err);
    if (st != TUSK_OK)
        return st;
    tpc_sim_t *s = calloc(1, sizeof *s);
    if (!s)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    s->cfg = *cfg;
    if (!s->cfg.tracks)
        s->cfg.tracks = tpc_preset_tracks(s->cfg.preset);
    if ((st = tusk_pool_new(&s->pool, threads, err)) != TUSK_OK) {
        free(s);
        return st;
    }
    for (int i = 0; i < 18; i++) {
        double a = (20.0 * i + 10.0) * PI / 180.0;
        s->cos_a[i] = cos(a);
        s->sin_a[i] = sin(a);
    }
    *out = s;
    return TUSK_OK;
}

void tpc_sim_destroy(tpc_sim_t **sim)
{
    if (!sim || !*sim)
        return;
    tpc_sim_t *s = *sim;
    tusk_pool_destroy(&s->pool);
    for (size_t i = 0; i < s->cap_blk; i++)
        free(s->blk[i].c);
    free(s->blk);
    free(s->particle);
    free(s->all);
    free(s->tmp);
    free(s->keys);
    free(s->ktmp);
    free(s->cl);
    free(s->seen);
    free(s->seen_at);
    for (unsigned i = 0; i < TPC_SLICES; i++) {
        free(s->sl[i].pt);
        free(s->sl[i].cp);
    }
    free(s);
    *sim = NULL;
}

const tpc_sim_config_t *tpc_sim_config(const tpc_sim_t *s)
{
    return &s->cfg;
}

/* A particle's kinematics from its stream. */
static void make_particle(const tpc_sim_config_t *c, uint64_t *rng, uint32_t id, adf_tpc_particle_t *p)
{
    double pt;
    do /* pT exp(-pT / T): a sum of two exponentials */
        pt = -c->pt_slope_gev * log(tusk_rng_uniform(rng) * tusk_rng_uniform(rng));
    while (pt < c->pt_min_gev || pt > c->pt_max_gev);
    double eta = (2.0 * tusk_rng_uniform(rng) - 1.0) * c->eta_max;
    double phi = TWO_PI * tusk_rng_uniform(rng);
    p->id = id;
    p->charge = tusk_rng_uniform(rng) < 0.5 ? -1 : 1;
    p->flags = 0;
    p->p[0] = (float)(pt * cos(phi));
    p->p[1] = (float)(pt * sin(phi));
    p->p[2] = (float)(pt * sinh(eta));
    p->vertex[0] = (float)(c->vertex_sigma_xy_mm * tusk_rng_gauss(rng));
    p->vertex[1] = (float)(c->vertex_sigma_xy_mm * tusk_rng_gauss(rng));
    p->vertex[2] = (float)(c->vertex_sigma_z_mm * tusk_rng_gauss(rng));
}

typedef struct helix {
    double vx, vy, vz, phi0, w, lam;  /* w: d phi / ds, 1/mm */
    double smax;
} helix_t;

static void helix_of(const adf_tpc_particle_t *p, double bz, double turns, double drift, helix_t *h)
{
    double px = p->p[0], py = p->p[1], pz = p->p[2];
    double pt = sqrt(px * px + py * py);
    h->vx = p->vertex[0];
    h->vy = p->vertex[1];
    h->vz = p->vertex[2];
    h->phi0 = atan2(py, px);
    h->w = -(double)TPC_CLIGHT * bz * (double)p->charge / pt;
    h->lam = pz / pt;
    h->smax = turns * TWO_PI / fabs(h->w);
    /* a particle whose circle leaves the TPC's outer radius ends there (it
     * does not come back round): 2R sin(w s / 2) = OUTER_MM */
    double two_r = 2.0 / fabs(h->w);
    if (two_r > OUTER_MM)
        h->smax = fmin(h->smax, 2.0 * asin(OUTER_MM / two_r) / fabs(h->w));
    if (h->lam > 0)
        h->smax = fmin(h->smax, (drift - h->vz) / h->lam);
    else if (h->lam < 0)
        h->smax = fmin(h->smax, (-drift - h->vz) / h->lam);
}

static void helix_at(const helix_t *h, double s, double *x, double *y, double *z)
{
    double a = h->phi0 + h->w * s;
    *x = h->vx + (sin(a) - sin(h->phi0)) / h->w;
    *y = h->vy - (cos(a) - cos(h->phi0)) / h->w;
    *z = h->vz + h->lam * s;
}

static int block_push(block_t *b, float y, float z, uint32_t particle, unsigned srow)
{
    if (tusk_grow(&b->c, &b->cap, b->n + 1, sizeof *b->c) != 0)
        return -1;
    simcl_t *c = &b->c[b->n++];
    c->y = y;
    c->z = z;
    c->particle = particle;
    c->srow = (uint16_t)srow;
    return 0;
}

/* Every row crossing of particle p inside a slice, smeared, into b. */
static int trace(const tpc_sim_t *s, const adf_tpc_particle_t *p, uint64_t *rng, block_t *b)
{
    const tpc_sim_config_t *c = &s->cfg;
    helix_t h;
    helix_of(p, c->bz_tesla, c->max_turns, c->drift_mm, &h);
    if (!(h.smax > 0))
        return 0;
    /* which sectors the helix visits inside the rows' radii: sampled every
     * 20 mm of arc, each with its neighbours */
    bool sector[18] = {false};
    double step = 20.0;
    for (double t = 0; t <= h.smax + step; t += step) {
        double x, y, z;
        helix_at(&h, t < h.smax ? t : h.smax, &x, &y, &z);
        double rho = sqrt(x * x + y * y);
        if (rho < INNER_MM || rho > OUTER_MM)
            continue;
        double az = atan2(y, x);
        if (az < 0)
            az += TWO_PI;
        int k = (int)(az / (TWO_PI / 18.0)) % 18;
        sector[k] = sector[(k + 1) % 18] = sector[(k + 17) % 18] = true;
    }
    double period = TWO_PI / fabs(h.w);
    for (int i = 0; i < 18; i++) {
        if (!sector[i])
            continue;
        double ca = s->cos_a[i], sa = s->sin_a[i];
        double A = h.vx * ca + h.vy * sa;
        double psi0 = h.phi0 - (20.0 * i + 10.0) * PI / 180.0;
        double s0 = sin(psi0);
        for (unsigned r = 0; r < TPC_ROWS; r++) {
            double xr = (double)tpc_row_x(r);
            double u = h.w * (xr - A) + s0;
            if (u < -1.0 || u > 1.0)
                continue;
            double b1 = asin(u);
            for (int br = 0; br < 2; br++) {
                double psi = br == 0 ? b1 : PI - b1;
                if (br == 1 && u == 1.0)
                    break;
                double t0 = fmod((psi - psi0) / h.w, period);
                if (t0 < 0)
                    t0 += period;
                for (double t = t0; t <= h.smax; t += period) {
                    double x, y, z;
                    helix_at(&h, t, &x, &y, &z);
                    double yl = -x * sa + y * ca;
                    if (fabs(yl) > xr * (double)TPC_TAN_EDGE || fabs(z) > c->drift_mm)
                        continue;
                    b->crossings++;
                    if (c->efficiency < 1.0 && tusk_rng_uniform(rng) >= c->efficiency)
                        continue;
                    unsigned slice = (unsigned)i + (z < 0 ? 18u : 0u);
                    double ys = yl + c->sigma_y_mm * tusk_rng_gauss(rng);
                    double zs = z + c->sigma_z_mm * tusk_rng_gauss(rng);
                    if (block_push(b, (float)ys, (float)zs, p->id, slice * TPC_ROWS + r) != 0)
                        return -1;
                }
            }
        }
    }
    return 0;
}

typedef struct run_ctx {
    tpc_sim_t *sim;
    uint64_t index;
} run_ctx_t;

static void trace_block(void *ctx, size_t k, unsigned thread)
{
    (void)thread;
    run_ctx_t *rc = ctx;
    tpc_sim_t *s = rc->sim;
    block_t *b = &s->blk[k];
    b->n = 0;
    b->crossings = 0;
    b->failed = 0;
    uint32_t lo = (uint32_t)(k * BLOCK), hi = lo + BLOCK < s->n_particles ? lo + BLOCK : s->n_particles;
    for (uint32_t j = lo; j < hi; j++) {
        uint64_t rng = stream(s->cfg.seed, rc->index, (uint64_t)j + 1);
        make_particle(&s->cfg, &rng, j, &s->particle[j]);
        if (trace(s, &s->particle[j], &rng, b) != 0) {
            b->failed = 1;
            return;
        }
    }
}

/* float -> u32 keys that sort as the floats do */
static uint32_t fkey(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u & 0x80000000u ? ~u : u | 0x80000000u;
}

int tpc_sim_make(tpc_sim_t *s, uint64_t index, const tpc_sim_event_t **ev, tusk_error_t *err)
{
    const tpc_sim_config_t *c = &s->cfg;
    s->index = index;
    s->n_particles = c->tracks;
    size_t nblk = (c->tracks + BLOCK - 1) / BLOCK;
    if (tusk_grow(&s->particle, &s->cap_particle, (size_t)c->tracks + 1, sizeof *s->particle) != 0)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory (%u particles)", (unsigned)c->tracks);
    if (nblk > s->cap_blk) {
        block_t *nb = realloc(s->blk, nblk * sizeof *nb);
        if (!nb)
            return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
        memset(nb + s->cap_blk, 0, (nblk - s->cap_blk) * sizeof *nb);
        s->blk = nb;
        s->cap_blk = nblk;
    }
    s->n_blk = nblk;
    run_ctx_t rc = {s, index};
    tusk_pool_run(s->pool, nblk, trace_block, &rc);
    /* join the blocks in order, then the noise */
    size_t total = 0;
    uint64_t crossings = 0;
    for (size_t k = 0; k < nblk; k++) {
        if (s->blk[k].failed)
            return tusk_error_set(err, TUSK_ENOMEM, "out of memory (clusters of event %llu)",
                                  (unsigned long long)index);
        total += s->blk[k].n;
        crossings += s->blk[k].crossings;
    }
    if (tusk_grow(&s->all, &s->cap_all, total + 1, sizeof *s->all) != 0)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory (%zu clusters)", total);
    s->n_all = 0;
    for (size_t k = 0; k < nblk; k++) {
        if (s->blk[k].n)
            memcpy(s->all + s->n_all, s->blk[k].c, s->blk[k].n * sizeof *s->all);
        s->n_all += s->blk[k].n;
    }
    uint64_t noise = 0;
    if (c->noise_per_row > 0) {
        uint64_t rng = stream(c->seed, index, 0);
        for (unsigned sl = 0; sl < TPC_SLICES; sl++)
            for (unsigned r = 0; r < TPC_ROWS; r++) {
                unsigned n = tusk_rng_poisson(&rng, c->noise_per_row);
                double xr = (double)tpc_row_x(r), w = xr * (double)TPC_TAN_EDGE;
                for (unsigned q = 0; q < n; q++) {
                    double y = (2.0 * tusk_rng_uniform(&rng) - 1.0) * w;
                    double z = tusk_rng_uniform(&rng) * c->drift_mm * (sl < 18 ? 1.0 : -1.0);
                    if (tusk_grow(&s->all, &s->cap_all, s->n_all + 1, sizeof *s->all) != 0)
                        return tusk_error_set(err, TUSK_ENOMEM, "out of memory (noise clusters)");
                    simcl_t *x = &s->all[s->n_all++];
                    x->y = (float)y;
                    x->z = (float)z;
                    x->particle = ADF_TPC_NOISE;
                    x->srow = (uint16_t)(sl * TPC_ROWS + r);
                    noise++;
                }
            }
    }
    /* sort by (slice, row): counting sort, stable; then each row by y */
    size_t n = s->n_all, nsr = (size_t)TPC_SLICES * TPC_ROWS;
    if (tusk_grow(&s->tmp, &s->cap_tmp, n + 1, sizeof *s->tmp) != 0 ||
        tusk_grow(&s->cl, &s->cap_cl, n + 1, sizeof *s->cl) != 0)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory (%zu clusters)", n);
    size_t *start = s->start, *cur = s->cur;
    memset(s->start, 0, sizeof s->start);
    for (size_t i = 0; i < n; i++)
        start[s->all[i].srow + 1]++;
    for (size_t k = 0; k < nsr; k++)
        start[k + 1] += start[k];
    memcpy(cur, start, sizeof s->cur);
    for (size_t i = 0; i < n; i++)
        s->tmp[cur[s->all[i].srow]++] = s->all[i];
    size_t maxrow = 0;
    for (size_t k = 0; k < nsr; k++)
        if (start[k + 1] - start[k] > maxrow)
            maxrow = start[k + 1] - start[k];
    if (tusk_grow(&s->keys, &s->cap_keys, maxrow + 1, sizeof *s->keys) != 0 ||
        tusk_grow(&s->ktmp, &s->cap_ktmp, maxrow + 1, sizeof *s->ktmp) != 0)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    for (size_t k = 0; k < nsr; k++) {
        size_t a = start[k], m = start[k + 1] - a;
        for (size_t i = 0; i < m; i++)
            s->keys[i] = (uint64_t)fkey(s->tmp[a + i].y) << 32 | i;
        tusk_radix_sort_u64(s->keys, s->ktmp, m);
        for (size_t i = 0; i < m; i++)
            s->all[a + i] = s->tmp[a + (uint32_t)s->keys[i]];
    }
    /* the slices: clusters and truth */
    if ((size_t)c->tracks + 1 > s->cap_seen) {
        free(s->seen);
        free(s->seen_at);
        s->seen = malloc(((size_t)c->tracks + 1) * sizeof *s->seen);
        s->seen_at = malloc(((size_t)c->tracks + 1) * sizeof *s->seen_at);
        s->cap_seen = s->seen && s->seen_at ? (size_t)c->tracks + 1 : 0;
        if (!s->cap_seen)
            return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    }
    memset(s->seen, 0, ((size_t)c->tracks + 1) * sizeof *s->seen);
    for (unsigned sl = 0; sl < TPC_SLICES; sl++) {
        slice_out_t *o = &s->sl[sl];
        o->first = start[sl * TPC_ROWS];
        o->n = start[(sl + 1) * TPC_ROWS] - o->first;
        o->n_pt = 0;
        if (tusk_grow(&o->cp, &o->cap_cp, o->n + 1, sizeof *o->cp) != 0)
            return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
        for (size_t i = 0; i < o->n; i++) {
            const simcl_t *x = &s->all[o->first + i];
            adf_tpc_cluster_t *y = &s->cl[o->first + i];
            y->row = (uint8_t)(x->srow - sl * TPC_ROWS);
            y->flags = 0;
            y->y = x->y;
            y->z = x->z;
            if (x->particle == ADF_TPC_NOISE) {
                o->cp[i] = ADF_TPC_NOISE;
                continue;
            }
            uint32_t pid = x->particle;
            if (s->seen[pid] != sl + 1u) {
                if (o->n_pt + 1u > o->cap_pt) {
                    uint32_t cap = o->cap_pt ? 2 * o->cap_pt : 64;
                    adf_tpc_particle_t *q = realloc(o->pt, cap * sizeof *q);
                    if (!q)
                        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
                    o->pt = q;
                    o->cap_pt = cap;
                }
                s->seen[pid] = sl + 1u;
                s->seen_at[pid] = o->n_pt;
                o->pt[o->n_pt++] = s->particle[pid];
            }
            o->cp[i] = s->seen_at[pid];
        }
    }
    s->ev.event = (uint32_t)index;
    s->ev.timestamp = (index * TIMESTAMP_STEP) & ADF_TIMESTAMP_MAX;
    s->ev.particles = c->tracks;
    s->ev.clusters = n;
    s->ev.noise = noise;
    s->ev.crossings = crossings;
    *ev = &s->ev;
    return TUSK_OK;
}

void tpc_sim_slice(const tpc_sim_t *s, unsigned sl, tpc_slice_t *out)
{
    memset(out, 0, sizeof *out);
    out->event = s->ev.event;
    out->timestamp = s->ev.timestamp;
    out->hdr.n_clusters = (uint32_t)s->sl[sl].n;
    out->hdr.slice = (uint8_t)sl;
    out->hdr.slices = TPC_SLICES;
    out->hdr.bz = (float)s->cfg.bz_tesla;
    out->hdr.geometry = ADF_TPC_GEOMETRY_ALICE;
    out->cluster = s->cl + s->sl[sl].first;
}

size_t tpc_sim_slice_bytes(const tpc_sim_t *s, unsigned sl)
{
    const slice_out_t *o = &s->sl[sl];
    size_t b = ADF_KEY_SIZE + adf_tpc_clusters_payload_size((uint32_t)o->n);
    if (s->cfg.truth)
        b += ADF_KEY_SIZE + adf_tpc_truth_payload_size(o->n_pt, (uint32_t)o->n);
    return b;
}

int tpc_sim_encode_slice(const tpc_sim_t *s, unsigned sl, adf_writer_t *w, tusk_error_t *err)
{
    tpc_slice_t x;
    tpc_sim_slice(s, sl, &x);
    adf_error_t e;
    if (adf_tpc_clusters_encode(w, x.event, x.timestamp, &x.hdr, x.cluster, &e) != ADF_OK)
        return tusk_error_set(err, e.code == ADF_EFULL || e.code == ADF_ETOOBIG ? TUSK_ELIMIT : TUSK_EINVAL,
                              "event %u, slice %u: %s", (unsigned)x.event, sl, e.message);
    if (s->cfg.truth) {
        const slice_out_t *o = &s->sl[sl];
        adf_tpc_truth_t t = {o->n_pt, (uint32_t)o->n, (uint16_t)sl, 0, NULL, NULL};
        if (adf_tpc_truth_encode(w, x.event, x.timestamp, &t, o->pt, o->cp, &e) != ADF_OK)
            return tusk_error_set(err, e.code == ADF_EFULL || e.code == ADF_ETOOBIG ? TUSK_ELIMIT : TUSK_EINVAL,
                                  "event %u, slice %u truth: %s", (unsigned)x.event, sl, e.message);
    }
    return TUSK_OK;
}

void tpc_sim_truth(const tpc_sim_t *s, unsigned sl, const adf_tpc_particle_t **particles, uint32_t *n_particles,
                   const uint32_t **cluster_particle)
{
    *particles = s->sl[sl].pt;
    *n_particles = s->sl[sl].n_pt;
    *cluster_particle = s->sl[sl].cp;
}
