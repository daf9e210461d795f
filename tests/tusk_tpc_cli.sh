#!/bin/sh
# tusk_tpc_cli.sh - tusk-tpc as a user runs it: sim writes events (the
# same file for the same seed, another for another, a summary of clusters
# an event), tusk-adf checks, counts and dumps them; qa prints the Table
# 9.1 tables of a tracked file and writes its CSV files, and refuses a file
# without tracks or tracked with other settings; plot draws the efficiency
# picture (when gnuplot is there); diff compares two tracked files track by
# track; tusk-bench tpc runs on a small sweep (PoCL when present); --help;
# bad usage and settings exit 2 with a message.
#
# Environment (set by Makefile.am's AM_TESTS_ENVIRONMENT): top_builddir,
# top_srcdir, abs_top_builddir.
set -eu

top_builddir=${top_builddir:-.}
name=tusk_tpc_cli
tool=$top_builddir/tusk-tpc
# shellcheck source=tests/cli_lib.sh
. "${abs_top_srcdir:-${top_srcdir:-..}}/tests/cli_lib.sh"
src=$(cd "${abs_top_srcdir:-${top_srcdir:-..}}" && pwd)
b=$(cd "$top_builddir" && pwd)
TUSK_ACTOR_PATH=${TUSK_ACTOR_PATH:-$b/actors/.libs}
export TUSK_ACTOR_PATH
TUSK_CL_CACHE=off # no program binaries in the user's cache
export TUSK_CL_CACHE

step "sim: events into a file, reproducible"
run "$tool" sim --preset pp --events 2 --seed 11 -o "$tmp/a.adf"
expect_status 0 "tusk-tpc sim"
expect_in err "2 events (pp) of 160 particles in 0.50 T" "the summary"
run "$tool" sim --preset pp --events 2 --seed 11 -q -o "$tmp/b.adf"
expect_status 0 "tusk-tpc sim (again)"
[ ! -s "$tmp/err" ] || fail "-q printed something"
cmp "$tmp/a.adf" "$tmp/b.adf" >/dev/null || fail "the same seed gave another file"
run "$tool" sim --preset pp --events 2 --seed 12 -q -o "$tmp/c.adf"
! cmp "$tmp/a.adf" "$tmp/c.adf" >/dev/null 2>&1 || fail "another seed gave the same file"
run "$b/tusk-adf" check "$tmp/a.adf"
expect_status 0 "tusk-adf check"
run "$b/tusk-adf" stats "$tmp/a.adf"
expect_in out "data:tpc_clusters                72" "tusk-adf stats: a cluster frame a slice and event"
expect_in out "data:tpc_truth" "tusk-adf stats"
run "$b/tusk-adf" dump -v -n 2 "$tmp/a.adf"
expect_status 0 "tusk-adf dump -v"
expect_in out "slice 0 (the event has 36), field 0.5000 T, geometry 1" "the clusters' header"
expect_in out "cluster 0: row 0 y" "a cluster"
expect_in out "particle 0: id" "the truth's particles"
run "$tool" sim --tracks 30 --set truth=no --set bz_tesla=-0.3 -q -o "$tmp/small.adf"
expect_status 0 "sim without truth, 30 particles, another field"
run "$b/tusk-adf" stats "$tmp/small.adf"
[ "$(grep -c data:tpc_truth "$tmp/out" || true)" -eq 0 ] || fail "truth=no wrote truth"

step "qa: the Table 9.1 tables of a tracked file"
run "$b/tusk-emulate" -q --only tracker --input "$tmp/a.adf" --output "$tmp/r.adf" "$src/config/tpc-demo.xml"
expect_status 0 "the tracker stage"
run "$b/tusk-adf" dump -v -n 3 "$tmp/r.adf"
expect_in out "backend fast, settings 0x" "the tracks' header"
expect_in out "track 0 (tracklet" "a track"
run "$tool" qa --out "$tmp/qa" pp=$tmp/r.adf
expect_status 0 "tusk-tpc qa"
expect_in out "pp (fast): 2 events, 72 slices" "the table's head"
expect_in out "Table 9.1: efficiency" "the Table 9.1 line"
expect_in out "all reconstructible" "the categories"
[ -s "$tmp/qa/pp/summary.csv" ] && [ "$(wc -l <"$tmp/qa/pp/momentum.csv")" -eq 13 ] || fail "qa --out wrote no CSV"
run "$tool" qa --min-clusters 50 --match 0.75 --ref-p 0.5 "$tmp/r.adf"
expect_status 0 "tusk-tpc qa with other definitions"
expect_in out "r (fast)" "the label taken from the file name"
expect_in out "reconstructible: 50 clusters in the slice; match: 75 %" "the definitions printed"
run "$tool" qa --set cluster_chi2=9 "$tmp/r.adf"
expect_status 1 "qa with other settings"
expect_in err "other settings" "the message"
run "$tool" qa "$tmp/a.adf"
expect_status 1 "qa of a file without tracks"
expect_in err "no data:tpc_tracks came" "the message"
run "$tool" qa "$tmp/missing.adf"
expect_status 1 "qa of a missing file"
expect_in err "missing.adf" "the message"

