/* ut_frames.c - the tracker's frames in a buffer (tusk/ut.h): each
 * event:data:ut (an event's data:ut_raw and data:velo_tracks) in; the
 * same event with its data:ut_tracks (and data:ut_hits) after the VELO
 * tracks out. */
#include <stdlib.h>
#include <string.h>

#include "adf/adf_frames.h"
#include "base/grow.h"
#include "ut_private.h"

typedef struct scratch {
    ut_batch_t *b;
    const ut_geometry_t *geo;
    adf_reader_t *sub;        /* an event's frames */
    adf_ut_bank_t *banks;
    size_t cap_banks;
    uint16_t *words;
    size_t cap_words;
    adf_velo_track_t *velo;
    size_t cap_velo;
} scratch_t;

/* One event:data:ut frame (f) into the batch; a loose data:ut_raw or
 * data:velo_tracks is refused. */
static int read_event(void *ctx, const adf_frame_t *f, tusk_error_t *err)
{
    scratch_t *s = ctx;
    if (f->key.type == ADF_TYPE_DATA_UT_RAW || f->key.type == ADF_TYPE_DATA_VELO_TRACKS)
        return tusk_error_set(err, TUSK_EINVAL,
                              "%s of event %u at offset %llu is not inside an event:data:ut frame (an event's "
                              "frames travel together, adf/FORMAT.md)",
                              adf_type_name(f->key.type), (unsigned)f->key.event, (unsigned long long)f->offset);
    if (f->key.type != ADF_TYPE_EVENT_DATA_UT)
        return TUSK_OK;
    adf_reader_t *sub = s->sub;
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
                return adf_frames_error(&e, err);
            have_raw = true;
        } else {
            if (adf_velo_tracks_decode(&g, &vt, &e) != ADF_OK)
                return adf_frames_error(&e, err);
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
    int st = ut_batch_add(s->b, s->geo, &ev, err);
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
    scratch_t s = {b, geo, adf_reader_new(ADF_ON_ERROR_STOP), NULL, 0, NULL, 0, NULL, 0};
    int st = s.sub ? adf_frames_read(buf, size, base, ADF_FRAMES_ALL, read_event, &s, err)
                   : tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    adf_reader_destroy(&s.sub);
    free(s.banks);
    free(s.words);
    free(s.velo);
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

typedef struct write_job {
    const ut_batch_t *b;
    const ut_result_t *res;
    const ut_config_t *cfg;
    int backend;
    bool keep_raw, hits;
    uint32_t digest, geometry;
    adf_reader_t *sub;        /* an event's frames */
} write_job_t;

/* Event k's data:ut_tracks (and data:ut_hits). */
static int write_event(const write_job_t *j, size_t k, adf_writer_t *w, tusk_error_t *err)
{
    uint32_t nt = ut_result_tracks(j->res, k), nh = j->hits ? ut_result_hits(j->res, k) : 0;
    adf_ut_track_t *t = malloc((nt ? nt : 1) * sizeof *t);
    adf_ut_hit_t *h = j->hits ? malloc((nh ? nh : 1) * sizeof *h) : NULL;
    if (!t || (j->hits && !h)) {
        free(t);
        free(h);
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory (%u tracks, %u hits)", (unsigned)nt, (unsigned)nh);
    }
    uint32_t event;
    uint64_t ts;
    ut_batch_event(j->b, k, &event, &ts, NULL, NULL);
    for (uint32_t i = 0; i < nt; i++)
        ut_result_track(j->res, k, i, &t[i]);
    adf_ut_tracks_t ht = {nt, j->digest, j->geometry, (uint8_t)j->backend, 0, (uint8_t)j->cfg->sectors,
                          (uint8_t)j->cfg->candidates, NULL};
    adf_error_t e;
    int st = TUSK_OK;
    if (adf_ut_tracks_encode(w, event, ts, &ht, t, &e) != ADF_OK)
        st = adf_frames_error(&e, err);
    if (st == TUSK_OK && j->hits) {
        for (uint32_t i = 0; i < nh; i++)
            ut_result_hit(j->res, k, i, &h[i]);
        adf_ut_hits_t hh = {nh, j->geometry, (uint8_t)j->backend, 0, NULL};
        if (adf_ut_hits_encode(w, event, ts, &hh, h, &e) != ADF_OK)
            st = adf_frames_error(&e, err);
    }
    free(t);
    free(h);
    return st;
}

/* Event k's event:data:ut again: its frames (data:ut_raw only when kept),
 * its data:ut_tracks (and data:ut_hits) after the VELO tracks. */
static int write_composite(void *ctx, size_t k, const adf_frame_t *f, adf_writer_t *w, tusk_error_t *err)
{
    const write_job_t *j = ctx;
    if (adf_writer_begin(w, &f->key) != ADF_OK)
        return adf_frames_error(adf_writer_error(w), err);
    adf_reader_open_composite(j->sub, f);
    adf_frame_t g;
    int rc, st = TUSK_OK;
    while (st == TUSK_OK && (rc = adf_reader_next(j->sub, &g)) == ADF_OK) {
        if (g.key.type == ADF_TYPE_DATA_UT_RAW && !j->keep_raw)
            continue;
        if (adf_writer_put_frame(w, &g) != ADF_OK)
            st = adf_frames_error(adf_writer_error(w), err);
        else if (g.key.type == ADF_TYPE_DATA_VELO_TRACKS)
            st = write_event(j, k, w, err);
    }
    if (st == TUSK_OK && rc != ADF_END)
        st = tusk_error_set(err, TUSK_EINVAL, "%s", adf_reader_error(j->sub)->message);
    if (st == TUSK_OK && adf_writer_end(w) != ADF_OK)
        st = adf_frames_error(adf_writer_error(w), err);
    return st;
}

int ut_frames_write(const void *buf, size_t size, const ut_batch_t *b, const ut_result_t *res, const ut_config_t *cfg,
                    int backend, bool keep_raw, bool hits, adf_writer_t *w, tusk_error_t *err)
{
    size_t n = ut_batch_count(b);
    if (ut_result_events(res) != n)
        return tusk_error_set(err, TUSK_EINVAL, "%zu events but results of %zu", n, ut_result_events(res));
    if (hits && n > 0 && !res->has_hits)
        return tusk_error_set(err, TUSK_EINVAL, "the decoded hits were not kept (ut_result_keep_hits)");
    write_job_t j = {b, res, cfg, backend, keep_raw, hits, ut_config_digest(cfg), 0, NULL};
    j.geometry = ut_geometry_config_digest(&cfg->geo);
    /* the composites are written again by write_composite, not copied */
    int st = (j.sub = adf_reader_new(ADF_ON_ERROR_STOP)) == NULL
                 ? tusk_error_set(err, TUSK_ENOMEM, "out of memory")
                 : adf_frames_write(buf, size, ADF_TYPE_EVENT_DATA_UT, false, n, "events", write_composite, &j, w, err);
    adf_reader_destroy(&j.sub);
    return st;
}
