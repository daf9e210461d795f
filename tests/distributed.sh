#!/bin/sh
# distributed.sh - tusk-run on one host: the distributed runtime against
# the emulator and under faults.
#
#  - the same topology (3 filter instances) run by tusk-emulate and by
#    tusk-run, over ipc and over tcp, gives the same set of frames (tcp:
#    authenticated with CURVE, on ports the kernel picks);
#  - back-pressure: a filter that stalls for a moment makes the producer
#    wait, and nothing is lost;
#  - kill -9 of one filter instance mid-run (the fault actor's kill
#    action, at a known buffer): the run goes on, and the loss it reports
#    equals the buffers missing at the consumer;
#  - the same with restart="on-failure";
#  - an actor returning an error stops the run with a message naming it;
#  - a filter holding its input back (no output until its flush) that is
#    killed, or fails: every held buffer is counted lost, exactly;
#  - an actor error with on_failure=continue: the failed instance's last
#    buffers still reach the writer, and the loss is exact, run after run;
#  - a corrupt buffer (broken ADF framing) is caught by the instance that
#    receives it, named with its link and sender, and the run is not clean;
#  - a buffer arriving again (a stray sender) is flagged as extra;
#  - kill -9 of tusk-run: every instance ends at once (a remote one, after
#    --orphan-ms of silence), and the next tusk-run cleans the run folder;
#  - a 30 s process_block survives the default --timeout-ms, and the
#    status table shows it; a hook over its hook_timeout is a stall naming
#    the hook; a frozen process (silence) is caught by --timeout-ms;
#  - a topology that is a directory, or endless (/dev/zero): exit 2;
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
# Instances' temporary run folders go here too (in tusk-UID: the user's
# private folder, $XDG_RUNTIME_DIR/tusk where that is set, so not here).
TMPDIR=$tmp
export TMPDIR
unset XDG_RUNTIME_DIR
private=$tmp/tusk-$(id -u)

