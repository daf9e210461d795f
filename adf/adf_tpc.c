/* adf_tpc.c - data:tpc_clusters, data:tpc_tracks and data:tpc_truth
 * codecs (tusk layouts, adf/FORMAT.md). */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>

#include "base/bytes.h"
#include "adf_codec.h"
#include "adf_private.h"

/* data:tpc_clusters */
enum { CH_N = 0, CH_SLICE = 4, CH_SLICES = 5, CH_FLAGS = 6, CH_BZ = 8, CH_GEOMETRY = 12 };
enum { CC_ROW = 0, CC_FLAGS = 1, CC_Y = 2, CC_Z = 6 };
_Static_assert(CH_GEOMETRY + 4 == ADF_TPC_CLUSTERS_HEADER_SIZE, "data:tpc_clusters header size");
_Static_assert(CC_Z + 4 == ADF_TPC_CLUSTER_SIZE, "data:tpc_clusters cluster size");

/* data:tpc_tracks */
enum { TH_N_TRACKS = 0, TH_N_HITS = 4, TH_N_CLUSTERS = 8, TH_SETTINGS = 12, TH_SLICE = 16, TH_BACKEND = 17,
       TH_FLAGS = 18 };
enum { TT_X = 0, TT_PARAM = 4, TT_COV = 24, TT_CHI2 = 84, TT_NDF = 88, TT_FIRST = 90, TT_LAST = 91, TT_N_HITS = 92,
       TT_FLAGS = 94, TT_TRACKLET = 96 };
enum { TK_CLUSTER = 0, TK_ROW = 4, TK_FLAGS = 5, TK_X = 6, TK_Y = 10, TK_Z = 14 };
_Static_assert(TH_FLAGS + 2 == ADF_TPC_TRACKS_HEADER_SIZE, "data:tpc_tracks header size");
_Static_assert(TT_TRACKLET + 4 == ADF_TPC_TRACK_SIZE, "data:tpc_tracks track size");
_Static_assert(TK_Z + 4 == ADF_TPC_HIT_SIZE, "data:tpc_tracks hit size");

/* data:tpc_truth */
enum { RH_N_PARTICLES = 0, RH_N_CLUSTERS = 4, RH_SLICE = 8, RH_FLAGS = 10 };
enum { RP_ID = 0, RP_P = 4, RP_VERTEX = 16, RP_CHARGE = 28, RP_FLAGS = 30 };
_Static_assert(RH_FLAGS + 2 == ADF_TPC_TRUTH_HEADER_SIZE, "data:tpc_truth header size");
_Static_assert(RP_FLAGS + 2 == ADF_TPC_PARTICLE_SIZE, "data:tpc_truth particle size");

const char *adf_tpc_backend_name(unsigned b)
{
    return b == ADF_TPC_REFERENCE ? "reference" : b == ADF_TPC_FAST ? "fast" : b == ADF_TPC_OPENCL ? "opencl" : "?";
}

/* ---- data:tpc_clusters ------------------------------------------------------------- */

size_t adf_tpc_clusters_payload_size(uint32_t n)
{
    return ADF_TPC_CLUSTERS_HEADER_SIZE + (size_t)n * ADF_TPC_CLUSTER_SIZE;
}

/* The first thing wrong with a clusters header, or NULL. */
static const char *clusters_problem(unsigned slice, unsigned slices, float bz, uint32_t geometry, char *buf, size_t cap)
{
    if (slice >= ADF_TPC_SLICES)
        snprintf(buf, cap, "slice %u, expected 0-%u", slice, ADF_TPC_SLICES - 1);
    else if (slices < 1 || slices > ADF_TPC_SLICES)
        snprintf(buf, cap, "an event of %u slices, expected 1-%u", slices, ADF_TPC_SLICES);
    else if (!(isfinite(bz) && bz != 0.0f && fabsf(bz) <= 20.0f))
        snprintf(buf, cap, "field %g T, expected a finite value, not 0, of at most 20 T", (double)bz);
    else if (geometry != ADF_TPC_GEOMETRY_ALICE)
        snprintf(buf, cap, "geometry %u, the only one known is %u (ALICE)", (unsigned)geometry,
                 ADF_TPC_GEOMETRY_ALICE);
    else
        return NULL;
    return buf;
}

