#!/bin/sh
# tusk_sts_cli.sh - tusk-sts as a user runs it: sim writes timeslices (the
# same file for the same seed, another for another, a summary of digis a
# collision), tusk-adf reads and dumps them; qa prints the tables of a
# reconstructed file and writes its CSV files, and refuses a file without
# clusters; plot draws the residual picture (when gnuplot is there);
# tusk-bench sts runs on a small sweep (PoCL when present); --help; bad
# usage and settings exit 2 with a message.
#
# Environment (set by Makefile.am's AM_TESTS_ENVIRONMENT): top_builddir,
# top_srcdir, abs_top_builddir.
set -eu

top_builddir=${top_builddir:-.}
name=tusk_sts_cli
tool=$top_builddir/tusk-sts
# shellcheck source=tests/cli_lib.sh
. "${abs_top_srcdir:-${top_srcdir:-..}}/tests/cli_lib.sh"
src=$(cd "${abs_top_srcdir:-${top_srcdir:-..}}" && pwd)
b=$(cd "$top_builddir" && pwd)
TUSK_ACTOR_PATH=${TUSK_ACTOR_PATH:-$b/actors/.libs}
export TUSK_ACTOR_PATH
TUSK_CL_CACHE=off # no program binaries in the user's cache
export TUSK_CL_CACHE

step "sim: timeslices into a file, reproducible"
run "$tool" sim --collisions 3 --timeslices 2 --seed 11 -o "$tmp/a.adf"
expect_status 0 "tusk-sts sim"
expect_in err "2 timeslices of 3 collisions" "the summary"
expect_in err "over 1044 modules" "the summary's modules"
run "$tool" sim --collisions 3 --timeslices 2 --seed 11 -q -o "$tmp/b.adf"
expect_status 0 "tusk-sts sim (again)"
[ ! -s "$tmp/err" ] || fail "-q printed something"
cmp "$tmp/a.adf" "$tmp/b.adf" >/dev/null || fail "the same seed gave another file"
run "$tool" sim --collisions 3 --timeslices 2 --seed 12 -q -o "$tmp/c.adf"
! cmp "$tmp/a.adf" "$tmp/c.adf" >/dev/null 2>&1 || fail "another seed gave the same file"
run "$b/tusk-adf" check "$tmp/a.adf"
expect_status 0 "tusk-adf check"
run "$b/tusk-adf" stats "$tmp/a.adf"
expect_in out "data:sts_digis                 2088" "tusk-adf stats: a digi frame a module and timeslice"
expect_in out "data:sts_truth" "tusk-adf stats"
run "$b/tusk-adf" dump -v -n 4 "$tmp/a.adf"
expect_status 0 "tusk-adf dump -v"
expect_in out "the timeslice has 1044 modules" "the digis' header"
run "$tool" sim --collisions 1 --set truth=no --set strips=256 -q -o "$tmp/small.adf"
expect_status 0 "sim without truth, 256 strips"
run "$b/tusk-adf" stats "$tmp/small.adf"
[ "$(grep -c data:sts_truth "$tmp/out" || true)" -eq 0 ] || fail "truth=no wrote truth"

step "qa: the tables of a reconstructed file"
run "$b/tusk-emulate" -q --only hitfinder --input "$tmp/a.adf" --output "$tmp/r.adf" "$src/config/sts-demo.xml"
expect_status 0 "the hitfinder stage"
run "$tool" qa --out "$tmp/qa" small=$tmp/r.adf
expect_status 0 "tusk-sts qa"
expect_in out "small (fast): 2 timeslices, 2088 modules" "the table's head"
expect_in out "original against parallel cluster finder" "the comparison"
[ -s "$tmp/qa/small/summary.csv" ] && [ "$(wc -l <"$tmp/qa/small/stations.csv")" -eq 10 ] || fail "qa --out wrote no CSV"
run "$tool" qa --no-compare "$tmp/r.adf"
expect_status 0 "tusk-sts qa --no-compare"
expect_in out "r (fast)" "the label taken from the file name"
run "$tool" qa --set hit_time_cut=3 "$tmp/r.adf"
expect_status 1 "qa with other settings"
expect_in err "other settings" "the message"
run "$tool" qa "$tmp/a.adf"
expect_status 1 "qa of a file without clusters"
expect_in err "lacks data:sts_clusters, data:sts_hits" "the message"
run "$tool" qa "$tmp/missing.adf"
expect_status 1 "qa of a missing file"
expect_in err "missing.adf" "the message"

step "plot: the residual picture"
if command -v "${TUSK_GNUPLOT:-gnuplot}" >/dev/null 2>&1; then
    run "$tool" plot "$tmp/r.adf" --out "$tmp/pic"
    expect_status 0 "tusk-sts plot"
    [ -s "$tmp/pic/residuals.png" ] && [ -s "$tmp/pic/residuals.dat" ] && [ -s "$tmp/pic/residuals.gp" ] ||
        fail "no picture, data or script"
else
    echo "$name: no gnuplot: the picture is not drawn"
fi

step "tusk-bench sts runs (its figures are not checked: no test depends on timing)"
dev=""
"$b/tusk-cl" which cpu >/dev/null 2>&1 && dev="--device cpu"
# shellcheck disable=SC2086 # dev is one option or none
run "$b/tusk-bench" sts --collisions 2,4 --runs 1 --ref-runs 1 --bandwidth-mb 8 $dev
expect_status 0 "tusk-bench sts"
expect_in out "(a) reference (original finder), 1 thread" "the reference row"
expect_in out "(b) fast (parallel algorithm)" "the fast row"
if [ -n "$dev" ]; then
    expect_in out "device (kernels, data on the device)" "the device row"
    expect_in out "memory bandwidth" "the bandwidth probe"
fi
run "$b/tusk-bench" sts --collisions 0
expect_status 2 "tusk-bench sts --collisions 0"

step "usage and settings"
run "$tool" --help
expect_status 0 "--help"
expect_in out "tusk-emulate --only hitfinder" "the help names the offline reconstruction"
run "$tool"
expect_status 2 "no command"
run "$tool" frob
expect_status 2 "an unknown command"
expect_in err "unknown command 'frob'" "the message"
run "$tool" sim --collisions 3
expect_status 2 "sim without -o"
run "$tool" sim --collisions 0 -o "$tmp/x.adf"
expect_status 2 "sim --collisions 0"
run "$tool" sim --set nosuch=1 -o "$tmp/x.adf"
expect_status 2 "an unknown simulation key"
expect_in err "nosuch" "the message"
run "$tool" sim --set stereo_deg=95 -o "$tmp/x.adf"
expect_status 2 "a stereo angle beyond 89 degrees"
expect_in err "stereo_deg" "the message"
run "$tool" qa --set delta_sigmas=-1 "$tmp/r.adf"
expect_status 2 "a bad reconstruction setting"
expect_in err "delta_sigmas" "the message"
run "$tool" plot "$tmp/r.adf" --format gif
expect_status 2 "plot --format gif"
echo "$name: all steps passed"
