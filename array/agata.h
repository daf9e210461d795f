/* agata.h - AGATA's 4 pi array (A180) inside libtusk-array: where its 180
 * crystals are, and the shapes of its three crystals, A, B and C, derived
 * from where they are (array/agata.c). Internal: the array configuration
 * reaches it with `agata = IDS` (tusk/array.h).
 *
 * The shapes. AGATA tiles the sphere with 180 hexagons and 12 pentagons
 * (the pentagons left empty); a crystal fills the cone from the target
 * through its tile, cut by planes at its front face and 90 mm behind and
 * by an 80 mm cylinder about its axis. The placements (below) fix the
 * tiles: crystal i's side planes are the planes through the target
 * halfway (in angle) between the direction of its front-face centre and
 * those of its neighbours - the other crystals and the 12 pentagons'
 * centres - moved into it by half the space between germanium and
 * germanium: AGATA_HALF_IN_CLUSTER towards a crystal of its own triple
 * cluster (two capsules and a gap), AGATA_HALF_BETWEEN towards another
 * cluster or an empty pentagon (capsule, cryostat and a gap on each
 * side). The three crystals of each cluster come out as three shapes,
 * the same for all 60 clusters to a micrometre (tests/check_array.c). */
#ifndef TUSK_ARRAY_AGATA_H
#define TUSK_ARRAY_AGATA_H

#include <tusk/export.h>

#include <stdbool.h>

#include <tusk/crystal.h>
#include <tusk/error.h>

#define AGATA_CRYSTALS 180
#define AGATA_RADIUS 235.0 /* mm, target to every front-face centre */
#define AGATA_SHAPES 3 /* A, B, C: crystal i is shape i % 3 */

/* Around each crystal, outwards from its germanium (mm): the capsule
 * (0.4 mm of vacuum, 0.8 mm of aluminium) and the cryostat (2.0 mm of
 * vacuum, 1.0 mm of aluminium) - the AGATA simulation's encapsulation and
 * cryostat parameters; then half of an assumed 0.5 mm gap between
 * capsules (in a cluster) and between cryostats (between clusters). */
#define AGATA_CAPSULE_GAP 0.4
#define AGATA_CAPSULE_WALL 0.8
#define AGATA_CRYOSTAT_GAP 2.0
#define AGATA_CRYOSTAT_WALL 1.0
#define AGATA_HALF_IN_CLUSTER (AGATA_CAPSULE_GAP + AGATA_CAPSULE_WALL + 0.25)
#define AGATA_HALF_BETWEEN (AGATA_CAPSULE_GAP + AGATA_CAPSULE_WALL + AGATA_CRYOSTAT_GAP + AGATA_CRYOSTAT_WALL + 0.25)

/* Crystal i (0..179) as AGATA places it: its front-face centre (mm, on
 * the AGATA_RADIUS sphere) and its local x, y, z axes in the array frame
 * (rows of axis), made exactly orthonormal (the table's five digits are
 * not quite). */
TUSK_INTERNAL void array_agata_place(unsigned i, double front[3], double axis[3][3]);

/* A side of a crystal: the plane n . x = d of its frame (n a unit vector
 * outwards; the germanium on the side n . x <= d). */
typedef struct agata_side {
    double n[3], d;
    bool between; /* towards another cluster or an empty pentagon (else its own cluster) */
} agata_side_t;

typedef struct agata_shape {
    unsigned sides;                  /* 6 */
    agata_side_t side[DET_MAX_SIDES]; /* counter-clockwise, side k from corner k to corner k + 1 */
    double front[DET_MAX_SIDES][2];  /* the corners at z = 0 ... */
    double back[DET_MAX_SIDES][2];   /* ... and at z = length */
} agata_shape_t;

/* Crystal i's shape, `length` mm long, derived from the placements as
 * above: its sides ordered counter-clockwise from the corner nearest the
 * local +x axis in angle. TUSK_EINVAL if the planes do not close a
 * polygon around the axis at both ends with the same sides (they do for
 * every crystal of the table). */
TUSK_INTERNAL int array_agata_derive(unsigned i, double length, agata_shape_t *shape, tusk_error_t *err);

/* The 12 empty pentagons' centres (unit vectors from the target). */
TUSK_INTERNAL void array_agata_pentagons(double centre[12][3]);

#endif
