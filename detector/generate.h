/* generate.h - a whole signal basis from a crystal configuration
 * (libtusk-detector): the electric potential (Poisson) and its depletion
 * check, the weighting potentials (Laplace), then the traces of every
 * basis point, on several threads, with progress lines. */
#ifndef TUSK_GENERATE_H
#define TUSK_GENERATE_H

#include <tusk/export.h>

#include <stddef.h>

#include <tusk/basis.h>
#include <tusk/crystal.h>
#include <tusk/error.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct det_generate_options {
    unsigned threads;                              /* 0: 1 */
    void (*progress)(void *user, const char *line); /* may be NULL */
    void *user;
} det_generate_options_t;

typedef struct det_generate_stats {
    double potential_s, weighting_s, signals_s; /* wall time of each stage */
    unsigned fields_solved;                     /* weighting potentials solved */
    size_t points;                              /* basis points */
    size_t incomplete;                          /* points whose carriers did not both reach a contact */
    size_t moved;                               /* points collected on another segment than their slab */
    size_t uncollected;                         /* points whose holes reach no segment: kept with their slab */
} det_generate_stats_t;

/* Basis points lie on a Cartesian grid of step cfg->basis_grid, offset by
 * half a step from the axis and the front face, inside the germanium. */
TUSK_INTERNAL int det_basis_generate(const det_config_t *cfg, const det_generate_options_t *options, det_basis_t **out,
                                     det_generate_stats_t *stats, tusk_error_t *err);

#ifdef __cplusplus
}
#endif
#endif
