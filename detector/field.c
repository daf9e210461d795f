/* field.c - the electric potential (Poisson) and the weighting potentials
 * (Laplace) of a segmented HPGe crystal on a Cartesian grid, by red-black
 * successive over-relaxation on a coarse-to-fine sequence of grids.
 *
 * The discretisation, per inside node and axis, with the neighbours at
 * distances a (minus side) and b (plus side):
 *   inside neighbour:   distance h, its value;
 *   contact neighbour:  distance d <= h to where the grid line leaves the
 *                       crystal (bisection on det_crystal_inside), with the
 *                       value of the electrode there (Shortley-Weller): the
 *                       contacts sit on the surface, not one node beyond
 *                       it, and a contact's edge falls between the
 *                       crossings where it is, not at the nearest node;
 *   outside neighbour:  passivated surface, zero normal field: left out.
 * Each side contributes c = 2 / ((a + b) * d_side) (a side left out counts
 * as h in a + b, with c = 0), and the update solves
 *   sum_n c_n (u_n - u_0) = -rho / eps,
 * the contacts' fixed terms folded into the source. With all six
 * neighbours inside this is the usual seven-point stencil,
 * u_0 = (sum u_n + h^2 rho/eps) / 6, done in a tight loop over runs of such
 * nodes; the others ("irregular": next to a surface) keep their
 * coefficients in a list. Within one colour no node is a neighbour of
 * another, so the runs and the list can be swept in any order; a sweep
 * goes plane by plane, colour 1 of plane k - 1 after colour 0 of plane k,
 * which is the same arithmetic as two half-sweeps with a cache-sized
 * working set.
 *
 * After solving: outside nodes next to the crystal take the mean of their
 * inside neighbours (three layers, so every cell touching the crystal has
 * eight values); contact nodes keep their contact value as node value,
 * but interpolation sees the values at the surface crossings (for the
 * electric potential extrapolated through them; contact_ghosts). The
 * electric potential's gradient is computed per node (three floats) with
 * the same surface distances; a weighting potential keeps one float per
 * node, interpolates within [0, 1], and its gradient is computed from the
 * values when asked.
 *
 * Solving is done in double; the field keeps floats. No global state: the
 * solves of different fields may run in parallel threads. */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "progress.h"
#include "tusk/field.h"
#include "base/clock.h"
#include "base/grow.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* q * 1e16 m^-3 / (16 eps0), in V/mm^2: the space-charge source per unit
 * of impurity (1e10 cm^-3). */
#define DET_ELEMENTARY_CHARGE 1.602176634e-19
#define DET_EPSILON0 8.8541878128e-12
#define DET_EPSILON_R 16.0
#define DET_SOURCE_PER_UNIT (DET_ELEMENTARY_CHARGE * 1e16 / (DET_EPSILON_R * DET_EPSILON0) * 1e-6)

#define DEFAULT_TOLERANCE 1e-7
#define DEFAULT_MAX_SWEEPS 20000u
#define MAX_LEVELS 12u
#define MAX_NODES ((size_t)1 << 30)
/* Boundary crossings closer than this fraction of h count as this far
 * (keeps the coefficients finite for nodes on a contact surface). */
#define MIN_CROSSING 0.01
#define BISECTIONS 16
/* Gradients leave out a contact closer than this fraction of h. */
#define NEAR_CONTACT 0.1
/* Layers of outside nodes given values (and gradients) after solving:
 * three reach the far corner of every cell that touches the crystal. */
#define FILL_LAYERS 3

/* The kind byte: enum det_node in the low two bits; for outside nodes, the
 * layer (1..FILL_LAYERS) in which they received a value, 0 for none; for
 * contact nodes, whether their contact is at the high value. */
#define KIND_MASK 0x03u
#define FILL_SHIFT 2
#define FILL_BITS 0x0cu
/* Contact nodes: at the high value (1, or the bias) rather than 0. */
#define CONTACT_HIGH 0x10u

struct det_field {
    size_t nx, ny, nz;
    double h;
    double origin[3];
    float *value;   /* nx * ny * nz, x fastest */
    uint8_t *kind;  /* see KIND_MASK */
    float *grad;    /* 3 per node (the electric potential), NULL for weighting potentials */
    bool potential;
    double bias;
    double high; /* the value of CONTACT_HIGH contacts: 1, or the bias */
    unsigned sweeps;
    double max_change;
};

/* ---- one grid level ----------------------------------------------------------- */

/* A run of regular nodes along x: node index first .. first + len - 1, in
 * plane k; parity = (i + j + k) & 1 of the first node. */
typedef struct span {
    uint32_t first, len, k, parity;
} span_t;

/* An inside node next to a surface. Sides: -x +x -y +y -z +z. */
typedef struct irregular {
    uint32_t idx;
    uint32_t color;
    double c[6];  /* coefficients of the neighbour nodes, divided by the sum of all */
    double src;   /* rho/eps and the contacts' terms, divided by the same */
    float d[6];   /* distance to the neighbour or the contact (mm); 0: passivated side */
    float v[6];   /* a contact side's value */
    uint8_t wall; /* bit s: side s is a contact, at distance d[s] with value v[s] */
} irregular_t;

typedef struct level {
    size_t nx, ny, nz, nxy, n;
    double h;
    double origin[3];
    uint8_t *kind;
    double *u;
    double *src_k; /* per plane k: h^2 rho/eps / 6 for regular nodes */
    span_t *spans;
    size_t nspans, cap_spans;
    irregular_t *irr; /* colour 0 then colour 1, each by plane */
    size_t nirr, cap_irr;
    size_t *span_at; /* spans of plane k: span_at[k] .. span_at[k + 1] - 1 */
    size_t *irr_at;  /* colour c, plane k: irr_at[c * (nz + 1) + k] .. [.. + k + 1] - 1 */
} level_t;

typedef struct problem {
    const det_crystal_t *crystal;
    bool potential;
    unsigned electrode; /* weighting: the electrode at 1 */
    unsigned core;
    double bias;
    double source; /* rho/eps per unit impurity (V/mm^2); 0 for Laplace */
} problem_t;

