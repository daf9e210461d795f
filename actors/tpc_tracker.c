/* tpc_tracker.c - filter: the ALICE TPC slice tracker (tusk/tpc.h),
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
 * naming the frame's number in the input and its offset. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AK_FILTER
#include "actorkit.h"
#include "base/clock.h"
#include "tusk/tpc.h"

TUSK_ACTOR_DECLARE("tpc_tracker", "ALICE TPC slice tracker (cellular automaton and Kalman filter): data:tpc_clusters "
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
    ak_base_t base;
    tpc_config_t cfg;
    int backend;
    bool keep_clusters;
    tpc_ref_t *ref;
    tpc_fast_t *fast;
    tpc_cl_t *cl;
    tpc_batch_t *batch;
    tpc_result_t *res;
    adf_writer_t *writer;
    ak_copier_t copier;
    uint8_t *staged;
    size_t staged_cap, staged_size;
    uint64_t buffers, slices, clusters, tracks, hits, offset, staged_buffers;
    double seconds;
} filter_t;

AK_STANDARD_HOOKS(filter_t)

/* The actor's parameters (the tracker's are tpc_config_read's). */
typedef struct settings {
    int backend;
    uint64_t threads, group_size;
    bool cache, keep_clusters;
    const char *device, *options;
} settings_t;

static const char *const backends[] = {"reference", "fast", "opencl", NULL};

static void free_filter(filter_t *f)
{
    if (!f)
        return;
    tpc_ref_destroy(&f->ref);
    tpc_fast_destroy(&f->fast);
    tpc_cl_destroy(&f->cl);
    tpc_batch_destroy(&f->batch);
    tpc_result_destroy(&f->res);
    adf_writer_destroy(&f->writer);
    ak_copier_free(&f->copier);
    free(f->staged);
    free(f);
}

static bool open_backend(ak_config_t *cfg, filter_t *f, const settings_t *set, tpc_cl_config_t clc)
{
    uint64_t threads = set->threads;
    f->keep_clusters = set->keep_clusters;
    f->backend = set->backend + 1; /* TPC_REFERENCE, TPC_FAST, TPC_OPENCL */
    tusk_error_t err;
    int st = TUSK_OK;
    if (f->backend == TPC_REFERENCE)
        st = tpc_ref_new(&f->ref, &f->cfg, &err);
    else if (f->backend == TPC_FAST)
        st = tpc_fast_new(&f->fast, &f->cfg, (unsigned)threads, &err);
    else {
        clc.device = set->device;
        clc.instance = f->base.instance;
        clc.options = set->options;
        clc.no_cache = !set->cache;
        clc.group_size = (unsigned)set->group_size;
        clc.threads = (unsigned)threads;
        st = tpc_cl_new(&f->cl, &f->cfg, &clc, &err);
    }
    if (st != TUSK_OK)
        return ak_config_fail(cfg, st == TUSK_EPARAM || st == TUSK_EINVAL ? TUSK_ACTOR_ECONFIG : TUSK_ACTOR_ERESOURCE,
                              "backend = %s: %s", tpc_backend_name(f->backend), err.message);
    return true;
}

