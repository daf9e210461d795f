/* source.c - gamma-ray sources: lines, cascades, the multiplicity-M
 * benchmark, Poisson decay times (see sim/simsource.h). */
#include "sim/simsource.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/rng.h"

#define PI 3.14159265358979323846
#define TIMESTAMP_LIMIT 281474976710656.0 /* 2^48 ticks */

struct sim_source {
    unsigned n;
    double energy[SIM_MAX_GAMMAS];
    double rate;          /* decays per second */
    uint64_t start_tick;
    double time_ns;       /* of the last decay, from time zero */
    uint64_t next_index;
    char description[256];
};

void sim_isotropic(double dir[3], uint64_t *rng)
{
    double w = 2.0 * tusk_rng_uniform(rng) - 1.0;
    double phi = 2.0 * PI * tusk_rng_uniform(rng);
    double s = sqrt(1.0 - w * w);
    dir[0] = s * cos(phi);
    dir[1] = s * sin(phi);
    dir[2] = w;
}

/* A comma-separated list of positive energies. */
static int parse_energies(sim_source_t *s, const char *text, const char *origin, tusk_error_t *err)
{
    const char *p = text;
    s->n = 0;
    for (;;) {
        char *end;
        errno = 0;
        double e = strtod(p, &end);
        if (end == p || errno || !(e > 0.0) || !isfinite(e))
            return tusk_error_set(err, TUSK_EPARAM, "%s: energies: '%s' is not a list of positive energies in keV",
                                  origin, text);
        if (s->n == SIM_MAX_GAMMAS)
            return tusk_error_set(err, TUSK_EPARAM, "%s: energies: more than %d gammas", origin, SIM_MAX_GAMMAS);
        s->energy[s->n++] = e;
        while (*end == ' ' || *end == '\t')
            end++;
        if (*end == '\0')
            return TUSK_OK;
        if (*end != ',')
            return tusk_error_set(err, TUSK_EPARAM, "%s: energies: '%s' is not a list of positive energies in keV",
                                  origin, text);
        p = end + 1;
    }
}

static int positive(const tusk_params_t *params, const char *key, double fallback, double *v, const char *origin,
                    tusk_error_t *err)
{
    if (tusk_params_double(params, key, fallback, v, err) != TUSK_OK) {
        tusk_error_prefix(err, "%s", origin);
        return err ? err->code : TUSK_EPARAM;
    }
    if (!(*v > 0.0) || !isfinite(*v))
        return tusk_error_set(err, TUSK_EPARAM, "%s: %s = %g: must be positive", origin, key, *v);
    return TUSK_OK;
}