/* Cluster i's fields: 0, or -1 with the reason. */
static int cluster_problem(uint32_t i, unsigned row, float y, float z, char *buf, size_t cap)
{
    if (row >= ADF_TPC_ROWS)
        snprintf(buf, cap, "cluster %u is in row %u, the rows are 0-%u", (unsigned)i, row, ADF_TPC_ROWS - 1);
    else if (!(isfinite(y) && isfinite(z)))
        snprintf(buf, cap, "cluster %u at (y %g, z %g) mm is not finite", (unsigned)i, (double)y, (double)z);
    else
        return 0;
    return -1;
}

int adf_tpc_clusters_check(const adf_tpc_clusters_t *h, const adf_tpc_cluster_t *c, adf_error_t *err)
{
    char why[160];
    if (h->n_clusters > ADF_TPC_MAX_CLUSTERS)
        return adf_error_set(err, ADF_ERANGE, ADF_NO_OFFSET, "data:tpc_clusters: %u clusters, at most %u supported",
                             (unsigned)h->n_clusters, ADF_TPC_MAX_CLUSTERS);
    if (clusters_problem(h->slice, h->slices, h->bz, h->geometry, why, sizeof why))
        return adf_error_set(err, ADF_EINVAL, ADF_NO_OFFSET, "data:tpc_clusters: %s", why);
    for (uint32_t i = 0; i < h->n_clusters; i++)
        if (cluster_problem(i, c[i].row, c[i].y, c[i].z, why, sizeof why))
            return adf_error_set(err, ADF_EINVAL, ADF_NO_OFFSET, "data:tpc_clusters (slice %u): %s",
                                 (unsigned)h->slice, why);
    return ADF_OK;
}

int adf_tpc_clusters_encode(adf_writer_t *w, uint32_t event, uint64_t timestamp, const adf_tpc_clusters_t *h,
                            const adf_tpc_cluster_t *c, adf_error_t *err)
{
    int rc = adf_tpc_clusters_check(h, c, err);
    if (rc != ADF_OK)
        return rc;
    uint8_t *p;
    rc = adf_reserve_frame(w, ADF_TYPE_DATA_TPC_CLUSTERS, event, timestamp,
                           adf_tpc_clusters_payload_size(h->n_clusters), &p, err);
    if (rc != ADF_OK)
        return rc;
    tusk_put_u32(p + CH_N, h->n_clusters);
    p[CH_SLICE] = h->slice;
    p[CH_SLICES] = h->slices;
    tusk_put_u16(p + CH_FLAGS, h->flags);
    tusk_put_f32(p + CH_BZ, h->bz);
    tusk_put_u32(p + CH_GEOMETRY, h->geometry);
    uint8_t *q = p + ADF_TPC_CLUSTERS_HEADER_SIZE;
    for (uint32_t i = 0; i < h->n_clusters; i++, q += ADF_TPC_CLUSTER_SIZE) {
        q[CC_ROW] = c[i].row;
        q[CC_FLAGS] = c[i].flags;
        tusk_put_f32(q + CC_Y, c[i].y);
        tusk_put_f32(q + CC_Z, c[i].z);
    }
    return ADF_OK;
}