void *process_register_dir(const char *directory_path, char *message, unsigned int message_size,
                           unsigned int *error_code)
{
    /* A local table: the OpenCL work-group default is the library's. */
    tpc_cl_config_t clc;
    tpc_cl_config_default(&clc);
    const ak_param_t params[] = {
        AK_LIBRARY(tpc_config_keys),
        AK_CHOICE("backend", settings_t, backend, backends, 1),
        AK_U64("threads", settings_t, threads, 0, 0, 1024),
        AK_STRING("device", settings_t, device, NULL),
        AK_STRING("cl.options", settings_t, options, NULL),
        AK_BOOL("cl.cache", settings_t, cache, true),
        AK_U64("group_size", settings_t, group_size, clc.group_size, 1, 4096),
        AK_BOOL("keep_clusters", settings_t, keep_clusters, true),
        AK_PARAMS_END,
    };
    ak_config_t cfg;
    settings_t set;
    filter_t *f = NULL;
    if (!ak_config_open(&cfg, directory_path, "tpc_tracker", params, &set, message, message_size, error_code))
        goto fail;
    f = calloc(1, sizeof *f);
    if (!f || !ak_copier_init(&f->copier) || !(f->writer = adf_writer_new()) || !(f->batch = tpc_batch_new()) ||
        !(f->res = tpc_result_new())) {
        ak_config_fail(&cfg, TUSK_ACTOR_ERESOURCE, "out of memory");
        goto fail;
    }
    if (!ak_config_base(&cfg, &f->base))
        goto fail;
    tpc_config_default(&f->cfg);
    tusk_error_t err;
    if (tpc_config_read(&f->cfg, cfg.params, &err) != TUSK_OK) {
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
    f->buffers = f->slices = f->clusters = f->tracks = f->hits = f->offset = f->staged_buffers = 0;
    f->seconds = 0;
}

void process_stop(void *algo_data, unsigned int *error_code)
{
    filter_t *f = algo_data;
    ak_ok(error_code);
    char settings[400];
    tpc_config_format(&f->cfg, settings, sizeof settings);
    fprintf(stderr,
            "tpc_tracker %s: %llu buffers (%llu staged), %llu slices, %llu clusters, %llu tracks of %llu clusters; "
            "%.3f s tracking (%.3g clusters/s); %s; backend %s%s%s\n",
            f->base.label, (unsigned long long)f->buffers, (unsigned long long)f->staged_buffers,
            (unsigned long long)f->slices, (unsigned long long)f->clusters, (unsigned long long)f->tracks,
            (unsigned long long)f->hits, f->seconds, f->seconds > 0 ? (double)f->clusters / f->seconds : 0.0,
            settings, tpc_backend_name(f->backend), f->cl ? " on " : "", f->cl ? tpc_cl_describe(f->cl) : "");
}

void process_unload(void *algo_data, unsigned int *error_code)
{
    ak_ok(error_code);
    free_filter(algo_data);
}

/* tpc_frames_read on the first `size` bytes of an input, for
 * ak_input_bisect. */
typedef struct probe {
    filter_t *f;
    const void *in;
} probe_t;

static bool read_prefix(void *ctx, unsigned size)
{
    probe_t *p = ctx;
    tusk_error_t err;
    return tpc_frames_read(p->f->batch, p->in, size, 0, &err) == TUSK_OK;
}

/* The tracking of one input buffer (its frames up to the first one that
 * is malformed or does not decode: the failure follows their output, see
 * ak_input_check); its output straight into out when it fits (*direct
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
    if (tpc_frames_read(f->batch, in, valid, base, &err) != TUSK_OK) {
        /* Which frame, in the buffer's own offsets: the input is taken up
         * to it. */
        probe_t probe = {f, in};
        uint64_t offset, frame;
        bool found = err.code != TUSK_ENOMEM && tpc_frames_read(f->batch, in, valid, 0, &err) != TUSK_OK &&
                     err.code != TUSK_ENOMEM &&
                     ak_input_bisect(&f->copier, in, valid, read_prefix, &probe, &offset, &frame);
        if (found) {
            ak_input_damage(&f->copier, in_size, offset, frame, err.message);
            valid = (unsigned)offset;
        }
        if (!found || tpc_frames_read(f->batch, in, valid, base, &err) != TUSK_OK)
            return ak_fail(&f->base, error_code, err.code == TUSK_ENOMEM ? TUSK_ACTOR_ERESOURCE : TUSK_ACTOR_EDATA,
                           "input buffer %llu (input offsets count the bytes this instance received): %s",
                           (unsigned long long)f->buffers, err.message);
    }
    double t0 = tusk_clock_s();
    int st = f->ref ? tpc_ref_run(f->ref, f->batch, f->res, &err)
             : f->fast ? tpc_fast_run(f->fast, f->batch, f->res, &err)
                       : tpc_cl_run(f->cl, f->batch, f->res, &err);
    f->seconds += tusk_clock_s() - t0;
    if (st != TUSK_OK)
        return ak_fail(&f->base, error_code,
                       st == TUSK_ENOMEM ? TUSK_ACTOR_ERESOURCE
                       : st == TUSK_EINVAL || st == TUSK_ELIMIT ? TUSK_ACTOR_EDATA
                                                                : TUSK_ACTOR_ERROR,
                       "input buffer %llu: %s", (unsigned long long)f->buffers, err.message);
    uint64_t nt, nh;
    tpc_result_totals(f->res, &nt, &nh, NULL);
    f->slices += tpc_batch_count(f->batch);
    f->clusters += tpc_batch_clusters(f->batch);
    f->tracks += nt;
    f->hits += nh;
    size_t need = (size_t)valid + tpc_frames_extra(f->res);
    *direct = need <= out_size;
    if (!*direct) {
        if (need > f->staged_cap) {
            uint8_t *s = realloc(f->staged, need);
            if (!s)
                return ak_fail(&f->base, error_code, TUSK_ACTOR_ERESOURCE, "out of memory (%zu bytes)", need);
            f->staged = s;
            f->staged_cap = need;
        }
        f->staged_buffers++;
    }
    adf_writer_reset(f->writer, *direct ? out : f->staged, *direct ? out_size : f->staged_cap);
    if (tpc_frames_write(in, valid, f->batch, f->res, &f->cfg, f->backend, f->keep_clusters, f->writer, &err) !=
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
