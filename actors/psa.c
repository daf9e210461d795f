/* psa.c - filter: pulse shape analysis (tusk/psa.h), data:crystal frames
 * in, data:psa frames out.
 *
 * Parameters:
 *   basis     the signal basis file (required; tusk-basis gen)
 *   backend   reference | fast | opencl (fast): the plain C oracle, the
 *             vectorised multi-threaded CPU search, or the OpenCL kernel
 *   threads   threads of the fast backend and of the preprocessing (0: one
 *             per CPU)
 *   batch     crystals per analysis call (0: the whole input buffer; a
 *             buffer's <size> in the topology bounds it anyway)
 *   device    OpenCL device setting (any | gpu | cpu | N | P.D | name;
 *             default $TUSK_CL_DEVICE or any); load-shared instances
 *             spread over matching devices
 *   summary   yes | no (yes): the summary line on stderr at the end of
 *             the run (tusk-psa run -q says no); warnings are printed
 *             either way
 *   p, mode, mask, include_hit, include_core, residual, t0_search,
 *   threshold_kev, gain, baseline_samples, max_kev: the analysis
 *   (psa/README.md)
 *
 * Every input buffer is one batch (or batches of `batch` crystals): its
 * data:crystal frames are analysed together (one search for the OpenCL
 * backend), then the
 * output holds, in input order, a data:psa frame for each data:crystal
 * frame and every other frame (data:truth, meta frames) unchanged. When
 * the output buffer is full the call returns TUSK_ACTOR_MORE_OUTPUT and
 * goes on with the same input. A malformed frame or a data:crystal that
 * does not decode loses nothing before it: the frames before it are
 * analysed and their output goes out, then the call fails
 * (TUSK_ACTOR_EDATA) naming the frame's number in the input, its offset
 * and what is wrong, and accounting for the input's bytes.
 *
 * Nothing is dropped silently. A data:crystal record with a non-finite
 * energy, or one beyond +-max_kev, is rejected: no data:psa for it, the
 * first one described on stderr (offset, event, crystal, which value),
 * all counted in process_stop's summary (and its WARNING line, printed
 * also with summary = no). A run in which no data:crystal
 * frame arrived but data of other types did (say data:psa, from a wrong
 * topology) fails in process_stop (TUSK_ACTOR_EDATA, naming the types
 * that came); one with no data:crystal and nothing else either (no input,
 * or only frames passed on by design) ends with a WARNING line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AK_FILTER
#include "actorkit.h"
#include "tusk/basis.h"
#include "tusk/psa.h"
#include "tusk/psa_cl.h"
#include "base/grow.h"

TUSK_ACTOR_DECLARE("psa", "pulse shape analysis by grid search: data:crystal in, data:psa out",
                   "basis: signal basis file (required)\n"
                   "backend: reference | fast | opencl (fast)\n"
                   "threads: threads of the fast backend and the preprocessing (0: one per CPU)\n"
                   "batch: crystals per analysis call (0: the whole input buffer)\n"
                   "device: OpenCL device setting (TUSK_CL_DEVICE, any)\n"
                   "summary: yes | no: the summary line at the end of the run (yes)\n"
                   "p, mode, mask, include_hit, include_core, residual, t0_search, threshold_kev, gain, "
                   "baseline_samples, max_kev: the analysis (psa/README.md)\n");

enum { BACKEND_REFERENCE, BACKEND_FAST, BACKEND_OPENCL };

typedef struct filter {
    ak_base_t base;
    det_basis_t *basis;
    psa_engine_t *engine;
    psa_cl_t *cl;
    psa_backend_t backend;
    adf_reader_t *reader;
    adf_writer_t *writer;
    ak_copier_t copier;
    adf_crystal_t *crystals;  /* decoded records of one input buffer */
    adf_psa_t *results;
    size_t cap;
    uint8_t *staged;          /* the output of one input buffer */
    size_t staged_cap, staged_size;
    psa_stats_t stats;
    uint64_t batch;           /* crystals per psa_analyse call, 0: all */
    uint64_t *offsets;        /* input offset of each decoded record */
    ak_types_t types;         /* what arrived */
    bool described;           /* the first rejected record was described */
    bool summary;             /* print the summary line in process_stop */
} filter_t;

/* The parameters: the actor's own, and the analysis' (psa_config_read,
 * threads included). */
typedef struct settings {
    const char *basis, *device;
    int backend;
    uint64_t batch;
    bool summary;
} settings_t;

static const char *const backends[] = {"reference", "fast", "opencl", NULL};
static const ak_param_t params[] = {
    AK_REQUIRED("basis", settings_t, basis, "the signal basis file (tusk-basis gen)"),
    AK_CHOICE("backend", settings_t, backend, backends, BACKEND_FAST),
    AK_U64("batch", settings_t, batch, 0, 0, UINT32_MAX),
    AK_STRING("device", settings_t, device, NULL),
    AK_BOOL("summary", settings_t, summary, true),
    AK_LIBRARY(psa_config_keys),
    AK_PARAMS_END,
};