int adf_tpc_clusters_decode(const adf_frame_t *f, adf_tpc_clusters_t *c, adf_error_t *err)
{
    int rc = adf_expect_type(f, ADF_TYPE_DATA_TPC_CLUSTERS, err);
    if (rc != ADF_OK)
        return rc;
    const uint8_t *p = f->payload;
    unsigned long long off = (unsigned long long)f->offset;
    if (f->payload_size < ADF_TPC_CLUSTERS_HEADER_SIZE)
        return adf_error_set(err, ADF_EPAYLOAD, f->offset,
                             "data:tpc_clusters at offset %llu: payload of %u bytes is shorter than its %u-byte header",
                             off, (unsigned)f->payload_size, ADF_TPC_CLUSTERS_HEADER_SIZE);
    uint32_t n = tusk_get_u32(p + CH_N);
    if (n > ADF_TPC_MAX_CLUSTERS)
        return adf_error_set(err, ADF_ERANGE, f->offset,
                             "data:tpc_clusters at offset %llu: %u clusters, at most %u supported", off, (unsigned)n,
                             ADF_TPC_MAX_CLUSTERS);
    if (f->payload_size != adf_tpc_clusters_payload_size(n))
        return adf_error_set(err, ADF_EPAYLOAD, f->offset,
                             "data:tpc_clusters at offset %llu: payload is %u bytes, %zu expected for %u clusters", off,
                             (unsigned)f->payload_size, adf_tpc_clusters_payload_size(n), (unsigned)n);
    char why[160];
    unsigned slice = p[CH_SLICE];
    float bz = tusk_get_f32(p + CH_BZ);
    uint32_t geometry = tusk_get_u32(p + CH_GEOMETRY);
    if (clusters_problem(slice, p[CH_SLICES], bz, geometry, why, sizeof why))
        return adf_error_set(err, ADF_EPAYLOAD, f->offset, "data:tpc_clusters at offset %llu: %s", off, why);
    const uint8_t *q = p + ADF_TPC_CLUSTERS_HEADER_SIZE;
    for (uint32_t i = 0; i < n; i++, q += ADF_TPC_CLUSTER_SIZE)
        if (cluster_problem(i, q[CC_ROW], tusk_get_f32(q + CC_Y), tusk_get_f32(q + CC_Z), why, sizeof why))
            return adf_error_set(err, ADF_EPAYLOAD, f->offset, "data:tpc_clusters at offset %llu (slice %u): %s", off,
                                 slice, why);
    c->n_clusters = n;
    c->slice = (uint8_t)slice;
    c->slices = p[CH_SLICES];
    c->flags = tusk_get_u16(p + CH_FLAGS);
    c->bz = bz;
    c->geometry = geometry;
    c->raw = p + ADF_TPC_CLUSTERS_HEADER_SIZE;
    return ADF_OK;
}

void adf_tpc_cluster(const adf_tpc_clusters_t *c, uint32_t i, adf_tpc_cluster_t *cl)
{
    const uint8_t *q = c->raw + (size_t)i * ADF_TPC_CLUSTER_SIZE;
    cl->row = q[CC_ROW];
    cl->flags = q[CC_FLAGS];
    cl->y = tusk_get_f32(q + CC_Y);
    cl->z = tusk_get_f32(q + CC_Z);
}

/* ---- data:tpc_tracks ----------------------------------------------------------------- */

size_t adf_tpc_tracks_payload_size(uint32_t n_tracks, uint32_t n_hits)
{
    return ADF_TPC_TRACKS_HEADER_SIZE + (size_t)n_tracks * ADF_TPC_TRACK_SIZE + (size_t)n_hits * ADF_TPC_HIT_SIZE;
}

static const char *tracks_problem(unsigned slice, unsigned backend, char *buf, size_t cap)
{
    if (slice >= ADF_TPC_SLICES)
        snprintf(buf, cap, "slice %u, expected 0-%u", slice, ADF_TPC_SLICES - 1);
    else if (backend < ADF_TPC_REFERENCE || backend > ADF_TPC_OPENCL)
        snprintf(buf, cap, "backend %u, expected 1 (reference), 2 (fast) or 3 (opencl)", backend);
    else
        return NULL;
    return buf;
}

/* Track i with n_hits hits from `first` (their rows and clusters read by
 * `hit`): 0, or -1 with the reason. */
typedef struct hit_view {
    const adf_tpc_hit_t *hits;  /* encoder */
    const uint8_t *raw;         /* decoder */
} hit_view_t;

static void view_hit(const hit_view_t *v, uint32_t j, uint32_t *cluster, unsigned *row)
{
    if (v->hits) {
        *cluster = v->hits[j].cluster;
        *row = v->hits[j].row;
    } else {
        const uint8_t *q = v->raw + (size_t)j * ADF_TPC_HIT_SIZE;
        *cluster = tusk_get_u32(q + TK_CLUSTER);
        *row = q[TK_ROW];
    }
}

