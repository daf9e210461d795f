#!/bin/sh
# ut-validate.sh - the UT tracking's validation table (BENCHMARKS.md), the
# paper's Table 3 study: one simulated sample (tusk-ut sim), tracked for
# every configuration of sectors (1, 3, 5) and candidates (1, 2, 4, 8,
# 16) (tusk-emulate --only tracker, config/ut-demo.xml), then
# tusk-ut qa: efficiency and clone rate of long and VELO+UT tracks (also
# with p > 5 GeV), fake rate over all tracks, the momentum resolution;
# beside each row the paper's Table 3 figures. With a device, the 5/8 and
# 1/1 rows are tracked with OpenCL too and must give the same file as the
# fast backend but for the backend bytes.
#
#   tools/ut-validate.sh [OPTIONS]
#     --build DIR        tusk's build folder (default ./build)
#     --device SETTING   the OpenCL device of the check (default $TUSK_CL_DEVICE, else any); none: no check
#     --events N         events of the sample (1000, the paper's)
#     --seed S           simulation seed (1)
#     --backend B        the tracker's backend for the table (fast)
#     --set KEY=VALUE    a tracker setting for every row (repeatable)
#     --out DIR          where the files go (default: a new folder, removed)
#
# Prints the table as Markdown rows.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=$top/build device=${TUSK_CL_DEVICE:-any} events=1000 seed=1 backend=fast out="" sets="" qaset=""
while [ $# -gt 0 ]; do
    case $1 in
    --build) build=$2; shift 2 ;;
    --device) device=$2; shift 2 ;;
    --events) events=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --backend) backend=$2; shift 2 ;;
    --set) sets="$sets<parameter name=\"${2%%=*}\">${2#*=}</parameter>"; qaset="$qaset --set $2"; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
    esac
done
build=$(cd "$build" && pwd)
TUSK_ACTOR_PATH=${TUSK_ACTOR_PATH:-$build/actors/.libs}
export TUSK_ACTOR_PATH
if [ -z "$out" ]; then
    out=$(mktemp -d "${TMPDIR:-/tmp}/ut-validate.XXXXXX")
    trap 'rm -rf "$out"' EXIT
fi
mkdir -p "$out"
"$build/tusk-ut" sim --events "$events" --seed "$seed" -o "$out/sample.adf" >&2
# stage SECTORS CANDIDATES BACKEND EXTRA: the tracker on the sample, into $run.adf
stage() {
    sed -e "s|<parameter name=\"backend\">fast</parameter>|<parameter name=\"backend\">$3</parameter><parameter name=\"sectors\">$1</parameter><parameter name=\"candidates\">$2</parameter><parameter name=\"threads\">0</parameter>$4$sets|" \
        -e "s|<parameter name=\"threads\">1</parameter>||" \
        "$top/config/ut-demo.xml" >"$out/stage.xml"
    run=$out/$1-$2-$3
    "$build/tusk-emulate" -q --only tracker --input "$out/sample.adf" --output "$run.adf" "$out/stage.xml" \
        2>"$run.log" || { cat "$run.log" >&2; exit 1; }
}
# the paper's Table 3: sectors candidates long-eff long-clone up-eff up-clone fake
paper() {
    awk -v s="$1" -v c="$2" '$1 == s && $2 == c { printf "%s | %s | %s | %s | %s", $3, $4, $5, $6, $7 }' <<'TABLE3'
1 1 71.91 0.36 61.88 0.32 7.73
1 2 76.53 0.36 69.99 0.32 7.78
1 4 79.09 0.31 74.31 0.32 7.70
1 8 80.36 0.34 76.58 0.35 7.61
1 16 80.52 0.34 77.04 0.35 7.52
3 1 84.70 0.39 66.87 0.32 7.64
3 2 90.07 0.38 75.61 0.33 7.62
3 4 93.31 0.35 80.32 0.32 7.52
3 8 94.72 0.36 82.66 0.35 7.43
3 16 94.94 0.36 83.19 0.35 7.33
5 1 85.23 0.39 67.10 0.31 7.70
5 2 90.65 0.38 75.84 0.32 7.67
5 4 93.89 0.35 80.52 0.32 7.56
5 8 95.27 0.36 82.87 0.35 7.47
5 16 95.49 0.36 83.40 0.35 7.38
TABLE3
}
echo "| sectors | candidates | long eff. | long clone | long, p > 5 GeV | VELO+UT eff. | VELO+UT clone | VELO+UT, p > 5 GeV | fake | δp/p (68 %) | paper: long eff. | long clone | VELO+UT eff. | VELO+UT clone | fake |"
echo "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
for s in 1 3 5; do
    for c in 1 2 4 8 16; do
        stage $s $c "$backend" ""
        # shellcheck disable=SC2086 # qaset is a list of options
        "$build/tusk-ut" qa $qaset --set sectors=$s --set candidates=$c --out "$out/qa-$s-$c" \
            "minbias=$run.adf" >"$run.qa"
        # summary.csv: 11 long eff, 13 long clone rate, 16 long_p5 eff, 21 up eff, 23 up clone, 26 up_p5 eff,
        # 30 fake rate, 33 dp_core
        awk -F, -v p="$(paper $s $c)" 'NR == 2 {
            printf "| %s | %s | %.2f %% | %.2f %% | %.2f %% | %.2f %% | %.2f %% | %.2f %% | %.2f %% | %.3f | %s |\n",
                $3, $4, $11, $13, $16, $21, $23, $26, $30, $33, p }' "$out/qa-$s-$c/minbias/summary.csv"
        [ "$s-$c" = 5-8 ] || [ "$s-$c" = 1-1 ] || rm -f "$run.adf"
    done
done
if [ "$device" != none ]; then
    for sc in 5-8 1-1; do
        stage "${sc%-*}" "${sc#*-}" opencl "<parameter name=\"device\">$device</parameter>"
        ref=$out/$sc-$backend.adf
        n=$("$build/tusk-adf" dump "$ref" | grep -c "data:ut_tracks")
        d=$(cmp -l "$ref" "$run.adf" 2>&1 | wc -l)
        if [ "$d" -ne "$n" ]; then
            echo "ut-validate: $sc: opencl's file differs from $backend's in $d bytes, not the $n backend bytes" >&2
            exit 1
        fi
        echo "ut-validate: $sc: opencl on $device gave $backend's tracks for all $events events (the files differ only in the $n backend bytes)" >&2
    done
fi
