/* sts_batch.c - modules in memory, and the results of a run
 * (tusk/sts.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "sts_private.h"

typedef struct entry {
    sts_module_t m;           /* digi unused: keys + first */
    size_t first;
} entry_t;

struct sts_batch {
    entry_t *mod;
    size_t n, cap;
    uint64_t *keys;
    size_t n_keys, cap_keys;
};

sts_batch_t *sts_batch_new(void)
{
    return calloc(1, sizeof(sts_batch_t));
}

void sts_batch_destroy(sts_batch_t **b)
{
    if (!b || !*b)
        return;
    free((*b)->mod);
    free((*b)->keys);
    free(*b);
    *b = NULL;
}

void sts_batch_clear(sts_batch_t *b)
{
    b->n = 0;
    b->n_keys = 0;
}

int sts_batch_add_room(sts_batch_t *b, const sts_module_t *m, uint64_t **keys, tusk_error_t *err)
{
    size_t n = m->hdr.n_digis;
    if (tusk_grow(&b->mod, &b->cap, b->n + 1, sizeof *b->mod) != 0 ||
        tusk_grow(&b->keys, &b->cap_keys, b->n_keys + n + 1, sizeof *b->keys) != 0)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory (module %u, %zu digis)", (unsigned)m->hdr.module, n);
    entry_t *e = &b->mod[b->n++];
    e->m = *m;
    e->m.hdr.raw = NULL;
    e->m.digi = NULL;
    e->first = b->n_keys;
    *keys = b->keys + b->n_keys;
    b->n_keys += n;
    return TUSK_OK;
}

int sts_batch_add(sts_batch_t *b, const sts_module_t *m, tusk_error_t *err)
{
    adf_error_t e;
    if (adf_sts_digis_check(&m->hdr, m->digi, &e) != ADF_OK)
        return tusk_error_set(err, e.code == ADF_ENOMEM ? TUSK_ENOMEM : TUSK_EINVAL, "timeslice %u: %s",
                              (unsigned)m->timeslice, e.message);
    uint64_t *keys;
    int st = sts_batch_add_room(b, m, &keys, err);
    if (st == TUSK_OK && m->hdr.n_digis)
        memcpy(keys, m->digi, m->hdr.n_digis * sizeof *keys);
    return st;
}

size_t sts_batch_count(const sts_batch_t *b)
{
    return b->n;
}

uint64_t sts_batch_digis(const sts_batch_t *b)
{
    return b->n_keys;
}

void sts_batch_module(const sts_batch_t *b, size_t i, sts_module_t *m)
{
    *m = b->mod[i].m;
    m->digi = b->keys + b->mod[i].first;
}

/* ---- results ---------------------------------------------------------------------------- */

sts_result_t *sts_result_new(void)
{
    return calloc(1, sizeof(sts_result_t));
}

void sts_result_destroy(sts_result_t **res)
{
    if (!res || !*res)
        return;
    sts_result_t *r = *res;
    for (unsigned c = 0; c < r->cap_chunks; c++) {
        free(r->chunk[c].c);
        free(r->chunk[c].h);
    }
    free(r->chunk);
    free(r->mod);
    free(r);
    *res = NULL;
}

int sts_result_reset(sts_result_t *r, size_t n_modules, unsigned n_chunks, tusk_error_t *err)
{
    if (tusk_grow(&r->mod, &r->cap_mod, n_modules, sizeof *r->mod) != 0)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory (results of %zu modules)", n_modules);
    if (n_chunks > r->cap_chunks) {
        sts_chunk_t *c = realloc(r->chunk, n_chunks * sizeof *c);
        if (!c)
            return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
        memset(c + r->cap_chunks, 0, (n_chunks - r->cap_chunks) * sizeof *c);
        r->chunk = c;
        r->cap_chunks = n_chunks;
    }
    r->n_mod = n_modules;
    if (n_modules)
        memset(r->mod, 0, n_modules * sizeof *r->mod);
    r->n_chunks = n_chunks;
    for (unsigned c = 0; c < n_chunks; c++)
        r->chunk[c].nc = r->chunk[c].nh = 0;
    return TUSK_OK;
}

int sts_chunk_room(sts_chunk_t *ch, size_t more_clusters, size_t more_hits)
{
    /* one more than asked: the arrays exist even when nothing is in them */
    if (tusk_grow(&ch->c, &ch->cap_c, ch->nc + more_clusters + 1, sizeof *ch->c) != 0 ||
        tusk_grow(&ch->h, &ch->cap_h, ch->nh + more_hits + 1, sizeof *ch->h) != 0)
        return -1;
    return 0;
}

size_t sts_result_modules(const sts_result_t *r)
{
    return r->n_mod;
}