static int track_problem(uint32_t i, unsigned first_row, unsigned last_row, unsigned n_hits, const hit_view_t *v,
                         uint32_t first, uint32_t n_clusters, char *buf, size_t cap)
{
    if (n_hits < 1) {
        snprintf(buf, cap, "track %u has no cluster", (unsigned)i);
        return -1;
    }
    unsigned prev = 0;
    for (uint32_t k = 0; k < n_hits; k++) {
        uint32_t cluster;
        unsigned row;
        view_hit(v, first + k, &cluster, &row);
        if (row >= ADF_TPC_ROWS)
            snprintf(buf, cap, "track %u: cluster %u is in row %u, the rows are 0-%u", (unsigned)i, (unsigned)k, row,
                     ADF_TPC_ROWS - 1);
        else if (cluster >= n_clusters)
            snprintf(buf, cap, "track %u: cluster %u is cluster %u of the slice, which has %u", (unsigned)i,
                     (unsigned)k, (unsigned)cluster, (unsigned)n_clusters);
        else if (k > 0 && row <= prev)
            snprintf(buf, cap, "track %u: its clusters' rows do not rise (row %u after row %u)", (unsigned)i, row,
                     prev);
        else if (k == 0 && row != first_row)
            snprintf(buf, cap, "track %u: first row %u, but its first cluster is in row %u", (unsigned)i, first_row,
                     row);
        else if (k + 1 == n_hits && row != last_row)
            snprintf(buf, cap, "track %u: last row %u, but its last cluster is in row %u", (unsigned)i, last_row, row);
        else {
            prev = row;
            continue;
        }
        return -1;
    }
    return 0;
}

int adf_tpc_tracks_check(const adf_tpc_tracks_t *h, const adf_tpc_track_t *t, const adf_tpc_hit_t *hits,
                         adf_error_t *err)
{
    char why[200];
    if (h->n_tracks > ADF_TPC_MAX_CLUSTERS || h->n_hits > ADF_TPC_MAX_CLUSTERS)
        return adf_error_set(err, ADF_ERANGE, ADF_NO_OFFSET,
                             "data:tpc_tracks: %u tracks and %u hits, at most %u of each supported",
                             (unsigned)h->n_tracks, (unsigned)h->n_hits, ADF_TPC_MAX_CLUSTERS);
    if (tracks_problem(h->slice, h->backend, why, sizeof why))
        return adf_error_set(err, ADF_EINVAL, ADF_NO_OFFSET, "data:tpc_tracks: %s", why);
    hit_view_t v = {hits, NULL};
    uint64_t first = 0;
    for (uint32_t i = 0; i < h->n_tracks; i++) {
        if (first + t[i].n_hits > h->n_hits)
            return adf_error_set(err, ADF_EINVAL, ADF_NO_OFFSET,
                                 "data:tpc_tracks (slice %u): the tracks' clusters add up to more than %u",
                                 (unsigned)h->slice, (unsigned)h->n_hits);
        if (track_problem(i, t[i].first_row, t[i].last_row, t[i].n_hits, &v, (uint32_t)first, h->n_clusters, why,
                          sizeof why))
            return adf_error_set(err, ADF_EINVAL, ADF_NO_OFFSET, "data:tpc_tracks (slice %u): %s", (unsigned)h->slice,
                                 why);
        first += t[i].n_hits;
    }
    if (first != h->n_hits)
        return adf_error_set(err, ADF_EINVAL, ADF_NO_OFFSET,
                             "data:tpc_tracks (slice %u): the tracks have %llu clusters, the header says %u",
                             (unsigned)h->slice, (unsigned long long)first, (unsigned)h->n_hits);
    return ADF_OK;
}

