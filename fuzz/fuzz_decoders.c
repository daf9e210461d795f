/* fuzz_decoders.c - fuzz target: the payload codecs, decode then re-encode.
 *
 * data[0] % FUZZ_DECODER_TYPES picks the frame type (data:crystal,
 * data:psa, data:tracked, meta:eof, event:data:psa, data:truth,
 * data:id_spacepoints, data:zvertex, data:id_truth, data:sts_digis,
 * data:sts_clusters, data:sts_hits, data:sts_truth, data:tpc_clusters,
 * data:tpc_tracks, data:tpc_truth, data:ut_raw, data:velo_tracks,
 * data:ut_tracks, data:ut_hits, data:ut_truth); data[1..]
 * is the payload. The frame is written with adf_writer into a buffer of
 * exactly its size (so ASan or valgrind catch any read past it), read back with
 * adf_reader, and given to every decoder: the ones for other types must
 * refuse it with ADF_EBADTYPE, the matching one decodes it or reports an
 * error with a message. When it decodes, the struct is encoded again into a
 * buffer of exactly the same size and the two frames must be identical,
 * byte for byte (key included): every format is canonical, so
 * decode(x) = decode(y) only if x = y. The exceptions are data:tracked's 4
 * reserved bytes per gamma, data:truth's and data:id_spacepoints' 2 and
 * data:zvertex's 4 reserved header bytes, which the decoders ignore and the encoders write as zero (compared as zero),
 * and data:psa without the figure-of-merit extension, which decodes with
 * has_fom false and so re-encodes without it.
 * Then the encoder gets a buffer one byte too small, empty (ADF_ETOOBIG) and
 * after another frame (ADF_EFULL): the frame must be refused whole.
 * Floats are copied bit for bit (NaN payloads included) on hosts with SSE
 * or other non-x87 floating point, which is what this assumes.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_targets.h"
#include "tusk/adf.h"

/* The most crystals decoded from one event:data:psa (ADF_ERANGE beyond):
 * small enough that a long payload can exceed it. */
#define EVENT_PSA_MAX 48
/* Smallest data:psa sub-frame: key plus the crystal header. */
#define PSA_FRAME_MIN (ADF_KEY_SIZE + ADF_PSA_HEADER_SIZE)

static const uint32_t decoder_types[FUZZ_DECODER_TYPES] = FUZZ_DECODER_TYPE_LIST;

/* Storage for whichever decoder runs. */
typedef struct decoded {
    adf_crystal_t *crystal;
    adf_psa_t *psa; /* n_psa of them */
    size_t n_psa;
    adf_key_t *keys;
    adf_tracked_t *tracked;
    adf_truth_t *truth;
    adf_eof_t eof;
    adf_idsp_t idsp;          /* the z-finder's frames, their points copied out */
    adf_idsp_point_t *idsp_pts;
    adf_zvertex_t zvertex;
    adf_idtruth_t *idtruth;
    adf_idtruth_point_t *idtruth_pts;
    adf_sts_digis_t sts_digis;  /* the STS's frames, their records copied out */
    uint64_t *sts_keys;
    adf_sts_clusters_t sts_clusters;
    adf_sts_cluster_t *sts_cl;
    adf_sts_hits_t sts_hits;
    adf_sts_hit_t *sts_hit;
    adf_sts_truth_t sts_truth;
    adf_sts_point_t *sts_pt;
    uint32_t *sts_dp;
    adf_tpc_clusters_t tpc_clusters; /* the TPC's frames, their records copied out */
    adf_tpc_cluster_t *tpc_cl;
    adf_tpc_tracks_t tpc_tracks;
    adf_tpc_track_t *tpc_tr;
    adf_tpc_hit_t *tpc_hit;
    adf_tpc_truth_t tpc_truth;
    adf_tpc_particle_t *tpc_pt;
    uint32_t *tpc_cp;
    adf_ut_raw_t ut_raw;      /* the UT's frames, their records copied out */
    adf_ut_bank_t *ut_banks;
    uint16_t *ut_words;
    adf_velo_tracks_t velo;
    adf_velo_track_t *velo_t;
    adf_ut_tracks_t ut_tracks;
    adf_ut_track_t *ut_t;
    adf_ut_hits_t ut_hits;
    adf_ut_hit_t *ut_h;
    adf_ut_truth_t ut_truth;
    adf_ut_particle_t *ut_p;
    uint32_t *ut_hp, *ut_vp;
    size_t n_event; /* crystals of an event:data:psa */
} decoded_t;

static void check_error(int rc, const adf_error_t *err)
{
    FUZZ_CHECK(rc < 0);
    FUZZ_CHECK(err->code == rc);
    FUZZ_CHECK(memchr(err->message, '\0', sizeof err->message) != NULL);
    FUZZ_CHECK(err->message[0] != '\0');
}

/* Decode `f` as `type`; ADF_ENOMEM (not a library status here) when the
 * struct could not be allocated. */
