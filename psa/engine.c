/* engine.c - PSA settings, search batches and the engine: masks, the
 * adaptive mode's coarse sub-grids, the basis aligned point by point at
 * its leading edges, the record check,
 * the analyses' thread pool (see tusk/psa.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/pool.h"
#include "psa_private.h"
#include "tusk/crystal.h"

void psa_config_default(psa_config_t *c)
{
    c->p = 0.3;
    c->mode = PSA_MODE_FULL;
    c->mask = PSA_MASK_NEIGHBOURS;
    c->include_hit = false;
    c->include_core = false;
    /* Crystals of several hits: single hits sharing a crystal 5.36 -> 2.32 mm noise-free, 2 mm basis
     * (docs/validation.md). Its later rounds run on the device with psa_cl (one psa in tusk-run on the
     * H200: 60Co 1.16 M -> 1.11 M records/s; BENCHMARKS.md, issue 22); the CPU backends search about 1.7
     * times the FoM terms. */
    c->residual = true;
    c->refine = 1;
    /* Positions between the grid points (a least-squares fit in the cells around each hit's point, the
     * other hits at theirs): all single-interaction hits, 2 mm basis, 1.72 -> 0.93 mm noise-free, 3.05 ->
     * 2.28 mm at 5 keV (docs/validation.md), but 16 us of host CPU a single hit there (memory-bound: the
     * basis rows around the point), more than the GPU chain's host can give (BENCHMARKS.md): a setting,
     * on in preset = precise, until the fit runs on the device. */
    c->subgrid = false;
    c->t0_search = 0;
    c->threshold_kev = 20.0;
    c->gain = 2.0;
    c->baseline_samples = 8;
    c->pretrigger = 10;
    c->max_kev = 1e5;
    c->threads = 0;
}

static int prefixed(int st, tusk_error_t *err, const char *origin)
{
    if (st != TUSK_OK)
        tusk_error_prefix(err, "%s", origin);
    return st;
}

static int choice(const tusk_params_t *p, const char *key, const char *const *names, int *v, const char *origin,
                  tusk_error_t *err)
{
    const char *s = tusk_params_get(p, key);
    if (!s)
        return TUSK_OK;
    for (int i = 0; names[i]; i++)
        if (strcmp(s, names[i]) == 0) {
            *v = i;
            return TUSK_OK;
        }
    char list[128] = "";
    for (int i = 0; names[i]; i++) {
        size_t used = strlen(list);
        snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", names[i]);
    }
    return tusk_error_set(err, TUSK_EPARAM, "%s: %s = %s: not one of %s", origin, key, s, list);
}

static const char *const config_keys[] = {"preset",   "p",             "mode", "mask",             "include_hit",
                                          "include_core",
                                          "residual", "t0_search",     "threshold_kev",    "gain",
                                          "baseline_samples", "max_kev", "threads",          "pretrigger", "refine",
                                          "subgrid",  NULL};

const char *const *psa_config_keys(void)
{
    return config_keys;
}

/* Reads exactly the keys of config_keys. A preset first, the other keys
 * then override it: default leaves the settings as they are; precise
 * searches with the square mask and the hit's own trace, refines twice
 * and fits the positions between the grid points (docs/validation.md, 2
 * mm basis: all single-interaction hits 0.91 mm noise-free and 1.66 mm
 * at 5 keV, against 1.72 and 3.05, for 2.8 times the FoM terms and the
 * host's fit). */
