/* tap_main.c - tusk-tap: a monitoring consumer on a sampling tap (tap.h).
 *
 *   tusk-tap [--count N] [--out FILE] [--run-dir DIR] ADDRESS
 *
 * Connects to the tap at ADDRESS (what `tusk-run --tap UP[K]->DOWN[K]`,
 * or the status page, said), authenticated with the run's keys
 * (RUN_FOLDER/keys: the run's owner only), and takes samples until N have
 * come (default: until SIGINT/SIGTERM). Each sample's wire header is
 * decoded and its ADF framing checked (a malformed buffer is said, named
 * by its number on the link, and counted: exit status 3); with --out the
 * buffers are written one after the other into FILE, an ADF file that any
 * consumer reads (tusk-emulate with a file producer, tusk-adf stats). At
 * the end: samples, bytes, frames, the first and last buffer numbers, and
 * how many numbers lie between the samples (the chain's buffers the tap
 * did not take: dropped by the sender, or sent before the tap came).
 *
 * --consumer LIBRARY [--set KEY=VALUE]... runs a consumer actor on the
 * samples, hosted as tusk-emulate and tusk-actor host theirs: its library
 * looked up as a topology's <binary_code> is, its parameters written into
 * its configuration folder (the one-stage topology of emulator.h), the
 * actor host's hooks (tusk/actor_host.h) and the one driver
 * (runtime/driver.h) giving it each well-formed sample (process_block).
 * process_initialise and process_start come before the first sample; a
 * sample of a new run of the chain ends the consumer's run
 * (process_stop) and begins the next from the start (process_reset,
 * process_initialise, process_start): one report a run; at the end
 * (--count reached, SIGINT/SIGTERM, or the tap closed: `untap`, the
 * controller gone) process_stop and process_unload. What the actor
 * writes goes where it writes it in a chain (its `out` folder, ...).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "base/exit.h"
#include "config.h"
#include "base/parse.h"
#include "runtime/wire.h"
#include "security.h"
#include "emulator/emulator.h"
#include "runtime/driver.h"
#include "tusk/actor_host.h"
#include "tusk/adf_reader.h"
#include "tusk/params.h"
#include "tusk/topology.h"

#define PROG "tusk-tap"

static volatile sig_atomic_t stop_signals;

static void on_signal(int sig)
{
    (void)sig;
    stop_signals++;
}

static void help(FILE *out)
{
    fprintf(out, "Usage: " PROG " [OPTION]... ADDRESS\n"
                 "Take samples of a link of a running chain from its sampling tap (tusk-run --tap).\n"
                 "\n"
                 "  --count N        stop after N samples (default: at SIGINT/SIGTERM)\n"
                 "  --out FILE       write the sampled buffers into FILE (an ADF file)\n"
                 "  --run-dir DIR    the run folder, for the run's keys (default: your only run)\n"
                 "  --stay           after the --count samples, stay connected without taking\n"
                 "                   more until SIGINT/SIGTERM (a monitor that fell behind:\n"
                 "                   the tap drops and counts what it cannot queue)\n"
                 "  --consumer LIBRARY\n"
                 "                   run this consumer actor on the samples (a library name, looked\n"
                 "                   up as a topology's <binary_code>, or a path): process_block for\n"
                 "                   every well-formed sample; when a new run of the chain begins,\n"
                 "                   process_stop, then process_reset, process_initialise and\n"
                 "                   process_start (one report a run); at the end process_stop and\n"
                 "                   process_unload. It writes what it writes in a chain, where it\n"
                 "                   writes it (its out folder, ...)\n"
                 "  --set KEY=VALUE  a parameter of the --consumer (repeatable)\n"
                 "  --actor-path PATH\n"
                 "                   folders searched for the --consumer's library, ':'-separated\n"
                 "                   (default $TUSK_ACTOR_PATH, then the installed folder)\n"
                 "  -q, --quiet      no line per sample\n"
                 "  --help, --version\n"
                 "\n"
                 "It ends after --count samples, at SIGINT/SIGTERM, or when the tap closes\n"
                 "(tusk-run --untap, the controller gone), after the samples that came.\n"
                 "\n"
                 "Exit status: 0 the samples came and are well formed; 1 no connection, a\n"
                 "write error, the --consumer failed; 2 bad usage, a --consumer that cannot\n"
                 "be loaded; 3 a malformed sample (not given to the --consumer).\n");
}

/* The run's secrets, from RUN_FOLDER/keys (private). */
static int load_secrets(const char *dir, tusk_secrets_t *secrets, tusk_error_t *err)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/keys", dir);
    char *text = NULL;
    size_t size = 0;
    int rc = tusk_read_private(path, TUSK_SECRETS_MAX, &text, &size, err);
    if (rc == TUSK_OK)
        rc = tusk_secrets_parse(text, size, secrets, err);
    if (text) {
        memset(text, 0, size);
        free(text);
    }
    return rc;
}

