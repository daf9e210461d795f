/* peaks.c - peak analysis: side-band background, net area, Gaussian fit,
 * efficiency and peak-to-total; summary.csv and the summary table.
 *
 * Peak region: the bins whose centre lies within line +- window. Side
 * bands: the bins whose centre lies in [line - 2 window, line - window)
 * and (line + window, line + 2 window]. The background is a straight line
 * fitted by least squares to the side-band counts (unweighted: Poisson
 * weights 1/n pull a line down on sparse data); its sum over the region is
 * subtracted from the region's counts to give the net area. Its error adds
 * the gross counts and the variance of the background sum (the mean side
 * band carries sum(side)/n_side^2 per bin, times n_region^2).
 *
 * Position and FWHM come from a fit of a Gaussian integrated over each bin
 * (amplitude, centre, sigma; the background line fixed) to the region, by
 * Levenberg-Marquardt with Poisson weights taken from the model of the
 * previous step. Bin integration matters: a 2 keV FWHM in 1 keV bins is
 * broadened by about 10 % when taken at the bin centres. Start: the
 * centroid and second moment of the net counts. When the fit does not
 * converge, or gives a sigma under a fifth of a bin (FWHM < 0.47 bin: not
 * resolved, e.g. a line that fills one bin, as in the truth spectrum) or a
 * centre outside the region,
 * the centroid stands for the position and the FWHM is not available. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tusk/adf_key.h>
#include <tusk/spectrum.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

#define FIT_ITERATIONS 100
#define SQRT2 1.4142135623730951
#define FWHM_PER_SIGMA 2.3548200450309493

int spec_peak_analyse(const uint64_t *counts, size_t nbins, double bin_kev, double line_kev, double window_kev,
                      spec_peak_t *peak, tusk_error_t *err)
{
    if (!counts || !peak || !(bin_kev > 0) || !(window_kev > 0))
        return tusk_error_set(err, TUSK_EINVAL, "spec_peak_analyse: bad argument");
    memset(peak, 0, sizeof *peak);
    peak->line_kev = line_kev;
    peak->position_kev = peak->fwhm_kev = NAN;
    /* Bin b's centre is (b + 0.5) bin_kev. */
    double lo_c = (line_kev - window_kev) / bin_kev - 0.5, hi_c = (line_kev + window_kev) / bin_kev - 0.5;
    long r0 = (long)ceil(lo_c), r1 = (long)floor(hi_c);
    long l0 = (long)ceil((line_kev - 2 * window_kev) / bin_kev - 0.5), l1 = (long)ceil(lo_c) - 1;
    long h0 = (long)floor(hi_c) + 1, h1 = (long)floor((line_kev + 2 * window_kev) / bin_kev - 0.5);
    if (r1 < r0 || l1 < l0 || h1 < h0)
        return tusk_error_set(err, TUSK_EINVAL, "peak at %g keV: the window (+-%g keV) holds no whole bin of %g keV",
                              line_kev, window_kev, bin_kev);
    if (l0 < 0 || h1 >= (long)nbins)
        return tusk_error_set(err, TUSK_EINVAL,
                              "peak at %g keV: the side bands (+-%g keV) leave the spectrum (0-%g keV)", line_kev,
                              2 * window_kev, (double)nbins * bin_kev);

    /* Straight background through the side bands, x relative to the line. */
    double sx = 0, sy = 0, sxx = 0, sxy = 0, n = 0;
    for (long b = l0; b <= h1; b++) {
        if (b >= r0 && b <= r1)
            continue;
        double x = (b + 0.5) * bin_kev - line_kev, y = (double)counts[b];
        sx += x;
        sy += y;
        sxx += x * x;
        sxy += x * y;
        n++;
    }
    double den = n * sxx - sx * sx;
    double slope = den > 0 ? (n * sxy - sx * sy) / den : 0.0;
    double icpt = (sy - slope * sx) / n;

    size_t nr = (size_t)(r1 - r0 + 1);
    double *y = malloc(nr * sizeof *y), *bg = malloc(nr * sizeof *bg);
    if (!y || !bg) {
        free(y);
        free(bg);
        return tusk_error_set(err, TUSK_ENOMEM, "spectra: out of memory");
    }
    double gross = 0, bsum = 0, w = 0, wx = 0, wxx = 0;
    for (size_t i = 0; i < nr; i++) {
        long b = r0 + (long)i;
        double x = (b + 0.5) * bin_kev;
        y[i] = (double)counts[b];
        bg[i] = icpt + slope * (x - line_kev);
        gross += y[i];
        bsum += bg[i];
        double net = y[i] - bg[i];
        if (net > 0) {
            w += net;
            wx += net * x;
            wxx += net * x * x;
        }
    }
    peak->area = gross - bsum;
    peak->background = bsum;
    peak->area_error = sqrt(gross + (double)nr * (double)nr * (sy > 0 ? sy : 0) / (n * n));
    if (!(w > 0) || !(peak->area > 0)) {
        free(y);
        free(bg);
        return TUSK_OK;
    }
    double mu = wx / w;
    peak->position_kev = mu;
    double var = wxx / w - mu * mu - bin_kev * bin_kev / 12.0;
    double sigma = sqrt(var > 0.09 * bin_kev * bin_kev ? var : 0.09 * bin_kev * bin_kev);
    if (sigma > window_kev / 2)
        sigma = window_kev / 2;

    /* Levenberg-Marquardt on (A, mu, sigma). */
    double p[3] = {peak->area, mu, sigma}, lambda = 1e-3;
    bool converged = false;
    for (int it = 0; it < FIT_ITERATIONS && !converged; it++) {
        double jtj[3][3] = {{0}}, jtr[3] = {0}, chi = 0;
        for (size_t i = 0; i < nr; i++) {
            double lo = (r0 + (long)i) * bin_kev, hi = lo + bin_kev;
            double zl = (lo - p[1]) / p[2], zh = (hi - p[1]) / p[2];
            double frac = 0.5 * (erf(zh / SQRT2) - erf(zl / SQRT2));
            double gl = exp(-0.5 * zl * zl) / sqrt(2 * M_PI), gh = exp(-0.5 * zh * zh) / sqrt(2 * M_PI);
            double m = bg[i] + p[0] * frac;
            double wt = 1.0 / (m > 1.0 ? m : 1.0);
            double d[3] = {frac, p[0] * (gl - gh) / p[2], p[0] * (zl * gl - zh * gh) / p[2]};
            double r = y[i] - m;
            chi += wt * r * r;
            for (int a = 0; a < 3; a++) {
                jtr[a] += wt * d[a] * r;
                for (int c = 0; c < 3; c++)
                    jtj[a][c] += wt * d[a] * d[c];
            }
        }
        /* Try steps with growing damping until chi2 drops. */
        bool stepped = false;
        for (int tries = 0; tries < 30; tries++) {
            double a[3][4];
            for (int r = 0; r < 3; r++) {
                for (int c = 0; c < 3; c++)
                    a[r][c] = jtj[r][c] * (r == c ? 1.0 + lambda : 1.0);
                a[r][3] = jtr[r];
            }
            /* Gauss-Jordan with partial pivoting. */
            bool singular = false;
            for (int c = 0; c < 3 && !singular; c++) {
                int piv = c;
                for (int r = c + 1; r < 3; r++)
                    if (fabs(a[r][c]) > fabs(a[piv][c]))
                        piv = r;
                if (!(fabs(a[piv][c]) > 1e-300)) {
                    singular = true;
                    break;
                }
                for (int k = 0; k < 4; k++) {
                    double t = a[c][k];
                    a[c][k] = a[piv][k];
                    a[piv][k] = t;
                }
                for (int r = 0; r < 3; r++) {
                    if (r == c)
                        continue;
                    double f = a[r][c] / a[c][c];
                    for (int k = c; k < 4; k++)
                        a[r][k] -= f * a[c][k];
                }
            }
            if (singular)
                break;
            double q[3];
            for (int k = 0; k < 3; k++)
                q[k] = p[k] + a[k][3] / a[k][k];
            if (!(q[2] > 1e-3 * bin_kev) || !(q[0] > 0)) {
                lambda *= 10;
                continue;
            }
            double chi_new = 0;
            for (size_t i = 0; i < nr; i++) {
                double lo = (r0 + (long)i) * bin_kev, hi = lo + bin_kev;
                double m = bg[i] + q[0] * 0.5 * (erf((hi - q[1]) / (q[2] * SQRT2)) - erf((lo - q[1]) / (q[2] * SQRT2)));
                /* the same weights as this step's chi2 */
                double m0 = bg[i] + p[0] * 0.5 * (erf((hi - p[1]) / (p[2] * SQRT2)) - erf((lo - p[1]) / (p[2] * SQRT2)));
                double wt = 1.0 / (m0 > 1.0 ? m0 : 1.0);
                chi_new += wt * (y[i] - m) * (y[i] - m);
            }
            if (chi_new <= chi) {
                double rel = 0;
                for (int k = 0; k < 3; k++)
                    rel = fmax(rel, fabs(q[k] - p[k]) / fmax(fabs(p[k]), 1e-6 * bin_kev));
                memcpy(p, q, sizeof p);
                lambda = fmax(lambda / 10, 1e-9);
                stepped = true;
                if (rel < 1e-7)
                    converged = true;
                break;
            }
            lambda *= 10;
        }
        if (!stepped)
            converged = true; /* no step improves: at the minimum (or stuck, checked below) */
    }
    free(y);
    free(bg);
    if (converged && p[2] >= 0.2 * bin_kev && fabs(p[1] - line_kev) < window_kev && isfinite(p[1])) {
        peak->fitted = true;
        peak->position_kev = p[1];
        peak->fwhm_kev = FWHM_PER_SIGMA * p[2];
    }
    return TUSK_OK;
}

