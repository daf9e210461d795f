/* zfinder_sim.c - producer: simulated Regions of Interest of the ATLAS
 * inner detector (tusk/zfinder.h), data:id_spacepoints and data:id_truth.
 *
 * Parameters: the simulation's keys (zfinder/README.md): preset
 * (lowlum | highlum | none), rois, seed, roi_deg, layers_mm,
 * half_lengths_mm, field_t, eta_max, sigma_rphi_mm, sigma_z_mm,
 * efficiency, vertex_sigma_mm, vertex_max_mm, signal_tracks,
 * signal_pt_min_gev, signal_pt_max_gev, pileup, pileup_dndeta,
 * pileup_pt_mean_gev, pileup_pt_min_gev, noise. RoI i is the same
 * whoever makes it (its own random stream from the seed and i), and
 * instance k of n load-sharing producers makes RoIs k, k + n, k + 2n, ...
 * below `rois`: together they make what one would, RoI numbers unique.
 *
 * Each call fills the output buffer with whole RoIs (a RoI's spacepoints
 * and its truth are never split across buffers); a RoI larger than the
 * whole buffer is TUSK_ACTOR_EDATA naming both sizes. After its share of
 * `rois` RoIs (0: no end) the call returns TUSK_ACTOR_END_OF_DATA. process_stop
 * prints one summary line on stderr; process_reset starts the same RoIs
 * again.
 *
 * Written on actorkit's producer skeleton (ak_source_t, tusk/actorkit.h). */
#include <stdio.h>

#define AK_PRODUCER
#include "tusk/actorkit.h"
#include "tusk/zfinder.h"

TUSK_ACTOR_DECLARE("zfinder_sim", "simulated inner-detector RoIs: data:id_spacepoints and data:id_truth",
                   "preset: lowlum | highlum | none (lowlum): the thesis's two samples\n"
                   "rois: RoIs of the run (instances share them), 0 for no end (100)\n"
                   "seed, roi_deg, layers_mm, half_lengths_mm, field_t, eta_max, sigma_rphi_mm, sigma_z_mm, "
                   "efficiency, vertex_sigma_mm, vertex_max_mm, signal_tracks, signal_pt_min_gev, signal_pt_max_gev, "
                   "pileup, pileup_dndeta, pileup_pt_mean_gev, pileup_pt_min_gev, noise: the model "
                   "(zfinder/README.md)\n");

typedef struct producer {
    ak_source_t ak;
    zf_sim_t *sim;
    const zf_sim_roi_t *roi;  /* the RoI made last */
    uint64_t points;
} producer_t;

static bool open_sim(ak_config_t *cfg, void *self, const void *settings)
{
    producer_t *p = self;
    (void)settings;
    zf_sim_config_t sc;
    zf_sim_config_default(&sc);
    tusk_error_t err;
    if (zf_sim_config_read(&sc, cfg->params, &err) != TUSK_OK)
        return ak_config_fail(cfg, TUSK_ACTOR_ECONFIG, "%s", err.message);
    p->ak.units = sc.rois;
    if (zf_sim_new(&p->sim, &sc, &err) != TUSK_OK)
        return ak_config_fail(cfg, err.code == TUSK_ENOMEM ? TUSK_ACTOR_ERESOURCE : TUSK_ACTOR_ECONFIG, "%s",
                              err.message);
    return true;
}

static void close_sim(void *self)
{
    zf_sim_destroy(&((producer_t *)self)->sim);
}

static void reset_counts(void *self)
{
    ((producer_t *)self)->points = 0;
}

static void summary(const void *self)
{
    const producer_t *p = self;
    const zf_sim_config_t *c = zf_sim_config(p->sim);
    uint64_t made = p->ak.made;
    fprintf(stderr, "zfinder_sim %s: %llu RoIs (preset %s, %g degrees), %.1f spacepoints a RoI\n", p->ak.base.label,
            (unsigned long long)made, c->preset, c->roi_deg, made ? (double)p->points / (double)made : 0.0);
}

static int make_roi(void *self, uint64_t index, uint32_t *number, size_t *pieces, tusk_error_t *err)
{
    producer_t *p = self;
    if (index > UINT32_MAX)
        return tusk_error_set(err, TUSK_ELIMIT, "more than 2^32 RoIs: the RoI number would wrap");
    int st = zf_sim_make(p->sim, index, &p->roi, err);
    if (st != TUSK_OK)
        return st;
    *number = p->roi->roi.event;
    *pieces = 1;
    return TUSK_OK;
}

static size_t roi_bytes(const void *self, size_t piece)
{
    (void)piece;
    return zf_sim_bytes(((const producer_t *)self)->roi);
}

static int encode_roi(void *self, size_t piece, adf_writer_t *w, tusk_error_t *err)
{
    producer_t *p = self;
    (void)piece;
    int st = zf_sim_encode(p->roi, w, err);
    if (st == TUSK_OK)
        p->points += p->roi->roi.n;
    return st;
}

static const ak_source_kind_t kind = {.actor = "zfinder_sim", .size = AK_INSTANCE_SIZE(producer_t), .unit = "RoI",
                                      .open = open_sim, .close = close_sim, .reset = reset_counts, .summary = summary,
                                      .make = make_roi, .bytes = roi_bytes, .encode = encode_roi};

AK_SOURCE_HOOKS

void *process_register_dir(const char *directory_path, char *message, unsigned int message_size,
                           unsigned int *error_code)
{
    static const ak_param_t params[] = {
        AK_LIBRARY(zf_sim_keys),
        AK_PARAMS_END,
    };
    return ak_source_register(&kind, params, NULL, directory_path, message, message_size, error_code);
}
