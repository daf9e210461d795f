/* tusk-adf - look into ADF files.
 *
 *   tusk-adf dump  [-v] [-n MAX] FILE     one line per frame (-v: payloads)
 *   tusk-adf check [--resync] FILE        validate; exit 1 at the first error
 *   tusk-adf stats FILE                   frames per type, events, time span
 *   tusk-adf gen   [options] -o FILE      write synthetic frames (demo, tests)
 *   tusk-adf diff  [--unordered] A B      compare the frames of two files
 *
 * FILE may be "-" for standard input/output.
 */
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cli.h"
#include "base/exit.h"
#include "base/parse.h"
#include "config.h"
#include "tusk/adf.h"
#include "base/grow.h"

#define PROG "tusk-adf"

static void help(FILE *out)
{
    fprintf(out,
            "  dump  [-v] [-n MAX] FILE   -v decodes payloads; -n: the first MAX frames\n"
            "  check [--resync] FILE      exit 1 on the first error (--resync: report\n"
            "                             all, go on)\n"
            "  stats FILE\n"
            "  diff  [--unordered] A B    --unordered sorts both by event number,\n"
            "                             timestamp, type and bytes first (outputs of\n"
            "                             parallel instances); exit 0 same, 1 different\n"
            "  gen   [-n EVENTS] [--seed S] [--samples N] [--type T] -o FILE\n"
            "                             T is crystal, psa, event-psa, tracked, truth or\n"
            "                             mixed (default: all but truth)\n"
            "\n"
            "FILE may be - for standard input (or output, for gen).\n"
            "\n"
            "Exit status: 0 fine, 1 the data is bad (or differs, for diff), 2 bad usage\n"
            "or an I/O error.\n");
}

static const char *type_label(uint32_t type, char buf[16])
{
    const char *name = adf_type_name(type);
    if (name)
        return name;
    snprintf(buf, 16, "0x%08" PRIX32, type);
    return buf;
}

static adf_file_reader_t *open_input(const char *path, adf_on_error_t policy)
{
    adf_file_options_t opt = {policy, 0, 0};
    adf_error_t err;
    adf_file_reader_t *r = adf_file_reader_open(path, &opt, &err);
    if (!r)
        fprintf(stderr, PROG ": %s\n", err.message);
    return r;
}

/* ---- shared by dump and check: decoding one frame's payload ------------- */

typedef struct decoded {
    adf_crystal_t crystal;
    adf_psa_t psa;
    adf_tracked_t tracked;
    adf_truth_t truth;
    adf_eof_t eof;
    adf_idsp_t idsp;       /* the z-finder's frames (adf_zfinder.h) */
    adf_zvertex_t zvertex;
    adf_idtruth_t idtruth;
    adf_sts_digis_t sts_digis; /* the STS's frames (adf_sts.h) */
    adf_sts_clusters_t sts_clusters;
    adf_sts_hits_t sts_hits;
    adf_sts_truth_t sts_truth;
    adf_ut_raw_t ut_raw; /* the UT's frames (adf_ut.h) */
    adf_velo_tracks_t velo_tracks;
    adf_ut_tracks_t ut_tracks;
    adf_ut_hits_t ut_hits;
    adf_ut_truth_t ut_truth;
    adf_tpc_clusters_t tpc_clusters; /* the TPC's frames (adf_tpc.h) */
    adf_tpc_tracks_t tpc_tracks;
    adf_tpc_truth_t tpc_truth;
} decoded_t;

/* Decode a frame of a known simple type; ADF_OK for types without codec. */
static int decode_payload(const adf_frame_t *f, decoded_t *d, adf_error_t *err)
{
    switch (f->key.type) {
    case ADF_TYPE_DATA_CRYSTAL: return adf_crystal_decode(f, &d->crystal, err);
    case ADF_TYPE_DATA_PSA: return adf_psa_decode(f, &d->psa, err);
    case ADF_TYPE_DATA_TRACKED: return adf_tracked_decode(f, &d->tracked, err);
    case ADF_TYPE_DATA_TRUTH: return adf_truth_decode(f, &d->truth, err);
    case ADF_TYPE_META_EOF: return adf_eof_decode(f, &d->eof, err);
    case ADF_TYPE_DATA_ID_SPACEPOINTS: return adf_idsp_decode(f, &d->idsp, err);
    case ADF_TYPE_DATA_ZVERTEX: return adf_zvertex_decode(f, &d->zvertex, err);
    case ADF_TYPE_DATA_ID_TRUTH: return adf_idtruth_decode(f, &d->idtruth, err);
    case ADF_TYPE_DATA_STS_DIGIS: return adf_sts_digis_decode(f, &d->sts_digis, err);
    case ADF_TYPE_DATA_STS_CLUSTERS: return adf_sts_clusters_decode(f, &d->sts_clusters, err);
    case ADF_TYPE_DATA_STS_HITS: return adf_sts_hits_decode(f, &d->sts_hits, err);
    case ADF_TYPE_DATA_STS_TRUTH: return adf_sts_truth_decode(f, &d->sts_truth, err);
    case ADF_TYPE_DATA_UT_RAW: return adf_ut_raw_decode(f, &d->ut_raw, err);
    case ADF_TYPE_DATA_VELO_TRACKS: return adf_velo_tracks_decode(f, &d->velo_tracks, err);
    case ADF_TYPE_DATA_UT_TRACKS: return adf_ut_tracks_decode(f, &d->ut_tracks, err);
    case ADF_TYPE_DATA_UT_HITS: return adf_ut_hits_decode(f, &d->ut_hits, err);
    case ADF_TYPE_DATA_UT_TRUTH: return adf_ut_truth_decode(f, &d->ut_truth, err);
    case ADF_TYPE_DATA_TPC_CLUSTERS: return adf_tpc_clusters_decode(f, &d->tpc_clusters, err);
    case ADF_TYPE_DATA_TPC_TRACKS: return adf_tpc_tracks_decode(f, &d->tpc_tracks, err);
    case ADF_TYPE_DATA_TPC_TRUTH: return adf_tpc_truth_decode(f, &d->tpc_truth, err);
    default: return ADF_OK;
    }
}

/* ---- dump ------------------------------------------------------------------ */

static const char *truth_process_name(unsigned process)
{
    switch (process) {
    case ADF_TRUTH_PHOTO: return "photo";
    case ADF_TRUTH_COMPTON: return "compton";
    case ADF_TRUTH_RAYLEIGH: return "rayleigh";
    case ADF_TRUTH_PAIR: return "pair";
    default: return "?";
    }
}

