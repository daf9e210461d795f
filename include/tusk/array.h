/* array.h - the geometry of a detector array (libtusk-array): N crystals
 * placed around a target at the origin, each facing it - of one shape (a
 * det_config_t), or AGATA's own three with their capsules and cryostats.
 * The simulation transports photons through it; tracking turns
 * crystal-frame points into array-frame points with it.
 *
 * Frames, lengths in mm, angles in degrees:
 *   array frame  - the target at the origin, z along the beam. A crystal's
 *                  axis points along u = (sin theta cos phi,
 *                  sin theta sin phi, cos theta), away from the target.
 *   local frame  - the crystal's own (tusk/crystal.h): z along its axis,
 *                  z = 0 on the front face, z = length at the back.
 * Local z = u; local x = cos(roll) e_theta + sin(roll) e_phi, e_theta and
 * e_phi the spherical unit vectors at u (at the poles, theta = 0 or 180
 * exactly, e_theta := x-hat and e_phi := y-hat both turned by phi about
 * z, so the frame stays defined); local y = z cross x (right-handed). The
 * front-face centre lies at distance * u: local (0, 0, 0) is that point,
 * local (0, 0, length) the centre of the back face.
 *
 * Configuration (tusk/params.h syntax; every key is checked, unknown ones
 * refused):
 *   distance = 235            target to each front-face centre (235, the
 *                             AGATA inner radius; > 0)
 *   gap = 1                   least clearance between the crystals'
 *                             bounding cylinders (1; >= 0)
 *   triple_spread_deg = 12    angle between a triple cluster's axis and
 *                             its crystals' axes (12; in (0, 90])
 *   crystal.ID = THETA PHI [ROLL]
 *                             one crystal, id ID (0..65535)
 *   triple.K = THETA PHI [ROLL]
 *                             a triple cluster about the axis (THETA, PHI):
 *                             crystals 3K, 3K+1, 3K+2 at triple_spread_deg
 *                             from it, at azimuths ROLL, ROLL + 120,
 *                             ROLL + 240 around it: 0, 120, 240 degrees
 *                             from the cluster's local x (the x a crystal
 *                             at THETA PHI ROLL would have), turning
 *                             right-handed about the cluster axis; crystal
 *                             3K+k has roll ROLL + 120 k
 *   shell = N                 crystals 0..N-1 (N in 1..1000) on a
 *                             Fibonacci spiral, cos(theta) evenly spread
 *                             over [-cos h, cos h], roll 0
 *   shell_hole_deg = 20       h: the shell leaves cones of this half-angle
 *                             around +z and -z free (beam pipe; [0, 90))
 *   agata = IDS               crystals of AGATA's 4 pi array (A180) by their
 *                             AGATA number: "0-179" the whole shell, "0-14"
 *                             the demonstrator's five triple clusters around
 *                             the beam at backward angles, "0-44" fifteen
 *                             clusters (1 pi); numbers and ranges, commas
 *                             between. Each crystal where AGATA puts it (its
 *                             frame from AGATA's table, front face 235 mm from
 *                             the target, axis within 0.9 degrees of the line
 *                             to it) and of AGATA's shape: crystal i is shape
 *                             A, B or C for i mod 3 = 0, 1, 2 - tapered
 *                             hexagons (tusk/crystal.h) derived from the
 *                             layout (array/agata.h), with the radius, length,
 *                             hole and segmentation of the given crystal. Not
 *                             with the other layouts, distance, gap or
 *                             triple_spread_deg.
 *   capsules = yes|no         (agata only; yes) each crystal's aluminium
 *                             capsule: 0.8 mm thick, 0.4 mm from the germanium
 *                             (front, sides, cylinder and back)
 *   cryostats = yes|no        (agata only; yes) the triple clusters' aluminium
 *                             walls: 1.0 mm thick, 2.0 mm beyond the capsules,
 *                             in front and towards other clusters or the empty
 *                             pentagons (none between the crystals of a
 *                             cluster; open at the back - the end caps'
 *                             insides, preamplifiers and dewars are not
 *                             modelled)
 * Layouts combine (agata excepted). THETA in [0, 180]; PHI and ROLL any finite value; ROLL
 * defaults to 0. Refused, with messages naming the origin and the key
 * ("array.conf: triple.2: ..."): a malformed or out-of-range value, an id
 * given twice (both keys named), no crystal at all, more than
 * ARRAY_MAX_CRYSTALS, and overlapping crystals: for every pair the
 * shortest distance between their axis segments (front centre to back
 * centre) must be at least radius + radius + gap (a capsule test:
 * conservative; for crystals facing the target it is where the front
 * faces meet). The message names both crystal ids, that distance and what
 * is needed. AGATA's crystals are not checked so: their shapes, capsules
 * and cryostats stay apart by construction (0.5 mm between capsules and
 * between cryostats).
 *
 * An array is immutable once made: its functions may be called from any
 * number of threads. No global mutable state.
 */
#ifndef TUSK_ARRAY_H
#define TUSK_ARRAY_H

#include <tusk/export.h>

#include <stdbool.h>
#include <stddef.h>

#include <tusk/crystal.h>
#include <tusk/error.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ARRAY_MAX_CRYSTALS 1000
#define ARRAY_MAX_ID 65535u

