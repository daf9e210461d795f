/* gamma_sim.c - producer: the gamma-ray event simulation (tusk/sim.h).
 *
 * Parameters:
 *   config    a simulation configuration file (config/sim-co60.conf);
 *             its relative paths are taken from its folder
 *   any key of the simulation (basis, array, source, events, seed, ...),
 *             overriding the file's; relative paths from the working
 *             directory. Without `config`, basis, array and source are
 *             required here.
 * Instance k of several simulates with seed + k, so load-sharing
 * producers make different events (their event numbers and timestamps
 * overlap: each is a run of its own).
 *
 * Each call fills the output buffer with whole events (an event's
 * data:crystal frames and its data:truth frame are never split across
 * buffers); an event larger than the whole buffer is TUSK_ACTOR_EDATA
 * naming both sizes. The last call returns TUSK_ACTOR_END_OF_DATA.
 * process_stop prints one summary line on stderr; process_reset starts
 * the same events again.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AK_PRODUCER
#include "tusk/actorkit.h"
#include "tusk/sim.h"

TUSK_ACTOR_DECLARE("gamma_sim", "simulates gamma-ray events in an array: data:crystal and data:truth frames",
                   "config: simulation configuration file (keys in sim/README.md)\n"
                   "basis, array, source, events, seed, ...: simulation keys, overriding the file's\n");

typedef struct producer {
    ak_base_t base;
    sim_t *sim;
    adf_writer_t *writer;
    uint8_t *staged;        /* the event that did not fit the last buffer */
    size_t staged_cap, staged_size;
    uint32_t staged_event;
    bool ended;
} producer_t;

/* The parameters: a configuration file, and the simulation's keys over it. */
typedef struct settings {
    const char *config;
} settings_t;

static const ak_param_t params[] = {
    AK_STRING("config", settings_t, config, NULL),
    AK_LIBRARY(sim_known_keys),
    AK_PARAMS_END,
};

AK_STANDARD_HOOKS(producer_t)

static void free_producer(producer_t *p)
{
    if (!p)
        return;
    sim_destroy(&p->sim);
    adf_writer_destroy(&p->writer);
    free(p->staged);
    free(p);
}

/* The simulation's parameters: the file's, then the topology's over them. */
static bool sim_params(ak_config_t *cfg, const char *file, tusk_params_t **out, uint64_t instance)
{
    tusk_error_t err;
    if (file) {
        if (sim_config_load(out, file, &err) != TUSK_OK)
            return ak_config_fail(cfg, TUSK_ACTOR_ECONFIG, "parameter 'config': %s", err.message);
    } else if (!(*out = tusk_params_new())) {
        return ak_config_fail(cfg, TUSK_ACTOR_ERESOURCE, "out of memory");
    }
    for (size_t i = 0; i < tusk_params_count(cfg->params); i++) {
        const char *k = tusk_params_key(cfg->params, i);
        if (!strcmp(k, "config") || tusk_params_is_host_key(k))
            continue;
        if (tusk_params_set(*out, k, tusk_params_value(cfg->params, i), &err) != TUSK_OK)
            return ak_config_fail(cfg, TUSK_ACTOR_ECONFIG, "%s", err.message);
    }
    if (instance) {
        uint64_t seed;
        char text[32];
        if (tusk_params_u64(*out, "seed", 1, &seed, &err) != TUSK_OK)
            return ak_config_fail(cfg, TUSK_ACTOR_ECONFIG, "%s", err.message);
        snprintf(text, sizeof text, "%llu", (unsigned long long)(seed + instance));
        if (tusk_params_set(*out, "seed", text, &err) != TUSK_OK)
            return ak_config_fail(cfg, TUSK_ACTOR_ECONFIG, "%s", err.message);
    }
    return true;
}

