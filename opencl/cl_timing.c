/* cl_timing.c - kernel launches and their times from profiling events. */
#include <stdio.h>
#include <string.h>

#include "cl_private.h"

void tusk_cl_timing_reset(tusk_cl_timing_t *t)
{
    memset(t, 0, sizeof *t);
}

int tusk_cl_timing_add(tusk_cl_timing_t *t, cl_event ev, tusk_error_t *err)
{
    int st = tusk_cl_check(clWaitForEvents(1, &ev), err, "clWaitForEvents");
    cl_ulong start = 0, end = 0;
    if (!st)
        st = tusk_cl_check(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof start, &start, NULL), err,
                           "clGetEventProfilingInfo(START)");
    if (!st)
        st = tusk_cl_check(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof end, &end, NULL), err,
                           "clGetEventProfilingInfo(END)");
    if (st)
        return st;
    uint64_t ns = end > start ? (uint64_t)(end - start) : 0;
    if (t->count == 0 || ns < t->min_ns)
        t->min_ns = ns;
    if (ns > t->max_ns)
        t->max_ns = ns;
    t->total_ns += ns;
    t->count++;
    return TUSK_OK;
}

double tusk_cl_event_ms(cl_event ev)
{
    cl_ulong a = 0, b = 0;
    if (!ev || clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof a, &a, NULL) != CL_SUCCESS ||
        clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof b, &b, NULL) != CL_SUCCESS)
        return 0.0;
    return b > a ? (double)(b - a) * 1e-6 : 0.0;
}

double tusk_cl_events_ms(const cl_event *ev, size_t n)
{
    double ms = 0;
    for (size_t i = 0; i < n; i++)
        ms += tusk_cl_event_ms(ev[i]);
    return ms;
}

void tusk_cl_events_release(cl_event *ev, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (ev[i]) {
            clReleaseEvent(ev[i]);
            ev[i] = NULL;
        }
}

int tusk_cl_run_end(cl_command_queue q, int status, cl_event *ev, size_t n)
{
    if (status != TUSK_OK && q)
        clFinish(q);
    tusk_cl_events_release(ev, n);
    return status;
}

void tusk_cl_timing_format(const tusk_cl_timing_t *t, char *buf, size_t cap)
{
    if (t->count == 0) {
        snprintf(buf, cap, "0 runs");
        return;
    }
    snprintf(buf, cap, "%llu run%s, mean %.3f ms, min %.3f ms, max %.3f ms, total %.3f ms",
             (unsigned long long)t->count, t->count == 1 ? "" : "s", (double)t->total_ns / (double)t->count / 1e6,
             (double)t->min_ns / 1e6, (double)t->max_ns / 1e6, (double)t->total_ns / 1e6);
}

int tusk_cl_run(tusk_cl_t *cl, cl_kernel kernel, cl_uint dims, const size_t *global, const size_t *local,
                tusk_cl_timing_t *timing, tusk_error_t *err)
{
    cl_event ev = NULL;
    cl_int rc = clEnqueueNDRangeKernel(cl->queue, kernel, dims, NULL, global, local, 0, NULL, timing ? &ev : NULL);
    if (rc != CL_SUCCESS) {
        char name[128] = "?";
        if (clGetKernelInfo(kernel, CL_KERNEL_FUNCTION_NAME, sizeof name, name, NULL) != CL_SUCCESS)
            snprintf(name, sizeof name, "?");
        name[sizeof name - 1] = '\0';
        return tusk_cl_check(rc, err, "clEnqueueNDRangeKernel('%s', global %zu, local %zu, %u dim%s) on %s", name,
                             global[0], local ? local[0] : (size_t)0, dims, dims == 1 ? "" : "s", cl->describe);
    }
    int st = TUSK_OK;
    if (ev) {
        st = tusk_cl_timing_add(timing, ev, err);
        clReleaseEvent(ev);
    }
    return st;
}
