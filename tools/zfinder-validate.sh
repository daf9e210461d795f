#!/bin/sh
# zfinder-validate.sh - the z-finder's validation table (BENCHMARKS.md):
# the lowlum and highlum samples (tusk-zfinder sim), each through the
# zfinder stage (tusk-emulate --only zfinder, config/zfinder-demo.xml)
# in pair and triplet mode with the reference in double and float and
# OpenCL in float and double, then tusk-zfinder qa: per row |dz| against
# the truth and against the double-precision reference (mean +- standard
# deviation, Table 5.1's form), the fraction of RoIs within 1 mm of the
# truth, and |dz| over those.
#
#   tools/zfinder-validate.sh [OPTIONS]
#     --build DIR        tusk's build folder (default ./build)
#     --device SETTING   the OpenCL device (default $TUSK_CL_DEVICE, else any); none: no OpenCL rows
#     --rois-low N       lowlum RoIs (650, Table 4.2)
#     --rois-high N      highlum RoIs (1177, Table 4.2)
#     --seed S           simulation seed (1)
#     --set KEY=VALUE    a z-finder setting for every row (repeatable)
#     --out DIR          where the files go (default: a new folder, removed)
#
# Prints the table as Markdown rows.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=$top/build device=${TUSK_CL_DEVICE:-any} low=650 high=1177 seed=1 out="" sets="" qaset=""
while [ $# -gt 0 ]; do
    case $1 in
    --build) build=$2; shift 2 ;;
    --device) device=$2; shift 2 ;;
    --rois-low) low=$2; shift 2 ;;
    --rois-high) high=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --set) sets="$sets<parameter name=\"${2%%=*}\">${2#*=}</parameter>"; qaset="$qaset --set $2"; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
    esac
done
build=$(cd "$build" && pwd)
TUSK_ACTOR_PATH=${TUSK_ACTOR_PATH:-$build/actors/.libs}
export TUSK_ACTOR_PATH
if [ -z "$out" ]; then
    out=$(mktemp -d "${TMPDIR:-/tmp}/zfinder-validate.XXXXXX")
    trap 'rm -rf "$out"' EXIT
fi
mkdir -p "$out"
"$build/tusk-zfinder" sim --preset lowlum --rois "$low" --seed "$seed" -o "$out/lowlum.adf" >&2
"$build/tusk-zfinder" sim --preset highlum --rois "$high" --seed "$seed" -o "$out/highlum.adf" >&2
codes="reference:double reference:float"
[ "$device" = none ] || codes="$codes opencl:float opencl:double"
echo "| sample | mode | code | RoIs | with a vertex | \\|Δz\\| vs truth (mm) | \\|Δz\\| vs double reference (mm) | within 1 mm of truth | \\|Δz\\| of those (mm) |"
echo "| --- | --- | --- | ---: | ---: | --- | --- | ---: | --- |"
for sample in lowlum highlum; do
    for mode in pairs triplets; do
        for code in $codes; do
            backend=${code%:*} precision=${code#*:}
            sed -e "s|<parameter name=\"mode\">triplets</parameter>|<parameter name=\"mode\">$mode</parameter>|" \
                -e "s|<parameter name=\"backend\">fast</parameter>|<parameter name=\"backend\">$backend</parameter><parameter name=\"precision\">$precision</parameter><parameter name=\"device\">$device</parameter>$sets|" \
                "$top/config/zfinder-demo.xml" >"$out/stage.xml"
            run=$out/$sample-$mode-$backend-$precision
            "$build/tusk-emulate" -q --only zfinder --input "$out/$sample.adf" --output "$run.adf" "$out/stage.xml" \
                2>"$run.log" || { cat "$run.log" >&2; exit 1; }
            # shellcheck disable=SC2086 # qaset is a list of options
            "$build/tusk-zfinder" qa $qaset --out "$out/qa-$mode-$backend-$precision" "$sample=$run.adf" >/dev/null
            awk -F, -v s="$sample" 'NR == 2 {
                printf "| %s | %s | %s %s | %d | %d | %.3f ± %.3f | %.2g ± %.2g | %.1f %% | %.3f ± %.3f |\n",
                    s, $2, $4, $3, $5, $6, $7, $8, $10, $11, 100 * $13, $14, $15 }' \
                "$out/qa-$mode-$backend-$precision/$sample/summary.csv"
            rm -f "$run.adf"
        done
    done
done
