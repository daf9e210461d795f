/* ut_compass.c - filter: the LHCb UT decoding and Compass tracking
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
 * offset.
 *
 * Written on actorkit's filter skeleton (ak_batch_t, tusk/actorkit.h). */
#include <stdio.h>

#define AK_FILTER
#include "tusk/actorkit.h"
#include "tusk/ut.h"

TUSK_ACTOR_DECLARE("ut_compass", "LHCb UT decoding and Compass tracking: data:ut_raw and data:velo_tracks in, "
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
    ak_batch_t ak;
    ut_config_t cfg;
    ut_geometry_t *geo;
    int backend;
    bool keep_raw, hits;
    ut_ref_t *ref;
    ut_fast_t *fast;
    ut_cl_t *cl;
    ut_batch_t *batch;
    ut_result_t *res;
    uint64_t events, velo, hits_in, tracks_made;
} filter_t;

AK_BACKEND_LIBRARY(filter_t, ut)

/* The actor's parameters (the tracker's are ut_config_read's). */
typedef struct settings {
    ak_backend_t be;
    uint64_t group_size;
    bool keep_raw, hits;
} settings_t;

static void close_filter(void *self)
{
    filter_t *f = self;
    ak_backend_close(f);
    ut_geometry_destroy(&f->geo);
    ut_batch_destroy(&f->batch);
    ut_result_destroy(&f->res);
}

static bool open_filter(ak_config_t *cfg, void *self, const void *settings)
{
    filter_t *f = self;
    const settings_t *set = settings;
    if (!(f->batch = ut_batch_new()) || !(f->res = ut_result_new()))
        return ak_config_fail(cfg, TUSK_ACTOR_ERESOURCE, "out of memory");
    ut_config_default(&f->cfg);
    tusk_error_t err;
    if (ut_config_read(&f->cfg, cfg->params, &err) != TUSK_OK)
        return ak_config_fail(cfg, TUSK_ACTOR_ECONFIG, "%s", err.message);
    f->keep_raw = set->keep_raw;
    f->hits = set->hits;
    ut_result_keep_hits(f->res, f->hits);
    f->backend = set->be.backend + 1; /* UT_REFERENCE, UT_FAST, UT_OPENCL */
    int st = ut_geometry_new(&f->geo, &f->cfg.geo, &err);
    if (st != TUSK_OK)
        return ak_config_fail(cfg, TUSK_ACTOR_ECONFIG, "%s", err.message);
    ut_cl_config_t clc;
    ut_cl_config_default(&clc);
    clc.group_size = (unsigned)set->group_size;
    st = ak_backend_open(f, &set->be, &clc, &err);
    if (st != TUSK_OK)
        return ak_config_fail(cfg, st == TUSK_EPARAM ? TUSK_ACTOR_ECONFIG : TUSK_ACTOR_ERESOURCE, "backend = %s: %s",
                              ut_backend_name(f->backend), err.message);
    return true;
}

static void reset_filter(void *self)
{
    filter_t *f = self;
    f->events = f->velo = f->hits_in = f->tracks_made = 0;
}

static void summary(const void *self)
{
    const filter_t *f = self;
    const ak_batch_t *b = &f->ak;
    char settings[400];
    ut_config_format(&f->cfg, settings, sizeof settings);
    fprintf(stderr,
            "ut_compass %s: %llu buffers (%llu staged), %llu events, %llu UT hits, %llu VELO tracks, %llu UT tracks; "
            "%.3f s tracking (%.4g events/s); %s; backend %s%s%s\n",
            b->base.label, (unsigned long long)b->buffers, (unsigned long long)b->staged_buffers,
            (unsigned long long)f->events, (unsigned long long)f->hits_in, (unsigned long long)f->velo,
            (unsigned long long)f->tracks_made, b->seconds, b->seconds > 0 ? (double)f->events / b->seconds : 0.0,
            settings, ut_backend_name(f->backend), f->cl ? " on " : "", f->cl ? ut_cl_describe(f->cl) : "");
}

/* An event is one event:data:ut frame, so a prefix of whole frames holds
 * whole events. */
static int read_events(void *self, const void *in, size_t size, uint64_t offset, tusk_error_t *err)
{
    filter_t *f = self;
    return ut_frames_read(f->batch, f->geo, in, size, offset, err);
}

static int track(void *self, tusk_error_t *err)
{
    filter_t *f = self;
    int st = ak_backend_run(f, err);
    if (st != TUSK_OK)
        return st;
    f->events += ut_batch_count(f->batch);
    f->hits_in += ut_batch_hits(f->batch);
    f->velo += ut_batch_tracks(f->batch);
    f->tracks_made += ut_result_total(f->res);
    return TUSK_OK;
}

static size_t extra(const void *self)
{
    const filter_t *f = self;
    return ut_frames_extra(f->res, f->hits);
}

static int write_tracks(const void *self, const void *in, size_t size, adf_writer_t *w, tusk_error_t *err)
{
    const filter_t *f = self;
    return ut_frames_write(in, size, f->batch, f->res, &f->cfg, f->backend, f->keep_raw, f->hits, w, err);
}

static const ak_batch_kind_t kind = {.actor = "ut_compass", .size = AK_INSTANCE_SIZE(filter_t), .open = open_filter,
                                     .close = close_filter, .reset = reset_filter, .summary = summary,
                                     .read = read_events, .run = track, .extra = extra, .write = write_tracks};

AK_BATCH_HOOKS

void *process_register_dir(const char *directory_path, char *message, unsigned int message_size,
                           unsigned int *error_code)
{
    /* A local table: the OpenCL work-group default is the library's. */
    ut_cl_config_t clc;
    ut_cl_config_default(&clc);
    const ak_param_t params[] = {
        AK_LIBRARY(ut_config_keys),
        AK_BACKEND_PARAMS(settings_t, be, 1),
        AK_U64("group_size", settings_t, group_size, clc.group_size, 32, 1024),
        AK_BOOL("keep_raw", settings_t, keep_raw, true),
        AK_BOOL("hits", settings_t, hits, false),
        AK_PARAMS_END,
    };
    settings_t set;
    return ak_batch_register(&kind, params, &set, directory_path, message, message_size, error_code);
}