AK_STANDARD_HOOKS(filter_t)

static void free_filter(filter_t *f)
{
    if (!f)
        return;
    psa_cl_destroy(&f->cl);
    psa_engine_destroy(&f->engine);
    det_basis_destroy(&f->basis);
    adf_reader_destroy(&f->reader);
    adf_writer_destroy(&f->writer);
    ak_copier_free(&f->copier);
    free(f->crystals);
    free(f->results);
    free(f->offsets);
    free(f->staged);
    free(f);
}

void *process_register_dir(const char *directory_path, char *message, unsigned int message_size,
                           unsigned int *error_code)
{
    ak_config_t cfg;
    settings_t set;
    filter_t *f = NULL;
    if (!ak_config_open(&cfg, directory_path, "psa", params, &set, message, message_size, error_code))
        goto fail;
    f = calloc(1, sizeof *f);
    if (!f || !ak_copier_init(&f->copier) || !(f->reader = adf_reader_new(ADF_ON_ERROR_STOP)) ||
        !(f->writer = adf_writer_new())) {
        ak_config_fail(&cfg, TUSK_ACTOR_ERESOURCE, "out of memory");
        goto fail;
    }
    const char *basis = set.basis;
    int backend = set.backend;
    f->batch = set.batch;
    f->summary = set.summary;
    if (!ak_config_base(&cfg, &f->base))
        goto fail;
    psa_config_t pc;
    psa_config_default(&pc);
    tusk_error_t err;
    if (psa_config_read(&pc, cfg.params, "psa parameters", &err) != TUSK_OK) {
        ak_config_fail(&cfg, TUSK_ACTOR_ECONFIG, "%s", err.message);
        goto fail;
    }
    det_basis_expect_t expect = {PSA_SEGMENTS, PSA_CHANNELS, 0, 0.0};
    if (det_basis_load(&f->basis, basis, &expect, &err) != TUSK_OK) {
        ak_config_fail(&cfg, err.code == TUSK_ENOMEM ? TUSK_ACTOR_ERESOURCE : TUSK_ACTOR_ECONFIG,
                       "parameter 'basis': %s", err.message);
        goto fail;
    }
    if (psa_engine_new(&f->engine, f->basis, &pc, &err) != TUSK_OK) {
        ak_config_fail(&cfg, TUSK_ACTOR_ECONFIG, "%s: %s", basis, err.message);
        goto fail;
    }
    if (backend == BACKEND_OPENCL) {
        const char *dev = set.device;
        if (pc.mode == PSA_MODE_ADAPTIVE) {
            ak_config_fail(&cfg, TUSK_ACTOR_ECONFIG, "mode = adaptive runs on the CPU backends only (backend = "
                           "fast or reference)");
            goto fail;
        }
        if (psa_cl_new(&f->cl, f->engine, dev, f->base.instance, &err) != TUSK_OK) {
            ak_config_fail(&cfg, TUSK_ACTOR_ERESOURCE, "backend = opencl: %s", err.message);
            goto fail;
        }
        f->backend = psa_backend_cl(f->cl);
    } else {
        f->backend = backend == BACKEND_REFERENCE ? psa_backend_reference() : psa_backend_fast(pc.threads);
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
    memset(&f->stats, 0, sizeof f->stats);
    ak_types_reset(&f->types);
    f->described = false;
}

void process_stop(void *algo_data, unsigned int *error_code)
{
    filter_t *f = algo_data;
    ak_ok(error_code);
    const psa_stats_t *st = &f->stats;
    const uint64_t rejected = st->rejected_nonfinite + st->rejected_range;
    if (f->summary)
        fprintf(stderr, "psa %s: %llu crystals, %llu hits (%llu on the hit's own trace only), %.3g FoM terms%s%s\n",
                f->base.label, (unsigned long long)st->crystals, (unsigned long long)st->hits,
                (unsigned long long)st->own_trace, (double)st->fom_terms, f->cl ? " on " : "",
                f->cl ? psa_cl_describe(f->cl) : "");
    if (rejected)
        fprintf(stderr,
                "psa %s: WARNING: %llu data:crystal records REJECTED, no data:psa for them: %llu with a non-finite "
                "energy, %llu with an energy beyond max_kev = %g keV\n",
                f->base.label, (unsigned long long)rejected, (unsigned long long)st->rejected_nonfinite,
                (unsigned long long)st->rejected_range, psa_engine_config(f->engine)->max_kev);
    static const uint32_t passed[] = {ADF_TYPE_DATA_TRUTH};
    ak_types_expect(&f->base, "psa", &f->types, ADF_TYPE_DATA_CRYSTAL, "analyses", passed,
                    sizeof passed / sizeof passed[0], error_code);
}

void process_unload(void *algo_data, unsigned int *error_code)
{
    ak_ok(error_code);
    free_filter(algo_data);
}

static bool reserve(filter_t *f, size_t n)
{
    if (n <= f->cap)
        return true;
    size_t cap = f->cap ? f->cap : 16;
    while (cap < n)
        cap *= 2;
    adf_crystal_t *c = realloc(f->crystals, cap * sizeof *c);
    if (c)
        f->crystals = c;
    adf_psa_t *r = realloc(f->results, cap * sizeof *r);
    if (r)
        f->results = r;
    uint64_t *o = realloc(f->offsets, cap * sizeof *o);
    if (o)
        f->offsets = o;
    if (!c || !r || !o)
        return false;
    f->cap = cap;
    return true;
}

/* Analyse one input buffer into f->staged: its frames up to the first one
 * that is malformed or a data:crystal that does not decode (the failure
 * follows their output; see ak_input_check). */
static unsigned analyse(filter_t *f, const void *in, unsigned in_size, unsigned *error_code)
{
    unsigned valid;
    unsigned code = ak_input_check(&f->copier, &f->base, in, in_size, &valid);
    if (code != TUSK_ACTOR_OK) {
        *error_code = code;
        return code;
    }
    size_t n = 0;
    uint64_t index = 0;
    adf_frame_t fr;
    adf_error_t ae;
    adf_reader_reset(f->reader, in, valid, 0);
    for (; adf_reader_next(f->reader, &fr) == ADF_OK; index++) {
        if (fr.key.type != ADF_TYPE_DATA_CRYSTAL)
            continue;
        if (!reserve(f, n + 1))
            return ak_fail(&f->base, error_code, TUSK_ACTOR_ERESOURCE, "out of memory (%zu crystals)", n + 1);
        if (adf_crystal_decode(&fr, &f->crystals[n], &ae) != ADF_OK) {
            ak_input_damage(&f->copier, in_size, fr.offset, index, ae.message);
            valid = (unsigned)fr.offset;
            break;
        }
        f->offsets[n++] = fr.offset;
    }
    ak_types_tally(&f->types, &f->copier, in, valid);
    tusk_error_t err;
    size_t step = f->batch ? (size_t)f->batch : (n ? n : 1);
    for (size_t first = 0; first < n; first += step) {
        size_t count = n - first < step ? n - first : step;
        if (psa_analyse(f->engine, &f->backend, f->crystals + first, count, f->results + first, &f->stats, &err) !=
            TUSK_OK)
            return ak_fail(&f->base, error_code, err.code == TUSK_ENOMEM ? TUSK_ACTOR_ERESOURCE : TUSK_ACTOR_ERROR,
                           "%s", err.message);
    }
    /* Output in input order: data:psa for data:crystal, the rest as it is.
     * A data:psa frame is mostly smaller than its data:crystal frame, but
     * not for very short traces with many hits: room for the largest. */
    size_t need = (size_t)valid + n * (ADF_KEY_SIZE + adf_psa_payload_size(ADF_PSA_MAX_HITS, true));
    if (tusk_grow(&f->staged, &f->staged_cap, need, 1) != 0)
        return ak_fail(&f->base, error_code, TUSK_ACTOR_ERESOURCE, "out of memory (%zu bytes)", need);
    adf_writer_reset(f->writer, f->staged, f->staged_cap);
    adf_reader_reset(f->reader, in, valid, 0);
    size_t k = 0;
    while (adf_reader_next(f->reader, &fr) == ADF_OK) {
        if (fr.key.type == ADF_TYPE_DATA_CRYSTAL && (f->results[k].psa_status & PSA_REJECTED)) {
            if (!f->described) {
                f->described = true;
                char why[160];
                psa_record_check(psa_engine_config(f->engine), &f->crystals[k], why, sizeof why);
                fprintf(stderr,
                        "psa %s: WARNING: input offset %llu (event %u, crystal %u): %s: record rejected, no "
                        "data:psa for it (further rejections are counted in the summary)\n",
                        f->base.label, (unsigned long long)f->offsets[k], (unsigned)fr.key.event,
                        (unsigned)f->crystals[k].crystal_id, why);
            }
            k++;
            continue;
        }
        int rc = fr.key.type == ADF_TYPE_DATA_CRYSTAL
                     ? adf_psa_encode(f->writer, fr.key.event, fr.key.timestamp, &f->results[k++], &ae)
                     : adf_writer_put_frame(f->writer, &fr);
        if (rc != ADF_OK)
            return ak_fail(&f->base, error_code, TUSK_ACTOR_ERROR, "input offset %llu: writing the output: %s",
                           (unsigned long long)fr.offset,
                           fr.key.type == ADF_TYPE_DATA_CRYSTAL ? ae.message : adf_writer_error(f->writer)->message);
    }
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
