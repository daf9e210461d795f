/* sts_hitfinder.c - filter: the CBM STS local reconstruction (tusk/sts.h),
 * data:sts_digis in, data:sts_clusters and data:sts_hits added after each.
 *
 * Parameters:
 *   time_resolution_ns, delta_sigmas, charge_noise, cog_sys_strips,
 *             hit_time_cut, hit_y_tol_mm: the reconstruction (sts/README.md)
 *   backend   reference | fast | opencl (fast)
 *   threads   threads of the fast backend and of the OpenCL packing (0: one per CPU)
 *   device    OpenCL device setting (any | gpu | cpu | N | P.D | name;
 *             default $TUSK_CL_DEVICE or any); load-shared instances
 *             spread over matching devices with "gpu:instance"
 *   cl.options, cl.cache: as every OpenCL actor (opencl/README.md)
 *   group_size  work-items a work-group (256; sts/README.md, "Load")
 *   keep_digis  pass the digis on (yes); no: clusters, hits, truth and the
 *             other frames go on
 *   clusters  write data:sts_clusters (yes); no: only the hits
 *
 * A timeslice arrives as many buffers of whole modules (adf/FORMAT.md);
 * the reconstruction is per module, so each input buffer is one batch:
 * its modules go through the backend together (one launch on OpenCL) and
 * their results go out in the same call. Nothing is held back, so the
 * runtime's accounting of finished inputs is exact. The output holds
 * every frame of the input in order (data:sts_truth and anything else
 * unchanged), each data:sts_digis followed by its module's clusters and
 * hits (same timeslice number and timestamp). When it fits the output
 * buffer it is written straight into it; otherwise it is staged and the
 * call returns TUSK_ACTOR_MORE_OUTPUT and goes on with the same input. A
 * malformed frame, or one that does not decode, loses nothing before it:
 * the modules before it are reconstructed and go out, then the call fails
 * (TUSK_ACTOR_EDATA) naming the frame's number in the input and its
 * offset.
 *
 * Written on actorkit's filter skeleton (ak_batch_t, tusk/actorkit.h). */
#include <stdio.h>

#define AK_FILTER
#include "tusk/actorkit.h"
#include "tusk/sts.h"

TUSK_ACTOR_DECLARE("sts_hitfinder", "CBM STS local reconstruction: data:sts_digis in, data:sts_clusters and "
                                    "data:sts_hits added",
                   "time_resolution_ns, delta_sigmas, charge_noise, cog_sys_strips, hit_time_cut, hit_y_tol_mm: the "
                   "reconstruction (sts/README.md)\n"
                   "backend: reference | fast | opencl (fast)\n"
                   "threads: threads of fast and of the OpenCL packing (0: one per CPU)\n"
                   "device: OpenCL device setting (TUSK_CL_DEVICE, any)\n"
                   "cl.options, cl.cache: OpenCL build options, binary cache (on)\n"
                   "group_size: work-items a work-group (256)\n"
                   "keep_digis: pass the digis on (yes)\n"
                   "clusters: write data:sts_clusters (yes)\n");

typedef struct filter {
    ak_batch_t ak;
    sts_config_t cfg;
    int backend;
    bool keep_digis, clusters;
    sts_ref_t *ref;
    sts_fast_t *fast;
    sts_cl_t *cl;
    sts_batch_t *batch;
    sts_result_t *res;
    uint64_t modules, digis, clusters_made, hits_made;
} filter_t;

AK_BACKEND_LIBRARY(filter_t, sts)

/* The actor's parameters (the reconstruction's are sts_config_read's). */
typedef struct settings {
    ak_backend_t be;
    uint64_t group_size;
    bool keep_digis, clusters;
} settings_t;

static void close_filter(void *self)
{
    filter_t *f = self;
    ak_backend_close(f);
    sts_batch_destroy(&f->batch);
    sts_result_destroy(&f->res);
}

