/* grid.c - node -> basis point lookups (see detector/grid.h). */
#include "detector/grid.h"

#include <math.h>
#include <stdlib.h>

#define NO_POINT UINT32_MAX
#define MAX_CELLS ((size_t)1 << 28)

struct det_grid {
    double g;
    long lo[3], n[3];
    uint32_t *map; /* segment << 24 | index, or NO_POINT */
};

long det_grid_node(const det_grid_t *grid, double x)
{
    return lround(x / grid->g - 0.5);
}

double det_grid_step(const det_grid_t *grid)
{
    return grid->g;
}

static size_t cell(const det_grid_t *gr, long i, long j, long k)
{
    return ((size_t)(k - gr->lo[2]) * (size_t)gr->n[1] + (size_t)(j - gr->lo[1])) * (size_t)gr->n[0] +
           (size_t)(i - gr->lo[0]);
}

bool det_grid_at(const det_grid_t *gr, long i, long j, long k, unsigned *segment, uint32_t *index)
{
    if (i < gr->lo[0] || j < gr->lo[1] || k < gr->lo[2] || i >= gr->lo[0] + gr->n[0] ||
        j >= gr->lo[1] + gr->n[1] || k >= gr->lo[2] + gr->n[2])
        return false;
    uint32_t code = gr->map[cell(gr, i, j, k)];
    if (code == NO_POINT)
        return false;
    *segment = code >> 24;
    *index = code & 0xFFFFFFu;
    return true;
}

int det_grid_new(det_grid_t **out, const det_basis_t *basis, tusk_error_t *err)
{
    *out = NULL;
    const det_basis_shape_t *shape = det_basis_shape(basis);
    if (!(shape->grid_mm > 0.0))
        return tusk_error_set(err, TUSK_EINVAL, "the basis has no grid step");
    if (shape->segments > 255)
        return tusk_error_set(err, TUSK_EINVAL, "the basis has %u segments (at most 255)", shape->segments);
    det_grid_t *gr = calloc(1, sizeof *gr);
    if (!gr)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    gr->g = shape->grid_mm;
    long hi[3] = {0, 0, 0};
    bool first = true;
    for (unsigned s = 0; s < shape->segments; s++)
        for (size_t i = 0; i < det_basis_segment_points(basis, s); i++) {
            float pos[3];
            det_basis_position(basis, s, i, pos);
            for (int a = 0; a < 3; a++) {
                long v = det_grid_node(gr, pos[a]);
                if (first || v < gr->lo[a])
                    gr->lo[a] = v;
                if (first || v > hi[a])
                    hi[a] = v;
            }
            first = false;
        }
    int st = TUSK_OK;
    size_t cells = 0;
    if (first) {
        st = tusk_error_set(err, TUSK_EINVAL, "the basis has no points");
    } else {
        for (int a = 0; a < 3; a++)
            gr->n[a] = hi[a] - gr->lo[a] + 1;
        cells = (size_t)gr->n[0] * (size_t)gr->n[1] * (size_t)gr->n[2];
        if (cells > MAX_CELLS)
            st = tusk_error_set(err, TUSK_EINVAL, "the basis grid (%ld x %ld x %ld nodes) is too large", gr->n[0],
                                gr->n[1], gr->n[2]);
        else if (!(gr->map = malloc(cells * sizeof *gr->map)))
            st = tusk_error_set(err, TUSK_ENOMEM, "out of memory (basis grid map)");
    }
    for (size_t c = 0; st == TUSK_OK && c < cells; c++)
        gr->map[c] = NO_POINT;
    for (unsigned s = 0; st == TUSK_OK && s < shape->segments; s++)
        for (size_t i = 0; st == TUSK_OK && i < det_basis_segment_points(basis, s); i++) {
            float pos[3];
            det_basis_position(basis, s, i, pos);
            long n[3];
            for (int a = 0; a < 3; a++) {
                n[a] = det_grid_node(gr, pos[a]);
                if (fabs(((double)n[a] + 0.5) * gr->g - pos[a]) > 1e-3 * gr->g)
                    st = tusk_error_set(err, TUSK_EINVAL, "basis point %zu of segment %u at (%.3f, %.3f, %.3f) mm "
                                        "is not on the %g mm grid", i, s, pos[0], pos[1], pos[2], gr->g);
            }
            size_t c = st == TUSK_OK ? cell(gr, n[0], n[1], n[2]) : 0;
            if (st == TUSK_OK && gr->map[c] != NO_POINT)
                st = tusk_error_set(err, TUSK_EINVAL, "the basis has two points at (%.2f, %.2f, %.2f) mm", pos[0],
                                    pos[1], pos[2]);
            if (st == TUSK_OK)
                gr->map[c] = (uint32_t)s << 24 | (uint32_t)i;
        }
    if (st != TUSK_OK) {
        det_grid_destroy(&gr);
        return st;
    }
    *out = gr;
    return TUSK_OK;
}

void det_grid_destroy(det_grid_t **grid)
{
    if (!grid || !*grid)
        return;
    free((*grid)->map);
    free(*grid);
    *grid = NULL;
}
