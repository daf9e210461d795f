/* adf_reader.c - frames of an in-memory buffer (the scanner with the whole
 * buffer in view). */
#include <stdlib.h>

#include "adf_private.h"

struct adf_reader {
    adf_scan_t scan;
    const uint8_t *data;
    size_t size;
    uint64_t base;
};

adf_reader_t *adf_reader_new(adf_on_error_t policy)
{
    adf_reader_t *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    adf_scan_init(&r->scan, policy, ADF_FRAME_MAX);
    return r;
}

void adf_reader_destroy(adf_reader_t **reader)
{
    if (reader && *reader) {
        free(*reader);
        *reader = NULL;
    }
}

void adf_reader_reset(adf_reader_t *r, const void *data, size_t size, uint64_t base_offset)
{
    /* No frame limit: what remains of the buffer bounds every frame, and an
     * overlong one is reported as truncated. */
    adf_scan_init(&r->scan, r->scan.policy, ADF_FRAME_MAX);
    r->data = data;
    r->size = data ? size : 0;
    r->base = base_offset;
}

int adf_reader_open_composite(adf_reader_t *r, const adf_frame_t *frame)
{
    if (!adf_type_is_composite(frame->key.type)) {
        char buf[16];
        return adf_error_set(&r->scan.error, ADF_EBADTYPE, frame->offset,
                             "offset %llu: %s is not a composite frame",
                             (unsigned long long)frame->offset, adf_type_label(frame->key.type, buf));
    }
    adf_reader_reset(r, frame->payload, frame->payload_size, frame->offset + ADF_KEY_SIZE);
    return ADF_OK;
}

int adf_reader_next(adf_reader_t *r, adf_frame_t *frame)
{
    /* The whole buffer is in view, so the scanner never asks for more. */
    return adf_scan_next(&r->scan, r->data, r->size, true, r->base, frame);
}

const adf_error_t *adf_reader_error(const adf_reader_t *r)
{
    return &r->scan.error;
}

adf_reader_stats_t adf_reader_stats(const adf_reader_t *r)
{
    return r->scan.stats;
}

uint64_t adf_count_frames(adf_reader_t *r, const void *data, size_t size)
{
    adf_reader_reset(r, data, size, 0);
    adf_frame_t f;
    uint64_t n = 0;
    while (adf_reader_next(r, &f) == ADF_OK)
        n++;
    return n;
}
