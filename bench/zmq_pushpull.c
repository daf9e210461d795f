/* zmq_pushpull.c - raw libzmq PUSH -> PULL throughput and latency, the
 * yardstick for tusk's distributed chain (bench only; not installed).
 *
 * Separate processes, like tusk's chain (one tusk-actor per instance):
 *
 *   2 processes:  sender PUSH --> PULL receiver
 *   3 processes:  sender PUSH --> PULL relay PUSH --> PULL receiver  (--relay)
 *
 * Receivers bind, senders connect, as in tusk. PUSH sockets get ZMQ_IMMEDIATE
 * and both ends the same high-water mark, as tusk sets them. The sender
 * sends `count` messages of `size` bytes, each one zero-copy
 * (zmq_msg_init_data) by default, or copied by zmq_send (--copy).
 *
 * Options that bring the raw chain closer to what tusk does, for
 * attributing a difference:
 *   --fill        the sender copies its buffer image into a pooled buffer for
 *                 each message (what bench_producer fill=full costs)
 *   --relay-copy  the relay copies each payload into a new pooled buffer
 *                 (what passthrough's frame copy costs) instead of
 *                 forwarding the received message untouched
 *   --header      each message is two frames, a 48-byte header then the
 *                 payload (tusk's wire format)
 *   --curve       every link authenticated and encrypted with CURVE, as
 *                 tusk-run's tcp links are by default (one key pair made
 *                 here; the receiving side is the CURVE server)
 *
 * Timing: from the sender's clock just before its first send (after the
 * connection is up) to the receiver's clock after its last message, both
 * CLOCK_MONOTONIC on this host. bytes/s = count * size / that time. The
 * "steady" figure is from the first to the last message at the receiver.
 *
 * Latency (--rate R): R messages per second, each stamped with the
 * sender's clock just before its send; the receiver records now - stamp.
 * The first --skip messages are left out.
 *
 * Output: one human line; with --kv one `key=value` line for scripts.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "bufpool.h"
#include "base/clock.h"
#include "base/parse.h"

#define HEADER_BYTES 48
#define STAMP_BYTES 16

typedef struct options {
    char ep_in[512];   /* the first hop: the relay's input (3 proc) or the receiver's */
    char ep_out[512];  /* 3 processes: the receiver's input */
    size_t size;
    uint64_t count;
    int hwm;
    bool relay, copy, fill, relay_copy, header, kv, curve;
    char public_key[41], secret_key[41]; /* --curve */
    uint64_t rate, skip;
    unsigned timeout_s;
} options_t;

/* What the children tell the parent, through pipes. */
typedef struct sender_result {
    int ok;
    uint64_t t0_ns;
} sender_result_t;

typedef struct receiver_result {
    int ok;
    uint64_t t_first_ns, t_last_ns, messages, bytes;
    uint64_t samples, lat_min, lat_median, lat_p90, lat_p99, lat_max;
    double lat_mean;
} receiver_result_t;

/* Closed by the parent once the receiver has reported: the sender and the
 * relay keep their sockets open until then, so no teardown can race the
 * last messages. */
static int done_read = -1, done_write = -1;

static void wait_done(void)
{
    char c;
    while (read(done_read, &c, 1) < 0 && errno == EINTR)
        ;
}

static void die(const char *who, const char *what)
{
    fprintf(stderr, "zmq_pushpull %s: %s: %s\n", who, what, zmq_strerror(errno));
    _exit(1);
}

static bool write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        ssize_t w = write(fd, c, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        c += w;
        n -= (size_t)w;
    }
    return true;
}

