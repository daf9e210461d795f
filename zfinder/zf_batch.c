/* zf_batch.c - many RoIs with their points (tusk/zfinder.h). */
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "zf_private.h"

typedef struct entry {
    uint32_t event, n;
    uint64_t timestamp;
    float phi_min, phi_width;
    size_t first;             /* index of its first point */
} entry_t;

struct zf_batch {
    entry_t *roi;
    size_t n, cap;
    adf_idsp_point_t *pt;
    size_t n_pt, cap_pt;
};

zf_batch_t *zf_batch_new(void)
{
    return calloc(1, sizeof(zf_batch_t));
}

void zf_batch_destroy(zf_batch_t **batch)
{
    if (!batch || !*batch)
        return;
    free((*batch)->roi);
    free((*batch)->pt);
    free(*batch);
    *batch = NULL;
}

void zf_batch_clear(zf_batch_t *b)
{
    b->n = 0;
    b->n_pt = 0;
}

int zf_batch_add(zf_batch_t *b, const zf_roi_t *roi, tusk_error_t *err)
{
    if (tusk_grow(&b->roi, &b->cap, b->n + 1, sizeof *b->roi) != 0 ||
        tusk_grow(&b->pt, &b->cap_pt, b->n_pt + roi->n, sizeof *b->pt) != 0)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory (%zu RoIs, %zu spacepoints)", b->n + 1,
                              b->n_pt + roi->n);
    entry_t *e = &b->roi[b->n++];
    e->event = roi->event;
    e->timestamp = roi->timestamp;
    e->phi_min = roi->phi_min;
    e->phi_width = roi->phi_width;
    e->n = roi->n;
    e->first = b->n_pt;
    if (roi->n)
        memcpy(b->pt + b->n_pt, roi->pt, roi->n * sizeof *b->pt);
    b->n_pt += roi->n;
    return TUSK_OK;
}

size_t zf_batch_count(const zf_batch_t *b)
{
    return b->n;
}

size_t zf_batch_points(const zf_batch_t *b)
{
    return b->n_pt;
}

void zf_batch_roi(const zf_batch_t *b, size_t i, zf_roi_t *roi)
{
    const entry_t *e = &b->roi[i];
    roi->event = e->event;
    roi->timestamp = e->timestamp;
    roi->phi_min = e->phi_min;
    roi->phi_width = e->phi_width;
    roi->n = e->n;
    roi->pt = b->pt + e->first;
}
