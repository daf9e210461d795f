/* drift.h - charge carriers drifting in the crystal's electric field
 * (libtusk-detector).
 *
 * Velocity along the field: v(E) = mu0 E / (1 + (E/E0)^beta)^(1/beta)
 * (REFERENCE.md, <100> axis; isotropic). Holes move along E = -grad(phi),
 * electrons against it. Positions are integrated with the midpoint rule in
 * fixed time steps; a carrier that leaves the germanium stops on the
 * surface it crossed. Units: mm, ns, V/mm. */
#ifndef TUSK_DRIFT_H
#define TUSK_DRIFT_H

#include <tusk/export.h>

#include <stddef.h>

#include <tusk/crystal.h>
#include <tusk/error.h>
#include <tusk/field.h>

#ifdef __cplusplus
extern "C" {
#endif

enum det_carrier { DET_ELECTRON = 0, DET_HOLE = 1 };

typedef struct det_mobility {
    double mu0[2];  /* mm^2 / (V ns), by carrier */
    double e0[2];   /* V/mm */
    double beta[2];
} det_mobility_t;

/* <100> parameters with mu0 chosen so that at 1 kV/cm electrons move
 * 0.100 mm/ns and holes 0.086 mm/ns (77 K). */
TUSK_API void det_mobility_default(det_mobility_t *m);
/* Drift speed (mm/ns) in a field of `field` V/mm. */
TUSK_API double det_mobility_speed(const det_mobility_t *m, enum det_carrier carrier, double field);

enum det_drift_end {
    DET_DRIFT_COLLECTED = 0, /* reached a contact: end_electrode */
    DET_DRIFT_PASSIVATED,    /* stopped on the passivated back face */
    DET_DRIFT_STUCK,         /* no field to move in */
    DET_DRIFT_TIMEOUT        /* still drifting after max_steps */
};

typedef struct det_path {
    size_t n, cap;
    double *xyz;            /* n positions, 3 each: the start, then one per step */
    enum det_drift_end end;
    int end_electrode;      /* DET_DRIFT_COLLECTED: the contact; else -1 */
} det_path_t;

/* Drift one carrier from `start` (inside the crystal) for at most
 * max_steps steps of step_ns. path is reused (grown as needed). */
TUSK_API int det_drift(const det_field_t *potential, const det_crystal_t *crystal, const det_mobility_t *mobility,
                       enum det_carrier carrier, const double start[3], double step_ns, size_t max_steps,
                       det_path_t *path, tusk_error_t *err);
TUSK_API void det_path_free(det_path_t *path);

#ifdef __cplusplus
}
#endif
#endif
