#!/bin/sh
# distributed.sh - tusk-run on one host: the distributed runtime against
# the emulator and under faults.
#
#  - the same topology (3 filter instances) run by tusk-emulate and by
#    tusk-run, over ipc and over tcp, gives the same set of frames;
#  - back-pressure: a filter that stalls for a moment makes the producer
#    wait, and nothing is lost;
#  - kill -9 of one filter instance mid-run (the fault actor's kill
#    action, at a known buffer): the run goes on, and the loss it reports
#    equals the buffers missing at the consumer;
#  - the same with restart="on-failure";
#  - an actor returning an error, and a stalled actor (heartbeat timeout),
#    stop the run with a message naming the actor;
#  - a malformed topology, a missing library and a library that fails to
#    load give exit status 2 naming file, actor and library;
#  - tusk-run --status/--pause/--resume/--stop against a running run.
set -eu
b=${abs_top_builddir:?run through make check}
TUSK_ACTOR_PATH=${TUSK_ACTOR_PATH:-$b/actors/.libs}
export TUSK_ACTOR_PATH
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tusk-distributed.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
# Instances' temporary run folders go here too.
TMPDIR=$tmp
export TMPDIR

step() { echo "distributed: $*"; }
fail() {
    echo "distributed: FAIL: $*" >&2
    for f in err.txt out.txt; do [ -f "$f" ] && sed 's/^/    | /' "$f" >&2; done
    exit 1
}
# tusk-run with the build's tusk-actor; a timeout only as a safety net.
run() { timeout 120 "$b/tusk-run" --no-live --actor-bin "$b/tusk-actor" "$@"; }
# expect STATUS NEEDLE ARGS...: run tusk-run, check exit status and stderr.
expect() {
    want=$1 needle=$2
    shift 2
    got=0
    run "$@" >out.txt 2>err.txt || got=$?
    [ "$got" -eq "$want" ] || fail "tusk-run $* exited $got, expected $want"
    grep -qF -- "$needle" err.txt || fail "tusk-run $*: stderr lacks '$needle'"
}
# report KEY INSTANCE: a figure from a --report file (INSTANCE "" for the totals line).
report() {
    if [ -z "$2" ]; then
        sed -n "s/^run=.* $1=\([0-9]*\).*/\1/p" rep.txt
    else
        grep "^instance=$2 " rep.txt | sed -n "s/.* $1=\([0-9]*\).*/\1/p"
    fi
}

# chain FILE FILTER_ATTRS FILTER_PARAMS: producer -> filter (fault actor,
# a passthrough unless told otherwise) -> writer, 16 KiB buffers.
chain() {
    cat >"$1" <<XML
<configuration>
  <producer><name>reader</name><binary_code>file_producer</binary_code><size>16384</size>
    <parameter name="file">input.adf</parameter></producer>
  <intermediary $2><name>copy</name><binary_code>fault</binary_code>
    <data_source>reader</data_source><size>16384</size>$3</intermediary>
  <consumer><name>writer</name><binary_code>file_writer</binary_code><data_source>copy</data_source>
    <parameter name="file">output.adf</parameter></consumer>
</configuration>
XML
}
harmless='<parameter name="action">exit</parameter><parameter name="at_block">1000000000</parameter>'

"$b/tusk-adf" gen -n 3000 --seed 21 -o input.adf 2>/dev/null

step "3 filter instances: tusk-emulate and tusk-run (ipc, tcp) give the same frames"
chain same.xml 'instances="3"' "$harmless"
"$b/tusk-emulate" -q same.xml || fail "tusk-emulate failed"
mv output.adf emulated.adf
run -q --report rep.txt same.xml 2>err.txt || fail "tusk-run (ipc) failed"
"$b/tusk-adf" diff --unordered emulated.adf output.adf >out.txt || fail "ipc output differs from the emulator's"
[ "$(report lost '')" = 0 ] || fail "ipc run reports lost buffers"
# Ports below Linux's ephemeral range (32768 up), where no outgoing
# connection of a parallel test takes them; a port in use after all is
# tried again elsewhere (a clash, not a tusk failure).
tcp_ok=no
for try in 0 1 2 3; do
    port=$((20000 + (($$ + try * 211) % 700) * 16))
    if run -q --transport tcp --base-port "$port" --report rep.txt same.xml 2>err.txt; then
        tcp_ok=yes
        break
    fi
    grep -q "Address already in use" err.txt || break
