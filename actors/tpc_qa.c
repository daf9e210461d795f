/* tpc_qa.c - consumer: the TPC slice tracker against the truth
 * (tusk/tpc.h, tpc_qa_*), at the end of the chain: the quality figures
 * of the thesis's Table 9.1.
 *
 * Every buffer's data:tpc_clusters, data:tpc_truth and data:tpc_tracks
 * frames are matched by event and slice (an event spans many buffers; a
 * slice's frames may come in any order); per slice each track is matched
 * to the particle owning most of its clusters, and each reconstructible
 * particle found or not (tpc/README.md, "Quality"). A malformed frame is
 * TUSK_ACTOR_EDATA naming its offset in the input stream (bytes this
 * instance received before it); so is a slice or event left incomplete at
 * the end.
 *
 * At process_stop the tables are printed to stdout and written into `out`
 * (out/instance-N with several instances), with the efficiency picture.
 *
 * Parameters:
 *   sigma_y_mm, sigma_z_mm, area_tan_y, area_tan_z, nf_candidates,
 *   min_bin_mm, seed_chi2, cluster_chi2, max_sin_phi, stop_sigma_y_mm,
 *   noise, min_seed, min_hits, max_gap, sel_gap: the tracker's settings,
 *             as the tpc_tracker actor has them (checked against the frames)
 *   min_clusters  a particle's clusters in a slice to be reconstructible (30)
 *   match     the fraction of a track's clusters from one particle (0.9)
 *   ref_p_gev reference particles: momentum at least this (1)
 *   label     the sample's name in the table (sample)
 *   out       output folder (tpc-qa)
 *   format    png | svg (png)
 *   plot      draw the efficiency picture with gnuplot (yes) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AK_CONSUMER
#include "actorkit.h"
#include "tusk/tpc.h"

TUSK_ACTOR_DECLARE("tpc_qa", "ALICE TPC slice tracker quality (Table 9.1): efficiency, clone and fake rates, "
                             "resolutions and pulls against the truth",
                   "sigma_y_mm, sigma_z_mm, area_tan_y, area_tan_z, nf_candidates, min_bin_mm, seed_chi2, "
                   "cluster_chi2, max_sin_phi, stop_sigma_y_mm, noise, min_seed, min_hits, max_gap, sel_gap: the "
                   "tracker's settings\n"
                   "min_clusters: a particle's clusters in a slice to be reconstructible (30)\n"
                   "match: the fraction of a track's clusters from one particle (0.9)\n"
                   "ref_p_gev: reference particles' momentum, at least (1)\n"
                   "label: the sample's name (sample)\n"
                   "out: output folder; out/instance-N with several instances (tpc-qa)\n"
                   "format: png | svg (png)\n"
                   "plot: draw the efficiency picture with gnuplot (yes)\n");

typedef struct qa_actor {
    ak_base_t base;
    tpc_qa_config_t cfg;
    tpc_qa_t *qa;
    char dir[1024];
    bool plot;
    char format[8];
    uint64_t buffers, offset;
} qa_actor_t;

AK_STANDARD_HOOKS(qa_actor_t)

/* The actor's parameters (the tracker's are tpc_config_read's). */
typedef struct settings {
    const char *label, *out;
    int format;
    bool plot;
    uint64_t min_clusters;
    double match, ref_p;
} settings_t;

static const char *const formats[] = {"png", "svg", NULL};
static const ak_param_t params[] = {
    AK_LIBRARY(tpc_config_keys),
    AK_U64("min_clusters", settings_t, min_clusters, 30, 1, 4 * ADF_TPC_ROWS),
    AK_DOUBLE("match", settings_t, match, 0.9, 0.51, 1.0),
    AK_DOUBLE("ref_p_gev", settings_t, ref_p, 1.0, 0.0, 1e4),
    AK_STRING("label", settings_t, label, "sample"),
    AK_STRING("out", settings_t, out, "tpc-qa"),
    AK_CHOICE("format", settings_t, format, formats, 0),
    AK_BOOL("plot", settings_t, plot, true),
    AK_PARAMS_END,
};

static void free_actor(qa_actor_t *a)
{
    if (!a)
        return;
    tpc_qa_destroy(&a->qa);
    free(a);
}

