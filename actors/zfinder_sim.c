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
 * again. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AK_PRODUCER
#include "actorkit.h"
#include "tusk/zfinder.h"
#include "base/grow.h"

TUSK_ACTOR_DECLARE("zfinder_sim", "simulated inner-detector RoIs: data:id_spacepoints and data:id_truth",
                   "preset: lowlum | highlum | none (lowlum): the thesis's two samples\n"
                   "rois: RoIs of the run (instances share them), 0 for no end (100)\n"
                   "seed, roi_deg, layers_mm, half_lengths_mm, field_t, eta_max, sigma_rphi_mm, sigma_z_mm, "
                   "efficiency, vertex_sigma_mm, vertex_max_mm, signal_tracks, signal_pt_min_gev, signal_pt_max_gev, "
                   "pileup, pileup_dndeta, pileup_pt_mean_gev, pileup_pt_min_gev, noise: the model "
                   "(zfinder/README.md)\n");

typedef struct producer {
    ak_base_t base;
    zf_sim_t *sim;
    adf_writer_t *writer;
    uint8_t *staged;          /* the RoI that did not fit the last buffer */
    size_t staged_cap, staged_size;
    uint32_t staged_roi;
    uint64_t next, rois;      /* next RoI; RoIs of the run (0: no end) */
    uint64_t step;            /* instances: this one makes every step-th RoI */
    uint64_t made, points;
    bool ended;
} producer_t;

AK_STANDARD_HOOKS(producer_t)

static void free_producer(producer_t *p)
{
    if (!p)
        return;
    zf_sim_destroy(&p->sim);
    adf_writer_destroy(&p->writer);
    free(p->staged);
    free(p);
}

void *process_register_dir(const char *directory_path, char *message, unsigned int message_size,
                           unsigned int *error_code)
{
    static const ak_param_t params[] = {
        AK_LIBRARY(zf_sim_keys),
        AK_PARAMS_END,
    };
    ak_config_t cfg;
    producer_t *p = NULL;
    if (!ak_config_open(&cfg, directory_path, "zfinder_sim", params, NULL, message, message_size, error_code))
        goto fail;
    p = calloc(1, sizeof *p);
    if (!p || !(p->writer = adf_writer_new())) {
        ak_config_fail(&cfg, TUSK_ACTOR_ERESOURCE, "out of memory");
        goto fail;
    }
    if (!ak_config_base(&cfg, &p->base))
        goto fail;
    zf_sim_config_t sc;
    zf_sim_config_default(&sc);
    tusk_error_t err;
    if (zf_sim_config_read(&sc, cfg.params, &err) != TUSK_OK) {
        ak_config_fail(&cfg, TUSK_ACTOR_ECONFIG, "%s", err.message);
        goto fail;
    }
    p->rois = sc.rois;
    p->next = p->base.instance;
    p->step = p->base.instances ? p->base.instances : 1;
    if (zf_sim_new(&p->sim, &sc, &err) != TUSK_OK) {
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
    p->made = p->points = 0;
    p->staged_size = 0;
    p->ended = false;
}

void process_stop(void *algo_data, unsigned int *error_code)
{
    producer_t *p = algo_data;
    ak_ok(error_code);
    const zf_sim_config_t *c = zf_sim_config(p->sim);
    fprintf(stderr, "zfinder_sim %s: %llu RoIs (preset %s, %g degrees), %.1f spacepoints a RoI\n", p->base.label,
            (unsigned long long)p->made, c->preset, c->roi_deg,
            p->made ? (double)p->points / (double)p->made : 0.0);
}

void process_unload(void *algo_data, unsigned int *error_code)
{
    ak_ok(error_code);
    free_producer(algo_data);
}

/* Encode the next RoI into the staging area; false at the end. */
static bool stage_next(producer_t *p, unsigned *error_code)
{
    if (p->rois && p->next >= p->rois)
        return false;
    if (p->next > UINT32_MAX) {
        ak_fail(&p->base, error_code, TUSK_ACTOR_ERROR, "more than 2^32 RoIs: the RoI number would wrap");
        return false;
    }
    const zf_sim_roi_t *r;
    tusk_error_t err;
    int st = zf_sim_make(p->sim, p->next, &r, &err);
    if (st != TUSK_OK) {
        ak_fail(&p->base, error_code, st == TUSK_ENOMEM ? TUSK_ACTOR_ERESOURCE : TUSK_ACTOR_ERROR, "%s",
                err.message);
        return false;
    }
    size_t need = zf_sim_bytes(r);
    if (tusk_grow(&p->staged, &p->staged_cap, need, 1) != 0) {
        ak_fail(&p->base, error_code, TUSK_ACTOR_ERESOURCE, "out of memory (%zu bytes for one RoI)", need);
        return false;
    }
    adf_writer_reset(p->writer, p->staged, p->staged_cap);
    if (zf_sim_encode(r, p->writer, &err) != TUSK_OK) {
        ak_fail(&p->base, error_code, TUSK_ACTOR_ERROR, "%s", err.message);
        return false;
    }
    p->staged_size = adf_writer_used(p->writer);
    p->staged_roi = r->roi.event;
    p->next += p->step;
    p->made++;
    p->points += r->roi.n;
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
                    "RoI %u is %zu bytes, larger than the whole output buffer of %u bytes (give the producer a larger "
                    "<size>)",
                    (unsigned)p->staged_roi, p->staged_size, size_of_output_buffer);
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