step "diff: two tracked files track by track"
sed -e 's|<parameter name="backend">fast</parameter>|<parameter name="backend">reference</parameter>|' \
    "$src/config/tpc-demo.xml" >"$tmp/ref.xml"
run "$b/tusk-emulate" -q --only tracker --input "$tmp/a.adf" --output "$tmp/r-ref.adf" "$tmp/ref.xml"
expect_status 0 "the reference stage"
run "$tool" diff "$tmp/r.adf" "$tmp/r-ref.adf"
expect_status 0 "diff of fast against reference"
expect_in out "72 slices:" "the slices"
expect_in out "0 of" "no cluster differs"
sed -e 's|<parameter name="backend">fast</parameter>|<parameter name="backend">fast</parameter><parameter name="area_tan_y">0.4</parameter>|' \
    "$src/config/tpc-demo.xml" >"$tmp/narrow.xml"
run "$b/tusk-emulate" -q --only tracker --input "$tmp/a.adf" --output "$tmp/r-narrow.adf" "$tmp/narrow.xml"
expect_status 0 "a stage with narrower hit areas"
run "$tool" diff "$tmp/r.adf" "$tmp/r-narrow.adf"
expect_status 1 "diff of other settings"
run "$tool" diff "$tmp/r.adf" "$tmp/a.adf"
expect_status 1 "diff against a file without tracks"
expect_in err "none in the second" "the message"

step "plot: the efficiency picture"
if command -v "${TUSK_GNUPLOT:-gnuplot}" >/dev/null 2>&1; then
    run "$tool" plot "$tmp/r.adf" --out "$tmp/pic"
    expect_status 0 "tusk-tpc plot"
    [ -s "$tmp/pic/efficiency.png" ] && [ -s "$tmp/pic/momentum.csv" ] && [ -s "$tmp/pic/efficiency.gp" ] ||
        fail "no picture, data or script"
else
    echo "$name: no gnuplot: the picture is not drawn"
fi

step "tusk-bench tpc runs (its figures are not checked: no test depends on timing)"
dev=""
"$b/tusk-cl" which cpu >/dev/null 2>&1 && dev="--device cpu"
# shellcheck disable=SC2086 # dev is one option or none
run "$b/tusk-bench" tpc --tracks 40,80 --runs 1 --ref-runs 1 --bandwidth-mb 8 $dev
expect_status 0 "tusk-bench tpc"
expect_in out "(a) reference, 1 thread" "the reference row"
expect_in out "(b) fast" "the fast row"
expect_in out "time against clusters (Table 9.31's fit)" "the fit"
if [ -n "$dev" ]; then
    expect_in out "device (kernels, data on the device)" "the device row"
    expect_in out "memory bandwidth" "the bandwidth probe"
fi
run "$b/tusk-bench" tpc --tracks 0
expect_status 2 "tusk-bench tpc --tracks 0"
run "$b/tusk-bench" tpc --group-size 48
expect_status 2 "tusk-bench tpc --group-size 48"

step "usage and settings"
run "$tool" --help
expect_status 0 "--help"
expect_in out "tusk-emulate --only tracker" "the help names the offline tracker"
run "$tool"
expect_status 2 "no command"
run "$tool" frob
expect_status 2 "an unknown command"
expect_in err "unknown command 'frob'" "the message"
run "$tool" sim --preset pp
expect_status 2 "sim without -o"
run "$tool" sim --tracks 0 -o "$tmp/x.adf"
expect_status 2 "sim --tracks 0"
run "$tool" sim --preset semicentral -o "$tmp/x.adf"
expect_status 2 "an unknown preset"
expect_in err "expected pp, noncentral or central" "the message"
run "$tool" sim --set nosuch=1 -o "$tmp/x.adf"
expect_status 2 "an unknown simulation key"
expect_in err "nosuch" "the message"
run "$tool" sim --set bz_tesla=0 -o "$tmp/x.adf"
expect_status 2 "no field"
expect_in err "bz_tesla" "the message"
run "$tool" qa --set min_hits=3 "$tmp/r.adf"
expect_status 2 "a bad tracker setting"
expect_in err "min_hits" "the message"
run "$tool" qa --match 0.3 "$tmp/r.adf"
expect_status 2 "qa --match 0.3"
run "$tool" plot "$tmp/r.adf" --format gif
expect_status 2 "plot --format gif"
run "$tool" diff "$tmp/r.adf"
expect_status 2 "diff of one file"
echo "$name: all steps passed"