static void print_payload(const adf_frame_t *f, const decoded_t *d, int depth)
{
    int ind = 2 * depth + 4;
    switch (f->key.type) {
    case ADF_TYPE_DATA_CRYSTAL: {
        const adf_crystal_t *c = &d->crystal;
        printf("%*scrystal %u status 0x%04X samples %u core %.1f/%.1f keV; segments:", ind, "",
               (unsigned)c->crystal_id, (unsigned)c->status, (unsigned)c->n_samples, c->core_energy[0],
               c->core_energy[1]);
        int shown = 0;
        for (int s = 0; s < ADF_CRYSTAL_SEGMENTS; s++)
            if (c->segment_energy[s] != 0.0f) {
                printf(" %d:%.1f", s, c->segment_energy[s]);
                shown++;
            }
        printf("%s\n", shown ? "" : " none");
        break;
    }
    case ADF_TYPE_DATA_PSA: {
        const adf_psa_t *p = &d->psa;
        printf("%*scrystal %u status 0x%04X core %.1f/%.1f keV t %.2f/%.2f ns psa_status %u hits %u%s\n", ind,
               "", (unsigned)p->crystal_id, (unsigned)p->status, p->core_energy[0], p->core_energy[1],
               p->core_time[0], p->core_time[1], (unsigned)p->psa_status, (unsigned)p->n_hits,
               p->has_fom ? " (with fom)" : "");
        for (unsigned i = 0; i < p->n_hits; i++) {
            const adf_psa_hit_t *h = &p->hit[i];
            printf("%*shit %u: seg %d crys %d (%.2f, %.2f, %.2f) mm %.1f keV t %.2f ns", ind + 2, "", i,
                   h->segment, h->crystal, h->x, h->y, h->z, h->energy, h->time);
            if (p->has_fom)
                printf(" fom %.4g", h->fom);
            printf("\n");
        }
        break;
    }
    case ADF_TYPE_DATA_TRACKED: {
        const adf_tracked_t *t = &d->tracked;
        printf("%*sgammas %u status 0x%04X\n", ind, "", (unsigned)t->n_gammas, (unsigned)t->status);
        for (unsigned i = 0; i < t->n_gammas; i++) {
            const adf_tracked_gamma_t *g = &t->gamma[i];
            printf("%*sgamma %u: %.1f keV, %u points, first (%.1f, %.1f, %.1f) second (%.1f, %.1f, %.1f) "
                   "mm fom %.4g\n",
                   ind + 2, "", i, g->energy, (unsigned)g->n_points, g->first[0], g->first[1], g->first[2],
                   g->second[0], g->second[1], g->second[2], g->fom);
        }
        break;
    }
    case ADF_TYPE_DATA_TRUTH: {
        const adf_truth_t *t = &d->truth;
        printf("%*sdecay %" PRIu64 ", %" PRIu64 " gammas emitted so far, flags 0x%04X; gammas %u, points %u\n",
               ind, "", t->decay, t->gammas_total, (unsigned)t->flags, (unsigned)t->n_gammas,
               (unsigned)t->n_points);
        for (unsigned i = 0; i < t->n_gammas; i++) {
            const adf_truth_gamma_t *g = &t->gamma[i];
            printf("%*sgamma %u: %.1f keV, direction (%.3f, %.3f, %.3f)\n", ind + 2, "", i, g->energy, g->dir[0],
                   g->dir[1], g->dir[2]);
        }
        for (unsigned i = 0; i < t->n_points; i++) {
            const adf_truth_point_t *p = &t->point[i];
            printf("%*spoint %u: crystal %u seg %d gamma %u %s %.1f keV local (%.2f, %.2f, %.2f) "
                   "world (%.1f, %.1f, %.1f) mm\n",
                   ind + 2, "", i, (unsigned)p->crystal, p->segment, (unsigned)p->gamma,
                   truth_process_name(p->process), p->energy, p->local[0], p->local[1], p->local[2], p->world[0],
                   p->world[1], p->world[2]);
        }
        break;
    }
    case ADF_TYPE_DATA_ID_SPACEPOINTS: {
        const adf_idsp_t *sp = &d->idsp;
        printf("%*sphi from %.6f rad over %.6f rad, flags 0x%04X; spacepoints %" PRIu32 "\n", ind, "",
               (double)sp->phi_min, (double)sp->phi_width, (unsigned)sp->flags, sp->n_points);
        for (uint32_t i = 0; i < sp->n_points; i++) {
            adf_idsp_point_t p;
            adf_idsp_point(sp, i, &p);
            printf("%*spoint %" PRIu32 ": layer %u rho %.3f mm phi %.6f rad z %.3f mm\n", ind + 2, "", i,
                   (unsigned)p.layer, (double)p.rho, (double)p.phi, (double)p.z);
        }
        break;
    }
    case ADF_TYPE_DATA_ZVERTEX: {
        const adf_zvertex_t *z = &d->zvertex;
        static const char *const modes[] = {"?", "pairs", "triplets"};
        static const char *const backends[] = {"?", "reference", "fast", "opencl"};
        printf("%*svertices %u, %s, %s, backend %s, %" PRIu32 " entries of %" PRIu64 " pairs, settings 0x%08X\n",
               ind, "", (unsigned)z->n_vertices, modes[z->mode <= 2 ? z->mode : 0],
               z->precision == 8 ? "double" : "float", backends[z->backend <= 3 ? z->backend : 0], z->entries,
               z->pairs, (unsigned)z->settings);
        for (unsigned i = 0; i < z->n_vertices; i++)
            printf("%*svertex %u: z0 %.6f mm, %" PRIu32 " entries in bins %" PRIu32 "-%" PRIu32 "\n", ind + 2, "", i,
                   z->vertex[i].z0, z->vertex[i].count, z->vertex[i].bin, z->vertex[i].bin + 2);
        break;
    }
    case ADF_TYPE_DATA_ID_TRUTH: {
        const adf_idtruth_t *t = &d->idtruth;
        printf("%*ssignal vertex z %.3f mm, %u pile-up vertices, flags 0x%04X; spacepoints %" PRIu32 "\n", ind, "",
               (double)t->z_signal, (unsigned)t->n_pileup, (unsigned)t->flags, t->n_points);
        for (unsigned k = 0; k < t->n_pileup; k++)
            printf("%*spile-up vertex %u: z %.3f mm\n", ind + 2, "", k + 1, (double)t->z_pileup[k]);
        for (uint32_t i = 0; i < t->n_points; i++) {
            adf_idtruth_point_t p;
            adf_idtruth_point(t, i, &p);
            if (p.vertex == ADF_IDTRUTH_NOISE_VERTEX)
                printf("%*spoint %" PRIu32 ": noise\n", ind + 2, "", i);
            else
                printf("%*spoint %" PRIu32 ": particle %" PRIu32 " from vertex %u\n", ind + 2, "", i, p.particle,
                       (unsigned)p.vertex);
        }
        break;
    }
    case ADF_TYPE_DATA_STS_DIGIS: {
        const adf_sts_digis_t *g = &d->sts_digis;
        printf("%*smodule %u (station %u; the timeslice has %u modules), %u strips a side of %.4f mm, stereo %.3f deg, "
               "%.3f mm long, at (%.3f, %.3f, %.3f) mm; timeslice %" PRIu32 " ns; flags 0x%02X; digis %" PRIu32 "\n",
               ind, "", (unsigned)g->module, (unsigned)g->station, (unsigned)g->modules, (unsigned)g->strips,
               (double)g->pitch_mm, (double)g->stereo_deg, (double)g->length_mm, (double)g->origin[0],
               (double)g->origin[1], (double)g->origin[2], g->length_ns, (unsigned)g->flags, g->n_digis);
        for (uint32_t i = 0; i < g->n_digis; i++) {
            uint64_t k;
            adf_sts_digis_keys(g, i, 1, &k);
            printf("%*sdigi %" PRIu32 ": channel %u (%s %u) time %u ns charge %u\n", ind + 2, "", i,
                   (unsigned)adf_sts_key_channel(k), adf_sts_key_channel(k) < g->strips ? "front" : "back",
                   (unsigned)(adf_sts_key_channel(k) % g->strips), (unsigned)adf_sts_key_time(k),
                   (unsigned)adf_sts_key_charge(k));
        }
        break;
    }
    case ADF_TYPE_DATA_STS_CLUSTERS: {
        const adf_sts_clusters_t *c = &d->sts_clusters;
        printf("%*smodule %u, %u strips a side, backend %s, settings 0x%08X, flags 0x%02X; clusters %" PRIu32
               " front, %" PRIu32 " back\n",
               ind, "", (unsigned)c->module, (unsigned)c->strips, adf_sts_backend_name(c->backend),
               (unsigned)c->settings, (unsigned)c->flags, c->n_front, c->n_back);
        for (uint32_t i = 0; i < c->n_front + c->n_back; i++) {
            adf_sts_cluster_t x;
            adf_sts_cluster(c, i, &x);
            printf("%*scluster %" PRIu32 ": channel %u size %u charge %" PRIu32 " time %.3f +- %.3f ns position %.4f "
                   "+- %.4f strips\n",
                   ind + 2, "", i, (unsigned)x.channel, (unsigned)x.size, x.charge, (double)x.time,
                   (double)x.time_error, (double)x.position, (double)x.position_error);
        }
        break;
    }
    case ADF_TYPE_DATA_STS_HITS: {
        const adf_sts_hits_t *h = &d->sts_hits;
        printf("%*smodule %u, backend %s, settings 0x%08X, flags 0x%02X; hits %" PRIu32 "\n", ind, "",
               (unsigned)h->module, adf_sts_backend_name(h->backend), (unsigned)h->settings, (unsigned)h->flags,
               h->n_hits);
        for (uint32_t i = 0; i < h->n_hits; i++) {
            adf_sts_hit_t x;
            adf_sts_hit(h, i, &x);
            printf("%*shit %" PRIu32 ": clusters %" PRIu32 " (front) %" PRIu32 " (back) at (%.4f +- %.4f, %.4f +- %.4f, "
                   "%.3f) mm, cov %.3g mm2, time %.3f +- %.3f ns\n",
                   ind + 2, "", i, x.front, x.back, (double)x.x, (double)x.sigma_x, (double)x.y, (double)x.sigma_y,
                   (double)x.z, (double)x.cov_xy, (double)x.time, (double)x.time_error);
        }
        break;
    }
    case ADF_TYPE_DATA_STS_TRUTH: {
        const adf_sts_truth_t *t = &d->sts_truth;
        printf("%*smodule %u, flags 0x%04X; points %" PRIu32 ", digis %" PRIu32 "\n", ind, "", (unsigned)t->module,
               (unsigned)t->flags, t->n_points, t->n_digis);
        for (uint32_t i = 0; i < t->n_points; i++) {
            adf_sts_point_t p;
            adf_sts_truth_point(t, i, &p);
            printf("%*spoint %" PRIu32 ": track %" PRIu32 " of collision %" PRIu32 " at (%.3f, %.3f, %.3f) mm, %.3f ns; "
                   "strips %.3f front, %.3f back; charge %.1f\n",
                   ind + 2, "", i, p.track, p.collision, (double)p.x, (double)p.y, (double)p.z, (double)p.time,
                   (double)p.u_front, (double)p.u_back, (double)p.charge);
        }
        for (uint32_t j = 0; j < t->n_digis; j++) {
            uint32_t k;
            adf_sts_truth_digis(t, j, 1, &k);
            if (k == ADF_STS_NOISE)
                printf("%*sdigi %" PRIu32 ": noise\n", ind + 2, "", j);
            else
                printf("%*sdigi %" PRIu32 ": point %" PRIu32 "\n", ind + 2, "", j, k);
        }
        break;
    }
    case ADF_TYPE_DATA_UT_RAW: {
        const adf_ut_raw_t *r = &d->ut_raw;
        printf("%*sgeometry 0x%08X, flags 0x%04X; banks %u, hits %" PRIu32 "\n", ind, "", (unsigned)r->geometry,
               (unsigned)r->flags, (unsigned)r->n_banks, r->n_hits);
        adf_ut_bank_t *banks = malloc((r->n_banks + 1u) * sizeof *banks);
        uint16_t *words = malloc((r->n_hits + 1u) * sizeof *words);
        if (!banks || !words) {
            printf("%*s(out of memory)\n", ind + 2, "");
        } else {
            adf_ut_raw_read(r, banks, words);
            const uint16_t *w = words;
            for (unsigned i = 0; i < r->n_banks; i++) {
                printf("%*sbank %u: sector %u, %u hits\n", ind + 2, "", i, (unsigned)banks[i].sector,
                       (unsigned)banks[i].n_hits);
                for (unsigned k = 0; k < banks[i].n_hits; k++, w++)
                    printf("%*shit %u: strip %u + %u/4, size %u%s\n", ind + 4, "", k, adf_ut_word_strip(*w),
                           adf_ut_word_quarter(*w), adf_ut_word_size(*w), adf_ut_word_high(*w) ? ", high threshold" : "");
            }
        }
        free(banks);
        free(words);
        break;
    }
    case ADF_TYPE_DATA_VELO_TRACKS: {
        const adf_velo_tracks_t *v = &d->velo_tracks;
        printf("%*sflags 0x%08X; tracks %" PRIu32 "\n", ind, "", (unsigned)v->flags, v->n_tracks);
        for (uint32_t i = 0; i < v->n_tracks; i++) {
            adf_velo_track_t t;
            adf_velo_track(v, i, &t);
            printf("%*strack %" PRIu32 ": (%.4f, %.4f, %.2f) mm, slopes (%.6f, %.6f)%s\n", ind + 2, "", i, (double)t.x,
                   (double)t.y, (double)t.z, (double)t.tx, (double)t.ty, t.flags & ADF_VELO_BACKWARD ? ", backward" : "");
        }
        break;
    }
    case ADF_TYPE_DATA_UT_TRACKS: {
        const adf_ut_tracks_t *t = &d->ut_tracks;
        printf("%*sbackend %s, %u sectors, %u candidates, settings 0x%08X, geometry 0x%08X, flags 0x%02X; tracks %" PRIu32
               "\n",
               ind, "", adf_ut_backend_name(t->backend), (unsigned)t->sectors, (unsigned)t->candidates,
               (unsigned)t->settings, (unsigned)t->geometry, (unsigned)t->flags, t->n_tracks);
        for (uint32_t i = 0; i < t->n_tracks; i++) {
            adf_ut_track_t x;
            adf_ut_track(t, i, &x);
            printf("%*strack %" PRIu32 ": VELO track %" PRIu32 ", %u hits 0x%08X 0x%08X 0x%08X 0x%08X, q/p %.5f c/GeV, "
                   "chi2 %.3f\n",
                   ind + 2, "", i, x.velo, (unsigned)x.n_hits, (unsigned)x.id[0], (unsigned)x.id[1], (unsigned)x.id[2],
                   (unsigned)x.id[3], (double)x.qop, (double)x.chi2);
        }
        break;
    }
    case ADF_TYPE_DATA_UT_HITS: {
        const adf_ut_hits_t *h = &d->ut_hits;
        printf("%*sbackend %s, geometry 0x%08X, flags 0x%02X; hits %" PRIu32 "\n", ind, "",
               adf_ut_backend_name(h->backend), (unsigned)h->geometry, (unsigned)h->flags, h->n_hits);
        for (uint32_t i = 0; i < h->n_hits; i++) {
            adf_ut_hit_t x;
            adf_ut_hit(h, i, &x);
            printf("%*shit %" PRIu32 ": 0x%08X group %u x0 %.4f z0 %.2f y %.2f to %.2f mm, weight %.4g\n", ind + 2, "",
                   i, (unsigned)x.id, (unsigned)x.group, (double)x.x0, (double)x.z0, (double)x.y_begin,
                   (double)x.y_end, (double)x.weight);
        }
        break;
    }
    case ADF_TYPE_DATA_UT_TRUTH: {
        const adf_ut_truth_t *t = &d->ut_truth;
        printf("%*sflags 0x%08X; particles %" PRIu32 ", hits %" PRIu32 ", VELO tracks %" PRIu32 "\n", ind, "",
               (unsigned)t->flags, t->n_particles, t->n_hits, t->n_velo);
        for (uint32_t i = 0; i < t->n_particles; i++) {
            adf_ut_particle_t x;
            adf_ut_truth_particle(t, i, &x);
            printf("%*sparticle %" PRIu32 ": vertex %u, q %+d, p %.4f GeV, slopes (%.6f, %.6f), planes 0x%X%s%s%s\n",
                   ind + 2, "", i, (unsigned)x.vertex, (int)x.charge, (double)x.p, (double)x.tx, (double)x.ty,
                   (unsigned)x.planes, x.flags & ADF_UT_VELO ? ", VELO" : "", x.flags & ADF_UT_LONG ? ", long" : "",
                   x.flags & ADF_UT_BACKWARD ? ", backward" : "");
        }
        for (uint32_t j = 0; j < t->n_hits + t->n_velo; j++) {
            uint32_t k;
            if (j < t->n_hits)
                adf_ut_truth_hits(t, j, 1, &k);
            else
                adf_ut_truth_velo(t, j - t->n_hits, 1, &k);
            const char *what = j < t->n_hits ? "hit" : "VELO track";
            uint32_t at = j < t->n_hits ? j : j - t->n_hits;
            if (k == ADF_UT_NONE)
                printf("%*s%s %" PRIu32 ": %s\n", ind + 2, "", what, at, j < t->n_hits ? "noise" : "fake");
            else
                printf("%*s%s %" PRIu32 ": particle %" PRIu32 "\n", ind + 2, "", what, at, k);
        }
        break;
    }
    case ADF_TYPE_DATA_TPC_CLUSTERS: {
        const adf_tpc_clusters_t *c = &d->tpc_clusters;
        printf("%*sslice %u (the event has %u), field %.4f T, geometry %" PRIu32 ", flags 0x%04X; clusters %" PRIu32
               "\n",
               ind, "", (unsigned)c->slice, (unsigned)c->slices, (double)c->bz, c->geometry, (unsigned)c->flags,
               c->n_clusters);
        for (uint32_t i = 0; i < c->n_clusters; i++) {
            adf_tpc_cluster_t x;
            adf_tpc_cluster(c, i, &x);
            printf("%*scluster %" PRIu32 ": row %u y %.4f z %.4f mm%s\n", ind + 2, "", i, (unsigned)x.row, (double)x.y,
                   (double)x.z, x.flags ? " (flags set)" : "");
        }
        break;
    }
    case ADF_TYPE_DATA_TPC_TRACKS: {
        const adf_tpc_tracks_t *t = &d->tpc_tracks;
        printf("%*sslice %u, backend %s, settings 0x%08X, flags 0x%04X; tracks %" PRIu32 " with %" PRIu32
               " clusters of %" PRIu32 "\n",
               ind, "", (unsigned)t->slice, adf_tpc_backend_name(t->backend), (unsigned)t->settings,
               (unsigned)t->flags, t->n_tracks, t->n_hits, t->n_clusters);
        uint32_t j = 0;
        for (uint32_t i = 0; i < t->n_tracks; i++) {
            adf_tpc_track_t x;
            adf_tpc_track(t, i, &x);
            printf("%*strack %" PRIu32 " (tracklet %" PRIu32 "): rows %u-%u, %u clusters; at x %.2f mm: Y %.4f Z %.4f "
                   "sin(phi) %.6f lambda %.6f q/pT %.5f c/GeV; chi2 %.2f / %u\n",
                   ind + 2, "", i, x.tracklet, (unsigned)x.first_row, (unsigned)x.last_row, (unsigned)x.n_hits,
                   (double)x.x, (double)x.param[0], (double)x.param[1], (double)x.param[2], (double)x.param[3],
                   (double)x.param[4], (double)x.chi2, (unsigned)x.ndf);
            for (unsigned k = 0; k < x.n_hits; k++, j++) {
                adf_tpc_hit_t h;
                adf_tpc_hit(t, j, &h);
                printf("%*scluster %" PRIu32 " row %u at (%.3f, %.3f, %.3f) mm%s\n", ind + 4, "", h.cluster,
                       (unsigned)h.row, (double)h.x, (double)h.y, (double)h.z,
                       h.flags & ADF_TPC_HIT_SHARED ? ", shared" : "");
            }
        }
        break;
    }
    case ADF_TYPE_DATA_TPC_TRUTH: {
        const adf_tpc_truth_t *t = &d->tpc_truth;
        printf("%*sslice %u, flags 0x%04X; particles %" PRIu32 ", clusters %" PRIu32 "\n", ind, "", (unsigned)t->slice,
               (unsigned)t->flags, t->n_particles, t->n_clusters);
        for (uint32_t i = 0; i < t->n_particles; i++) {
            adf_tpc_particle_t x;
            adf_tpc_truth_particle(t, i, &x);
            printf("%*sparticle %" PRIu32 ": id %" PRIu32 ", q %+d, p (%.4f, %.4f, %.4f) GeV/c from (%.3f, %.3f, %.3f) "
                   "mm\n",
                   ind + 2, "", i, x.id, (int)x.charge, (double)x.p[0], (double)x.p[1], (double)x.p[2],
                   (double)x.vertex[0], (double)x.vertex[1], (double)x.vertex[2]);
        }
        for (uint32_t j = 0; j < t->n_clusters; j++) {
            uint32_t k;
            adf_tpc_truth_clusters(t, j, 1, &k);
            if (k == ADF_TPC_NOISE)
                printf("%*scluster %" PRIu32 ": noise\n", ind + 2, "", j);
            else
                printf("%*scluster %" PRIu32 ": particle %" PRIu32 "\n", ind + 2, "", j, k);
        }
        break;
    }
    case ADF_TYPE_META_EOF:
        if (d->eof.has_counts)
            printf("%*srun %" PRIu32 ", %" PRIu64 " frames before\n", ind, "", d->eof.run, d->eof.frames);
        else
            printf("%*s(no counts)\n", ind, "");
        break;
    default: {
        uint32_t n = f->payload_size < 32 ? f->payload_size : 32;
        printf("%*s", ind, "");
        for (uint32_t i = 0; i < n; i++)
            printf("%02X%s", f->payload[i], i + 1 < n ? " " : "");
        printf("%s\n", f->payload_size > n ? " ..." : "");
    }
    }
}

