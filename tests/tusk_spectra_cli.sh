#!/bin/sh
# tusk_spectra_cli.sh - tusk-spectra as an analyst runs it on files from
# `tusk-adf gen`: summary.csv and the spectra are written, and their counts
# add up to the frames and hits fed in (data:psa frames for singles, both
# standalone and inside event:data:psa composites; gammas of data:tracked
# frames for tracked); frames of other types are reported; --help; bad
# settings exit 2 naming the key; missing and corrupt files exit 1 naming
# the file. Then the spectra actor in tusk-emulate gives the same
# summary.csv as tusk-spectra, and with two instances each writes
# out/instance-N, together counting every frame once.
#
# Environment (set by Makefile.am's AM_TESTS_ENVIRONMENT): top_builddir,
# top_srcdir, abs_top_builddir.
set -eu

top_builddir=${top_builddir:-.}
name=tusk_spectra_cli
tool=$top_builddir/tusk-spectra
# shellcheck source=tests/cli_lib.sh
. "${abs_top_srcdir:-${top_srcdir:-..}}/tests/cli_lib.sh"
b=$(cd "$top_builddir" && pwd)
adf=$b/tusk-adf
seed=${TUSK_TEST_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
echo "$name: seed $seed (TUSK_TEST_SEED=$seed replays it)"

# Sum of the counts column of a spectrum CSV (header skipped).
csv_sum() { awk -F, 'NR > 1 { s += $2 } END { printf "%d\n", s }' "$1"; }
# A column of summary.csv for a spectrum's first row.
summary_field() { # file spectrum column
    awk -F, -v s="$2" -v c="$3" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) col = i; next }
        $1 == s { print $col; exit }' "$1"
}
# Frames of a type, from tusk-adf stats: top-level, then inside composites.
stats_frames() { awk -v t="$2" '$1 == t { print $2; exit }' "$1"; }
stats_in_composite() { awk -v t="$2" '$1 == t { print $3; exit }' "$1"; }

step "--help, no file, bad settings"
run "$tool" --help
expect_status 0 "--help"
expect_in out "usage: tusk-spectra [--set key=value ...] [--out DIR] FILE.adf ..." "--help"
expect_in out "peak_window_kev" "--help"
run "$tool"
expect_status 2 "no arguments"
expect_in err "usage: tusk-spectra" "no arguments"
run "$tool" --out "$tmp/nofile"
expect_status 2 "no file"
expect_in err "no input file" "no file"
run "$tool" --set bin_kev=abc x.adf
expect_status 2 "bad bin_kev"
expect_in err "'bin_kev': 'abc' is not a number" "bad bin_kev"
run "$tool" --set colour=red x.adf
expect_status 2 "unknown setting"
expect_in err "unknown setting 'colour'" "unknown setting"
run "$tool" --set lines=4095 x.adf
expect_status 2 "line out of range"
expect_in err "'lines': 4095 keV" "line out of range"

events=$((200 + seed % 800))
step "data:psa frames ($events events): singles and addback count every frame"
run "$adf" gen -n "$events" --seed "$seed" --type psa -o "$tmp/psa.adf"
expect_status 0 "tusk-adf gen"
"$adf" stats "$tmp/psa.adf" >"$tmp/psa.stats"
psa=$(stats_frames "$tmp/psa.stats" data:psa)
if [ -z "$psa" ] || [ "$psa" -lt "$events" ]; then fail "tusk-adf stats: '$psa' data:psa frames"; fi
run "$tool" --set threshold_kev=0 --set "lines=1173.2 1332.5" --set plot=no --out "$tmp/psa" "$tmp/psa.adf"
expect_status 0 "tusk-spectra"
expect_in out "$psa data:psa (standalone or in 0 event:data:psa composites)" "tusk-spectra"
expect_in out "written: $tmp/psa/" "tusk-spectra"
expect_in out "emitted gammas: not available" "tusk-spectra"
for f in core singles addback tracked truth summary; do
    [ -s "$tmp/psa/$f.csv" ] || fail "no $f.csv"