done
[ "$tcp_ok" = yes ] || fail "tusk-run (tcp) failed"
"$b/tusk-adf" diff --unordered emulated.adf output.adf >out.txt || fail "tcp output differs from the emulator's"
for k in 0 1 2; do
    [ "$(report in_buffers "copy\[$k\]")" -gt 0 ] || fail "copy[$k] took no share of the load"
done

step "config/distributed.xml (the README's example) runs and keeps every frame"
run -q --report rep.txt "${abs_top_srcdir:?}/config/distributed.xml" 2>err.txt || fail "config/distributed.xml failed"
"$b/tusk-adf" diff --unordered input.adf output.adf >out.txt || fail "config/distributed.xml lost or changed frames"
[ "$(grep -c '^instance=copy' rep.txt)" -eq 3 ] || fail "config/distributed.xml does not run 3 copy instances"
# The statistics count frames too: all of the input's reach the writer.
frames=$("$b/tusk-adf" check input.adf | sed -n 's/.*(\([0-9]*\) top-level).*/\1/p')
[ "$(report in_frames 'writer\[0\]')" = "$frames" ] || fail "the writer's frame count is not the input's $frames"

step "back-pressure: a filter stalling for 1 s with hwm=2 makes the producer wait; nothing lost"
chain slow.xml 'instances="1" hwm="2"' \
    '<parameter name="action">stall</parameter><parameter name="at_block">3</parameter><parameter name="stall_seconds">1</parameter>'
run -q --report rep.txt slow.xml 2>err.txt || fail "the stalled-for-a-moment run failed"
"$b/tusk-adf" diff --unordered input.adf output.adf >out.txt || fail "frames were lost under back-pressure"
[ "$(report lost '')" = 0 ] || fail "back-pressure run reports lost buffers"

step "kill -9 of copy[1] at its 20th buffer, on_failure=continue: loss reported = loss seen"
chain kill.xml 'instances="3" on_failure="continue"' \
    '<parameter name="action">kill</parameter><parameter name="at_block">20</parameter><parameter name="only_instance">1</parameter>'
expect 3 "copy[1] on localhost failed: the process was killed by signal 9 (SIGKILL)" --report rep.txt kill.xml
grep -qF "going on without copy[1]" err.txt || fail "no word of going on without copy[1]"
sent=$(report out_buffers 'reader\[0\]')
got=$(report in_buffers 'writer\[0\]')
lost=$(report lost '')
step "  producer sent $sent buffers, the writer got $got, tusk-run reports $lost lost"
[ "$lost" -gt 0 ] || fail "a killed instance lost nothing?"
[ $((sent - got)) -eq "$lost" ] || fail "reported loss $lost, but $((sent - got)) buffers are missing"
# The data tells the same story: the producer's meta:eof counted more
# frames than arrived.
got=0
"$b/tusk-adf" check output.adf >out.txt 2>err.txt || got=$?
if [ "$got" -ne 1 ] || ! grep -q "meta:eof says" err.txt; then
    fail "tusk-adf check did not see the loss in output.adf"
fi

step "the same kill with restart=on-failure: the slot comes back, the count still holds"
# 'once': the restarted copy[1] does not kill itself again.
chain restart.xml 'instances="3" restart="on-failure"' \
    "<parameter name=\"action\">kill</parameter><parameter name=\"at_block\">20</parameter><parameter name=\"only_instance\">1</parameter><parameter name=\"once\">$tmp/killed-once</parameter>"
