/* check_node.c - one tusk-actor, driven by this test, which plays the
 * controller and the instances around it. So the order of events is the
 * test's own, not the scheduler's: the cases below put messages in the
 * orders that a real run produces only now and then.
 *
 *  - PEER_LOST with a count arrives before the failed instance's last
 *    buffers (the word of a failure overtaking its data): the instance
 *    waits for them, and ends only then; without a count, at once;
 *  - a buffer numbered again is dropped and counted, a skipped number is
 *    counted, a buffer with broken ADF framing is reported at once
 *    (BAD_DATA, naming the link and the sender);
 *  - a filter that holds its input back: the held inputs are counted as
 *    held, and finished (a RELEASE marker with their count) only by the
 *    flush;
 *  - inside a long hook the liveness thread goes on: ALIVE naming the hook
 *    and its duration;
 *  - what is no data message of the run (a broken header, a wrong run or
 *    sender, a missing or wrong-sized buffer) is dropped and counted, never
 *    fatal; over tcp, connections that do not authenticate (garbage bytes,
 *    an old-protocol or unencrypted peer, a stranger's key) are refused and
 *    counted, and the input binds to a port the kernel picked, which its
 *    CONFIGURE reply names; over ipc, another user's connection is refused
 *    (root only);
 *  - buffers in shared memory (--transport shm): the instance reads them
 *    in the sender's ring (here the test's) and gives their slots back;
 *    descriptors that are garbage, name another ring, no slot of the ring,
 *    or more bytes than a slot holds are dropped and counted.
 *
 * The test is the instance's controller and neighbours with the run's own
 * keys (security.h): the instance gets them, with its token, on its
 * standard input, as from tusk-run. */
#define _XOPEN_SOURCE 700 /* nftw */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>
#include <zmq.h>

#include "layout.h"
#include "security.h"
#include "shmlink.h"
#include "testutil.h"
#include "tusk/topology.h"
#include "runtime/wire.h"
#include "zutil.h"
#include "base/clock.h"

/* reader -> copy x3 -> sink; the test runs sink[0]. */
static const char *const fan_in =
    "<configuration>\n"
    "  <producer><name>reader</name><binary_code>file_producer</binary_code>\n"
    "    <parameter name=\"file\">none.adf</parameter></producer>\n"
    "  <intermediary instances=\"3\"><name>copy</name><binary_code>passthrough</binary_code>\n"
    "    <data_source>reader</data_source></intermediary>\n"
    "  <consumer><name>sink</name><binary_code>null_consumer</binary_code><data_source>copy</data_source></consumer>\n"
    "</configuration>\n";

/* reader -> copy (fault, %s) -> sink; the test runs copy[0]. */
static const char *const one_filter =
    "<configuration>\n"
    "  <producer><name>reader</name><binary_code>file_producer</binary_code>\n"
    "    <parameter name=\"file\">none.adf</parameter></producer>\n"
    "  <intermediary><name>copy</name><binary_code>fault</binary_code><size>4096</size>\n"
    "    <data_source>reader</data_source>%s</intermediary>\n"
    "  <consumer><name>sink</name><binary_code>null_consumer</binary_code><data_source>copy</data_source></consumer>\n"
    "</configuration>\n";

enum { READER = 0, COPY = 1, SINK = 2 };

typedef struct harness {
    char dir[4096];
    void *ctx, *router;
    tusk_sec_t *sec;        /* the test's side of the run's security */
    tusk_secrets_t secrets; /* the run's keys: the instance gets them with its token */
    char endpoint[256], id[160], hb_id[168];
    pid_t pid;
    char *xml;
    tusk_topology_t *topo;
    tusk_layout_t layout;
    bool saw_ended;         /* an ENDED passed by while waiting for something else */
    char bound[4][512];     /* where the instance's inputs bound (its CONFIGURE reply) */
    void *out;              /* an instance with a sink: sink[0]'s input, the test's */
} harness_t;

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

/* The next message from the instance with verb `verb` (its main
 * connection; from its liveness thread with `hb`), within 30 s (a safety
 * bound only). Others are dropped, an ENDED noted. */
static tusk_ctl_t *next(harness_t *h, const char *verb, bool hb)
{
    uint64_t end = tusk_clock_ms() + 30000;
    while (tusk_clock_ms() < end) {
        zmq_pollitem_t item = {.socket = h->router, .events = ZMQ_POLLIN};
        if (zmq_poll(&item, 1, 100) <= 0)
            continue;
        char id[256];
        tusk_ctl_t *m = NULL;
        tusk_error_t err;
        if (zu_recv_ctl(h->router, false, id, sizeof id, NULL, 0, &m, NULL, NULL, &err) != TUSK_OK)
            continue;
        bool from_hb = strcmp(id, h->hb_id) == 0;
        if (!from_hb && strcmp(tusk_ctl_verb(m), "ENDED") == 0)
            h->saw_ended = true;
        if (from_hb == hb && strcmp(tusk_ctl_verb(m), verb) == 0)
            return m;
        tusk_ctl_destroy(&m);
    }
    ck_abort_msg("no %s from the instance within 30 s (see %s/actor.log)", verb, h->dir);
    return NULL;
}

