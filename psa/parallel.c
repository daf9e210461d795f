/* parallel.c - a parallel for over problems or crystals, for the fast
 * search and the preprocessing (see psa_private.h): `threads` stripes
 * (first, first + threads, ...), or contiguous blocks
 * (psa_parallel_blocks), run on a pool of threads (base/pool.h): the
 * engine's, which lives as long as it does, or one for the call. */
#include <unistd.h>

#include "base/pool.h"
#include "psa_private.h"

#define MAX_THREADS 256
#define BLOCKS_A_THREAD 4 /* psa_parallel_blocks on a pool */
#define BLOCK_MIN 16

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

/* Contiguous blocks of items, `count` of them over begin .. end - 1, in
 * order and of nearly equal sizes; run_blocks is psa_parallel's function
 * over the blocks: block k, k + step, ... < end as fn(ctx, lo, 1, hi). */
typedef struct blocks {
    psa_work_fn fn;
    void *ctx;
    size_t begin, count, end;   /* count blocks over begin .. end - 1 */
} blocks_t;

static void run_blocks(void *ctx, size_t first, size_t step, size_t end)
{
    const blocks_t *b = ctx;
    const size_t n = b->end - b->begin, q = n / b->count, r = n % b->count;
    for (size_t k = first; k < end; k += step) {
        const size_t lo = b->begin + q * k + (k < r ? k : r), hi = lo + q + (k < r);
        b->fn(b->ctx, lo, 1, hi);
    }
}

void psa_parallel_blocks(tusk_pool_t *given, size_t begin, size_t end, unsigned threads, psa_work_fn fn, void *ctx)
{
    if (end <= begin)
        return;
    const size_t n = end - begin;
    threads = psa_threads(threads, n);
    /* On a pool, BLOCKS_A_THREAD blocks a thread (of BLOCK_MIN items at
     * least), each an item of the pool's, which its threads take one by
     * one as they come: a thread that wakes late takes fewer. Otherwise
     * one block a thread. */
    size_t count = threads;
    if (given && threads > 1) {
        count = (size_t)threads * BLOCKS_A_THREAD;
        if (count > n / BLOCK_MIN)
            count = n / BLOCK_MIN > threads ? n / BLOCK_MIN : threads;
        if (count > MAX_THREADS)
            count = MAX_THREADS;
    }
    blocks_t b = {fn, ctx, begin, count, end};
    if (given && threads > 1)
        psa_parallel(given, 0, count, (unsigned)count, run_blocks, &b); /* one block a pool item */
    else
        psa_parallel(given, 0, count, threads, run_blocks, &b);
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
