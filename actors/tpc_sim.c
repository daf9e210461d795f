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
 * process_reset starts the same events again.
 *
 * Written on actorkit's producer skeleton (ak_source_t, tusk/actorkit.h). */
#include <stdio.h>

#define AK_PRODUCER
#include "tusk/actorkit.h"
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
    ak_source_t ak;
    tpc_sim_t *sim;
    const tpc_sim_event_t *ev; /* the event being written */
    uint64_t clusters, frames;
} producer_t;

typedef struct settings {
    uint64_t threads;
} settings_t;

static bool open_sim(ak_config_t *cfg, void *self, const void *settings)
{
    producer_t *p = self;
    const settings_t *set = settings;
    tpc_sim_config_t sc;
    tpc_sim_config_default(&sc);
    tusk_error_t err;
    if (tpc_sim_config_read(&sc, cfg->params, &err) != TUSK_OK)
        return ak_config_fail(cfg, TUSK_ACTOR_ECONFIG, "%s", err.message);
    p->ak.units = sc.events;
    if (tpc_sim_new(&p->sim, &sc, (unsigned)set->threads, &err) != TUSK_OK)
        return ak_config_fail(cfg, err.code == TUSK_ENOMEM ? TUSK_ACTOR_ERESOURCE : TUSK_ACTOR_ECONFIG, "%s",
                              err.message);
    return true;
}

static void close_sim(void *self)
{
    tpc_sim_destroy(&((producer_t *)self)->sim);
}

static void reset_counts(void *self)
{
    producer_t *p = self;
    p->clusters = p->frames = 0;
}

static void summary(const void *self)
{
    const producer_t *p = self;
    const tpc_sim_config_t *c = tpc_sim_config(p->sim);
    uint64_t made = p->ak.made;
    fprintf(stderr, "tpc_sim %s: %llu events (%s) of %u particles, %.0f clusters an event, %llu frames\n",
            p->ak.base.label, (unsigned long long)made, tpc_preset_name(c->preset), (unsigned)c->tracks,
            made ? (double)p->clusters / (double)made : 0.0, (unsigned long long)p->frames);
}

static int make_event(void *self, uint64_t index, uint32_t *number, size_t *slices, tusk_error_t *err)
{
    producer_t *p = self;
    int st = tpc_sim_make(p->sim, index, &p->ev, err);
    if (st != TUSK_OK)
        return st;
    *number = p->ev->event;
    *slices = ADF_TPC_SLICES;
    p->clusters += p->ev->clusters;
    return TUSK_OK;
}

static size_t slice_bytes(const void *self, size_t s)
{
    return tpc_sim_slice_bytes(((const producer_t *)self)->sim, (unsigned)s);
}

static int encode_slice(void *self, size_t s, adf_writer_t *w, tusk_error_t *err)
{
    producer_t *p = self;
    int st = tpc_sim_encode_slice(p->sim, (unsigned)s, w, err);
    if (st == TUSK_OK)
        p->frames += tpc_sim_config(p->sim)->truth ? 2 : 1;
    return st;
}

static const ak_source_kind_t kind = {.actor = "tpc_sim", .size = AK_INSTANCE_SIZE(producer_t), .unit = "event",
                                      .piece = "slice", .open = open_sim, .close = close_sim, .reset = reset_counts,
                                      .summary = summary, .make = make_event, .bytes = slice_bytes,
                                      .encode = encode_slice};

AK_SOURCE_HOOKS

void *process_register_dir(const char *directory_path, char *message, unsigned int message_size,
                           unsigned int *error_code)
{
    static const ak_param_t params[] = {
        AK_LIBRARY(tpc_sim_keys),
        AK_U64("threads", settings_t, threads, 0, 0, 1024),
        AK_PARAMS_END,
    };
    settings_t set;
    return ak_source_register(&kind, params, &set, directory_path, message, message_size, error_code);
}
