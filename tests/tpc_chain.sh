#!/bin/sh
# tpc_chain.sh - the TPC slice tracker's chain, config/tpc-demo.xml
# (tpc_sim -> tpc_ca x2 -> tpc_qa), on a small run:
#
#  - the emulator runs it to the end with small buffers (each event over
#    many of them): every slice reaches the analysis with its truth and
#    tracks, the Table 9.1 table has its rows, the picture is drawn when
#    gnuplot is there;
#  - tusk-run (one process per instance, the two trackers racing) gives
#    the same files, byte for byte;
#  - one stage offline (tusk-emulate --only tracker) with the reference,
#    fast and (PoCL, when present) opencl backends: the same files byte
#    for byte but for the backend byte of each data:tpc_tracks frame;
#  - an analysis whose settings differ from the tracker's stops the chain
#    with a message.
set -eu
b=${abs_top_builddir:?run through make check}
s=${abs_top_srcdir:?run through make check}
TUSK_ACTOR_PATH=${TUSK_ACTOR_PATH:-$b/actors/.libs}
export TUSK_ACTOR_PATH
TUSK_CL_CACHE=off # no program binaries in the user's cache
export TUSK_CL_CACHE
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tusk-tpc-chain.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
TMPDIR=$tmp
export TMPDIR
step() { echo "tpc_chain: $*"; }
fail() {
    echo "tpc_chain: FAIL: $*" >&2
    for f in err.txt out.txt; do [ -f "$f" ] && sed 's/^/    | /' "$f" >&2; done
    exit 1
}
# chain NAME EXTRA-SED: the demo topology, pp events in 64 kB buffers, this test's folder
chain() {
    sed -e 's|<parameter name="preset">noncentral</parameter>|<parameter name="preset">pp</parameter>|' \
        -e 's|<size>1048576</size>|<size>65536</size>|' -e 's|<size>4194304</size>|<size>262144</size>|' \
        -e "s|<parameter name=\"out\">tpc-qa</parameter>|<parameter name=\"out\">$tmp/$1</parameter>|" \
        -e "$2" "$s/config/tpc-demo.xml"
}
plot=yes
command -v "${TUSK_GNUPLOT:-gnuplot}" >/dev/null 2>&1 || plot=no

step "tusk-emulate: sim -> tracker x2 -> qa (2 pp events over many buffers)"
chain emu "s|<parameter name=\"label\">demo</parameter>|<parameter name=\"label\">demo</parameter><parameter name=\"plot\">$plot</parameter>|" >emu.xml
"$b/tusk-emulate" -q emu.xml >out.txt 2>err.txt || fail "tusk-emulate tpc-demo.xml"
[ -s emu/summary.csv ] && [ -s emu/momentum.csv ] || fail "no summary.csv or momentum.csv"
grep -q "tpc_sim sim\[0\]: 2 events (pp) of 160 particles" err.txt || fail "the producer did not make 2 pp events"
grep -q "demo (fast): 2 events, 72 slices" out.txt || fail "the table does not show 2 events of 36 slices"
grep -q "Table 9.1: efficiency" out.txt || fail "no Table 9.1 line"
# summary.csv: sample,backend,events,slices,clusters,...,efficiency_pct (17),reference_efficiency_pct (18)
awk -F, 'NR == 2 { if ($3 != 2 || $4 != 72 || $17 < 75 || $7 < 300) { print; exit 1 } }' emu/summary.csv >out.txt ||
    fail "the analysis saw other events, slices or far fewer tracks found"
[ "$(grep -c "tpc_ca tracker" err.txt)" -eq 2 ] || fail "not two tracker instances"
if [ $plot = yes ]; then
    [ -s emu/efficiency.png ] || fail "no efficiency picture"
fi

step "tusk-run: the same files from processes"
chain dist "s|<parameter name=\"label\">demo</parameter>|<parameter name=\"label\">demo</parameter><parameter name=\"plot\">no</parameter>|" >dist.xml
timeout 300 "$b/tusk-run" --no-live --actor-bin "$b/tusk-actor" -q dist.xml >out.txt 2>err.txt || fail "tusk-run"
for f in summary.csv momentum.csv; do
    cmp "emu/$f" "dist/$f" >out.txt 2>&1 || fail "tusk-run's $f differs from the emulator's"
done

step "one stage offline: reference, fast, opencl"
"$b/tusk-tpc" sim --preset pp --events 2 --seed 7 --set noise_per_row=3 -q -o pp.adf || fail "tusk-tpc sim"
"$b/tusk-tpc" sim --tracks 600 --seed 7 -q -o mid.adf || fail "tusk-tpc sim"
# stage SAMPLE BACKEND EXTRA: the tracker stage on SAMPLE.adf
stage() {
    sed -e "s|<parameter name=\"backend\">fast</parameter>|<parameter name=\"backend\">$2</parameter>$3|" \
        -e "s|<parameter name=\"threads\">1</parameter>|<parameter name=\"threads\">3</parameter>|" \
        "$s/config/tpc-demo.xml" >stage.xml
    "$b/tusk-emulate" -q --only tracker --input "$1.adf" --output "$1-$2.adf" stage.xml >out.txt 2>err.txt ||
        fail "the tracker stage ($2) on $1"
}
# bitwise SAMPLE BACKEND: its file and the reference's differ in one byte a
# data:tpc_tracks frame, the backend's code, and nowhere else
bitwise() {
    n=$("$b/tusk-adf" dump "$1-reference.adf" | grep -c "data:tpc_tracks")
    d=$(cmp -l "$1-reference.adf" "$1-$2.adf" 2>&1 | wc -l)
    [ "$n" -gt 0 ] && [ "$d" -eq "$n" ] || fail "$1: $2's file differs from the reference's in $d bytes, not the $n backend bytes"
}
cl=no
"$b/tusk-cl" which cpu >/dev/null 2>&1 && cl=yes
for sample in pp mid; do
    stage $sample reference ""
    stage $sample fast ""
    bitwise $sample fast
    if [ $cl = yes ]; then
        stage $sample opencl "<parameter name=\"device\">cpu</parameter><parameter name=\"group_size\">64</parameter>"
        bitwise $sample opencl
    fi
done
[ $cl = yes ] || echo "tpc_chain: no OpenCL CPU device: the opencl stage was skipped"
"$b/tusk-tpc" qa mid=mid-reference.adf >out.txt 2>err.txt || fail "tusk-tpc qa on the stage's output"
grep -q "mid (reference): 1 events, 36 slices" out.txt || fail "the table has no mid row of 36 slices"
"$b/tusk-tpc" diff mid-reference.adf mid-fast.adf >out.txt 2>err.txt || fail "tusk-tpc diff: fast differs"

step "settings of the analysis other than the tracker's: refused"
chain bad "s|<parameter name=\"label\">demo</parameter>|<parameter name=\"label\">demo</parameter><parameter name=\"cluster_chi2\">9</parameter>|" >bad.xml
if "$b/tusk-emulate" -q bad.xml >out.txt 2>err.txt; then
    fail "the chain ran although the analysis has other settings"
fi
grep -q "other settings than this analysis" out.txt err.txt || fail "no message about the settings"
echo "tpc_chain: all steps passed"
