#!/bin/sh
# ut_chain.sh - the UT tracking's chain, config/ut-demo.xml
# (ut_sim -> ut_compass x2 -> ut_qa), on a small run:
#
#  - the emulator runs it to the end: every event reaches the analysis
#    with its UT tracks and truth, most long tracks are found (Table 3's
#    5 sectors / 8 candidates), the picture is drawn when gnuplot is there;
#  - tusk-run (one process per instance, the two trackers racing) gives
#    the same files, byte for byte;
#  - one stage offline (tusk-emulate --only tracker) with the reference,
#    fast and (PoCL, when present) opencl backends, at 5/8 and 1/1, the
#    decoded hits written too: the same files byte for byte but for the
#    backend byte of each data:ut_tracks and data:ut_hits frame;
#  - an analysis whose settings differ from the tracker's, and a tracker
#    whose geometry differs from the producer's, stop the chain with a
#    message;
#  - config/ut-gpu.xml runs to the end (the fast backend in place of
#    opencl): its analysis has what it needs.
set -eu
b=${abs_top_builddir:?run through make check}
s=${abs_top_srcdir:?run through make check}
TUSK_ACTOR_PATH=${TUSK_ACTOR_PATH:-$b/actors/.libs}
export TUSK_ACTOR_PATH
TUSK_CL_CACHE=off # no program binaries in the user's cache
export TUSK_CL_CACHE
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tusk-ut-chain.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
TMPDIR=$tmp
export TMPDIR
step() { echo "ut_chain: $*"; }
fail() {
    echo "ut_chain: FAIL: $*" >&2
    for f in err.txt out.txt; do [ -f "$f" ] && sed 's/^/    | /' "$f" >&2; done
    exit 1
}
events=40
# chain NAME EXTRA-SED: the demo topology with this test's size and folder
chain() {
    sed -e "s|<parameter name=\"events\">[0-9]*</parameter>|<parameter name=\"events\">$events</parameter>|" \
        -e "s|<parameter name=\"out\">ut-qa</parameter>|<parameter name=\"out\">$tmp/$1</parameter>|" \
        -e "$2" "$s/config/ut-demo.xml"
}
plot=yes
command -v "${TUSK_GNUPLOT:-gnuplot}" >/dev/null 2>&1 || plot=no

step "tusk-emulate: sim -> tracker x2 -> qa ($events events)"
chain emu "s|<parameter name=\"label\">demo</parameter>|<parameter name=\"label\">demo</parameter><parameter name=\"plot\">$plot</parameter>|" >emu.xml
"$b/tusk-emulate" -q emu.xml >out.txt 2>err.txt || fail "tusk-emulate ut-demo.xml"
[ -s emu/summary.csv ] && [ -s emu/momentum.csv ] || fail "no summary.csv or momentum.csv"
grep -q "ut_sim sim\[0\]: $events events" err.txt || fail "the producer did not make $events events"
grep -q "demo: backend fast, 5 sectors, 8 candidates; $events events" out.txt || fail "the table does not show $events events"
# summary.csv: ...,events (5),...,long_reconstructible (9),long_found,long_efficiency (11),...
awk -F, 'NR == 2 { if ($5 != '"$events"' || $11 < 90) { print "events " $5 ", long efficiency " $11; exit 1 } }' \
    emu/summary.csv >out.txt || fail "not every event analysed, or too few long tracks found"
if [ $plot = yes ]; then
    [ -s emu/ut-qa.png ] || fail "no picture"
fi

step "tusk-run: the same files from processes"
chain dist "s|<parameter name=\"label\">demo</parameter>|<parameter name=\"label\">demo</parameter><parameter name=\"plot\">no</parameter>|" >dist.xml
timeout 300 "$b/tusk-run" --no-live --actor-bin "$b/tusk-actor" -q dist.xml >out.txt 2>err.txt || fail "tusk-run"
for f in summary.csv momentum.csv; do
    cmp "emu/$f" "dist/$f" >out.txt 2>&1 || fail "tusk-run's $f differs from the emulator's"
done

