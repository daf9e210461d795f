#!/bin/sh
# distributed_security.sh - a running chain against processes that have no
# business with it, on one host (issue 23; the same across hosts, with
# network namespaces, is in distributed_netns.sh):
#
#  1. a run over tcp: an outsider (no keys, or a key of its own and the
#     run's public key) fails to stop, pause, hijack an instance's place on
#     the control socket or inject a buffer into any data input: every
#     connection is refused (wire_inject watches its own handshake fail);
#     another user fails with tusk-run --stop/--pause, with and without the
#     folder, and cannot read the keys; garbage bytes on every socket, and
#     malformed messages sent with the run's own keys, are survived and
#     counted: the run goes on, the owner's --stop (logged with who sent
#     it) ends it, every buffer reconciled, and the report counts exactly
#     what was kept out (exit 3: messages were dropped on data links);
#  2. a run over ipc: another user cannot reach its sockets (the run folder
#     is 0700); with the folder opened on purpose, the peer-credential
#     check refuses that user still, and counts it;
#  3. a restart cannot be hijacked: an outsider claiming the restarting
#     instance's place is refused, and the real restart comes;
#  4. planted symbolic links are refused: a --run-dir that is a link, open
#     to others or not ours; the private folder ($TMPDIR/tusk-UID) planted
#     as a link or by another user; a link where an instance's log or the
#     --report goes; the old $TMPDIR/tusk-run.last; file_writer's output
#     (unless follow_symlinks = true) and a folder below its data_dir, or a
#     path leaving it. The links' targets are untouched;
#  5. a host name with shell syntax (or an ssh option) is refused before
#     anything starts, and nothing runs; an argument that a remote shell
#     would read as syntax is refused too;
#  6. tusk-run --stop without a folder finds the user's only run, and
#     refuses when there are two (two tcp runs at once: no port clash).
#
# The parts that need another user (setpriv to uid 65534) are skipped,
# saying so, when not run as root. Every wait is for a state, with a
# safety bound; every tusk-run has a safety timeout.
set -eu
b=${abs_top_builddir:?run through make check}
TUSK_ACTOR_PATH=${TUSK_ACTOR_PATH:-$b/actors/.libs}
export TUSK_ACTOR_PATH
me=distributed_security
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tusk-security.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
cd "$tmp"
TMPDIR=$tmp
export TMPDIR
unset XDG_RUNTIME_DIR
W=$b/tests/wire_inject

# shellcheck source=tests/distributed_lib.sh
. "${abs_top_srcdir:-${top_srcdir:-..}}/tests/distributed_lib.sh"
# report FILE KEY LINE_PREFIX: a figure of a --report file's line.
report() {
    grep "^$3" "$1" | head -n 1 | tr ' ' '\n' | sed -n "s/^$2=//p"
}
# refused CMD...: an outsider's attempt, which must be refused at the door (exit 3).
refused() {
    got=0
    "$@" >att.out 2>att.err || got=$?
    [ "$got" -eq 3 ] || { cat att.out att.err >&2; fail "not refused (exit $got): $*"; }
}
# Another user: uid 65534, with a TMPDIR of its own.
other=no
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null 2>&1; then
    other=yes
    chmod 711 "$tmp"
    mkdir -m 1777 "$tmp/other-tmp"
fi
as_other() { (cd / && setpriv --reuid=65534 --regid=65534 --clear-groups env TMPDIR="$tmp/other-tmp" "$@"); }
skip_part() { echo "$me: SKIP: $*"; }