static uint64_t stat_of(const tusk_ctl_t *m, const char *key)
{
    uint64_t v = 0;
    ck_assert_int_eq(tusk_ctl_get_u64(m, key, 0, &v), TUSK_OK);
    return v;
}

static void command(harness_t *h, tusk_ctl_t *m, const char *payload, size_t size)
{
    tusk_error_t err;
    ck_assert_msg(zu_send_ctl(h->router, h->id, m, payload, size, &err) == TUSK_OK, "%s", err.message);
    tusk_ctl_destroy(&m);
}

/* Send `verb`; return its REPLY, which must be ok. */
static tusk_ctl_t *order(harness_t *h, const char *verb)
{
    command(h, tusk_ctl_new(verb), NULL, 0);
    tusk_ctl_t *r = next(h, "REPLY", false);
    ck_assert_str_eq(tusk_ctl_get(r, "to"), verb);
    ck_assert_msg(strcmp(tusk_ctl_get(r, "status"), "ok") == 0, "%s: %s", verb, tusk_ctl_get(r, "message"));
    return r;
}

/* Start instance 0 of `actor` over `transport` and drive it to running.
 * An actor with a sink gets the test's socket as sink[0]'s input (h->out). */
static void start_on(harness_t *h, const char *xml, const char *actor, tusk_transport_t transport)
{
    memset(h, 0, sizeof *h);
    tu_make_dir(h->dir, sizeof h->dir); /* mkdtemp: 0700, ours, as a run folder must be */
    h->xml = strdup(xml);
    tusk_error_t err;
    ck_assert_msg(tusk_topology_parse(&h->topo, xml, strlen(xml), "harness.xml", &err) == TUSK_OK, "%s",
                  err.message);
    h->layout = (tusk_layout_t){.transport = transport, .run_dir = h->dir};
    h->ctx = zmq_ctx_new();
    h->secrets.curve = 1;
    ck_assert_int_eq(tusk_keypair_new(h->secrets.public_key, h->secrets.secret_key, &err), TUSK_OK);
    memcpy(h->secrets.server_key, h->secrets.public_key, sizeof h->secrets.server_key);
    ck_assert_msg(tusk_sec_new(&h->sec, h->ctx, &h->secrets, "harness", &err) == TUSK_OK, "%s", err.message);
    h->router = zmq_socket(h->ctx, ZMQ_ROUTER);
    int zero = 0;
    zmq_setsockopt(h->router, ZMQ_LINGER, &zero, sizeof zero);
    ck_assert_msg(tusk_sec_bind(h->sec, h->router, "tcp://127.0.0.1:*", "control", h->endpoint, sizeof h->endpoint,
                                &err) == TUSK_OK,
                  "%s", err.message);
    tusk_secrets_t mine = h->secrets;
    ck_assert_int_eq(tusk_random_hex(mine.token, 16, &err), TUSK_OK);
    snprintf(h->id, sizeof h->id, "%s.0.0~%s", actor, mine.token);
    snprintf(h->hb_id, sizeof h->hb_id, "%s/hb", h->id);
    /* sink[0]'s input, where the instance is to send. */
    int idx = tusk_topology_find(h->topo, actor);
    ck_assert_int_ge(idx, 0);
    const tusk_actor_spec_t *spec = tusk_topology_actor(h->topo, (unsigned)idx);
    char to[600] = "";
    if (spec->n_sinks) {
        char ep[512], bound[512];
        unsigned sink = spec->sinks[0];
        layout_bind_endpoint(h->topo, &h->layout, sink, 0, 0, ep, sizeof ep);
        h->out = zmq_socket(h->ctx, ZMQ_PULL);
        zmq_setsockopt(h->out, ZMQ_LINGER, &zero, sizeof zero);
        ck_assert_msg(tusk_sec_bind(h->sec, h->out, ep, "sink", bound, sizeof bound, &err) == TUSK_OK, "%s",
                      err.message);
        ck_assert_int_eq(layout_connect_endpoint(h->topo, &h->layout, sink, bound, to, sizeof to), TUSK_OK);
    }

    const char *top = getenv("abs_top_builddir");
    char bin[4200], log[4200];
    snprintf(bin, sizeof bin, "%s/tusk-actor", top && *top ? top : ".");
    snprintf(log, sizeof log, "%s/actor.log", h->dir);
    size_t len;
    char *secrets = tusk_secrets_format(&mine, &len);
    int p[2];
    ck_assert_int_eq(pipe(p), 0);
    fflush(NULL);
    h->pid = fork();
    ck_assert_int_ge(h->pid, 0);
    if (h->pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            dup2(fd, STDOUT_FILENO);
            dup2(fd, STDERR_FILENO);
        }
        dup2(p[0], STDIN_FILENO);
        close(p[1]);
        execl(bin, bin, "--control", h->endpoint, "--actor", actor, "--instance", "0", "--orphan-ms", "60000",
              "--secrets", "-", (char *)NULL);
        _exit(127);
    }
    close(p[0]);
    ck_assert_int_eq(write(p[1], secrets, len), (ssize_t)len);
    close(p[1]);
    free(secrets);
    tusk_ctl_t *m = next(h, "HELLO", false);
    tusk_ctl_destroy(&m);
    m = tusk_ctl_new("CONFIGURE");
    tusk_ctl_set(m, "topology", "harness.xml");
    tusk_ctl_set(m, "run_dir", h->dir);
    tusk_ctl_set(m, "transport", layout_transport_name(transport));
    tusk_ctl_set_u64(m, "base_port", 0);
    tusk_ctl_set_u64(m, "heartbeat_ms", 100);
    if (to[0]) {
        char key[48];
        snprintf(key, sizeof key, "to:%u:0", spec->sinks[0]);
        tusk_ctl_set(m, key, to);
    }
    /* The built actors: make check's path, else the build folder's. */
    const char *path = getenv("TUSK_ACTOR_PATH");
    char own[4200];
    snprintf(own, sizeof own, "%s/actors/.libs", top && *top ? top : ".");
    tusk_ctl_set(m, "actor_path", path && *path ? path : own);
    command(h, m, h->xml, strlen(h->xml));
    m = next(h, "REPLY", false);
    ck_assert_msg(strcmp(tusk_ctl_get(m, "status"), "ok") == 0, "CONFIGURE: %s", tusk_ctl_get(m, "message"));
    for (unsigned j = 0; j < spec->n_sources && j < 4; j++) {
        char key[32];
        snprintf(key, sizeof key, "bound:%u", j);
        ck_assert_ptr_nonnull(tusk_ctl_get(m, key));
        snprintf(h->bound[j], sizeof h->bound[j], "%s", tusk_ctl_get(m, key));
    }
    tusk_ctl_destroy(&m);
    m = order(h, "INITIALISE");
    tusk_ctl_destroy(&m);
    m = tusk_ctl_new("START");
    tusk_ctl_set_u64(m, "run", 1);
    command(h, m, NULL, 0);
    m = next(h, "REPLY", false);
    ck_assert_str_eq(tusk_ctl_get(m, "status"), "ok");
    tusk_ctl_destroy(&m);
}