typedef struct dump_ctx {
    bool verbose;
    adf_reader_t *sub[ADF_WRITER_MAX_DEPTH];
    decoded_t *d;
    int status;
} dump_ctx_t;

static void dump_frame(dump_ctx_t *ctx, const adf_frame_t *f, int depth)
{
    char buf[16];
    printf("%12" PRIu64 " %*s%-*s %10" PRIu32 " %10" PRIu32 " %15" PRIu64 "\n", f->offset, 2 * depth, "",
           20 - 2 * depth, type_label(f->key.type, buf), f->key.length, f->key.event, f->key.timestamp);
    if (adf_type_is_composite(f->key.type)) {
        if (depth + 1 >= ADF_WRITER_MAX_DEPTH) {
            printf("%12s %*s(nested deeper than %d, not shown)\n", "", 2 * depth + 2, "", ADF_WRITER_MAX_DEPTH);
            return;
        }
        adf_reader_t *r = ctx->sub[depth];
        adf_reader_open_composite(r, f);
        adf_frame_t sub;
        int rc;
        while ((rc = adf_reader_next(r, &sub)) == ADF_OK)
            dump_frame(ctx, &sub, depth + 1);
        if (rc < 0) {
            fprintf(stderr, PROG ": inside composite: %s\n", adf_reader_error(r)->message);
            ctx->status = TUSK_EXIT_FAIL;
        }
        return;
    }
    if (ctx->verbose) {
        adf_error_t err;
        if (decode_payload(f, ctx->d, &err) != ADF_OK) {
            fprintf(stderr, PROG ": %s\n", err.message);
            ctx->status = TUSK_EXIT_FAIL;
        } else {
            print_payload(f, ctx->d, depth);
        }
    }
}

