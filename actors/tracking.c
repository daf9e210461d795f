/* tracking.c - filter: gamma-ray tracking (tusk/track.h, tusk/track_cl.h),
 * built events in, data:tracked frames added.
 *
 * Parameters:
 *   array     the array geometry (required; the simulation's array file)
 *   points    psa | truth | truth_segments (psa): the hits of
 *             event:data:psa composites, or the data:truth points
 *             (tracking/README.md)
 *   backend   reference | fast | opencl (reference): the CPU on one
 *             thread, the CPU on `threads` threads (the same results, to
 *             the bit), or the search over orders on an OpenCL device with
 *             the host's part (clustering, acceptance, bookkeeping) on
 *             `threads` threads
 *   threads   host threads of fast and opencl (0, the default: one per
 *             online CPU; with several instances on one machine, give
 *             each its share); reference is one thread
 *   device    OpenCL device setting (any | gpu | cpu | N | P.D | name;
 *             default $TUSK_CL_DEVICE or any); load-shared instances
 *             spread over matching devices with "gpu:instance"
 *   batch     events per tracking call (0: the whole input buffer)
 *   summary   yes | no (yes): the summary line on stderr at the end of
 *             the run (tusk-track run -q says no); warnings and
 *             failures are printed either way
 *   preset, cone_deg, recluster_deg, max_points, oversize, merge_points,
 *   recombine_points, fom_max, single_min_prob, w0_mm, w1_mm,
 *   inner_radius_mm, min_point_kev: the algorithm (tusk/track.h)
 *
 * Every input buffer is tracked as one batch (one kernel launch per pass
 * for the OpenCL backend): in the psa mode each event:data:psa composite
 * is copied to the output followed by a data:tracked frame with its event
 * number and timestamp; in the truth modes each data:truth frame is, and
 * composites pass unchanged. Every other frame is copied as it is, in
 * order. Decoding, tracking and writing run on the `threads` (the
 * reference on one). The output is written straight into the output
 * buffer when it fits; otherwise it is staged, the call returns
 * TUSK_ACTOR_MORE_OUTPUT and goes on with the same input. A malformed
 * frame, or one the tracking cannot take (it does not decode, or a hit's
 * energy or position is not finite or absurd: tusk/track.h) loses nothing
 * before it: the frames before it are tracked and go out, then the call
 * fails (TUSK_ACTOR_EDATA) naming the frame's number in the input, its
 * offset and what is wrong, and accounting for the input's bytes.
 *
 * A run in which no frame of the type the mode tracks arrived
 * (event:data:psa, or data:truth in the truth modes) but data of other
 * types did (say data:psa before the event builder) fails in
 * process_stop (TUSK_ACTOR_EDATA, naming the types that came and what
 * to do: build events first, or track the truth); one with nothing at
 * all, or only frames passed on by design (meta and conf frames,
 * data:truth in the psa mode, event:data:psa in the truth modes), ends
 * with a WARNING line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AK_FILTER
#include "tusk/actorkit.h"
#include "tusk/array.h"
#include "tusk/track.h"
#include "tusk/track_cl.h"
#include "base/grow.h"

TUSK_ACTOR_DECLARE("tracking", "gamma-ray tracking: event:data:psa (or data:truth) in, data:tracked added",
                   "array: the array geometry file (required)\n"
                   "points: psa | truth | truth_segments (psa)\n"
                   "backend: reference | fast | opencl (reference)\n"
                   "threads: host threads of fast and opencl (0: one per online CPU)\n"
                   "device: OpenCL device setting (TUSK_CL_DEVICE, any)\n"
                   "batch: events per tracking call (0: the whole input buffer)\n"
                   "summary: yes | no: the summary line at the end of the run (yes)\n"
                   "preset: psa | exact: w0_mm, w1_mm, recombine_points for PSA or exact points (psa)\n"
                   "cone_deg, recluster_deg, max_points, oversize, merge_points, recombine_points, fom_max, "
                   "single_min_prob, w0_mm, w1_mm, inner_radius_mm, min_point_kev: the algorithm (tracking/README.md)\n");

enum { BACKEND_REFERENCE, BACKEND_FAST, BACKEND_OPENCL };

typedef struct filter {
    ak_base_t base;
    array_t *array;
    track_t *tracker;
    track_cl_t *cl;
    track_batch_t *batch;
    ak_copier_t copier;
    uint8_t *staged;          /* the output of one input buffer */
    size_t staged_cap, staged_size;
    uint64_t batch_events;    /* events per tracking call, 0: all */
    uint64_t buffers;
    ak_types_t types;         /* what arrived */
    const char *backend;      /* its name */
    bool summary;             /* print the summary line in process_stop */
} filter_t;

