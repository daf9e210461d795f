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
 * have is TUSK_ACTOR_EDATA naming the RoI and the point. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AK_FILTER
#include "actorkit.h"
#include "tusk/zfinder.h"
#include "base/grow.h"

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
    ak_base_t base;
    zf_config_t cfg;
    int backend;
    bool keep_points;
    zf_ref_t *ref;
    zf_fast_t *fast;
    zf_cl_t *cl;
    zf_batch_t *batch;
    zf_result_t *res;
    size_t res_cap;
    adf_writer_t *writer;
    ak_copier_t copier;
    uint8_t *staged;
    size_t staged_cap, staged_size;
    uint64_t buffers, rois, points, pairs, found, offset;
} filter_t;

AK_STANDARD_HOOKS(filter_t)

/* The actor's parameters (the algorithm's are zf_config_read's). */
typedef struct settings {
    int backend;
    uint64_t threads, chunk, slots, group_size, group_points;
    bool cache, keep_points;
    const char *device, *options;
} settings_t;

static const char *const backends[] = {"reference", "fast", "opencl", NULL};

static void free_filter(filter_t *f)
{
    if (!f)
        return;
    zf_ref_destroy(&f->ref);
    zf_fast_destroy(&f->fast);
    zf_cl_destroy(&f->cl);
    zf_batch_destroy(&f->batch);
    adf_writer_destroy(&f->writer);
    ak_copier_free(&f->copier);
    free(f->res);
    free(f->staged);
    free(f);
}

static bool open_backend(ak_config_t *cfg, filter_t *f, const settings_t *set, zf_cl_config_t clc)
{
    uint64_t threads = set->threads;
    f->keep_points = set->keep_points;
    f->backend = set->backend + 1; /* ZF_REFERENCE, ZF_FAST, ZF_OPENCL */
    tusk_error_t err;
    int st = TUSK_OK;
    if (f->backend == ZF_REFERENCE)
        st = zf_ref_new(&f->ref, &f->cfg, &err);
    else if (f->backend == ZF_FAST)
        st = zf_fast_new(&f->fast, &f->cfg, (unsigned)threads, &err);
    else {
        clc.device = set->device;
        clc.instance = f->base.instance;
        clc.options = set->options;
        clc.no_cache = !set->cache;
        clc.chunk = (unsigned)set->chunk;
        clc.slots = (unsigned)set->slots;
        clc.group_size = (unsigned)set->group_size;
        clc.group_points = (unsigned)set->group_points;
        clc.threads = (unsigned)threads;
        st = zf_cl_new(&f->cl, &f->cfg, &clc, &err);
    }
    if (st != TUSK_OK)
        return ak_config_fail(cfg, st == TUSK_ENOMEM ? TUSK_ACTOR_ERESOURCE : st == TUSK_EPARAM ? TUSK_ACTOR_ECONFIG
                                                                                                : TUSK_ACTOR_ERESOURCE,
                              "backend = %s: %s", zf_backend_name(f->backend), err.message);
    return true;
}