/* One FILE (or two, for diff) after the options. */
static bool operands(char **argv, int argc, int want)
{
    if (argc - optind == want)
        return true;
    if (argc - optind < want)
        fprintf(stderr, "%s: expected %s\n", argv[0], want == 1 ? "a FILE" : "two files A B");
    else
        fprintf(stderr, "%s: unexpected argument '%s'\n", argv[0], argv[optind + want]);
    return false;
}

static int cmd_dump(const tusk_cli_t *cli, int argc, char **argv)
{
    static const struct option longopts[] = {
        {"verbose", no_argument, NULL, 'v'}, {"max", required_argument, NULL, 'n'}, {NULL, 0, NULL, 0}};
    dump_ctx_t ctx = {0};
    uint64_t max = 0;
    int c;
    while ((c = tusk_cli_getopt(cli, argc, argv, "vn:", longopts, NULL)) != -1) {
        switch (c) {
        case 'v': ctx.verbose = true; break;
        case 'n':
            if (!tusk_cli_u64(argv[0], "-n", optarg, 0, UINT64_MAX, &max))
                return TUSK_EXIT_USAGE;
            break;
        default: return TUSK_EXIT_USAGE;
        }
    }
    if (!operands(argv, argc, 1))
        return TUSK_EXIT_USAGE;
    const char *path = argv[optind];
    adf_file_reader_t *r = open_input(path, ADF_ON_ERROR_STOP);
    if (!r)
        return TUSK_EXIT_USAGE;
    ctx.d = malloc(sizeof *ctx.d);
    for (int i = 0; i < ADF_WRITER_MAX_DEPTH; i++)
        ctx.sub[i] = adf_reader_new(ADF_ON_ERROR_STOP);
    printf("%12s %-20s %10s %10s %15s\n", "offset", "type", "length", "event", "timestamp");
    adf_frame_t f;
    int rc;
    unsigned long long n = 0;
    while ((max == 0 || n < max) && (rc = adf_file_reader_next(r, &f)) == ADF_OK) {
        dump_frame(&ctx, &f, 0);
        n++;
    }
    if ((max == 0 || n < max) && rc < 0) {
        fprintf(stderr, PROG ": %s: %s\n", path, adf_file_reader_error(r)->message);
        ctx.status = rc == ADF_EIO ? TUSK_EXIT_USAGE : TUSK_EXIT_FAIL;
    }
    for (int i = 0; i < ADF_WRITER_MAX_DEPTH; i++)
        adf_reader_destroy(&ctx.sub[i]);
    free(ctx.d);
    adf_file_reader_destroy(&r);
    return ctx.status;
}

