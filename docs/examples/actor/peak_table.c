/* peak_table.c - an example tusk actor, and a template to copy.
 *
 * A consumer: it fills energy spectra (libtusk-spectra) from the ADF
 * frames it is given and, when the run stops, writes them with their peak
 * table (summary.csv) into a folder. Every parameter is a setting of
 * libtusk-spectra (out, lines, bin_kev, max_kev, ...; plot defaults to no
 * here), so a misspelt key is refused with the list of the known ones.
 *
 * What a tusk actor does, in order (tusk_actor.h(3) has the whole
 * interface):
 *   - TUSK_ACTOR_DECLARE: its name, a summary and its parameters, for
 *     `tusk-emulate --describe` and the ABI check;
 *   - process_config, then process_register_dir: read the instance's
 *     parameters from DIR/parameters.conf and return its state (no global
 *     state: instances are independent);
 *   - process_initialise before a run, process_block once per buffer,
 *     process_stop at its end, process_unload last;
 *   - on failure: a status (tusk/actor.h) and a message for the host
 *     (process_error_message), never exit().
 *
 * Build: `make` (the Makefile next to this file, with pkg-config). Run:
 * `make run` (tusk-emulate on topology.xml). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tusk/actor.h>
#include <tusk/params.h>
#include <tusk/spectrum.h>

TUSK_ACTOR_DECLARE("peak_table", "energy spectra and their peak table, written when the run stops (an example)",
                   "out: output folder (peak_table)\n"
                   "lines: energies to analyse, keV (none)\n"
                   "plot: draw pictures with gnuplot (no)\n"
                   "any other setting of libtusk-spectra: bin_kev, max_kev, peak_window_kev, ...\n");

typedef struct peak_table {
    char label[96];       /* "NAME[INSTANCE]", for messages */
    char message[512];    /* the last failure, for process_error_message */
    spec_config_t cfg;
    spec_t *spec;
    uint64_t buffers, bytes;
} peak_table_t;

/* Record a failure: the status for the host, the words for the user. */
static void fail(peak_table_t *a, unsigned int *error_code, unsigned int status, const char *what, const char *why)
{
    snprintf(a->message, sizeof a->message, "%s: %s%s%s", a->label, what, why ? ": " : "", why ? why : "");
    *error_code = status;
}

/* Everything is read in process_register_dir, per instance. */
TUSK_ACTOR_EXPORT void process_config(const char *directory_path, unsigned int *error_code)
{
    (void)directory_path;
    *error_code = TUSK_ACTOR_OK;
}

TUSK_ACTOR_EXPORT void *process_register_dir(const char *directory_path, char *message, unsigned int message_size,
                                             unsigned int *error_code)
{
    tusk_params_t *p = NULL;
    tusk_error_t err;
    peak_table_t *a = calloc(1, sizeof *a);
    if (!a) {
        snprintf(message, message_size, "peak_table: out of memory");
        *error_code = TUSK_ACTOR_ERESOURCE;
        return NULL;
    }
    if (tusk_params_load(&p, directory_path, &err) != TUSK_OK) {
        snprintf(message, message_size, "peak_table: %s", err.message);
        *error_code = TUSK_ACTOR_ECONFIG;
        free(a);
        return NULL;
    }
    snprintf(a->label, sizeof a->label, "%s[%s]", tusk_params_string(p, "actor", "peak_table"),
             tusk_params_string(p, "instance", "0"));
    spec_config_init(&a->cfg);
    snprintf(a->cfg.out, sizeof a->cfg.out, "peak_table");
    a->cfg.plot = false;
    /* Every key but the host's (actor, instance, instances) is a setting
     * of the library, which refuses unknown ones and bad values. */
    *error_code = TUSK_ACTOR_OK;
    for (size_t i = 0; i < tusk_params_count(p) && *error_code == TUSK_ACTOR_OK; i++) {
        const char *key = tusk_params_key(p, i);
        if (!tusk_params_is_host_key(key) && spec_config_set(&a->cfg, key, tusk_params_value(p, i), &err) != TUSK_OK)
            fail(a, error_code, TUSK_ACTOR_ECONFIG, "bad parameter", err.message);
    }
    if (*error_code == TUSK_ACTOR_OK && spec_config_check(&a->cfg, &err) != TUSK_OK)
        fail(a, error_code, TUSK_ACTOR_ECONFIG, "bad parameters", err.message);
    tusk_params_destroy(&p);
    if (*error_code != TUSK_ACTOR_OK) {
        snprintf(message, message_size, "%s", a->message);
        free(a);
        return NULL;
    }
    return a;
}

TUSK_ACTOR_EXPORT const char *process_error_message(void *algo_data)
{
    return algo_data ? ((peak_table_t *)algo_data)->message : "peak_table: configuration failed";
}

/* A fresh set of spectra for every run. */
TUSK_ACTOR_EXPORT void process_initialise(void *algo_data, unsigned int *error_code)
{
    peak_table_t *a = algo_data;
    tusk_error_t err;
    *error_code = TUSK_ACTOR_OK;
    spec_destroy(&a->spec);
    a->buffers = a->bytes = 0;
    if (!(a->spec = spec_new(&a->cfg, &err)))
        fail(a, error_code, TUSK_ACTOR_ERESOURCE, "cannot make the spectra", err.message);
}

/* A consumer's process_block: one input buffer of whole ADF frames. */
TUSK_ACTOR_EXPORT void process_block(void *algo_data, void *input_buffer, unsigned int size_of_input_buffer,
                                     unsigned int *error_code)
{
    peak_table_t *a = algo_data;
    tusk_error_t err;
    *error_code = TUSK_ACTOR_OK;
    a->buffers++;
    if (spec_feed(a->spec, input_buffer, size_of_input_buffer, a->bytes, &err) != TUSK_OK)
        fail(a, error_code, TUSK_ACTOR_EDATA, "a malformed frame", err.message);
    a->bytes += size_of_input_buffer;
}

/* The end of the run: the spectra and the peak table. */
TUSK_ACTOR_EXPORT void process_stop(void *algo_data, unsigned int *error_code)
{
    peak_table_t *a = algo_data;
    tusk_error_t err;
    *error_code = TUSK_ACTOR_OK;
    if (!a->spec)
        return;
    spec_finish(a->spec);
    printf("%s: %llu buffers, %llu bytes\n", a->label, (unsigned long long)a->buffers, (unsigned long long)a->bytes);
    if (spec_write(a->spec, NULL, stdout, &err) != TUSK_OK)
        fail(a, error_code, TUSK_ACTOR_EIO, "cannot write the spectra", err.message);
    else
        printf("%s: spectra and summary.csv in %s/\n", a->label, a->cfg.out);
    fflush(stdout);
}

TUSK_ACTOR_EXPORT void process_unload(void *algo_data, unsigned int *error_code)
{
    peak_table_t *a = algo_data;
    *error_code = TUSK_ACTOR_OK;
    spec_destroy(&a->spec);
    free(a);
}
