/* tusk-bench - measured figures for BENCHMARKS.md (never timed tests).
 *
 *   tusk-bench psa --basis FILE [OPTIONS]
 *
 * PSA grid-search speed, every backend in one run on the same events:
 * events simulated into one crystal with the basis (tusk/sim.h), sorted
 * into single- and multi-hit-segment events, prepared into search
 * problems once (psa_prepare), then searched by the reference, the fast
 * CPU path on one thread and on all, and OpenCL on each --device. A row
 * gives events/s and FoM terms/s; "search" rows time the search alone
 * (for OpenCL: uploads, kernels and downloads). The "end to end" rows do
 * what the psa actor does with an input buffer: --end-to-end records
 * encoded as data:crystal frames in one ADF buffer, read in place
 * (adf_crystal_view), analysed (psa_analyse_start: preprocessing on
 * --threads threads, the search; psa_analyse_finish), their data:psa
 * frames written into an output buffer; two such buffers in turn, as the
 * actor's pipeline has them (with OpenCL the device searches one while
 * the host prepares the other). Below the table, the end-to-end rows'
 * host time per record by step, and the steps of the actor before and
 * after issue 21 on one thread (decode, preprocessing without the
 * search, encode). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cli.h"
#include "base/clock.h"
#include "base/exit.h"
#include "base/parse.h"
#include "bench_track.h"
#include "bench_sts.h"
#include "bench_tpc.h"
#include "bench_ut.h"
#include "bench_zfinder.h"
#include "config.h"
#include "tusk/adf.h"
#include "tusk/basis.h"
#include "tusk/psa.h"
#include "tusk/psa_cl.h"
#include "tusk/sim.h"

#define PROG "tusk-bench"
#define MAX_DEVICES 8

static void help(FILE *out)
{
    fprintf(out,
            "psa (track, zfinder, sts, ut and tpc: " PROG " track --help, " PROG " zfinder --help, " PROG " sts --help, "
            PROG " ut --help, " PROG " tpc --help):\n"
            "  --basis FILE        the signal basis (tusk-basis gen)\n"
            "  --events N          distinct simulated events of each kind (2000)\n"
            "  --batch N           events per search launch; the distinct ones repeat (20000)\n"
            "  --seconds S         least time per measurement (2)\n"
            "  --reference N       events for the (slow) reference (200)\n"
            "  --threads N         threads of the all-cores fast row (0: one per CPU)\n"
            "  --device SETTING    an OpenCL device to measure (repeatable; tusk-cl list)\n"
            "  --seed S            simulation seed (1)\n"
            "  --end-to-end N      data:crystal records per input buffer in the end-to-end rows\n"
            "                      (the simulated ones repeated) (4000)\n"
            "\n"
            "Exit status: 0 fine, 1 failure (a file, a device, results that differ from\n"
            "the reference), 2 bad usage.\n");
}

typedef struct opts {
    const char *basis;
    unsigned events, batch, reference, threads;
    uint64_t seed;
    unsigned e2e;
    double seconds;
    const char *device[MAX_DEVICES];
    unsigned devices;
} opts_t;

/* Simulated data:crystal records of one crystal, split by hit segments. */
typedef struct records {
    adf_crystal_t *single, *multi;
    size_t n_single, n_multi;
} records_t;

