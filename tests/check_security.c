/* check_security.c - distributed/security.c: what a run lets in.
 *
 *  - host names and launcher arguments: shell syntax and options refused,
 *    names and addresses taken;
 *  - launcher templates split into words without any expansion, {host}
 *    put into words, never making new ones;
 *  - private folders and files: symbolic links, another owner, a mode open
 *    to others, an existing file where a new one is due, a hard link:
 *    each refused with a message saying which; $XDG_RUNTIME_DIR used where
 *    set, and checked;
 *  - certificates: written and read back, a secret one open to others
 *    refused, a certificate folder others may write refused;
 *  - the authentication handler: over tcp a client with the run's key is
 *    let in (its messages say "run"), strangers' keys and garbage are
 *    refused and counted; with configured certificates a client with a
 *    certificate of the folder is let in under its name, one without is
 *    refused. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>
#include <zmq.h>

#include "security.h"
#include "testutil.h"
#include "base/clock.h"

START_TEST(host_names)
{
    static const char *const good[] = {"localhost", "node-1", "daq01.example.org", "10.231.5.1", "::1",
                                       "fe80::1:2", "a", "A-b.c-D"};
    static const char *const bad[] = {"",           "x;touch /tmp/pwned;#", "-oProxyCommand=sh", "a b",
                                      "host-",      "-host",                "a..b",              ".a",
                                      "a.",         "$(id)",                "`id`",              "a|b",
                                      "host_name",  "h\n",                  "::1;id",            "x'y"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        ck_assert_msg(tusk_host_name_valid(good[i]), "'%s' refused", good[i]);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_msg(!tusk_host_name_valid(bad[i]), "'%s' taken", bad[i]);
    char label[80];
    memset(label, 'a', 64);
    label[64] = '\0';
    ck_assert(!tusk_host_name_valid(label)); /* a label of 64 */
    label[63] = '\0';
    ck_assert(tusk_host_name_valid(label));
}
END_TEST

