/* ut_batch.c - events in memory (the arrays a launch uploads), the
 * decoded hits of a batch, and the results (tusk/ut.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "ut_private.h"

ut_batch_t *ut_batch_new(void)
{
    return calloc(1, sizeof(ut_batch_t));
}

void ut_batch_destroy(ut_batch_t **batch)
{
    if (!batch || !*batch)
        return;
    ut_batch_t *b = *batch;
    free(b->ev);
    free(b->number);
    free(b->timestamp);
    free(b->bank_info);
    free(b->bank_first);
    free(b->words);
    free(b->velo);
    free(b);
    *batch = NULL;
}

void ut_batch_clear(ut_batch_t *b)
{
    b->n = b->n_banks = b->n_words = b->n_velo = 0;
}

size_t ut_batch_count(const ut_batch_t *b)
{
    return b->n;
}

uint64_t ut_batch_hits(const ut_batch_t *b)
{
    return b->n_words;
}

uint64_t ut_batch_tracks(const ut_batch_t *b)
{
    return b->n_velo;
}

void ut_batch_event(const ut_batch_t *b, size_t i, uint32_t *event, uint64_t *timestamp, uint32_t *n_hits,
                    uint32_t *n_tracks)
{
    if (event)
        *event = b->number[i];
    if (timestamp)
        *timestamp = b->timestamp[i];
    if (n_hits)
        *n_hits = b->ev[i].n_hits;
    if (n_tracks)
        *n_tracks = b->ev[i].n_tracks;
}

int ut_batch_add(ut_batch_t *b, const ut_geometry_t *geo, const ut_event_t *e, tusk_error_t *err)
{
    if (e->geometry != geo->digest)
        return tusk_error_set(err, TUSK_EINVAL,
                              "event %u: its raw banks are written for the UT geometry 0x%08X, the tracker's is 0x%08X "
                              "(the producer and the tracker have other geometry settings)",
                              (unsigned)e->event, (unsigned)e->geometry, (unsigned)geo->digest);
    if (e->n_hits > UT_MAX_EVENT_HITS)
        return tusk_error_set(err, TUSK_ELIMIT,
                              "event %u: %u UT hits; at most %u an event (Compass's 16-bit windows)", (unsigned)e->event,
                              (unsigned)e->n_hits, UT_MAX_EVENT_HITS);
    uint64_t sum = 0;
    const uint16_t *w = e->words;
    for (uint32_t j = 0; j < e->n_banks; j++) {
        unsigned s = e->banks[j].sector;
        if (s >= geo->n_sectors)
            return tusk_error_set(err, TUSK_EINVAL, "event %u: bank %u is of sector %u; the geometry has %u (0-%u)",
                                  (unsigned)e->event, (unsigned)j, s, geo->n_sectors, geo->n_sectors - 1);
        if (j > 0 && s <= e->banks[j - 1].sector)
            return tusk_error_set(err, TUSK_EINVAL, "event %u: bank %u (sector %u) after sector %u", (unsigned)e->event,
                                  (unsigned)j, s, (unsigned)e->banks[j - 1].sector);
        sum += e->banks[j].n_hits;
        if (sum > e->n_hits)
            break;
        for (unsigned k = 0; k < e->banks[j].n_hits; k++, w++) {
            if (ut_word_strip(*w) >= geo->sector[s].strips)
                return tusk_error_set(err, TUSK_EINVAL,
                                      "event %u: bank %u (sector %u), hit %u: strip %u; the sector has %u strips",
                                      (unsigned)e->event, (unsigned)j, s, k, ut_word_strip(*w),
                                      (unsigned)geo->sector[s].strips);
            if (k > 0 && ut_word_strip(*w) <= ut_word_strip(w[-1]))
                return tusk_error_set(err, TUSK_EINVAL, "event %u: bank %u (sector %u), hit %u: strip %u after strip %u",
                                      (unsigned)e->event, (unsigned)j, s, k, ut_word_strip(*w), ut_word_strip(w[-1]));
        }
    }
    if (sum != e->n_hits)
        return tusk_error_set(err, TUSK_EINVAL, "event %u: its banks hold %llu hits, not %u", (unsigned)e->event,
                              (unsigned long long)sum, (unsigned)e->n_hits);
    for (uint32_t t = 0; t < e->n_tracks; t++) {
        const adf_velo_track_t *v = &e->velo[t];
        if (!(isfinite(v->x) && isfinite(v->y) && isfinite(v->z) && isfinite(v->tx) && isfinite(v->ty)))
            return tusk_error_set(err, TUSK_EINVAL, "event %u: VELO track %u is not finite", (unsigned)e->event,
                                  (unsigned)t);
    }
    if (b->n_words + e->n_hits > UINT32_MAX / 2 || b->n_velo + e->n_tracks > UINT32_MAX / 2 ||
        b->n_banks + e->n_banks > UINT32_MAX / 2)
        return tusk_error_set(err, TUSK_ELIMIT, "event %u: the batch holds 2^31 hits, tracks or banks already",
                              (unsigned)e->event);
    if (tusk_grow(&b->ev, &b->cap_ev, b->n + 1, sizeof *b->ev) != 0 ||
        tusk_grow(&b->number, &b->cap_number, b->n + 1, sizeof *b->number) != 0 ||
        tusk_grow(&b->timestamp, &b->cap_ts, b->n + 1, sizeof *b->timestamp) != 0 ||
        tusk_grow(&b->bank_info, &b->cap_info, b->n_banks + e->n_banks + 1, sizeof *b->bank_info) != 0 ||
        tusk_grow(&b->bank_first, &b->cap_bfirst, b->n_banks + e->n_banks + 1, sizeof *b->bank_first) != 0 ||
        tusk_grow(&b->words, &b->cap_words, b->n_words + e->n_hits + 1, sizeof *b->words) != 0 ||
        tusk_grow(&b->velo, &b->cap_velo, b->n_velo + e->n_tracks + 1, sizeof *b->velo) != 0)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory (event %u, %u hits)", (unsigned)e->event,
                              (unsigned)e->n_hits);
    ut_dev_event_t *d = &b->ev[b->n];
    memset(d, 0, sizeof *d);
    d->first_bank = (uint32_t)b->n_banks;
    d->n_banks = e->n_banks;
    d->first_word = (uint32_t)b->n_words;
    d->n_hits = e->n_hits;
    d->first_hit = (uint32_t)b->n_words;
    d->first_track = (uint32_t)b->n_velo;
    d->n_tracks = e->n_tracks;
    uint32_t first = (uint32_t)b->n_words;
    for (uint32_t j = 0; j < e->n_banks; j++) {
        b->bank_info[b->n_banks + j] = ((uint32_t)e->banks[j].sector << 16) | e->banks[j].n_hits;
        b->bank_first[b->n_banks + j] = first;
        first += e->banks[j].n_hits;
    }
    if (e->n_hits)
        memcpy(b->words + b->n_words, e->words, (size_t)e->n_hits * sizeof *b->words);
    for (uint32_t t = 0; t < e->n_tracks; t++) {
        ut_dev_velo_t *v = &b->velo[b->n_velo + t];
        v->x = e->velo[t].x;
        v->y = e->velo[t].y;
        v->z = e->velo[t].z;
        v->tx = e->velo[t].tx;
        v->ty = e->velo[t].ty;
        v->flags = e->velo[t].flags & ADF_VELO_BACKWARD ? UT_VELO_BACKWARD : 0u;
    }
    b->number[b->n] = e->event;
    b->timestamp[b->n] = e->timestamp;
    b->n_banks += e->n_banks;
    b->n_words += e->n_hits;
    b->n_velo += e->n_tracks;
    b->n++;
    return TUSK_OK;
}

/* ---- decoded hits ---- */

