#!/usr/bin/env bash
# gpu-bench.sh OUTDIR SYSTEM... - the GPU machine's figures of BENCHMARKS.md,
# run on an installed tusk (tools/device-bundle.sh here, then on the GPU
# machine: source .device/device-env.sh; tools/gpu-bench.sh "$OUT" zfinder sts).
#
# For every system it writes OUTDIR/SYSTEM-*.txt: the kernel benchmark
# (tusk-bench, every backend in one run, with the device's own limit) and
# the actor inside running chains (tusk-run and tusk-emulate), GPU and CPU
# backends side by side (zfinder: their RoIs/s in zfinder-chains.txt).
# OUTDIR/machine.txt says what the machine is.
# The device is chosen by TUSK_GPU (default NVIDIA, the platform's name).
set -uo pipefail
TIMEFORMAT='wall %R s, cpu user %U s, sys %S s'
out=${1:?usage: gpu-bench.sh OUTDIR SYSTEM...}
shift
gpu=${TUSK_GPU:-NVIDIA}
share=$(dirname "$(command -v tusk-run)")/../share/tusk/config
work=$(mktemp -d)
mkdir -p "$out"

machine() {
    {
        date -u '+%Y-%m-%d %H:%M UTC'
        lscpu | grep -E '^(Model name|CPU\(s\)|Thread|Core|Socket)'
        nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv 2>&1
        tusk-cl which "$gpu" 2>&1
    } > "$out/machine.txt"
}

# chain NAME TOPOLOGY: tusk-run's report and summary, and tusk-emulate's.
chain() {
    local name=$1 topo=$2 dmon=
    # The GPU's own load while the chain runs (sm %, memory %), a line a second.
    if command -v nvidia-smi >/dev/null; then
        nvidia-smi dmon -s u -o T > "$out/$name-gpu-load.txt" 2>&1 &
        dmon=$!
    fi
    ( cd "$work" && time tusk-run --no-live --report "$out/$name-run.report" "$topo" ) > "$out/$name-run.txt" 2>&1
    echo "exit status $?" >> "$out/$name-run.txt"
    [ -n "$dmon" ] && kill "$dmon" 2>/dev/null
    ( cd "$work" && time tusk-emulate "$topo" ) > "$out/$name-emulate.txt" 2>&1
    echo "exit status $?" >> "$out/$name-emulate.txt"
}

# zf_long TOPOLOGY REPEAT FRAMES [SOURCE]: the chain for a long run:
# file_producer passes REPEAT times over the RoI file, and a null_consumer
# that expects FRAMES frames takes the place of the analysis (which refuses
# a RoI that comes twice), fed by SOURCE (zfinder).
zf_long() {
    awk -v repeat="$2" -v frames="$3" -v source="${4:-zfinder}" '
        /<parameter name="file">/ { print; printf "    <parameter name=\"repeat\">%s</parameter>\n", repeat; next }
        /<consumer>/ { skip = 1 }
        skip && /<\/consumer>/ {
            skip = 0
            print "  <consumer>"
            print "    <name>sink</name>"
            print "    <binary_code>null_consumer</binary_code>"
            printf "    <data_source>%s</data_source>\n", source
            printf "    <parameter name=\"expect_frames\">%s</parameter>\n", frames
            print "  </consumer>"
            next
        }
        !skip' "$1"
}

# zf_rate FILE RUNNER ROIS: "seconds RoIs/s" of a chain run: over tusk-run's
# run time (RUNNER run) or over the emulator's wall time (emulate); "failed"
# when the run did not end well (chain's "exit status N" line, where there
# is one, not 0; a failure in the runner's report).
zf_rate() {
    local secs
    if grep -q '^exit status ' "$1" && ! grep -q '^exit status 0$' "$1"; then
        echo "failed -"
        return
    fi
    if [ "$2" = run ]; then
        secs=$(grep -o '^run time [0-9.]* s' "$1" | awk '{ print $3 }')
        grep -qE 'failed|stopped' "$1" && secs=
    else
        secs=$(grep -o '^wall [0-9.]* s' "$1" | awk '{ print $2 }')
        grep -q 'failed' "$1" && secs=
    fi
    [ -n "$secs" ] || { echo "failed -"; return; }
    awk -v r="$3" -v s="$secs" 'BEGIN { printf "%.2f %.0f\n", s, (s > 0 ? r / s : 0) }'
}

