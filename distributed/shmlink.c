/* shmlink.c - a sender's ring of slots in a memfd, and a receiver's map
 * of it (see shmlink.h).
 *
 * The ring, little-endian, decoded field by field by the receiver:
 *
 *   0  8 bytes magic "TUSKSHM1"     24 u64 nonce (random)
 *   8  u32 version (1)              32 u64 offset of slot 0 (a page multiple)
 *  12  u32 slots                    40 .. 63 reserved (0)
 *  16  u32 stride (bytes a slot, a multiple of 64)
 *  20  u32 links
 *  64  slots x u64: the slots' words, a bit per link (atomic)
 *      then 64 x u64: per link, the first buffer number the receiver's
 *      current incarnation saw this run (atomic; 0: none yet)
 *  then the slots.
 */
#define _GNU_SOURCE /* memfd_create */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/bytes.h"
#include "shmlink.h"

#if ATOMIC_LLONG_LOCK_FREE != 2
#error "shared-memory links need lock-free 64-bit atomics"
#endif

#define RING_MAGIC "TUSKSHM1"
#define RING_VERSION 1u
#define RING_HEADER 64u
#define RING_MAX_SLOTS 65536u
#define PAGE 4096u

typedef _Atomic uint64_t word_t;

struct tusk_shm_ring {
    int fd;
    uint8_t *base;
    size_t size;
    uint32_t slots, stride, links, pid;
    uint64_t nonce;
    word_t *words, *firsts;
    uint8_t *data;
    bool *held;    /* the sender holds it (taken, not yet put) */
    uint64_t *seq; /* slots x links: the number it went as on each link */
    uint32_t cursor;
};

struct tusk_shm_map {
    uint8_t *base;
    size_t size;
    uint32_t slots, stride, links, pid, fd, link;
    uint64_t nonce;
    word_t *words, *firsts;
    uint8_t *data;
    bool seen; /* this run's first number told */
};

static size_t data_offset(uint32_t slots)
{
    size_t end = RING_HEADER + sizeof(uint64_t) * ((size_t)slots + TUSK_SHM_MAX_LINKS);
    return (end + PAGE - 1) / PAGE * PAGE;
}

