#!/bin/sh
# agata-validate.sh - tracking against the simulation's truth: runs
# config/agata-demo.xml (sim -> psa x2 -> builder -> tracker -> spectra)
# in the emulator with another source, array, basis or tracker input,
# and prints the spectra's peak table (summary.csv) with a label.
#
#   tools/agata-validate.sh [OPTIONS]
#     --build DIR        tusk's build folder (default ./build)
#     --source co60|m30  60Co (lines 1173.2, 1332.5) or multiplicity 30
#                        (30 lines, 80-2600 keV) (co60)
#     --array FILE       array configuration (config/array-demonstrator.conf)
#     --basis FILE       signal basis (config/crystal-coarse.tbs)
#     --points P         tracker input: psa, truth (ideal: every true
#                        interaction point) or truth_segments (psa)
#     --decays N         decays to simulate (200000)
#     --addback-group N  crystals per add-back cluster (3: triples)
#     --set KEY=VALUE    a tracking setting (repeatable)
#     --out DIR          where the run's spectra go (default: a new folder)
#
# Prints "label,spectrum,line_kev,..." rows: summary.csv with the label
# "source/points" in front; with --source m30 also a row "all" per
# spectrum: the 30 lines' areas summed over their emitted gammas.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=$top/build source=co60 array=$top/config/array-demonstrator.conf basis=$top/config/crystal-coarse.tbs
points=psa decays=200000 group=3 out="" sets=""
while [ $# -gt 0 ]; do
    case $1 in
    --build) build=$2; shift 2 ;;
    --source) source=$2; shift 2 ;;
    --array) array=$2; shift 2 ;;
    --basis) basis=$2; shift 2 ;;
    --points) points=$2; shift 2 ;;
    --decays) decays=$2; shift 2 ;;
    --addback-group) group=$2; shift 2 ;;
    --set) sets="$sets<parameter name=\"${2%%=*}\">${2#*=}</parameter>"; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
    esac
done
case $source in
co60) conf=$top/config/sim-co60.conf lines="1173.2 1332.5" ;;
m30) conf=$top/config/sim-m30.conf
     lines=$(awk 'BEGIN { for (i = 0; i < 30; i++) printf "%s%.3f", i ? " " : "", 80 + 2520 * i / 29 }') ;;
*) echo "agata-validate: --source co60 or m30" >&2; exit 2 ;;
esac
for f in "$array" "$basis"; do
    [ -f "$f" ] || { echo "agata-validate: $f: no such file" >&2; exit 1; }
done
[ -n "$out" ] || out=$(mktemp -d "${TMPDIR:-/tmp}/agata-validate.XXXXXX")
mkdir -p "$out"
export TUSK_ACTOR_PATH="$build/actors/.libs"
# The topology's own paths first, then the settings that name files.
sed -e "s|\"config/crystal-coarse.tbs\"|\"$basis\"|" \
    -e "s|>config/crystal-coarse.tbs<|>$basis<|" \
    -e "s|>config/array-demonstrator.conf<|>$array<|" \
    -e "s|>config/sim-co60.conf<|>$conf<|" \
    -e "s|<parameter name=\"events\">[0-9]*</parameter>|<parameter name=\"events\">$decays</parameter><parameter name=\"basis\">$basis</parameter><parameter name=\"array\">$array</parameter>|" \
    -e "s|<parameter name=\"points\">psa</parameter>|<parameter name=\"points\">$points</parameter>$sets|" \
    -e "s|<parameter name=\"out\">spectra</parameter>|<parameter name=\"out\">$out/spectra</parameter><parameter name=\"addback_group\">$group</parameter>|" \
    -e "s|<parameter name=\"lines\">[^<]*</parameter>|<parameter name=\"lines\">$lines</parameter>|" \
    "$top/config/agata-demo.xml" >"$out/chain.xml"
"$build/tusk-emulate" -q "$out/chain.xml" >"$out/log.txt" 2>&1 || {
    cat "$out/log.txt" >&2
    exit 1
}
label="$source/$points"
awk -F, -v l="$label" -v m30="$([ "$source" = m30 ] && echo 1 || echo 0)" '
    NR == 1 { print "label," $0; next }
    { print l "," $0; area[$1] += $5; emitted[$1] += $6; pt[$1] = $8; total[$1] = $9 }
    END { if (m30) for (s in area)
              printf "%s,%s,all,,,%.1f,%.1f,%.6f,%.6f,%s\n", l, s, area[s], emitted[s],
                     (emitted[s] > 0 ? area[s] / emitted[s] : 0), pt[s], total[s] }' "$out/spectra/summary.csv"