static bool open_filter(ak_config_t *cfg, void *self, const void *settings)
{
    filter_t *f = self;
    const settings_t *set = settings;
    if (!(f->batch = sts_batch_new()) || !(f->res = sts_result_new()))
        return ak_config_fail(cfg, TUSK_ACTOR_ERESOURCE, "out of memory");
    sts_config_default(&f->cfg);
    tusk_error_t err;
    if (sts_config_read(&f->cfg, cfg->params, &err) != TUSK_OK)
        return ak_config_fail(cfg, TUSK_ACTOR_ECONFIG, "%s", err.message);
    f->keep_digis = set->keep_digis;
    f->clusters = set->clusters;
    f->backend = set->be.backend + 1; /* STS_REFERENCE, STS_FAST, STS_OPENCL */
    sts_cl_config_t clc;
    sts_cl_config_default(&clc);
    clc.group_size = (unsigned)set->group_size;
    int st = ak_backend_open(f, &set->be, &clc, &err);
    if (st != TUSK_OK)
        return ak_config_fail(cfg, st == TUSK_EPARAM ? TUSK_ACTOR_ECONFIG : TUSK_ACTOR_ERESOURCE, "backend = %s: %s",
                              sts_backend_name(f->backend), err.message);
    return true;
}

static void reset_filter(void *self)
{
    filter_t *f = self;
    f->modules = f->digis = f->clusters_made = f->hits_made = 0;
}

static void summary(const void *self)
{
    const filter_t *f = self;
    const ak_batch_t *b = &f->ak;
    char settings[320];
    sts_config_format(&f->cfg, settings, sizeof settings);
    fprintf(stderr,
            "sts_hitfinder %s: %llu buffers (%llu staged), %llu modules, %llu digis, %llu clusters, %llu hits; %.3f s "
            "reconstructing (%.3g digis/s); %s; backend %s%s%s\n",
            b->base.label, (unsigned long long)b->buffers, (unsigned long long)b->staged_buffers,
            (unsigned long long)f->modules, (unsigned long long)f->digis, (unsigned long long)f->clusters_made,
            (unsigned long long)f->hits_made, b->seconds, b->seconds > 0 ? (double)f->digis / b->seconds : 0.0,
            settings, sts_backend_name(f->backend), f->cl ? " on " : "", f->cl ? sts_cl_describe(f->cl) : "");
}

static int read_modules(void *self, const void *in, size_t size, uint64_t offset, tusk_error_t *err)
{
    return sts_frames_read(((filter_t *)self)->batch, in, size, offset, err);
}

static int reconstruct(void *self, tusk_error_t *err)
{
    filter_t *f = self;
    int st = ak_backend_run(f, err);
    if (st != TUSK_OK)
        return st;
    uint64_t nc, nh;
    sts_result_totals(f->res, &nc, &nh);
    f->modules += sts_batch_count(f->batch);
    f->digis += sts_batch_digis(f->batch);
    f->clusters_made += nc;
    f->hits_made += nh;
    return TUSK_OK;
}

static size_t extra(const void *self)
{
    const filter_t *f = self;
    return sts_frames_extra(f->res, f->clusters);
}

static int write_hits(const void *self, const void *in, size_t size, adf_writer_t *w, tusk_error_t *err)
{
    const filter_t *f = self;
    return sts_frames_write(in, size, f->batch, f->res, &f->cfg, f->backend, f->keep_digis, f->clusters, w, err);
}

static const ak_batch_kind_t kind = {.actor = "sts_hitfinder", .size = AK_INSTANCE_SIZE(filter_t), .open = open_filter,
                                     .close = close_filter, .reset = reset_filter, .summary = summary,
                                     .read = read_modules, .run = reconstruct, .extra = extra, .write = write_hits};

AK_BATCH_HOOKS

void *process_register_dir(const char *directory_path, char *message, unsigned int message_size,
                           unsigned int *error_code)
{
    /* A local table: the OpenCL work-group default is the library's. */
    sts_cl_config_t clc;
    sts_cl_config_default(&clc);
    const ak_param_t params[] = {
        AK_LIBRARY(sts_config_keys),
        AK_BACKEND_PARAMS(settings_t, be, 1),
        AK_U64("group_size", settings_t, group_size, clc.group_size, 1, 4096),
        AK_BOOL("keep_digis", settings_t, keep_digis, true),
        AK_BOOL("clusters", settings_t, clusters, true),
        AK_PARAMS_END,
    };
    settings_t set;
    return ak_batch_register(&kind, params, &set, directory_path, message, message_size, error_code);
}