static void start(harness_t *h, const char *xml, const char *actor)
{
    start_on(h, xml, actor, TUSK_TRANSPORT_IPC);
}

static void finish(harness_t *h)
{
    tusk_ctl_t *m = order(h, "STOP");
    tusk_ctl_destroy(&m);
    command(h, tusk_ctl_new("EXIT"), NULL, 0);
    int status = 0;
    ck_assert_int_eq(waitpid(h->pid, &status, 0), h->pid);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "tusk-actor ended with status 0x%x", status);
    tusk_sec_close(h->sec, h->out);
    tusk_sec_close(h->sec, h->router);
    tusk_sec_destroy(&h->sec);
    zmq_ctx_term(h->ctx);
    tusk_topology_destroy(&h->topo);
    free(h->xml);
    nftw(h->dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* A PUSH, with the run's keys, to input `input` of the instance under test
 * (the test as its sender). */
static void *push_to(harness_t *h, unsigned input)
{
    char ep[4300];
    int idx = -1;
    for (unsigned a = 0; a < tusk_topology_count(h->topo); a++)
        if (strstr(h->id, tusk_topology_actor(h->topo, a)->name) == h->id)
            idx = (int)a;
    ck_assert_int_ge(idx, 0);
    ck_assert_int_eq(layout_connect_endpoint(h->topo, &h->layout, (unsigned)idx, h->bound[input], ep, sizeof ep),
                     TUSK_OK);
    void *s = zmq_socket(h->ctx, ZMQ_PUSH);
    int zero = 0;
    zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof zero);
    tusk_error_t err;
    ck_assert_msg(tusk_sec_connect(h->sec, s, ep, NULL, &err) == TUSK_OK, "%s", err.message);
    return s;
}

static void send_msg(void *s, uint16_t flags, unsigned actor, unsigned k, uint64_t seq, const void *data,
                     size_t size)
{
    tusk_wire_header_t hd = {.flags = flags,
                             .run = 1,
                             .source_actor = (uint16_t)actor,
                             .source_instance = (uint16_t)k,
                             .input_actor = TUSK_WIRE_NONE,
                             .input_instance = TUSK_WIRE_NONE,
                             .seq = seq,
                             .payload_size = (uint32_t)size};
    uint8_t b[TUSK_WIRE_HEADER_SIZE];
    tusk_wire_encode(&hd, b);
    ck_assert_int_eq(zmq_send(s, b, sizeof b, ZMQ_SNDMORE), (int)sizeof b);
    ck_assert_int_eq(zmq_send(s, data, size, 0), (int)size);
}

/* One valid ADF buffer: `n` frames. */
static size_t frames(uint8_t *buf, unsigned n)
{
    size_t used = 0;
    uint8_t payload[40] = {0};
    for (unsigned i = 0; i < n; i++)
        used += tu_put_frame(buf + used, ADF_TYPE_DATA_PSA, i + 1, 10u * (i + 1), payload, sizeof payload);
    return used;
}

static void send_buffers(void *s, unsigned actor, unsigned k, uint64_t first, uint64_t last)
{
    uint8_t buf[512];
    size_t n = frames(buf, 3);
    for (uint64_t seq = first; seq <= last; seq++)
        send_msg(s, 0, actor, k, seq, buf, n);
}

