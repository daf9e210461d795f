/* adf_truth.c - data:truth codec (tusk-private layout, adf/FORMAT.md). */
#include <stdio.h>

#include "base/bytes.h"
#include "adf_codec.h"
#include "adf_private.h"

/* Header offsets. */
enum {
    OFF_DECAY = 0,
    OFF_GAMMAS_TOTAL = 8,
    OFF_N_GAMMAS = 16,
    OFF_N_POINTS = 18,
    OFF_FLAGS = 20,
    OFF_RESERVED = 22
};

/* Gamma offsets. */
enum { G_ENERGY = 0, G_DIR = 4 };

/* Point offsets. */
enum {
    P_CRYSTAL = 0,
    P_SEGMENT = 2,
    P_GAMMA = 4,
    P_PROCESS = 6,
    P_ENERGY = 8,
    P_LOCAL = 12,
    P_WORLD = 24
};

_Static_assert(OFF_RESERVED + 2 == ADF_TRUTH_HEADER_SIZE, "data:truth header size");
_Static_assert(G_DIR + 12 == ADF_TRUTH_GAMMA_SIZE, "data:truth gamma size");
_Static_assert(P_WORLD + 12 == ADF_TRUTH_POINT_SIZE, "data:truth point size");

size_t adf_truth_payload_size(unsigned n_gammas, unsigned n_points)
{
    return ADF_TRUTH_HEADER_SIZE + (size_t)n_gammas * ADF_TRUTH_GAMMA_SIZE +
           (size_t)n_points * ADF_TRUTH_POINT_SIZE;
}

/* Check one point's fields; on failure fill err with `code`, prefixing the
 * message with `what` ("data:truth" or "data:truth at offset N"). */
static int check_point(unsigned i, int segment, unsigned gamma, unsigned process, unsigned n_gammas,
                       const char *what, int code, uint64_t offset, adf_error_t *err)
{
    if (gamma >= n_gammas)
        return adf_error_set(err, code, offset, "%s: point %u descends from gamma %u, but there %s %u gamma%s",
                             what, i, gamma, n_gammas == 1 ? "is" : "are", n_gammas, n_gammas == 1 ? "" : "s");
    if (process < ADF_TRUTH_PHOTO || process > ADF_TRUTH_PAIR)
        return adf_error_set(err, code, offset,
                             "%s: point %u has process %u, expected 1 (photo), 2 (compton), 3 (rayleigh) or "
                             "4 (pair)",
                             what, i, process);
    if (segment < ADF_TRUTH_NO_SEGMENT || segment >= ADF_TRUTH_SEGMENTS)
        return adf_error_set(err, code, offset, "%s: point %u has segment %d, expected 0-%d or %d (none)", what, i,
                             segment, ADF_TRUTH_SEGMENTS - 1, ADF_TRUTH_NO_SEGMENT);
    return ADF_OK;
}

int adf_truth_encode(adf_writer_t *w, uint32_t event, uint64_t timestamp, const adf_truth_t *t,
                     adf_error_t *err)
{
    /* Check everything first: a refused struct writes nothing. */
    if (t->n_gammas > ADF_TRUTH_MAX_GAMMAS)
        return adf_error_set(err, ADF_ERANGE, ADF_NO_OFFSET, "data:truth: %u gammas, at most %d supported",
                             (unsigned)t->n_gammas, ADF_TRUTH_MAX_GAMMAS);
    if (t->n_points > ADF_TRUTH_MAX_POINTS)
        return adf_error_set(err, ADF_ERANGE, ADF_NO_OFFSET, "data:truth: %u points, at most %d supported",
                             (unsigned)t->n_points, ADF_TRUTH_MAX_POINTS);
    for (unsigned i = 0; i < t->n_points; i++) {
        const adf_truth_point_t *pt = &t->point[i];
        int rc = check_point(i, pt->segment, pt->gamma, pt->process, t->n_gammas, "data:truth", ADF_EINVAL,
                             ADF_NO_OFFSET, err);
        if (rc != ADF_OK)
            return rc;
    }
    uint8_t *p;
    int rc = adf_reserve_frame(w, ADF_TYPE_DATA_TRUTH, event, timestamp,
                               adf_truth_payload_size(t->n_gammas, t->n_points), &p, err);
    if (rc != ADF_OK)
        return rc;
    tusk_put_u64(p + OFF_DECAY, t->decay);
    tusk_put_u64(p + OFF_GAMMAS_TOTAL, t->gammas_total);
    tusk_put_u16(p + OFF_N_GAMMAS, t->n_gammas);
    tusk_put_u16(p + OFF_N_POINTS, t->n_points);
    tusk_put_u16(p + OFF_FLAGS, t->flags);
    tusk_put_u16(p + OFF_RESERVED, 0);
    uint8_t *g = p + ADF_TRUTH_HEADER_SIZE;
    for (unsigned i = 0; i < t->n_gammas; i++, g += ADF_TRUTH_GAMMA_SIZE) {
        const adf_truth_gamma_t *gm = &t->gamma[i];
        tusk_put_f32(g + G_ENERGY, gm->energy);
        for (int k = 0; k < 3; k++)
            tusk_put_f32(g + G_DIR + 4 * k, gm->dir[k]);
    }
    uint8_t *q = g;
    for (unsigned i = 0; i < t->n_points; i++, q += ADF_TRUTH_POINT_SIZE) {
        const adf_truth_point_t *pt = &t->point[i];
        tusk_put_u16(q + P_CRYSTAL, pt->crystal);
        tusk_put_i16(q + P_SEGMENT, pt->segment);
        tusk_put_u16(q + P_GAMMA, pt->gamma);
        tusk_put_u16(q + P_PROCESS, pt->process);
        tusk_put_f32(q + P_ENERGY, pt->energy);
        for (int k = 0; k < 3; k++) {
            tusk_put_f32(q + P_LOCAL + 4 * k, pt->local[k]);
            tusk_put_f32(q + P_WORLD + 4 * k, pt->world[k]);
        }
    }
    return ADF_OK;
}

