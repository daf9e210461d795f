/* emulator.c - the serial chain runner (see emulator.h).
 *
 * Each actor of the topology is a node with its instances, an input queue,
 * a pool of output buffers of its size and its driver (runtime/driver.h:
 * the call loop, the counts and the timing). A buffer moves from a node to
 * its sink without copying; only when several actors read one output do
 * the others get copies. After every producer buffer the queues are drained
 * in dependency order, so one buffer travels the whole chain before the
 * next is made: memory stays small and gdb sees a buffer's whole journey.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "emulator.h"
#include "tusk/actor_host.h"
#include "tusk/adf.h"
#include "base/clock.h"
#include "base/grow.h"
#include "runtime/driver.h"

typedef struct buf {
    struct buf *next;
    struct node *owner; /* its pool */
    uint8_t *data;
    uint32_t size;      /* bytes used */
    unsigned input;     /* source position at the receiving node */
    uint64_t frames;    /* counted once, when it was made */
} buf_t;

typedef struct link_dump {
    unsigned sink;          /* node index */
    adf_file_writer_t *file;
} link_dump_t;

typedef struct node {
    struct tusk_emulator *em;
    const tusk_actor_spec_t *spec;
    tusk_actor_lib_t *lib;
    tusk_actor_t **inst;
    unsigned n_inst;
    unsigned n_dirs;        /* configuration folders made (or tried; none with a <config_dir>) */
    unsigned next_inst;     /* round robin */
    bool *ended;            /* producers: per instance */
    unsigned n_ended;
    buf_t *queue_head, *queue_tail;
    buf_t *pool;            /* free output buffers of spec->buffer_size */
    link_dump_t *dumps;
    unsigned n_dumps;
    tusk_driver_t *drv;     /* calls, counts, timing */
} node_t;

struct tusk_emulator {
    const tusk_topology_t *topo;
    tusk_emulator_options_t opt;
    node_t *nodes;
    unsigned n;
    char *work_dir;
    bool temp_work_dir;
    uint64_t produced_buffers, produced_frames;
    uint64_t t0_ns, last_progress_ns;
    FILE *log;
};

/* ---- buffers ----------------------------------------------------------------- */

static buf_t *buf_get(node_t *nd, tusk_error_t *err)
{
    buf_t *b = nd->pool;
    if (b) {
        nd->pool = b->next;
    } else {
        b = calloc(1, sizeof *b);
        if (b)
            b->data = malloc(nd->spec->buffer_size);
        if (!b || !b->data) {
            free(b);
            tusk_error_set(err, TUSK_ENOMEM, "out of memory for a %u-byte buffer of %s",
                           (unsigned)nd->spec->buffer_size, nd->spec->name);
            return NULL;
        }
        b->owner = nd;
    }
    b->next = NULL;
    b->size = 0;
    return b;
}

static void buf_put(buf_t *b)
{
    b->next = b->owner->pool;
    b->owner->pool = b;
}

static void free_list(buf_t *b)
{
    while (b) {
        buf_t *next = b->next;
        free(b->data);
        free(b);
        b = next;
    }
}

static void enqueue(node_t *nd, buf_t *b)
{
    b->next = NULL;
    if (nd->queue_tail)
        nd->queue_tail->next = b;
    else
        nd->queue_head = b;
    nd->queue_tail = b;
}

static buf_t *dequeue(node_t *nd)
{
    buf_t *b = nd->queue_head;
    if (b) {
        nd->queue_head = b->next;
        if (!nd->queue_head)
            nd->queue_tail = NULL;
    }
    return b;
}

/* Hand `b` (filled by node `from`) to every actor reading from it: into
 * its queue, uncopied for the last reader. On failure `b` is back in its
 * pool unless a queue has it. */