void ut_hits_free(ut_hits_t *h)
{
    free(h->x0);
    free(h->z0);
    free(h->yb);
    free(h->ye);
    free(h->w);
    free(h->id);
    free(h->group_first);
    memset(h, 0, sizeof *h);
}

int ut_hits_room(ut_hits_t *h, const ut_batch_t *b, uint32_t n_groups, tusk_error_t *err)
{
    size_t need = b->n_words + 1, gneed = b->n * ((size_t)n_groups + 1) + 1;
    h->n_groups = n_groups;
    if (need > h->cap) {
        size_t cap = need + need / 2;
        float *a[5];
        float **fields[5] = {&h->x0, &h->z0, &h->yb, &h->ye, &h->w};
        for (int i = 0; i < 5; i++) {
            a[i] = realloc(*fields[i], cap * sizeof(float));
            if (a[i])
                *fields[i] = a[i];
        }
        uint32_t *id = realloc(h->id, cap * sizeof *id);
        if (id)
            h->id = id;
        if (!a[0] || !a[1] || !a[2] || !a[3] || !a[4] || !id)
            return tusk_error_set(err, TUSK_ENOMEM, "out of memory (%zu decoded UT hits)", need);
        h->cap = cap;
    }
    if (tusk_grow(&h->group_first, &h->cap_groups, gneed, sizeof *h->group_first) != 0)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory (%zu sector group offsets)", gneed);
    return TUSK_OK;
}

