#!/bin/sh
# psa_chain.sh - config/psa-demo.xml (gamma_sim -> psa x2 -> file_writer)
# run by tusk-emulate and by tusk-run: every data:crystal the simulation
# makes becomes one data:psa frame, data:truth frames pass through, both
# runs give the same frames (also with the opencl backend, whose actors
# hold an input while the device searches it), and the psa actor's
# backends (reference, fast, opencl on PoCL when present) give the same
# output. Nothing is dropped silently: records with NaN, infinite or
# absurd energies are rejected, described and counted (the actor and
# tusk-psa run alike); the wrong frame type fails the run naming what
# came; an empty run warns.
set -eu
b=${abs_top_builddir:?run through make check}
s=${abs_top_srcdir:?run through make check}
TUSK_ACTOR_PATH=${TUSK_ACTOR_PATH:-$b/actors/.libs}
export TUSK_ACTOR_PATH
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tusk-psa-chain.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
TMPDIR=$tmp
export TMPDIR
step() { echo "psa_chain: $*"; }
fail() {
    echo "psa_chain: FAIL: $*" >&2
    for f in err.txt out.txt; do [ -f "$f" ] && sed 's/^/    | /' "$f" >&2; done
    exit 1
}
count() { # FILE TYPE: frames of TYPE in FILE
    "$b/tusk-adf" stats "$1" | awk -v t="$2" '$1 == t {print $2}'
}
# same_hits A B WHAT: the same frames and hits (segment, crystal, position)
# in A and B, but for near-ties: backends round |d|^p differently, so two
# points whose FoMs agree to 1e-5 may swap (psa/README.md); at most 1 % of
# the hits may differ. Each hit is named by its frame (event, timestamp,
# crystal) and number, and the lists sorted by name: the two psa instances'
# outputs reach the writer in an order that depends on how many inputs
# each holds (the opencl backend's pipeline), not on the results.
hits() {
    "$b/tusk-adf" dump -v "$1" | awk '
        $2 == "data:psa" { ev = $4; ts = $5 }
        $1 == "crystal" && $3 == "status" { cr = $2 }
        $1 == "hit" && $3 == "seg" { sub(/ mm .*/, ""); sub(/^ +/, ""); print ev, ts, cr, $0 }' | sort
}
same_hits() {
    [ "$(count "$1" data:psa)" = "$(count "$2" data:psa)" ] || fail "$3: different numbers of data:psa frames"
    hits "$1" >hits-a.txt
    hits "$2" >hits-b.txt
    total=$(wc -l <hits-a.txt)
    [ "$total" -eq "$(wc -l <hits-b.txt)" ] || fail "$3: different numbers of hits"
    [ "$total" -gt 0 ] || fail "$3: no hits"
    differ=$(paste -d'|' hits-a.txt hits-b.txt | awk -F'|' '$1 != $2 {n++} END {print n + 0}')
    [ $((differ * 100)) -le "$total" ] || fail "$3: $differ of $total hits differ"
    echo "psa_chain: $3: $differ of $total hits differ (near-ties)"
}
# chain BACKEND EXTRA: the demo topology with this test's paths.
chain() {
    sed -e "s|config/sim-co60.conf|$s/config/sim-co60.conf|" \
        -e "s|<parameter name=\"events\">20000</parameter>|<parameter name=\"events\">4000</parameter><parameter name=\"basis\">$tmp/basis.tbs</parameter>|" \
        -e "s|config/crystal-coarse.tbs|$tmp/basis.tbs|" \
        -e "s|<parameter name=\"backend\">fast</parameter>|<parameter name=\"backend\">$1</parameter>$2|" \
        -e "s|psa.adf|$tmp/out-$1.adf|" "$s/config/psa-demo.xml"
}

step "a coarse basis"
"$b/tusk-basis" gen -c "$s/config/crystal-coarse.conf" --field-grid 3 --grid 8 --int16 -q -o basis.tbs >/dev/null ||
    fail "tusk-basis gen"
