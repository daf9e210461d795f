/* spectrum.h - libtusk-spectra: energy spectra of a gamma-ray array and the
 * analysis of their peaks (photopeak efficiency, peak-to-total).
 *
 * A spec_t accumulates spectra from ADF frames (spec_feed: a buffer of
 * frames, spec_feed_frame: one frame):
 *   core      per crystal, core_energy[0] of every data:psa (standalone or
 *             inside an event:data:psa composite)
 *   singles   the sum of the core spectra
 *   addback   per event, the core energies of the crystals of one cluster
 *             (crystal_id / addback_group) summed: one count per cluster
 *   tracked   the energy of every gamma of the data:tracked frames
 *   truth     the energy of every emitted gamma of the data:truth frames
 * Events: an event:data:psa composite is one event; consecutive standalone
 * data:psa frames with one event number are one event (other frames in
 * between do not end it).
 *
 * spec_write then writes one CSV per spectrum, summary.csv and the
 * pictures into a folder, and prints the summary table (spectra/README.md
 * documents every file, column and definition).
 *
 * Errors: TUSK_EPARAM for a bad setting (the key is named), TUSK_EINVAL for
 * a malformed frame (the byte offset is named), TUSK_EIO for files and
 * gnuplot (the path or script is named), TUSK_ENOMEM. The library keeps no
 * global state and never exits.
 */
#ifndef TUSK_SPECTRUM_H
#define TUSK_SPECTRUM_H

#include <tusk/export.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <tusk/adf_reader.h>
#include <tusk/error.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SPEC_MAX_LINES 32
#define SPEC_MAX_BINS (1u << 22)
#define SPEC_OUT_MAX 1024
/* Crystals in one event:data:psa composite. */
#define SPEC_MAX_EVENT_CRYSTALS 256
/* A truth gamma counts for a line within this distance (keV). */
#define SPEC_LINE_MATCH_KEV 0.5

typedef enum spec_kind {
    SPEC_SINGLES = 0,
    SPEC_ADDBACK = 1,
    SPEC_TRACKED = 2,
    SPEC_TRUTH = 3,
    SPEC_KINDS = 4
} spec_kind_t;

typedef enum spec_format { SPEC_PNG = 0, SPEC_SVG = 1 } spec_format_t;

/* The settings, by key (spec_config_set); defaults from spec_config_init. */
typedef struct spec_config {
    double bin_kev;          /* bin_kev: bin width (1) */
    double max_kev;          /* max_kev: upper end of the range (4096); bins cover [0, max_kev) */
    unsigned addback_group;  /* addback_group: crystals per cluster (3) */
    unsigned n_lines;        /* lines: energies to analyse, keV (none) */
    double lines[SPEC_MAX_LINES];
    double peak_window_kev;  /* peak_window_kev: half-width of the peak region (8) */
    double threshold_kev;    /* threshold_kev: peak-to-total counts bins from here on (10) */
    unsigned n_emitted;      /* emitted: 0 (from the truth), 1 (every line) or one per line */
    double emitted[SPEC_MAX_LINES];
    char out[SPEC_OUT_MAX];  /* out: output folder ("spectra") */
    spec_format_t format;    /* format: png | svg (png) */
    bool plot;               /* plot: draw pictures (yes) */
} spec_config_t;

TUSK_API void spec_config_init(spec_config_t *cfg);

/* Set one setting from its text: TUSK_EPARAM naming the key and the value
 * when the key is unknown or the value malformed or out of range. */
TUSK_API int spec_config_set(spec_config_t *cfg, const char *key, const char *value, tusk_error_t *err);

/* Checks that need every setting (the lines lie inside the range, one
 * emitted count per line). */
TUSK_API int spec_config_check(const spec_config_t *cfg, tusk_error_t *err);

/* The NULL-terminated list of the setting keys. */
TUSK_API const char *const *spec_config_keys(void);

typedef struct spec spec_t;

TUSK_API spec_t *spec_new(const spec_config_t *cfg, tusk_error_t *err);
TUSK_API void spec_destroy(spec_t **spec);
TUSK_API const spec_config_t *spec_config(const spec_t *spec);

/* Frames of one buffer (whole frames). `base_offset` is added to the
 * offsets named in errors. Stops at the first malformed frame. */
TUSK_API int spec_feed(spec_t *spec, const void *data, size_t size, uint64_t base_offset, tusk_error_t *err);
/* One frame, as read by an adf reader. */
TUSK_API int spec_feed_frame(spec_t *spec, const adf_frame_t *frame, tusk_error_t *err);
/* End of data: closes the pending event of standalone data:psa frames. */
TUSK_API void spec_finish(spec_t *spec);

/* ---- what was accumulated ---------------------------------------------------- */
TUSK_API size_t spec_bins(const spec_t *spec);
TUSK_API double spec_bin_centre(const spec_t *spec, size_t bin);
TUSK_API const uint64_t *spec_histogram(const spec_t *spec, spec_kind_t kind);
TUSK_API const char *spec_kind_name(spec_kind_t kind);
/* Crystals seen (ids in increasing order) and their core spectra. */
TUSK_API size_t spec_crystals(const spec_t *spec);
TUSK_API unsigned spec_crystal_id(const spec_t *spec, size_t i);
TUSK_API const uint64_t *spec_core(const spec_t *spec, size_t i);

