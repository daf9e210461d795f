/* subgrid.c - a hit's position between the basis grid points (subgrid =
 * yes), after the grid search: psa_subgrid (psa_private.h).
 *
 * The grid search gives each hit a basis point; the interaction lies
 * anywhere in the cells around it. Here the signal of a position inside a
 * cell is the trilinear interpolation of its corners' signals (the
 * corners of the hit's segment, their weights renormalised: how tusk-sim
 * makes a deposit's traces), each as the basis has it, from the
 * interaction on (the engine's point-major rows, not aligned), and the
 * record is resampled at the crystal's interaction time. Least squares,
 * not |d|^p: the model is linear in the corners' weights, so that with
 * the dot products of the measured traces and the corners' signals
 * (b.B_c) and of the corners' signals with each other (B_c.B_d, from the
 * engine's table when the channels are the segment's whole mask) the fit
 * of any position in the cell costs a few dozen operations:
 *   |b - sum w_c B_c|^2 = b.b - 2 sum w_c b.B_c + sum_cd w_c w_d B_c.B_d.
 * Which cell: of the point's two neighbours along each axis, the one that
 * fits better (|b - B_n|^2) gives the cell's side. The position in the
 * cell: the best of a 3 x 3 x 3 lattice of half cells, then of quarter
 * and eighth cells around it; where it lies on a face of the cell, the
 * cell across that face is fitted too and kept if it fits better
 * (PSA_SUBGRID_CELLS cells at most).
 *
 * In a crystal of several hits each hit is fitted on its traces less the
 * other hits' signals at their sub-grid positions so far, hit after hit
 * from the strongest, PSA_SUBGRID_PASSES times over, so that a hit's
 * position no longer carries the error of its neighbour's grid point. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "psa_private.h"

/* Passes over a crystal of several hits. */
#define PSA_SUBGRID_PASSES 3

/* Cells tried a hit at most: the first, then moves across a face on
 * which the best position lies, while they fit better. */
#define PSA_SUBGRID_CELLS 4

/* The nodes a hit's fit may touch: within NODE_R steps of its point
 * along each axis (the cells' moves reach PSA_SUBGRID_CELLS - 1 steps,
 * a cell one more). */
#define NODE_R PSA_SUBGRID_CELLS
#define NODE_W (2 * NODE_R + 1)

/* A hit's cell: the grid nodes lo .. lo + 1 along each axis, and the
 * position found in it, as fractions of a step from lo. */
typedef struct cell {
    long lo[3];
    double u[3];
    double r;              /* the fit's |b - model|^2 there */
} cell_t;

/* A node near the hit's point, once looked at: whether it is a point of
 * the hit's segment, which, and its signal's products b.B and B.B. */
typedef struct node {
    uint32_t seen;         /* the fit's `hit` when looked at (0: never) */
    bool have;
    uint32_t point;
    double bc, bb;
} node_t;

/* Where the fit works: the hit's segment and mask channels, the measured
 * traces (less the other hits' signals, normalised to the hit's energy),
 * the nodes around its point. */
typedef struct fit {
    const psa_engine_t *e;
    unsigned s, nch, S;
    bool whole_mask;       /* the channels are s's whole mask (no other hit among them): the engine's table */
    long at[3];            /* the hit's point's node */
    uint32_t hit;          /* counts the hits fitted with this memory: a node's `seen` */
    double b2;             /* b.b */
    uint8_t ch[PSA_CHANNELS];
    float b[PSA_CHANNELS * PSA_MAX_SAMPLES];
    node_t node[NODE_W * NODE_W * NODE_W];
} fit_t;

/* a.b over n floats, in eight partial sums (vectorises). */
static double dot(const float *a, const float *b, size_t n)
{
    float acc[8] = {0};
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (unsigned l = 0; l < 8; l++)
            acc[l] += a[i + l] * b[i + l];
    double s = 0.0;
    for (unsigned l = 0; l < 8; l++)
        s += acc[l];
    for (; i < n; i++)
        s += (double)a[i] * b[i];
    return s;
}

/* Channel c (of the fit's) of point q's signal: the basis' own time, its
 * interaction at sample 0 (the engine's point-major rows). */
static const float *row_of(const fit_t *f, uint32_t q, unsigned c)
{
    return f->e->row[f->s] + ((size_t)q * PSA_CHANNELS + f->ch[c]) * f->S;
}

/* Sum over channels ch[0 .. nch - 1] of the products of points p and q
 * of segment s's signals. */
static double gram_on(const psa_engine_t *e, unsigned s, const uint8_t *ch, unsigned nch, uint32_t p, uint32_t q)
{
    const unsigned S = e->samples;
    double g = 0.0;
    for (unsigned c = 0; c < nch; c++)
        g += dot(e->row[s] + ((size_t)p * PSA_CHANNELS + ch[c]) * S, e->row[s] + ((size_t)q * PSA_CHANNELS + ch[c]) * S,
                 S);
    return g;
}