/* The next event of the socket monitor (its two frames read): its number,
 * or -1 with errno. */
static int monitor_event(void *mon)
{
    zmq_msg_t ev;
    zmq_msg_init(&ev);
    int got = zmq_msg_recv(&ev, mon, 0);
    int id = -1;
    if (got >= 0 && zmq_msg_size(&ev) >= 2) {
        uint16_t v; /* the event number, in the host's order (zmq_socket_monitor) */
        memcpy(&v, zmq_msg_data(&ev), sizeof v);
        id = v;
    }
    bool more = got >= 0 && zmq_msg_more(&ev);
    int saved = errno;
    zmq_msg_close(&ev);
    while (more) { /* the event's second frame: the address */
        zmq_msg_init(&ev);
        more = zmq_msg_recv(&ev, mon, 0) >= 0 && zmq_msg_more(&ev);
        zmq_msg_close(&ev);
    }
    errno = saved;
    return got < 0 ? -1 : id;
}

/* ---- --consumer: one consumer actor on the samples --------------------------- */

typedef struct consumer {
    tusk_topology_t *topo;
    tusk_actor_lib_t *lib;
    tusk_actor_t *actor;
    tusk_driver_t *drv;
    char host_dir[4096], inst_dir[4200];
    bool made, started, have_run;
    unsigned run;  /* the chain's run its samples are of */
    uint64_t runs; /* runs begun (process_start) */
} consumer_t;

#define CONSUMER_NAME "tap"

/* A consumer writes no buffers: the driver never asks it to. */
static void *no_take(void *ctx, uint8_t **data, tusk_error_t *err)
{
    (void)ctx;
    *data = NULL;
    tusk_error_set(err, TUSK_EINVAL, "a consumer writes no buffers");
    return NULL;
}

static void no_give_back(void *ctx, void *buffer)
{
    (void)ctx;
    (void)buffer;
}

static int no_emit(void *ctx, void *buffer, uint32_t size, uint64_t frames, unsigned flags, tusk_error_t *err)
{
    (void)ctx, (void)buffer, (void)size, (void)frames, (void)flags;
    return tusk_error_set(err, TUSK_EINVAL, "a consumer writes no buffers");
}

/* Load LIBRARY with `params` and begin its first run (process_config,
 * process_register, process_initialise, process_start). */
