/* ut_frames.c - the tracker's frames in a buffer (tusk/ut.h): each
 * event:data:ut (an event's data:ut_raw and data:velo_tracks) in; the
 * same event with its data:ut_tracks (and data:ut_hits) after the VELO
 * tracks out. */
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "tusk/adf.h"
#include "ut_private.h"

typedef struct scratch {
    adf_ut_bank_t *banks;
    size_t cap_banks;
    uint16_t *words;
    size_t cap_words;
    adf_velo_track_t *velo;
    size_t cap_velo;
} scratch_t;

static void scratch_free(scratch_t *s)
{
    free(s->banks);
    free(s->words);
    free(s->velo);
}

/* One event:data:ut frame (f) into the batch. */
static int read_event(ut_batch_t *b, const ut_geometry_t *geo, adf_reader_t *sub, const adf_frame_t *f, scratch_t *s,
                      tusk_error_t *err)
{
    unsigned long long off = (unsigned long long)f->offset;
    unsigned event = (unsigned)f->key.event;
    adf_reader_open_composite(sub, f);
    adf_frame_t g;
    adf_error_t e;
    adf_ut_raw_t raw;
    adf_velo_tracks_t vt;
    bool have_raw = false, have_velo = false;
    int rc;
    while ((rc = adf_reader_next(sub, &g)) == ADF_OK) {
        bool is_raw = g.key.type == ADF_TYPE_DATA_UT_RAW, is_velo = g.key.type == ADF_TYPE_DATA_VELO_TRACKS;
        if (!is_raw && !is_velo)
            continue;
        if (g.key.event != f->key.event)
            return tusk_error_set(err, TUSK_EINVAL,
                                  "event:data:ut of event %u at offset %llu holds a %s of event %u (offset %llu)", event,
                                  off, adf_type_name(g.key.type), (unsigned)g.key.event, (unsigned long long)g.offset);
        if ((is_raw && have_raw) || (is_velo && have_velo))
            return tusk_error_set(err, TUSK_EINVAL, "event:data:ut of event %u at offset %llu holds two %s frames",
                                  event, off, adf_type_name(g.key.type));
        if (is_raw) {
            if (adf_ut_raw_decode(&g, &raw, &e) != ADF_OK)
                return tusk_error_set(err, TUSK_EINVAL, "%s", e.message);
            have_raw = true;
        } else {
            if (adf_velo_tracks_decode(&g, &vt, &e) != ADF_OK)
                return tusk_error_set(err, TUSK_EINVAL, "%s", e.message);
            have_velo = true;
        }
    }
    if (rc != ADF_END)
        return tusk_error_set(err, TUSK_EINVAL, "%s", adf_reader_error(sub)->message);
    if (!have_raw || !have_velo)
        return tusk_error_set(err, TUSK_EINVAL, "event:data:ut of event %u at offset %llu has no %s", event, off,
                              !have_raw ? "data:ut_raw" : "data:velo_tracks");
    if (tusk_grow(&s->banks, &s->cap_banks, (size_t)raw.n_banks + 1, sizeof *s->banks) != 0 ||
        tusk_grow(&s->words, &s->cap_words, (size_t)raw.n_hits + 1, sizeof *s->words) != 0 ||
        tusk_grow(&s->velo, &s->cap_velo, (size_t)vt.n_tracks + 1, sizeof *s->velo) != 0)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory (event %u: %u UT hits, %u VELO tracks)", event,
                              (unsigned)raw.n_hits, (unsigned)vt.n_tracks);
    adf_ut_raw_read(&raw, s->banks, s->words);
    for (uint32_t t = 0; t < vt.n_tracks; t++)
        adf_velo_track(&vt, t, &s->velo[t]);
    ut_event_t ev = {f->key.event, f->key.timestamp, raw.geometry, raw.n_banks, raw.n_hits, vt.n_tracks,
                     s->banks,     s->words,         s->velo};
    int st = ut_batch_add(b, geo, &ev, err);
    if (st != TUSK_OK) {
        char msg[sizeof err->message];
        snprintf(msg, sizeof msg, "%s", err->message);
        st = tusk_error_set(err, st, "event:data:ut at offset %llu: %s", off, msg);
    }
    return st;
}