static void level_free(level_t *L)
{
    free(L->kind);
    free(L->u);
    free(L->src_k);
    free(L->spans);
    free(L->irr);
    free(L->span_at);
    free(L->irr_at);
    memset(L, 0, sizeof *L);
}

static double contact_value(const problem_t *p, int electrode)
{
    if (p->potential)
        return (unsigned)electrode == p->core ? p->bias : 0.0;
    return (unsigned)electrode == p->electrode ? 1.0 : 0.0;
}

/* The grid: x and y centred on the axis, z from -h; at least one node
 * beyond the crystal on every side. */
static int grid_size(const det_config_t *cfg, double h, size_t n[3], double origin[3])
{
    double across = ceil(2.0 * cfg->radius / h - 1e-9) + 3.0;
    double along = ceil(cfg->length / h - 1e-9) + 3.0;
    if (!(across * across * along <= (double)MAX_NODES))
        return -1;
    n[0] = n[1] = (size_t)across;
    n[2] = (size_t)along;
    origin[0] = origin[1] = -0.5 * (double)(n[0] - 1) * h;
    origin[2] = -h;
    return 0;
}

static int push_span(level_t *L, const span_t *s)
{
    if (L->nspans == L->cap_spans && tusk_grow(&L->spans, &L->cap_spans, L->nspans + 1, sizeof *L->spans) != 0)
        return -1;
    L->spans[L->nspans++] = *s;
    return 0;
}

static int push_irregular(level_t *L, const irregular_t *r)
{
    if (L->nirr == L->cap_irr && tusk_grow(&L->irr, &L->cap_irr, L->nirr + 1, sizeof *L->irr) != 0)
        return -1;
    L->irr[L->nirr++] = *r;
    return 0;
}

/* Distance from an inside point along axis `axis` (direction sign) to the
 * crystal's surface, at most h, and the electrode just beyond it (-1:
 * passivated). */
static double crossing(const det_crystal_t *c, const double pos[3], int axis, double sign, double h, int *electrode)
{
    double lo = 0.0, hi = h;
    for (int it = 0; it < BISECTIONS; it++) {
        double mid = 0.5 * (lo + hi), q[3] = {pos[0], pos[1], pos[2]};
        q[axis] += sign * mid;
        if (det_crystal_inside(c, q[0], q[1], q[2]))
            lo = mid;
        else
            hi = mid;
    }
    double q[3] = {pos[0], pos[1], pos[2]};
    q[axis] += sign * hi;
    *electrode = det_crystal_contact_of(c, q[0], q[1], q[2]);
    double d = 0.5 * (lo + hi);
    return d < MIN_CROSSING * h ? MIN_CROSSING * h : d;
}

/* Classify the nodes, set the contacts, and build the runs of regular
 * nodes and the list of irregular ones. */