/* Heartbeats until `key` reaches `value` (the instance has read that far). */
static tusk_ctl_t *until_stat(harness_t *h, const char *key, uint64_t value)
{
    while (true) {
        tusk_ctl_t *m = next(h, "HEARTBEAT", false);
        if (stat_of(m, key) >= value)
            return m;
        tusk_ctl_destroy(&m);
    }
}

static void peer_lost(harness_t *h, unsigned actor, unsigned k, uint64_t sent)
{
    tusk_ctl_t *m = tusk_ctl_new("PEER_LOST");
    tusk_ctl_set_u64(m, "actor", actor);
    tusk_ctl_set_u64(m, "instance", k);
    tusk_ctl_set_u64(m, "incarnation", 0);
    if (sent != UINT64_MAX)
        tusk_ctl_set_u64(m, "sent", sent);
    command(h, m, NULL, 0);
}

/* copy[0] and copy[1] send 2 buffers and end; the sink has seen it. */
static void two_ended(harness_t *h, void *from)
{
    send_buffers(from, COPY, 0, 1, 2);
    send_msg(from, TUSK_WIRE_END_OF_RUN, COPY, 0, 2, NULL, 0);
    send_buffers(from, COPY, 1, 1, 2);
    send_msg(from, TUSK_WIRE_END_OF_RUN, COPY, 1, 2, NULL, 0);
    tusk_ctl_t *m = until_stat(h, "ended:1:0", 1);
    tusk_ctl_destroy(&m);
    m = until_stat(h, "ended:1:1", 1);
    tusk_ctl_destroy(&m);
}

/* copy[2] failed having sent 3 buffers; the word arrives first. */
START_TEST(peer_lost_waits_for_what_was_sent)
{
    harness_t h;
    start(&h, fan_in, "sink");
    void *from = push_to(&h, 0);
    two_ended(&h, from);
    peer_lost(&h, COPY, 2, 3);
    /* PAUSE's reply comes after PEER_LOST was handled: still running. */
    tusk_ctl_t *r = order(&h, "PAUSE");
    ck_assert_str_eq(tusk_ctl_get(r, "state"), "paused");
    ck_assert_msg(!h.saw_ended, "the sink ended before copy[2]'s 3 buffers came");
    tusk_ctl_destroy(&r);
    send_buffers(from, COPY, 2, 1, 3);
    r = order(&h, "RESUME");
    tusk_ctl_destroy(&r);
    /* RESUME's reply goes before it reads again: ENDED comes after it. */
    ck_assert(!h.saw_ended);
    tusk_ctl_t *e = next(&h, "ENDED", false);
    ck_assert_uint_eq(stat_of(e, "recv:1:2"), 3);
    ck_assert_uint_eq(stat_of(e, "fin:1:2"), 3);
    ck_assert_uint_eq(stat_of(e, "fin:1:0"), 2);
    ck_assert_str_eq(tusk_ctl_get(e, "final"), "1");
    tusk_ctl_destroy(&e);
    zmq_close(from);
    finish(&h);
}
END_TEST

/* Without a count (it died: nothing more will come), at once. */
START_TEST(peer_lost_without_count_ends_at_once)
{
    harness_t h;
    start(&h, fan_in, "sink");
    void *from = push_to(&h, 0);
    two_ended(&h, from);
    peer_lost(&h, COPY, 2, UINT64_MAX);
    tusk_ctl_t *e = next(&h, "ENDED", false);
    ck_assert_uint_eq(stat_of(e, "recv:1:2"), 0);
    tusk_ctl_destroy(&e);
    zmq_close(from);
    finish(&h);
}
END_TEST