int psa_config_read(psa_config_t *c, const tusk_params_t *p, const char *origin, tusk_error_t *err)
{
    static const char *const modes[] = {"full", "adaptive", NULL};
    static const char *const masks[] = {"neighbours", "square", "all", NULL};
    static const char *const presets[] = {"default", "precise", NULL};
    int preset = 0, st;
    if ((st = choice(p, "preset", presets, &preset, origin, err)))
        return st;
    if (preset == 1) {
        c->mask = PSA_MASK_SQUARE;
        c->include_hit = true;
        c->refine = 2;
        c->subgrid = true;
    }
    int mode = (int)c->mode, mask = (int)c->mask;
    uint64_t t0 = c->t0_search, nb = c->baseline_samples, th = c->threads, pt = c->pretrigger, rf = c->refine;
    if ((st = prefixed(tusk_params_double(p, "p", c->p, &c->p, err), err, origin)) ||
        (st = choice(p, "mode", modes, &mode, origin, err)) || (st = choice(p, "mask", masks, &mask, origin, err)) ||
        (st = prefixed(tusk_params_bool(p, "include_hit", c->include_hit, &c->include_hit, err), err, origin)) ||
        (st = prefixed(tusk_params_bool(p, "include_core", c->include_core, &c->include_core, err), err, origin)) ||
        (st = prefixed(tusk_params_bool(p, "residual", c->residual, &c->residual, err), err, origin)) ||
        (st = prefixed(tusk_params_bool(p, "subgrid", c->subgrid, &c->subgrid, err), err, origin)) ||
        (st = prefixed(tusk_params_u64(p, "t0_search", t0, &t0, err), err, origin)) ||
        (st = prefixed(tusk_params_double(p, "threshold_kev", c->threshold_kev, &c->threshold_kev, err), err,
                       origin)) ||
        (st = prefixed(tusk_params_double(p, "gain", c->gain, &c->gain, err), err, origin)) ||
        (st = prefixed(tusk_params_u64(p, "baseline_samples", nb, &nb, err), err, origin)) ||
        (st = prefixed(tusk_params_double(p, "max_kev", c->max_kev, &c->max_kev, err), err, origin)) ||
        (st = prefixed(tusk_params_u64(p, "threads", th, &th, err), err, origin)) ||
        (st = prefixed(tusk_params_u64(p, "pretrigger", pt, &pt, err), err, origin)) ||
        (st = prefixed(tusk_params_u64(p, "refine", rf, &rf, err), err, origin)))
        return st;
    if (th > 256)
        return tusk_error_set(err, TUSK_EPARAM, "%s: threads = %llu: at most 256", origin, (unsigned long long)th);
    c->threads = (unsigned)th;
    c->mode = (enum psa_mode)mode;
    c->mask = (enum psa_mask)mask;
    if (!(c->p > 0.0 && c->p <= 4.0))
        return tusk_error_set(err, TUSK_EPARAM, "%s: p = %g: must be in (0, 4]", origin, c->p);
    if (t0 > 8)
        return tusk_error_set(err, TUSK_EPARAM, "%s: t0_search = %llu: at most 8 samples", origin,
                              (unsigned long long)t0);
    if (!(c->threshold_kev >= 0.0 && c->threshold_kev < 1e5))
        return tusk_error_set(err, TUSK_EPARAM, "%s: threshold_kev = %g: must be within 0 and 1e5", origin,
                              c->threshold_kev);
    if (!(c->gain > 0.0 && c->gain < 1e4))
        return tusk_error_set(err, TUSK_EPARAM, "%s: gain = %g: must be positive", origin, c->gain);
    if (!(c->max_kev > c->threshold_kev && c->max_kev <= 1e9))
        return tusk_error_set(err, TUSK_EPARAM, "%s: max_kev = %g: must be above threshold_kev (%g) and at most 1e9",
                              origin, c->max_kev, c->threshold_kev);
    if (nb < 1 || nb > 512)
        return tusk_error_set(err, TUSK_EPARAM, "%s: baseline_samples = %llu: must be 1 to 512", origin,
                              (unsigned long long)nb);
    if (rf > 4)
        return tusk_error_set(err, TUSK_EPARAM, "%s: refine = %llu: at most 4 passes", origin,
                              (unsigned long long)rf);
    if (pt >= ADF_CRYSTAL_MAX_SAMPLES)
        return tusk_error_set(err, TUSK_EPARAM, "%s: pretrigger = %llu: must be below %d (a record's samples)",
                              origin, (unsigned long long)pt, ADF_CRYSTAL_MAX_SAMPLES);
    c->t0_search = (unsigned)t0;
    c->baseline_samples = (unsigned)nb;
    c->pretrigger = (unsigned)pt;
    c->refine = (unsigned)rf;
    return TUSK_OK;
}

/* ---- batches ------------------------------------------------------------------ */

static int grow(psa_batch_t *b, size_t cap)
{
    void *p;
#define GROW(field, count)                                                  \
    if (!(p = realloc(b->field, (count) * sizeof *b->field)))               \
        return -1;                                                          \
    b->field = p;
    GROW(segment, cap)
    GROW(n_channels, cap)
    GROW(channel, cap * PSA_CHANNELS)
    GROW(trace, cap * PSA_CHANNELS * b->samples)
    GROW(best, cap)
    GROW(fom, cap)
    GROW(cand_start, cap + 1)
#undef GROW
    b->cap = cap;
    return 0;
}