/* The forward neighbours of a node: the offsets d in {-1, 0, 1}^3 whose
 * first non-zero component is +1 (of each pair of opposite offsets, one);
 * FORWARD(d) their index 0 .. 12, -1 for the others. */
static int forward(int dx, int dy, int dz)
{
    const int i = (dz + 1) * 9 + (dy + 1) * 3 + (dx + 1); /* 0 .. 26, 13 = no offset */
    return i > 13 ? i - 14 : -1;
}

/* The products of points p and q (grid nodes np and nq, at most one step
 * apart along each axis) on the fit's channels: from the engine's table
 * when they are the segment's whole mask, else computed. */
static double gram(const fit_t *f, uint32_t p, const long np[3], uint32_t q, const long nq[3])
{
    if (!f->whole_mask)
        return gram_on(f->e, f->s, f->ch, f->nch, p, q);
    const double *t = f->e->gram_of[f->s];
    const int d = forward((int)(nq[0] - np[0]), (int)(nq[1] - np[1]), (int)(nq[2] - np[2]));
    if (p == q)
        return t[(size_t)p * PSA_SUBGRID_GRAM];
    if (d >= 0)
        return t[(size_t)p * PSA_SUBGRID_GRAM + 1 + d];
    const int back = forward((int)(np[0] - nq[0]), (int)(np[1] - nq[1]), (int)(np[2] - nq[2]));
    return t[(size_t)q * PSA_SUBGRID_GRAM + 1 + back];
}

