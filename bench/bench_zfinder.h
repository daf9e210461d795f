/* bench_zfinder.h - `tusk-bench zfinder`: the z-finder's speed (reference,
 * fast, OpenCL one RoI a launch and batched with overlap, and a bare-loop
 * roofline) on simulated lowlum and highlum RoIs. */
#ifndef TUSK_BENCH_ZFINDER_H
#define TUSK_BENCH_ZFINDER_H

#include "base/cli.h"

/* A tusk_cli handler (argv[0] "tusk-bench zfinder"); returns the exit
 * status (0, 1 failure, 2 usage). */
int bench_zfinder_main(const tusk_cli_t *cli, int argc, char **argv);

#endif
