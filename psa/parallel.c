/* parallel.c - a parallel for over problems or crystals, for the fast
 * search and the preprocessing (see psa_private.h): `threads` stripes
 * (first, first + threads, ...) run on a pool of threads (base/pool.h):
 * the engine's, which lives as long as it does, or one for the call. */
#include <unistd.h>

#include "base/pool.h"
#include "psa_private.h"

#define MAX_THREADS 256

typedef struct stripes {
    psa_work_fn fn;
    void *ctx;
    size_t begin, step, end;
} stripes_t;

static void stripe(void *ctx, size_t k, unsigned thread)
{
    (void)thread;
    const stripes_t *s = ctx;
    s->fn(s->ctx, s->begin + k, s->step, s->end);
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

void psa_parallel(tusk_pool_t *given, size_t begin, size_t end, unsigned threads, psa_work_fn fn, void *ctx)
{
    if (end <= begin)
        return;
    threads = psa_threads(threads, end - begin);
    stripes_t s = {fn, ctx, begin, threads, end};
    if (threads > 1 && given) {
        tusk_pool_run(given, threads, stripe, &s);
        return;
    }
    tusk_pool_t *pool = NULL;
    if (threads > 1 && tusk_pool_new(&pool, threads, NULL) == TUSK_OK) {
        tusk_pool_run(pool, threads, stripe, &s);
        tusk_pool_destroy(&pool);
        return;
    }
    /* One thread, or none could be started: every stripe here. */
    for (unsigned k = 0; k < threads; k++)
        stripe(&s, k, 0);
}
