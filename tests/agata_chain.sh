#!/bin/sh
# agata_chain.sh - the main job, config/agata-demo.xml (gamma_sim ->
# psa x2 -> event_builder -> tracking -> spectra), on a small run:
#
#  - the emulator runs it to the end; the spectra's counts match the
#    simulation (singles = every crystal read out, addback events = every
#    event, emitted gammas = 2 per decay), the 60Co lines come out at their
#    energies with the simulated resolution, and tracking gives fewer
#    counts than add-back in the Compton continuum for the photopeak
#    counts it keeps (P/T up);
#  - the ideal tracker (points = truth) finds at least as many 1332 keV
#    gammas as the one fed by PSA;
#  - tusk-run (one process per instance) gives the same spectra, byte for
#    byte (nothing late: the builder's reorder window covers the run);
#  - the OpenCL tracking backend (PoCL, when present) gives the same
#    tracked spectrum up to the near-ties tracking/README.md documents.
set -eu
b=${abs_top_builddir:?run through make check}
s=${abs_top_srcdir:?run through make check}
TUSK_ACTOR_PATH=${TUSK_ACTOR_PATH:-$b/actors/.libs}
export TUSK_ACTOR_PATH
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tusk-agata-chain.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
TMPDIR=$tmp
export TMPDIR
step() { echo "agata_chain: $*"; }
fail() {
    echo "agata_chain: FAIL: $*" >&2
    for f in err.txt out.txt; do [ -f "$f" ] && sed 's/^/    | /' "$f" >&2; done
    exit 1
}
# field SUMMARY SPECTRUM LINE COLUMN: one value of a summary.csv
field() {
    awk -F, -v sp="$2" -v l="$3" -v c="$4" '
        NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
        $1 == sp && $2 + 0 == l + 0 { print $(col[c]); exit }' "$1"
}
# chain NAME EXTRA-SED: the demo topology with this test's paths and size
decays=6000
chain() {
    sed -e "s|config/sim-co60.conf|$s/config/sim-co60.conf|" \
        -e "s|<parameter name=\"events\">[0-9]*</parameter>|<parameter name=\"events\">$decays</parameter><parameter name=\"basis\">$tmp/basis.tbs</parameter>|" \
        -e "s|config/crystal-coarse.tbs|$tmp/basis.tbs|" \
        -e "s|config/array-demonstrator.conf|$s/config/array-demonstrator.conf|" \
        -e "s|<parameter name=\"out\">spectra</parameter>|<parameter name=\"out\">$tmp/$1</parameter>|" \
        -e "$2" "$s/config/agata-demo.xml"
}

step "a coarse basis and the simulation's own counts"
"$b/tusk-basis" gen -c "$s/config/crystal-coarse.conf" --field-grid 3 --grid 8 --int16 -q -o basis.tbs >/dev/null ||
    fail "tusk-basis gen"
"$b/tusk-sim" run "$s/config/sim-co60.conf" --set "basis=$tmp/basis.tbs" --events $decays -q -o sim.adf ||
    fail "tusk-sim"
stats() { "$b/tusk-adf" stats "$1" | awk -v t="$2" '$1 == t {print $2}'; }
crystals=$(stats sim.adf data:crystal)
events=$(stats sim.adf data:truth)
[ "$crystals" -gt 500 ] || fail "the simulation made only $crystals crystals"

step "tusk-emulate: sim -> psa x2 -> builder -> tracker -> spectra"
chain emu "s|x|x|" >emu.xml
"$b/tusk-emulate" -q emu.xml >out.txt 2>err.txt || fail "tusk-emulate agata-demo.xml"
sum=emu/summary.csv
[ -f "$sum" ] || fail "no summary.csv"
for f in core.csv singles.csv addback.csv tracked.csv; do
    [ -s "emu/$f" ] || fail "no $f"
done
# Every crystal reaches the spectra as a data:psa inside one composite per
# event, every event's truth and tracking result too.
grep -q "spectra: .* $crystals data:psa (standalone or in $events event:data:psa composites), $events data:tracked .* $events data:truth" \
    out.txt err.txt || fail "the spectra did not get $crystals data:psa in $events events"