static int decode_as(uint32_t type, const adf_frame_t *f, decoded_t *d, adf_error_t *err)
{
    switch (type) {
    case ADF_TYPE_DATA_CRYSTAL:
        if (!d->crystal && !(d->crystal = malloc(sizeof *d->crystal)))
            return ADF_ENOMEM;
        return adf_crystal_decode(f, d->crystal, err);
    case ADF_TYPE_DATA_PSA:
        if (!d->psa && !(d->psa = malloc(sizeof *d->psa)))
            return ADF_ENOMEM;
        if (!d->n_psa)
            d->n_psa = 1;
        return adf_psa_decode(f, d->psa, err);
    case ADF_TYPE_DATA_TRACKED:
        if (!d->tracked && !(d->tracked = malloc(sizeof *d->tracked)))
            return ADF_ENOMEM;
        return adf_tracked_decode(f, d->tracked, err);
    case ADF_TYPE_DATA_TRUTH:
        if (!d->truth && !(d->truth = malloc(sizeof *d->truth)))
            return ADF_ENOMEM;
        return adf_truth_decode(f, d->truth, err);
    case ADF_TYPE_META_EOF: return adf_eof_decode(f, &d->eof, err);
    case ADF_TYPE_DATA_ID_SPACEPOINTS: {
        int rc = adf_idsp_decode(f, &d->idsp, err);
        if (rc != ADF_OK)
            return rc;
        free(d->idsp_pts);
        if (!(d->idsp_pts = malloc((d->idsp.n_points ? d->idsp.n_points : 1) * sizeof *d->idsp_pts)))
            return ADF_ENOMEM;
        for (uint32_t i = 0; i < d->idsp.n_points; i++)
            adf_idsp_point(&d->idsp, i, &d->idsp_pts[i]);
        return ADF_OK;
    }
    case ADF_TYPE_DATA_ZVERTEX: return adf_zvertex_decode(f, &d->zvertex, err);
    case ADF_TYPE_DATA_ID_TRUTH: {
        if (!d->idtruth && !(d->idtruth = malloc(sizeof *d->idtruth)))
            return ADF_ENOMEM;
        int rc = adf_idtruth_decode(f, d->idtruth, err);
        if (rc != ADF_OK)
            return rc;
        free(d->idtruth_pts);
        if (!(d->idtruth_pts = malloc((d->idtruth->n_points ? d->idtruth->n_points : 1) * sizeof *d->idtruth_pts)))
            return ADF_ENOMEM;
        for (uint32_t i = 0; i < d->idtruth->n_points; i++)
            adf_idtruth_point(d->idtruth, i, &d->idtruth_pts[i]);
        return ADF_OK;
    }
    case ADF_TYPE_DATA_STS_DIGIS: {
        int rc = adf_sts_digis_decode(f, &d->sts_digis, err);
        if (rc != ADF_OK)
            return rc;
        free(d->sts_keys);
        if (!(d->sts_keys = malloc((d->sts_digis.n_digis ? d->sts_digis.n_digis : 1) * sizeof *d->sts_keys)))
            return ADF_ENOMEM;
        adf_sts_digis_keys(&d->sts_digis, 0, d->sts_digis.n_digis, d->sts_keys);
        return ADF_OK;
    }
    case ADF_TYPE_DATA_STS_CLUSTERS: {
        int rc = adf_sts_clusters_decode(f, &d->sts_clusters, err);
        if (rc != ADF_OK)
            return rc;
        uint32_t n = d->sts_clusters.n_front + d->sts_clusters.n_back;
        free(d->sts_cl);
        if (!(d->sts_cl = malloc((n ? n : 1) * sizeof *d->sts_cl)))
            return ADF_ENOMEM;
        for (uint32_t i = 0; i < n; i++)
            adf_sts_cluster(&d->sts_clusters, i, &d->sts_cl[i]);
        return ADF_OK;
    }
    case ADF_TYPE_DATA_STS_HITS: {
        int rc = adf_sts_hits_decode(f, &d->sts_hits, err);
        if (rc != ADF_OK)
            return rc;
        free(d->sts_hit);
        if (!(d->sts_hit = malloc((d->sts_hits.n_hits ? d->sts_hits.n_hits : 1) * sizeof *d->sts_hit)))
            return ADF_ENOMEM;
        for (uint32_t i = 0; i < d->sts_hits.n_hits; i++)
            adf_sts_hit(&d->sts_hits, i, &d->sts_hit[i]);
        return ADF_OK;
    }
    case ADF_TYPE_DATA_STS_TRUTH: {
        int rc = adf_sts_truth_decode(f, &d->sts_truth, err);
        if (rc != ADF_OK)
            return rc;
        free(d->sts_pt);
        free(d->sts_dp);
        d->sts_pt = malloc((d->sts_truth.n_points ? d->sts_truth.n_points : 1) * sizeof *d->sts_pt);
        d->sts_dp = malloc((d->sts_truth.n_digis ? d->sts_truth.n_digis : 1) * sizeof *d->sts_dp);
        if (!d->sts_pt || !d->sts_dp)
            return ADF_ENOMEM;
        for (uint32_t i = 0; i < d->sts_truth.n_points; i++)
            adf_sts_truth_point(&d->sts_truth, i, &d->sts_pt[i]);
        adf_sts_truth_digis(&d->sts_truth, 0, d->sts_truth.n_digis, d->sts_dp);
        return ADF_OK;
    }
    case ADF_TYPE_DATA_TPC_CLUSTERS: {
        int rc = adf_tpc_clusters_decode(f, &d->tpc_clusters, err);
        if (rc != ADF_OK)
            return rc;
        free(d->tpc_cl);
        if (!(d->tpc_cl = malloc((d->tpc_clusters.n_clusters ? d->tpc_clusters.n_clusters : 1) * sizeof *d->tpc_cl)))
            return ADF_ENOMEM;
        for (uint32_t i = 0; i < d->tpc_clusters.n_clusters; i++)
            adf_tpc_cluster(&d->tpc_clusters, i, &d->tpc_cl[i]);
        return ADF_OK;
    }
    case ADF_TYPE_DATA_TPC_TRACKS: {
        int rc = adf_tpc_tracks_decode(f, &d->tpc_tracks, err);
        if (rc != ADF_OK)
            return rc;
        free(d->tpc_tr);
        free(d->tpc_hit);
        d->tpc_tr = malloc((d->tpc_tracks.n_tracks ? d->tpc_tracks.n_tracks : 1) * sizeof *d->tpc_tr);
        d->tpc_hit = malloc((d->tpc_tracks.n_hits ? d->tpc_tracks.n_hits : 1) * sizeof *d->tpc_hit);
        if (!d->tpc_tr || !d->tpc_hit)
            return ADF_ENOMEM;
        for (uint32_t i = 0; i < d->tpc_tracks.n_tracks; i++)
            adf_tpc_track(&d->tpc_tracks, i, &d->tpc_tr[i]);
        for (uint32_t j = 0; j < d->tpc_tracks.n_hits; j++)
            adf_tpc_hit(&d->tpc_tracks, j, &d->tpc_hit[j]);
        return ADF_OK;
    }
    case ADF_TYPE_DATA_TPC_TRUTH: {
        int rc = adf_tpc_truth_decode(f, &d->tpc_truth, err);
        if (rc != ADF_OK)
            return rc;
        free(d->tpc_pt);
        free(d->tpc_cp);
        d->tpc_pt = malloc((d->tpc_truth.n_particles ? d->tpc_truth.n_particles : 1) * sizeof *d->tpc_pt);
        d->tpc_cp = malloc((d->tpc_truth.n_clusters ? d->tpc_truth.n_clusters : 1) * sizeof *d->tpc_cp);
        if (!d->tpc_pt || !d->tpc_cp)
            return ADF_ENOMEM;
        for (uint32_t i = 0; i < d->tpc_truth.n_particles; i++)
            adf_tpc_truth_particle(&d->tpc_truth, i, &d->tpc_pt[i]);
        adf_tpc_truth_clusters(&d->tpc_truth, 0, d->tpc_truth.n_clusters, d->tpc_cp);
        return ADF_OK;
    }
    case ADF_TYPE_DATA_UT_RAW: {
        int rc = adf_ut_raw_decode(f, &d->ut_raw, err);
        if (rc != ADF_OK)
            return rc;
        free(d->ut_banks);
        free(d->ut_words);
        d->ut_banks = malloc((d->ut_raw.n_banks + 1u) * sizeof *d->ut_banks);
        d->ut_words = malloc((d->ut_raw.n_hits + 1u) * sizeof *d->ut_words);
        if (!d->ut_banks || !d->ut_words)
            return ADF_ENOMEM;
        adf_ut_raw_read(&d->ut_raw, d->ut_banks, d->ut_words);
        return ADF_OK;
    }
    case ADF_TYPE_DATA_VELO_TRACKS: {
        int rc = adf_velo_tracks_decode(f, &d->velo, err);
        if (rc != ADF_OK)
            return rc;
        free(d->velo_t);
        if (!(d->velo_t = malloc((d->velo.n_tracks + 1u) * sizeof *d->velo_t)))
            return ADF_ENOMEM;
        for (uint32_t i = 0; i < d->velo.n_tracks; i++)
            adf_velo_track(&d->velo, i, &d->velo_t[i]);
        return ADF_OK;
    }
    case ADF_TYPE_DATA_UT_TRACKS: {
        int rc = adf_ut_tracks_decode(f, &d->ut_tracks, err);
        if (rc != ADF_OK)
            return rc;
        free(d->ut_t);
        if (!(d->ut_t = malloc((d->ut_tracks.n_tracks + 1u) * sizeof *d->ut_t)))
            return ADF_ENOMEM;
        for (uint32_t i = 0; i < d->ut_tracks.n_tracks; i++)
            adf_ut_track(&d->ut_tracks, i, &d->ut_t[i]);
        return ADF_OK;
    }
    case ADF_TYPE_DATA_UT_HITS: {
        int rc = adf_ut_hits_decode(f, &d->ut_hits, err);
        if (rc != ADF_OK)
            return rc;
        free(d->ut_h);
        if (!(d->ut_h = malloc((d->ut_hits.n_hits + 1u) * sizeof *d->ut_h)))
            return ADF_ENOMEM;
        for (uint32_t i = 0; i < d->ut_hits.n_hits; i++)
            adf_ut_hit(&d->ut_hits, i, &d->ut_h[i]);
        return ADF_OK;
    }
    case ADF_TYPE_DATA_UT_TRUTH: {
        int rc = adf_ut_truth_decode(f, &d->ut_truth, err);
        if (rc != ADF_OK)
            return rc;
        free(d->ut_p);
        free(d->ut_hp);
        free(d->ut_vp);
        d->ut_p = malloc((d->ut_truth.n_particles + 1u) * sizeof *d->ut_p);
        d->ut_hp = malloc((d->ut_truth.n_hits + 1u) * sizeof *d->ut_hp);
        d->ut_vp = malloc((d->ut_truth.n_velo + 1u) * sizeof *d->ut_vp);
        if (!d->ut_p || !d->ut_hp || !d->ut_vp)
            return ADF_ENOMEM;
        for (uint32_t i = 0; i < d->ut_truth.n_particles; i++)
            adf_ut_truth_particle(&d->ut_truth, i, &d->ut_p[i]);
        adf_ut_truth_hits(&d->ut_truth, 0, d->ut_truth.n_hits, d->ut_hp);
        adf_ut_truth_velo(&d->ut_truth, 0, d->ut_truth.n_velo, d->ut_vp);
        return ADF_OK;
    }
    case ADF_TYPE_EVENT_DATA_PSA: {
        /* As many structs as the payload could hold crystals, capped. */
        size_t max = f->payload_size / PSA_FRAME_MIN + 1;
        if (max > EVENT_PSA_MAX)
            max = EVENT_PSA_MAX;
        if (d->n_psa < max) {
            free(d->psa);
            free(d->keys);
            d->psa = malloc(max * sizeof *d->psa);
            d->keys = malloc(max * sizeof *d->keys);
            d->n_psa = d->psa && d->keys ? max : 0;
            if (!d->n_psa)
                return ADF_ENOMEM;
        }
        d->n_event = SIZE_MAX;
        int rc = adf_event_psa_decode(f, d->keys, d->psa, max, &d->n_event, err);
        FUZZ_CHECK(rc == ADF_OK ? d->n_event <= max : d->n_event == 0);
        return rc;
    }
    default: FUZZ_CHECK(!"unknown decoder type"); return ADF_EINVAL;
    }
}

