/* adf_ut.c - data:ut_raw, data:velo_tracks, data:ut_tracks, data:ut_hits
 * and data:ut_truth codecs (tusk layouts, adf/FORMAT.md). */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>

#include "base/bytes.h"
#include "adf_codec.h"
#include "adf_private.h"

/* Each header's and record's layout: its offsets, then its fields, once,
 * for its encoder and decoder (adf_codec.h). */
#define F ADF_FIELD

/* data:ut_raw: header, bank header */
enum { RW_GEOMETRY = 0, RW_N_BANKS = 4, RW_FLAGS = 6, RW_N_HITS = 8 };
_Static_assert(RW_N_HITS + 4 == ADF_UT_RAW_HEADER_SIZE, "data:ut_raw header size");
static const adf_field_t raw_head[] = {F(adf_ut_raw_t, geometry, RW_GEOMETRY), F(adf_ut_raw_t, n_banks, RW_N_BANKS),
                                       F(adf_ut_raw_t, flags, RW_FLAGS), F(adf_ut_raw_t, n_hits, RW_N_HITS)};
enum { RWB_SECTOR = 0, RWB_N = 2 };
_Static_assert(RWB_N + 2 == ADF_UT_BANK_HEADER_SIZE, "data:ut_raw bank header size");
static const adf_field_t raw_bank[] = {F(adf_ut_bank_t, sector, RWB_SECTOR), F(adf_ut_bank_t, n_hits, RWB_N)};

/* data:velo_tracks */
enum { VL_N = 0, VL_FLAGS = 4 };
_Static_assert(VL_FLAGS + 4 == ADF_VELO_HEADER_SIZE, "data:velo_tracks header size");
static const adf_field_t velo_head[] = {F(adf_velo_tracks_t, n_tracks, VL_N), F(adf_velo_tracks_t, flags, VL_FLAGS)};
enum { VLT_X = 0, VLT_Y = 4, VLT_Z = 8, VLT_TX = 12, VLT_TY = 16, VLT_FLAGS = 20 };
_Static_assert(VLT_FLAGS + 4 == ADF_VELO_TRACK_SIZE, "data:velo_tracks track size");
static const adf_field_t velo_track[] = {F(adf_velo_track_t, x, VLT_X),   F(adf_velo_track_t, y, VLT_Y),
                                         F(adf_velo_track_t, z, VLT_Z),   F(adf_velo_track_t, tx, VLT_TX),
                                         F(adf_velo_track_t, ty, VLT_TY), F(adf_velo_track_t, flags, VLT_FLAGS)};

/* data:ut_tracks */
enum { TK_N = 0, TK_SETTINGS = 4, TK_GEOMETRY = 8, TK_BACKEND = 12, TK_FLAGS = 13, TK_SECTORS = 14,
       TK_CANDIDATES = 15 };
_Static_assert(TK_CANDIDATES + 1 == ADF_UT_TRACKS_HEADER_SIZE, "data:ut_tracks header size");
static const adf_field_t tracks_head[] = {
    F(adf_ut_tracks_t, n_tracks, TK_N),      F(adf_ut_tracks_t, settings, TK_SETTINGS),
    F(adf_ut_tracks_t, geometry, TK_GEOMETRY), F(adf_ut_tracks_t, backend, TK_BACKEND),
    F(adf_ut_tracks_t, flags, TK_FLAGS),     F(adf_ut_tracks_t, sectors, TK_SECTORS),
    F(adf_ut_tracks_t, candidates, TK_CANDIDATES)};
enum { TKT_VELO = 0, TKT_ID = 4, TKT_QOP = 20, TKT_CHI2 = 24, TKT_N = 28 };
_Static_assert(TKT_N + 1 == ADF_UT_TRACK_SIZE, "data:ut_tracks track size");
_Static_assert(ADF_UT_PLANES == 4, "data:ut_tracks: an id a plane, 4 in the layout");
static const adf_field_t ut_track[] = {
    F(adf_ut_track_t, velo, TKT_VELO),   F(adf_ut_track_t, id[0], TKT_ID),       F(adf_ut_track_t, id[1], TKT_ID + 4),
    F(adf_ut_track_t, id[2], TKT_ID + 8), F(adf_ut_track_t, id[3], TKT_ID + 12), F(adf_ut_track_t, qop, TKT_QOP),
    F(adf_ut_track_t, chi2, TKT_CHI2),   F(adf_ut_track_t, n_hits, TKT_N)};

/* data:ut_hits */
enum { HT_N = 0, HT_GEOMETRY = 4, HT_BACKEND = 8, HT_FLAGS = 9 };
_Static_assert(HT_FLAGS + 1 == ADF_UT_HITS_HEADER_SIZE, "data:ut_hits header size");
static const adf_field_t hits_head[] = {F(adf_ut_hits_t, n_hits, HT_N), F(adf_ut_hits_t, geometry, HT_GEOMETRY),
                                        F(adf_ut_hits_t, backend, HT_BACKEND), F(adf_ut_hits_t, flags, HT_FLAGS)};
