/* check_shm.c - the shared-memory ring of a sender and a receiver's map of
 * it (distributed/shmlink.h):
 *
 *  - a buffer written into a slot reads back through a map, in this
 *    process and in another one (a child, through /proc/PID/fd/FD), and
 *    the slot is free again once every link it went to gave it back;
 *  - random sequences of take, send (lend) to links, give back, drop a
 *    link and restart a receiver, against a model of which slots are
 *    free: take finds a slot exactly when the model has one, each link
 *    holds the slots the model says, and every receiver reads exactly the
 *    bytes the sender wrote into the slot;
 *  - a restarted receiver's first buffer number gives back the slots its
 *    predecessor held on its link, and no others;
 *  - a map refuses what is not the ring the descriptor names (another
 *    nonce, a file that is no ring, one open to others, no such fd) and a
 *    slot, size or link outside the ring.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shmlink.h"
#include "testutil.h"

static tusk_shm_ring_t *new_ring(uint32_t size, uint32_t slots, unsigned links)
{
    tusk_shm_ring_t *r = NULL;
    tusk_error_t err;
    int rc = tusk_shm_ring_new(&r, size, slots, links, &err);
    ck_assert_msg(rc == TUSK_OK, "%s", err.message);
    return r;
}

static tusk_shm_map_t *open_map(const tusk_wire_shm_t *d)
{
    tusk_shm_map_t *m = NULL;
    tusk_error_t err;
    int rc = tusk_shm_map_open(&m, d, &err);
    ck_assert_msg(rc == TUSK_OK, "%s", err.message);
    return m;
}

START_TEST(slot_round_trip)
{
    tusk_shm_ring_t *r = new_ring(1000, 4, 2);
    ck_assert_uint_eq(tusk_shm_ring_slots(r), 4);
    ck_assert_uint_eq(tusk_shm_ring_slot_size(r), 1024); /* a multiple of 64 */
    uint8_t *s = tusk_shm_ring_take(r);
    ck_assert_ptr_nonnull(s);
    ck_assert(tusk_shm_ring_owns(r, s));
    ck_assert(!tusk_shm_ring_owns(r, s + 1));
    uint8_t bytes[1000];
    tu_fill(bytes, sizeof bytes);
    memcpy(s, bytes, sizeof bytes);
    tusk_wire_shm_t d0, d1;
    tusk_shm_ring_lend(r, s, 0, 1, &d0);
    tusk_shm_ring_lend(r, s, 1, 1, &d1);
    tusk_shm_ring_put(r, s);
    ck_assert_uint_eq(d0.pid, (uint32_t)getpid());
    ck_assert_uint_eq(d0.link, 0);
    ck_assert_uint_eq(d1.link, 1);
    ck_assert_uint_eq(tusk_shm_ring_busy(r), 1);
    tusk_shm_map_t *m0 = open_map(&d0), *m1 = open_map(&d1);
    ck_assert(tusk_shm_map_is(m0, &d1));
    uint8_t *v0, *v1;
    tusk_error_t err;
    ck_assert_int_eq(tusk_shm_map_slot(m0, &d0, sizeof bytes, &v0, &err), TUSK_OK);
    ck_assert_int_eq(tusk_shm_map_slot(m1, &d1, sizeof bytes, &v1, &err), TUSK_OK);
    ck_assert_mem_eq(v0, bytes, sizeof bytes);
    ck_assert_mem_eq(v1, bytes, sizeof bytes);
    tusk_shm_map_release(v0, m0);
    ck_assert_uint_eq(tusk_shm_ring_busy(r), 1); /* link 1 still has it */
    tusk_shm_map_release(v1, m1);
    ck_assert_uint_eq(tusk_shm_ring_busy(r), 0);
    /* Four slots: a fifth take finds none until one is given back. */
    uint8_t *all[4];
    for (int i = 0; i < 4; i++)
        ck_assert_ptr_nonnull(all[i] = tusk_shm_ring_take(r));
    ck_assert_ptr_null(tusk_shm_ring_take(r));
    tusk_shm_ring_put(r, all[2]);
    ck_assert_ptr_eq(tusk_shm_ring_take(r), all[2]);
    tusk_shm_map_close(&m0);
    tusk_shm_map_close(&m1);
    ck_assert_ptr_null(m0);
    tusk_shm_ring_destroy(&r);
    ck_assert_ptr_null(r);
}
END_TEST

