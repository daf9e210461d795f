/* plot.h - pictures a physicist looks at, drawn by gnuplot: a map of a
 * potential over a plane, drift paths over the crystal's outline, the
 * traces of every electrode for one point.
 *
 * Each function writes PNG plus, next to it, the data (PNG minus .png,
 * plus .dat) and the gnuplot script (.gp), so a picture can be restyled
 * and redrawn by hand. gnuplot runs as a child process ("gnuplot" from
 * PATH, or $TUSK_GNUPLOT); when it is missing or fails, TUSK_EIO says so
 * and names the script. */
#ifndef TUSK_DETECTOR_PLOT_H
#define TUSK_DETECTOR_PLOT_H

#include "tusk/export.h"

#include <stddef.h>

#include "tusk/crystal.h"
#include "tusk/error.h"

/* A heat map: values[j * nx + i] at (x0 + i*dx, y0 + j*dy); NAN cells are
 * left blank (outside the crystal). Contour lines at `contours` evenly
 * spaced levels when > 0. */
TUSK_INTERNAL int det_plot_map(const char *png, const char *title, const float *values, size_t nx, size_t ny,
                               double x0, double y0,
                               double dx, double dy, const char *xlabel, const char *ylabel, const char *cblabel,
                               unsigned contours, tusk_error_t *err);

/* Drift paths seen along one projection: 'z' looks down the axis (x-y
 * plane), 'r' shows radius against depth (r-z). Path p has lens[p] points
 * xyz[p][3 * k + 0..2] (mm); kinds[p] is 'e' (electron) or 'h' (hole),
 * drawn in two colours. The crystal's outline is drawn from `crystal`. */
TUSK_INTERNAL int det_plot_paths(const char *png, const char *title, const det_crystal_t *crystal, char projection,
                                 size_t npaths,
                                 const size_t *lens, const double *const *xyz, const char *kinds, tusk_error_t *err);

/* The traces of all electrodes for one point: traces[e * samples + s],
 * e over det_crystal_electrodes(crystal) (segments then the core), drawn
 * as a grid of small panels (one row per ring, one column per sector, the
 * core below), with a common vertical scale; the hit segment `hit`
 * highlighted (or none when hit < 0). */
TUSK_INTERNAL int det_plot_traces(const char *png, const char *title, const det_crystal_t *crystal, const float *traces,
                                  unsigned samples, double sample_ns, int hit, tusk_error_t *err);

#endif
