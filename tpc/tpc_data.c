/* tpc_data.c - step 0, the initialisation (seed §2.4.1): per row of each
 * slice the clusters' range, their compression to 16 bits over it, a grid
 * of about as many bins as clusters (at least min_bin_mm a bin) over the
 * range, and the clusters sorted by bin; in the launch layout every
 * backend tracks from (tpc_private.h). Host code for every backend; the
 * slices go to a thread pool. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "tpc_private.h"

void tpc_data_free(tpc_data_t *d)
{
    free(d->slice);
    free(d->row);
    free(d->id);
    free(d->own_yz);
    free(d->own_row_of);
    free(d->own_fbin);
    free(d->tmp);
    free(d->tmpv);
    free(d->cursor);
    free(d->status);
    free(d->why);
    memset(d, 0, sizeof *d);
}

static void run(tusk_pool_t *pool, size_t n, tusk_pool_fn fn, void *ctx)
{
    if (pool)
        tusk_pool_run(pool, n, fn, ctx);
    else
        for (size_t i = 0; i < n; i++)
            fn(ctx, i, 0);
}

/* The lowest failing slice's message, or TUSK_OK. */
static int first_failure(const tpc_data_t *d, tusk_error_t *err)
{
    for (size_t s = 0; s < d->n_slices; s++)
        if (d->status[s] != TUSK_OK)
            return tusk_error_set(err, d->status[s], "%s", d->why[s]);
    return TUSK_OK;
}

/* ---- plan: rows ---------------------------------------------------------------------------- */

static void plan_slice(void *ctx, size_t s, unsigned thread)
{
    (void)thread;
    tpc_data_t *d = ctx;
    tpc_slice_t sl;
    tpc_batch_slice(d->batch, s, &sl);
    tpc_row_t *rows = d->row + s * TPC_ROWS;
    float ymin[TPC_ROWS], ymax[TPC_ROWS], zmin[TPC_ROWS], zmax[TPC_ROWS];
    memset(rows, 0, TPC_ROWS * sizeof *rows);
    for (uint32_t i = 0; i < sl.hdr.n_clusters; i++) {
        const adf_tpc_cluster_t *c = &sl.cluster[i];
        unsigned r = c->row;
        if (rows[r].n == 0) {
            ymin[r] = ymax[r] = c->y;
            zmin[r] = zmax[r] = c->z;
        } else {
            ymin[r] = c->y < ymin[r] ? c->y : ymin[r];
            ymax[r] = c->y > ymax[r] ? c->y : ymax[r];
            zmin[r] = c->z < zmin[r] ? c->z : zmin[r];
            zmax[r] = c->z > zmax[r] ? c->z : zmax[r];
        }
        rows[r].n++;
    }
    d->status[s] = TUSK_OK;
    for (unsigned r = 0; r < TPC_ROWS; r++) {
        tpc_row_t *row = &rows[r];
        row->x = tpc_row_x(r);
        row->ny = row->nz = 1;
        if (row->n > TPC_MAX_ROW_CLUSTERS) {
            d->status[s] = TUSK_ELIMIT;
            snprintf(d->why[s], sizeof d->why[s],
                     "event %u, slice %u: row %u has %u clusters; the tracker takes at most %u a row",
                     (unsigned)sl.event, (unsigned)sl.hdr.slice, r, (unsigned)row->n, TPC_MAX_ROW_CLUSTERS);
            return;
        }
        if (row->n == 0)
            continue;
        /* 16-bit coordinates over the row's range */
        row->ymin = ymin[r];
        row->zmin = zmin[r];
        row->ystep = (float)(((double)ymax[r] - (double)ymin[r]) / 65535.0);
        row->zstep = (float)(((double)zmax[r] - (double)zmin[r]) / 65535.0);
        /* about as many bins as clusters, each axis split sqrt(n) times */
        double yr = (double)row->ystep * 65535.0, zr = (double)row->zstep * 65535.0;
        double k = sqrt((double)row->n);
        double sy = yr / k > d->min_bin ? yr / k : d->min_bin;
        double sz = zr / k > d->min_bin ? zr / k : d->min_bin;
        row->ny = (uint32_t)(yr / sy) + 1u;
        row->nz = (uint32_t)(zr / sz) + 1u;
        row->inv_sy = (float)(1.0 / sy);
        row->inv_sz = (float)(1.0 / sz);
    }
}

