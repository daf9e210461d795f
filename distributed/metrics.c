/* metrics.c - the status snapshot in the Prometheus text exposition
 * format, version 0.0.4 (tusk_status_metrics, see status.h): what
 * tusk-run serves at /metrics.
 *
 * Every metric family is written whole (its # HELP and # TYPE lines, then
 * one sample per instance or per link), names are tusk_..., counters end
 * in _total. Label values are escaped as the format says: backslash,
 * double quote and line feed. Values are integers, or decimals written
 * with '.' (tusk-run keeps the C numeric locale). */
#include <inttypes.h>
#include <string.h>

#include "status.h"

static void label_value(FILE *fp, const char *v)
{
    for (const char *p = v; *p; p++) {
        if (*p == '\\')
            fputs("\\\\", fp);
        else if (*p == '"')
            fputs("\\\"", fp);
        else if (*p == '\n')
            fputs("\\n", fp);
        else
            fputc(*p, fp);
    }
}

static void family(FILE *fp, const char *name, const char *type, const char *help)
{
    fprintf(fp, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void inst_labels(FILE *fp, const tusk_status_t *s, size_t i)
{
    const tusk_status_inst_t *in = &s->inst[i];
    fputs("{actor=\"", fp);
    label_value(fp, in->actor);
    fprintf(fp, "\",index=\"%u\",host=\"", in->k);
    label_value(fp, in->host);
    fputs("\"}", fp);
}

static void link_labels(FILE *fp, const tusk_status_t *s, size_t i)
{
    char from[TUSK_STATUS_NAME_MAX + 16], to[TUSK_STATUS_NAME_MAX + 16];
    tusk_status_label(s, s->links[i].from, from, sizeof from);
    tusk_status_label(s, s->links[i].to, to, sizeof to);
    fputs("{from=\"", fp);
    label_value(fp, from);
    fputs("\",to=\"", fp);
    label_value(fp, to);
    fputs("\"}", fp);
}

/* One family of per-instance integers: the field at `offset` of each. */
static void inst_u64(FILE *fp, const tusk_status_t *s, const char *name, const char *type, const char *help,
                     size_t offset)
{
    family(fp, name, type, help);
    for (size_t i = 0; i < s->n_inst; i++) {
        uint64_t v;
        memcpy(&v, (const char *)&s->inst[i] + offset, sizeof v);
        fputs(name, fp);
        inst_labels(fp, s, i);
        fprintf(fp, " %" PRIu64 "\n", v);
    }
}

static void link_u64(FILE *fp, const tusk_status_t *s, const char *name, const char *type, const char *help,
                     size_t offset)
{
    family(fp, name, type, help);
    for (size_t i = 0; i < s->n_links; i++) {
        uint64_t v;
        memcpy(&v, (const char *)&s->links[i] + offset, sizeof v);
        fputs(name, fp);
        link_labels(fp, s, i);
        fprintf(fp, " %" PRIu64 "\n", v);
    }
}

#define INST(name, type, field, help) \
    inst_u64(fp, s, "tusk_instance_" name, type, help, offsetof(tusk_status_inst_t, field))
#define LINK(name, type, field, help) \
    link_u64(fp, s, "tusk_link_" name, type, help, offsetof(tusk_status_link_t, field))

void tusk_status_metrics(const tusk_status_t *s, FILE *fp)
{
    family(fp, "tusk_run_number", "gauge", "The run number of the current run.");
    fprintf(fp, "tusk_run_number %" PRIu32 "\n", s->run);
    family(fp, "tusk_run_elapsed_seconds", "gauge", "Seconds since the current run started (0 before).");
    fprintf(fp, "tusk_run_elapsed_seconds %.3f\n", s->elapsed_s);
    family(fp, "tusk_control_malformed_messages_total", "counter",
           "Malformed messages on tusk-run's control socket, dropped.");
    fprintf(fp, "tusk_control_malformed_messages_total %" PRIu64 "\n", s->bad_control);
    family(fp, "tusk_control_refused_commands_total", "counter",
           "Control messages refused: from a peer not allowed to send them.");
    fprintf(fp, "tusk_control_refused_commands_total %" PRIu64 "\n", s->refused_commands);
    family(fp, "tusk_control_refused_connections_total", "counter",
           "Connections to tusk-run's control socket refused.");
    fprintf(fp, "tusk_control_refused_connections_total %" PRIu64 "\n", s->ctl_refused);
    family(fp, "tusk_control_denied_connections_total", "counter",
           "Connections to tusk-run's control socket denied by the authentication.");
    fprintf(fp, "tusk_control_denied_connections_total %" PRIu64 "\n", s->ctl_denied);

    family(fp, "tusk_instance_state", "gauge", "1 for the state each instance is in (label state).");
    for (size_t i = 0; i < s->n_inst; i++) {
        fputs("tusk_instance_state{actor=\"", fp);
        label_value(fp, s->inst[i].actor);
        fprintf(fp, "\",index=\"%u\",host=\"", s->inst[i].k);
        label_value(fp, s->inst[i].host);
        fputs("\",state=\"", fp);
        label_value(fp, s->inst[i].state);
        fputs("\"} 1\n", fp);
    }
    family(fp, "tusk_instance_bytes_per_second", "gauge",
           "Bytes per second into each instance (a producer: out of it), over the last snapshot period.");
    for (size_t i = 0; i < s->n_inst; i++) {
        fputs("tusk_instance_bytes_per_second", fp);
        inst_labels(fp, s, i);
        fprintf(fp, " %.0f\n", s->inst[i].bytes_per_s);
    }
    family(fp, "tusk_instance_block_seconds_total", "counter", "Seconds spent in process_block.");
    for (size_t i = 0; i < s->n_inst; i++) {
        fputs("tusk_instance_block_seconds_total", fp);
        inst_labels(fp, s, i);
        fprintf(fp, " %.6f\n", (double)s->inst[i].block_ns / 1e9);
    }
    family(fp, "tusk_instance_hook_seconds", "gauge", "Seconds the instance has been inside its current hook call.");
    for (size_t i = 0; i < s->n_inst; i++) {
        fputs("tusk_instance_hook_seconds", fp);
        inst_labels(fp, s, i);
        fprintf(fp, " %.3f\n", (double)s->inst[i].hook_ms / 1000.0);
    }
    INST("incarnation", "gauge", incarnation, "The incarnation of the instance (one more per restart).");
    INST("input_buffers_total", "counter", in_buffers, "Buffers into the instance (every incarnation).");
    INST("output_buffers_total", "counter", out_buffers, "Buffers out of the instance (every incarnation).");
    INST("input_bytes_total", "counter", in_bytes, "Bytes into the instance (every incarnation).");
    INST("output_bytes_total", "counter", out_bytes, "Bytes out of the instance (every incarnation).");
    INST("queue_buffers", "gauge", queue, "Buffers sent to the instance and not yet received by it.");
    INST("restarts_total", "counter", restarts, "Restarts of the instance.");
    INST("refused_connections_total", "counter", refused, "Connections to the instance's inputs refused.");
    INST("denied_connections_total", "counter", denied,
         "Connections to the instance's inputs denied by the authentication.");
    INST("dropped_messages_total", "counter", dropped, "Messages on the instance's inputs dropped (no data of the run).");

    LINK("sent_buffers_total", "counter", sent, "Buffers the upstream instance sent on the link.");
    LINK("received_buffers_total", "counter", received, "Buffers that arrived on the link (duplicates included).");
    LINK("finished_buffers_total", "counter", finished,
         "Buffers of the link the downstream instance finished (every output left, or consumed).");
    LINK("held_buffers", "gauge", held, "Buffers of the link held back (no output of their own yet).");
    LINK("duplicate_buffers_total", "counter", duplicates, "Buffer numbers that arrived again on the link (dropped).");
    LINK("gap_buffers_total", "counter", gaps, "Buffer numbers skipped on the link.");
    LINK("malformed_buffers_total", "counter", malformed, "Buffers on the link whose ADF framing was broken.");
    LINK("tap_samples_total", "counter", tap_sent, "Buffers of the link published to its sampling tap.");
    LINK("tap_dropped_total", "counter", tap_dropped,
         "Buffers of the link its sampling tap dropped (the tap's queue was full).");
}
