/* selftest.c - tusk_cl_selftest: run kernels/selftest.cl on a device and
 * compare with the same computation on the CPU.
 *
 * Uses only the public API of cl.h, so the self-test exercises what the
 * actors use: program build (and cache), kernel creation, checked buffers,
 * timed runs. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tusk/cl.h"
#include "base/clock.h"

#include "cl_private.h"
#include "selftest_shared.h"

/* The kernels' source, tusk_cl_selftest_source (cl_private.h): made by
 * tools/embed-text.sh from gpu_common.h, selftest_shared.h and
 * kernels/selftest.cl. */

/* Checksum values per signal: enough elements for several groups' worth
 * of grid-stride loop. */
#define ST_VALUES_PER_SIGNAL 4

/* Work-group sizes asked for (cut to what the device and kernel allow). */
#define ST_GRID_WG 64
#define ST_SUM_WG 128
/* At most this many checksum groups: beyond, the grid-stride loop works. */
#define ST_SUM_MAX_GROUPS 1024

/* Device chi-square against a double-precision CPU: float sums of 64
 * positive terms are good to a few 1e-6. */
#define ST_REL_TOL 1e-4

/* ---- random input -------------------------------------------------------- */

/* splitmix64: a whole state per call, any seed (0 included) is fine. */
static uint64_t rng_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

/* Uniform in [0, 1). */
static double rng_uniform(uint64_t *state)
{
    return (double)(rng_next(state) >> 11) * (1.0 / 9007199254740992.0);
}

/* Basis signals shaped like detector pulses: a smooth rising edge from 0
 * to 1 whose position and rise time vary over the basis, so that each
 * noisy signal has a clear best match. */
static void make_basis(float *basis, uint64_t *rng)
{
    for (int m = 0; m < ST_BASIS; m++) {
        double t0 = ST_LEN * (0.2 + 0.5 * (m + 0.5 * rng_uniform(rng)) / ST_BASIS);
        double rise = 1.0 + 4.0 * rng_uniform(rng);
        for (int j = 0; j < ST_LEN; j++)
            basis[m * ST_LEN + j] = (float)(0.5 * (1.0 + tanh((j - t0) / rise)));
    }
}

/* Each signal: a random basis signal times an amplitude in 0.8..1.2, plus
 * uniform noise of +-0.05. */
static void make_signals(float *signals, size_t n, const float *basis, uint64_t *rng)
{
    for (size_t i = 0; i < n; i++) {
        const float *b = basis + (size_t)(rng_next(rng) % ST_BASIS) * ST_LEN;
        double amp = 0.8 + 0.4 * rng_uniform(rng);
        for (int j = 0; j < ST_LEN; j++)
            signals[i * ST_LEN + j] = (float)(amp * b[j] + 0.1 * (rng_uniform(rng) - 0.5));
    }
}

/* ---- CPU reference ------------------------------------------------------- */

/* Chi-square of one signal against basis m, in double, same loop order as
 * the kernel. */
static double cpu_chi2(const float *signal, const float *basis, size_t m)
{
    const float *b = basis + m * ST_LEN;
    double chi2 = 0.0;
    for (int j = 0; j < ST_LEN; j++)
        chi2 += st_chi2_term(signal[j], b[j]);
    return chi2;
}

static void cpu_grid_search(const float *signals, size_t n, const float *basis, double *best_chi2,
                            uint32_t *best_index)
{
    for (size_t i = 0; i < n; i++) {
        const float *s = signals + i * ST_LEN;
        double best = INFINITY;
        uint32_t index = 0;
        for (size_t m = 0; m < ST_BASIS; m++) {
            double chi2 = cpu_chi2(s, basis, m);
            if (chi2 < best) { /* strict: the first minimum wins, as on the device */
                best = chi2;
                index = (uint32_t)m;
            }
        }
        best_chi2[i] = best;
        best_index[i] = index;
    }
}