static int configure(sim_source_t *s, const tusk_params_t *params, const char *origin, tusk_error_t *err)
{
    const char *kind = tusk_params_get(params, "source");
    if (!kind || !*kind)
        return tusk_error_set(err, TUSK_EPARAM,
                              "%s: no 'source' (co60, cs137, line, cascade or multiplicity)", origin);
    int st;
    if (strcmp(kind, "co60") == 0) {
        s->n = 2;
        s->energy[0] = 1173.228;
        s->energy[1] = 1332.492;
        snprintf(s->description, sizeof s->description, "60Co: 1173.2 + 1332.5 keV");
    } else if (strcmp(kind, "cs137") == 0) {
        s->n = 1;
        s->energy[0] = 661.657;
        snprintf(s->description, sizeof s->description, "137Cs: 661.7 keV");
    } else if (strcmp(kind, "line") == 0) {
        s->n = 1;
        if ((st = positive(params, "energy", NAN, &s->energy[0], origin, err)) != TUSK_OK) {
            if (!tusk_params_get(params, "energy"))
                return tusk_error_set(err, TUSK_EPARAM, "%s: source = line needs 'energy' (keV)", origin);
            return st;
        }
        snprintf(s->description, sizeof s->description, "line: %.1f keV", s->energy[0]);
    } else if (strcmp(kind, "cascade") == 0) {
        const char *e = tusk_params_get(params, "energies");
        if (!e)
            return tusk_error_set(err, TUSK_EPARAM, "%s: source = cascade needs 'energies' (keV, comma-separated)",
                                  origin);
        if ((st = parse_energies(s, e, origin, err)) != TUSK_OK)
            return st;
        snprintf(s->description, sizeof s->description, "cascade of %u: %s keV", s->n, e);
    } else if (strcmp(kind, "multiplicity") == 0) {
        uint64_t m;
        double lo, hi;
        if (tusk_params_u64(params, "multiplicity", 30, &m, err) != TUSK_OK) {
            tusk_error_prefix(err, "%s", origin);
            return err ? err->code : TUSK_EPARAM;
        }
        if (m < 1 || m > SIM_MAX_GAMMAS)
            return tusk_error_set(err, TUSK_EPARAM, "%s: multiplicity = %llu: must be 1 to %d", origin,
                                  (unsigned long long)m, SIM_MAX_GAMMAS);
        if ((st = positive(params, "e_min", 80.0, &lo, origin, err)) != TUSK_OK ||
            (st = positive(params, "e_max", 2600.0, &hi, origin, err)) != TUSK_OK)
            return st;
        if (hi < lo)
            return tusk_error_set(err, TUSK_EPARAM, "%s: e_max = %g is below e_min = %g", origin, hi, lo);
        s->n = (unsigned)m;
        for (unsigned i = 0; i < s->n; i++)
            s->energy[i] = s->n == 1 ? lo : lo + (hi - lo) * i / (s->n - 1);
        snprintf(s->description, sizeof s->description, "multiplicity %u: %.0f - %.0f keV evenly spaced", s->n, lo,
                 hi);
    } else {
        return tusk_error_set(err, TUSK_EPARAM,
                              "%s: source = %s: not one of co60, cs137, line, cascade, multiplicity", origin, kind);
    }
    if ((st = positive(params, "rate", 10000.0, &s->rate, origin, err)) != TUSK_OK)
        return st;
    if (tusk_params_u64(params, "start_tick", 0, &s->start_tick, err) != TUSK_OK) {
        tusk_error_prefix(err, "%s", origin);
        return err ? err->code : TUSK_EPARAM;
    }
    if ((double)s->start_tick >= TIMESTAMP_LIMIT)
        return tusk_error_set(err, TUSK_EPARAM, "%s: start_tick = %llu: timestamps have 48 bits", origin,
                              (unsigned long long)s->start_tick);
    size_t used = strlen(s->description);
    snprintf(s->description + used, sizeof s->description - used, ", %g decays/s", s->rate);
    return TUSK_OK;
}

int sim_source_new(sim_source_t **out, const tusk_params_t *params, const char *origin, tusk_error_t *err)
{
    *out = NULL;
    sim_source_t *s = calloc(1, sizeof *s);
    if (!s)
        return tusk_error_set(err, TUSK_ENOMEM, "%s: out of memory", origin);
    int st = configure(s, params, origin, err);
    if (st != TUSK_OK) {
        free(s);
        return st;
    }
    sim_source_rewind(s);
    *out = s;
    return TUSK_OK;
}

void sim_source_destroy(sim_source_t **source)
{
    if (source && *source) {
        free(*source);
        *source = NULL;
    }
}

void sim_source_rewind(sim_source_t *s)
{
    s->time_ns = 0.0;
    s->next_index = 0;
}

int sim_source_next(sim_source_t *s, uint64_t *rng, sim_decay_t *d, tusk_error_t *err)
{
    double t = s->time_ns - log(tusk_rng_uniform(rng)) / s->rate * 1e9;
    double tick = floor(t / SIM_TICK_NS) + (double)s->start_tick;
    if (tick >= TIMESTAMP_LIMIT)
        return tusk_error_set(err, TUSK_ELIMIT, "decay %llu: the timestamp passes 2^48 ticks",
                              (unsigned long long)s->next_index);
    s->time_ns = t;
    d->index = s->next_index++;
    d->timestamp = (uint64_t)tick;
    d->after_ns = t - floor(t / SIM_TICK_NS) * SIM_TICK_NS;
    d->after_ns = d->after_ns >= 0.0 && d->after_ns < SIM_TICK_NS ? d->after_ns : 0.0; /* rounding */
    d->n = s->n;
    for (unsigned i = 0; i < s->n; i++) {
        d->energy[i] = s->energy[i];
        sim_isotropic(d->dir[i], rng);
    }
    return TUSK_OK;
}

unsigned sim_source_multiplicity(const sim_source_t *s)
{
    return s->n;
}

const char *sim_source_describe(const sim_source_t *s)
{
    return s->description;
}
