/* pool.h - a pool of threads over the items of a job (internal).
 *
 * The threads start once (tusk_pool_new) and wait between jobs, so a job
 * per buffer costs no thread creation. tusk_pool_run calls fn(ctx, i,
 * thread) for every i in [0, n), handing items out in order, by an atomic
 * counter, to whichever thread is free; the caller's thread works too
 * (thread 0). It returns when all are done. One job at a time per pool. */
#ifndef TUSK_BASE_POOL_H
#define TUSK_BASE_POOL_H

#include "tusk/export.h"

#include <stddef.h>

#include "tusk/error.h"

typedef struct tusk_pool tusk_pool_t;
typedef void (*tusk_pool_fn)(void *ctx, size_t item, unsigned thread);

/* threads 0: one per online CPU; the caller's thread is one of them. */
TUSK_INTERNAL int tusk_pool_new(tusk_pool_t **out, unsigned threads, tusk_error_t *err);
TUSK_INTERNAL void tusk_pool_destroy(tusk_pool_t **pool);
TUSK_INTERNAL unsigned tusk_pool_threads(const tusk_pool_t *pool);
TUSK_INTERNAL void tusk_pool_run(tusk_pool_t *pool, size_t n, tusk_pool_fn fn, void *ctx);

#endif
