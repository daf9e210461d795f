#!/bin/sh
# psa_chain.sh - config/psa-demo.xml (gamma_sim -> psa x2 -> file_writer)
# run by tusk-emulate and by tusk-run: every data:crystal the simulation
# makes becomes one data:psa frame, data:truth frames pass through, both
# runs give the same frames, and the psa actor's backends (reference,
# fast, opencl on PoCL when present) give the same output.
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
# the hits may differ.
hits() {
    "$b/tusk-adf" dump -v "$1" | sed -n 's/.*hit [0-9]*: seg \([0-9]*\) crys \([0-9]*\) \(([^)]*)\).*/\1 \2 \3/p'
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

step "the reference backend, in batches of 7 crystals, gives the same frames"
chain reference '<parameter name="batch">7</parameter>' >ref.xml
"$b/tusk-emulate" -q ref.xml 2>err.txt || fail "tusk-emulate (reference)"
same_hits out-fast.adf out-reference.adf "reference against fast"

if "$b/tusk-cl" which cpu >/dev/null 2>&1; then
    step "the opencl backend on the CPU device gives the same frames"
    chain opencl '<parameter name="device">cpu</parameter>' >cl.xml
    "$b/tusk-emulate" -q cl.xml 2>err.txt || fail "tusk-emulate (opencl)"
    same_hits out-fast.adf out-opencl.adf "opencl against fast"
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
echo "psa_chain: all steps passed"