START_TEST(shell_safe_arguments)
{
    ck_assert(tusk_arg_shell_safe("/usr/lib/tusk/tusk-actor", false));
    ck_assert(tusk_arg_shell_safe("tcp://10.0.0.1:5555", false));
    ck_assert(tusk_arg_shell_safe("--control", true));
    ck_assert(!tusk_arg_shell_safe("--control", false));
    static const char *const bad[] = {"", "a b", "a;b", "$HOME", "a'b", "a\"b", "a\\b", "a*", "~x", "a\nb", "(x)"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_msg(!tusk_arg_shell_safe(bad[i], true), "'%s' taken", bad[i]);
}
END_TEST

/* The template's words joined with '|'. */
static void split_gives(const char *tmpl, const char *host, const char *want)
{
    char **argv = NULL;
    size_t argc = 0;
    tusk_error_t err;
    ck_assert_msg(tusk_launcher_split(tmpl, host, &argv, &argc, &err) == TUSK_OK, "%s: %s", tmpl, err.message);
    char got[1024] = "";
    for (size_t i = 0; i < argc; i++) {
        size_t n = strlen(got);
        snprintf(got + n, sizeof got - n, "%s%s", i ? "|" : "", argv[i]);
    }
    ck_assert_ptr_null(argv[argc]);
    ck_assert_msg(strcmp(got, want) == 0, "'%s' with host '%s' gave '%s', not '%s'", tmpl, host, got, want);
    free(argv);
}

START_TEST(launcher_words)
{
    split_gives("ssh {host}", "node1", "ssh|node1");
    split_gives("  ip netns exec {host} ", "10.0.0.1", "ip|netns|exec|10.0.0.1");
    split_gives("ip netns exec {host} env TUSK_ACTOR_PATH='/tmp/lib/{host}'", "h2",
                "ip|netns|exec|h2|env|TUSK_ACTOR_PATH=/tmp/lib/h2");
    split_gives("sh -c '\"$@\"; exit $?' {host}", "h", "sh|-c|\"$@\"; exit $?|h");
    split_gives("a\\ b \"c \\\"d\\\" $x\" e\\'f", "h", "a b|c \"d\" $x|e'f");
    split_gives("ssh -p 22 user@{host}.lan", "n{host}", "ssh|-p|22|user@n{host}.lan");
    /* A host with blanks and shell syntax stays one word (and is refused
     * before anything is launched: tusk_host_name_valid). */
    split_gives("ssh {host}", "x; touch /tmp/p; #", "ssh|x; touch /tmp/p; #");
    static const char *const bad[][2] = {{"", "no command"},
                                         {"   ", "no command"},
                                         {"ssh 'x", "a ' is not closed"},
                                         {"ssh \"x", "a \" is not closed"},
                                         {"ssh x\\", "ends with a backslash"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char **argv = (char **)1;
        size_t argc = 7;
        tusk_error_t err;
        ck_assert_int_eq(tusk_launcher_split(bad[i][0], "h", &argv, &argc, &err), TUSK_EINVAL);
        ck_assert_ptr_null(argv);
        tu_assert_error(&err, TUSK_EINVAL, bad[i][1]);
    }
}
END_TEST

START_TEST(launcher_words_random)
{
    /* Words of any printable characters, quoted one of three ways, come
     * back as they were. */
    for (int i = 0; i < 3000; i++) {
        char words[6][24], tmpl[600] = "";
        unsigned n = 1 + tu_below(6);
        for (unsigned w = 0; w < n; w++) {
            size_t len = 1 + tu_below(20), t = strlen(tmpl);
            for (size_t c = 0; c < len; c++)
                words[w][c] = (char)(' ' + tu_below(95));
            words[w][len] = '\0';
            unsigned how = tu_below(3);
            tmpl[t++] = ' ';
            if (how == 0) { /* single quotes: ' itself as '\'' */
                tmpl[t++] = '\'';
                for (size_t c = 0; c < len; c++) {
                    if (words[w][c] == '\'') {
                        memcpy(tmpl + t, "'\\''", 4);
                        t += 4;
                    } else {
                        tmpl[t++] = words[w][c];
                    }
                }
                tmpl[t++] = '\'';
            } else if (how == 1) { /* double quotes */
                tmpl[t++] = '"';
                for (size_t c = 0; c < len; c++) {
                    if (strchr("\"\\$`", words[w][c]))
                        tmpl[t++] = '\\';
                    tmpl[t++] = words[w][c];
                }
                tmpl[t++] = '"';
            } else { /* a backslash before each */
                for (size_t c = 0; c < len; c++) {
                    tmpl[t++] = '\\';
                    tmpl[t++] = words[w][c];
                }
            }
            tmpl[t] = '\0';
        }
        char **argv = NULL;
        size_t argc = 0;
        tusk_error_t err;
        tu_check(tusk_launcher_split(tmpl, "h", &argv, &argc, &err) == TUSK_OK);
        tu_check(argc == n);
        for (unsigned w = 0; w < n; w++) {
            /* {host} may have been made by chance: compare with it replaced */
            char want[64];
            size_t o = 0;
            for (const char *p = words[w]; *p;) {
                if (strncmp(p, "{host}", 6) == 0) {
                    want[o++] = 'h';
                    p += 6;
                } else {
                    want[o++] = *p++;
                }
            }
            want[o] = '\0';
            tu_check(strcmp(argv[w], want) == 0);
        }
        free(argv);
    }
}
END_TEST

static void expect_refused(int rc, const tusk_error_t *err, const char *needle)
{
    ck_assert_int_ne(rc, TUSK_OK);
    ck_assert_msg(strstr(err->message, needle), "'%s' lacks '%s'", err->message, needle);
}

START_TEST(private_folders)
{
    char dir[4096], sub[4200], lnk[4200], file[4200];
    tu_make_dir(dir, sizeof dir);
    tusk_error_t err;
    snprintf(sub, sizeof sub, "%s/run", dir);
    ck_assert_msg(tusk_private_folder(sub, true, &err) == TUSK_OK, "%s", err.message);
    struct stat st;
    ck_assert_int_eq(stat(sub, &st), 0);
    ck_assert_uint_eq(st.st_mode & 0777, 0700);
    ck_assert_int_eq(tusk_private_folder(sub, true, &err), TUSK_OK); /* there already: fine */
    ck_assert_int_eq(chmod(sub, 0755), 0);
    expect_refused(tusk_private_folder(sub, false, &err), &err, "its mode 0755 lets others in");
    ck_assert_int_eq(chmod(sub, 0700), 0);
    snprintf(lnk, sizeof lnk, "%s/link", dir);
    ck_assert_int_eq(symlink(sub, lnk), 0);
    expect_refused(tusk_private_folder(lnk, true, &err), &err, "it is a symbolic link");
    snprintf(file, sizeof file, "%s/file", dir);
    ck_assert_int_eq(tusk_write_new(file, "x", 1, 0600, &err), TUSK_OK);
    expect_refused(tusk_private_folder(file, false, &err), &err, "it is not a folder");
    if (geteuid() == 0) {
        ck_assert_int_eq(chown(sub, 65534, 65534), 0);
        expect_refused(tusk_private_folder(sub, false, &err), &err, "it belongs to uid 65534, not to you");
        ck_assert_int_eq(chown(sub, 0, 0), 0);
    }
    unlink(lnk);
    unlink(file);
    rmdir(sub);
    tu_remove_dir(dir);
}
END_TEST

START_TEST(private_dir_where)
{
    char dir[4096], xdg[4200], got[4400], want[4400];
    tu_make_dir(dir, sizeof dir);
    tusk_error_t err;
    const char *old_tmp = getenv("TMPDIR"), *old_xdg = getenv("XDG_RUNTIME_DIR");
    char *keep_tmp = old_tmp ? strdup(old_tmp) : NULL, *keep_xdg = old_xdg ? strdup(old_xdg) : NULL;
    /* No XDG_RUNTIME_DIR: TMPDIR/tusk-UID, made 0700. */
    unsetenv("XDG_RUNTIME_DIR");
    setenv("TMPDIR", dir, 1);
    ck_assert_msg(tusk_private_dir(got, sizeof got, &err) == TUSK_OK, "%s", err.message);
    snprintf(want, sizeof want, "%s/tusk-%ld", dir, (long)geteuid());
    ck_assert_str_eq(got, want);
    /* Planted by someone else as a link: refused. */
    ck_assert_int_eq(rmdir(want), 0);
    ck_assert_int_eq(symlink("/", want), 0);
    expect_refused(tusk_private_dir(got, sizeof got, &err), &err, "it is a symbolic link");
    unlink(want);
    /* XDG_RUNTIME_DIR: its tusk folder; an XDG_RUNTIME_DIR open to others is refused. */
    snprintf(xdg, sizeof xdg, "%s/xdg", dir);
    ck_assert_int_eq(mkdir(xdg, 0700), 0);
    setenv("XDG_RUNTIME_DIR", xdg, 1);
    ck_assert_msg(tusk_private_dir(got, sizeof got, &err) == TUSK_OK, "%s", err.message);
    snprintf(want, sizeof want, "%s/tusk", xdg);
    ck_assert_str_eq(got, want);
    rmdir(want);
    ck_assert_int_eq(chmod(xdg, 0777), 0);
    expect_refused(tusk_private_dir(got, sizeof got, &err), &err, "XDG_RUNTIME_DIR");
    rmdir(xdg);
    if (keep_tmp)
        setenv("TMPDIR", keep_tmp, 1);
    else
        unsetenv("TMPDIR");
    if (keep_xdg)
        setenv("XDG_RUNTIME_DIR", keep_xdg, 1);
    else
        unsetenv("XDG_RUNTIME_DIR");
    free(keep_tmp);
    free(keep_xdg);
    tu_remove_dir(dir);
}
END_TEST

START_TEST(files_without_links)
{
    char dir[4096], path[4200], lnk[4200], hard[4200], victim[4200];
    tu_make_dir(dir, sizeof dir);
    tusk_error_t err;
    snprintf(path, sizeof path, "%s/keys", dir);
    snprintf(lnk, sizeof lnk, "%s/log", dir);
    snprintf(hard, sizeof hard, "%s/hard", dir);
    snprintf(victim, sizeof victim, "%s/victim", dir);
    ck_assert_int_eq(tusk_write_new(victim, "precious\n", 9, 0600, &err), TUSK_OK);
    /* A link where a log is to be appended to: refused, the target untouched. */
    ck_assert_int_eq(symlink(victim, lnk), 0);
    ck_assert_int_eq(tusk_open_nofollow(lnk, O_WRONLY | O_CREAT | O_APPEND, 0600, &err), -1);
    tu_assert_error(&err, TUSK_EIO, "is a symbolic link: refused");
    /* A new file where one exists (or a dangling link): refused. */
    ck_assert_int_eq(tusk_write_new(victim, "x", 1, 0600, &err), TUSK_EIO);
    tu_assert_error(&err, TUSK_EIO, "exists already");
    ck_assert_int_eq(tusk_write_new(lnk, "x", 1, 0600, &err), TUSK_EIO);
    /* A hard link: refused (another name of someone's file). */
    ck_assert_int_eq(link(victim, hard) == 0 ? 0 : errno, 0);
    ck_assert_int_eq(tusk_open_nofollow(hard, O_RDONLY, 0, &err), -1);
    tu_assert_error(&err, TUSK_EIO, "it has other (hard) links");
    unlink(hard);
    char *text = NULL;
    size_t size = 0;
    ck_assert_int_eq(tusk_read_private(victim, 100, &text, &size, &err), TUSK_OK);
    ck_assert_str_eq(text, "precious\n");
    free(text);
    /* Secrets readable by others: refused. */
    ck_assert_int_eq(chmod(victim, 0644), 0);
    ck_assert_int_eq(tusk_read_private(victim, 100, &text, &size, &err), TUSK_EIO);
    tu_assert_error(&err, TUSK_EIO, "readable by others (mode 0644)");
    ck_assert_ptr_null(text);
    ck_assert_int_eq(tusk_read_private(lnk, 100, &text, &size, &err), TUSK_EIO);
    tu_assert_error(&err, TUSK_EIO, "is a symbolic link");
    if (geteuid() == 0) {
        ck_assert_int_eq(chmod(victim, 0600), 0);
        ck_assert_int_eq(chown(victim, 65534, 65534), 0);
        ck_assert_int_eq(tusk_read_private(victim, 100, &text, &size, &err), TUSK_EIO);
        tu_assert_error(&err, TUSK_EIO, "belongs to another user");
    }
    unlink(lnk);
    unlink(victim);
    unlink(path);
    tu_remove_dir(dir);
}
END_TEST

START_TEST(certificates)
{
    char dir[4096], base[4200], path[4300];
    tu_make_dir(dir, sizeof dir);
    tusk_error_t err;
    snprintf(base, sizeof base, "%s/node-1", dir);
    ck_assert_msg(tusk_cert_new(base, &err) == TUSK_OK, "%s", err.message);
    ck_assert_int_eq(tusk_cert_new(base, &err), TUSK_EIO); /* never over an existing one */
    tu_assert_error(&err, TUSK_EIO, "exists already");
    tusk_cert_t pub, sec;
    ck_assert_msg(tusk_cert_load(dir, "node-1", false, &pub, &err) == TUSK_OK, "%s", err.message);
    ck_assert_msg(tusk_cert_load(dir, "node-1", true, &sec, &err) == TUSK_OK, "%s", err.message);
    ck_assert_str_eq(pub.name, "node-1");
    ck_assert_str_eq(pub.public_key, sec.public_key);
    ck_assert_str_eq(pub.secret_key, "");
    ck_assert_int_eq((int)strlen(sec.secret_key), TUSK_KEY_CHARS);
    snprintf(path, sizeof path, "%s.key_secret", base);
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_uint_eq(st.st_mode & 0777, 0600);
    ck_assert_int_eq(chmod(path, 0640), 0);
    ck_assert_int_eq(tusk_cert_load(dir, "node-1", true, &sec, &err), TUSK_EIO);
    tu_assert_error(&err, TUSK_EIO, "readable by others");
    ck_assert_int_eq(tusk_cert_load(dir, "../node-1", false, &pub, &err), TUSK_EINVAL);
    ck_assert_int_eq(tusk_cert_load(dir, "nobody", false, &pub, &err), TUSK_EIO);
    ck_assert_msg(tusk_cert_dir_check(dir, &err) == TUSK_OK, "%s", err.message);
    ck_assert_int_eq(chmod(dir, 0777), 0);
    ck_assert_int_eq(tusk_cert_dir_check(dir, &err), TUSK_EIO);
    tu_assert_error(&err, TUSK_EIO, "anyone could add a key");
    ck_assert_int_eq(chmod(dir, 0700), 0);
    unlink(path);
    snprintf(path, sizeof path, "%s.key", base);
    unlink(path);
    tu_remove_dir(dir);
}
END_TEST

/* ---- the handler ---------------------------------------------------------------- */

/* A PUSH with `pub`/`sec` as its keys (NULL: no CURVE) to `ep`, trying once. */
static void *client(void *ctx, const char *ep, const char *server, const char *pub, const char *sec)
{
    void *s = zmq_socket(ctx, ZMQ_PUSH);
    int zero = 0, never = -1;
    zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof zero);
    zmq_setsockopt(s, ZMQ_RECONNECT_IVL, &never, sizeof never);
    if (pub) {
        zmq_setsockopt(s, ZMQ_CURVE_SERVERKEY, server, 40);
        zmq_setsockopt(s, ZMQ_CURVE_PUBLICKEY, pub, 40);
        zmq_setsockopt(s, ZMQ_CURVE_SECRETKEY, sec, 40);
    }
    ck_assert_int_eq(zmq_connect(s, ep), 0);
    ck_assert_int_eq(zmq_send(s, "hello", 5, ZMQ_DONTWAIT), 5);
    return s;
}

/* The next message on `pull` (30 s at most, a safety bound) and its user id. */
static void receive(void *pull, char *user, size_t n)
{
    zmq_pollitem_t item = {.socket = pull, .events = ZMQ_POLLIN};
    ck_assert_msg(zmq_poll(&item, 1, 30000) == 1, "no message within 30 s");
    zmq_msg_t m;
    zmq_msg_init(&m);
    ck_assert_int_eq(zmq_msg_recv(&m, pull, 0), 5);
    const char *u = zmq_msg_gets(&m, "User-Id");
    snprintf(user, n, "%s", u ? u : "(none)");
    zmq_msg_close(&m);
}

/* Wait (30 s at most) until `sec` counts what is expected. */
static void until_counted(tusk_sec_t *sec, uint64_t refused, uint64_t denied)
{
    uint64_t end = tusk_clock_ms() + 30000;
    tusk_sec_counts_t c;
    while ((c = tusk_sec_counts(sec, "in")).refused < refused || c.denied < denied) {
        ck_assert_msg(tusk_clock_ms() < end, "counted %llu refused, %llu denied; expected %llu, %llu",
                      (unsigned long long)c.refused, (unsigned long long)c.denied, (unsigned long long)refused,
                      (unsigned long long)denied);
        zmq_pollitem_t none = {0};
        zmq_poll(&none, 0, 10); /* a pause, not a condition: the loop tests the counts */
    }
}

START_TEST(handler_with_the_run_key)
{
    void *ctx = zmq_ctx_new();
    tusk_secrets_t sx = {.curve = 1};
    tusk_error_t err;
    ck_assert_int_eq(tusk_keypair_new(sx.public_key, sx.secret_key, &err), TUSK_OK);
    memcpy(sx.server_key, sx.public_key, sizeof sx.server_key);
    tusk_sec_t *sec = NULL;
    ck_assert_msg(tusk_sec_new(&sec, ctx, &sx, "test", &err) == TUSK_OK, "%s", err.message);
    ck_assert_str_eq(tusk_sec_owner(sec), "run");
    void *pull = zmq_socket(ctx, ZMQ_PULL);
    int zero = 0;
    zmq_setsockopt(pull, ZMQ_LINGER, &zero, sizeof zero);
    char ep[256];
    ck_assert_msg(tusk_sec_bind(sec, pull, "tcp://127.0.0.1:*", "in", ep, sizeof ep, &err) == TUSK_OK, "%s",
                  err.message);
    /* A stranger's key, then one without CURVE, then raw garbage: refused. */
    char pub[41], key[41];
    ck_assert_int_eq(zmq_curve_keypair(pub, key), 0);
    void *bad = client(ctx, ep, sx.public_key, pub, key), *plain = client(ctx, ep, NULL, NULL, NULL);
    const char *colon = strrchr(ep, ':');
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(colon + 1))};
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    ck_assert_int_eq(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    ck_assert_int_eq(send(fd, "\x01\x02garbage1234!!", 14, 0), 14);
    close(fd);
    until_counted(sec, 3, 1);
    zmq_close(bad);
    zmq_close(plain);
    /* The run's key: in, as "run". */
    void *good = client(ctx, ep, sx.public_key, sx.public_key, sx.secret_key);
    char user[64];
    receive(pull, user, sizeof user);
    ck_assert_str_eq(user, "run");
    /* Its message came: its connection counts as through the handshake. */
    tusk_sec_counts_t c = tusk_sec_counts(sec, NULL);
    ck_assert_uint_eq(c.refused, 3);
    ck_assert_uint_eq(c.denied, 1);
    ck_assert_uint_eq(c.accepted, 4);
    zmq_close(good);
    tusk_sec_close(sec, pull);
    tusk_sec_destroy(&sec);
    zmq_ctx_term(ctx);
}
END_TEST

