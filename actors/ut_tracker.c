/* ut_tracker.c - filter: the LHCb UT decoding and Compass tracking
 * (tusk/ut.h), each event's data:ut_raw and data:velo_tracks in, its
 * data:ut_tracks (and data:ut_hits) added after the VELO tracks.
 *
 * Parameters:
 *   sectors, candidates, p_min_gev, pt_min_gev, kick_gev, z_kick_mm,
 *             x_tol_mm, y_tol_mm, dtx_tol, kink_tol_mm, hit_tol_mm,
 *             max_chi2, hit_sigma_strips, kink_sigma_mm: the tracker; and
 *             the geometry's keys, as the producer has them (ut/README.md)
 *   backend   reference | fast | opencl (fast)
 *   threads   threads of the fast backend and of the OpenCL packing (0: one per CPU)
 *   device    OpenCL device setting (any | gpu | cpu | N | P.D | name;
 *             default $TUSK_CL_DEVICE or any); load-shared instances
 *             spread over matching devices with "gpu:instance"
 *   cl.options, cl.cache: as every OpenCL actor (opencl/README.md)
 *   group_size  work-items of an event's work-group (128)
 *   keep_raw  pass the raw banks on (yes); no: the VELO tracks, UT tracks,
 *             truth and the other frames go on
 *   hits      write the decoded hits, data:ut_hits (no)
 *
 * Every input buffer is one batch: its events go through the backend
 * together (one launch on OpenCL: many events in flight) and their
 * results go out in the same call; nothing is held back, so the runtime's
 * accounting of finished inputs is exact. The output holds every frame of
 * the input in order (data:ut_truth and anything else unchanged), each
 * event (an event:data:ut frame) with its data:ut_tracks added after its
 * data:velo_tracks (same event number and timestamp). When it fits the output buffer it is written
 * straight into it; otherwise it is staged and the call returns
 * TUSK_ACTOR_MORE_OUTPUT and goes on with the same input. A malformed
 * frame, or an event that does not decode (raw banks of another geometry,
 * a sector or strip the geometry does not have), loses nothing before it:
 * the events before it are tracked and go out, then the call fails
 * (TUSK_ACTOR_EDATA) naming the frame's number in the input and its
 * offset. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AK_FILTER
#include "actorkit.h"
#include "base/clock.h"
#include "base/grow.h"
#include "tusk/ut.h"

TUSK_ACTOR_DECLARE("ut_tracker", "LHCb UT decoding and Compass tracking: data:ut_raw and data:velo_tracks in, "
                                 "data:ut_tracks added",
                   "sectors, candidates, p_min_gev, pt_min_gev, kick_gev, z_kick_mm, x_tol_mm, y_tol_mm, dtx_tol, "
                   "kink_tol_mm, hit_tol_mm, max_chi2, hit_sigma_strips, kink_sigma_mm: the tracker; planes_z_mm, "
                   "stereo_deg, staves_x, staves_uv, stave_width_mm, rows, pitch_um, fine_pitch_um, fine_staves, "
                   "inner_staves, inner_rows, inner_groups, hole_mm: the geometry (ut/README.md)\n"
                   "backend: reference | fast | opencl (fast)\n"
                   "threads: threads of fast and of the OpenCL packing (0: one per CPU)\n"
                   "device: OpenCL device setting (TUSK_CL_DEVICE, any)\n"
                   "cl.options, cl.cache: OpenCL build options, binary cache (on)\n"
                   "group_size: work-items of an event's work-group (128)\n"
                   "keep_raw: pass the raw banks on (yes)\n"
                   "hits: write the decoded hits, data:ut_hits (no)\n");

typedef struct filter {
    ak_base_t base;
    ut_config_t cfg;
    ut_geometry_t *geo;
    int backend;
    bool keep_raw, hits;
    ut_ref_t *ref;
    ut_fast_t *fast;
    ut_cl_t *cl;
    ut_batch_t *batch;
    ut_result_t *res;
    adf_writer_t *writer;
    ak_copier_t copier;
    uint8_t *staged;
    size_t staged_cap, staged_size;
    uint64_t buffers, events, velo, hits_in, tracks_made, offset, staged_buffers;
    double seconds;
} filter_t;

AK_STANDARD_HOOKS(filter_t)

/* The actor's parameters (the tracker's are ut_config_read's). */
typedef struct settings {
    int backend;
    uint64_t threads, group_size;
    bool cache, keep_raw, hits;
    const char *device, *options;
} settings_t;

