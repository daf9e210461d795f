/* bench_zfinder.h - `tusk-bench zfinder`: the z-finder's speed (reference,
 * fast, OpenCL one RoI a launch and batched with overlap, and a bare-loop
 * roofline) on simulated lowlum and highlum RoIs. */
#ifndef TUSK_BENCH_ZFINDER_H
#define TUSK_BENCH_ZFINDER_H

/* argv[0] is "zfinder"; returns the exit status (0, 1 failure, 2 usage). */
int bench_zfinder_main(int argc, char **argv);

#endif