enum { HTH_ID = 0, HTH_X0 = 4, HTH_Z0 = 8, HTH_YB = 12, HTH_YE = 16, HTH_W = 20, HTH_GROUP = 24 };
_Static_assert(HTH_GROUP + 2 == ADF_UT_HIT_SIZE, "data:ut_hits hit size");
static const adf_field_t ut_hit[] = {F(adf_ut_hit_t, id, HTH_ID),        F(adf_ut_hit_t, x0, HTH_X0),
                                     F(adf_ut_hit_t, z0, HTH_Z0),        F(adf_ut_hit_t, y_begin, HTH_YB),
                                     F(adf_ut_hit_t, y_end, HTH_YE),     F(adf_ut_hit_t, weight, HTH_W),
                                     F(adf_ut_hit_t, group, HTH_GROUP)};

/* data:ut_truth */
enum { TR_NP = 0, TR_NH = 4, TR_NV = 8, TR_FLAGS = 12 };
_Static_assert(TR_FLAGS + 4 == ADF_UT_TRUTH_HEADER_SIZE, "data:ut_truth header size");
static const adf_field_t truth_head[] = {F(adf_ut_truth_t, n_particles, TR_NP), F(adf_ut_truth_t, n_hits, TR_NH),
                                         F(adf_ut_truth_t, n_velo, TR_NV), F(adf_ut_truth_t, flags, TR_FLAGS)};
enum { TRP_P = 0, TRP_TX = 4, TRP_TY = 8, TRP_CHARGE = 12, TRP_FLAGS = 13, TRP_PLANES = 14, TRP_VERTEX = 15 };
_Static_assert(TRP_VERTEX + 1 == ADF_UT_PARTICLE_SIZE, "data:ut_truth particle size");
static const adf_field_t ut_particle[] = {
    F(adf_ut_particle_t, p, TRP_P),         F(adf_ut_particle_t, tx, TRP_TX),
    F(adf_ut_particle_t, ty, TRP_TY),       F(adf_ut_particle_t, charge, TRP_CHARGE),
    F(adf_ut_particle_t, flags, TRP_FLAGS), F(adf_ut_particle_t, planes, TRP_PLANES),
    F(adf_ut_particle_t, vertex, TRP_VERTEX)};
#undef F

const char *adf_ut_backend_name(unsigned b)
{
    return b == ADF_UT_REFERENCE ? "reference" : b == ADF_UT_FAST ? "fast" : b == ADF_UT_OPENCL ? "opencl" : "?";
}

static bool backend_ok(unsigned b)
{
    return b >= ADF_UT_REFERENCE && b <= ADF_UT_OPENCL;
}

/* n `what` (tracks, hits) to encode into a `name` frame, at most max. */
static int encode_count(const char *name, uint32_t n, const char *what, unsigned max, adf_error_t *err)
{
    if (n > max)
        return adf_error_set(err, ADF_ERANGE, ADF_NO_OFFSET, "%s: %u %s, at most %u supported", name, (unsigned)n,
                             what, max);
    return ADF_OK;
}

/* ---- frames of a header and n records ------------------------------------------------------- */

/* data:velo_tracks, data:ut_tracks and data:ut_hits: a header whose first
 * word is n, then n records; what their encoders and decoders share. */
typedef struct records {
    uint32_t type;
    const char *name, *what;       /* "data:ut_hits", "hits" */
    unsigned max, header, record;  /* records at most; bytes */
    const adf_field_t *head, *rec; /* the layouts */
    size_t n_head, n_rec;
    size_t elem;                   /* bytes of a record's struct */
} records_t;

static const records_t velo_frame = {ADF_TYPE_DATA_VELO_TRACKS, "data:velo_tracks", "tracks", ADF_UT_MAX_TRACKS,
                                     ADF_VELO_HEADER_SIZE, ADF_VELO_TRACK_SIZE, velo_head, velo_track,
                                     ADF_COUNT(velo_head), ADF_COUNT(velo_track), sizeof(adf_velo_track_t)};
static const records_t tracks_frame = {ADF_TYPE_DATA_UT_TRACKS, "data:ut_tracks", "tracks", ADF_UT_MAX_TRACKS,
                                       ADF_UT_TRACKS_HEADER_SIZE, ADF_UT_TRACK_SIZE, tracks_head, ut_track,
                                       ADF_COUNT(tracks_head), ADF_COUNT(ut_track), sizeof(adf_ut_track_t)};
static const records_t hits_frame = {ADF_TYPE_DATA_UT_HITS, "data:ut_hits", "hits", ADF_UT_MAX_HITS,
                                     ADF_UT_HITS_HEADER_SIZE, ADF_UT_HIT_SIZE, hits_head, ut_hit,
                                     ADF_COUNT(hits_head), ADF_COUNT(ut_hit), sizeof(adf_ut_hit_t)};