/* Another process maps the ring, checks the bytes and gives the slot
 * back; the sender sees it free. */
START_TEST(slot_in_another_process)
{
    tusk_shm_ring_t *r = new_ring(4096, 2, 1);
    uint8_t *s = tusk_shm_ring_take(r);
    uint8_t bytes[4096];
    tu_fill(bytes, sizeof bytes);
    memcpy(s, bytes, sizeof bytes);
    tusk_wire_shm_t d;
    tusk_shm_ring_lend(r, s, 0, 1, &d);
    tusk_shm_ring_put(r, s);
    pid_t child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0) {
        tusk_shm_map_t *m = NULL;
        tusk_error_t err;
        uint8_t *v;
        int ok = tusk_shm_map_open(&m, &d, &err) == TUSK_OK &&
                 tusk_shm_map_slot(m, &d, sizeof bytes, &v, &err) == TUSK_OK && memcmp(v, bytes, sizeof bytes) == 0;
        if (ok)
            tusk_shm_map_release(v, m);
        else
            fprintf(stderr, "child: %s\n", err.message);
        _exit(ok ? 0 : 1);
    }
    int status;
    ck_assert_int_eq(waitpid(child, &status, 0), child);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ck_assert_uint_eq(tusk_shm_ring_busy(r), 0);
    tusk_shm_ring_destroy(&r);
}
END_TEST

/* A model: per slot, whether the sender holds it and, per link, whether
 * it is lent there and as which buffer; per link, the receiver's queue
 * (oldest first). Receivers restart (what was queued to them is lost):
 * their successor's first buffer frees what the predecessor held. */
#define M_SLOTS 6u
#define M_LINKS 3u
#define M_SIZE 200u

typedef struct {
    tusk_wire_shm_t d;
    uint8_t bytes[M_SIZE];
    uint32_t used;
    uint64_t seq;
} queued_t;

typedef struct {
    tusk_shm_ring_t *r;
    uint8_t *known[M_SLOTS]; /* slots seen so far, by address */
    unsigned n_known;
    bool held[M_SLOTS], lent[M_SLOTS][M_LINKS];
    uint64_t lseq[M_SLOTS][M_LINKS], seq[M_LINKS];
    tusk_shm_map_t *map[M_LINKS], *old[4096];
    unsigned n_old;
    queued_t queue[M_LINKS][M_SLOTS];
    unsigned queued[M_LINKS];
    unsigned restarts, reclaimed, reads;
} model_t;

static unsigned index_of(model_t *m, const uint8_t *s)
{
    for (unsigned i = 0; i < m->n_known; i++)
        if (m->known[i] == s)
            return i;
    tu_check(m->n_known < M_SLOTS);
    m->known[m->n_known] = (uint8_t *)s;
    return m->n_known++;
}

static bool model_busy(const model_t *m, unsigned i)
{
    bool busy = m->held[i];
    for (unsigned b = 0; b < M_LINKS; b++)
        busy |= m->lent[i][b];
    return busy;
}