"$b/tusk-sim" run "$s/config/sim-co60.conf" --set "basis=$tmp/basis.tbs" --events 4000 -q -o sim.adf ||
    fail "tusk-sim"
crystals=$(count sim.adf data:crystal)
truths=$(count sim.adf data:truth)
[ "$crystals" -gt 100 ] || fail "the simulation made only $crystals crystals"

step "tusk-emulate: sim -> psa x2 (fast) -> writer"
chain fast "" >fast.xml
"$b/tusk-emulate" -q fast.xml 2>err.txt || fail "tusk-emulate psa-demo.xml"
[ "$(count out-fast.adf data:psa)" = "$crystals" ] || fail "$(count out-fast.adf data:psa) data:psa frames for $crystals crystals"
[ "$(count out-fast.adf data:truth)" = "$truths" ] || fail "data:truth frames were not passed through"
[ -z "$(count out-fast.adf data:crystal)" ] || fail "data:crystal frames in the output"
"$b/tusk-adf" check out-fast.adf >out.txt || fail "the output does not check"
grep -q "psa psa\[1\]: .* crystals" err.txt || fail "the second psa instance reports no work"
grep -Eq "psa psa\[0\]: the calling thread, us a crystal: read [0-9.]+, prepare [0-9.]+, finish [0-9.]+, write [0-9.]+, total [0-9.]+$" err.txt ||
    fail "the psa summary does not say where the calling thread's time went"

step "the reference backend, in batches of 7 crystals, gives the same frames"
chain reference '<parameter name="batch">7</parameter>' >ref.xml
"$b/tusk-emulate" -q ref.xml 2>err.txt || fail "tusk-emulate (reference)"
same_hits out-fast.adf out-reference.adf "reference against fast"

if "$b/tusk-cl" which cpu >/dev/null 2>&1; then
    step "the opencl backend on the CPU device gives the same frames"
    chain opencl '<parameter name="device">cpu</parameter>' >cl.xml
    "$b/tusk-emulate" -q cl.xml 2>err.txt || fail "tusk-emulate (opencl)"
    grep -Eq "psa psa\[0\]: the device, [1-9][0-9]* searches: us a crystal on the host packing and submitting [0-9.]+, waiting [0-9.]+; on the device uploads [0-9.]+, kernels [0-9.]+, downloads [0-9.]+$" err.txt ||
        fail "the psa summary (opencl) does not say the device's part"
    same_hits out-fast.adf out-opencl.adf "opencl against fast"
    step "tusk-run, opencl: each psa holds an input while the device searches it, flushed at the end: the same frames"
    mv out-opencl.adf emulated-cl.adf
    timeout 300 "$b/tusk-run" --no-live --actor-bin "$b/tusk-actor" -q cl.xml 2>err.txt || fail "tusk-run (opencl)"
    "$b/tusk-adf" diff --unordered emulated-cl.adf out-opencl.adf >out.txt ||
        fail "tusk-run's output (opencl) differs from the emulator's"
else
    echo "psa_chain: no OpenCL CPU device: the opencl step is skipped"
fi

step "tusk-run: the same chain as processes gives the same frames"
mv out-fast.adf emulated.adf
timeout 300 "$b/tusk-run" --no-live --actor-bin "$b/tusk-actor" -q fast.xml 2>err.txt || fail "tusk-run psa-demo.xml"
"$b/tusk-adf" diff --unordered emulated.adf out-fast.adf >out.txt || fail "tusk-run's output differs from the emulator's"

step "a missing basis stops the chain with a message naming it"
sed "s|$tmp/basis.tbs|$tmp/none.tbs|g" fast.xml >bad.xml
status=0
"$b/tusk-emulate" -q bad.xml 2>err.txt || status=$?
[ "$status" -ne 0 ] || fail "a chain without its basis ran"
grep -q "none.tbs" err.txt || fail "the message does not name the missing basis"
# file_chain IN OUT EXTRA: file_producer (IN) -> psa (EXTRA parameters) -> file_writer (OUT).
file_chain() {
    cat <<EOF
<configuration>
  <producer><name>reader</name><binary_code>file_producer</binary_code><size>262144</size>
    <parameter name="file">$1</parameter></producer>
  <intermediary><name>psa</name><binary_code>psa</binary_code><data_source>reader</data_source><size>1048576</size>
    <parameter name="basis">$tmp/basis.tbs</parameter><parameter name="threads">1</parameter>$3</intermediary>
  <consumer><name>writer</name><binary_code>file_writer</binary_code><data_source>psa</data_source>
    <parameter name="file">$2</parameter></consumer>
</configuration>
EOF
}
# put FILE OFFSET OCTAL: overwrite bytes of FILE at OFFSET (printf's octal escapes)
put() { printf "$3" | dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null; }

