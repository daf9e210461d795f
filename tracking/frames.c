/* frames.c - buffers of ADF frames in and out of a tracking batch
 * (tusk/track.h, track_frames_*): what the tracking actor and tusk-track
 * do to a buffer, decoded with the libtusk-adf codecs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracking_private.h"
#include "tusk/adf_reader.h"

/* Room for one composite's data:psa records: the array's crystals (a
 * composite holds each crystal at most once in a built event), at least
 * 64. */
static int psa_room(track_t *t, tusk_error_t *err)
{
    size_t want = t->array ? array_count(t->array) : 0;
    if (want < 64)
        want = 64;
    if (t->psa_cap >= want)
        return TUSK_OK;
    free(t->keys);
    free(t->psa);
    t->keys = malloc(want * sizeof *t->keys);
    t->psa = malloc(want * sizeof *t->psa);
    if (!t->keys || !t->psa) {
        free(t->keys);
        free(t->psa);
        t->keys = NULL;
        t->psa = NULL;
        t->psa_cap = 0;
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory (%zu data:psa records)", want);
    }
    t->psa_cap = want;
    return TUSK_OK;
}

int track_frames_read(track_t *t, track_batch_t *b, const void *in, size_t in_size, uint64_t base_offset,
                      tusk_error_t *err)
{
    track_batch_clear(b);
    adf_reader_t *r = adf_reader_new(ADF_ON_ERROR_STOP);
    if (!r)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    const bool psa = t->cfg.points == TRACK_POINTS_PSA;
    int st = psa ? psa_room(t, err) : TUSK_OK;
    if (!st && !psa && !t->truth && !(t->truth = malloc(sizeof *t->truth)))
        st = tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    /* Offsets in messages count from base_offset; events keep theirs from
     * the buffer's start. The codecs' messages name the offset. */
    adf_reader_reset(r, in, in_size, base_offset);
    adf_frame_t fr;
    adf_error_t ae;
    int rc;
    while (!st && (rc = adf_reader_next(r, &fr)) != ADF_END) {
        if (rc != ADF_OK) {
            st = tusk_error_set(err, TUSK_EINVAL, "%s", adf_reader_error(r)->message);
            break;
        }
        unsigned long long at = (unsigned long long)fr.offset;
        if (psa && fr.key.type == ADF_TYPE_EVENT_DATA_PSA) {
            size_t n = 0;
            rc = adf_event_psa_decode(&fr, t->keys, t->psa, t->psa_cap, &n, &ae);
            if (rc != ADF_OK) {
                st = tusk_error_set(err, TUSK_EINVAL, "%s", ae.message);
                break;
            }
            if (!(st = track_batch_begin(b, fr.key.event, fr.key.timestamp, err))) {
                b->ev[b->n_ev - 1].src = fr.offset - base_offset;
                st = track_add_psa(t, b, t->psa, n, err);
            }
        } else if (!psa && fr.key.type == ADF_TYPE_DATA_TRUTH) {
            rc = adf_truth_decode(&fr, t->truth, &ae);
            if (rc != ADF_OK) {
                st = tusk_error_set(err, TUSK_EINVAL, "%s", ae.message);
                break;
            }
            if (!(st = track_batch_begin(b, fr.key.event, fr.key.timestamp, err))) {
                b->ev[b->n_ev - 1].src = fr.offset - base_offset;
                st = track_add_truth(t, b, t->truth, t->cfg.points == TRACK_POINTS_TRUTH_SEGMENTS, err);
            }
        } else {
            continue;
        }
        if (st)
            tusk_error_prefix(err, "offset %llu (event %u)", at, (unsigned)fr.key.event);
    }
    adf_reader_destroy(&r);
    return st;
}

size_t track_frames_extra(const track_batch_t *b)
{
    size_t n = 0;
    for (size_t i = 0; i < b->n_ev; i++)
        n += ADF_KEY_SIZE + adf_tracked_payload_size((unsigned)b->ev[i].g_n);
    return n;
}

int track_frames_write(const track_t *t, const track_batch_t *b, const void *in, size_t in_size,
                       adf_writer_t *writer, tusk_error_t *err)
{
    (void)t;
    adf_reader_t *r = adf_reader_new(ADF_ON_ERROR_STOP);
    adf_tracked_t *tr = malloc(sizeof *tr);
    if (!r || !tr) {
        adf_reader_destroy(&r);
        free(tr);
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    }
    adf_reader_reset(r, in, in_size, 0);
    adf_frame_t fr;
    adf_error_t ae;
    size_t k = 0;
    int st = TUSK_OK, rc;
    while ((rc = adf_reader_next(r, &fr)) != ADF_END) {
        if (rc != ADF_OK) {
            st = tusk_error_set(err, TUSK_EINVAL, "%s", adf_reader_error(r)->message);
            break;
        }
        if (adf_writer_put_frame(writer, &fr) != ADF_OK) {
            st = tusk_error_set(err, TUSK_ELIMIT, "offset %llu: %s", (unsigned long long)fr.offset,
                                adf_writer_error(writer)->message);
            break;
        }
        if (k < b->n_ev && b->ev[k].src == fr.offset) {
            track_batch_result(b, k, tr);
            if (adf_tracked_encode(writer, b->ev[k].event, b->ev[k].timestamp, tr, &ae) != ADF_OK) {
                st = tusk_error_set(err, TUSK_ELIMIT, "event %u: data:tracked: %s", (unsigned)b->ev[k].event,
                                    ae.message);
                break;
            }
            k++;
        }
    }
    if (!st && k != b->n_ev)
        st = tusk_error_set(err, TUSK_EINVAL, "the buffer holds %zu of the batch's %zu events: not the buffer read",
                            k, b->n_ev);
    adf_reader_destroy(&r);
    free(tr);
    return st;
}
