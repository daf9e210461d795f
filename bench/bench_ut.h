/* bench_ut.h - `tusk-bench ut`: the UT decoding and Compass tracking's
 * throughput in events/s, as the paper measures it (seed 003 §VI; spec
 * §3.5): decoding alone, Compass alone and both, for the one-core
 * reference, the fast backend on all cores and OpenCL (many events a
 * launch; kernel times apart, transfers apart), at 5 sectors / 8
 * candidates and at 1 / 1, with the device's memory bandwidth measured
 * beside it. */
#ifndef TUSK_BENCH_UT_H
#define TUSK_BENCH_UT_H

#include "base/cli.h"

/* A tusk_cli handler (argv[0] "tusk-bench ut"); returns the exit status
 * (0, 1 failure, 2 usage). */
int bench_ut_main(const tusk_cli_t *cli, int argc, char **argv);

#endif
