/* response.c - from energy deposits to a data:crystal record: basis
 * interpolation, time offset, noise, digitisation, energy resolution
 * (see sim/simresponse.h). */
#include "sim/simresponse.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "detector/grid.h"
#include "base/rng.h"

#define FWHM_PER_SIGMA 2.3548200450309493 /* 2 sqrt(2 ln 2) */
#define E_REF_KEV 1332.5

struct sim_response {
    sim_response_config_t cfg;
    const det_basis_t *basis;
    const det_crystal_t *crystal;
    unsigned channels, bsamples, samples;
    double sample_ns;  /* the basis' sample period */
    double grid;
    det_grid_t *map;   /* node -> basis point */
    const float *block[ADF_CRYSTAL_SEGMENTS];
    size_t npoints[ADF_CRYSTAL_SEGMENTS];
    /* scratch */
    float *one;        /* channels * bsamples: one interpolated signal */
    double *sum;       /* channels * bsamples: the crystal's signals */
    double *noise;     /* ADF_CRYSTAL_CHANNELS * samples */
};

void sim_response_config_default(sim_response_config_t *c)
{
    c->pretrigger = 10;
    c->samples = 0;
    c->noise_kev = 5.0;
    c->gain = 2.0;
    c->core_low_gain = 0.5;
    c->baseline = 2000.0;
    c->fwhm_0 = 1.0;
    c->fwhm_1332 = 2.0;
}

static int read_double(const tusk_params_t *p, const char *key, double *v, double lo, double hi, const char *origin,
                       tusk_error_t *err)
{
    if (tusk_params_double(p, key, *v, v, err) != TUSK_OK) {
        tusk_error_prefix(err, "%s", origin);
        return err ? err->code : TUSK_EPARAM;
    }
    if (!(*v >= lo && *v <= hi))
        return tusk_error_set(err, TUSK_EPARAM, "%s: %s = %g: must be within %g and %g", origin, key, *v, lo, hi);
    return TUSK_OK;
}

static int read_unsigned(const tusk_params_t *p, const char *key, unsigned *v, unsigned hi, const char *origin,
                         tusk_error_t *err)
{
    uint64_t x;
    if (tusk_params_u64(p, key, *v, &x, err) != TUSK_OK) {
        tusk_error_prefix(err, "%s", origin);
        return err ? err->code : TUSK_EPARAM;
    }
    if (x > hi)
        return tusk_error_set(err, TUSK_EPARAM, "%s: %s = %llu: at most %u", origin, key, (unsigned long long)x, hi);
    *v = (unsigned)x;
    return TUSK_OK;
}

int sim_response_config_read(sim_response_config_t *c, const tusk_params_t *p, const char *origin, tusk_error_t *err)
{
    int st;
    if ((st = read_unsigned(p, "pretrigger", &c->pretrigger, ADF_CRYSTAL_MAX_SAMPLES - 1, origin, err)) ||
        (st = read_unsigned(p, "samples", &c->samples, ADF_CRYSTAL_MAX_SAMPLES, origin, err)) ||
        (st = read_double(p, "noise_kev", &c->noise_kev, 0.0, 1000.0, origin, err)) ||
        (st = read_double(p, "gain", &c->gain, 1e-3, 1000.0, origin, err)) ||
        (st = read_double(p, "core_low_gain", &c->core_low_gain, 1e-3, 1000.0, origin, err)) ||
        (st = read_double(p, "baseline", &c->baseline, 0.0, SIM_ADC_MAX, origin, err)) ||
        (st = read_double(p, "fwhm_0", &c->fwhm_0, 0.0, 100.0, origin, err)) ||
        (st = read_double(p, "fwhm_1332", &c->fwhm_1332, 0.0, 100.0, origin, err)))
        return st;
    if (c->fwhm_1332 < c->fwhm_0)
        return tusk_error_set(err, TUSK_EPARAM, "%s: fwhm_1332 = %g is below fwhm_0 = %g", origin, c->fwhm_1332,
                              c->fwhm_0);
    return TUSK_OK;
}

