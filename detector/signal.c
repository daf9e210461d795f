/* signal.c - Shockley-Ramo signals from the two drift paths, shaped by
 * the preamplifier and sampled. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tusk/signal.h"

/* Carriers may take longer than the trace window to arrive; drift them
 * this long at most to learn where they end. */
#define MAX_DRIFT_NS 5000.0

struct det_signals {
    const det_crystal_t *crystal;
    const det_field_t *potential;
    const det_weighting_t *weighting;
    det_mobility_t mobility;
    unsigned electrodes, core, samples;
    double step_ns, sample_ns, preamp_rise_ns;
    size_t window_steps; /* steps covering the trace window */
};

int det_signals_new(det_signals_t **out, const det_crystal_t *crystal, const det_field_t *potential,
                    const det_weighting_t *weighting, const det_mobility_t *mobility, tusk_error_t *err)
{
    *out = NULL;
    det_signals_t *s = calloc(1, sizeof *s);
    if (!s)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    const det_config_t *cfg = det_crystal_config(crystal);
    s->crystal = crystal;
    s->potential = potential;
    s->weighting = weighting;
    if (mobility)
        s->mobility = *mobility;
    else
        det_mobility_default(&s->mobility);
    s->electrodes = det_crystal_electrodes(crystal);
    s->core = det_crystal_core(crystal);
    s->samples = cfg->samples;
    s->step_ns = cfg->step_ns;
    s->sample_ns = cfg->sample_ns;
    s->preamp_rise_ns = cfg->preamp_rise_ns;
    s->window_steps = (size_t)llround((cfg->samples - 1) * cfg->sample_ns / cfg->step_ns) + 1;
    *out = s;
    return TUSK_OK;
}

void det_signals_destroy(det_signals_t **s)
{
    if (s) {
        free(*s);
        *s = NULL;
    }
}

/* Weighting potentials of a carrier at step k of its path: exact contact
 * values once it has been collected. */
static void carrier_phi(const det_signals_t *s, const det_path_t *p, size_t k, double *phi)
{
    if (k + 1 >= p->n && p->end == DET_DRIFT_COLLECTED) {
        for (unsigned e = 0; e < s->electrodes; e++)
            phi[e] = (int)e == p->end_electrode ? 1.0 : 0.0;
        return;
    }
    const double *x = p->xyz + 3 * (k < p->n ? k : p->n - 1);
    det_weighting_values(s->weighting, x[0], x[1], x[2], phi);
}

int det_signals_compute(const det_signals_t *s, const double p[3], float *traces, det_signal_info_t *info,
                        det_path_t *paths, tusk_error_t *err)
{
    det_path_t local[2];
    memset(local, 0, sizeof local);
    det_path_t *path = paths ? paths : local;
    size_t max_steps = (size_t)(MAX_DRIFT_NS / s->step_ns);
    if (max_steps < s->window_steps)
        max_steps = s->window_steps;
    int st = TUSK_OK;
    for (int c = 0; c < 2 && !st; c++)
        st = det_drift(s->potential, s->crystal, &s->mobility, (enum det_carrier)c, p, s->step_ns, max_steps,
                       &path[c], err);
    double *phi = st ? NULL : malloc(3 * s->electrodes * sizeof *phi);
    if (!st && !phi)
        st = tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    if (!st) {
        double *pe = phi, *ph = phi + s->electrodes, *y = phi + 2 * s->electrodes;
        /* One pole: 10-90 % rise = tau ln 9. */
        double a = s->preamp_rise_ns > 0 ? 1.0 - exp(-s->step_ns * log(9.0) / s->preamp_rise_ns) : 1.0;
        for (unsigned e = 0; e < s->electrodes; e++)
            y[e] = 0.0;
        unsigned next_sample = 0;
        for (size_t k = 0; k < s->window_steps && next_sample < s->samples; k++) {
            carrier_phi(s, &path[DET_ELECTRON], k, pe);
            carrier_phi(s, &path[DET_HOLE], k, ph);
            for (unsigned e = 0; e < s->electrodes; e++) {
                double q = e == s->core ? pe[e] - ph[e] : ph[e] - pe[e];
                y[e] += a * (q - y[e]);
            }
            /* Sample j is taken at step round(j * sample / step). */
            while (next_sample < s->samples &&
                   (size_t)llround(next_sample * s->sample_ns / s->step_ns) == k) {
                for (unsigned e = 0; e < s->electrodes; e++)
                    traces[(size_t)e * s->samples + next_sample] = (float)y[e];
                next_sample++;
            }
        }
        if (info) {
            info->segment = det_crystal_segment_of(s->crystal, p[0], p[1], p[2]);
            int h = path[DET_HOLE].end_electrode;
            info->collected = path[DET_HOLE].end == DET_DRIFT_COLLECTED && h >= 0 &&
                                      h < (int)det_crystal_segments(s->crystal)
                                  ? h
                                  : -1;
            for (int c = 0; c < 2; c++) {
                info->end[c] = path[c].end;
                info->electrode[c] = path[c].end_electrode;
                info->drift_ns[c] = (double)(path[c].n - 1) * s->step_ns;
            }
        }
    }
    free(phi);
    if (!paths) {
        det_path_free(&local[0]);
        det_path_free(&local[1]);
    }
    return st;
}