int tusk_shm_ring_new(tusk_shm_ring_t **out, uint32_t slot_size, uint32_t slots, unsigned links, tusk_error_t *err)
{
    *out = NULL;
    if (slots == 0 || slots > RING_MAX_SLOTS || links == 0 || links > TUSK_SHM_MAX_LINKS || slot_size == 0 ||
        slot_size > UINT32_MAX - 63)
        return tusk_error_set(err, TUSK_EINVAL, "shared-memory ring of %u slots of %u bytes for %u links: "
                              "1 to %u slots, 1 to %u links",
                              (unsigned)slots, (unsigned)slot_size, links, RING_MAX_SLOTS, TUSK_SHM_MAX_LINKS);
    tusk_shm_ring_t *r = calloc(1, sizeof *r);
    if (!r)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    r->fd = -1;
    r->slots = slots;
    r->links = links;
    r->stride = (slot_size + 63u) / 64u * 64u;
    r->pid = (uint32_t)getpid();
    r->size = data_offset(slots) + (size_t)slots * r->stride;
    r->held = calloc(slots, sizeof *r->held);
    r->seq = calloc((size_t)slots * links, sizeof *r->seq);
    int rc = TUSK_OK;
    if (!r->held || !r->seq) {
        rc = tusk_error_set(err, TUSK_ENOMEM, "out of memory");
        goto fail;
    }
    if (getrandom(&r->nonce, sizeof r->nonce, 0) != (ssize_t)sizeof r->nonce) {
        rc = tusk_error_set(err, TUSK_EIO, "shared-memory ring: no random nonce: %s", strerror(errno));
        goto fail;
    }
    r->fd = memfd_create("tusk-shm", MFD_CLOEXEC);
    if (r->fd < 0 || fchmod(r->fd, 0600) != 0 || ftruncate(r->fd, (off_t)r->size) != 0) {
        rc = tusk_error_set(err, TUSK_EIO, "shared-memory ring of %zu bytes: %s", r->size, strerror(errno));
        goto fail;
    }
    r->base = mmap(NULL, r->size, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
    if (r->base == MAP_FAILED) {
        r->base = NULL;
        rc = tusk_error_set(err, TUSK_EIO, "shared-memory ring of %zu bytes: mmap: %s", r->size, strerror(errno));
        goto fail;
    }
    uint8_t *h = r->base; /* a fresh memfd reads as zeros: every word is 0 */
    memcpy(h, RING_MAGIC, 8);
    tusk_put_u32(h + 8, RING_VERSION);
    tusk_put_u32(h + 12, slots);
    tusk_put_u32(h + 16, r->stride);
    tusk_put_u32(h + 20, links);
    tusk_put_u64(h + 24, r->nonce);
    tusk_put_u64(h + 32, data_offset(slots));
    r->words = (word_t *)(void *)(h + RING_HEADER);
    r->firsts = r->words + slots;
    r->data = h + data_offset(slots);
    *out = r;
    return TUSK_OK;
fail:
    tusk_shm_ring_destroy(&r);
    return rc;
}

void tusk_shm_ring_destroy(tusk_shm_ring_t **ring)
{
    tusk_shm_ring_t *r = *ring;
    if (!r)
        return;
    if (r->base)
        munmap(r->base, r->size);
    if (r->fd >= 0)
        close(r->fd);
    free(r->held);
    free(r->seq);
    free(r);
    *ring = NULL;
}

static uint32_t slot_of(const tusk_shm_ring_t *r, const void *data)
{
    return (uint32_t)(((const uint8_t *)data - r->data) / r->stride);
}

bool tusk_shm_ring_owns(const tusk_shm_ring_t *r, const void *data)
{
    const uint8_t *p = data;
    return r && p >= r->data && p < r->data + (size_t)r->slots * r->stride && (size_t)(p - r->data) % r->stride == 0;
}

/* Bits of receivers that restarted since the slot went to them: their
 * predecessors are gone, and the link delivers in order. */
static void reclaim(tusk_shm_ring_t *r, uint32_t i)
{
    uint64_t w = atomic_load_explicit(&r->words[i], memory_order_acquire);
    for (unsigned b = 0; w && b < r->links; b++) {
        if (!(w & (1ull << b)))
            continue;
        uint64_t first = atomic_load_explicit(&r->firsts[b], memory_order_acquire);
        if (first && r->seq[(size_t)i * r->links + b] < first)
            atomic_fetch_and_explicit(&r->words[i], ~(1ull << b), memory_order_acq_rel);
    }
}

uint8_t *tusk_shm_ring_take(tusk_shm_ring_t *r)
{
    for (int pass = 0; pass < 2; pass++)
        for (uint32_t n = 0; n < r->slots; n++) {
            uint32_t i = (r->cursor + n) % r->slots;
            if (r->held[i])
                continue;
            if (pass == 1)
                reclaim(r, i);
            /* acquire: the receiver's reads of the slot came before its
             * release, so the writes that follow cannot overtake them */
            if (atomic_load_explicit(&r->words[i], memory_order_acquire) == 0) {
                r->held[i] = true;
                r->cursor = (i + 1) % r->slots;
                return r->data + (size_t)i * r->stride;
            }
        }
    return NULL;
}

void tusk_shm_ring_put(tusk_shm_ring_t *r, const void *data)
{
    r->held[slot_of(r, data)] = false;
}

void tusk_shm_ring_lend(tusk_shm_ring_t *r, const void *data, unsigned link, uint64_t seq, tusk_wire_shm_t *desc)
{
    uint32_t i = slot_of(r, data);
    r->seq[(size_t)i * r->links + link] = seq;
    /* release: the buffer's bytes are written before the receiver can
     * see the bit (and the descriptor, which follows over a socket) */
    atomic_fetch_or_explicit(&r->words[i], 1ull << link, memory_order_release);
    *desc = (tusk_wire_shm_t){.pid = r->pid, .fd = (uint32_t)r->fd, .slot = i, .link = link, .nonce = r->nonce};
}

void tusk_shm_ring_unlend(tusk_shm_ring_t *r, const void *data, unsigned link)
{
    atomic_fetch_and_explicit(&r->words[slot_of(r, data)], ~(1ull << link), memory_order_acq_rel);
}

void tusk_shm_ring_drop_link(tusk_shm_ring_t *r, unsigned link)
{
    if (link >= r->links)
        return;
    for (uint32_t i = 0; i < r->slots; i++)
        atomic_fetch_and_explicit(&r->words[i], ~(1ull << link), memory_order_acq_rel);
}

void tusk_shm_ring_reset(tusk_shm_ring_t *r)
{
    for (uint32_t i = 0; i < r->slots; i++)
        atomic_store_explicit(&r->words[i], 0, memory_order_release);
    for (unsigned b = 0; b < TUSK_SHM_MAX_LINKS; b++)
        atomic_store_explicit(&r->firsts[b], 0, memory_order_release);
}

uint32_t tusk_shm_ring_lent(tusk_shm_ring_t *r, unsigned link)
{
    uint32_t lent = 0;
    for (uint32_t i = 0; i < r->slots; i++)
        if (atomic_load_explicit(&r->words[i], memory_order_relaxed) & (1ull << link)) {
            reclaim(r, i);
            lent += (atomic_load_explicit(&r->words[i], memory_order_relaxed) >> link) & 1u;
        }
    return lent;
}

uint32_t tusk_shm_ring_busy(tusk_shm_ring_t *r)
{
    uint32_t busy = 0;
    for (uint32_t i = 0; i < r->slots; i++)
        busy += r->held[i] || atomic_load_explicit(&r->words[i], memory_order_acquire) != 0;
    return busy;
}

uint32_t tusk_shm_ring_slots(const tusk_shm_ring_t *r)
{
    return r->slots;
}

uint32_t tusk_shm_ring_slot_size(const tusk_shm_ring_t *r)
{
    return r->stride;
}

/* ---- the receiver's map ---------------------------------------------------------- */

int tusk_shm_map_open(tusk_shm_map_t **out, const tusk_wire_shm_t *d, tusk_error_t *err)
{
    *out = NULL;
    char path[64];
    snprintf(path, sizeof path, "/proc/%u/fd/%u", (unsigned)d->pid, (unsigned)d->fd);
    /* A magic link to the sender's memfd, opened as such: only a process
     * of our user may; what it is is checked below. */
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return tusk_error_set(err, TUSK_EIO, "shared-memory ring %s: %s", path, strerror(errno));
    struct stat st;
    uint8_t h[RING_HEADER];
    int rc = TUSK_OK;
    if (fstat(fd, &st) != 0) {
        rc = tusk_error_set(err, TUSK_EIO, "shared-memory ring %s: %s", path, strerror(errno));
        goto done;
    }
    if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077) != 0) {
        rc = tusk_error_set(err, TUSK_EINVAL, "shared-memory ring %s: not a private file of ours (mode %o, owner %ld)",
                            path, (unsigned)st.st_mode, (long)st.st_uid);
        goto done;
    }
    if (st.st_size < (off_t)RING_HEADER || pread(fd, h, sizeof h, 0) != (ssize_t)sizeof h) {
        rc = tusk_error_set(err, TUSK_EINVAL, "shared-memory ring %s: no header (%lld bytes)", path,
                            (long long)st.st_size);
        goto done;
    }
    uint32_t slots = tusk_get_u32(h + 12), stride = tusk_get_u32(h + 16), links = tusk_get_u32(h + 20);
    uint64_t nonce = tusk_get_u64(h + 24), offset = tusk_get_u64(h + 32);
    if (memcmp(h, RING_MAGIC, 8) != 0 || tusk_get_u32(h + 8) != RING_VERSION || nonce != d->nonce) {
        rc = tusk_error_set(err, TUSK_EINVAL, "shared-memory ring %s: not the ring the descriptor names", path);
        goto done;
    }
    if (slots == 0 || slots > RING_MAX_SLOTS || links == 0 || links > TUSK_SHM_MAX_LINKS || stride == 0 ||
        stride % 64 != 0 || offset != data_offset(slots) || d->link >= links ||
        (uint64_t)st.st_size != offset + (uint64_t)slots * stride) {
        rc = tusk_error_set(err, TUSK_EINVAL, "shared-memory ring %s: inconsistent header (%u slots of %u bytes, "
                            "%u links, %lld bytes)", path, (unsigned)slots, (unsigned)stride, (unsigned)links,
                            (long long)st.st_size);
        goto done;
    }
    tusk_shm_map_t *m = calloc(1, sizeof *m);
    if (!m) {
        rc = tusk_error_set(err, TUSK_ENOMEM, "out of memory");
        goto done;
    }
    m->size = (size_t)st.st_size;
    m->base = mmap(NULL, m->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m->base == MAP_FAILED) {
        rc = tusk_error_set(err, TUSK_EIO, "shared-memory ring %s: mmap: %s", path, strerror(errno));
        free(m);
        goto done;
    }
    m->slots = slots;
    m->stride = stride;
    m->links = links;
    m->pid = d->pid;
    m->fd = d->fd;
    m->link = d->link;
    m->nonce = nonce;
    m->words = (word_t *)(void *)(m->base + RING_HEADER);
    m->firsts = m->words + slots;
    m->data = m->base + offset;
    *out = m;