int psa_batch_new(psa_batch_t **out, unsigned samples, size_t cap, tusk_error_t *err)
{
    *out = NULL;
    if (samples < 1 || samples > PSA_MAX_SAMPLES)
        return tusk_error_set(err, TUSK_EINVAL, "%u samples per trace: must be 1 to %d", samples, PSA_MAX_SAMPLES);
    psa_batch_t *b = calloc(1, sizeof *b);
    if (!b)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    b->samples = samples;
    if (grow(b, cap ? cap : 64) != 0) {
        psa_batch_destroy(&b);
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory (a batch of %zu problems)", cap);
    }
    b->cand_start[0] = 0;
    *out = b;
    return TUSK_OK;
}

void psa_batch_destroy(psa_batch_t **batch)
{
    if (!batch || !*batch)
        return;
    psa_batch_t *b = *batch;
    free(b->segment);
    free(b->n_channels);
    free(b->channel);
    free(b->trace);
    free(b->best);
    free(b->fom);
    free(b->cand_start);
    free(b->cand);
    free(b);
    *batch = NULL;
}

int psa_batch_reserve(psa_batch_t *b, size_t n)
{
    if (n <= b->cap)
        return 0;
    return grow(b, n > 2 * b->cap ? n : 2 * b->cap);
}

long psa_batch_add(psa_batch_t *b, unsigned segment)
{
    if (b->n == b->cap && grow(b, 2 * b->cap) != 0)
        return -1;
    size_t i = b->n++;
    b->segment[i] = (uint16_t)segment;
    b->n_channels[i] = 0;
    b->best[i] = 0;
    b->fom[i] = INFINITY;
    b->cand_start[i + 1] = b->cand_start[i];
    return (long)i;
}

void psa_batch_clear(psa_batch_t *b)
{
    b->n = 0;
    b->cand_start[0] = 0;
}

/* ---- the engine ------------------------------------------------------------------ */

static void make_masks(psa_engine_t *e)
{
    const unsigned R = e->rings, S = e->sectors;
    for (unsigned s = 0; s < PSA_SEGMENTS; s++) {
        int sec = (int)(s / R), ring = (int)(s % R);
        bool on[PSA_CHANNELS] = {false};
        for (int ds = -1; ds <= 1; ds++)
            for (int dr = -1; dr <= 1; dr++) {
                int r2 = ring + dr, s2 = ((sec + ds) % (int)S + (int)S) % (int)S;
                if (r2 < 0 || r2 >= (int)R)
                    continue;
                /* square (and all): the 3 x 3 block; neighbours: a cross,
                 * plus ring 1's diagonals for a front-ring hit. */
                bool take = e->cfg.mask != PSA_MASK_NEIGHBOURS || ds == 0 || dr == 0 || (ring == 0 && dr == 1);
                if (take)
                    on[s2 * R + r2] = true;
            }
        if (e->cfg.mask == PSA_MASK_ALL)
            for (unsigned t = 0; t < PSA_SEGMENTS; t++)
                on[t] = true;
        on[s] = e->cfg.include_hit;
        on[PSA_CORE] = e->cfg.include_core;
        e->mask_n[s] = 0;
        for (unsigned c = 0; c < PSA_CHANNELS; c++)
            if (on[c])
                e->mask[s][e->mask_n[s]++] = (uint8_t)c;
    }
}

unsigned psa_engine_mask(const psa_engine_t *e, unsigned s, const bool other_hits[PSA_SEGMENTS],
                         uint8_t channels[PSA_CHANNELS], bool *own_trace)
{
    unsigned n = 0, neighbours = 0;
    bool has_s = false;
    for (unsigned j = 0; j < e->mask_n[s]; j++) {
        uint8_t c = e->mask[s][j];
        if (other_hits && c < PSA_SEGMENTS && c != s && other_hits[c])
            continue;
        channels[n++] = c;
        neighbours += c < PSA_SEGMENTS && c != s;
        has_s |= c == s;
    }
    /* Every mask segment is another hit: the hit's own trace, in order. */
    if (neighbours == 0 && !has_s) {
        unsigned k = n;
        while (k > 0 && channels[k - 1] > s) {
            channels[k] = channels[k - 1];
            k--;
        }
        channels[k] = (uint8_t)s;
        n++;
    }
    if (own_trace)
        *own_trace = neighbours == 0;
    return n;
}

