/* bench_sts.h - `tusk-bench sts`: the STS local reconstruction's time per
 * timeslice against digis per timeslice (2 M to 30 M, the thesis's sweep):
 * the original finder on one core, the parallel one on every core, and
 * OpenCL with the transfers and the sort, cluster and hit steps apart,
 * with the device's memory bandwidth measured beside it. */
#ifndef TUSK_BENCH_STS_H
#define TUSK_BENCH_STS_H

#include "base/cli.h"

/* A tusk_cli handler (argv[0] "tusk-bench sts"); returns the exit status
 * (0, 1 failure, 2 usage). */
int bench_sts_main(const tusk_cli_t *cli, int argc, char **argv);

#endif
