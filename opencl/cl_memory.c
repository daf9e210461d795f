/* cl_memory.c - device buffers checked against device limits before the
 * driver sees them, and pinned host buffers for streaming. */
#include <stdio.h>
#include <stdlib.h>

#include "cl_private.h"

/* "1.50 GiB" */
static const char *human(uint64_t bytes, char *buf, size_t cap)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)bytes;
    int u = 0;
    while (v >= 1024.0 && u < 4) {
        v /= 1024.0;
        u++;
    }
    if (u == 0)
        snprintf(buf, cap, "%llu B", (unsigned long long)bytes);
    else
        snprintf(buf, cap, "%.2f %s", v, units[u]);
    return buf;
}

int tusk_cl_buffer_new(tusk_cl_t *cl, const char *what, cl_mem_flags flags, size_t size, void *host_ptr,
                       cl_mem *out, tusk_error_t *err)
{
    char a[32], b[32], c[32];
    *out = NULL;
    if (size == 0)
        return tusk_error_set(err, TUSK_EINVAL, "buffer '%s': size 0", what);
    if ((uint64_t)size > cl->info.max_alloc)
        return tusk_error_set(err, TUSK_ELIMIT,
                              "buffer '%s' of %s exceeds the largest allocation of %s, %s "
                              "(CL_DEVICE_MAX_MEM_ALLOC_SIZE)",
                              what, human(size, a, sizeof a), cl->info.name, human(cl->info.max_alloc, b, sizeof b));
    if ((uint64_t)size > cl->info.global_mem || (uint64_t)cl->allocated > cl->info.global_mem - size)
        return tusk_error_set(err, TUSK_ELIMIT,
                              "buffer '%s' of %s does not fit: %s already allocated of the %s global memory of %s",
                              what, human(size, a, sizeof a), human(cl->allocated, b, sizeof b),
                              human(cl->info.global_mem, c, sizeof c), cl->info.name);
    cl_int rc;
    cl_mem m = clCreateBuffer(cl->context, flags, size, host_ptr, &rc);
    if (rc != CL_SUCCESS)
        return tusk_cl_check(rc, err, "clCreateBuffer('%s', %s) on %s", what, human(size, a, sizeof a),
                             cl->describe);
    cl->allocated += size;
    *out = m;
    return TUSK_OK;
}

void tusk_cl_buffer_release(tusk_cl_t *cl, cl_mem *mem)
{
    if (!mem || !*mem)
        return;
    size_t size = 0;
    if (clGetMemObjectInfo(*mem, CL_MEM_SIZE, sizeof size, &size, NULL) == CL_SUCCESS && size <= cl->allocated)
        cl->allocated -= size;
    clReleaseMemObject(*mem);
    *mem = NULL;
}

/* What a buffer grows to: room for `bytes` and a quarter more, so that
 * slowly growing batches do not reallocate every time. */
static size_t room_for(size_t bytes)
{
    return bytes + bytes / 4 + 4096;
}

int tusk_cl_buffer_room(tusk_cl_t *cl, const char *what, cl_mem_flags flags, size_t bytes, tusk_cl_room_t *room,
                        tusk_error_t *err)
{
    if (room->mem && bytes <= room->cap)
        return TUSK_OK;
    tusk_cl_buffer_release(cl, &room->mem);
    room->cap = 0;
    int st = tusk_cl_buffer_new(cl, what, flags, room_for(bytes), NULL, &room->mem, err);
    if (st == TUSK_OK)
        room->cap = room_for(bytes);
    return st;
}

int tusk_cl_write(tusk_cl_t *cl, cl_command_queue q, cl_mem mem, cl_bool blocking, size_t bytes, const void *src,
                  cl_event *ev, const char *what, tusk_error_t *err)
{
    return tusk_cl_check(clEnqueueWriteBuffer(q ? q : cl->queue, mem, blocking, 0, bytes, src, 0, NULL, ev), err,
                         "clEnqueueWriteBuffer(%s, %zu bytes) on %s", what, bytes, cl->describe);
}

