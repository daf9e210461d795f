/* emulator_overhead.c - what tusk-emulate's serial runner costs over
 * calling the actors' hooks directly (bench only; not installed).
 *
 * The chain: bench_producer -> passthrough -> null_consumer, one instance
 * each, buffers of SIZE bytes (bench_producer's frames of min(SIZE, 64 KiB)).
 *
 *   direct    dlopen the three libraries and call their hooks in a loop:
 *             produce into buffer A, passthrough A -> B (again while it
 *             says MORE_OUTPUT), consume B; until END_OF_DATA.
 *   emulator  the same topology through tusk_emulator_new/run (emulator.c
 *             linked in): actor_host's checked calls, per-call timing,
 *             frame counting for its summary, buffer queues and pools.
 *
 * Both time initialise + start + every buffer + stop (not loading or
 * registering), and both allocate their buffers in each run (the
 * emulator's pools are filled at a run's first buffer). glibc is told to
 * keep freed memory (no mmap for buffers, no trimming): otherwise each run
 * pays first-touch page faults on fresh buffers, a few ms on a VM, which
 * would measure the allocator rather than the emulator. The two alternate, `repeat` times per size; the figure is
 * each one's median. overhead = (emulator - direct) / direct.
 *
 * Needs TUSK_ACTOR_PATH (or --actor-path) to find bench_producer
 * (bench/.libs) and passthrough, null_consumer (actors/.libs).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../emulator/emulator.h"
#include "tusk/actor.h"
#include "tusk/actor_host.h"
#include "tusk/error.h"
#include "tusk/topology.h"
#include "base/clock.h"
#include "base/parse.h"

#define MAX_SIZES 16

/* The null_consumer summary line at process_stop goes to stderr: silence
 * it while timing (both ways print it, so it costs both the same). */
static int saved_stderr = -1;
static void quiet_stderr(bool on)
{
    fflush(stderr);
    if (on) {
        int null = open("/dev/null", O_WRONLY);
        saved_stderr = dup(STDERR_FILENO);
        if (null >= 0) {
            dup2(null, STDERR_FILENO);
            close(null);
        }
    } else if (saved_stderr >= 0) {
        dup2(saved_stderr, STDERR_FILENO);
        close(saved_stderr);
        saved_stderr = -1;
    }
}

static char *topology_xml(uint32_t size, uint64_t buffers)
{
    char *xml = malloc(2048);
    if (!xml)
        return NULL;
    uint32_t frame = size < 65536 ? size : 65536;
    snprintf(xml, 2048,
             "<configuration>\n"
             " <producer><name>source</name><binary_code>bench_producer</binary_code><size>%u</size>\n"
             "  <parameter name=\"count\">%llu</parameter><parameter name=\"frame\">%u</parameter></producer>\n"
             " <intermediary><name>copy</name><binary_code>passthrough</binary_code>\n"
             "  <data_source>source</data_source><size>%u</size></intermediary>\n"
             " <consumer><name>sink</name><binary_code>null_consumer</binary_code>\n"
             "  <data_source>copy</data_source></consumer>\n"
             "</configuration>\n",
             (unsigned)size, (unsigned long long)buffers, (unsigned)frame, (unsigned)size);
    return xml;
}

/* ---- direct calls ------------------------------------------------------------ */

typedef struct direct_actor {
    void *dl;
    void *inst;
    tusk_process_config_fn config;
    tusk_process_register_dir_fn register_dir;
    tusk_process_hook_fn initialise, start, stop, unload;
    tusk_process_block_producer_fn produce;
    tusk_process_block_filter_fn filter;
    tusk_process_block_consumer_fn consume;
    char dir[4096];
} direct_actor_t;

#define RESOLVE(a, field, name)                                                  \
    do {                                                                         \
        void *sym_ = dlsym((a)->dl, (name));                                     \
        memcpy(&(a)->field, &sym_, sizeof(a)->field);                            \
    } while (0)

