#!/bin/sh
# emulate_memcheck.sh - the example chains under valgrind (memcheck, full
# leak check), with no error: tusk-emulate on config/passthrough.xml (its
# output equals its input), on config/fault.xml (the error path) and on
# config/sim-demo.xml (the simulation producer), tusk-psa run on its
# output (the PSA), tusk-emulate on config/agata-demo.xml (the main job:
# event builder, tracking and spectra too), and a distributed run of
# config/passthrough.xml with tusk-run and every tusk-actor under valgrind.
# Skipped, visibly, when valgrind is missing.
set -eu
if [ -z "${VALGRIND:-}" ]; then
    echo "emulate_memcheck: SKIP: valgrind not found (Debian: apt-get install valgrind)"
    exit 77
fi
if [ "${SANITIZERS:-no}" = yes ]; then
    echo "emulate_memcheck: SKIP: a sanitizer build (ASan/UBSan check it instead; valgrind cannot run it)"
    exit 77
fi
b=${abs_top_builddir:?}
s=${abs_top_srcdir:?}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tusk-memcheck.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
fail() { echo "emulate_memcheck: FAIL: $*" >&2; exit 1; }

"$b/tusk-adf" gen -n 300 --seed 3 -o input.adf 2>/dev/null
# Libraries stay loaded so valgrind can name their functions.
TUSK_NO_DLCLOSE=1
export TUSK_NO_DLCLOSE
vg() {
    "$b/libtool" --mode=execute "$VALGRIND" -q --leak-check=full --show-leak-kinds=definite,indirect \
        --errors-for-leak-kinds=definite,indirect --error-exitcode=99 "$@"
}

echo "emulate_memcheck: valgrind tusk-emulate config/passthrough.xml"
vg "$b/tusk-emulate" "$s/config/passthrough.xml" || fail "valgrind or the chain failed (status $?)"
cmp input.adf output.adf || fail "output.adf differs from input.adf"

echo "emulate_memcheck: valgrind tusk-emulate config/fault.xml (the actor fails on purpose)"
status=0
vg "$b/tusk-emulate" -q "$s/config/fault.xml" 2>fault.err || status=$?
[ "$status" -eq 1 ] || { cat fault.err >&2; fail "expected exit status 1 from the failing chain, got $status"; }
grep -q "fault injected" fault.err || { cat fault.err >&2; fail "the actor's message is missing"; }
echo "emulate_memcheck: valgrind tusk-emulate config/sim-demo.xml (gamma_sim, multiplicity 30, 150 decays)"
# The basis is made natively (a minute under valgrind); the chain's output
# must equal tusk-sim's for the same seed.
"$b/tusk-basis" gen -c "$s/config/crystal-coarse.conf" --field-grid 3 --grid 8 --int16 -q -o basis.tbs >/dev/null
sed -e "s|config/sim-co60.conf|$s/config/sim-m30.conf|" \
    -e "s|<parameter name=\"events\">20000</parameter>|<parameter name=\"events\">150</parameter><parameter name=\"basis\">$tmp/basis.tbs</parameter>|" \
    -e "s|sim.adf|$tmp/sim.adf|" "$s/config/sim-demo.xml" >sim.xml
vg "$b/tusk-emulate" -q sim.xml 2>sim.err || { cat sim.err >&2; fail "valgrind or the simulation chain failed"; }
"$b/tusk-sim" run "$s/config/sim-m30.conf" --set "basis=$tmp/basis.tbs" --events 150 -q -o native.adf
cmp sim.adf native.adf || fail "the simulation chain's output under valgrind differs from tusk-sim's"
echo "emulate_memcheck: valgrind tusk-psa run (PSA of those events: reference and fast backends)"
for backend in reference fast; do
    vg "$b/tusk-psa" run --basis basis.tbs --backend "$backend" --threads 2 -q -i native.adf -o "psa-$backend.adf" \
        2>psa.err || { cat psa.err >&2; fail "valgrind or tusk-psa run ($backend) failed"; }
    "$b/tusk-adf" check "psa-$backend.adf" >/dev/null || fail "tusk-psa run ($backend) wrote a bad file"
done
echo "emulate_memcheck: valgrind tusk-emulate config/agata-demo.xml (the main job: sim, psa x2, builder, tracker, spectra; 1500 decays)"
sed -e "s|>config/crystal-coarse.tbs<|>$tmp/basis.tbs<|" \
    -e "s|>config/array-demonstrator.conf<|>$s/config/array-demonstrator.conf<|" \
    -e "s|>config/sim-co60.conf<|>$s/config/sim-co60.conf<|" \
    -e "s|<parameter name=\"events\">[0-9]*</parameter>|<parameter name=\"events\">1500</parameter><parameter name=\"basis\">$tmp/basis.tbs</parameter>|" \
    -e "s|<parameter name=\"out\">spectra</parameter>|<parameter name=\"out\">$tmp/spectra</parameter><parameter name=\"plot\">no</parameter>|" \
    "$s/config/agata-demo.xml" >agata.xml