int psa_subgrid_prepare(psa_engine_t *e, tusk_error_t *err)
{
    size_t total = 0;
    for (unsigned s = 0; s < PSA_SEGMENTS; s++)
        total += e->npoints[s];
    e->gram = malloc((total ? total : 1) * PSA_SUBGRID_GRAM * sizeof *e->gram);
    if (!e->gram)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory (subgrid: %zu points' products)", total);
    double *t = e->gram;
    for (unsigned s = 0; s < PSA_SEGMENTS; t += e->npoints[s] * PSA_SUBGRID_GRAM, s++) {
        e->gram_of[s] = t;
        for (uint32_t p = 0; p < e->npoints[s]; p++) {
            float pos[3];
            long n[3];
            det_basis_position(e->basis, s, p, pos);
            for (int a = 0; a < 3; a++)
                n[a] = det_grid_node(e->grid, pos[a]);
            double *row = t + (size_t)p * PSA_SUBGRID_GRAM;
            row[0] = gram_on(e, s, e->mask[s], e->mask_n[s], p, p);
            for (int i = 14; i < 27; i++) {
                unsigned seg;
                uint32_t q;
                const bool there =
                    det_grid_at(e->grid, n[0] + i % 3 - 1, n[1] + i / 3 % 3 - 1, n[2] + i / 9 - 1, &seg, &q) && seg == s;
                row[1 + i - 14] = there ? gram_on(e, s, e->mask[s], e->mask_n[s], p, q) : 0.0;
            }
        }
    }
    return TUSK_OK;
}

/* The node at grid node n, looked at once a hit: NULL when it is beyond
 * the fit's reach. */
static node_t *node_at(fit_t *f, const long n[3])
{
    long d[3];
    for (int a = 0; a < 3; a++) {
        d[a] = n[a] - f->at[a] + NODE_R;
        if (d[a] < 0 || d[a] >= NODE_W)
            return NULL;
    }
    node_t *x = &f->node[(d[2] * NODE_W + d[1]) * NODE_W + d[0]];
    if (x->seen != f->hit) {
        unsigned seg;
        x->seen = f->hit;
        x->have = det_grid_at(f->e->grid, n[0], n[1], n[2], &seg, &x->point) && seg == f->s;
        if (x->have) {
            x->bc = 0.0;
            for (unsigned c = 0; c < f->nch; c++)
                x->bc += dot(f->b + (size_t)c * f->S, row_of(f, x->point, c), f->S);
            x->bb = gram(f, x->point, n, x->point, n);
        }
    }
    return x;
}

/* Point q of segment s's signal on the fit's channels times `scale`,
 * added to out. */
static void add_point(const psa_engine_t *e, fit_t *f, unsigned s, uint32_t q, float scale, float *out)
{
    const unsigned S = f->S;
    for (unsigned c = 0; c < f->nch; c++) {
        const float *r = e->row[s] + ((size_t)q * PSA_CHANNELS + f->ch[c]) * S;
        float *o = out + (size_t)c * S;
        for (unsigned t = 0; t < S; t++)
            o[t] += scale * r[t];
    }
}

/* A cell's corners as the fit needs them: which are points, their b.B
 * and the products of their signals (0 for a corner that is none). */
typedef struct corners {
    bool have[8];
    uint32_t point[8];
    double bc[8], G[8][8];
} corners_t;

/* The corners of the cell whose lowest node is lo (det_grid_corner), as
 * the fit needs them: false when none is a point of the hit's segment. */
static bool load_cell(fit_t *f, const long lo[3], corners_t *k)
{
    bool any = false;
    long node[8][3];
    for (unsigned c = 0; c < 8; c++) {
        det_grid_corner(lo, c, node[c]);
        const node_t *x = node_at(f, node[c]);
        k->have[c] = x && x->have;
        k->point[c] = k->have[c] ? x->point : 0;
        k->bc[c] = k->have[c] ? x->bc : 0.0;
        k->G[c][c] = k->have[c] ? x->bb : 0.0;
        any |= k->have[c];
    }
    for (unsigned c = 0; c < 8; c++)
        for (unsigned d = c + 1; d < 8; d++)
            k->G[c][d] = k->G[d][c] =
                k->have[c] && k->have[d] ? gram(f, k->point[c], node[c], k->point[d], node[d]) : 0.0;
    return any;
}

/* The trilinear weights of position u in the cell, over the corners that
 * are points, renormalised: false when none of those weighs anything. */
static bool weights(const bool have[8], const double u[3], double w[8])
{
    double total = 0.0;
    for (unsigned k = 0; k < 8; k++) {
        w[k] = have[k] ? det_grid_corner_weight(k, u) : 0.0;
        total += w[k];
    }
    if (!(total > 1e-9))
        return false;
    if (total != 1.0)
        for (unsigned k = 0; k < 8; k++)
            w[k] /= total;
    return true;
}

/* |b - model at u|^2 (+inf where no corner weighs anything). */
static double residual_at(const fit_t *f, const corners_t *k, const double u[3])
{
    double w[8];
    if (!weights(k->have, u, w))
        return INFINITY;
    /* Only the corners that weigh (at a lattice point on a face, an edge
     * or a corner of the cell: 4, 2 or 1 of them). */
    unsigned on[8], n = 0;
    for (unsigned x = 0; x < 8; x++)
        if (w[x] != 0.0)
            on[n++] = x;
    double r = f->b2;
    for (unsigned i = 0; i < n; i++) {
        const unsigned x = on[i];
        double gw = 0.0;
        for (unsigned j = 0; j < n; j++)
            gw += k->G[x][on[j]] * w[on[j]];
        r += w[x] * (gw - 2.0 * k->bc[x]);
    }
    return r;
}

/* The best position in cell c: the best of a 3 x 3 x 3 lattice of half
 * cells (at its corners, edges and faces few corners weigh: cheap), then
 * of the lattice a quarter and an eighth of the cell apart around the
 * best so far (within the cell); c->u and c->r set (+inf: no corner is a
 * point). */
static void fit_in_cell(fit_t *f, cell_t *c)
{
    corners_t k;
    c->r = INFINITY;
    memset(c->u, 0, sizeof c->u);
    if (!load_cell(f, c->lo, &k))
        return;
    double at[3] = {0.5, 0.5, 0.5}, best = INFINITY;
    for (double h = 0.5; h > 0.1; h *= 0.5) {
        const double c0[3] = {at[0], at[1], at[2]};
        for (int i = 0; i < 27; i++) {
            const double u[3] = {c0[0] + h * (i % 3 - 1), c0[1] + h * (i / 3 % 3 - 1), c0[2] + h * (i / 9 - 1)};
            if ((i == 13 && h < 0.5) || u[0] < 0.0 || u[0] > 1.0 || u[1] < 0.0 || u[1] > 1.0 || u[2] < 0.0 ||
                u[2] > 1.0)
                continue;
            const double r = residual_at(f, &k, u);
            if (r < best) {
                best = r;
                memcpy(at, u, sizeof at);
            }
        }
    }
    memcpy(c->u, at, sizeof at);
    c->r = best;
}

/* Fit the hit on f->b, from cell *c (c->lo set): c the best cell and
 * position found, moving across a face on which the best lies while that
 * fits better. */
static void fit_hit(fit_t *f, cell_t *c)
{
    fit_in_cell(f, c);
    for (unsigned tried = 1; tried < PSA_SUBGRID_CELLS && isfinite(c->r);) {
        cell_t best = *c;
        for (int a = 0; a < 3 && tried < PSA_SUBGRID_CELLS; a++) {
            /* Across a face of the cell on which the best lies (the
             * hit's point's own planes too: first_cell's choice of side
             * from two neighbours is often wrong, and leaving those out
             * cost 0.2 mm of the 2 mm basis' median). */
            const int d = c->u[a] == 0.0 ? -1 : (c->u[a] == 1.0 ? 1 : 0);
            if (!d)
                continue;
            cell_t m = *c;
            m.lo[a] += d;
            tried++;
            fit_in_cell(f, &m);
            if (m.r < best.r)
                best = m;
        }
        if (!(best.r < c->r))
            break;
        *c = best;
    }
}

/* The first cell of the hit at point q: along each axis, toward the
 * neighbour that fits better (|b - B|^2; none: the one there is). */
static void first_cell(fit_t *f, cell_t *c)
{
    for (int a = 0; a < 3; a++) {
        double best = INFINITY;
        c->lo[a] = f->at[a];
        for (int d = -1; d <= 1; d += 2) {
            long m[3] = {f->at[0], f->at[1], f->at[2]};
            m[a] += d;
            const node_t *x = node_at(f, m);
            if (!x || !x->have)
                continue;
            const double r = x->bb - 2.0 * x->bc;
            if (r < best) {
                best = r;
                c->lo[a] = d < 0 ? f->at[a] - 1 : f->at[a];
            }
        }
    }
}

/* The signal of hit cell c (segment s) times energy, taken off f->b
 * (f's channels set). */
static void subtract_cell(const psa_engine_t *e, fit_t *f, unsigned s, const cell_t *c, float energy)
{
    bool have[8];
    uint32_t point[8];
    for (unsigned k = 0; k < 8; k++) {
        unsigned seg;
        long n[3];
        det_grid_corner(c->lo, k, n);
        have[k] = det_grid_at(e->grid, n[0], n[1], n[2], &seg, &point[k]) && seg == s;
    }
    double w[8];
    if (!weights(have, c->u, w))
        return;
    for (unsigned k = 0; k < 8; k++)
        if (w[k] > 0.0)
            add_point(e, f, s, point[k], -(float)(w[k] * energy), f->b);
}

void psa_subgrid(const psa_engine_t *e, const psa_subgrid_crystal_t *x, float pos[][3])
{
    fit_t *f = x->scratch;
    f->e = e;
    f->S = e->samples;
    cell_t cell[PSA_SEGMENTS];
    bool fitted[PSA_SEGMENTS] = {false};
    const unsigned passes = x->n > 1 ? PSA_SUBGRID_PASSES : 1;
    psa_resample_t rs;
    psa_resample_plan(&rs, x->inter, x->len, f->S);
    for (unsigned pass = 0; pass < passes; pass++)
        for (unsigned k = 0; k < x->n; k++) {
            const unsigned s = x->seg[k];
            bool others[PSA_SEGMENTS];
            memcpy(others, x->is_hit, sizeof others);
            others[s] = false;
            f->nch = psa_engine_mask(e, s, others, f->ch, NULL);
            f->whole_mask = f->nch == e->mask_n[s] && memcmp(f->ch, e->mask[s], f->nch) == 0;
            f->s = s;
            float p[3];
            det_basis_position(e->basis, s, x->best[k], p);
            for (int a = 0; a < 3; a++)
                f->at[a] = det_grid_node(e->grid, p[a]);
            for (unsigned c = 0; c < f->nch; c++)
                psa_resample(&rs, x->traces + (size_t)f->ch[c] * x->len, f->b + (size_t)c * f->S);
            /* The other hits: at their fitted positions, at their points before. */
            for (unsigned o = 0; o < x->n; o++)
                if (o != k && fitted[o])
                    subtract_cell(e, f, x->seg[o], &cell[o], x->energy[o]);
                else if (o != k)
                    add_point(e, f, x->seg[o], x->best[o], -x->energy[o], f->b);
            const size_t n = (size_t)f->nch * f->S;
            const float inv = 1.0f / x->energy[k];
            for (size_t i = 0; i < n; i++)
                f->b[i] *= inv;
            f->b2 = dot(f->b, f->b, n);
            if (++f->hit == 0) { /* wrapped: forget every node */
                for (size_t i = 0; i < NODE_W * NODE_W * NODE_W; i++)
                    f->node[i].seen = 0;
                f->hit = 1;
            }
            if (!fitted[k])
                first_cell(f, &cell[k]);
            cell_t c = cell[k];
            fit_hit(f, &c);
            if (isfinite(c.r)) {
                cell[k] = c;
                fitted[k] = true;
            }
        }
    const double g = det_grid_step(e->grid);
    for (unsigned k = 0; k < x->n; k++) {
        float p[3];
        det_basis_position(e->basis, x->seg[k], x->best[k], p);
        for (int a = 0; a < 3; a++)
            pos[k][a] = fitted[k] ? (float)(((double)cell[k].lo[a] + 0.5 + cell[k].u[a]) * g) : p[a];
    }
}

size_t psa_subgrid_scratch_bytes(void)
{
    return sizeof(fit_t);
}