/* ---- check ----------------------------------------------------------------- */

typedef struct check_ctx {
    const char *path;
    adf_reader_t *sub[ADF_WRITER_MAX_DEPTH];
    decoded_t *d;
    uint64_t errors;
    uint64_t frames; /* nested included */
} check_ctx_t;

static void check_report(check_ctx_t *ctx, const char *message)
{
    fprintf(stderr, "%s: %s\n", ctx->path, message);
    ctx->errors++;
}

/* Validate one frame and, for composites, everything inside. */
static void check_frame(check_ctx_t *ctx, const adf_frame_t *f, int depth)
{
    ctx->frames++;
    if (!adf_type_is_composite(f->key.type)) {
        adf_error_t err;
        if (decode_payload(f, ctx->d, &err) != ADF_OK)
            check_report(ctx, err.message);
        return;
    }
    if (depth + 1 >= ADF_WRITER_MAX_DEPTH) {
        char msg[128];
        snprintf(msg, sizeof msg, "offset %" PRIu64 ": composite frames nested deeper than %d", f->offset,
                 ADF_WRITER_MAX_DEPTH);
        check_report(ctx, msg);
        return;
    }
    adf_reader_t *r = ctx->sub[depth];
    adf_reader_open_composite(r, f);
    adf_frame_t sub;
    int rc;
    while ((rc = adf_reader_next(r, &sub)) == ADF_OK)
        check_frame(ctx, &sub, depth + 1);
    if (rc < 0)
        check_report(ctx, adf_reader_error(r)->message);
}

static int cmd_check(const tusk_cli_t *cli, int argc, char **argv)
{
    static const struct option longopts[] = {{"resync", no_argument, NULL, 'r'}, {NULL, 0, NULL, 0}};
    bool resync = false;
    int c;
    while ((c = tusk_cli_getopt(cli, argc, argv, "r", longopts, NULL)) != -1) {
        if (c != 'r')
            return TUSK_EXIT_USAGE;
        resync = true;
    }
    if (!operands(argv, argc, 1))
        return TUSK_EXIT_USAGE;
    check_ctx_t ctx = {.path = argv[optind]};
    adf_file_reader_t *r = open_input(ctx.path, resync ? ADF_ON_ERROR_RESYNC : ADF_ON_ERROR_STOP);
    if (!r)
        return TUSK_EXIT_USAGE;
    ctx.d = malloc(sizeof *ctx.d);
    for (int i = 0; i < ADF_WRITER_MAX_DEPTH; i++)
        ctx.sub[i] = adf_reader_new(ADF_ON_ERROR_STOP);

    adf_frame_t f;
    int rc;
    bool io_error = false;
    uint64_t since_eof = 0, top = 0, bytes = 0;
    while ((rc = adf_file_reader_next(r, &f)) != ADF_END) {
        if (rc < 0) {
            check_report(&ctx, adf_file_reader_error(r)->message);
            if (rc == ADF_EIO || rc == ADF_ENOMEM) {
                io_error = true;
                break;
            }
            if (!resync)
                break;
            continue;
        }
        uint64_t errors_before = ctx.errors;
        check_frame(&ctx, &f, 0);
        top++;
        bytes += f.key.length;
        /* meta:eof counts the frames sent before it: a mismatch is loss. */
        if (f.key.type == ADF_TYPE_META_EOF && ctx.errors == errors_before && ctx.d->eof.has_counts) {
            if (ctx.d->eof.frames != since_eof) {
                char msg[200];
                snprintf(msg, sizeof msg,
                         "offset %" PRIu64 ": meta:eof says %" PRIu64 " frames were sent before it, "
                         "the file holds %" PRIu64,
                         f.offset, ctx.d->eof.frames, since_eof);
                check_report(&ctx, msg);
            }
            since_eof = 0;
        } else {
            since_eof++;
        }
        if (ctx.errors && !resync)
            break;
    }
    adf_reader_stats_t st = adf_file_reader_stats(r);
    if (ctx.errors == 0)
        printf("%s: OK: %" PRIu64 " frames (%" PRIu64 " top-level), %" PRIu64 " bytes\n", ctx.path, ctx.frames,
               top, bytes);
    else
        printf("%s: %" PRIu64 " error%s%s; %" PRIu64 " frames read, %" PRIu64 " bytes skipped\n", ctx.path,
               ctx.errors, ctx.errors == 1 ? "" : "s", resync ? "" : " (stopped at the first)", ctx.frames,
               st.bytes_skipped);
    for (int i = 0; i < ADF_WRITER_MAX_DEPTH; i++)
        adf_reader_destroy(&ctx.sub[i]);
    free(ctx.d);
    adf_file_reader_destroy(&r);
    if (io_error)
        return TUSK_EXIT_USAGE;
    return ctx.errors ? TUSK_EXIT_FAIL : 0;
}

/* ---- stats ----------------------------------------------------------------- */

#define MAX_TYPES 64

typedef struct type_count {
    uint32_t type;
    uint64_t frames, nested, bytes;
} type_count_t;

typedef struct stats_ctx {
    type_count_t types[MAX_TYPES];
    int n_types;
    uint64_t other_frames; /* beyond MAX_TYPES distinct types */
    adf_reader_t *sub[ADF_WRITER_MAX_DEPTH];
} stats_ctx_t;

static void stats_count(stats_ctx_t *s, const adf_frame_t *f, int depth)
{
    type_count_t *t = NULL;
    for (int i = 0; i < s->n_types; i++)
        if (s->types[i].type == f->key.type)
            t = &s->types[i];
    if (!t && s->n_types < MAX_TYPES) {
        t = &s->types[s->n_types++];
        *t = (type_count_t){.type = f->key.type};
    }
    if (!t) {
        s->other_frames++;
    } else {
        if (depth == 0)
            t->frames++;
        else
            t->nested++;
        t->bytes += f->key.length;
    }
    if (adf_type_is_composite(f->key.type) && depth + 1 < ADF_WRITER_MAX_DEPTH) {
        adf_reader_t *r = s->sub[depth];
        adf_reader_open_composite(r, f);
        adf_frame_t sub;
        while (adf_reader_next(r, &sub) == ADF_OK)
            stats_count(s, &sub, depth + 1);
    }
}