int tpc_data_plan(tpc_data_t *d, const tpc_batch_t *b, double min_bin_mm, tusk_pool_t *pool, tusk_error_t *err)
{
    size_t n = tpc_batch_count(b);
    if (n > d->cap_slices) {
        free(d->slice);
        free(d->row);
        free(d->status);
        free(d->why);
        d->slice = calloc(n, sizeof *d->slice);
        d->row = calloc(n * TPC_ROWS, sizeof *d->row);
        d->status = calloc(n, sizeof *d->status);
        d->why = calloc(n, sizeof *d->why);
        d->cap_slices = d->slice && d->row && d->status && d->why ? n : 0;
        if (!d->cap_slices)
            return tusk_error_set(err, TUSK_ENOMEM, "out of memory (%zu slices)", n);
    }
    d->n_slices = n;
    d->batch = b;
    d->min_bin = min_bin_mm;
    run(pool, n, plan_slice, d);
    int st = first_failure(d, err);
    if (st != TUSK_OK)
        return st;
    uint64_t cl = 0, bins = 0;
    for (size_t s = 0; s < n; s++) {
        tpc_slice_t sl;
        tpc_batch_slice(b, s, &sl);
        tpc_dev_slice_t *ds = &d->slice[s];
        memset(ds, 0, sizeof *ds);
        ds->first_row = (uint32_t)(s * TPC_ROWS);
        ds->first_cluster = (uint32_t)cl;
        ds->n_clusters = sl.hdr.n_clusters;
        ds->slice = sl.hdr.slice;
        ds->bzk = -TPC_CLIGHT * sl.hdr.bz;
        tpc_row_t *rows = d->row + s * TPC_ROWS;
        for (unsigned r = 0; r < TPC_ROWS; r++) {
            rows[r].first = (uint32_t)cl;
            rows[r].first_bin = (uint32_t)bins;
            cl += rows[r].n;
            bins += (uint64_t)rows[r].ny * rows[r].nz + 1u;
        }
        if (cl > UINT32_MAX / 2 || bins > UINT32_MAX / 2)
            return tusk_error_set(err, TUSK_ELIMIT, "a batch of %llu clusters in %zu slices; at most 2^31 a batch",
                                  (unsigned long long)cl, n);
    }
    d->n_clusters = cl;
    d->n_bins = bins;
    return TUSK_OK;
}

/* ---- fill: sort by bin, compress --------------------------------------------------------------- */

/* A cluster's 16-bit coordinates over its row's range, rounded to nearest;
 * inv: 1 / the row's ystep and zstep (0 for a row of one value). */
static uint32_t compress(const tpc_row_t *row, const double inv[2], const adf_tpc_cluster_t *c)
{
    double fy = ((double)c->y - (double)row->ymin) * inv[0] + 0.5;
    double fz = ((double)c->z - (double)row->zmin) * inv[1] + 0.5;
    uint32_t uy = fy >= 65535.0 ? 65535u : fy > 0.0 ? (uint32_t)fy : 0u;
    uint32_t uz = fz >= 65535.0 ? 65535u : fz > 0.0 ? (uint32_t)fz : 0u;
    return uy | uz << 16;
}

