/* zf_qa.c - the z-finder's quality, as the seed's Table 5.1 measures it
 * (tusk/zfinder.h): per RoI the vertex the z-finder found (data:zvertex),
 * the true signal vertex (data:id_truth) and, from the spacepoints, the
 * double-precision reference's vertex; per (sample, mode, precision,
 * backend) the mean and standard deviation of |dz| against truth and
 * against the reference, and the fraction of RoIs within 1 mm of truth.
 *
 * A RoI's frames may come in different buffers (an output buffer that
 * filled up), so RoIs wait in a pending list until their vertex and truth
 * are both there; the truth comes last (the z-finder writes the vertex
 * right after the spacepoints), so a truth without a vertex before it
 * closes its RoI as unmatched and nothing is held for it. Everything is kept per RoI and summed only at the end,
 * in RoI order, so the numbers do not depend on the order buffers came in
 * (tusk-run's load-shared filters). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adf/adf_frames.h"
#include "base/grow.h"
#include "base/report.h"
#include "base/stats.h"
#include "tusk/adf.h"
#include "zf_private.h"

typedef struct pending {
    uint64_t event;           /* the key (tusk_grow_find) */
    bool have_sp, have_zv, have_truth;
    float phi_min, phi_width;
    adf_idsp_point_t *pt;     /* the spacepoints, for the reference (NULL when not needed) */
    uint32_t n;
    adf_zvertex_t zv;
    float z_true;
} pending_t;

typedef struct result {
    uint32_t event;
    int mode, precision, backend;
    unsigned vertices;
    double z0, z_true, z_ref;  /* z_ref NaN: no reference */
} result_t;

struct zf_qa {
    zf_qa_config_t cfg;
    zf_ref_t *ref[3];         /* double reference per mode (index = mode) */
    pending_t *pend;
    size_t n_pend, cap_pend;
    result_t *res;
    size_t n_res, cap_res;
    zf_qa_row_t *rows;
    size_t n_rows;
    uint64_t unmatched;
    uint64_t truth_only;      /* RoIs whose truth came without a vertex before it */
    bool finished;
    adf_idtruth_t *truth;     /* a decoded data:id_truth (large: made once) */
    /* the RoI to draw */
    adf_idsp_point_t *plot_pt;
    zf_roi_t plot_roi;
    double plot_z_true;
    bool have_plot;
};

void zf_qa_config_default(zf_qa_config_t *c)
{
    memset(c, 0, sizeof *c);
    zf_config_default(&c->alg);
    c->reference = true;
    snprintf(c->label, sizeof c->label, "sample");
    c->plot_roi = -1;
}

int zf_qa_new(zf_qa_t **out, const zf_qa_config_t *cfg, tusk_error_t *err)
{
    *out = NULL;
    int st = zf_config_check(&cfg->alg, err);
    if (st != TUSK_OK)
        return st;
    zf_qa_t *q = calloc(1, sizeof *q);
    if (!q)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    q->cfg = *cfg;
    q->cfg.label[sizeof q->cfg.label - 1] = '\0';
    for (int m = ZF_PAIRS; m <= ZF_TRIPLETS && cfg->reference; m++) {
        zf_config_t c = cfg->alg;
        c.mode = (enum zf_mode)m;
        c.precision = ZF_PREC_DOUBLE;
        if ((st = zf_ref_new(&q->ref[m], &c, err)) != TUSK_OK) {
            zf_qa_destroy(&q);
            return st;
        }
    }
    *out = q;
    return TUSK_OK;
}

void zf_qa_destroy(zf_qa_t **qa)
{
    if (!qa || !*qa)
        return;
    zf_qa_t *q = *qa;
    for (int m = 0; m < 3; m++)
        zf_ref_destroy(&q->ref[m]);
    for (size_t i = 0; i < q->n_pend; i++)
        free(q->pend[i].pt);
    free(q->pend);
    free(q->res);
    free(q->rows);
    free(q->plot_pt);
    free(q->truth);
    free(q);
    *qa = NULL;
}

static pending_t *find(zf_qa_t *q, uint32_t event, tusk_error_t *err, int *st)
{
    pending_t *p = tusk_grow_find(&q->pend, &q->n_pend, &q->cap_pend, sizeof *q->pend, event);
    if (!p)
        *st = tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    return p;
}

static void drop(zf_qa_t *q, pending_t *p)
{
    free(p->pt);
    tusk_grow_drop(q->pend, &q->n_pend, sizeof *q->pend, (size_t)(p - q->pend));
}