static int cmd_stats(const tusk_cli_t *cli, int argc, char **argv)
{
    static const struct option longopts[] = {{NULL, 0, NULL, 0}};
    if (tusk_cli_getopt(cli, argc, argv, "", longopts, NULL) != -1 || !operands(argv, argc, 1))
        return TUSK_EXIT_USAGE;
    const char *path = argv[optind];
    adf_file_reader_t *r = open_input(path, ADF_ON_ERROR_STOP);
    if (!r)
        return TUSK_EXIT_USAGE;
    stats_ctx_t *s = calloc(1, sizeof *s);
    for (int i = 0; i < ADF_WRITER_MAX_DEPTH; i++)
        s->sub[i] = adf_reader_new(ADF_ON_ERROR_STOP);
    uint64_t frames = 0, bytes = 0, events = 0, ts_min = UINT64_MAX, ts_max = 0;
    uint32_t ev_min = UINT32_MAX, ev_max = 0, last_event = 0;
    adf_frame_t f;
    int rc;
    while ((rc = adf_file_reader_next(r, &f)) == ADF_OK) {
        frames++;
        bytes += f.key.length;
        if (f.key.type != ADF_TYPE_META_EOF) {
            if (events == 0 || f.key.event != last_event)
                events++;
            last_event = f.key.event;
            ev_min = f.key.event < ev_min ? f.key.event : ev_min;
            ev_max = f.key.event > ev_max ? f.key.event : ev_max;
            ts_min = f.key.timestamp < ts_min ? f.key.timestamp : ts_min;
            ts_max = f.key.timestamp > ts_max ? f.key.timestamp : ts_max;
        }
        stats_count(s, &f, 0);
    }
    int status = 0;
    if (rc < 0) {
        fprintf(stderr, PROG ": %s: %s (statistics below cover the frames before it)\n", path,
                adf_file_reader_error(r)->message);
        status = rc == ADF_EIO ? TUSK_EXIT_USAGE : TUSK_EXIT_FAIL;
    }
    printf("file:       %s\n", path);
    printf("frames:     %" PRIu64 " (%" PRIu64 " bytes)\n", frames, bytes);
    printf("%-22s %12s %12s %14s\n", "type", "frames", "in composite", "bytes");
    for (int i = 0; i < s->n_types; i++) {
        char buf[16];
        const type_count_t *t = &s->types[i];
        printf("%-22s %12" PRIu64 " %12" PRIu64 " %14" PRIu64 "\n", type_label(t->type, buf), t->frames,
               t->nested, t->bytes);
    }
    if (s->other_frames)
        printf("%-22s %12" PRIu64 "\n", "(other types)", s->other_frames);
    if (ts_min <= ts_max) {
        double span = (double)(ts_max - ts_min) * 10e-9;
        printf("events:     %" PRIu64 " (runs of one event number), numbers %" PRIu32 "..%" PRIu32 "\n", events,
               ev_min, ev_max);
        printf("timestamps: %" PRIu64 "..%" PRIu64 " (span %.6f s", ts_min, ts_max, span);
        if (span > 0)
            printf(", %.1f events/s", (double)events / span);
        printf(")\n");
    }
    for (int i = 0; i < ADF_WRITER_MAX_DEPTH; i++)
        adf_reader_destroy(&s->sub[i]);
    free(s);
    adf_file_reader_destroy(&r);
    return status;
}

/* ---- gen ------------------------------------------------------------------- */

/* splitmix64: small, seedable, the same on every platform. */
static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

static double rng_uniform(uint64_t *s)
{
    return (double)(rng_next(s) >> 11) * (1.0 / 9007199254740992.0);
}

static double rng_gauss(uint64_t *s)
{
    double u = rng_uniform(s), v = rng_uniform(s);
    return sqrt(-2.0 * log(u + 1e-300)) * cos(6.283185307179586 * v);
}

/* GEN_MIXED leaves data:truth out: its files stay what they always were. */
enum gen_type { GEN_CRYSTAL = 1, GEN_PSA = 2, GEN_EVENT_PSA = 4, GEN_TRACKED = 8, GEN_MIXED = 15, GEN_TRUTH = 16 };

typedef struct gen {
    adf_writer_t *w;
    uint8_t *buf;
    size_t cap;
    adf_file_writer_t *out;
    uint64_t frames;
    uint64_t gammas_total; /* data:truth: gammas emitted so far */
} gen_t;

/* Write the buffer out when full and retry the frame once in an empty one. */
static int gen_flush(gen_t *g)
{
    adf_error_t err;
    if (adf_file_writer_write(g->out, g->buf, adf_writer_used(g->w), &err) != ADF_OK) {
        fprintf(stderr, PROG ": %s\n", err.message);
        return -1;
    }
    adf_writer_reset(g->w, g->buf, g->cap);
    return 0;
}

/* Run an encoder call; when the buffer is full, write it out and run the
 * call once more on the empty buffer (what an actor does with its output). */
#define GEN_EMIT(g, call)                                                         \
    do {                                                                          \
        int rc_ = (call);                                                         \
        if (rc_ == ADF_EFULL) {                                                   \
            if (gen_flush(g))                                                     \
                return -1;                                                        \
            rc_ = (call);                                                         \
        }                                                                         \
        if (rc_ != ADF_OK) {                                                      \
            fprintf(stderr, PROG ": gen: %s\n", adf_writer_error((g)->w)->message); \
            return -1;                                                            \
        }                                                                         \
        (g)->frames++;                                                            \
    } while (0)

/* A charge step on the hit segments and core, small transients elsewhere. */
static void gen_crystal(adf_crystal_t *c, uint64_t *rng, unsigned id, unsigned n_samples, double energy)
{
    memset(c->segment_energy, 0, sizeof c->segment_energy);
    c->crystal_id = (uint16_t)id;
    c->status = 0;
    c->n_samples = (uint16_t)n_samples;
    int hits = 1 + (int)(rng_next(rng) % 3);
    double left = energy;
    for (int h = 0; h < hits; h++) {
        int seg = (int)(rng_next(rng) % ADF_CRYSTAL_SEGMENTS);
        double e = h + 1 == hits ? left : left * (0.2 + 0.6 * rng_uniform(rng));
        c->segment_energy[seg] += (float)e;
        left -= e;
    }
    c->core_energy[0] = (float)energy;
    c->core_energy[1] = (float)(energy * (1.0 + 1e-3 * rng_gauss(rng)));
    const double gain = 4.0; /* ADC units per keV */
    unsigned t0 = n_samples / 5;
    for (int ch = 0; ch < ADF_CRYSTAL_CHANNELS; ch++) {
        double amp = ch < ADF_CRYSTAL_SEGMENTS ? c->segment_energy[ch] : energy;
        double mirror = amp == 0.0 ? 0.02 * energy * rng_gauss(rng) : 0.0;
        for (unsigned s = 0; s < n_samples; s++) {
            double x = s < t0 ? 0.0 : (double)(s - t0) / 8.0;
            double rise = s < t0 ? 0.0 : (x >= 1.0 ? 1.0 : x);
            double transient = s < t0 ? 0.0 : x * exp(1.0 - x);
            double v = gain * (amp * rise + mirror * transient) + 2.0 * rng_gauss(rng);
            if (v > 8191)
                v = 8191;
            if (v < -8192)
                v = -8192;
            c->trace[ch][s] = (int16_t)lrint(v);
        }
    }
}

static void gen_psa(adf_psa_t *p, uint64_t *rng, unsigned id, double energy)
{
    memset(p, 0, sizeof *p);
    p->crystal_id = (uint16_t)id;
    p->core_energy[0] = p->core_energy[1] = (float)energy;
    p->core_time[0] = p->core_time[1] = (float)(rng_uniform(rng) * 10.0);
    p->n_hits = (uint16_t)(1 + rng_next(rng) % 4);
    p->has_fom = true;
    double left = energy;
    for (unsigned i = 0; i < p->n_hits; i++) {
        adf_psa_hit_t *h = &p->hit[i];
        double e = i + 1 == p->n_hits ? left : left * (0.2 + 0.6 * rng_uniform(rng));
        left -= e;
        double r = 5.0 + 35.0 * rng_uniform(rng), phi = 6.283185307179586 * rng_uniform(rng);
        h->segment = (int16_t)(rng_next(rng) % ADF_CRYSTAL_SEGMENTS);
        h->crystal = (int16_t)id;
        h->x = (float)(r * cos(phi));
        h->y = (float)(r * sin(phi));
        h->z = (float)(90.0 * rng_uniform(rng));
        h->energy = (float)e;
        h->time = p->core_time[0];
        h->fom = (float)(rng_uniform(rng) * 100.0);
    }
}

