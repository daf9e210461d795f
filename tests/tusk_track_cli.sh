#!/bin/sh
# tusk_track_cli.sh - tusk-track and the tracking actor as a user runs them:
# a simulated 60Co file (tusk-sim, with its data:truth frames) tracked with
# the truth and truth_segments points, every frame copied and a
# data:tracked frame after each data:truth (-q silent); a file of the
# wrong data fails, an empty one warns; the fast backend on 1, 2, 3 and
# every CPU's threads and the OpenCL backend (PoCL's CPU device, when
# there is one, with 1 and 3 host threads) give the same file; the
# tracking actor in a
# topology (tusk-emulate) writes what tusk-track writes, fails a run fed
# no frame of the type it tracks (naming the types that came) and warns
# on an empty one; --help; bad settings, missing and corrupt files give
# errors that name them.
#
# Environment (set by Makefile.am's AM_TESTS_ENVIRONMENT): top_builddir,
# top_srcdir, abs_top_builddir.
set -eu

top_builddir=${top_builddir:-.}
name=tusk_track_cli
tool=$top_builddir/tusk-track
# shellcheck source=tests/cli_lib.sh
. "${abs_top_srcdir:-${top_srcdir:-..}}/tests/cli_lib.sh"
src=$(cd "${abs_top_srcdir:-${top_srcdir:-..}}" && pwd)
b=$(cd "$top_builddir" && pwd)
adf=$b/tusk-adf
array=$src/config/array-demonstrator.conf
TUSK_CL_CACHE=off
export TUSK_CL_CACHE

count() { # FILE TYPE: frames of TYPE in FILE (0 when none)
    "$adf" stats "$1" | awk -v t="$2" '$1 == t {n = $2} END {print n + 0}'
}

step "a small simulated file: 60Co, 3000 decays, with the truth"
run "$b/tusk-basis" gen -c "$src/config/crystal-coarse.conf" --field-grid 3 --grid 8 --int16 -q -o "$tmp/basis.tbs"
expect_status 0 "tusk-basis gen"
run "$b/tusk-sim" run "$src/config/sim-co60.conf" --set "basis=$tmp/basis.tbs" --events 3000 --seed 5 -q \
    -o "$tmp/co60.adf"
expect_status 0 "tusk-sim run"
truths=$(count "$tmp/co60.adf" data:truth)
frames=$("$adf" stats "$tmp/co60.adf" | awk '$1 == "frames:" {print $2}')
[ "$truths" -gt 100 ] || fail "the simulation made only $truths events"

step "--help"
run "$tool" --help
expect_status 0 "--help"
expect_in out "tusk-track run IN.adf -o OUT.adf --array FILE" "--help"
expect_in out "truth_segments" "--help"

step "run --points truth: a data:tracked frame after every data:truth, every frame copied"
run "$tool" run "$tmp/co60.adf" -o "$tmp/truth.adf" --array "$array" --points truth
expect_status 0 "run --points truth"
expect_in err "$truths events tracked (truth points" "the summary"
expect_in err "gammas accepted" "the summary"
[ "$(count "$tmp/truth.adf" data:tracked)" = "$truths" ] || fail "$(count "$tmp/truth.adf" data:tracked) data:tracked frames for $truths events"
out_frames=$("$adf" stats "$tmp/truth.adf" | awk '$1 == "frames:" {print $2}')
[ "$out_frames" -eq $((frames + truths)) ] || fail "$out_frames frames out of $frames in and $truths added"
run "$adf" check "$tmp/truth.adf"
expect_status 0 "tusk-adf check on the output"
# every data:truth is followed by the data:tracked of its event
"$adf" dump "$tmp/truth.adf" | awk '
    /data:truth/   {want = $0; sub(/.*event /, "", want); sub(/ .*/, "", want); next}
    /data:tracked/ {got = $0; sub(/.*event /, "", got); sub(/ .*/, "", got); if (got != want) bad++; want = ""; next}
    {if (want != "") bad++; want = ""}
    END {exit bad > 0}' || fail "a data:tracked frame does not follow the data:truth of its event"
