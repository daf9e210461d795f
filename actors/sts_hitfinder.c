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
 * offset. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AK_FILTER
#include "actorkit.h"
#include "base/clock.h"
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
    ak_base_t base;
    sts_config_t cfg;
    int backend;
    bool keep_digis, clusters;
    sts_ref_t *ref;
    sts_fast_t *fast;
    sts_cl_t *cl;
    sts_batch_t *batch;
    sts_result_t *res;
    adf_writer_t *writer;
    ak_copier_t copier;
    uint8_t *staged;
    size_t staged_cap, staged_size;
    uint64_t buffers, modules, digis, clusters_made, hits_made, offset, staged_buffers;
    double seconds;
} filter_t;

AK_STANDARD_HOOKS(filter_t)

/* The actor's parameters (the reconstruction's are sts_config_read's). */
typedef struct settings {
    int backend;
    uint64_t threads, group_size;
    bool cache, keep_digis, clusters;
    const char *device, *options;
} settings_t;

static const char *const backends[] = {"reference", "fast", "opencl", NULL};

static void free_filter(filter_t *f)
{
    if (!f)
        return;
    sts_ref_destroy(&f->ref);
    sts_fast_destroy(&f->fast);
    sts_cl_destroy(&f->cl);
    sts_batch_destroy(&f->batch);
    sts_result_destroy(&f->res);
    adf_writer_destroy(&f->writer);
    ak_copier_free(&f->copier);
    free(f->staged);
    free(f);
}

static bool open_backend(ak_config_t *cfg, filter_t *f, const settings_t *set, sts_cl_config_t clc)
{
    uint64_t threads = set->threads;
    f->keep_digis = set->keep_digis;
    f->clusters = set->clusters;
    f->backend = set->backend + 1; /* STS_REFERENCE, STS_FAST, STS_OPENCL */
    tusk_error_t err;
    int st = TUSK_OK;
    if (f->backend == STS_REFERENCE)
        st = sts_ref_new(&f->ref, &f->cfg, &err);
    else if (f->backend == STS_FAST)
        st = sts_fast_new(&f->fast, &f->cfg, (unsigned)threads, &err);
    else {
        clc.device = set->device;
        clc.instance = f->base.instance;
        clc.options = set->options;
        clc.no_cache = !set->cache;
        clc.group_size = (unsigned)set->group_size;
        clc.threads = (unsigned)threads;
        st = sts_cl_new(&f->cl, &f->cfg, &clc, &err);
    }
    if (st != TUSK_OK)
        return ak_config_fail(cfg, st == TUSK_EPARAM ? TUSK_ACTOR_ECONFIG : TUSK_ACTOR_ERESOURCE, "backend = %s: %s",
                              sts_backend_name(f->backend), err.message);
    return true;
}