static int simulate(const opts_t *o, const psa_config_t *pc, records_t *r, char *tmpdir)
{
    char arr[600], text[1200];
    snprintf(arr, sizeof arr, "%s/one.conf", tmpdir);
    FILE *f = fopen(arr, "w");
    if (!f || fputs("crystal.0 = 0 0\n", f) < 0 || fclose(f) != 0) {
        fprintf(stderr, PROG ": %s: cannot write\n", arr);
        return TUSK_EXIT_FAIL;
    }
    snprintf(text, sizeof text, "basis = %s\narray = %s\nsource = line\nenergy = 1332.5\nevents = 0\nseed = %" PRIu64 "\n",
             o->basis, arr, o->seed);
    tusk_params_t *p = tusk_params_new();
    tusk_error_t err;
    sim_t *sim = NULL;
    if (!p || tusk_params_parse(p, text, strlen(text), "bench", &err) != TUSK_OK ||
        sim_new(&sim, p, "simulation", &err) != TUSK_OK) {
        fprintf(stderr, PROG ": %s\n", err.message);
        tusk_params_destroy(&p);
        remove(arr);
        return TUSK_EXIT_FAIL;
    }
    tusk_params_destroy(&p);
    remove(arr);
    r->single = malloc(o->events * sizeof *r->single);
    r->multi = malloc(o->events * sizeof *r->multi);
    if (!r->single || !r->multi) {
        fprintf(stderr, PROG ": out of memory (%u events)\n", o->events);
        sim_destroy(&sim);
        return TUSK_EXIT_FAIL;
    }
    const sim_event_t *ev;
    while ((r->n_single < o->events || r->n_multi < o->events) && sim_next(sim, &ev, &err) == TUSK_OK && ev) {
        unsigned hits = 0;
        for (unsigned s = 0; s < 36; s++)
            hits += ev->crystal[0].segment_energy[s] >= pc->threshold_kev;
        if (hits == 1 && r->n_single < o->events)
            r->single[r->n_single++] = ev->crystal[0];
        else if (hits > 1 && r->n_multi < o->events)
            r->multi[r->n_multi++] = ev->crystal[0];
    }
    sim_destroy(&sim);
    return 0;
}

typedef int (*search_fn)(void *ctx, const psa_engine_t *e, psa_batch_t *b, tusk_error_t *err);

static uint64_t terms_of(const psa_engine_t *e, const psa_batch_t *b)
{
    const det_basis_t *basis = psa_engine_basis(e);
    uint64_t t = 0;
    for (size_t i = 0; i < b->n; i++)
        t += (uint64_t)b->n_channels[i] * b->samples * det_basis_segment_points(basis, b->segment[i]);
    return t;
}

/* Repeat searches of the batch for at least `seconds`; events/s, terms/s. */
static int measure(const char *row, const char *kind, search_fn fn, void *ctx, const psa_engine_t *e, psa_batch_t *b,
                   size_t events, double seconds)
{
    tusk_error_t err;
    uint64_t terms = terms_of(e, b);
    unsigned reps = 0;
    double t0 = tusk_clock_s(), t;
    do {
        if (fn(ctx, e, b, &err) != TUSK_OK) {
            fprintf(stderr, PROG ": %s: %s\n", row, err.message);
            return TUSK_EXIT_FAIL;
        }
        reps++;
        t = tusk_clock_s() - t0;
    } while (t < seconds);
    printf("| %s | %s | %zu | %.3f | %.0f | %.3g |\n", row, kind, events * reps, t, events * reps / t,
           (double)terms * reps / t);
    fflush(stdout);
    return 0;
}

/* A batch of at least `want` events' problems: the records' problems,
 * repeated whole. */
static int build_batch(const psa_engine_t *e, const adf_crystal_t *rec, size_t n, size_t want, psa_batch_t **out,
                       size_t *events)
{
    tusk_error_t err;
    psa_batch_t *one, *b;
    if (psa_batch_new(&one, psa_engine_samples(e), n * 2, &err) != TUSK_OK ||
        psa_prepare(e, rec, n, one, &err) != TUSK_OK || psa_batch_new(&b, one->samples, 0, &err) != TUSK_OK) {
        fprintf(stderr, PROG ": %s\n", err.message);
        return TUSK_EXIT_FAIL;
    }
    size_t per = one->n, S = one->samples;
    *events = 0;
    while (*events < want) {
        for (size_t i = 0; i < per; i++) {
            long k = psa_batch_add(b, one->segment[i]);
            if (k < 0) {
                fprintf(stderr, PROG ": out of memory (batch)\n");
                return TUSK_EXIT_FAIL;
            }
            b->n_channels[k] = one->n_channels[i];
            memcpy(b->channel + (size_t)k * PSA_CHANNELS, one->channel + i * PSA_CHANNELS, PSA_CHANNELS);
            memcpy(b->trace + (size_t)k * PSA_CHANNELS * S, one->trace + i * PSA_CHANNELS * S,
                   PSA_CHANNELS * S * sizeof(float));
        }
        *events += n;
    }
    psa_batch_destroy(&one);
    *out = b;
    return 0;
}

static int ref_fn(void *ctx, const psa_engine_t *e, psa_batch_t *b, tusk_error_t *err)
{
    (void)ctx;
    return psa_search_reference(e, b, err);
}