step "one stage offline: reference, fast, opencl; 5/8 and 1/1; the decoded hits too"
"$b/tusk-ut" sim --events 30 --seed 7 -q -o ev.adf || fail "tusk-ut sim"
# stage BACKEND CONFIG EXTRA-SED: the tracker stage on ev.adf
stage() {
    sed -e "s|<parameter name=\"backend\">fast</parameter>|<parameter name=\"backend\">$1</parameter><parameter name=\"hits\">yes</parameter>$3|" \
        "$s/config/ut-demo.xml" >stage.xml
    "$b/tusk-emulate" -q --only tracker --input ev.adf --output "out-$1-$2.adf" stage.xml >out.txt 2>err.txt ||
        fail "the tracker stage ($1, $2)"
}
# bitwise CONFIG BACKEND: its file and the reference's differ in the backend
# byte of each data:ut_tracks and data:ut_hits frame, and nowhere else
bitwise() {
    n=$("$b/tusk-adf" dump "out-reference-$1.adf" | grep -c "data:ut_tracks\|data:ut_hits")
    d=$(cmp -l "out-reference-$1.adf" "out-$2-$1.adf" 2>&1 | wc -l)
    [ "$n" -gt 0 ] && [ "$d" -eq "$n" ] ||
        fail "$1: $2's file differs from the reference's in $d bytes, not the $n backend bytes"
}
cl=no
"$b/tusk-cl" which cpu >/dev/null 2>&1 && cl=yes
for cfg in 5-8 1-1; do
    set_cfg="<parameter name=\"sectors\">${cfg%-*}</parameter><parameter name=\"candidates\">${cfg#*-}</parameter>"
    stage reference $cfg "$set_cfg"
    stage fast $cfg "$set_cfg"
    bitwise $cfg fast
    if [ $cl = yes ]; then
        stage opencl $cfg "$set_cfg<parameter name=\"device\">cpu</parameter><parameter name=\"group_size\">64</parameter>"
        bitwise $cfg opencl
    fi
done
[ $cl = yes ] || echo "ut_chain: no OpenCL CPU device: the opencl stage was skipped"
"$b/tusk-adf" check out-reference-5-8.adf >out.txt 2>&1 || fail "tusk-adf check on the stage's output"
"$b/tusk-ut" qa ev=out-reference-1-1.adf >out.txt 2>err.txt && fail "qa with the default settings took a 1/1 file"
grep -q "other settings than this analysis" err.txt || fail "no message about the settings"
"$b/tusk-ut" qa --set sectors=1 --set candidates=1 ev=out-reference-1-1.adf >out.txt 2>err.txt ||
    fail "tusk-ut qa on the stage's output"
grep -q "ev: backend reference, 1 sectors, 1 candidates; 30 events" out.txt || fail "the table has no row of 30 events"

step "settings of the analysis other than the tracker's, a geometry other than the producer's: refused"
chain bad "s|<parameter name=\"label\">demo</parameter>|<parameter name=\"label\">demo</parameter><parameter name=\"candidates\">4</parameter>|" >bad.xml
if "$b/tusk-emulate" -q bad.xml >out.txt 2>err.txt; then
    fail "the chain ran although the analysis has other settings"
fi
grep -q "other settings than this analysis" out.txt err.txt || fail "no message about the settings"
chain geo "s|<parameter name=\"threads\">1</parameter>|<parameter name=\"threads\">1</parameter><parameter name=\"rows\">12</parameter>|" >geo.xml
if "$b/tusk-emulate" -q geo.xml >out.txt 2>err.txt; then
    fail "the chain ran although the tracker has another geometry"
fi
grep -q "other geometry settings" out.txt err.txt || fail "no message about the geometry"
step "config/ut-gpu.xml (the fast backend here): its analysis gets every event"
cp ev.adf ut-minbias.adf
sed -e 's|<parameter name="backend">opencl</parameter>|<parameter name="backend">fast</parameter>|' \
    "$s/config/ut-gpu.xml" >gpu.xml
"$b/tusk-emulate" -q gpu.xml >out.txt 2>err.txt || fail "tusk-emulate ut-gpu.xml"
grep -q "minbias: backend fast, 5 sectors, 8 candidates; 30 events" out.txt || fail "ut-gpu.xml's table has no row of 30 events"
echo "ut_chain: all steps passed"
