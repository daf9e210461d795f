/* field.h - potentials of a segmented HPGe crystal on a Cartesian grid
 * (libtusk-detector): the electric potential (Poisson, with the space
 * charge of the impurities) and the weighting potential of one electrode
 * (Laplace, that electrode at 1, the others at 0).
 *
 * The grid covers the crystal's bounding box plus one node on every side,
 * with step h (mm). Each node is
 *   inside    germanium: solved;
 *   contact   outside, nearest surface an electrode: fixed at its value;
 *   outside   outside, nearest surface passivated: zero normal field
 *             (Neumann), i.e. left out of its neighbours' averages.
 * Solving is successive over-relaxation, red-black ordered, on a
 * coarse-to-fine sequence of grids (each level starts from the coarser
 * one's solution, interpolated), until the largest change in a sweep is
 * below the tolerance. After solving, outside nodes next to the crystal
 * take their nearest inside neighbour's value so that interpolation near a
 * passivated surface stays smooth.
 *
 * Units: potential in V (weighting potentials: dimensionless), lengths in
 * mm, so gradients are V/mm. */
#ifndef TUSK_FIELD_H
#define TUSK_FIELD_H

#include <tusk/export.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <tusk/crystal.h>
#include <tusk/error.h>

#ifdef __cplusplus
extern "C" {
#endif

enum det_node {
    DET_NODE_INSIDE = 0,
    DET_NODE_CONTACT = 1,
    DET_NODE_OUTSIDE = 2
};

typedef struct det_solve_options {
    double tolerance;        /* stop when a sweep changes no node by more than this
                                (relative to the largest boundary value); 0: 1e-7 */
    unsigned max_sweeps;     /* per level; 0: 20000. Not converged: TUSK_ELIMIT */
    unsigned levels;         /* grids in the coarse-to-fine sequence, each 2x finer; 0: automatic */
    /* Progress and convergence lines ("level 2/3 h=1.00 mm: 412 sweeps,
     * max change 9.6e-08"); may be NULL. */
    void (*progress)(void *user, const char *line);
    void *user;
} det_solve_options_t;

typedef struct det_field det_field_t;

/* The electric potential: core at cfg->bias, segments at 0, space charge
 * rho = q * N(z) with N from det_crystal_impurity (eps_r = 16.0). */
TUSK_API int det_field_solve_potential(det_field_t **out, const det_crystal_t *crystal, double h,
                                       const det_solve_options_t *options, tusk_error_t *err);

/* The weighting potential of `electrode` (a segment or the core). */
TUSK_API int det_field_solve_weighting(det_field_t **out, const det_crystal_t *crystal, unsigned electrode, double h,
                                       const det_solve_options_t *options, tusk_error_t *err);

TUSK_API void det_field_destroy(det_field_t **field);

/* Trilinear interpolation of the potential at a point of the grid box
 * (NAN outside the box). */
TUSK_API double det_field_value(const det_field_t *field, double x, double y, double z);

/* The gradient (V/mm) at a point, trilinear interpolation of central
 * differences at the nodes; false outside the box. E = -gradient. */
TUSK_API bool det_field_gradient(const det_field_t *field, double x, double y, double z, double gradient[3]);

/* Full depletion: every inside node's potential lies within the contact
 * voltages (0 .. bias, with a small tolerance) and the field in the bulk
 * (nodes whose six neighbours are all inside: at an edge where two
 * grounded faces meet the field really goes to zero) is nowhere below
 * `min_field` V/mm. Otherwise TUSK_EINVAL naming the worst node
 * (position, potential or field) and saying the bias is too low. */
TUSK_API int det_field_check_depletion(const det_field_t *potential, double bias, double min_field, tusk_error_t *err);

/* The grid, for pictures and tests. */
TUSK_API void det_field_grid(const det_field_t *field, size_t *nx, size_t *ny, size_t *nz, double *h, double origin[3]);
TUSK_API float det_field_node_value(const det_field_t *field, size_t i, size_t j, size_t k);
TUSK_API enum det_node det_field_node_kind(const det_field_t *field, size_t i, size_t j, size_t k);
/* Sweeps done at the finest level and the last largest change. */
TUSK_API void det_field_convergence(const det_field_t *field, unsigned *sweeps, double *max_change);

#ifdef __cplusplus
}
#endif
#endif