void *process_register_dir(const char *directory_path, char *message, unsigned int message_size,
                           unsigned int *error_code)
{
    ak_config_t cfg;
    settings_t set;
    producer_t *p = NULL;
    tusk_params_t *sim_set = NULL;
    if (!ak_config_open(&cfg, directory_path, "gamma_sim", params, &set, message, message_size, error_code))
        goto fail;
    p = calloc(1, sizeof *p);
    if (!p || !(p->writer = adf_writer_new())) {
        ak_config_fail(&cfg, TUSK_ACTOR_ERESOURCE, "out of memory");
        goto fail;
    }
    if (!ak_config_base(&cfg, &p->base) || !sim_params(&cfg, set.config, &sim_set, p->base.instance))
        goto fail;
    tusk_error_t err;
    int st = sim_new(&p->sim, sim_set, set.config ? set.config : "gamma_sim parameters", &err);
    if (st != TUSK_OK) {
        ak_config_fail(&cfg, st == TUSK_ENOMEM ? TUSK_ACTOR_ERESOURCE : TUSK_ACTOR_ECONFIG, "%s", err.message);
        goto fail;
    }
    p->staged_cap = sim_event_bytes_max(p->sim);
    if (!(p->staged = malloc(p->staged_cap))) {
        ak_config_fail(&cfg, TUSK_ACTOR_ERESOURCE, "out of memory (%zu bytes for one event)", p->staged_cap);
        goto fail;
    }
    tusk_params_destroy(&sim_set);
    ak_config_close(&cfg);
    return p;
fail:
    free_producer(p);
    tusk_params_destroy(&sim_set);
    ak_config_close(&cfg);
    return NULL;
}

void process_initialise(void *algo_data, unsigned int *error_code)
{
    (void)algo_data;
    ak_ok(error_code);
}

void process_reset(void *algo_data, unsigned int *error_code)
{
    producer_t *p = algo_data;
    ak_ok(error_code);
    sim_rewind(p->sim);
    p->staged_size = 0;
    p->ended = false;
}

void process_stop(void *algo_data, unsigned int *error_code)
{
    producer_t *p = algo_data;
    ak_ok(error_code);
    sim_stats_t s = sim_stats(p->sim);
    fprintf(stderr, "gamma_sim %s: %llu decays, %llu events, %llu crystals read out, %.1f %% of the emitted energy "
            "deposited\n", p->base.label, (unsigned long long)s.decays, (unsigned long long)s.events,
            (unsigned long long)s.crystals, s.emitted_kev > 0 ? 100.0 * s.deposited_kev / s.emitted_kev : 0.0);
    if (s.truth_truncated)
        fprintf(stderr, "gamma_sim %s: %llu events had more than %d interaction points; their truth frames hold "
                "the first %d (flag 1)\n", p->base.label, (unsigned long long)s.truth_truncated,
                ADF_TRUTH_MAX_POINTS, ADF_TRUTH_MAX_POINTS);
}

void process_unload(void *algo_data, unsigned int *error_code)
{
    ak_ok(error_code);
    free_producer(algo_data);
}

/* Encode the next event into the staging area; false at the end. */
static bool stage_next(producer_t *p, unsigned *error_code)
{
    const sim_event_t *ev;
    tusk_error_t err;
    int st = sim_next(p->sim, &ev, &err);
    if (st != TUSK_OK) {
        ak_fail(&p->base, error_code, st == TUSK_ENOMEM ? TUSK_ACTOR_ERESOURCE : TUSK_ACTOR_ERROR, "%s",
                err.message);
        return false;
    }
    if (!ev)
        return false;
    adf_writer_reset(p->writer, p->staged, p->staged_cap);
    if (sim_encode(p->sim, ev, p->writer, &err) != TUSK_OK) {
        ak_fail(&p->base, error_code, TUSK_ACTOR_ERROR, "event %u: %s", (unsigned)ev->event, err.message);
        return false;
    }
    p->staged_size = adf_writer_used(p->writer);
    p->staged_event = ev->event;
    return true;
}

void process_block(void *algo_data, void *output_buffer, unsigned int size_of_output_buffer,
                   unsigned int *used_size_of_output_buffer, unsigned int *error_code)
{
    producer_t *p = algo_data;
    ak_ok(error_code);
    *used_size_of_output_buffer = 0;
    if (p->ended) {
        *error_code = TUSK_ACTOR_END_OF_DATA;
        return;
    }
    uint8_t *out = output_buffer;
    size_t used = 0;
    for (;;) {
        if (!p->staged_size && !stage_next(p, error_code)) {
            if (*error_code != TUSK_ACTOR_OK)
                return;
            p->ended = true;
            *error_code = TUSK_ACTOR_END_OF_DATA;
            break;
        }
        if (p->staged_size > size_of_output_buffer) {
            ak_fail(&p->base, error_code, TUSK_ACTOR_EDATA,
                    "event %u is %zu bytes, larger than the whole output buffer of %u bytes (give the producer a "
                    "larger <size>)", (unsigned)p->staged_event, p->staged_size, size_of_output_buffer);
            return;
        }
        if (p->staged_size > size_of_output_buffer - used)
            break;
        memcpy(out + used, p->staged, p->staged_size);
        used += p->staged_size;
        p->staged_size = 0;
    }
    *used_size_of_output_buffer = (unsigned)used;
}
