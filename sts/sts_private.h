/* sts_private.h - what the files of libtusk-sts share (not installed). */
#ifndef TUSK_STS_PRIVATE_H
#define TUSK_STS_PRIVATE_H

#include "tusk/export.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/pool.h"
#include "base/rng.h"
#include "sts_shared.h"
#include "tusk/sts.h"

_Static_assert(STS_MAX_STRIPS == ADF_STS_MAX_STRIPS, "the frames and the algorithm agree on the strips");
_Static_assert((int)STS_REFERENCE == (int)ADF_STS_REFERENCE && (int)STS_FAST == (int)ADF_STS_FAST &&
                   (int)STS_OPENCL == (int)ADF_STS_OPENCL,
               "backend codes");

/* ---- results ---- */

/* Clusters and hits written by one thread (or one download). */
typedef struct sts_chunk {
    sts_cluster_t *c;
    size_t nc, cap_c;
    sts_hit_t *h;
    size_t nh, cap_h;
} sts_chunk_t;

/* Where module i's clusters and hits are. */
typedef struct sts_mod_res {
    uint32_t chunk;
    uint32_t n_front, n_back, n_hits;
    size_t c_off, h_off;
} sts_mod_res_t;

struct sts_result {
    sts_mod_res_t *mod;
    size_t n_mod, cap_mod;
    sts_chunk_t *chunk;
    unsigned n_chunks, cap_chunks;
};

/* Module entries for n modules and n_chunks empty chunks (capacity kept). */
int sts_result_reset(sts_result_t *res, size_t n_modules, unsigned n_chunks, tusk_error_t *err);
/* Room for `more` clusters / hits at the end of a chunk. */
int sts_chunk_room(sts_chunk_t *ch, size_t more_clusters, size_t more_hits);
const sts_cluster_t *sts_result_clusters(const sts_result_t *res, size_t i);
const sts_hit_t *sts_result_hits(const sts_result_t *res, size_t i);

/* ---- the settings and a module as the arithmetic uses them ---- */

TUSK_INTERNAL void sts_params_of(const sts_config_t *cfg, sts_params_t *p);
/* The module's geometry as floats (computed once, here, for every backend). */
void sts_dev_module_of(const sts_module_t *m, sts_dev_module_t *g);
/* The cluster sort's bucket shift for a timeslice of length_ns. */
uint32_t sts_bucket_shift(uint32_t length_ns);

/* ---- one module on the CPU (sts_module.c) ---- */

typedef struct sts_work {
    uint64_t *keys, *tmp;      /* the module's digis, sorted */
    size_t cap_keys;
    uint32_t *offsets;         /* STS_MAX_CHANNELS + 1: the channel offsets */
    uint32_t *conn;            /* connectors (parallel) */
    uint32_t *status;          /* STS_MAX_CHANNELS: the original finder's status array */
    size_t cap_conn;
    sts_cluster_t *cl;         /* the module's clusters, in head-digi order */
    sts_cluster_t *cl2;        /* room to reorder them */
    uint64_t *head;            /* the original finder: each cluster's first digi */
    uint64_t *ckeys, *ctmp;    /* cluster sort keys: tkey << 32 | cluster index */
    size_t cap_cl;
    uint32_t *order;           /* the original finder's clusters, in head-digi order */
    size_t cap_order;
} sts_work_t;

TUSK_INTERNAL void sts_work_free(sts_work_t *w);

/* The parallel algorithm (spec §4.3 steps 1-6) on one module: its
 * clusters and hits appended to ch, r filled (but r->chunk). */
int sts_par_module(sts_work_t *w, const sts_params_t *p, const sts_module_t *m, sts_chunk_t *ch, sts_mod_res_t *r);
/* The original status-array finder (spec §4.3 "Reference") on one
 * module, then the same cluster sort and hit finder. */
int sts_orig_module(sts_work_t *w, const sts_params_t *p, const sts_module_t *m, sts_chunk_t *ch, sts_mod_res_t *r);

/* The clusters only (the analysis compares the two finders): into w->cl,
 * *n clusters, *n_front of them on the front side, in head-digi order. */
TUSK_INTERNAL int sts_par_clusters(sts_work_t *w, const sts_params_t *p, const sts_module_t *m, size_t *n,
                                   size_t *n_front);
TUSK_INTERNAL int sts_orig_clusters(sts_work_t *w, const sts_params_t *p, const sts_module_t *m, size_t *n,
                                    size_t *n_front);

/* Threads: base/pool.h; random numbers: base/rng.h. */

/* The kernels' source, compiled into the library (Makefile.am's STS_KERNEL_PARTS, by
 * tools/embed-text.sh); exported for the tests that build on it. */
TUSK_INTERNAL extern const char tusk_sts_kernel_source[];
TUSK_INTERNAL extern const unsigned long tusk_sts_kernel_source_size;

#endif
