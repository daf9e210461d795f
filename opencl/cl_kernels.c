/* cl_kernels.c - a kernel family's program and its kernels: built from
 * the embedded source, created by name, each with its work-group limit,
 * fitted to what the kernels can run, released in one call; arguments,
 * launches and the bandwidth probe with errors that name the kernel. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cl_private.h"

size_t tusk_cl_floor_pow2(size_t n)
{
    size_t p = 1;
    while (p <= n / 2)
        p *= 2;
    return p;
}

size_t tusk_cl_group_fit(const size_t *limits, size_t n, uint64_t sized, size_t group)
{
    size_t least = group;
    for (size_t i = 0; i < n && i < 64; i++)
        if (((sized >> i) & 1u) && limits[i] < least)
            least = limits[i];
    if (least >= group)
        return group;
    return least ? tusk_cl_floor_pow2(least) : 0;
}

void tusk_cl_kernels_destroy(tusk_cl_kernels_t **ks)
{
    if (!ks || !*ks)
        return;
    tusk_cl_kernels_t *k = *ks;
    for (size_t i = 0; k->kernel && i < k->n; i++)
        if (k->kernel[i])
            clReleaseKernel(k->kernel[i]);
    if (k->program)
        clReleaseProgram(k->program);
    free(k->kernel);
    free(k->limit);
    free(k);
    *ks = NULL;
}

int tusk_cl_kernels_new(tusk_cl_t *cl, const tusk_cl_source_t *src, const char *options, tusk_cl_kernels_t **out,
                        tusk_error_t *err)
{
    *out = NULL;
    tusk_cl_kernels_t *k = calloc(1, sizeof *k);
    if (k) {
        k->kernel = calloc(src->n_kernels ? src->n_kernels : 1, sizeof *k->kernel);
        k->limit = calloc(src->n_kernels ? src->n_kernels : 1, sizeof *k->limit);
    }
    if (!k || !k->kernel || !k->limit) {
        tusk_cl_kernels_destroy(&k);
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    }
    k->cl = cl;
    k->program_name = src->name;
    k->names = src->kernels;
    k->n = src->n_kernels;
    int st = tusk_cl_program_build(cl, src->name, src->text, src->size, options, &k->program, err);
    for (size_t i = 0; i < k->n && st == TUSK_OK; i++) {
        st = tusk_cl_kernel_new(cl, k->program, k->names[i], &k->kernel[i], err);
        if (st == TUSK_OK)
            st = tusk_cl_check(clGetKernelWorkGroupInfo(k->kernel[i], cl->info.device, CL_KERNEL_WORK_GROUP_SIZE,
                                                        sizeof k->limit[i], &k->limit[i], NULL),
                               err, "clGetKernelWorkGroupInfo(%s, CL_KERNEL_WORK_GROUP_SIZE) on %s", k->names[i],
                               cl->describe);
        if (st == TUSK_OK && k->limit[i] < 1)
            st = tusk_error_set(err, TUSK_ELIMIT, "%s on %s: kernel %s cannot run a work-group at all", src->name,
                                cl->describe, k->names[i]);
    }
    if (st != TUSK_OK) {
        tusk_cl_kernels_destroy(&k);
        return st;
    }
    *out = k;
    return TUSK_OK;
}

int tusk_cl_kernels_fit(tusk_cl_t *cl, const tusk_cl_source_t *src, uint64_t sized, tusk_cl_options_fn options,
                        void *ctx, unsigned *group, tusk_cl_kernels_t **out, tusk_error_t *err)
{
    *out = NULL;
    for (;;) {
        char opt[1024] = "";
        tusk_cl_kernels_t *k = NULL;
        int st = options(ctx, *group, opt, sizeof opt, err);
        if (st == TUSK_OK)
            st = tusk_cl_kernels_new(cl, src, opt, &k, err);
        if (st != TUSK_OK)
            return st;
        /* Every limit is at least 1, so the size falls each time round
         * and the loop ends. */
        size_t fit = tusk_cl_group_fit(k->limit, k->n, sized, *group);
        if (fit == *group) {
            *out = k;
            return TUSK_OK;
        }
        tusk_cl_kernels_destroy(&k);
        *group = (unsigned)fit;
    }
}

cl_kernel tusk_cl_kernels_get(const tusk_cl_kernels_t *ks, size_t i)
{
    return ks->kernel[i];
}

const char *tusk_cl_kernels_name(const tusk_cl_kernels_t *ks, size_t i)
{
    return ks->names[i];
}

size_t tusk_cl_kernels_limit(const tusk_cl_kernels_t *ks, size_t i)
{
    return ks->limit[i];
}

size_t tusk_cl_kernels_group(const tusk_cl_kernels_t *ks, size_t i, size_t want)
{
    return want <= ks->limit[i] ? want : tusk_cl_floor_pow2(ks->limit[i]);
}