void sts_result_counts(const sts_result_t *r, size_t i, uint32_t *n_front, uint32_t *n_back, uint32_t *n_hits)
{
    const sts_mod_res_t *m = &r->mod[i];
    if (n_front)
        *n_front = m->n_front;
    if (n_back)
        *n_back = m->n_back;
    if (n_hits)
        *n_hits = m->n_hits;
}

const sts_cluster_t *sts_result_clusters(const sts_result_t *r, size_t i)
{
    const sts_mod_res_t *m = &r->mod[i];
    return r->chunk[m->chunk].c ? r->chunk[m->chunk].c + m->c_off : NULL;
}

const sts_hit_t *sts_result_hits(const sts_result_t *r, size_t i)
{
    const sts_mod_res_t *m = &r->mod[i];
    return r->chunk[m->chunk].h ? r->chunk[m->chunk].h + m->h_off : NULL;
}

void sts_result_cluster(const sts_result_t *r, size_t i, uint32_t k, adf_sts_cluster_t *out)
{
    const sts_cluster_t *c = sts_result_clusters(r, i) + k;
    out->channel = (uint16_t)c->channel;
    out->size = (uint16_t)c->size;
    out->charge = c->charge;
    out->time = c->time;
    out->time_error = sqrtf(c->tvar);
    out->position = c->x;
    out->position_error = sqrtf(c->xvar);
}

void sts_result_hit(const sts_result_t *r, size_t i, uint32_t k, adf_sts_hit_t *out)
{
    const sts_hit_t *h = sts_result_hits(r, i) + k;
    out->x = h->x;
    out->y = h->y;
    out->z = h->z;
    out->sigma_x = sqrtf(h->xvar);
    out->sigma_y = sqrtf(h->yvar);
    out->cov_xy = h->xycov;
    out->time = h->t;
    out->time_error = sqrtf(h->tvar);
    out->front = h->front;
    out->back = h->back;
}

void sts_result_totals(const sts_result_t *r, uint64_t *clusters, uint64_t *hits)
{
    uint64_t c = 0, h = 0;
    for (size_t i = 0; i < r->n_mod; i++) {
        c += (uint64_t)r->mod[i].n_front + r->mod[i].n_back;
        h += r->mod[i].n_hits;
    }
    if (clusters)
        *clusters = c;
    if (hits)
        *hits = h;
}

bool sts_result_equal(const sts_result_t *a, const sts_result_t *b, char *why, size_t cap)
{
    if (a->n_mod != b->n_mod) {
        snprintf(why, cap, "%zu modules against %zu", a->n_mod, b->n_mod);
        return false;
    }
    for (size_t i = 0; i < a->n_mod; i++) {
        const sts_mod_res_t *x = &a->mod[i], *y = &b->mod[i];
        if (x->n_front != y->n_front || x->n_back != y->n_back || x->n_hits != y->n_hits) {
            snprintf(why, cap, "module %zu: %u + %u clusters and %u hits against %u + %u and %u", i,
                     (unsigned)x->n_front, (unsigned)x->n_back, (unsigned)x->n_hits, (unsigned)y->n_front,
                     (unsigned)y->n_back, (unsigned)y->n_hits);
            return false;
        }
        const sts_cluster_t *ca = sts_result_clusters(a, i), *cb = sts_result_clusters(b, i);
        for (uint32_t k = 0; k < x->n_front + x->n_back; k++)
            if (memcmp(&ca[k], &cb[k], sizeof ca[k]) != 0) {
                snprintf(why, cap,
                         "module %zu, cluster %u: channel %u size %u charge %u time %.9g x %.9g against channel %u "
                         "size %u charge %u time %.9g x %.9g",
                         i, (unsigned)k, (unsigned)ca[k].channel, (unsigned)ca[k].size, (unsigned)ca[k].charge,
                         (double)ca[k].time, (double)ca[k].x, (unsigned)cb[k].channel, (unsigned)cb[k].size,
                         (unsigned)cb[k].charge, (double)cb[k].time, (double)cb[k].x);
                return false;
            }
        const sts_hit_t *ha = sts_result_hits(a, i), *hb = sts_result_hits(b, i);
        for (uint32_t k = 0; k < x->n_hits; k++)
            if (memcmp(&ha[k], &hb[k], sizeof ha[k]) != 0) {
                snprintf(why, cap,
                         "module %zu, hit %u: clusters %u/%u at (%.9g, %.9g) against %u/%u at (%.9g, %.9g)", i,
                         (unsigned)k, (unsigned)ha[k].front, (unsigned)ha[k].back, (double)ha[k].x,
                         (double)ha[k].y, (unsigned)hb[k].front, (unsigned)hb[k].back, (double)hb[k].x,
                         (double)hb[k].y);
                return false;
            }
    }
    return true;
}