int adf_tpc_tracks_encode(adf_writer_t *w, uint32_t event, uint64_t timestamp, const adf_tpc_tracks_t *h,
                          const adf_tpc_track_t *t, const adf_tpc_hit_t *hits, adf_error_t *err)
{
    int rc = adf_tpc_tracks_check(h, t, hits, err);
    if (rc != ADF_OK)
        return rc;
    uint8_t *p;
    rc = adf_reserve_frame(w, ADF_TYPE_DATA_TPC_TRACKS, event, timestamp,
                           adf_tpc_tracks_payload_size(h->n_tracks, h->n_hits), &p, err);
    if (rc != ADF_OK)
        return rc;
    tusk_put_u32(p + TH_N_TRACKS, h->n_tracks);
    tusk_put_u32(p + TH_N_HITS, h->n_hits);
    tusk_put_u32(p + TH_N_CLUSTERS, h->n_clusters);
    tusk_put_u32(p + TH_SETTINGS, h->settings);
    p[TH_SLICE] = h->slice;
    p[TH_BACKEND] = h->backend;
    tusk_put_u16(p + TH_FLAGS, h->flags);
    uint8_t *q = p + ADF_TPC_TRACKS_HEADER_SIZE;
    for (uint32_t i = 0; i < h->n_tracks; i++, q += ADF_TPC_TRACK_SIZE) {
        tusk_put_f32(q + TT_X, t[i].x);
        for (int k = 0; k < 5; k++)
            tusk_put_f32(q + TT_PARAM + 4 * k, t[i].param[k]);
        for (int k = 0; k < 15; k++)
            tusk_put_f32(q + TT_COV + 4 * k, t[i].cov[k]);
        tusk_put_f32(q + TT_CHI2, t[i].chi2);
        tusk_put_u16(q + TT_NDF, t[i].ndf);
        q[TT_FIRST] = t[i].first_row;
        q[TT_LAST] = t[i].last_row;
        tusk_put_u16(q + TT_N_HITS, t[i].n_hits);
        tusk_put_u16(q + TT_FLAGS, t[i].flags);
        tusk_put_u32(q + TT_TRACKLET, t[i].tracklet);
    }
    for (uint32_t j = 0; j < h->n_hits; j++, q += ADF_TPC_HIT_SIZE) {
        tusk_put_u32(q + TK_CLUSTER, hits[j].cluster);
        q[TK_ROW] = hits[j].row;
        q[TK_FLAGS] = hits[j].flags;
        tusk_put_f32(q + TK_X, hits[j].x);
        tusk_put_f32(q + TK_Y, hits[j].y);
        tusk_put_f32(q + TK_Z, hits[j].z);
    }
    return ADF_OK;
}

