#!/bin/sh
# zfinder_chain.sh - the z-finder's chain, config/zfinder-demo.xml
# (zfinder_sim -> zfinder x2 -> zfinder_qa), on a small run:
#
#  - the emulator runs it to the end: every RoI reaches the analysis with
#    its vertex and truth, the vertices agree with the double reference
#    (float rounding) and most lie within 1 mm of the truth (highlum,
#    triplets), the histogram picture is drawn when gnuplot is there;
#  - tusk-run (one process per instance, the two z-finders racing) gives
#    the same files, byte for byte;
#  - one stage offline (tusk-emulate --only zfinder) with the reference,
#    fast and (PoCL, when present) opencl backends, float and double:
#    the same files byte for byte but for the backend byte of each
#    data:zvertex frame (z0 too: zHisto is summed in fixed point);
#  - an analysis whose settings differ from the z-finder's stops the chain
#    with a message.
set -eu
b=${abs_top_builddir:?run through make check}
s=${abs_top_srcdir:?run through make check}
TUSK_ACTOR_PATH=${TUSK_ACTOR_PATH:-$b/actors/.libs}
export TUSK_ACTOR_PATH
TUSK_CL_CACHE=off # no program binaries in the user's cache
export TUSK_CL_CACHE
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tusk-zfinder-chain.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
TMPDIR=$tmp
export TMPDIR
step() { echo "zfinder_chain: $*"; }
fail() {
    echo "zfinder_chain: FAIL: $*" >&2
    for f in err.txt out.txt; do [ -f "$f" ] && sed 's/^/    | /' "$f" >&2; done
    exit 1
}
rois=12
# chain NAME EXTRA-SED: the demo topology with this test's size and folder
chain() {
    sed -e "s|<parameter name=\"rois\">[0-9]*</parameter>|<parameter name=\"rois\">$rois</parameter>|" \
        -e "s|<parameter name=\"out\">zfinder-qa</parameter>|<parameter name=\"out\">$tmp/$1</parameter>|" \
        -e "$2" "$s/config/zfinder-demo.xml"
}
plot=yes
command -v "${TUSK_GNUPLOT:-gnuplot}" >/dev/null 2>&1 || plot=no

step "tusk-emulate: roi -> zfinder x2 -> qa (highlum, triplets, $rois RoIs)"
chain emu "s|<parameter name=\"plot_roi\">0</parameter>|<parameter name=\"plot_roi\">0</parameter><parameter name=\"plot\">$plot</parameter>|" >emu.xml
"$b/tusk-emulate" -q emu.xml >out.txt 2>err.txt || fail "tusk-emulate zfinder-demo.xml"
[ -s emu/summary.csv ] && [ -s emu/rois.csv ] || fail "no summary.csv or rois.csv"
[ "$(wc -l <emu/rois.csv)" -eq $((rois + 1)) ] || fail "rois.csv has not one line per RoI"
grep -q "zfinder_sim roi\[0\]: $rois RoIs (preset highlum" err.txt || fail "the producer did not make $rois RoIs"
grep -q "highlum *triplets *fast float *$rois *$rois " out.txt || fail "the table does not show $rois RoIs with a vertex"
# rois.csv: sample,roi,mode,precision,backend,vertices,z0_mm,z_true_mm,z_ref_mm
awk -F, 'NR > 1 {
        d = $7 - $9; if (d < 0) d = -d; if (d > 0.01) { print "RoI " $2 ": z0 " $7 " reference " $9; bad = 1 }
        t = $7 - $8; if (t < 0) t = -t; if (t < 1) near++ }
    END { if (near < 9) { print near " RoIs within 1 mm"; bad = 1 } exit bad }' emu/rois.csv >out.txt ||
    fail "vertices off the reference, or too few within 1 mm of the truth"
if [ $plot = yes ]; then
    [ -s emu/histograms-roi0.png ] || fail "no histogram picture"
fi