START_TEST(random_against_model)
{
    static model_t mm;
    model_t *m = &mm;
    memset(m, 0, sizeof *m);
    m->r = new_ring(M_SIZE, M_SLOTS, M_LINKS);
    for (int step = 0; step < 30000; step++) {
        unsigned op = tu_below(16);
        if (op < 4) { /* take: a slot exactly when the model has a free one */
            unsigned free_slots = M_SLOTS - m->n_known;
            for (unsigned i = 0; i < m->n_known; i++)
                free_slots += !model_busy(m, i);
            uint8_t *s = tusk_shm_ring_take(m->r);
            tu_check((s != NULL) == (free_slots > 0));
            if (s) {
                tu_check(tusk_shm_ring_owns(m->r, s));
                unsigned i = index_of(m, s);
                tu_check(!model_busy(m, i));
                m->held[i] = true;
            }
        } else if (op < 8) { /* a held slot written and sent to some links (none: given back) */
            unsigned held[M_SLOTS], n = 0;
            for (unsigned i = 0; i < m->n_known; i++)
                if (m->held[i])
                    held[n++] = i;
            if (!n)
                continue;
            unsigned i = held[tu_below(n)];
            uint8_t *s = m->known[i];
            uint32_t used = 1 + tu_below(M_SIZE);
            uint8_t bytes[M_SIZE];
            tu_fill(bytes, used);
            memcpy(s, bytes, used);
            unsigned links = tu_below(1u << M_LINKS);
            for (unsigned b = 0; b < M_LINKS; b++)
                if (links & (1u << b)) {
                    queued_t *q = &m->queue[b][m->queued[b]++];
                    tu_check(m->queued[b] <= M_SLOTS);
                    q->seq = ++m->seq[b];
                    tusk_shm_ring_lend(m->r, s, b, q->seq, &q->d);
                    tu_check(q->d.slot < M_SLOTS && q->d.link == b);
                    memcpy(q->bytes, bytes, used);
                    q->used = used;
                    m->lent[i][b] = true;
                    m->lseq[i][b] = q->seq;
                }
            tusk_shm_ring_put(m->r, s); /* the same call for a sent and an unused slot */
            m->held[i] = false;
        } else if (op < 14) { /* a receiver takes its oldest buffer: the sender's bytes, then gives it back */
            unsigned b = tu_below(M_LINKS);
            if (!m->queued[b])
                continue;
            queued_t q = m->queue[b][0];
            memmove(&m->queue[b][0], &m->queue[b][1], (m->queued[b] - 1) * sizeof q);
            m->queued[b]--;
            if (!m->map[b]) { /* a new incarnation: what its predecessor held is free */
                m->map[b] = open_map(&q.d);
                for (unsigned i = 0; i < m->n_known; i++)
                    if (m->lent[i][b] && m->lseq[i][b] < q.seq) {
                        m->lent[i][b] = false;
                        m->reclaimed++;
                    }
            }
            tu_check(tusk_shm_map_is(m->map[b], &q.d));
            tusk_shm_map_seen(m->map[b], q.seq);
            uint8_t *v;
            tusk_error_t err;
            tu_check(tusk_shm_map_slot(m->map[b], &q.d, q.used, &v, &err) == TUSK_OK);
            tu_check(memcmp(v, q.bytes, q.used) == 0);
            tusk_shm_map_release(v, m->map[b]);
            for (unsigned k = 0; k < m->n_known; k++)
                if (m->lent[k][b] && m->lseq[k][b] == q.seq)
                    m->lent[k][b] = false;
            m->reads++;
        } else if (op == 14) { /* a receiver restarts: its queue is lost */
            unsigned b = tu_below(M_LINKS);
            if (m->map[b]) {
                tu_check(m->n_old < sizeof m->old / sizeof m->old[0]);
                m->old[m->n_old++] = m->map[b]; /* its memory stays mapped until the end, as a dying process's */
                m->map[b] = NULL;
            }
            m->queued[b] = 0;
            m->restarts++;
        } else { /* a receiver lost for good, then a new one there (a new run of the link) */
            unsigned b = tu_below(M_LINKS);
            tusk_shm_ring_drop_link(m->r, b);
            for (unsigned i = 0; i < m->n_known; i++)
                m->lent[i][b] = false;
            m->queued[b] = 0;
        }
        /* Every link holds what the model says. */
        for (unsigned b = 0; b < M_LINKS; b++) {
            uint32_t lent = 0;
            for (unsigned i = 0; i < m->n_known; i++)
                lent += m->lent[i][b];
            tu_check(tusk_shm_ring_lent(m->r, b) == lent);
        }
    }
    /* The sequence went through every case. */
    ck_assert_uint_gt(m->restarts, 0);
    ck_assert_uint_gt(m->reclaimed, 0);
    ck_assert_uint_gt(m->reads, 1000);
    for (unsigned b = 0; b < M_LINKS; b++)
        tusk_shm_map_close(&m->map[b]);
    for (unsigned i = 0; i < m->n_old; i++)
        tusk_shm_map_close(&m->old[i]);
    tusk_shm_ring_destroy(&m->r);
}
END_TEST

