/* grid.h - the Cartesian grid of a signal basis (libtusk-detector): which
 * basis point sits at each grid node, for lookups by position (the
 * simulation's interpolation, the adaptive PSA's neighbourhoods).
 *
 * Basis points lie at ((i + 0.5) g, (j + 0.5) g, (k + 0.5) g) for
 * integer i, j, k and grid step g (detector/generate.h); det_grid_new checks
 * that every point of the basis does. Immutable once made: safe from any
 * number of threads. */
#ifndef TUSK_GRID_H
#define TUSK_GRID_H

#include <tusk/export.h>

#include <stdbool.h>
#include <stdint.h>

#include <tusk/basis.h>
#include <tusk/error.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct det_grid det_grid_t;

/* The grid of `basis` (used only while making it). TUSK_EINVAL for a
 * basis without points, without a grid step, or whose points are not on
 * one grid. */
TUSK_INTERNAL int det_grid_new(det_grid_t **out, const det_basis_t *basis, tusk_error_t *err);
TUSK_INTERNAL void det_grid_destroy(det_grid_t **grid);

TUSK_INTERNAL double det_grid_step(const det_grid_t *grid);

/* The node of coordinate x (mm) along any axis: round(x / g - 0.5). */
TUSK_INTERNAL long det_grid_node(const det_grid_t *grid, double x);

/* The basis point at node (i, j, k): true and its segment and index
 * within the segment, or false (no point there). */
TUSK_INTERNAL bool det_grid_at(const det_grid_t *grid, long i, long j, long k, unsigned *segment, uint32_t *index);

/* Corner k (0 .. 7) of the cell whose lowest node is lo: the node lo +
 * (k & 1, k >> 1 & 1, k >> 2 & 1). */
static inline void det_grid_corner(const long lo[3], unsigned k, long n[3])
{
    n[0] = lo[0] + (long)(k & 1);
    n[1] = lo[1] + (long)(k >> 1 & 1);
    n[2] = lo[2] + (long)(k >> 2 & 1);
}

/* Corner k's trilinear weight at a position u[a] steps from lo along
 * each axis (0 .. 1): the one formula of the simulation's interpolation
 * (sim/response.c) and the PSA's sub-grid fit (psa/subgrid.c). */
static inline double det_grid_corner_weight(unsigned k, const double u[3])
{
    return ((k & 1) ? u[0] : 1.0 - u[0]) * ((k >> 1 & 1) ? u[1] : 1.0 - u[1]) * ((k >> 2 & 1) ? u[2] : 1.0 - u[2]);
}

#ifdef __cplusplus
}
#endif
#endif
