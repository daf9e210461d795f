#!/bin/sh
# tusk_zfinder_cli.sh - tusk-zfinder as a user runs it: sim writes RoIs
# (the same file for the same seed, another for another, a summary near
# the preset's mean), tusk-adf reads them; qa prints the table of a
# z-finder's output file and writes its CSV files, and refuses a file
# without vertices; plot draws a RoI's histograms (when gnuplot is
# there) and names a RoI that is not in the file; tusk-bench zfinder
# runs on a few RoIs (PoCL when present); --help; bad usage and settings
# exit 2 with a message.
#
# Environment (set by Makefile.am's AM_TESTS_ENVIRONMENT): top_builddir,
# top_srcdir, abs_top_builddir.
set -eu

top_builddir=${top_builddir:-.}
name=tusk_zfinder_cli
tool=$top_builddir/tusk-zfinder
# shellcheck source=tests/cli_lib.sh
. "${abs_top_srcdir:-${top_srcdir:-..}}/tests/cli_lib.sh"
src=$(cd "${abs_top_srcdir:-${top_srcdir:-..}}" && pwd)
b=$(cd "$top_builddir" && pwd)
TUSK_ACTOR_PATH=${TUSK_ACTOR_PATH:-$b/actors/.libs}
export TUSK_ACTOR_PATH
TUSK_CL_CACHE=off # no program binaries in the user's cache
export TUSK_CL_CACHE

step "sim: RoIs into a file, reproducible"
run "$tool" sim --preset lowlum --rois 30 --seed 11 -o "$tmp/a.adf"
expect_status 0 "tusk-zfinder sim"
expect_in err "30 RoIs (preset lowlum, 100 degrees)" "the summary"
run "$tool" sim --preset lowlum --rois 30 --seed 11 -q -o "$tmp/b.adf"
expect_status 0 "tusk-zfinder sim (again)"
[ ! -s "$tmp/err" ] || fail "-q printed something"
cmp "$tmp/a.adf" "$tmp/b.adf" >/dev/null || fail "the same seed gave another file"
run "$tool" sim --preset lowlum --rois 30 --seed 12 -q -o "$tmp/c.adf"
! cmp "$tmp/a.adf" "$tmp/c.adf" >/dev/null 2>&1 || fail "another seed gave the same file"
run "$b/tusk-adf" check "$tmp/a.adf"
expect_status 0 "tusk-adf check"
run "$b/tusk-adf" stats "$tmp/a.adf"
expect_in out "data:id_spacepoints" "tusk-adf stats"
expect_in out "data:id_truth" "tusk-adf stats"
run "$tool" sim --rois 2 --set roi_deg=360 --set pileup=0 -q -o "$tmp/full.adf"
expect_status 0 "a 360 degree RoI"

step "qa: the table of a z-finder's output"
sed -e 's|<parameter name="mode">triplets</parameter>|<parameter name="mode">pairs</parameter>|' \
    "$src/config/zfinder-demo.xml" >"$tmp/pairs.xml"
run "$b/tusk-emulate" -q --only zfinder --input "$tmp/a.adf" --output "$tmp/z.adf" "$tmp/pairs.xml"
expect_status 0 "the zfinder stage"
run "$tool" qa --out "$tmp/qa" low=$tmp/z.adf
expect_status 0 "tusk-zfinder qa"
expect_in out "low        pairs     fast float            30     30" "the table row"
[ -s "$tmp/qa/low/summary.csv" ] && [ "$(wc -l <"$tmp/qa/low/rois.csv")" -eq 31 ] || fail "qa --out wrote no CSV"
run "$tool" qa --no-reference "$tmp/z.adf"
expect_status 0 "tusk-zfinder qa --no-reference"
expect_in out "z          pairs" "the label taken from the file name"
run "$tool" qa --set bin_mm=2 "$tmp/z.adf"
expect_status 1 "qa with other settings"
expect_in err "other settings" "the message"
run "$tool" qa "$tmp/a.adf"
expect_status 1 "qa of a file without vertices"
expect_in err "no RoI with both a data:zvertex and a data:id_truth frame" "the message"
run "$tool" qa "$tmp/missing.adf"
expect_status 1 "qa of a missing file"
expect_in err "missing.adf" "the message"

step "plot: a RoI's histograms"
if command -v "${TUSK_GNUPLOT:-gnuplot}" >/dev/null 2>&1; then
    run "$tool" plot "$tmp/a.adf" --roi 3 --out "$tmp"
    expect_status 0 "tusk-zfinder plot"
    [ -s "$tmp/histograms-roi3.png" ] && [ -s "$tmp/histograms-roi3.dat" ] && [ -s "$tmp/histograms-roi3.gp" ] ||
        fail "no picture, data or script"
else
    echo "$name: no gnuplot: the picture is not drawn"
fi
run "$tool" plot "$tmp/a.adf" --roi 99 --out "$tmp"
expect_status 1 "plot of a RoI not in the file"
expect_in err "no data:id_spacepoints of RoI 99" "the message"

step "tusk-bench zfinder runs (its figures are not checked: no test depends on timing)"
dev=""
"$b/tusk-cl" which cpu >/dev/null 2>&1 && dev="--device cpu"
# shellcheck disable=SC2086 # dev is one option or none
run "$b/tusk-bench" zfinder --rois-low 6 --rois-high 1 --seconds 0 $dev
expect_status 0 "tusk-bench zfinder"
expect_in out "(a) reference, 1 thread" "the reference row"
if [ -n "$dev" ]; then
    expect_in out "check: nHisto and zHisto equal bin for bin, the same peaks and z0 bit for bit on all 6 RoIs" "the device check"
    expect_in out "(e) opencl: roofline" "the roofline row"
fi
run "$b/tusk-bench" zfinder --sample mid
expect_status 2 "tusk-bench zfinder --sample mid"

step "usage and settings"
run "$tool" --help
expect_status 0 "--help"
expect_in out "tusk-emulate --only zfinder" "the help names the offline z-finder"
run "$tool"
expect_status 2 "no command"
run "$tool" frob
expect_status 2 "an unknown command"
expect_in err "unknown command 'frob'" "the message"
run "$tool" sim --rois 3
expect_status 2 "sim without -o"
run "$tool" sim --rois 0 -o "$tmp/x.adf"
expect_status 2 "sim --rois 0"
run "$tool" sim --set nosuch=1 -o "$tmp/x.adf"
expect_status 2 "an unknown simulation key"
expect_in err "nosuch" "the message"
run "$tool" sim --set pileup=-3 -o "$tmp/x.adf"
expect_status 2 "a negative pile-up"
expect_in err "pileup" "the message"
run "$tool" qa --set slice_deg=0 "$tmp/z.adf"
expect_status 2 "a bad z-finder setting"
expect_in err "slice_deg" "the message"
run "$tool" plot "$tmp/a.adf"
expect_status 2 "plot without --roi"
run "$tool" plot "$tmp/a.adf" --roi 1 --format gif
expect_status 2 "plot --format gif"

step "--version, an unknown command and option (base/cli.h)"
cli_conventions "$tool" tusk-zfinder sim
cli_conventions "$b/tusk-bench" tusk-bench zfinder

echo "$name: all steps passed"