vg "$b/tusk-emulate" -q agata.xml >agata.err 2>&1 || { cat agata.err >&2; fail "valgrind or the main chain failed"; }
[ -s spectra/summary.csv ] || fail "the main chain under valgrind wrote no summary.csv"
echo "emulate_memcheck: valgrind tusk-emulate config/zfinder-demo.xml (zfinder_sim, zfinder x2 (fast), zfinder_qa; 6 lowlum RoIs)"
sed -e 's|<parameter name="preset">highlum</parameter>|<parameter name="preset">lowlum</parameter>|' \
    -e 's|<parameter name="rois">[0-9]*</parameter>|<parameter name="rois">6</parameter>|' \
    -e "s|<parameter name=\"out\">zfinder-qa</parameter>|<parameter name=\"out\">$tmp/zfinder-qa</parameter><parameter name=\"plot\">no</parameter>|" \
    "$s/config/zfinder-demo.xml" >zfinder.xml
vg "$b/tusk-emulate" -q zfinder.xml >zfinder.err 2>&1 || { cat zfinder.err >&2; fail "valgrind or the z-finder chain failed"; }
[ "$(wc -l <zfinder-qa/rois.csv)" -eq 7 ] || fail "the z-finder chain under valgrind did not analyse 6 RoIs"
echo "emulate_memcheck: valgrind tusk-zfinder sim (one highlum RoI of 20 degrees)"
vg "$b/tusk-zfinder" sim --preset highlum --rois 1 --set roi_deg=20 -q -o zf.adf || fail "valgrind or tusk-zfinder sim"
echo "emulate_memcheck: valgrind tusk-emulate config/sts-demo.xml (sts_sim, sts_hitfinder x2 (fast), sts_qa; a small detector, 2 timeslices over many buffers)"
sed -e 's|<parameter name="collisions">[0-9]*</parameter>|<parameter name="collisions">2</parameter><parameter name="stations_mm">300 400</parameter><parameter name="theta_max_deg">8</parameter>|' \
    -e 's|<size>4194304</size>|<size>65536</size>|' \
    -e "s|<parameter name=\"out\">sts-qa</parameter>|<parameter name=\"out\">$tmp/sts-qa</parameter><parameter name=\"plot\">no</parameter>|" \
    "$s/config/sts-demo.xml" >sts.xml
vg "$b/tusk-emulate" -q sts.xml >sts.err 2>&1 || { cat sts.err >&2; fail "valgrind or the STS chain failed"; }
[ "$(wc -l <sts-qa/stations.csv)" -eq 4 ] || fail "the STS chain under valgrind did not analyse 2 stations"
echo "emulate_memcheck: valgrind tusk-sts sim and qa (the reference backend's stage on a small detector)"
vg "$b/tusk-sts" sim --collisions 2 --set stations_mm=300 --set theta_max_deg=8 -q -o sts.adf || fail "valgrind or tusk-sts sim"
sed -e 's|<parameter name="backend">fast</parameter>|<parameter name="backend">reference</parameter>|' "$s/config/sts-demo.xml" \
    >sts-ref.xml
vg "$b/tusk-emulate" -q --only hitfinder --input sts.adf --output sts-ref.adf sts-ref.xml >sts.err 2>&1 ||
    { cat sts.err >&2; fail "valgrind or the reference stage failed"; }
vg "$b/tusk-sts" qa sts-ref.adf >sts.err 2>&1 || { cat sts.err >&2; fail "valgrind or tusk-sts qa"; }
echo "emulate_memcheck: valgrind tusk-emulate config/ut-demo.xml (ut_sim, ut_compass x2 (fast), ut_qa; 6 events over several buffers)"
sed -e 's|<parameter name="events">[0-9]*</parameter>|<parameter name="events">6</parameter>|' \
    -e 's|<size>1048576</size>|<size>40000</size>|' \
    -e "s|<parameter name=\"out\">ut-qa</parameter>|<parameter name=\"out\">$tmp/ut-qa</parameter><parameter name=\"plot\">no</parameter>|" \
    "$s/config/ut-demo.xml" >ut.xml
