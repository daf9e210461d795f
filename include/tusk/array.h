/* array.h - the geometry of a detector array (libtusk-array): N crystals
 * of one shape (a det_config_t) placed around a target at the origin, each
 * facing it. The simulation transports photons through it; tracking turns
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
 * Layouts combine. THETA in [0, 180]; PHI and ROLL any finite value; ROLL
 * defaults to 0. Refused, with messages naming the origin and the key
 * ("array.conf: triple.2: ..."): a malformed or out-of-range value, an id
 * given twice (both keys named), no crystal at all, more than
 * ARRAY_MAX_CRYSTALS, and overlapping crystals: for every pair the
 * shortest distance between their axis segments (front centre to back
 * centre) must be at least radius + radius + gap (a capsule test:
 * conservative; for crystals facing the target it is where the front
 * faces meet). The message names both crystal ids, that distance and what
 * is needed.
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
/* The shape shared by every crystal (owned by the array). */
TUSK_API const det_crystal_t *array_crystal(const array_t *a);
/* The index of the crystal with this id, -1 if none. */
TUSK_API int array_index_of(const array_t *a, unsigned id);

/* Points between the array frame and crystal i's local frame. */
TUSK_API void array_to_local(const array_t *a, size_t i, const double world[3], double local[3]);
TUSK_API void array_to_world(const array_t *a, size_t i, const double local[3], double world[3]);
/* Directions into crystal i's local frame (the rotation only). */
TUSK_API void array_dir_to_local(const array_t *a, size_t i, const double world_dir[3], double local_dir[3]);

/* A stretch of a ray inside one crystal's bounding cylinder. */
typedef struct array_chord {
    size_t crystal;     /* the crystal's index */
    double t_in, t_out; /* along the ray, mm; t_in < t_out */
} array_chord_t;

/* The chords of the ray origin + t dir (dir a unit vector, t >= 0, mm)
 * through every crystal's BOUNDING CYLINDER (radius = the config's
 * radius, 0 <= z <= length in the local frame), sorted by t_in; t_in is
 * clamped to 0 when the origin is inside a cylinder. Tangent rays (chords
 * of no length) give none. Writes the first `max` chords (by t_in) into
 * `chords` (may be NULL when max is 0) and returns how many it wrote;
 * *total (may be NULL) gets the number that exist. The chords are
 * disjoint: the overlap check keeps the cylinders apart.
 *
 * The caller samples interactions by delta (Woodcock) tracking along the
 * chords and accepts a point only if array_inside: the bounding
 * cylinder contains the germanium (it does for the coax shape). Each
 * crystal is first tested against its bounding sphere, so a ray costs
 * little per crystal it misses. */
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