_Static_assert(VL_N == 0 && TK_N == 0 && HT_N == 0, "n, the first word of the header");

static size_t records_size(const records_t *r, uint32_t n)
{
    return r->header + (size_t)n * r->record;
}

/* Encoding: n records, at most r->max. */
static int records_count(const records_t *r, uint32_t n, adf_error_t *err)
{
    return encode_count(r->name, n, r->what, r->max, err);
}

/* Encoding: the frame of the header hdr and the n records recs. */
static inline int records_put(adf_writer_t *w, const records_t *r, uint32_t event, uint64_t timestamp, const void *hdr,
                              const void *recs, uint32_t n, adf_error_t *err)
{
    uint8_t *p;
    int rc = adf_reserve_frame(w, r->type, event, timestamp, records_size(r, n), &p, err);
    if (rc != ADF_OK)
        return rc;
    adf_layout_put(r->head, r->n_head, hdr, p);
    const unsigned char *rec = recs;
    uint8_t *q = p + r->header;
    for (uint32_t i = 0; i < n; i++, q += r->record, rec += r->elem)
        adf_layout_put(r->rec, r->n_rec, rec, q);
    return ADF_OK;
}

/* Decoding: frame f is of r's type and header, its n (into *n) at most
 * r->max, its payload n records long. */
static int records_check(const adf_frame_t *f, const records_t *r, uint32_t *n, adf_error_t *err)
{
    int rc = adf_expect_header(f, r->type, r->name, r->header, err);
    if (rc != ADF_OK)
        return rc;
    unsigned long long off = (unsigned long long)f->offset;
    *n = tusk_get_u32(f->payload);
    if (*n > r->max)
        return adf_error_set(err, ADF_ERANGE, f->offset, "%s at offset %llu: %u %s, at most %u supported", r->name,
                             off, (unsigned)*n, r->what, r->max);
    if (f->payload_size != records_size(r, *n))
        return adf_error_set(err, ADF_EPAYLOAD, f->offset,
                             "%s at offset %llu: payload is %u bytes, %zu expected for %u %s", r->name, off,
                             (unsigned)f->payload_size, records_size(r, *n), (unsigned)*n, r->what);
    return ADF_OK;
}

/* ---- data:ut_raw ------------------------------------------------------------------- */

size_t adf_ut_raw_payload_size(uint32_t n_banks, uint32_t n_hits)
{
    return ADF_UT_RAW_HEADER_SIZE + (size_t)n_banks * ADF_UT_BANK_HEADER_SIZE + (size_t)n_hits * ADF_UT_WORD_SIZE;
}

int adf_ut_raw_encode(adf_writer_t *w, uint32_t event, uint64_t timestamp, const adf_ut_raw_t *h,
                      const adf_ut_bank_t *banks, const uint16_t *words, adf_error_t *err)
{
    int rc = encode_count("data:ut_raw", h->n_hits, "hits", ADF_UT_MAX_HITS, err);
    if (rc != ADF_OK)
        return rc;
    uint64_t sum = 0;
    for (unsigned i = 0; i < h->n_banks; i++) {
        if (i > 0 && banks[i].sector <= banks[i - 1].sector)
            return adf_error_set(err, ADF_EINVAL, ADF_NO_OFFSET,
                                 "data:ut_raw: bank %u is of sector %u after sector %u (strictly increasing sectors "
                                 "expected)",
                                 i, (unsigned)banks[i].sector, (unsigned)banks[i - 1].sector);
        sum += banks[i].n_hits;
    }
    if (sum != h->n_hits)
        return adf_error_set(err, ADF_EINVAL, ADF_NO_OFFSET, "data:ut_raw: the banks hold %llu hits, the header says %u",
                             (unsigned long long)sum, (unsigned)h->n_hits);
    const uint16_t *wb = words;
    for (unsigned i = 0; i < h->n_banks; i++, wb += banks[i - 1].n_hits)
        for (unsigned k = 1; k < banks[i].n_hits; k++)
            if (adf_ut_word_strip(wb[k]) <= adf_ut_word_strip(wb[k - 1]))
                return adf_error_set(err, ADF_EINVAL, ADF_NO_OFFSET,
                                     "data:ut_raw: bank %u (sector %u): hit %u is in strip %u after strip %u (strictly "
                                     "increasing strips expected: one cluster a strip)",
                                     i, (unsigned)banks[i].sector, k, adf_ut_word_strip(wb[k]),
                                     adf_ut_word_strip(wb[k - 1]));
    uint8_t *p;
    rc = adf_reserve_frame(w, ADF_TYPE_DATA_UT_RAW, event, timestamp, adf_ut_raw_payload_size(h->n_banks, h->n_hits),
                           &p, err);
    if (rc != ADF_OK)
        return rc;
    adf_layout_put(ADF_LAYOUT(raw_head), h, p);
    uint8_t *q = p + ADF_UT_RAW_HEADER_SIZE;
    const uint16_t *word = words;
    for (unsigned i = 0; i < h->n_banks; i++) {
        adf_layout_put(ADF_LAYOUT(raw_bank), &banks[i], q);
        q += ADF_UT_BANK_HEADER_SIZE;
        for (unsigned k = 0; k < banks[i].n_hits; k++, q += ADF_UT_WORD_SIZE)
            tusk_put_u16(q, *word++);
    }
    return ADF_OK;
}