/* A RoI with vertex and truth: its result. */
static int complete(zf_qa_t *q, pending_t *p, tusk_error_t *err)
{
    const adf_zvertex_t *zv = &p->zv;
    if (zv->mode != ZF_PAIRS && zv->mode != ZF_TRIPLETS)
        return tusk_error_set(err, TUSK_EINVAL, "RoI %u: data:zvertex of mode %u", (unsigned)p->event, zv->mode);
    zf_config_t c = q->cfg.alg;
    c.mode = (enum zf_mode)zv->mode;
    if (zv->settings != zf_config_digest(&c))
        return tusk_error_set(err, TUSK_EINVAL,
                              "RoI %u: the z-finder ran with other settings than this analysis (digest 0x%08X, here "
                              "0x%08X): give both the same z-finder keys",
                              (unsigned)p->event, (unsigned)zv->settings, (unsigned)zf_config_digest(&c));
    if (tusk_grow(&q->res, &q->cap_res, q->n_res + 1, sizeof *q->res) != 0)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    result_t *r = &q->res[q->n_res];
    r->event = (uint32_t)p->event;
    r->mode = zv->mode;
    r->precision = zv->precision;
    r->backend = zv->backend;
    r->vertices = zv->n_vertices;
    r->z0 = zv->n_vertices ? zv->vertex[0].z0 : NAN;
    r->z_true = p->z_true;
    r->z_ref = NAN;
    if (q->cfg.reference && p->have_sp) {
        zf_roi_t roi = {(uint32_t)p->event, 0, p->phi_min, p->phi_width, p->n, p->pt};
        zf_result_t rr;
        int st = zf_ref_roi(q->ref[zv->mode], &roi, &rr, err);
        if (st != TUSK_OK)
            return st;
        if (rr.n_vertices)
            r->z_ref = rr.vertex[0].z0;
    }
    q->n_res++;
    return TUSK_OK;
}

/* A RoI's frame of a type it had already. */
static int second(const adf_frame_t *f, tusk_error_t *err)
{
    return tusk_error_set(err, TUSK_EINVAL, "RoI %u: a second %s (at offset %llu): RoI numbers must be unique",
                          (unsigned)f->key.event, adf_type_name(f->key.type), (unsigned long long)f->offset);
}

static int on_points(zf_qa_t *q, const adf_frame_t *f, tusk_error_t *err)
{
    adf_idsp_t sp;
    adf_error_t e;
    if (adf_idsp_decode(f, &sp, &e) != ADF_OK)
        return tusk_error_set(err, TUSK_EINVAL, "%s", e.message);
    bool plot = q->cfg.plot_roi >= 0 && (uint64_t)q->cfg.plot_roi == f->key.event;
    int st = TUSK_OK;
    pending_t *p = find(q, f->key.event, err, &st);
    if (!p)
        return st;
    if (p->have_sp)
        return second(f, err);
    p->have_sp = true;
    p->phi_min = sp.phi_min;
    p->phi_width = sp.phi_width;
    p->n = sp.n_points;
    if (q->cfg.reference || plot) {
        if (!(p->pt = malloc((sp.n_points ? sp.n_points : 1) * sizeof *p->pt)))
            return tusk_error_set(err, TUSK_ENOMEM, "out of memory (%u spacepoints)", (unsigned)sp.n_points);
        for (uint32_t i = 0; i < sp.n_points; i++)
            adf_idsp_point(&sp, i, &p->pt[i]);
    }
    if (plot && !q->have_plot) {
        if (!(q->plot_pt = malloc((sp.n_points ? sp.n_points : 1) * sizeof *q->plot_pt)))
            return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
        memcpy(q->plot_pt, p->pt, sp.n_points * sizeof *p->pt);
        q->plot_roi = (zf_roi_t){f->key.event, f->key.timestamp, sp.phi_min, sp.phi_width, sp.n_points, q->plot_pt};
        q->plot_z_true = NAN;
        q->have_plot = true;
    }
    return TUSK_OK;
}

static int try_complete(zf_qa_t *q, pending_t *p, tusk_error_t *err)
{
    if (!p->have_zv || !p->have_truth)
        return TUSK_OK;
    int st = complete(q, p, err);
    if (st == TUSK_OK)
        drop(q, p);
    return st;
}

