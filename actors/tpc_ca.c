/* tpc_ca.c - filter: the ALICE TPC slice tracker (tusk/tpc.h),
 * data:tpc_clusters in, data:tpc_tracks added after each.
 *
 * Parameters:
 *   sigma_y_mm, sigma_z_mm, area_tan_y, area_tan_z, nf_candidates,
 *   min_bin_mm, seed_chi2, cluster_chi2, max_sin_phi, stop_sigma_y_mm,
 *   noise, min_seed, min_hits, max_gap, sel_gap: the tracker (tpc/README.md)
 *   backend   reference | fast | opencl (fast)
 *   threads   threads of the fast backend and of the OpenCL host steps (0: one per CPU)
 *   device    OpenCL device setting (any | gpu | cpu | N | P.D | name;
 *             default $TUSK_CL_DEVICE or any); load-shared instances
 *             spread over matching devices with "gpu:instance"
 *   cl.options, cl.cache: as every OpenCL actor (opencl/README.md)
 *   group_size  work-items of a work-group (128)
 *   keep_clusters  pass the clusters on (yes); no: tracks, truth and the
 *             other frames go on
 *
 * An event arrives as one or more buffers of whole slices (adf/FORMAT.md);
 * each slice is tracked on its own, so each input buffer is one batch: its
 * slices go through the backend together (one launch of each step on
 * OpenCL) and their tracks go out in the same call. Nothing is held back,
 * so the runtime's accounting of finished inputs is exact. The output
 * holds every frame of the input in order (data:tpc_truth and anything
 * else unchanged), each data:tpc_clusters followed by its slice's tracks
 * (same event number and timestamp). When it fits the output buffer it is
 * written straight into it; otherwise it is staged and the call returns
 * TUSK_ACTOR_MORE_OUTPUT and goes on with the same input. A malformed
 * frame, or one that does not decode, loses nothing before it: the slices
 * before it are tracked and go out, then the call fails (TUSK_ACTOR_EDATA)
 * naming the frame's number in the input and its offset.
 *
 * Written on actorkit's filter skeleton (ak_batch_t, tusk/actorkit.h). */
#include <stdio.h>

#define AK_FILTER
#include "tusk/actorkit.h"
#include "tusk/tpc.h"

TUSK_ACTOR_DECLARE("tpc_ca", "ALICE TPC slice tracker (cellular automaton and Kalman filter): data:tpc_clusters "
                                  "in, data:tpc_tracks added",
                   "sigma_y_mm, sigma_z_mm, area_tan_y, area_tan_z, nf_candidates, min_bin_mm, seed_chi2, "
                   "cluster_chi2, max_sin_phi, stop_sigma_y_mm, noise, min_seed, min_hits, max_gap, sel_gap: the "
                   "tracker (tpc/README.md)\n"
                   "backend: reference | fast | opencl (fast)\n"
                   "threads: threads of fast and of the OpenCL host steps (0: one per CPU)\n"
                   "device: OpenCL device setting (TUSK_CL_DEVICE, any)\n"
                   "cl.options, cl.cache: OpenCL build options, binary cache (on)\n"
                   "group_size: work-items of a work-group (128)\n"
                   "keep_clusters: pass the clusters on (yes)\n");

typedef struct filter {
    ak_batch_t ak;
    tpc_config_t cfg;
    int backend;
    bool keep_clusters;
    tpc_ref_t *ref;
    tpc_fast_t *fast;
    tpc_cl_t *cl;
    tpc_batch_t *batch;
    tpc_result_t *res;
    uint64_t slices, clusters, tracks, hits;
} filter_t;

AK_BACKEND_LIBRARY(filter_t, tpc)

/* The actor's parameters (the tracker's are tpc_config_read's). */
typedef struct settings {
    ak_backend_t be;
    uint64_t group_size;
    bool keep_clusters;
} settings_t;

static void close_filter(void *self)
{
    filter_t *f = self;
    ak_backend_close(f);
    tpc_batch_destroy(&f->batch);
    tpc_result_destroy(&f->res);
}