START_TEST(numbers_checked_and_framing_reported)
{
    harness_t h;
    start(&h, fan_in, "sink");
    void *from = push_to(&h, 0);
    /* copy[0]: 1 2 2 3 (a duplicate, dropped); copy[1]: 1 3 (2 skipped). */
    send_buffers(from, COPY, 0, 1, 2);
    send_buffers(from, COPY, 0, 2, 3);
    send_msg(from, TUSK_WIRE_END_OF_RUN, COPY, 0, 3, NULL, 0);
    send_buffers(from, COPY, 1, 1, 1);
    send_buffers(from, COPY, 1, 3, 3);
    send_msg(from, TUSK_WIRE_END_OF_RUN, COPY, 1, 3, NULL, 0);
    tusk_ctl_t *m = until_stat(&h, "ended:1:0", 1);
    tusk_ctl_destroy(&m);
    m = until_stat(&h, "ended:1:1", 1);
    tusk_ctl_destroy(&m);
    /* copy[2]: one good buffer, then one whose first key's class byte is 0
     * (null_consumer refuses it, and fails: its counts are final then). */
    uint8_t buf[512];
    size_t n = frames(buf, 2);
    send_msg(from, 0, COPY, 2, 1, buf, n);
    buf[7] = 0;
    send_msg(from, 0, COPY, 2, 2, buf, n);
    send_msg(from, TUSK_WIRE_END_OF_RUN, COPY, 2, 2, NULL, 0);
    tusk_ctl_t *bad = next(&h, "BAD_DATA", false);
    ck_assert_str_eq(tusk_ctl_get(bad, "from"), "copy[2]");
    char want[128];
    snprintf(want, sizeof want, "malformed buffer 2 of %zu bytes from copy[2] (incarnation 0): offset 0:", n);
    ck_assert_msg(strstr(tusk_ctl_get(bad, "message"), want), "BAD_DATA says '%s'", tusk_ctl_get(bad, "message"));
    tusk_ctl_destroy(&bad);
    tusk_ctl_t *e = next(&h, "FAILED", false);
    ck_assert_str_eq(tusk_ctl_get(e, "final"), "1");
    ck_assert_uint_eq(stat_of(e, "recv:1:0"), 4);
    ck_assert_uint_eq(stat_of(e, "dup:1:0"), 1);
    ck_assert_uint_eq(stat_of(e, "fin:1:0"), 3);
    ck_assert_uint_eq(stat_of(e, "recv:1:1"), 2);
    ck_assert_uint_eq(stat_of(e, "gap:1:1"), 1);
    ck_assert_uint_eq(stat_of(e, "fin:1:1"), 2);
    ck_assert_uint_eq(stat_of(e, "bad:1:2"), 1);
    ck_assert_uint_eq(stat_of(e, "recv:1:2"), 2); /* delivered all the same: the actor decides */
    ck_assert_uint_eq(stat_of(e, "fin:1:2"), 1);
    tusk_ctl_destroy(&e);
    zmq_close(from);
    finish(&h);
}
END_TEST

/* The header of the next message on `s`, and its payload size. */
static tusk_wire_header_t take(void *s)
{
    zmq_pollitem_t item = {.socket = s, .events = ZMQ_POLLIN};
    ck_assert_msg(zmq_poll(&item, 1, 30000) == 1, "no data message within 30 s");
    uint8_t b[TUSK_WIRE_HEADER_SIZE];
    ck_assert_int_eq(zmq_recv(s, b, sizeof b, 0), (int)sizeof b);
    tusk_wire_header_t hd;
    tusk_error_t err;
    ck_assert_msg(tusk_wire_decode(b, sizeof b, &hd, &err) == TUSK_OK, "%s", err.message);
    zmq_msg_t body;
    zmq_msg_init(&body);
    ck_assert_int_ge(zmq_msg_recv(&body, s, 0), 0);
    ck_assert_uint_eq(zmq_msg_size(&body), hd.payload_size);
    zmq_msg_close(&body);
    return hd;
}

START_TEST(held_inputs_finish_at_the_flush)
{
    char xml[2048];
    snprintf(xml, sizeof xml, one_filter,
             "<parameter name=\"action\">exit</parameter><parameter name=\"at_block\">1000000</parameter>"
             "<parameter name=\"hold\">true</parameter>");
    harness_t h;
    memset(&h, 0, sizeof h);
    /* The sink's input exists before copy[0] connects to it. */
    start(&h, xml, "copy");
    void *out = h.out, *in = push_to(&h, 0);
    send_buffers(in, READER, 0, 1, 3);
    tusk_ctl_t *m = until_stat(&h, "held:0:0", 3);
    ck_assert_uint_eq(stat_of(m, "fin:0:0"), 0);
    ck_assert_uint_eq(stat_of(m, "out_buffers"), 0);
    tusk_ctl_destroy(&m);
    send_msg(in, TUSK_WIRE_END_OF_RUN, READER, 0, 3, NULL, 0);
    /* The flush: the held data (9 frames of 60 bytes fit one 4 KiB buffer),
     * then the release of the 3 inputs, then the end of run. */
    tusk_wire_header_t hd = take(out);
    ck_assert_uint_eq(hd.flags, 0);
    ck_assert_uint_eq(hd.seq, 1);
    ck_assert_uint_eq(hd.payload_size, 9 * 60);
    hd = take(out);
    ck_assert_uint_eq(hd.flags, TUSK_WIRE_EMPTY | TUSK_WIRE_RELEASE);
    ck_assert_uint_eq(hd.input_actor, READER);
    ck_assert_uint_eq(hd.input_instance, 0);
    ck_assert_uint_eq(hd.input_seq, 3);
    ck_assert_uint_eq(hd.seq, 1); /* a marker is not a buffer */
    hd = take(out);
    ck_assert_uint_eq(hd.flags, TUSK_WIRE_END_OF_RUN);
    ck_assert_uint_eq(hd.seq, 1);
    m = next(&h, "ENDED", false);
    ck_assert_uint_eq(stat_of(m, "fin:0:0"), 3);
    ck_assert_uint_eq(stat_of(m, "held:0:0"), 0);
    tusk_ctl_destroy(&m);
    zmq_close(in);
    finish(&h);
}
END_TEST