done
[ ! -e "$tmp/psa/spectra.png" ] || fail "plot=no drew a picture"
head -n 1 "$tmp/psa/summary.csv" | grep -qx 'spectrum,line_kev,position_kev,fwhm_kev,area,emitted,efficiency,peak_to_total,total_counts' ||
    fail "summary.csv header: $(head -n 1 "$tmp/psa/summary.csv")"
[ "$(csv_sum "$tmp/psa/singles.csv")" = "$psa" ] || fail "singles.csv counts $(csv_sum "$tmp/psa/singles.csv"), fed $psa"
total=$(summary_field "$tmp/psa/summary.csv" singles total_counts)
[ "$total" = "$psa" ] || fail "summary.csv: singles total_counts $total, fed $psa data:psa frames"
# Each event's 1-3 crystals form at most that many clusters, at least one.
ab=$(summary_field "$tmp/psa/summary.csv" addback total_counts)
if [ "$ab" -lt "$events" ] || [ "$ab" -gt "$psa" ]; then fail "addback total_counts $ab outside [$events, $psa]"; fi
# The same with addback_group = 1000 (all of tusk-adf gen's 180 crystals one cluster): one count per event.
run "$tool" --set threshold_kev=0 --set addback_group=1000 --set plot=no --out "$tmp/psa1" "$tmp/psa.adf"
expect_status 0 "addback_group=1000"
[ "$(csv_sum "$tmp/psa1/addback.csv")" = "$events" ] || fail "addback_group=1000: $(csv_sum "$tmp/psa1/addback.csv") counts for $events events"
# Lines: rows for singles and addback (no tracked frames), efficiency not available.
[ "$(grep -c '^singles,' "$tmp/psa/summary.csv")" = 2 ] || fail "summary.csv: not 2 singles rows"
[ "$(grep -c '^tracked,' "$tmp/psa/summary.csv")" = 0 ] || fail "summary.csv: tracked rows without tracked frames"
[ -z "$(summary_field "$tmp/psa/summary.csv" singles efficiency)" ] || fail "an efficiency without emitted counts"

step "mixed frames: composites, tracked; data:crystal reported as ignored; pictures"
run "$adf" gen -n 300 --seed "$seed" -o "$tmp/mixed.adf"
expect_status 0 "tusk-adf gen mixed"
"$adf" stats "$tmp/mixed.adf" >"$tmp/mixed.stats"
standalone=$(stats_frames "$tmp/mixed.stats" data:psa)
inside=$(stats_in_composite "$tmp/mixed.stats" data:psa)
crystal=$(stats_frames "$tmp/mixed.stats" data:crystal)
run "$tool" --set threshold_kev=0 --set "lines=1173.2 1332.5" --set emitted=1000 --out "$tmp/mixed" "$tmp/mixed.adf"
expect_status 0 "tusk-spectra mixed"
expect_in out "ignored: $crystal frames of other types: data:crystal $crystal" "tusk-spectra mixed"
[ "$(csv_sum "$tmp/mixed/singles.csv")" = $((standalone + inside)) ] ||
    fail "mixed: singles $(csv_sum "$tmp/mixed/singles.csv"), fed $standalone + $inside data:psa"
# tusk-adf gen writes one tracked gamma per crystal of the event.
[ "$(csv_sum "$tmp/mixed/tracked.csv")" = "$standalone" ] ||
    fail "mixed: tracked $(csv_sum "$tmp/mixed/tracked.csv"), expected $standalone gammas"
[ "$(summary_field "$tmp/mixed/summary.csv" tracked total_counts)" = "$standalone" ] || fail "mixed: tracked total_counts"
[ -n "$(summary_field "$tmp/mixed/summary.csv" tracked efficiency)" ] || fail "mixed: no efficiency with emitted=1000"
if command -v gnuplot >/dev/null 2>&1 || [ -n "${TUSK_GNUPLOT:-}" ]; then
    for f in spectra.png lines.png spectra.gp spectra.dat lines.gp; do
        [ -s "$tmp/mixed/$f" ] || fail "mixed: no $f"
    done
else
    echo "$name: no gnuplot, pictures not checked (install gnuplot-nox)"