int adf_ut_raw_decode(const adf_frame_t *f, adf_ut_raw_t *r, adf_error_t *err)
{
    int rc = adf_expect_header(f, ADF_TYPE_DATA_UT_RAW, "data:ut_raw", ADF_UT_RAW_HEADER_SIZE, err);
    if (rc != ADF_OK)
        return rc;
    const uint8_t *p = f->payload;
    unsigned long long off = (unsigned long long)f->offset;
    unsigned nb = tusk_get_u16(p + RW_N_BANKS);
    uint32_t n = tusk_get_u32(p + RW_N_HITS);
    if (n > ADF_UT_MAX_HITS)
        return adf_error_set(err, ADF_ERANGE, f->offset, "data:ut_raw at offset %llu: %u hits, at most %u supported",
                             off, (unsigned)n, ADF_UT_MAX_HITS);
    size_t want = adf_ut_raw_payload_size(nb, n);
    if (f->payload_size != want)
        return adf_error_set(err, ADF_EPAYLOAD, f->offset,
                             "data:ut_raw at offset %llu: payload is %u bytes, %zu expected for %u banks of %u hits",
                             off, (unsigned)f->payload_size, want, nb, (unsigned)n);
    const uint8_t *q = p + ADF_UT_RAW_HEADER_SIZE, *end = p + f->payload_size;
    uint64_t sum = 0;
    for (unsigned i = 0; i < nb; i++) {
        /* the size check above bounds the headers; the words are bounded here */
        if ((size_t)(end - q) < ADF_UT_BANK_HEADER_SIZE)
            return adf_error_set(err, ADF_EPAYLOAD, f->offset,
                                 "data:ut_raw at offset %llu: bank %u runs past the payload (the banks' hits exceed "
                                 "the header's %u)",
                                 off, i, (unsigned)n);
        unsigned sector = tusk_get_u16(q + RWB_SECTOR), k = tusk_get_u16(q + RWB_N);
        sum += k;
        if (sum > n)
            return adf_error_set(err, ADF_EPAYLOAD, f->offset,
                                 "data:ut_raw at offset %llu: bank %u (sector %u) makes %llu hits, the header says %u",
                                 off, i, sector, (unsigned long long)sum, (unsigned)n);
        q += ADF_UT_BANK_HEADER_SIZE + (size_t)k * ADF_UT_WORD_SIZE;
    }
    if (sum != n)
        return adf_error_set(err, ADF_EPAYLOAD, f->offset,
                             "data:ut_raw at offset %llu: the banks hold %llu hits, the header says %u", off,
                             (unsigned long long)sum, (unsigned)n);
    /* sectors strictly increasing, strips within a bank too */
    q = p + ADF_UT_RAW_HEADER_SIZE;
    unsigned last = 0;
    for (unsigned i = 0; i < nb; i++) {
        unsigned sector = tusk_get_u16(q + RWB_SECTOR), k = tusk_get_u16(q + RWB_N);
        if (i > 0 && sector <= last)
            return adf_error_set(err, ADF_EPAYLOAD, f->offset,
                                 "data:ut_raw at offset %llu: bank %u is of sector %u after sector %u (strictly "
                                 "increasing sectors expected)",
                                 off, i, sector, last);
        last = sector;
        q += ADF_UT_BANK_HEADER_SIZE;
        for (unsigned j = 1; j < k; j++)
            if (adf_ut_word_strip(tusk_get_u16(q + 2 * j)) <= adf_ut_word_strip(tusk_get_u16(q + 2 * (j - 1))))
                return adf_error_set(err, ADF_EPAYLOAD, f->offset,
                                     "data:ut_raw at offset %llu: bank %u (sector %u): hit %u is in strip %u after "
                                     "strip %u (strictly increasing strips expected: one cluster a strip)",
                                     off, i, sector, j, adf_ut_word_strip(tusk_get_u16(q + 2 * j)),
                                     adf_ut_word_strip(tusk_get_u16(q + 2 * (j - 1))));
        q += (size_t)k * ADF_UT_WORD_SIZE;
    }
    adf_layout_get(ADF_LAYOUT(raw_head), p, r);
    r->raw = p + ADF_UT_RAW_HEADER_SIZE;
    return ADF_OK;
}