static int level_build(level_t *L, const problem_t *p, double h)
{
    const det_config_t *cfg = det_crystal_config(p->crystal);
    size_t n3[3];
    memset(L, 0, sizeof *L);
    if (grid_size(cfg, h, n3, L->origin))
        return TUSK_ELIMIT;
    L->nx = n3[0];
    L->ny = n3[1];
    L->nz = n3[2];
    L->nxy = L->nx * L->ny;
    L->n = L->nxy * L->nz;
    L->h = h;
    L->kind = malloc(L->n);
    L->u = calloc(L->n, sizeof *L->u);
    L->src_k = calloc(L->nz, sizeof *L->src_k);
    if (!L->kind || !L->u || !L->src_k)
        return TUSK_ENOMEM;

    const size_t nx = L->nx, ny = L->ny, nz = L->nz;
    for (size_t k = 0; k < nz; k++) {
        double z = L->origin[2] + (double)k * h;
        for (size_t j = 0; j < ny; j++) {
            double y = L->origin[1] + (double)j * h;
            for (size_t i = 0; i < nx; i++) {
                double x = L->origin[0] + (double)i * h;
                size_t idx = i + nx * (j + ny * k);
                bool edge = i == 0 || j == 0 || k == 0 || i == nx - 1 || j == ny - 1 || k == nz - 1;
                if (!edge && det_crystal_inside(p->crystal, x, y, z)) {
                    L->kind[idx] = DET_NODE_INSIDE;
                    continue;
                }
                int e = det_crystal_contact_of(p->crystal, x, y, z);
                if (e >= 0) {
                    L->u[idx] = contact_value(p, e);
                    L->kind[idx] = (uint8_t)(DET_NODE_CONTACT | (L->u[idx] != 0.0 ? CONTACT_HIGH : 0u));
                } else {
                    L->kind[idx] = DET_NODE_OUTSIDE;
                }
            }
        }
    }

    const ptrdiff_t off[6] = {-1, 1, -(ptrdiff_t)nx, (ptrdiff_t)nx, -(ptrdiff_t)L->nxy, (ptrdiff_t)L->nxy};
    for (size_t k = 1; k + 1 < nz; k++) {
        double z = L->origin[2] + (double)k * h;
        double f = p->source * det_crystal_impurity(p->crystal, z);
        L->src_k[k] = f * h * h / 6.0;
        for (size_t j = 1; j + 1 < ny; j++) {
            span_t run = {0, 0, (uint32_t)k, 0};
            for (size_t i = 1; i + 1 < nx; i++) {
                size_t idx = i + nx * (j + ny * k);
                bool regular = false;
                if (L->kind[idx] == DET_NODE_INSIDE) {
                    regular = true;
                    for (int s = 0; s < 6; s++)
                        if (L->kind[(size_t)((ptrdiff_t)idx + off[s])] != DET_NODE_INSIDE)
                            regular = false;
                }
                if (regular) {
                    if (run.len == 0) {
                        run.first = (uint32_t)idx;
                        run.parity = (uint32_t)((i + j + k) & 1);
                    }
                    run.len++;
                    continue;
                }
                if (run.len) {
                    if (push_span(L, &run))
                        return TUSK_ENOMEM;
                    run.len = 0;
                }
                if (L->kind[idx] != DET_NODE_INSIDE)
                    continue;
                /* Next to a surface: Shortley-Weller coefficients. */
                double pos[3] = {L->origin[0] + (double)i * h, L->origin[1] + (double)j * h, z};
                irregular_t r;
                memset(&r, 0, sizeof r);
                r.idx = (uint32_t)idx;
                r.color = (uint32_t)((i + j + k) & 1);
                double sum = 0, walls = 0;
                for (int axis = 0; axis < 3; axis++) {
                    double dist[2] = {h, h};
                    bool open[2] = {false, false}, wall[2] = {false, false};
                    for (int side = 0; side < 2; side++) {
                        int s = 2 * axis + side;
                        uint8_t kn = L->kind[(size_t)((ptrdiff_t)idx + off[s])] & KIND_MASK;
                        if (kn == DET_NODE_INSIDE) {
                            open[side] = true;
                        } else if (kn == DET_NODE_CONTACT) {
                            /* The electrode where the grid line leaves the
                             * crystal, not the one nearest the node: so
                             * contact edges fall between nodes where they are. */
                            int e;
                            double d = crossing(p->crystal, pos, axis, side ? 1.0 : -1.0, h, &e);
                            if (e >= 0) {
                                open[side] = wall[side] = true;
                                dist[side] = d;
                                r.v[s] = (float)contact_value(p, e);
                            }
                        }
                    }
                    for (int side = 0; side < 2; side++) {
                        int s = 2 * axis + side;
                        if (!open[side])
                            continue;
                        double cs = 2.0 / ((dist[0] + dist[1]) * dist[side]);
                        r.d[s] = (float)dist[side];
                        sum += cs;
                        if (wall[side]) {
                            r.wall |= (uint8_t)(1u << s);
                            walls += cs * r.v[s]; /* fixed: folded into the source */
                        } else {
                            r.c[s] = cs;
                        }
                    }
                }
                if (sum <= 0)
                    continue; /* no neighbour at all: keeps its start value */
                for (int s = 0; s < 6; s++)
                    r.c[s] /= sum;
                r.src = (f + walls) / sum;
                if (push_irregular(L, &r))
                    return TUSK_ENOMEM;
            }
            if (run.len && push_span(L, &run))
                return TUSK_ENOMEM;
        }
    }

    /* Index the runs by plane, and the irregular nodes by colour, then
     * plane (a stable partition keeps them in plane order). */
    L->span_at = calloc(nz + 1, sizeof *L->span_at);
    L->irr_at = calloc(2 * (nz + 1), sizeof *L->irr_at);
    irregular_t *sorted = L->nirr ? malloc(L->nirr * sizeof *sorted) : NULL;
    if (!L->span_at || !L->irr_at || (L->nirr && !sorted)) {
        free(sorted);
        return TUSK_ENOMEM;
    }
    for (size_t s = 0, k = 0; k <= nz; k++) {
        while (s < L->nspans && L->spans[s].k < k)
            s++;
        L->span_at[k] = s;
    }
    size_t m = 0;
    for (uint32_t color = 0; color < 2; color++) {
        size_t *at = L->irr_at + color * (nz + 1);
        size_t k = 0;
        for (size_t b = 0; b < L->nirr; b++) {
            if (L->irr[b].color != color)
                continue;
            size_t kb = L->irr[b].idx / L->nxy;
            while (k <= kb)
                at[k++] = m;
            sorted[m++] = L->irr[b];
        }
        while (k <= nz)
            at[k++] = m;
    }
    free(L->irr);
    L->irr = sorted;
    L->cap_irr = L->nirr;
    return TUSK_OK;
}

/* One colour's update of plane k; returns the largest |target - value|. */
static double relax_plane(level_t *L, unsigned color, size_t k, double w)
{
    double *restrict u = L->u;
    const ptrdiff_t sx = (ptrdiff_t)L->nx, sz = (ptrdiff_t)L->nxy;
    const double src = L->src_k[k];
    double worst = 0;
    for (size_t s = L->span_at[k]; s < L->span_at[k + 1]; s++) {
        const span_t *run = &L->spans[s];
        size_t start = run->first + ((run->parity ^ color) & 1u);
        size_t end = (size_t)run->first + run->len;
        for (size_t q = start; q < end; q += 2) {
            const ptrdiff_t p = (ptrdiff_t)q;
            double target = (u[p - 1] + u[p + 1] + u[p - sx] + u[p + sx] + u[p - sz] + u[p + sz]) * (1.0 / 6.0) + src;
            double d = target - u[p];
            u[p] += w * d;
            d = fabs(d);
            worst = d > worst ? d : worst;
        }
    }
    const size_t *at = L->irr_at + color * (L->nz + 1);
    for (size_t r = at[k]; r < at[k + 1]; r++) {
        const irregular_t *g = &L->irr[r];
        const ptrdiff_t p = (ptrdiff_t)g->idx;
        double target = g->c[0] * u[p - 1] + g->c[1] * u[p + 1] + g->c[2] * u[p - sx] + g->c[3] * u[p + sx] +
                        g->c[4] * u[p - sz] + g->c[5] * u[p + sz] + g->src;
        double d = target - u[p];
        u[p] += w * d;
        d = fabs(d);
        worst = d > worst ? d : worst;
    }
    return worst;
}

/* One red-black sweep; returns the largest change. Colour 1 of plane k - 1
 * follows colour 0 of plane k: all its neighbours of colour 0 are then
 * updated, so this is the same arithmetic as two whole half-sweeps, with
 * three planes in cache instead of the whole grid twice. */
static double sweep(level_t *L, double w)
{
    double worst = 0;
    for (size_t k = 1; k < L->nz; k++) {
        if (k + 1 < L->nz) {
            double d = relax_plane(L, 0, k, w);
            worst = d > worst ? d : worst;
        }
        if (k >= 2) {
            double d = relax_plane(L, 1, k - 1, w);
            worst = d > worst ? d : worst;
        }
    }
    return w * worst;
}

