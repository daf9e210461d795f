/* sim.h - the gamma-ray event simulation (libtusk-sim): a source at the
 * centre of an array of crystals, photon transport through the array and
 * the crystals' detector response, producing data:crystal frames and
 * their data:truth (adf/FORMAT.md). Used by the gamma_sim producer actor
 * and by tusk-sim.
 *
 * Per decay of the source (sim/simsource.h), every gamma starts at the
 * target. It is followed through the array (tusk/array.h) by delta
 * tracking: free paths drawn with germanium's attenuation along the
 * chords of the crystals' envelopes, a tentative point accepted inside
 * the germanium (the core hole is vacuum) and, with the ratio of their
 * attenuations, in the aluminium of capsules and cryostats (AGATA's
 * layout); interactions as in sim/transport.h (photo, Compton by
 * Klein-Nishina, pair with annihilation photons, Rayleigh with the atomic
 * form factor); a photon leaving a crystal may enter another. Electrons
 * deposit where they are made; what is left in aluminium is lost
 * (sim_event_t.passive_kev). No target chamber, beam pipe or detector
 * holders.
 *
 * A deposit's segment is the one that collects its charge, from the basis
 * (sim/simresponse.h: sim_response_segment_at), in data:crystal's segment
 * energies and in data:truth alike.
 *
 * A crystal whose deposits add up to at least trigger_kev is read out
 * (sim/simresponse.h). A decay with at least one crystal read out is an
 * event: its frames carry a consecutive event number (from 0) and the
 * decay's timestamp; the rest are counted, not written.
 *
 * Settings (tusk/params.h `key = value`; unknown keys are refused):
 *   basis = FILE        the signal basis (tusk-basis gen); its crystal is
 *                       every crystal of the array (required)
 *   array = FILE        the array geometry (required)
 *   events = N          source decays to simulate (1000); 0: no limit
 *   seed = S            64-bit seed (1): the same seed, configuration and
 *                       basis give byte-identical output
 *   trigger_kev = E     read a crystal out from this deposit on (10)
 *   truth = yes|no      write data:truth frames (yes)
 *   rayleigh = form_factor|thomson
 *                       Rayleigh angles with germanium's and aluminium's
 *                       atomic form factors (form_factor), or without them
 *                       (thomson: as tusk did before issue 22, for
 *                       comparisons)
 *   + the source's keys (sim/simsource.h) and the response's
 *     (sim/simresponse.h)
 * sim_config_load takes the file's relative basis and array paths from
 * its folder; paths set otherwise are used as given.
 */
#ifndef TUSK_SIM_H
#define TUSK_SIM_H

#include <tusk/export.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <tusk/adf_crystal.h>
#include <tusk/adf_truth.h>
#include <tusk/adf_writer.h>
#include <tusk/error.h>
#include <tusk/params.h>
#include <tusk/array.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sim sim_t;

typedef struct sim_event {
    uint32_t event;            /* consecutive, from 0 */
    uint64_t timestamp;        /* 10 ns ticks */
    double after_ns;           /* the decay's time after the timestamp, [0, 10) ns: every record's traces
                                  have it after their sample `pretrigger` */
    uint64_t decay;            /* source decay it came from */
    size_t n_crystals;         /* read out */
    const adf_crystal_t *crystal; /* n_crystals, by crystal id */
    const adf_truth_t *truth;  /* all interaction points, read out or not */
    double emitted_kev;        /* energy of the gammas emitted */
    double deposited_kev;      /* in all crystals */
    double escaped_kev;        /* left the array */
    double passive_kev;        /* left in capsules and cryostats: emitted = deposited + escaped + passive */
} sim_event_t;

typedef struct sim_stats {
    uint64_t decays;           /* simulated */
    uint64_t gammas;           /* emitted */
    uint64_t events;           /* with a crystal read out */
    uint64_t crystals;         /* data:crystal records made */
    uint64_t points;           /* interaction points */
    uint64_t truth_truncated;  /* events with more points than a truth frame holds (flag bit 1) */
    double emitted_kev, deposited_kev, escaped_kev, passive_kev;
} sim_stats_t;

/* Truth frame flag: points beyond ADF_TRUTH_MAX_POINTS were left out. */
#define SIM_TRUTH_TRUNCATED 0x0001u

/* The keys sim_new reads (NULL-terminated), for tusk_params_expect. */
TUSK_API const char *const *sim_known_keys(void);

/* Read a configuration file into *out (`key = value` lines); relative
 * basis and array paths in it become paths from the file's folder. */
TUSK_API int sim_config_load(tusk_params_t **out, const char *path, tusk_error_t *err);

/* `origin` names the configuration in messages. */
TUSK_API int sim_new(sim_t **out, const tusk_params_t *params, const char *origin, tusk_error_t *err);
TUSK_API void sim_destroy(sim_t **sim);

/* Simulate decays until one is an event: *ev points to it (valid until
 * the next call), or NULL when `events` decays have been simulated. */
TUSK_API int sim_next(sim_t *sim, const sim_event_t **ev, tusk_error_t *err);

/* One emitted gamma of a decay: its energy and what it and everything
 * it made (scattered photons, annihilation photons) left in germanium. */
typedef struct sim_gamma_tally {
    double energy_kev;
    double germanium_kev;
} sim_gamma_tally_t;

/* For efficiencies: the next decay's transport only - no read-out, no
 * frames, no trigger - and what each of its gammas deposited in
 * germanium: *n entries of *tally, valid until the next call (*n = 0 and
 * NULL once `events` decays are done). A gamma is fully absorbed when
 * germanium_kev equals energy_kev (up to rounding: 1e-6 relative). The
 * decays count in sim_stats as sim_next's do; do not mix the two in one
 * run. */
TUSK_API int sim_next_transport(sim_t *sim, const sim_gamma_tally_t **tally, size_t *n, tusk_error_t *err);

/* Back to the seed and decay 0: the same events again. */
TUSK_API void sim_rewind(sim_t *sim);

/* Write the event's data:crystal frames, then (truth = yes) its
 * data:truth frame. ADF_EFULL from the writer comes back as TUSK_ELIMIT;
 * sim_event_bytes_max bytes always suffice. */
TUSK_API int sim_encode(const sim_t *sim, const sim_event_t *ev, adf_writer_t *writer, tusk_error_t *err);
TUSK_API size_t sim_event_bytes_max(const sim_t *sim);

TUSK_API sim_stats_t sim_stats(const sim_t *sim);
TUSK_API const array_t *sim_array(const sim_t *sim);
/* Samples per channel of the data:crystal frames. */
TUSK_API unsigned sim_samples(const sim_t *sim);
/* What is simulated, a few lines. */
TUSK_API const char *sim_describe(const sim_t *sim);

#ifdef __cplusplus
}
#endif
#endif