uint64_t spec_total_counts(const uint64_t *counts, size_t nbins, double bin_kev, double threshold_kev)
{
    uint64_t t = 0;
    for (size_t b = 0; b < nbins; b++)
        if (((double)b + 0.5) * bin_kev >= threshold_kev)
            t += counts[b];
    return t;
}

int spec_summary(const spec_t *spec, spec_row_t *rows, size_t *n_rows, tusk_error_t *err)
{
    const spec_config_t *c = spec_config(spec);
    size_t nbins = spec_bins(spec), n = 0;
    static const spec_kind_t kinds[] = {SPEC_SINGLES, SPEC_ADDBACK, SPEC_TRACKED};
    for (size_t k = 0; k < 3; k++) {
        const uint64_t *h = spec_histogram(spec, kinds[k]);
        if (spec_total_counts(h, nbins, c->bin_kev, 0.0) == 0)
            continue;
        uint64_t total = spec_total_counts(h, nbins, c->bin_kev, c->threshold_kev);
        size_t first = n;
        double sum = 0;
        for (unsigned l = 0; l < c->n_lines; l++) {
            spec_row_t *r = &rows[n++];
            r->kind = kinds[k];
            int st = spec_peak_analyse(h, nbins, c->bin_kev, c->lines[l], c->peak_window_kev, &r->peak, err);
            if (st) {
                tusk_error_prefix(err, "%s spectrum", spec_kind_name(kinds[k]));
                return st;
            }
            r->total_counts = total;
            if (spec_emitted(spec, l, &r->emitted) && r->emitted > 0)
                r->efficiency = r->peak.area / r->emitted;
            else
                r->emitted = r->efficiency = NAN;
            sum += r->peak.area;
        }
        for (size_t i = first; i < n; i++)
            rows[i].peak_to_total = total > 0 ? sum / (double)total : NAN;
    }
    *n_rows = n;
    return TUSK_OK;
}