/* Give outside nodes next to the crystal values: layer 1 the mean of their
 * inside neighbours, each further layer the mean of the earlier layers'. */
static void fill_outside(uint8_t *kind, double *u, size_t nx, size_t ny, size_t nz)
{
    const size_t nxy = nx * ny;
    for (unsigned layer = 1; layer <= FILL_LAYERS; layer++) {
        for (size_t k = 0; k < nz; k++)
            for (size_t j = 0; j < ny; j++)
                for (size_t i = 0; i < nx; i++) {
                    size_t idx = i + nx * j + nxy * k;
                    if (kind[idx] != DET_NODE_OUTSIDE)
                        continue; /* inside, contact, or filled already */
                    size_t nb[6];
                    int m = 0;
                    if (i > 0)
                        nb[m++] = idx - 1;
                    if (i + 1 < nx)
                        nb[m++] = idx + 1;
                    if (j > 0)
                        nb[m++] = idx - nx;
                    if (j + 1 < ny)
                        nb[m++] = idx + nx;
                    if (k > 0)
                        nb[m++] = idx - nxy;
                    if (k + 1 < nz)
                        nb[m++] = idx + nxy;
                    double sum = 0;
                    int cnt = 0;
                    for (int s = 0; s < m; s++) {
                        uint8_t kn = kind[nb[s]];
                        unsigned filled = ((unsigned)kn & FILL_BITS) >> FILL_SHIFT;
                        if (kn == DET_NODE_INSIDE || (filled && filled < layer)) {
                            sum += u[nb[s]];
                            cnt++;
                        }
                    }
                    if (cnt) {
                        u[idx] = sum / cnt;
                        kind[idx] = (uint8_t)(DET_NODE_OUTSIDE | (layer << FILL_SHIFT));
                    }
                }
    }
}

static bool has_value(uint8_t kind)
{
    return (kind & KIND_MASK) != DET_NODE_OUTSIDE || (kind & FILL_BITS) != 0;
}

/* Start values of a level's inside nodes from the coarser level's
 * solution: trilinear, over the corners that have a value. */
static void prolong(level_t *fine, const level_t *coarse)
{
    const double H = coarse->h;
    for (size_t k = 0; k < fine->nz; k++)
        for (size_t j = 0; j < fine->ny; j++)
            for (size_t i = 0; i < fine->nx; i++) {
                size_t idx = i + fine->nx * (j + fine->ny * k);
                if (fine->kind[idx] != DET_NODE_INSIDE)
                    continue;
                double pos[3] = {fine->origin[0] + (double)i * fine->h, fine->origin[1] + (double)j * fine->h,
                                 fine->origin[2] + (double)k * fine->h};
                size_t n3[3] = {coarse->nx, coarse->ny, coarse->nz}, c0[3];
                double t[3];
                for (int a = 0; a < 3; a++) {
                    double f = (pos[a] - coarse->origin[a]) / H;
                    double top = (double)(n3[a] - 1);
                    f = f < 0 ? 0 : f > top ? top : f;
                    size_t c = (size_t)f;
                    if (c >= n3[a] - 1)
                        c = n3[a] - 2;
                    c0[a] = c;
                    t[a] = f - (double)c;
                }
                double sum = 0, wsum = 0;
                for (int corner = 0; corner < 8; corner++) {
                    int bx = corner & 1, by = (corner >> 1) & 1, bz = (corner >> 2) & 1;
                    size_t ci = (c0[0] + (size_t)bx) +
                                coarse->nx * ((c0[1] + (size_t)by) + coarse->ny * (c0[2] + (size_t)bz));
                    if (!has_value(coarse->kind[ci]))
                        continue;
                    double w = (bx ? t[0] : 1 - t[0]) * (by ? t[1] : 1 - t[1]) * (bz ? t[2] : 1 - t[2]);
                    sum += w * coarse->u[ci];
                    wsum += w;
                }
                fine->u[idx] = wsum > 1e-12 ? sum / wsum : 0.0;
            }
}

/* ---- the gradient ---------------------------------------------------------- */

/* Derivative along one axis from the values at -a (um), 0 (u0) and +b (up);
 * a side with distance 0 is missing. */
static double derivative(double um, double a, double u0, double up, double b)
{
    if (a > 0 && b > 0)
        return (a * a * (up - u0) + b * b * (u0 - um)) / (a * b * (a + b));
    if (a > 0)
        return (u0 - um) / a;
    if (b > 0)
        return (up - u0) / b;
    return 0.0;
}

/* The electric potential's node gradients: inside nodes from their
 * neighbours (at the true surface distances next to a contact), the
 * others from the inside nodes next to them, layer by layer. */