void adf_ut_raw_read(const adf_ut_raw_t *r, adf_ut_bank_t *banks, uint16_t *words)
{
    const uint8_t *q = r->raw;
    for (unsigned i = 0; i < r->n_banks; i++) {
        unsigned k = tusk_get_u16(q + RWB_N);
        if (banks)
            adf_layout_get(ADF_LAYOUT(raw_bank), q, &banks[i]);
        q += ADF_UT_BANK_HEADER_SIZE;
        for (unsigned j = 0; j < k; j++, q += ADF_UT_WORD_SIZE)
            if (words)
                *words++ = tusk_get_u16(q);
    }
}

/* ---- data:velo_tracks ------------------------------------------------------------------ */

size_t adf_velo_tracks_payload_size(uint32_t n)
{
    return records_size(&velo_frame, n);
}

/* The first thing wrong with a VELO track, or NULL. */
static const char *velo_problem(uint32_t i, const adf_velo_track_t *t, char *buf, size_t cap)
{
    if (!(isfinite(t->x) && isfinite(t->y) && isfinite(t->z) && isfinite(t->tx) && isfinite(t->ty)))
        snprintf(buf, cap, "track %u: state (%g, %g, %g) mm, slopes (%g, %g) not finite", (unsigned)i, (double)t->x,
                 (double)t->y, (double)t->z, (double)t->tx, (double)t->ty);
    else if (t->flags & ~ADF_VELO_BACKWARD)
        snprintf(buf, cap, "track %u: flags 0x%08X, only 0x1 (backward) is defined", (unsigned)i, (unsigned)t->flags);
    else
        return NULL;
    return buf;
}

int adf_velo_tracks_encode(adf_writer_t *w, uint32_t event, uint64_t timestamp, const adf_velo_tracks_t *h,
                           const adf_velo_track_t *tracks, adf_error_t *err)
{
    char why[160];
    int rc = records_count(&velo_frame, h->n_tracks, err);
    if (rc != ADF_OK)
        return rc;
    for (uint32_t i = 0; i < h->n_tracks; i++)
        if (velo_problem(i, &tracks[i], why, sizeof why))
            return adf_error_set(err, ADF_EINVAL, ADF_NO_OFFSET, "data:velo_tracks: %s", why);
    return records_put(w, &velo_frame, event, timestamp, h, tracks, h->n_tracks, err);
}

int adf_velo_tracks_decode(const adf_frame_t *f, adf_velo_tracks_t *v, adf_error_t *err)
{
    uint32_t n;
    int rc = records_check(f, &velo_frame, &n, err);
    if (rc != ADF_OK)
        return rc;
    const uint8_t *p = f->payload, *q = p + ADF_VELO_HEADER_SIZE;
    char why[160];
    for (uint32_t i = 0; i < n; i++, q += ADF_VELO_TRACK_SIZE) {
        adf_velo_track_t t;
        adf_layout_get(ADF_LAYOUT(velo_track), q, &t);
        if (velo_problem(i, &t, why, sizeof why))
            return adf_error_set(err, ADF_EPAYLOAD, f->offset, "data:velo_tracks at offset %llu: %s",
                                 (unsigned long long)f->offset, why);
    }
    adf_layout_get(ADF_LAYOUT(velo_head), p, v);
    v->raw = p + ADF_VELO_HEADER_SIZE;
    return ADF_OK;
}

void adf_velo_track(const adf_velo_tracks_t *v, uint32_t i, adf_velo_track_t *t)
{
    adf_layout_get(ADF_LAYOUT(velo_track), v->raw + (size_t)i * ADF_VELO_TRACK_SIZE, t);
}

/* ---- data:ut_tracks ---------------------------------------------------------------------- */

size_t adf_ut_tracks_payload_size(uint32_t n)
{
    return records_size(&tracks_frame, n);
}

static const char *tracks_header_problem(unsigned backend, unsigned sectors, unsigned candidates, char *buf,
                                         size_t cap)
{
    if (!backend_ok(backend))
        snprintf(buf, cap, "backend %u, expected 1 (reference), 2 (fast) or 3 (opencl)", backend);
    else if (sectors != 1 && sectors != 3 && sectors != 5)
        snprintf(buf, cap, "%u sectors, expected 1, 3 or 5", sectors);
    else if (candidates < 1 || candidates > 16)
        snprintf(buf, cap, "%u candidates, expected 1-16", candidates);
    else
        return NULL;
    return buf;
}

