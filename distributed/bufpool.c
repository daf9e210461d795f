/* bufpool.c - equal-sized buffers recycled across zmq's I/O thread. */
#include <stdlib.h>

#include "bufpool.h"

void bufpool_init(bufpool_t *p)
{
    pthread_mutex_init(&p->mu, NULL);
    p->free = NULL;
    p->n = p->cap = p->size = 0;
}

int bufpool_reserve(bufpool_t *p, size_t size, size_t cap)
{
    void **slots = calloc(cap ? cap : 1, sizeof *slots);
    if (!slots)
        return -1;
    pthread_mutex_lock(&p->mu);
    for (size_t i = 0; i < p->n; i++)
        free(p->free[i]);
    free(p->free);
    p->free = slots;
    p->n = 0;
    p->cap = cap;
    p->size = size;
    pthread_mutex_unlock(&p->mu);
    return 0;
}

void *bufpool_take(bufpool_t *p)
{
    void *b = NULL;
    pthread_mutex_lock(&p->mu);
    if (p->n)
        b = p->free[--p->n];
    pthread_mutex_unlock(&p->mu);
    return b ? b : malloc(p->size);
}

void bufpool_release(void *data, void *hint)
{
    bufpool_t *p = hint;
    pthread_mutex_lock(&p->mu);
    if (p->n < p->cap)
        p->free[p->n++] = data;
    else
        free(data);
    pthread_mutex_unlock(&p->mu);
}

void bufpool_fini(bufpool_t *p)
{
    for (size_t i = 0; i < p->n; i++)
        free(p->free[i]);
    free(p->free);
    p->free = NULL;
    p->n = p->cap = 0;
    pthread_mutex_destroy(&p->mu);
}