int adf_tpc_tracks_decode(const adf_frame_t *f, adf_tpc_tracks_t *t, adf_error_t *err)
{
    int rc = adf_expect_type(f, ADF_TYPE_DATA_TPC_TRACKS, err);
    if (rc != ADF_OK)
        return rc;
    const uint8_t *p = f->payload;
    unsigned long long off = (unsigned long long)f->offset;
    if (f->payload_size < ADF_TPC_TRACKS_HEADER_SIZE)
        return adf_error_set(err, ADF_EPAYLOAD, f->offset,
                             "data:tpc_tracks at offset %llu: payload of %u bytes is shorter than its %u-byte header",
                             off, (unsigned)f->payload_size, ADF_TPC_TRACKS_HEADER_SIZE);
    uint32_t nt = tusk_get_u32(p + TH_N_TRACKS), nh = tusk_get_u32(p + TH_N_HITS);
    uint32_t ncl = tusk_get_u32(p + TH_N_CLUSTERS);
    if (nt > ADF_TPC_MAX_CLUSTERS || nh > ADF_TPC_MAX_CLUSTERS)
        return adf_error_set(err, ADF_ERANGE, f->offset,
                             "data:tpc_tracks at offset %llu: %u tracks and %u hits, at most %u of each supported", off,
                             (unsigned)nt, (unsigned)nh, ADF_TPC_MAX_CLUSTERS);
    size_t want = adf_tpc_tracks_payload_size(nt, nh);
    if (f->payload_size != want)
        return adf_error_set(err, ADF_EPAYLOAD, f->offset,
                             "data:tpc_tracks at offset %llu: payload is %u bytes, %zu expected for %u tracks and %u "
                             "hits",
                             off, (unsigned)f->payload_size, want, (unsigned)nt, (unsigned)nh);
    char why[200];
    unsigned slice = p[TH_SLICE];
    if (tracks_problem(slice, p[TH_BACKEND], why, sizeof why))
        return adf_error_set(err, ADF_EPAYLOAD, f->offset, "data:tpc_tracks at offset %llu: %s", off, why);
    const uint8_t *tracks = p + ADF_TPC_TRACKS_HEADER_SIZE;
    hit_view_t v = {NULL, tracks + (size_t)nt * ADF_TPC_TRACK_SIZE};
    uint64_t first = 0;
    const uint8_t *q = tracks;
    for (uint32_t i = 0; i < nt; i++, q += ADF_TPC_TRACK_SIZE) {
        unsigned n = tusk_get_u16(q + TT_N_HITS);
        if (first + n > nh)
            return adf_error_set(
                err, ADF_EPAYLOAD, f->offset,
                "data:tpc_tracks at offset %llu (slice %u): the tracks' clusters add up to more than %u", off, slice,
                (unsigned)nh);
        if (track_problem(i, q[TT_FIRST], q[TT_LAST], n, &v, (uint32_t)first, ncl, why, sizeof why))
            return adf_error_set(err, ADF_EPAYLOAD, f->offset, "data:tpc_tracks at offset %llu (slice %u): %s", off,
                                 slice, why);
        first += n;
    }
    if (first != nh)
        return adf_error_set(
            err, ADF_EPAYLOAD, f->offset,
            "data:tpc_tracks at offset %llu (slice %u): the tracks have %llu clusters, the header says "
            "%u",
            off, slice, (unsigned long long)first, (unsigned)nh);
    t->n_tracks = nt;
    t->n_hits = nh;
    t->n_clusters = ncl;
    t->settings = tusk_get_u32(p + TH_SETTINGS);
    t->slice = (uint8_t)slice;
    t->backend = p[TH_BACKEND];
    t->flags = tusk_get_u16(p + TH_FLAGS);
    t->raw_tracks = tracks;
    t->raw_hits = v.raw;
    return ADF_OK;
}

void adf_tpc_track(const adf_tpc_tracks_t *t, uint32_t i, adf_tpc_track_t *tr)
{
    const uint8_t *q = t->raw_tracks + (size_t)i * ADF_TPC_TRACK_SIZE;
    tr->x = tusk_get_f32(q + TT_X);
    for (int k = 0; k < 5; k++)
        tr->param[k] = tusk_get_f32(q + TT_PARAM + 4 * k);
    for (int k = 0; k < 15; k++)
        tr->cov[k] = tusk_get_f32(q + TT_COV + 4 * k);
    tr->chi2 = tusk_get_f32(q + TT_CHI2);
    tr->ndf = tusk_get_u16(q + TT_NDF);
    tr->first_row = q[TT_FIRST];
    tr->last_row = q[TT_LAST];
    tr->n_hits = tusk_get_u16(q + TT_N_HITS);
    tr->flags = tusk_get_u16(q + TT_FLAGS);
    tr->tracklet = tusk_get_u32(q + TT_TRACKLET);
}

void adf_tpc_hit(const adf_tpc_tracks_t *t, uint32_t j, adf_tpc_hit_t *hit)
{
    const uint8_t *q = t->raw_hits + (size_t)j * ADF_TPC_HIT_SIZE;
    hit->cluster = tusk_get_u32(q + TK_CLUSTER);
    hit->row = q[TK_ROW];
    hit->flags = q[TK_FLAGS];
    hit->x = tusk_get_f32(q + TK_X);
    hit->y = tusk_get_f32(q + TK_Y);
    hit->z = tusk_get_f32(q + TK_Z);
}

/* ---- data:tpc_truth ---------------------------------------------------------------------- */

size_t adf_tpc_truth_payload_size(uint32_t n_particles, uint32_t n_clusters)
{
    return ADF_TPC_TRUTH_HEADER_SIZE + (size_t)n_particles * ADF_TPC_PARTICLE_SIZE + (size_t)n_clusters * 4u;
}