static const char *const backends[] = {"reference", "fast", "opencl", NULL};

static void free_filter(filter_t *f)
{
    if (!f)
        return;
    ut_ref_destroy(&f->ref);
    ut_fast_destroy(&f->fast);
    ut_cl_destroy(&f->cl);
    ut_geometry_destroy(&f->geo);
    ut_batch_destroy(&f->batch);
    ut_result_destroy(&f->res);
    adf_writer_destroy(&f->writer);
    ak_copier_free(&f->copier);
    free(f->staged);
    free(f);
}

static bool open_backend(ak_config_t *cfg, filter_t *f, const settings_t *set, ut_cl_config_t clc)
{
    uint64_t threads = set->threads;
    f->keep_raw = set->keep_raw;
    f->hits = set->hits;
    ut_result_keep_hits(f->res, f->hits);
    f->backend = set->backend + 1; /* UT_REFERENCE, UT_FAST, UT_OPENCL */
    tusk_error_t err;
    int st = ut_geometry_new(&f->geo, &f->cfg.geo, &err);
    if (st != TUSK_OK)
        return ak_config_fail(cfg, TUSK_ACTOR_ECONFIG, "%s", err.message);
    if (f->backend == UT_REFERENCE)
        st = ut_ref_new(&f->ref, &f->cfg, &err);
    else if (f->backend == UT_FAST)
        st = ut_fast_new(&f->fast, &f->cfg, (unsigned)threads, &err);
    else {
        clc.device = set->device;
        clc.instance = f->base.instance;
        clc.options = set->options;
        clc.no_cache = !set->cache;
        clc.group_size = (unsigned)set->group_size;
        clc.threads = (unsigned)threads;
        st = ut_cl_new(&f->cl, &f->cfg, &clc, &err);
    }
    if (st != TUSK_OK)
        return ak_config_fail(cfg, st == TUSK_EPARAM ? TUSK_ACTOR_ECONFIG : TUSK_ACTOR_ERESOURCE, "backend = %s: %s",
                              ut_backend_name(f->backend), err.message);
    return true;
}

void *process_register_dir(const char *directory_path, char *message, unsigned int message_size,
                           unsigned int *error_code)
{
    /* A local table: the OpenCL work-group default is the library's. */
    ut_cl_config_t clc;
    ut_cl_config_default(&clc);
    const ak_param_t params[] = {
        AK_LIBRARY(ut_config_keys),
        AK_CHOICE("backend", settings_t, backend, backends, 1),
        AK_U64("threads", settings_t, threads, 0, 0, 1024),
        AK_STRING("device", settings_t, device, NULL),
        AK_STRING("cl.options", settings_t, options, NULL),
        AK_BOOL("cl.cache", settings_t, cache, true),
        AK_U64("group_size", settings_t, group_size, clc.group_size, 32, 1024),
        AK_BOOL("keep_raw", settings_t, keep_raw, true),
        AK_BOOL("hits", settings_t, hits, false),
        AK_PARAMS_END,
    };
    ak_config_t cfg;
    settings_t set;
    filter_t *f = NULL;
    if (!ak_config_open(&cfg, directory_path, "ut_tracker", params, &set, message, message_size, error_code))
        goto fail;
    f = calloc(1, sizeof *f);
    if (!f || !ak_copier_init(&f->copier) || !(f->writer = adf_writer_new()) || !(f->batch = ut_batch_new()) ||
        !(f->res = ut_result_new())) {
        ak_config_fail(&cfg, TUSK_ACTOR_ERESOURCE, "out of memory");
        goto fail;
    }
    if (!ak_config_base(&cfg, &f->base))
        goto fail;
    ut_config_default(&f->cfg);
    tusk_error_t err;
    if (ut_config_read(&f->cfg, cfg.params, &err) != TUSK_OK) {
        ak_config_fail(&cfg, TUSK_ACTOR_ECONFIG, "%s", err.message);
        goto fail;
    }
    if (!open_backend(&cfg, f, &set, clc))
        goto fail;
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
    f->staged_size = 0;
    f->buffers = f->events = f->velo = f->hits_in = f->tracks_made = f->offset = f->staged_buffers = 0;
    f->seconds = 0;
}

