/* crystal.h - the geometry of a segmented HPGe crystal (libtusk-detector).
 *
 * Coordinates in mm: z along the crystal axis, z = 0 on the front face,
 * z = length at the back; x, y across, the axis at x = y = 0. Angles are
 * measured from +x towards +y.
 *
 * Electrodes, as tusk numbers them (the basis file's channel order):
 *   segment = sector * rings + ring    (0 .. 35 for 6 x 6; AGATA's order,
 *                                       as in data:crystal, adf/FORMAT.md)
 *   core    = segments                 (36)
 * Ring 0 is the frontmost; sector s covers angles
 *   [offset + s * 360/sectors, offset + (s+1) * 360/sectors).
 * Names are AGATA's: sector letter A.. then ring number 1..: "A1" is
 * segment 0, "A2" segment 1 (sector 0, ring 1), "F6" segment 35; the
 * core is "CC".
 *
 * Surfaces: the outer mantle and the front face are the segment contacts
 * (front face: ring 0), the central hole is the core contact, the back
 * face is passivated (no contact).
 *
 * Shapes (an entry of crystal.c's shape table: its outline and whether a
 * turn by one sector maps it onto itself; inside, segment-of and
 * contact-of are built on it):
 *   "coax"    - a closed-end coaxial cylinder of `radius`;
 *   "tapered" - AGATA's crystals: a convex polygon of `sides` corners at
 *               the front face (front, z = 0) and another at the back
 *               (back, z = length), each corner moving in a straight line
 *               from one to the other (the side faces of AGATA's crystals
 *               are planes, so the polygon at depth z is exact), cut by
 *               the cylinder of `radius` about the axis (AGATA's crystals
 *               are cut from 80 mm cylinders: round at the back). Corners
 *               counter-clockwise seen from the back (+z). With as many
 *               sides as sectors, sector s runs from the direction of
 *               front corner s to that of corner s + 1 (AGATA's sector
 *               borders run along the corners); otherwise sectors are
 *               equal angles from sector_offset_deg. Never symmetric.
 * The array (tusk/array.h) derives AGATA's three tapered shapes A, B, C. */
#ifndef TUSK_CRYSTAL_H
#define TUSK_CRYSTAL_H

#include <tusk/export.h>

#include <stdbool.h>
#include <stddef.h>

#include <tusk/error.h>
#include <tusk/params.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DET_MAX_RINGS 16
#define DET_MAX_SECTORS 16
#define DET_MAX_SEGMENTS (DET_MAX_RINGS * DET_MAX_SECTORS)
#define DET_MAX_SIDES 12

enum det_shape {
    DET_SHAPE_COAX = 0,
    DET_SHAPE_TAPERED = 1
};

/* Everything the basis generator is configured with. Lengths in mm,
 * impurities in 1e10 cm^-3 (positive: n-type donors), voltages in V,
 * times in ns. */
typedef struct det_config {
    enum det_shape shape;
    double radius;            /* outer radius (40) */
    double length;            /* along z (90) */
    double hole_radius;       /* core hole (5) */
    double hole_front;        /* z where the hole ends, from the front face (13) */
    unsigned rings, sectors;  /* 6, 6 */
    double ring_thickness[DET_MAX_RINGS]; /* front to back, sum = length (8 13 15 18 18 18) */
    double sector_offset_deg; /* angle where sector 0 starts (0) */
    double impurity_front;    /* net impurity at z = 0, 1e10 cm^-3 (1.0) */
    double impurity_back;     /* at z = length; linear in between (0.5) */
    double bias;              /* core voltage, outer contacts at 0 (4500) */
    double field_grid;        /* field and weighting-potential grid step (1.0 mm) */
    double basis_grid;        /* basis point spacing (2.0 mm) */
    unsigned samples;         /* output samples per trace (60) */
    double sample_ns;         /* output sample period (10) */
    double step_ns;           /* drift step (1) */
    double preamp_rise_ns;    /* preamplifier 10-90 % rise time (30); 0: none */
    bool symmetry;            /* solve one sector, rotate for the others (off): 6x fewer
                                 solves, but a 60-degree turn is no symmetry of the
                                 Cartesian grid: a few % error near the surfaces */
    unsigned sides;           /* tapered: corners of the outline (3..DET_MAX_SIDES); coax: 0 */
    double front[DET_MAX_SIDES][2]; /* tapered: corners (x, y) at z = 0, counter-clockwise */
    double back[DET_MAX_SIDES][2];  /* tapered: the same corners at z = length */
} det_config_t;