static int fast_fn(void *ctx, const psa_engine_t *e, psa_batch_t *b, tusk_error_t *err)
{
    return psa_search_fast(e, b, (unsigned)(uintptr_t)ctx, err);
}

static int cl_fn(void *ctx, const psa_engine_t *e, psa_batch_t *b, tusk_error_t *err)
{
    (void)e;
    return psa_cl_search(ctx, b, err);
}

/* `want` records (the simulated ones repeated) as data:crystal frames in
 * one ADF buffer (*buf, *size; free it). */
static int crystal_buffer(const adf_crystal_t *sim, size_t nsim, size_t want, uint8_t **buf, size_t *size)
{
    *buf = NULL;
    if (!nsim)
        return TUSK_EXIT_FAIL;
    size_t cap = 0;
    for (size_t i = 0; i < want; i++)
        cap += ADF_KEY_SIZE + adf_crystal_payload_size(sim[i % nsim].n_samples);
    adf_writer_t *w = adf_writer_new();
    *buf = malloc(cap ? cap : 1);
    if (!w || !*buf) {
        adf_writer_destroy(&w);
        free(*buf);
        *buf = NULL;
        fprintf(stderr, PROG ": out of memory (%zu records)\n", want);
        return TUSK_EXIT_FAIL;
    }
    adf_writer_reset(w, *buf, cap);
    adf_error_t ae;
    for (size_t i = 0; i < want; i++)
        if (adf_crystal_encode(w, (uint32_t)i, 1000 + i, &sim[i % nsim], &ae) != ADF_OK) {
            fprintf(stderr, PROG ": encoding the records: %s\n", ae.message);
            adf_writer_destroy(&w);
            free(*buf);
            *buf = NULL;
            return TUSK_EXIT_FAIL;
        }
    *size = adf_writer_used(w);
    adf_writer_destroy(&w);
    return 0;
}

/* One of the two buffers of the end-to-end pipeline: its views, job and
 * results. */
typedef struct e2e_side {
    psa_job_t *job;
    adf_crystal_view_t *views;
    adf_psa_t *out;
    uint32_t *event;
    uint64_t *timestamp;
    size_t n;
} e2e_side_t;

/* Host seconds by step, summed over the run. */
typedef struct e2e_steps {
    double read, start, finish, write;
} e2e_steps_t;

/* Write side s's data:psa frames into w (reset first). */
static int e2e_write(adf_writer_t *w, uint8_t *obuf, size_t ocap, const e2e_side_t *s)
{
    adf_error_t ae;
    adf_writer_reset(w, obuf, ocap);
    for (size_t i = 0; i < s->n; i++)
        if (!(s->out[i].psa_status & PSA_REJECTED) &&
            adf_psa_encode(w, s->event[i], s->timestamp[i], &s->out[i], &ae) != ADF_OK) {
            fprintf(stderr, PROG ": writing data:psa: %s\n", ae.message);
            return TUSK_EXIT_FAIL;
        }
    return 0;
}

/* What the psa actor does with `want` records (the simulated ones
 * repeated) of one kind, for at least `seconds`: see the head of this
 * file. Appends its steps to `notes`. */
