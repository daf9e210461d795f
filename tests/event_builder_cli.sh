#!/bin/sh
# event_builder_cli.sh - the event_builder actor in real chains, run by
# tusk-emulate and by tusk-run:
#
#  - config/eb-demo.xml (gamma_sim -> psa x2 -> event_builder -> writer):
#    every data:psa the PSA wrote (the same chain without the builder) is
#    inside a composite exactly once, composites are numbered and in time
#    order, each spans <= window ticks, every data:truth follows its event,
#    tusk-adf check passes;
#  - the same events, byte for byte, with a small output buffer (more
#    output in process_block), from tusk-run (processes: the two PSA
#    instances' buffers arrive in any order, so reorder is set beyond the
#    run's whole time span), and from fan-in (two file producers holding
#    alternate PSA buffers -> one builder with two inputs), emulated and
#    distributed. Byte-identical output holds because nothing is late or
#    forced there and equal timestamps only occur within one decay, whose
#    frames always travel in one buffer (see builder/README.md);
#  - with a reorder too small for the input (fan-in, emulated: a fixed
#    arrival order) frames come late: counted in the summary, and still
#    every frame is out once; the same under tusk-run with reorder = 0;
#  - bad settings and a data:psa that does not decode stop the chain with
#    a message naming the parameter, or the input and offset.
set -eu
b=${abs_top_builddir:?run through make check}
s=${abs_top_srcdir:?run through make check}
TUSK_ACTOR_PATH=${TUSK_ACTOR_PATH:-$b/actors/.libs}
export TUSK_ACTOR_PATH
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tusk-eb-cli.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
TMPDIR=$tmp
export TMPDIR
step() { echo "event_builder_cli: $*"; }
fail() {
    echo "event_builder_cli: FAIL: $*" >&2
    for f in err.txt out.txt; do [ -f "$f" ] && sed 's/^/    | /' "$f" >&2; done
    exit 1
}
count() { # FILE TYPE [COLUMN]: frames of TYPE in FILE (2: top level, 3: inside composites)
    "$b/tusk-adf" stats "$1" | awk -v t="$2" -v c="${3:-2}" '$1 == t {print $c}'
}
# signatures FILE TYPE: one sorted line per frame of TYPE, wherever it is
# (top level or inside a composite): its key and its decoded payload.
signatures() {
    "$b/tusk-adf" dump -v "$1" | awk -v t="$2" '
        /^ *[0-9]+ +[a-z]/ { if (sig != "") print sig; sig = ""; if ($2 == t) sig = $3 " " $4 " " $5; next }
        sig != "" { sub(/^ +/, ""); sig = sig " | " $0 }
        END { if (sig != "") print sig }' | sort
}
# check_events FILE WINDOW ORDERED: the builder's output is well formed:
# no data:psa at top level; every composite's data:psa frames within
# [t0, t0 + WINDOW]; with ORDERED = 1 also composites numbered 0, 1, ...
# in time order with disjoint windows, and every data:truth inside the
# window of the composite before it. Prints the problems, nothing if none.
check_events() {
    "$b/tusk-adf" dump "$1" | awk -v w="$2" -v ordered="$3" '
        NR == 1 { next }
        { nested = substr($0, 14, 1) == " "; ts = $5 + 0 }
        !nested && $2 == "event:data:psa" {
            if (ordered && $4 != n) print "composite at " $1 ": event " $4 ", expected " n
            if (ordered && n > 0 && ts <= t0 + w) print "composite at " $1 ": t0 " ts " within the previous window"
            t0 = ts; n++; next
        }
        nested && $2 == "data:psa" {
            if (ts < t0 || ts > t0 + w) print "data:psa at " $1 ": ts " ts " outside [" t0 ", " t0 + w "]"
            next
        }
        !nested && $2 == "data:psa" { print "data:psa at " $1 " outside a composite" }
        ordered && !nested && $2 == "data:truth" && (n == 0 || ts < t0 || ts > t0 + w) {
            print "data:truth at " $1 ": ts " ts " not in the window of the composite before it"
        }'
}
# everything_once FILE WHAT: every data:psa and data:truth of the PSA's
# output is in FILE exactly once.
everything_once() {
    signatures "$1" data:psa >got-psa.txt
    cmp -s psa-sigs.txt got-psa.txt || fail "$2: the data:psa frames differ from the PSA's ($(wc -l <got-psa.txt) for $(wc -l <psa-sigs.txt))"
    signatures "$1" data:truth >got-truth.txt
    cmp -s truth-sigs.txt got-truth.txt || fail "$2: the data:truth frames differ from the simulation's"
    "$b/tusk-adf" check "$1" >out.txt || fail "$2: tusk-adf check"
}
# summary LOG KEY: a figure from the builder's summary line ("N KEY").
summary() {
    sed -n "s/.*event_builder [^:]*: .* \([0-9][0-9]*\) $2,.*/\1/p" "$1" | head -n 1
}
# demo SIZE REORDER: config/eb-demo.xml with this test's paths, the
# builder's output buffer and reorder.
demo() {
    sed -e "s|config/sim-co60.conf|$s/config/sim-co60.conf|" \
        -e "s|<parameter name=\"events\">20000</parameter>|<parameter name=\"events\">4000</parameter><parameter name=\"basis\">$tmp/basis.tbs</parameter>|" \
        -e "s|config/crystal-coarse.tbs|$tmp/basis.tbs|" \
        -e "/<name>eb<\/name>/,/<\/intermediary>/s|<size>262144</size>|<size>$1</size>|" \
        -e "s|<parameter name=\"reorder\">100000000</parameter>|<parameter name=\"reorder\">$2</parameter>|" \
        "$s/config/eb-demo.xml"
}
# fanin SIZE REORDER: part-0.adf and part-1.adf -> event_builder -> writer.
fanin() {
    cat <<XML
<configuration>
  <producer><name>left</name><binary_code>file_producer</binary_code><size>16384</size>
    <parameter name="file">part-0.adf</parameter></producer>
  <producer><name>right</name><binary_code>file_producer</binary_code><size>16384</size>
    <parameter name="file">part-1.adf</parameter></producer>
  <intermediary><name>eb</name><binary_code>event_builder</binary_code>
    <data_source>left</data_source><data_source>right</data_source><size>$1</size>
    <parameter name="reorder">$2</parameter></intermediary>
  <consumer><name>writer</name><binary_code>file_writer</binary_code><data_source>eb</data_source>
    <parameter name="file">events.adf</parameter></consumer>
</configuration>
XML
}
run_dist() { # TOPOLOGY: tusk-run, the builder's log into eb.log
    rm -rf rd
    timeout 300 "$b/tusk-run" --no-live --actor-bin "$b/tusk-actor" -q --run-dir rd "$1" 2>err.txt ||
        fail "tusk-run $1"
    cp rd/eb.0.log eb.log
    rm -rf rd
}
BIG=1000000000000 # ticks (> 2.7 hours): beyond the whole run, so nothing is ever late

