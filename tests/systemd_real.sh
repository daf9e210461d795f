#!/bin/sh
# systemd_real.sh - tusk-run --engine systemd through a real systemd: a
# private user manager (/lib/systemd/systemd --user) and a private
# systemd-journald, started by the test and stopped at its end.
#
# Where no systemd runs as PID 1 (a container, CI, the dev VM), neither
# can start as they are: the manager refuses to run unless
# /run/systemd/system exists ("the system has not been booted with
# systemd"), and the machine's /run and journal must stay untouched. So
# both run in a mount namespace of their own (unshare -m) with tmpfs over
# /run/systemd, /run/log and /var/log/journal, and in a cgroup of their own
# (a user manager moves every process of its cgroup into its init.scope:
# in the root cgroup, that would be PID 1 and the whole machine). The
# manager listens at $XDG_RUNTIME_DIR/systemd/private (a folder of the
# test), where systemd-run --user and systemctl --user reach it without a
# D-Bus daemon; the units it starts are in the namespace and log to the
# private journald. tusk-run itself runs outside, as an operator's would.
#
#   1. a served chain reader -> copy x2 -> writer (null_consumer) with
#      --unit-property MemoryMax=1G and copy:CPUQuota=50%: while it waits
#      for commands, its four units are active (systemctl --user
#      list-units), `systemctl --user status` of copy[1]'s unit shows it
#      running tusk-actor, and `systemctl --user show` has the properties
#      (MemoryMax=1073741824, CPUQuotaPerSecUSec=500ms on copy's units
#      only);
#   2. one run: every buffer the reader sent reached the writer (the
#      report, exact), the writer's line ("null_consumer writer[0]: N
#      buffers") is in its log in the run folder and, read back with
#      journalctl -t tusk-r1-PID-writer.0, in the journal, with the same N;
#      journal.txt names that command;
#   3. --quit: tusk-run ends 0 and the units are gone (--collect);
#   4. the controller's restart policy on top of real units: copy[1]
#      killed at its 20th buffer with restart="on-failure" comes back as a
#      new unit: exit 3, the losses reported add up, and the writer's line
#      with the buffers it got is in the journal.
#
# Skipped (exit 77, with the reason) when not root (a mount namespace, a
# cgroup of its own), without unshare/nsenter or systemd's programs
# (Debian: systemd), or when the manager or journald does not come up.
set -eu
b=${abs_top_builddir:?run through make check}
src=${abs_top_srcdir:-${top_srcdir:-..}}
TUSK_ACTOR_PATH=${TUSK_ACTOR_PATH:-$b/actors/.libs}
export TUSK_ACTOR_PATH
me=systemd_real
skip() { echo "$me: SKIP: $*"; exit 77; }
. "$src/tests/distributed_lib.sh"

[ "$(id -u)" -eq 0 ] || skip "needs root (a mount namespace and a cgroup for a private systemd)"
for p in unshare nsenter systemd-run systemctl journalctl; do
    command -v "$p" >/dev/null 2>&1 || skip "needs $p"
done
for p in /lib/systemd/systemd /lib/systemd/systemd-journald; do
    [ -x "$p" ] || skip "needs $p (Debian: apt-get install systemd)"