static bool read_all(int fd, void *p, size_t n)
{
    char *c = p;
    while (n) {
        ssize_t r = read(fd, c, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return false;
        c += r;
        n -= (size_t)r;
    }
    return true;
}


static void no_free(void *data, void *hint)
{
    (void)data;
    (void)hint;
}

static void *new_socket(void *ctx, int type, const options_t *o, const char *who)
{
    void *s = zmq_socket(ctx, type);
    if (!s)
        die(who, "zmq_socket");
    int hwm = o->hwm, one = 1;
    if (zmq_setsockopt(s, type == ZMQ_PULL ? ZMQ_RCVHWM : ZMQ_SNDHWM, &hwm, sizeof hwm) != 0)
        die(who, "high-water mark");
    if (type == ZMQ_PUSH && zmq_setsockopt(s, ZMQ_IMMEDIATE, &one, sizeof one) != 0)
        die(who, "ZMQ_IMMEDIATE");
    if (o->curve) {
        /* Receivers bind and are the servers; senders are the clients. */
        bool server = type == ZMQ_PULL;
        if ((server && (zmq_setsockopt(s, ZMQ_CURVE_SERVER, &one, sizeof one) != 0 ||
                        zmq_setsockopt(s, ZMQ_CURVE_SECRETKEY, o->secret_key, 40) != 0)) ||
            (!server && (zmq_setsockopt(s, ZMQ_CURVE_SERVERKEY, o->public_key, 40) != 0 ||
                         zmq_setsockopt(s, ZMQ_CURVE_PUBLICKEY, o->public_key, 40) != 0 ||
                         zmq_setsockopt(s, ZMQ_CURVE_SECRETKEY, o->secret_key, 40) != 0)))
            die(who, "CURVE keys");
    }
    return s;
}

/* rate: sleep until the next deadline; after a stall start again from now. */
static void pace(uint64_t period, uint64_t *next, bool first)
{
    uint64_t t = tusk_clock_ns();
    if (first || t > *next + period) {
        *next = t;
    } else if (t < *next) {
        struct timespec until = {.tv_sec = (time_t)(*next / 1000000000u), .tv_nsec = (long)(*next % 1000000000u)};
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) == EINTR)
            ;
    }
    *next += period;
}

/* ---- the three roles ------------------------------------------------------------ */

static void run_sender(const options_t *o, int result_fd)
{
    const char *who = "sender";
    alarm(o->timeout_s);
    uint8_t *image = malloc(o->size);
    if (!image)
        die(who, "out of memory");
    uint32_t x = 2463534242u;
    for (size_t i = 0; i < o->size; i++) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        image[i] = (uint8_t)x;
    }
    uint8_t header[HEADER_BYTES];
    memset(header, 0x5A, sizeof header);
    bufpool_t pool;
    bufpool_init(&pool);
    if (bufpool_reserve(&pool, o->size, (size_t)o->hwm + 4) != 0)
        die(who, "out of memory");
    void *ctx = zmq_ctx_new();
    void *push = new_socket(ctx, ZMQ_PUSH, o, who);
    if (zmq_connect(push, o->ep_in) != 0)
        die(who, o->ep_in);
    /* Wait for the connection, so its setup is not timed. */
    zmq_pollitem_t item = {.socket = push, .events = ZMQ_POLLOUT};
    if (zmq_poll(&item, 1, 10000) != 1)
        die(who, "no connection within 10 s");
    sender_result_t res;
    memset(&res, 0, sizeof res); /* padding too: the struct goes through a pipe */
    res.ok = 1;
    res.t0_ns = tusk_clock_ns();
    uint64_t period = o->rate ? 1000000000u / o->rate : 0, next = 0;
    /* Pooled buffers whenever each message's bytes must differ or be written. */
    bool pooled = o->fill || o->rate;
    for (uint64_t i = 0; i < o->count; i++) {
        if (o->rate)
            pace(period, &next, i == 0);
        if (o->header && zmq_send(push, header, sizeof header, ZMQ_SNDMORE) < 0)
            die(who, "send header");
        uint8_t *buf = image;
        if (pooled && !o->copy) {
            buf = bufpool_take(&pool);
            if (!buf)
                die(who, "out of memory");
            if (o->fill)
                memcpy(buf, image, o->size);
        }
        if (o->rate) {
            uint64_t stamp[2] = {tusk_clock_ns(), i + 1};
            memcpy(buf, stamp, sizeof stamp);
        }
        if (o->copy) {
            if (zmq_send(push, buf, o->size, 0) < 0)
                die(who, "zmq_send");
        } else {
            zmq_msg_t m;
            if (zmq_msg_init_data(&m, buf, o->size, pooled ? bufpool_release : no_free, &pool) != 0)
                die(who, "zmq_msg_init_data");
            if (zmq_msg_send(&m, push, 0) < 0)
                die(who, "zmq_msg_send");
        }
    }
    if (!write_all(result_fd, &res, sizeof res))
        die(who, "result pipe");
    wait_done();
    zmq_close(push);
    zmq_ctx_term(ctx);
    bufpool_fini(&pool); /* every message is released once the context is gone */
    free(image);
    _exit(0);
}