static uint64_t cpu_checksum(const uint32_t *values, size_t n)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += values[i];
    return sum;
}

/* ---- device side ---------------------------------------------------------- */

enum { K_GRID, K_SUM, N_KERNELS };
static const char *const kernel_names[N_KERNELS] = {"st_grid_search", "st_checksum"};

/* min(want, device limit, kernel limit): the kernel's own limit can be
 * below the device's (registers, PoCL's local-size rules). */
static size_t work_group_size(const tusk_cl_t *cl, const tusk_cl_kernels_t *ks, size_t k, size_t want)
{
    size_t wg = want, dev_max = tusk_cl_device(cl)->max_work_group_size;
    if (dev_max > 0 && wg > dev_max)
        wg = dev_max;
    if (wg > tusk_cl_kernels_limit(ks, k))
        wg = tusk_cl_kernels_limit(ks, k);
    return wg ? wg : 1;
}

static size_t round_up(size_t n, size_t multiple)
{
    return (n + multiple - 1) / multiple * multiple;
}

/* Everything one run holds, released in one place whatever the path. */
typedef struct st_run {
    float *basis, *signals, *dev_chi2;
    uint32_t *dev_index, *dev_hist, *host_hist, *cpu_index, *values;
    double *cpu_chi2;
    uint64_t *partials;
    tusk_cl_kernels_t *ks;
    cl_mem m_signals, m_basis, m_chi2, m_index, m_hist, m_values, m_partials, m_total;
} st_run_t;

static void st_run_release(tusk_cl_t *cl, st_run_t *r)
{
    cl_mem *mems[] = {&r->m_signals, &r->m_basis, &r->m_chi2,     &r->m_index,
                      &r->m_hist,    &r->m_values, &r->m_partials, &r->m_total};
    for (size_t i = 0; i < sizeof mems / sizeof mems[0]; i++)
        if (*mems[i])
            tusk_cl_buffer_release(cl, mems[i]);
    tusk_cl_kernels_destroy(&r->ks);
    free(r->basis);
    free(r->signals);
    free(r->dev_chi2);
    free(r->dev_index);
    free(r->dev_hist);
    free(r->host_hist);
    free(r->cpu_index);
    free(r->values);
    free(r->cpu_chi2);
    free(r->partials);
}

/* The program's options: int64 atomics where there are (the sizes are
 * selftest_shared.h's). */
static int build_options(const tusk_cl_device_info_t *dev, char *buf, size_t cap, tusk_error_t *err)
{
    buf[0] = '\0';
    int rc = TUSK_OK;
    if (dev->int64_atomics)
        rc = tusk_cl_define(buf, cap, "ST_INT64_ATOMICS", NULL, err);
    return rc;
}