expect 3 "copy[1] restarted" --report rep.txt restart.xml
sent=$(report out_buffers 'reader\[0\]')
got=$(report in_buffers 'writer\[0\]')
lost=$(report lost '')
[ $((sent - got)) -eq "$lost" ] || fail "restart: reported loss $lost, but $((sent - got)) buffers are missing"
[ "$(grep '^instance=copy\[1\] ' rep.txt | sed -n 's/.* restarts=\([0-9]*\).*/\1/p')" -ge 1 ] ||
    fail "copy[1] shows no restart"

step "an actor error stops the run (exit 1) with the actor's words"
chain error.xml 'instances="3"' \
    '<parameter name="action">error</parameter><parameter name="at_block">5</parameter><parameter name="only_instance">2</parameter>'
expect 1 "copy[2] on localhost failed: actor copy[2]: process_block failed on buffer 5 with status 1 (failure): fault injected: error at block 5" error.xml
grep -qF "run 1 stopped" err.txt || fail "no 'run 1 stopped' line"

step "passthrough forward=true: buffers pass through the middle hop uncopied, and all arrive"
sed 's|<binary_code>fault</binary_code>|<binary_code>passthrough</binary_code>|; s|<parameter name="action">exit</parameter><parameter name="at_block">1000000000</parameter>|<parameter name="forward">true</parameter>|' \
    same.xml >forward.xml
grep -q 'name="forward"' forward.xml || fail "forward.xml was not made"
run -q --report rep.txt forward.xml 2>err.txt || fail "the forwarding run failed"
"$b/tusk-adf" diff --unordered input.adf output.adf >out.txt || fail "the forwarding run lost or changed frames"
[ "$(report lost '')" = 0 ] || fail "the forwarding run reports lost buffers"

step "a filter that holds everything back until the flush, above another filter: all arrive, none counted lost"
# The event builder, with a reorder window longer than the run, answers
# each buffer with no output until the flush; the empty markers must pass
# through the filter below it, or the link into that filter would count
# every held buffer as lost.
cat >hold.xml <<XML
<configuration>
  <producer><name>reader</name><binary_code>file_producer</binary_code><size>16384</size>
    <parameter name="file">input.adf</parameter></producer>
  <intermediary><name>hold</name><binary_code>event_builder</binary_code>
    <data_source>reader</data_source><size>16384</size>
    <parameter name="reorder">100000000000000</parameter></intermediary>
  <intermediary><name>copy</name><binary_code>passthrough</binary_code>
    <data_source>hold</data_source><size>16384</size></intermediary>
  <consumer><name>writer</name><binary_code>file_writer</binary_code><data_source>copy</data_source>
    <parameter name="file">output.adf</parameter></consumer>
</configuration>
XML
"$b/tusk-emulate" -q hold.xml 2>err.txt || fail "tusk-emulate hold.xml failed"
mv output.adf emulated.adf
run -q --report rep.txt hold.xml 2>err.txt || fail "the hold-back run failed"
cmp emulated.adf output.adf >out.txt 2>&1 || fail "the hold-back run's output differs from the emulator's"
[ "$(report lost '')" = 0 ] || fail "the hold-back run reports lost buffers"
[ "$(report in_buffers 'hold\[0\]')" -gt 1 ] || fail "the builder got only one buffer: nothing was held back"

step "a stalled actor is caught by the heartbeat timeout"
chain stall.xml 'instances="2"' \
    '<parameter name="action">stall</parameter><parameter name="at_block">5</parameter><parameter name="stall_seconds">60</parameter><parameter name="only_instance">0</parameter>'
expect 1 "copy[0] on localhost failed: no heartbeat for" --timeout-ms 3000 stall.xml

step "a malformed topology: exit 2, file:line"
sed 's/<data_source>reader</<data_source>raeder</' same.xml >bad.xml
expect 2 "bad.xml:" bad.xml
grep -qF "raeder" err.txt || fail "the message does not name the unknown source"