unsigned psa_record_check(const psa_config_t *cfg, const adf_crystal_t *rec, char *why, size_t cap)
{
    return psa_energies_check(cfg, rec->segment_energy, rec->core_energy, why, cap);
}

unsigned psa_record_check_view(const psa_config_t *cfg, const adf_crystal_view_t *rec, char *why, size_t cap)
{
    return psa_energies_check(cfg, rec->segment_energy, rec->core_energy, why, cap);
}

unsigned psa_energies_check(const psa_config_t *cfg, const float segment_energy[PSA_SEGMENTS],
                            const float core_energy[ADF_CRYSTAL_CORES], char *why, size_t cap)
{
    for (unsigned c = 0; c < PSA_SEGMENTS + ADF_CRYSTAL_CORES; c++) {
        float v = c < PSA_SEGMENTS ? segment_energy[c] : core_energy[c - PSA_SEGMENTS];
        unsigned bad = !isfinite(v) ? PSA_REJECT_NONFINITE : fabs(v) > cfg->max_kev ? PSA_REJECT_RANGE : 0;
        if (!bad)
            continue;
        if (why && cap) {
            if (c < PSA_SEGMENTS)
                snprintf(why, cap, "segment %u energy %g keV", c, (double)v);
            else
                snprintf(why, cap, "core energy (%s gain) %g keV", c == PSA_SEGMENTS ? "low" : "high", (double)v);
            if (bad == PSA_REJECT_RANGE) {
                size_t used = strlen(why);
                snprintf(why + used, cap - used, " (beyond max_kev = %g)", cfg->max_kev);
            }
        }
        return bad;
    }
    if (why && cap)
        why[0] = '\0';
    return 0;
}

int psa_batch_check(const psa_engine_t *e, const psa_batch_t *b, tusk_error_t *err)
{
    if (b->samples != e->samples)
        return tusk_error_set(err, TUSK_EINVAL, "the batch has %u samples per trace, the basis %u", b->samples,
                              e->samples);
    for (size_t i = 0; i < b->n; i++) {
        unsigned s = b->segment[i];
        if (s >= PSA_SEGMENTS || !e->npoints[s])
            return tusk_error_set(err, TUSK_EINVAL, "problem %zu: segment %u has no basis points", i, s);
        unsigned nch = b->n_channels[i];
        if (nch == 0)
            return tusk_error_set(err, TUSK_EINVAL, "problem %zu (segment %u) has no channel: every point would "
                                  "match with FoM 0", i, s);
        if (nch > PSA_CHANNELS)
            return tusk_error_set(err, TUSK_EINVAL, "problem %zu: %u channels, more than %d", i, nch, PSA_CHANNELS);
        const uint8_t *ch = b->channel + i * PSA_CHANNELS;
        for (unsigned j = 0; j < nch; j++)
            if (ch[j] >= PSA_CHANNELS || (j > 0 && ch[j] <= ch[j - 1]))
                return tusk_error_set(err, TUSK_EINVAL,
                                      "problem %zu: channel %u (number %u of its list) is not a basis channel "
                                      "above the one before",
                                      i, ch[j], j);
    }
    return TUSK_OK;
}

/* The basis, aligned point by point. A point's core signal starts its
 * leading edge (psa_leading_edge, the line through the 10 % and 50 %
 * crossings) `edge` samples after the interaction, and that offset varies
 * from point to point (2 mm AGATA-like basis: standard deviation about 2.3
 * samples, -3 to +15 samples around the mean; late near the front face and
 * at large radius). A measured trace only shows its own leading edge, not
 * the interaction time, so psa_analyse places every trace with its core's
 * leading edge at basis_t0 (the mean edge); here every basis point is
 * shifted the same way, all of its channels by edge - basis_t0
 * (psa_basis_at), so that a measured trace and the point it came from line
 * up whatever the point's own offset, and each point's edge is kept for
 * the hit's time. Done once, when the engine is made: every backend (the
 * reference, the fast search, the OpenCL kernels, which take e->block)
 * searches the aligned blocks, at no cost per event. A point whose core
 * never crosses (none in a generated basis) keeps the mean. */
