/* frames.c - buffers of ADF frames in and out of a tracking batch
 * (tusk/track.h, track_frames_*): what the tracking actor and tusk-track
 * do to a buffer, decoded with the libtusk-adf codecs.
 *
 * Reading: one pass over the frames finds those that make events
 * (event:data:psa composites, or data:truth frames), then the tracker's
 * threads decode them a chunk of consecutive events each into the
 * chunk's list of points, and the lists are copied into the batch in
 * order. Writing into a buffer: each chunk of events copies the frames
 * from its first event's to the next chunk's, each event's followed by its
 * data:tracked frame, at the place the frames and data:tracked frames
 * before it take. Batches, messages and output are those of one thread
 * taking the frames in order: the failure reported is the first frame's
 * that fails. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "tracking_private.h"
#include "tusk/adf_reader.h"

/* A thread's room for one composite's data:psa records (the array's
 * crystals: a composite holds each crystal at most once in a built event;
 * at least 64) and one data:truth record. */
static int decode_room(const track_t *t, trk_scratch_t *s, bool psa, tusk_error_t *err)
{
    if (!psa) {
        if (!s->truth && !(s->truth = malloc(sizeof *s->truth)))
            return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
        return TUSK_OK;
    }
    size_t want = t->array ? array_count(t->array) : 0;
    if (want < 64)
        want = 64;
    if (s->psa_cap >= want)
        return TUSK_OK;
    free(s->keys);
    free(s->psa);
    s->keys = malloc(want * sizeof *s->keys);
    s->psa = malloc(want * sizeof *s->psa);
    if (!s->keys || !s->psa) {
        free(s->keys);
        free(s->psa);
        s->keys = NULL;
        s->psa = NULL;
        s->psa_cap = 0;
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory (%zu data:psa records)", want);
    }
    s->psa_cap = want;
    return TUSK_OK;
}

typedef struct read_job {
    track_t *t;
    track_batch_t *b;
    uint64_t base_offset;
} read_job_t;

/* Decode the frames of chunk k's events into its list (the events'
 * `first` relative to it until the copy). */
static void read_chunk(void *ctx, size_t k, unsigned thread)
{
    const read_job_t *j = ctx;
    const track_t *t = j->t;
    trk_chunk_t *ch = &t->chunk[k];
    trk_scratch_t *s = &t->scratch[thread];
    const bool psa = t->cfg.points == TRACK_POINTS_PSA;
    if ((ch->st = decode_room(t, s, psa, &ch->err)))
        return;
    trk_sink_t sink = {&ch->pt, &ch->n_pt, &ch->pt_cap, NULL, &ch->ignored, false};
    for (size_t i = ch->first; i < ch->first + ch->n; i++) {
        const adf_frame_t *fr = &t->frames[i];
        trk_event_t *ev = &j->b->ev[i];
        memset(ev, 0, sizeof *ev);
        ev->event = fr->key.event;
        ev->timestamp = fr->key.timestamp;
        ev->src = fr->offset - j->base_offset;
        ev->first = ch->n_pt;
        adf_error_t ae;
        int rc, st;
        if (psa) {
            size_t n = 0;
            rc = adf_event_psa_decode(fr, s->keys, s->psa, s->psa_cap, &n, &ae);
            st = rc == ADF_OK ? trk_psa_points(t, &sink, s->psa, n, &ch->err) : TUSK_OK;
        } else {
            rc = adf_truth_decode(fr, s->truth, &ae);
            st = rc == ADF_OK ? trk_truth_points(t, s, &sink, s->truth,
                                                 t->cfg.points == TRACK_POINTS_TRUTH_SEGMENTS, &ch->err)
                              : TUSK_OK;
        }
        if (rc != ADF_OK) {
            ch->st = tusk_error_set(&ch->err, TUSK_EINVAL, "%s", ae.message);
            return;
        }
        ev->n = ch->n_pt - ev->first;
        if (st) {
            tusk_error_prefix(&ch->err, "offset %llu (event %u)", (unsigned long long)fr->offset,
                              (unsigned)fr->key.event);
            ch->st = st;
            return;
        }
    }
}

/* Chunk k's points into the batch's, after the chunks' before it. */
static void copy_chunk(void *ctx, size_t k, unsigned thread)
{
    const read_job_t *j = ctx;
    const trk_chunk_t *ch = &j->t->chunk[k];
    (void)thread;
    if (ch->n_pt)
        memcpy(j->b->pt + ch->pt_at, ch->pt, ch->n_pt * sizeof *ch->pt);
    for (size_t i = ch->first; i < ch->first + ch->n; i++)
        j->b->ev[i].first += ch->pt_at;
}