/* The parameters: the actor's own, and the algorithm's (track_config_read,
 * points included). */
typedef struct settings {
    const char *array, *device;
    int backend;
    uint64_t batch, threads;
    bool summary;
} settings_t;

static const char *const backends[] = {"reference", "fast", "opencl", NULL};
static const ak_param_t params[] = {
    AK_REQUIRED("array", settings_t, array, "the array geometry file (as the simulation's)"),
    AK_CHOICE("backend", settings_t, backend, backends, BACKEND_REFERENCE),
    AK_U64("batch", settings_t, batch, 0, 0, UINT32_MAX),
    AK_U64("threads", settings_t, threads, 0, 0, 1024),
    AK_STRING("device", settings_t, device, NULL),
    AK_BOOL("summary", settings_t, summary, true),
    AK_LIBRARY(track_known_keys),
    AK_PARAMS_END,
};

AK_STANDARD_HOOKS(filter_t)

static void free_filter(filter_t *f)
{
    if (!f)
        return;
    track_cl_destroy(&f->cl);
    track_destroy(&f->tracker);
    array_destroy(&f->array);
    track_batch_destroy(&f->batch);
    ak_copier_free(&f->copier);
    free(f->staged);
    free(f);
}

void *process_register_dir(const char *directory_path, char *message, unsigned int message_size,
                           unsigned int *error_code)
{
    ak_config_t cfg;
    settings_t set;
    filter_t *f = NULL;
    if (!ak_config_open(&cfg, directory_path, "tracking", params, &set, message, message_size, error_code))
        goto fail;
    f = calloc(1, sizeof *f);
    if (!f || !ak_copier_init(&f->copier) || !(f->batch = track_batch_new())) {
        ak_config_fail(&cfg, TUSK_ACTOR_ERESOURCE, "out of memory");
        goto fail;
    }
    const char *array = set.array;
    int backend = set.backend;
    f->batch_events = set.batch;
    f->summary = set.summary;
    if (!ak_config_base(&cfg, &f->base))
        goto fail;
    track_config_t tc;
    track_config_default(&tc);
    tusk_error_t err;
    if (track_config_read(&tc, cfg.params, false, "tracking parameters", &err) != TUSK_OK) {
        ak_config_fail(&cfg, TUSK_ACTOR_ECONFIG, "%s", err.message);
        goto fail;
    }
    if (array_load(&f->array, array, NULL, &err) != TUSK_OK) {
        ak_config_fail(&cfg, err.code == TUSK_ENOMEM ? TUSK_ACTOR_ERESOURCE : TUSK_ACTOR_ECONFIG,
                       "parameter 'array': %s", err.message);
        goto fail;
    }
    if (track_new(&f->tracker, &tc, f->array, &err) != TUSK_OK) {
        ak_config_fail(&cfg, TUSK_ACTOR_ECONFIG, "%s", err.message);
        goto fail;
    }
    if (backend != BACKEND_REFERENCE && track_set_threads(f->tracker, (unsigned)set.threads, &err) != TUSK_OK) {
        ak_config_fail(&cfg, TUSK_ACTOR_ERESOURCE, "threads = %llu: %s", (unsigned long long)set.threads,
                       err.message);
        goto fail;
    }
    f->backend = backends[backend];
    if (backend == BACKEND_OPENCL &&
        track_cl_new(&f->cl, f->tracker, set.device, f->base.instance, &err) !=
            TUSK_OK) {
        ak_config_fail(&cfg, TUSK_ACTOR_ERESOURCE, "backend = opencl: %s", err.message);
        goto fail;
    }
    ak_config_close(&cfg);
    return f;
fail:
    free_filter(f);
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
    filter_t *f = algo_data;
    ak_ok(error_code);
    ak_copier_reset(&f->copier);
    track_stats_reset(f->tracker);
    f->buffers = 0;
    ak_types_reset(&f->types);
}