/* Track i against the previous VELO index (prev, or -1 for the first). */
static const char *track_problem(uint32_t i, const adf_ut_track_t *t, int64_t prev, char *buf, size_t cap)
{
    unsigned ids = 0;
    for (int k = 0; k < ADF_UT_PLANES; k++)
        ids += t->id[k] != 0;
    if ((int64_t)t->velo <= prev)
        snprintf(buf, cap, "track %u: VELO track %u after %lld (strictly increasing expected)", (unsigned)i,
                 (unsigned)t->velo, (long long)prev);
    else if (t->n_hits != ids || ids < 3)
        snprintf(buf, cap, "track %u: %u hits with %u non-zero LHCbIDs (3 or 4 expected)", (unsigned)i,
                 (unsigned)t->n_hits, ids);
    else if (!isfinite(t->qop) || !isfinite(t->chi2) || t->chi2 < 0.0f)
        snprintf(buf, cap, "track %u: q/p %g, chi2 %g (finite, chi2 >= 0 expected)", (unsigned)i, (double)t->qop,
                 (double)t->chi2);
    else
        return NULL;
    return buf;
}

int adf_ut_tracks_encode(adf_writer_t *w, uint32_t event, uint64_t timestamp, const adf_ut_tracks_t *h,
                         const adf_ut_track_t *tracks, adf_error_t *err)
{
    char why[160];
    int rc = records_count(&tracks_frame, h->n_tracks, err);
    if (rc != ADF_OK)
        return rc;
    if (tracks_header_problem(h->backend, h->sectors, h->candidates, why, sizeof why))
        return adf_error_set(err, ADF_EINVAL, ADF_NO_OFFSET, "data:ut_tracks: %s", why);
    for (uint32_t i = 0; i < h->n_tracks; i++)
        if (track_problem(i, &tracks[i], i ? (int64_t)tracks[i - 1].velo : -1, why, sizeof why))
            return adf_error_set(err, ADF_EINVAL, ADF_NO_OFFSET, "data:ut_tracks: %s", why);
    return records_put(w, &tracks_frame, event, timestamp, h, tracks, h->n_tracks, err);
}

int adf_ut_tracks_decode(const adf_frame_t *f, adf_ut_tracks_t *t, adf_error_t *err)
{
    uint32_t n;
    int rc = records_check(f, &tracks_frame, &n, err);
    if (rc != ADF_OK)
        return rc;
    const uint8_t *p = f->payload;
    unsigned long long off = (unsigned long long)f->offset;
    char why[160];
    if (tracks_header_problem(p[TK_BACKEND], p[TK_SECTORS], p[TK_CANDIDATES], why, sizeof why))
        return adf_error_set(err, ADF_EPAYLOAD, f->offset, "data:ut_tracks at offset %llu: %s", off, why);
    const uint8_t *q = p + ADF_UT_TRACKS_HEADER_SIZE;
    int64_t prev = -1;
    for (uint32_t i = 0; i < n; i++, q += ADF_UT_TRACK_SIZE) {
        adf_ut_track_t tr;
        adf_layout_get(ADF_LAYOUT(ut_track), q, &tr);
        if (track_problem(i, &tr, prev, why, sizeof why))
            return adf_error_set(err, ADF_EPAYLOAD, f->offset, "data:ut_tracks at offset %llu: %s", off, why);
        prev = tr.velo;
    }
    adf_layout_get(ADF_LAYOUT(tracks_head), p, t);
    t->raw = p + ADF_UT_TRACKS_HEADER_SIZE;
    return ADF_OK;
}

void adf_ut_track(const adf_ut_tracks_t *t, uint32_t i, adf_ut_track_t *track)
{
    adf_layout_get(ADF_LAYOUT(ut_track), t->raw + (size_t)i * ADF_UT_TRACK_SIZE, track);
}

/* ---- data:ut_hits ------------------------------------------------------------------------- */

size_t adf_ut_hits_payload_size(uint32_t n)
{
    return records_size(&hits_frame, n);
}

int adf_ut_hits_encode(adf_writer_t *w, uint32_t event, uint64_t timestamp, const adf_ut_hits_t *h,
                       const adf_ut_hit_t *hits, adf_error_t *err)
{
    int rc = records_count(&hits_frame, h->n_hits, err);
    if (rc != ADF_OK)
        return rc;
    if (!backend_ok(h->backend))
        return adf_error_set(err, ADF_EINVAL, ADF_NO_OFFSET, "data:ut_hits: backend %u, expected 1-3",
                             (unsigned)h->backend);
    for (uint32_t i = 1; i < h->n_hits; i++)
        if (hits[i].group < hits[i - 1].group)
            return adf_error_set(err, ADF_EINVAL, ADF_NO_OFFSET,
                                 "data:ut_hits: hit %u is in sector group %u after group %u (non-decreasing expected)",
                                 (unsigned)i, (unsigned)hits[i].group, (unsigned)hits[i - 1].group);
    return records_put(w, &hits_frame, event, timestamp, h, hits, h->n_hits, err);
}