/* Encode what decode_as(type) produced, with the key's event and timestamp. */
static int encode_as(uint32_t type, adf_writer_t *w, const adf_key_t *key, const decoded_t *d, adf_error_t *err)
{
    switch (type) {
    case ADF_TYPE_DATA_CRYSTAL: return adf_crystal_encode(w, key->event, key->timestamp, d->crystal, err);
    case ADF_TYPE_DATA_PSA: return adf_psa_encode(w, key->event, key->timestamp, d->psa, err);
    case ADF_TYPE_DATA_TRACKED: return adf_tracked_encode(w, key->event, key->timestamp, d->tracked, err);
    case ADF_TYPE_DATA_TRUTH: return adf_truth_encode(w, key->event, key->timestamp, d->truth, err);
    case ADF_TYPE_META_EOF: return adf_eof_encode(w, key->event, key->timestamp, &d->eof, err);
    case ADF_TYPE_DATA_ID_SPACEPOINTS:
        return adf_idsp_encode(w, key->event, key->timestamp, &d->idsp, d->idsp_pts, err);
    case ADF_TYPE_DATA_ZVERTEX: return adf_zvertex_encode(w, key->event, key->timestamp, &d->zvertex, err);
    case ADF_TYPE_DATA_ID_TRUTH:
        return adf_idtruth_encode(w, key->event, key->timestamp, d->idtruth, d->idtruth_pts, err);
    case ADF_TYPE_DATA_STS_DIGIS:
        return adf_sts_digis_encode(w, key->event, key->timestamp, &d->sts_digis, d->sts_keys, err);
    case ADF_TYPE_DATA_STS_CLUSTERS:
        return adf_sts_clusters_encode(w, key->event, key->timestamp, &d->sts_clusters, d->sts_cl, err);
    case ADF_TYPE_DATA_STS_HITS: return adf_sts_hits_encode(w, key->event, key->timestamp, &d->sts_hits, d->sts_hit, err);
    case ADF_TYPE_DATA_STS_TRUTH:
        return adf_sts_truth_encode(w, key->event, key->timestamp, &d->sts_truth, d->sts_pt, d->sts_dp, err);
    case ADF_TYPE_DATA_TPC_CLUSTERS:
        return adf_tpc_clusters_encode(w, key->event, key->timestamp, &d->tpc_clusters, d->tpc_cl, err);
    case ADF_TYPE_DATA_TPC_TRACKS:
        return adf_tpc_tracks_encode(w, key->event, key->timestamp, &d->tpc_tracks, d->tpc_tr, d->tpc_hit, err);
    case ADF_TYPE_DATA_TPC_TRUTH:
        return adf_tpc_truth_encode(w, key->event, key->timestamp, &d->tpc_truth, d->tpc_pt, d->tpc_cp, err);
    case ADF_TYPE_DATA_UT_RAW:
        return adf_ut_raw_encode(w, key->event, key->timestamp, &d->ut_raw, d->ut_banks, d->ut_words, err);
    case ADF_TYPE_DATA_VELO_TRACKS:
        return adf_velo_tracks_encode(w, key->event, key->timestamp, &d->velo, d->velo_t, err);
    case ADF_TYPE_DATA_UT_TRACKS: return adf_ut_tracks_encode(w, key->event, key->timestamp, &d->ut_tracks, d->ut_t, err);
    case ADF_TYPE_DATA_UT_HITS: return adf_ut_hits_encode(w, key->event, key->timestamp, &d->ut_hits, d->ut_h, err);
    case ADF_TYPE_DATA_UT_TRUTH:
        return adf_ut_truth_encode(w, key->event, key->timestamp, &d->ut_truth, d->ut_p, d->ut_hp, d->ut_vp, err);
    case ADF_TYPE_EVENT_DATA_PSA:
        return adf_event_psa_encode(w, key->event, key->timestamp, d->keys, d->psa, d->n_event, err);
    default: FUZZ_CHECK(!"unknown encoder type"); return ADF_EINVAL;
    }
}