int adf_truth_decode(const adf_frame_t *f, adf_truth_t *t, adf_error_t *err)
{
    int rc = adf_expect_type(f, ADF_TYPE_DATA_TRUTH, err);
    if (rc != ADF_OK)
        return rc;
    const uint8_t *p = f->payload;
    unsigned long long off = (unsigned long long)f->offset;
    if (f->payload_size < ADF_TRUTH_HEADER_SIZE)
        return adf_error_set(err, ADF_EPAYLOAD, f->offset,
                             "data:truth at offset %llu: payload of %u bytes is shorter than its %u-byte header",
                             off, (unsigned)f->payload_size, ADF_TRUTH_HEADER_SIZE);
    unsigned n_gammas = tusk_get_u16(p + OFF_N_GAMMAS);
    unsigned n_points = tusk_get_u16(p + OFF_N_POINTS);
    if (n_gammas > ADF_TRUTH_MAX_GAMMAS)
        return adf_error_set(err, ADF_ERANGE, f->offset,
                             "data:truth at offset %llu: %u gammas, at most %d supported", off, n_gammas,
                             ADF_TRUTH_MAX_GAMMAS);
    if (n_points > ADF_TRUTH_MAX_POINTS)
        return adf_error_set(err, ADF_ERANGE, f->offset,
                             "data:truth at offset %llu: %u points, at most %d supported", off, n_points,
                             ADF_TRUTH_MAX_POINTS);
    size_t want = adf_truth_payload_size(n_gammas, n_points);
    if (f->payload_size != want)
        return adf_error_set(err, ADF_EPAYLOAD, f->offset,
                             "data:truth at offset %llu: payload is %u bytes, %zu expected for %u gammas and "
                             "%u points",
                             off, (unsigned)f->payload_size, want, n_gammas, n_points);
    /* Check every point before touching the struct. */
    const uint8_t *points = p + ADF_TRUTH_HEADER_SIZE + (size_t)n_gammas * ADF_TRUTH_GAMMA_SIZE;
    const uint8_t *q = points;
    char what[48];
    snprintf(what, sizeof what, "data:truth at offset %llu", off);
    for (unsigned i = 0; i < n_points; i++, q += ADF_TRUTH_POINT_SIZE) {
        rc = check_point(i, tusk_get_i16(q + P_SEGMENT), tusk_get_u16(q + P_GAMMA), tusk_get_u16(q + P_PROCESS),
                         n_gammas, what, ADF_EPAYLOAD, f->offset, err);
        if (rc != ADF_OK)
            return rc;
    }
    t->decay = tusk_get_u64(p + OFF_DECAY);
    t->gammas_total = tusk_get_u64(p + OFF_GAMMAS_TOTAL);
    t->flags = tusk_get_u16(p + OFF_FLAGS);
    t->n_gammas = (uint16_t)n_gammas;
    t->n_points = (uint16_t)n_points;
    const uint8_t *g = p + ADF_TRUTH_HEADER_SIZE;
    for (unsigned i = 0; i < n_gammas; i++, g += ADF_TRUTH_GAMMA_SIZE) {
        adf_truth_gamma_t *gm = &t->gamma[i];
        gm->energy = tusk_get_f32(g + G_ENERGY);
        for (int k = 0; k < 3; k++)
            gm->dir[k] = tusk_get_f32(g + G_DIR + 4 * k);
    }
    q = points;
    for (unsigned i = 0; i < n_points; i++, q += ADF_TRUTH_POINT_SIZE) {
        adf_truth_point_t *pt = &t->point[i];
        pt->crystal = tusk_get_u16(q + P_CRYSTAL);
        pt->segment = tusk_get_i16(q + P_SEGMENT);
        pt->gamma = tusk_get_u16(q + P_GAMMA);
        pt->process = tusk_get_u16(q + P_PROCESS);
        pt->energy = tusk_get_f32(q + P_ENERGY);
        for (int k = 0; k < 3; k++) {
            pt->local[k] = tusk_get_f32(q + P_LOCAL + 4 * k);
            pt->world[k] = tusk_get_f32(q + P_WORLD + 4 * k);
        }
    }
    return ADF_OK;
}