static int compute_gradient(det_field_t *f, const level_t *L)
{
    const size_t nx = L->nx, ny = L->ny, nz = L->nz, nxy = L->nxy;
    const double h = L->h;
    const double *u = L->u;
    float *g = calloc(3 * L->n, sizeof *g);
    uint8_t *layer_of = calloc(L->n, 1);
    if (!g || !layer_of) {
        free(g);
        free(layer_of);
        return TUSK_ENOMEM;
    }
    const ptrdiff_t off[6] = {-1, 1, -(ptrdiff_t)nx, (ptrdiff_t)nx, -(ptrdiff_t)nxy, (ptrdiff_t)nxy};
    /* Regular nodes: central differences. */
    for (size_t s = 0; s < L->nspans; s++)
        for (size_t q = L->spans[s].first; q < (size_t)L->spans[s].first + L->spans[s].len; q++) {
            const ptrdiff_t p = (ptrdiff_t)q;
            for (int a = 0; a < 3; a++)
                g[3 * q + (size_t)a] = (float)((u[p + off[2 * a + 1]] - u[p + off[2 * a]]) / (2 * h));
            layer_of[q] = 1;
        }
    for (size_t r = 0; r < L->nirr; r++) {
        const irregular_t *ir = &L->irr[r];
        const ptrdiff_t p = (ptrdiff_t)ir->idx;
        for (int a = 0; a < 3; a++) {
            double dm = ir->d[2 * a], dp = ir->d[2 * a + 1];
            /* A contact closer than NEAR_CONTACT * h: the node is on the
             * surface and holds about the contact's value; differences
             * over that tiny distance would be noise, so that side is
             * left out and the other side's values are used. */
            bool use_m = dm >= NEAR_CONTACT * h, use_p = dp >= NEAR_CONTACT * h;
            double gd;
            double um = (ir->wall >> (2 * a)) & 1u ? (double)ir->v[2 * a] : u[p + off[2 * a]];
            double up = (ir->wall >> (2 * a + 1)) & 1u ? (double)ir->v[2 * a + 1] : u[p + off[2 * a + 1]];
            if (use_m && use_p)
                gd = derivative(um, dm, u[p], up, dp);
            else if (use_m || use_p) {
                int side = use_p ? 1 : 0;
                ptrdiff_t o1 = off[2 * a + side];
                double sign = side ? 1.0 : -1.0, d1 = side ? dp : dm;
                /* Second order when two inside nodes lie on that side. */
                ptrdiff_t q2 = p + 2 * o1;
                bool two = L->kind[p + o1] == DET_NODE_INSIDE && q2 >= 0 && (size_t)q2 < L->n &&
                           L->kind[q2] == DET_NODE_INSIDE;
                if (two)
                    gd = sign * (-3.0 * u[p] + 4.0 * u[p + o1] - u[q2]) / (2.0 * h);
                else
                    gd = sign * ((side ? up : um) - u[p]) / d1;
            } else if (dm > 0 && dp > 0) {
                gd = (up - um) / (dm + dp);
            } else {
                gd = 0.0;
            }
            g[3 * (size_t)p + (size_t)a] = (float)gd;
        }
        layer_of[p] = 1;
    }
    /* Non-inside nodes: the mean of their neighbours that have one. */
    for (unsigned layer = 2; layer <= FILL_LAYERS + 1; layer++)
        for (size_t k = 0; k < nz; k++)
            for (size_t j = 0; j < ny; j++)
                for (size_t i = 0; i < nx; i++) {
                    size_t idx = i + nx * j + nxy * k;
                    if (layer_of[idx] || (L->kind[idx] & KIND_MASK) == DET_NODE_INSIDE)
                        continue;
                    size_t nb[6];
                    int m = 0;
                    if (i > 0)
                        nb[m++] = idx - 1;
                    if (i + 1 < nx)
                        nb[m++] = idx + 1;
                    if (j > 0)
                        nb[m++] = idx - nx;
                    if (j + 1 < ny)
                        nb[m++] = idx + nx;
                    if (k > 0)
                        nb[m++] = idx - nxy;
                    if (k + 1 < nz)
                        nb[m++] = idx + nxy;
                    double sum[3] = {0, 0, 0};
                    int cnt = 0;
                    for (int s = 0; s < m; s++) {
                        if (!layer_of[nb[s]] || layer_of[nb[s]] >= layer)
                            continue;
                        for (int a = 0; a < 3; a++)
                            sum[a] += g[3 * nb[s] + (size_t)a];
                        cnt++;
                    }
                    if (cnt) {
                        for (int a = 0; a < 3; a++)
                            g[3 * idx + (size_t)a] = (float)(sum[a] / cnt);
                        layer_of[idx] = (uint8_t)layer;
                    }
                }
    free(layer_of);
    f->grad = g;
    return TUSK_OK;
}

/* Contact nodes next to the crystal keep their contact value as node
 * values (det_field_node_value, the CONTACT_HIGH bit), but for
 * interpolation they hold what the solver saw beyond the inside nodes
 * next to them:
 *   electric potential: the linear extrapolation of each inside neighbour
 *     through the contact voltage at its surface crossing, so trilinear
 *     interpolation reaches that voltage at the surface rather than one
 *     node beyond it (a node on the surface holds about the contact
 *     value, u_p - V ~ slope * d, so its estimate stays sane);
 *   weighting potential: the crossings' values themselves. A contact node
 *     beside a contact's edge may be nearest one electrode while the grid
 *     lines to it leave the crystal through another, and interpolation
 *     must follow the solution. No extrapolation: near an edge it would
 *     overshoot [0, 1] by up to ~0.1 inside the crystal, and a weighting
 *     potential must stay within [0, 1] (a mean of values in [0, 1] does)
 *     and add up to 1 (so it does: every crossing is 1 for exactly one
 *     electrode). At the end of a drift the signal takes the contact's 0
 *     or 1 itself.
 * Estimates are weighted by the crossing distance. */
static int contact_ghosts(level_t *L, bool extrapolate)
{
    double *sum = calloc(L->n, sizeof *sum), *wsum = calloc(L->n, sizeof *wsum);
    if (!sum || !wsum) {
        free(sum);
        free(wsum);
        return TUSK_ENOMEM;
    }
    const ptrdiff_t off[6] = {-1, 1, -(ptrdiff_t)L->nx, (ptrdiff_t)L->nx, -(ptrdiff_t)L->nxy, (ptrdiff_t)L->nxy};
    double *u = L->u;
    for (size_t r = 0; r < L->nirr; r++) {
        const irregular_t *ir = &L->irr[r];
        const ptrdiff_t p = (ptrdiff_t)ir->idx;
        for (int s = 0; s < 6; s++) {
            size_t q = (size_t)(p + off[s]);
            if (!((ir->wall >> s) & 1u))
                continue;
            double d = ir->d[s];
            double estimate = extrapolate ? u[p] + ((double)ir->v[s] - u[p]) * L->h / d : (double)ir->v[s];
            sum[q] += d * estimate;
            wsum[q] += d;
        }
    }
    for (size_t q = 0; q < L->n; q++)
        if (wsum[q] > 0)
            u[q] = sum[q] / wsum[q];
    free(sum);
    free(wsum);
    return TUSK_OK;
}

/* ---- solving --------------------------------------------------------------- */