int tusk_cl_read(tusk_cl_t *cl, cl_command_queue q, cl_mem mem, cl_bool blocking, size_t bytes, void *dst,
                 cl_event *ev, const char *what, tusk_error_t *err)
{
    return tusk_cl_check(clEnqueueReadBuffer(q ? q : cl->queue, mem, blocking, 0, bytes, dst, 0, NULL, ev), err,
                         "clEnqueueReadBuffer(%s, %zu bytes) on %s", what, bytes, cl->describe);
}

int tusk_cl_zero(tusk_cl_t *cl, cl_command_queue q, cl_mem mem, size_t bytes, const char *what, tusk_error_t *err)
{
    const cl_uint zero = 0;
    return tusk_cl_check(clEnqueueFillBuffer(q ? q : cl->queue, mem, &zero, sizeof zero, 0, bytes, 0, NULL, NULL),
                         err, "clEnqueueFillBuffer(%s, %zu bytes) on %s", what, bytes, cl->describe);
}

size_t tusk_cl_allocated(const tusk_cl_t *cl)
{
    return cl->allocated;
}

struct tusk_cl_pinned {
    tusk_cl_t *cl;
    cl_mem mem;
    void *ptr;
    size_t size;
};

int tusk_cl_pinned_new(tusk_cl_t *cl, const char *what, size_t size, tusk_cl_pinned_t **out, tusk_error_t *err)
{
    *out = NULL;
    tusk_cl_pinned_t *p = calloc(1, sizeof *p);
    if (!p)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    p->cl = cl;
    p->size = size;
    int st = tusk_cl_buffer_new(cl, what, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, size, NULL, &p->mem, err);
    if (!st) {
        /* Mapped once for the buffer's life: the pointer is the DMA-able
         * host copy that reads and writes of device buffers go through. */
        cl_int rc;
        p->ptr = clEnqueueMapBuffer(cl->queue, p->mem, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, size, 0, NULL, NULL,
                                    &rc);
        st = tusk_cl_check(rc, err, "clEnqueueMapBuffer('%s') on %s", what, cl->describe);
    }
    if (st) {
        p->ptr = NULL;
        tusk_cl_pinned_destroy(&p);
        return st;
    }
    *out = p;
    return TUSK_OK;
}

void tusk_cl_pinned_destroy(tusk_cl_pinned_t **pinned)
{
    if (!pinned || !*pinned)
        return;
    tusk_cl_pinned_t *p = *pinned;
    if (p->ptr) {
        cl_event ev = NULL;
        if (clEnqueueUnmapMemObject(p->cl->queue, p->mem, p->ptr, 0, NULL, &ev) == CL_SUCCESS && ev) {
            clWaitForEvents(1, &ev);
            clReleaseEvent(ev);
        }
    }
    tusk_cl_buffer_release(p->cl, &p->mem);
    free(p);
    *pinned = NULL;
}

void *tusk_cl_pinned_ptr(const tusk_cl_pinned_t *pinned)
{
    return pinned->ptr;
}

cl_mem tusk_cl_pinned_mem(const tusk_cl_pinned_t *pinned)
{
    return pinned->mem;
}

size_t tusk_cl_pinned_size(const tusk_cl_pinned_t *pinned)
{
    return pinned->size;
}

int tusk_cl_pinned_room(tusk_cl_t *cl, const char *what, size_t bytes, tusk_cl_pinned_t **pinned, tusk_error_t *err)
{
    if (*pinned && (*pinned)->size >= bytes)
        return TUSK_OK;
    tusk_cl_pinned_destroy(pinned);
    return tusk_cl_pinned_new(cl, what, room_for(bytes), pinned, err);
}

void tusk_cl_release_all(tusk_cl_t *cl, tusk_cl_room_t *rooms, size_t n_rooms, tusk_cl_pinned_t **pinned,
                         size_t n_pinned)
{
    if (!cl)
        return;
    clFinish(cl->queue);
    for (size_t i = 0; i < n_rooms; i++) {
        tusk_cl_buffer_release(cl, &rooms[i].mem);
        rooms[i].cap = 0;
    }
    for (size_t i = 0; i < n_pinned; i++)
        tusk_cl_pinned_destroy(&pinned[i]);
}