static void run_relay(const options_t *o, int ready_fd)
{
    const char *who = "relay";
    alarm(o->timeout_s);
    bufpool_t pool;
    bufpool_init(&pool);
    if (bufpool_reserve(&pool, o->size, (size_t)o->hwm + 4) != 0)
        die(who, "out of memory");
    void *ctx = zmq_ctx_new();
    void *pull = new_socket(ctx, ZMQ_PULL, o, who);
    void *push = new_socket(ctx, ZMQ_PUSH, o, who);
    if (zmq_bind(pull, o->ep_in) != 0)
        die(who, o->ep_in);
    if (zmq_connect(push, o->ep_out) != 0)
        die(who, o->ep_out);
    char c = 'r';
    if (!write_all(ready_fd, &c, 1))
        die(who, "ready pipe");
    for (uint64_t i = 0; i < o->count;) {
        zmq_msg_t m;
        zmq_msg_init(&m);
        if (zmq_msg_recv(&m, pull, 0) < 0)
            die(who, "zmq_msg_recv");
        int more = zmq_msg_more(&m);
        if (!more && o->relay_copy) {
            size_t n = zmq_msg_size(&m);
            void *b = n <= pool.size ? bufpool_take(&pool) : malloc(n);
            if (!b)
                die(who, "out of memory");
            memcpy(b, zmq_msg_data(&m), n);
            zmq_msg_close(&m);
            if (zmq_msg_init_data(&m, b, n, n <= pool.size ? bufpool_release : no_free, &pool) != 0)
                die(who, "zmq_msg_init_data");
        }
        if (zmq_msg_send(&m, push, more ? ZMQ_SNDMORE : 0) < 0)
            die(who, "zmq_msg_send");
        if (!more)
            i++;
    }
    wait_done();
    zmq_close(pull);
    zmq_close(push);
    zmq_ctx_term(ctx);
    bufpool_fini(&pool); /* every message is released once the context is gone */
    _exit(0);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static uint64_t percentile(const uint64_t *v, size_t n, double p)
{
    size_t rank = (size_t)(p * (double)n + 0.999999);
    if (rank < 1)
        rank = 1;
    return v[(rank > n ? n : rank) - 1];
}

static void run_receiver(const options_t *o, int ready_fd, int result_fd)
{
    const char *who = "receiver";
    alarm(o->timeout_s);
    uint64_t *lat = o->rate ? calloc(o->count, sizeof *lat) : NULL;
    if (o->rate && !lat)
        die(who, "out of memory");
    void *ctx = zmq_ctx_new();
    void *pull = new_socket(ctx, ZMQ_PULL, o, who);
    const char *ep = o->relay ? o->ep_out : o->ep_in;
    if (zmq_bind(pull, ep) != 0)
        die(who, ep);
    char c = 'r';
    if (!write_all(ready_fd, &c, 1))
        die(who, "ready pipe");
    receiver_result_t res;
    memset(&res, 0, sizeof res);
    res.ok = 1;
    size_t n_lat = 0;
    while (res.messages < o->count) {
        zmq_msg_t m;
        zmq_msg_init(&m);
        if (zmq_msg_recv(&m, pull, 0) < 0)
            die(who, "zmq_msg_recv");
        if (zmq_msg_more(&m)) { /* the header frame */
            zmq_msg_close(&m);
            continue;
        }
        uint64_t t = tusk_clock_ns();
        if (res.messages == 0)
            res.t_first_ns = t;
        res.t_last_ns = t;
        res.messages++;
        res.bytes += zmq_msg_size(&m);
        if (lat && zmq_msg_size(&m) >= STAMP_BYTES && res.messages > o->skip) {
            uint64_t stamp[2];
            memcpy(stamp, zmq_msg_data(&m), sizeof stamp);
            lat[n_lat++] = t >= stamp[0] ? t - stamp[0] : 0;
        }
        zmq_msg_close(&m);
    }
    if (n_lat) {
        qsort(lat, n_lat, sizeof *lat, cmp_u64);
        long double sum = 0;
        for (size_t i = 0; i < n_lat; i++)
            sum += lat[i];
        res.samples = n_lat;
        res.lat_min = lat[0];
        res.lat_median = percentile(lat, n_lat, 0.5);
        res.lat_p90 = percentile(lat, n_lat, 0.9);
        res.lat_p99 = percentile(lat, n_lat, 0.99);
        res.lat_max = lat[n_lat - 1];
        res.lat_mean = (double)(sum / (long double)n_lat);
    }
    if (!write_all(result_fd, &res, sizeof res))
        die(who, "result pipe");
    zmq_close(pull);
    zmq_ctx_term(ctx);
    free(lat);
    _exit(0);
}

/* ---- parent ---------------------------------------------------------------------- */

static void usage(FILE *out)
{
    fprintf(out,
            "usage: zmq_pushpull [OPTIONS]\n"
            "\n"
            "Raw libzmq PUSH -> PULL between processes (sender -> receiver, or with\n"
            "--relay sender -> relay -> receiver); prints bytes/s and messages/s.\n"
            "\n"
            "  -e, --endpoint EP   first hop: ipc://PATH or tcp://127.0.0.1:PORT (default\n"
            "                      ipc://$TMPDIR/zmq_pushpull.PID); the second hop of\n"
            "                      --relay is PATH-2 or PORT+1\n"
            "  -s, --size BYTES    message size (default 1048576)\n"
            "  -n, --count N       messages (default 1000)\n"
            "      --hwm N         high-water mark of every socket (default 8)\n"
            "      --relay         three processes: a relay in the middle\n"
            "      --relay-copy    the relay copies each payload into a new buffer\n"
            "      --copy          zmq_send (copying) instead of zero-copy zmq_msg_init_data\n"
            "      --fill          the sender copies its image into a pooled buffer per message\n"
            "      --header        send a 48-byte header frame before each payload\n"
            "      --curve         authenticate and encrypt every link with CURVE\n"
            "      --rate R        R messages per second, time-stamped: latency statistics\n"
            "      --skip K        leave the first K messages out of the latency statistics\n"
            "      --timeout S     kill a process still running after S seconds (default 300)\n"
            "      --kv            one key=value line instead of the human one\n");
}

/* The second hop's endpoint: ipc PATH-2, tcp PORT+1. */
static bool second_endpoint(const char *ep, char *out, size_t n)
{
    if (strncmp(ep, "ipc://", 6) == 0)
        return snprintf(out, n, "%s-2", ep) < (int)n;
    const char *colon = strrchr(ep, ':');
    uint64_t port;
    if (strncmp(ep, "tcp://", 6) != 0 || !colon || tusk_parse_u64(colon + 1, 0, UINT64_MAX, &port) != 0 || port >= 65535)
        return false;
    return snprintf(out, n, "%.*s:%llu", (int)(colon - ep), ep, (unsigned long long)port + 1) < (int)n;
}

static pid_t spawn(void (*fn)(const options_t *, int, int), const options_t *o, int fd1, int fd2)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(done_write);
        fn(o, fd1, fd2);
    }
    return pid;
}

