/* simresponse.h - the detector response of the event simulation: what a
 * crystal's front-end would record for a set of energy deposits.
 *
 * Segments. A deposit belongs to the segment that collects its charge
 * (sim_response_segment_at): the basis groups its points by the contact
 * their holes reach (tusk/basis.h), and the deposit takes the segment of
 * the basis grid points around it with the largest trilinear weight - so
 * a deposit just behind the front ring, whose holes drift to the front
 * face, is a ring-1 deposit, in its energy as in its traces.
 *
 * Traces. The deposits are grouped by segment; every electrode's trace
 * is the sum over the deposits of the basis signal at the deposit's
 * position, weighted by its energy (keV). The basis signal at a position
 * is interpolated trilinearly between the basis grid points around it
 * that belong to the same segment (weights renormalised over those that
 * exist; with none - near a surface or a segment boundary - the nearest
 * point of the segment). The core trace, whose basis signal rises to 1
 * wherever the charge is, ends at the total energy.
 *
 * Then the front-end: the record's sample `pretrigger` is taken at its
 * key's timestamp (the decay's 10 ns tick), and the interaction falls
 * the decay's time after that tick's start later (sim_decay_t.after_ns,
 * a fraction of a sample at 10 ns a sample), so that times counted from
 * the key's timestamp (adf/FORMAT.md, data:psa) are the decay's (traces
 * are shifted by linear interpolation; before the interaction they are
 * 0, after the basis ends they hold its last value), white Gaussian noise
 * of noise_kev per sample is added to every channel, and the result is
 * digitised: round(baseline + gain * keV), clipped to the 14-bit range
 * 0 .. 16383 (status bit SIM_STATUS_SATURATED when a sample clips).
 * Channels: segments 0-35 and the core's high gain (channel 37) at
 * `gain`, the core's low gain (channel 36) at `core_low_gain`.
 *
 * Energies (the front-end's trapezoidal filter, not computed from the
 * traces): true energy plus Gaussian smearing with
 *   FWHM(E) = sqrt(fwhm_0^2 + (fwhm_1332^2 - fwhm_0^2) * E / 1332.5 keV)
 * per segment (segments without charge get the E = 0 width) and for each
 * of the two core energies, independently.
 */
#ifndef TUSK_SIMRESPONSE_H
#define TUSK_SIMRESPONSE_H

#include <tusk/export.h>

#include <stddef.h>
#include <stdint.h>

#include <tusk/adf_crystal.h>
#include <tusk/basis.h>
#include <tusk/crystal.h>
#include <tusk/error.h>
#include <tusk/params.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SIM_ADC_MAX 16383            /* 14-bit ADC */
#define SIM_STATUS_SATURATED 0x0001u /* data:crystal status: a sample clipped */

typedef struct sim_response_config {
    unsigned pretrigger;   /* samples before the interaction (10) */
    unsigned samples;      /* per channel written; 0: pretrigger + basis samples */
    double noise_kev;      /* sigma of the noise per sample, keV (5) */
    double gain;           /* ADC channels per keV: segments, core high gain (2) */
    double core_low_gain;  /* ADC channels per keV of the core's low gain (0.5) */
    double baseline;       /* ADC channels (2000): room for -1 MeV transients, 7 MeV signals */
    double fwhm_0;         /* energy resolution (FWHM, keV) at 0 (1.0) */
    double fwhm_1332;      /* and at 1332.5 keV (2.0) */
} sim_response_config_t;

/* The defaults above. */
TUSK_INTERNAL void sim_response_config_default(sim_response_config_t *cfg);

/* Read pretrigger, samples, noise_kev, gain, core_low_gain, baseline,
 * fwhm_0 and fwhm_1332 from params over cfg (absent keys keep their
 * value); each is range-checked, messages start with `origin`. */
int sim_response_config_read(sim_response_config_t *cfg, const tusk_params_t *params, const char *origin,
                             tusk_error_t *err);

typedef struct sim_response sim_response_t;

/* Uses (does not own) basis and crystal, which must describe the same
 * crystal: 36 segments, 37 channels. */
TUSK_INTERNAL int sim_response_new(sim_response_t **out, const det_basis_t *basis, const det_crystal_t *crystal,
                                   const sim_response_config_t *cfg, tusk_error_t *err);
TUSK_INTERNAL void sim_response_destroy(sim_response_t **response);

/* Samples per channel of the data:crystal frames made. */
TUSK_INTERNAL unsigned sim_response_samples(const sim_response_t *response);

typedef struct sim_deposit {
    double pos[3];   /* mm, crystal frame, inside the germanium */
    double energy;   /* keV */
    int segment;     /* the collecting segment: sim_response_segment_at(pos) */
} sim_deposit_t;

/* The segment that collects the charge of a deposit at pos (crystal
 * frame): of the 8 basis grid nodes around pos that hold a point, the
 * segment with the largest summed trilinear weight (ties: the lower
 * segment); with none, the segment of the nearest point within three grid
 * steps; with none either, the slab (det_crystal_segment_of, -1 outside
 * the basis' crystal). */
TUSK_INTERNAL int sim_response_segment_at(const sim_response_t *response, const double pos[3]);

/* The interpolated basis signal of a unit deposit at pos in segment:
 * traces[channel * basis samples + sample], 37 channels. */
TUSK_INTERNAL int sim_response_signal(sim_response_t *response, int segment, const double pos[3], float *traces,
                                      tusk_error_t *err);

/* Fill *out (crystal_id left to the caller) for n deposits that happened
 * after_ns (>= 0) after the record's key's timestamp, which marks its
 * sample `pretrigger`. Draws the noise and the smearing from *rng, in a
 * fixed order. */
TUSK_INTERNAL int sim_response_crystal(sim_response_t *response, const sim_deposit_t *deposits, size_t n,
                                       double after_ns, uint64_t *rng, adf_crystal_t *out, tusk_error_t *err);

/* A standard normal deviate (Marsaglia's polar method, one of its pair). */
double sim_gauss(uint64_t *rng);

#ifdef __cplusplus
}
#endif
#endif