"$b/tusk-adf" gen -n 300 --seed 23 -o input.adf 2>/dev/null
# A chain that runs until stopped.
long() { # FILE COPY_ATTRS
    cat >"$1" <<XML
<configuration>
  <producer><name>reader</name><binary_code>file_producer</binary_code><size>65536</size>
    <parameter name="file">input.adf</parameter><parameter name="repeat">1000000</parameter></producer>
  <intermediary instances="2" $2><name>copy</name><binary_code>passthrough</binary_code>
    <data_source>reader</data_source><size>65536</size></intermediary>
  <consumer><name>sink</name><binary_code>null_consumer</binary_code><data_source>copy</data_source></consumer>
</configuration>
XML
}
long long.xml ""
# start_long NAME ARGS...: tusk-run in the background in run folder $tmp/NAME,
# until it runs; $pid, $d (the folder).
start_long() {
    name=$1
    shift
    d=$tmp/$name
    run --run-dir "$d" --report "$tmp/$name.rep" "$@" >"$name.out" 2>"$name.err" &
    pid=$!
    sink_running() {
        gone "$pid" || "$b/tusk-run" --status "$d" 2>/dev/null | grep -q "^sink\[0\] .* running "
    }
    until_true 300 sink_running || { kill "$pid"; fail "the run $name never ran"; }
    gone "$pid" && { cat "$name.err" >&2; fail "the run $name ended by itself"; }
    return 0
}
# stop_long NAME STATUS: the owner stops it; it must exit STATUS.
stop_long() {
    "$b/tusk-run" --stop "$tmp/$1" >/dev/null || fail "the owner's --stop of $1 failed"
    st=0
    wait "$pid" || st=$?
    [ "$st" -eq "$2" ] || { cat "$1.err" >&2; fail "the run $1 exited $st, expected $2"; }
}
# A ZMTP 3 greeting that asks for no security (NULL), 64 bytes.
null_greeting='\xff\x00\x00\x00\x00\x00\x00\x00\x01\x7f\x03\x00NULL\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00'
garbage='\x01\x02garbage1234!!'

# ---- 1. a run over tcp -----------------------------------------------------------
step "1. a run over tcp, attacked by an outsider (no keys, or a key of its own)"
start_long tcp --transport tcp long.xml
ctl=$(cat "$d/control")
# The run's public key is no secret: the outsider is given it.
key=$(sed -n 's/^server-key //p' "$d/keys")
[ -n "$key" ] || fail "no server key in $d/keys"
inputs=$(sed -n 's/.* endpoint=//p' "$d/endpoints")
[ "$(echo "$inputs" | wc -l)" -eq 3 ] || fail "expected 3 inputs in $d/endpoints: $inputs"
step "  stop, pause: refused (control socket $ctl)"
for k in "" "--stranger $key"; do
    # shellcheck disable=SC2086
    refused "$W" $k --control "$ctl" cli.1 "CLI cmd=stop"
    # shellcheck disable=SC2086
    refused "$W" $k --control "$ctl" cli.2 "CLI cmd=pause"
    # An instance's place (its old, predictable name): refused.
    # shellcheck disable=SC2086
    refused "$W" $k --control "$ctl" copy.1.0 "HELLO actor=copy instance=1 incarnation=0"
done
step "  a buffer into every data input: refused"
for ep in $inputs; do
    refused "$W" "$ep" 1 0 0 0 1 input.adf
    refused "$W" --stranger "$key" "$ep" 1 0 0 0 1 input.adf
done
step "  garbage bytes on every socket (and a greeting without security)"
for ep in "$ctl" $inputs; do
    "$W" --raw "$ep" "$garbage" || fail "garbage to $ep: the connection itself failed"
    "$W" --raw "$ep" "$null_greeting" || fail "a NULL greeting to $ep: the connection itself failed"
done
step "  malformed messages with the run's own keys: one on the control socket, one on every input"
"$W" --keys "$d/keys" --control "$ctl" cli.7 'garbage!!14byt' >/dev/null || fail "the insider's garbage did not get in"
for ep in $inputs; do
    "$W" --keys "$d/keys" --data "$ep" 'garbage 14 byt' || fail "the insider's garbage did not get in ($ep)"
done
if [ "$other" = yes ]; then
    step "  another user: --stop and --pause of the folder, --stop without one, the keys: refused"
    for c in stop pause; do
        got=0
        as_other "$b/tusk-run" --"$c" "$d" >att.out 2>att.err || got=$?
        [ "$got" -ne 0 ] || fail "another user's --$c succeeded"
        grep -qF "belongs to uid 0, not to you (uid 65534)" att.err || { cat att.err >&2; fail "--$c: no reason"; }
    done
    got=0
    as_other "$b/tusk-run" --stop >att.out 2>att.err || got=$?
    [ "$got" -ne 0 ] && grep -qF "no run of yours is going on" att.err || { cat att.err >&2; fail "--stop found a run"; }
    ! as_other cat "$d/keys" >/dev/null 2>&1 || fail "another user read the run's keys"
    ! as_other "$W" --keys "$d/keys" --control "$ctl" cli.3 "CLI cmd=stop" >/dev/null 2>&1 ||
        fail "another user sent a command with the run's keys"
