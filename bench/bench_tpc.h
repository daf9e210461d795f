/* bench_tpc.h - `tusk-bench tpc`: the TPC slice tracker's time per event
 * against clusters per event (pp to central Pb-Pb, the thesis's Table
 * 9.31 scan): the reference on one core, fast on every core, and OpenCL
 * with the host steps, the transfers and each kernel step apart, the
 * device's memory bandwidth measured beside it, and a linear fit of time
 * against clusters for each. */
#ifndef TUSK_BENCH_TPC_H
#define TUSK_BENCH_TPC_H

#include "base/cli.h"

/* A tusk_cli handler (argv[0] "tusk-bench tpc"); returns the exit status
 * (0, 1 failure, 2 usage). */
int bench_tpc_main(const tusk_cli_t *cli, int argc, char **argv);

#endif
