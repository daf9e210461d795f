/* ut_private.h - what the files of libtusk-ut share (not installed). */
#ifndef TUSK_UT_PRIVATE_H
#define TUSK_UT_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/bytes.h"
#include "base/pool.h"
#include "base/rng.h"
#include "tusk/export.h"
#include "tusk/ut.h"
#include "ut_shared.h"

_Static_assert((int)UT_REFERENCE == (int)ADF_UT_REFERENCE && (int)UT_FAST == (int)ADF_UT_FAST &&
                   (int)UT_OPENCL == (int)ADF_UT_OPENCL,
               "backend codes");
_Static_assert(UT_PLANES == ADF_UT_PLANES, "four planes");

/* ---- the geometry ---- */

#define UT_MAX_STAVES 64
#define UT_MAX_ROWS 64

struct ut_geometry {
    ut_geometry_config_t cfg;
    uint32_t digest;
    unsigned n_sectors, n_groups;
    ut_dev_sector_t sector[UT_MAX_SECTORS];
    ut_sector_info_t info[UT_MAX_SECTORS];
    float group_u_lo[UT_MAX_GROUPS];
    ut_dev_plane_t plane[UT_PLANES]; /* win = 0: the tracker's settings fill it (ut_planes_of) */
    unsigned staves[UT_PLANES];
    double width, height, y_max;     /* a stave's width, a row's height, the planes' half height */
    /* [plane][stave][row][half]: the sector there (half 1: the upper half-height sector of a split row) */
    uint16_t where[UT_PLANES][UT_MAX_STAVES][UT_MAX_ROWS][2];
};

/* The digest of a geometry's settings (ut_geometry_digest without making it). */
TUSK_INTERNAL uint32_t ut_geometry_config_digest(const ut_geometry_config_t *cfg);

/* Where a point of plane p lies: its sector and its position in strips
 * (strip k spans [k, k + 1)); false outside the plane's sensors or in the
 * beam hole. */
TUSK_INTERNAL bool ut_geometry_locate(const ut_geometry_t *geo, unsigned p, double x, double y, unsigned *sector,
                                      double *strip_pos);

/* ---- the settings as the arithmetic uses them ---- */

/* The tracker's params (ut_shared.h) and planes with their windows. */
TUSK_INTERNAL void ut_params_of(const ut_config_t *cfg, const ut_geometry_t *geo, ut_params_t *p,
                                ut_dev_plane_t planes[UT_PLANES]);
/* The sector table with the weights of the tracker's hit error. */
TUSK_INTERNAL void ut_sectors_of(const ut_config_t *cfg, const ut_geometry_t *geo, ut_dev_sector_t *sectors);

/* ---- events in memory ---- */

struct ut_batch {
    size_t n, cap_ev, cap_number, cap_ts;
    ut_dev_event_t *ev;       /* the launch's event table (batch-wide offsets) */
    uint32_t *number;         /* event numbers */
    uint64_t *timestamp;
    size_t n_banks, cap_info, cap_bfirst;
    uint32_t *bank_info;      /* sector << 16 | hits, per bank */
    uint32_t *bank_first;     /* its first word in `words` */
    size_t n_words, cap_words;
    uint16_t *words;
    size_t n_velo, cap_velo;
    ut_dev_velo_t *velo;
};

/* ---- the decoded hits of a batch (one SoA over all its events) ---- */

typedef struct ut_hits {
    size_t cap, cap_groups;
    float *x0, *z0, *yb, *ye, *w;
    uint32_t *id;
    uint32_t *group_first;    /* per event n_groups + 1 offsets, relative to its first hit */
    uint32_t n_groups;
} ut_hits_t;

TUSK_INTERNAL void ut_hits_free(ut_hits_t *h);
/* Room for a batch's hits and group offsets. */
TUSK_INTERNAL int ut_hits_room(ut_hits_t *h, const ut_batch_t *b, uint32_t n_groups, tusk_error_t *err);

/* ---- results ---- */