else
    skip_part "another user's --stop/--pause (needs root and setpriv to act as uid 65534)"
fi
# Every door: 8 refused on the control socket (3 of them by the key's
# check), 4 on every input (1); 1 malformed control message; 1 dropped
# message per input.
counted() {
    "$b/tusk-run" --status "$d" >status.txt 2>/dev/null || return 1
    grep -qF "security: tusk-run's control socket: 8 connections refused (3 denied by the authentication), 1 malformed messages dropped, 0 messages refused" status.txt || return 1
    for inst in "copy\[0\]" "copy\[1\]" "sink\[0\]"; do
        grep -q "^security: $inst's inputs: 4 connections refused (1 denied by the authentication), 1 messages dropped$" status.txt || return 1
    done
}
until_true 300 counted || { cat status.txt >&2; fail "--status never showed what was kept out"; }
grep -q "^reader\[0\] .* running " status.txt || fail "the run is not running any more: $(cat status.txt)"
step "  the run goes on; the owner stops it: exit 3 (dropped messages), every buffer reconciled"
stop_long tcp 3
rep=$tmp/tcp.rep
grep -qF "stop requested (tusk-run --stop) by cli." tcp.err || fail "the stop is not logged"
grep -qF "(authenticated as run; it says user" tcp.err || fail "the stop is not logged with who sent it"
[ "$(grep -c "requested" tcp.err)" -eq 1 ] || fail "more than the owner's command was taken: $(grep requested tcp.err)"
grep -qF "ended with failures: 0 buffers lost, 3 messages dropped" tcp.err || fail "no failure line for the drops"
grep -q "^control=tusk-run security=curve refused=8 denied=3 bad_control=1 refused_commands=0$" "$rep" ||
    fail "the report's control line: $(grep '^control=' "$rep")"
for inst in "copy\[0\]" "copy\[1\]" "sink\[0\]"; do
    grep -q "^instance=$inst .* refused=4 denied=1 dropped=1$" "$rep" || fail "the report's $inst: $(grep "^instance=$inst" "$rep")"
done
[ "$(report "$rep" lost run=)" = 0 ] && [ "$(report "$rep" extra run=)" = 0 ] || fail "buffers lost or extra"
[ "$(report "$rep" out_buffers "instance=reader")" = "$(report "$rep" in_buffers "instance=sink")" ] ||
    fail "what the reader sent is not what the sink got"
[ "$(report "$rep" refused run=)" = 20 ] && [ "$(report "$rep" dropped run=)" = 3 ] || fail "the run's totals"

# ---- 2. a run over ipc ------------------------------------------------------------
step "2. a run over ipc: its sockets are in a private folder, and check the peer's user id"
start_long ipc long.xml
sock=$d/a1.0.0
[ -S "$sock" ] || fail "no socket $sock"
"$W" --raw "ipc://$sock" "$garbage" || fail "the owner's garbage to $sock: the connection failed"
"$W" --data "ipc://$sock" 'garbage 14 byt' || fail "the owner's malformed message did not get in"
want_refused=1 want_denied=0
if [ "$other" = yes ]; then
    refused as_other "$W" --raw "ipc://$sock" "$garbage"
    grep -qF "Permission denied" att.err || fail "another user reached the socket: $(cat att.err)"
    # With the way opened on purpose, the user id is checked all the same.
    chmod 711 "$d"
    chmod 777 "$sock"
    refused as_other "$W" --data "ipc://$sock" "CLI cmd=stop"
    chmod 700 "$d"
    want_refused=2 want_denied=1
else
    skip_part "another user against the ipc sockets (needs root and setpriv)"
fi
ipc_counted() {
    "$b/tusk-run" --status "$d" >status.txt 2>/dev/null &&
        grep -q "^security: copy\[0\]'s inputs: $want_refused connections refused ($want_denied denied by the authentication), 1 messages dropped$" status.txt
}
until_true 300 ipc_counted || { cat status.txt >&2; fail "--status never showed what was kept out of copy[0]"; }
stop_long ipc 3
grep -q "^instance=copy\[0\] .* refused=$want_refused denied=$want_denied dropped=1$" "$tmp/ipc.rep" ||
    fail "the report's copy[0]: $(grep '^instance=copy\[0\]' "$tmp/ipc.rep")"
