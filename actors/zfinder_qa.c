/* zfinder_qa.c - consumer: the z-finder's quality as the seed's Table 5.1
 * measures it (tusk/zfinder.h, zf_qa_*), at the end of the chain.
 *
 * Every buffer's data:id_spacepoints, data:zvertex and data:id_truth
 * frames are matched by RoI number; per RoI the vertex found is compared
 * with the true signal vertex and with the double-precision reference
 * (computed here from the spacepoints, in the mode the data:zvertex
 * names). A malformed frame is TUSK_ACTOR_EDATA naming its offset in the
 * input stream (bytes this instance received before it).
 *
 * At process_stop the table is printed to stdout and written, with one
 * line per RoI, into `out` (out/instance-N with several instances), with
 * the pair- and triplet-mode histograms of RoI `plot_roi` when asked.
 *
 * Parameters:
 *   mode, slice_deg, z_min_mm, z_max_mm, bin_mm, triplet_dz_mm,
 *   triplet_dphi, second_vertex, precision: the z-finder's settings, as
 *             the zfinder actor has them (checked against data:zvertex)
 *   label     the sample's name in the table (sample)
 *   out       output folder (zfinder-qa)
 *   reference compute the double-precision reference (yes)
 *   plot_roi  RoI whose histograms are drawn, -1 for none (-1)
 *   format    png | svg (png)
 *   plot      draw the picture with gnuplot (yes)
 *
 * Written on actorkit's QA skeleton (ak_report_t, tusk/actorkit.h). */
#include <string.h>

#define AK_CONSUMER
#include "tusk/actorkit.h"
#include "base/parse.h"
#include "tusk/zfinder.h"

TUSK_ACTOR_DECLARE("zfinder_qa", "z-finder quality (Table 5.1): |dz| against truth and the double reference",
                   "mode, precision, slice_deg, z_min_mm, z_max_mm, bin_mm, triplet_dz_mm, triplet_dphi, "
                   "second_vertex: the z-finder's settings\n"
                   "label: the sample's name (sample)\n"
                   "out: output folder; out/instance-N with several instances (zfinder-qa)\n"
                   "reference: compute the double-precision reference (yes)\n"
                   "plot_roi: RoI whose histograms are drawn, -1 none (-1)\n"
                   "format: png | svg (png)\n"
                   "plot: draw with gnuplot (yes)\n");

typedef struct qa_actor {
    ak_report_t ak;
    zf_qa_config_t cfg;
    zf_qa_t *qa;
} qa_actor_t;

/* The actor's parameters (the z-finder's are zf_config_read's). */
typedef struct settings {
    ak_report_settings_t report;
    bool reference;
} settings_t;

static bool open_qa(ak_config_t *cfg, void *self, const void *settings)
{
    qa_actor_t *a = self;
    const settings_t *set = settings;
    zf_qa_config_default(&a->cfg);
    tusk_error_t err;
    if (zf_config_read(&a->cfg.alg, cfg->params, &err) != TUSK_OK)
        return ak_config_fail(cfg, TUSK_ACTOR_ECONFIG, "%s", err.message);
    a->cfg.reference = set->reference;
    if (!ak_report_label(cfg, set->report.label, a->cfg.label, sizeof a->cfg.label))
        return false;
    const char *roi = tusk_params_get(cfg->params, "plot_roi");
    if (roi && strcmp(roi, "-1") != 0) {
        uint64_t v;
        if (tusk_parse_u64(roi, 0, UINT32_MAX, &v) != 0)
            return ak_config_fail(cfg, TUSK_ACTOR_ECONFIG, "parameter 'plot_roi': '%s' is not -1 or a RoI number",
                                  roi);
        a->cfg.plot_roi = (int64_t)v;
    }
    /* The histograms are drawn for one RoI or none. */
    a->ak.pictured = set->report.plot && a->cfg.plot_roi >= 0;
    return true;
}

AK_QA_LIBRARY(qa_actor_t, zf_qa)

static const ak_report_kind_t kind = {.actor = "zfinder_qa", .size = AK_INSTANCE_SIZE(qa_actor_t),
                                      .files = "summary.csv, rois.csv", .picture = ", the histogram picture",
                                      .open = open_qa, .calls = &ak_qa_calls};

AK_REPORT_HOOKS

void *process_register_dir(const char *directory_path, char *message, unsigned int message_size,
                           unsigned int *error_code)
{
    static const ak_param_t params[] = {
        AK_LIBRARY(zf_config_keys),
        AK_REPORT_LABEL_OUT(settings_t, "zfinder-qa"),
        AK_BOOL("reference", settings_t, reference, true),
        AK_OTHER("plot_roi"), /* -1 or a RoI number */
        AK_REPORT_FORMAT_PLOT(settings_t),
        AK_PARAMS_END,
    };
    settings_t set;
    return ak_report_register(&kind, params, &set, directory_path, message, message_size, error_code);
}