static int align_basis(psa_engine_t *e, tusk_error_t *err)
{
    const unsigned S = e->samples;
    size_t total = 0, points = 0;
    for (unsigned s = 0; s < PSA_SEGMENTS; s++) {
        total += e->npoints[s] * (size_t)PSA_CHANNELS * S;
        points += e->npoints[s];
    }
    e->aligned = malloc((total + points + 1) * sizeof *e->aligned);
    float *tr = malloc(S * sizeof *tr);
    if (!e->aligned || !tr) {
        free(tr);
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory (the aligned basis: %zu floats)", total + points);
    }
    float *edge = e->aligned + total;
    double sum = 0.0;
    size_t n = 0;
    size_t at = 0;
    for (unsigned s = 0; s < PSA_SEGMENTS; at += e->npoints[s], s++) {
        e->edge[s] = edge + at;
        for (size_t i = 0; i < e->npoints[s]; i++) {
            det_basis_trace(e->basis, s, i, PSA_CORE, tr);
            const double t = psa_leading_edge(tr, S, tr[S - 1]);
            edge[at + i] = (float)t;
            if (isfinite(t)) {
                sum += t;
                n++;
            }
        }
    }
    free(tr);
    if (n == 0)
        return tusk_error_set(err, TUSK_EINVAL, "no basis core trace has a leading edge");
    e->basis_t0 = sum / n;
    float *out = e->aligned;
    at = 0;
    for (unsigned s = 0; s < PSA_SEGMENTS; at += e->npoints[s], s++) {
        const size_t N = e->npoints[s];
        const float *raw = e->block[s];
        float *edges = edge + at;
        for (size_t q = 0; q < N; q++)
            if (!isfinite(edges[q]))
                edges[q] = (float)e->basis_t0;
        for (unsigned c = 0; c < PSA_CHANNELS; c++)
            for (unsigned t = 0; t < S; t++)
                for (size_t q = 0; q < N; q++)
                    out[((size_t)c * S + t) * N + q] =
                        psa_basis_at(raw + (size_t)c * S * N + q, N, S, t + (edges[q] - e->basis_t0));
        e->block[s] = N ? out : NULL;
        out += N * (size_t)PSA_CHANNELS * S;
    }
    return TUSK_OK;
}

/* Residual subtraction and the sub-grid fit read one point's signal at a
 * time: the basis as it is (not aligned), point-major, as much memory as
 * the aligned blocks. The residual's subtraction aligns a row as it reads
 * it (psa_engine_aligned_row), by align_basis' formula. */
static int point_rows(psa_engine_t *e, tusk_error_t *err)
{
    const unsigned S = e->samples;
    size_t total = 0;
    for (unsigned s = 0; s < PSA_SEGMENTS; s++)
        total += e->npoints[s] * (size_t)PSA_CHANNELS * S;
    e->rows = malloc((total ? total : 1) * sizeof *e->rows);
    if (!e->rows)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory (the basis point-major for residual subtraction and "
                              "subgrid: %zu floats)", total);
    float *out = e->rows;
    for (unsigned s = 0; s < PSA_SEGMENTS; s++) {
        const size_t N = e->npoints[s];
        const float *raw = det_basis_block(e->basis, s);
        e->row[s] = out;
        for (size_t q = 0; q < N; q++)
            for (unsigned c = 0; c < PSA_CHANNELS; c++)
                for (unsigned t = 0; t < S; t++)
                    *out++ = raw[((size_t)c * S + t) * N + q];
    }
    return TUSK_OK;
}

void psa_engine_aligned_row(const psa_engine_t *e, unsigned s, uint32_t q, unsigned c, float *out)
{
    const unsigned S = e->samples;
    const float *r = e->row[s] + ((size_t)q * PSA_CHANNELS + c) * S;
    const double shift = (double)e->edge[s][q] - e->basis_t0;
    for (unsigned t = 0; t < S; t++)
        out[t] = psa_basis_at(r, 1, S, t + shift);
}

static int coarse_grids(psa_engine_t *e, tusk_error_t *err)
{
    for (unsigned s = 0; s < PSA_SEGMENTS; s++) {
        e->coarse[s] = malloc((e->npoints[s] ? e->npoints[s] : 1) * sizeof *e->coarse[s]);
        if (!e->coarse[s])
            return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
        size_t n = 0;
        for (size_t i = 0; i < e->npoints[s]; i++) {
            float p[3];
            det_basis_position(e->basis, s, i, p);
            if (!(det_grid_node(e->grid, p[0]) & 1) && !(det_grid_node(e->grid, p[1]) & 1) &&
                !(det_grid_node(e->grid, p[2]) & 1))
                e->coarse[s][n++] = (uint32_t)i;
        }
        if (n == 0 && e->npoints[s]) /* a segment too thin for the sub-grid: all of it */
            for (size_t i = 0; i < e->npoints[s]; i++)
                e->coarse[s][n++] = (uint32_t)i;
        e->coarse_n[s] = n;
    }
    return TUSK_OK;
}

