#!/bin/sh
# tusk_ut_cli.sh - tusk-ut as a user runs it: sim writes events (the same
# file for the same seed, another for another, a summary near the
# simulation's means), tusk-adf reads and dumps them; qa prints the table
# of a tracked file and writes its CSV files, and refuses a file without
# tracks; plot draws the picture (when gnuplot is there); tusk-bench ut
# runs on a few events (PoCL when present); --help; bad usage and
# settings exit 2 with a message.
#
# Environment (set by Makefile.am's AM_TESTS_ENVIRONMENT): top_builddir,
# top_srcdir, abs_top_builddir.
set -eu

top_builddir=${top_builddir:-.}
name=tusk_ut_cli
tool=$top_builddir/tusk-ut
# shellcheck source=tests/cli_lib.sh
. "${abs_top_srcdir:-${top_srcdir:-..}}/tests/cli_lib.sh"
src=$(cd "${abs_top_srcdir:-${top_srcdir:-..}}" && pwd)
b=$(cd "$top_builddir" && pwd)
TUSK_ACTOR_PATH=${TUSK_ACTOR_PATH:-$b/actors/.libs}
export TUSK_ACTOR_PATH
TUSK_CL_CACHE=off # no program binaries in the user's cache
export TUSK_CL_CACHE

step "sim: events into a file, reproducible"
run "$tool" sim --events 20 --seed 11 -o "$tmp/a.adf"
expect_status 0 "tusk-ut sim"
expect_in err "20 events: " "the summary"
awk '/tusk-ut sim: 20 events:/ { for (i = 1; i <= NF; i++) if ($i == "VELO") v = $(i - 1);
     if (v < 140 || v > 230) exit 1 }' "$tmp/err" || fail "the VELO tracks an event are far from the simulation's 185"
run "$tool" sim --events 20 --seed 11 -q -o "$tmp/b.adf"
expect_status 0 "tusk-ut sim (again)"
[ ! -s "$tmp/err" ] || fail "-q printed something"
cmp "$tmp/a.adf" "$tmp/b.adf" >/dev/null || fail "the same seed gave another file"
run "$tool" sim --events 20 --seed 12 -q -o "$tmp/c.adf"
! cmp "$tmp/a.adf" "$tmp/c.adf" >/dev/null 2>&1 || fail "another seed gave the same file"
run "$b/tusk-adf" check "$tmp/a.adf"
expect_status 0 "tusk-adf check"
run "$b/tusk-adf" stats "$tmp/a.adf"
expect_in out "event:data:ut" "tusk-adf stats"
run "$b/tusk-adf" dump -v -n 1 "$tmp/a.adf"
expect_status 0 "tusk-adf dump -v"
expect_in out "data:ut_raw" "the raw banks in the dump"
expect_in out "data:velo_tracks" "the VELO tracks in the dump"
expect_in out "data:ut_truth" "the truth in the dump"
expect_in out "strip " "the hit words decoded"
run "$tool" sim --events 2 --set truth=no --set noise=0 -q -o "$tmp/plain.adf"
expect_status 0 "no truth"
run "$b/tusk-adf" stats "$tmp/plain.adf"
if grep -q "data:ut_truth" "$tmp/out"; then fail "truth=no wrote data:ut_truth"; fi

step "qa: the table of a tracker's output"
run "$b/tusk-emulate" -q --only tracker --input "$tmp/a.adf" --output "$tmp/t.adf" "$src/config/ut-demo.xml"
expect_status 0 "the tracker stage"
run "$b/tusk-adf" dump -v -n 1 "$tmp/t.adf"
expect_in out "data:ut_tracks" "the UT tracks in the dump"
expect_in out "VELO track" "the UT tracks decoded"
run "$tool" qa --out "$tmp/qa" low=$tmp/t.adf
expect_status 0 "tusk-ut qa"
expect_in out "low: backend fast, 5 sectors, 8 candidates; 20 events" "the table's title"
expect_in out "VELO+UT, p > 5 GeV" "the categories"
[ -s "$tmp/qa/low/summary.csv" ] && [ -s "$tmp/qa/low/momentum.csv" ] || fail "qa --out wrote no CSV"
run "$tool" qa "$tmp/t.adf"
expect_status 0 "tusk-ut qa without a label"
expect_in out "t: backend fast" "the label taken from the file name"
run "$tool" qa --set candidates=4 "$tmp/t.adf"
expect_status 1 "qa with other settings"
expect_in err "other settings" "the message"
run "$tool" qa "$tmp/a.adf"
expect_status 1 "qa of a file without tracks"
expect_in err "never got its data:ut_tracks" "the message"
run "$tool" qa "$tmp/missing.adf"
expect_status 1 "qa of a missing file"
expect_in err "missing.adf" "the message"

step "plot: the picture of a tracked file"
if command -v "${TUSK_GNUPLOT:-gnuplot}" >/dev/null 2>&1; then
    run "$tool" plot "$tmp/t.adf" --out "$tmp"
    expect_status 0 "tusk-ut plot"
    [ -s "$tmp/ut-qa.png" ] && [ -s "$tmp/ut-qa-eff.dat" ] && [ -s "$tmp/ut-qa.gp" ] || fail "no picture, data or script"
else
    echo "$name: no gnuplot: the picture is not drawn"
fi

step "tusk-bench ut runs (its figures are not checked: no test depends on timing)"
dev=""
"$b/tusk-cl" which cpu >/dev/null 2>&1 && dev="--device cpu"
# shellcheck disable=SC2086 # dev is one option or none
run "$b/tusk-bench" ut --events 30 --runs 1 --ref-runs 1 --bandwidth-mb 16 $dev
expect_status 0 "tusk-bench ut"
expect_in out "(a) reference, 1 thread: decoding" "the reference row"
expect_in out "(b) fast" "the fast row"
if [ -n "$dev" ]; then
    expect_in out "kernels: Compass (windows + tracklets)" "the device rows"
fi
run "$b/tusk-bench" ut --configs 4/8
expect_status 2 "tusk-bench ut --configs 4/8"

step "usage and settings"
run "$tool" --help
expect_status 0 "--help"
expect_in out "tusk-emulate --only tracker" "the help names the offline tracker"
run "$tool"
expect_status 2 "no command"
run "$tool" frob
expect_status 2 "an unknown command"
expect_in err "unknown command 'frob'" "the message"
run "$tool" sim --events 3
expect_status 2 "sim without -o"
run "$tool" sim --events 0 -o "$tmp/x.adf"
expect_status 2 "sim --events 0"
run "$tool" sim --set nosuch=1 -o "$tmp/x.adf"
expect_status 2 "an unknown simulation key"
expect_in err "nosuch" "the message"
run "$tool" sim --set interactions=-3 -o "$tmp/x.adf"
expect_status 2 "negative interactions"
expect_in err "interactions" "the message"
run "$tool" qa --set sectors=4 "$tmp/t.adf"
expect_status 2 "a bad tracker setting"
expect_in err "sectors" "the message"
run "$tool" plot "$tmp/t.adf" --format gif
expect_status 2 "plot --format gif"

step "--version, an unknown command and option (base/cli.h)"
cli_conventions "$tool" tusk-ut sim
cli_conventions "$b/tusk-bench" tusk-bench ut

echo "$name: all steps passed"
