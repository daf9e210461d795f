/* spectra.c - consumer: energy spectra and peak analysis (spectra/,
 * tusk/spectrum.h) at the end of the chain.
 *
 * Every buffer's frames are added to the spectra (core per crystal,
 * singles, addback, tracked, truth); a malformed frame is
 * TUSK_ACTOR_EDATA naming its offset in the input stream (bytes received
 * by this instance before it) and the buffer's number. Frames of other
 * types are counted and reported at the end.
 *
 * At process_stop the instance writes its files into `out` (with several
 * instances, each writes into out/instance-N: each sees only its share of
 * the events, so its efficiency is its share too; add the areas), prints
 * the summary table and where the files are to stdout. A failure to
 * write is TUSK_ACTOR_EIO naming the file (or gnuplot's script).
 *
 * Parameters: the settings of spectra/README.md (bin_kev, max_kev,
 * addback_group, lines, peak_window_kev, threshold_kev, emitted, out,
 * format, plot), and `live`: every so many seconds of a run (and at its
 * stop) the spectra so far are drawn into the folder live/ of the
 * instance's configuration folder (spec_write_live), which tusk-run's
 * status page shows (distributed/web.h); 0: never. A live picture that
 * cannot be drawn is said once on stderr, never fatal.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AK_CONSUMER
#include "tusk/actorkit.h"
#include "tusk/spectrum.h"
#include "base/clock.h"

TUSK_ACTOR_DECLARE("spectra", "energy spectra (core, singles, addback, tracked, truth) and peak analysis",
                   "bin_kev: bin width, keV (1)\n"
                   "max_kev: the spectra cover 0 to max_kev (4096)\n"
                   "addback_group: crystals per cluster, cluster = crystal_id / N (3)\n"
                   "lines: energies to analyse, keV, e.g. \"1173.2 1332.5\" (none)\n"
                   "peak_window_kev: half-width of a peak region, side bands as wide on both sides (8)\n"
                   "threshold_kev: peak-to-total counts the bins from this energy on (10)\n"
                   "emitted: emitted gammas, one count for all lines or one per line (from data:truth)\n"
                   "out: output folder; out/instance-N with several instances (spectra)\n"
                   "format: png | svg (png)\n"
                   "plot: draw pictures with gnuplot (yes)\n"
                   "live: seconds between live pictures during a run, for tusk-run's status page; 0 never (5)\n");

typedef struct spectra_settings {
    uint64_t live_s;
} spectra_settings_t;

typedef struct spectra_actor {
    ak_base_t base;
    spec_config_t cfg;
    char dir[SPEC_OUT_MAX + 32];
    spec_t *spec;
    uint64_t buffers, offset;
    spectra_settings_t set;
    char live_dir[SPEC_OUT_MAX];  /* CONFIG_FOLDER/live ("": none) */
    uint64_t next_live_ms;
    bool live_failed;             /* said once */
} spectra_actor_t;

AK_STANDARD_HOOKS(spectra_actor_t)

static void free_actor(spectra_actor_t *a)
{
    if (!a)
        return;
    spec_destroy(&a->spec);
    free(a);
}

void *process_register_dir(const char *directory_path, char *message, unsigned int message_size,
                           unsigned int *error_code)
{
    static const ak_param_t params[] = {
        AK_LIBRARY(spec_config_keys),
        AK_U64("live", spectra_settings_t, live_s, 5, 0, 86400),
        AK_PARAMS_END,
    };
    ak_config_t cfg;
    spectra_actor_t *a = NULL;
    spectra_settings_t set;
    if (!ak_config_open(&cfg, directory_path, "spectra", params, &set, message, message_size, error_code))
        goto fail;
    a = calloc(1, sizeof *a);
    if (!a) {
        ak_config_fail(&cfg, TUSK_ACTOR_ERESOURCE, "out of memory");
        goto fail;
    }
    if (!ak_config_base(&cfg, &a->base))
        goto fail;
    spec_config_init(&a->cfg);
    tusk_error_t err;
    for (size_t i = 0; i < tusk_params_count(cfg.params); i++) {
        const char *key = tusk_params_key(cfg.params, i);
        if (tusk_params_is_host_key(key) || strcmp(key, "live") == 0)
            continue;
        if (spec_config_set(&a->cfg, key, tusk_params_value(cfg.params, i), &err) != TUSK_OK) {
            ak_config_fail(&cfg, TUSK_ACTOR_ECONFIG, "parameter '%s': %s", key, err.message);
            goto fail;
        }
    }
    if (spec_config_check(&a->cfg, &err) != TUSK_OK) {
        ak_config_fail(&cfg, TUSK_ACTOR_ECONFIG, "%s", err.message);
        goto fail;
    }
    if (a->base.instances > 1)
        snprintf(a->dir, sizeof a->dir, "%s/instance-%u", a->cfg.out, a->base.instance);
    else
        snprintf(a->dir, sizeof a->dir, "%s", a->cfg.out);
    a->set = set;
    if (a->set.live_s && a->cfg.plot && directory_path &&
        (size_t)snprintf(a->live_dir, sizeof a->live_dir, "%s/live", directory_path) >= sizeof a->live_dir)
        a->live_dir[0] = '\0';
    ak_config_close(&cfg);
    return a;
fail:
    free_actor(a);
    ak_config_close(&cfg);
    return NULL;
}

