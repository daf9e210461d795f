#!/bin/sh
# tusk_psa_cli.sh - tusk-psa as a user runs it: `validate` simulates decays
# into one crystal, analyses them and reports the position residuals
# against the simulation's truth (which must beat random positions by a
# wide margin); `run` turns a tusk-sim file's data:crystal frames into
# data:psa frames and passes data:truth through, in order; errors exit 1
# naming the file, usage errors exit 2.
#
# Environment (set by Makefile.am's AM_TESTS_ENVIRONMENT): top_builddir,
# top_srcdir, abs_top_builddir.
set -eu

top_builddir=${top_builddir:-.}
name=tusk_psa_cli
tool=$top_builddir/tusk-psa
# shellcheck source=tests/cli_lib.sh
. "${abs_top_srcdir:-${top_srcdir:-..}}/tests/cli_lib.sh"
src=$(cd "${abs_top_srcdir:-${top_srcdir:-..}}" && pwd)
b=$(cd "$top_builddir" && pwd)
adf=$b/tusk-adf

step "a coarse basis (tusk-basis gen: 8 mm points, 3 mm fields)"
run "$b/tusk-basis" gen -c "$src/config/crystal-coarse.conf" --field-grid 3 --grid 8 --int16 -q -o "$tmp/basis.tbs"
expect_status 0 "tusk-basis gen"

step "validate: 300000 decays of 1 MeV into one crystal, PSA against the truth"
run "$tool" validate --basis "$tmp/basis.tbs" --events 300000 --seed 3 --threads 2
expect_status 0 "validate"
expect_in out "basis $tmp/basis.tbs: 880 points on a 8.00 mm grid" "validate"
expect_in out "line: 1000.0 keV" "validate"
expect_in out "decays                        300000" "validate"
expect_in out "single-interaction hits" "validate"
expect_in out "multi-interaction hits" "validate"
expect_in out "g*sqrt(3)/2 = 6.93 mm" "validate"
for axis in x y z; do
    grep -E "^  $axis +-?[0-9]+\.[0-9]+ +[0-9]+\.[0-9]+ +[0-9]+\.[0-9]+ +[0-9]+\.[0-9]+$" "$tmp/out" >/dev/null ||
        { show; fail "validate: no mean / RMS / sigma / FWHM line for $axis"; }
done
# About 1700 single-interaction hits; 69-70 % of them within 10 mm with
# seeds 1-5 (the PSA of November 2026). A random basis point of the hit
# segment lands within 10 mm of the truth 19 % of the time: 45 % fails a
# PSA that has lost its way and passes a good one with room to spare.
single=$(sed -n 's/^single-interaction hits *\([0-9]*\) .*/\1/p' "$tmp/out")
within=$(sed -n '/^3D distance, single-interaction hits (/,/within 10 mm/s/^  within 10 mm *\([0-9.]*\) %/\1/p' "$tmp/out")
echo "$name: $single single-interaction hits, $within % within 10 mm"
[ -n "$single" ] && [ "$single" -ge 800 ] || { show; fail "validate: only '$single' single-interaction hits"; }
awk -v w="$within" 'BEGIN { exit !(w + 0 >= 45) }' || { show; fail "validate: $within % within 10 mm, expected >= 45 %"; }
expect_in out "single-interaction hits in crystals with other hit segments" "validate"
expect_in out "residual yes, refine 1" "validate"

# Times (issue 22): data:psa's hit time and the simulated interaction
# both count from the key's timestamp, the record's sample `pretrigger`.
# The median |difference| is about half a sample at this noise (5 keV);
# with the PSA told another pretrigger than the simulation it is off by
# whole samples, so the check can fail. --set pretrigger goes to both.
dt_median() { sed -n 's/^  mean .*, median of |difference| \([0-9.]*\)$/\1/p' "$tmp/out"; }
dt=$(dt_median)
echo "$name: hit times within $dt ns (median)"
awk -v d="$dt" 'BEGIN { exit !(d != "" && d + 0 <= 8) }' || { show; fail "validate: hit time median |difference| '$dt' ns"; }
step "validate: another pretrigger, the same in the simulation and the PSA"
run "$tool" validate --basis "$tmp/basis.tbs" --events 100000 --seed 4 --threads 2 --set pretrigger=17
expect_status 0 "validate --set pretrigger"
expect_in out "pretrigger 17" "validate --set pretrigger"
dt=$(dt_median)
awk -v d="$dt" 'BEGIN { exit !(d != "" && d + 0 <= 8) }' || { show; fail "validate --set pretrigger=17: hit time median |difference| '$dt' ns"; }

step "validate: PSA settings and simulation keys through --set, the reference backend"
run "$tool" validate --basis "$tmp/basis.tbs" --events 30000 --set mode=adaptive --set include_core=yes \
    --set source=cs137 --noise 2 --backend reference
expect_status 0 "validate --set"
expect_in out "mode adaptive" "validate --set"
expect_in out "include_core yes" "validate --set"
expect_in out "661.7 keV" "validate --set"
expect_in out "noise 2 keV" "validate --set"
expect_in out "backend reference" "validate --set"

step "validate --plot: histograms as CSV, a PNG when gnuplot is there"
if command -v gnuplot >/dev/null 2>&1; then
    run "$tool" validate --basis "$tmp/basis.tbs" --events 30000 --plot "$tmp/plot"
    expect_status 0 "validate --plot"
    [ -s "$tmp/plot/psa-residuals.png" ] || fail "no psa-residuals.png"