int psa_engine_new(psa_engine_t **out, const det_basis_t *basis, const psa_config_t *cfg, tusk_error_t *err)
{
    *out = NULL;
    const det_basis_shape_t *sh = det_basis_shape(basis);
    if (sh->segments != PSA_SEGMENTS || sh->channels != PSA_CHANNELS)
        return tusk_error_set(err, TUSK_EINVAL, "the basis has %u segments and %u channels; PSA needs %d and %d",
                              sh->segments, sh->channels, PSA_SEGMENTS, PSA_CHANNELS);
    if (sh->samples < 4 || sh->samples > PSA_MAX_SAMPLES)
        return tusk_error_set(err, TUSK_EINVAL, "the basis has %u samples per trace; PSA takes 4 to %d",
                              sh->samples, PSA_MAX_SAMPLES);
    det_config_t dc;
    det_config_default(&dc);
    if (sh->config && det_config_parse(&dc, sh->config, strlen(sh->config), "the basis' crystal", err) != TUSK_OK)
        return err ? err->code : TUSK_EINVAL;
    if (dc.rings * dc.sectors != PSA_SEGMENTS)
        return tusk_error_set(err, TUSK_EINVAL, "the basis' crystal has %u rings x %u sectors, not 36", dc.rings,
                              dc.sectors);
    psa_engine_t *e = calloc(1, sizeof *e);
    if (!e)
        return tusk_error_set(err, TUSK_ENOMEM, "out of memory");
    e->cfg = *cfg;
    e->basis = basis;
    e->samples = sh->samples;
    e->sample_ns = sh->sample_ns;
    e->rings = dc.rings;
    e->sectors = dc.sectors;
    for (unsigned s = 0; s < PSA_SEGMENTS; s++) {
        e->npoints[s] = det_basis_segment_points(basis, s);
        e->block[s] = det_basis_block(basis, s);
    }
    make_masks(e);
    int st = det_grid_new(&e->grid, basis, err);
    if (st == TUSK_OK)
        st = coarse_grids(e, err);
    if (st == TUSK_OK)
        st = align_basis(e, err);
    if (st == TUSK_OK && (cfg->residual || cfg->subgrid))
        st = point_rows(e, err);
    if (st == TUSK_OK && cfg->subgrid)
        st = psa_subgrid_prepare(e, err);
    if (st == TUSK_OK)
        st = psa_job_new(&e->job, e, err);
    if (st != TUSK_OK) {
        psa_engine_destroy(&e);
        return st;
    }
    *out = e;
    return TUSK_OK;
}

void psa_engine_destroy(psa_engine_t **engine)
{
    if (!engine || !*engine)
        return;
    psa_engine_t *e = *engine;
    det_grid_destroy(&e->grid);
    for (unsigned s = 0; s < PSA_SEGMENTS; s++)
        free(e->coarse[s]);
    psa_job_destroy(&e->job);
    tusk_pool_destroy(&e->pool);
    free(e->aligned);
    free(e->rows);
    free(e->gram);
    free(e);
    *engine = NULL;
}

struct tusk_pool *psa_engine_pool(psa_engine_t *e)
{
    if (!e->pool && psa_threads(e->cfg.threads, SIZE_MAX) > 1 &&
        tusk_pool_new(&e->pool, psa_threads(e->cfg.threads, SIZE_MAX), NULL) != TUSK_OK)
        e->pool = NULL;
    return e->pool;
}

const psa_config_t *psa_engine_config(const psa_engine_t *e)
{
    return &e->cfg;
}

const det_basis_t *psa_engine_basis(const psa_engine_t *e)
{
    return e->basis;
}

unsigned psa_engine_samples(const psa_engine_t *e)
{
    return e->samples;
}

void psa_engine_trace(const psa_engine_t *e, unsigned s, size_t i, unsigned channel, float *out)
{
    const size_t N = e->npoints[s];
    for (unsigned t = 0; t < e->samples; t++)
        out[t] = e->block[s][((size_t)channel * e->samples + t) * N + i];
}

double psa_engine_edge(const psa_engine_t *e, unsigned s, size_t i)
{
    return e->edge[s][i];
}

double psa_engine_mean_edge(const psa_engine_t *e)
{
    return e->basis_t0;
}