static bool direct_open(direct_actor_t *a, const tusk_actor_spec_t *spec, const char *work)
{
    memset(a, 0, sizeof *a);
    a->dl = dlopen(spec->library_path, RTLD_NOW | RTLD_LOCAL);
    if (!a->dl) {
        fprintf(stderr, "emulator_overhead: %s\n", dlerror());
        return false;
    }
    RESOLVE(a, config, "process_config");
    RESOLVE(a, register_dir, "process_register_dir");
    RESOLVE(a, initialise, "process_initialise");
    RESOLVE(a, start, "process_start");
    RESOLVE(a, stop, "process_stop");
    RESOLVE(a, unload, "process_unload");
    if (spec->actor_class == TUSK_PRODUCER)
        RESOLVE(a, produce, "process_block");
    else if (spec->actor_class == TUSK_FILTER)
        RESOLVE(a, filter, "process_block");
    else
        RESOLVE(a, consume, "process_block");
    if (!a->config || !a->register_dir || !a->initialise || (!a->produce && !a->filter && !a->consume)) {
        fprintf(stderr, "emulator_overhead: %s: a required hook is missing\n", spec->library_path);
        return false;
    }
    int len = snprintf(a->dir, sizeof a->dir, "%s/%s.direct", work, spec->name);
    if (len < 0 || (size_t)len >= sizeof a->dir) {
        fprintf(stderr, "emulator_overhead: %s: the folder name is too long\n", work);
        return false;
    }
    tusk_error_t err;
    if (tusk_actor_write_config(a->dir, spec, 0, &err) != TUSK_OK) {
        fprintf(stderr, "emulator_overhead: %s\n", err.message);
        return false;
    }
    unsigned ec = 0;
    char msg[512] = "";
    a->config(a->dir, &ec);
    if (ec == TUSK_ACTOR_OK)
        a->inst = a->register_dir(a->dir, msg, sizeof msg, &ec);
    if (ec != TUSK_ACTOR_OK || !a->inst) {
        fprintf(stderr, "emulator_overhead: %s: registration failed (%u): %s\n", spec->name, ec, msg);
        return false;
    }
    return true;
}

static void direct_close(direct_actor_t *a)
{
    unsigned ec;
    if (a->inst && a->unload)
        a->unload(a->inst, &ec);
    a->inst = NULL;
    if (a->dir[0]) {
        char file[4200];
        snprintf(file, sizeof file, "%s/parameters.conf", a->dir);
        unlink(file);
        rmdir(a->dir);
    }
    if (a->dl)
        dlclose(a->dl);
    a->dl = NULL;
}

#define CALL_HOOK(a, hook)                                                       \
    do {                                                                         \
        unsigned ec_ = 0;                                                        \
        if ((a)->hook)                                                           \
            (a)->hook((a)->inst, &ec_);                                          \
        if (ec_ != TUSK_ACTOR_OK)                                                \
            return -1;                                                           \
    } while (0)

/* The direct chain over buffers A and B: initialise, start, every buffer,
 * stop. 0, or -1 on a failure. */
static int64_t direct_loop(direct_actor_t *p, direct_actor_t *f, direct_actor_t *c, uint8_t *a_buf, uint8_t *b_buf,
                           uint32_t size, uint64_t *buffers)
{
    CALL_HOOK(p, initialise);
    CALL_HOOK(f, initialise);
    CALL_HOOK(c, initialise);
    CALL_HOOK(c, start);
    CALL_HOOK(f, start);
    CALL_HOOK(p, start);
    *buffers = 0;
    unsigned ec;
    do {
        unsigned used = 0;
        p->produce(p->inst, a_buf, size, &used, &ec);
        if (ec != TUSK_ACTOR_OK && ec != TUSK_ACTOR_END_OF_DATA)
            return -1;
        bool end = ec == TUSK_ACTOR_END_OF_DATA;
        if (used) {
            (*buffers)++;
            unsigned fec, out = 0;
            do {
                f->filter(f->inst, a_buf, used, b_buf, size, &out, &fec);
                if (fec != TUSK_ACTOR_OK && fec != TUSK_ACTOR_MORE_OUTPUT)
                    return -1;
                if (out) {
                    unsigned cec;
                    c->consume(c->inst, b_buf, out, &cec);
                    if (cec != TUSK_ACTOR_OK)
                        return -1;
                }
            } while (fec == TUSK_ACTOR_MORE_OUTPUT);
        }
        if (end)
            break;
    } while (true);
    CALL_HOOK(p, stop);
    CALL_HOOK(f, stop);
    CALL_HOOK(c, stop);
    return 0;
}

