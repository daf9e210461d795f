#!/bin/sh
# sts_chain.sh - the STS chain, config/sts-demo.xml (sts_sim ->
# sts_hitfinder x2 -> sts_qa), on a small run:
#
#  - the emulator runs it to the end with producer buffers of 256 kB, so
#    that each timeslice spans many buffers: every module of both
#    timeslices reaches the analysis with its clusters, hits and truth; the
#    efficiencies and pulls are sane; the residual picture is drawn when
#    gnuplot is there;
#  - tusk-run (one process per instance, the two filters racing) gives the
#    same files, byte for byte;
#  - one stage offline (tusk-emulate --only hitfinder) with the fast and
#    (PoCL, when present) opencl backends: the same frames byte for byte
#    but for the backend byte; the reference's clusters differ from them
#    in a few (the original finder), and its file analyses;
#  - an analysis whose settings differ from the reconstruction's stops the
#    chain with a message.
set -eu
b=${abs_top_builddir:?run through make check}
s=${abs_top_srcdir:?run through make check}
TUSK_ACTOR_PATH=${TUSK_ACTOR_PATH:-$b/actors/.libs}
export TUSK_ACTOR_PATH
TUSK_CL_CACHE=off # no program binaries in the user's cache
export TUSK_CL_CACHE
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tusk-sts-chain.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
TMPDIR=$tmp
export TMPDIR
step() { echo "sts_chain: $*"; }
fail() {
    echo "sts_chain: FAIL: $*" >&2
    for f in err.txt out.txt; do [ -f "$f" ] && sed 's/^/    | /' "$f" >&2; done
    exit 1
}
collisions=10
# chain NAME EXTRA-SED: the demo topology with this test's size and folder
chain() {
    sed -e "s|<parameter name=\"collisions\">[0-9]*</parameter>|<parameter name=\"collisions\">$collisions</parameter>|" \
        -e "s|<size>4194304</size>|<size>262144</size>|" \
        -e "s|<parameter name=\"out\">sts-qa</parameter>|<parameter name=\"out\">$tmp/$1</parameter>|" \
        -e "$2" "$s/config/sts-demo.xml"
}
plot=yes
command -v "${TUSK_GNUPLOT:-gnuplot}" >/dev/null 2>&1 || plot=no

step "tusk-emulate: sim -> hitfinder x2 -> qa (2 timeslices of $collisions collisions, 256 kB buffers)"
chain emu "s|<parameter name=\"label\">demo</parameter>|<parameter name=\"label\">demo</parameter><parameter name=\"plot\">$plot</parameter>|" >emu.xml
"$b/tusk-emulate" emu.xml >out.txt 2>err.txt || fail "tusk-emulate sts-demo.xml"
grep -q "sts_sim sim\[0\]: 2 timeslices of $collisions collisions, 1044 modules" err.txt || fail "the producer did not make 2 timeslices"
grep -q "demo (fast): 2 timeslices, 2088 modules" out.txt || fail "the analysis did not get every module of both timeslices"
# many buffers a timeslice: the producer's row of the summary
buffers=$(awk '$1 == "sim" { print $6 }' out.txt)
[ "${buffers:-0}" -gt 10 ] || fail "the timeslices went out in ${buffers:-?} buffers, not many"
[ -s emu/summary.csv ] && [ -s emu/stations.csv ] || fail "no summary.csv or stations.csv"
[ "$(wc -l <emu/stations.csv)" -eq 10 ] || fail "stations.csv has not a line for all and each of the 8 stations"
# stations.csv: efficiency both sides > 95 %, pulls 0.8-1.3 (all stations)
awk -F, 'NR == 2 {
        if ($11 / $3 < 0.95 || $12 / $4 < 0.95) { print "efficiency " $11 / $3 " " $12 / $4; bad = 1 }
        if ($18 < 0.8 || $18 > 1.3 || $20 < 0.8 || $20 > 1.3) { print "pulls " $18 " " $20; bad = 1 } }
    END { exit bad }' emu/stations.csv >out.txt || fail "efficiency or pulls out of range"
if [ $plot = yes ]; then
    [ -s emu/residuals.png ] || fail "no residual picture"
fi

step "tusk-run: the same files from processes"
chain dist "s|<parameter name=\"label\">demo</parameter>|<parameter name=\"label\">demo</parameter><parameter name=\"plot\">no</parameter>|" >dist.xml
timeout 300 "$b/tusk-run" --no-live --actor-bin "$b/tusk-actor" -q dist.xml >out.txt 2>err.txt || fail "tusk-run"
for f in summary.csv stations.csv; do
    cmp "emu/$f" "dist/$f" >out.txt 2>&1 || fail "tusk-run's $f differs from the emulator's"
done

step "one stage offline: reference, fast, opencl"
"$b/tusk-sts" sim --collisions 8 --seed 7 -q -o ts.adf || fail "tusk-sts sim"
# stage BACKEND EXTRA: the hitfinder stage on ts.adf
stage() {
    sed -e "s|<parameter name=\"backend\">fast</parameter>|<parameter name=\"backend\">$1</parameter>$2|" \
        "$s/config/sts-demo.xml" >stage.xml
    "$b/tusk-emulate" -q --only hitfinder --input ts.adf --output "ts-$1.adf" stage.xml >out.txt 2>err.txt ||
        fail "the hitfinder stage ($1)"
    "$b/tusk-adf" dump -v "ts-$1.adf" | sed 's/backend [a-z]*,/backend X,/' >"ts-$1.txt"
}
stage fast ""
stage reference ""
cl=no
"$b/tusk-cl" which cpu >/dev/null 2>&1 && cl=yes
if [ $cl = yes ]; then
    stage opencl "<parameter name=\"device\">cpu</parameter><parameter name=\"group_size\">64</parameter>"
    cmp ts-fast.txt ts-opencl.txt >out.txt 2>&1 || fail "opencl gives other clusters or hits than fast"
else
    echo "sts_chain: no OpenCL CPU device: the opencl stage was skipped"
fi
differ=$(diff ts-fast.txt ts-reference.txt | grep -c '^<.*cluster [0-9]*:' || true)
clusters=$(grep -c '^ *cluster [0-9]*:' ts-fast.txt)
echo "sts_chain: the reference's clusters: $differ of $clusters lines differ from fast's"
[ "$differ" -lt $((clusters / 1000 + 5)) ] || fail "the reference differs in $differ of $clusters clusters"
"$b/tusk-sts" qa ref=ts-reference.adf >out.txt 2>err.txt || fail "tusk-sts qa on the reference's output"
grep -q "ref (reference): 1 timeslices, 1044 modules" out.txt || fail "the table of the reference's file"

step "settings of the analysis other than the reconstruction's: refused"
chain bad "s|<parameter name=\"label\">demo</parameter>|<parameter name=\"label\">demo</parameter><parameter name=\"hit_time_cut\">3</parameter>|" >bad.xml
if "$b/tusk-emulate" -q bad.xml >out.txt 2>err.txt; then
    fail "the chain ran although the analysis has other settings"
fi
grep -q "other settings than this analysis" out.txt err.txt || fail "no message about the settings"
echo "sts_chain: all steps passed"
