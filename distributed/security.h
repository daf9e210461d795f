/* security.h - who may talk to the sockets of a distributed run, and where
 * its files go (tusk-run, tusk-actor; see README.md, "Security").
 *
 * Sockets. Every socket that binds gets a ZAP handler (ZeroMQ's
 * authentication protocol, answered by a thread of this process):
 *   tcp   CURVE: the connecting process must hold a key the run trusts
 *         (the run's key pair, made by tusk-run and handed to the
 *         instances it starts; or, with configured keys, a certificate
 *         in the certificate folder); without CURVE (security none)
 *         anyone who reaches the port is let in.
 *   ipc   the socket lives in the run's private folder (0700), and the
 *         peer's user id (SO_PEERCRED, as libzmq gives it to the handler)
 *         must be ours.
 * Setting a ZAP domain also makes libzmq refuse the old protocol versions
 * (ZMTP 1.0/2.0), so bytes that are no ZeroMQ greeting never become a
 * message. Each bound socket is watched (a socket monitor, read by the
 * same thread): connections accepted and connections that completed the
 * handshake; the difference is what was refused (garbage, a wrong key, a
 * stranger's uid), counted, never fatal. Connecting sockets get the
 * client side of CURVE.
 *
 * Every message that got in carries the handler's user id
 * (zmq_msg_gets(msg, "User-Id")): "run" (the run's key), the certificate's
 * name, or "uid:N" (ipc). tusk_sec_owner() is the id of the run's owner:
 * who may send control commands.
 *
 * Files. Runtime files go to a per-user private folder: $XDG_RUNTIME_DIR
 * /tusk where set, else $TMPDIR/tusk-UID (/tmp without TMPDIR), made 0700
 * and checked (a folder, not a link, ours, closed to others), and are
 * opened without following symbolic links.
 */
#ifndef TUSK_SECURITY_H
#define TUSK_SECURITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "runtime/wire.h"
#include "tusk/error.h"

/* ---- files ------------------------------------------------------------------ */

/* The per-user private folder (made if missing, checked). */
int tusk_private_dir(char *out, size_t size, tusk_error_t *err);

/* Check `dir` as a private folder: not a symbolic link, a folder, owned by
 * this user, no access for group or others. With `create`, a missing one
 * is made (mode 0700) first. */
int tusk_private_folder(const char *dir, bool create, tusk_error_t *err);

/* open(2) `path` with `flags` | O_NOFOLLOW | O_CLOEXEC: a symbolic link
 * as its last part is refused (and with O_CREAT | O_EXCL, anything there).
 * What opens must be a regular file of this user with one link. The fd,
 * or -1 with err set. */
int tusk_open_nofollow(const char *path, int flags, mode_t mode, tusk_error_t *err);

/* Read a small file that must be private: ours, no access for group or
 * others, not a link (secrets, secret certificates). */
int tusk_read_private(const char *path, size_t max, char **data, size_t *size, tusk_error_t *err);

/* Create `path` (O_EXCL, no link followed) with `mode` and write `data`. */
int tusk_write_new(const char *path, const void *data, size_t size, mode_t mode, tusk_error_t *err);

/* ---- names ------------------------------------------------------------------ */

/* A host name (letters, digits and '-' in dot-separated labels, none
 * starting or ending with '-') or an IP address: nothing a shell or ssh
 * would read as syntax or an option. */
bool tusk_host_name_valid(const char *host);

/* Only characters no shell treats specially ([A-Za-z0-9_./:@%+=,-]), and
 * not starting with '-' unless `option`: an argument that reaches a
 * remote shell (ssh) as it is. */
bool tusk_arg_shell_safe(const char *arg, bool option);

/* Split a launcher template into words, as a shell would split it but
 * with no expansion of any kind: blanks separate words; '...' is
 * literal; "..." is literal but for \" \\ \$ \`; a backslash outside
 * quotes takes the next character. Then every "{host}" in a word
 * becomes `host`. *argv (NULL-terminated, one allocation) is freed by the
 * caller. */
int tusk_launcher_split(const char *tmpl, const char *host, char ***argv, size_t *argc, tusk_error_t *err);

/* ---- keys ---------------------------------------------------------------------- */

/* A new key pair (zmq_curve_keypair). */
int tusk_keypair_new(char public_key[TUSK_KEY_CHARS + 1], char secret_key[TUSK_KEY_CHARS + 1], tusk_error_t *err);

/* `bytes` random bytes (getrandom) as hex into out (2 * bytes + 1). */
int tusk_random_hex(char *out, size_t bytes, tusk_error_t *err);

/* Load DIR/NAME.key_secret (`secret`: a private file, both keys
 * required) or DIR/NAME.key. */
int tusk_cert_load(const char *dir, const char *name, bool secret, tusk_cert_t *cert, tusk_error_t *err);

/* Write PATH.key (0644) and PATH.key_secret (0600), a new key pair named
 * after PATH's last part; neither may exist. */
int tusk_cert_new(const char *path, tusk_error_t *err);

/* Check a certificate folder: a folder, not a link, owned by this user or
 * root, writable by no one else. */
int tusk_cert_dir_check(const char *dir, tusk_error_t *err);

/* ---- sockets ---------------------------------------------------------------------- */

typedef struct tusk_sec tusk_sec_t;

/* A process's security, from its secrets (tusk-run's own, or those it
 * handed over). `label` names the process in messages. Loads the key
 * pair and, with configured keys, every certificate of the folder. */
int tusk_sec_new(tusk_sec_t **sec, void *zctx, const tusk_secrets_t *secrets, const char *label, tusk_error_t *err);

bool tusk_sec_curve(const tusk_sec_t *sec);

/* The user id of the run's owner ("" without CURVE: anyone). */
const char *tusk_sec_owner(const tusk_sec_t *sec);

/* The user id the handler gives to connections with the certificate
 * `name`'s key ("run" without configured keys). */
const char *tusk_sec_user_for(const tusk_sec_t *sec, const char *name);

/* Make `sock` a server (ZAP, CURVE on tcp), watch it as `name`, bind it
 * at `endpoint`, and give the endpoint it got (ZMQ_LAST_ENDPOINT: the
 * port the kernel picked for "tcp://ADDR:*") in `bound`. */
int tusk_sec_bind(tusk_sec_t *sec, void *sock, const char *endpoint, const char *name, char *bound, size_t bound_size,
                  tusk_error_t *err);

/* Make `sock` a client and connect it. `server` names the certificate of
 * the peer (configured keys; NULL: the controller's); unused otherwise. */
int tusk_sec_connect(tusk_sec_t *sec, void *sock, const char *endpoint, const char *server, tusk_error_t *err);

/* Stop watching a socket of tusk_sec_bind and close it. */
void tusk_sec_close(tusk_sec_t *sec, void *sock);

typedef struct tusk_sec_counts {
    uint64_t accepted;  /* connections accepted on the bound sockets */
    uint64_t refused;   /* of those, never through the handshake: garbage, wrong keys, strangers */
    uint64_t denied;    /* handshakes the handler refused (a subset of refused, once they close) */
} tusk_sec_counts_t;

/* Totals over every socket of tusk_sec_bind (`name` NULL), or one's; the
 * main thread's call. Every connection that delivered a message before
 * the call is counted as through the handshake: "refused" includes
 * connections still inside their handshake only. */
tusk_sec_counts_t tusk_sec_counts(tusk_sec_t *sec, const char *name);

/* Stop the handler; after closing every socket of tusk_sec_bind, before
 * zmq_ctx_term. */
void tusk_sec_destroy(tusk_sec_t **sec);

#endif
