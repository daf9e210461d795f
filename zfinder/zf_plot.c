/* zf_plot.c - a RoI's z histograms, pair mode over triplet mode, as the
 * seed's Figs 3.2-3.4 show them (tusk/zfinder.h). Data and script are
 * written beside the picture; gnuplot runs through base/gnuplot.h. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/gnuplot.h"
#include "zf_private.h"

static char *join(const char *dir, const char *stem, const char *ext)
{
    size_t n = strlen(dir) + strlen(stem) + strlen(ext) + 3;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s.%s", dir, stem, ext);
    return p;
}

/* The nHisto of one mode (double precision) into h. */
static int histogram(const zf_config_t *cfg, int mode, const zf_roi_t *roi, uint32_t *h, zf_result_t *res,
                     tusk_error_t *err)
{
    zf_config_t c = *cfg;
    c.mode = (enum zf_mode)mode;
    c.precision = ZF_PREC_DOUBLE;
    zf_ref_t *ref = NULL;
    int st = zf_ref_new(&ref, &c, err);
    if (st == TUSK_OK && (st = zf_ref_roi(ref, roi, res, err)) == TUSK_OK)
        memcpy(h, zf_ref_nhisto(ref), zf_config_bins(&c) * sizeof *h);
    zf_ref_destroy(&ref);
    return st;
}

int zf_plot_roi(const zf_config_t *cfg, const zf_roi_t *roi, double z_true, const char *title, const char *dir,
                const char *stem, const char *format, tusk_error_t *err)
{
    bool svg;
    int st = tusk_gnuplot_format(format, &svg, err);
    if (st != TUSK_OK || (st = zf_config_check(cfg, err)) != TUSK_OK)
        return st;
    unsigned bins = zf_config_bins(cfg);
    uint32_t *hp = calloc(bins, sizeof *hp), *ht = calloc(bins, sizeof *ht);
    char *dat = join(dir, stem, "dat"), *gp = join(dir, stem, "gp"), *pic = join(dir, stem, svg ? "svg" : "png");
    char *gpname = NULL, *logname = NULL;
    zf_result_t rp, rt;
    FILE *fp = NULL;
    locale_t c_loc = (locale_t)0, prev = (locale_t)0;
    if (!hp || !ht || !dat || !gp || !pic) {
        st = tusk_error_set(err, TUSK_ENOMEM, "out of memory");
        goto done;
    }
    if ((st = tusk_gnuplot_check_path("picture", pic, err)) || (st = histogram(cfg, ZF_PAIRS, roi, hp, &rp, err)) ||
        (st = histogram(cfg, ZF_TRIPLETS, roi, ht, &rt, err)))
        goto done;
    c_loc = tusk_c_numeric_begin(&prev);
    if (!(fp = fopen(dat, "w"))) {
        st = tusk_error_set(err, TUSK_EIO, "%s: %s", dat, strerror(errno));
        goto done;
    }
    fprintf(fp, "# RoI %u: %u spacepoints; z (mm, bin centre), nHisto pairs, nHisto triplets\n", (unsigned)roi->event,
            (unsigned)roi->n);
    for (unsigned b = 0; b < bins; b++)
        fprintf(fp, "%.6g %u %u\n", cfg->z_min_mm + (b + 0.5) * cfg->bin_mm, hp[b], ht[b]);
    if (fclose(fp) != 0) {
        fp = NULL;
        st = tusk_error_set(err, TUSK_EIO, "%s: cannot write", dat);
        goto done;
    }
    if (!(fp = fopen(gp, "w"))) {
        st = tusk_error_set(err, TUSK_EIO, "%s: %s", gp, strerror(errno));
        goto done;
    }
    tusk_gnuplot_head(fp, stem, "zfinder/zf_plot.c", dat + strlen(dir) + 1 /* STEM.dat */, svg, 900, 700);
    fprintf(fp, "set multiplot layout 2,1 title ");
    tusk_gnuplot_quote(fp, title ? title : "");
    fprintf(fp, "\nset style fill solid 0.6 noborder\nset xlabel 'z_V (mm)'\nset ylabel 'entries'\n"
                "set xrange [%g:%g]\nset yrange [0:*]\nset key top left\n",
            cfg->z_min_mm, cfg->z_min_mm + bins * cfg->bin_mm);
    if (isfinite(z_true))
        fprintf(fp, "set arrow 1 from %.6g, graph 0 to %.6g, graph 1 nohead dashtype 2 lc rgb 'red'\n", z_true,
                z_true);
    char zp[48] = "none", zt[48] = "none";
    if (rp.n_vertices)
        snprintf(zp, sizeof zp, "%.2f mm", rp.vertex[0].z0);
    if (rt.n_vertices)
        snprintf(zt, sizeof zt, "%.2f mm", rt.vertex[0].z0);
    fprintf(fp, "set title 'pairs: %llu pairs, %llu in the histogram; z0 %s'\n", (unsigned long long)rp.pairs,
            (unsigned long long)rp.entries, zp);
    fprintf(fp, "plot '%s.dat' using 1:2 with boxes lc rgb '#3060c0' title 'nHisto, pairs', NaN with lines dashtype 2 "
                "lc rgb 'red' title 'true vertex'\n",
            stem);
    fprintf(fp, "set title 'triplets: %llu in the histogram; z0 %s'\n", (unsigned long long)rt.entries, zt);
    fprintf(fp, "plot '%s.dat' using 1:3 with boxes lc rgb '#208040' title 'nHisto, triplets', NaN with lines "
                "dashtype 2 lc rgb 'red' title 'true vertex'\nunset multiplot\n",
            stem);
    if (fclose(fp) != 0) {
        fp = NULL;
        st = tusk_error_set(err, TUSK_EIO, "%s: cannot write", gp);
        goto done;
    }
    fp = NULL;
    gpname = join("", stem, "gp");
    logname = join("", stem, "log");
    if (!gpname || !logname) {
        st = tusk_error_set(err, TUSK_ENOMEM, "out of memory");
        goto done;
    }
    const char *pictures[] = {pic, NULL};
    /* join("", ...) gave "/STEM.EXT": the names inside DIR are after the slash */
    st = tusk_gnuplot_run(dir, gpname + 1, logname + 1, pictures, err);
done:
    if (fp)
        fclose(fp);
    if (c_loc != (locale_t)0)
        tusk_c_numeric_end(c_loc, prev);
    free(hp);
    free(ht);
    free(dat);
    free(gp);
    free(pic);
    free(gpname);
    free(logname);
    return st;
}