void *process_register_dir(const char *directory_path, char *message, unsigned int message_size,
                           unsigned int *error_code)
{
    ak_config_t cfg;
    settings_t set;
    qa_actor_t *a = NULL;
    if (!ak_config_open(&cfg, directory_path, "tpc_qa", params, &set, message, message_size, error_code))
        goto fail;
    if (!(a = calloc(1, sizeof *a))) {
        ak_config_fail(&cfg, TUSK_ACTOR_ERESOURCE, "out of memory");
        goto fail;
    }
    if (!ak_config_base(&cfg, &a->base))
        goto fail;
    tpc_qa_config_default(&a->cfg);
    tusk_error_t err;
    if (tpc_config_read(&a->cfg.alg, cfg.params, &err) != TUSK_OK) {
        ak_config_fail(&cfg, TUSK_ACTOR_ECONFIG, "%s", err.message);
        goto fail;
    }
    a->cfg.min_clusters = (unsigned)set.min_clusters;
    a->cfg.match = set.match;
    a->cfg.ref_p_gev = set.ref_p;
    a->plot = set.plot;
    snprintf(a->format, sizeof a->format, "%s", formats[set.format]);
    const char *label = set.label;
    if (strlen(label) >= sizeof a->cfg.label || strpbrk(label, ",\"\n")) {
        ak_config_fail(&cfg, TUSK_ACTOR_ECONFIG,
                       "parameter 'label': '%s' is longer than %zu characters or has a comma or quote", label,
                       sizeof a->cfg.label - 1);
        goto fail;
    }
    snprintf(a->cfg.label, sizeof a->cfg.label, "%s", label);
    const char *out = set.out;
    int w = a->base.instances > 1 ? snprintf(a->dir, sizeof a->dir, "%s/instance-%u", out, a->base.instance)
                                  : snprintf(a->dir, sizeof a->dir, "%s", out);
    if (w < 0 || (size_t)w >= sizeof a->dir) {
        ak_config_fail(&cfg, TUSK_ACTOR_ECONFIG, "parameter 'out': the folder name is too long");
        goto fail;
    }
    ak_config_close(&cfg);
    return a;
fail:
    free_actor(a);
    ak_config_close(&cfg);
    return NULL;
}

/* A fresh analysis for every run. */
void process_initialise(void *algo_data, unsigned int *error_code)
{
    qa_actor_t *a = algo_data;
    ak_ok(error_code);
    tpc_qa_destroy(&a->qa);
    tusk_error_t err;
    if (tpc_qa_new(&a->qa, &a->cfg, &err) != TUSK_OK)
        ak_fail(&a->base, error_code, err.code == TUSK_ENOMEM ? TUSK_ACTOR_ERESOURCE : TUSK_ACTOR_ECONFIG, "%s",
                err.message);
    a->buffers = a->offset = 0;
}

void process_block(void *algo_data, void *input_buffer, unsigned int size_of_input_buffer, unsigned int *error_code)
{
    qa_actor_t *a = algo_data;
    ak_ok(error_code);
    if (!a->qa) {
        ak_fail(&a->base, error_code, TUSK_ACTOR_ESTATE, "process_block before process_initialise");
        return;
    }
    if (!input_buffer)
        size_of_input_buffer = 0;
    a->buffers++;
    tusk_error_t err;
    if (tpc_qa_feed(a->qa, input_buffer, size_of_input_buffer, a->offset, &err) != TUSK_OK)
        ak_fail(&a->base, error_code, err.code == TUSK_ENOMEM ? TUSK_ACTOR_ERESOURCE : TUSK_ACTOR_EDATA,
                "input buffer %llu (%u bytes; input offsets count the bytes this instance received): %s",
                (unsigned long long)a->buffers, size_of_input_buffer, err.message);
    a->offset += size_of_input_buffer;
}

void process_stop(void *algo_data, unsigned int *error_code)
{
    qa_actor_t *a = algo_data;
    ak_ok(error_code);
    if (!a->qa)
        return;
    tusk_error_t err;
    if (tpc_qa_finish(a->qa, &err) != TUSK_OK) {
        ak_fail(&a->base, error_code, TUSK_ACTOR_EDATA, "%s", err.message);
        return;
    }
    printf("tpc_qa %s: %llu buffers, %llu bytes\n", a->base.label, (unsigned long long)a->buffers,
           (unsigned long long)a->offset);
    tpc_qa_print(a->qa, stdout);
    if (tpc_qa_write(a->qa, a->dir, a->plot, a->format, &err) != TUSK_OK) {
        ak_fail(&a->base, error_code, err.code == TUSK_ENOMEM ? TUSK_ACTOR_ERESOURCE : TUSK_ACTOR_EIO, "%s",
                err.message);
        fflush(stdout);
        return;
    }
    printf("tpc_qa %s: files in %s/ (summary.csv, momentum.csv%s)\n", a->base.label, a->dir,
           a->plot ? ", efficiency picture" : "");
    fflush(stdout);
}

void process_reset(void *algo_data, unsigned int *error_code)
{
    qa_actor_t *a = algo_data;
    ak_ok(error_code);
    tpc_qa_destroy(&a->qa);
}

void process_unload(void *algo_data, unsigned int *error_code)
{
    ak_ok(error_code);
    free_actor(algo_data);
}