START_TEST(alive_inside_a_long_hook)
{
    char xml[2048];
    snprintf(xml, sizeof xml, one_filter,
             "<parameter name=\"action\">stall</parameter><parameter name=\"stall_seconds\">2</parameter>");
    harness_t h;
    start(&h, xml, "copy");
    void *out = h.out, *in = push_to(&h, 0);
    send_buffers(in, READER, 0, 1, 1);
    /* The liveness thread names the hook while the main thread sleeps in it. */
    while (true) {
        tusk_ctl_t *a = next(&h, "ALIVE", true);
        const char *hook = tusk_ctl_get(a, "hook");
        bool long_one = hook && stat_of(a, "hook_ms") >= 1000;
        if (long_one)
            ck_assert_str_eq(hook, "process_block");
        tusk_ctl_destroy(&a);
        if (long_one)
            break;
    }
    tusk_wire_header_t hd = take(out);
    ck_assert_uint_eq(hd.flags, TUSK_WIRE_COMPLETES);
    zmq_close(in);
    finish(&h);
}
END_TEST

/* ---- what is kept out ------------------------------------------------------------ */

/* Heartbeats until every key reaches its value. */
static tusk_ctl_t *until_stats(harness_t *h, const char *const *keys, const uint64_t *values, size_t n)
{
    while (true) {
        tusk_ctl_t *m = next(h, "HEARTBEAT", false);
        size_t ok = 0;
        for (size_t i = 0; i < n; i++)
            ok += stat_of(m, keys[i]) >= values[i];
        if (ok == n)
            return m;
        tusk_ctl_destroy(&m);
    }
}

/* After whatever was kept out: copy[0..2] send their buffers and end, and
 * the sink ends as if nothing had happened. */
static tusk_ctl_t *then_the_real_data(harness_t *h, void *from)
{
    two_ended(h, from);
    send_buffers(from, COPY, 2, 1, 1);
    send_msg(from, TUSK_WIRE_END_OF_RUN, COPY, 2, 1, NULL, 0);
    tusk_ctl_t *e = next(h, "ENDED", false);
    ck_assert_uint_eq(stat_of(e, "recv:1:0"), 2);
    ck_assert_uint_eq(stat_of(e, "fin:1:0"), 2);
    ck_assert_uint_eq(stat_of(e, "recv:1:1"), 2);
    ck_assert_uint_eq(stat_of(e, "recv:1:2"), 1);
    ck_assert_uint_eq(stat_of(e, "fin:1:2"), 1);
    return e;
}

START_TEST(garbage_is_dropped_and_counted)
{
    harness_t h;
    start(&h, fan_in, "sink");
    void *from = push_to(&h, 0);
    uint8_t buf[512], hdr[TUSK_WIRE_HEADER_SIZE];
    size_t n = frames(buf, 2);
    /* 1: 14 bytes that are no header; 2: a header of another run; 3: a
     * header from an actor that does not feed this input; 4: a header
     * without its buffer; 5: a buffer of another size than its header's. */
    ck_assert_int_eq(zmq_send(from, "garbage 14 byt", 14, 0), 14);
    tusk_wire_header_t hd = {.run = 2, .source_actor = COPY, .input_actor = TUSK_WIRE_NONE,
                             .input_instance = TUSK_WIRE_NONE, .seq = 1, .payload_size = (uint32_t)n};
    tusk_wire_encode(&hd, hdr);
    ck_assert_int_eq(zmq_send(from, hdr, sizeof hdr, ZMQ_SNDMORE), (int)sizeof hdr);
    ck_assert_int_eq(zmq_send(from, buf, n, 0), (int)n);
    send_msg(from, 0, READER, 0, 1, buf, n);
    hd.run = 1;
    tusk_wire_encode(&hd, hdr);
    ck_assert_int_eq(zmq_send(from, hdr, sizeof hdr, 0), (int)sizeof hdr);
    ck_assert_int_eq(zmq_send(from, hdr, sizeof hdr, ZMQ_SNDMORE), (int)sizeof hdr);
    ck_assert_int_eq(zmq_send(from, buf, n - 1, 0), (int)n - 1);
    tusk_ctl_t *e = then_the_real_data(&h, from);
    zmq_close(from);
    /* Dropped, counted, and nothing else: no buffer of any link, no failure. */
    ck_assert_uint_eq(stat_of(e, "dropped"), 5);
    ck_assert_uint_eq(stat_of(e, "refused"), 0);
    ck_assert_uint_eq(stat_of(e, "in_buffers"), 5);
    ck_assert_str_eq(tusk_ctl_get(e, "state"), "ended");
    tusk_ctl_destroy(&e);
    finish(&h);
}
END_TEST

/* A buffer in shared memory: the header (flagged TUSK_WIRE_SHM, `size`
 * bytes) and `desc_size` bytes of descriptor. */
static void send_shm(void *s, unsigned k, uint64_t seq, uint32_t size, const void *desc, size_t desc_size)
{
    tusk_wire_header_t hd = {.flags = TUSK_WIRE_SHM,
                             .run = 1,
                             .source_actor = COPY,
                             .source_instance = (uint16_t)k,
                             .input_actor = TUSK_WIRE_NONE,
                             .input_instance = TUSK_WIRE_NONE,
                             .seq = seq,
                             .payload_size = size};
    uint8_t b[TUSK_WIRE_HEADER_SIZE];
    tusk_wire_encode(&hd, b);
    ck_assert_int_eq(zmq_send(s, b, sizeof b, ZMQ_SNDMORE), (int)sizeof b);
    ck_assert_int_eq(zmq_send(s, desc, desc_size, 0), (int)desc_size);
}