void process_stop(void *algo_data, unsigned int *error_code)
{
    filter_t *f = algo_data;
    ak_ok(error_code);
    if (f->summary) {
        track_stats_t s;
        track_stats(f->tracker, &s);
        char line[768];
        track_stats_format(&s, line, sizeof line);
        fprintf(stderr, "tracking %s: %s points: %s; %s, %u host thread%s%s%s\n", f->base.label,
                track_points_name(track_config(f->tracker)->points), line, f->backend, track_threads(f->tracker),
                track_threads(f->tracker) == 1 ? "" : "s", f->cl ? "; on " : "", f->cl ? track_cl_describe(f->cl) : "");
    }
    const bool psa = track_config(f->tracker)->points == TRACK_POINTS_PSA;
    const uint32_t passed = psa ? ADF_TYPE_DATA_TRUTH : ADF_TYPE_EVENT_DATA_PSA;
    if (ak_types_expect(&f->base, "tracking", &f->types, psa ? ADF_TYPE_EVENT_DATA_PSA : ADF_TYPE_DATA_TRUTH,
                        psa ? "tracks (points = psa)" : "tracks (points = truth, truth_segments)", &passed, 1,
                        error_code) != TUSK_ACTOR_OK) {
        /* What to do about it (the message may be cut short, never overrun). */
        size_t used = strlen(f->base.message);
        snprintf(f->base.message + used, sizeof f->base.message - used, "; %s",
                 psa ? "build events first (psa, then event_builder), or track simulated data with points = truth"
                     : "simulate with truth = yes");
    }
}

void process_unload(void *algo_data, unsigned int *error_code)
{
    ak_ok(error_code);
    free_filter(algo_data);
}

/* Track the batch's events, `batch_events` at a time when set (the
 * results land in the same batch either way). */
static int track_all(filter_t *f, tusk_error_t *err)
{
    size_t n = track_batch_events(f->batch), step = f->batch_events ? (size_t)f->batch_events : (n ? n : 1);
    int st = TUSK_OK;
    for (size_t first = 0; first < n && !st; first += step) {
        size_t count = n - first < step ? n - first : step;
        st = f->cl ? track_cl_run_range(f->cl, f->batch, first, count, err)
                   : track_run_range(f->tracker, f->batch, first, count, err);
    }
    return st;
}

/* track_frames_read on the first `size` bytes of an input, for
 * ak_input_bisect. */
typedef struct probe {
    filter_t *f;
    const void *in;
} probe_t;

static bool read_prefix(void *ctx, unsigned size)
{
    probe_t *p = ctx;
    tusk_error_t err;
    return track_frames_read(p->f->tracker, p->f->batch, p->in, size, 0, &err) == TUSK_OK;
}

/* Track one input buffer: its frames up to the first one that is
 * malformed or that the tracking cannot take (a composite that does not
 * decode, a hit with a non-finite or absurd energy or position); the
 * failure follows their output (see ak_input_check). The output goes
 * straight into out when it fits (*direct), else into f->staged. */