int adf_ut_hits_decode(const adf_frame_t *f, adf_ut_hits_t *h, adf_error_t *err)
{
    uint32_t n;
    int rc = records_check(f, &hits_frame, &n, err);
    if (rc != ADF_OK)
        return rc;
    const uint8_t *p = f->payload;
    unsigned long long off = (unsigned long long)f->offset;
    if (!backend_ok(p[HT_BACKEND]))
        return adf_error_set(err, ADF_EPAYLOAD, f->offset, "data:ut_hits at offset %llu: backend %u, expected 1-3", off,
                             (unsigned)p[HT_BACKEND]);
    const uint8_t *q = p + ADF_UT_HITS_HEADER_SIZE;
    unsigned last = 0;
    for (uint32_t i = 0; i < n; i++, q += ADF_UT_HIT_SIZE) {
        unsigned g = tusk_get_u16(q + HTH_GROUP);
        if (g < last)
            return adf_error_set(err, ADF_EPAYLOAD, f->offset,
                                 "data:ut_hits at offset %llu: hit %u is in sector group %u after group %u "
                                 "(non-decreasing expected)",
                                 off, (unsigned)i, g, last);
        last = g;
    }
    adf_layout_get(ADF_LAYOUT(hits_head), p, h);
    h->raw = p + ADF_UT_HITS_HEADER_SIZE;
    return ADF_OK;
}

void adf_ut_hit(const adf_ut_hits_t *h, uint32_t i, adf_ut_hit_t *hit)
{
    adf_layout_get(ADF_LAYOUT(ut_hit), h->raw + (size_t)i * ADF_UT_HIT_SIZE, hit);
}

/* ---- data:ut_truth -------------------------------------------------------------------------- */

size_t adf_ut_truth_payload_size(uint32_t np, uint32_t nh, uint32_t nv)
{
    return ADF_UT_TRUTH_HEADER_SIZE + (size_t)np * ADF_UT_PARTICLE_SIZE + 4 * ((size_t)nh + nv);
}

static const char *particle_problem(uint32_t i, const adf_ut_particle_t *x, char *buf, size_t cap)
{
    if (!(isfinite(x->p) && x->p > 0.0f && isfinite(x->tx) && isfinite(x->ty)))
        snprintf(buf, cap, "particle %u: p %g GeV, slopes (%g, %g) (finite, p > 0 expected)", (unsigned)i,
                 (double)x->p, (double)x->tx, (double)x->ty);
    else if (x->charge != 1 && x->charge != -1)
        snprintf(buf, cap, "particle %u: charge %d, expected -1 or +1", (unsigned)i, (int)x->charge);
    else if (x->flags & ~(ADF_UT_VELO | ADF_UT_LONG | ADF_UT_BACKWARD))
        snprintf(buf, cap, "particle %u: flags 0x%02X, only 0x1 (VELO), 0x2 (long) and 0x4 (backward) are defined",
                 (unsigned)i, (unsigned)x->flags);
    else if (x->planes > 15)
        snprintf(buf, cap, "particle %u: planes 0x%02X, the UT has 4 (0-15)", (unsigned)i, (unsigned)x->planes);
    else
        return NULL;
    return buf;
}

/* The first of n records naming a particle that is not there, or -1. */
static int64_t bad_particle(const uint32_t *part, uint32_t n, uint32_t np)
{
    for (uint32_t j = 0; j < n; j++)
        if (part[j] != ADF_UT_NONE && part[j] >= np)
            return j;
    return -1;
}

int adf_ut_truth_encode(adf_writer_t *w, uint32_t event, uint64_t timestamp, const adf_ut_truth_t *h,
                        const adf_ut_particle_t *parts, const uint32_t *hit_particle, const uint32_t *velo_particle,
                        adf_error_t *err)
{
    if (h->n_particles > ADF_UT_MAX_PARTICLES || h->n_hits > ADF_UT_MAX_HITS || h->n_velo > ADF_UT_MAX_TRACKS)
        return adf_error_set(err, ADF_ERANGE, ADF_NO_OFFSET,
                             "data:ut_truth: %u particles, %u hits, %u VELO tracks; at most %u, %u, %u supported",
                             (unsigned)h->n_particles, (unsigned)h->n_hits, (unsigned)h->n_velo, ADF_UT_MAX_PARTICLES,
                             ADF_UT_MAX_HITS, ADF_UT_MAX_TRACKS);
    char why[160];
    for (uint32_t i = 0; i < h->n_particles; i++)
        if (particle_problem(i, &parts[i], why, sizeof why))
            return adf_error_set(err, ADF_EINVAL, ADF_NO_OFFSET, "data:ut_truth: %s", why);
    int64_t j = bad_particle(hit_particle, h->n_hits, h->n_particles);
    if (j >= 0)
        return adf_error_set(err, ADF_EINVAL, ADF_NO_OFFSET, "data:ut_truth: hit %lld names particle %u of %u",
                             (long long)j, (unsigned)hit_particle[j], (unsigned)h->n_particles);
    j = bad_particle(velo_particle, h->n_velo, h->n_particles);
    if (j >= 0)
        return adf_error_set(err, ADF_EINVAL, ADF_NO_OFFSET, "data:ut_truth: VELO track %lld names particle %u of %u",
                             (long long)j, (unsigned)velo_particle[j], (unsigned)h->n_particles);
    uint8_t *p;
    int rc = adf_reserve_frame(w, ADF_TYPE_DATA_UT_TRUTH, event, timestamp,
                               adf_ut_truth_payload_size(h->n_particles, h->n_hits, h->n_velo), &p, err);
    if (rc != ADF_OK)
        return rc;
    adf_layout_put(ADF_LAYOUT(truth_head), h, p);
    uint8_t *q = p + ADF_UT_TRUTH_HEADER_SIZE;
    for (uint32_t i = 0; i < h->n_particles; i++, q += ADF_UT_PARTICLE_SIZE)
        adf_layout_put(ADF_LAYOUT(ut_particle), &parts[i], q);
    for (uint32_t k = 0; k < h->n_hits; k++, q += 4)
        tusk_put_u32(q, hit_particle[k]);
    for (uint32_t k = 0; k < h->n_velo; k++, q += 4)
        tusk_put_u32(q, velo_particle[k]);
    return ADF_OK;
}