done
[ -d /sys/fs/cgroup ] || skip "no /sys/fs/cgroup"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tusk-sdreal.XXXXXX")
cg=tusk-sdreal-$$ # our cgroup, in every hierarchy
mgr='' spid=''
cgroup_dirs() { # every folder of our cgroup, deepest first
    for h in /sys/fs/cgroup /sys/fs/cgroup/*; do
        [ -d "$h/$cg" ] && find "$h/$cg" -depth -type d
    done
    return 0
}
cleanup() {
    rc_=$?
    set +e
    [ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null
    if [ -n "$mgr" ]; then
        # SIGTERM: the manager stops its units and ends (exit.target).
        kill "$mgr" 2>/dev/null
        until_true 300 gone "$mgr" || kill -9 "$mgr" 2>/dev/null
    fi
    [ -f "$tmp/journald.pid" ] && kill "$(cat "$tmp/journald.pid")" 2>/dev/null
    # Whatever is left in our cgroup is ours: ended, then the cgroup removed.
    for d in $(cgroup_dirs); do
        for p in $(cat "$d/cgroup.procs" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
    done
    for d in $(cgroup_dirs); do
        until_true 100 rmdir "$d" 2>/dev/null
    done
    [ -n "${TUSK_TEST_KEEP:-}" ] || rm -rf "$tmp"
    exit "$rc_"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
cd "$tmp"
TMPDIR=$tmp
export TMPDIR
mkdir -m 700 rt home
XDG_RUNTIME_DIR=$tmp/rt HOME=$tmp/home
export XDG_RUNTIME_DIR HOME
unset DBUS_SESSION_BUS_ADDRESS XDG_CONFIG_HOME XDG_DATA_HOME

# The namespace: its own /run/systemd, /run/log and journal folder; our
# own cgroup; journald, then the manager (this shell's process id).
cat >ns.sh <<'SH'
set -e
cg=$1 tmp=$2
for h in /sys/fs/cgroup /sys/fs/cgroup/*; do
    [ -f "$h/cgroup.procs" ] || continue
    mkdir -p "$h/$cg"
    # cpuset (v1): a new cgroup has no CPUs and no memory nodes until given
    if [ -f "$h/$cg/cpuset.cpus" ]; then
        cat "$h/cpuset.cpus" >"$h/$cg/cpuset.cpus"
        cat "$h/cpuset.mems" >"$h/$cg/cpuset.mems"
    fi
    echo $$ >"$h/$cg/cgroup.procs"
done
mount --make-rprivate /
mount -t tmpfs -o mode=755 tmpfs /run/systemd
mkdir /run/systemd/system
mkdir -p /run/log
mount -t tmpfs -o mode=755 tmpfs /run/log
if [ -d /var/log/journal ]; then mount -t tmpfs -o mode=755 tmpfs /var/log/journal; fi
/lib/systemd/systemd-journald >"$tmp/journald.log" 2>&1 &
echo $! >"$tmp/journald.pid"
exec /lib/systemd/systemd --user --unit=basic.target >"$tmp/manager.log" 2>&1
SH
unshare -m sh ns.sh "$cg" "$tmp" 2>ns.err &
mgr=$!
up() { [ -S "$XDG_RUNTIME_DIR/systemd/private" ] && systemd-run --user --quiet --wait --collect true 2>/dev/null; }
jup() { nsenter -m -t "$mgr" test -S /run/systemd/journal/stdout 2>/dev/null; }
up_or_gone() { up || gone "$mgr"; }
until_true 300 up_or_gone || true
if ! up; then
    why=$(cat ns.err manager.log 2>/dev/null | tail -n 1)
    mgr=
    skip "the private systemd --user did not come up: ${why:-no word from it}"
fi
until_true 300 jup || skip "the private systemd-journald did not come up: $(tail -n 1 journald.log 2>/dev/null)"
step "a private systemd $(systemctl --version | head -n 1 | cut -d' ' -f2) user manager (process $mgr) and journald"
journal() { nsenter -m -t "$mgr" journalctl --no-pager -o cat "$@"; }

"$b/tusk-adf" gen -n 3000 --seed 27 -o input.adf 2>/dev/null
chain() {
    cat >"$1" <<XML
<configuration>
  <producer><name>reader</name><binary_code>file_producer</binary_code><size>16384</size>
    <parameter name="file">$tmp/input.adf</parameter></producer>
  <intermediary instances="2" $2><name>copy</name><binary_code>fault</binary_code>
    <data_source>reader</data_source><size>16384</size>$3</intermediary>
  <consumer><name>writer</name><binary_code>null_consumer</binary_code><data_source>copy</data_source>
  </consumer>
</configuration>
XML
}
harmless='<parameter name="action">exit</parameter><parameter name="at_block">1000000000</parameter>'

step "1. a served chain of real transient units, with properties"
chain chain.xml '' "$harmless"
srv=$tmp/srv
timeout 300 "$b/tusk-run" --no-live --actor-bin "$b/tusk-actor" --engine systemd --unit-property MemoryMax=1G \
    --unit-property copy:CPUQuota=50% --serve --run-dir "$srv" chain.xml >serve.out 2>serve.err &
spid=$!
phase() { "$b/tusk-run" --status "$srv" 2>/dev/null | head -n 1 | grep -q "^run [0-9]*: $1,"; }
until_true 600 phase ready || { cat serve.err >&2; fail "the served chain never became ready"; }
pid=$(sed -n 's/.*journalctl -t tusk-r1-\([0-9]*\)-.*/\1/p' serve.err | head -n 1)
[ -n "$pid" ] || { cat serve.err >&2; fail "tusk-run said no journalctl command"; }
u=tusk-r1-$pid
systemctl --user list-units --no-legend --plain "$u-*" >units.txt
[ "$(awk '$3 == "active" { n++ } END { print n + 0 }' units.txt)" -eq 4 ] ||
    { cat units.txt >&2; fail "not 4 active units $u-*"; }
systemctl --user status "$u-copy.1.0.service" >status.txt 2>&1 || true
grep -q "Active: active (running)" status.txt || { cat status.txt >&2; fail "systemctl --user status: copy[1] is not running"; }
grep -q "tusk-actor.*--actor copy --instance 1 " status.txt || { cat status.txt >&2; fail "copy[1]'s unit runs no tusk-actor"; }
prop() { systemctl --user show -p "$2" --value "$u-$1.service"; }
for i in reader.0.0 copy.0.0 copy.1.0 writer.0.0; do
    [ "$(prop $i MemoryMax)" = 1073741824 ] || fail "$i: MemoryMax=$(prop $i MemoryMax), expected 1G"
done
[ "$(prop copy.1.0 CPUQuotaPerSecUSec)" = 500ms ] || fail "copy[1]: CPUQuotaPerSecUSec=$(prop copy.1.0 CPUQuotaPerSecUSec)"
[ "$(prop reader.0.0 CPUQuotaPerSecUSec)" = infinity ] || fail "reader: a CPU quota it was not given"

step "2. one run: exact counts, the writer's line in its log and in the journal"
ctl() { timeout 120 "$b/tusk-run" "$@" "$srv" >ctl.txt 2>ctl.err; }
ctl --start || fail "--start refused: $(cat ctl.err)"
ctl --wait || fail "--wait failed: $(cat ctl.err)"
grep -q "^run 1 ended cleanly" ctl.txt || { cat ctl.txt >&2; fail "run 1 did not end cleanly"; }
cp "$srv/run-1.report" rep.txt
sent=$(report out_buffers 'reader\[0\]')
[ "$sent" -gt 2 ] && [ "$(report in_buffers 'writer\[0\]')" = "$sent" ] && [ "$(report lost '')" = 0 ] ||
    fail "run 1: not every buffer arrived: $(cat rep.txt)"
line="null_consumer writer[0]: $sent buffers,"
grep -qF "$line" "$srv/writer.0.log" || fail "the writer's log lacks '$line': $(cat "$srv/writer.0.log")"
has_line() { journal -t "$u-writer.0" | grep -qF "$line"; }
until_true 300 has_line || { journal -t "$u-writer.0" >&2; fail "journalctl -t $u-writer.0 lacks '$line'"; }
grep -qx "journalctl -t $u-writer.0" "$srv/journal.txt" || fail "journal.txt: $(cat "$srv/journal.txt")"
# journald knows the unit: the line is the unit's.
[ "$(journal -t "$u-writer.0" -o verbose | sed -n 's/^ *_SYSTEMD_USER_UNIT=//p;s/^ *_SYSTEMD_UNIT=//p' | sort -u | grep -c "$u-writer.0.0.service")" -ge 1 ] ||
    step "NOTE: journald attributes the line to no unit here (cgroup v1 outside user@.service)"

step "3. --quit: tusk-run ends, the units are gone"
ctl --quit || fail "--quit refused: $(cat ctl.err)"
st=0
wait "$spid" || st=$?
spid=
[ "$st" -eq 0 ] || { cat serve.err >&2; fail "the served tusk-run exited $st"; }
none_left() { [ -z "$(systemctl --user list-units --all --no-legend --plain "$u-*")" ]; }
until_true 300 none_left || fail "units left: $(systemctl --user list-units --all --no-legend --plain "$u-*")"

step "4. a killed copy comes back as a new real unit, its journal identifier kept"
chain restart.xml 'restart="on-failure"' \
    "<parameter name=\"action\">kill</parameter><parameter name=\"at_block\">20</parameter><parameter name=\"only_instance\">1</parameter><parameter name=\"once\">$tmp/killed-once</parameter>"
expect 3 "copy[1] restarted" --engine systemd --run-dir "$tmp/rd2" --report rep.txt restart.xml
sent=$(report out_buffers 'reader\[0\]')
got=$(report in_buffers 'writer\[0\]')
lost=$(sed -n 's/^run=.* lost=\([0-9]*\).*/\1/p' rep.txt)
[ $((sent - got)) -eq "$lost" ] || fail "restart: reported loss $lost, but $((sent - got)) buffers are missing"
[ "$(report restarts 'copy\[1\]')" -ge 1 ] || fail "copy[1] shows no restart"
pid2=$(sed -n 's/.*journalctl -t tusk-r1-\([0-9]*\)-.*/\1/p' err.txt | head -n 1)
line="null_consumer writer[0]: $got buffers,"
has_line2() { journal -t "tusk-r1-$pid2-writer.0" | grep -qF "$line"; }
until_true 300 has_line2 || fail "the journal lacks the restarted run's '$line'"
step "ok (a private systemd: real transient units, properties, status, the journal read back)"