grep -q "$events events for addback" out.txt err.txt || fail "add-back did not see $events events"
# singles counts the crystals at or above its 10 keV threshold.
singles=$(field $sum singles 1332.5 total_counts)
[ "$singles" -le "$crystals" ] && [ "$singles" -ge $((crystals * 99 / 100)) ] ||
    fail "singles holds $singles counts for $crystals crystals"
emitted=$(field $sum tracked 1332.5 emitted)
[ "${emitted%.*}" -ge $((decays - 20)) ] && [ "${emitted%.*}" -le $decays ] ||
    fail "emitted 1332.5 keV gammas: $emitted for $decays decays"
# Peak positions within 0.5 keV, FWHM near the simulated 2 keV at 1332.5.
awk -F, 'NR > 1 && ($1 == "singles" || $1 == "addback" || $1 == "tracked") {
    d = $3 - $2; if (d < 0) d = -d
    if (d > 0.5) { print "position " $1 " " $2 ": " $3; bad = 1 }
    if ($2 == 1332.5 && ($4 < 1.5 || $4 > 2.6)) { print "FWHM " $1 ": " $4; bad = 1 } }
    END { exit bad }' "$sum" >out.txt || fail "peaks out of place"
# Tracking keeps most photopeak gammas and rejects Compton-scattered ones.
awk -F, -v want_eff=0.5 'NR > 1 && $2 == 1332.5 { eff[$1] = $7; pt[$1] = $8 }
    END {
        printf "addback eff %.4f P/T %.3f; tracked eff %.4f P/T %.3f\n", eff["addback"], pt["addback"], eff["tracked"], pt["tracked"]
        if (eff["tracked"] < want_eff * eff["addback"]) exit 1
        if (pt["tracked"] <= pt["singles"]) exit 1
    }' "$sum" >out.txt || fail "tracking lost too many photopeak gammas or did not improve P/T"
cat out.txt

step "the ideal tracker (truth points) finds at least as many 1332.5 keV gammas"
chain ideal 's|<parameter name="points">psa</parameter>|<parameter name="points">truth</parameter>|' >ideal.xml
"$b/tusk-emulate" -q ideal.xml >out.txt 2>err.txt || fail "tusk-emulate (ideal)"
ideal=$(field ideal/summary.csv tracked 1332.5 area)
real=$(field $sum tracked 1332.5 area)
echo "agata_chain: tracked 1332.5 keV area: $real with PSA points, $ideal ideal"
awk -v a="$real" -v i="$ideal" 'BEGIN { exit !(i >= 0.95 * a) }' || fail "ideal $ideal < PSA-fed $real"

step "tusk-run: the same spectra from processes"
chain dist "s|x|x|" >dist.xml
timeout 300 "$b/tusk-run" --no-live --actor-bin "$b/tusk-actor" -q dist.xml >out.txt 2>err.txt || fail "tusk-run"
for f in summary.csv core.csv singles.csv addback.csv tracked.csv; do
    cmp "emu/$f" "dist/$f" >out.txt 2>&1 || fail "tusk-run's $f differs from the emulator's"
done

if "$b/tusk-cl" which cpu >/dev/null 2>&1; then
    step "the opencl tracking backend on PoCL: the same tracked spectrum"
    chain cl 's|<parameter name="backend">reference</parameter>|<parameter name="backend">opencl</parameter><parameter name="device">cpu</parameter>|' >cl.xml
    "$b/tusk-emulate" -q cl.xml >out.txt 2>err.txt || fail "tusk-emulate (opencl tracking)"
    # Energies of accepted gammas do not depend on near-ties: the tracked
    # spectrum must be identical.
    cmp emu/tracked.csv cl/tracked.csv >out.txt 2>&1 || fail "OpenCL tracking gives another tracked spectrum"
else
    echo "agata_chain: no OpenCL CPU device: the opencl step is skipped"
fi
echo "agata_chain: all steps passed"