/* One timed run of the direct chain; ns, or -1 on a failure. Its two
 * buffers are allocated inside the timing, as the emulator's pools fill at
 * the first buffer of each run (main() keeps freed memory in the heap, so
 * neither pays fresh page faults after the first run). */
static int64_t direct_run(direct_actor_t *p, direct_actor_t *f, direct_actor_t *c, uint32_t size, uint64_t *buffers)
{
    uint64_t t0 = tusk_clock_ns();
    uint8_t *a_buf = malloc(size), *b_buf = malloc(size);
    int64_t ns = a_buf && b_buf ? direct_loop(p, f, c, a_buf, b_buf, size, buffers) : -1;
    free(a_buf);
    free(b_buf);
    return ns < 0 ? -1 : (int64_t)(tusk_clock_ns() - t0);
}

/* ---- through the emulator ----------------------------------------------------- */

static int64_t emulator_run(const tusk_topology_t *topo, uint64_t *buffers)
{
    /* Its own temporary configuration folders, made and removed outside the timing. */
    tusk_emulator_options_t opt = {0};
    tusk_emulator_t *em = NULL;
    tusk_error_t err;
    if (tusk_emulator_new(&em, topo, &opt, &err) != TUSK_OK) {
        quiet_stderr(false);
        fprintf(stderr, "emulator_overhead: %s\n", err.message);
        return -1;
    }
    uint64_t t0 = tusk_clock_ns();
    int rc = tusk_emulator_run(em, &err);
    int64_t ns = (int64_t)(tusk_clock_ns() - t0);
    *buffers = tusk_emulator_totals(em).consumer_buffers;
    if (rc != TUSK_OK) {
        quiet_stderr(false);
        fprintf(stderr, "emulator_overhead: %s\n", err.message);
    }
    tusk_emulator_destroy(&em, NULL);
    return rc == TUSK_OK ? ns : -1;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static int64_t median(int64_t *v, unsigned n)
{
    qsort(v, n, sizeof *v, cmp_i64);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: emulator_overhead [OPTIONS]\n"
            "\n"
            "Times bench_producer -> passthrough -> null_consumer called directly and\n"
            "through the emulator; prints ns per buffer and the emulator's overhead.\n"
            "\n"
            "  --sizes LIST        buffer sizes in bytes, comma-separated\n"
            "                      (default 4096,65536,1048576)\n"
            "  --bytes N           bytes per timed run; buffers = N / size (default 1 GiB)\n"
            "  --repeat R          timed runs of each kind per size (default 5)\n"
            "  --actor-path PATH   actor library folders (default $TUSK_ACTOR_PATH)\n"
            "  --kv                key=value lines instead of a markdown table\n");
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"sizes", required_argument, NULL, 's'}, {"bytes", required_argument, NULL, 'b'},
        {"repeat", required_argument, NULL, 'r'}, {"actor-path", required_argument, NULL, 'p'},
        {"kv", no_argument, NULL, 'k'},          {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    uint32_t sizes[MAX_SIZES] = {4096, 65536, 1048576};
    unsigned n_sizes = 3, repeat = 5;
    uint64_t total = 1ull << 30;
    const char *actor_path = NULL;
    bool kv = false;
    int c;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        char *end = NULL;
        switch (c) {
        case 's': {
            n_sizes = 0;
            const char *s = optarg;
            while (*s && n_sizes < MAX_SIZES) {
                unsigned long v = strtoul(s, &end, 10);
                if (end == s || v < 64 || v > (1ul << 30)) {
                    fprintf(stderr, "emulator_overhead: --sizes '%s': sizes of 64 B to 1 GiB\n", optarg);
                    return 2;
                }
                sizes[n_sizes++] = (uint32_t)v;
                s = *end == ',' ? end + 1 : end;
                if (*end && *end != ',') {
                    fprintf(stderr, "emulator_overhead: --sizes '%s': comma-separated numbers\n", optarg);
                    return 2;
                }
            }
            break;
        }
        case 'b':
            if (!tusk_cli_u64("emulator_overhead", "--bytes", optarg, 1, UINT64_MAX, &total))
                return 2;
            break;
        case 'r':
            if (!tusk_cli_unsigned("emulator_overhead", "--repeat", optarg, 1, 1000, &repeat))
                return 2;
            break;
        case 'p': actor_path = optarg; break;
        case 'k': kv = true; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind != argc || n_sizes == 0 || repeat == 0 || repeat > 1000 || total == 0) {
        usage(stderr);
        return 2;
    }
    /* Buffers up to 32 MiB from the heap, and the heap never trimmed. */
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    const char *tmp = getenv("TMPDIR");
    char work[4096];
    snprintf(work, sizeof work, "%s/emulator_overhead.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(work)) {
        perror("emulator_overhead: mkdtemp");
        return 1;
    }

    /* What one clock read costs here: the emulator makes two per hook call. */
    enum { CLOCK_READS = 1000000 };
    uint64_t t0 = tusk_clock_ns(), sink = 0;
    for (int i = 0; i < CLOCK_READS; i++)
        sink += tusk_clock_ns();
    double clock_ns = (double)(tusk_clock_ns() - t0) / CLOCK_READS;
    (void)sink;

    if (kv)
        printf("clock_gettime_ns=%.1f\n", clock_ns);
    else
        printf("clock_gettime(CLOCK_MONOTONIC): %.1f ns per call\n\n"
               "| buffer | buffers per run | direct, ns/buffer | emulator, ns/buffer | overhead |\n"
               "| ---: | ---: | ---: | ---: | ---: |\n",
               clock_ns);
    int status = 0;
    for (unsigned si = 0; si < n_sizes && status == 0; si++) {
        uint32_t size = sizes[si];
        uint64_t buffers = total / size ? total / size : 1;
        char *xml = topology_xml(size, buffers);
        tusk_topology_t *topo = NULL;
        tusk_error_t err;
        if (!xml || tusk_topology_parse(&topo, xml, strlen(xml), "(emulator_overhead)", &err) != TUSK_OK ||
            tusk_topology_resolve(topo, actor_path, &err) != TUSK_OK) {
            fprintf(stderr, "emulator_overhead: %s\n", xml ? err.message : "out of memory");
            free(xml);
            tusk_topology_destroy(&topo);
            status = 1;
            break;
        }
        free(xml);
        direct_actor_t acts[3];
        memset(acts, 0, sizeof acts);
        bool ok = true;
        for (unsigned i = 0; i < 3 && ok; i++)
            ok = direct_open(&acts[i], tusk_topology_actor(topo, i), work);
        int64_t *td = calloc(repeat, sizeof *td), *te = calloc(repeat, sizeof *te);
        ok = ok && td && te;
        uint64_t nd = 0, ne = 0;
        /* One untimed run of each first (page faults, caches), then alternate. */
        for (unsigned r = 0; r <= repeat && ok; r++) {
            quiet_stderr(true);
            int64_t d = direct_run(&acts[0], &acts[1], &acts[2], size, &nd);
            int64_t e = d < 0 ? -1 : emulator_run(topo, &ne);
            quiet_stderr(false);
            if (d < 0 || e < 0 || nd != buffers || ne != buffers) {
                fprintf(stderr, "emulator_overhead: size %u: a run failed (direct %llu, emulator %llu buffers)\n",
                        (unsigned)size, (unsigned long long)nd, (unsigned long long)ne);
                ok = false;
                break;
            }
            if (r > 0) {
                td[r - 1] = d;
                te[r - 1] = e;
            }
        }
        if (ok) {
            double dn = (double)median(td, repeat) / (double)buffers, en = (double)median(te, repeat) / (double)buffers;
            double over = 100.0 * (en - dn) / dn;
            if (kv)
                printf("size=%u buffers=%llu repeat=%u direct_ns_per_buffer=%.1f emulator_ns_per_buffer=%.1f "
                       "overhead_pct=%.1f\n",
                       (unsigned)size, (unsigned long long)buffers, repeat, dn, en, over);
            else
                printf("| %u B | %llu | %.0f | %.0f | %+.1f %% |\n", (unsigned)size, (unsigned long long)buffers, dn,
                       en, over);
            fflush(stdout);
        } else {
            status = 1;
        }
        for (unsigned i = 0; i < 3; i++)
            direct_close(&acts[i]);
        free(td);
        free(te);
        tusk_topology_destroy(&topo);
    }
    rmdir(work);
    return status;
}