# 1332 keV gammas come out at their energy
run "$adf" dump -v "$tmp/truth.adf"
expect_status 0 "tusk-adf dump -v"
grep -E -q 'E? ?1332\.[0-9]' "$tmp/out" || fail "no 1332 keV gamma in the tracked output"

step "--backend fast: the same file on 1, 2, 3 and one thread per CPU; the summary names the threads"
for threads in 1 2 3 0; do
    run "$tool" run "$tmp/co60.adf" -o "$tmp/fast.adf" --array "$array" --points truth --backend fast --threads $threads
    expect_status 0 "run --backend fast --threads $threads"
    expect_in err "fast backend" "the summary names the backend"
    [ "$threads" = 0 ] || expect_in err "; fast, $threads host thread" "the actor's summary names the threads"
    cmp "$tmp/truth.adf" "$tmp/fast.adf" || fail "--backend fast --threads $threads: the file differs from the reference's"
done
expect_in err "truth points: $truths events" "the actor's summary"
run "$tool" run "$tmp/co60.adf" -o "$tmp/fast.adf" --array "$array" --backend fast --threads many
expect_status 2 "--threads many"
expect_in err "--threads" "a bad --threads names the option"
run "$tool" run "$tmp/co60.adf" -o "$tmp/fast.adf" --array "$array" --backend quick
expect_status 2 "--backend quick"
expect_in err "not reference, fast or opencl" "a bad --backend says what there is"

step "run --points truth_segments, in one call of tusk-track per file"
run "$tool" run "$tmp/co60.adf" -o "$tmp/seg.adf" --array "$array" --points truth_segments --set fom_max=3 -q
expect_status 0 "run --points truth_segments"
[ ! -s "$tmp/err" ] || fail "-q printed: $(cat "$tmp/err")"
[ "$(count "$tmp/seg.adf" data:tracked)" = "$truths" ] || fail "truth_segments: wrong number of data:tracked frames"

# Nothing tracked is no result: a file of data:crystal frames (events not
# built yet) fails, as it does in a chain (the tracking actor's rule, and
# tusk-psa run's for a file without data:crystal frames); a file with
# nothing to track and no other data either is copied, with a warning.
step "run --points psa on a file without event:data:psa composites: fails, naming what came and what to do"
run "$tool" run "$tmp/co60.adf" -o "$tmp/psa.adf" --array "$array"
expect_status 1 "run --points psa on data:crystal frames"
expect_in err "no event:data:psa frame arrived" "the message names the type it takes"
expect_in err "of types data:crystal" "the message names the types that came"
expect_in err "build events first" "the message says what to do"
[ ! -e "$tmp/psa.adf" ] || fail "a failed run left its output"
: >"$tmp/nothing.adf"
run "$tool" run "$tmp/nothing.adf" -o "$tmp/nothing.out.adf" --array "$array" -q
expect_status 0 "run on an empty file"
expect_in err "WARNING: no event:data:psa frame arrived" "the warning, also with -q"
[ -e "$tmp/nothing.out.adf" ] && [ ! -s "$tmp/nothing.out.adf" ] || fail "an empty file should give an empty output"

if "$b/tusk-cl" which cpu >/dev/null 2>&1; then
    step "--backend opencl on the CPU device writes the same file"
    run "$tool" run "$tmp/co60.adf" -o "$tmp/cl.adf" --array "$array" --points truth --backend opencl --device cpu
    expect_status 0 "run --backend opencl"
    expect_in err "opencl backend" "the summary names the backend"
    expect_in err "; on " "the actor's summary names the device"
    cmp "$tmp/truth.adf" "$tmp/cl.adf" || fail "the OpenCL backend's file differs from the reference's"
    run "$tool" run "$tmp/co60.adf" -o "$tmp/cl3.adf" --array "$array" --points truth --backend opencl --device cpu \
        --threads 3
    expect_status 0 "run --backend opencl --threads 3"
    expect_in err "; opencl, 3 host threads; on " "the actor's summary names the threads and the device"
    cmp "$tmp/cl.adf" "$tmp/cl3.adf" || fail "the OpenCL backend's file with 3 host threads differs from 1's"
