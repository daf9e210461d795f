/* zfinder.c - filter: the ATLAS Level-2 z-finder (tusk/zfinder.h),
 * data:id_spacepoints in, a data:zvertex added after each.
 *
 * Parameters:
 *   mode, precision, slice_deg, z_min_mm, z_max_mm, bin_mm, triplet_dz_mm,
 *             triplet_dphi, second_vertex: the algorithm (zfinder/README.md)
 *   backend   reference | fast | opencl (reference)
 *   threads   threads of the fast backend and of the OpenCL packing (0: one per CPU)
 *   device    OpenCL device setting (any | gpu | cpu | N | P.D | name;
 *             default $TUSK_CL_DEVICE or any); load-shared instances
 *             spread over matching devices with "gpu:instance"
 *   cl.options, cl.cache: as every OpenCL actor (opencl/README.md)
 *   chunk, slots, group_size, group_points: the OpenCL launches (zfinder/README.md)
 *   keep_points  pass the spacepoints on (yes); no: only data:zvertex and
 *             the other frames go on
 *
 * Every input buffer is one batch: its RoIs go through the backend
 * together (one launch per `chunk` RoIs on OpenCL). The output holds
 * every frame of the input in order (data:id_truth and anything else
 * unchanged), each data:id_spacepoints followed by its data:zvertex (same
 * RoI number and timestamp). When the output buffer is full the call
 * returns TUSK_ACTOR_MORE_OUTPUT and goes on with the same input. A
 * malformed frame, or one that does not decode, loses nothing before it:
 * the RoIs before it are processed and go out, then the call fails
 * (TUSK_ACTOR_EDATA) naming the frame's number in the input and its
 * offset; a spacepoint outside its RoI or in a layer the detector does not
 * have is TUSK_ACTOR_EDATA naming the RoI and the point.
 *
 * Written on actorkit's filter skeleton (ak_batch_t, tusk/actorkit.h). */
#include <stdio.h>
#include <stdlib.h>

#define AK_FILTER
#include "tusk/actorkit.h"
#include "base/grow.h"
#include "tusk/zfinder.h"

TUSK_ACTOR_DECLARE("zfinder", "ATLAS Level-2 z-finder: data:id_spacepoints in, data:zvertex added",
                   "mode: pairs | triplets (pairs)\n"
                   "precision: float | double (float)\n"
                   "slice_deg, z_min_mm, z_max_mm, bin_mm, triplet_dz_mm, triplet_dphi, second_vertex: the algorithm "
                   "(zfinder/README.md)\n"
                   "backend: reference | fast | opencl (reference)\n"
                   "threads: threads of fast and of the OpenCL packing (0: one per CPU)\n"
                   "device: OpenCL device setting (TUSK_CL_DEVICE, any)\n"
                   "cl.options, cl.cache: OpenCL build options, binary cache (on)\n"
                   "chunk, slots, group_size, group_points: OpenCL launches (64, 2, 64, 1024)\n"
                   "keep_points: pass the spacepoints on (yes)\n");

typedef struct filter {
    ak_batch_t ak;
    zf_config_t cfg;
    int backend;
    bool keep_points;
    zf_ref_t *ref;
    zf_fast_t *fast;
    zf_cl_t *cl;
    zf_batch_t *batch;
    zf_result_t *res;
    size_t res_cap, n;
    uint64_t rois, points, pairs, found;
} filter_t;

AK_BACKEND_LIBRARY(filter_t, zf)

/* The actor's parameters (the algorithm's are zf_config_read's). */
typedef struct settings {
    ak_backend_t be;
    uint64_t chunk, slots, group_size, group_points;
    bool keep_points;
} settings_t;

static void close_filter(void *self)
{
    filter_t *f = self;
    ak_backend_close(f);
    zf_batch_destroy(&f->batch);
    free(f->res);
}

