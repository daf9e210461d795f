#!/bin/sh
# sts-validate.sh - the STS reconstruction's validation table (BENCHMARKS.md):
# simulated timeslices (tusk-sts sim) of several sizes, each through the
# hitfinder stage (tusk-emulate --only hitfinder, config/sts-demo.xml)
# with the reference (the original cluster finder), fast and (with a
# device) opencl, then tusk-sts qa: per row the clusters the original and
# the parallel finder do not share, cluster efficiency and fakes per side,
# cluster residuals and pulls, hit efficiency, ghosts, hit residuals and
# pulls; and whether opencl's output equals fast's byte for byte but for the
# backend byte of each module's two frames.
#
#   tools/sts-validate.sh [OPTIONS]
#     --build DIR        tusk's build folder (default ./build)
#     --device SETTING   the OpenCL device (default $TUSK_CL_DEVICE, else any); none: no OpenCL rows
#     --collisions LIST  collisions a timeslice, space-separated (default "100 500")
#     --timeslices N     timeslices of each size (1)
#     --seed S           simulation seed (1)
#     --out DIR          where the files go (default: a new folder, removed)
#
# Prints the table as Markdown rows.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=$top/build device=${TUSK_CL_DEVICE:-any} sizes="100 500" timeslices=1 seed=1 out=""
while [ $# -gt 0 ]; do
    case $1 in
    --build) build=$2; shift 2 ;;
    --device) device=$2; shift 2 ;;
    --collisions) sizes=$2; shift 2 ;;
    --timeslices) timeslices=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
    esac
done
build=$(cd "$build" && pwd)
TUSK_ACTOR_PATH=${TUSK_ACTOR_PATH:-$build/actors/.libs}
export TUSK_ACTOR_PATH
if [ -z "$out" ]; then
    out=$(mktemp -d "${TMPDIR:-/tmp}/sts-validate.XXXXXX")
    trap 'rm -rf "$out"' EXIT
fi
mkdir -p "$out"
backends="reference fast"
[ "$device" = none ] || backends="$backends opencl"
echo "| collisions | digis | backend | clusters only the original / only the parallel finder makes | cluster efficiency F / B | fake clusters F / B | cluster residual F / B (µm) | cluster pull F / B | hit efficiency | ghost hits | hit residual x / y (µm), t (ns) | hit pull x / y / t | frames = fast's |"
echo "| ---: | ---: | --- | --- | --- | --- | --- | --- | ---: | ---: | --- | --- | --- |"
for n in $sizes; do
    "$build/tusk-sts" sim --collisions "$n" --timeslices "$timeslices" --seed "$seed" -q -o "$out/ts-$n.adf"
    for backend in $backends; do
        sed -e "s|<parameter name=\"backend\">fast</parameter>|<parameter name=\"backend\">$backend</parameter><parameter name=\"device\">$device</parameter>|" \
            -e 's|<size>8388608</size>|<size>268435456</size>|;s|<size>16777216</size>|<size>268435456</size>|' \
            "$top/config/sts-demo.xml" >"$out/stage.xml"
        run=$out/ts-$n-$backend
        "$build/tusk-emulate" -q --only hitfinder --input "$out/ts-$n.adf" --output "$run.adf" "$out/stage.xml" \
            2>"$run.log" || { cat "$run.log" >&2; exit 1; }
        "$build/tusk-sts" qa --out "$out/qa-$backend" "ts$n=$run.adf" >"$run.txt"
        same=-
        if [ "$backend" = fast ]; then
            same=yes
        elif [ "$backend" = opencl ]; then
            # byte for byte but the backend byte of each module's two frames (2: fast, 3: opencl)
            modules=$(awk -F, 'NR == 2 { print $4 }' "$out/qa-$backend/ts$n/summary.csv")
            same=$(cmp -l "$out/ts-$n-fast.adf" "$run.adf" 2>/dev/null | awk -v want=$((2 * modules)) '
                $2 == 2 && $3 == 3 { backend++; next } { other++ }
                END { print (other == 0 && backend == want) ? "yes" : "NO" }')
        fi
        awk -F, -v n="$n" -v b="$backend" -v same="$same" -v pitch=58 '
            FNR == 1 { next }
            FILENAME ~ /summary.csv$/ { digis = $5; oo = 100 * $10; op = 100 * $11; next }
            $2 == -1 {
                printf "| %s | %d | %s | %.4f %% / %.4f %% | %.2f %% / %.2f %% | %.2f %% / %.2f %% | %.1f / %.1f | %.3f / %.3f | %.2f %% | %.1f %% | %.1f / %.0f, %.2f | %.3f / %.3f / %.3f | %s |\n",
                    n, digis, b, oo, op, 100 * $11 / $4, 100 * $12 / $5, 100 * (1 - $9 / $7), 100 * (1 - $10 / $8),
                    $14 * pitch, $16 * pitch, $18, $20, 100 * $23 / $6, 100 * (1 - $22 / $21), $24, $25, $26, $27, $28, $29, same
            }' "$out/qa-$backend/ts$n/summary.csv" "$out/qa-$backend/ts$n/stations.csv"
    done
    rm -f "$out/ts-$n"-*.adf
done