/* ---- results ---- */

ut_result_t *ut_result_new(void)
{
    return calloc(1, sizeof(ut_result_t));
}

void ut_result_destroy(ut_result_t **res)
{
    if (!res || !*res)
        return;
    ut_result_t *r = *res;
    free(r->count);
    free(r->first);
    free(r->tracks);
    ut_hits_free(&r->hits);
    free(r->n_hits);
    free(r->first_hit);
    free(r);
    *res = NULL;
}

void ut_result_keep_hits(ut_result_t *res, bool keep)
{
    res->keep_hits = keep;
}

int ut_result_reset(ut_result_t *r, const ut_batch_t *b, tusk_error_t *err)
{
    if (tusk_grow(&r->count, &r->cap_count, b->n + 1, sizeof *r->count) != 0 ||
        tusk_grow(&r->first, &r->cap_first, b->n + 1, sizeof *r->first) != 0 ||
        tusk_grow(&r->n_hits, &r->cap_nh, b->n + 1, sizeof *r->n_hits) != 0 ||
        tusk_grow(&r->first_hit, &r->cap_fh, b->n + 1, sizeof *r->first_hit) != 0 ||
        tusk_grow(&r->tracks, &r->cap_tracks, b->n_velo + 1, sizeof *r->tracks) != 0)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory (results of %zu events)", b->n);
    r->n = b->n;
    r->has_hits = false;
    for (size_t i = 0; i < b->n; i++) {
        r->count[i] = 0;
        r->first[i] = b->ev[i].first_track;
        r->n_hits[i] = 0;
        r->first_hit[i] = b->ev[i].first_hit;
    }
    return TUSK_OK;
}

int ut_result_set_hits(ut_result_t *r, const ut_batch_t *b, const ut_hits_t *h, tusk_error_t *err)
{
    if (!r->keep_hits)
        return TUSK_OK;
    int st = ut_hits_room(&r->hits, b, h->n_groups, err);
    if (st != TUSK_OK)
        return st;
    size_t n = b->n_words, ng = b->n * ((size_t)h->n_groups + 1);
    memcpy(r->hits.x0, h->x0, n * sizeof(float));
    memcpy(r->hits.z0, h->z0, n * sizeof(float));
    memcpy(r->hits.yb, h->yb, n * sizeof(float));
    memcpy(r->hits.ye, h->ye, n * sizeof(float));
    memcpy(r->hits.w, h->w, n * sizeof(float));
    memcpy(r->hits.id, h->id, n * sizeof(uint32_t));
    memcpy(r->hits.group_first, h->group_first, ng * sizeof(uint32_t));
    for (size_t i = 0; i < b->n; i++)
        r->n_hits[i] = b->ev[i].n_hits;
    r->has_hits = true;
    return TUSK_OK;
}

size_t ut_result_events(const ut_result_t *r)
{
    return r->n;
}

uint32_t ut_result_tracks(const ut_result_t *r, size_t i)
{
    return r->count[i];
}

uint64_t ut_result_total(const ut_result_t *r)
{
    uint64_t n = 0;
    for (size_t i = 0; i < r->n; i++)
        n += r->count[i];
    return n;
}

void ut_result_track(const ut_result_t *r, size_t i, uint32_t k, adf_ut_track_t *t)
{
    const ut_dev_track_t *d = &r->tracks[r->first[i] + k];
    t->velo = d->velo;
    for (int q = 0; q < 4; q++)
        t->id[q] = d->id[q];
    t->qop = d->qop;
    t->chi2 = d->chi2;
    t->n_hits = (uint8_t)d->n_hits;
}

uint32_t ut_result_hits(const ut_result_t *r, size_t i)
{
    return r->has_hits ? r->n_hits[i] : 0;
}