int ut_frames_read(ut_batch_t *b, const ut_geometry_t *geo, const void *buf, size_t size, uint64_t base,
                   tusk_error_t *err)
{
    ut_batch_clear(b);
    adf_reader_t *r = adf_reader_new(ADF_ON_ERROR_STOP), *sub = adf_reader_new(ADF_ON_ERROR_STOP);
    if (!r || !sub) {
        adf_reader_destroy(&r);
        adf_reader_destroy(&sub);
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    }
    adf_reader_reset(r, buf, size, base);
    scratch_t s = {0};
    adf_frame_t f;
    int rc, st = TUSK_OK;
    while ((rc = adf_reader_next(r, &f)) == ADF_OK) {
        if (f.key.type == ADF_TYPE_EVENT_DATA_UT) {
            if ((st = read_event(b, geo, sub, &f, &s, err)) != TUSK_OK)
                break;
        } else if (f.key.type == ADF_TYPE_DATA_UT_RAW || f.key.type == ADF_TYPE_DATA_VELO_TRACKS) {
            st = tusk_error_set(err, TUSK_EINVAL,
                                "%s of event %u at offset %llu is not inside an event:data:ut frame (an event's "
                                "frames travel together, adf/FORMAT.md)",
                                adf_type_name(f.key.type), (unsigned)f.key.event, (unsigned long long)f.offset);
            break;
        }
    }
    if (st == TUSK_OK && rc != ADF_END)
        st = tusk_error_set(err, TUSK_EINVAL, "%s", adf_reader_error(r)->message);
    scratch_free(&s);
    adf_reader_destroy(&r);
    adf_reader_destroy(&sub);
    return st;
}

size_t ut_frames_extra(const ut_result_t *res, bool hits)
{
    size_t n = 0;
    for (size_t i = 0; i < ut_result_events(res); i++) {
        n += ADF_KEY_SIZE + adf_ut_tracks_payload_size(ut_result_tracks(res, i));
        if (hits)
            n += ADF_KEY_SIZE + adf_ut_hits_payload_size(ut_result_hits(res, i));
    }
    return n;
}

/* Event k's data:ut_tracks (and data:ut_hits). */
static int write_event(const ut_batch_t *b, const ut_result_t *res, size_t k, uint32_t digest, uint32_t geometry,
                       const ut_config_t *cfg, int backend, bool hits, adf_writer_t *w, tusk_error_t *err)
{
    uint32_t nt = ut_result_tracks(res, k), nh = hits ? ut_result_hits(res, k) : 0;
    adf_ut_track_t *t = malloc((nt ? nt : 1) * sizeof *t);
    adf_ut_hit_t *h = hits ? malloc((nh ? nh : 1) * sizeof *h) : NULL;
    if (!t || (hits && !h)) {
        free(t);
        free(h);
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory (%u tracks, %u hits)", (unsigned)nt, (unsigned)nh);
    }
    uint32_t event;
    uint64_t ts;
    ut_batch_event(b, k, &event, &ts, NULL, NULL);
    for (uint32_t i = 0; i < nt; i++)
        ut_result_track(res, k, i, &t[i]);
    adf_ut_tracks_t ht = {nt, digest, geometry, (uint8_t)backend, 0, (uint8_t)cfg->sectors, (uint8_t)cfg->candidates,
                          NULL};
    adf_error_t e;
    int st = TUSK_OK;
    if (adf_ut_tracks_encode(w, event, ts, &ht, t, &e) != ADF_OK)
        st = tusk_error_set(err, e.code == ADF_EFULL || e.code == ADF_ETOOBIG ? TUSK_ELIMIT : TUSK_EINVAL, "%s",
                            e.message);
    if (st == TUSK_OK && hits) {
        for (uint32_t i = 0; i < nh; i++)
            ut_result_hit(res, k, i, &h[i]);
        adf_ut_hits_t hh = {nh, geometry, (uint8_t)backend, 0, NULL};
        if (adf_ut_hits_encode(w, event, ts, &hh, h, &e) != ADF_OK)
            st = tusk_error_set(err, e.code == ADF_EFULL || e.code == ADF_ETOOBIG ? TUSK_ELIMIT : TUSK_EINVAL, "%s",
                                e.message);
    }
    free(t);
    free(h);
    return st;
}