/* The defaults above (an AGATA-like closed-end coax). */
TUSK_API void det_config_default(det_config_t *cfg);

/* Read `key = value` settings (tusk/params.h syntax) over cfg; every key
 * is checked (unknown ones refused), then the whole configuration
 * (det_config_check). `origin` names the text in messages. Keys: shape,
 * radius, length, hole_radius, hole_front, rings, sectors, ring_thickness
 * (comma-separated), sector_offset_deg, impurity_front, impurity_back,
 * bias, field_grid, basis_grid, samples, sample_ns, step_ns,
 * preamp_rise_ns, symmetry; for shape = tapered also front and back
 * ("X1 Y1 X2 Y2 ...", mm: the corners, as many in each). */
TUSK_API int det_config_parse(det_config_t *cfg, const char *text, size_t size, const char *origin, tusk_error_t *err);
TUSK_API int det_config_load(det_config_t *cfg, const char *path, tusk_error_t *err);
/* Consistency: positive sizes, hole inside the crystal, ring thicknesses
 * summing to the length, grids and times in range; a tapered outline
 * convex and counter-clockwise at both ends, around the hole with room to
 * spare (hole_radius + 1 mm from every side at every depth). */
TUSK_API int det_config_check(const det_config_t *cfg, tusk_error_t *err);
/* The configuration as parseable text (into buf; the length needed is
 * returned, as snprintf does). Stored in basis files. */
TUSK_API size_t det_config_format(const det_config_t *cfg, char *buf, size_t cap);

typedef struct det_crystal det_crystal_t;

TUSK_API int det_crystal_new(det_crystal_t **out, const det_config_t *cfg, tusk_error_t *err);
TUSK_API void det_crystal_destroy(det_crystal_t **crystal);
TUSK_API const det_config_t *det_crystal_config(const det_crystal_t *crystal);

TUSK_API unsigned det_crystal_segments(const det_crystal_t *crystal); /* rings * sectors */
TUSK_API unsigned det_crystal_electrodes(const det_crystal_t *crystal); /* segments + 1 (core) */
TUSK_API unsigned det_crystal_core(const det_crystal_t *crystal);      /* the core's electrode index */

/* Is (x, y, z) inside the germanium (closed surfaces count as inside)? */
TUSK_API bool det_crystal_inside(const det_crystal_t *crystal, double x, double y, double z);
/* The germanium's volume, cm^3 (the hole taken out), by integration over
 * the outline's area at `steps` depths (the midpoint rule; the outline's
 * area at a depth is exact: polygon clipped by the circle). */
TUSK_API double det_crystal_volume(const det_crystal_t *crystal, unsigned steps);
/* The segment a point inside belongs to (by sector angle and ring depth);
 * -1 outside. */
TUSK_API int det_crystal_segment_of(const det_crystal_t *crystal, double x, double y, double z);
TUSK_API unsigned det_crystal_ring_of_segment(const det_crystal_t *crystal, unsigned segment);
TUSK_API unsigned det_crystal_sector_of_segment(const det_crystal_t *crystal, unsigned segment);

/* For a point outside the germanium: the electrode whose contact is the
 * nearest surface, or -1 when that surface is passivated (the back face)
 * or nothing is near. Used to set the solver's boundary nodes. */
TUSK_API int det_crystal_contact_of(const det_crystal_t *crystal, double x, double y, double z);

/* "A1".."F6", "CC" (buf of at least 8 bytes). */
TUSK_API const char *det_crystal_electrode_name(const det_crystal_t *crystal, unsigned electrode, char *buf,
                                                size_t cap);

/* Net impurity (1e10 cm^-3) at depth z. */
TUSK_API double det_crystal_impurity(const det_crystal_t *crystal, double z);

/* Whether rotating by 360/sectors degrees maps the crystal onto itself
 * (then one sector's weighting potentials give the others). */
TUSK_API bool det_crystal_symmetric(const det_crystal_t *crystal);
/* Rotate (x, y) by `steps` sectors (positive: towards +y). */
TUSK_API void det_crystal_rotate(const det_crystal_t *crystal, int steps, double *x, double *y);

#ifdef __cplusplus
}
#endif
#endif
