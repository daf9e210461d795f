/* basis.h - a PSA signal basis (libtusk-detector): for every basis point
 * of a crystal, its position, its segment and the normalised traces of
 * all electrodes; and its file format (psa/BASIS.md, version 2), written
 * and loaded with every byte checked.
 *
 * A point's segment is the one that collects its net charge: the contact
 * its holes reach, which a real detector's segment energy shows, and whose
 * points a PSA must search. Near segment and ring borders field lines
 * bend, and about 10 % of AGATA-like points (most behind the front ring)
 * collect on a neighbour of the segment their position lies in; that one,
 * the slab (det_crystal_segment_of), is kept too (det_basis_slab).
 *
 * In memory and on disk the points are grouped by segment and each
 * segment's traces are laid out as [channel][sample][point] - point index
 * fastest - the order in which a PSA kernel, one work-item per basis point
 * of the hit segment, reads them with coalesced loads. */
#ifndef TUSK_BASIS_H
#define TUSK_BASIS_H

#include <tusk/export.h>

#include <stddef.h>
#include <stdint.h>

#include <tusk/error.h>

#ifdef __cplusplus
extern "C" {
#endif

enum det_sample_type {
    DET_SAMPLE_FLOAT32 = 1,
    DET_SAMPLE_INT16 = 2 /* value = raw / 32767 * scale, scale stored in the header */
};

typedef struct det_basis_shape {
    unsigned segments;      /* 36 */
    unsigned channels;      /* segments + core: 37 */
    unsigned samples;       /* per trace */
    double sample_ns;       /* sample period */
    double grid_mm;         /* basis point spacing */
    const char *config;     /* the generator's configuration text (det_config_format) */
    const char *generator;  /* "tusk-basis 0.1.0" */
} det_basis_shape_t;

typedef struct det_basis det_basis_t;

/* An empty basis of this shape (the strings are copied). */
TUSK_API int det_basis_new(det_basis_t **out, const det_basis_shape_t *shape, tusk_error_t *err);
TUSK_API void det_basis_destroy(det_basis_t **basis);

/* Add a point collected on `segment` lying in slab `slab` at pos (mm);
 * traces holds channels * samples values, channel after channel. Points
 * keep the order they were added in within their segment. */
TUSK_API int det_basis_add_point(det_basis_t *basis, unsigned segment, unsigned slab, const float pos[3],
                                 const float *traces, tusk_error_t *err);
/* The same with slab = segment. */
TUSK_API int det_basis_add(det_basis_t *basis, unsigned segment, const float pos[3], const float *traces,
                           tusk_error_t *err);

/* Write the file (int16 or float32 samples). Written to PATH.tmp and
 * renamed, so a reader never sees half a file. */
TUSK_API int det_basis_save(const det_basis_t *basis, const char *path, enum det_sample_type type, tusk_error_t *err);

/* What a user of the basis needs it to be; zero / NULL fields are not
 * checked. A mismatch is refused with both values in the message. */
typedef struct det_basis_expect {
    unsigned segments, channels, samples;
    double sample_ns;
} det_basis_expect_t;

/* Load a basis file (`expect` may be NULL). Every length, count, position
 * and the checksum are verified: a truncated, corrupt or mismatched file
 * is refused with a message naming the file and what is wrong; so is a
 * version 1 file (points grouped by slab), with the advice to make the
 * basis again. */
TUSK_API int det_basis_load(det_basis_t **out, const char *path, const det_basis_expect_t *expect, tusk_error_t *err);
/* The same from bytes in memory (`origin` names them). */
TUSK_API int det_basis_parse(det_basis_t **out, const uint8_t *data, size_t size, const char *origin,
                             const det_basis_expect_t *expect, tusk_error_t *err);

/* Shape and contents. */
TUSK_API const det_basis_shape_t *det_basis_shape(const det_basis_t *basis);
TUSK_API enum det_sample_type det_basis_sample_type(const det_basis_t *basis); /* as loaded; FLOAT32 for a new basis */
TUSK_API size_t det_basis_points(const det_basis_t *basis);                    /* all segments */
TUSK_API size_t det_basis_segment_points(const det_basis_t *basis, unsigned segment);
/* Position (mm) of point i of `segment`. */
TUSK_API void det_basis_position(const det_basis_t *basis, unsigned segment, size_t i, float pos[3]);
/* The slab of point i of `segment` (UINT_MAX for no such point). */
TUSK_API unsigned det_basis_slab(const det_basis_t *basis, unsigned segment, size_t i);
/* The segment's traces, [channel][sample][point] (point fastest), as
 * float whatever the file held; NULL for a segment without points. Valid
 * until the next det_basis_add to that segment. A basis being built keeps
 * its traces in the order they were added and lays a segment out on the
 * first call here, so that call must not run alongside others; a loaded
 * basis is laid out already and may be read from any number of threads. */
TUSK_API const float *det_basis_block(const det_basis_t *basis, unsigned segment);
/* One trace: samples values of `channel` at point i of `segment`. */
TUSK_API void det_basis_trace(const det_basis_t *basis, unsigned segment, size_t i, unsigned channel, float *out);

#ifdef __cplusplus
}
#endif
#endif