static int on_frame(void *ctx, const adf_frame_t *f, tusk_error_t *err)
{
    zf_qa_t *q = ctx;
    adf_error_t e;
    pending_t *p;
    int st = TUSK_OK;
    switch (f->key.type) {
    case ADF_TYPE_DATA_ID_SPACEPOINTS: return on_points(q, f, err);
    case ADF_TYPE_DATA_ZVERTEX: {
        adf_zvertex_t zv;
        if (adf_zvertex_decode(f, &zv, &e) != ADF_OK)
            return tusk_error_set(err, TUSK_EINVAL, "%s", e.message);
        if (!(p = find(q, f->key.event, err, &st)))
            return st;
        if (p->have_zv)
            return second(f, err);
        p->zv = zv;
        p->have_zv = true;
        return try_complete(q, p, err);
    }
    case ADF_TYPE_DATA_ID_TRUTH:
        if (!q->truth && !(q->truth = malloc(sizeof *q->truth)))
            return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
        if (adf_idtruth_decode(f, q->truth, &e) != ADF_OK)
            return tusk_error_set(err, TUSK_EINVAL, "%s", e.message);
        if (q->have_plot && q->plot_roi.event == f->key.event)
            q->plot_z_true = q->truth->z_signal;
        if (!(p = find(q, f->key.event, err, &st)))
            return st;
        if (p->have_truth)
            return second(f, err);
        p->z_true = q->truth->z_signal;
        p->have_truth = true;
        if (!p->have_zv) {
            /* the truth comes after the vertex (the z-finder writes the
             * vertex right after the spacepoints): none came for it */
            q->truth_only++;
            drop(q, p);
            return TUSK_OK;
        }
        return try_complete(q, p, err);
    default: return TUSK_OK;
    }
}

int zf_qa_feed(zf_qa_t *q, const void *buf, size_t size, uint64_t base, tusk_error_t *err)
{
    if (q->finished)
        return tusk_error_set(err, TUSK_EINVAL, "z-finder analysis: data after zf_qa_finish");
    return adf_frames_read(buf, size, base, ADF_FRAMES_ALL, on_frame, q, err);
}

static int by_group(const void *a, const void *b)
{
    const result_t *x = a, *y = b;
    if (x->mode != y->mode)
        return x->mode - y->mode;
    if (x->precision != y->precision)
        return x->precision - y->precision;
    if (x->backend != y->backend)
        return x->backend - y->backend;
    return x->event < y->event ? -1 : x->event > y->event;
}

/* mean and standard deviation, not a number without values */
static void mean_std(const tusk_moments_t *m, double *mean, double *std)
{
    *mean = m->n > 0 ? tusk_moments_mean(m) : NAN;
    *std = m->n > 0 ? tusk_moments_std(m) : NAN;
}

int zf_qa_finish(zf_qa_t *q, tusk_error_t *err)
{
    if (q->finished)
        return TUSK_OK;
    q->finished = true;
    q->unmatched = q->n_pend + q->truth_only;
    if (q->n_res > 1)
        qsort(q->res, q->n_res, sizeof *q->res, by_group);
    for (size_t i = 1; i < q->n_res; i++)
        if (!by_group(&q->res[i - 1], &q->res[i]))
            return tusk_error_set(err, TUSK_EINVAL, "RoI %u came twice with the same mode, precision and backend",
                                  (unsigned)q->res[i].event);
    if (!(q->rows = calloc(q->n_res ? q->n_res : 1, sizeof *q->rows)))
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    for (size_t i = 0; i < q->n_res;) {
        size_t j = i;
        zf_qa_row_t *row = &q->rows[q->n_rows++];
        snprintf(row->label, sizeof row->label, "%s", q->cfg.label);
        row->mode = q->res[i].mode;
        row->precision = q->res[i].precision;
        row->backend = q->res[i].backend;
        tusk_moments_t t = {0}, ref = {0}, core = {0}; /* |dz| against truth, reference; truth within 1 mm */
        for (; j < q->n_res && q->res[j].mode == row->mode && q->res[j].precision == row->precision &&
               q->res[j].backend == row->backend;
             j++) {
            const result_t *r = &q->res[j];
            row->rois++;
            if (!r->vertices)
                continue;
            row->found++;
            double dt = fabs(r->z0 - r->z_true);
            tusk_moments_add(&t, dt);
            if (dt < 1.0) {
                row->within_1mm++;
                tusk_moments_add(&core, dt);
            }
            if (!isnan(r->z_ref)) {
                row->ref_rois++;
                tusk_moments_add(&ref, fabs(r->z0 - r->z_ref));
            }
        }
        mean_std(&t, &row->true_mean, &row->true_std);
        mean_std(&ref, &row->ref_mean, &row->ref_std);
        mean_std(&core, &row->core_mean, &row->core_std);
        i = j;
    }
    return TUSK_OK;
}

size_t zf_qa_rows(const zf_qa_t *q, const zf_qa_row_t **rows)
{
    *rows = q->rows;
    return q->n_rows;
}

uint64_t zf_qa_unmatched(const zf_qa_t *q)
{
    return q->unmatched;
}