static int deliver(tusk_emulator_t *em, node_t *from, buf_t *b, tusk_error_t *err)
{
    unsigned from_idx = (unsigned)(from - em->nodes);
    const tusk_actor_spec_t *spec = from->spec;
    for (unsigned d = 0; d < from->n_dumps; d++) {
        adf_error_t aerr;
        if (adf_file_writer_write(from->dumps[d].file, b->data, b->size, &aerr) != ADF_OK) {
            buf_put(b);
            return tusk_error_set(err, TUSK_EIO, "--dump-between: %s", aerr.message);
        }
    }
    if (spec->n_sinks == 0)
        buf_put(b);
    for (unsigned s = 0; s < spec->n_sinks; s++) {
        node_t *to = &em->nodes[spec->sinks[s]];
        buf_t *give = b;
        if (s + 1 < spec->n_sinks) {
            /* From the buffer's own pool: a forwarded buffer can be larger
             * than this node's output buffers. */
            give = buf_get(b->owner, err);
            if (!give) {
                buf_put(b);
                return TUSK_ENOMEM;
            }
            memcpy(give->data, b->data, b->size);
            give->size = b->size;
            give->frames = b->frames;
        }
        give->input = 0;
        for (unsigned k = 0; k < to->spec->n_sources; k++)
            if (to->spec->sources[k] == from_idx)
                give->input = k;
        enqueue(to, give);
    }
    return TUSK_OK;
}

/* ---- running: the driver's host -------------------------------------------------- */

static int drain(tusk_emulator_t *em, tusk_error_t *err);

static void *host_take(void *ctx, uint8_t **data, tusk_error_t *err)
{
    buf_t *b = buf_get(ctx, err);
    if (b)
        *data = b->data;
    return b;
}

static void host_give_back(void *ctx, void *buffer)
{
    (void)ctx;
    buf_put(buffer);
}

static int host_emit(void *ctx, void *buffer, uint32_t size, uint64_t frames, unsigned flags, tusk_error_t *err)
{
    (void)flags;
    node_t *nd = ctx;
    buf_t *b = buffer;
    b->size = size;
    b->frames = frames;
    return deliver(nd->em, nd, b, err);
}

/* A producer's buffer, or what a filter writes at its flush (when nothing
 * else drains the queues), travels the chain at once. */
static int host_emitted(void *ctx, unsigned flags, tusk_error_t *err)
{
    node_t *nd = ctx;
    if (nd->spec->actor_class == TUSK_PRODUCER || (flags & TUSK_EMIT_FLUSH))
        return drain(nd->em, err);
    return TUSK_OK;
}

static tusk_actor_t *pick_instance(node_t *nd)
{
    tusk_actor_t *a = nd->inst[nd->next_inst];
    nd->next_inst = (nd->next_inst + 1) % nd->n_inst;
    return a;
}

static int process_one(node_t *nd, buf_t *in, tusk_error_t *err)
{
    tusk_actor_t *a = pick_instance(nd);
    int rc;
    tusk_driver_outcome_t outcome = TUSK_DRIVER_DONE;
    if (nd->spec->actor_class == TUSK_CONSUMER)
        rc = tusk_driver_consume(nd->drv, a, in->data, in->size, in->frames, err);
    else
        rc = tusk_driver_filter(nd->drv, a, in->input, in, in->data, in->size, in->frames, &outcome, err);
    if (outcome != TUSK_DRIVER_FORWARDED) /* a forwarded input moved on */
        buf_put(in);
    return rc;
}

/* After node `failed` failed: the buffers already handed to the nodes
 * after it are valid output of calls that succeeded, so they are still
 * processed (the frames a filter passed on before a malformed one reach
 * the consumers). A further failure there is logged, and that node's
 * queue dropped. */
static void salvage(tusk_emulator_t *em, unsigned failed)
{
    for (unsigned i = failed + 1; i < em->n; i++) {
        node_t *nd = &em->nodes[i];
        buf_t *b;
        while ((b = dequeue(nd)) != NULL) {
            tusk_error_t e;
            if (process_one(nd, b, &e) != TUSK_OK) {
                fprintf(em->log, "tusk-emulate: also: %s\n", e.message);
                break;
            }
        }
    }
}

/* Process every queued buffer: one pass in dependency order suffices, as
 * outputs only ever go to later nodes. */
