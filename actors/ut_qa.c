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
 *             tracker's settings, as the ut_tracker actor has them
 *             (checked against data:ut_tracks)
 *   label     the sample's name in the table (sample)
 *   out       output folder (ut-qa)
 *   format    png | svg (png)
 *   plot      draw the picture with gnuplot (yes) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AK_CONSUMER
#include "actorkit.h"
#include "tusk/ut.h"

TUSK_ACTOR_DECLARE("ut_qa", "UT tracking quality (Table 3): efficiency, clones and fakes per category",
                   "sectors, candidates, p_min_gev, ... and the geometry's keys: the tracker's settings\n"
                   "label: the sample's name (sample)\n"
                   "out: output folder; out/instance-N with several instances (ut-qa)\n"
                   "format: png | svg (png)\n"
                   "plot: draw with gnuplot (yes)\n");

typedef struct qa_actor {
    ak_base_t base;
    ut_qa_config_t cfg;
    ut_qa_t *qa;
    char dir[1024];
    bool plot;
    char format[8];
    uint64_t buffers, offset;
} qa_actor_t;

AK_STANDARD_HOOKS(qa_actor_t)

/* The actor's parameters (the tracker's are ut_config_read's). */
typedef struct settings {
    const char *label, *out;
    int format;
    bool plot;
} settings_t;

static const char *const formats[] = {"png", "svg", NULL};
static const ak_param_t params[] = {
    AK_LIBRARY(ut_config_keys),
    AK_STRING("label", settings_t, label, "sample"),
    AK_STRING("out", settings_t, out, "ut-qa"),
    AK_CHOICE("format", settings_t, format, formats, 0),
    AK_BOOL("plot", settings_t, plot, true),
    AK_PARAMS_END,
};

static void free_actor(qa_actor_t *a)
{
    if (!a)
        return;
    ut_qa_destroy(&a->qa);
    free(a);
}

void *process_register_dir(const char *directory_path, char *message, unsigned int message_size,
                           unsigned int *error_code)
{
    ak_config_t cfg;
    settings_t set;
    qa_actor_t *a = NULL;
    if (!ak_config_open(&cfg, directory_path, "ut_qa", params, &set, message, message_size, error_code))
        goto fail;
    if (!(a = calloc(1, sizeof *a))) {
        ak_config_fail(&cfg, TUSK_ACTOR_ERESOURCE, "out of memory");
        goto fail;
    }
    if (!ak_config_base(&cfg, &a->base))
        goto fail;
    ut_qa_config_default(&a->cfg);
    tusk_error_t err;
    if (ut_config_read(&a->cfg.alg, cfg.params, &err) != TUSK_OK) {
        ak_config_fail(&cfg, TUSK_ACTOR_ECONFIG, "%s", err.message);
        goto fail;
    }
    a->plot = set.plot;
    snprintf(a->format, sizeof a->format, "%s", formats[set.format]);
    const char *label = set.label;
    if (strlen(label) >= sizeof a->cfg.label || strpbrk(label, ",\"\n")) {
        ak_config_fail(&cfg, TUSK_ACTOR_ECONFIG, "parameter 'label': '%s' is longer than %zu characters or has a "
                       "comma or quote",
                       label, sizeof a->cfg.label - 1);
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
    ut_qa_destroy(&a->qa);
    tusk_error_t err;
    if (ut_qa_new(&a->qa, &a->cfg, &err) != TUSK_OK)
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
    if (ut_qa_feed(a->qa, input_buffer, size_of_input_buffer, a->offset, &err) != TUSK_OK)
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
    if (ut_qa_finish(a->qa, &err) != TUSK_OK) {
        ak_fail(&a->base, error_code, TUSK_ACTOR_EDATA, "%s", err.message);
        return;
    }
    printf("ut_qa %s: %llu buffers, %llu bytes\n", a->base.label, (unsigned long long)a->buffers,
           (unsigned long long)a->offset);
    ut_qa_print(a->qa, stdout);
    if (ut_qa_write(a->qa, a->dir, a->plot, a->format, &err) != TUSK_OK) {
        ak_fail(&a->base, error_code, err.code == TUSK_ENOMEM ? TUSK_ACTOR_ERESOURCE : TUSK_ACTOR_EIO, "%s",
                err.message);
        fflush(stdout);
        return;
    }
    printf("ut_qa %s: files in %s/ (summary.csv, momentum.csv%s)\n", a->base.label, a->dir,
           a->plot ? ", the picture ut-qa" : "");
    fflush(stdout);
}

void process_reset(void *algo_data, unsigned int *error_code)
{
    qa_actor_t *a = algo_data;
    ak_ok(error_code);
    ut_qa_destroy(&a->qa);
}

void process_unload(void *algo_data, unsigned int *error_code)
{
    ak_ok(error_code);
    free_actor(algo_data);
}