/* Check the decoded struct against the payload it came from. */
static void check_decoded(uint32_t type, const adf_frame_t *f, const decoded_t *d)
{
    switch (type) {
    case ADF_TYPE_DATA_CRYSTAL:
        FUZZ_CHECK(d->crystal->n_samples <= ADF_CRYSTAL_MAX_SAMPLES);
        FUZZ_CHECK(f->payload_size == adf_crystal_payload_size(d->crystal->n_samples));
        break;
    case ADF_TYPE_DATA_PSA:
        FUZZ_CHECK(d->psa->n_hits <= ADF_PSA_MAX_HITS);
        FUZZ_CHECK(f->payload_size == adf_psa_payload_size(d->psa->n_hits, d->psa->has_fom));
        break;
    case ADF_TYPE_DATA_TRACKED:
        FUZZ_CHECK(d->tracked->n_gammas <= ADF_TRACKED_MAX_GAMMAS);
        FUZZ_CHECK(f->payload_size == adf_tracked_payload_size(d->tracked->n_gammas));
        break;
    case ADF_TYPE_DATA_TRUTH: {
        const adf_truth_t *t = d->truth;
        FUZZ_CHECK(t->n_gammas <= ADF_TRUTH_MAX_GAMMAS && t->n_points <= ADF_TRUTH_MAX_POINTS);
        FUZZ_CHECK(f->payload_size == adf_truth_payload_size(t->n_gammas, t->n_points));
        for (unsigned i = 0; i < t->n_points; i++)
            FUZZ_CHECK(t->point[i].gamma < t->n_gammas && t->point[i].process >= ADF_TRUTH_PHOTO &&
                       t->point[i].process <= ADF_TRUTH_PAIR && t->point[i].segment >= ADF_TRUTH_NO_SEGMENT &&
                       t->point[i].segment < ADF_TRUTH_SEGMENTS);
        break;
    }
    case ADF_TYPE_META_EOF:
        FUZZ_CHECK(f->payload_size == (d->eof.has_counts ? ADF_EOF_PAYLOAD_SIZE : 0u));
        break;
    case ADF_TYPE_DATA_ID_SPACEPOINTS:
        FUZZ_CHECK(d->idsp.n_points <= ADF_IDSP_MAX_POINTS);
        FUZZ_CHECK(f->payload_size == adf_idsp_payload_size(d->idsp.n_points));
        for (uint32_t i = 0; i < d->idsp.n_points; i++)
            FUZZ_CHECK(d->idsp_pts[i].layer < ADF_IDSP_MAX_LAYERS);
        break;
    case ADF_TYPE_DATA_ZVERTEX:
        FUZZ_CHECK(d->zvertex.n_vertices <= ADF_ZVERTEX_MAX);
        FUZZ_CHECK(f->payload_size == adf_zvertex_payload_size(d->zvertex.n_vertices));
        break;
    case ADF_TYPE_DATA_ID_TRUTH:
        FUZZ_CHECK(d->idtruth->n_pileup <= ADF_IDTRUTH_MAX_PILEUP);
        FUZZ_CHECK(f->payload_size == adf_idtruth_payload_size(d->idtruth->n_pileup, d->idtruth->n_points));
        for (uint32_t i = 0; i < d->idtruth->n_points; i++)
            FUZZ_CHECK(d->idtruth_pts[i].vertex == ADF_IDTRUTH_NOISE_VERTEX ||
                       d->idtruth_pts[i].vertex <= d->idtruth->n_pileup);
        break;
    case ADF_TYPE_DATA_STS_DIGIS:
        FUZZ_CHECK(f->payload_size == adf_sts_digis_payload_size(d->sts_digis.n_digis));
        for (uint32_t i = 0; i < d->sts_digis.n_digis; i++)
            FUZZ_CHECK(adf_sts_key_channel(d->sts_keys[i]) < 2u * d->sts_digis.strips &&
                       adf_sts_key_time(d->sts_keys[i]) < d->sts_digis.length_ns);
        break;
    case ADF_TYPE_DATA_STS_CLUSTERS: {
        const adf_sts_clusters_t *c = &d->sts_clusters;
        FUZZ_CHECK(f->payload_size == adf_sts_clusters_payload_size(c->n_front + c->n_back));
        for (uint32_t i = 0; i < c->n_front + c->n_back; i++)
            FUZZ_CHECK(d->sts_cl[i].size >= 1 &&
                       (i < c->n_front ? d->sts_cl[i].channel + d->sts_cl[i].size <= c->strips
                                       : d->sts_cl[i].channel >= c->strips &&
                                             d->sts_cl[i].channel + d->sts_cl[i].size <= 2u * c->strips));
        break;
    }
    case ADF_TYPE_DATA_STS_HITS:
        FUZZ_CHECK(f->payload_size == adf_sts_hits_payload_size(d->sts_hits.n_hits));
        break;
    case ADF_TYPE_DATA_STS_TRUTH:
        FUZZ_CHECK(f->payload_size == adf_sts_truth_payload_size(d->sts_truth.n_points, d->sts_truth.n_digis));
        for (uint32_t i = 0; i < d->sts_truth.n_digis; i++)
            FUZZ_CHECK(d->sts_dp[i] == ADF_STS_NOISE || d->sts_dp[i] < d->sts_truth.n_points);
        break;
    case ADF_TYPE_DATA_TPC_CLUSTERS:
        FUZZ_CHECK(f->payload_size == adf_tpc_clusters_payload_size(d->tpc_clusters.n_clusters));
        FUZZ_CHECK(d->tpc_clusters.slice < ADF_TPC_SLICES);
        for (uint32_t i = 0; i < d->tpc_clusters.n_clusters; i++)
            FUZZ_CHECK(d->tpc_cl[i].row < ADF_TPC_ROWS);
        break;
    case ADF_TYPE_DATA_TPC_TRACKS: {
        const adf_tpc_tracks_t *t = &d->tpc_tracks;
        FUZZ_CHECK(f->payload_size == adf_tpc_tracks_payload_size(t->n_tracks, t->n_hits));
        uint64_t hits = 0;
        for (uint32_t i = 0; i < t->n_tracks; i++)
            hits += d->tpc_tr[i].n_hits;
        FUZZ_CHECK(hits == t->n_hits);
        for (uint32_t j = 0; j < t->n_hits; j++)
            FUZZ_CHECK(d->tpc_hit[j].cluster < t->n_clusters && d->tpc_hit[j].row < ADF_TPC_ROWS);
        break;
    }
    case ADF_TYPE_DATA_TPC_TRUTH:
        FUZZ_CHECK(f->payload_size == adf_tpc_truth_payload_size(d->tpc_truth.n_particles, d->tpc_truth.n_clusters));
        for (uint32_t i = 0; i < d->tpc_truth.n_clusters; i++)
            FUZZ_CHECK(d->tpc_cp[i] == ADF_TPC_NOISE || d->tpc_cp[i] < d->tpc_truth.n_particles);
        break;
    case ADF_TYPE_DATA_UT_RAW: {
        FUZZ_CHECK(f->payload_size == adf_ut_raw_payload_size(d->ut_raw.n_banks, d->ut_raw.n_hits));
        const uint16_t *w = d->ut_words;
        uint64_t sum = 0;
        for (unsigned i = 0; i < d->ut_raw.n_banks; i++) {
            FUZZ_CHECK(i == 0 || d->ut_banks[i].sector > d->ut_banks[i - 1].sector);
            for (unsigned k = 0; k < d->ut_banks[i].n_hits; k++, w++)
                FUZZ_CHECK(k == 0 || adf_ut_word_strip(*w) > adf_ut_word_strip(w[-1]));
            sum += d->ut_banks[i].n_hits;
        }
        FUZZ_CHECK(sum == d->ut_raw.n_hits);
        break;
    }
    case ADF_TYPE_DATA_VELO_TRACKS:
        FUZZ_CHECK(f->payload_size == adf_velo_tracks_payload_size(d->velo.n_tracks));
        for (uint32_t i = 0; i < d->velo.n_tracks; i++)
            FUZZ_CHECK((d->velo_t[i].flags & ~ADF_VELO_BACKWARD) == 0);
        break;
    case ADF_TYPE_DATA_UT_TRACKS:
        FUZZ_CHECK(f->payload_size == adf_ut_tracks_payload_size(d->ut_tracks.n_tracks));
        for (uint32_t i = 0; i < d->ut_tracks.n_tracks; i++)
            FUZZ_CHECK((i == 0 || d->ut_t[i].velo > d->ut_t[i - 1].velo) && d->ut_t[i].n_hits >= 3 &&
                       d->ut_t[i].n_hits <= 4);
        break;
    case ADF_TYPE_DATA_UT_HITS:
        FUZZ_CHECK(f->payload_size == adf_ut_hits_payload_size(d->ut_hits.n_hits));
        for (uint32_t i = 1; i < d->ut_hits.n_hits; i++)
            FUZZ_CHECK(d->ut_h[i].group >= d->ut_h[i - 1].group);
        break;
    case ADF_TYPE_DATA_UT_TRUTH:
        FUZZ_CHECK(f->payload_size ==
                   adf_ut_truth_payload_size(d->ut_truth.n_particles, d->ut_truth.n_hits, d->ut_truth.n_velo));
        for (uint32_t i = 0; i < d->ut_truth.n_hits; i++)
            FUZZ_CHECK(d->ut_hp[i] == ADF_UT_NONE || d->ut_hp[i] < d->ut_truth.n_particles);
        for (uint32_t i = 0; i < d->ut_truth.n_particles; i++)
            FUZZ_CHECK(d->ut_p[i].charge == 1 || d->ut_p[i].charge == -1);
        break;
    case ADF_TYPE_EVENT_DATA_PSA: {
        size_t total = 0;
        for (size_t i = 0; i < d->n_event; i++) {
            FUZZ_CHECK(d->keys[i].type == ADF_TYPE_DATA_PSA);
            FUZZ_CHECK(d->psa[i].n_hits <= ADF_PSA_MAX_HITS);
            FUZZ_CHECK(d->keys[i].length == ADF_KEY_SIZE + adf_psa_payload_size(d->psa[i].n_hits, d->psa[i].has_fom));
            total += d->keys[i].length;
        }
        FUZZ_CHECK(total == f->payload_size);
        break;
    }
    default: break;
    }
}