/* A fresh set of spectra for every run. */
void process_initialise(void *algo_data, unsigned int *error_code)
{
    spectra_actor_t *a = algo_data;
    ak_ok(error_code);
    spec_destroy(&a->spec);
    tusk_error_t err;
    if (!(a->spec = spec_new(&a->cfg, &err)))
        ak_fail(&a->base, error_code, err.code == TUSK_ENOMEM ? TUSK_ACTOR_ERESOURCE : TUSK_ACTOR_ECONFIG, "%s",
                err.message);
    a->buffers = a->offset = 0;
    a->next_live_ms = tusk_clock_ms() + a->set.live_s * 1000;
}

/* The live picture (see the top), when it is due or `now`. */
static void draw_live(spectra_actor_t *a, bool now)
{
    if (!a->live_dir[0] || !a->spec || (!now && tusk_clock_ms() < a->next_live_ms))
        return;
    tusk_error_t err;
    if (spec_write_live(a->spec, a->live_dir, &err) != TUSK_OK && !a->live_failed) {
        fprintf(stderr, "spectra %s: no live pictures (the run goes on): %s\n", a->base.label, err.message);
        a->live_failed = true;
    }
    a->next_live_ms = tusk_clock_ms() + a->set.live_s * 1000;
}

void process_block(void *algo_data, void *input_buffer, unsigned int size_of_input_buffer,
                   unsigned int *error_code)
{
    spectra_actor_t *a = algo_data;
    ak_ok(error_code);
    if (!a->spec) {
        ak_fail(&a->base, error_code, TUSK_ACTOR_ESTATE, "process_block before process_initialise");
        return;
    }
    if (!input_buffer)
        size_of_input_buffer = 0;
    a->buffers++;
    tusk_error_t err;
    if (spec_feed(a->spec, input_buffer, size_of_input_buffer, a->offset, &err) != TUSK_OK)
        ak_fail(&a->base, error_code, err.code == TUSK_ENOMEM ? TUSK_ACTOR_ERESOURCE : TUSK_ACTOR_EDATA,
                "input buffer %llu (%u bytes; input offsets count the bytes this instance received): %s",
                (unsigned long long)a->buffers, size_of_input_buffer, err.message);
    a->offset += size_of_input_buffer;
    draw_live(a, false);
}

void process_stop(void *algo_data, unsigned int *error_code)
{
    spectra_actor_t *a = algo_data;
    ak_ok(error_code);
    if (!a->spec)
        return;
    tusk_error_t err;
    printf("spectra %s: %llu buffers, %llu bytes\n", a->base.label, (unsigned long long)a->buffers,
           (unsigned long long)a->offset);
    if (spec_write(a->spec, a->dir, stdout, &err) != TUSK_OK) {
        ak_fail(&a->base, error_code, err.code == TUSK_ENOMEM ? TUSK_ACTOR_ERESOURCE : TUSK_ACTOR_EIO, "%s",
                err.message);
        fflush(stdout);
        return;
    }
    printf("spectra %s: files in %s/ (summary.csv, core.csv, singles.csv, addback.csv, tracked.csv, truth.csv%s)\n",
           a->base.label, a->dir, a->cfg.plot ? (a->cfg.format == SPEC_SVG ? ", spectra.svg" : ", spectra.png") : "");
    fflush(stdout);
    draw_live(a, true); /* the run's last picture, every event in it */
}

void process_reset(void *algo_data, unsigned int *error_code)
{
    spectra_actor_t *a = algo_data;
    ak_ok(error_code);
    spec_destroy(&a->spec);
}

void process_unload(void *algo_data, unsigned int *error_code)
{
    ak_ok(error_code);
    free_actor(algo_data);
}