else
    echo "$name: gnuplot not installed: only the missing-gnuplot path is tested"
fi
run env TUSK_GNUPLOT=/nonexistent/gnuplot "$tool" validate --basis "$tmp/basis.tbs" --events 30000 --plot "$tmp/noplot"
expect_status 1 "validate --plot without gnuplot"
expect_in err "gnuplot not found" "validate --plot without gnuplot"
head -n 1 "$tmp/noplot/psa-residuals-axes.csv" | grep -F "bin_low_mm,bin_high_mm,x,y,z" >/dev/null ||
    fail "psa-residuals-axes.csv has no header"
[ "$(wc -l <"$tmp/noplot/psa-residuals-axes.csv")" -eq 161 ] || fail "psa-residuals-axes.csv: not 160 bins"
[ -s "$tmp/noplot/psa-residuals-3d.csv" ] || fail "no psa-residuals-3d.csv"

step "run: a tusk-sim 60Co file (15 crystals) into data:psa"
run "$b/tusk-sim" run "$src/config/sim-co60.conf" --set "basis=$tmp/basis.tbs" --events 3000 --seed 5 -q \
    -o "$tmp/co60.adf"
expect_status 0 "tusk-sim run"
run "$tool" run --basis "$tmp/basis.tbs" --set p=0.3 -i "$tmp/co60.adf" -o "$tmp/co60.psa.adf"
expect_status 0 "run"
expect_in err "data:crystal -> data:psa" "run summary"
run "$adf" stats "$tmp/co60.adf"
crystals=$(awk '$1 == "data:crystal" { print $2 }' "$tmp/out")
truths=$(awk '$1 == "data:truth" { print $2 }' "$tmp/out")
run "$adf" stats "$tmp/co60.psa.adf"
expect_status 0 "tusk-adf stats on the output"
psas=$(awk '$1 == "data:psa" { print $2 }' "$tmp/out")
truths_out=$(awk '$1 == "data:truth" { print $2 }' "$tmp/out")
echo "$name: $crystals data:crystal -> ${psas:-no} data:psa, ${truths_out:-no} of $truths data:truth passed on"
[ -n "$crystals" ] && [ "$crystals" -gt 0 ] || { show; fail "no data:crystal frames in the simulated file"; }
[ "${psas:-0}" = "$crystals" ] || { show; fail "$crystals data:crystal frames gave ${psas:-0} data:psa frames"; }
[ "${truths_out:-0}" = "$truths" ] || { show; fail "$truths data:truth frames, ${truths_out:-0} passed on"; }
if grep -F "data:crystal" "$tmp/out" >/dev/null; then show; fail "data:crystal frames left in the output"; fi
run "$adf" check "$tmp/co60.psa.adf"
expect_status 0 "tusk-adf check on the output"
# The same frames in the same order, data:crystal turned into data:psa.
"$adf" dump "$tmp/co60.adf" | awk 'NR > 1 { t = $2; if (t == "data:crystal") t = "data:psa"; print t, $4, $5 }' >"$tmp/want"
"$adf" dump "$tmp/co60.psa.adf" | awk 'NR > 1 { print $2, $4, $5 }' >"$tmp/got"
cmp -s "$tmp/want" "$tmp/got" || fail "run: the output's frames are not the input's, in order"
run "$tool" run --basis "$tmp/basis.tbs" --set p=0.3 -q -i "$tmp/co60.adf" -o "$tmp/co60.q.adf"
expect_status 0 "run -q"
[ ! -s "$tmp/err" ] || fail "run -q printed: $(cat "$tmp/err")"
cmp -s "$tmp/co60.psa.adf" "$tmp/co60.q.adf" || fail "run -q wrote another file than run"

step "errors: exit 1 naming the file, usage errors exit 2"
run "$tool" validate --basis "$tmp/none.tbs" --events 1000
expect_status 1 "a missing basis"
expect_in err "none.tbs" "a missing basis"
run "$tool" run --basis "$tmp/none.tbs" -i "$tmp/co60.adf" -o "$tmp/x.adf"
expect_status 1 "run: a missing basis"
expect_in err "none.tbs" "run: a missing basis"
run "$tool" run --basis "$tmp/basis.tbs" -i "$tmp/nothere.adf" -o "$tmp/x.adf"
expect_status 1 "run: a missing input"
expect_in err "nothere.adf" "run: a missing input"
[ ! -e "$tmp/x.adf" ] || fail "run: a failed run left its output behind"
run "$tool" validate --basis "$tmp/basis.tbs" --set source=am241 --events 1000
expect_status 1 "an unknown source"
expect_in err "am241" "an unknown source"
run "$tool" validate --basis "$tmp/basis.tbs" --set p=0 --events 1000
expect_status 1 "p = 0"
expect_in err "p = 0" "p = 0"
run "$tool" validate --basis "$tmp/basis.tbs" --frobnicate
expect_status 2 "an unknown option"
expect_in err "--frobnicate" "an unknown option"
run "$tool" validate --basis "$tmp/basis.tbs" --set nokey=1
expect_status 2 "an unknown --set key"
expect_in err "nokey" "an unknown --set key"
run "$tool" run --basis "$tmp/basis.tbs" -i "$tmp/co60.adf"
expect_status 2 "run without -o"
run "$tool" validate --events 10
expect_status 2 "validate without --basis"
run "$tool" frobnicate
expect_status 2 "an unknown command"

step "--version, an unknown command and option (base/cli.h)"
cli_conventions "$tool" tusk-psa run

echo "$name: all steps passed"