int fuzz_decoders_one(const uint8_t *data, size_t size)
{
    if (size < 1 || size - 1 > ADF_FRAME_MAX - ADF_KEY_SIZE)
        return 0;
    const uint32_t type = decoder_types[data[0] % FUZZ_DECODER_TYPES];
    const uint8_t *payload = data + 1;
    const size_t payload_size = size - 1;
    const size_t frame_size = ADF_KEY_SIZE + payload_size;
    /* Event number and timestamp vary with the input, the timestamp within
     * 48 bits. */
    const adf_key_t key = {.length = 0,
                           .type = type,
                           .event = (uint32_t)(payload_size * 2654435761u),
                           .timestamp = ((uint64_t)payload_size * UINT64_C(0x9E3779B97F4A7C15)) & ADF_TIMESTAMP_MAX};

    uint8_t *frame_buf = malloc(frame_size);
    uint8_t *again_buf = malloc(frame_size);
    uint8_t *short_buf = malloc(ADF_KEY_SIZE + frame_size - 1);
    uint8_t *expected = malloc(payload_size ? payload_size : 1);
    adf_writer_t *w = adf_writer_new();
    adf_reader_t *r = adf_reader_new(ADF_ON_ERROR_STOP);
    decoded_t d = {0};
    if (!frame_buf || !again_buf || !short_buf || !expected || !w || !r)
        goto out; /* out of memory: nothing to test */

    /* The frame, written into a buffer of exactly its size. */
    adf_writer_reset(w, frame_buf, frame_size);
    FUZZ_CHECK(adf_writer_put(w, &key, payload, payload_size) == ADF_OK);
    FUZZ_CHECK(adf_writer_used(w) == frame_size);

    /* Read back: one frame with our key and payload, then the end. */
    adf_frame_t f, g;
    adf_reader_reset(r, frame_buf, frame_size, 0);
    FUZZ_CHECK(adf_reader_next(r, &f) == ADF_OK);
    FUZZ_CHECK(f.key.length == frame_size && f.key.type == type && f.key.event == key.event &&
               f.key.timestamp == key.timestamp);
    FUZZ_CHECK(f.offset == 0 && f.payload == frame_buf + ADF_KEY_SIZE && f.payload_size == payload_size);
    FUZZ_CHECK(payload_size == 0 || memcmp(f.payload, payload, payload_size) == 0);
    FUZZ_CHECK(adf_reader_next(r, &g) == ADF_END);

    /* Every other decoder refuses the frame. */
    adf_error_t err;
    for (int i = 0; i < FUZZ_DECODER_TYPES; i++) {
        if (decoder_types[i] == type)
            continue;
        int rc = decode_as(decoder_types[i], &f, &d, &err);
        if (rc == ADF_ENOMEM)
            goto out;
        FUZZ_CHECK(rc == ADF_EBADTYPE);
        check_error(rc, &err);
    }

    int rc = decode_as(type, &f, &d, &err);
    if (rc == ADF_ENOMEM)
        goto out;
    if (rc != ADF_OK) {
        check_error(rc, &err);
        /* Of the right type, the frame itself is never refused for its
         * type; the sub-frames of an event:data:psa may be. */
        FUZZ_CHECK(rc != ADF_EBADTYPE || type == ADF_TYPE_EVENT_DATA_PSA);
        if (type != ADF_TYPE_EVENT_DATA_PSA)
            FUZZ_CHECK((rc == ADF_EPAYLOAD || rc == ADF_ERANGE) && err.offset == f.offset);
        goto out;
    }
    check_decoded(type, &f, &d);

    /* Re-encode into a buffer of exactly the frame's size: a canonical
     * format needs exactly that much. */
    adf_writer_reset(w, again_buf, frame_size);
    rc = encode_as(type, w, &f.key, &d, &err);
    if (rc != ADF_OK)
        fprintf(stderr, "fuzz_decoders: re-encoding a decoded 0x%08X frame failed: %s\n", (unsigned)type,
                err.message);
    FUZZ_CHECK(rc == ADF_OK);
    FUZZ_CHECK(adf_writer_used(w) == frame_size);
    FUZZ_CHECK(adf_writer_depth(w) == 0);
    FUZZ_CHECK(!adf_writer_full(w));

    /* What the encoder must have written: the input, with data:tracked's
     * and data:truth's reserved bytes as zero. */
    if (payload_size)
        memcpy(expected, payload, payload_size);
    if (type == ADF_TYPE_DATA_TRACKED)
        for (unsigned i = 0; i < d.tracked->n_gammas; i++)
            memset(expected + ADF_TRACKED_HEADER_SIZE + (size_t)i * ADF_TRACKED_GAMMA_SIZE + 36, 0, 4);
    if (type == ADF_TYPE_DATA_TRUTH)
        memset(expected + 22, 0, 2);
    if (type == ADF_TYPE_DATA_ID_SPACEPOINTS)
        memset(expected + 14, 0, 2);
    if (type == ADF_TYPE_DATA_ZVERTEX)
        memset(expected + 20, 0, 4);
    FUZZ_CHECK(memcmp(again_buf, frame_buf, ADF_KEY_SIZE) == 0);
    if (payload_size && memcmp(again_buf + ADF_KEY_SIZE, expected, payload_size) != 0) {
        size_t at = 0;
        while (again_buf[ADF_KEY_SIZE + at] == expected[at])
            at++;
        fprintf(stderr,
                "fuzz_decoders: 0x%08X payload of %zu bytes re-encodes differently at byte %zu: "
                "0x%02X, input 0x%02X\n",
                (unsigned)type, payload_size, at, again_buf[ADF_KEY_SIZE + at], expected[at]);
        FUZZ_CHECK(!"decode + encode is not the identity");
    }

    /* One byte short, the frame is refused whole (composites included):
     * ADF_ETOOBIG in an empty buffer, ADF_EFULL after another frame, which
     * stays; nothing of the refused frame is counted as used. */
    adf_writer_reset(w, again_buf, frame_size - 1);
    rc = encode_as(type, w, &f.key, &d, &err);
    FUZZ_CHECK(rc == ADF_ETOOBIG);
    check_error(rc, &err);
    FUZZ_CHECK(adf_writer_error(w)->code == ADF_ETOOBIG);
    FUZZ_CHECK(adf_writer_used(w) == 0 && adf_writer_depth(w) == 0 && !adf_writer_full(w));

    const adf_key_t sync = {.length = 0, .type = ADF_TYPE_META_SYNC, .event = 7, .timestamp = 7};
    adf_writer_reset(w, short_buf, ADF_KEY_SIZE + frame_size - 1);
    FUZZ_CHECK(adf_writer_put(w, &sync, NULL, 0) == ADF_OK);
    rc = encode_as(type, w, &f.key, &d, &err);
    FUZZ_CHECK(rc == ADF_EFULL);
    check_error(rc, &err);
    FUZZ_CHECK(adf_writer_used(w) == ADF_KEY_SIZE && adf_writer_depth(w) == 0 && adf_writer_full(w));
    FUZZ_CHECK(adf_writer_put(w, &sync, NULL, 0) == ADF_EFULL);
    adf_reader_reset(r, short_buf, adf_writer_used(w), 0);
    FUZZ_CHECK(adf_reader_next(r, &g) == ADF_OK && g.key.type == ADF_TYPE_META_SYNC && g.payload_size == 0);
    FUZZ_CHECK(adf_reader_next(r, &g) == ADF_END);

out:
    free(d.crystal);
    free(d.psa);
    free(d.keys);
    free(d.tracked);
    free(d.truth);
    free(d.idsp_pts);
    free(d.idtruth);
    free(d.idtruth_pts);
    free(d.sts_keys);
    free(d.sts_cl);
    free(d.sts_hit);
    free(d.sts_pt);
    free(d.sts_dp);
    free(d.tpc_cl);
    free(d.tpc_tr);
    free(d.tpc_hit);
    free(d.tpc_pt);
    free(d.tpc_cp);
    free(d.ut_banks);
    free(d.ut_words);
    free(d.velo_t);
    free(d.ut_t);
    free(d.ut_h);
    free(d.ut_p);
    free(d.ut_hp);
    free(d.ut_vp);
    adf_reader_destroy(&r);
    adf_writer_destroy(&w);
    free(expected);
    free(short_buf);
    free(again_buf);
    free(frame_buf);
    return 0;
}

#ifdef FUZZ_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_decoders_one(data, size);
}
#endif