static int particle_problem(uint32_t i, const adf_tpc_particle_t *pt, char *buf, size_t cap)
{
    if (pt->charge == 0)
        snprintf(buf, cap, "particle %u (id %u) has no charge", (unsigned)i, (unsigned)pt->id);
    else if (!(isfinite(pt->p[0]) && isfinite(pt->p[1]) && isfinite(pt->p[2]) && isfinite(pt->vertex[0]) &&
               isfinite(pt->vertex[1]) && isfinite(pt->vertex[2])))
        snprintf(buf, cap, "particle %u (id %u): its momentum or vertex is not finite", (unsigned)i, (unsigned)pt->id);
    else
        return 0;
    return -1;
}

static void read_particle(const uint8_t *q, adf_tpc_particle_t *pt)
{
    pt->id = tusk_get_u32(q + RP_ID);
    for (int k = 0; k < 3; k++) {
        pt->p[k] = tusk_get_f32(q + RP_P + 4 * k);
        pt->vertex[k] = tusk_get_f32(q + RP_VERTEX + 4 * k);
    }
    pt->charge = tusk_get_i16(q + RP_CHARGE);
    pt->flags = tusk_get_u16(q + RP_FLAGS);
}

int adf_tpc_truth_encode(adf_writer_t *w, uint32_t event, uint64_t timestamp, const adf_tpc_truth_t *h,
                         const adf_tpc_particle_t *pts, const uint32_t *cp, adf_error_t *err)
{
    char why[160];
    if (h->n_particles > ADF_TPC_MAX_CLUSTERS || h->n_clusters > ADF_TPC_MAX_CLUSTERS)
        return adf_error_set(err, ADF_ERANGE, ADF_NO_OFFSET,
                             "data:tpc_truth: %u particles and %u clusters, at most %u of each supported",
                             (unsigned)h->n_particles, (unsigned)h->n_clusters, ADF_TPC_MAX_CLUSTERS);
    if (h->slice >= ADF_TPC_SLICES)
        return adf_error_set(err, ADF_EINVAL, ADF_NO_OFFSET, "data:tpc_truth: slice %u, expected 0-%u",
                             (unsigned)h->slice, ADF_TPC_SLICES - 1);
    for (uint32_t i = 0; i < h->n_particles; i++)
        if (particle_problem(i, &pts[i], why, sizeof why))
            return adf_error_set(err, ADF_EINVAL, ADF_NO_OFFSET, "data:tpc_truth (slice %u): %s", (unsigned)h->slice,
                                 why);
    for (uint32_t j = 0; j < h->n_clusters; j++)
        if (cp[j] != ADF_TPC_NOISE && cp[j] >= h->n_particles)
            return adf_error_set(err, ADF_EINVAL, ADF_NO_OFFSET,
                                 "data:tpc_truth (slice %u): cluster %u comes from particle %u, the slice has %u",
                                 (unsigned)h->slice, (unsigned)j, (unsigned)cp[j], (unsigned)h->n_particles);
    uint8_t *p;
    int rc = adf_reserve_frame(w, ADF_TYPE_DATA_TPC_TRUTH, event, timestamp,
                               adf_tpc_truth_payload_size(h->n_particles, h->n_clusters), &p, err);
    if (rc != ADF_OK)
        return rc;
    tusk_put_u32(p + RH_N_PARTICLES, h->n_particles);
    tusk_put_u32(p + RH_N_CLUSTERS, h->n_clusters);
    tusk_put_u16(p + RH_SLICE, h->slice);
    tusk_put_u16(p + RH_FLAGS, h->flags);
    uint8_t *q = p + ADF_TPC_TRUTH_HEADER_SIZE;
    for (uint32_t i = 0; i < h->n_particles; i++, q += ADF_TPC_PARTICLE_SIZE) {
        tusk_put_u32(q + RP_ID, pts[i].id);
        for (int k = 0; k < 3; k++) {
            tusk_put_f32(q + RP_P + 4 * k, pts[i].p[k]);
            tusk_put_f32(q + RP_VERTEX + 4 * k, pts[i].vertex[k]);
        }
        tusk_put_i16(q + RP_CHARGE, pts[i].charge);
        tusk_put_u16(q + RP_FLAGS, pts[i].flags);
    }
    for (uint32_t j = 0; j < h->n_clusters; j++, q += 4)
        tusk_put_u32(q, cp[j]);
    return ADF_OK;
}

