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
 *   preset, p, mode, mask, include_hit, include_core, residual, refine,
 *   subgrid, t0_search, threshold_kev, gain, baseline_samples, max_kev,
 *   pretrigger: the analysis (psa/README.md)
 *
 * Every input buffer is one batch (or batches of `batch` crystals): its
 * data:crystal frames are read in place (adf_crystal_view: no decoded
 * copy of their traces) and analysed together (psa_analyse_start: the
 * preprocessing on `threads` threads, then one search), then the output
 * holds, in input order, a data:psa frame for each data:crystal frame
 * and every other frame (data:truth, meta frames) unchanged. The output
 * is written once, straight into the output buffer when it fits; when it
 * does not, into a staging buffer, and the call returns
 * TUSK_ACTOR_MORE_OUTPUT and goes on copying with the same input.
 *
 * A pipeline with the opencl backend (full mode, batch = 0): the call
 * that takes input k prepares it and submits its search (the first
 * round), then takes one step with every input held before it, in the
 * order their rounds were submitted: waits for the round of each that
 * the device searched meanwhile
 * and submits its next round (residual: 2 x (1 + refine) rounds for the
 * records of several hits), or completes it; then writes, oldest first,
 * the output of the held inputs whose rounds are all done, up to the
 * first that is not. The device searches while the host returns, takes
 * input k + 1 and prepares it. So the actor holds the analysis of one
 * input (one round), or of as many inputs as the residual's rounds (at
 * most PSA_JOBS_IN_FLIGHT; with more, it waits for the oldest), as the
 * event builder holds events: the first calls write nothing, and
 * process_flush writes the last ones' output at the end of the data. The
 * output is the same, frame for frame and byte for byte, as without the
 * pipeline (the CPU backends, or batch > 0, write each input's output in
 * its own call). The records' bytes are read only while their call runs:
 * the other frames of a held input are copied.
 *
 * A malformed frame or a data:crystal that does not decode loses nothing
 * before it: the frames before it are analysed and their output goes out
 * (after any held input's), then the call fails (TUSK_ACTOR_EDATA) naming
 * the frame's number in the input, its offset and what is wrong, and
 * accounting for the input's bytes. An input that is malformed from its
 * first byte fails its call, after the held input's output has gone out.
 *
 * Nothing is dropped silently. A data:crystal record with a non-finite
 * energy, or one beyond +-max_kev, is rejected: no data:psa for it, the
 * first one described on stderr (offset, event, crystal, which value),
 * all counted in process_stop's summary (and its WARNING line, printed
 * also with summary = no). A run in which no data:crystal
 * frame arrived but data of other types did (say data:psa, from a wrong
 * topology) fails in process_stop (TUSK_ACTOR_EDATA, naming the types
 * that came); one with no data:crystal and nothing else either (no input,
 * or only frames passed on by design) ends with a WARNING line. A run
 * stopped with an input still held (no process_flush) says so on stderr.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AK_FILTER
#include "tusk/actorkit.h"
#include "tusk/basis.h"
#include "tusk/psa.h"
#include "tusk/psa_cl.h"
#include "base/clock.h"
#include "base/grow.h"
#include "base/pool.h"

TUSK_ACTOR_DECLARE("psa", "pulse shape analysis by grid search: data:crystal in, data:psa out",
                   "basis: signal basis file (required)\n"
                   "backend: reference | fast | opencl (fast)\n"
                   "threads: threads of the fast backend and the preprocessing (0: one per CPU)\n"
                   "batch: crystals per analysis call (0: the whole input buffer)\n"
                   "device: OpenCL device setting (TUSK_CL_DEVICE, any)\n"
                   "summary: yes | no: the summary line at the end of the run (yes)\n"
                   "preset, p, mode, mask, include_hit, include_core, residual, refine, subgrid, t0_search, "
                   "threshold_kev, gain, baseline_samples, max_kev, pretrigger: the analysis (psa/README.md)\n");