typedef struct spec_stats {
    uint64_t frames;          /* frames seen, composites and their contents included */
    uint64_t psa_frames;      /* data:psa, standalone or in composites */
    uint64_t composites;      /* event:data:psa */
    uint64_t events;          /* events for addback */
    uint64_t tracked_frames, tracked_gammas;
    uint64_t truth_frames, truth_gammas;
    uint64_t max_decay;       /* largest decay index seen (valid when truth_frames > 0) */
    uint64_t eof_frames;      /* meta:eof */
    uint64_t ignored_frames;  /* frames of other types, counted and ignored */
    uint32_t ignored_type[8]; /* the first distinct ignored types */
    uint64_t ignored_count[8];
    unsigned n_ignored_types; /* distinct ignored types (beyond 8: counted in ignored_frames only) */
    uint64_t underflow[SPEC_KINDS], overflow[SPEC_KINDS]; /* < 0 or not a number, >= max_kev */
} spec_stats_t;

TUSK_API const spec_stats_t *spec_stats(const spec_t *spec);

/* Emitted gammas of configured line `line`: the `emitted` setting, else
 * from the truth frames (decays x mean count per truth frame within
 * SPEC_LINE_MATCH_KEV). false when neither is there. */
TUSK_API bool spec_emitted(const spec_t *spec, unsigned line, double *emitted);

/* ---- peaks (peaks.c) ----------------------------------------------------------- */
typedef struct spec_peak {
    double line_kev;
    double position_kev;  /* fitted centre (NAN when no fit) */
    double fwhm_kev;      /* fitted FWHM (NAN when no fit) */
    double area;          /* net counts in the peak region above the background */
    double area_error;    /* its statistical error (sqrt of gross + background variance) */
    double background;    /* counts of the linear background under the peak region */
    bool fitted;          /* the Gaussian fit converged */
} spec_peak_t;

/* Analyse the peak at `line_kev` of a histogram of `nbins` bins of width
 * `bin_kev` from 0: peak region line +- window, side bands of the same
 * width on both sides, linear background by least squares over the side
 * bands, net area, then a bin-integrated Gaussian fit over the region for
 * position and FWHM. TUSK_EINVAL when the region or its side bands leave
 * the histogram. */
TUSK_API int spec_peak_analyse(const uint64_t *counts, size_t nbins, double bin_kev, double line_kev, double window_kev,
                               spec_peak_t *peak, tusk_error_t *err);

/* Counts in the bins whose centre is >= threshold_kev. */
TUSK_API uint64_t spec_total_counts(const uint64_t *counts, size_t nbins, double bin_kev, double threshold_kev);

/* One row of summary.csv. */
typedef struct spec_row {
    spec_kind_t kind;
    spec_peak_t peak;
    double emitted;       /* NAN: not available */
    double efficiency;    /* area / emitted, NAN: not available */
    double peak_to_total; /* sum of this spectrum's line areas / total_counts */
    uint64_t total_counts;
} spec_row_t;

/* The rows of the summary: for singles, addback and tracked (those with
 * counts), one per line. `rows` has room for 3 x SPEC_MAX_LINES. */
TUSK_API int spec_summary(const spec_t *spec, spec_row_t *rows, size_t *n_rows, tusk_error_t *err);

/* ---- output ------------------------------------------------------------------ */

/* Write `dir` (created if missing; cfg->out when dir is NULL): core.csv,
 * singles.csv, addback.csv, tracked.csv, truth.csv, summary.csv and, with
 * plot = yes, the pictures; print the summary table and the frame counts to
 * `report` (may be NULL). */
TUSK_API int spec_write(spec_t *spec, const char *dir, FILE *report, tusk_error_t *err);

TUSK_API int spec_write_spectra(const spec_t *spec, const char *dir, tusk_error_t *err);
TUSK_API int spec_write_summary(const spec_row_t *rows, size_t n_rows, const char *path, tusk_error_t *err);
TUSK_API void spec_print_report(const spec_t *spec, const spec_row_t *rows, size_t n_rows, FILE *fp);

/* spectra_plot.c: DIR/spectra.FMT (singles, addback and tracked, log
 * scale) and, with lines configured, DIR/lines.FMT (a zoom on them), with
 * their .dat and .gp next to them. gnuplot is $TUSK_GNUPLOT or "gnuplot";
 * a missing or failing one is TUSK_EIO naming the script. */
TUSK_API int spec_plot(const spec_t *spec, const char *dir, tusk_error_t *err);

/* spec_write.c: the live picture of a run going on, for tusk-run's status
 * page (distributed/web.h): spec_plot drawn into DIR/.draw (made if
 * missing), then each picture (spectra.FMT, lines.FMT) renamed into DIR,
 * so that a reader sees the previous picture or the new one, whole. The
 * spectra as they are: an event still open is not in them. */
TUSK_API int spec_write_live(const spec_t *spec, const char *dir, tusk_error_t *err);

#ifdef __cplusplus
}
#endif
#endif