static int consumer_open(consumer_t *c, const char *library, const tusk_params_t *params, const char *actor_path,
                         const char *address, tusk_error_t *err)
{
    enum { MAX_PARAMS = 256 };
    const char *keys[MAX_PARAMS], *values[MAX_PARAMS];
    size_t n = tusk_params_count(params);
    if (n > MAX_PARAMS)
        return tusk_error_set(err, TUSK_EINVAL, "--consumer: more than %d --set", MAX_PARAMS);
    for (size_t i = 0; i < n; i++)
        keys[i] = tusk_params_key(params, i), values[i] = tusk_params_value(params, i);
    /* Its input is the tap, not the stage's file: the topology is only
     * read for the consumer's library and parameters. */
    const tusk_emulator_stage_t stage = {.name = CONSUMER_NAME,
                                         .library = library,
                                         .actor_class = TUSK_CONSUMER,
                                         .instances = 1,
                                         .in_size = 65536,
                                         .n_params = (unsigned)n,
                                         .keys = keys,
                                         .values = values};
    char *xml = NULL;
    int rc = tusk_emulator_stage_topology(&stage, address, NULL, &xml, err);
    if (rc == TUSK_OK)
        rc = tusk_topology_parse(&c->topo, xml, strlen(xml), "(tusk-tap --consumer)", err);
    free(xml);
    if (rc == TUSK_OK)
        rc = tusk_topology_resolve(c->topo, actor_path, err);
    if (rc != TUSK_OK)
        return rc;
    int idx = tusk_topology_find(c->topo, CONSUMER_NAME);
    const tusk_actor_spec_t *spec = idx < 0 ? NULL : tusk_topology_actor(c->topo, (unsigned)idx);
    if (!spec)
        return tusk_error_set(err, TUSK_EINVAL, "--consumer: no consumer in its topology");
    const char *tmp = getenv("TMPDIR");
    snprintf(c->host_dir, sizeof c->host_dir, "%s/tusk-tap-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(c->host_dir)) {
        rc = tusk_error_set(err, TUSK_EIO, "--consumer: cannot make %s: %s", c->host_dir, strerror(errno));
        c->host_dir[0] = '\0';
        return rc;
    }
    snprintf(c->inst_dir, sizeof c->inst_dir, "%s/" CONSUMER_NAME ".0", c->host_dir);
    const char *dir = NULL;
    rc = tusk_actor_config_folder(spec, 0, c->inst_dir, &dir, &c->made, err);
    if (rc == TUSK_OK)
        rc = tusk_actor_lib_open(&c->lib, spec->library_path, TUSK_CONSUMER, err);
    if (rc == TUSK_OK)
        rc = tusk_actor_new(&c->actor, c->lib, spec->name, 0, dir, err);
    const tusk_driver_host_t host = {.ctx = c, .take = no_take, .give_back = no_give_back, .emit = no_emit};
    if (rc == TUSK_OK)
        rc = tusk_driver_new(&c->drv, &host, 0, err);
    if (rc == TUSK_OK)
        rc = tusk_actor_initialise(c->actor, err);
    if (rc == TUSK_OK && (rc = tusk_actor_start(c->actor, err)) == TUSK_OK) {
        c->started = true;
        c->runs = 1;
    }
    return rc;
}

/* One sample of run `run` of the chain: a new run of the chain is a new
 * run of the consumer, from its beginning (process_stop, process_reset,
 * process_initialise, process_start: each run its own report). */
static int consumer_block(consumer_t *c, unsigned run, void *data, uint32_t size, uint64_t frames, tusk_error_t *err)
{
    if (c->have_run && run != c->run) {
        c->started = false;
        int rc = tusk_actor_stop(c->actor, err);
        if (rc == TUSK_OK)
            rc = tusk_actor_reset(c->actor, err);
        if (rc == TUSK_OK)
            rc = tusk_actor_initialise(c->actor, err);
        if (rc == TUSK_OK)
            rc = tusk_actor_start(c->actor, err);
        if (rc != TUSK_OK)
            return rc;
        c->started = true;
        c->runs++;
    }
    c->run = run;
    c->have_run = true;
    return tusk_driver_consume(c->drv, c->actor, data, size, frames, err);
}

/* process_stop (when its run is going), process_unload, the library
 * closed, the configuration folder made for it removed. The first
 * failure is returned. */