static void fill_slice(void *ctx, size_t s, unsigned thread)
{
    (void)thread;
    tpc_data_t *d = ctx;
    tpc_slice_t sl;
    tpc_batch_slice(d->batch, s, &sl);
    const tpc_row_t *rows = d->row + s * TPC_ROWS;
    const tpc_dev_slice_t *ds = &d->slice[s];
    uint32_t bin0 = rows[0].first_bin;
    uint32_t nbins = rows[TPC_ROWS - 1].first_bin + rows[TPC_ROWS - 1].ny * rows[TPC_ROWS - 1].nz + 1u - bin0;
    uint32_t *cnt = d->cursor + bin0;
    uint32_t *gb = d->tmp + ds->first_cluster, *cv = d->tmpv + ds->first_cluster;
    double inv[TPC_ROWS][2];
    for (unsigned r = 0; r < TPC_ROWS; r++) {
        inv[r][0] = rows[r].ystep > 0.0f ? 1.0 / (double)rows[r].ystep : 0.0;
        inv[r][1] = rows[r].zstep > 0.0f ? 1.0 / (double)rows[r].zstep : 0.0;
    }
    memset(cnt, 0, nbins * sizeof *cnt);
    /* each cluster's compressed coordinates and bin (row's first bin + bin) */
    for (uint32_t i = 0; i < sl.hdr.n_clusters; i++) {
        const adf_tpc_cluster_t *c = &sl.cluster[i];
        const tpc_row_t *row = &rows[c->row];
        uint32_t v = compress(row, inv[c->row], c);
        cv[i] = v;
        float yd = tpc_cluster_y(row, v), zd = tpc_cluster_z(row, v);
        uint32_t b = tpc_bin_axis(zd, row->zmin, row->inv_sz, row->nz) * row->ny +
                     tpc_bin_axis(yd, row->ymin, row->inv_sy, row->ny);
        uint32_t g = row->first_bin - bin0 + b;
        gb[i] = g;
        cnt[g]++;
    }
    /* per row: the bins' first in-row index; the cursor starts there */
    for (unsigned r = 0; r < TPC_ROWS; r++) {
        const tpc_row_t *row = &rows[r];
        uint32_t nb = row->ny * row->nz, sum = 0;
        uint32_t *c = cnt + (row->first_bin - bin0);
        uint16_t *f = d->fbin + row->first_bin;
        for (uint32_t k = 0; k < nb; k++) {
            uint32_t v = c[k];
            c[k] = sum;
            f[k] = (uint16_t)sum;
            sum += v;
        }
        f[nb] = (uint16_t)sum;
        c[nb] = sum;
    }
    /* scatter, in frame order within a bin */
    for (uint32_t i = 0; i < sl.hdr.n_clusters; i++) {
        const adf_tpc_cluster_t *c = &sl.cluster[i];
        const tpc_row_t *row = &rows[c->row];
        uint32_t at = row->first + cnt[gb[i]]++;
        d->yz[at] = cv[i];
        d->id[at] = i;
        d->row_of[at] = (uint32_t)(s * TPC_ROWS + c->row);
    }
}

int tpc_data_fill(tpc_data_t *d, uint32_t *yz, uint32_t *row_of, uint16_t *fbin, tusk_pool_t *pool, tusk_error_t *err)
{
    uint64_t n = d->n_clusters, nb = d->n_bins;
    if (n + 1 > d->cap_clusters) {
        free(d->id);
        free(d->tmp);
        free(d->tmpv);
        free(d->own_yz);
        free(d->own_row_of);
        d->own_yz = d->own_row_of = NULL;
        d->id = malloc((n + 1) * sizeof *d->id);
        d->tmp = malloc((n + 1) * sizeof *d->tmp);
        d->tmpv = malloc((n + 1) * sizeof *d->tmpv);
        d->cap_clusters = d->id && d->tmp && d->tmpv ? n + 1 : 0;
        if (!d->cap_clusters)
            return tusk_error_set(err, TUSK_ENOMEM, "out of memory (%llu clusters)", (unsigned long long)n);
    }
    if (nb + 1 > d->cap_bins) {
        free(d->cursor);
        free(d->own_fbin);
        d->own_fbin = NULL;
        d->cursor = malloc((nb + 1) * sizeof *d->cursor);
        d->cap_bins = d->cursor ? nb + 1 : 0;
        if (!d->cap_bins)
            return tusk_error_set(err, TUSK_ENOMEM, "out of memory (%llu grid bins)", (unsigned long long)nb);
    }
    if (!yz || !row_of || !fbin) {
        if (!d->own_yz)
            d->own_yz = malloc(d->cap_clusters * sizeof *d->own_yz);
        if (!d->own_row_of)
            d->own_row_of = malloc(d->cap_clusters * sizeof *d->own_row_of);
        if (!d->own_fbin)
            d->own_fbin = malloc(d->cap_bins * sizeof *d->own_fbin);
        if (!d->own_yz || !d->own_row_of || !d->own_fbin)
            return tusk_error_set(err, TUSK_ENOMEM, "out of memory (%llu clusters)", (unsigned long long)n);
        yz = d->own_yz;
        row_of = d->own_row_of;
        fbin = d->own_fbin;
    }
    d->yz = yz;
    d->row_of = row_of;
    d->fbin = fbin;
    run(pool, d->n_slices, fill_slice, d);
    return TUSK_OK;
}