START_TEST(restart_gives_back_the_predecessors_slots)
{
    tusk_shm_ring_t *r = new_ring(64, 4, 2);
    tusk_wire_shm_t d[4];
    uint8_t *s[4];
    for (unsigned i = 0; i < 3; i++) { /* buffers 1..3 to link 0, the first also to link 1 */
        s[i] = tusk_shm_ring_take(r);
        tusk_shm_ring_lend(r, s[i], 0, i + 1, &d[i]);
        if (i == 0)
            tusk_shm_ring_lend(r, s[i], 1, 1, &d[3]);
        tusk_shm_ring_put(r, s[i]);
    }
    tusk_shm_map_t *before = open_map(&d[0]);
    tusk_shm_map_seen(before, 1); /* the predecessor saw buffer 1, then died holding 1..3 */
    ck_assert_uint_eq(tusk_shm_ring_busy(r), 3);
    s[3] = tusk_shm_ring_take(r); /* buffer 4 goes to link 0's successor */
    ck_assert_ptr_nonnull(s[3]);
    tusk_wire_shm_t d4;
    tusk_shm_ring_lend(r, s[3], 0, 4, &d4);
    tusk_shm_ring_put(r, s[3]);
    ck_assert_ptr_null(tusk_shm_ring_take(r)); /* all four busy */
    tusk_shm_map_t *after = open_map(&d4);
    tusk_shm_map_seen(after, 4);
    /* Buffers 2 and 3 were link 0's only: free now; buffer 1 is still
     * link 1's; buffer 4 is the successor's. */
    ck_assert_uint_eq(tusk_shm_ring_busy(r), 4); /* reclaimed on the next take */
    uint8_t *a = tusk_shm_ring_take(r), *b = tusk_shm_ring_take(r);
    ck_assert(a && b && a != b);
    ck_assert((a == s[1] || a == s[2]) && (b == s[1] || b == s[2]));
    ck_assert_ptr_null(tusk_shm_ring_take(r));
    uint8_t *v;
    tusk_error_t err;
    tusk_shm_map_t *one = open_map(&d[3]);
    ck_assert_int_eq(tusk_shm_map_slot(one, &d[3], 64, &v, &err), TUSK_OK);
    tusk_shm_map_release(v, one);
    ck_assert_ptr_eq(tusk_shm_ring_take(r), s[0]);
    /* A new run: everything free but what the sender holds. */
    tusk_shm_ring_reset(r);
    ck_assert_uint_eq(tusk_shm_ring_busy(r), 3); /* a, b and s[0] are held */
    tusk_shm_ring_put(r, a);
    tusk_shm_ring_put(r, b);
    tusk_shm_ring_put(r, s[0]);
    ck_assert_uint_eq(tusk_shm_ring_busy(r), 0);
    tusk_shm_map_close(&before);
    tusk_shm_map_close(&after);
    tusk_shm_map_close(&one);
    tusk_shm_ring_destroy(&r);
}
END_TEST

START_TEST(drop_link_frees_its_slots)
{
    tusk_shm_ring_t *r = new_ring(64, 2, 2);
    tusk_wire_shm_t d;
    uint8_t *s0 = tusk_shm_ring_take(r), *s1 = tusk_shm_ring_take(r);
    tusk_shm_ring_lend(r, s0, 1, 1, &d);
    tusk_shm_ring_lend(r, s1, 1, 2, &d);
    tusk_shm_ring_lend(r, s1, 0, 1, &d);
    tusk_shm_ring_put(r, s0);
    tusk_shm_ring_put(r, s1);
    ck_assert_ptr_null(tusk_shm_ring_take(r));
    tusk_shm_ring_drop_link(r, 1);
    ck_assert_ptr_eq(tusk_shm_ring_take(r), s0);
    ck_assert_ptr_null(tusk_shm_ring_take(r)); /* s1 is still link 0's */
    tusk_shm_ring_unlend(r, s1, 0);
    ck_assert_ptr_eq(tusk_shm_ring_take(r), s1);
    tusk_shm_ring_destroy(&r);
}
END_TEST