void ut_result_hit(const ut_result_t *r, size_t i, uint32_t k, adf_ut_hit_t *hit)
{
    size_t at = r->first_hit[i] + k;
    const uint32_t *gf = r->hits.group_first + i * ((size_t)r->hits.n_groups + 1);
    /* its group: the last whose first hit is at or before k */
    uint32_t lo = 0, hi = r->hits.n_groups;
    while (hi - lo > 1) {
        uint32_t mid = (lo + hi) / 2;
        if (gf[mid] <= k)
            lo = mid;
        else
            hi = mid;
    }
    hit->id = r->hits.id[at];
    hit->x0 = r->hits.x0[at];
    hit->z0 = r->hits.z0[at];
    hit->y_begin = r->hits.yb[at];
    hit->y_end = r->hits.ye[at];
    hit->weight = r->hits.w[at];
    hit->group = (uint16_t)lo;
}

static bool same_bits(const void *a, const void *b, size_t n)
{
    return memcmp(a, b, n) == 0;
}

bool ut_result_equal(const ut_result_t *a, const ut_result_t *b, char *why, size_t cap)
{
    if (a->n != b->n) {
        snprintf(why, cap, "%zu events against %zu", a->n, b->n);
        return false;
    }
    for (size_t i = 0; i < a->n; i++) {
        if (a->count[i] != b->count[i]) {
            snprintf(why, cap, "event %zu of the batch: %u tracks against %u", i, (unsigned)a->count[i],
                     (unsigned)b->count[i]);
            return false;
        }
        for (uint32_t k = 0; k < a->count[i]; k++) {
            const ut_dev_track_t *x = &a->tracks[a->first[i] + k], *y = &b->tracks[b->first[i] + k];
            if (!same_bits(x, y, sizeof *x)) {
                snprintf(why, cap,
                         "event %zu of the batch, track %u: VELO %u, %u hits 0x%08X 0x%08X 0x%08X 0x%08X, q/p %.9g, "
                         "chi2 %.9g against VELO %u, %u hits 0x%08X 0x%08X 0x%08X 0x%08X, q/p %.9g, chi2 %.9g",
                         i, (unsigned)k, (unsigned)x->velo, (unsigned)x->n_hits, (unsigned)x->id[0],
                         (unsigned)x->id[1], (unsigned)x->id[2], (unsigned)x->id[3], (double)x->qop, (double)x->chi2,
                         (unsigned)y->velo, (unsigned)y->n_hits, (unsigned)y->id[0], (unsigned)y->id[1],
                         (unsigned)y->id[2], (unsigned)y->id[3], (double)y->qop, (double)y->chi2);
                return false;
            }
        }
        if (a->has_hits && b->has_hits) {
            if (a->n_hits[i] != b->n_hits[i]) {
                snprintf(why, cap, "event %zu of the batch: %u hits against %u", i, (unsigned)a->n_hits[i],
                         (unsigned)b->n_hits[i]);
                return false;
            }
            size_t G = (size_t)a->hits.n_groups + 1;
            if (a->hits.n_groups != b->hits.n_groups ||
                !same_bits(a->hits.group_first + i * G, b->hits.group_first + i * G, G * sizeof(uint32_t))) {
                snprintf(why, cap, "event %zu of the batch: other sector group offsets", i);
                return false;
            }
            for (uint32_t k = 0; k < a->n_hits[i]; k++) {
                size_t p = a->first_hit[i] + k, q = b->first_hit[i] + k;
                if (a->hits.id[p] != b->hits.id[q] || !same_bits(&a->hits.x0[p], &b->hits.x0[q], 4) ||
                    !same_bits(&a->hits.z0[p], &b->hits.z0[q], 4) || !same_bits(&a->hits.yb[p], &b->hits.yb[q], 4) ||
                    !same_bits(&a->hits.ye[p], &b->hits.ye[q], 4) || !same_bits(&a->hits.w[p], &b->hits.w[q], 4)) {
                    snprintf(why, cap, "event %zu of the batch, decoded hit %u: 0x%08X x0 %.9g against 0x%08X x0 %.9g", i,
                             (unsigned)k, (unsigned)a->hits.id[p], (double)a->hits.x0[p], (unsigned)b->hits.id[q],
                             (double)b->hits.x0[q]);
                    return false;
                }
            }
        }
    }
    return true;
}