/* The truth of a made-up decay: one or two gammas from the array's centre,
 * each with a few Compton scatterings ending in a photo-absorption. */
static void gen_truth(gen_t *g, adf_truth_t *t, uint64_t *rng, uint64_t decay, const double *lines)
{
    t->decay = decay;
    t->flags = 0;
    t->n_points = 0;
    t->n_gammas = (uint16_t)(1 + rng_next(rng) % 2);
    g->gammas_total += t->n_gammas;
    t->gammas_total = g->gammas_total;
    for (unsigned i = 0; i < t->n_gammas; i++) {
        adf_truth_gamma_t *gm = &t->gamma[i];
        gm->energy = (float)lines[rng_next(rng) % 5];
        double cz = 2.0 * rng_uniform(rng) - 1.0, phi = 6.283185307179586 * rng_uniform(rng);
        double sz = sqrt(1.0 - cz * cz);
        gm->dir[0] = (float)(sz * cos(phi));
        gm->dir[1] = (float)(sz * sin(phi));
        gm->dir[2] = (float)cz;
        unsigned n = (unsigned)(rng_next(rng) % 4); /* 0: escaped the array */
        unsigned crystal = (unsigned)(rng_next(rng) % 180);
        double left = gm->energy, depth = 235.0;
        for (unsigned k = 0; k < n; k++) {
            adf_truth_point_t *p = &t->point[t->n_points++];
            double e = k + 1 == n ? left : left * (0.2 + 0.5 * rng_uniform(rng));
            left -= e;
            depth += 5.0 + 20.0 * rng_uniform(rng);
            p->crystal = (uint16_t)crystal;
            p->segment = (int16_t)((int)(rng_next(rng) % 37) - 1);
            p->gamma = (uint16_t)i;
            p->process = k + 1 == n ? ADF_TRUTH_PHOTO : ADF_TRUTH_COMPTON;
            p->energy = (float)e;
            double r = 5.0 + 30.0 * rng_uniform(rng), a = 6.283185307179586 * rng_uniform(rng);
            p->local[0] = (float)(r * cos(a));
            p->local[1] = (float)(r * sin(a));
            p->local[2] = (float)(depth - 235.0);
            for (int j = 0; j < 3; j++)
                p->world[j] = (float)(depth * gm->dir[j]);
        }
    }
}

static int gen_event(gen_t *g, uint64_t *rng, enum gen_type types, uint32_t ev, uint64_t ts, unsigned samples,
                     adf_crystal_t *c, adf_psa_t *psa, adf_key_t *keys, adf_tracked_t *trk, adf_truth_t *tru)
{
    static const double lines[] = {1173.2, 1332.5, 661.7, 121.8, 344.3};
    unsigned n_crys = 1 + (unsigned)(rng_next(rng) % 3);
    unsigned ids[3];
    double energies[3];
    for (unsigned i = 0; i < n_crys; i++) {
        ids[i] = (unsigned)(rng_next(rng) % 180);
        energies[i] = lines[rng_next(rng) % 5] * (i == 0 ? 1.0 : 0.3 * rng_uniform(rng));
    }
    adf_error_t err;
    if (types & GEN_CRYSTAL)
        for (unsigned i = 0; i < n_crys; i++) {
            gen_crystal(c, rng, ids[i], samples, energies[i]);
            GEN_EMIT(g, adf_crystal_encode(g->w, ev, ts, c, &err));
        }
    for (unsigned i = 0; i < n_crys; i++) {
        gen_psa(&psa[i], rng, ids[i], energies[i]);
        keys[i] = (adf_key_t){.type = ADF_TYPE_DATA_PSA, .event = ev, .timestamp = ts + i};
    }
    if (types & GEN_PSA)
        for (unsigned i = 0; i < n_crys; i++)
            GEN_EMIT(g, adf_psa_encode(g->w, ev, ts + i, &psa[i], &err));
    if (types & GEN_EVENT_PSA)
        GEN_EMIT(g, adf_event_psa_encode(g->w, ev, ts, keys, psa, n_crys, &err));
    if (types & GEN_TRACKED) {
        memset(trk, 0, sizeof *trk);
        trk->n_gammas = (uint16_t)n_crys;
        for (unsigned i = 0; i < n_crys; i++) {
            adf_tracked_gamma_t *gm = &trk->gamma[i];
            gm->energy = (float)energies[i];
            for (int k = 0; k < 3; k++) {
                gm->first[k] = (float)(235.0 * rng_gauss(rng) / 1.7);
                gm->second[k] = gm->first[k] + (float)(10.0 * rng_gauss(rng));
            }
            gm->fom = (float)rng_uniform(rng);
            gm->n_points = (uint16_t)psa[i].n_hits;
        }
        GEN_EMIT(g, adf_tracked_encode(g->w, ev, ts, trk, &err));
    }
    if (types & GEN_TRUTH) {
        gen_truth(g, tru, rng, ev, lines);
        GEN_EMIT(g, adf_truth_encode(g->w, ev, ts, tru, &err));
    }
    return 0;
}

static int cmd_gen(const tusk_cli_t *cli, int argc, char **argv)
{
    static const struct option longopts[] = {{"events", required_argument, NULL, 'n'},
                                             {"seed", required_argument, NULL, 's'},
                                             {"samples", required_argument, NULL, 'S'},
                                             {"type", required_argument, NULL, 't'},
                                             {"output", required_argument, NULL, 'o'},
                                             {NULL, 0, NULL, 0}};
    uint64_t events = 1000, samples = 100, seed = 1;
    const char *out_path = NULL;
    enum gen_type types = GEN_MIXED;
    int c;
    while ((c = tusk_cli_getopt(cli, argc, argv, "n:s:S:t:o:", longopts, NULL)) != -1) {
        switch (c) {
        case 'n':
            if (!tusk_cli_u64(argv[0], "--events", optarg, 0, UINT32_MAX, &events))
                return TUSK_EXIT_USAGE;
            break;
        case 's':
            if (tusk_parse_u64x(optarg, 0, UINT64_MAX, &seed) != 0) {
                fprintf(stderr, "%s: --seed wants a whole number (decimal, or hexadecimal after 0x), not '%s'\n",
                        argv[0], optarg);
                return TUSK_EXIT_USAGE;
            }
            break;
        case 'S':
            if (!tusk_cli_u64(argv[0], "--samples", optarg, 0, ADF_CRYSTAL_MAX_SAMPLES, &samples))
                return TUSK_EXIT_USAGE;
            break;
        case 'o': out_path = optarg; break;
        case 't':
            if (strcmp(optarg, "crystal") == 0)
                types = GEN_CRYSTAL;
            else if (strcmp(optarg, "psa") == 0)
                types = GEN_PSA;
            else if (strcmp(optarg, "event-psa") == 0)
                types = GEN_EVENT_PSA;
            else if (strcmp(optarg, "tracked") == 0)
                types = GEN_TRACKED;
            else if (strcmp(optarg, "truth") == 0)
                types = GEN_TRUTH;
            else if (strcmp(optarg, "mixed") == 0)
                types = GEN_MIXED;
            else {
                fprintf(stderr, PROG ": gen: unknown type '%s' (crystal, psa, event-psa, tracked, truth, mixed)\n",
                        optarg);
                return TUSK_EXIT_USAGE;
            }
            break;
        default: return TUSK_EXIT_USAGE;
        }
    }
    if (!out_path) {
        fprintf(stderr, "%s: -o FILE is required\n", argv[0]);
        return TUSK_EXIT_USAGE;
    }
    if (!operands(argv, argc, 0))
        return TUSK_EXIT_USAGE;
    adf_error_t err;
    gen_t g = {.cap = 1u << 20};
    g.out = adf_file_writer_open(out_path, &err);
    if (!g.out) {
        fprintf(stderr, PROG ": %s\n", err.message);
        return TUSK_EXIT_USAGE;
    }
    g.buf = malloc(g.cap);
    g.w = adf_writer_new();
    adf_crystal_t *crys = malloc(sizeof *crys);
    adf_psa_t *psa = malloc(3 * sizeof *psa);
    adf_tracked_t *trk = malloc(sizeof *trk);
    adf_truth_t *tru = malloc(sizeof *tru);
    adf_key_t keys[3];
    int status = 0;
    if (!g.buf || !g.w || !crys || !psa || !trk || !tru) {
        fprintf(stderr, PROG ": gen: out of memory\n");
        status = TUSK_EXIT_USAGE;
        goto done;
    }
    adf_writer_reset(g.w, g.buf, g.cap);
    uint64_t rng = seed, ts = 1000;
    for (unsigned long i = 0; i < events; i++) {
        /* Poisson arrivals at about 50 kHz: mean gap 2000 ticks of 10 ns. */
        ts += 1 + (uint64_t)(-2000.0 * log(1.0 - rng_uniform(&rng)));
        if (gen_event(&g, &rng, types, (uint32_t)i, ts, (unsigned)samples, crys, psa, keys, trk, tru)) {
            status = TUSK_EXIT_USAGE;
            goto done;
        }
    }
    {
        adf_eof_t eof = {.has_counts = true, .run = 1, .frames = g.frames};
        uint64_t frames = g.frames;
        adf_error_t e2;
        int rc = adf_eof_encode(g.w, (uint32_t)events, ts, &eof, &e2);
        if (rc == ADF_EFULL && gen_flush(&g) == 0)
            rc = adf_eof_encode(g.w, (uint32_t)events, ts, &eof, &e2);
        if (rc != ADF_OK || gen_flush(&g)) {
            status = TUSK_EXIT_USAGE;
            goto done;
        }
        fprintf(stderr, PROG ": gen: %" PRIu64 " events, %" PRIu64 " frames + meta:eof, %" PRIu64 " bytes -> %s\n", events,
                frames, adf_file_writer_bytes(g.out), out_path);
    }
done:
    if (adf_file_writer_close(&g.out, &err) != ADF_OK && status == 0) {
        fprintf(stderr, PROG ": %s\n", err.message);
        status = TUSK_EXIT_USAGE;
    }
    adf_writer_destroy(&g.w);
    free(g.buf);
    free(crys);
    free(psa);
    free(trk);
    free(tru);
    return status;
}