static void open_fails(const tusk_wire_shm_t *d, int code, const char *needle)
{
    tusk_shm_map_t *m = NULL;
    tusk_error_t err;
    ck_assert_int_eq(tusk_shm_map_open(&m, d, &err), code);
    ck_assert_ptr_null(m);
    tu_assert_error(&err, code, needle);
}

START_TEST(map_refusals)
{
    tusk_error_t err;
    tusk_shm_ring_t *r = NULL;
    ck_assert_int_eq(tusk_shm_ring_new(&r, 64, 0, 1, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "1 to 65536 slots, 1 to 64 links");
    ck_assert_int_eq(tusk_shm_ring_new(&r, 64, 2, 65, &err), TUSK_EINVAL);
    ck_assert_ptr_null(r);
    r = new_ring(100, 3, 2);
    uint8_t *s = tusk_shm_ring_take(r);
    tusk_wire_shm_t d, bad;
    tusk_shm_ring_lend(r, s, 1, 1, &d);
    bad = d;
    bad.nonce ^= 1;
    open_fails(&bad, TUSK_EINVAL, "not the ring the descriptor names");
    bad = d;
    bad.fd = 999999;
    open_fails(&bad, TUSK_EIO, "/fd/999999: No such file or directory");
    /* A file of ours that is no ring, private, then open to others. */
    char *path = tu_temp_path();
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    ck_assert_int_ge(fd, 0);
    uint8_t junk[8192];
    tu_fill(junk, sizeof junk);
    ck_assert_int_eq(write(fd, junk, sizeof junk), (ssize_t)sizeof junk);
    ck_assert_int_eq(fchmod(fd, 0600), 0);
    bad = d;
    bad.fd = (uint32_t)fd;
    open_fails(&bad, TUSK_EINVAL, "not the ring the descriptor names");
    ck_assert_int_eq(fchmod(fd, 0644), 0);
    open_fails(&bad, TUSK_EINVAL, "not a private file of ours");
    ck_assert_int_eq(ftruncate(fd, 10), 0);
    ck_assert_int_eq(fchmod(fd, 0600), 0);
    open_fails(&bad, TUSK_EINVAL, "no header (10 bytes)");
    close(fd);
    unlink(path);
    free(path);
    /* Slots, sizes and links outside the ring. */
    tusk_shm_map_t *m = open_map(&d);
    uint8_t *v;
    bad = d;
    bad.slot = 3;
    ck_assert_int_eq(tusk_shm_map_slot(m, &bad, 10, &v, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "slot 3 of link 1 holding 10 bytes: the ring has 3 slots of 128 bytes");
    ck_assert_int_eq(tusk_shm_map_slot(m, &d, 129, &v, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "holding 129 bytes");
    bad = d;
    bad.link = 0;
    ck_assert_int_eq(tusk_shm_map_slot(m, &bad, 10, &v, &err), TUSK_EINVAL);
    tu_assert_error(&err, TUSK_EINVAL, "this receiver is link 1");
    ck_assert_int_eq(tusk_shm_map_slot(m, &d, 128, &v, &err), TUSK_OK);
    bad = d;
    bad.link = 2;
    open_fails(&bad, TUSK_EINVAL, "inconsistent header (3 slots of 128 bytes, 2 links");
    tusk_shm_map_close(&m);
    tusk_shm_ring_destroy(&r);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("shm");
    TCase *tc = tcase_create("ring");
    tcase_add_test(tc, slot_round_trip);
    tcase_add_test(tc, slot_in_another_process);
    tcase_add_test(tc, random_against_model);
    tcase_add_test(tc, restart_gives_back_the_predecessors_slots);
    tcase_add_test(tc, drop_link_frees_its_slots);
    tcase_add_test(tc, map_refusals);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
