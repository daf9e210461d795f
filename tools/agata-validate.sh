#!/bin/sh
# agata-validate.sh - the AGATA chain and its parts against the
# simulation's truth and against AGATA's published figures
# (docs/validation.md, BENCHMARKS.md).
#
#   tools/agata-validate.sh [OPTIONS]
#     --mode M           what to run (chain):
#                          chain    config/agata-demo.xml in the emulator
#                                   (sim -> psa x2 -> builder -> tracker ->
#                                   spectra): the spectra's peak table
#                          tracked  tusk-sim run -> tusk-track (--points,
#                                   truth by default) -> tusk-spectra: the
#                                   peak table of tracking alone, no PSA
#                          losses   tusk-sim run -> tusk-track losses: the
#                                   full-energy gammas the ideal tracker
#                                   (truth points) recovers and where it
#                                   loses the others, by cause (--set
#                                   applies; --source line: that line's)
#                          ideal    tusk-sim efficiency: per gamma line the
#                                   fully absorbed fraction and the peak-
#                                   to-total with perfect tracking
#                          segments tusk-sim run without noise or smearing
#                                   -> tusk-sim check: hit segments whose
#                                   energy and trace disagree, by ring
#                          geometry tusk-sim info: the array (crystals,
#                                   germanium, coverage)
#     --build DIR        tusk's build folder (default ./build)
#     --source S         co60 (lines 1173.2, 1332.5), m30 (30 lines,
#                        80-2600 keV) or line (one line, --energy) (co60)
#     --energy E         keV, for --source line (1000)
#     --array FILE       array configuration (config/array-demonstrator.conf)
#     --basis FILE       signal basis (config/crystal-coarse.tbs)
#     --rayleigh R       form_factor or thomson (the simulation's default)
#     --points P         tracker input: psa, truth (ideal: every true
#                        interaction point) or truth_segments (chain: psa,
#                        tracked: truth)
#     --decays N         decays to simulate (200000)
#     --seed S           the simulation's seed (1)
#     --addback-group N  crystals per add-back cluster (3: triples)
#     --set KEY=VALUE    a tracking setting (repeatable); with truth points
#                        (--points truth, and --mode losses) the tracker's
#                        preset is exact (exact points' position widths and
#                        recombination: tracking/README.md, "Presets"),
#                        said on standard error and in the rows' label;
#                        --set preset=psa for the PSA's (the defaults)
#     --out DIR          where the run's files go (default: a new folder)
#
# chain and tracked print "label,spectrum,line_kev,..." rows: summary.csv
# with the label "source/points" in front; with --source m30 also a row
# "all" per spectrum: the 30 lines' areas summed over their emitted
# gammas. ideal prints "label,line_kev,emitted,full,any,efficiency,...",
# segments tusk-sim check's table, geometry the array's description.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=$top/build source=co60 array=$top/config/array-demonstrator.conf basis=$top/config/crystal-coarse.tbs
mode=chain points="" decays=200000 group=3 out="" sets="" energy=1000 rayleigh="" seed=1
while [ $# -gt 0 ]; do
    case $1 in
    --mode) mode=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --source) source=$2; shift 2 ;;
    --energy) energy=$2; shift 2 ;;
    --array) array=$2; shift 2 ;;
    --basis) basis=$2; shift 2 ;;
    --rayleigh) rayleigh=$2; shift 2 ;;
    --points) points=$2; shift 2 ;;
    --decays) decays=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --addback-group) group=$2; shift 2 ;;
    --set) sets="$sets<parameter name=\"${2%%=*}\">${2#*=}</parameter>"; track_sets="${track_sets:-} --set $2"; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) sed -n '2,40p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
    esac
done
case $mode in chain | tracked | losses | ideal | segments | geometry) ;; *) echo "agata-validate: --mode chain, tracked, losses, ideal, segments or geometry" >&2; exit 2 ;; esac
[ -n "$points" ] || case $mode in tracked | losses) points=truth ;; *) points=psa ;; esac
[ "$mode" != losses ] || points=truth # tusk-track losses tracks every true point
# The tracker's preset: exact for exact (truth) points unless --set says one.
preset=""
case " ${track_sets:-} " in
*" --set preset="*) preset=$(echo "$track_sets" | sed -n 's/.*--set preset=\([^ ]*\).*/\1/p') ;;
*) if [ "$points" = truth ]; then
       preset=exact
       sets="<parameter name=\"preset\">exact</parameter>$sets"
       track_sets="--set preset=exact ${track_sets:-}"
   fi ;;
esac
simsets=""
case $source in
co60) conf=$top/config/sim-co60.conf lines="1173.2 1332.5" ;;
m30) conf=$top/config/sim-m30.conf
     lines=$(awk 'BEGIN { for (i = 0; i < 30; i++) printf "%s%.3f", i ? " " : "", 80 + 2520 * i / 29 }') ;;
line) conf=$top/config/sim-co60.conf lines=$energy simsets="--set source=line --set energy=$energy" ;;
*) echo "agata-validate: --source co60, m30 or line" >&2; exit 2 ;;
esac
[ -z "$rayleigh" ] || simsets="$simsets --set rayleigh=$rayleigh"
for f in "$array" "$basis"; do
    [ -f "$f" ] || { echo "agata-validate: $f: no such file" >&2; exit 1; }