step "non-finite and absurd energies: those records rejected, described, counted; the rest analysed"
cp sim.adf bad.adf
# data:crystal payload: 8 header bytes, then 36 segment energies (f32, LE)
set -- $("$b/tusk-adf" dump bad.adf | awk '$2 == "data:crystal" {print $1}' | head -n 3)
put bad.adf $(($1 + 20 + 8 + 4 * 5)) '\000\000\300\177' # segment 5: NaN
put bad.adf $(($2 + 20 + 8)) '\000\000\200\177'         # segment 0: +Inf
put bad.adf $(($3 + 20 + 8 + 4 * 7)) '\346\261\141\177' # segment 7: 3e38 keV
file_chain "$tmp/bad.adf" "$tmp/bad-out.adf" '<parameter name="max_kev">50000</parameter>' >bad-energy.xml
"$b/tusk-emulate" -q bad-energy.xml 2>err.txt || fail "tusk-emulate with bad energies"
grep -q "psa psa\[0\]: WARNING: input offset $1 (event [0-9]*, crystal [0-9]*): segment 5 energy nan keV: record rejected" \
    err.txt || fail "the first rejected record is not described"
grep -q "WARNING: 3 data:crystal records REJECTED, no data:psa for them: 2 with a non-finite energy, 1 with an energy beyond max_kev = 50000 keV" \
    err.txt || fail "the rejections are not counted"
[ "$(count bad-out.adf data:psa)" = $((crystals - 3)) ] ||
    fail "$(count bad-out.adf data:psa) data:psa frames for $crystals crystals, 3 rejected"
"$b/tusk-psa" run --basis basis.tbs --set max_kev=50000 -q -i bad.adf -o bad-run.adf 2>err.txt ||
    fail "tusk-psa run with bad energies"
grep -q "3 data:crystal records REJECTED" err.txt || fail "tusk-psa run does not count the rejections"
"$b/tusk-adf" diff bad-out.adf bad-run.adf >out.txt || fail "tusk-psa run and the actor reject differently"

step "the wrong frame type (data:psa fed to psa) fails the run, naming the types that came"
file_chain "$tmp/emulated.adf" "$tmp/wrong-out.adf" "" >wrong.xml
status=0
"$b/tusk-emulate" -q wrong.xml 2>err.txt || status=$?
[ "$status" -ne 0 ] || fail "psa fed data:psa frames ended as a clean run"
grep -q "no data:crystal frame arrived, which psa analyses: .* of types .*data:psa [0-9]" err.txt ||
    fail "the message does not say which frames came and which psa takes"
status=0
"$b/tusk-psa" run --basis basis.tbs -q -i emulated.adf -o wrong-run.adf 2>err.txt || status=$?
[ "$status" -eq 1 ] || fail "tusk-psa run on data:psa frames: exit $status"
grep -q "no data:crystal frame" err.txt || fail "tusk-psa run does not say it found no data:crystal"

step "no input at all: the run ends, with a warning that says nothing was analysed"
: >empty.adf
file_chain "$tmp/empty.adf" "$tmp/empty-out.adf" "" >empty.xml
"$b/tusk-emulate" -q empty.xml 2>err.txt || fail "an empty input failed the run"
grep -q "psa psa\[0\]: WARNING: no data:crystal frame arrived (0 buffers, 0 frames)" err.txt ||
    fail "no warning for an empty run"
echo "psa_chain: all steps passed"