static int writer_failed(adf_writer_t *w, tusk_error_t *err)
{
    const adf_error_t *e = adf_writer_error(w);
    return tusk_error_set(err, e->code == ADF_EFULL || e->code == ADF_ETOOBIG ? TUSK_ELIMIT : TUSK_EINVAL, "%s",
                          e->message);
}

int ut_frames_write(const void *buf, size_t size, const ut_batch_t *b, const ut_result_t *res, const ut_config_t *cfg,
                    int backend, bool keep_raw, bool hits, adf_writer_t *w, tusk_error_t *err)
{
    size_t n = ut_batch_count(b);
    if (ut_result_events(res) != n)
        return tusk_error_set(err, TUSK_EINVAL, "%zu events but results of %zu", n, ut_result_events(res));
    if (hits && n > 0 && !res->has_hits)
        return tusk_error_set(err, TUSK_EINVAL, "the decoded hits were not kept (ut_result_keep_hits)");
    uint32_t digest = ut_config_digest(cfg), geometry = ut_geometry_config_digest(&cfg->geo);
    adf_reader_t *r = adf_reader_new(ADF_ON_ERROR_STOP), *sub = adf_reader_new(ADF_ON_ERROR_STOP);
    if (!r || !sub) {
        adf_reader_destroy(&r);
        adf_reader_destroy(&sub);
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    }
    adf_reader_reset(r, buf, size, 0);
    adf_frame_t f, g;
    size_t k = 0;
    int rc, st = TUSK_OK;
    while ((rc = adf_reader_next(r, &f)) == ADF_OK) {
        if (f.key.type != ADF_TYPE_EVENT_DATA_UT) {
            if (adf_writer_put_frame(w, &f) != ADF_OK) {
                st = writer_failed(w, err);
                break;
            }
            continue;
        }
        if (k >= n) {
            st = tusk_error_set(err, TUSK_EINVAL, "the buffer holds more events than the %zu results", n);
            break;
        }
        if (adf_writer_begin(w, &f.key) != ADF_OK) {
            st = writer_failed(w, err);
            break;
        }
        adf_reader_open_composite(sub, &f);
        while (st == TUSK_OK && (rc = adf_reader_next(sub, &g)) == ADF_OK) {
            if (g.key.type == ADF_TYPE_DATA_UT_RAW && !keep_raw)
                continue;
            if (adf_writer_put_frame(w, &g) != ADF_OK)
                st = writer_failed(w, err);
            else if (g.key.type == ADF_TYPE_DATA_VELO_TRACKS)
                st = write_event(b, res, k, digest, geometry, cfg, backend, hits, w, err);
        }
        if (st == TUSK_OK && rc != ADF_END)
            st = tusk_error_set(err, TUSK_EINVAL, "%s", adf_reader_error(sub)->message);
        if (st == TUSK_OK && adf_writer_end(w) != ADF_OK)
            st = writer_failed(w, err);
        if (st != TUSK_OK)
            break;
        k++;
        rc = ADF_OK;
    }
    if (st == TUSK_OK && rc != ADF_END)
        st = tusk_error_set(err, TUSK_EINVAL, "%s", adf_reader_error(r)->message);
    if (st == TUSK_OK && k != n)
        st = tusk_error_set(err, TUSK_EINVAL, "the buffer holds %zu events, not the %zu of the results", k, n);
    adf_reader_destroy(&r);
    adf_reader_destroy(&sub);
    return st;
}
