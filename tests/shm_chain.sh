#!/bin/sh
# shm_chain.sh - tusk-run --transport shm: the buffers in shared memory
# between the instances of one host (distributed/shmlink.h), against ipc
# and tusk-emulate.
#
#  - file_producer -> passthrough (copying, then forwarding) -> file_writer:
#    the output of --transport shm is byte for byte tusk-emulate's and
#    --transport ipc's, every link exact, and the instances' logs say
#    their outputs went in shared memory (never as copies);
#  - 3 filter instances (one ring, three links, load sharing): the same
#    frames as tusk-emulate, every instance with a share;
#  - back-pressure: hwm=2 and a filter stalling for 1 s (the producer
#    waits for free slots): nothing lost;
#  - kill -9 of copy[1] at its 20th buffer (on_failure=continue): the loss
#    reported equals the buffers missing at the writer; with
#    restart=on-failure too (its successor's first buffer gives back the
#    slots its predecessor held);
#  - --transport shm with an actor on another host is refused (exit 2).
set -eu
b=${abs_top_builddir:?run through make check}
TUSK_ACTOR_PATH=${TUSK_ACTOR_PATH:-$b/actors/.libs}
export TUSK_ACTOR_PATH
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tusk-shm.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
TMPDIR=$tmp
export TMPDIR
unset XDG_RUNTIME_DIR

