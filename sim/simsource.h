/* simsource.h - the gamma-ray source of the event simulation: what one
 * decay (or one reaction, for the multiplicity generator) emits, and
 * when.
 *
 * Every gamma is emitted from the target at the array's centre in an
 * isotropic direction, independently of the others (angular
 * correlations, such as 60Co's 4-2-0 cascade has, are ignored; so is any
 * recoil, hence Doppler shift). Decay times are a Poisson process of the
 * configured rate: exponential spacings, kept in double-precision
 * nanoseconds and written as 10 ns timestamp ticks.
 *
 * Settings (tusk/params.h `key = value`, in the simulation's
 * configuration; see sim/README.md):
 *   source = co60 | cs137 | line | cascade | multiplicity   (required)
 *     co60          1173.228 and 1332.492 keV together (every decay)
 *     cs137         661.657 keV
 *     line          energy = E (keV)
 *     cascade       energies = E1, E2, ... (keV; all emitted together)
 *     multiplicity  multiplicity = M (30) gammas of energies evenly spaced
 *                   from e_min (80) to e_max (2600) keV - the classic
 *                   AGATA tracking benchmark (M = 30, 80 keV - 2.6 MeV)
 *   rate = decays per second (10000), > 0
 *   start_tick = timestamp of time zero, in 10 ns ticks (0)
 */
#ifndef TUSK_SIMSOURCE_H
#define TUSK_SIMSOURCE_H

#include <tusk/export.h>

#include <stddef.h>
#include <stdint.h>

#include <tusk/error.h>
#include <tusk/params.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SIM_MAX_GAMMAS 64        /* per decay (= ADF_TRUTH_MAX_GAMMAS) */
#define SIM_TICK_NS 10.0         /* ADF timestamp tick */

typedef struct sim_source sim_source_t;

typedef struct sim_decay {
    uint64_t index;              /* 0-based decay number */
    uint64_t timestamp;          /* 10 ns ticks: the tick the decay falls in */
    double after_ns;             /* the decay's time after its tick's start, [0, SIM_TICK_NS) */
    unsigned n;                  /* gammas emitted */
    double energy[SIM_MAX_GAMMAS];  /* keV */
    double dir[SIM_MAX_GAMMAS][3];  /* unit vectors, array frame */
} sim_decay_t;

/* The source described by `params` (keys above; other keys are the
 * caller's to check). `origin` names the configuration in messages. */
TUSK_INTERNAL int sim_source_new(sim_source_t **out, const tusk_params_t *params, const char *origin,
                                 tusk_error_t *err);
TUSK_INTERNAL void sim_source_destroy(sim_source_t **source);

/* The next decay, drawn from *rng. TUSK_ELIMIT once the timestamp would
 * pass 2^48 ticks (32 days of beam time at 10 ns). */
TUSK_INTERNAL int sim_source_next(sim_source_t *source, uint64_t *rng, sim_decay_t *decay, tusk_error_t *err);

/* Back to decay 0 at start_tick. */
void sim_source_rewind(sim_source_t *source);

/* Gammas per decay and a one-line description ("60Co: 1173.2 + 1332.5
 * keV, 10000 decays/s"). */
TUSK_INTERNAL unsigned sim_source_multiplicity(const sim_source_t *source);
const char *sim_source_describe(const sim_source_t *source);

/* An isotropic unit vector (2 uniforms). */
void sim_isotropic(double dir[3], uint64_t *rng);

#ifdef __cplusplus
}
#endif
#endif
