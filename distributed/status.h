/* status.h - a snapshot of a running chain, as tusk-run's status table
 * sees it, for the web page (web.h) and the metrics (/metrics).
 *
 * The controller fills one (controller.c, fill_status) from its own
 * figures, the ones its status table and its end-of-run reconciliation
 * print: this is a copy of them, not a second bookkeeping. The snapshot
 * is plain data: it is copied whole (tusk_status_copy) from the
 * controller's thread to the web server's, and written out as JSON
 * (tusk_status_json, the page's data) or in the Prometheus text format
 * (tusk_status_metrics, metrics.c).
 *
 * Counters (monotonic within a run): buffers and bytes in and out, hook
 * time, restarts, connections refused and denied, messages dropped; per
 * link sent, received, finished, duplicates, gaps, malformed. Gauges:
 * state, queue (buffers sent to the instance and not yet taken by it),
 * bytes per second (since the previous snapshot), the hook it is in and
 * for how long, held buffers, the run number and its elapsed time.
 */
#ifndef TUSK_DISTRIBUTED_STATUS_H
#define TUSK_DISTRIBUTED_STATUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tusk/error.h"

#define TUSK_STATUS_NAME_MAX 64
#define TUSK_STATUS_TEXT_MAX 512

typedef struct tusk_status_inst {
    char actor[TUSK_STATUS_NAME_MAX]; /* the actor's name in the topology */
    unsigned k;                       /* instance number */
    unsigned incarnation;             /* 0, then one more per restart */
    char host[TUSK_STATUS_NAME_MAX];
    char actor_class[16];             /* producer, filter, consumer */
    char state[16];                   /* as the status table says it */
    uint64_t in_buffers, out_buffers, in_bytes, out_bytes; /* every incarnation */
    uint64_t block_ns;                /* time in process_block */
    uint64_t queue;                   /* buffers sent to it, not yet received */
    uint64_t restarts;
    uint64_t refused, denied, dropped; /* its inputs: connections refused (denied by the
                                          authentication), messages dropped */
    double bytes_per_s;               /* in (a producer: out), since the last snapshot */
    char hook[48];                    /* the hook it is in ("": none) */
    uint64_t hook_ms;                 /* for how long */
    char last_error[TUSK_STATUS_TEXT_MAX]; /* "" none */
    char live_dir[TUSK_STATUS_TEXT_MAX];   /* its live pictures (""): web.h */
} tusk_status_inst_t;

typedef struct tusk_status_link { /* one upstream instance -> one downstream instance */
    unsigned from, to;            /* indices into inst[] */
    uint64_t sent, received, finished, held, duplicates, gaps, malformed;
    /* the sampling tap on it (tap.h): attached, samples published, samples dropped;
     * tap_listening: someone is subscribed to it (as of the instance's last statistics) */
    bool tap, tap_listening;
    char tap_address[128];
    uint64_t tap_sent, tap_dropped;
} tusk_status_link_t;

typedef struct tusk_run_status {
    char topology[TUSK_STATUS_NAME_MAX];
    char run_dir[TUSK_STATUS_TEXT_MAX]; /* the run folder */
    uint32_t run;                 /* run number */
    char run_state[16];           /* setup, running, stopping, ended */
    double elapsed_s;             /* since the run started (0 before) */
    uint64_t bad_control;         /* the controller: malformed control messages dropped */
    uint64_t refused_commands;    /* commands from a peer not allowed to send them */
    uint64_t ctl_refused, ctl_denied; /* its control socket: connections refused, denied */
    size_t n_inst, n_links;
    tusk_status_inst_t *inst;
    tusk_status_link_t *links;
} tusk_status_t;

/* Room for n_inst instances and n_links links (zeroed); a snapshot with
 * room already keeps it when the counts are the same. */
int tusk_status_size(tusk_status_t *s, size_t n_inst, size_t n_links, tusk_error_t *err);
/* A deep copy of src into dst (which has its own arrays, resized). */
int tusk_status_copy(tusk_status_t *dst, const tusk_status_t *src, tusk_error_t *err);
void tusk_status_free(tusk_status_t *s);

/* "name[k]" of instance i. */
void tusk_status_label(const tusk_status_t *s, size_t i, char *out, size_t n);

/* The snapshot as one JSON object (the page's data), strings escaped. */
void tusk_status_json(const tusk_status_t *s, FILE *fp);

/* The snapshot in the Prometheus text exposition format (version
 * 0.0.4): every counter and gauge above with its # HELP and # TYPE lines,
 * per instance (labels actor, index, host: not "instance", which
 * Prometheus gives the scrape target) and per link (labels from, to),
 * label values escaped as the format says (\\, \", \n). metrics.c. */
void tusk_status_metrics(const tusk_status_t *s, FILE *fp);

/* Filled by the controller (controller.c), on its own thread (ctlstate.h:
 * from the observer's tick): every instance of the topology, every link
 * between two instances, the run and the controller's own counts; the
 * rates (bytes_per_s) are left 0 for the caller, which knows its period. */
struct ctrl;
int tusk_controller_status(struct ctrl *c, tusk_status_t *s, tusk_error_t *err);

#endif