int sim_response_new(sim_response_t **out, const det_basis_t *basis, const det_crystal_t *crystal,
                     const sim_response_config_t *cfg, tusk_error_t *err)
{
    *out = NULL;
    const det_basis_shape_t *shape = det_basis_shape(basis);
    if (shape->segments != ADF_CRYSTAL_SEGMENTS || shape->channels != ADF_CRYSTAL_SEGMENTS + 1)
        return tusk_error_set(err, TUSK_EINVAL, "the basis has %u segments and %u channels; data:crystal needs %d and %d",
                              shape->segments, shape->channels, ADF_CRYSTAL_SEGMENTS, ADF_CRYSTAL_SEGMENTS + 1);
    if (det_crystal_segments(crystal) != ADF_CRYSTAL_SEGMENTS)
        return tusk_error_set(err, TUSK_EINVAL, "the crystal has %u segments; data:crystal needs %d",
                              det_crystal_segments(crystal), ADF_CRYSTAL_SEGMENTS);
    unsigned samples = cfg->samples ? cfg->samples : cfg->pretrigger + shape->samples;
    if (samples > ADF_CRYSTAL_MAX_SAMPLES || samples <= cfg->pretrigger)
        return tusk_error_set(err, TUSK_EINVAL, "%u samples with %u before the interaction: need more than %u and "
                              "at most %d", samples, cfg->pretrigger, cfg->pretrigger, ADF_CRYSTAL_MAX_SAMPLES);
    if (!(shape->grid_mm > 0.0))
        return tusk_error_set(err, TUSK_EINVAL, "the basis has no grid spacing");
    sim_response_t *r = calloc(1, sizeof *r);
    if (!r)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    r->cfg = *cfg;
    r->basis = basis;
    r->crystal = crystal;
    r->channels = shape->channels;
    r->bsamples = shape->samples;
    r->sample_ns = shape->sample_ns;
    r->samples = samples;
    r->grid = shape->grid_mm;
    for (unsigned s = 0; s < ADF_CRYSTAL_SEGMENTS; s++) {
        r->npoints[s] = det_basis_segment_points(basis, s);
        r->block[s] = det_basis_block(basis, s);
    }
    size_t tr = (size_t)r->channels * r->bsamples;
    r->one = malloc(tr * sizeof *r->one);
    r->sum = malloc(tr * sizeof *r->sum);
    r->noise = malloc((size_t)ADF_CRYSTAL_CHANNELS * samples * sizeof *r->noise);
    int st = TUSK_OK;
    if (!r->one || !r->sum || !r->noise)
        st = tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    if (st == TUSK_OK)
        st = det_grid_new(&r->map, basis, err);
    if (st != TUSK_OK) {
        sim_response_destroy(&r);
        return st;
    }
    *out = r;
    return TUSK_OK;
}

void sim_response_destroy(sim_response_t **response)
{
    if (!response || !*response)
        return;
    sim_response_t *r = *response;
    det_grid_destroy(&r->map);
    free(r->one);
    free(r->sum);
    free(r->noise);
    free(r);
    *response = NULL;
}

unsigned sim_response_samples(const sim_response_t *r)
{
    return r->samples;
}

/* traces += w * (point i of segment s) */
static void add_point(const sim_response_t *r, unsigned s, size_t i, double w, float *traces)
{
    const float *b = r->block[s];
    size_t n = r->npoints[s];
    size_t m = (size_t)r->channels * r->bsamples;
    for (size_t t = 0; t < m; t++)
        traces[t] += (float)(w * b[t * n + i]);
}

/* Trilinear weights and grid nodes of the 8 basis grid nodes around pos. */
static void corners_of(const sim_response_t *r, const double pos[3], long n0[3], double w[3])
{
    for (int a = 0; a < 3; a++) {
        double f = pos[a] / r->grid - 0.5;
        n0[a] = (long)floor(f);
        w[a] = f - (double)n0[a];
    }
}