int adf_ut_truth_decode(const adf_frame_t *f, adf_ut_truth_t *t, adf_error_t *err)
{
    int rc = adf_expect_header(f, ADF_TYPE_DATA_UT_TRUTH, "data:ut_truth", ADF_UT_TRUTH_HEADER_SIZE, err);
    if (rc != ADF_OK)
        return rc;
    const uint8_t *p = f->payload;
    unsigned long long off = (unsigned long long)f->offset;
    uint32_t np = tusk_get_u32(p + TR_NP), nh = tusk_get_u32(p + TR_NH), nv = tusk_get_u32(p + TR_NV);
    if (np > ADF_UT_MAX_PARTICLES || nh > ADF_UT_MAX_HITS || nv > ADF_UT_MAX_TRACKS)
        return adf_error_set(err, ADF_ERANGE, f->offset,
                             "data:ut_truth at offset %llu: %u particles, %u hits, %u VELO tracks; at most %u, %u, %u "
                             "supported",
                             off, (unsigned)np, (unsigned)nh, (unsigned)nv, ADF_UT_MAX_PARTICLES, ADF_UT_MAX_HITS,
                             ADF_UT_MAX_TRACKS);
    size_t want = adf_ut_truth_payload_size(np, nh, nv);
    if (f->payload_size != want)
        return adf_error_set(err, ADF_EPAYLOAD, f->offset,
                             "data:ut_truth at offset %llu: payload is %u bytes, %zu expected for %u particles, %u "
                             "hits and %u VELO tracks",
                             off, (unsigned)f->payload_size, want, (unsigned)np, (unsigned)nh, (unsigned)nv);
    const uint8_t *q = p + ADF_UT_TRUTH_HEADER_SIZE;
    char why[160];
    for (uint32_t i = 0; i < np; i++, q += ADF_UT_PARTICLE_SIZE) {
        adf_ut_particle_t x;
        adf_layout_get(ADF_LAYOUT(ut_particle), q, &x);
        if (particle_problem(i, &x, why, sizeof why))
            return adf_error_set(err, ADF_EPAYLOAD, f->offset, "data:ut_truth at offset %llu: %s", off, why);
    }
    const uint8_t *hits = q, *velo = q + 4 * (size_t)nh;
    for (uint32_t k = 0; k < nh + nv; k++, q += 4) {
        uint32_t x = tusk_get_u32(q);
        if (x != ADF_UT_NONE && x >= np)
            return adf_error_set(err, ADF_EPAYLOAD, f->offset, "data:ut_truth at offset %llu: %s %u names particle %u of %u",
                                 off, k < nh ? "hit" : "VELO track", (unsigned)(k < nh ? k : k - nh), (unsigned)x,
                                 (unsigned)np);
    }
    adf_layout_get(ADF_LAYOUT(truth_head), p, t);
    t->raw_particles = p + ADF_UT_TRUTH_HEADER_SIZE;
    t->raw_hits = hits;
    t->raw_velo = velo;
    return ADF_OK;
}

void adf_ut_truth_particle(const adf_ut_truth_t *t, uint32_t i, adf_ut_particle_t *x)
{
    adf_layout_get(ADF_LAYOUT(ut_particle), t->raw_particles + (size_t)i * ADF_UT_PARTICLE_SIZE, x);
}

void adf_ut_truth_hits(const adf_ut_truth_t *t, uint32_t first, uint32_t n, uint32_t *part)
{
    for (uint32_t k = 0; k < n; k++)
        part[k] = tusk_get_u32(t->raw_hits + 4 * ((size_t)first + k));
}

void adf_ut_truth_velo(const adf_ut_truth_t *t, uint32_t first, uint32_t n, uint32_t *part)
{
    for (uint32_t k = 0; k < n; k++)
        part[k] = tusk_get_u32(t->raw_velo + 4 * ((size_t)first + k));
}