static unsigned analyse(filter_t *f, const void *in, unsigned in_size, void *out, unsigned out_size, bool *direct,
                        unsigned *error_code)
{
    unsigned valid;
    unsigned code = ak_input_check(&f->copier, &f->base, in, in_size, &valid);
    if (code != TUSK_ACTOR_OK) {
        *error_code = code;
        return code;
    }
    tusk_error_t err;
    f->buffers++;
    if (track_frames_read(f->tracker, f->batch, in, valid, 0, &err) != TUSK_OK) {
        /* Which frame: the input is taken up to it. */
        probe_t probe = {f, in};
        uint64_t offset, frame;
        if (err.code == TUSK_ENOMEM || !ak_input_bisect(&f->copier, in, valid, read_prefix, &probe, &offset, &frame))
            return ak_fail(&f->base, error_code, err.code == TUSK_ENOMEM ? TUSK_ACTOR_ERESOURCE : TUSK_ACTOR_EDATA,
                           "input %s", err.message);
        ak_input_damage(&f->copier, in_size, offset, frame, err.message);
        valid = (unsigned)offset;
        if (track_frames_read(f->tracker, f->batch, in, valid, 0, &err) != TUSK_OK)
            return ak_fail(&f->base, error_code, err.code == TUSK_ENOMEM ? TUSK_ACTOR_ERESOURCE : TUSK_ACTOR_EDATA,
                           "input %s", err.message);
    }
    ak_types_tally(&f->types, &f->copier, in, valid);
    if (track_all(f, &err) != TUSK_OK)
        return ak_fail(&f->base, error_code, err.code == TUSK_ENOMEM ? TUSK_ACTOR_ERESOURCE : TUSK_ACTOR_ERROR,
                       "%s", err.message);
    size_t need = (size_t)valid + track_frames_extra(f->batch);
    *direct = need <= out_size;
    if (!*direct && tusk_grow(&f->staged, &f->staged_cap, need, 1) != 0)
        return ak_fail(&f->base, error_code, TUSK_ACTOR_ERESOURCE, "out of memory (%zu bytes)", need);
    if (track_frames_write_buffer(f->tracker, f->batch, in, valid, *direct ? out : f->staged,
                                  *direct ? out_size : f->staged_cap, &f->staged_size, &err) != TUSK_OK)
        return ak_fail(&f->base, error_code, TUSK_ACTOR_ERROR, "writing the output: %s", err.message);
    return TUSK_ACTOR_OK;
}

void process_block(void *algo_data, void *input_buffer, unsigned int size_of_input_buffer, void *output_buffer,
                   unsigned int size_of_output_buffer, unsigned int *used_size_of_output_buffer,
                   unsigned int *error_code)
{
    filter_t *f = algo_data;
    ak_ok(error_code);
    *used_size_of_output_buffer = 0;
    if (!input_buffer)
        size_of_input_buffer = 0;
    /* A damaged input whose valid part went out: now its failure. */
    if (ak_input_failed(&f->copier, &f->base, error_code))
        return;
    /* A call after MORE_OUTPUT goes on copying what this input gave. */
    if (f->copier.resume_size == 0) {
        bool direct = false;
        if (analyse(f, input_buffer, size_of_input_buffer, output_buffer, size_of_output_buffer, &direct,
                    error_code) != TUSK_ACTOR_OK)
            return;
        if (direct) {
            *used_size_of_output_buffer = (unsigned)f->staged_size;
            *error_code = ak_input_done(&f->copier, &f->base, TUSK_ACTOR_OK, *used_size_of_output_buffer);
            return;
        }
    }
    unsigned code = ak_copy_frames(&f->copier, &f->base, f->staged, (unsigned)f->staged_size, output_buffer,
                                   size_of_output_buffer, used_size_of_output_buffer);
    *error_code = ak_input_done(&f->copier, &f->base, code, *used_size_of_output_buffer);
}