static int end_to_end(const char *row, const char *kind, psa_engine_t *e, const psa_backend_t *be,
                      const adf_crystal_t *sim, size_t nsim, size_t want, double seconds, char *notes,
                      size_t notes_cap)
{
    uint8_t *in = NULL, *obuf = NULL;
    size_t in_size = 0;
    if (crystal_buffer(sim, nsim, want, &in, &in_size) != 0)
        return TUSK_EXIT_FAIL;
    const size_t ocap = want * (ADF_KEY_SIZE + adf_psa_payload_size(ADF_PSA_MAX_HITS, true));
    tusk_error_t err;
    int rc = 0;
    e2e_side_t side[2];
    memset(side, 0, sizeof side);
    adf_reader_t *r = adf_reader_new(ADF_ON_ERROR_STOP);
    adf_writer_t *w = adf_writer_new();
    obuf = malloc(ocap);
    for (int k = 0; k < 2 && rc == 0; k++) {
        side[k].views = malloc(want * sizeof *side[k].views);
        side[k].out = malloc(want * sizeof *side[k].out);
        side[k].event = malloc(want * sizeof *side[k].event);
        side[k].timestamp = malloc(want * sizeof *side[k].timestamp);
        if (!side[k].views || !side[k].out || !side[k].event || !side[k].timestamp || !r || !w || !obuf) {
            fprintf(stderr, PROG ": out of memory (%zu records)\n", want);
            rc = TUSK_EXIT_FAIL;
        } else if (psa_job_new(&side[k].job, e, &err) != TUSK_OK) {
            fprintf(stderr, PROG ": %s\n", err.message);
            rc = TUSK_EXIT_FAIL;
        }
    }
    psa_stats_t st = {0};
    e2e_steps_t steps = {0};
    unsigned reps = 0;
    double t0 = tusk_clock_s(), t = 0.0;
    int held = -1; /* the side whose search is under way */
    while (rc == 0) {
        const int k = held == 0 ? 1 : 0;
        e2e_side_t *s = &side[k];
        double a = tusk_clock_s();
        /* The input buffer: its frames read in place. */
        adf_frame_t fr;
        adf_error_t ae;
        s->n = 0;
        adf_reader_reset(r, in, in_size, 0);
        while (rc == 0 && adf_reader_next(r, &fr) == ADF_OK) {
            if (fr.key.type != ADF_TYPE_DATA_CRYSTAL)
                continue;
            if (adf_crystal_view(&fr, &s->views[s->n], &ae) != ADF_OK) {
                fprintf(stderr, PROG ": %s\n", ae.message);
                rc = TUSK_EXIT_FAIL;
            }
            s->event[s->n] = fr.key.event;
            s->timestamp[s->n++] = fr.key.timestamp;
        }
        double b = tusk_clock_s();
        if (rc == 0 && psa_analyse_start(e, be, s->job, s->views, s->n, s->out, &st, &err) != TUSK_OK) {
            fprintf(stderr, PROG ": %s: %s\n", row, err.message);
            rc = TUSK_EXIT_FAIL;
        }
        double c = tusk_clock_s();
        /* The other buffer's search, then its output; this one's now when
         * its search is done. */
        int done[2], nd = 0;
        if (rc == 0 && held >= 0)
            done[nd++] = held;
        held = -1;
        if (rc == 0 && psa_job_pending(s->job))
            held = k;
        else if (rc == 0)
            done[nd++] = k;
        for (int d = 0; d < nd && rc == 0; d++) {
            double f0 = tusk_clock_s();
            if (psa_analyse_finish(e, be, side[done[d]].job, &err) != TUSK_OK) {
                fprintf(stderr, PROG ": %s: %s\n", row, err.message);
                rc = TUSK_EXIT_FAIL;
                break;
            }
            double f1 = tusk_clock_s();
            rc = e2e_write(w, obuf, ocap, &side[done[d]]);
            steps.finish += f1 - f0;
            steps.write += tusk_clock_s() - f1;
        }
        steps.read += b - a;
        steps.start += c - b;
        reps++;
        t = tusk_clock_s() - t0;
        if (t >= seconds && held < 0)
            break;
        if (t >= seconds && rc == 0) { /* the last buffer's search */
            double f0 = tusk_clock_s();
            if (psa_analyse_finish(e, be, side[held].job, &err) != TUSK_OK) {
                fprintf(stderr, PROG ": %s: %s\n", row, err.message);
                rc = TUSK_EXIT_FAIL;
                break;
            }
            double f1 = tusk_clock_s();
            rc = e2e_write(w, obuf, ocap, &side[held]);
            steps.finish += f1 - f0;
            steps.write += tusk_clock_s() - f1;
            held = -1;
            t = tusk_clock_s() - t0;
            break;
        }
    }
    if (rc == 0) {
        const double n = (double)want * reps;
        printf("| %s | %s, end to end (ADF in, ADF out) | %.0f | %.3f | %.0f | %.3g |\n", row, kind, n, t, n / t,
               (double)st.fom_terms / t);
        fflush(stdout);
        size_t used = strlen(notes);
        snprintf(notes + used, notes_cap - used,
                 "| %s | %s | %zu | %.3f | %.3f | %.3f | %.3f | %.3f |\n", row, kind, want, 1e6 * steps.read / n,
                 1e6 * steps.start / n, 1e6 * steps.finish / n, 1e6 * steps.write / n, 1e6 * t / n);
    }
    if (held >= 0)
        psa_analyse_finish(e, be, side[held].job, &err);
    for (int k = 0; k < 2; k++) {
        psa_job_destroy(&side[k].job);
        free(side[k].views);
        free(side[k].out);
        free(side[k].event);
        free(side[k].timestamp);
    }
    adf_reader_destroy(&r);
    adf_writer_destroy(&w);
    free(obuf);
    free(in);
    return rc;
}

