/* pool.c - a pool of threads over the items of a job (see pool.h). */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/pool.h"

#define MAX_THREADS 1024

struct tusk_pool {
    unsigned n;               /* threads, the caller's included */
    pthread_t *th;
    unsigned started;
    pthread_mutex_t mu;
    pthread_cond_t go, done;
    uint64_t generation;
    bool quit;
    unsigned active;          /* workers still on the current job */
    tusk_pool_fn fn;
    void *ctx;
    size_t items;
    atomic_size_t next;
};

typedef struct worker_arg {
    tusk_pool_t *pool;
    unsigned index;
} worker_arg_t;

static void work(tusk_pool_t *p, unsigned index)
{
    size_t i;
    while ((i = atomic_fetch_add(&p->next, 1)) < p->items)
        p->fn(p->ctx, i, index);
}

static void *worker(void *arg)
{
    worker_arg_t a = *(worker_arg_t *)arg;
    free(arg);
    tusk_pool_t *p = a.pool;
    uint64_t seen = 0;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        while (p->generation == seen && !p->quit)
            pthread_cond_wait(&p->go, &p->mu);
        if (p->quit) {
            pthread_mutex_unlock(&p->mu);
            return NULL;
        }
        seen = p->generation;
        pthread_mutex_unlock(&p->mu);
        work(p, a.index);
        pthread_mutex_lock(&p->mu);
        if (--p->active == 0)
            pthread_cond_signal(&p->done);
        pthread_mutex_unlock(&p->mu);
    }
}

int tusk_pool_new(tusk_pool_t **out, unsigned threads, tusk_error_t *err)
{
    *out = NULL;
    if (threads == 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        threads = n > 0 ? (unsigned)n : 1;
    }
    if (threads > MAX_THREADS)
        threads = MAX_THREADS;
    tusk_pool_t *p = calloc(1, sizeof *p);
    if (!p || !(p->th = calloc(threads, sizeof *p->th))) {
        free(p);
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    }
    p->n = threads;
    atomic_init(&p->next, 0);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->go, NULL);
    pthread_cond_init(&p->done, NULL);
    for (unsigned k = 1; k < threads; k++) {
        worker_arg_t *a = malloc(sizeof *a);
        if (a) {
            a->pool = p;
            a->index = k;
        }
        if (!a || pthread_create(&p->th[k], NULL, worker, a) != 0) {
            free(a);
            tusk_pool_destroy(&p);
            return tusk_error_set(err, TUSK_ENOMEM, "cannot start thread %u of %u", k + 1, threads);
        }
        p->started = k;
    }
    *out = p;
    return TUSK_OK;
}

void tusk_pool_destroy(tusk_pool_t **pool)
{
    if (!pool || !*pool)
        return;
    tusk_pool_t *p = *pool;
    pthread_mutex_lock(&p->mu);
    p->quit = true;
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->mu);
    for (unsigned k = 1; k <= p->started; k++)
        pthread_join(p->th[k], NULL);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->go);
    pthread_cond_destroy(&p->done);
    free(p->th);
    free(p);
    *pool = NULL;
}

unsigned tusk_pool_threads(const tusk_pool_t *pool)
{
    return pool->n;
}

void tusk_pool_run(tusk_pool_t *p, size_t n, tusk_pool_fn fn, void *ctx)
{
    if (p->n == 1 || n <= 1) {
        for (size_t i = 0; i < n; i++)
            fn(ctx, i, 0);
        return;
    }
    pthread_mutex_lock(&p->mu);
    p->fn = fn;
    p->ctx = ctx;
    p->items = n;
    atomic_store(&p->next, 0);
    p->active = p->n - 1;
    p->generation++;
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->mu);
    work(p, 0);
    pthread_mutex_lock(&p->mu);
    while (p->active > 0)
        pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
}
