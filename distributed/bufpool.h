/* bufpool.h - a pool of equal-sized buffers for zero-copy ZeroMQ sends.
 *
 * zmq frees a zero-copy message's buffer from its I/O thread, through a
 * zmq_free_fn: bufpool_release has that signature (the pool as hint) and
 * keeps the buffer for the next bufpool_take instead of freeing it, so a
 * steady stream allocates nothing. Used by tusk-actor and by the raw
 * libzmq benchmark, so both pay the same for their buffers. */
#ifndef TUSK_BUFPOOL_H
#define TUSK_BUFPOOL_H

#include <pthread.h>
#include <stddef.h>

typedef struct bufpool {
    pthread_mutex_t mu;
    void **free;
    size_t n, cap; /* buffers kept, and at most */
    size_t size;   /* bytes per buffer */
} bufpool_t;

/* An empty pool that keeps nothing (bufpool_fini is then safe). */
void bufpool_init(bufpool_t *p);
/* Buffers of `size` bytes, at most `cap` kept; -1 when out of memory. */
int bufpool_reserve(bufpool_t *p, size_t size, size_t cap);
/* A buffer of the pool's size (a kept one, or a new one; NULL: no memory). */
void *bufpool_take(bufpool_t *p);
/* Give a buffer back (zmq_free_fn: hint is the pool). */
void bufpool_release(void *data, void *hint);
/* Free every kept buffer. Call once no message holds a buffer. */
void bufpool_fini(bufpool_t *p);

#endif