static bool open_filter(ak_config_t *cfg, void *self, const void *settings)
{
    filter_t *f = self;
    const settings_t *set = settings;
    if (!(f->batch = zf_batch_new()))
        return ak_config_fail(cfg, TUSK_ACTOR_ERESOURCE, "out of memory");
    zf_config_default(&f->cfg);
    tusk_error_t err;
    if (zf_config_read(&f->cfg, cfg->params, &err) != TUSK_OK)
        return ak_config_fail(cfg, TUSK_ACTOR_ECONFIG, "%s", err.message);
    f->keep_points = set->keep_points;
    f->backend = set->be.backend + 1; /* ZF_REFERENCE, ZF_FAST, ZF_OPENCL */
    zf_cl_config_t clc;
    zf_cl_config_default(&clc);
    clc.chunk = (unsigned)set->chunk;
    clc.slots = (unsigned)set->slots;
    clc.group_size = (unsigned)set->group_size;
    clc.group_points = (unsigned)set->group_points;
    int st = ak_backend_open(f, &set->be, &clc, &err);
    if (st != TUSK_OK)
        return ak_config_fail(cfg, st == TUSK_EPARAM ? TUSK_ACTOR_ECONFIG : TUSK_ACTOR_ERESOURCE, "backend = %s: %s",
                              zf_backend_name(f->backend), err.message);
    return true;
}

static void reset_filter(void *self)
{
    filter_t *f = self;
    f->rois = f->points = f->pairs = f->found = 0;
}

static void summary(const void *self)
{
    const filter_t *f = self;
    char settings[256];
    zf_config_format(&f->cfg, settings, sizeof settings);
    fprintf(stderr, "zfinder %s: %llu buffers, %llu RoIs, %llu spacepoints, %llu pairs, %llu RoIs with a vertex; %s; "
                    "backend %s%s%s\n",
            f->ak.base.label, (unsigned long long)f->ak.buffers, (unsigned long long)f->rois,
            (unsigned long long)f->points, (unsigned long long)f->pairs, (unsigned long long)f->found, settings,
            zf_backend_name(f->backend), f->cl ? " on " : "", f->cl ? zf_cl_describe(f->cl) : "");
    if (f->cl) {
        zf_cl_stats_t s;
        zf_cl_stats(f->cl, &s);
        fprintf(stderr, "zfinder %s: %llu launches, zf_find %.3f ms, zf_peak %.3f ms, packing %.3f s\n",
                f->ak.base.label, (unsigned long long)s.launches, s.find_ms, s.peak_ms, s.pack_s);
    }
}

static int read_rois(void *self, const void *in, size_t size, uint64_t offset, tusk_error_t *err)
{
    return zf_frames_read(((filter_t *)self)->batch, in, size, offset, err);
}

static int find(void *self, tusk_error_t *err)
{
    filter_t *f = self;
    f->n = zf_batch_count(f->batch);
    if (tusk_grow(&f->res, &f->res_cap, f->n, sizeof *f->res) != 0)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory (%zu RoIs)", f->n);
    int st = ak_backend_run(f, err);
    if (st != TUSK_OK)
        return st;
    f->rois += f->n;
    f->points += zf_batch_points(f->batch);
    for (size_t i = 0; i < f->n; i++) {
        f->pairs += f->res[i].pairs;
        f->found += f->res[i].n_vertices > 0;
    }
    return TUSK_OK;
}

static size_t extra(const void *self)
{
    return zf_frames_extra(((const filter_t *)self)->n);
}

static int write_vertices(const void *self, const void *in, size_t size, adf_writer_t *w, tusk_error_t *err)
{
    const filter_t *f = self;
    return zf_frames_write(in, size, f->res, f->n, &f->cfg, f->backend, f->keep_points, w, err);
}

static const ak_batch_kind_t kind = {.actor = "zfinder", .size = AK_INSTANCE_SIZE(filter_t), .open = open_filter,
                                     .close = close_filter, .reset = reset_filter, .summary = summary,
                                     .read = read_rois, .run = find, .extra = extra, .write = write_vertices};

AK_BATCH_HOOKS

void *process_register_dir(const char *directory_path, char *message, unsigned int message_size,
                           unsigned int *error_code)
{
    /* A local table: the OpenCL launch defaults are the library's. */
    zf_cl_config_t clc;
    zf_cl_config_default(&clc);
    const ak_param_t params[] = {
        AK_LIBRARY(zf_config_keys),
        AK_BACKEND_PARAMS(settings_t, be, 0),
        AK_U64("chunk", settings_t, chunk, clc.chunk, 1, 1u << 20),
        AK_U64("slots", settings_t, slots, clc.slots, 1, 2),
        AK_U64("group_size", settings_t, group_size, clc.group_size, 1, 4096),
        AK_U64("group_points", settings_t, group_points, clc.group_points, 3, ZF_MAX_GROUP_POINTS),
        AK_BOOL("keep_points", settings_t, keep_points, true),
        AK_PARAMS_END,
    };
    settings_t set;
    return ak_batch_register(&kind, params, &set, directory_path, message, message_size, error_code);
}