else
    echo "$name: no OpenCL CPU device: the opencl step is skipped"
fi

step "the tracking actor in a topology writes what tusk-track writes"
cat >"$tmp/chain.xml" <<EOF
<configuration>
  <producer>
    <name>reader</name>
    <binary_code>file_producer</binary_code>
    <size>262144</size>
    <parameter name="file">$tmp/co60.adf</parameter>
  </producer>
  <intermediary>
    <name>tracker</name>
    <binary_code>tracking</binary_code>
    <data_source>reader</data_source>
    <size>65536</size>
    <parameter name="array">$array</parameter>
    <parameter name="points">truth</parameter>
    <parameter name="batch">50</parameter>
  </intermediary>
  <consumer>
    <name>writer</name>
    <binary_code>file_writer</binary_code>
    <data_source>tracker</data_source>
    <parameter name="file">$tmp/chain.adf</parameter>
  </consumer>
</configuration>
EOF
run "$b/tusk-emulate" --actor-path "$b/actors/.libs" "$tmp/chain.xml"
expect_status 0 "tusk-emulate with the tracking actor"
expect_in err "tracking tracker[0]: truth points: $truths events" "the actor's summary"
cmp "$tmp/truth.adf" "$tmp/chain.adf" || fail "the actor's output differs from tusk-track's"
sed "s|<parameter name=\"batch\">50</parameter>|<parameter name=\"batch\">50</parameter><parameter name=\"backend\">fast</parameter><parameter name=\"threads\">2</parameter>|" \
    "$tmp/chain.xml" >"$tmp/fast.xml"
run "$b/tusk-emulate" --actor-path "$b/actors/.libs" "$tmp/fast.xml"
expect_status 0 "tusk-emulate with the tracking actor, backend fast, 2 threads"
expect_in err "tracking tracker[0]: truth points: $truths events" "the actor's summary"
expect_in err "; fast, 2 host threads" "the actor's summary names the backend and threads"
cmp "$tmp/truth.adf" "$tmp/chain.adf" || fail "the actor's output on 2 threads differs from tusk-track's"
sed "s|<parameter name=\"points\">truth</parameter>|<parameter name=\"points\">truth</parameter><parameter name=\"cone\">5</parameter>|" \
    "$tmp/chain.xml" >"$tmp/bad.xml"
run "$b/tusk-emulate" --actor-path "$b/actors/.libs" "$tmp/bad.xml"
[ "$rc" -ne 0 ] || fail "a misspelt actor parameter was accepted"
expect_in err "cone" "the message names the parameter"

step "the tracking actor fed no event:data:psa (points = psa on data:crystal frames): the run fails, naming them"
sed "s|<parameter name=\"points\">truth</parameter>|<parameter name=\"points\">psa</parameter>|" "$tmp/chain.xml" \
    >"$tmp/wrong.xml"
run "$b/tusk-emulate" --actor-path "$b/actors/.libs" "$tmp/wrong.xml"
[ "$rc" -ne 0 ] || fail "the tracking actor fed data:crystal frames in the psa mode ended as a clean run"
expect_in err "no event:data:psa frame arrived, which tracking tracks (points = psa)" "the message names the type it takes"
expect_in err "of types data:crystal" "the message names the types that came"
: >"$tmp/empty.adf"
sed "s|$tmp/co60.adf|$tmp/empty.adf|" "$tmp/chain.xml" >"$tmp/empty.xml"
run "$b/tusk-emulate" --actor-path "$b/actors/.libs" "$tmp/empty.xml"
expect_status 0 "an empty input"
expect_in err "tracking tracker[0]: WARNING: no data:truth frame arrived (0 buffers, 0 frames)" "the warning"

