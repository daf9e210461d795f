/* ut_sim.c - producer: simulated LHCb events for the UT tracking
 * (tusk/ut.h): data:ut_raw, data:velo_tracks and data:ut_truth an event.
 *
 * Parameters: the simulation's and the geometry's keys (ut/README.md):
 * events, seed, truth, interactions, dndeta, eta_min, eta_max, backward,
 * pt_mean_gev, vertex_sigma_z_mm, velo_eta_min, velo_eta_max,
 * velo_efficiency, velo_z_mm, velo_pos_um, velo_slope_mrad,
 * velo_slope_ms_mrad, velo_fakes, velo_clones, kick_gev, kick_z_mm,
 * scatter_mrad, hit_efficiency, resolution_strips, noise, main_kick_gev,
 * main_z_mm, scifi_z_mm, scifi_x_mm, scifi_y_mm, scifi_hole_mm, and
 * planes_z_mm, stereo_deg, staves_x, staves_uv, stave_width_mm, rows,
 * pitch_um, fine_pitch_um, fine_staves, inner_staves, inner_rows,
 * hole_mm. Event i is the same whoever makes it (its own random stream
 * from the seed and i), and instance k of n load-sharing producers makes
 * events k, k + n, k + 2n, ... below `events`: together they make what one
 * would, event numbers unique.
 *
 * Each call fills the output buffer with whole events (an event's frames
 * are never split across buffers); an event larger than the whole buffer
 * is TUSK_ACTOR_EDATA naming both sizes. After its share of `events`
 * (0: no end) the call returns TUSK_ACTOR_END_OF_DATA. process_stop
 * prints one summary line on stderr; process_reset starts the same events
 * again. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AK_PRODUCER
#include "actorkit.h"
#include "tusk/ut.h"
#include "base/grow.h"

TUSK_ACTOR_DECLARE("ut_sim", "simulated LHCb events: data:ut_raw, data:velo_tracks and data:ut_truth",
                   "events: events of the run (instances share them), 0 for no end (100)\n"
                   "seed, truth, interactions, dndeta, eta_min, eta_max, backward, pt_mean_gev, vertex_sigma_z_mm, "
                   "velo_*, kick_gev, kick_z_mm, scatter_mrad, hit_efficiency, resolution_strips, noise, "
                   "main_kick_gev, main_z_mm, scifi_*: the model; planes_z_mm, stereo_deg, staves_x, staves_uv, "
                   "stave_width_mm, rows, pitch_um, fine_pitch_um, fine_staves, inner_staves, inner_rows, inner_groups, hole_mm: "
                   "the geometry (ut/README.md)\n");

typedef struct producer {
    ak_base_t base;
    ut_sim_t *sim;
    adf_writer_t *writer;
    uint8_t *staged;          /* the event that did not fit the last buffer */
    size_t staged_cap, staged_size;
    uint32_t staged_event;
    uint64_t next, events;    /* next event; events of the run (0: no end) */
    uint64_t step;            /* instances: this one makes every step-th event */
    uint64_t made, hits, tracks;
    bool ended;
} producer_t;

AK_STANDARD_HOOKS(producer_t)

static void free_producer(producer_t *p)
{
    if (!p)
        return;
    ut_sim_destroy(&p->sim);
    adf_writer_destroy(&p->writer);
    free(p->staged);
    free(p);
}

void *process_register_dir(const char *directory_path, char *message, unsigned int message_size,
                           unsigned int *error_code)
{
    static const ak_param_t params[] = {
        AK_LIBRARY(ut_sim_keys),
        AK_PARAMS_END,
    };
    ak_config_t cfg;
    producer_t *p = NULL;
    if (!ak_config_open(&cfg, directory_path, "ut_sim", params, NULL, message, message_size, error_code))
        goto fail;
    p = calloc(1, sizeof *p);
    if (!p || !(p->writer = adf_writer_new())) {
        ak_config_fail(&cfg, TUSK_ACTOR_ERESOURCE, "out of memory");
        goto fail;
    }
    if (!ak_config_base(&cfg, &p->base))
        goto fail;
    ut_sim_config_t sc;
    ut_sim_config_default(&sc);
    tusk_error_t err;
    if (ut_sim_config_read(&sc, cfg.params, &err) != TUSK_OK) {
        ak_config_fail(&cfg, TUSK_ACTOR_ECONFIG, "%s", err.message);
        goto fail;
    }
    p->events = sc.events;
    p->next = p->base.instance;
    p->step = p->base.instances ? p->base.instances : 1;
    if (ut_sim_new(&p->sim, &sc, &err) != TUSK_OK) {
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
    p->made = p->hits = p->tracks = 0;
    p->staged_size = 0;
    p->ended = false;
}

void process_stop(void *algo_data, unsigned int *error_code)
{
    producer_t *p = algo_data;
    ak_ok(error_code);
    const ut_sim_config_t *c = ut_sim_config(p->sim);
    fprintf(stderr, "ut_sim %s: %llu events (%g collisions each on average), %.1f UT hits and %.1f VELO tracks an event\n",
            p->base.label, (unsigned long long)p->made, c->interactions,
            p->made ? (double)p->hits / (double)p->made : 0.0, p->made ? (double)p->tracks / (double)p->made : 0.0);
}

void process_unload(void *algo_data, unsigned int *error_code)
{
    ak_ok(error_code);
    free_producer(algo_data);
}

/* Encode the next event into the staging area; false at the end. */
static bool stage_next(producer_t *p, unsigned *error_code)
{
    if (p->events && p->next >= p->events)
        return false;
    if (p->next > UINT32_MAX) {
        ak_fail(&p->base, error_code, TUSK_ACTOR_ERROR, "more than 2^32 events: the event number would wrap");
        return false;
    }
    const ut_sim_event_t *r;
    tusk_error_t err;
    int st = ut_sim_make(p->sim, p->next, &r, &err);
    if (st != TUSK_OK) {
        ak_fail(&p->base, error_code, st == TUSK_ENOMEM ? TUSK_ACTOR_ERESOURCE : TUSK_ACTOR_ERROR, "%s",
                err.message);
        return false;
    }
    size_t need = ut_sim_bytes(p->sim, r);
    if (tusk_grow(&p->staged, &p->staged_cap, need, 1) != 0) {
        ak_fail(&p->base, error_code, TUSK_ACTOR_ERESOURCE, "out of memory (%zu bytes for one event)", need);
        return false;
    }
    adf_writer_reset(p->writer, p->staged, p->staged_cap);
    if (ut_sim_encode(p->sim, r, p->writer, &err) != TUSK_OK) {
        ak_fail(&p->base, error_code, TUSK_ACTOR_ERROR, "%s", err.message);
        return false;
    }
    p->staged_size = adf_writer_used(p->writer);
    p->staged_event = r->ev.event;
    p->next += p->step;
    p->made++;
    p->hits += r->ev.n_hits;
    p->tracks += r->ev.n_tracks;
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
                    "larger <size>)",
                    (unsigned)p->staged_event, p->staged_size, size_of_output_buffer);
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