[ "$(report "$tmp/ipc.rep" lost run=)" = 0 ] || fail "the ipc run lost buffers"

# ---- 3. a restart cannot be hijacked ---------------------------------------------------
step "3. an outsider claims a restarting instance's place; the real restart comes"
long restart.xml 'restart="on-failure"'
start_long restart --transport tcp restart.xml
ctl=$(cat "$d/control")
key=$(sed -n 's/^server-key //p' "$d/keys")
for k in "" "--stranger $key"; do
    # shellcheck disable=SC2086
    refused "$W" $k --control "$ctl" copy.1.1 "HELLO actor=copy instance=1 incarnation=1"
    # shellcheck disable=SC2086
    refused "$W" $k --control "$ctl" copy.1.1/hb "ALIVE"
done
victim=$(pgrep -f -- "tusk-actor --control $ctl --actor copy --instance 1 " | head -n 1)
[ -n "$victim" ] || fail "copy[1] not found"
kill -9 "$victim"
restarted() { grep -qF "copy[1] restarted" restart.err; }
until_true 300 restarted || { cat restart.err >&2; fail "copy[1] never restarted"; }
stop_long restart 3
grep -q "^instance=copy\[1\] .* restarts=1 " "$tmp/restart.rep" || fail "copy[1] shows no restart"
grep -q "^control=tusk-run security=curve refused=4 denied=2 " "$tmp/restart.rep" ||
    fail "the report's control line: $(grep '^control=' "$tmp/restart.rep")"

# ---- 4. planted symbolic links -------------------------------------------------------------
step "4. planted symbolic links are refused; what they point to is untouched"
echo precious >victim
cp victim victim.orig
same() { cmp -s victim victim.orig || fail "$1: the link's target was changed"; }
chain() { # FILE WRITER_PARAMS
    cat >"$1" <<XML
<configuration>
  <producer><name>reader</name><binary_code>file_producer</binary_code><size>16384</size>
    <parameter name="file">input.adf</parameter></producer>
  <consumer><name>writer</name><binary_code>file_writer</binary_code><data_source>reader</data_source>
    $2</consumer>
</configuration>
XML
}
chain plain.xml '<parameter name="file">output.adf</parameter>'
ln -s "$tmp/victim" rd-link
expect 2 "refused as a private folder: it is a symbolic link" --run-dir rd-link plain.xml
mkdir -m 755 rd-open
expect 2 "its mode 0755 lets others in (chmod 700 it)" --run-dir rd-open plain.xml
if [ "$other" = yes ]; then
    mkdir -m 700 rd-theirs
    chown 65534:65534 rd-theirs
    expect 2 "it belongs to uid 65534, not to you" --run-dir rd-theirs plain.xml
fi
step "  the private folder planted as a link, or by another user"
mkdir -m 1777 shared
ln -s "$tmp/victim-dir" "shared/tusk-$(id -u)"
mkdir victim-dir
(
    TMPDIR=$tmp/shared
    export TMPDIR
    expect 2 "the folder for your runs' files: $tmp/shared/tusk-$(id -u): refused as a private folder: it is a symbolic link" plain.xml
) || exit 1
[ -z "$(ls victim-dir)" ] || fail "a run folder was made through the planted link"
if [ "$other" = yes ]; then
    rm "shared/tusk-$(id -u)"
    mkdir -m 700 "shared/tusk-$(id -u)"
    chown 65534:65534 "shared/tusk-$(id -u)"
    (
        TMPDIR=$tmp/shared
        export TMPDIR
        expect 2 "it belongs to uid 65534, not to you" plain.xml
    ) || exit 1
