/* sts_sim.c - producer: simulated timeslices of the CBM Silicon Tracking
 * System (tusk/sts.h), one data:sts_digis and one data:sts_truth frame a
 * module.
 *
 * Parameters: the simulation's keys (sts/README.md): seed, timeslices,
 * collisions, rate_mhz, stations_mm, theta_max_deg, strips, pitch_um,
 * stereo_deg, strip_lengths_mm, length_theta_deg, thickness_um, tracks,
 * eta_mean, eta_sigma, theta_min_deg, charge_mpv, landau_width,
 * diffusion_um, charge_noise, threshold, time_resolution_ns,
 * noise_rate_khz, dead_time_ns, margin_ns, truth. Timeslice i is the
 * same whoever makes it (its own random streams from the seed and i), and
 * instance k of n load-sharing producers makes timeslices k, k + n, ...
 * below `timeslices`: together they make what one would.
 *
 * A timeslice is far larger than a buffer (30 million digis are 240 MB):
 * each call fills the output buffer with whole modules (a module's digis
 * and its truth are never split), encoded straight into it, and the next
 * call goes on with the next module; a timeslice spans as many buffers as
 * it needs (adf/FORMAT.md). A module larger than the whole buffer is
 * TUSK_ACTOR_EDATA naming both sizes. After its share of `timeslices`
 * (0: no end) the call returns TUSK_ACTOR_END_OF_DATA. process_stop
 * prints one summary line on stderr; process_reset starts the same
 * timeslices again. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AK_PRODUCER
#include "actorkit.h"
#include "tusk/sts.h"

TUSK_ACTOR_DECLARE("sts_sim", "simulated CBM STS timeslices: data:sts_digis and data:sts_truth a module",
                   "timeslices: timeslices of the run (instances share them), 0 for no end (1)\n"
                   "collisions: collisions a timeslice, about 15,000 digis each (100)\n"
                   "seed, rate_mhz, stations_mm, theta_max_deg, strips, pitch_um, stereo_deg, strip_lengths_mm, "
                   "length_theta_deg, thickness_um, tracks, eta_mean, eta_sigma, theta_min_deg, charge_mpv, "
                   "landau_width, diffusion_um, charge_noise, threshold, time_resolution_ns, noise_rate_khz, "
                   "dead_time_ns, margin_ns, truth: the model (sts/README.md)\n");

typedef struct producer {
    ak_base_t base;
    sts_sim_t *sim;
    adf_writer_t *writer;
    uint64_t next, timeslices, step;
    bool have_ts;             /* a timeslice is being written */
    size_t module;            /* its next module */
    const sts_sim_ts_t *ts;
    uint64_t made, digis, frames;
    bool ended;
} producer_t;

AK_STANDARD_HOOKS(producer_t)

static void free_producer(producer_t *p)
{
    if (!p)
        return;
    sts_sim_destroy(&p->sim);
    adf_writer_destroy(&p->writer);
    free(p);
}

void *process_register_dir(const char *directory_path, char *message, unsigned int message_size,
                           unsigned int *error_code)
{
    static const ak_param_t params[] = {
        AK_LIBRARY(sts_sim_keys),
        AK_PARAMS_END,
    };
    ak_config_t cfg;
    producer_t *p = NULL;
    if (!ak_config_open(&cfg, directory_path, "sts_sim", params, NULL, message, message_size, error_code))
        goto fail;
    p = calloc(1, sizeof *p);
    if (!p || !(p->writer = adf_writer_new())) {
        ak_config_fail(&cfg, TUSK_ACTOR_ERESOURCE, "out of memory");
        goto fail;
    }
    if (!ak_config_base(&cfg, &p->base))
        goto fail;
    sts_sim_config_t sc;
    sts_sim_config_default(&sc);
    tusk_error_t err;
    if (sts_sim_config_read(&sc, cfg.params, &err) != TUSK_OK) {
        ak_config_fail(&cfg, TUSK_ACTOR_ECONFIG, "%s", err.message);
        goto fail;
    }
    p->timeslices = sc.timeslices;
    p->next = p->base.instance;
    p->step = p->base.instances ? p->base.instances : 1;
    if (sts_sim_new(&p->sim, &sc, &err) != TUSK_OK) {
        ak_config_fail(&cfg, err.code == TUSK_ENOMEM ? TUSK_ACTOR_ERESOURCE : TUSK_ACTOR_ECONFIG, "%s", err.message);
        goto fail;
    }
    ak_config_close(&cfg);
    return p;
fail:
    free_producer(p);
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
    p->next = p->base.instance;
    p->have_ts = false;
    p->made = p->digis = p->frames = 0;
    p->ended = false;
}

void process_stop(void *algo_data, unsigned int *error_code)
{
    producer_t *p = algo_data;
    ak_ok(error_code);
    const sts_sim_config_t *c = sts_sim_config(p->sim);
    fprintf(stderr, "sts_sim %s: %llu timeslices of %u collisions, %zu modules, %.0f digis a timeslice, %llu frames\n",
            p->base.label, (unsigned long long)p->made, (unsigned)c->collisions, sts_sim_modules(p->sim),
            p->made ? (double)p->digis / (double)p->made : 0.0, (unsigned long long)p->frames);
}

void process_unload(void *algo_data, unsigned int *error_code)
{
    ak_ok(error_code);
    free_producer(algo_data);
}

/* Start the next timeslice; false at the end (or on failure, with *error_code set). */
static bool next_timeslice(producer_t *p, unsigned *error_code)
{
    if (p->timeslices && p->next >= p->timeslices)
        return false;
    tusk_error_t err;
    int st = sts_sim_make(p->sim, p->next, &p->ts, &err);
    if (st != TUSK_OK) {
        ak_fail(&p->base, error_code, st == TUSK_ENOMEM ? TUSK_ACTOR_ERESOURCE : TUSK_ACTOR_ERROR, "%s", err.message);
        return false;
    }
    p->next += p->step;
    p->made++;
    p->digis += p->ts->digis;
    p->have_ts = true;
    p->module = 0;
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
    adf_writer_reset(p->writer, output_buffer, size_of_output_buffer);
    for (;;) {
        if (!p->have_ts && !next_timeslice(p, error_code)) {
            if (*error_code != TUSK_ACTOR_OK)
                return;
            p->ended = true;
            *error_code = TUSK_ACTOR_END_OF_DATA;
            break;
        }
        size_t need = sts_sim_module_bytes(p->sim, p->module);
        if (need > size_of_output_buffer) {
            ak_fail(&p->base, error_code, TUSK_ACTOR_EDATA,
                    "timeslice %u, module %zu: its frames are %zu bytes, more than the whole output buffer of %u "
                    "bytes (give the producer a larger <size>)",
                    (unsigned)p->ts->timeslice, p->module, need, size_of_output_buffer);
            return;
        }
        if (need > size_of_output_buffer - adf_writer_used(p->writer))
            break;
        tusk_error_t err;
        if (sts_sim_encode_module(p->sim, p->module, p->writer, &err) != TUSK_OK) {
            ak_fail(&p->base, error_code, TUSK_ACTOR_ERROR, "%s", err.message);
            return;
        }
        p->frames += sts_sim_config(p->sim)->truth ? 2 : 1;
        if (++p->module == sts_sim_modules(p->sim))
            p->have_ts = false;
    }
    *used_size_of_output_buffer = (unsigned)adf_writer_used(p->writer);
}