enum { BACKEND_REFERENCE, BACKEND_FAST, BACKEND_OPENCL };

/* A frame of an input, in order: a data:crystal (its record's index) or
 * another frame (its payload's place in the arena). */
typedef struct item {
    adf_key_t key;
    uint64_t offset;          /* in the input */
    size_t at;
    bool crystal;
} item_t;

/* One input's analysis, from the call that takes the input until its
 * output is written (a later call, or process_flush, when it is held). */
typedef struct slot {
    psa_job_t *job;
    uint64_t ticket;            /* when its pending round was submitted (filter_t.tickets) */
    adf_crystal_view_t *views;  /* valid while the input's call runs */
    adf_psa_t *results;
    size_t n, cap;              /* records */
    item_t *items;
    size_t n_items, items_cap;
    uint8_t *arena;             /* the other frames' payloads */
    size_t arena_used, arena_cap;
} slot_t;

/* Inputs under analysis at once: those held (at most PSA_JOBS_IN_FLIGHT,
 * searches pending on the backend) and the one a call takes. */
#define SLOTS (PSA_JOBS_IN_FLIGHT + 1)

/* Threads writing the output (the calling thread one of them), at most;
 * as many as the analysis' `threads` otherwise. An input of fewer frames
 * than WRITE_PARALLEL_MIN is written on the calling thread. */
#define WRITE_THREADS 4
#define WRITE_PARALLEL_MIN 256
/* Parts of a slot's frames written as one piece each (taken by the
 * threads as they come). */
#define WRITE_PARTS 16

