#!/bin/sh
# tpc-validate.sh - the TPC slice tracker's validation table (BENCHMARKS.md):
# the thesis's Table 9.1 in form. Simulated events (tusk-tpc sim) of the pp,
# non-central and central presets, each through the tracker stage
# (tusk-emulate --only tracker, config/tpc-demo.xml) with the reference,
# fast and (with a device) opencl, then tusk-tpc qa: per row the clusters,
# the slice tracks, the efficiency (all reconstructible particles, and the
# reference ones of p >= 1 GeV/c), the fake and clone rates, the Y and Z
# resolutions and the pulls of the five parameters (RMS and core width);
# and whether the backend's tracks equal the reference's track by track
# (tusk-tpc diff: bit for bit, every cluster).
#
#   tools/tpc-validate.sh [OPTIONS]
#     --build DIR        tusk's build folder (default ./build)
#     --device SETTING   the OpenCL device (default $TUSK_CL_DEVICE, else any); none: no OpenCL rows
#     --presets LIST     presets, space-separated (default "pp noncentral central")
#     --events N         events of each preset (1)
#     --seed S           simulation seed (1)
#     --out DIR          where the files go (default: a new folder, removed)
#
# Prints the table as Markdown rows.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=$top/build device=${TUSK_CL_DEVICE:-any} presets="pp noncentral central" events=1 seed=1 out=""
while [ $# -gt 0 ]; do
    case $1 in
    --build) build=$2; shift 2 ;;
    --device) device=$2; shift 2 ;;
    --presets) presets=$2; shift 2 ;;
    --events) events=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
    esac
done
build=$(cd "$build" && pwd)
TUSK_ACTOR_PATH=${TUSK_ACTOR_PATH:-$build/actors/.libs}
export TUSK_ACTOR_PATH
if [ -z "$out" ]; then
    out=$(mktemp -d "${TMPDIR:-/tmp}/tpc-validate.XXXXXX")
    trap 'rm -rf "$out"' EXIT
fi
mkdir -p "$out"
backends="reference fast"
[ "$device" = none ] || backends="$backends opencl"
echo "| event | backend | clusters | slice tracks | efficiency: all / reference (%) | fake (%) | clone (%) | resolution Y / Z (mm) | pull RMS Y / Z / sin(phi) / lambda / q/pT | pull core (same order) | tracks = reference's |"
echo "| --- | --- | ---: | ---: | --- | ---: | ---: | --- | --- | --- | --- |"
for p in $presets; do
    "$build/tusk-tpc" sim --preset "$p" --events "$events" --seed "$seed" -q -o "$out/$p.adf"
    for backend in $backends; do
        sed -e "s|<parameter name=\"backend\">fast</parameter>|<parameter name=\"backend\">$backend</parameter><parameter name=\"device\">$device</parameter>|" \
            -e 's|<parameter name="threads">1</parameter>|<parameter name="threads">0</parameter>|' \
            -e 's|<size>4194304</size>|<size>536870912</size>|' "$top/config/tpc-demo.xml" >"$out/stage.xml"
        run=$out/$p-$backend
        "$build/tusk-emulate" -q --only tracker --input "$out/$p.adf" --output "$run.adf" "$out/stage.xml" \
            2>"$run.log" || { cat "$run.log" >&2; exit 1; }
        "$build/tusk-tpc" qa --out "$out/qa-$backend" "$p=$run.adf" >"$run.txt"
        same=-
        if [ "$backend" != reference ]; then
            if "$build/tusk-tpc" diff "$out/$p-reference.adf" "$run.adf" >"$run.diff"; then
                same=yes
            else
                same="NO: $(cat "$run.diff")"
            fi
        fi
        # summary.csv: 5 clusters, 7 tracks, 17 efficiency, 18 reference efficiency, 19 fake, 20 clone,
        # 21 res_y, 22 res_z, 26-30 pull RMS, 32-36 pull core widths
        awk -F, -v p="$p" -v b="$backend" -v same="$same" 'NR == 2 {
            printf "| %s | %s | %d | %d | %.2f / %.2f | %.2f | %.2f | %.3f / %.3f | %.3f / %.3f / %.3f / %.3f / %.3f | %.3f / %.3f / %.3f / %.3f / %.3f | %s |\n",
                p, b, $5, $7, $17, $18, $19, $20, $21, $22, $26, $27, $28, $29, $30, $32, $33, $34, $35, $36, same }' \
            "$out/qa-$backend/$p/summary.csv"
    done
    rm -f "$out/$p"-*.adf
done