void *process_register_dir(const char *directory_path, char *message, unsigned int message_size,
                           unsigned int *error_code)
{
    /* A local table: the OpenCL work-group default is the library's. */
    sts_cl_config_t clc;
    sts_cl_config_default(&clc);
    const ak_param_t params[] = {
        AK_LIBRARY(sts_config_keys),
        AK_CHOICE("backend", settings_t, backend, backends, 1),
        AK_U64("threads", settings_t, threads, 0, 0, 1024),
        AK_STRING("device", settings_t, device, NULL),
        AK_STRING("cl.options", settings_t, options, NULL),
        AK_BOOL("cl.cache", settings_t, cache, true),
        AK_U64("group_size", settings_t, group_size, clc.group_size, 1, 4096),
        AK_BOOL("keep_digis", settings_t, keep_digis, true),
        AK_BOOL("clusters", settings_t, clusters, true),
        AK_PARAMS_END,
    };
    ak_config_t cfg;
    settings_t set;
    filter_t *f = NULL;
    if (!ak_config_open(&cfg, directory_path, "sts_hitfinder", params, &set, message, message_size, error_code))
        goto fail;
    f = calloc(1, sizeof *f);
    if (!f || !ak_copier_init(&f->copier) || !(f->writer = adf_writer_new()) || !(f->batch = sts_batch_new()) ||
        !(f->res = sts_result_new())) {
        ak_config_fail(&cfg, TUSK_ACTOR_ERESOURCE, "out of memory");
        goto fail;
    }
    if (!ak_config_base(&cfg, &f->base))
        goto fail;
    sts_config_default(&f->cfg);
    tusk_error_t err;
    if (sts_config_read(&f->cfg, cfg.params, &err) != TUSK_OK) {
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
    f->buffers = f->modules = f->digis = f->clusters_made = f->hits_made = f->offset = f->staged_buffers = 0;
    f->seconds = 0;
}

void process_stop(void *algo_data, unsigned int *error_code)
{
    filter_t *f = algo_data;
    ak_ok(error_code);
    char settings[320];
    sts_config_format(&f->cfg, settings, sizeof settings);
    fprintf(stderr,
            "sts_hitfinder %s: %llu buffers (%llu staged), %llu modules, %llu digis, %llu clusters, %llu hits; %.3f s "
            "reconstructing (%.3g digis/s); %s; backend %s%s%s\n",
            f->base.label, (unsigned long long)f->buffers, (unsigned long long)f->staged_buffers,
            (unsigned long long)f->modules, (unsigned long long)f->digis, (unsigned long long)f->clusters_made,
            (unsigned long long)f->hits_made, f->seconds, f->seconds > 0 ? (double)f->digis / f->seconds : 0.0,
            settings, sts_backend_name(f->backend), f->cl ? " on " : "", f->cl ? sts_cl_describe(f->cl) : "");
}

void process_unload(void *algo_data, unsigned int *error_code)
{
    ak_ok(error_code);
    free_filter(algo_data);
}

/* sts_frames_read on the first `size` bytes of an input, for
 * ak_input_bisect. */
typedef struct probe {
    filter_t *f;
    const void *in;
} probe_t;

static bool read_prefix(void *ctx, unsigned size)
{
    probe_t *p = ctx;
    tusk_error_t err;
    return sts_frames_read(p->f->batch, p->in, size, 0, &err) == TUSK_OK;
}

/* The reconstruction of one input buffer (its frames up to the first one
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
    if (sts_frames_read(f->batch, in, valid, base, &err) != TUSK_OK) {
        /* Which frame, in the buffer's own offsets: the input is taken up
         * to it. */
        probe_t probe = {f, in};
        uint64_t offset, frame;
        bool found = err.code != TUSK_ENOMEM && sts_frames_read(f->batch, in, valid, 0, &err) != TUSK_OK &&
                     err.code != TUSK_ENOMEM &&
                     ak_input_bisect(&f->copier, in, valid, read_prefix, &probe, &offset, &frame);
        if (found) {
            ak_input_damage(&f->copier, in_size, offset, frame, err.message);
            valid = (unsigned)offset;
        }
        if (!found || sts_frames_read(f->batch, in, valid, base, &err) != TUSK_OK)
            return ak_fail(&f->base, error_code, err.code == TUSK_ENOMEM ? TUSK_ACTOR_ERESOURCE : TUSK_ACTOR_EDATA,
                           "input buffer %llu (input offsets count the bytes this instance received): %s",
                           (unsigned long long)f->buffers, err.message);
    }
    double t0 = tusk_clock_s();
    int st = f->ref ? sts_ref_run(f->ref, f->batch, f->res, &err)
             : f->fast ? sts_fast_run(f->fast, f->batch, f->res, &err)
                       : sts_cl_run(f->cl, f->batch, f->res, &err);
    f->seconds += tusk_clock_s() - t0;
    if (st != TUSK_OK)
        return ak_fail(&f->base, error_code,
                       st == TUSK_ENOMEM ? TUSK_ACTOR_ERESOURCE : st == TUSK_EINVAL ? TUSK_ACTOR_EDATA : TUSK_ACTOR_ERROR,
                       "input buffer %llu: %s", (unsigned long long)f->buffers, err.message);
    uint64_t nc, nh;
    sts_result_totals(f->res, &nc, &nh);
    f->modules += sts_batch_count(f->batch);
    f->digis += sts_batch_digis(f->batch);
    f->clusters_made += nc;
    f->hits_made += nh;
    size_t need = (size_t)valid + sts_frames_extra(f->res, f->clusters);
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
    if (sts_frames_write(in, valid, f->batch, f->res, &f->cfg, f->backend, f->keep_digis, f->clusters, f->writer,
                         &err) != TUSK_OK)
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