int tusk_cl_selftest(tusk_cl_t *cl, size_t signals, uint64_t seed, tusk_cl_selftest_result_t *result,
                     tusk_error_t *err)
{
    if (!cl || !result)
        return tusk_error_set(err, TUSK_EINVAL, "tusk_cl_selftest: no device or no result");
    memset(result, 0, sizeof *result);
    result->signals = signals;
    result->seed = seed;
    if (signals == 0)
        return tusk_error_set(err, TUSK_EINVAL, "tusk_cl_selftest: no signals (need at least 1)");
    /* The kernels take counts as uint; the checksum has the most elements. */
    if (signals > UINT32_MAX / ST_VALUES_PER_SIGNAL || signals > SIZE_MAX / (ST_LEN * sizeof(float)))
        return tusk_error_set(err, TUSK_EINVAL,
                              "tusk_cl_selftest: %zu signals, more than the %lu the kernels can count", signals,
                              (unsigned long)(UINT32_MAX / ST_VALUES_PER_SIGNAL));

    const tusk_cl_device_info_t *dev = tusk_cl_device(cl);
    const size_t nvalues = signals * ST_VALUES_PER_SIGNAL;
    const size_t basis_bytes = (size_t)ST_BASIS * ST_LEN * sizeof(float);
    const size_t signal_bytes = signals * ST_LEN * sizeof(float);
    st_run_t r = {0};
    int rc;

    /* Host memory first: nothing on the device is worth making without it. */
    r.basis = malloc(basis_bytes);
    r.signals = malloc(signal_bytes);
    r.dev_chi2 = malloc(signals * sizeof *r.dev_chi2);
    r.dev_index = malloc(signals * sizeof *r.dev_index);
    r.cpu_index = malloc(signals * sizeof *r.cpu_index);
    r.cpu_chi2 = malloc(signals * sizeof *r.cpu_chi2);
    r.dev_hist = calloc(ST_BASIS, sizeof *r.dev_hist);
    r.host_hist = calloc(ST_BASIS, sizeof *r.host_hist);
    r.values = malloc(nvalues * sizeof *r.values);
    if (!r.basis || !r.signals || !r.dev_chi2 || !r.dev_index || !r.cpu_index || !r.cpu_chi2 || !r.dev_hist ||
        !r.host_hist || !r.values) {
        rc = tusk_error_set(err, TUSK_ENOMEM, "tusk_cl_selftest: out of memory for %zu signals", signals);
        goto done;
    }
    uint64_t rng = seed;
    make_basis(r.basis, &rng);
    make_signals(r.signals, signals, r.basis, &rng);
    for (size_t i = 0; i < nvalues; i++)
        r.values[i] = (uint32_t)(rng_next(&rng) >> 32);

    /* Program and kernels. */
    char options[256];
    rc = build_options(dev, options, sizeof options, err);
    if (rc != TUSK_OK)
        goto done;
    result->int64_atomics_used = dev->int64_atomics;
    tusk_cl_source_t src = {"selftest.cl", tusk_cl_selftest_source, (size_t)tusk_cl_selftest_source_size,
                            kernel_names, N_KERNELS};
    rc = tusk_cl_kernels_new(cl, &src, options, &r.ks, err);
    if (rc != TUSK_OK)
        goto done;

    /* Sizes within the device's limits. */
    size_t grid_wg = work_group_size(cl, r.ks, K_GRID, ST_GRID_WG);
    /* the tree reduction halves the group: a power of two */
    size_t sum_wg = tusk_cl_floor_pow2(work_group_size(cl, r.ks, K_SUM, ST_SUM_WG));
    if (basis_bytes > dev->local_mem || sum_wg * sizeof(cl_ulong) > dev->local_mem) {
        size_t need = basis_bytes > sum_wg * sizeof(cl_ulong) ? basis_bytes : sum_wg * sizeof(cl_ulong);
        rc = tusk_error_set(err, TUSK_ELIMIT,
                            "tusk_cl_selftest: needs %zu bytes of local memory (%d basis signals of %d samples), "
                            "%s has %llu",
                            need, ST_BASIS, ST_LEN, tusk_cl_describe(cl), (unsigned long long)dev->local_mem);
        goto done;
    }
    size_t sum_groups = (nvalues + sum_wg - 1) / sum_wg;
    if (sum_groups > ST_SUM_MAX_GROUPS)
        sum_groups = ST_SUM_MAX_GROUPS;
    const size_t grid_global = round_up(signals, grid_wg);
    const size_t sum_global = sum_groups * sum_wg;
    r.partials = calloc(sum_groups, sizeof *r.partials);
    if (!r.partials) {
        rc = tusk_error_set(err, TUSK_ENOMEM, "tusk_cl_selftest: out of memory");
        goto done;
    }

    /* Buffers. */
    const size_t values_bytes = nvalues * sizeof(uint32_t);
    if ((rc = tusk_cl_buffer_new(cl, "selftest signals", CL_MEM_READ_ONLY, signal_bytes, NULL, &r.m_signals,
                                 err)) != TUSK_OK ||
        (rc = tusk_cl_buffer_new(cl, "selftest basis", CL_MEM_READ_ONLY, basis_bytes, NULL, &r.m_basis, err)) !=
            TUSK_OK ||
        (rc = tusk_cl_buffer_new(cl, "selftest best chi2", CL_MEM_WRITE_ONLY, signals * sizeof(float), NULL,
                                 &r.m_chi2, err)) != TUSK_OK ||
        (rc = tusk_cl_buffer_new(cl, "selftest best index", CL_MEM_WRITE_ONLY, signals * sizeof(cl_uint), NULL,
                                 &r.m_index, err)) != TUSK_OK ||
        (rc = tusk_cl_buffer_new(cl, "selftest histogram", CL_MEM_READ_WRITE, ST_BASIS * sizeof(cl_uint), NULL,
                                 &r.m_hist, err)) != TUSK_OK ||
        (rc = tusk_cl_buffer_new(cl, "selftest checksum values", CL_MEM_READ_ONLY, values_bytes, NULL,
                                 &r.m_values, err)) != TUSK_OK ||
        (rc = tusk_cl_buffer_new(cl, "selftest checksum partials", CL_MEM_WRITE_ONLY, sum_groups * sizeof(cl_ulong),
                                 NULL, &r.m_partials, err)) != TUSK_OK ||
        (rc = tusk_cl_buffer_new(cl, "selftest checksum total", CL_MEM_READ_WRITE, sizeof(cl_ulong), NULL,
                                 &r.m_total, err)) != TUSK_OK)
        goto done;

    /* Inputs; the histogram and the total start at zero (r.dev_hist is
     * still all zero from calloc). */
    cl_ulong total = 0;
    if ((rc = tusk_cl_write(cl, NULL, r.m_signals, CL_TRUE, signal_bytes, r.signals, NULL, "selftest signals",
                            err)) != TUSK_OK ||
        (rc = tusk_cl_write(cl, NULL, r.m_basis, CL_TRUE, basis_bytes, r.basis, NULL, "selftest basis", err)) !=
            TUSK_OK ||
        (rc = tusk_cl_write(cl, NULL, r.m_hist, CL_TRUE, ST_BASIS * sizeof(cl_uint), r.dev_hist, NULL,
                            "selftest histogram", err)) != TUSK_OK ||
        (rc = tusk_cl_write(cl, NULL, r.m_values, CL_TRUE, values_bytes, r.values, NULL, "selftest checksum values",
                            err)) != TUSK_OK ||
        (rc = tusk_cl_write(cl, NULL, r.m_total, CL_TRUE, sizeof total, &total, NULL, "selftest checksum total",
                            err)) != TUSK_OK)
        goto done;

    const cl_uint nsig = (cl_uint)signals, nval = (cl_uint)nvalues;
    const tusk_cl_arg_t grid_args[] = {TUSK_CL_ARG(r.m_signals), TUSK_CL_ARG(r.m_basis), TUSK_CL_ARG(nsig),
                                       TUSK_CL_ARG(r.m_chi2),    TUSK_CL_ARG(r.m_index), TUSK_CL_ARG(r.m_hist),
                                       {basis_bytes, NULL}};
    const tusk_cl_arg_t sum_args[] = {TUSK_CL_ARG(r.m_values), TUSK_CL_ARG(nval), {sum_wg * sizeof(cl_ulong), NULL},
                                      TUSK_CL_ARG(r.m_partials), TUSK_CL_ARG(r.m_total)};
    if ((rc = tusk_cl_kernels_args(r.ks, K_GRID, grid_args, 7, err)) != TUSK_OK ||
        (rc = tusk_cl_kernels_args(r.ks, K_SUM, sum_args, 5, err)) != TUSK_OK)
        goto done;

    /* Run both kernels; tusk_cl_run waits for each and adds its time. */
    tusk_cl_timing_t timing;
    tusk_cl_timing_reset(&timing);
    if ((rc = tusk_cl_run(cl, tusk_cl_kernels_get(r.ks, K_GRID), 1, &grid_global, &grid_wg, &timing, err)) != TUSK_OK ||
        (rc = tusk_cl_run(cl, tusk_cl_kernels_get(r.ks, K_SUM), 1, &sum_global, &sum_wg, &timing, err)) != TUSK_OK)
        goto done;
    result->device_ms = (double)timing.total_ns * 1e-6;

    if ((rc = tusk_cl_read(cl, NULL, r.m_chi2, CL_TRUE, signals * sizeof(float), r.dev_chi2, NULL,
                           "selftest best chi2", err)) != TUSK_OK ||
        (rc = tusk_cl_read(cl, NULL, r.m_index, CL_TRUE, signals * sizeof(cl_uint), r.dev_index, NULL,
                           "selftest best index", err)) != TUSK_OK ||
        (rc = tusk_cl_read(cl, NULL, r.m_hist, CL_TRUE, ST_BASIS * sizeof(cl_uint), r.dev_hist, NULL,
                           "selftest histogram", err)) != TUSK_OK)
        goto done;
    if (result->int64_atomics_used)
        rc = tusk_cl_read(cl, NULL, r.m_total, CL_TRUE, sizeof total, &total, NULL, "selftest checksum total", err);
    else
        rc = tusk_cl_read(cl, NULL, r.m_partials, CL_TRUE, sum_groups * sizeof(cl_ulong), r.partials, NULL,
                          "selftest checksum partials", err);
    if (rc != TUSK_OK)
        goto done;
    rc = tusk_cl_check(clFinish(tusk_cl_queue(cl)), err, "clFinish on %s", tusk_cl_describe(cl));
    if (rc != TUSK_OK)
        goto done;
    uint64_t dev_sum = total;
    if (!result->int64_atomics_used) {
        dev_sum = 0;
        for (size_t g = 0; g < sum_groups; g++)
            dev_sum += r.partials[g];
    }

    /* The same work on the CPU, timed alike (no host histogram: it is
     * counted below from the device's answers). */
    double t0 = tusk_clock_s();
    cpu_grid_search(r.signals, signals, r.basis, r.cpu_chi2, r.cpu_index);
    uint64_t cpu_sum = cpu_checksum(r.values, nvalues);
    result->cpu_ms = 1e3 * (tusk_clock_s() - t0);

    /* Compare. Near-ties may flip between float and double, so the device's
     * choice is judged by the CPU chi-square it implies, not by index. */
    for (size_t i = 0; i < signals; i++) {
        uint32_t m = r.dev_index[i];
        if (m >= ST_BASIS) {
            result->argmin_mismatches++;
            result->max_rel_error = INFINITY;
            continue;
        }
        r.host_hist[m]++;
        const float *s = r.signals + i * ST_LEN;
        double at_dev = cpu_chi2(s, r.basis, m);
        double rel = fabs((double)r.dev_chi2[i] - at_dev) / fmax(at_dev, 1e-6);
        if (isnan(rel))
            rel = INFINITY;
        if (rel > result->max_rel_error)
            result->max_rel_error = rel;
        double best = r.cpu_chi2[i];
        if (m != r.cpu_index[i] && !(at_dev - best <= ST_REL_TOL * fmax(best, 1e-6)))
            result->argmin_mismatches++;
    }
    for (size_t m = 0; m < ST_BASIS; m++)
        if (r.host_hist[m] != r.dev_hist[m])
            result->histogram_mismatches++;
    result->checksum_ok = dev_sum == cpu_sum;
    result->passed = result->max_rel_error <= ST_REL_TOL && result->argmin_mismatches == 0 &&
                     result->histogram_mismatches == 0 && result->checksum_ok;
    rc = TUSK_OK;

done:
    st_run_release(cl, &r);
    return rc;
}