static int drain(tusk_emulator_t *em, tusk_error_t *err)
{
    for (unsigned i = 0; i < em->n; i++) {
        node_t *nd = &em->nodes[i];
        buf_t *b;
        while ((b = dequeue(nd)) != NULL) {
            int rc = process_one(nd, b, err);
            if (rc != TUSK_OK) {
                salvage(em, i);
                return rc;
            }
        }
    }
    return TUSK_OK;
}

static bool limits_reached(const tusk_emulator_t *em)
{
    return (em->opt.max_buffers && em->produced_buffers >= em->opt.max_buffers) ||
           (em->opt.max_frames && em->produced_frames >= em->opt.max_frames) || (em->opt.stop && *em->opt.stop);
}

static void progress(tusk_emulator_t *em, bool final)
{
    if (!em->opt.verbose)
        return;
    uint64_t now = tusk_clock_ns();
    double since = 1e-9 * (double)(now - em->last_progress_ns);
    if (!final && since < 1.0)
        return;
    em->last_progress_ns = now;
    double elapsed = 1e-9 * (double)(now - em->t0_ns);
    uint64_t bytes = 0;
    for (unsigned i = 0; i < em->n; i++)
        if (em->nodes[i].spec->actor_class == TUSK_PRODUCER)
            bytes += tusk_driver_stats(em->nodes[i].drv)->bytes_out;
    fprintf(em->log, "tusk-emulate: %8.1f s  %10llu buffers  %10llu frames  %9.1f MB  %8.1f MB/s%s\n", elapsed,
            (unsigned long long)em->produced_buffers, (unsigned long long)em->produced_frames, (double)bytes / 1e6,
            elapsed > 0 ? (double)bytes / 1e6 / elapsed : 0.0, final ? "  (done)" : "");
}

/* One round: each producer instance still running makes one buffer, which
 * then travels the chain. Returns whether any producer is still running. */
static int produce_round(tusk_emulator_t *em, bool *running, tusk_error_t *err)
{
    *running = false;
    for (unsigned i = 0; i < em->n; i++) {
        node_t *nd = &em->nodes[i];
        if (nd->spec->actor_class != TUSK_PRODUCER)
            continue;
        for (unsigned k = 0; k < nd->n_inst; k++) {
            if (nd->ended[k])
                continue;
            if (limits_reached(em)) {
                nd->ended[k] = true;
                nd->n_ended++;
                continue;
            }
            const tusk_driver_stats_t *st = tusk_driver_stats(nd->drv);
            uint64_t buffers_before = st->buffers_out, frames_before = st->frames_out;
            bool ended;
            int rc = tusk_driver_produce(nd->drv, nd->inst[k], &ended, err);
            if (ended) {
                nd->ended[k] = true;
                nd->n_ended++;
            }
            em->produced_buffers += st->buffers_out - buffers_before;
            em->produced_frames += st->frames_out - frames_before;
            if (rc != TUSK_OK)
                return rc;
            if (!nd->ended[k])
                *running = true;
            progress(em, false);
        }
    }
    return TUSK_OK;
}

/* End of data: filters write what they held back, upstream first, so
 * what one releases is processed by the actors below it before they flush
 * in turn. */
static int flush_all(tusk_emulator_t *em, tusk_error_t *err)
{
    for (unsigned i = 0; i < em->n; i++) {
        node_t *nd = &em->nodes[i];
        if (nd->spec->actor_class != TUSK_FILTER)
            continue;
        for (unsigned k = 0; k < nd->n_inst; k++) {
            int rc = tusk_driver_flush(nd->drv, nd->inst[k], err);
            if (rc != TUSK_OK)
                return rc;
        }
    }
    return TUSK_OK;
}

typedef int (*hook_call_fn)(tusk_actor_t *, tusk_error_t *);

/* Call a lifecycle hook on every instance, forwards (dependency order) or
 * backwards; stop at the first failure unless `all` (then report the
 * first failure after calling everyone). */