static unsigned auto_levels(double radius, double h)
{
    unsigned levels = 1;
    while (levels < MAX_LEVELS && radius / (h * ldexp(1.0, (int)levels)) >= 8.0)
        levels++;
    return levels;
}


static int solve(det_field_t **out, const problem_t *p, double h, const det_solve_options_t *options,
                 tusk_error_t *err)
{
    const char *what = p->potential ? "electric potential" : "weighting potential";
    det_solve_options_t o;
    memset(&o, 0, sizeof o);
    if (options)
        o = *options;
    if (!(h > 0) || !isfinite(h))
        return tusk_error_set(err, TUSK_EINVAL, "%s: grid step %g mm must be positive", what, h);
    if (!(o.tolerance >= 0) || !isfinite(o.tolerance))
        return tusk_error_set(err, TUSK_EINVAL, "%s: tolerance %g must be >= 0", what, o.tolerance);
    double tolerance = o.tolerance > 0 ? o.tolerance : DEFAULT_TOLERANCE;
    unsigned max_sweeps = o.max_sweeps ? o.max_sweeps : DEFAULT_MAX_SWEEPS;
    const det_config_t *cfg = det_crystal_config(p->crystal);
    size_t n3[3];
    double origin[3];
    if (grid_size(cfg, h, n3, origin))
        return tusk_error_set(err, TUSK_ELIMIT, "%s: a grid of step %g mm over the crystal has more than %zu nodes",
                              what, h, MAX_NODES);
    unsigned levels = o.levels ? o.levels : auto_levels(cfg->radius, h);
    if (levels > MAX_LEVELS)
        levels = MAX_LEVELS;
    /* Never coarser than the radius/2: a grid must still see the crystal. */
    while (levels > 1 && h * ldexp(1.0, (int)levels - 1) > 0.5 * cfg->radius)
        levels--;

    double scale = p->potential ? fabs(p->bias) : 1.0;
    double limit = tolerance * (scale > 1.0 ? scale : 1.0);

    level_t prev, cur;
    memset(&prev, 0, sizeof prev);
    memset(&cur, 0, sizeof cur);
    int st = TUSK_OK;
    unsigned sweeps = 0;
    double change = 0;
    for (unsigned l = 0; l < levels && !st; l++) {
        double t0 = tusk_clock_s();
        double step = h * ldexp(1.0, (int)(levels - 1 - l));
        st = level_build(&cur, p, step);
        if (st == TUSK_ENOMEM) {
            st = tusk_error_set(err, st, "%s: out of memory for a grid of step %g mm", what, step);
            break;
        }
        if (st) {
            st = tusk_error_set(err, st, "%s: grid of step %g mm too large", what, step);
            break;
        }
        if (l > 0) {
            prolong(&cur, &prev);
            level_free(&prev);
        }
        /* Over-relaxation a little below the textbook optimum for the
         * largest dimension, 2 / (1 + sin(pi / n)): starting from the
         * coarser solution, that took fewer sweeps (172 against 221 on
         * the default crystal at 1 mm) to the same error (one float ulp
         * against a solution converged to 1e-13). */
        size_t nmax = cur.nx > cur.nz ? cur.nx : cur.nz;
        double w = 2.0 / (1.0 + 1.3 * sin(M_PI / (double)nmax));
        sweeps = 0;
        change = INFINITY;
        while (sweeps < max_sweeps) {
            change = sweep(&cur, w);
            sweeps++;
            if (!(change >= limit))
                break; /* converged (or NaN: caught below) */
        }
        for (size_t q = 0; q < cur.n && isfinite(change); q++)
            if (!isfinite(cur.u[q]))
                change = NAN;
        double dt = tusk_clock_s() - t0;
        det_progress(o.progress, o.user, "%s: level %u/%u h=%.2f mm (%zux%zux%zu nodes): %u sweeps, max change %.1e, %.3f s", what,
               l + 1, levels, step, cur.nx, cur.ny, cur.nz, sweeps, change, dt);
        if (!isfinite(change) || change >= limit) {
            st = tusk_error_set(err, TUSK_ELIMIT,
                                "%s: no convergence at level %u/%u (h = %g mm): max change %.3g after %u sweeps, "
                                "tolerance %.3g (raise max_sweeps or the tolerance)",
                                what, l + 1, levels, step, change, sweeps, limit);
            break;
        }
        fill_outside(cur.kind, cur.u, cur.nx, cur.ny, cur.nz);
        if (l + 1 < levels) {
            prev = cur;
            memset(&cur, 0, sizeof cur);
        }
    }
    if (st) {
        level_free(&prev);
        level_free(&cur);
        return st;
    }

    det_field_t *f = calloc(1, sizeof *f);
    if (f)
        f->value = malloc(cur.n * sizeof *f->value);
    if (!f || !f->value) {
        free(f);
        level_free(&cur);
        return tusk_error_set(err, TUSK_ENOMEM, "%s: out of memory", what);
    }
    f->nx = cur.nx;
    f->ny = cur.ny;
    f->nz = cur.nz;
    f->h = cur.h;
    memcpy(f->origin, cur.origin, sizeof f->origin);
    f->potential = p->potential;
    f->bias = p->bias;
    f->high = p->potential ? p->bias : 1.0;
    f->sweeps = sweeps;
    f->max_change = change;
    if (p->potential)
        st = compute_gradient(f, &cur);
    if (!st)
        st = contact_ghosts(&cur, p->potential);
    if (!st) {
        for (size_t i = 0; i < cur.n; i++)
            f->value[i] = (float)cur.u[i];
        f->kind = cur.kind;
        cur.kind = NULL;
    }
    level_free(&cur);
    if (st) {
        det_field_destroy(&f);
        return tusk_error_set(err, st, "%s: out of memory", what);
    }
    *out = f;
    return TUSK_OK;
}