done:
    close(fd); /* the mapping stays */
    return rc;
}

void tusk_shm_map_close(tusk_shm_map_t **map)
{
    tusk_shm_map_t *m = *map;
    if (!m)
        return;
    munmap(m->base, m->size);
    free(m);
    *map = NULL;
}

bool tusk_shm_map_is(const tusk_shm_map_t *m, const tusk_wire_shm_t *d)
{
    return m->pid == d->pid && m->fd == d->fd && m->nonce == d->nonce;
}

int tusk_shm_map_slot(tusk_shm_map_t *m, const tusk_wire_shm_t *d, uint32_t size, uint8_t **data, tusk_error_t *err)
{
    if (d->slot >= m->slots || d->link != m->link || size > m->stride)
        return tusk_error_set(err, TUSK_EINVAL, "shared-memory slot %u of link %u holding %u bytes: the ring has %u "
                              "slots of %u bytes, and this receiver is link %u",
                              (unsigned)d->slot, (unsigned)d->link, (unsigned)size, (unsigned)m->slots,
                              (unsigned)m->stride, (unsigned)m->link);
    *data = m->data + (size_t)d->slot * m->stride;
    return TUSK_OK;
}

void tusk_shm_map_seen(tusk_shm_map_t *m, uint64_t seq)
{
    if (m->seen)
        return;
    m->seen = true;
    atomic_store_explicit(&m->firsts[m->link], seq, memory_order_release);
}

void tusk_shm_map_new_run(tusk_shm_map_t *m)
{
    m->seen = false;
}

void tusk_shm_map_release(void *data, void *hint)
{
    tusk_shm_map_t *m = hint;
    uint32_t i = (uint32_t)(((uint8_t *)data - m->data) / m->stride);
    /* release: our reads of the slot come before the sender's next writes */
    atomic_fetch_and_explicit(&m->words[i], ~(1ull << m->link), memory_order_release);
}