/* A search that does nothing: psa_analyse without its search. */
static int no_search(void *ctx, const psa_engine_t *e, psa_batch_t *b, tusk_error_t *err)
{
    (void)ctx;
    (void)e;
    (void)b;
    (void)err;
    return TUSK_OK;
}

/* The actor's steps on one thread (steps_one_thread): the buffer, the
 * records decoded or read in place, the analysis without its search, the
 * output. */
enum step { STEP_DECODE, STEP_VIEW, STEP_PREPARE_OLD, STEP_PREPARE_NEW, STEP_ENCODE };

typedef struct steps_ctx {
    const uint8_t *in;
    size_t in_size, n;
    adf_reader_t *r;
    adf_writer_t *w;
    uint8_t *obuf;
    size_t ocap;
    adf_crystal_t *dec;
    adf_crystal_view_t *views;
    adf_psa_t *out;
    psa_engine_t *e;
    psa_job_t *job;
    psa_backend_t none;
    tusk_error_t err;
} steps_ctx_t;

static int step_once(steps_ctx_t *c, enum step step)
{
    adf_frame_t fr;
    size_t k = 0;
    int rc = 0;
    switch (step) {
    case STEP_DECODE:
    case STEP_VIEW:
        adf_reader_reset(c->r, c->in, c->in_size, 0);
        while (rc == 0 && adf_reader_next(c->r, &fr) == ADF_OK && k < c->n)
            rc = step == STEP_DECODE ? adf_crystal_decode(&fr, &c->dec[k++], NULL)
                                     : adf_crystal_view(&fr, &c->views[k++], NULL);
        return rc;
    case STEP_PREPARE_OLD:
        return psa_analyse(c->e, &c->none, c->dec, c->n, c->out, NULL, &c->err);
    case STEP_PREPARE_NEW:
        rc = psa_analyse_start(c->e, &c->none, c->job, c->views, c->n, c->out, NULL, &c->err);
        return rc ? rc : psa_analyse_finish(c->e, &c->none, c->job, &c->err);
    case STEP_ENCODE:
        adf_writer_reset(c->w, c->obuf, c->ocap);
        for (size_t i = 0; i < c->n && rc == 0; i++)
            rc = adf_psa_encode(c->w, (uint32_t)i, i, &c->out[i], NULL);
        return rc;
    }
    return -1;
}

/* Seconds per record of a step over the buffer: the quickest of the
 * passes made in `seconds` (at least 3; the quickest, so that a pass the
 * scheduler interrupted on a shared machine does not count). */
static double step_time(steps_ctx_t *c, enum step step, double seconds, int *rc)
{
    double best = INFINITY, t0 = tusk_clock_s();
    for (unsigned k = 0; *rc == 0 && (k < 3 || tusk_clock_s() - t0 < seconds); k++) {
        double a = tusk_clock_s();
        *rc = step_once(c, step);
        double t = tusk_clock_s() - a;
        best = t < best ? t : best;
    }
    return best / (double)c->n;
}

/* The actor's steps before and after issue 21 on one thread, µs per
 * record of `kind`: the frames decoded into adf_crystal_t (78 kB each) or
 * read in place; psa_analyse on the decoded records (every channel
 * calibrated) or psa_analyse_start on the views (the core and the masks'
 * channels), the search left out; the data:psa frames written. */