void zf_qa_print(const zf_qa_t *q, FILE *out)
{
    fprintf(out, "%-10s %-9s %-17s %6s %6s  %-21s %-23s %9s  %-19s\n", "sample", "mode", "code", "RoIs", "found",
            "|dz| truth (mm)", "|dz| double ref (mm)", "< 1 mm", "|dz| of those (mm)");
    for (size_t i = 0; i < q->n_rows; i++) {
        const zf_qa_row_t *r = &q->rows[i];
        char code[32], t[40], ref[40], core[40];
        snprintf(code, sizeof code, "%s %s", zf_backend_name(r->backend), zf_precision_name(r->precision));
        snprintf(t, sizeof t, "%.3f +- %.3f", r->true_mean, r->true_std);
        if (r->ref_rois)
            snprintf(ref, sizeof ref, "%.2g +- %.2g", r->ref_mean, r->ref_std);
        else
            snprintf(ref, sizeof ref, "-");
        snprintf(core, sizeof core, "%.3f +- %.3f", r->core_mean, r->core_std);
        fprintf(out, "%-10s %-9s %-17s %6llu %6llu  %-21s %-23s %8.1f%%  %-19s\n", r->label, zf_mode_name(r->mode),
                code, (unsigned long long)r->rois, (unsigned long long)r->found, t, ref,
                tusk_pct(r->within_1mm, r->rois), core);
    }
    if (q->unmatched)
        fprintf(out, "%llu RoIs had a vertex without truth or truth without a vertex (left out)\n",
                (unsigned long long)q->unmatched);
}

static void write_summary(FILE *fp, const void *ctx, bool svg)
{
    const zf_qa_t *q = ctx;
    (void)svg;
    fprintf(fp, "sample,mode,precision,backend,rois,found,true_mean_mm,true_std_mm,ref_rois,ref_mean_mm,ref_std_mm,"
                "within_1mm,fraction_1mm,core_mean_mm,core_std_mm\n");
    for (size_t i = 0; i < q->n_rows; i++) {
        const zf_qa_row_t *r = &q->rows[i];
        fprintf(fp, "%s,%s,%s,%s,%llu,%llu,%.6g,%.6g,%llu,%.6g,%.6g,%llu,%.6f,%.6g,%.6g\n", r->label,
                zf_mode_name(r->mode), zf_precision_name(r->precision), zf_backend_name(r->backend),
                (unsigned long long)r->rois, (unsigned long long)r->found, r->true_mean, r->true_std,
                (unsigned long long)r->ref_rois, r->ref_mean, r->ref_std, (unsigned long long)r->within_1mm,
                r->rois ? (double)r->within_1mm / (double)r->rois : 0.0, r->core_mean, r->core_std);
    }
}

static void write_rois(FILE *fp, const void *ctx, bool svg)
{
    const zf_qa_t *q = ctx;
    (void)svg;
    fprintf(fp, "sample,roi,mode,precision,backend,vertices,z0_mm,z_true_mm,z_ref_mm\n");
    for (size_t i = 0; i < q->n_res; i++) {
        const result_t *r = &q->res[i];
        fprintf(fp, "%s,%u,%s,%s,%s,%u,%.9g,%.9g,%.9g\n", q->cfg.label, (unsigned)r->event, zf_mode_name(r->mode),
                zf_precision_name(r->precision), zf_backend_name(r->backend), r->vertices, r->z0, r->z_true, r->z_ref);
    }
}

/* The histograms of the RoI asked for (zf_plot_roi), when one was. */
static int write_plot(const void *ctx, const char *dir, const char *format, tusk_error_t *err)
{
    const zf_qa_t *q = ctx;
    if (q->cfg.plot_roi < 0)
        return TUSK_OK;
    if (!q->have_plot)
        return tusk_error_set(err, TUSK_EINVAL, "no RoI %lld came, so its histograms cannot be drawn",
                              (long long)q->cfg.plot_roi);
    char stem[64], title[160];
    snprintf(stem, sizeof stem, "histograms-roi%u", (unsigned)q->plot_roi.event);
    snprintf(title, sizeof title, "%s, RoI %u: %u spacepoints, true vertex at %.2f mm", q->cfg.label,
             (unsigned)q->plot_roi.event, (unsigned)q->plot_roi.n, q->plot_z_true);
    return zf_plot_roi(&q->cfg.alg, &q->plot_roi, q->plot_z_true, title, dir, stem, format, err);
}

int zf_qa_write(const zf_qa_t *q, const char *dir, bool plot, const char *format, tusk_error_t *err)
{
    static const tusk_report_file_t files[] = {{"summary.csv", write_summary}, {"rois.csv", write_rois}};
    return tusk_report_write(dir, files, 2, q, plot ? write_plot : NULL, format, err);
}