zfinder() {
    local rois=2000 target=${ZF_CHAIN_SECONDS:-12} summary=$out/zfinder-chains.txt
    tusk-bench zfinder --device "$gpu" --rois-high 1177 > "$out/zfinder-bench.txt" 2>&1
    tusk-bench zfinder --device "$gpu" --rois-high 1177 --precision double --mode triplets \
        > "$out/zfinder-bench-double.txt" 2>&1
    ( cd "$work" && tusk-zfinder sim --preset highlum --rois $rois -q -o zfinder-highlum.adf )
    # Each chain runs first once over the file in the emulator, with the
    # analysis (NAME-pass1-emulate.txt: its table, against the truth). Then,
    # for a steady rate, it replays the file `repeat` times, enough for
    # ZF_CHAIN_SECONDS (12) of run time: start-up (processes, links, the
    # kernel build) is then a small part; the first pass's time still holds
    # it, so the long run's steady part lasts at least about that long.
    # RoIs/s = RoIs / run time (tusk-run) or / wall time (tusk-emulate).
    printf '%-10s %-8s %-8s %7s %9s %9s %8s\n' mode backend runner repeat RoIs seconds RoIs/s > "$summary"
    for mode in pairs triplets; do
        for backend in opencl fast; do
            local name=zfinder-$mode-$backend repeat t1 frames
            sed -e "s/name=\"mode\">triplets/name=\"mode\">$mode/g" \
                -e "s/name=\"backend\">opencl/name=\"backend\">$backend/" \
                -e "s/name=\"device\">gpu/name=\"device\">$gpu/" \
                "$share/zfinder-gpu.xml" > "$work/zf-$mode-$backend.xml"
            ( cd "$work" && time tusk-emulate "$work/zf-$mode-$backend.xml" ) > "$out/$name-pass1-emulate.txt" 2>&1
            t1=$(zf_rate "$out/$name-pass1-emulate.txt" emulate $rois | awk '{ print $1 }')
            frames=$(awk '$1 == "qa" && $2 == "consumer" { print $7 }' "$out/$name-pass1-emulate.txt")
            if [ "$t1" = failed ] || [ -z "$frames" ]; then
                printf '%-10s %-8s %-8s %7s %9s %9s %8s\n' "$mode" "$backend" pass1 1 $rois failed - >> "$summary"
                continue
            fi
            repeat=$(awk -v t="$t1" -v T="$target" 'BEGIN { r = t > 0 ? int(T / t) + 1 : 1; print (r > 500 ? 500 : r) }')
            zf_long "$work/zf-$mode-$backend.xml" "$repeat" $((frames * repeat)) > "$work/$name.xml"
            chain "$name" "$work/$name.xml"
            for runner in run emulate; do
                printf '%-10s %-8s %-8s %7s %9s %9s %8s\n' "$mode" "$backend" "$runner" "$repeat" $((rois * repeat)) \
                    $(zf_rate "$out/$name-$runner.txt" "$runner" $((rois * repeat))) >> "$summary"
            done
        done
    done
}

# sts: tusk-bench sts over the thesis's sweep (2 M to 30 M digis a
# timeslice; reference, fast, OpenCL with its steps and the device's
# memory bandwidth), once more with 1,024 work-items a work-group, then the
# actor in config/sts-gpu.xml: 4 timeslices of 2,000 collisions replayed
# from a file through sts_hitfinder (opencl, then fast) to a null
# consumer; digis/s = digis / run time (tusk-run) or / wall time
# (tusk-emulate) in sts-chains.txt. About 4 minutes on the 16-core H200 host.
sts() {
    local summary=$out/sts-chains.txt timeslices=4 digis
    tusk-bench sts --device "$gpu" > "$out/sts-bench.txt" 2>&1
    tusk-bench sts --device "$gpu" --group-size 1024 --ref-runs 0 --collisions 500,2000 \
        > "$out/sts-bench-wg1024.txt" 2>&1
    ( cd "$work" && tusk-sts sim --collisions 2000 --timeslices $timeslices --set truth=no -o sts-2000.adf ) \
        > "$out/sts-sim.txt" 2>&1
    digis=$(grep -o '[0-9]* digis a timeslice' "$out/sts-sim.txt" | awk -v n=$timeslices '{ printf "%.0f", $1 * n }')
    printf '%-8s %-8s %12s %9s %12s\n' backend runner digis seconds digis/s > "$summary"
    for backend in opencl fast; do
        local name=sts-$backend
        sed -e "s/name=\"backend\">opencl/name=\"backend\">$backend/" \
            -e "s/name=\"device\">gpu/name=\"device\">$gpu/" \
            "$share/sts-gpu.xml" > "$work/$name.xml"
        chain "$name" "$work/$name.xml"
        for runner in run emulate; do
            printf '%-8s %-8s %12s %9s %12s\n' "$backend" "$runner" "$digis" \
                $(zf_rate "$out/$name-$runner.txt" "$runner" "$digis") >> "$summary"
        done
    done
}

machine
for sys in "$@"; do
    "$sys"
done
rm -rf "$work"