int sim_response_segment_at(const sim_response_t *r, const double pos[3])
{
    long n0[3];
    double w[3];
    corners_of(r, pos, n0, w);
    /* The segments of the 8 nodes around, each with its trilinear weight:
     * the heaviest collects the charge. */
    unsigned segs[8];
    double weight[8];
    unsigned nseg = 0;
    for (unsigned c = 0; c < 8; c++) {
        long n[3];
        det_grid_corner(n0, c, n);
        const double wc = det_grid_corner_weight(c, w);
        unsigned seg;
        uint32_t index;
        if (wc <= 0.0 || !det_grid_at(r->map, n[0], n[1], n[2], &seg, &index))
            continue;
        unsigned q = 0;
        while (q < nseg && segs[q] != seg)
            q++;
        if (q == nseg) {
            segs[nseg] = seg;
            weight[nseg++] = 0.0;
        }
        weight[q] += wc;
    }
    if (nseg > 0) {
        unsigned best = 0;
        for (unsigned q = 1; q < nseg; q++)
            if (weight[q] > weight[best] || (weight[q] == weight[best] && segs[q] < segs[best]))
                best = q;
        return (int)segs[best];
    }
    /* No node around (a thin corner of the germanium): the nearest basis
     * point within three grid steps. */
    long c[3] = {det_grid_node(r->map, pos[0]), det_grid_node(r->map, pos[1]), det_grid_node(r->map, pos[2])};
    double bd = INFINITY;
    int found = -1;
    for (long di = -3; di <= 3; di++)
        for (long dj = -3; dj <= 3; dj++)
            for (long dk = -3; dk <= 3; dk++) {
                unsigned seg;
                uint32_t index;
                if (!det_grid_at(r->map, c[0] + di, c[1] + dj, c[2] + dk, &seg, &index))
                    continue;
                double q[3] = {((double)(c[0] + di) + 0.5) * r->grid, ((double)(c[1] + dj) + 0.5) * r->grid,
                               ((double)(c[2] + dk) + 0.5) * r->grid};
                double d = (q[0] - pos[0]) * (q[0] - pos[0]) + (q[1] - pos[1]) * (q[1] - pos[1]) +
                           (q[2] - pos[2]) * (q[2] - pos[2]);
                if (d < bd) {
                    bd = d;
                    found = (int)seg;
                }
            }
    return found >= 0 ? found : det_crystal_segment_of(r->crystal, pos[0], pos[1], pos[2]);
}

int sim_response_signal(sim_response_t *r, int segment, const double pos[3], float *traces, tusk_error_t *err)
{
    if (segment < 0 || segment >= ADF_CRYSTAL_SEGMENTS || !r->npoints[segment])
        return tusk_error_set(err, TUSK_EINVAL, "segment %d has no basis points", segment);
    unsigned s = (unsigned)segment;
    memset(traces, 0, (size_t)r->channels * r->bsamples * sizeof *traces);
    double w[3];
    long n0[3];
    corners_of(r, pos, n0, w);
    uint32_t idx[8];
    double wt[8], total = 0.0;
    unsigned found = 0;
    for (unsigned c = 0; c < 8; c++) {
        long n[3];
        det_grid_corner(n0, c, n);
        const double wc = det_grid_corner_weight(c, w);
        unsigned seg;
        uint32_t index;
        if (wc <= 0.0 || !det_grid_at(r->map, n[0], n[1], n[2], &seg, &index) || seg != s)
            continue;
        idx[found] = index;
        wt[found] = wc;
        total += wc;
        found++;
    }
    if (total > 1e-9) {
        for (unsigned c = 0; c < found; c++)
            add_point(r, s, idx[c], wt[c] / total, traces);
        return TUSK_OK;
    }
    /* No grid neighbour in this segment: the nearest point of it. */
    size_t best = 0;
    double bd = INFINITY;
    for (size_t i = 0; i < r->npoints[s]; i++) {
        float p[3];
        det_basis_position(r->basis, s, i, p);
        double d = (p[0] - pos[0]) * (p[0] - pos[0]) + (p[1] - pos[1]) * (p[1] - pos[1]) +
                   (p[2] - pos[2]) * (p[2] - pos[2]);
        if (d < bd) {
            bd = d;
            best = i;
        }
    }
    add_point(r, s, best, 1.0, traces);
    return TUSK_OK;
}