START_TEST(buffers_in_shared_memory)
{
    harness_t h;
    start(&h, fan_in, "sink");
    void *from = push_to(&h, 0);
    tusk_shm_ring_t *r = NULL;
    tusk_error_t err;
    ck_assert_int_eq(tusk_shm_ring_new(&r, 4096, 3, 1, &err), TUSK_OK);
    /* copy[0]: buffers 1 and 2 (2 frames each) in slots of the ring. */
    uint8_t buf[512], desc[TUSK_WIRE_SHM_SIZE];
    size_t n = frames(buf, 2);
    tusk_wire_shm_t d[2];
    for (unsigned i = 0; i < 2; i++) {
        uint8_t *slot = tusk_shm_ring_take(r);
        memcpy(slot, buf, n);
        tusk_shm_ring_lend(r, slot, 0, i + 1, &d[i]);
        tusk_shm_ring_put(r, slot);
    }
    /* Both lent before the instance hears of either (once sent, it may give
     * one back at any time). */
    ck_assert_uint_eq(tusk_shm_ring_busy(r), 2);
    for (unsigned i = 0; i < 2; i++) {
        tusk_wire_shm_encode(&d[i], desc);
        send_shm(from, 0, i + 1, (uint32_t)n, desc, sizeof desc);
    }
    /* Dropped: 32 bytes of garbage; another ring (nonce); slot 3 of 3; 4097
     * bytes in a slot of 4096. */
    memset(desc, 'x', sizeof desc);
    send_shm(from, 0, 3, (uint32_t)n, desc, sizeof desc);
    tusk_wire_shm_t bad = d[0];
    bad.nonce ^= 1;
    tusk_wire_shm_encode(&bad, desc);
    send_shm(from, 0, 3, (uint32_t)n, desc, sizeof desc);
    bad = d[0];
    bad.slot = 3;
    tusk_wire_shm_encode(&bad, desc);
    send_shm(from, 0, 3, (uint32_t)n, desc, sizeof desc);
    tusk_wire_shm_encode(&d[0], desc);
    send_shm(from, 0, 3, 4097, desc, sizeof desc);
    send_msg(from, TUSK_WIRE_END_OF_RUN, COPY, 0, 2, NULL, 0);
    send_buffers(from, COPY, 1, 1, 2);
    send_msg(from, TUSK_WIRE_END_OF_RUN, COPY, 1, 2, NULL, 0);
    send_buffers(from, COPY, 2, 1, 1);
    send_msg(from, TUSK_WIRE_END_OF_RUN, COPY, 2, 1, NULL, 0);
    tusk_ctl_t *e = next(&h, "ENDED", false);
    zmq_close(from);
    ck_assert_uint_eq(stat_of(e, "recv:1:0"), 2);
    ck_assert_uint_eq(stat_of(e, "fin:1:0"), 2);
    ck_assert_uint_eq(stat_of(e, "in_buffers"), 5);
    ck_assert_uint_eq(stat_of(e, "in_frames"), 2 * 2 + 3 * 3); /* the slots' frames were read */
    ck_assert_uint_eq(stat_of(e, "bad:1:0"), 0);
    ck_assert_uint_eq(stat_of(e, "dropped"), 4);
    ck_assert_str_eq(tusk_ctl_get(e, "state"), "ended");
    tusk_ctl_destroy(&e);
    /* Both slots came back (the instance gave each back when done). */
    ck_assert_uint_eq(tusk_shm_ring_busy(r), 0);
    tusk_shm_ring_destroy(&r);
    finish(&h);
}
END_TEST

/* A plain socket that sends `bytes` to the tcp port of `endpoint` and
 * closes: no ZeroMQ at all. */
static void raw_tcp(const char *endpoint, const void *bytes, size_t n)
{
    const char *colon = strrchr(endpoint, ':');
    ck_assert_ptr_nonnull(colon);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(colon + 1))};
    ck_assert_int_eq(inet_pton(AF_INET, "127.0.0.1", &a.sin_addr), 1);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    ck_assert_int_eq(send(fd, bytes, n, 0), (ssize_t)n);
    close(fd);
}

/* A PUSH that tries once (no reconnection): with `curve`, a key pair of
 * its own and the server's public key; else no security at all. */
static void *stranger(void *ctx, const char *endpoint, const char *server_key, bool curve)
{
    void *s = zmq_socket(ctx, ZMQ_PUSH);
    int zero = 0, never = -1;
    zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof zero);
    zmq_setsockopt(s, ZMQ_RECONNECT_IVL, &never, sizeof never);
    if (curve) {
        char pub[41], sec[41];
        ck_assert_int_eq(zmq_curve_keypair(pub, sec), 0);
        zmq_setsockopt(s, ZMQ_CURVE_SERVERKEY, server_key, 40);
        zmq_setsockopt(s, ZMQ_CURVE_PUBLICKEY, pub, 40);
        zmq_setsockopt(s, ZMQ_CURVE_SECRETKEY, sec, 40);
    }
    ck_assert_int_eq(zmq_connect(s, endpoint), 0);
    uint8_t hdr[TUSK_WIRE_HEADER_SIZE];
    tusk_wire_header_t hd = {.run = 1, .source_actor = COPY, .input_actor = TUSK_WIRE_NONE,
                             .input_instance = TUSK_WIRE_NONE, .seq = 1};
    tusk_wire_encode(&hd, hdr);
    zmq_send(s, hdr, sizeof hdr, ZMQ_SNDMORE | ZMQ_DONTWAIT); /* queued until a handshake that never comes */
    zmq_send(s, "", 0, ZMQ_DONTWAIT);
    return s;
}

