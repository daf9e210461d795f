/* bench_util.h - what the reconstruction benchmarks (tusk-bench zfinder,
 * sts, ut and tpc) share, written once: their options (a table of
 * base/cli.h; the devices, runs, threads, seed, work-group size and
 * bandwidth probe of the OpenCL rows), comma-separated sizes, the header
 * line, each device's copy bandwidth, a row's speed-up against the
 * reference and the kernels' share of the bandwidth. Times are gathered
 * in tusk_moments_t (base/stats.h): mean and sample standard deviation. */
#ifndef TUSK_BENCH_UTIL_H
#define TUSK_BENCH_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/cli.h"
#include "base/stats.h"
#include "tusk/error.h"

#define BENCH_MAX_DEVICES 8
#define BENCH_MAX_SIZES 32

/* The options of the OpenCL benchmarks' rows. */
typedef struct bench_opts {
    const char *device[BENCH_MAX_DEVICES]; /* --device, repeatable */
    unsigned devices;
    uint64_t runs, ref_runs, threads, seed, group, bw_mb;
} bench_opts_t;

/* A comma-separated list of whole numbers from min to max (--collisions,
 * --tracks): the target of a TUSK_CLI_CALL option, bench_sizes. */
typedef struct bench_sizes {
    const char *option; /* "--collisions" */
    unsigned min, max;
    uint32_t v[BENCH_MAX_SIZES];
    unsigned n;
} bench_sizes_t;
bool bench_sizes(void *sizes, const char *prog, const char *text);

/* Read a benchmark's options: its own (`options`, ended by a NULL name),
 * then, with o, --device, --runs, --ref-runs, --threads, --seed, `group`
 * (its --group-size: the range is the benchmark's) and --bandwidth-mb;
 * help prints the usage. No argument may follow ("PROG: unexpected
 * argument 'A'"). TUSK_CLI_RUN, or the exit status. */
int bench_options(const tusk_cli_t *cli, int argc, char **argv, const tusk_cli_option_t *options,
                  const tusk_cli_option_t *group, bench_opts_t *o, void (*help)(FILE *out));

/* "PROG: N CPUs online, R runs a row (F of the reference), NOTEseed S". */
void bench_header(const char *prog, const bench_opts_t *o, const char *note);

/* A device's probe: the OpenCL backend made on it (work-groups of group),
 * its copy bandwidth in GB/s over `bytes` (best of 10) and its
 * description. */
typedef int (*bench_probe_fn)(const char *device, unsigned group, size_t bytes, double *gbs, char *describe,
                              size_t cap, tusk_error_t *err);

/* Every --device probed, bandwidth[d] its GB/s: a line each ("device D:
 * memory bandwidth ..."); the exit status (1 after "PROG: --device D:
 * message"). */
int bench_bandwidths(const char *prog, const bench_opts_t *o, bench_probe_fn probe, double *bandwidth);

/* The probe of library X's OpenCL backend (X_config_t, X_cl_config_t with
 * device and group_size, X_cl_new, X_cl_bandwidth, X_cl_describe): a
 * static function bench_X_probe. */
#define BENCH_PROBE(x)                                                                                                 \
    static int bench_##x##_probe(const char *device, unsigned group, size_t bytes, double *gbs, char *describe,      \
                                 size_t cap, tusk_error_t *err)                                                        \
    {                                                                                                                  \
        x##_config_t cfg;                                                                                              \
        x##_config_default(&cfg);                                                                                      \
        x##_cl_config_t clc;                                                                                           \
        x##_cl_config_default(&clc);                                                                                   \
        clc.device = device;                                                                                           \
        clc.group_size = group;                                                                                        \
        x##_cl_t *cl = NULL;                                                                                           \
        int st = x##_cl_new(&cl, &cfg, &clc, err);                                                                     \
        if (st == TUSK_OK && (st = x##_cl_bandwidth(cl, bytes, 10, gbs, err)) == TUSK_OK)                              \
            snprintf(describe, cap, "%s", x##_cl_describe(cl));                                                        \
        x##_cl_destroy(&cl);                                                                                           \
        return st;                                                                                                     \
    }

/* "N.NNx (a)" in width w with d decimals: the reference's mean time over
 * ms; "" without a reference row. Returns buf. */
const char *bench_ratio(const tusk_moments_t *ref, double ms, int w, int d, char *buf, size_t cap);

/* The end of a line that gave the kernels' GB/s: " = P % of the B GB/s
 * measured" when the bandwidth was. */
void bench_share(double gbs, double bandwidth);

#endif
