/* signal.h - the signals an interaction induces on every electrode
 * (libtusk-detector): electrons and holes drift from the point, and by
 * Shockley-Ramo each electrode i sees
 *   segment i:  Q_i(t) = phi_i(r_h(t)) - phi_i(r_e(t))
 *   core:       Q_c(t) = phi_c(r_e(t)) - phi_c(r_h(t))
 * (phi_i the weighting potential), signs chosen so that the segment that
 * collects the holes and the core, which collects the electrons, both rise
 * from 0 to 1; every other segment starts and ends at 0 (transient mirror
 * signals). Once a carrier reaches a contact its weighting potentials are
 * exactly 1 there and 0 elsewhere. The charge is computed every step_ns,
 * shaped by a one-pole preamplifier (10-90 % rise preamp_rise_ns), and
 * sampled every sample_ns from the interaction time (sample 0 = 0). */
#ifndef TUSK_SIGNAL_H
#define TUSK_SIGNAL_H

#include <tusk/export.h>

#include <stdbool.h>

#include <tusk/crystal.h>
#include <tusk/drift.h>
#include <tusk/error.h>
#include <tusk/field.h>
#include <tusk/weighting.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct det_signals det_signals_t;

/* Uses (does not own) crystal, potential and weighting; mobility NULL:
 * det_mobility_default. Timing from the crystal's configuration. */
TUSK_API int det_signals_new(det_signals_t **out, const det_crystal_t *crystal, const det_field_t *potential,
                             const det_weighting_t *weighting, const det_mobility_t *mobility, tusk_error_t *err);
TUSK_API void det_signals_destroy(det_signals_t **signals);

typedef struct det_signal_info {
    int segment;                  /* where the interaction is: the slab, det_crystal_segment_of */
    int collected;                /* the segment whose contact the holes reach (the net charge's
                                     segment), or -1 when they reach none */
    enum det_drift_end end[2];    /* by carrier (DET_ELECTRON, DET_HOLE) */
    int electrode[2];             /* contact reached, or -1 */
    double drift_ns[2];           /* time to reach it (or to stop) */
} det_signal_info_t;

/* Traces of every electrode for an interaction at p (inside the crystal)
 * into traces[electrode * samples + sample]. info and paths (two: electron
 * then hole; reused) may be NULL. Safe to call from several threads. */
TUSK_API int det_signals_compute(const det_signals_t *signals, const double p[3], float *traces,
                                 det_signal_info_t *info, det_path_t *paths, tusk_error_t *err);

#ifdef __cplusplus
}
#endif
#endif
