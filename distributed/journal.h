/* journal.h - an instance's output to the systemd journal as well as to
 * its log in the run folder (issue 27).
 *
 * With --engine systemd or systemd-system, tusk-run starts each instance
 * with `systemd-run --pipe` (its keys come on standard input, which only
 * --pipe passes), and --pipe gives the unit tusk-run's descriptors for
 * standard output and error too: the run folder's ACTOR.K.log, which the
 * controller reads for failure reports and the consumers' reports. So
 * systemd's StandardOutput=journal cannot be had with --pipe; instead the
 * unit gets TUSK_JOURNAL=IDENTIFIER (engine.h) and tusk-actor copies its
 * own output to both: tusk_journal_tee.
 *
 * The journal's stream protocol is systemd's (what StandardOutput=journal
 * and systemd-cat use): a stream connection to
 * /run/systemd/journal/stdout, a header of seven lines (identifier, unit
 * id, priority, level prefix, forward to syslog, to kmsg, to console),
 * then the text; journald adds the process's credentials and unit, so
 * `journalctl -t IDENTIFIER` (and `systemctl status UNIT`) show the lines.
 * An instance run under a debugger (tusk-actor --debug) does not copy:
 * its output goes to the run folder only.
 */
#ifndef TUSK_JOURNAL_H
#define TUSK_JOURNAL_H

#include "tusk/error.h"

#define TUSK_JOURNAL_SOCKET "/run/systemd/journal/stdout"

/* Is `ident` usable as a journal identifier here: 1 to 200 of letters,
 * digits and - _ . @ (no line break can reach the header)? */
int tusk_journal_ident_check(const char *ident, tusk_error_t *err);

/* A stream to the journal at `socket_path` for lines of `ident`, at
 * priority 6 (info), nothing forwarded: *fd, or TUSK_EIO saying why
 * (no journald: the socket is not there). */
int tusk_journal_connect(const char *socket_path, const char *ident, int *fd, tusk_error_t *err);

/* From now on, this process's standard output and error go to a pipe
 * read by a copier process (a child, which ignores SIGTERM/SIGINT/SIGHUP
 * and ends when every writer has closed the pipe, so no line is lost when
 * the process dies), which writes every byte to the standard output this
 * process had (the run folder's log) and to a journal stream of `ident`
 * (stdio's buffering stays what it was, as for a log file). Call it before
 * anything is written. On an error nothing is changed
 * (the output keeps going where it went) and the reason is said. */
int tusk_journal_tee(const char *socket_path, const char *ident, tusk_error_t *err);

#endif