typedef struct array array_t;

/* Where one crystal is. */
typedef struct array_place {
    unsigned id;                         /* crystal id (data:crystal crystal_id), unique */
    double theta_deg, phi_deg, roll_deg; /* direction of the crystal axis seen from the target, roll about it */
    double distance;                     /* mm, target to the front-face centre */
    double front[3];                     /* front-face centre in the array frame, mm */
    double axis[3][3];                   /* rows: the crystal's local x, y, z unit vectors in the array frame */
    unsigned shape;                      /* agata: 0, 1, 2 for A, B, C; else 0 */
} array_place_t;

/* Build an array from `size` bytes of configuration text (syntax above);
 * `origin` names the text in messages. `crystal` is the shape of every
 * crystal (NULL: det_config_default); it is checked and copied. On
 * failure *out is NULL and err says why (TUSK_EPARAM for the text). */
TUSK_API int array_parse(array_t **out, const char *text, size_t size, const char *origin,
                         const det_config_t *crystal, tusk_error_t *err);
/* The same from a file (at most 1 MiB); messages name `path`. */
TUSK_API int array_load(array_t **out, const char *path, const det_config_t *crystal, tusk_error_t *err);
/* Free the array and set *array = NULL; NULL (or *array NULL) is fine. */
TUSK_API void array_destroy(array_t **array);

/* The number of crystals (at least 1). */
TUSK_API size_t array_count(const array_t *a);
/* Crystal i (0 <= i < count; NULL beyond), the crystals sorted by id. */
TUSK_API const array_place_t *array_place(const array_t *a, size_t i);
/* The crystal the array was made with (owned by the array): every
 * crystal's shape but for AGATA's layout. */
TUSK_API const det_crystal_t *array_crystal(const array_t *a);
/* Crystal i's own shape (owned by the array; NULL beyond the count). */
TUSK_API const det_crystal_t *array_crystal_of(const array_t *a, size_t i);
/* The germanium of all crystals, cm^3 (det_crystal_volume). */
TUSK_API double array_germanium_cm3(const array_t *a);
/* The index of the crystal with this id, -1 if none. */
TUSK_API int array_index_of(const array_t *a, unsigned id);

/* Points between the array frame and crystal i's local frame. */
TUSK_API void array_to_local(const array_t *a, size_t i, const double world[3], double local[3]);
TUSK_API void array_to_world(const array_t *a, size_t i, const double local[3], double world[3]);
/* Directions into crystal i's local frame (the rotation only). */
TUSK_API void array_dir_to_local(const array_t *a, size_t i, const double world_dir[3], double local_dir[3]);

/* What there is at a point. */
enum array_material {
    ARRAY_VACUUM = 0,
    ARRAY_GERMANIUM = 1,
    ARRAY_ALUMINIUM = 2 /* capsules and cryostats */
};

/* The material at an array-frame point as far as crystal i and what
 * surrounds it (its capsule and cryostat walls) go: germanium, aluminium
 * or vacuum. Another crystal's material is not seen: ask each crystal
 * whose envelope holds the point (array_chords). */
TUSK_API enum array_material array_material_at(const array_t *a, size_t i, const double world[3]);
/* Whether there is material besides germanium (capsules or cryostats). */
TUSK_API bool array_passive(const array_t *a);

/* A stretch of a ray inside one crystal's envelope. */
typedef struct array_chord {
    size_t crystal;     /* the crystal's index */
    double t_in, t_out; /* along the ray, mm; t_in < t_out */
} array_chord_t;

/* The chords of the ray origin + t dir (dir a unit vector, t >= 0, mm)
 * through every crystal's ENVELOPE - a cylinder about its axis holding its
 * germanium and, for AGATA's layout, its capsule and cryostat walls (the
 * config's radius and 0 <= z <= length in the local frame otherwise) -
 * sorted by t_in; t_in is clamped to 0 when the origin is inside one.
 * Tangent rays (chords of no length) give none. Writes the first `max`
 * chords (by t_in) into `chords` (may be NULL when max is 0) and returns
 * how many it wrote; *total (may be NULL) gets the number that exist. The
 * overlap check keeps the chords of the other layouts disjoint; AGATA's
 * envelopes overlap their neighbours' (their contents do not).
 *
 * The caller samples interactions by delta (Woodcock) tracking along the
 * chords and asks array_material_at (or array_inside) what is at a
 * point; where chords overlap, each crystal whose chord holds the point.
 * Each crystal is first tested against its bounding sphere, so a ray
 * costs little per crystal it misses. */
TUSK_API size_t array_chords(const array_t *a, const double origin[3], const double dir[3], array_chord_t *chords,
                             size_t max, size_t *total);
/* Is the array-frame point inside crystal i's germanium
 * (det_crystal_inside after array_to_local)? */
TUSK_API bool array_inside(const array_t *a, size_t i, const double world[3]);

/* A human summary: the count, the id range, the distances, the least
 * clearance between neighbours (capsule test, which pair), the crystal
 * size and the fraction of 4 pi the front faces cover. Written into buf
 * like snprintf: the length needed is returned (buf may be NULL when cap
 * is 0). */
TUSK_API size_t array_describe(const array_t *a, char *buf, size_t cap);

#ifdef __cplusplus
}
#endif
#endif