me=distributed
# shellcheck source=tests/distributed_lib.sh
. "${abs_top_srcdir:-${top_srcdir:-..}}/tests/distributed_lib.sh"
# linkv KEY 'up[k]->down[k]': a link's figure from a --report file.
linkv() {
    awk -v l="link=$2" -v k="$1" '$1 == l { for (i = 2; i <= NF; i++) { split($i, a, "="); if (a[1] == k) print a[2] } }' rep.txt
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
# Every input binds to a port the kernel picks (nothing to clash with), and
# says which; tcp is authenticated and encrypted (CURVE) by default.
run -q --transport tcp --report rep.txt same.xml 2>err.txt || fail "tusk-run (tcp) failed"
grep -q "^control=tusk-run security=curve " rep.txt || fail "the tcp run was not authenticated (CURVE)"
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

# held RUN_FILE ACTION: copy x2 holding every buffer back until the flush,
# copy[1] misbehaving at its 20th: none of what it got ever left it.
held() {
    chain "$1" 'instances="2" on_failure="continue"' \
        "<parameter name=\"action\">$2</parameter><parameter name=\"at_block\">20</parameter><parameter name=\"only_instance\">1</parameter><parameter name=\"hold\">true</parameter>"
}
for action in kill error; do
    step "a filter holding its input back until the flush: $action of copy[1] at its 20th buffer loses exactly what it got"
    held "held-$action.xml" "$action"
    expect 3 "copy[1] on localhost failed" --report rep.txt "held-$action.xml"
    sent1=$(linkv sent 'reader[0]->copy[1]')
    lost=$(report lost '')
    step "  copy[1] was sent $sent1 buffers, tusk-run reports $lost lost"
    [ "$sent1" -ge 20 ] || fail "copy[1] got only $sent1 buffers"
    [ "$lost" -eq "$sent1" ] || fail "$action: $sent1 buffers went into copy[1] and none came out, but $lost are reported lost"
    [ "$(linkv lost 'reader[0]->copy[1]')" -eq "$sent1" ] || fail "$action: the loss is not on the link into copy[1]"
    grep -qF "lost: $sent1 of $sent1 buffers from reader[0] to copy[1]" out.txt || fail "$action: no lost line for copy[1]"
    # The rest arrived: all that copy[0] got, frame for frame.
    [ "$(report in_frames 'writer\[0\]')" = "$(report in_frames 'copy\[0\]')" ] ||
        fail "$action: the writer's frames are not those copy[0] took in"
    if [ "$action" = error ]; then
        # It reported its failure: its counts are final, the 19 held exact.
        [ "$(linkv held 'reader[0]->copy[1]')" -eq 19 ] || fail "error: not 19 buffers held by copy[1]"
        grep -qF "19 of them held back by copy[1] (no output of their own) when it failed" out.txt ||
            fail "error: the held buffers are not reported"
    fi
done

step "an actor error with on_failure=continue: its last buffers reach the writer, the loss is exact (8 runs)"
# copy[2] fails on its 5th buffer: the 4 before went out, and the writer
# must take them even when the word of the failure overtakes them
# (tests/check_node.c forces that order).
chain errcont.xml 'instances="3" on_failure="continue"' \
    '<parameter name="action">error</parameter><parameter name="at_block">5</parameter><parameter name="only_instance">2</parameter>'
for i in 1 2 3 4 5 6 7 8; do
    expect 3 "going on without copy[2]" --report rep.txt errcont.xml
    sent=$(report out_buffers 'reader\[0\]')
    got=$(report in_buffers 'writer\[0\]')
    lost=$(report lost '')
    [ $((sent - got)) -eq "$lost" ] || fail "run $i: reported loss $lost, but $((sent - got)) buffers are missing"
    [ "$(linkv sent 'copy[2]->writer[0]')" -eq 4 ] || fail "run $i: copy[2] did not send 4 buffers"
    [ "$(linkv received 'copy[2]->writer[0]')" -eq 4 ] || fail "run $i: the writer did not take copy[2]'s 4 buffers"
    [ "$(linkv lost 'copy[2]->writer[0]')" -eq 0 ] || fail "run $i: loss counted on copy[2] -> writer"
    [ "$(linkv finished 'reader[0]->copy[2]')" -eq 4 ] || fail "run $i: copy[2] did not finish 4 buffers"
    [ "$lost" -eq $(($(linkv sent 'reader[0]->copy[2]') - 4)) ] || fail "run $i: the loss is not what copy[2] left unfinished"
done

step "a corrupt buffer is caught by the instance receiving it, named, and the run is not clean"
chain corrupt.xml 'instances="1"' '<parameter name="action">corrupt</parameter><parameter name="at_block">3</parameter>'
expect 3 "corrupt data: writer[0] on localhost received a malformed buffer 3 of" --report rep.txt corrupt.xml
grep -qF "from copy[0] (incarnation 0): offset 0:" err.txt || fail "the corrupt buffer's sender or offset is not named"
grep -qF "run 1 ended with failures: 0 buffers lost, 1 malformed" err.txt || fail "no failure line for the corrupt buffer"
grep -qF "corrupt: 1 malformed buffer (broken ADF framing) from copy[0] at writer[0]" out.txt ||
    fail "the summary does not count the corrupt buffer"
[ "$(linkv malformed 'copy[0]->writer[0]')" = 1 ] || fail "the report does not count the corrupt buffer"
[ "$(report malformed '')" = 1 ] || fail "the report's totals do not count the corrupt buffer"

step "passthrough forward=true: buffers pass through the middle hop uncopied, and all arrive"
sed 's|<binary_code>fault</binary_code>|<binary_code>passthrough</binary_code>|; s|<parameter name="action">exit</parameter><parameter name="at_block">1000000000</parameter>|<parameter name="forward">true</parameter>|' \
    same.xml >forward.xml
grep -q 'name="forward"' forward.xml || fail "forward.xml was not made"
run -q --report rep.txt forward.xml 2>err.txt || fail "the forwarding run failed"
"$b/tusk-adf" diff --unordered input.adf output.adf >out.txt || fail "the forwarding run lost or changed frames"
[ "$(report lost '')" = 0 ] || fail "the forwarding run reports lost buffers"

step "a filter that holds everything back until the flush, above another filter: all arrive, none counted lost"
# The event builder, with a reorder window longer than the run, answers
# each buffer with no output until the flush: its inputs count as held
# until the flush releases them (a marker, not a buffer), and the link
# below it carries only the buffers of the flush.
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

step "a hook over its hook_timeout is a stall that names the hook"
chain stall.xml 'instances="2" hook_timeout="1"' \
    '<parameter name="action">stall</parameter><parameter name="at_block">5</parameter><parameter name="stall_seconds">600</parameter><parameter name="only_instance">0</parameter>'
expect 1 "copy[0] on localhost failed: stalled in process_block for " stall.xml
grep -qF "over its hook_timeout of 1 s" err.txt || fail "the stall message does not give the limit"
sed 's/hook_timeout="1"/hook_timeout="1.5"/' stall.xml >badlimit.xml
expect 2 "bad hook_timeout '1.5': expected whole seconds" badlimit.xml

step "a frozen process (SIGSTOP: silent, as a hung host) is caught by --timeout-ms"
chain freeze.xml 'instances="2"' \
    '<parameter name="action">freeze</parameter><parameter name="at_block">5</parameter><parameter name="only_instance">0</parameter>'
expect 1 "copy[0] on localhost failed: no heartbeat for" --timeout-ms 3000 freeze.xml

step "a 30 s process_block survives the default --timeout-ms (5 s); the status table shows it"
chain long-hook.xml 'instances="1"' \
    '<parameter name="action">stall</parameter><parameter name="at_block">2</parameter><parameter name="stall_seconds">30</parameter>'
run --run-dir "$tmp/long-hook" --report rep.txt long-hook.xml >long-hook.out 2>long-hook.err &
pid=$!
in_hook() {
    "$b/tusk-run" --status "$tmp/long-hook" >status.txt 2>/dev/null &&
        grep -q "^copy\[0\] is in process_block for [0-9.]* s (hook_timeout: none)" status.txt
}
until_true 600 in_hook || { kill "$pid"; fail "--status never showed copy[0] inside process_block"; }
status=0
wait "$pid" || status=$?
[ "$status" -eq 0 ] || { cat long-hook.err >&2; fail "the run with a 30 s process_block exited $status, expected 0"; }
"$b/tusk-adf" diff --unordered input.adf output.adf >out.txt || fail "the run with a 30 s process_block lost frames"
[ "$(report lost '')" = 0 ] || fail "the run with a 30 s process_block reports lost buffers"
blocks=$(report block_ns 'copy\[0\]')
[ "$blocks" -ge 30000000000 ] || fail "copy[0] spent $blocks ns in process_block, not 30 s"

step "a process_start longer than --start-timeout-ms is waited for: the instance is alive in it"
chain long-start.xml 'instances="1"' \
    '<parameter name="action">stall</parameter><parameter name="hook">start</parameter><parameter name="stall_seconds">8</parameter>'
run -q --start-timeout-ms 3000 --report rep.txt long-start.xml 2>err.txt || fail "an 8 s process_start failed the run"
"$b/tusk-adf" diff --unordered input.adf output.adf >out.txt || fail "the run with an 8 s process_start lost frames"

step "a topology that is a directory, or endless (/dev/zero): exit 2, said so"
expect 2 "$tmp: cannot read: Is a directory" "$tmp"
expect 2 "/dev/zero: too large (over 16 MiB): not a topology" /dev/zero

step "tusk-run and tusk-actor: --version, unknown options in one line (base/cli.h)"
for t in tusk-run tusk-actor; do
    "$b/$t" --version >out.txt 2>err.txt || fail "$t --version failed"
    grep -Eq "^$t \(tusk\) [0-9]+\.[0-9]+" out.txt || { cat out.txt >&2; fail "$t --version: no version line"; }
    got=0
    "$b/$t" --frobnicate >out.txt 2>err.txt || got=$?
    [ "$got" -eq 2 ] || fail "$t --frobnicate exited $got, expected 2"
    grep -qxF "$t: unknown option '--frobnicate' ($t --help lists the options)" err.txt ||
        { cat err.txt >&2; fail "$t --frobnicate: not the one-line message"; }
done

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
sed 's|<data_source>reader</data_source>|<data_source>reader</data_source><address>eth0</address>|' remote.xml >ifname.xml
expect 2 "as an address they reach, not the interface name 'eth0'" --control-address 127.0.0.1 ifname.xml
sed 's|<data_source>reader</data_source>|<data_source>reader</data_source><address>127.0.0.1</address>|' remote.xml >ctl.xml
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

step "a buffer arriving again on a link (a stray sender) is dropped and flagged as extra"
run --run-dir "$tmp/extra" --report rep.txt long.xml >extra.out 2>extra.err &
pid=$!
copy_took_some() {
    "$b/tusk-run" --status "$tmp/extra" >status.txt 2>/dev/null && awk '$1 == "copy[0]" && $4 > 0 { ok = 1 } END { exit !ok }' status.txt
}
until_true 300 copy_took_some || { kill "$pid"; fail "copy[0] never took a buffer"; }
# Buffer 1 of reader[0] (actor 0, instance 0, incarnation 0), run 1, into
# copy[0]'s input (actor 1, instance 0, input 0), once more.
"$b/tests/wire_inject" "ipc://$tmp/extra/a1.0.0" 1 0 0 0 1 input.adf || { kill "$pid"; fail "wire_inject failed"; }
seen_again() { grep -q "arrived again" "$tmp/extra/copy.0.log"; }
until_true 300 seen_again || { kill "$pid"; fail "copy[0] never saw the buffer again"; }
"$b/tusk-run" --stop "$tmp/extra" >/dev/null || fail "--stop failed"
status=0
wait "$pid" || status=$?
[ "$status" -eq 3 ] || { cat extra.err >&2; fail "a run with an extra buffer exited $status, expected 3"; }
grep -qF "1 extra" extra.err || { cat extra.err >&2; fail "the failure line does not count the extra buffer"; }
grep -qF "(1 numbered again, dropped: a duplicate or a stray sender)" extra.out || fail "the summary lacks the extra line"
[ "$(linkv extra 'reader[0]->copy[0]')" = 1 ] || fail "the report does not count the extra buffer on reader[0]->copy[0]"
[ "$(linkv duplicates 'reader[0]->copy[0]')" = 1 ] || fail "the report does not count the duplicate"
[ "$(report lost '')" = 0 ] || fail "the run with an extra buffer reports lost buffers"

step "kill -9 of tusk-run: its instances end at once, and the next tusk-run cleans the run folder"
mkdir "$tmp/orph"
# A long --orphan-ms: only the parent-death signal can end them in time.
TMPDIR=$tmp/orph "$b/tusk-run" --no-live -q --actor-bin "$b/tusk-actor" --orphan-ms 600000 long.xml >orph.out 2>orph.err &
rpid=$!
orph_running() {
    for d in "$tmp"/orph/tusk-$(id -u)/tusk-run.*; do
        [ -e "$d/lock" ] && "$b/tusk-run" --status "$d" 2>/dev/null | grep -q "^sink\[0\] .* running " && return 0
    done
    return 1
}
until_true 300 orph_running || { kill "$rpid"; fail "the run to be killed never ran"; }
dir=$(dirname "$(ls "$tmp"/orph/tusk-$(id -u)/tusk-run.*/lock)")
kids=$(ps -o pid= --ppid "$rpid")
[ "$(echo $kids | wc -w)" -eq 4 ] || { kill "$rpid"; fail "expected 4 instances, found: $kids"; }
kill -9 "$rpid"
wait "$rpid" 2>/dev/null || true
all_gone() {
    for k in $kids; do gone "$k" || return 1; done
}
until_true 100 all_gone || fail "instances outlived their tusk-run: $(ps -o pid=,args= -p "$(echo $kids | tr ' ' ,)")"
ls "$dir"/a* >/dev/null 2>&1 || fail "the killed run left no sockets to clean: the test is void"
expect 1 "its tusk-run (process $rpid) is gone: it died without cleaning up" --status "$dir"
TMPDIR=$tmp/orph run -q --report rep.txt same.xml >out.txt 2>err.txt || fail "the run after the killed one failed"
grep -qF "run folder $dir belonged to a tusk-run (process $rpid) that died without cleaning up: removed its" err.txt ||
    fail "the next tusk-run did not report the dead run's folder"
! ls "$dir"/a* >/dev/null 2>&1 || fail "the dead run's sockets are still there"
[ ! -e "$dir/lock" ] && [ ! -e "$dir/control" ] || fail "the dead run's lock or control file is still there"
[ -e "$dir/reader.0.log" ] || fail "the dead run's logs were not kept"
TMPDIR=$tmp/orph run -q same.xml >out.txt 2>err.txt || fail "the second run after the killed one failed"
! grep -q "died without cleaning up" err.txt || fail "the dead run's folder was reported twice"

step "a remote instance (through a launcher) whose tusk-run died ends itself after --orphan-ms"
# sink "runs on" 127.0.0.2: started through a launcher shell that keeps it
# as a child of its own, so only the silence can end it.
sed -e 's|<consumer><name>sink</name>|<consumer><hostname>127.0.0.2</hostname><address>127.0.0.2</address><name>sink</name>|' \
    long.xml >remote-long.xml
grep -q '127.0.0.2' remote-long.xml || fail "remote-long.xml was not made"
rm -rf "$tmp/remote"
"$b/tusk-run" --no-live -q --actor-bin "$b/tusk-actor" --run-dir "$tmp/remote" --transport tcp \
    --control-address 127.0.0.3 --orphan-ms 1500 --launcher "sh -c '\"\$@\"; exit \$?' {host}" \
    remote-long.xml >remote.out 2>remote.err &
rpid=$!
remote_running() {
    gone "$rpid" || "$b/tusk-run" --status "$tmp/remote" 2>/dev/null | grep -q "^sink\[0\] .* running "
}
until_true 300 remote_running || { kill "$rpid"; fail "the remote run never ran"; }
gone "$rpid" && { cat remote.err >&2; fail "the remote run ended by itself"; }
# The tusk-actor itself, not the launcher's shells around it.
sink=$(pgrep -f -- "^[^ ]*tusk-actor --control $(cat "$tmp/remote/control") --actor sink ")
[ -n "$sink" ] || { kill "$rpid"; fail "the remote sink's tusk-actor is not found"; }
kill -9 "$rpid"
wait "$rpid" 2>/dev/null || true
sink_gone() { gone "$sink"; }
until_true 200 sink_gone || fail "the orphaned remote instance is still there"
grep -q "no word from the controller for 1500 ms" "$tmp/remote/sink.0.log" || fail "the orphan did not say why it ended"

echo "distributed: PASS"
