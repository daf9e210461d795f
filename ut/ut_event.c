/* ut_event.c - one event on the CPU: the decoding (count, prefix sum,
 * place in bank order, sort each sector group by its key, write) and
 * Compass (per active VELO track: its windows in place, then its
 * tracklets: the paper's CPU code, §V-C), with the formulas of
 * ut_shared.h. The reference and the fast backend both run these. */
#include <stdlib.h>
#include <string.h>

#include "ut_private.h"

void ut_work_free(ut_work_t *w)
{
    free(w->key);
    free(w->pos);
    memset(w, 0, sizeof *w);
}

static int work_room(ut_work_t *w, size_t n)
{
    if (n <= w->cap)
        return 0;
    size_t cap = n + n / 2 + 64;
    uint32_t *k = realloc(w->key, cap * sizeof *k);
    if (k)
        w->key = k;
    uint32_t *p = realloc(w->pos, cap * sizeof *p);
    if (p)
        w->pos = p;
    if (!k || !p)
        return -1;
    w->cap = cap;
    return 0;
}

int ut_decode_event(ut_work_t *w, const ut_dev_sector_t *sectors, uint32_t G, const ut_batch_t *b, size_t i,
                    ut_hits_t *h)
{
    const ut_dev_event_t *ev = &b->ev[i];
    if (work_room(w, ev->n_hits) != 0)
        return TUSK_ENOMEM;
    uint32_t *count = w->count;
    memset(count, 0, (G + 1) * sizeof *count);
    /* count a sector group's hits */
    for (uint32_t j = ev->first_bank; j < ev->first_bank + ev->n_banks; j++) {
        uint32_t s = b->bank_info[j] >> 16, n = b->bank_info[j] & 0xFFFFu;
        const uint16_t *word = b->words + b->bank_first[j];
        for (uint32_t k = 0; k < n; k++)
            count[ut_hit_group(sectors[s], ut_word_strip(word[k]))]++;
    }
    /* prefix sum: the groups' offsets */
    uint32_t *gf = h->group_first + i * ((size_t)G + 1);
    uint32_t sum = 0;
    for (uint32_t g = 0; g < G; g++) {
        gf[g] = sum;
        sum += count[g];
        count[g] = gf[g]; /* now the cursor */
    }
    gf[G] = sum;
    /* place the hits in bank order */
    for (uint32_t j = ev->first_bank; j < ev->first_bank + ev->n_banks; j++) {
        uint32_t s = b->bank_info[j] >> 16, n = b->bank_info[j] & 0xFFFFu;
        const uint16_t *word = b->words + b->bank_first[j];
        for (uint32_t k = 0; k < n; k++) {
            uint32_t strip = ut_word_strip(word[k]);
            uint32_t pos = count[ut_hit_group(sectors[s], strip)]++;
            w->key[pos] = ut_sort_key(sectors[s], strip);
            w->pos[pos] = (s << 16) | word[k];
        }
    }
    /* sort each group by its key (insertion sort: the groups are small and
     * the readout order is half sorted already) */
    for (uint32_t g = 0; g < G; g++)
        for (uint32_t a = gf[g] + 1; a < gf[g + 1]; a++) {
            uint32_t key = w->key[a], pos = w->pos[a], c = a;
            while (c > gf[g] && w->key[c - 1] > key) {
                w->key[c] = w->key[c - 1];
                w->pos[c] = w->pos[c - 1];
                c--;
            }
            w->key[c] = key;
            w->pos[c] = pos;
        }
    /* write the hits */
    size_t f = ev->first_hit;
    for (uint32_t k = 0; k < ev->n_hits; k++) {
        uint32_t s = w->pos[k] >> 16, word = w->pos[k] & 0xFFFFu;
        ut_dev_sector_t sec = sectors[s];
        h->x0[f + k] = ut_hit_x0(sec, word);
        h->z0[f + k] = sec.z;
        h->yb[f + k] = sec.y_begin;
        h->ye[f + k] = sec.y_end;
        h->w[f + k] = sec.weight;
        h->id[f + k] = ut_lhcbid(s, ut_word_strip(word));
    }
    return TUSK_OK;
}

void ut_compass_event(const ut_params_t *p, const ut_dev_plane_t *planes, const float *group_u_lo, const ut_batch_t *b,
                      size_t i, const ut_hits_t *h, ut_result_t *res)
{
    const ut_dev_event_t *ev = &b->ev[i];
    size_t f = ev->first_hit;
    const float *x0 = h->x0 + f, *yb = h->yb + f, *ye = h->ye + f, *w = h->w + f;
    const uint32_t *id = h->id + f, *gf = h->group_first + i * ((size_t)p->n_groups + 1);
    ut_dev_track_t *out = res->tracks + res->first[i];
    uint32_t n = 0;
    for (uint32_t t = 0; t < ev->n_tracks; t++) {
        ut_dev_velo_t v = b->velo[ev->first_track + t];
        if (!ut_track_active(v, planes[0], planes[UT_PLANES - 1], p->y_tol))
            continue;
        tusk_u16 wf[UT_PLANES * UT_SLOTS], ws[UT_PLANES * UT_SLOTS];
        for (uint32_t q = 0; q < UT_PLANES; q++)
            ut_plane_windows(gf, group_u_lo, x0, yb, ye, planes[q], ut_extrapolate(v, planes[q]), p->y_tol, p->sectors,
                             wf + q * UT_SLOTS, ws + q * UT_SLOTS);
        if (ut_popcount4(ut_window_planes(ws)) < 3u)
            continue;
        ut_dev_track_t tr;
        if (ut_tracklet(x0, w, id, wf, ws, v, planes, *p, &tr)) {
            tr.velo = t;
            out[n++] = tr;
        }
    }
    res->count[i] = n;
}