/* A number, or an empty field when not available. */
static void put_num(FILE *fp, int precision, double v)
{
    fputc(',', fp);
    if (isfinite(v))
        fprintf(fp, "%.*f", precision, v);
}

int spec_write_summary(const spec_row_t *rows, size_t n_rows, const char *path, tusk_error_t *err)
{
    FILE *fp = fopen(path, "w");
    if (!fp)
        return tusk_error_set(err, TUSK_EIO, "spectra: cannot write %s: %s", path, strerror(errno));
    fputs("spectrum,line_kev,position_kev,fwhm_kev,area,emitted,efficiency,peak_to_total,total_counts\n", fp);
    for (size_t i = 0; i < n_rows; i++) {
        const spec_row_t *r = &rows[i];
        fprintf(fp, "%s,%.3f", spec_kind_name(r->kind), r->peak.line_kev);
        put_num(fp, 4, r->peak.position_kev);
        put_num(fp, 4, r->peak.fwhm_kev);
        put_num(fp, 1, r->peak.area);
        put_num(fp, 1, r->emitted);
        put_num(fp, 6, r->efficiency);
        put_num(fp, 6, r->peak_to_total);
        fprintf(fp, ",%llu\n", (unsigned long long)r->total_counts);
    }
    int bad = ferror(fp);
    if (fclose(fp) != 0)
        bad = 1;
    if (bad)
        return tusk_error_set(err, TUSK_EIO, "spectra: cannot write %s", path);
    return TUSK_OK;
}

