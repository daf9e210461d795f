/* weighting.h - the weighting potentials of every electrode of a crystal
 * (libtusk-detector), for Shockley-Ramo signals.
 *
 * When the crystal is symmetric under a rotation by one sector and the
 * configuration asks for it (det_config_t.symmetry), only sector 0's
 * segments and the core are solved: segment (ring, s) at point p is
 * segment (ring, 0) at p rotated back by s sectors. Otherwise all
 * electrodes are solved. Solves run on `threads` threads. */
#ifndef TUSK_WEIGHTING_H
#define TUSK_WEIGHTING_H

#include <tusk/export.h>

#include <stdbool.h>

#include <tusk/crystal.h>
#include <tusk/error.h>
#include <tusk/field.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct det_weighting det_weighting_t;

TUSK_API int det_weighting_new(det_weighting_t **out, const det_crystal_t *crystal, double h,
                               const det_solve_options_t *options, unsigned threads, tusk_error_t *err);
TUSK_API void det_weighting_destroy(det_weighting_t **w);

/* How many Laplace problems were solved (7 with symmetry for 6 x 6). */
TUSK_API unsigned det_weighting_solved(const det_weighting_t *w);

/* The weighting potential of `electrode` at a point (trilinear). */
TUSK_API double det_weighting_value(const det_weighting_t *w, unsigned electrode, double x, double y, double z);

/* All electrodes at once into out[det_crystal_electrodes] (one rotation
 * per sector instead of one per electrode). */
TUSK_API void det_weighting_values(const det_weighting_t *w, double x, double y, double z, double *out);

/* The solved field behind `electrode` and the sector rotation that maps
 * it (for pictures): electrode = field's electrode rotated by *steps. */
TUSK_API const det_field_t *det_weighting_field(const det_weighting_t *w, unsigned electrode, int *steps);

#ifdef __cplusplus
}
#endif
#endif