int tusk_cl_kernels_arg(tusk_cl_kernels_t *ks, size_t i, cl_uint index, size_t size, const void *value,
                        tusk_error_t *err)
{
    return tusk_cl_check(clSetKernelArg(ks->kernel[i], index, size, value), err, "clSetKernelArg(%s, %u) on %s",
                         ks->names[i], (unsigned)index, ks->cl->describe);
}

int tusk_cl_kernels_args(tusk_cl_kernels_t *ks, size_t i, const tusk_cl_arg_t *args, size_t n, tusk_error_t *err)
{
    int st = TUSK_OK;
    for (size_t a = 0; a < n && st == TUSK_OK; a++)
        st = tusk_cl_kernels_arg(ks, i, (cl_uint)a, args[a].size, args[a].value, err);
    return st;
}

int tusk_cl_kernels_buffers(tusk_cl_kernels_t *ks, size_t i, const cl_mem *mems, size_t n, tusk_error_t *err)
{
    int st = TUSK_OK;
    for (size_t a = 0; a < n && st == TUSK_OK; a++)
        st = tusk_cl_kernels_arg(ks, i, (cl_uint)a, sizeof(cl_mem), &mems[a], err);
    return st;
}

int tusk_cl_kernels_launch(tusk_cl_kernels_t *ks, size_t i, cl_command_queue q, size_t groups, size_t local,
                           cl_event *ev, tusk_error_t *err)
{
    size_t global = groups * local;
    return tusk_cl_check(clEnqueueNDRangeKernel(q ? q : ks->cl->queue, ks->kernel[i], 1, NULL, &global, &local, 0,
                                                NULL, ev),
                         err, "clEnqueueNDRangeKernel(%s, %zu groups of %zu) on %s", ks->names[i], groups, local,
                         ks->cl->describe);
}

int tusk_cl_kernels_bandwidth(tusk_cl_kernels_t *ks, size_t i, size_t local, size_t bytes, unsigned repeat,
                              const char *who, double *gb_s, tusk_error_t *err)
{
    tusk_cl_t *cl = ks->cl;
    bytes = bytes / 16 * 16;
    if (bytes > cl->info.max_alloc)
        bytes = (size_t)cl->info.max_alloc / 16 * 16;
    if (bytes < 16 || repeat < 1)
        return tusk_error_set(err, TUSK_EINVAL, "%s bandwidth probe: %zu bytes, %u runs", who, bytes, repeat);
    char what_src[128], what_dst[128];
    snprintf(what_src, sizeof what_src, "%s bandwidth source", who);
    snprintf(what_dst, sizeof what_dst, "%s bandwidth target", who);
    cl_mem src = NULL, dst = NULL;
    cl_uint n = (cl_uint)(bytes / 16 < UINT32_MAX ? bytes / 16 : UINT32_MAX);
    const cl_uint zero = 0;
    double best = 0;
    int st;
    if ((st = tusk_cl_buffer_new(cl, what_src, CL_MEM_READ_ONLY, bytes, NULL, &src, err)) ||
        (st = tusk_cl_buffer_new(cl, what_dst, CL_MEM_WRITE_ONLY, bytes, NULL, &dst, err)) ||
        (st = tusk_cl_check(clEnqueueFillBuffer(cl->queue, src, &zero, sizeof zero, 0, bytes, 0, NULL, NULL), err,
                            "clEnqueueFillBuffer(%s) on %s", what_src, cl->describe)) ||
        (st = tusk_cl_kernels_arg(ks, i, 0, sizeof src, &src, err)) ||
        (st = tusk_cl_kernels_arg(ks, i, 1, sizeof dst, &dst, err)) ||
        (st = tusk_cl_kernels_arg(ks, i, 2, sizeof n, &n, err)))
        goto done;
    size_t groups = (size_t)cl->info.compute_units * 16;
    if (groups < 1)
        groups = 1;
    for (unsigned r = 0; r <= repeat; r++) {
        cl_event ev = NULL;
        if ((st = tusk_cl_kernels_launch(ks, i, NULL, groups, local, &ev, err)) ||
            (st = tusk_cl_check(clWaitForEvents(1, &ev), err, "waiting for %s on %s", ks->names[i], cl->describe))) {
            tusk_cl_events_release(&ev, 1);
            goto done;
        }
        double ms = tusk_cl_event_ms(ev);
        tusk_cl_events_release(&ev, 1);
        if (r > 0 && ms > 0) { /* the first run warms up */
            double g = 2.0 * (double)bytes / (ms * 1e-3) / 1e9;
            if (g > best)
                best = g;
        }
    }
    *gb_s = best;
done:
    tusk_cl_buffer_release(cl, &src);
    tusk_cl_buffer_release(cl, &dst);
    return st;
}