fi
run env TUSK_GNUPLOT=/nonexistent/gnuplot "$tool" --out "$tmp/nognuplot" "$tmp/psa.adf"
expect_status 1 "missing gnuplot"
expect_in err "gnuplot not found" "missing gnuplot"
expect_in err "$tmp/nognuplot/spectra.gp" "missing gnuplot"

step "missing and corrupt files are named"
run "$tool" --set plot=no --out "$tmp/x" "$tmp/psa.adf" "$tmp/nothere.adf"
expect_status 1 "missing file"
expect_in err "$tmp/nothere.adf" "missing file"
size=$(wc -c <"$tmp/psa.adf")
head -c $((size - 7)) "$tmp/psa.adf" >"$tmp/cut.adf"
run "$tool" --set plot=no --out "$tmp/x" "$tmp/cut.adf"
expect_status 1 "truncated file"
expect_in err "$tmp/cut.adf" "truncated file"
expect_in err "offset" "truncated file"
# A data:psa frame whose hit count disagrees with its length: the second
# frame's n_hits (crystal header bytes 22-23) set to 63.
first=$(od -An -N4 -tu4 "$tmp/psa.adf" | tr -d ' ')
cp "$tmp/psa.adf" "$tmp/bad.adf"
printf '\077\000' | dd of="$tmp/bad.adf" bs=1 seek=$((first + 20 + 22)) conv=notrunc 2>/dev/null
run "$tool" --set plot=no --out "$tmp/x" "$tmp/bad.adf"
expect_status 1 "corrupt frame"
expect_in err "$tmp/bad.adf: offset $first: data:psa frame does not decode" "corrupt frame"

step "the spectra actor in tusk-emulate: the same summary.csv as tusk-spectra"
cat >"$tmp/chain.xml" <<EOF
<configuration>
  <producer>
    <name>reader</name>
    <binary_code>file_producer</binary_code>
    <size>65536</size>
    <parameter name="file">$tmp/mixed.adf</parameter>
  </producer>
  <consumer>
    <name>spectra</name>
    <binary_code>spectra</binary_code>
    <data_source>reader</data_source>
    <parameter name="lines">1173.2 1332.5</parameter>
    <parameter name="threshold_kev">0</parameter>
    <parameter name="emitted">1000</parameter>
    <parameter name="plot">no</parameter>
    <parameter name="out">$tmp/actor</parameter>
  </consumer>
</configuration>
EOF
run "$b/tusk-emulate" --actor-path "$b/actors/.libs" "$tmp/chain.xml"
expect_status 0 "tusk-emulate"
expect_in out "spectra spectra[0]: files in $tmp/actor/" "tusk-emulate"
cmp "$tmp/actor/summary.csv" "$tmp/mixed/summary.csv" || fail "the actor's summary.csv differs from tusk-spectra's"
cmp "$tmp/actor/core.csv" "$tmp/mixed/core.csv" || fail "the actor's core.csv differs from tusk-spectra's"

sed -e 's|<consumer>|<consumer instances="2">|' -e "s|$tmp/actor|$tmp/actor2|" "$tmp/chain.xml" >"$tmp/chain2.xml"
run "$b/tusk-emulate" --actor-path "$b/actors/.libs" "$tmp/chain2.xml"
expect_status 0 "tusk-emulate, 2 instances"
n0=$(csv_sum "$tmp/actor2/instance-0/singles.csv")
n1=$(csv_sum "$tmp/actor2/instance-1/singles.csv")
[ $((n0 + n1)) = $((standalone + inside)) ] || fail "2 instances: singles $n0 + $n1, fed $standalone + $inside"

sed -e 's|name="lines">1173.2 1332.5|name="lines">1173.2 x|' "$tmp/chain.xml" >"$tmp/bad.xml"
run "$b/tusk-emulate" --actor-path "$b/actors/.libs" "$tmp/bad.xml"
[ "$rc" -ne 0 ] || fail "a bad parameter was accepted"
expect_in both "'lines': 'x' is not a number" "bad parameter"

step "--version, an unknown command and option (base/cli.h)"
cli_conventions "$tool" tusk-spectra

echo "$name: PASS"