static int call_all(tusk_emulator_t *em, hook_call_fn fn, bool backwards, bool all, tusk_error_t *err)
{
    int first = TUSK_OK;
    for (unsigned j = 0; j < em->n; j++) {
        node_t *nd = &em->nodes[backwards ? em->n - 1 - j : j];
        for (unsigned k = 0; k < nd->n_inst; k++) {
            tusk_error_t e;
            int rc = fn(nd->inst[k], &e);
            if (rc != TUSK_OK && first == TUSK_OK) {
                first = rc;
                if (err)
                    *err = e;
                if (!all)
                    return rc;
            } else if (rc != TUSK_OK) {
                fprintf(em->log, "tusk-emulate: also: %s\n", e.message);
            }
        }
    }
    return first;
}

int tusk_emulator_run(tusk_emulator_t *em, tusk_error_t *err)
{
    em->t0_ns = tusk_clock_ns();
    em->last_progress_ns = em->t0_ns;
    int rc = call_all(em, tusk_actor_initialise, false, false, err);
    if (rc != TUSK_OK)
        return rc;
    /* Start consumers first, so nothing is produced before it can be taken. */
    rc = call_all(em, tusk_actor_start, true, false, err);
    if (rc != TUSK_OK)
        return rc;
    bool running = true;
    while (rc == TUSK_OK && running)
        rc = produce_round(em, &running, err);
    if (rc == TUSK_OK)
        rc = flush_all(em, err);
    /* Stop producers first; a failure above still stops everyone, so files
     * are closed, but the first failure is what is reported. */
    tusk_error_t stop_err;
    int src = call_all(em, tusk_actor_stop, false, true, &stop_err);
    if (rc == TUSK_OK && src != TUSK_OK) {
        rc = src;
        if (err)
            *err = stop_err;
    }
    progress(em, true);
    return rc;
}

/* ---- setup -------------------------------------------------------------------- */