START_TEST(strangers_are_refused_over_tcp)
{
    harness_t h;
    start_on(&h, fan_in, "sink", TUSK_TRANSPORT_TCP);
    /* The input is on a port the kernel picked, and the reply said which. */
    ck_assert_msg(strncmp(h.bound[0], "tcp://127.0.0.1:", 16) == 0 && atoi(h.bound[0] + 16) > 0, "bound at %s",
                  h.bound[0]);
    char ep[600];
    ck_assert_int_eq(layout_connect_endpoint(h.topo, &h.layout, SINK, h.bound[0], ep, sizeof ep), TUSK_OK);
    /* Garbage; an old-protocol peer (ZMTP 1.0: a length and a frame); a
     * peer without CURVE; a stranger's key. */
    raw_tcp(ep, "\x8f\x01zz\xff\x00garbage", 14);
    raw_tcp(ep, "\x05\x00hello", 7);
    void *plain = stranger(h.ctx, ep, NULL, false), *key = stranger(h.ctx, ep, h.secrets.public_key, true);
    static const char *const keys[] = {"refused", "denied"};
    static const uint64_t want[] = {4, 1};
    tusk_ctl_t *m = until_stats(&h, keys, want, 2);
    tusk_ctl_destroy(&m);
    zmq_close(plain);
    zmq_close(key);
    void *from = push_to(&h, 0);
    tusk_ctl_t *e = then_the_real_data(&h, from);
    zmq_close(from);
    ck_assert_uint_eq(stat_of(e, "refused"), 4);
    ck_assert_uint_eq(stat_of(e, "denied"), 1);
    ck_assert_uint_eq(stat_of(e, "dropped"), 0);
    ck_assert_uint_eq(stat_of(e, "in_buffers"), 5); /* the strangers' messages never came in */
    tusk_ctl_destroy(&e);
    finish(&h);
}
END_TEST

START_TEST(another_user_is_refused_over_ipc)
{
    if (geteuid() != 0) {
        fprintf(stderr, "another_user_is_refused_over_ipc: not root: cannot be another user (checked: nothing)\n");
        return;
    }
    harness_t h;
    start(&h, fan_in, "sink");
    /* Open the way to the socket (the run folder is the first defence:
     * here it is taken away, after the instance checked it). */
    const char *path = h.bound[0] + 6;
    ck_assert_int_eq(chmod(h.dir, 0711), 0);
    ck_assert_int_eq(chmod(path, 0777), 0);
    int done[2];
    ck_assert_int_eq(pipe(done), 0);
    fflush(NULL);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        close(done[1]);
        if (setgid(65534) != 0 || setuid(65534) != 0)
            _exit(3);
        void *ctx = zmq_ctx_new();
        void *s = stranger(ctx, h.bound[0], NULL, false);
        char c;
        while (read(done[0], &c, 1) < 0) /* until the test has seen the refusal */
            ;
        zmq_close(s);
        zmq_ctx_term(ctx);
        _exit(0);
    }
    close(done[0]);
    static const char *const keys[] = {"refused", "denied"};
    static const uint64_t want[] = {1, 1};
    tusk_ctl_t *m = until_stats(&h, keys, want, 2);
    tusk_ctl_destroy(&m);
    close(done[1]);
    int status = 0;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the other user's process: status 0x%x", status);
    ck_assert_int_eq(chmod(h.dir, 0700), 0);
    void *from = push_to(&h, 0);
    tusk_ctl_t *e = then_the_real_data(&h, from);
    zmq_close(from);
    ck_assert_uint_eq(stat_of(e, "refused"), 1);
    ck_assert_uint_eq(stat_of(e, "denied"), 1);
    ck_assert_uint_eq(stat_of(e, "dropped"), 0);
    tusk_ctl_destroy(&e);
    finish(&h);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("node");
    TCase *tc = tcase_create("accounting");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, peer_lost_waits_for_what_was_sent);
    tcase_add_test(tc, peer_lost_without_count_ends_at_once);
    tcase_add_test(tc, numbers_checked_and_framing_reported);
    tcase_add_test(tc, held_inputs_finish_at_the_flush);
    suite_add_tcase(s, tc);
    tc = tcase_create("security");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, garbage_is_dropped_and_counted);
    tcase_add_test(tc, buffers_in_shared_memory);
    tcase_add_test(tc, strangers_are_refused_over_tcp);
    tcase_add_test(tc, another_user_is_refused_over_ipc);
    suite_add_tcase(s, tc);
    tc = tcase_create("liveness");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, alive_inside_a_long_hook);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
