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
 *             as the tpc_ca actor has them (checked against the frames)
 *   min_clusters  a particle's clusters in a slice to be reconstructible (30)
 *   match     the fraction of a track's clusters from one particle (0.9)
 *   ref_p_gev reference particles: momentum at least this (1)
 *   label     the sample's name in the table (sample)
 *   out       output folder (tpc-qa)
 *   format    png | svg (png)
 *   plot      draw the efficiency picture with gnuplot (yes)
 *
 * Written on actorkit's QA skeleton (ak_report_t, tusk/actorkit.h). */
#define AK_CONSUMER
#include "tusk/actorkit.h"
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
    ak_report_t ak;
    tpc_qa_config_t cfg;
    tpc_qa_t *qa;
} qa_actor_t;

/* The actor's parameters (the tracker's are tpc_config_read's). */
typedef struct settings {
    ak_report_settings_t report;
    uint64_t min_clusters;
    double match, ref_p;
} settings_t;

static bool open_qa(ak_config_t *cfg, void *self, const void *settings)
{
    qa_actor_t *a = self;
    const settings_t *set = settings;
    tpc_qa_config_default(&a->cfg);
    tusk_error_t err;
    if (tpc_config_read(&a->cfg.alg, cfg->params, &err) != TUSK_OK)
        return ak_config_fail(cfg, TUSK_ACTOR_ECONFIG, "%s", err.message);
    a->cfg.min_clusters = (unsigned)set->min_clusters;
    a->cfg.match = set->match;
    a->cfg.ref_p_gev = set->ref_p;
    return ak_report_label(cfg, set->report.label, a->cfg.label, sizeof a->cfg.label);
}

AK_QA_LIBRARY(qa_actor_t, tpc_qa)

static const ak_report_kind_t kind = {.actor = "tpc_qa", .size = AK_INSTANCE_SIZE(qa_actor_t),
                                      .files = "summary.csv, momentum.csv", .picture = ", efficiency picture",
                                      .open = open_qa, .calls = &ak_qa_calls};

AK_REPORT_HOOKS

void *process_register_dir(const char *directory_path, char *message, unsigned int message_size,
                           unsigned int *error_code)
{
    static const ak_param_t params[] = {
        AK_LIBRARY(tpc_config_keys),
        AK_U64("min_clusters", settings_t, min_clusters, 30, 1, 4 * ADF_TPC_ROWS),
        AK_DOUBLE("match", settings_t, match, 0.9, 0.51, 1.0),
        AK_DOUBLE("ref_p_gev", settings_t, ref_p, 1.0, 0.0, 1e4),
        AK_REPORT_LABEL_OUT(settings_t, "tpc-qa"),
        AK_REPORT_FORMAT_PLOT(settings_t),
        AK_PARAMS_END,
    };
    settings_t set;
    return ak_report_register(&kind, params, &set, directory_path, message, message_size, error_code);
}