static int steps_one_thread(const det_basis_t *basis, const char *kind, const adf_crystal_t *sim, size_t nsim,
                            size_t want, double seconds)
{
    steps_ctx_t c;
    memset(&c, 0, sizeof c);
    uint8_t *in = NULL;
    if (crystal_buffer(sim, nsim, want, &in, &c.in_size) != 0)
        return TUSK_EXIT_FAIL;
    c.in = in;
    c.n = want;
    psa_config_t pc;
    psa_config_default(&pc);
    pc.threads = 1;
    c.dec = malloc(want * sizeof *c.dec);
    c.views = malloc(want * sizeof *c.views);
    c.out = malloc(want * sizeof *c.out);
    c.ocap = want * (ADF_KEY_SIZE + adf_psa_payload_size(ADF_PSA_MAX_HITS, true));
    c.obuf = malloc(c.ocap);
    c.r = adf_reader_new(ADF_ON_ERROR_STOP);
    c.w = adf_writer_new();
    c.none = (psa_backend_t){no_search, NULL, true, NULL, NULL, NULL};
    int rc = 0;
    if (!c.dec || !c.views || !c.out || !c.obuf || !c.r || !c.w) {
        fprintf(stderr, PROG ": out of memory (%zu records)\n", want);
        rc = TUSK_EXIT_FAIL;
    } else if (psa_engine_new(&c.e, basis, &pc, &c.err) != TUSK_OK || psa_job_new(&c.job, c.e, &c.err) != TUSK_OK) {
        fprintf(stderr, PROG ": %s\n", c.err.message);
        rc = TUSK_EXIT_FAIL;
    }
    double t[5] = {0};
    static const enum step order[5] = {STEP_DECODE, STEP_VIEW, STEP_PREPARE_OLD, STEP_PREPARE_NEW, STEP_ENCODE};
    for (int k = 0; k < 5 && rc == 0; k++)
        t[order[k]] = 1e6 * step_time(&c, order[k], seconds, &rc);
    if (rc != 0)
        fprintf(stderr, PROG ": the steps on one thread failed (%s)\n", c.err.message);
    else
        printf("| %s | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f |\n", kind, t[STEP_DECODE], t[STEP_PREPARE_OLD],
               t[STEP_DECODE] + t[STEP_PREPARE_OLD] + t[STEP_ENCODE], t[STEP_VIEW], t[STEP_PREPARE_NEW],
               t[STEP_ENCODE], t[STEP_VIEW] + t[STEP_PREPARE_NEW] + t[STEP_ENCODE]);
    psa_job_destroy(&c.job);
    psa_engine_destroy(&c.e);
    adf_reader_destroy(&c.r);
    adf_writer_destroy(&c.w);
    free(c.dec);
    free(c.views);
    free(c.out);
    free(c.obuf);
    free(in);
    return rc ? TUSK_EXIT_FAIL : 0;
}

