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
#include "tusk/adf_reader.h"

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
                 "  -q, --quiet      no line per sample\n"
                 "  --help, --version\n"
                 "\n"
                 "Exit status: 0 the samples came and are well formed; 1 no connection, a\n"
                 "write error; 2 bad usage; 3 a malformed sample.\n");
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

int main(int argc, char **argv)
{
    static const struct option longopts[] = {{"count", required_argument, NULL, 'c'},
                                             {"out", required_argument, NULL, 'o'},
                                             {"run-dir", required_argument, NULL, 'd'},
                                             {"quiet", no_argument, NULL, 'q'},
                                             {"stay", no_argument, NULL, 's'},
                                             {"help", no_argument, NULL, 'h'},
                                             {"version", no_argument, NULL, 'V'},
                                             {NULL, 0, NULL, 0}};
    unsigned count = 0;
    const char *out_path = NULL, *run_dir = NULL;
    bool quiet = false, stay = false;
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
        case 'h': help(stdout); return TUSK_EXIT_OK;
        case 'V': printf(PROG " (tusk) %s\n", PACKAGE_VERSION); return TUSK_EXIT_OK;
        default: help(stderr); return TUSK_EXIT_USAGE;
        }
    }
    if (optind + 1 != argc) {
        fprintf(stderr, PROG ": one ADDRESS (" PROG " --help says more)\n");
        return TUSK_EXIT_USAGE;
    }
    const char *address = argv[optind];
    tusk_error_t err;
    char dir[4096];
    if (!run_dir) {
        fprintf(stderr, PROG ": --run-dir: the run folder, for its keys\n");
        return TUSK_EXIT_USAGE;
    }
    snprintf(dir, sizeof dir, "%s", run_dir);
    tusk_secrets_t secrets;
    if (tusk_private_folder(dir, false, &err) != TUSK_OK || load_secrets(dir, &secrets, &err) != TUSK_OK) {
        fprintf(stderr, PROG ": %s\n", err.message);
        return TUSK_EXIT_FAIL;
    }
    FILE *out = NULL;
    if (out_path && !(out = fopen(out_path, "wb"))) {
        fprintf(stderr, PROG ": cannot write %s: %s\n", out_path, strerror(errno));
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
    zmq_socket_monitor(sub, mon_ep, ZMQ_EVENT_HANDSHAKE_SUCCEEDED);
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
        zmq_msg_t ev;
        zmq_msg_init(&ev);
        int got = zmq_msg_recv(&ev, mon, 0);
        bool more = got >= 0 && zmq_msg_more(&ev);
        zmq_msg_close(&ev);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            status = TUSK_EXIT_FAIL;
            break;
        }
        while (more) { /* the event's second frame: the address */
            zmq_msg_init(&ev);
            more = zmq_msg_recv(&ev, mon, 0) >= 0 && zmq_msg_more(&ev);
            zmq_msg_close(&ev);
        }
        printf("tusk-tap: connected to %s\n", address);
        fflush(stdout);
        break;
    }
    adf_reader_t *reader = adf_reader_new(ADF_ON_ERROR_STOP);
    uint64_t samples = 0, bytes = 0, frames = 0, malformed = 0, first = 0, last = 0, between = 0;
    while (status == TUSK_EXIT_OK && !stop_signals && (!count || samples < count)) {
        zmq_msg_t head, body;
        zmq_msg_init(&head);
        zmq_msg_init(&body);
        if (zmq_msg_recv(&head, sub, 0) < 0) {
            zmq_msg_close(&head);
            zmq_msg_close(&body);
            if (errno == EINTR)
                continue;
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
            if (!quiet)
                printf("sample: run %u buffer %llu, %zu bytes, %llu frames\n", h.run, (unsigned long long)h.seq,
                       zmq_msg_size(&body), (unsigned long long)n);
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
