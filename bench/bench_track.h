/* bench_track.h - `tusk-bench track`: gamma-ray tracking speed (CPU
 * reference and OpenCL) on simulated events of multiplicity 1 and 30. */
#ifndef TUSK_BENCH_TRACK_H
#define TUSK_BENCH_TRACK_H

#include "base/cli.h"

/* A tusk_cli handler (argv[0] "tusk-bench track"); returns the exit status
 * (0, 1 failure, 2 usage). */
int bench_track_main(const tusk_cli_t *cli, int argc, char **argv);

#endif