double sim_gauss(uint64_t *rng)
{
    for (;;) {
        double u = 2.0 * tusk_rng_uniform(rng) - 1.0, v = 2.0 * tusk_rng_uniform(rng) - 1.0;
        double q = u * u + v * v;
        if (q > 0.0 && q < 1.0)
            return u * sqrt(-2.0 * log(q) / q);
    }
}

/* n standard normal deviates, both of each polar pair used. */
static void fill_gauss(uint64_t *rng, double *out, size_t n)
{
    size_t i = 0;
    while (i < n) {
        double u = 2.0 * tusk_rng_uniform(rng) - 1.0, v = 2.0 * tusk_rng_uniform(rng) - 1.0;
        double q = u * u + v * v;
        if (!(q > 0.0 && q < 1.0))
            continue;
        double f = sqrt(-2.0 * log(q) / q);
        out[i++] = u * f;
        if (i < n)
            out[i++] = v * f;
    }
}

static double smear(const sim_response_config_t *c, double e, uint64_t *rng)
{
    double ep = e > 0.0 ? e : 0.0;
    double f2 = c->fwhm_0 * c->fwhm_0 + (c->fwhm_1332 * c->fwhm_1332 - c->fwhm_0 * c->fwhm_0) * ep / E_REF_KEV;
    return e + sqrt(f2) / FWHM_PER_SIGMA * sim_gauss(rng);
}

static int16_t digitise(double adc, uint16_t *status)
{
    long v = lround(adc);
    if (v < 0 || v > SIM_ADC_MAX) {
        *status |= SIM_STATUS_SATURATED;
        v = v < 0 ? 0 : SIM_ADC_MAX;
    }
    return (int16_t)v;
}

int sim_response_crystal(sim_response_t *r, const sim_deposit_t *d, size_t n, double after_ns, uint64_t *rng,
                         adf_crystal_t *out, tusk_error_t *err)
{
    const unsigned bs = r->bsamples, S = r->samples, C = r->channels;
    double seg_e[ADF_CRYSTAL_SEGMENTS] = {0};
    double total = 0.0;
    memset(r->sum, 0, (size_t)C * bs * sizeof *r->sum);
    for (size_t k = 0; k < n; k++) {
        int st = sim_response_signal(r, d[k].segment, d[k].pos, r->one, err);
        if (st != TUSK_OK)
            return st;
        for (size_t t = 0; t < (size_t)C * bs; t++)
            r->sum[t] += d[k].energy * r->one[t];
        seg_e[d[k].segment] += d[k].energy;
        total += d[k].energy;
    }
    /* Where the interaction falls (sample pretrigger is the key's
     * timestamp), then the noise. */
    double shift = (double)r->cfg.pretrigger + after_ns / r->sample_ns;
    fill_gauss(rng, r->noise, (size_t)ADF_CRYSTAL_CHANNELS * S);
    out->status = 0;
    out->n_samples = (uint16_t)S;
    for (unsigned ch = 0; ch < ADF_CRYSTAL_CHANNELS; ch++) {
        unsigned bc = ch < ADF_CRYSTAL_SEGMENTS ? ch : C - 1; /* both core gains: the core's signal */
        double gain = ch == ADF_CRYSTAL_SEGMENTS ? r->cfg.core_low_gain : r->cfg.gain;
        const double *sig = r->sum + (size_t)bc * bs;
        const double *noise = r->noise + (size_t)ch * S;
        for (unsigned k = 0; k < S; k++) {
            double t = (double)k - shift, v;
            if (t <= 0.0) {
                v = 0.0;
            } else if (t >= (double)(bs - 1)) {
                v = sig[bs - 1];
            } else {
                unsigned j = (unsigned)t;
                double f = t - j;
                v = sig[j] + f * (sig[j + 1] - sig[j]);
            }
            v += r->cfg.noise_kev * noise[k];
            out->trace[ch][k] = digitise(r->cfg.baseline + gain * v, &out->status);
        }
    }
    for (unsigned s = 0; s < ADF_CRYSTAL_SEGMENTS; s++)
        out->segment_energy[s] = (float)smear(&r->cfg, seg_e[s], rng);
    out->core_energy[0] = (float)smear(&r->cfg, total, rng);
    out->core_energy[1] = (float)smear(&r->cfg, total, rng);
    return TUSK_OK;
}