step "errors name what is wrong"
run "$tool" run "$tmp/co60.adf" -o "$tmp/x.adf" --array "$array" --set cone=5
expect_status 1 "an unknown --set key"
expect_in err "cone" "an unknown --set key"
run "$tool" run "$tmp/co60.adf" -o "$tmp/x.adf" --array "$array" --set max_points=9
expect_status 1 "max_points out of range"
expect_in err "max_points" "max_points out of range"
run "$tool" run "$tmp/co60.adf" -o "$tmp/x.adf" --array "$array" --points everything
expect_status 2 "a bad --points"
expect_in err "everything" "a bad --points"
run "$tool" run "$tmp/none.adf" -o "$tmp/x.adf" --array "$array"
expect_status 1 "a missing input"
expect_in err "none.adf" "a missing input"
run "$tool" run "$tmp/co60.adf" -o "$tmp/x.adf" --array "$tmp/none.conf"
expect_status 1 "a missing array"
expect_in err "none.conf" "a missing array"
head -c 5000 "$tmp/co60.adf" >"$tmp/cut.adf"
run "$tool" run "$tmp/cut.adf" -o "$tmp/x.adf" --array "$array" --points truth
expect_status 1 "a truncated input"
expect_in err "cut.adf" "a truncated input"
[ ! -e "$tmp/x.adf" ] || fail "a failed run left its output"
run "$tool" run "$tmp/co60.adf" --array "$array"
expect_status 2 "no -o"
run "$tool" frobnicate
expect_status 2 "an unknown command"

step "losses: every full-energy gamma recovered or lost by one cause; split loses the oversize ones"
run "$tool" losses "$tmp/co60.adf" --array "$array" -q
expect_status 0 "losses"
expect_in out "cause,gammas,fraction" "losses"
awk -F, '$1 == "full_energy" { f = $2 } $1 == "recovered" || $1 ~ /^lost_/ { s += $2 }
    END { if (f < 50 || s != f) { print "full " f ", recovered + lost " s; exit 1 } }' "$tmp/out" ||
    fail "losses: recovered and the losses do not add up to the full-energy gammas"
cp "$tmp/out" "$tmp/losses-merge.csv"
run "$tool" losses "$tmp/co60.adf" --array "$array" --energy 1332.5 --set oversize=split -q
expect_status 0 "losses, split"
awk -F, '$1 == "recovered_merged" && $2 != 0 { exit 1 }' "$tmp/out" || fail "split: gammas recovered merged"
awk -F, '$1 == "recovered_recombined" && $2 != 0 { exit 1 }' "$tmp/losses-merge.csv" ||
    fail "recombination is off by default, yet gammas were recovered by it"
run "$tool" losses "$tmp/co60.adf" --array "$array" --set recombine_points=7 -q
expect_status 0 "losses, recombination"
awk -F, '$1 == "full_energy" { f = $2 } $1 == "recovered" || $1 ~ /^lost_/ { s += $2 } $1 == "recovered_recombined" { r = 1 }
    END { if (s != f || !r) { print "full " f ", recovered + lost " s; exit 1 } }' "$tmp/out" ||
    fail "losses, recombination: recovered and the losses do not add up, or no recovered_recombined row"
run "$tool" losses "$tmp/co60.adf" --array "$array" --set oversize=sideways -q
expect_status 1 "losses, a bad setting"
expect_in err "oversize: 'sideways' is not merge or split" "losses, a bad setting"
run "$tool" losses "$tmp/co60.adf" --array "$array" --points psa -q
expect_status 2 "losses of psa points"
expect_in err "points must be truth" "losses of psa points"

step "--version, an unknown command and option (base/cli.h)"
cli_conventions "$tool" tusk-track run

echo "$name: all steps passed"