int track_frames_read(track_t *t, track_batch_t *b, const void *in, size_t in_size, uint64_t base_offset,
                      tusk_error_t *err)
{
    track_batch_clear(b);
    const bool psa = t->cfg.points == TRACK_POINTS_PSA;
    const uint32_t type = psa ? ADF_TYPE_EVENT_DATA_PSA : ADF_TYPE_DATA_TRUTH;
    trk_scratch_t *s0 = &t->scratch[0];
    if (!s0->reader && !(s0->reader = adf_reader_new(ADF_ON_ERROR_STOP)))
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    /* The frames that make events, up to a malformed one (its failure
     * comes after those of the frames before it). Offsets in messages
     * count from base_offset; events keep theirs from the buffer's start.
     * The codecs' messages name the offset. */
    adf_reader_reset(s0->reader, in, in_size, base_offset);
    adf_frame_t fr;
    size_t n = 0;
    int rc, scan = TUSK_OK;
    tusk_error_t scan_err;
    while ((rc = adf_reader_next(s0->reader, &fr)) != ADF_END) {
        if (rc != ADF_OK) {
            scan = tusk_error_set(&scan_err, TUSK_EINVAL, "%s", adf_reader_error(s0->reader)->message);
            break;
        }
        if (fr.key.type != type)
            continue;
        if (tusk_grow(&t->frames, &t->frames_cap, n + 1, sizeof *t->frames))
            return tusk_error_set(err, TUSK_ENOMEM, "out of memory (%zu frames)", n + 1);
        t->frames[n++] = fr;
    }
    if (tusk_grow(&b->ev, &b->ev_cap, n, sizeof *b->ev))
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory (%zu events)", n);
    int st = trk_chunks_make(t, 0, n, err);
    if (st)
        return st;
    read_job_t j = {t, b, base_offset};
    trk_chunks_run(t, read_chunk, &j);
    /* The first failure, and what one thread would have read before it. */
    size_t good = t->n_chunks, pts = 0;
    for (size_t k = 0; k < t->n_chunks && good == t->n_chunks; k++)
        if (t->chunk[k].st)
            good = k;
    for (size_t k = 0; k < t->n_chunks && k <= good; k++) {
        t->stats.points_ignored += t->chunk[k].ignored;
        t->chunk[k].pt_at = pts;
        pts += t->chunk[k].n_pt;
    }
    if (good < t->n_chunks) {
        if (err)
            *err = t->chunk[good].err;
        return t->chunk[good].st;
    }
    if (pts >= UINT32_MAX)
        return tusk_error_set(err, TUSK_ELIMIT, "more than %u points in a batch", (unsigned)UINT32_MAX);
    if (tusk_grow(&b->pt, &b->pt_cap, pts, sizeof *b->pt))
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory (%zu points)", pts);
    trk_chunks_run(t, copy_chunk, &j);
    b->n_ev = n;
    b->n_pt = pts;
    if (scan && err)
        *err = scan_err;
    return scan;
}

size_t track_frames_extra(const track_batch_t *b)
{
    size_t n = 0;
    for (size_t i = 0; i < b->n_ev; i++)
        n += ADF_KEY_SIZE + adf_tracked_payload_size((unsigned)b->ev[i].g_n);
    return n;
}

/* Copy the frames of in[start, end) (offsets from in's start) to w,
 * each that made event k (k from *k on, below k_end) followed by its
 * data:tracked frame; *k: the next event. */
static int write_span(const track_batch_t *b, adf_reader_t *r, const void *in, size_t start, size_t end, size_t *k,
                      size_t k_end, adf_writer_t *w, tusk_error_t *err)
{
    adf_tracked_t tr;
    adf_reader_reset(r, (const uint8_t *)in + start, end - start, start);
    adf_frame_t fr;
    adf_error_t ae;
    int rc;
    while ((rc = adf_reader_next(r, &fr)) != ADF_END) {
        if (rc != ADF_OK)
            return tusk_error_set(err, TUSK_EINVAL, "%s", adf_reader_error(r)->message);
        if (adf_writer_put_frame(w, &fr) != ADF_OK)
            return tusk_error_set(err, TUSK_ELIMIT, "offset %llu: %s", (unsigned long long)fr.offset,
                                  adf_writer_error(w)->message);
        if (*k < k_end && b->ev[*k].src == fr.offset) {
            track_batch_result(b, *k, &tr);
            if (adf_tracked_encode(w, b->ev[*k].event, b->ev[*k].timestamp, &tr, &ae) != ADF_OK)
                return tusk_error_set(err, TUSK_ELIMIT, "event %u: data:tracked: %s", (unsigned)b->ev[*k].event,
                                      ae.message);
            (*k)++;
        }
    }
    return TUSK_OK;
}

static int not_the_buffer(size_t k, size_t n, tusk_error_t *err)
{
    return tusk_error_set(err, TUSK_EINVAL, "the buffer holds %zu of the batch's %zu events: not the buffer read", k,
                          n);
}

