/* sts_qa.c - consumer: the STS reconstruction against the truth
 * (tusk/sts.h, sts_qa_*), at the end of the chain.
 *
 * Every buffer's data:sts_digis, data:sts_truth, data:sts_clusters and
 * data:sts_hits frames are matched by timeslice and module (a timeslice
 * spans many buffers; a module's frames may come in any order); per
 * module the clusters are matched to Monte Carlo points through the
 * digis' truth, the hits through their clusters, and (compare) the digis
 * run through the original and the parallel cluster finder again. A
 * malformed frame is TUSK_ACTOR_EDATA naming its offset in the input
 * stream (bytes this instance received before it); so is a module or
 * timeslice left incomplete at the end.
 *
 * At process_stop the tables are printed to stdout and written into `out`
 * (out/instance-N with several instances), with the residual picture.
 *
 * Parameters:
 *   time_resolution_ns, delta_sigmas, charge_noise, cog_sys_strips,
 *   hit_time_cut, hit_y_tol_mm: the reconstruction's settings, as the
 *             sts_hitfinder actor has them (checked against the frames)
 *   label     the sample's name in the table (sample)
 *   out       output folder (sts-qa)
 *   compare   run the original and the parallel cluster finder again (yes)
 *   format    png | svg (png)
 *   plot      draw the residual picture with gnuplot (yes)
 *
 * Written on actorkit's QA skeleton (ak_report_t, tusk/actorkit.h). */
#define AK_CONSUMER
#include "tusk/actorkit.h"
#include "tusk/sts.h"

TUSK_ACTOR_DECLARE("sts_qa", "CBM STS reconstruction quality: efficiencies, fakes, residuals and pulls against the "
                             "truth; the original against the parallel cluster finder",
                   "time_resolution_ns, delta_sigmas, charge_noise, cog_sys_strips, hit_time_cut, hit_y_tol_mm: the "
                   "reconstruction's settings\n"
                   "label: the sample's name (sample)\n"
                   "out: output folder; out/instance-N with several instances (sts-qa)\n"
                   "compare: run the original and the parallel cluster finder again (yes)\n"
                   "format: png | svg (png)\n"
                   "plot: draw the residual picture with gnuplot (yes)\n");

typedef struct qa_actor {
    ak_report_t ak;
    sts_qa_config_t cfg;
    sts_qa_t *qa;
} qa_actor_t;

/* The actor's parameters (the reconstruction's are sts_config_read's). */
typedef struct settings {
    ak_report_settings_t report;
    bool compare;
} settings_t;

static bool open_qa(ak_config_t *cfg, void *self, const void *settings)
{
    qa_actor_t *a = self;
    const settings_t *set = settings;
    sts_qa_config_default(&a->cfg);
    tusk_error_t err;
    if (sts_config_read(&a->cfg.alg, cfg->params, &err) != TUSK_OK)
        return ak_config_fail(cfg, TUSK_ACTOR_ECONFIG, "%s", err.message);
    a->cfg.compare = set->compare;
    return ak_report_label(cfg, set->report.label, a->cfg.label, sizeof a->cfg.label);
}

AK_QA_LIBRARY(qa_actor_t, sts_qa)

static const ak_report_kind_t kind = {.actor = "sts_qa", .size = AK_INSTANCE_SIZE(qa_actor_t),
                                      .files = "summary.csv, stations.csv", .picture = ", residuals picture",
                                      .open = open_qa, .calls = &ak_qa_calls};

AK_REPORT_HOOKS

void *process_register_dir(const char *directory_path, char *message, unsigned int message_size,
                           unsigned int *error_code)
{
    static const ak_param_t params[] = {
        AK_LIBRARY(sts_config_keys),
        AK_REPORT_LABEL_OUT(settings_t, "sts-qa"),
        AK_BOOL("compare", settings_t, compare, true),
        AK_REPORT_FORMAT_PLOT(settings_t),
        AK_PARAMS_END,
    };
    settings_t set;
    return ak_report_register(&kind, params, &set, directory_path, message, message_size, error_code);
}