static int cmd_psa(const opts_t *o)
{
    tusk_error_t err;
    det_basis_t *basis = NULL;
    if (det_basis_load(&basis, o->basis, NULL, &err) != TUSK_OK) {
        fprintf(stderr, PROG ": %s\n", err.message);
        return TUSK_EXIT_FAIL;
    }
    psa_config_t pc;
    psa_config_default(&pc);
    pc.threads = (unsigned)o->threads;
    psa_engine_t *e = NULL;
    if (psa_engine_new(&e, basis, &pc, &err) != TUSK_OK) {
        fprintf(stderr, PROG ": %s: %s\n", o->basis, err.message);
        det_basis_destroy(&basis);
        return TUSK_EXIT_FAIL;
    }
    char tmpdir[] = "/tmp/tusk-bench-XXXXXX";
    if (!mkdtemp(tmpdir)) {
        fprintf(stderr, PROG ": mkdtemp: %s\n", strerror(errno));
        return TUSK_EXIT_FAIL;
    }
    records_t r = {0};
    int rc = simulate(o, &pc, &r, tmpdir);
    rmdir(tmpdir);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned all = o->threads ? (unsigned)o->threads : (unsigned)(cpus > 0 ? cpus : 1);
    const det_basis_shape_t *sh = det_basis_shape(basis);
    if (rc == 0) {
        printf("basis %s: %zu points, %.1f mm grid, %u samples; p = %g, full grid search, mask neighbours; "
               "%zu single- and %zu multi-hit-segment events (1332.5 keV, one crystal); %ld CPUs\n\n",
               o->basis, det_basis_points(basis), sh->grid_mm, sh->samples, pc.p, r.n_single, r.n_multi, cpus);
        printf("| backend | events | events run | seconds | events/s | FoM terms/s |\n| --- | --- | ---: | ---: | ---: "
               "| ---: |\n");
    }
    psa_batch_t *single = NULL, *multi = NULL, *small = NULL;
    size_t ns = 0, nm = 0, nr = 0;
    if (rc == 0)
        rc = build_batch(e, r.single, r.n_single, o->batch, &single, &ns);
    if (rc == 0)
        rc = build_batch(e, r.multi, r.n_multi, o->batch, &multi, &nm);
    if (rc == 0)
        rc = build_batch(e, r.single, r.n_single < o->reference ? r.n_single : o->reference, o->reference, &small,
                         &nr);
    if (rc == 0)
        rc = measure("reference CPU (1 thread)", "single", ref_fn, NULL, e, small, nr, o->seconds);
    char row[160];
    if (rc == 0)
        rc = measure("fast CPU, 1 thread", "single", fast_fn, (void *)(uintptr_t)1, e, single, ns, o->seconds);
    if (rc == 0)
        rc = measure("fast CPU, 1 thread", "multi", fast_fn, (void *)(uintptr_t)1, e, multi, nm, o->seconds);
    snprintf(row, sizeof row, "fast CPU, %u thread%s", all, all == 1 ? "" : "s");
    if (rc == 0)
        rc = measure(row, "single", fast_fn, (void *)(uintptr_t)all, e, single, ns, o->seconds);
    if (rc == 0)
        rc = measure(row, "multi", fast_fn, (void *)(uintptr_t)all, e, multi, nm, o->seconds);
    char notes[4096] = "";
    if (rc == 0) {
        psa_backend_t be = psa_backend_fast(all);
        rc = end_to_end(row, "single", e, &be, r.single, r.n_single, o->e2e, o->seconds, notes, sizeof notes);
        if (rc == 0)
            rc = end_to_end(row, "multi", e, &be, r.multi, r.n_multi, o->e2e, o->seconds, notes, sizeof notes);
    }
    for (unsigned d = 0; rc == 0 && d < o->devices; d++) {
        psa_cl_t *cl = NULL;
        if (psa_cl_new(&cl, e, o->device[d], 0, &err) != TUSK_OK) {
            fprintf(stderr, PROG ": --device %s: %s\n", o->device[d], err.message);
            rc = TUSK_EXIT_FAIL;
            break;
        }
        snprintf(row, sizeof row, "OpenCL %s", psa_cl_describe(cl));
        rc = measure(row, "single", cl_fn, cl, e, single, ns, o->seconds);
        if (rc == 0)
            rc = measure(row, "multi", cl_fn, cl, e, multi, nm, o->seconds);
        if (rc == 0) {
            psa_backend_t be = psa_backend_cl(cl);
            rc = end_to_end(row, "single", e, &be, r.single, r.n_single, o->e2e, o->seconds, notes, sizeof notes);
            if (rc == 0)
                rc = end_to_end(row, "multi", e, &be, r.multi, r.n_multi, o->e2e, o->seconds, notes, sizeof notes);
        }
        psa_cl_destroy(&cl);
    }
    if (rc == 0) {
        printf("\nEnd to end, host time per record (µs) by step, on the calling thread: reading the frames in place, "
               "psa_analyse_start (preprocessing on %u thread%s; the CPU backends' search too; OpenCL: packing and "
               "submitting), psa_analyse_finish (OpenCL: waiting for the device), writing data:psa; and the wall "
               "time per record:\n\n| backend | events | records a buffer | read | start | finish | write | "
               "wall |\n| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n%s",
               all, all == 1 ? "" : "s", notes);
        printf("\nThe actor's steps on one thread, µs per record (%zu records a buffer; the quickest pass; the search "
               "left out): before issue 21, data:crystal decoded into adf_crystal_t and psa_analyse (every channel "
               "calibrated); now, read in place (adf_crystal_view) and psa_analyse_start (the core and the masks' "
               "channels); the data:psa written (the same either way):\n\n"
               "| events | decode | preprocess | before, total | read in place | preprocess | write data:psa | "
               "now, total |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n",
               (size_t)o->e2e);
        rc = steps_one_thread(basis, "single", r.single, r.n_single, o->e2e, o->seconds);
        if (rc == 0)
            rc = steps_one_thread(basis, "multi", r.multi, r.n_multi, o->e2e, o->seconds);
    }
    psa_batch_destroy(&single);
    psa_batch_destroy(&multi);
    psa_batch_destroy(&small);
    free(r.single);
    free(r.multi);
    psa_engine_destroy(&e);
    det_basis_destroy(&basis);
    return rc;
}

