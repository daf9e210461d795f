/* tpc_sim.c - producer: simulated ALICE TPC events (tusk/tpc.h), one
 * data:tpc_clusters and one data:tpc_truth frame a slice.
 *
 * Parameters: the simulation's keys (tpc/README.md): seed, events, preset,
 * tracks, bz_tesla, eta_max, pt_slope_gev, pt_min_gev, pt_max_gev,
 * vertex_sigma_z_mm, vertex_sigma_xy_mm, sigma_y_mm, sigma_z_mm,
 * noise_per_row, efficiency, max_turns, drift_mm, truth; and threads
 * (the helices' threads, 0: one per CPU; the events do not depend on it).
 * Event i is the same whoever makes it (its own random streams from the
 * seed and i), and instance k of n load-sharing producers makes events
 * k, k + n, ... below `events`: together they make what one would.
 *
 * A central event (about 4 million clusters, 40 MB with its truth) is
 * larger than a buffer need be: each call fills the output buffer with
 * whole slices (a slice's clusters and its truth are never split),
 * encoded straight into it, and the next call goes on with the next
 * slice; an event spans as many buffers as it needs (adf/FORMAT.md). A
 * slice larger than the whole buffer is TUSK_ACTOR_EDATA naming both
 * sizes. After its share of `events` (0: no end) the call returns
 * TUSK_ACTOR_END_OF_DATA. process_stop prints one summary line on stderr;
 * process_reset starts the same events again. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AK_PRODUCER
#include "actorkit.h"
#include "tusk/tpc.h"

TUSK_ACTOR_DECLARE("tpc_sim", "simulated ALICE TPC events: data:tpc_clusters and data:tpc_truth a slice",
                   "events: events of the run (instances share them), 0 for no end (1)\n"
                   "preset: pp | noncentral | central, the multiplicity (central)\n"
                   "tracks: primary particles an event (the preset's)\n"
                   "seed, bz_tesla, eta_max, pt_slope_gev, pt_min_gev, pt_max_gev, vertex_sigma_z_mm, "
                   "vertex_sigma_xy_mm, sigma_y_mm, sigma_z_mm, noise_per_row, efficiency, max_turns, drift_mm, "
                   "truth: the model (tpc/README.md)\n"
                   "threads: threads for the helices, 0: one per CPU (0)\n");

typedef struct producer {
    ak_base_t base;
    tpc_sim_t *sim;
    adf_writer_t *writer;
    uint64_t next, events, step;
    bool have_ev;             /* an event is being written */
    unsigned slice;           /* its next slice */
    const tpc_sim_event_t *ev;
    uint64_t made, clusters, frames;
    bool ended;
} producer_t;

AK_STANDARD_HOOKS(producer_t)

typedef struct settings {
    uint64_t threads;
} settings_t;

static void free_producer(producer_t *p)
{
    if (!p)
        return;
    tpc_sim_destroy(&p->sim);
    adf_writer_destroy(&p->writer);
    free(p);
}

void *process_register_dir(const char *directory_path, char *message, unsigned int message_size,
                           unsigned int *error_code)
{
    static const ak_param_t params[] = {
        AK_LIBRARY(tpc_sim_keys),
        AK_U64("threads", settings_t, threads, 0, 0, 1024),
        AK_PARAMS_END,
    };
    ak_config_t cfg;
    settings_t set;
    producer_t *p = NULL;
    if (!ak_config_open(&cfg, directory_path, "tpc_sim", params, &set, message, message_size, error_code))
        goto fail;
    p = calloc(1, sizeof *p);
    if (!p || !(p->writer = adf_writer_new())) {
        ak_config_fail(&cfg, TUSK_ACTOR_ERESOURCE, "out of memory");
        goto fail;
    }
    if (!ak_config_base(&cfg, &p->base))
        goto fail;
    tpc_sim_config_t sc;
    tpc_sim_config_default(&sc);
    tusk_error_t err;
    if (tpc_sim_config_read(&sc, cfg.params, &err) != TUSK_OK) {
        ak_config_fail(&cfg, TUSK_ACTOR_ECONFIG, "%s", err.message);
        goto fail;
    }
    p->events = sc.events;
    p->next = p->base.instance;
    p->step = p->base.instances ? p->base.instances : 1;
    if (tpc_sim_new(&p->sim, &sc, (unsigned)set.threads, &err) != TUSK_OK) {
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
    p->have_ev = false;
    p->made = p->clusters = p->frames = 0;
    p->ended = false;
}

void process_stop(void *algo_data, unsigned int *error_code)
{
    producer_t *p = algo_data;
    ak_ok(error_code);
    const tpc_sim_config_t *c = tpc_sim_config(p->sim);
    fprintf(stderr, "tpc_sim %s: %llu events (%s) of %u particles, %.0f clusters an event, %llu frames\n",
            p->base.label, (unsigned long long)p->made, tpc_preset_name(c->preset), (unsigned)c->tracks,
            p->made ? (double)p->clusters / (double)p->made : 0.0, (unsigned long long)p->frames);
}

void process_unload(void *algo_data, unsigned int *error_code)
{
    ak_ok(error_code);
    free_producer(algo_data);
}

/* Start the next event; false at the end (or on failure, with *error_code set). */
static bool next_event(producer_t *p, unsigned *error_code)
{
    if (p->events && p->next >= p->events)
        return false;
    tusk_error_t err;
    int st = tpc_sim_make(p->sim, p->next, &p->ev, &err);
    if (st != TUSK_OK) {
        ak_fail(&p->base, error_code, st == TUSK_ENOMEM ? TUSK_ACTOR_ERESOURCE : TUSK_ACTOR_ERROR, "%s", err.message);
        return false;
    }
    p->next += p->step;
    p->made++;
    p->clusters += p->ev->clusters;
    p->have_ev = true;
    p->slice = 0;
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
        if (!p->have_ev && !next_event(p, error_code)) {
            if (*error_code != TUSK_ACTOR_OK)
                return;
            p->ended = true;
            *error_code = TUSK_ACTOR_END_OF_DATA;
            break;
        }
        size_t need = tpc_sim_slice_bytes(p->sim, p->slice);
        if (need > size_of_output_buffer) {
            ak_fail(&p->base, error_code, TUSK_ACTOR_EDATA,
                    "event %u, slice %u: its frames are %zu bytes, more than the whole output buffer of %u bytes "
                    "(give the producer a larger <size>)",
                    (unsigned)p->ev->event, p->slice, need, size_of_output_buffer);
            return;
        }
        if (need > size_of_output_buffer - adf_writer_used(p->writer))
            break;
        tusk_error_t err;
        if (tpc_sim_encode_slice(p->sim, p->slice, p->writer, &err) != TUSK_OK) {
            ak_fail(&p->base, error_code, TUSK_ACTOR_ERROR, "%s", err.message);
            return;
        }
        p->frames += tpc_sim_config(p->sim)->truth ? 2 : 1;
        if (++p->slice == ADF_TPC_SLICES)
            p->have_ev = false;
    }
    *used_size_of_output_buffer = (unsigned)adf_writer_used(p->writer);
}
