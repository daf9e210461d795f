/* adf_writer.c - append whole frames to a fixed output buffer. */
#include <stdlib.h>
#include <string.h>

#include "base/bytes.h"
#include "adf_private.h"

struct adf_writer {
    uint8_t *buf;
    size_t cap;
    size_t pos;
    size_t open[ADF_WRITER_MAX_DEPTH]; /* start of each open composite */
    unsigned depth;
    bool full;
    adf_error_t error;
};

adf_writer_t *adf_writer_new(void)
{
    adf_writer_t *w = calloc(1, sizeof *w);
    if (w)
        adf_error_clear(&w->error);
    return w;
}

void adf_writer_destroy(adf_writer_t **writer)
{
    if (writer && *writer) {
        free(*writer);
        *writer = NULL;
    }
}

void adf_writer_reset(adf_writer_t *w, void *buffer, size_t capacity)
{
    w->buf = buffer;
    w->cap = buffer ? capacity : 0;
    w->pos = 0;
    w->depth = 0;
    w->full = false;
    adf_error_clear(&w->error);
}

/* Make room for `total` bytes at pos, or roll back and say why not. */
static int make_room(adf_writer_t *w, uint64_t total)
{
    if (w->full)
        return adf_error_set(&w->error, ADF_EFULL, ADF_NO_OFFSET,
                             "output buffer is full since an earlier frame was refused");
    if (total <= w->cap - w->pos)
        return ADF_OK;
    /* The outermost open composite goes with the frame that did not fit. */
    size_t start = w->depth ? w->open[0] : w->pos;
    uint64_t whole = (w->pos - start) + total;
    w->pos = start;
    w->depth = 0;
    if (start == 0)
        return adf_error_set(&w->error, ADF_ETOOBIG, ADF_NO_OFFSET,
                             "frame of %llu bytes cannot fit an output buffer of %zu bytes",
                             (unsigned long long)whole, w->cap);
    w->full = true;
    return adf_error_set(&w->error, ADF_EFULL, ADF_NO_OFFSET,
                         "output buffer full: %llu bytes needed, %zu of %zu free",
                         (unsigned long long)whole, w->cap - start, w->cap);
}

static int write_key(adf_writer_t *w, const adf_key_t *key, size_t payload_size)
{
    if (payload_size > ADF_FRAME_MAX - ADF_KEY_SIZE)
        return adf_error_set(&w->error, ADF_ERANGE, ADF_NO_OFFSET,
                             "payload of %zu bytes exceeds the 32-bit frame length", payload_size);
    adf_key_t k = *key;
    k.length = (uint32_t)(payload_size + ADF_KEY_SIZE);
    int rc = adf_key_validate(&k, &w->error);
    if (rc != ADF_OK)
        return rc;
    rc = make_room(w, k.length);
    if (rc != ADF_OK)
        return rc;
    adf_key_encode(&k, w->buf + w->pos, NULL);
    w->pos += ADF_KEY_SIZE;
    return ADF_OK;
}

int adf_writer_reserve(adf_writer_t *w, const adf_key_t *key, size_t size, uint8_t **payload)
{
    int rc = write_key(w, key, size);
    if (rc != ADF_OK)
        return rc;
    *payload = w->buf + w->pos;
    w->pos += size;
    return ADF_OK;
}

int adf_writer_put(adf_writer_t *w, const adf_key_t *key, const void *payload, size_t size)
{
    uint8_t *dst;
    int rc = adf_writer_reserve(w, key, size, &dst);
    if (rc == ADF_OK && size)
        memcpy(dst, payload, size);
    return rc;
}

int adf_writer_put_frame(adf_writer_t *w, const adf_frame_t *frame)
{
    return adf_writer_put(w, &frame->key, frame->payload, frame->payload_size);
}

int adf_writer_begin(adf_writer_t *w, const adf_key_t *key)
{
    if (!adf_type_is_composite(key->type))
        return adf_error_set(&w->error, ADF_EINVAL, ADF_NO_OFFSET,
                             "adf_writer_begin: type 0x%08X is not a composite (0xCA) type",
                             (unsigned)key->type);
    if (w->depth == ADF_WRITER_MAX_DEPTH)
        return adf_error_set(&w->error, ADF_EINVAL, ADF_NO_OFFSET,
                             "composite frames nested deeper than %d", ADF_WRITER_MAX_DEPTH);
    size_t start = w->pos;
    int rc = write_key(w, key, 0);
    if (rc != ADF_OK)
        return rc;
    w->open[w->depth++] = start;
    return ADF_OK;
}

int adf_writer_end(adf_writer_t *w)
{
    if (w->full)
        return adf_error_set(&w->error, ADF_EFULL, ADF_NO_OFFSET,
                             "output buffer is full; the composite frame was taken back");
    if (w->depth == 0)
        return adf_error_set(&w->error, ADF_EINVAL, ADF_NO_OFFSET,
                             "adf_writer_end without an open composite frame");
    size_t start = w->open[--w->depth];
    size_t length = w->pos - start;
    if (length > ADF_FRAME_MAX) {
        w->pos = start;
        return adf_error_set(&w->error, ADF_ERANGE, ADF_NO_OFFSET,
                             "composite frame of %zu bytes exceeds the 32-bit frame length", length);
    }
    tusk_put_u32(w->buf + start, (uint32_t)length);
    return ADF_OK;
}

void adf_writer_abort(adf_writer_t *w)
{
    if (w->depth)
        w->pos = w->open[--w->depth];
}

size_t adf_writer_used(const adf_writer_t *w)
{
    return w->depth ? w->open[0] : w->pos;
}

unsigned adf_writer_depth(const adf_writer_t *w)
{
    return w->depth;
}

bool adf_writer_full(const adf_writer_t *w)
{
    return w->full;
}

const adf_error_t *adf_writer_error(const adf_writer_t *w)
{
    return &w->error;
}