me=shm_chain
# shellcheck source=tests/distributed_lib.sh
. "${abs_top_srcdir:-${top_srcdir:-..}}/tests/distributed_lib.sh"
# chain FILE BINARY FILTER_ATTRS FILTER_PARAMS: reader -> copy -> writer, 16 KiB buffers.
chain() {
    cat >"$1" <<XML
<configuration>
  <producer><name>reader</name><binary_code>file_producer</binary_code><size>16384</size>
    <parameter name="file">input.adf</parameter></producer>
  <intermediary $3><name>copy</name><binary_code>$2</binary_code>
    <data_source>reader</data_source><size>16384</size>$4</intermediary>
  <consumer><name>writer</name><binary_code>file_writer</binary_code><data_source>copy</data_source>
    <parameter name="file">output.adf</parameter></consumer>
</configuration>
XML
}
# in_shm: every instance that sends said its outputs go in shared memory;
# unless told "may copy", none fell back to copies (which takes a sender
# waiting 5 s for a free slot: not in these short runs, whose receivers
# never stop for long).
in_shm() {
    may_copy=no
    if [ "$1" = "may copy" ]; then may_copy=yes; shift; fi
    for i in reader.0 "$@"; do
        grep -q "outputs in shared memory" "rd/$i.log" || fail "$i: its outputs did not go in shared memory"
    done
    [ $may_copy = yes ] || ! grep -q "go as copies" rd/*.log ||
        fail "outputs went as copies: $(grep -h 'go as copies' rd/*.log)"
}
# exact: no loss, every link exact.
exact() {
    [ "$(report lost '')" = 0 ] || fail "$1: lost buffers"
    ! grep '^link=' rep.txt | grep -v ' exact=1$' >/dev/null || fail "$1: a link is not exact"
}
harmless='<parameter name="action">exit</parameter><parameter name="at_block">1000000000</parameter>'

"$b/tusk-adf" gen -n 3000 --seed 21 -o input.adf 2>/dev/null

for forward in false true; do
    step "passthrough (forward=$forward): shm output = ipc output = tusk-emulate's, byte for byte"
    chain one.xml passthrough '' "<parameter name=\"forward\">$forward</parameter>"
    "$b/tusk-emulate" -q one.xml || fail "tusk-emulate failed"
    mv output.adf emulated.adf
    run -q --report rep.txt one.xml 2>err.txt || fail "tusk-run (ipc) failed"
    mv output.adf ipc.adf
    exact ipc
    rm -rf rd
    run -q --transport shm --run-dir "$tmp/rd" --report rep.txt one.xml 2>err.txt || fail "tusk-run (shm) failed"
    grep -qF "over shm" err.txt || fail "the run does not say it is over shm"
    cmp emulated.adf output.adf >out.txt 2>&1 || fail "shm output differs from the emulator's"
    cmp ipc.adf output.adf >out.txt 2>&1 || fail "shm output differs from ipc's"
    exact shm
    in_shm copy.0
    [ "$(report in_buffers 'writer\[0\]')" = "$(report out_buffers 'reader\[0\]')" ] ||
        fail "the writer did not get every buffer the reader sent"
done

step "3 filter instances over shm: the emulator's frames, each instance a share"
chain three.xml fault 'instances="3"' "$harmless"
"$b/tusk-emulate" -q three.xml || fail "tusk-emulate failed"
mv output.adf emulated.adf
rm -rf rd
run -q --transport shm --run-dir "$tmp/rd" --report rep.txt three.xml 2>err.txt || fail "tusk-run (shm) failed"
"$b/tusk-adf" diff --unordered emulated.adf output.adf >out.txt || fail "shm output differs from the emulator's"
exact "3 instances"
in_shm copy.0 copy.1 copy.2
grep -q "outputs in shared memory: 28 slots of 16384 bytes for 3 links" rd/reader.0.log ||
    fail "the reader's ring is not hwm x 3 links + 4 slots"
for k in 0 1 2; do
    [ "$(report in_buffers "copy\[$k\]")" -gt 0 ] || fail "copy[$k] took no share of the load"
done

step "back-pressure over shm: hwm=2, a filter stalling for 1 s; nothing lost"
chain slow.xml fault 'hwm="2"' \
    '<parameter name="action">stall</parameter><parameter name="at_block">3</parameter><parameter name="stall_seconds">1</parameter>'
rm -rf rd
run -q --transport shm --run-dir "$tmp/rd" --report rep.txt slow.xml 2>err.txt || fail "the stalled run failed"
"$b/tusk-adf" diff --unordered input.adf output.adf >out.txt || fail "frames were lost under back-pressure"
exact back-pressure
in_shm "may copy" copy.0

step "kill -9 of copy[1] at its 20th buffer over shm, on_failure=continue: loss reported = loss seen"
chain kill.xml fault 'instances="3" on_failure="continue"' \
    '<parameter name="action">kill</parameter><parameter name="at_block">20</parameter><parameter name="only_instance">1</parameter>'
rm -rf rd
expect 3 "copy[1] on localhost failed: the process was killed by signal 9 (SIGKILL)" --transport shm \
    --run-dir "$tmp/rd" --report rep.txt kill.xml
grep -qF "going on without copy[1]" err.txt || fail "no word of going on without copy[1]"
sent=$(report out_buffers 'reader\[0\]')
got=$(report in_buffers 'writer\[0\]')
lost=$(report lost '')
step "  producer sent $sent buffers, the writer got $got, tusk-run reports $lost lost"
[ "$lost" -gt 0 ] || fail "a killed instance lost nothing?"
[ $((sent - got)) -eq "$lost" ] || fail "reported loss $lost, but $((sent - got)) buffers are missing"
"$b/tusk-adf" diff --unordered input.adf output.adf >out.txt 2>&1 && fail "the output has every frame after a loss?"
in_shm copy.0 copy.2

step "the same kill with restart=on-failure over shm: the count still holds"
chain restart.xml fault 'instances="3" restart="on-failure"' \
    "<parameter name=\"action\">kill</parameter><parameter name=\"at_block\">20</parameter><parameter name=\"only_instance\">1</parameter><parameter name=\"once\">$tmp/killed-once</parameter>"
rm -rf rd
expect 3 "copy[1] restarted" --transport shm --run-dir "$tmp/rd" --report rep.txt restart.xml
sent=$(report out_buffers 'reader\[0\]')
got=$(report in_buffers 'writer\[0\]')
lost=$(report lost '')
step "  producer sent $sent buffers, the writer got $got, tusk-run reports $lost lost"
[ $((sent - got)) -eq "$lost" ] || fail "restart: reported loss $lost, but $((sent - got)) buffers are missing"
[ "$(grep '^instance=copy\[1\] ' rep.txt | sed -n 's/.* restarts=\([0-9]*\).*/\1/p')" -ge 1 ] ||
    fail "copy[1] shows no restart"
in_shm copy.0 copy.1 copy.2

step "--transport shm with an actor on another host: refused"
sed 's|<consumer><name>writer</name>|<consumer><hostname>192.0.2.7</hostname><name>writer</name>|' one.xml >remote.xml
expect 2 "ipc transport with actor 'writer' on 192.0.2.7: use tcp" --transport shm remote.xml

echo "$me: PASS"