step "a missing library: exit 2 before any process starts"
sed 's/file_writer/file_writre/' same.xml >nolib.xml
expect 2 "actor library 'file_writre' not found" nolib.xml

step "a library that fails to load in its instance: exit 2 naming actor, host, library"
sed "s|<binary_code>fault</binary_code>|<binary_code>$TUSK_TEST_ACTOR_PATH/abi_mismatch.so</binary_code>|" same.xml >abi.xml
expect 2 "copy[0] on localhost: CONFIGURE: actor library $TUSK_TEST_ACTOR_PATH/abi_mismatch.so was built for tusk actor ABI version 99" abi.xml

step "multi-host settings that cannot work are refused before anything starts (exit 2)"
# A producer on another host feeding a writer here: the writer must bind
# an address that host reaches.
sed 's|<producer><name>reader</name>|<producer><hostname>192.0.2.7</hostname><name>reader</name>|' same.xml >remote.xml
expect 2 "intermediary 'copy' on localhost receives data from another host: name the interface or address" \
    --control-address 127.0.0.1 remote.xml
sed 's|<data_source>reader</data_source>|<data_source>reader</data_source><port>eth0</port>|' remote.xml >ifname.xml
expect 2 "give <port> as an address they reach, not the interface name 'eth0'" --control-address 127.0.0.1 ifname.xml
sed 's|<data_source>reader</data_source>|<data_source>reader</data_source><port>127.0.0.1</port>|' remote.xml >ctl.xml
expect 2 "give --control-address as an address of this host they can reach (not 127.0.0.1)" ctl.xml
expect 2 "--control-address 0.0.0.0: give an address of this host that every instance can reach" \
    --control-address 0.0.0.0 same.xml

step "--status, --pause, --resume, --stop against a running run"
cat >long.xml <<XML
<configuration>
  <producer><name>reader</name><binary_code>file_producer</binary_code><size>65536</size>
    <parameter name="file">input.adf</parameter><parameter name="repeat">1000000</parameter></producer>
  <intermediary instances="2"><name>copy</name><binary_code>passthrough</binary_code>
    <data_source>reader</data_source><size>65536</size></intermediary>
  <consumer><name>sink</name><binary_code>null_consumer</binary_code><data_source>copy</data_source></consumer>
</configuration>
XML
run --run-dir "$tmp/long" --report rep.txt long.xml >long.out 2>long.err &
pid=$!
# Wait (safety bound only) until it reports running.
i=0
until "$b/tusk-run" --status "$tmp/long" >status.txt 2>/dev/null && grep -q "running" status.txt; do
    i=$((i + 1))
    [ $i -lt 300 ] || { kill "$pid" 2>/dev/null; fail "the long run never reported running"; }
    sleep 0.1
done
grep -q "^sink\[0\] " status.txt || fail "--status lacks sink[0]"
"$b/tusk-run" --pause "$tmp/long" >/dev/null || fail "--pause failed"
i=0
until "$b/tusk-run" --status "$tmp/long" >status.txt && grep -q "^reader\[0\] .* paused " status.txt; do
    i=$((i + 1))
    [ $i -lt 100 ] || { kill "$pid" 2>/dev/null; fail "reader[0] never showed paused"; }
    sleep 0.1
done
"$b/tusk-run" --resume "$tmp/long" >/dev/null || fail "--resume failed"
"$b/tusk-run" --stop "$tmp/long" >/dev/null || fail "--stop failed"
status=0
wait "$pid" || status=$?
[ "$status" -eq 0 ] || { cat long.err >&2; fail "a stopped run exited $status, expected 0"; }
[ "$(report lost '')" = 0 ] || fail "the stopped run lost buffers"
[ "$(report out_buffers 'reader\[0\]')" = "$(report in_buffers 'sink\[0\]')" ] ||
    fail "the stopped run's counts do not reconcile"

echo "distributed: PASS"