static bool open_filter(ak_config_t *cfg, void *self, const void *settings)
{
    filter_t *f = self;
    const settings_t *set = settings;
    if (!(f->batch = tpc_batch_new()) || !(f->res = tpc_result_new()))
        return ak_config_fail(cfg, TUSK_ACTOR_ERESOURCE, "out of memory");
    tpc_config_default(&f->cfg);
    tusk_error_t err;
    if (tpc_config_read(&f->cfg, cfg->params, &err) != TUSK_OK)
        return ak_config_fail(cfg, TUSK_ACTOR_ECONFIG, "%s", err.message);
    f->keep_clusters = set->keep_clusters;
    f->backend = set->be.backend + 1; /* TPC_REFERENCE, TPC_FAST, TPC_OPENCL */
    tpc_cl_config_t clc;
    tpc_cl_config_default(&clc);
    clc.group_size = (unsigned)set->group_size;
    int st = ak_backend_open(f, &set->be, &clc, &err);
    if (st != TUSK_OK)
        return ak_config_fail(cfg, st == TUSK_EPARAM || st == TUSK_EINVAL ? TUSK_ACTOR_ECONFIG : TUSK_ACTOR_ERESOURCE,
                              "backend = %s: %s", tpc_backend_name(f->backend), err.message);
    return true;
}

static void reset_filter(void *self)
{
    filter_t *f = self;
    f->slices = f->clusters = f->tracks = f->hits = 0;
}

static void summary(const void *self)
{
    const filter_t *f = self;
    const ak_batch_t *b = &f->ak;
    char settings[400];
    tpc_config_format(&f->cfg, settings, sizeof settings);
    fprintf(stderr,
            "tpc_ca %s: %llu buffers (%llu staged), %llu slices, %llu clusters, %llu tracks of %llu clusters; "
            "%.3f s tracking (%.3g clusters/s); %s; backend %s%s%s\n",
            b->base.label, (unsigned long long)b->buffers, (unsigned long long)b->staged_buffers,
            (unsigned long long)f->slices, (unsigned long long)f->clusters, (unsigned long long)f->tracks,
            (unsigned long long)f->hits, b->seconds, b->seconds > 0 ? (double)f->clusters / b->seconds : 0.0,
            settings, tpc_backend_name(f->backend), f->cl ? " on " : "", f->cl ? tpc_cl_describe(f->cl) : "");
}

static int read_slices(void *self, const void *in, size_t size, uint64_t offset, tusk_error_t *err)
{
    return tpc_frames_read(((filter_t *)self)->batch, in, size, offset, err);
}

static int track(void *self, tusk_error_t *err)
{
    filter_t *f = self;
    int st = ak_backend_run(f, err);
    if (st != TUSK_OK)
        return st;
    uint64_t nt, nh;
    tpc_result_totals(f->res, &nt, &nh, NULL);
    f->slices += tpc_batch_count(f->batch);
    f->clusters += tpc_batch_clusters(f->batch);
    f->tracks += nt;
    f->hits += nh;
    return TUSK_OK;
}

static size_t extra(const void *self)
{
    return tpc_frames_extra(((const filter_t *)self)->res);
}

static int write_tracks(const void *self, const void *in, size_t size, adf_writer_t *w, tusk_error_t *err)
{
    const filter_t *f = self;
    return tpc_frames_write(in, size, f->batch, f->res, &f->cfg, f->backend, f->keep_clusters, w, err);
}

/* A batch the tracker cannot hold (TUSK_ELIMIT) is the input's fault. */
static const ak_batch_kind_t kind = {.actor = "tpc_ca", .size = AK_INSTANCE_SIZE(filter_t), .limit_is_data = true,
                                     .open = open_filter, .close = close_filter, .reset = reset_filter,
                                     .summary = summary, .read = read_slices, .run = track, .extra = extra,
                                     .write = write_tracks};

AK_BATCH_HOOKS

void *process_register_dir(const char *directory_path, char *message, unsigned int message_size,
                           unsigned int *error_code)
{
    /* A local table: the OpenCL work-group default is the library's. */
    tpc_cl_config_t clc;
    tpc_cl_config_default(&clc);
    const ak_param_t params[] = {
        AK_LIBRARY(tpc_config_keys),
        AK_BACKEND_PARAMS(settings_t, be, 1),
        AK_U64("group_size", settings_t, group_size, clc.group_size, 1, 4096),
        AK_BOOL("keep_clusters", settings_t, keep_clusters, true),
        AK_PARAMS_END,
    };
    settings_t set;
    return ak_batch_register(&kind, params, &set, directory_path, message, message_size, error_code);
}
