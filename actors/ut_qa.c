/* ut_qa.c - consumer: the UT tracking's quality as the paper's Table 3
 * measures it (tusk/ut.h, ut_qa_*), at the end of the chain.
 *
 * Every event's data:ut_raw, data:velo_tracks, data:ut_tracks and
 * data:ut_truth (inside its event:data:ut) are matched by event number;
 * per event the tracks are matched to the particles (70 % of the hits,
 * the VELO track counting for its own): efficiency per category (long,
 * VELO+UT, each with p > 5 GeV), clones, fakes, the momentum resolution.
 * A malformed frame is TUSK_ACTOR_EDATA naming its offset in the input
 * stream (bytes this instance received before it).
 *
 * At process_stop the table is printed to stdout and written into `out`
 * (out/instance-N with several instances), with the picture (efficiency
 * against p, the momentum resolution) when asked.
 *
 * Parameters:
 *   sectors, candidates, p_min_gev, ... and the geometry's keys: the
 *             tracker's settings, as the ut_compass actor has them
 *             (checked against data:ut_tracks)
 *   label     the sample's name in the table (sample)
 *   out       output folder (ut-qa)
 *   format    png | svg (png)
 *   plot      draw the picture with gnuplot (yes)
 *
 * Written on actorkit's QA skeleton (ak_report_t, tusk/actorkit.h). */
#define AK_CONSUMER
#include "tusk/actorkit.h"
#include "tusk/ut.h"

TUSK_ACTOR_DECLARE("ut_qa", "UT tracking quality (Table 3): efficiency, clones and fakes per category",
                   "sectors, candidates, p_min_gev, ... and the geometry's keys: the tracker's settings\n"
                   "label: the sample's name (sample)\n"
                   "out: output folder; out/instance-N with several instances (ut-qa)\n"
                   "format: png | svg (png)\n"
                   "plot: draw with gnuplot (yes)\n");

typedef struct qa_actor {
    ak_report_t ak;
    ut_qa_config_t cfg;
    ut_qa_t *qa;
} qa_actor_t;

/* The actor's parameters (the tracker's are ut_config_read's). */
typedef struct settings {
    ak_report_settings_t report;
} settings_t;

static bool open_qa(ak_config_t *cfg, void *self, const void *settings)
{
    qa_actor_t *a = self;
    const settings_t *set = settings;
    ut_qa_config_default(&a->cfg);
    tusk_error_t err;
    if (ut_config_read(&a->cfg.alg, cfg->params, &err) != TUSK_OK)
        return ak_config_fail(cfg, TUSK_ACTOR_ECONFIG, "%s", err.message);
    return ak_report_label(cfg, set->report.label, a->cfg.label, sizeof a->cfg.label);
}

AK_QA_LIBRARY(qa_actor_t, ut_qa)

static const ak_report_kind_t kind = {.actor = "ut_qa", .size = AK_INSTANCE_SIZE(qa_actor_t),
                                      .files = "summary.csv, momentum.csv", .picture = ", the picture ut-qa",
                                      .open = open_qa, .calls = &ak_qa_calls};

AK_REPORT_HOOKS

void *process_register_dir(const char *directory_path, char *message, unsigned int message_size,
                           unsigned int *error_code)
{
    static const ak_param_t params[] = {
        AK_LIBRARY(ut_config_keys),
        AK_REPORT_LABEL_OUT(settings_t, "ut-qa"),
        AK_REPORT_FORMAT_PLOT(settings_t),
        AK_PARAMS_END,
    };
    settings_t set;
    return ak_report_register(&kind, params, &set, directory_path, message, message_size, error_code);
}