static int bench_psa_main(const tusk_cli_t *cli, int argc, char **argv)
{
    opts_t o = {NULL, 2000, 20000, 200, 0, 1, 4000, 2.0, {NULL}, 0};
    static const struct option longs[] = {
        {"basis", required_argument, NULL, 'b'},   {"events", required_argument, NULL, 'n'},
        {"batch", required_argument, NULL, 'B'},   {"seconds", required_argument, NULL, 's'},
        {"reference", required_argument, NULL, 'r'}, {"threads", required_argument, NULL, 't'},
        {"device", required_argument, NULL, 'd'},  {"seed", required_argument, NULL, 'S'},
        {"end-to-end", required_argument, NULL, 'e'},
        {"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0}};
    optind = 1;
    int c;
    while ((c = tusk_cli_getopt(cli, argc, argv, "b:n:h", longs, NULL)) != -1) {
        bool ok = true;
        switch (c) {
        case 'b':
            o.basis = optarg;
            break;
        case 'n': ok = tusk_cli_unsigned(argv[0], "--events", optarg, 1, UINT_MAX, &o.events); break;
        case 'B': ok = tusk_cli_unsigned(argv[0], "--batch", optarg, 1, UINT_MAX, &o.batch); break;
        case 'r': ok = tusk_cli_unsigned(argv[0], "--reference", optarg, 1, UINT_MAX, &o.reference); break;
        case 't': ok = tusk_cli_unsigned(argv[0], "--threads", optarg, 0, 1024, &o.threads); break;
        case 'S': ok = tusk_cli_u64(argv[0], "--seed", optarg, 0, UINT64_MAX, &o.seed); break;
        case 'e': ok = tusk_cli_unsigned(argv[0], "--end-to-end", optarg, 1, UINT_MAX, &o.e2e); break;
        case 's': ok = tusk_cli_double(argv[0], "--seconds", optarg, 0.0, 3600.0, &o.seconds); break;
        case 'd':
            if (o.devices == MAX_DEVICES) {
                fprintf(stderr, "%s: at most %d --device\n", argv[0], MAX_DEVICES);
                return TUSK_EXIT_USAGE;
            }
            o.device[o.devices++] = optarg;
            break;
        case 'h': return tusk_cli_help(cli);
        default: ok = false;
        }
        if (!ok)
            return TUSK_EXIT_USAGE;
    }
    if (!o.basis || optind != argc) {
        if (!o.basis)
            fprintf(stderr, "%s: --basis FILE is required\n", argv[0]);
        else
            fprintf(stderr, "%s: unexpected argument '%s'\n", argv[0], argv[optind]);
        return TUSK_EXIT_USAGE;
    }
    return cmd_psa(&o);
}

static const tusk_cli_command_t commands[] = {
    {"psa", bench_psa_main, "PSA grid-search speed: reference, fast path, OpenCL"},
    {"track", bench_track_main, "gamma-ray tracking speed (reference and OpenCL)"},
    {"zfinder", bench_zfinder_main, "the z-finder's speed on lowlum and highlum RoIs"},
    {"sts", bench_sts_main, "the CBM STS local reconstruction's time per timeslice, 2 M to 30 M digis"},
    {"ut", bench_ut_main, "the LHCb UT decoding and Compass tracking's events/s"},
    {"tpc", bench_tpc_main, "the ALICE TPC slice tracker's time per event, pp to central Pb-Pb"},
    {NULL, NULL, NULL}};

int main(int argc, char **argv)
{
    static const tusk_cli_t cli = {PROG, PACKAGE_VERSION, "psa --basis FILE [OPTIONS]\ntrack --basis FILE [OPTIONS]\n"
                                   "zfinder [OPTIONS]\nsts [OPTIONS]\nut [OPTIONS]\ntpc [OPTIONS]", commands, NULL, help};
    return tusk_cli_main(&cli, argc, argv);
}