void process_stop(void *algo_data, unsigned int *error_code)
{
    filter_t *f = algo_data;
    ak_ok(error_code);
    char settings[400];
    ut_config_format(&f->cfg, settings, sizeof settings);
    fprintf(stderr,
            "ut_tracker %s: %llu buffers (%llu staged), %llu events, %llu UT hits, %llu VELO tracks, %llu UT tracks; "
            "%.3f s tracking (%.4g events/s); %s; backend %s%s%s\n",
            f->base.label, (unsigned long long)f->buffers, (unsigned long long)f->staged_buffers,
            (unsigned long long)f->events, (unsigned long long)f->hits_in, (unsigned long long)f->velo,
            (unsigned long long)f->tracks_made, f->seconds, f->seconds > 0 ? (double)f->events / f->seconds : 0.0,
            settings, ut_backend_name(f->backend), f->cl ? " on " : "", f->cl ? ut_cl_describe(f->cl) : "");
}

void process_unload(void *algo_data, unsigned int *error_code)
{
    ak_ok(error_code);
    free_filter(algo_data);
}

/* ut_frames_read on the first `size` bytes of an input, for
 * ak_input_bisect (an event is one event:data:ut frame, so a prefix of
 * whole frames holds whole events). */
typedef struct probe {
    filter_t *f;
    const void *in;
} probe_t;

static bool read_prefix(void *ctx, unsigned size)
{
    probe_t *p = ctx;
    tusk_error_t err;
    return ut_frames_read(p->f->batch, p->f->geo, p->in, size, 0, &err) == TUSK_OK;
}

/* The tracking of one input buffer (its frames up to the first one
 * that is malformed or does not decode: the failure follows their output,
 * see ak_input_check); its output straight into out when it fits (*direct
 * set), else into f->staged. */
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
    uint64_t base = f->offset;
    f->offset += in_size;
    if (ut_frames_read(f->batch, f->geo, in, valid, base, &err) != TUSK_OK) {
        /* Which frame, in the buffer's own offsets: the input is taken up
         * to it. */
        probe_t probe = {f, in};
        uint64_t offset, frame;
        bool found = err.code != TUSK_ENOMEM && ut_frames_read(f->batch, f->geo, in, valid, 0, &err) != TUSK_OK &&
                     err.code != TUSK_ENOMEM &&
                     ak_input_bisect(&f->copier, in, valid, read_prefix, &probe, &offset, &frame);
        if (found) {
            ak_input_damage(&f->copier, in_size, offset, frame, err.message);
            valid = (unsigned)offset;
        }
        if (!found || ut_frames_read(f->batch, f->geo, in, valid, base, &err) != TUSK_OK)
            return ak_fail(&f->base, error_code, err.code == TUSK_ENOMEM ? TUSK_ACTOR_ERESOURCE : TUSK_ACTOR_EDATA,
                           "input buffer %llu (input offsets count the bytes this instance received): %s",
                           (unsigned long long)f->buffers, err.message);
    }
    double t0 = tusk_clock_s();
    int st = f->ref ? ut_ref_run(f->ref, f->batch, f->res, &err)
             : f->fast ? ut_fast_run(f->fast, f->batch, f->res, &err)
                       : ut_cl_run(f->cl, f->batch, f->res, &err);
    f->seconds += tusk_clock_s() - t0;
    if (st != TUSK_OK)
        return ak_fail(&f->base, error_code,
                       st == TUSK_ENOMEM ? TUSK_ACTOR_ERESOURCE : st == TUSK_EINVAL ? TUSK_ACTOR_EDATA : TUSK_ACTOR_ERROR,
                       "input buffer %llu: %s", (unsigned long long)f->buffers, err.message);
    f->events += ut_batch_count(f->batch);
    f->hits_in += ut_batch_hits(f->batch);
    f->velo += ut_batch_tracks(f->batch);
    f->tracks_made += ut_result_total(f->res);
    size_t need = (size_t)valid + ut_frames_extra(f->res, f->hits);
    *direct = need <= out_size;
    if (!*direct) {
        if (tusk_grow(&f->staged, &f->staged_cap, need, 1) != 0)
            return ak_fail(&f->base, error_code, TUSK_ACTOR_ERESOURCE, "out of memory (%zu bytes)", need);
        f->staged_buffers++;
    }
    adf_writer_reset(f->writer, *direct ? out : f->staged, *direct ? out_size : f->staged_cap);
    if (ut_frames_write(in, valid, f->batch, f->res, &f->cfg, f->backend, f->keep_raw, f->hits, f->writer, &err) !=
        TUSK_OK)
        return ak_fail(&f->base, error_code, TUSK_ACTOR_ERROR, "writing the output: %s", err.message);
    f->staged_size = adf_writer_used(f->writer);
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