/* ---- diff -------------------------------------------------------------------- */

typedef struct frame_ref {
    adf_key_t key;
    const uint8_t *bytes; /* the whole frame, key included */
    uint64_t offset;
} frame_ref_t;

typedef struct frame_list {
    uint8_t *data;
    size_t size;
    frame_ref_t *frames;
    size_t n;
} frame_list_t;

/* Read every top-level frame of a file (into memory: diff is for test
 * outputs and debugging, not for whole runs). */
static int load_frames(const char *path, frame_list_t *fl)
{
    memset(fl, 0, sizeof *fl);
    adf_file_reader_t *r = open_input(path, ADF_ON_ERROR_STOP);
    if (!r)
        return TUSK_EXIT_USAGE;
    size_t cap = 0, fcap = 0;
    adf_frame_t f;
    int rc;
    while ((rc = adf_file_reader_next(r, &f)) == ADF_OK) {
        size_t len = f.key.length;
        if (tusk_grow(&fl->data, &cap, fl->size + len, 1) != 0 ||
            tusk_grow(&fl->frames, &fcap, fl->n + 1, sizeof *fl->frames) != 0) {
            fprintf(stderr, PROG ": diff: out of memory reading %s\n", path);
            adf_file_reader_destroy(&r);
            return TUSK_EXIT_USAGE;
        }
        memcpy(fl->data + fl->size, f.payload - ADF_KEY_SIZE, len);
        fl->frames[fl->n++] = (frame_ref_t){.key = f.key, .bytes = NULL, .offset = f.offset};
        fl->size += len;
    }
    if (rc != ADF_END) {
        fprintf(stderr, PROG ": %s: %s\n", path, adf_file_reader_error(r)->message);
        adf_file_reader_destroy(&r);
        return rc == ADF_EIO ? TUSK_EXIT_USAGE : TUSK_EXIT_FAIL;
    }
    adf_file_reader_destroy(&r);
    /* The data may have moved while growing: point into it now. */
    size_t pos = 0;
    for (size_t i = 0; i < fl->n; i++) {
        fl->frames[i].bytes = fl->data + pos;
        pos += fl->frames[i].key.length;
    }
    return 0;
}

static int compare_frames(const void *pa, const void *pb)
{
    const frame_ref_t *a = pa, *b = pb;
    if (a->key.event != b->key.event)
        return a->key.event < b->key.event ? -1 : 1;
    if (a->key.timestamp != b->key.timestamp)
        return a->key.timestamp < b->key.timestamp ? -1 : 1;
    if (a->key.type != b->key.type)
        return a->key.type < b->key.type ? -1 : 1;
    if (a->key.length != b->key.length)
        return a->key.length < b->key.length ? -1 : 1;
    return memcmp(a->bytes, b->bytes, a->key.length);
}

static int cmd_diff(const tusk_cli_t *cli, int argc, char **argv)
{
    static const struct option longopts[] = {{"unordered", no_argument, NULL, 'u'}, {NULL, 0, NULL, 0}};
    bool unordered = false;
    int c;
    while ((c = tusk_cli_getopt(cli, argc, argv, "u", longopts, NULL)) != -1) {
        if (c != 'u')
            return TUSK_EXIT_USAGE;
        unordered = true;
    }
    if (!operands(argv, argc, 2))
        return TUSK_EXIT_USAGE;
    frame_list_t a, b;
    int status = load_frames(argv[optind], &a);
    if (status == 0)
        status = load_frames(argv[optind + 1], &b);
    else
        memset(&b, 0, sizeof b);
    if (status == 0) {
        if (unordered) {
            qsort(a.frames, a.n, sizeof *a.frames, compare_frames);
            qsort(b.frames, b.n, sizeof *b.frames, compare_frames);
        }
        size_t n = a.n < b.n ? a.n : b.n, i = 0;
        while (i < n && compare_frames(&a.frames[i], &b.frames[i]) == 0)
            i++;
        if (i < n) {
            char ta[16], tb[16];
            printf("%s frame %zu (offset %llu, %s, event %u) differs from %s frame %zu (offset %llu, %s, event %u)\n",
                   argv[optind], i, (unsigned long long)a.frames[i].offset, type_label(a.frames[i].key.type, ta),
                   (unsigned)a.frames[i].key.event, argv[optind + 1], i, (unsigned long long)b.frames[i].offset,
                   type_label(b.frames[i].key.type, tb), (unsigned)b.frames[i].key.event);
            status = TUSK_EXIT_FAIL;
        } else if (a.n != b.n) {
            printf("%s has %zu frames, %s has %zu (the first %zu are the same%s)\n", argv[optind], a.n,
                   argv[optind + 1], b.n, n, unordered ? " after sorting" : "");
            status = TUSK_EXIT_FAIL;
        } else {
            printf("same: %zu frames%s\n", a.n, unordered ? " (order ignored)" : "");
        }
    }
    free(a.data);
    free(a.frames);
    free(b.data);
    free(b.frames);
    return status;
}

static const tusk_cli_command_t commands[] = {
    {"dump", cmd_dump, "one line per frame"},
    {"check", cmd_check, "validate every frame and payload"},
    {"stats", cmd_stats, "frames and bytes per type, events, time span"},
    {"diff", cmd_diff, "compare two files frame by frame"},
    {"gen", cmd_gen, "write synthetic frames (demos, tests)"},
    {NULL, NULL, NULL}};

int main(int argc, char **argv)
{
    static const tusk_cli_t cli = {PROG, PACKAGE_VERSION, "COMMAND [OPTIONS] FILE...", commands, NULL, help};
    return tusk_cli_main(&cli, argc, argv);
}