static int consumer_close(consumer_t *c, tusk_error_t *err)
{
    int first = TUSK_OK;
    tusk_error_t e;
    if (c->started && (first = tusk_actor_stop(c->actor, &e)) != TUSK_OK)
        *err = e;
    c->started = false;
    if (c->actor) {
        int rc = tusk_actor_destroy(&c->actor, &e);
        if (rc != TUSK_OK && first == TUSK_OK) {
            first = rc;
            *err = e;
        }
    }
    tusk_driver_destroy(&c->drv);
    tusk_actor_lib_close(&c->lib);
    if (c->made) {
        char file[4300];
        snprintf(file, sizeof file, "%s/parameters.conf", c->inst_dir);
        unlink(file);
        rmdir(c->inst_dir);
    }
    if (c->host_dir[0] && rmdir(c->host_dir) != 0)
        fprintf(stderr, PROG ": kept %s: %s (the consumer left files in its configuration folder)\n", c->host_dir,
                strerror(errno));
    tusk_topology_destroy(&c->topo);
    return first;
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {{"count", required_argument, NULL, 'c'},
                                             {"out", required_argument, NULL, 'o'},
                                             {"run-dir", required_argument, NULL, 'd'},
                                             {"quiet", no_argument, NULL, 'q'},
                                             {"stay", no_argument, NULL, 's'},
                                             {"consumer", required_argument, NULL, 'C'},
                                             {"set", required_argument, NULL, 'S'},
                                             {"actor-path", required_argument, NULL, 'P'},
                                             {"help", no_argument, NULL, 'h'},
                                             {"version", no_argument, NULL, 'V'},
                                             {NULL, 0, NULL, 0}};
    unsigned count = 0;
    const char *out_path = NULL, *run_dir = NULL, *library = NULL, *actor_path = NULL;
    bool quiet = false, stay = false;
    tusk_params_t *params = tusk_params_new();
    if (!params) {
        fprintf(stderr, PROG ": out of memory\n");
        return TUSK_EXIT_FAIL;
    }
    int c;
    while ((c = getopt_long(argc, argv, "q", longopts, NULL)) != -1) {
        switch (c) {
        case 'c': {
            uint64_t v;
            if (tusk_parse_u64(optarg, 1, UINT32_MAX, &v) != 0) {
                fprintf(stderr, PROG ": --count '%s': a whole number from 1\n", optarg);
                return TUSK_EXIT_USAGE;
            }
            count = (unsigned)v;
            break;
        }
        case 'o': out_path = optarg; break;
        case 'd': run_dir = optarg; break;
        case 'q': quiet = true; break;
        case 's': stay = true; break;
        case 'C': library = optarg; break;
        case 'S':
            if (!tusk_cli_set(PROG, params, optarg)) {
                tusk_params_destroy(&params);
                return TUSK_EXIT_USAGE;
            }
            break;
        case 'P': actor_path = optarg; break;
        case 'h': help(stdout); tusk_params_destroy(&params); return TUSK_EXIT_OK;
        case 'V': printf(PROG " (tusk) %s\n", PACKAGE_VERSION); tusk_params_destroy(&params); return TUSK_EXIT_OK;
        default: help(stderr); tusk_params_destroy(&params); return TUSK_EXIT_USAGE;
        }
    }
    if (optind + 1 != argc || (!library && tusk_params_count(params))) {
        fprintf(stderr, PROG ": %s (" PROG " --help says more)\n",
                optind + 1 != argc ? "one ADDRESS" : "--set without --consumer");
        tusk_params_destroy(&params);
        return TUSK_EXIT_USAGE;
    }
    const char *address = argv[optind];
    tusk_error_t err;
    char dir[4096];
    if (!run_dir) {
        fprintf(stderr, PROG ": --run-dir: the run folder, for its keys\n");
        tusk_params_destroy(&params);
        return TUSK_EXIT_USAGE;
    }
    snprintf(dir, sizeof dir, "%s", run_dir);
    tusk_secrets_t secrets;
    if (tusk_private_folder(dir, false, &err) != TUSK_OK || load_secrets(dir, &secrets, &err) != TUSK_OK) {
        fprintf(stderr, PROG ": %s\n", err.message);
        tusk_params_destroy(&params);
        return TUSK_EXIT_FAIL;
    }
    /* The consumer, loaded and its run begun before any sample comes. */
    consumer_t consumer = {0}, *cons = NULL;
    if (library) {
        cons = &consumer;
        int crc = consumer_open(cons, library, params, actor_path, address, &err);
        if (crc != TUSK_OK) {
            fprintf(stderr, PROG ": --consumer %s: %s\n", library, err.message);
            consumer_close(cons, &err);
            tusk_params_destroy(&params);
            memset(&secrets, 0, sizeof secrets);
            return crc == TUSK_EACTOR ? TUSK_EXIT_FAIL : TUSK_EXIT_USAGE;
        }
    }
    tusk_params_destroy(&params);
    FILE *out = NULL;
    if (out_path && !(out = fopen(out_path, "wb"))) {
        fprintf(stderr, PROG ": cannot write %s: %s\n", out_path, strerror(errno));
        if (cons)
            consumer_close(cons, &err);
        memset(&secrets, 0, sizeof secrets);
        return TUSK_EXIT_FAIL;
    }
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    void *ctx = zmq_ctx_new(), *sub = zmq_socket(ctx, ZMQ_SUB);
    tusk_sec_t *sec = NULL;
    int linger = 0;
    zmq_setsockopt(sub, ZMQ_LINGER, &linger, sizeof linger);
    zmq_setsockopt(sub, ZMQ_SUBSCRIBE, "", 0);
    /* A small queue here too: what the monitor does not take waits in the
     * tap's queue, and beyond it is dropped there, and counted. */
    int rcvhwm = 4;
    zmq_setsockopt(sub, ZMQ_RCVHWM, &rcvhwm, sizeof rcvhwm);
    char mon_ep[64];
    snprintf(mon_ep, sizeof mon_ep, "inproc://tusk-tap-monitor");
    zmq_socket_monitor(sub, mon_ep, ZMQ_EVENT_HANDSHAKE_SUCCEEDED | ZMQ_EVENT_DISCONNECTED);
    void *mon = zmq_socket(ctx, ZMQ_PAIR);
    zmq_connect(mon, mon_ep);
    int rc = tusk_sec_new(&sec, ctx, &secrets, PROG, &err);
    memset(&secrets, 0, sizeof secrets);
    if (rc == TUSK_OK)
        rc = tusk_sec_connect(sec, sub, address, NULL, &err);
    int status = TUSK_EXIT_OK;
    if (rc != TUSK_OK) {
        fprintf(stderr, PROG ": %s: %s\n", address, err.message);
        status = TUSK_EXIT_FAIL;
    }
    /* Say when the tap took us (the handshake went through): from then on
     * the sender offers it every buffer. */
    while (status == TUSK_EXIT_OK && !stop_signals) {
        int ev = monitor_event(mon);
        if (ev < 0 && errno == EINTR)
            continue;
        if (ev < 0) {
            status = TUSK_EXIT_FAIL;
            break;
        }
        if (ev != ZMQ_EVENT_HANDSHAKE_SUCCEEDED)
            continue; /* a connection that went before it was taken: ZeroMQ tries again */
        printf("tusk-tap: connected to %s\n", address);
        fflush(stdout);
        break;
    }
    adf_reader_t *reader = adf_reader_new(ADF_ON_ERROR_STOP);
    uint64_t samples = 0, bytes = 0, frames = 0, malformed = 0, first = 0, last = 0, between = 0;
    bool closed = false; /* the tap went: take what came, then end */
    while (status == TUSK_EXIT_OK && !stop_signals && (!count || samples < count)) {
        if (!closed) {
            zmq_pollitem_t items[2] = {{.socket = sub, .events = ZMQ_POLLIN}, {.socket = mon, .events = ZMQ_POLLIN}};
            if (zmq_poll(items, 2, -1) < 0) {
                if (errno == EINTR)
                    continue;
                fprintf(stderr, PROG ": %s\n", zmq_strerror(errno));
                status = TUSK_EXIT_FAIL;
                break;
            }
            if (items[1].revents & ZMQ_POLLIN) {
                if (monitor_event(mon) == ZMQ_EVENT_DISCONNECTED) {
                    closed = true;
                    printf("tusk-tap: the tap at %s closed (untap, or its controller ended)\n", address);
                    fflush(stdout);
                }
                continue;
            }
            if (!(items[0].revents & ZMQ_POLLIN))
                continue;
        }
        zmq_msg_t head, body;
        zmq_msg_init(&head);
        zmq_msg_init(&body);
        if (zmq_msg_recv(&head, sub, closed ? ZMQ_DONTWAIT : 0) < 0) {
            zmq_msg_close(&head);
            zmq_msg_close(&body);
            if (errno == EINTR)
                continue;
            if (closed && errno == EAGAIN)
                break; /* every sample that came is taken */
            fprintf(stderr, PROG ": %s\n", zmq_strerror(errno));
            status = TUSK_EXIT_FAIL;
            break;
        }
        bool two = zmq_msg_more(&head) && zmq_msg_recv(&body, sub, 0) >= 0 && !zmq_msg_more(&body);
        tusk_wire_header_t h;
        if (!two || tusk_wire_decode(zmq_msg_data(&head), zmq_msg_size(&head), &h, &err) != TUSK_OK ||
            h.payload_size != zmq_msg_size(&body)) {
            fprintf(stderr, PROG ": a message that is no sample (%s): dropped\n",
                    two ? "bad header or size" : "not two frames");
            malformed++;
        } else {
            samples++;
            if (samples == 1)
                first = h.seq;
            else if (h.seq > last + 1)
                between += h.seq - last - 1;
            last = h.seq;
            bytes += zmq_msg_size(&body);
            uint64_t n = adf_count_frames(reader, zmq_msg_data(&body), zmq_msg_size(&body));
            const adf_error_t *e = adf_reader_error(reader);
            if (e->code != ADF_OK) {
                malformed++;
                fprintf(stderr, PROG ": buffer %llu of run %u from %u.%u is malformed: %s at byte %llu\n",
                        (unsigned long long)h.seq, h.run, h.source_actor, h.source_instance, e->message,
                        (unsigned long long)e->offset);
            }
            frames += n;
            if (!quiet) {
                printf("sample: run %u buffer %llu, %zu bytes, %llu frames\n", h.run, (unsigned long long)h.seq,
                       zmq_msg_size(&body), (unsigned long long)n);
                fflush(stdout);
            }
            /* A malformed buffer is said and counted, and the consumer
             * does not get it: it would refuse it and stop. */
            if (cons && e->code == ADF_OK &&
                consumer_block(cons, h.run, zmq_msg_data(&body), (uint32_t)zmq_msg_size(&body), n, &err) != TUSK_OK) {
                fprintf(stderr, PROG ": %s\n", err.message);
                status = TUSK_EXIT_FAIL;
            }
            if (out && fwrite(zmq_msg_data(&body), 1, zmq_msg_size(&body), out) != zmq_msg_size(&body)) {
                fprintf(stderr, PROG ": cannot write %s: %s\n", out_path, strerror(errno));
                status = TUSK_EXIT_FAIL;
            }
        }
        zmq_msg_close(&head);
        zmq_msg_close(&body);
    }
    if (stay && status == TUSK_EXIT_OK) {
        printf("tusk-tap: %llu samples taken; staying connected, taking no more\n", (unsigned long long)samples);
        fflush(stdout);
        while (!stop_signals)
            nanosleep(&(struct timespec){.tv_nsec = 100000000}, NULL); /* a signal ends it at once */
    }
    printf("tusk-tap: %llu samples, %llu bytes, %llu frames, buffers %llu to %llu, %llu between them not taken, "
           "%llu malformed\n",
           (unsigned long long)samples, (unsigned long long)bytes, (unsigned long long)frames,
           (unsigned long long)first, (unsigned long long)last, (unsigned long long)between,
           (unsigned long long)malformed);
    if (cons) {
        const tusk_driver_stats_t *st = cons->drv ? tusk_driver_stats(cons->drv) : NULL;
        uint64_t runs = cons->runs;
        tusk_driver_stats_t given = st ? *st : (tusk_driver_stats_t){0};
        if (consumer_close(cons, &err) != TUSK_OK) {
            fprintf(stderr, PROG ": %s\n", err.message);
            status = TUSK_EXIT_FAIL;
        }
        printf("tusk-tap: consumer %s[0] (%s): %llu buffers, %llu frames, %llu bytes, %llu runs\n", CONSUMER_NAME,
               library, (unsigned long long)given.buffers_in, (unsigned long long)given.frames_in,
               (unsigned long long)given.bytes_in, (unsigned long long)runs);
    }
    if (out && fclose(out) != 0 && status == TUSK_EXIT_OK) {
        fprintf(stderr, PROG ": cannot write %s: %s\n", out_path, strerror(errno));
        status = TUSK_EXIT_FAIL;
    }
    if (status == TUSK_EXIT_OK && malformed)
        status = TUSK_EXIT_LOSS;
    adf_reader_destroy(&reader);
    zmq_socket_monitor(sub, NULL, 0);
    zmq_close(mon);
    zmq_close(sub);
    tusk_sec_destroy(&sec);
    zmq_ctx_term(ctx);
    return status;
}