static void sender_entry(const options_t *o, int fd1, int fd2)
{
    (void)fd2;
    run_sender(o, fd1);
}
static void relay_entry(const options_t *o, int fd1, int fd2)
{
    (void)fd2;
    run_relay(o, fd1);
}
static void receiver_entry(const options_t *o, int fd1, int fd2)
{
    run_receiver(o, fd1, fd2);
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"endpoint", required_argument, NULL, 'e'}, {"size", required_argument, NULL, 's'},
        {"count", required_argument, NULL, 'n'},    {"hwm", required_argument, NULL, 'H'},
        {"relay", no_argument, NULL, 'R'},          {"relay-copy", no_argument, NULL, 'C'},
        {"copy", no_argument, NULL, 'c'},           {"fill", no_argument, NULL, 'F'},
        {"header", no_argument, NULL, 'h' + 256},   {"rate", required_argument, NULL, 'r'},
        {"skip", required_argument, NULL, 'k'},     {"timeout", required_argument, NULL, 'T'},
        {"kv", no_argument, NULL, 'K'},             {"help", no_argument, NULL, 'h'},
        {"curve", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0}};
    options_t o = {.size = 1048576, .count = 1000, .hwm = 8, .timeout_s = 300};
    const char *endpoint = NULL;
    int c;
    while ((c = getopt_long(argc, argv, "e:s:n:h", longopts, NULL)) != -1) {
        uint64_t v = 0;
        bool num = c == 's' || c == 'n' || c == 'H' || c == 'r' || c == 'k' || c == 'T';
        if (num && tusk_parse_u64(optarg, 0, UINT64_MAX, &v) != 0) {
            fprintf(stderr, "zmq_pushpull: '%s' is not a number\n", optarg);
            return 2;
        }
        switch (c) {
        case 'e': endpoint = optarg; break;
        case 's': o.size = (size_t)v; break;
        case 'n': o.count = v; break;
        case 'H': o.hwm = (int)v; break;
        case 'R': o.relay = true; break;
        case 'C': o.relay_copy = o.relay = true; break;
        case 'c': o.copy = true; break;
        case 'F': o.fill = true; break;
        case 'h' + 256: o.header = true; break;
        case 'r': o.rate = v; break;
        case 'k': o.skip = v; break;
        case 'T': o.timeout_s = (unsigned)v; break;
        case 'K': o.kv = true; break;
        case 'V': o.curve = true; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind != argc || o.count == 0 || o.hwm <= 0 || (o.rate && o.size < STAMP_BYTES) ||
        (o.rate && o.rate > 1000000000u)) {
        usage(stderr);
        return 2;
    }
    if (o.curve && zmq_curve_keypair(o.public_key, o.secret_key) != 0) {
        fprintf(stderr, "zmq_pushpull: --curve: %s (libzmq without CURVE?)\n", zmq_strerror(errno));
        return 1;
    }
    if (endpoint) {
        snprintf(o.ep_in, sizeof o.ep_in, "%s", endpoint);
    } else {
        const char *tmp = getenv("TMPDIR");
        snprintf(o.ep_in, sizeof o.ep_in, "ipc://%s/zmq_pushpull.%ld", tmp && *tmp ? tmp : "/tmp", (long)getpid());
    }
    if (o.relay && !second_endpoint(o.ep_in, o.ep_out, sizeof o.ep_out)) {
        fprintf(stderr, "zmq_pushpull: endpoint '%s': expected ipc://PATH or tcp://HOST:PORT\n", o.ep_in);
        return 2;
    }

    int rready[2], rres[2], lready[2], sres[2], done[2];
    if (pipe(rready) || pipe(rres) || pipe(lready) || pipe(sres) || pipe(done)) {
        perror("zmq_pushpull: pipe");
        return 1;
    }
    done_read = done[0];
    done_write = done[1];
    pid_t pids[3] = {-1, -1, -1};
    char byte;
    pids[0] = spawn(receiver_entry, &o, rready[1], rres[1]);
    if (pids[0] < 0 || !read_all(rready[0], &byte, 1)) {
        fprintf(stderr, "zmq_pushpull: the receiver did not start\n");
        return 1;
    }
    if (o.relay) {
        pids[1] = spawn(relay_entry, &o, lready[1], -1);
        if (pids[1] < 0 || !read_all(lready[0], &byte, 1)) {
            fprintf(stderr, "zmq_pushpull: the relay did not start\n");
            return 1;
        }
    }
    pids[2] = spawn(sender_entry, &o, sres[1], -1);
    close(rres[1]);
    close(sres[1]);
    sender_result_t sr = {0};
    receiver_result_t rr = {0};
    bool got_s = read_all(sres[0], &sr, sizeof sr), got_r = read_all(rres[0], &rr, sizeof rr);
    close(done_write);
    int failed = 0;
    static const char *const roles[] = {"receiver", "relay", "sender"};
    for (int i = 0; i < 3; i++) {
        int st = 0;
        if (pids[i] <= 0)
            continue;
        if (waitpid(pids[i], &st, 0) != pids[i]) {
            fprintf(stderr, "zmq_pushpull: waitpid (%s): %s\n", roles[i], strerror(errno));
            failed++;
        } else if (WIFSIGNALED(st)) {
            fprintf(stderr, "zmq_pushpull: the %s was killed by signal %d\n", roles[i], WTERMSIG(st));
            failed++;
        } else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            fprintf(stderr, "zmq_pushpull: the %s failed (exit status %d)\n", roles[i], WEXITSTATUS(st));
            failed++;
        }
    }
    if (o.ep_in[0] == 'i')
        unlink(o.ep_in + 6);
    if (o.relay && o.ep_out[0] == 'i')
        unlink(o.ep_out + 6);
    if (failed || !got_s || !got_r || !sr.ok || !rr.ok) {
        if (!failed)
            fprintf(stderr, "zmq_pushpull: no result from the %s\n", !got_s || !sr.ok ? "sender" : "receiver");
        return 1;
    }
    double seconds = (double)(rr.t_last_ns - sr.t0_ns) / 1e9;
    double steady = rr.messages > 1 ? (double)(rr.t_last_ns - rr.t_first_ns) / 1e9 : 0.0;
    double mbps = seconds > 0 ? (double)rr.bytes / 1e6 / seconds : 0.0;
    double msgps = seconds > 0 ? (double)rr.messages / seconds : 0.0;
    double steady_mbps = steady > 0 ? (double)(rr.bytes - rr.bytes / rr.messages) / 1e6 / steady : 0.0;
    const char *transport = strncmp(o.ep_in, "tcp://", 6) == 0 ? "tcp" : "ipc";
    if (o.kv) {
        printf("processes=%d transport=%s size=%zu count=%llu hwm=%d zero_copy=%d fill=%d relay_copy=%d header=%d "
               "curve=%d seconds=%.6f mb_per_s=%.1f msg_per_s=%.1f steady_mb_per_s=%.1f",
               o.relay ? 3 : 2, transport, o.size, (unsigned long long)rr.messages, o.hwm, !o.copy, o.fill,
               o.relay_copy, o.header, o.curve, seconds, mbps, msgps, steady_mbps);
        if (rr.samples)
            printf(" samples=%llu min_ns=%llu median_ns=%llu p90_ns=%llu p99_ns=%llu max_ns=%llu mean_ns=%.0f",
                   (unsigned long long)rr.samples, (unsigned long long)rr.lat_min,
                   (unsigned long long)rr.lat_median, (unsigned long long)rr.lat_p90,
                   (unsigned long long)rr.lat_p99, (unsigned long long)rr.lat_max, rr.lat_mean);
        printf("\n");
    } else {
        printf("%d processes over %s%s: %llu messages of %zu bytes in %.3f s: %.1f MB/s, %.0f msg/s "
               "(steady %.1f MB/s)\n",
               o.relay ? 3 : 2, transport, o.curve ? " with CURVE" : "", (unsigned long long)rr.messages, o.size,
               seconds, mbps, msgps, steady_mbps);
        if (rr.samples)
            printf("latency over %llu messages: min %.1f us, median %.1f us, p90 %.1f us, p99 %.1f us, max %.1f us\n",
                   (unsigned long long)rr.samples, (double)rr.lat_min / 1e3, (double)rr.lat_median / 1e3,
                   (double)rr.lat_p90 / 1e3, (double)rr.lat_p99 / 1e3, (double)rr.lat_max / 1e3);
    }
    return 0;
}
