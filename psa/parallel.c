/* parallel.c - a parallel for over problems or crystals, for the fast
 * search and the preprocessing (see psa_private.h). */
#include <pthread.h>
#include <unistd.h>

#include "psa_private.h"

#define MAX_THREADS 256

typedef struct worker {
    psa_work_fn fn;
    void *ctx;
    size_t first, step, end;
} worker_t;

static void *run(void *arg)
{
    worker_t *w = arg;
    w->fn(w->ctx, w->first, w->step, w->end);
    return NULL;
}

unsigned psa_threads(unsigned threads, size_t items)
{
    if (threads == 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        threads = n > 0 ? (unsigned)n : 1;
    }
    if (threads > MAX_THREADS)
        threads = MAX_THREADS;
    if (threads > items)
        threads = items ? (unsigned)items : 1;
    return threads;
}

void psa_parallel(size_t begin, size_t end, unsigned threads, psa_work_fn fn, void *ctx)
{
    if (end <= begin)
        return;
    threads = psa_threads(threads, end - begin);
    worker_t w[MAX_THREADS];
    pthread_t tid[MAX_THREADS];
    unsigned started = 0;
    for (unsigned k = 0; k < threads; k++)
        w[k] = (worker_t){fn, ctx, begin + k, threads, end};
    for (unsigned k = 1; k < threads; k++) {
        if (pthread_create(&tid[k], NULL, run, &w[k]) != 0)
            break;
        started = k;
    }
    /* Whatever did not get a thread of its own runs here. */
    for (unsigned k = started + 1; k < threads; k++)
        run(&w[k]);
    run(&w[0]);
    for (unsigned k = 1; k <= started; k++)
        pthread_join(tid[k], NULL);
}