void *process_register_dir(const char *directory_path, char *message, unsigned int message_size,
                           unsigned int *error_code)
{
    /* A local table: the OpenCL launch defaults are the library's. */
    zf_cl_config_t clc;
    zf_cl_config_default(&clc);
    const ak_param_t params[] = {
        AK_LIBRARY(zf_config_keys),
        AK_CHOICE("backend", settings_t, backend, backends, 0),
        AK_U64("threads", settings_t, threads, 0, 0, 1024),
        AK_STRING("device", settings_t, device, NULL),
        AK_STRING("cl.options", settings_t, options, NULL),
        AK_BOOL("cl.cache", settings_t, cache, true),
        AK_U64("chunk", settings_t, chunk, clc.chunk, 1, 1u << 20),
        AK_U64("slots", settings_t, slots, clc.slots, 1, 2),
        AK_U64("group_size", settings_t, group_size, clc.group_size, 1, 4096),
        AK_U64("group_points", settings_t, group_points, clc.group_points, 3, ZF_MAX_GROUP_POINTS),
        AK_BOOL("keep_points", settings_t, keep_points, true),
        AK_PARAMS_END,
    };
    ak_config_t cfg;
    settings_t set;
    filter_t *f = NULL;
    if (!ak_config_open(&cfg, directory_path, "zfinder", params, &set, message, message_size, error_code))
        goto fail;
    f = calloc(1, sizeof *f);
    if (!f || !ak_copier_init(&f->copier) || !(f->writer = adf_writer_new()) || !(f->batch = zf_batch_new())) {
        ak_config_fail(&cfg, TUSK_ACTOR_ERESOURCE, "out of memory");
        goto fail;
    }
    if (!ak_config_base(&cfg, &f->base))
        goto fail;
    zf_config_default(&f->cfg);
    tusk_error_t err;
    if (zf_config_read(&f->cfg, cfg.params, &err) != TUSK_OK) {
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
    f->buffers = f->rois = f->points = f->pairs = f->found = f->offset = 0;
}

void process_stop(void *algo_data, unsigned int *error_code)
{
    filter_t *f = algo_data;
    ak_ok(error_code);
    char settings[256];
    zf_config_format(&f->cfg, settings, sizeof settings);
    fprintf(stderr, "zfinder %s: %llu buffers, %llu RoIs, %llu spacepoints, %llu pairs, %llu RoIs with a vertex; %s; "
                    "backend %s%s%s\n",
            f->base.label, (unsigned long long)f->buffers, (unsigned long long)f->rois, (unsigned long long)f->points,
            (unsigned long long)f->pairs, (unsigned long long)f->found, settings, zf_backend_name(f->backend),
            f->cl ? " on " : "", f->cl ? zf_cl_describe(f->cl) : "");
    if (f->cl) {
        zf_cl_stats_t s;
        zf_cl_stats(f->cl, &s);
        fprintf(stderr, "zfinder %s: %llu launches, zf_find %.3f ms, zf_peak %.3f ms, packing %.3f s\n", f->base.label,
                (unsigned long long)s.launches, s.find_ms, s.peak_ms, s.pack_s);
    }
}

void process_unload(void *algo_data, unsigned int *error_code)
{
    ak_ok(error_code);
    free_filter(algo_data);
}

/* zf_frames_read on the first `size` bytes of an input, for
 * ak_input_bisect. */
typedef struct probe {
    filter_t *f;
    const void *in;
} probe_t;

static bool read_prefix(void *ctx, unsigned size)
{
    probe_t *p = ctx;
    tusk_error_t err;
    return zf_frames_read(p->f->batch, p->in, size, 0, &err) == TUSK_OK;
}

/* The z-finder on one input buffer, its output into f->staged: its frames
 * up to the first one that is malformed or does not decode (the failure
 * follows their output; see ak_input_check). */
static unsigned analyse(filter_t *f, const void *in, unsigned in_size, unsigned *error_code)
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
    if (zf_frames_read(f->batch, in, valid, base, &err) != TUSK_OK) {
        /* Which frame, in the buffer's own offsets: the input is taken up
         * to it. */
        probe_t probe = {f, in};
        uint64_t offset, frame;
        bool found = err.code != TUSK_ENOMEM && zf_frames_read(f->batch, in, valid, 0, &err) != TUSK_OK &&
                     err.code != TUSK_ENOMEM &&
                     ak_input_bisect(&f->copier, in, valid, read_prefix, &probe, &offset, &frame);
        if (found) {
            ak_input_damage(&f->copier, in_size, offset, frame, err.message);
            valid = (unsigned)offset;
        }
        if (!found || zf_frames_read(f->batch, in, valid, base, &err) != TUSK_OK)
            return ak_fail(&f->base, error_code, err.code == TUSK_ENOMEM ? TUSK_ACTOR_ERESOURCE : TUSK_ACTOR_EDATA,
                           "input buffer %llu (input offsets count the bytes this instance received): %s",
                           (unsigned long long)f->buffers, err.message);
    }
    size_t n = zf_batch_count(f->batch);
    if (tusk_grow(&f->res, &f->res_cap, n, sizeof *f->res) != 0)
        return ak_fail(&f->base, error_code, TUSK_ACTOR_ERESOURCE, "out of memory (%zu RoIs)", n);
    int st = f->ref ? zf_ref_run(f->ref, f->batch, f->res, &err)
             : f->fast ? zf_fast_run(f->fast, f->batch, f->res, &err)
                       : zf_cl_run(f->cl, f->batch, f->res, &err);
    if (st != TUSK_OK)
        return ak_fail(&f->base, error_code,
                       st == TUSK_ENOMEM ? TUSK_ACTOR_ERESOURCE : st == TUSK_EINVAL ? TUSK_ACTOR_EDATA : TUSK_ACTOR_ERROR,
                       "input buffer %llu: %s", (unsigned long long)f->buffers, err.message);
    f->rois += n;
    f->points += zf_batch_points(f->batch);
    for (size_t i = 0; i < n; i++) {
        f->pairs += f->res[i].pairs;
        f->found += f->res[i].n_vertices > 0;
    }
    size_t need = (size_t)valid + zf_frames_extra(n);
    if (tusk_grow(&f->staged, &f->staged_cap, need, 1) != 0)
        return ak_fail(&f->base, error_code, TUSK_ACTOR_ERESOURCE, "out of memory (%zu bytes)", need);
    adf_writer_reset(f->writer, f->staged, f->staged_cap);
    if (zf_frames_write(in, valid, f->res, n, &f->cfg, f->backend, f->keep_points, f->writer, &err) != TUSK_OK)
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
    if (f->copier.resume_size == 0 && analyse(f, input_buffer, size_of_input_buffer, error_code) != TUSK_ACTOR_OK)
        return;
    unsigned code = ak_copy_frames(&f->copier, &f->base, f->staged, (unsigned)f->staged_size, output_buffer,
                                   size_of_output_buffer, used_size_of_output_buffer);
    *error_code = ak_input_done(&f->copier, &f->base, code, *used_size_of_output_buffer);
}