int det_field_solve_potential(det_field_t **out, const det_crystal_t *crystal, double h,
                              const det_solve_options_t *options, tusk_error_t *err)
{
    *out = NULL;
    if (!crystal)
        return tusk_error_set(err, TUSK_EINVAL, "electric potential: no crystal");
    const det_config_t *cfg = det_crystal_config(crystal);
    problem_t p = {crystal, true, 0, det_crystal_core(crystal), cfg->bias, DET_SOURCE_PER_UNIT};
    return solve(out, &p, h, options, err);
}

int det_field_solve_weighting(det_field_t **out, const det_crystal_t *crystal, unsigned electrode, double h,
                              const det_solve_options_t *options, tusk_error_t *err)
{
    *out = NULL;
    if (!crystal)
        return tusk_error_set(err, TUSK_EINVAL, "weighting potential: no crystal");
    unsigned n = det_crystal_electrodes(crystal);
    if (electrode >= n)
        return tusk_error_set(err, TUSK_EINVAL, "weighting potential: electrode %u does not exist (0..%u)",
                              electrode, n - 1);
    problem_t p = {crystal, false, electrode, det_crystal_core(crystal), 0.0, 0.0};
    return solve(out, &p, h, options, err);
}

void det_field_destroy(det_field_t **field)
{
    if (!field || !*field)
        return;
    det_field_t *f = *field;
    free(f->value);
    free(f->kind);
    free(f->grad);
    free(f);
    *field = NULL;
}

/* ---- interpolation --------------------------------------------------------- */

/* The cell of (x, y, z) and the fractions within it; false outside the box. */
static bool locate(const det_field_t *f, double x, double y, double z, size_t c[3], double t[3])
{
    const double pos[3] = {x, y, z};
    const size_t n3[3] = {f->nx, f->ny, f->nz};
    for (int a = 0; a < 3; a++) {
        double u = (pos[a] - f->origin[a]) / f->h;
        double top = (double)(n3[a] - 1);
        if (!(u >= 0 && u <= top))
            return false;
        size_t i = (size_t)u;
        if (i >= n3[a] - 1)
            i = n3[a] - 2;
        c[a] = i;
        t[a] = u - (double)i;
    }
    return true;
}

double det_field_value(const det_field_t *f, double x, double y, double z)
{
    size_t c[3];
    double t[3];
    if (!f || !locate(f, x, y, z, c, t))
        return NAN;
    const size_t nx = f->nx, nxy = f->nx * f->ny;
    const float *v = f->value + c[0] + nx * c[1] + nxy * c[2];
    double x00 = v[0] + t[0] * (v[1] - v[0]);
    double x10 = v[nx] + t[0] * (v[nx + 1] - v[nx]);
    double x01 = v[nxy] + t[0] * (v[nxy + 1] - v[nxy]);
    double x11 = v[nxy + nx] + t[0] * (v[nxy + nx + 1] - v[nxy + nx]);
    double y0 = x00 + t[1] * (x10 - x00), y1 = x01 + t[1] * (x11 - x01);
    return y0 + t[2] * (y1 - y0);
}

/* A weighting potential's gradient at a node, from the node values:
 * central differences between inside/contact neighbours, one-sided where
 * one is missing; nodes not inside take the mean of their inside
 * neighbours' gradients, or differences of whatever values are around. */
static void inside_gradient(const det_field_t *f, size_t i, size_t j, size_t k, bool any_value, double g[3])
{
    const size_t n3[3] = {f->nx, f->ny, f->nz}, ijk[3] = {i, j, k};
    const size_t stride[3] = {1, f->nx, f->nx * f->ny};
    const size_t idx = i + f->nx * j + stride[2] * k;
    for (int a = 0; a < 3; a++) {
        double um = 0, up = 0, da = 0, db = 0;
        if (ijk[a] > 0) {
            uint8_t kn = f->kind[idx - stride[a]];
            if (any_value ? has_value(kn) : (kn & KIND_MASK) != DET_NODE_OUTSIDE) {
                um = f->value[idx - stride[a]];
                da = f->h;
            }
        }
        if (ijk[a] + 1 < n3[a]) {
            uint8_t kn = f->kind[idx + stride[a]];
            if (any_value ? has_value(kn) : (kn & KIND_MASK) != DET_NODE_OUTSIDE) {
                up = f->value[idx + stride[a]];
                db = f->h;
            }
        }
        g[a] = derivative(um, da, f->value[idx], up, db);
    }
}

static void weighting_node_gradient(const det_field_t *f, size_t i, size_t j, size_t k, double g[3])
{
    const size_t nxy = f->nx * f->ny, idx = i + f->nx * j + nxy * k;
    if ((f->kind[idx] & KIND_MASK) == DET_NODE_INSIDE) {
        inside_gradient(f, i, j, k, false, g);
        return;
    }
    const size_t n3[3] = {f->nx, f->ny, f->nz}, ijk[3] = {i, j, k};
    double sum[3] = {0, 0, 0};
    int cnt = 0;
    for (int a = 0; a < 3; a++)
        for (int side = 0; side < 2; side++) {
            size_t q[3] = {i, j, k};
            if (side == 0 && ijk[a] == 0)
                continue;
            if (side == 1 && ijk[a] + 1 >= n3[a])
                continue;
            q[a] = side ? q[a] + 1 : q[a] - 1;
            if ((f->kind[q[0] + f->nx * q[1] + nxy * q[2]] & KIND_MASK) != DET_NODE_INSIDE)
                continue;
            double gq[3];
            inside_gradient(f, q[0], q[1], q[2], false, gq);
            for (int b = 0; b < 3; b++)
                sum[b] += gq[b];
            cnt++;
        }
    if (cnt) {
        for (int b = 0; b < 3; b++)
            g[b] = sum[b] / cnt;
        return;
    }
    inside_gradient(f, i, j, k, true, g);
}