done
[ -n "$out" ] || out=$(mktemp -d "${TMPDIR:-/tmp}/agata-validate.XXXXXX")
mkdir -p "$out"
export TUSK_ACTOR_PATH="$build/actors/.libs"
sim="$build/tusk-sim"
# shellcheck disable=SC2086 # simsets are separate words
simargs="$conf --set basis=$basis --set array=$array --events $decays --seed $seed $simsets"
label="$source/$points"
case $mode in chain | tracked | losses)
    if [ -n "$preset" ]; then
        label="$label preset $preset"
        echo "agata-validate: $points points: tracking preset $preset (tracking/README.md, \"Presets\")" >&2
    fi ;;
esac

# summary.csv with the label in front, and the m30 "all" rows.
peak_table() {
    awk -F, -v l="$1" -v m30="$([ "$source" = m30 ] && echo 1 || echo 0)" '
        NR == 1 { print "label," $0; next }
        { print l "," $0; area[$1] += $5; emitted[$1] += $6; pt[$1] = $8; total[$1] = $9 }
        END { if (m30) for (s in area)
                  printf "%s,%s,all,,,%.1f,%.1f,%.6f,%.6f,%s\n", l, s, area[s], emitted[s],
                         (emitted[s] > 0 ? area[s] / emitted[s] : 0), pt[s], total[s] }' "$2"
}

case $mode in
geometry)
    # shellcheck disable=SC2086
    "$sim" info $simargs | sed -n 's/^\(array\|germanium\): /\1: /p'
    exit 0 ;;
ideal)
    # shellcheck disable=SC2086
    "$sim" efficiency $simargs -q >"$out/efficiency.csv" 2>"$out/log.txt" || { cat "$out/log.txt" >&2; exit 1; }
    awk -v l="$source/ideal" 'NR == 1 { print "label," $0; next } { print l "," $0 }' "$out/efficiency.csv"
    exit 0 ;;
segments)
    # shellcheck disable=SC2086
    "$sim" run $simargs --set noise_kev=0 --set fwhm_0=0 --set fwhm_1332=0 -q -o "$out/quiet.adf" 2>"$out/log.txt" ||
        { cat "$out/log.txt" >&2; exit 1; }
    "$sim" check "$out/quiet.adf"
    exit 0 ;;
losses)
    # shellcheck disable=SC2086
    "$sim" run $simargs -q -o "$out/sim.adf" 2>"$out/log.txt" || { cat "$out/log.txt" >&2; exit 1; }
    # shellcheck disable=SC2086
    "$build/tusk-track" losses "$out/sim.adf" --array "$array" $([ "$source" = line ] && echo "--energy $energy") \
        -q ${track_sets:-} >"$out/losses.csv" 2>>"$out/log.txt" || { cat "$out/log.txt" >&2; exit 1; }
    rm -f "$out/sim.adf"
    awk -v l="$source/truth${preset:+ preset $preset}" 'NR == 1 { print "label," $0; next } { print l "," $0 }' "$out/losses.csv"
    exit 0 ;;
tracked)
    # shellcheck disable=SC2086
    "$sim" run $simargs -q -o "$out/sim.adf" 2>"$out/log.txt" || { cat "$out/log.txt" >&2; exit 1; }
    # shellcheck disable=SC2086
    "$build/tusk-track" run "$out/sim.adf" -o "$out/tracked.adf" --array "$array" --points "$points" -q ${track_sets:-} \
        2>>"$out/log.txt" || { cat "$out/log.txt" >&2; exit 1; }
    "$build/tusk-spectra" --set "lines=$lines" --set plot=no --set "addback_group=$group" --out "$out/spectra" \
        "$out/tracked.adf" >>"$out/log.txt" 2>&1 || { cat "$out/log.txt" >&2; exit 1; }
    peak_table "$label" "$out/spectra/summary.csv"
    exit 0 ;;
esac

# The chain: the topology's own paths first, then the settings that name files.
sed -e "s|\"config/crystal-coarse.tbs\"|\"$basis\"|" \
    -e "s|>config/crystal-coarse.tbs<|>$basis<|" \
    -e "s|>config/array-demonstrator.conf<|>$array<|" \
    -e "s|>config/sim-co60.conf<|>$conf<|" \
    -e "s|<parameter name=\"events\">[0-9]*</parameter>|<parameter name=\"events\">$decays</parameter><parameter name=\"seed\">$seed</parameter><parameter name=\"basis\">$basis</parameter><parameter name=\"array\">$array</parameter>$( [ "$source" = line ] && echo "<parameter name=\"source\">line</parameter><parameter name=\"energy\">$energy</parameter>" )$( [ -n "$rayleigh" ] && echo "<parameter name=\"rayleigh\">$rayleigh</parameter>" )|" \
    -e "s|<parameter name=\"points\">psa</parameter>|<parameter name=\"points\">$points</parameter>$sets|" \
    -e "s|<parameter name=\"out\">spectra</parameter>|<parameter name=\"out\">$out/spectra</parameter><parameter name=\"addback_group\">$group</parameter>|" \
    -e "s|<parameter name=\"lines\">[^<]*</parameter>|<parameter name=\"lines\">$lines</parameter>|" \
    "$top/config/agata-demo.xml" >"$out/chain.xml"
"$build/tusk-emulate" -q "$out/chain.xml" >"$out/log.txt" 2>&1 || {
    cat "$out/log.txt" >&2
    exit 1
}
peak_table "$label" "$out/spectra/summary.csv"