START_TEST(handler_with_certificates)
{
    char dir[4096], base[4200];
    tu_make_dir(dir, sizeof dir);
    tusk_error_t err;
    static const char *const names[] = {"controller", "10.0.0.2", "outsider"};
    for (int i = 0; i < 3; i++) {
        snprintf(base, sizeof base, "%s/%s", dir, names[i]);
        ck_assert_msg(tusk_cert_new(base, &err) == TUSK_OK, "%s", err.message);
    }
    tusk_cert_t ctl, host, outsider;
    ck_assert_int_eq(tusk_cert_load(dir, "controller", true, &ctl, &err), TUSK_OK);
    ck_assert_int_eq(tusk_cert_load(dir, "10.0.0.2", true, &host, &err), TUSK_OK);
    ck_assert_int_eq(tusk_cert_load(dir, "outsider", true, &outsider, &err), TUSK_OK);
    /* The outsider's public certificate is not in the folder. */
    snprintf(base, sizeof base, "%s/outsider.key", dir);
    ck_assert_int_eq(unlink(base), 0);
    tusk_secrets_t sx = {.curve = 1};
    snprintf(sx.certs, sizeof sx.certs, "%s", dir);
    snprintf(sx.cert, sizeof sx.cert, "controller");
    snprintf(sx.server_cert, sizeof sx.server_cert, "controller");
    void *ctx = zmq_ctx_new();
    tusk_sec_t *sec = NULL;
    ck_assert_msg(tusk_sec_new(&sec, ctx, &sx, "test", &err) == TUSK_OK, "%s", err.message);
    ck_assert_str_eq(tusk_sec_owner(sec), "controller");
    ck_assert_str_eq(tusk_sec_user_for(sec, "10.0.0.2"), "10.0.0.2");
    void *pull = zmq_socket(ctx, ZMQ_PULL);
    int zero = 0;
    zmq_setsockopt(pull, ZMQ_LINGER, &zero, sizeof zero);
    char ep[256];
    ck_assert_msg(tusk_sec_bind(sec, pull, "tcp://127.0.0.1:*", "in", ep, sizeof ep, &err) == TUSK_OK, "%s",
                  err.message);
    void *out = client(ctx, ep, ctl.public_key, outsider.public_key, outsider.secret_key);
    until_counted(sec, 1, 1);
    zmq_close(out);
    void *in = client(ctx, ep, ctl.public_key, host.public_key, host.secret_key);
    char user[64];
    receive(pull, user, sizeof user);
    ck_assert_str_eq(user, "10.0.0.2");
    zmq_close(in);
    tusk_sec_close(sec, pull);
    tusk_sec_destroy(&sec);
    zmq_ctx_term(ctx);
    /* A secret certificate that others may read: refused at once. */
    snprintf(base, sizeof base, "%s/controller.key_secret", dir);
    ck_assert_int_eq(chmod(base, 0644), 0);
    ctx = zmq_ctx_new();
    ck_assert_int_eq(tusk_sec_new(&sec, ctx, &sx, "test", &err), TUSK_EIO);
    tu_assert_error(&err, TUSK_EIO, "readable by others");
    zmq_ctx_term(ctx);
    static const char *const files[] = {"controller.key", "controller.key_secret", "10.0.0.2.key",
                                        "10.0.0.2.key_secret", "outsider.key_secret"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(base, sizeof base, "%s/%s", dir, files[i]);
        unlink(base);
    }
    tu_remove_dir(dir);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("security");
    TCase *tc = tcase_create("names");
    tcase_add_test(tc, host_names);
    tcase_add_test(tc, shell_safe_arguments);
    tcase_add_test(tc, launcher_words);
    tcase_add_test(tc, launcher_words_random);
    suite_add_tcase(s, tc);
    tc = tcase_create("files");
    tcase_add_test(tc, private_folders);
    tcase_add_test(tc, private_dir_where);
    tcase_add_test(tc, files_without_links);
    tcase_add_test(tc, certificates);
    suite_add_tcase(s, tc);
    tc = tcase_create("handler");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, handler_with_the_run_key);
    tcase_add_test(tc, handler_with_certificates);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
