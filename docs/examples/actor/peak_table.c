/* peak_table.c - an example tusk actor, and a template to copy.
 *
 * A consumer: it fills energy spectra (libtusk-spectra) from the ADF
 * frames it is given and, when the run stops, writes them with their peak
 * table (summary.csv) into a folder. Its parameters are the settings of
 * libtusk-spectra (out, lines, bin_kev, max_kev, ...; plot defaults to no
 * here) and one of its own, `quiet`; a misspelt key is refused with the
 * list of the known ones.
 *
 * It is written on libtusk-actorkit (tusk/actorkit.h): the instance's
 * label and message (ak_base_t, ak_fail), the parameter table read by
 * ak_config_open, and the hooks every actor writes the same way
 * (AK_STANDARD_HOOKS). A filter would copy whole frames with
 * ak_copy_frames, which resumes after TUSK_ACTOR_MORE_OUTPUT.
 *
 * What a tusk actor does, in order (tusk_actor.h(3) has the whole
 * interface):
 *   - TUSK_ACTOR_DECLARE: its name, a summary and its parameters, for
 *     `tusk-emulate --describe` and the ABI check;
 *   - process_config (nothing to do here), then process_register_dir:
 *     read the instance's parameters from DIR/parameters.conf and return
 *     its state (no global state: instances are independent);
 *   - process_initialise before a run, process_block once per buffer,
 *     process_stop at its end, process_unload last;
 *   - on failure: a status (tusk/actor.h) and a message for the host
 *     (process_error_message), never exit().
 *
 * Build: `make` (the Makefile next to this file, with pkg-config). Run:
 * `make run` (tusk-emulate on topology.xml). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The hooks of a consumer, declared (and exported) by actorkit.h. */
#define AK_CONSUMER
#include <tusk/actor.h>
#include <tusk/actorkit.h>
#include <tusk/params.h>
#include <tusk/spectrum.h>

TUSK_ACTOR_DECLARE("peak_table", "energy spectra and their peak table, written when the run stops (an example)",
                   "out: output folder (peak_table)\n"
                   "lines: energies to analyse, keV (none)\n"
                   "plot: draw pictures with gnuplot (no)\n"
                   "quiet: no table on standard output, the files only (no)\n"
                   "any other setting of libtusk-spectra: bin_kev, max_kev, peak_window_kev, ...\n");

/* The settings of its own, filled by ak_config_open from the table. */
typedef struct peak_table_settings {
    bool quiet;
} peak_table_settings_t;

typedef struct peak_table {
    ak_base_t base; /* label "NAME[INSTANCE]" and the last failure: AK_STANDARD_HOOKS wants it first, as `base` */
    peak_table_settings_t set;
    spec_config_t cfg;
    spec_t *spec;
    uint64_t buffers, bytes;
} peak_table_t;

/* process_config (nothing: everything is read per instance, below),
 * process_register (refused: the plain NARVAL hook gets no folder) and
 * process_error_message (the instance's ak_base_t). */
AK_STANDARD_HOOKS(peak_table_t)

void *process_register_dir(const char *directory_path, char *message, unsigned int message_size,
                           unsigned int *error_code)
{
    /* Its own key, and every key libtusk-spectra takes: any other is
     * refused, naming it and the known ones. */
    static const ak_param_t params[] = {
        AK_BOOL("quiet", peak_table_settings_t, quiet, false),
        AK_LIBRARY(spec_config_keys),
        AK_PARAMS_END,
    };
    if (ak_version() / 1000 != TUSK_ACTORKIT_VERSION_MAJOR) {
        snprintf(message, message_size, "peak_table: built for libtusk-actorkit %d, runs with %u",
                 TUSK_ACTORKIT_VERSION, ak_version());
        *error_code = TUSK_ACTOR_ECONFIG;
        return NULL;
    }
    ak_config_t cfg;
    peak_table_settings_t set;
    peak_table_t *a = NULL;
    tusk_error_t err;
    if (!ak_config_open(&cfg, directory_path, "peak_table", params, &set, message, message_size, error_code))
        goto fail;
    if (!(a = calloc(1, sizeof *a))) {
        ak_config_fail(&cfg, TUSK_ACTOR_ERESOURCE, "out of memory");
        goto fail;
    }
    if (!ak_config_base(&cfg, &a->base))
        goto fail;
    a->set = set;
    spec_config_init(&a->cfg);
    snprintf(a->cfg.out, sizeof a->cfg.out, "peak_table");
    a->cfg.plot = false;
    /* The library's keys go to the library, which checks their values. */
    for (size_t i = 0; i < tusk_params_count(cfg.params); i++) {
        const char *key = tusk_params_key(cfg.params, i);
        if (tusk_params_is_host_key(key) || strcmp(key, "quiet") == 0)
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
    ak_config_close(&cfg);
    return a;
fail:
    free(a);
    ak_config_close(&cfg);
    return NULL;
}

/* A fresh set of spectra for every run. */
void process_initialise(void *algo_data, unsigned int *error_code)
{
    peak_table_t *a = algo_data;
    tusk_error_t err;
    ak_ok(error_code);
    spec_destroy(&a->spec);
    a->buffers = a->bytes = 0;
    if (!(a->spec = spec_new(&a->cfg, &err)))
        ak_fail(&a->base, error_code, TUSK_ACTOR_ERESOURCE, "cannot make the spectra: %s", err.message);
}

/* A consumer's process_block: one input buffer of whole ADF frames. */
void process_block(void *algo_data, void *input_buffer, unsigned int size_of_input_buffer, unsigned int *error_code)
{
    peak_table_t *a = algo_data;
    tusk_error_t err;
    ak_ok(error_code);
    if (!a->spec) {
        ak_fail(&a->base, error_code, TUSK_ACTOR_ESTATE, "process_block before process_initialise");
        return;
    }
    a->buffers++;
    if (spec_feed(a->spec, input_buffer, size_of_input_buffer, a->bytes, &err) != TUSK_OK)
        ak_fail(&a->base, error_code, TUSK_ACTOR_EDATA, "a malformed frame: %s", err.message);
    a->bytes += size_of_input_buffer;
}

/* The end of the run: the spectra and the peak table. */
void process_stop(void *algo_data, unsigned int *error_code)
{
    peak_table_t *a = algo_data;
    tusk_error_t err;
    ak_ok(error_code);
    if (!a->spec)
        return;
    spec_finish(a->spec);
    printf("%s: %llu buffers, %llu bytes\n", a->base.label, (unsigned long long)a->buffers,
           (unsigned long long)a->bytes);
    if (spec_write(a->spec, NULL, a->set.quiet ? NULL : stdout, &err) != TUSK_OK)
        ak_fail(&a->base, error_code, TUSK_ACTOR_EIO, "cannot write the spectra: %s", err.message);
    else
        printf("%s: spectra and summary.csv in %s/\n", a->base.label, a->cfg.out);
    fflush(stdout);
}

void process_unload(void *algo_data, unsigned int *error_code)
{
    peak_table_t *a = algo_data;
    ak_ok(error_code);
    spec_destroy(&a->spec);
    free(a);
}