step "a coarse basis, and the PSA's output without the builder (split over two files)"
"$b/tusk-basis" gen -c "$s/config/crystal-coarse.conf" --field-grid 3 --grid 8 --int16 -q -o basis.tbs >/dev/null ||
    fail "tusk-basis gen"
# The demo chain without the builder, two writers taking alternate buffers.
demo 262144 1000000 | sed -e '/<name>eb<\/name>/,/<\/intermediary>/d' -e '/<intermediary>$/d' \
    -e 's|<consumer>|<consumer instances="2">|' -e 's|<data_source>eb</data_source>|<data_source>psa</data_source>|' \
    -e 's|events.adf|part-{instance}.adf|' >split.xml
"$b/tusk-emulate" -q split.xml 2>err.txt || fail "tusk-emulate split.xml"
cat part-0.adf part-1.adf >psa.adf
crystals=$(count psa.adf data:psa)
truths=$(count psa.adf data:truth)
[ "$crystals" -gt 300 ] || fail "the PSA made only $crystals data:psa frames"
[ "$truths" -gt 200 ] || fail "the simulation made only $truths data:truth frames"
[ "$(count part-0.adf data:psa)" -gt 0 ] || fail "part-0.adf is empty"
[ "$(count part-1.adf data:psa)" -gt 0 ] || fail "part-1.adf is empty"
signatures psa.adf data:psa >psa-sigs.txt
signatures psa.adf data:truth >truth-sigs.txt
[ "$(wc -l <psa-sigs.txt)" -eq "$crystals" ] || fail "signatures: $(wc -l <psa-sigs.txt) lines for $crystals frames"

step "tusk-emulate config/eb-demo.xml: every data:psa once, in composites within the window, in order"
demo 262144 1000000 >demo.xml
"$b/tusk-emulate" -q demo.xml 2>err.txt || fail "tusk-emulate eb-demo.xml"
mv events.adf ref.adf
everything_once ref.adf "eb-demo"
check_events ref.adf 10 1 >out.txt
[ ! -s out.txt ] || fail "eb-demo: malformed events"
events=$(count ref.adf event:data:psa)
[ "$(count ref.adf data:psa 3)" = "$crystals" ] || fail "eb-demo: not every data:psa is in a composite"
[ "$(count ref.adf data:truth)" = "$truths" ] || fail "eb-demo: data:truth frames missing"
[ "$events" -gt 200 ] || fail "eb-demo: only $events events"
[ "$events" -le "$crystals" ] || fail "eb-demo: $events events for $crystals crystals"
grep -q "event_builder eb\[0\]: $((crystals + truths)) frames in .* $events events, 0 frames outside events, 0 late, 0 forced, .* $((crystals + truths)) frames out" err.txt ||
    fail "eb-demo: the summary does not add up"

step "a 1 KiB output buffer (more output from process_block and at flush): the same bytes"
demo 1024 1000000 >small.xml
"$b/tusk-emulate" -q small.xml 2>err.txt || fail "tusk-emulate (1 KiB)"
cmp ref.adf events.adf >out.txt || fail "a small output buffer changed the events"

