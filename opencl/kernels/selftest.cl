/* selftest.cl - the kernels of tusk_cl_selftest (opencl/selftest.c): a PSA
 * grid search in miniature and a 64-bit checksum.
 *
 * Prepended when embedded: opencl/gpu_common.h and
 * opencl/selftest_shared.h (ST_LEN samples per signal, ST_BASIS basis
 * signals, the chi-square's term st_chi2_term).
 *
 * OpenCL C 1.2 only (PoCL and NVIDIA): no generic address space, no
 * work-group functions, no sub-groups. 64-bit atomics are used only when
 * the host saw cl_khr_int64_base_atomics and passed -DST_INT64_ATOMICS.
 *
 * Build options:
 *   -DST_INT64_ATOMICS  st_checksum adds into one total with atom_add
 */

#ifdef ST_INT64_ATOMICS
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#endif

/* One work-item per signal: the chi-square against every basis signal, the
 * smallest one (the first on ties, as the host reference), and a histogram
 * of the chosen basis signals. `lbasis` holds ST_BASIS * ST_LEN floats. */
__kernel void st_grid_search(__global const float *signals, __global const float *basis, uint nsignals,
                             __global float *best_chi2, __global uint *best_index,
                             __global volatile uint *histogram, __local float *lbasis)
{
    const size_t gid = get_global_id(0);
    const size_t lid = get_local_id(0);
    const size_t lsize = get_local_size(0);

    /* Every work-item of the group helps with the copy and reaches the
     * barrier, including those past the last signal (the global size is
     * rounded up): returning early here would be undefined behaviour. */
    for (size_t i = lid; i < (size_t)ST_BASIS * ST_LEN; i += lsize)
        lbasis[i] = basis[i];
    barrier(CLK_LOCAL_MEM_FENCE);

    if (gid < nsignals) {
        float s[ST_LEN];
        __global const float *src = signals + gid * ST_LEN;
        for (int j = 0; j < ST_LEN; j++)
            s[j] = src[j];

        float best = INFINITY;
        uint index = 0;
        for (uint m = 0; m < ST_BASIS; m++) {
            __local const float *b = lbasis + m * ST_LEN;
            float chi2 = 0.0f;
            for (int j = 0; j < ST_LEN; j++)
                chi2 += st_chi2_term(s[j], b[j]);
            if (chi2 < best) { /* strict: the first minimum wins */
                best = chi2;
                index = m;
            }
        }
        best_chi2[gid] = best;
        best_index[gid] = index;
        atomic_inc(&histogram[index]);
    }
}

/* The 64-bit sum of `n` values. Each work-item adds a grid-strided share,
 * the group reduces in local memory (the work-group size must be a power
 * of two; `scratch` holds one ulong per work-item), and work-item 0 adds
 * the group's sum to *total (int64 atomics) or stores it in
 * partials[group] for the host to add. */
__kernel void st_checksum(__global const uint *values, uint n, __local ulong *scratch, __global ulong *partials,
                          __global volatile ulong *total)
{
    const size_t lid = get_local_id(0);
    const size_t lsize = get_local_size(0);
    const size_t stride = get_global_size(0);

    ulong sum = 0;
    for (size_t i = get_global_id(0); i < n; i += stride)
        sum += values[i];
    scratch[lid] = sum;
    barrier(CLK_LOCAL_MEM_FENCE);

    for (size_t step = lsize / 2; step > 0; step /= 2) { /* not "half": a type in OpenCL C */
        if (lid < step)
            scratch[lid] += scratch[lid + step];
        barrier(CLK_LOCAL_MEM_FENCE);
    }

    if (lid == 0) {
#ifdef ST_INT64_ATOMICS
        (void)partials;
        atom_add(total, scratch[0]);
#else
        (void)total;
        partials[get_group_id(0)] = scratch[0];
#endif
    }
}
