/* status.c - the status snapshot: room, copies, JSON (see status.h). */
#include <stdlib.h>
#include <string.h>

#include "status.h"

int tusk_status_size(tusk_status_t *s, size_t n_inst, size_t n_links, tusk_error_t *err)
{
    if (s->n_inst != n_inst || !s->inst) {
        free(s->inst);
        s->inst = calloc(n_inst ? n_inst : 1, sizeof *s->inst);
        s->n_inst = s->inst ? n_inst : 0;
    } else {
        memset(s->inst, 0, n_inst * sizeof *s->inst);
    }
    if (s->n_links != n_links || !s->links) {
        free(s->links);
        s->links = calloc(n_links ? n_links : 1, sizeof *s->links);
        s->n_links = s->links ? n_links : 0;
    } else {
        memset(s->links, 0, n_links * sizeof *s->links);
    }
    if (!s->inst || !s->links)
        return tusk_error_set(err, TUSK_ENOMEM, "status snapshot: out of memory");
    return TUSK_OK;
}

int tusk_status_copy(tusk_status_t *dst, const tusk_status_t *src, tusk_error_t *err)
{
    tusk_status_inst_t *inst = dst->inst;
    tusk_status_link_t *links = dst->links;
    size_t n_inst = dst->n_inst, n_links = dst->n_links;
    *dst = *src;
    dst->inst = inst;
    dst->links = links;
    dst->n_inst = n_inst;
    dst->n_links = n_links;
    int rc = tusk_status_size(dst, src->n_inst, src->n_links, err);
    if (rc != TUSK_OK)
        return rc;
    if (src->n_inst)
        memcpy(dst->inst, src->inst, src->n_inst * sizeof *src->inst);
    if (src->n_links)
        memcpy(dst->links, src->links, src->n_links * sizeof *src->links);
    return TUSK_OK;
}

void tusk_status_free(tusk_status_t *s)
{
    if (!s)
        return;
    free(s->inst);
    free(s->links);
    memset(s, 0, sizeof *s);
}

void tusk_status_label(const tusk_status_t *s, size_t i, char *out, size_t n)
{
    if (i < s->n_inst)
        snprintf(out, n, "%s[%u]", s->inst[i].actor, s->inst[i].k);
    else if (n)
        out[0] = '\0';
}

/* A JSON string: quotes, backslashes and control characters escaped;
 * bytes >= 0x80 pass (the names are UTF-8 or ASCII). */
static void json_string(FILE *fp, const char *v)
{
    fputc('"', fp);
    for (const unsigned char *p = (const unsigned char *)v; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(fp, "\\%c", *p);
        else if (*p == '\n')
            fputs("\\n", fp);
        else if (*p < 0x20 || *p == 0x7f)
            fprintf(fp, "\\u%04x", *p);
        else
            fputc(*p, fp);
    }
    fputc('"', fp);
}

static void json_u64(FILE *fp, const char *key, uint64_t v, bool comma)
{
    fprintf(fp, "\"%s\":%llu%s", key, (unsigned long long)v, comma ? "," : "");
}

static void json_str(FILE *fp, const char *key, const char *v, bool comma)
{
    fprintf(fp, "\"%s\":", key);
    json_string(fp, v);
    if (comma)
        fputc(',', fp);
}

void tusk_status_json(const tusk_status_t *s, FILE *fp)
{
    fputc('{', fp);
    json_str(fp, "topology", s->topology, true);
    json_u64(fp, "run", s->run, true);
    json_str(fp, "run_state", s->run_state, true);
    fprintf(fp, "\"elapsed_s\":%.1f,", s->elapsed_s);
    json_u64(fp, "bad_control", s->bad_control, true);
    json_u64(fp, "refused_commands", s->refused_commands, true);
    json_u64(fp, "ctl_refused", s->ctl_refused, true);
    json_u64(fp, "ctl_denied", s->ctl_denied, true);
    fputs("\"instances\":[", fp);
    for (size_t i = 0; i < s->n_inst; i++) {
        const tusk_status_inst_t *in = &s->inst[i];
        char label[TUSK_STATUS_NAME_MAX + 16];
        tusk_status_label(s, i, label, sizeof label);
        fputs(i ? ",{" : "{", fp);
        json_str(fp, "label", label, true);
        json_str(fp, "actor", in->actor, true);
        json_u64(fp, "k", in->k, true);
        json_u64(fp, "incarnation", in->incarnation, true);
        json_str(fp, "host", in->host, true);
        json_str(fp, "class", in->actor_class, true);
        json_str(fp, "state", in->state, true);
        json_u64(fp, "in_buffers", in->in_buffers, true);
        json_u64(fp, "out_buffers", in->out_buffers, true);
        json_u64(fp, "in_bytes", in->in_bytes, true);
        json_u64(fp, "out_bytes", in->out_bytes, true);
        json_u64(fp, "block_ns", in->block_ns, true);
        json_u64(fp, "queue", in->queue, true);
        json_u64(fp, "restarts", in->restarts, true);
        json_u64(fp, "refused", in->refused, true);
        json_u64(fp, "denied", in->denied, true);
        json_u64(fp, "dropped", in->dropped, true);
        fprintf(fp, "\"bytes_per_s\":%.0f,", in->bytes_per_s);
        json_str(fp, "hook", in->hook, true);
        json_u64(fp, "hook_ms", in->hook_ms, true);
        json_str(fp, "last_error", in->last_error, true);
        fprintf(fp, "\"live\":%s}", in->live_dir[0] ? "true" : "false");
    }
    fputs("],\"links\":[", fp);
    for (size_t i = 0; i < s->n_links; i++) {
        const tusk_status_link_t *l = &s->links[i];
        fputs(i ? ",{" : "{", fp);
        json_u64(fp, "from", l->from, true);
        json_u64(fp, "to", l->to, true);
        json_u64(fp, "sent", l->sent, true);
        json_u64(fp, "received", l->received, true);
        json_u64(fp, "finished", l->finished, true);
        json_u64(fp, "held", l->held, true);
        json_u64(fp, "duplicates", l->duplicates, true);
        json_u64(fp, "gaps", l->gaps, true);
        json_u64(fp, "malformed", l->malformed, true);
        fprintf(fp, "\"tap\":%s,", l->tap ? "true" : "false");
        json_str(fp, "tap_address", l->tap_address, true);
        fprintf(fp, "\"tap_listening\":%s,", l->tap_listening ? "true" : "false");
        json_u64(fp, "tap_sent", l->tap_sent, true);
        json_u64(fp, "tap_dropped", l->tap_dropped, false);
        fputc('}', fp);
    }
    fputs("]}\n", fp);
}
