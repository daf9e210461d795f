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
 * again.
 *
 * Written on actorkit's producer skeleton (ak_source_t, tusk/actorkit.h). */
#include <stdio.h>

#define AK_PRODUCER
#include "tusk/actorkit.h"
#include "tusk/ut.h"

TUSK_ACTOR_DECLARE("ut_sim", "simulated LHCb events: data:ut_raw, data:velo_tracks and data:ut_truth",
                   "events: events of the run (instances share them), 0 for no end (100)\n"
                   "seed, truth, interactions, dndeta, eta_min, eta_max, backward, pt_mean_gev, vertex_sigma_z_mm, "
                   "velo_*, kick_gev, kick_z_mm, scatter_mrad, hit_efficiency, resolution_strips, noise, "
                   "main_kick_gev, main_z_mm, scifi_*: the model; planes_z_mm, stereo_deg, staves_x, staves_uv, "
                   "stave_width_mm, rows, pitch_um, fine_pitch_um, fine_staves, inner_staves, inner_rows, inner_groups, hole_mm: "
                   "the geometry (ut/README.md)\n");

typedef struct producer {
    ak_source_t ak;
    ut_sim_t *sim;
    const ut_sim_event_t *ev; /* the event made last */
    uint64_t hits, tracks;
} producer_t;

static bool open_sim(ak_config_t *cfg, void *self, const void *settings)
{
    producer_t *p = self;
    (void)settings;
    ut_sim_config_t sc;
    ut_sim_config_default(&sc);
    tusk_error_t err;
    if (ut_sim_config_read(&sc, cfg->params, &err) != TUSK_OK)
        return ak_config_fail(cfg, TUSK_ACTOR_ECONFIG, "%s", err.message);
    p->ak.units = sc.events;
    if (ut_sim_new(&p->sim, &sc, &err) != TUSK_OK)
        return ak_config_fail(cfg, err.code == TUSK_ENOMEM ? TUSK_ACTOR_ERESOURCE : TUSK_ACTOR_ECONFIG, "%s",
                              err.message);
    return true;
}

static void close_sim(void *self)
{
    ut_sim_destroy(&((producer_t *)self)->sim);
}

static void reset_counts(void *self)
{
    producer_t *p = self;
    p->hits = p->tracks = 0;
}

static void summary(const void *self)
{
    const producer_t *p = self;
    const ut_sim_config_t *c = ut_sim_config(p->sim);
    uint64_t made = p->ak.made;
    fprintf(stderr, "ut_sim %s: %llu events (%g collisions each on average), %.1f UT hits and %.1f VELO tracks an event\n",
            p->ak.base.label, (unsigned long long)made, c->interactions,
            made ? (double)p->hits / (double)made : 0.0, made ? (double)p->tracks / (double)made : 0.0);
}

static int make_event(void *self, uint64_t index, uint32_t *number, size_t *pieces, tusk_error_t *err)
{
    producer_t *p = self;
    if (index > UINT32_MAX)
        return tusk_error_set(err, TUSK_ELIMIT, "more than 2^32 events: the event number would wrap");
    int st = ut_sim_make(p->sim, index, &p->ev, err);
    if (st != TUSK_OK)
        return st;
    *number = p->ev->ev.event;
    *pieces = 1;
    return TUSK_OK;
}

static size_t event_bytes(const void *self, size_t piece)
{
    const producer_t *p = self;
    (void)piece;
    return ut_sim_bytes(p->sim, p->ev);
}

static int encode_event(void *self, size_t piece, adf_writer_t *w, tusk_error_t *err)
{
    producer_t *p = self;
    (void)piece;
    int st = ut_sim_encode(p->sim, p->ev, w, err);
    if (st == TUSK_OK) {
        p->hits += p->ev->ev.n_hits;
        p->tracks += p->ev->ev.n_tracks;
    }
    return st;
}

static const ak_source_kind_t kind = {.actor = "ut_sim", .size = AK_INSTANCE_SIZE(producer_t), .unit = "event",
                                      .open = open_sim, .close = close_sim, .reset = reset_counts, .summary = summary,
                                      .make = make_event, .bytes = event_bytes, .encode = encode_event};

AK_SOURCE_HOOKS

void *process_register_dir(const char *directory_path, char *message, unsigned int message_size,
                           unsigned int *error_code)
{
    static const ak_param_t params[] = {
        AK_LIBRARY(ut_sim_keys),
        AK_PARAMS_END,
    };
    return ak_source_register(&kind, params, NULL, directory_path, message, message_size, error_code);
}