int adf_tpc_truth_decode(const adf_frame_t *f, adf_tpc_truth_t *t, adf_error_t *err)
{
    int rc = adf_expect_type(f, ADF_TYPE_DATA_TPC_TRUTH, err);
    if (rc != ADF_OK)
        return rc;
    const uint8_t *p = f->payload;
    unsigned long long off = (unsigned long long)f->offset;
    if (f->payload_size < ADF_TPC_TRUTH_HEADER_SIZE)
        return adf_error_set(err, ADF_EPAYLOAD, f->offset,
                             "data:tpc_truth at offset %llu: payload of %u bytes is shorter than its %u-byte header",
                             off, (unsigned)f->payload_size, ADF_TPC_TRUTH_HEADER_SIZE);
    uint32_t np = tusk_get_u32(p + RH_N_PARTICLES), nc = tusk_get_u32(p + RH_N_CLUSTERS);
    if (np > ADF_TPC_MAX_CLUSTERS || nc > ADF_TPC_MAX_CLUSTERS)
        return adf_error_set(
            err, ADF_ERANGE, f->offset,
            "data:tpc_truth at offset %llu: %u particles and %u clusters, at most %u of each supported", off,
            (unsigned)np, (unsigned)nc, ADF_TPC_MAX_CLUSTERS);
    size_t want = adf_tpc_truth_payload_size(np, nc);
    if (f->payload_size != want)
        return adf_error_set(err, ADF_EPAYLOAD, f->offset,
                             "data:tpc_truth at offset %llu: payload is %u bytes, %zu expected for %u particles and %u "
                             "clusters",
                             off, (unsigned)f->payload_size, want, (unsigned)np, (unsigned)nc);
    unsigned slice = tusk_get_u16(p + RH_SLICE);
    if (slice >= ADF_TPC_SLICES)
        return adf_error_set(err, ADF_EPAYLOAD, f->offset, "data:tpc_truth at offset %llu: slice %u, expected 0-%u",
                             off, slice, ADF_TPC_SLICES - 1);
    char why[160];
    const uint8_t *q = p + ADF_TPC_TRUTH_HEADER_SIZE;
    for (uint32_t i = 0; i < np; i++, q += ADF_TPC_PARTICLE_SIZE) {
        adf_tpc_particle_t pt;
        read_particle(q, &pt);
        if (particle_problem(i, &pt, why, sizeof why))
            return adf_error_set(err, ADF_EPAYLOAD, f->offset, "data:tpc_truth at offset %llu (slice %u): %s", off,
                                 slice, why);
    }
    const uint8_t *clusters = q;
    for (uint32_t j = 0; j < nc; j++) {
        uint32_t k = tusk_get_u32(clusters + 4 * (size_t)j);
        if (k != ADF_TPC_NOISE && k >= np)
            return adf_error_set(
                err, ADF_EPAYLOAD, f->offset,
                "data:tpc_truth at offset %llu (slice %u): cluster %u comes from particle %u, the slice "
                "has %u",
                off, slice, (unsigned)j, (unsigned)k, (unsigned)np);
    }
    t->n_particles = np;
    t->n_clusters = nc;
    t->slice = (uint16_t)slice;
    t->flags = tusk_get_u16(p + RH_FLAGS);
    t->raw_particles = p + ADF_TPC_TRUTH_HEADER_SIZE;
    t->raw_clusters = clusters;
    return ADF_OK;
}

void adf_tpc_truth_particle(const adf_tpc_truth_t *t, uint32_t i, adf_tpc_particle_t *pt)
{
    read_particle(t->raw_particles + (size_t)i * ADF_TPC_PARTICLE_SIZE, pt);
}

void adf_tpc_truth_clusters(const adf_tpc_truth_t *t, uint32_t first, uint32_t n, uint32_t *cp)
{
    const uint8_t *q = t->raw_clusters + (size_t)first * 4u;
    for (uint32_t j = 0; j < n; j++, q += 4)
        cp[j] = tusk_get_u32(q);
}