int track_frames_write(const track_t *t, const track_batch_t *b, const void *in, size_t in_size,
                       adf_writer_t *writer, tusk_error_t *err)
{
    (void)t;
    adf_reader_t *r = adf_reader_new(ADF_ON_ERROR_STOP);
    if (!r)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    size_t k = 0;
    int st = write_span(b, r, in, 0, in_size, &k, b->n_ev, writer, err);
    if (!st && k != b->n_ev)
        st = not_the_buffer(k, b->n_ev, err);
    adf_reader_destroy(&r);
    return st;
}

typedef struct write_job {
    track_t *t;
    const track_batch_t *b;
    const void *in;
    size_t in_size;
    uint8_t *out;
} write_job_t;

/* The span of input chunk k copies: from its first event's frame (the
 * buffer's start for the first chunk) to the next chunk's. */
static void span_of(const write_job_t *j, size_t k, size_t *start, size_t *end)
{
    const trk_chunk_t *ch = &j->t->chunk[k];
    *start = k == 0 ? 0 : (size_t)j->b->ev[ch->first].src;
    *end = k + 1 == j->t->n_chunks ? j->in_size : (size_t)j->b->ev[ch->first + ch->n].src;
}

/* Chunk k's span and its events' data:tracked frames, at ch->out_at in
 * the output, ch->out_size bytes. */
static void write_chunk(void *ctx, size_t k, unsigned thread)
{
    const write_job_t *j = ctx;
    trk_chunk_t *ch = &j->t->chunk[k];
    trk_scratch_t *s = &j->t->scratch[thread];
    if ((!s->reader && !(s->reader = adf_reader_new(ADF_ON_ERROR_STOP))) ||
        (!s->writer && !(s->writer = adf_writer_new()))) {
        ch->st = tusk_error_set(&ch->err, TUSK_ENOMEM, "out of memory");
        return;
    }
    size_t start, end, e = ch->first;
    span_of(j, k, &start, &end);
    adf_writer_reset(s->writer, j->out + ch->out_at, ch->out_size);
    if ((ch->st = write_span(j->b, s->reader, j->in, start, end, &e, ch->first + ch->n, s->writer, &ch->err)))
        return;
    ch->found = e - ch->first;
    if (adf_writer_used(s->writer) != ch->out_size)
        ch->st = tusk_error_set(&ch->err, TUSK_EINVAL, "offset %zu: the frames from there take %zu bytes, not %zu",
                                start, adf_writer_used(s->writer), ch->out_size);
}

int track_frames_write_buffer(track_t *t, const track_batch_t *b, const void *in, size_t in_size, void *out,
                              size_t cap, size_t *used, tusk_error_t *err)
{
    *used = 0;
    const size_t need = in_size + track_frames_extra(b);
    if (cap < need)
        return tusk_error_set(err, TUSK_ELIMIT, "the output needs %zu bytes, %zu given", need, cap);
    trk_scratch_t *s0 = &t->scratch[0];
    if ((!s0->reader && !(s0->reader = adf_reader_new(ADF_ON_ERROR_STOP))) ||
        (!s0->writer && !(s0->writer = adf_writer_new())))
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    if (b->n_ev == 0 || t->threads == 1) {
        /* one span: the whole buffer */
        size_t k = 0;
        adf_writer_reset(s0->writer, out, cap);
        int st = write_span(b, s0->reader, in, 0, in_size, &k, b->n_ev, s0->writer, err);
        if (!st && k != b->n_ev)
            st = not_the_buffer(k, b->n_ev, err);
        *used = adf_writer_used(s0->writer);
        return st;
    }
    int st = trk_chunks_make(t, 0, b->n_ev, err);
    if (st)
        return st;
    /* Where each chunk's output goes and its size; spans of a batch from
     * another buffer fail here or when copied. */
    write_job_t j = {t, b, in, in_size, out};
    size_t at = 0, last = 0;
    for (size_t k = 0; k < t->n_chunks; k++) {
        trk_chunk_t *ch = &t->chunk[k];
        size_t start, end;
        span_of(&j, k, &start, &end);
        if (start < last || end < start || end > in_size)
            return not_the_buffer(0, b->n_ev, err);
        last = end;
        ch->out_at = at;
        ch->out_size = end - start;
        for (size_t e = ch->first; e < ch->first + ch->n; e++)
            ch->out_size += ADF_KEY_SIZE + adf_tracked_payload_size((unsigned)b->ev[e].g_n);
        at += ch->out_size;
    }
    trk_chunks_run(t, write_chunk, &j);
    size_t found = 0;
    for (size_t k = 0; k < t->n_chunks; k++) {
        const trk_chunk_t *ch = &t->chunk[k];
        if (ch->st) {
            if (err)
                *err = ch->err;
            return ch->st;
        }
        found += ch->found;
    }
    if (found != b->n_ev)
        return not_the_buffer(found, b->n_ev, err);
    *used = at;
    return TUSK_OK;
}