struct ut_result {
    size_t n, cap_count, cap_first, cap_nh, cap_fh;
    uint32_t *count;          /* tracks of event i */
    size_t *first;            /* its first track in `tracks` (the batch's VELO track offset) */
    ut_dev_track_t *tracks;   /* room for one a VELO track */
    size_t cap_tracks;
    bool keep_hits;
    bool has_hits;
    ut_hits_t hits;           /* the decoded hits, when kept */
    uint32_t *n_hits;         /* per event */
    size_t *first_hit;
};

/* Events and track room for a batch; counts zero. */
TUSK_INTERNAL int ut_result_reset(ut_result_t *res, const ut_batch_t *b, tusk_error_t *err);
/* Copy the decoded hits into the result (when it keeps them). */
TUSK_INTERNAL int ut_result_set_hits(ut_result_t *res, const ut_batch_t *b, const ut_hits_t *h, tusk_error_t *err);

/* ---- one event on the CPU (ut_event.c) ---- */

/* Scratch of one thread. */
typedef struct ut_work {
    uint32_t *key, *pos;      /* per hit of the event: sort key, raw index */
    size_t cap;
    uint32_t count[UT_MAX_GROUPS + 1];
} ut_work_t;

TUSK_INTERNAL void ut_work_free(ut_work_t *w);

/* Decode event i of the batch into h (its hits at ev.first_hit, its group
 * offsets at i * (n_groups + 1)). */
TUSK_INTERNAL int ut_decode_event(ut_work_t *w, const ut_dev_sector_t *sectors, uint32_t n_groups,
                                  const ut_batch_t *b, size_t i, ut_hits_t *h);
/* Compass on event i's decoded hits: its tracks in VELO track order into
 * res (count and records). */
TUSK_INTERNAL void ut_compass_event(const ut_params_t *p, const ut_dev_plane_t *planes, const float *group_u_lo,
                                    const ut_batch_t *b, size_t i, const ut_hits_t *h, ut_result_t *res);

/* A shared CPU engine: the reference and fast backends are it on one
 * thread or a pool. */
typedef struct ut_cpu {
    ut_config_t cfg;
    ut_geometry_t *geo;
    ut_params_t p;
    ut_dev_plane_t planes[UT_PLANES];
    ut_dev_sector_t sectors[UT_MAX_SECTORS];
    ut_hits_t hits;           /* the last batch's decoded hits */
    const ut_batch_t *decoded; /* the batch they belong to */
    uint64_t decoded_hits;    /* its hit count then (a changed batch is caught) */
} ut_cpu_t;

TUSK_INTERNAL int ut_cpu_init(ut_cpu_t *c, const ut_config_t *cfg, tusk_error_t *err);
TUSK_INTERNAL void ut_cpu_free(ut_cpu_t *c);
/* The checks a run starts with (stages, a Compass without its decoding). */
TUSK_INTERNAL int ut_cpu_begin(ut_cpu_t *c, const ut_batch_t *b, int stages, ut_result_t *res, tusk_error_t *err);
/* After the stages: the hits into the result when it keeps them. */
TUSK_INTERNAL int ut_cpu_end(ut_cpu_t *c, const ut_batch_t *b, int stages, ut_result_t *res, tusk_error_t *err);

/* ---- digests ---- */

/* The digest of a settings text (geometry, tracker): base/bytes.h's
 * FNV-1a, folded to the frames' 32 bits. */
static inline uint32_t ut_digest_text(const char *text)
{
    uint64_t h = tusk_fnv1a(TUSK_FNV1A_SEED, text, strlen(text));
    return (uint32_t)(h ^ (h >> 32));
}

/* The kernels' source (opencl/gpu_common.h, ut_shared.h, kernels/ut.cl),
 * made by tools/embed-text.sh; the tests build on it. */
TUSK_INTERNAL extern const char tusk_ut_kernel_source[];
TUSK_INTERNAL extern const unsigned long tusk_ut_kernel_source_size;

#endif