step "tusk-run: the same chain as processes, reorder beyond the run: the same bytes"
demo 262144 $BIG >dist.xml
run_dist dist.xml
cmp ref.adf events.adf >out.txt || fail "tusk-run's events differ from the emulator's"
grep -q " 0 late, 0 forced" eb.log || fail "tusk-run: late or forced frames: $(cat eb.log)"
step "  $(sed -n 's/.*\(reorder depth [0-9]* ticks\).*/\1/p' eb.log) seen under tusk-run"

step "fan-in, two file producers -> one builder (4 KiB output): the same bytes, emulated and distributed"
fanin 4096 $BIG >fanin.xml
"$b/tusk-emulate" -q fanin.xml 2>err.txt || fail "tusk-emulate fanin.xml"
cmp ref.adf events.adf >out.txt || fail "fan-in: the events differ"
in0=$(sed -n 's/.*input 0: \([0-9]*\) frames.*/\1/p' err.txt)
in1=$(sed -n 's/.*input 1: \([0-9]*\) frames.*/\1/p' err.txt)
[ "$((in0 + in1))" -eq $((crystals + truths)) ] || fail "fan-in: the summary's inputs ($in0 + $in1) are not the frames in"
[ "$in0" -eq $(($(count part-0.adf data:psa) + $(count part-0.adf data:truth))) ] || fail "fan-in: input 0 is not part-0.adf"
run_dist fanin.xml
cmp ref.adf events.adf >out.txt || fail "fan-in under tusk-run: the events differ"

step "fan-in with the default reorder: the second stream comes late; counted, and nothing lost"
fanin 65536 1000000 >late.xml
"$b/tusk-emulate" -q late.xml 2>err.txt || fail "tusk-emulate late.xml"
late=$(summary err.txt late)
[ "${late:-0}" -gt 0 ] || fail "no late frames counted"
everything_once events.adf "late fan-in"
check_events events.adf 10 0 >out.txt
[ ! -s out.txt ] || fail "late fan-in: malformed events"
step "  $late frames late"

step "tusk-run with reorder = 0: whatever comes late, every frame is out once"
demo 262144 0 >zero.xml
run_dist zero.xml
everything_once events.adf "reorder 0"
check_events events.adf 10 0 >out.txt
[ ! -s out.txt ] || fail "reorder 0: malformed events"
step "  $(summary eb.log late) frames late"

step "bad settings are refused, naming the parameter"
# bad_setting FROM TO NEEDLE: eb-demo's builder parameter FROM (name">value)
# replaced by TO must stop the chain with NEEDLE in the message.
bad_setting() {
    demo 262144 1000000 | sed "s|<parameter name=\"$1<|<parameter name=\"$2<|" >bad.xml
    grep -qF "$2<" bad.xml || fail "$2: bad.xml was not made"
    status=0
    "$b/tusk-emulate" -q bad.xml 2>err.txt || status=$?
    [ "$status" -ne 0 ] || fail "$2: a bad setting was accepted"
    grep -qF "$3" err.txt || fail "$2: the message does not say '$3'"
}
bad_setting 'window">10' 'window">ten' "parameter 'window': 'ten' is not an unsigned integer"
bad_setting 'window">10' 'window">281474976710656' "window = 281474976710656: at most"
bad_setting 'reorder">1000000' 'reorder">-5' "parameter 'reorder'"
bad_setting 'reorder">1000000' 'max_held">0' "max_held = 0"
bad_setting 'reorder">1000000' 'windwo">10' "unknown parameter 'windwo'"

step "an output buffer smaller than an event: the chain stops asking for a larger <size>"
demo 150 1000000 >tiny.xml
status=0
"$b/tusk-emulate" -q tiny.xml 2>err.txt || status=$?
[ "$status" -ne 0 ] || fail "an event larger than the output buffer was accepted"
grep -q "event:data:psa of [0-9]* bytes .* cannot fit .* (raise the actor's <size>)" err.txt || fail "no word of the size"

step "a data:psa that does not decode: the chain stops naming input and offset"
# A good frame (from the PSA's output), then a data:psa of 5 payload bytes.
"$b/tusk-adf" dump part-0.adf | awk 'NR == 2 {print $3}' >len.txt
head -c "$(cat len.txt)" part-0.adf >bad.adf
printf '\031\000\000\000\002\001\001\372\000\000\000\000\100\000\000\000\000\000\000\000abcde' >>bad.adf
cat >badin.xml <<XML
<configuration>
  <producer><name>left</name><binary_code>file_producer</binary_code><parameter name="file">bad.adf</parameter></producer>
  <intermediary><name>eb</name><binary_code>event_builder</binary_code><data_source>left</data_source></intermediary>
  <consumer><name>writer</name><binary_code>file_writer</binary_code><data_source>eb</data_source>
    <parameter name="file">events.adf</parameter></consumer>
</configuration>
XML
status=0
"$b/tusk-emulate" -q badin.xml 2>err.txt || status=$?
[ "$status" -ne 0 ] || fail "a bad data:psa was accepted"
grep -q "input 0, offset $(cat len.txt): data:psa frame does not decode" err.txt || fail "the message does not name input and offset"
echo "event_builder_cli: all steps passed"