fi
step "  a link where an instance's log goes, or the report, or the old tusk-run.last"
mkdir -m 700 rd-log
ln -s "$tmp/victim" rd-log/writer.0.log
expect 2 "rd-log/writer.0.log: is a symbolic link: refused" --run-dir rd-log plain.xml
same "the planted log"
ln -s "$tmp/victim" rep-link
ln -s "$tmp/victim" tusk-run.last
expect 0 "--report: rep-link: is a symbolic link: refused" --report rep-link plain.xml
same "the planted report and tusk-run.last"
step "  file_writer: a link as its output (unless follow_symlinks), a path leaving data_dir, a link below it"
rm -f output.adf
ln -s "$tmp/victim" output.adf
expect 1 "output.adf: cannot create: a symbolic link is in the way" plain.xml
same "the planted output"
chain follow.xml '<parameter name="file">output.adf</parameter><parameter name="follow_symlinks">true</parameter>'
run -q follow.xml 2>err.txt || fail "follow_symlinks = true: the run failed"
cmp -s victim input.adf || fail "follow_symlinks = true: the output did not go through the link"
cp victim.orig victim
rm output.adf
mkdir -p data/sub
chain escape.xml '<parameter name="data_dir">data</parameter><parameter name="file">../escape.adf</parameter>'
expect 2 "parameter 'file': '../escape.adf' must be a path below data_dir 'data'" escape.xml
ln -s "$tmp" data/linked
chain below.xml '<parameter name="data_dir">data</parameter><parameter name="file">linked/victim</parameter>'
expect 1 "data/linked/victim: cannot create: a symbolic link is in the way" below.xml
same "a link below data_dir"
chain inside.xml '<parameter name="data_dir">data</parameter><parameter name="file">sub/out.adf</parameter>'
run -q inside.xml 2>err.txt || fail "a file below data_dir: the run failed"
cmp -s data/sub/out.adf input.adf || fail "the file below data_dir is not the input"

# ---- 5. host names and arguments ---------------------------------------------------------------
step "5. a host name with shell syntax, or an ssh option, is refused before anything starts"
for host in "x;touch $tmp/pwned;#" "-oProxyCommand=touch\${IFS}$tmp/pwned" "\$(touch $tmp/pwned)"; do
    sed "s|<consumer><name>writer</name>|<consumer><hostname>$host</hostname><address>10.9.9.9</address><name>writer</name>|" \
        plain.xml >host.xml
    grep -qF -- "$host" host.xml || fail "host.xml was not made"
    expect 2 "is not a host name" --control-address 127.0.0.3 --launcher "sh -c 'touch $tmp/pwned-launcher' {host}" host.xml
    [ ! -e pwned ] && [ ! -e pwned-launcher ] || fail "the host name '$host' ran something"
done
step "  an argument a remote shell would read as syntax is refused"
sed "s|<consumer><name>writer</name>|<consumer><hostname>127.0.0.2</hostname><address>127.0.0.2</address><name>writer</name>|" \
    plain.xml >remote.xml
mkdir "my actors"
ln -s "$b/tusk-actor" "my actors/tusk-actor"
got=0
timeout 120 "$b/tusk-run" --no-live -q --actor-bin "$tmp/my actors/tusk-actor" --control-address 127.0.0.3 \
    --launcher "sh -c 'touch $tmp/pwned-launcher' {host}" remote.xml >out.txt 2>err.txt || got=$?
[ "$got" -eq 2 ] || fail "a remote launch with a space in --actor-bin exited $got, expected 2"
grep -qF "would reach the remote shell of the launcher with characters it reads as syntax" err.txt ||
    fail "no reason given"
[ ! -e pwned-launcher ] || fail "the launcher ran"

# ---- 6. --stop without a folder ----------------------------------------------------------------
step "6. --stop without a folder: the user's only run; two at once (tcp, no port clash): refused"
start_long one --transport tcp long.xml
pid1=$pid
start_long two --transport tcp long.xml
pid2=$pid
got=0
"$b/tusk-run" --stop >out.txt 2>err.txt || got=$?
[ "$got" -ne 0 ] || fail "--stop without a folder took one of two runs"
grep -qF "2 runs of yours are going on: give the run folder of one" err.txt || fail "no reason given"
pid=$pid2
stop_long two 0
"$b/tusk-run" --stop >out.txt 2>err.txt || fail "--stop without a folder did not find the only run"
st=0
wait "$pid1" || st=$?
[ "$st" -eq 0 ] || { cat one.err >&2; fail "the run one exited $st"; }
got=0
"$b/tusk-run" --status >out.txt 2>err.txt || got=$?
[ "$got" -ne 0 ] && grep -qF "no run of yours is going on" err.txt || fail "--status found a run after both ended"
echo "$me: PASS"