static int make_work_dir(tusk_emulator_t *em, tusk_error_t *err)
{
    if (em->opt.work_dir) {
        if (mkdir(em->opt.work_dir, 0700) != 0 && errno != EEXIST)
            return tusk_error_set(err, TUSK_EIO, "%s: cannot create the work folder: %s", em->opt.work_dir,
                                  strerror(errno));
        em->work_dir = strdup(em->opt.work_dir);
        return em->work_dir ? TUSK_OK : tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    }
    const char *tmp = getenv("TMPDIR");
    char templ[4096];
    snprintf(templ, sizeof templ, "%s/tusk-emulate.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(templ))
        return tusk_error_set(err, TUSK_EIO, "%s: cannot create a temporary folder: %s", templ, strerror(errno));
    em->work_dir = strdup(templ);
    em->temp_work_dir = true;
    return em->work_dir ? TUSK_OK : tusk_error_set(err, TUSK_ENOMEM, "out of memory");
}

static void instance_dir(const tusk_emulator_t *em, const tusk_actor_spec_t *spec, unsigned k, char *out, size_t n)
{
    snprintf(out, n, "%s/%s.%u", em->work_dir, spec->name, k);
}

/* --dump-between SRC:DST: open DUMP_DIR/SRC-DST.adf on the link. */
static int open_dumps(tusk_emulator_t *em, tusk_error_t *err)
{
    for (unsigned d = 0; d < em->opt.n_dumps; d++) {
        const char *arg = em->opt.dumps[d];
        const char *colon = strchr(arg, ':');
        char src[256];
        if (!colon || (size_t)(colon - arg) >= sizeof src)
            return tusk_error_set(err, TUSK_EINVAL, "--dump-between '%s': expected SOURCE:DESTINATION", arg);
        memcpy(src, arg, (size_t)(colon - arg));
        src[colon - arg] = '\0';
        int from = tusk_topology_find(em->topo, src), to = tusk_topology_find(em->topo, colon + 1);
        bool linked = false;
        if (from >= 0 && to >= 0)
            for (unsigned k = 0; k < em->nodes[to].spec->n_sources; k++)
                linked |= em->nodes[to].spec->sources[k] == (unsigned)from;
        if (!linked)
            return tusk_error_set(err, TUSK_EINVAL, "--dump-between %s: %s has no link %s -> %s", arg,
                                  tusk_topology_name(em->topo), src, colon + 1);
        node_t *nd = &em->nodes[from];
        link_dump_t *nl = realloc(nd->dumps, (nd->n_dumps + 1) * sizeof *nl);
        if (!nl)
            return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
        nd->dumps = nl;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s-%s.adf", em->opt.dump_dir ? em->opt.dump_dir : ".", src, colon + 1);
        adf_error_t aerr;
        adf_file_writer_t *w = adf_file_writer_open(path, &aerr);
        if (!w)
            return tusk_error_set(err, TUSK_EIO, "--dump-between: %s", aerr.message);
        nd->dumps[nd->n_dumps++] = (link_dump_t){.sink = (unsigned)to, .file = w};
    }
    return TUSK_OK;
}

int tusk_emulator_new(tusk_emulator_t **out, const tusk_topology_t *topo, const tusk_emulator_options_t *opt,
                      tusk_error_t *err)
{
    *out = NULL;
    tusk_emulator_t *em = calloc(1, sizeof *em);
    if (!em)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    em->topo = topo;
    if (opt)
        em->opt = *opt;
    em->log = em->opt.log ? em->opt.log : stderr;
    em->n = tusk_topology_count(topo);
    em->nodes = calloc(em->n, sizeof *em->nodes);
    int rc = em->nodes ? TUSK_OK : tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    if (rc == TUSK_OK)
        rc = make_work_dir(em, err);
    for (unsigned i = 0; i < em->n && rc == TUSK_OK; i++) {
        node_t *nd = &em->nodes[i];
        nd->em = em;
        nd->spec = tusk_topology_actor(topo, i);
        const tusk_driver_host_t host = {.ctx = nd,
                                         .take = host_take,
                                         .give_back = host_give_back,
                                         .emit = host_emit,
                                         .emitted = host_emitted};
        rc = tusk_driver_new(&nd->drv, &host, nd->spec->buffer_size, err);
        if (rc != TUSK_OK)
            break;
        if (!nd->spec->library_path) {
            rc = tusk_error_set(err, TUSK_EINVAL, "actor %s: library not resolved (tusk_topology_resolve)",
                                nd->spec->name);
            break;
        }
        rc = tusk_actor_lib_open(&nd->lib, nd->spec->library_path, nd->spec->actor_class, err);
        if (rc != TUSK_OK) {
            tusk_error_prefix(err, "%s:%d: %s '%s'", tusk_topology_name(topo), nd->spec->line,
                              tusk_actor_class_name(nd->spec->actor_class), nd->spec->name);
            break;
        }
        tusk_actor_lib_set_note(nd->lib, em->opt.note);
        nd->inst = calloc(nd->spec->instances, sizeof *nd->inst);
        nd->ended = calloc(nd->spec->instances, sizeof *nd->ended);
        if (!nd->inst || !nd->ended) {
            rc = tusk_error_set(err, TUSK_ENOMEM, "out of memory");
            break;
        }
        for (unsigned k = 0; k < nd->spec->instances && rc == TUSK_OK; k++) {
            char dir[4096];
            instance_dir(em, nd->spec, k, dir, sizeof dir);
            /* Its own folder (<config_dir>), or one made here. */
            if (!nd->spec->config_dir)
                nd->n_dirs++;
            const char *cdir;
            bool made;
            rc = tusk_actor_config_folder(nd->spec, k, dir, &cdir, &made, err);
            if (rc == TUSK_OK)
                rc = tusk_actor_new(&nd->inst[k], nd->lib, nd->spec->name, k, cdir, err);
            if (rc == TUSK_OK)
                nd->n_inst++;
        }
    }
    if (rc == TUSK_OK)
        rc = open_dumps(em, err);
    if (rc != TUSK_OK) {
        tusk_emulator_destroy(&em, NULL);
        return rc;
    }
    *out = em;
    return TUSK_OK;
}

/* Remove DIR/parameters.conf and DIR (what tusk_actor_write_config made),
 * leaving anything an actor wrote there (the temporary folder is then
 * kept, and said so). */
static void remove_instance_dir(const char *dir)
{
    char file[4200];
    snprintf(file, sizeof file, "%s/parameters.conf", dir);
    unlink(file);
    rmdir(dir);
}

int tusk_emulator_destroy(tusk_emulator_t **emp, tusk_error_t *err)
{
    if (!emp || !*emp)
        return TUSK_OK;
    tusk_emulator_t *em = *emp;
    int first = TUSK_OK;
    for (unsigned i = 0; em->nodes && i < em->n; i++) {
        node_t *nd = &em->nodes[i];
        for (unsigned k = 0; k < nd->n_inst; k++) {
            tusk_error_t e;
            int rc = tusk_actor_destroy(&nd->inst[k], &e);
            if (rc != TUSK_OK && first == TUSK_OK) {
                first = rc;
                if (err)
                    *err = e;
            }
        }
        /* Every folder made, also that of an instance that failed to
         * register. */
        for (unsigned k = 0; em->temp_work_dir && k < nd->n_dirs; k++) {
            char dir[4096];
            instance_dir(em, nd->spec, k, dir, sizeof dir);
            remove_instance_dir(dir);
        }
        for (unsigned d = 0; d < nd->n_dumps; d++) {
            adf_error_t aerr;
            if (adf_file_writer_close(&nd->dumps[d].file, &aerr) != ADF_OK && first == TUSK_OK)
                first = tusk_error_set(err, TUSK_EIO, "--dump-between: %s", aerr.message);
        }
        free(nd->dumps);
        tusk_actor_lib_close(&nd->lib);
        free_list(nd->queue_head);
        free_list(nd->pool);
        free(nd->inst);
        free(nd->ended);
        tusk_driver_destroy(&nd->drv);
    }
    if (em->temp_work_dir && em->work_dir && rmdir(em->work_dir) != 0)
        fprintf(em->log, "tusk-emulate: kept the temporary folder %s: %s (an actor left files in its "
                "configuration folder)\n", em->work_dir, strerror(errno));
    free(em->work_dir);
    free(em->nodes);
    free(em);
    *emp = NULL;
    return first;
}

/* ---- reporting ---------------------------------------------------------------- */

static void human_bytes(uint64_t b, char *out, size_t n)
{
    if (b >= 10000000000ull)
        snprintf(out, n, "%.1f GB", (double)b / 1e9);
    else if (b >= 10000000ull)
        snprintf(out, n, "%.1f MB", (double)b / 1e6);
    else if (b >= 10000ull)
        snprintf(out, n, "%.1f kB", (double)b / 1e3);
    else
        snprintf(out, n, "%llu B", (unsigned long long)b);
}

void tusk_emulator_print_summary(const tusk_emulator_t *em, FILE *out)
{
    uint64_t total_ns = 0;
    for (unsigned i = 0; i < em->n; i++)
        total_ns += tusk_driver_stats(em->nodes[i].drv)->ns;
    fprintf(out, "%-16s %-12s %4s %9s %9s %9s %10s %10s %10s %10s %9s %6s\n", "actor", "class", "inst", "calls",
            "buf in", "buf out", "frames in", "frames out", "bytes in", "bytes out", "time ms", "share");
    for (unsigned i = 0; i < em->n; i++) {
        const node_t *nd = &em->nodes[i];
        const tusk_driver_stats_t *s = tusk_driver_stats(nd->drv);
        char bin[32], bout[32];
        human_bytes(s->bytes_in, bin, sizeof bin);
        human_bytes(s->bytes_out, bout, sizeof bout);
        fprintf(out, "%-16s %-12s %4u %9llu %9llu %9llu %10llu %10llu %10s %10s %9.1f %5.1f%%\n", nd->spec->name,
                tusk_actor_class_name(nd->spec->actor_class), nd->n_inst, (unsigned long long)s->calls,
                (unsigned long long)s->buffers_in, (unsigned long long)s->buffers_out,
                (unsigned long long)s->frames_in, (unsigned long long)s->frames_out, bin, bout, (double)s->ns / 1e6,
                total_ns ? 100.0 * (double)s->ns / (double)total_ns : 0.0);
    }
}

const char *tusk_emulator_work_dir(const tusk_emulator_t *em)
{
    return em->work_dir;
}

const tusk_driver_stats_t *tusk_emulator_actor_stats(const tusk_emulator_t *em, const char *name)
{
    int idx = tusk_topology_find(em->topo, name);
    return idx < 0 ? NULL : tusk_driver_stats(em->nodes[idx].drv);
}

tusk_emulator_totals_t tusk_emulator_totals(const tusk_emulator_t *em)
{
    tusk_emulator_totals_t t = {0};
    for (unsigned i = 0; i < em->n; i++) {
        const node_t *nd = &em->nodes[i];
        const tusk_driver_stats_t *s = tusk_driver_stats(nd->drv);
        if (nd->spec->actor_class == TUSK_PRODUCER) {
            t.producer_buffers += s->buffers_out;
            t.producer_frames += s->frames_out;
            t.producer_bytes += s->bytes_out;
        } else if (nd->spec->actor_class == TUSK_CONSUMER) {
            t.consumer_buffers += s->buffers_in;
            t.consumer_frames += s->frames_in;
            t.consumer_bytes += s->bytes_in;
        }
    }
    return t;
}

/* ---- one stage: --only and the offline commands ---------------------------------- */

/* Append `s` to the growing text, XML-escaped. */
typedef struct text {
    char *s;
    size_t n, cap;
    bool failed;
} text_t;

static void put(text_t *t, const char *s, bool escape)
{
    for (; *s; s++) {
        const char *rep = NULL;
        if (escape)
            rep = *s == '<' ? "&lt;" : *s == '>' ? "&gt;" : *s == '&' ? "&amp;" : *s == '"' ? "&quot;" : NULL;
        size_t len = rep ? strlen(rep) : 1;
        if (tusk_grow(&t->s, &t->cap, t->n + len + 1, 1) != 0) {
            t->failed = true;
            return;
        }
        memcpy(t->s + t->n, rep ? rep : s, len);
        t->n += len;
        t->s[t->n] = '\0';
    }
}

int tusk_emulator_stage_topology(const tusk_emulator_stage_t *st, const char *input, const char *output, char **xml,
                                 tusk_error_t *err)
{
    *xml = NULL;
    if (st->actor_class != TUSK_FILTER && st->actor_class != TUSK_CONSUMER)
        return tusk_error_set(err, TUSK_EINVAL, "%s: a stage is a filter or a consumer", st->name);
    char num[32];
    text_t t = {0};
    put(&t, "<configuration>\n <producer>\n  <name>replay_input</name>\n  <binary_code>file_producer</binary_code>\n  <size>", false);
    snprintf(num, sizeof num, "%u", (unsigned)st->in_size);
    put(&t, num, false);
    put(&t, "</size>\n  <parameter name=\"file\">", false);
    put(&t, input, true);
    put(&t, "</parameter>\n </producer>\n", false);
    const char *tag = st->actor_class == TUSK_FILTER ? "intermediary" : "consumer";
    put(&t, " <", false);
    put(&t, tag, false);
    snprintf(num, sizeof num, "%u", st->instances ? st->instances : 1);
    put(&t, " instances=\"", false);
    put(&t, num, false);
    put(&t, "\">\n  <name>", false);
    put(&t, st->name, true);
    put(&t, "</name>\n  <binary_code>", false);
    put(&t, st->library, true);
    put(&t, "</binary_code>\n  <data_source>replay_input</data_source>\n", false);
    if (st->actor_class == TUSK_FILTER && st->out_size) {
        snprintf(num, sizeof num, "%u", (unsigned)st->out_size);
        put(&t, "  <size>", false);
        put(&t, num, false);
        put(&t, "</size>\n", false);
    }
    if (st->config_dir) {
        put(&t, "  <config_dir>", false);
        put(&t, st->config_dir, true);
        put(&t, "</config_dir>\n", false);
    }
    for (unsigned k = 0; k < st->n_params; k++) {
        put(&t, "  <parameter name=\"", false);
        put(&t, st->keys[k], true);
        put(&t, "\">", false);
        put(&t, st->values[k], true);
        put(&t, "</parameter>\n", false);
    }
    put(&t, " </", false);
    put(&t, tag, false);
    put(&t, ">\n", false);
    if (st->actor_class == TUSK_FILTER) {
        put(&t, " <consumer>\n  <name>replay_output</name>\n", false);
        if (output) {
            put(&t, "  <binary_code>file_writer</binary_code>\n  <parameter name=\"file\">", false);
            put(&t, output, true);
            put(&t, "</parameter>\n", false);
        } else {
            put(&t, "  <binary_code>null_consumer</binary_code>\n", false);
        }
        put(&t, "  <data_source>", false);
        put(&t, st->name, true);
        put(&t, "</data_source>\n </consumer>\n", false);
    }
    put(&t, "</configuration>\n", false);
    if (t.failed) {
        free(t.s);
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    }
    *xml = t.s;
    return TUSK_OK;
}

int tusk_emulator_replay_topology(const tusk_topology_t *topo, const char *only, const char *input,
                                  const char *output, char **xml, tusk_error_t *err)
{
    *xml = NULL;
    int idx = tusk_topology_find(topo, only);
    if (idx < 0)
        return tusk_error_set(err, TUSK_EINVAL, "--only %s: %s has no actor of that name", only,
                              tusk_topology_name(topo));
    const tusk_actor_spec_t *a = tusk_topology_actor(topo, (unsigned)idx);
    if (a->actor_class == TUSK_PRODUCER)
        return tusk_error_set(err, TUSK_EINVAL, "--only %s: a producer takes no --input; run the topology instead",
                              only);
    if (!a->library_path)
        return tusk_error_set(err, TUSK_EINVAL, "--only %s: library not resolved", only);
    const tusk_emulator_stage_t st = {
        .name = a->name,
        .library = a->library_path,
        .actor_class = a->actor_class,
        .instances = a->instances,
        /* Input buffers as big as the buffers the actor gets in the chain. */
        .in_size = tusk_topology_actor(topo, a->sources[0])->buffer_size,
        .out_size = a->actor_class == TUSK_FILTER ? a->buffer_size : 0,
        .n_params = a->n_params,
        .keys = a->param_keys,
        .values = a->param_values,
        .config_dir = a->config_dir,
    };
    return tusk_emulator_stage_topology(&st, input, output, xml, err);
}

int tusk_emulator_run_stage(const tusk_emulator_stage_t *st, const char *input, const char *output,
                            const tusk_emulator_options_t *opt, tusk_emulator_stage_result_t *result,
                            tusk_error_t *err)
{
    tusk_emulator_stage_result_t res = {0};
    uint64_t t0 = tusk_clock_ns();
    char *xml = NULL;
    tusk_topology_t *topo = NULL;
    tusk_emulator_t *em = NULL;
    char name[256];
    snprintf(name, sizeof name, "(%s stage)", st->name);
    int rc = tusk_emulator_stage_topology(st, input, output, &xml, err);
    if (rc == TUSK_OK)
        rc = tusk_topology_parse(&topo, xml, strlen(xml), name, err);
    if (rc == TUSK_OK)
        rc = tusk_topology_resolve(topo, opt ? opt->actor_path : NULL, err);
    if (rc == TUSK_OK)
        rc = tusk_emulator_new(&em, topo, opt, err);
    if (rc == TUSK_OK) {
        res.ran = true;
        rc = tusk_emulator_run(em, err);
        const tusk_driver_stats_t *s = tusk_emulator_actor_stats(em, st->name);
        if (s)
            res.stats = *s;
        tusk_error_t derr;
        if (tusk_emulator_destroy(&em, &derr) != TUSK_OK && rc == TUSK_OK) {
            rc = derr.code;
            if (err)
                *err = derr;
        }
    }
    tusk_topology_destroy(&topo);
    free(xml);
    res.seconds = 1e-9 * (double)(tusk_clock_ns() - t0);
    if (result)
        *result = res;
    return rc;
}