vg "$b/tusk-emulate" -q ut.xml >ut.err 2>&1 || { cat ut.err >&2; fail "valgrind or the UT chain failed"; }
awk -F, 'NR == 2 { exit $5 != 6 }' ut-qa/summary.csv || fail "the UT chain under valgrind did not analyse 6 events"
echo "emulate_memcheck: valgrind tusk-ut sim and qa (the reference backend's stage, the decoded hits written)"
vg "$b/tusk-ut" sim --events 3 -q -o ut.adf || fail "valgrind or tusk-ut sim"
sed -e 's|<parameter name="backend">fast</parameter>|<parameter name="backend">reference</parameter><parameter name="hits">yes</parameter>|' \
    "$s/config/ut-demo.xml" >ut-ref.xml
vg "$b/tusk-emulate" -q --only tracker --input ut.adf --output ut-ref.adf ut-ref.xml >ut.err 2>&1 ||
    { cat ut.err >&2; fail "valgrind or the UT reference stage failed"; }
vg "$b/tusk-ut" qa ut-ref.adf >ut.err 2>&1 || { cat ut.err >&2; fail "valgrind or tusk-ut qa"; }
echo "emulate_memcheck: valgrind tusk-emulate config/tpc-demo.xml (tpc_sim, tpc_ca x2 (fast), tpc_qa; 2 small events over many buffers)"
sed -e 's|<parameter name="preset">noncentral</parameter>|<parameter name="preset">pp</parameter><parameter name="tracks">40</parameter>|' \
    -e 's|<size>1048576</size>|<size>32768</size>|' -e 's|<size>4194304</size>|<size>131072</size>|' \
    -e "s|<parameter name=\"out\">tpc-qa</parameter>|<parameter name=\"out\">$tmp/tpc-qa</parameter><parameter name=\"plot\">no</parameter>|" \
    "$s/config/tpc-demo.xml" >tpc.xml
vg "$b/tusk-emulate" -q tpc.xml >tpc.err 2>&1 || { cat tpc.err >&2; fail "valgrind or the TPC chain failed"; }
awk -F, 'NR == 2 { exit $4 != 72 }' tpc-qa/summary.csv || fail "the TPC chain under valgrind did not analyse 72 slices"
echo "emulate_memcheck: valgrind tusk-tpc sim, qa and diff (the reference backend's stage)"
vg "$b/tusk-tpc" sim --tracks 40 -q -o tpc.adf || fail "valgrind or tusk-tpc sim"
sed -e 's|<parameter name="backend">fast</parameter>|<parameter name="backend">reference</parameter>|' \
    "$s/config/tpc-demo.xml" >tpc-ref.xml
vg "$b/tusk-emulate" -q --only tracker --input tpc.adf --output tpc-ref.adf tpc-ref.xml >tpc.err 2>&1 ||
    { cat tpc.err >&2; fail "valgrind or the TPC reference stage failed"; }
vg "$b/tusk-tpc" qa tpc-ref.adf >tpc.err 2>&1 || { cat tpc.err >&2; fail "valgrind or tusk-tpc qa"; }
vg "$b/tusk-tpc" diff tpc-ref.adf tpc-ref.adf >tpc.err 2>&1 || { cat tpc.err >&2; fail "valgrind or tusk-tpc diff"; }
echo "emulate_memcheck: valgrind tusk-run + tusk-actor (each instance) on config/passthrough.xml"
mkdir vglogs
cat >vg-actor.sh <<WRAPPER
#!/bin/sh
exec "$b/libtool" --mode=execute "$VALGRIND" -q --leak-check=full --show-leak-kinds=definite,indirect \\
    --errors-for-leak-kinds=definite,indirect --error-exitcode=99 --log-file="$tmp/vglogs/actor.%p.log" \\
    "$b/tusk-actor" "\$@"
WRAPPER
chmod +x vg-actor.sh
rm -f output.adf
TUSK_ACTOR_PATH=${TUSK_ACTOR_PATH:-$b/actors/.libs}
export TUSK_ACTOR_PATH
# Generous timeouts: everything runs many times slower under valgrind.
vg "$b/tusk-run" --no-live -q --actor-bin "$tmp/vg-actor.sh" --start-timeout-ms 120000 --timeout-ms 60000 --orphan-ms 120000 \
    "$s/config/passthrough.xml" 2>run.err || { cat run.err >&2; fail "valgrind or the distributed run failed"; }
"$b/tusk-adf" diff --unordered input.adf output.adf >/dev/null || fail "the distributed run's output differs from its input"
for log in vglogs/*.log; do
    [ -s "$log" ] || continue
    cat "$log" >&2
    fail "valgrind found errors in a tusk-actor ($log)"
done
n=$(find vglogs -name 'actor.*.log' | wc -l)
[ "$n" -ge 4 ] || fail "expected a valgrind log of each of the 4 instances, found $n"
echo "emulate_memcheck: PASS"
