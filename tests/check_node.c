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
 *    and its duration. */
#define _XOPEN_SOURCE 700 /* nftw */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zmq.h>

#include "layout.h"
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
    char endpoint[256], id[64], hb_id[72];
    pid_t pid;
    char *xml;
    tusk_topology_t *topo;
    tusk_layout_t layout;
    bool saw_ended; /* an ENDED passed by while waiting for something else */
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
        if (zu_recv_ctl(h->router, false, id, sizeof id, &m, NULL, NULL, &err) != TUSK_OK)
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

static void start(harness_t *h, const char *xml, const char *actor)
{
    memset(h, 0, sizeof *h);
    tu_make_dir(h->dir, sizeof h->dir);
    h->xml = strdup(xml);
    tusk_error_t err;
    ck_assert_msg(tusk_topology_parse(&h->topo, xml, strlen(xml), "harness.xml", &err) == TUSK_OK, "%s",
                  err.message);
    h->layout = (tusk_layout_t){.transport = TUSK_TRANSPORT_IPC, .run_dir = h->dir};
    h->ctx = zmq_ctx_new();
    h->router = zmq_socket(h->ctx, ZMQ_ROUTER);
    int zero = 0;
    size_t len = sizeof h->endpoint;
    zmq_setsockopt(h->router, ZMQ_LINGER, &zero, sizeof zero);
    ck_assert_int_eq(zmq_bind(h->router, "tcp://127.0.0.1:*"), 0);
    ck_assert_int_eq(zmq_getsockopt(h->router, ZMQ_LAST_ENDPOINT, h->endpoint, &len), 0);
    snprintf(h->id, sizeof h->id, "%s.0.0", actor);
    snprintf(h->hb_id, sizeof h->hb_id, "%s/hb", h->id);

    const char *top = getenv("abs_top_builddir");
    char bin[4200], log[4200];
    snprintf(bin, sizeof bin, "%s/tusk-actor", top && *top ? top : ".");
    snprintf(log, sizeof log, "%s/actor.log", h->dir);
    fflush(NULL);
    h->pid = fork();
    ck_assert_int_ge(h->pid, 0);
    if (h->pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            dup2(fd, STDOUT_FILENO);
            dup2(fd, STDERR_FILENO);
        }
        execl(bin, bin, "--control", h->endpoint, "--actor", actor, "--instance", "0", "--orphan-ms", "60000",
              (char *)NULL);
        _exit(127);
    }
    tusk_ctl_t *m = next(h, "HELLO", false);
    tusk_ctl_destroy(&m);
    m = tusk_ctl_new("CONFIGURE");
    tusk_ctl_set(m, "topology", "harness.xml");
    tusk_ctl_set(m, "run_dir", h->dir);
    tusk_ctl_set(m, "transport", "ipc");
    tusk_ctl_set_u64(m, "base_port", 0);
    tusk_ctl_set_u64(m, "heartbeat_ms", 100);
    /* The built actors: make check's path, else the build folder's. */
    const char *path = getenv("TUSK_ACTOR_PATH");
    char own[4200];
    snprintf(own, sizeof own, "%s/actors/.libs", top && *top ? top : ".");
    tusk_ctl_set(m, "actor_path", path && *path ? path : own);
    command(h, m, h->xml, strlen(h->xml));
    m = next(h, "REPLY", false);
    ck_assert_msg(strcmp(tusk_ctl_get(m, "status"), "ok") == 0, "CONFIGURE: %s", tusk_ctl_get(m, "message"));
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

static void finish(harness_t *h)
{
    tusk_ctl_t *m = order(h, "STOP");
    tusk_ctl_destroy(&m);
    command(h, tusk_ctl_new("EXIT"), NULL, 0);
    int status = 0;
    ck_assert_int_eq(waitpid(h->pid, &status, 0), h->pid);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "tusk-actor ended with status 0x%x", status);
    zmq_close(h->router);
    zmq_ctx_term(h->ctx);
    tusk_topology_destroy(&h->topo);
    free(h->xml);
    nftw(h->dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* A PUSH to input `input` of instance k of `actor` (the test as its sender). */
static void *push_to(harness_t *h, unsigned actor, unsigned k, unsigned input)
{
    char ep[4300];
    layout_connect_endpoint(h->topo, &h->layout, actor, k, input, ep, sizeof ep);
    void *s = zmq_socket(h->ctx, ZMQ_PUSH);
    int zero = 0;
    zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof zero);
    ck_assert_int_eq(zmq_connect(s, ep), 0);
    return s;
}

/* A PULL bound where instance k of `actor` would listen (the test as a
 * receiver); before the instance under test connects to it. */
static void *pull_at(harness_t *h, unsigned actor, unsigned k, unsigned input)
{
    char ep[4300];
    layout_bind_endpoint(h->topo, &h->layout, actor, k, input, ep, sizeof ep);
    void *s = zmq_socket(h->ctx, ZMQ_PULL);
    int zero = 0;
    zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof zero);
    ck_assert_int_eq(zmq_bind(s, ep), 0);
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
    void *from = push_to(&h, SINK, 0, 0);
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
    void *from = push_to(&h, SINK, 0, 0);
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
    void *from = push_to(&h, SINK, 0, 0);
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
    void *out = pull_at(&h, SINK, 0, 0), *in = push_to(&h, COPY, 0, 0);
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
    zmq_close(out);
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
    void *out = pull_at(&h, SINK, 0, 0), *in = push_to(&h, COPY, 0, 0);
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
    zmq_close(out);
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
    tc = tcase_create("liveness");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, alive_inside_a_long_hook);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