typedef struct filter {
    ak_base_t base;
    det_basis_t *basis;
    psa_engine_t *engine;
    psa_cl_t *cl;
    psa_backend_t backend;
    adf_reader_t *reader;
    adf_writer_t *writer;
    /* The output written on threads: a writer each (the pool's thread k
     * uses writers[k]); NULL pool: on the calling thread. */
    tusk_pool_t *pool;
    adf_writer_t *writers[WRITE_THREADS];
    ak_copier_t copier;
    slot_t slot[SLOTS];
    int queue[PSA_JOBS_IN_FLIGHT]; /* the held inputs' slots, oldest first */
    int held;                 /* how many */
    uint64_t tickets;         /* rounds submitted so far: their order, the order to wait for them in */
    uint8_t *staged;          /* output that did not fit the output buffer */
    size_t staged_cap, staged_size;
    bool refail;              /* a held output went out in place of an input's failure: take that input again */
    psa_stats_t stats;
    uint64_t batch;           /* crystals per psa_analyse_start, 0: all */
    ak_types_t types;         /* what arrived */
    bool described;           /* the first rejected record was described */
    bool summary;             /* print the summary line in process_stop */
    /* The calling thread's time by step (ns), for the summary: the
     * frames read, the analyses prepared and submitted, the searches
     * waited for and taken back (with residual, the later rounds), the
     * output written. */
    uint64_t ns_read, ns_prepare, ns_finish, ns_write;
    psa_cl_stats_t cl_before; /* the device's counts when the run began (they count from its set-up) */
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

static void free_slot(slot_t *s)
{
    psa_job_destroy(&s->job);
    free(s->views);
    free(s->results);
    free(s->items);
    free(s->arena);
    memset(s, 0, sizeof *s);
}

/* One step of every held input whose search is pending but slot `skip`
 * (-1: none), in the order their rounds were submitted (the backend's):
 * psa_analyse_step, its next round (if any) submitted last. On a failure
 * every held input's analysis is abandoned (the device's failure lost
 * them all): each is finished, none held. */
static int step_held(filter_t *f, int skip, tusk_error_t *err)
{
    int order[PSA_JOBS_IN_FLIGHT], m = 0;
    for (int i = 0; i < f->held; i++) {
        const int k = f->queue[i];
        if (k == skip || !psa_job_pending(f->slot[k].job))
            continue;
        int at = m++;
        for (; at > 0 && f->slot[order[at - 1]].ticket > f->slot[k].ticket; at--)
            order[at] = order[at - 1];
        order[at] = k;
    }
    for (int i = 0; i < m; i++) {
        const int k = order[i];
        const int rc = psa_analyse_step(f->engine, &f->backend, f->slot[k].job, err);
        f->slot[k].ticket = ++f->tickets;
        if (rc != TUSK_OK) {
            tusk_error_t ignored;
            for (int j = 0; j < f->held; j++)
                (void)psa_analyse_finish(f->engine, &f->backend, f->slot[f->queue[j]].job, &ignored);
            f->held = 0;
            return err->code;
        }
    }
    return TUSK_OK;
}

/* Steps until the oldest held input (every one: all) is done. */
static int finish_held(filter_t *f, bool all, tusk_error_t *err)
{
    for (;;) {
        bool pending = false;
        for (int i = 0; i < (all ? f->held : f->held > 0 ? 1 : 0); i++)
            pending = pending || psa_job_pending(f->slot[f->queue[i]].job);
        if (!pending)
            return TUSK_OK;
        int rc = step_held(f, -1, err);
        if (rc != TUSK_OK)
            return rc;
    }
}

/* Take the held inputs that are done, oldest first up to the first that
 * is not, off the queue into which[*n ...]. */
static void take_done(filter_t *f, int *which, int *n)
{
    int i = 0;
    while (i < f->held && !psa_job_pending(f->slot[f->queue[i]].job))
        which[(*n)++] = f->queue[i++];
    memmove(f->queue, f->queue + i, (size_t)(f->held - i) * sizeof f->queue[0]);
    f->held -= i;
}

/* Wait for the held inputs' searches and forget them (their output is not
 * wanted: a reset, or the end). */
static void drop_held(filter_t *f)
{
    tusk_error_t err;
    if (f->held > 0 && finish_held(f, true, &err) != TUSK_OK)
        fprintf(stderr, "psa %s: a held input's search failed: %s\n", f->base.label, err.message);
    f->held = 0;
}

static void free_filter(filter_t *f)
{
    if (!f)
        return;
    if (f->engine)
        drop_held(f);
    for (int k = 0; k < SLOTS; k++)
        free_slot(&f->slot[k]);
    psa_cl_destroy(&f->cl);
    psa_engine_destroy(&f->engine);
    det_basis_destroy(&f->basis);
    adf_reader_destroy(&f->reader);
    adf_writer_destroy(&f->writer);
    tusk_pool_destroy(&f->pool);
    for (int k = 0; k < WRITE_THREADS; k++)
        adf_writer_destroy(&f->writers[k]);
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
    {
        unsigned wt = pc.threads ? pc.threads : WRITE_THREADS;
        wt = wt > WRITE_THREADS ? WRITE_THREADS : wt;
        tusk_error_t perr;
        if (wt > 1 && tusk_pool_new(&f->pool, wt, &perr) != TUSK_OK)
            f->pool = NULL; /* written on the calling thread */
        for (unsigned k = 0; f->pool && k < wt; k++)
            if (!(f->writers[k] = adf_writer_new())) {
                ak_config_fail(&cfg, TUSK_ACTOR_ERESOURCE, "out of memory");
                goto fail;
            }
    }
    for (int k = 0; k < 2; k++) /* the others when the pipeline needs them */
        if (psa_job_new(&f->slot[k].job, f->engine, &err) != TUSK_OK) {
            ak_config_fail(&cfg, TUSK_ACTOR_ERESOURCE, "%s", err.message);
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
    drop_held(f);
    ak_copier_reset(&f->copier);
    f->refail = false;
    memset(&f->stats, 0, sizeof f->stats);
    f->ns_read = f->ns_prepare = f->ns_finish = f->ns_write = 0;
    if (f->cl)
        psa_cl_stats(f->cl, &f->cl_before);
    ak_types_reset(&f->types);
    f->described = false;
}

void process_stop(void *algo_data, unsigned int *error_code)
{
    filter_t *f = algo_data;
    ak_ok(error_code);
    if (f->held > 0) {
        size_t records = 0;
        for (int i = 0; i < f->held; i++)
            records += f->slot[f->queue[i]].n;
        fprintf(stderr,
                "psa %s: WARNING: the run stopped with the analysis of %d input%s held (%zu data:crystal records): "
                "no process_flush, so %s output was not written\n",
                f->base.label, f->held, f->held == 1 ? "" : "s", records, f->held == 1 ? "its" : "their");
    }
    const psa_stats_t *st = &f->stats;
    const uint64_t rejected = st->rejected_nonfinite + st->rejected_range;
    if (st->subgrid_kept)
        fprintf(stderr, "psa %s: WARNING: %llu hits left at their search's point by subgrid (not fitted)\n",
                f->base.label, (unsigned long long)st->subgrid_kept);
    if (f->summary) {
        fprintf(stderr, "psa %s: %llu crystals, %llu hits (%llu on the hit's own trace only), %.3g FoM terms%s%s\n",
                f->base.label, (unsigned long long)st->crystals, (unsigned long long)st->hits,
                (unsigned long long)st->own_trace, (double)st->fom_terms, f->cl ? " on " : "",
                f->cl ? psa_cl_describe(f->cl) : "");
        if (st->crystals) {
            const double per = 1e-3 / (double)st->crystals;
            fprintf(stderr,
                    "psa %s: the calling thread, us a crystal: read %.3f, prepare %.3f, finish %.3f, write %.3f, "
                    "total %.3f\n",
                    f->base.label, f->ns_read * per, f->ns_prepare * per, f->ns_finish * per, f->ns_write * per,
                    (f->ns_read + f->ns_prepare + f->ns_finish + f->ns_write) * per);
            if (psa_engine_config(f->engine)->residual)
                fprintf(stderr, "psa %s: of which making the residual's later rounds %.3f, taking results %.3f\n",
                        f->base.label, st->ns_rounds * per, st->ns_take * per);
            if (f->cl) {
                psa_cl_stats_t cs;
                psa_cl_stats(f->cl, &cs);
                const psa_cl_stats_t *b = &f->cl_before;
                cs.batches -= b->batches;
                cs.submit_ms -= b->submit_ms;
                cs.wait_ms -= b->wait_ms;
                cs.upload_ms -= b->upload_ms;
                cs.kernel_ms -= b->kernel_ms;
                cs.download_ms -= b->download_ms;
                fprintf(stderr,
                        "psa %s: the device, %llu searches: us a crystal on the host packing and submitting %.3f, "
                        "waiting %.3f; on the device uploads %.3f, kernels %.3f, downloads %.3f\n",
                        f->base.label, (unsigned long long)cs.batches, cs.submit_ms * 1e6 * per,
                        cs.wait_ms * 1e6 * per, cs.upload_ms * 1e6 * per, cs.kernel_ms * 1e6 * per,
                        cs.download_ms * 1e6 * per);
            }
        }
    }
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

static unsigned fail_with(filter_t *f, unsigned *error_code, const tusk_error_t *err)
{
    return ak_fail(&f->base, error_code, err->code == TUSK_ENOMEM ? TUSK_ACTOR_ERESOURCE : TUSK_ACTOR_ERROR, "%s",
                   err->message);
}

/* Frames ahead whose data:crystal headers take_frames asks for while it
 * reads one (adf_scan_next asks for the keys further ahead still). */
#define HEADERS_AHEAD 6

/* The frames of in[0, valid) into the slot: views of the data:crystal
 * records, the other frames' payloads copied. A data:crystal that does not
 * decode ends the valid part there (ak_input_damage). */
static unsigned take_frames(filter_t *f, slot_t *s, const void *in, unsigned in_size, unsigned *valid,
                            unsigned *error_code)
{
    s->n = 0;
    s->n_items = 0;
    s->arena_used = 0;
    uint64_t index = 0;
    adf_frame_t fr;
    adf_error_t ae;
    adf_reader_reset(f->reader, in, *valid, 0);
    for (; adf_reader_next(f->reader, &fr) == ADF_OK; index++) {
        if (tusk_grow(&s->items, &s->items_cap, s->n_items + 1, sizeof *s->items) != 0)
            return ak_fail(&f->base, error_code, TUSK_ACTOR_ERESOURCE, "out of memory (%zu frames)", s->n_items + 1);
        item_t *it = &s->items[s->n_items];
        it->key = fr.key;
        it->offset = fr.offset;
        it->crystal = fr.key.type == ADF_TYPE_DATA_CRYSTAL;
        if (it->crystal) {
            if (s->n == s->cap) {
                size_t cap = s->cap ? 2 * s->cap : 64;
                adf_crystal_view_t *v = realloc(s->views, cap * sizeof *v);
                if (v)
                    s->views = v;
                adf_psa_t *r = realloc(s->results, cap * sizeof *r);
                if (r)
                    s->results = r;
                if (!v || !r)
                    return ak_fail(&f->base, error_code, TUSK_ACTOR_ERESOURCE, "out of memory (%zu crystals)",
                                   cap);
                s->cap = cap;
            }
            /* The header (key, energies) of the frame HEADERS_AHEAD on,
             * guessed to be of this one's length (a hint: never read). */
            const size_t ahead = (size_t)fr.offset + (size_t)HEADERS_AHEAD * fr.key.length;
            if (ahead + ADF_KEY_SIZE + ADF_CRYSTAL_HEADER_SIZE <= *valid)
                for (size_t b = 0; b < ADF_KEY_SIZE + ADF_CRYSTAL_HEADER_SIZE; b += 64)
                    __builtin_prefetch((const uint8_t *)in + ahead + b);
            if (adf_crystal_view(&fr, &s->views[s->n], &ae) != ADF_OK) {
                ak_input_damage(&f->copier, in_size, fr.offset, index, ae.message);
                *valid = (unsigned)fr.offset;
                break;
            }
            it->at = s->n++;
        } else {
            if (tusk_grow(&s->arena, &s->arena_cap, s->arena_used + fr.payload_size + 1, 1) != 0)
                return ak_fail(&f->base, error_code, TUSK_ACTOR_ERESOURCE, "out of memory (%zu bytes)",
                               s->arena_used + fr.payload_size);
            if (fr.payload_size)
                memcpy(s->arena + s->arena_used, fr.payload, fr.payload_size);
            it->at = s->arena_used;
            s->arena_used += fr.payload_size;
        }
        s->n_items++;
    }
    return TUSK_ACTOR_OK;
}

/* Analyse the slot's records: the search submitted and left running
 * (psa_analyse_start with the opencl backend, batch = 0), or done. */
static unsigned analyse(filter_t *f, slot_t *s, unsigned *error_code)
{
    tusk_error_t err;
    size_t step = f->batch ? (size_t)f->batch : (s->n ? s->n : 1);
    for (size_t first = 0; first < s->n; first += step) {
        size_t count = s->n - first < step ? s->n - first : step;
        if (psa_analyse_start(f->engine, &f->backend, s->job, s->views + first, count, s->results + first,
                              &f->stats, &err) != TUSK_OK)
            return fail_with(f, error_code, &err);
        s->ticket = ++f->tickets;
        if (f->batch && psa_analyse_finish(f->engine, &f->backend, s->job, &err) != TUSK_OK)
            return fail_with(f, error_code, &err);
    }
    /* The first rejected record, described while its frame is at hand. */
    for (size_t k = 0; k < s->n_items && !f->described; k++) {
        const item_t *it = &s->items[k];
        if (!it->crystal || !(s->results[it->at].psa_status & PSA_REJECTED))
            continue;
        f->described = true;
        char why[160];
        psa_record_check_view(psa_engine_config(f->engine), &s->views[it->at], why, sizeof why);
        fprintf(stderr,
                "psa %s: WARNING: input offset %llu (event %u, crystal %u): %s: record rejected, no data:psa for it "
                "(further rejections are counted in the summary)\n",
                f->base.label, (unsigned long long)it->offset, (unsigned)it->key.event,
                (unsigned)s->views[it->at].crystal_id, why);
    }
    return TUSK_ACTOR_OK;
}

/* Bytes of item k's output (0: a rejected record's). */
static size_t item_size(const slot_t *s, size_t k)
{
    const item_t *it = &s->items[k];
    if (!it->crystal)
        return it->key.length;
    const adf_psa_t *r = &s->results[it->at];
    return r->psa_status & PSA_REJECTED ? 0 : ADF_KEY_SIZE + adf_psa_payload_size(r->n_hits, r->has_fom);
}

/* Bytes of a slot's output. */
static size_t output_size(const slot_t *s)
{
    size_t total = 0;
    for (size_t k = 0; k < s->n_items; k++)
        total += item_size(s, k);
    return total;
}

/* Items lo .. hi - 1 of a slot's output, in input order, with writer w
 * (reset on their bytes): data:psa for data:crystal (none for a rejected
 * record), the other frames as they came. ADF_OK, or the first failure in
 * *why (the item's input offset). */
static int write_items(adf_writer_t *w, const slot_t *s, size_t lo, size_t hi, char *why, size_t cap)
{
    adf_error_t ae;
    for (size_t k = lo; k < hi; k++) {
        const item_t *it = &s->items[k];
        int rc;
        if (it->crystal) {
            const adf_psa_t *r = &s->results[it->at];
            if (r->psa_status & PSA_REJECTED)
                continue;
            rc = adf_psa_encode(w, it->key.event, it->key.timestamp, r, &ae);
        } else {
            rc = adf_writer_put(w, &it->key, s->arena + it->at, it->key.length - ADF_KEY_SIZE);
        }
        if (rc != ADF_OK) {
            snprintf(why, cap, "input offset %llu: writing the output: %s", (unsigned long long)it->offset,
                     it->crystal ? ae.message : adf_writer_error(w)->message);
            return rc;
        }
    }
    return ADF_OK;
}

/* One part of the output, written on the pool's threads. */
typedef struct write_part {
    const slot_t *s;
    size_t lo, hi;       /* items */
    uint8_t *at;         /* where its bytes go */
    size_t bytes;
    int rc;
    char why[AK_MESSAGE_MAX];
} write_part_t;

typedef struct write_job {
    filter_t *f;
    write_part_t *part;
} write_job_t;

/* Part p with writer w: its bytes exactly as counted. */
static void write_part_with(adf_writer_t *w, write_part_t *p)
{
    adf_writer_reset(w, p->bytes ? p->at : NULL, p->bytes);
    p->rc = write_items(w, p->s, p->lo, p->hi, p->why, sizeof p->why);
    if (p->rc == ADF_OK && adf_writer_used(w) != p->bytes) {
        p->rc = ADF_EPAYLOAD;
        snprintf(p->why, sizeof p->why, "internal: %zu bytes written where %zu were counted", adf_writer_used(w),
                 p->bytes);
    }
}

static void write_part(void *ctx, size_t i, unsigned thread)
{
    const write_job_t *j = ctx;
    write_part_with(j->f->writers[thread], &j->part[i]);
}

/* Write the output of slots `which[0..n)` (in that order): straight into
 * `out` when it fits (*used), else staged for ak_copy_frames (*staged).
 * Large slots in parts on the pool's threads, each part's place known
 * from its items' sizes. */
static unsigned write_out(filter_t *f, const int *which, int n, void *out, unsigned out_size, unsigned *used,
                          bool *staged, unsigned *error_code)
{
    size_t total = 0;
    for (int k = 0; k < n; k++)
        total += output_size(&f->slot[which[k]]);
    *used = 0;
    *staged = total > out_size;
    uint8_t *dst = out;
    if (*staged) {
        if (tusk_grow(&f->staged, &f->staged_cap, total, 1) != 0)
            return ak_fail(&f->base, error_code, TUSK_ACTOR_ERESOURCE, "out of memory (%zu bytes)", total);
        dst = f->staged;
    }
    size_t done = 0;
    for (int k = 0; k < n; k++) {
        const slot_t *s = &f->slot[which[k]];
        /* One part on the calling thread, or WRITE_PARTS on the pool's. */
        const bool threads = f->pool && s->n_items >= WRITE_PARALLEL_MIN;
        write_part_t part[WRITE_PARTS];
        const size_t per = threads ? (s->n_items + WRITE_PARTS - 1) / WRITE_PARTS : s->n_items ? s->n_items : 1;
        size_t np = 0;
        for (size_t lo = 0; lo < s->n_items; lo += per, np++) {
            write_part_t *p = &part[np];
            p->s = s;
            p->lo = lo;
            p->hi = lo + per < s->n_items ? lo + per : s->n_items;
            p->at = dst + done;
            p->bytes = 0;
            for (size_t i = p->lo; i < p->hi; i++)
                p->bytes += item_size(s, i);
            done += p->bytes;
        }
        write_job_t job = {f, part};
        if (threads)
            tusk_pool_run(f->pool, np, write_part, &job);
        else if (np)
            write_part_with(f->writer, &part[0]);
        for (size_t i = 0; i < np; i++)
            if (part[i].rc != ADF_OK)
                return ak_fail(&f->base, error_code, TUSK_ACTOR_ERROR, "%s", part[i].why);
    }
    if (*staged)
        f->staged_size = done;
    else
        *used = (unsigned)done;
    return TUSK_ACTOR_OK;
}

/* A slot for a new input (its job made now if need be): a free one, or,
 * when every slot is held, the oldest held input's once it is done (its
 * output then goes first: which[*n]). -1 with the failure reported. */
static int free_slot_for_input(filter_t *f, int *which, int *n, unsigned *error_code)
{
    tusk_error_t err;
    if (f->held == PSA_JOBS_IN_FLIGHT) {
        if (finish_held(f, false, &err) != TUSK_OK) {
            fail_with(f, error_code, &err);
            return -1;
        }
        take_done(f, which, n);
    }
    bool used[SLOTS] = {false};
    for (int i = 0; i < f->held; i++)
        used[f->queue[i]] = true;
    for (int j = 0; j < *n; j++) /* written by this call */
        used[which[j]] = true;
    for (int k = 0; k < SLOTS; k++) {
        if (used[k])
            continue;
        if (!f->slot[k].job && psa_job_new(&f->slot[k].job, f->engine, &err) != TUSK_OK) {
            fail_with(f, error_code, &err);
            return -1;
        }
        return k;
    }
    ak_fail(&f->base, error_code, TUSK_ACTOR_ERROR, "internal: no free analysis slot");
    return -1;
}

/* Take a new input: analyse it into a free slot, step the held inputs'
 * searches; write the output of the held inputs that are done (oldest
 * first), and this one's unless it is held now. */
static unsigned take_input(filter_t *f, const void *in, unsigned in_size, void *out, unsigned out_size,
                           unsigned *used, bool *staged, unsigned *error_code)
{
    *staged = false;
    int which[SLOTS], n = 0;
    unsigned valid;
    uint64_t t0 = tusk_clock_ns();
    const int k = free_slot_for_input(f, which, &n, error_code);
    if (k < 0)
        return *error_code;
    slot_t *s = &f->slot[k];
    unsigned code = ak_input_check(&f->copier, &f->base, in, in_size, &valid);
    if (code == TUSK_ACTOR_OK)
        code = take_frames(f, s, in, in_size, &valid, error_code);
    uint64_t t1 = tusk_clock_ns();
    f->ns_read += t1 - t0;
    if (code == TUSK_ACTOR_OK)
        code = analyse(f, s, error_code);
    t0 = tusk_clock_ns();
    f->ns_prepare += t0 - t1;
    tusk_error_t err;
    if (code != TUSK_ACTOR_OK) {
        *error_code = code;
        if (f->held == 0 && n == 0)
            return code;
        /* Nothing of this input goes out, but the held inputs' output
         * does, first: this input fails when it comes again. */
        char why[AK_MESSAGE_MAX];
        snprintf(why, sizeof why, "%s", f->base.message);
        if (finish_held(f, true, &err) != TUSK_OK) { /* that failed too: this input's failure is the one reported */
            f->held = 0;
            return ak_fail(&f->base, error_code, code, "%s", why);
        }
        take_done(f, which, &n);
        ak_copier_reset(&f->copier);
        f->refail = true;
        *error_code = TUSK_ACTOR_OK;
        return write_out(f, which, n, out, out_size, used, staged, error_code);
    }
    /* What arrived, from the frames taken (the valid part): no second walk. */
    f->types.buffers++;
    for (size_t i = 0; i < s->n_items; i++)
        ak_types_add(&f->types, s->items[i].key.type);
    f->queue[f->held++] = k;
    /* A damaged input's valid part goes out now, after every held input's
     * output; otherwise each held input takes a step. */
    int rc = f->copier.damaged_size ? finish_held(f, true, &err) : step_held(f, k, &err);
    if (rc != TUSK_OK)
        return fail_with(f, error_code, &err);
    take_done(f, which, &n);
    t1 = tusk_clock_ns();
    f->ns_finish += t1 - t0;
    code = write_out(f, which, n, out, out_size, used, staged, error_code);
    f->ns_write += tusk_clock_ns() - t1;
    return code;
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
    unsigned code;
    bool staged = true;
    /* A call after MORE_OUTPUT goes on copying what was staged. */
    if (f->copier.resume_size == 0) {
        f->refail = false;
        if (take_input(f, input_buffer, size_of_input_buffer, output_buffer, size_of_output_buffer,
                       used_size_of_output_buffer, &staged, error_code) != TUSK_ACTOR_OK)
            return;
    }
    code = TUSK_ACTOR_OK;
    if (staged)
        code = ak_copy_frames(&f->copier, &f->base, f->staged, (unsigned)f->staged_size, output_buffer,
                              size_of_output_buffer, used_size_of_output_buffer);
    code = ak_input_done(&f->copier, &f->base, code, *used_size_of_output_buffer);
    if (code == TUSK_ACTOR_OK && f->refail) {
        f->refail = false;
        code = TUSK_ACTOR_MORE_OUTPUT; /* the same input again: it fails then */
    }
    *error_code = code;
}

/* End of data: the held inputs' output. */
void process_flush(void *algo_data, void *output_buffer, unsigned int size_of_output_buffer,
                   unsigned int *used_size_of_output_buffer, unsigned int *error_code)
{
    filter_t *f = algo_data;
    ak_ok(error_code);
    *used_size_of_output_buffer = 0;
    bool staged = true;
    if (f->copier.resume_size == 0) {
        if (f->held == 0)
            return;
        tusk_error_t err;
        if (finish_held(f, true, &err) != TUSK_OK) {
            fail_with(f, error_code, &err);
            return;
        }
        int which[PSA_JOBS_IN_FLIGHT], n = 0;
        take_done(f, which, &n);
        if (write_out(f, which, n, output_buffer, size_of_output_buffer, used_size_of_output_buffer, &staged,
                      error_code) != TUSK_ACTOR_OK)
            return;
    }
    if (staged)
        *error_code = ak_copy_frames(&f->copier, &f->base, f->staged, (unsigned)f->staged_size, output_buffer,
                                     size_of_output_buffer, used_size_of_output_buffer);
}