step "tusk-run: the same files from processes"
chain dist "s|<parameter name=\"plot_roi\">0</parameter>|<parameter name=\"plot_roi\">0</parameter><parameter name=\"plot\">no</parameter>|" >dist.xml
timeout 300 "$b/tusk-run" --no-live --actor-bin "$b/tusk-actor" -q dist.xml >out.txt 2>err.txt || fail "tusk-run"
for f in summary.csv rois.csv; do
    cmp "emu/$f" "dist/$f" >out.txt 2>&1 || fail "tusk-run's $f differs from the emulator's"
done

step "one stage offline: reference, fast, opencl; float and double"
"$b/tusk-zfinder" sim --preset lowlum --rois 40 --seed 7 -q -o low.adf || fail "tusk-zfinder sim"
"$b/tusk-zfinder" sim --preset highlum --rois 3 --seed 7 -q -o high.adf || fail "tusk-zfinder sim"
# stage SAMPLE BACKEND PRECISION EXTRA-SED: the zfinder stage on SAMPLE.adf
stage() {
    sed -e "s|<parameter name=\"backend\">fast</parameter>|<parameter name=\"backend\">$2</parameter><parameter name=\"precision\">$3</parameter>$4|" \
        "$s/config/zfinder-demo.xml" >stage.xml
    "$b/tusk-emulate" -q --only zfinder --input "$1.adf" --output "$1-$2-$3.adf" stage.xml >out.txt 2>err.txt ||
        fail "the zfinder stage ($2, $3) on $1"
    # the vertices without z0 and the backend
    "$b/tusk-adf" dump -v "$1-$2-$3.adf" | awk '
        $2 == "data:zvertex" { getline h; sub(/backend [a-z]+, /, "", h); print h; next }
        /vertex [01]: z0/ { print }
        $2 == "data:id_truth" || $2 == "data:id_spacepoints" { print $2, $3, $4 }' >"$1-$2-$3.txt"
}
# bitwise SAMPLE PRECISION BACKEND: its file and the reference's differ in
# one byte a data:zvertex frame, the backend's code, and nowhere else
bitwise() {
    n=$("$b/tusk-adf" dump "$1-reference-$2.adf" | grep -c "data:zvertex")
    d=$(cmp -l "$1-reference-$2.adf" "$1-$3-$2.adf" 2>&1 | wc -l)
    [ "$n" -gt 0 ] && [ "$d" -eq "$n" ] || fail "$1, $2: $3's file differs from the reference's in $d bytes, not the $n backend bytes"
}
cl=no
"$b/tusk-cl" which cpu >/dev/null 2>&1 && cl=yes
for sample in low high; do
    for prec in float double; do
        stage $sample reference $prec ""
        stage $sample fast $prec ""
        cmp "$sample-reference-$prec.txt" "$sample-fast-$prec.txt" >out.txt 2>&1 ||
            fail "$sample, $prec: fast gives other vertices than the reference"
        bitwise $sample $prec fast
        if [ $cl = yes ]; then
            stage $sample opencl $prec "<parameter name=\"device\">cpu</parameter><parameter name=\"chunk\">7</parameter>"
            cmp "$sample-reference-$prec.txt" "$sample-opencl-$prec.txt" >out.txt 2>&1 ||
                fail "$sample, $prec: opencl gives other vertices than the reference"
            bitwise $sample $prec opencl
        fi
    done
done
[ $cl = yes ] || echo "zfinder_chain: no OpenCL CPU device: the opencl stage was skipped"
"$b/tusk-zfinder" qa --set mode=triplets lowlum=low-reference-double.adf >out.txt 2>err.txt ||
    fail "tusk-zfinder qa on the stage's output"
grep -q "lowlum *triplets *reference double *40 " out.txt || fail "the table has no lowlum row of 40 RoIs"

step "settings of the analysis other than the z-finder's: refused"
chain bad "s|<parameter name=\"label\">highlum</parameter>|<parameter name=\"label\">highlum</parameter><parameter name=\"bin_mm\">2</parameter>|" >bad.xml
if "$b/tusk-emulate" -q bad.xml >out.txt 2>err.txt; then
    fail "the chain ran although the analysis has other settings"
fi
grep -q "other settings than this analysis" out.txt err.txt || fail "no message about the settings"
echo "zfinder_chain: all steps passed"