static void put_cell(FILE *fp, double v, int width, int precision)
{
    if (isfinite(v))
        fprintf(fp, "%*.*f", width, precision, v);
    else
        fprintf(fp, "%*s", width, "n/a");
}

void spec_print_report(const spec_t *spec, const spec_row_t *rows, size_t n_rows, FILE *fp)
{
    const spec_config_t *c = spec_config(spec);
    const spec_stats_t *s = spec_stats(spec);
    fprintf(fp,
            "spectra: %llu frames: %llu data:psa (standalone or in %llu event:data:psa composites), %llu data:tracked "
            "(%llu gammas), %llu data:truth (%llu gammas), %llu meta:eof; %llu events for addback, %zu crystals\n",
            (unsigned long long)s->frames, (unsigned long long)s->psa_frames, (unsigned long long)s->composites,
            (unsigned long long)s->tracked_frames, (unsigned long long)s->tracked_gammas,
            (unsigned long long)s->truth_frames, (unsigned long long)s->truth_gammas,
            (unsigned long long)s->eof_frames, (unsigned long long)s->events, spec_crystals(spec));
    if (s->ignored_frames) {
        fprintf(fp, "ignored: %llu frames of other types:", (unsigned long long)s->ignored_frames);
        for (unsigned i = 0; i < s->n_ignored_types && i < 8; i++) {
            const char *name = adf_type_name(s->ignored_type[i]);
            if (name)
                fprintf(fp, " %s %llu", name, (unsigned long long)s->ignored_count[i]);
            else
                fprintf(fp, " 0x%08X %llu", (unsigned)s->ignored_type[i], (unsigned long long)s->ignored_count[i]);
        }
        if (s->n_ignored_types > 8)
            fprintf(fp, " and %u more types", s->n_ignored_types - 8);
        fputc('\n', fp);
    }
    for (int k = 0; k < SPEC_KINDS; k++)
        if (s->underflow[k] || s->overflow[k])
            fprintf(fp, "out of range: %s: %llu below 0 keV or not a number, %llu at or above %g keV\n",
                    spec_kind_name((spec_kind_t)k), (unsigned long long)s->underflow[k],
                    (unsigned long long)s->overflow[k], (double)spec_bins(spec) * c->bin_kev);
    if (c->n_lines == 0) {
        fputs("no lines configured (setting 'lines'): no peak analysis\n", fp);
        return;
    }
    if (c->n_emitted)
        fputs("emitted gammas: from the setting 'emitted'\n", fp);
    else if (s->truth_frames)
        fprintf(fp, "emitted gammas: from %llu data:truth frames, %llu decays\n", (unsigned long long)s->truth_frames,
                (unsigned long long)s->max_decay + 1);
    else
        fputs("emitted gammas: not available (no data:truth frames, no setting 'emitted'): no efficiency\n", fp);
    fprintf(fp, "%-8s %9s %10s %8s %12s %10s %12s %10s %8s %12s\n", "spectrum", "line_keV", "position", "FWHM",
            "area", "+-", "emitted", "efficiency", "P/T", "total");
    for (size_t i = 0; i < n_rows; i++) {
        const spec_row_t *r = &rows[i];
        fprintf(fp, "%-8s %9.2f ", spec_kind_name(r->kind), r->peak.line_kev);
        put_cell(fp, r->peak.position_kev, 10, 3);
        fputc(' ', fp);
        put_cell(fp, r->peak.fwhm_kev, 8, 3);
        fputc(' ', fp);
        put_cell(fp, r->peak.area, 12, 1);
        fputc(' ', fp);
        put_cell(fp, r->peak.area_error, 10, 1);
        fputc(' ', fp);
        put_cell(fp, r->emitted, 12, 1);
        fputc(' ', fp);
        put_cell(fp, r->efficiency, 10, 5);
        fputc(' ', fp);
        put_cell(fp, r->peak_to_total, 8, 4);
        fprintf(fp, " %12llu\n", (unsigned long long)r->total_counts);
    }
    if (n_rows == 0)
        fputs("no counts in singles, addback or tracked: no peak analysis\n", fp);
}
