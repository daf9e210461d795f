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
 * timeslices again.
 *
 * Written on actorkit's producer skeleton (ak_source_t, tusk/actorkit.h). */
#include <stdio.h>

#define AK_PRODUCER
#include "tusk/actorkit.h"
#include "tusk/sts.h"

TUSK_ACTOR_DECLARE("sts_sim", "simulated CBM STS timeslices: data:sts_digis and data:sts_truth a module",
                   "timeslices: timeslices of the run (instances share them), 0 for no end (1)\n"
                   "collisions: collisions a timeslice, about 15,000 digis each (100)\n"
                   "seed, rate_mhz, stations_mm, theta_max_deg, strips, pitch_um, stereo_deg, strip_lengths_mm, "
                   "length_theta_deg, thickness_um, tracks, eta_mean, eta_sigma, theta_min_deg, charge_mpv, "
                   "landau_width, diffusion_um, charge_noise, threshold, time_resolution_ns, noise_rate_khz, "
                   "dead_time_ns, margin_ns, truth: the model (sts/README.md)\n");

typedef struct producer {
    ak_source_t ak;
    sts_sim_t *sim;
    const sts_sim_ts_t *ts;   /* the timeslice being written */
    uint64_t digis, frames;
} producer_t;

static bool open_sim(ak_config_t *cfg, void *self, const void *settings)
{
    producer_t *p = self;
    (void)settings;
    sts_sim_config_t sc;
    sts_sim_config_default(&sc);
    tusk_error_t err;
    if (sts_sim_config_read(&sc, cfg->params, &err) != TUSK_OK)
        return ak_config_fail(cfg, TUSK_ACTOR_ECONFIG, "%s", err.message);
    p->ak.units = sc.timeslices;
    if (sts_sim_new(&p->sim, &sc, &err) != TUSK_OK)
        return ak_config_fail(cfg, err.code == TUSK_ENOMEM ? TUSK_ACTOR_ERESOURCE : TUSK_ACTOR_ECONFIG, "%s",
                              err.message);
    return true;
}

static void close_sim(void *self)
{
    sts_sim_destroy(&((producer_t *)self)->sim);
}

static void reset_counts(void *self)
{
    producer_t *p = self;
    p->digis = p->frames = 0;
}

static void summary(const void *self)
{
    const producer_t *p = self;
    const sts_sim_config_t *c = sts_sim_config(p->sim);
    uint64_t made = p->ak.made;
    fprintf(stderr, "sts_sim %s: %llu timeslices of %u collisions, %zu modules, %.0f digis a timeslice, %llu frames\n",
            p->ak.base.label, (unsigned long long)made, (unsigned)c->collisions, sts_sim_modules(p->sim),
            made ? (double)p->digis / (double)made : 0.0, (unsigned long long)p->frames);
}

static int make_timeslice(void *self, uint64_t index, uint32_t *number, size_t *modules, tusk_error_t *err)
{
    producer_t *p = self;
    int st = sts_sim_make(p->sim, index, &p->ts, err);
    if (st != TUSK_OK)
        return st;
    *number = p->ts->timeslice;
    *modules = sts_sim_modules(p->sim);
    p->digis += p->ts->digis;
    return TUSK_OK;
}

static size_t module_bytes(const void *self, size_t m)
{
    return sts_sim_module_bytes(((const producer_t *)self)->sim, m);
}

static int encode_module(void *self, size_t m, adf_writer_t *w, tusk_error_t *err)
{
    producer_t *p = self;
    int st = sts_sim_encode_module(p->sim, m, w, err);
    if (st == TUSK_OK)
        p->frames += sts_sim_config(p->sim)->truth ? 2 : 1;
    return st;
}

static const ak_source_kind_t kind = {.actor = "sts_sim", .size = AK_INSTANCE_SIZE(producer_t), .unit = "timeslice",
                                      .piece = "module", .open = open_sim, .close = close_sim, .reset = reset_counts,
                                      .summary = summary, .make = make_timeslice, .bytes = module_bytes,
                                      .encode = encode_module};

AK_SOURCE_HOOKS

void *process_register_dir(const char *directory_path, char *message, unsigned int message_size,
                           unsigned int *error_code)
{
    static const ak_param_t params[] = {
        AK_LIBRARY(sts_sim_keys),
        AK_PARAMS_END,
    };
    return ak_source_register(&kind, params, NULL, directory_path, message, message_size, error_code);
}