bool det_field_gradient(const det_field_t *f, double x, double y, double z, double gradient[3])
{
    size_t c[3];
    double t[3];
    if (!f || !locate(f, x, y, z, c, t))
        return false;
    const size_t nx = f->nx, nxy = f->nx * f->ny;
    double acc[3] = {0, 0, 0};
    for (int corner = 0; corner < 8; corner++) {
        size_t bx = (size_t)(corner & 1), by = (size_t)((corner >> 1) & 1), bz = (size_t)((corner >> 2) & 1);
        double w = (bx ? t[0] : 1 - t[0]) * (by ? t[1] : 1 - t[1]) * (bz ? t[2] : 1 - t[2]);
        size_t i = c[0] + bx, j = c[1] + by, k = c[2] + bz;
        double g[3];
        if (f->grad) {
            const float *gn = f->grad + 3 * (i + nx * j + nxy * k);
            g[0] = gn[0];
            g[1] = gn[1];
            g[2] = gn[2];
        } else {
            weighting_node_gradient(f, i, j, k, g);
        }
        for (int a = 0; a < 3; a++)
            acc[a] += w * g[a];
    }
    memcpy(gradient, acc, sizeof acc);
    return true;
}

/* ---- depletion ---------------------------------------------------------- */

int det_field_check_depletion(const det_field_t *f, double bias, double min_field, tusk_error_t *err)
{
    if (!f || !f->potential || !f->grad)
        return tusk_error_set(err, TUSK_EINVAL, "depletion check: not an electric potential");
    if (!isfinite(bias) || isnan(min_field))
        return tusk_error_set(err, TUSK_EINVAL, "depletion check: bias %g V or minimum field %g V/mm invalid",
                              bias, min_field);
    const double lo = bias < 0 ? bias : 0.0, hi = bias > 0 ? bias : 0.0;
    const double tol = 1e-4 * (fabs(bias) > 1.0 ? fabs(bias) : 1.0);
    const size_t nx = f->nx, ny = f->ny, nz = f->nz;
    size_t worst = SIZE_MAX, weakest = SIZE_MAX;
    double worst_excess = tol, weakest_field = INFINITY;
    for (size_t k = 0; k < nz; k++)
        for (size_t j = 0; j < ny; j++)
            for (size_t i = 0; i < nx; i++) {
                size_t idx = i + nx * (j + ny * k);
                if ((f->kind[idx] & KIND_MASK) != DET_NODE_INSIDE)
                    continue;
                double v = f->value[idx];
                double excess = v > hi ? v - hi : v < lo ? lo - v : 0.0;
                if (excess > worst_excess || isnan(v)) {
                    worst_excess = isnan(v) ? INFINITY : excess;
                    worst = idx;
                }
                /* The field is judged in the bulk, at nodes whose six
                 * neighbours are inside too: where two contact faces meet
                 * (the front edge) it goes to zero at the surface, as it
                 * should. */
                if (i == 0 || j == 0 || k == 0 || i + 1 == nx || j + 1 == ny || k + 1 == nz)
                    continue;
                bool bulk = true;
                const size_t nb[6] = {idx - 1, idx + 1, idx - nx, idx + nx, idx - nx * ny, idx + nx * ny};
                for (int s = 0; s < 6; s++)
                    bulk = bulk && (f->kind[nb[s]] & KIND_MASK) == DET_NODE_INSIDE;
                if (!bulk)
                    continue;
                const float *g = f->grad + 3 * idx;
                double e = sqrt((double)g[0] * g[0] + (double)g[1] * g[1] + (double)g[2] * g[2]);
                if (e < weakest_field) {
                    weakest_field = e;
                    weakest = idx;
                }
            }
    if (worst != SIZE_MAX) {
        size_t i = worst % nx, j = (worst / nx) % ny, k = worst / (nx * ny);
        return tusk_error_set(err, TUSK_EINVAL,
                              "crystal not fully depleted: potential %.1f V at (%.1f, %.1f, %.1f) mm lies outside "
                              "the contact voltages [%g, %g] V; the bias (%g V) is too low for the impurity "
                              "concentration",
                              (double)f->value[worst], f->origin[0] + (double)i * f->h,
                              f->origin[1] + (double)j * f->h, f->origin[2] + (double)k * f->h, lo, hi, bias);
    }
    if (weakest != SIZE_MAX && weakest_field < min_field) {
        size_t i = weakest % nx, j = (weakest / nx) % ny, k = weakest / (nx * ny);
        return tusk_error_set(err, TUSK_EINVAL,
                              "crystal not fully depleted: field %.3g V/mm at (%.1f, %.1f, %.1f) mm (potential "
                              "%.1f V) is below the minimum %g V/mm; the bias (%g V) is too low",
                              weakest_field, f->origin[0] + (double)i * f->h, f->origin[1] + (double)j * f->h,
                              f->origin[2] + (double)k * f->h, (double)f->value[weakest], min_field, bias);
    }
    return TUSK_OK;
}

/* ---- the grid ------------------------------------------------------------- */

void det_field_grid(const det_field_t *f, size_t *nx, size_t *ny, size_t *nz, double *h, double origin[3])
{
    if (nx)
        *nx = f->nx;
    if (ny)
        *ny = f->ny;
    if (nz)
        *nz = f->nz;
    if (h)
        *h = f->h;
    if (origin)
        memcpy(origin, f->origin, sizeof f->origin);
}

float det_field_node_value(const det_field_t *f, size_t i, size_t j, size_t k)
{
    if (i >= f->nx || j >= f->ny || k >= f->nz)
        return NAN;
    size_t idx = i + f->nx * (j + f->ny * k);
    if ((f->kind[idx] & KIND_MASK) == DET_NODE_CONTACT)
        return (f->kind[idx] & CONTACT_HIGH) ? (float)f->high : 0.0f;
    return f->value[idx];
}

enum det_node det_field_node_kind(const det_field_t *f, size_t i, size_t j, size_t k)
{
    if (i >= f->nx || j >= f->ny || k >= f->nz)
        return DET_NODE_OUTSIDE;
    return (enum det_node)(f->kind[i + f->nx * (j + f->ny * k)] & KIND_MASK);
}

void det_field_convergence(const det_field_t *f, unsigned *sweeps, double *max_change)
{
    if (sweeps)
        *sweeps = f->sweeps;
    if (max_change)
        *max_change = f->max_change;
}
