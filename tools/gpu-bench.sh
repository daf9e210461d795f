#!/usr/bin/env bash
# gpu-bench.sh OUTDIR SYSTEM... - the GPU machine's figures of BENCHMARKS.md,
# run on an installed tusk (tools/device-bundle.sh here, then on the GPU
# machine: source .device/device-env.sh; tools/gpu-bench.sh "$OUT" zfinder sts ut tpc).
#
# For every system it writes OUTDIR/SYSTEM-*.txt: the kernel benchmark
# (tusk-bench, every backend in one run, with the device's own limit) and
# the actor inside running chains (tusk-run and tusk-emulate), GPU and CPU
# backends side by side (zfinder: their RoIs/s in zfinder-chains.txt).
# OUTDIR/machine.txt says what the machine is.
# The device is chosen by TUSK_GPU (default NVIDIA, the platform's name).
# SKIP_BENCH=1 leaves out the ut and tpc parts' tusk-bench runs (chains only).
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

# ut: tusk-bench ut (20,000 events in one batch; decoding, Compass and both
# for the reference, fast on all cores and OpenCL, at 5 sectors / 8
# candidates and 1 / 1; the device's memory bandwidth), once more with 256
# work-items an event, then the actor in config/ut-gpu.xml: 20,000 events
# replayed from a file through ut_tracker (opencl, then fast), first once
# with the analysis (ut-*-pass1-emulate.txt: its table against the truth),
# then `repeat` times for about UT_CHAIN_SECONDS (12) of run time into a
# null consumer; events/s = events / run time (tusk-run) or / wall time
# (tusk-emulate) in ut-chains.txt.
ut() {
    local events=20000 target=${UT_CHAIN_SECONDS:-12} summary=$out/ut-chains.txt
    if [ -z "${SKIP_BENCH:-}" ]; then
        tusk-bench ut --device "$gpu" > "$out/ut-bench.txt" 2>&1
        tusk-bench ut --device "$gpu" --group-size 256 --ref-runs 0 > "$out/ut-bench-wg256.txt" 2>&1
    fi
    ( cd "$work" && tusk-ut sim --events $events -o ut-minbias.adf ) > "$out/ut-sim.txt" 2>&1
    printf '%-8s %-8s %7s %9s %9s %9s\n' backend runner repeat events seconds events/s > "$summary"
    for backend in opencl fast; do
        local name=ut-$backend repeat t1 frames
        sed -e "s/name=\"backend\">opencl/name=\"backend\">$backend/" \
            -e "s/name=\"device\">gpu/name=\"device\">$gpu/" \
            "$share/ut-gpu.xml" > "$work/ut-$backend.xml"
        ( cd "$work" && time tusk-emulate "$work/ut-$backend.xml" ) > "$out/$name-pass1-emulate.txt" 2>&1
        t1=$(zf_rate "$out/$name-pass1-emulate.txt" emulate $events | awk '{ print $1 }')
        frames=$(awk '$1 == "qa" && $2 == "consumer" { print $7 }' "$out/$name-pass1-emulate.txt")
        if [ "$t1" = failed ] || [ -z "$frames" ]; then
            printf '%-8s %-8s %7s %9s %9s %9s\n' "$backend" pass1 1 $events failed - >> "$summary"
            continue
        fi
        repeat=$(awk -v t="$t1" -v T="$target" 'BEGIN { r = t > 0 ? int(T / t) + 1 : 1; print (r > 500 ? 500 : r) }')
        zf_long "$work/ut-$backend.xml" "$repeat" $((frames * repeat)) tracker > "$work/$name-long.xml"
        chain "$name" "$work/$name-long.xml"
        for runner in run emulate; do
            printf '%-8s %-8s %7s %9s %9s %9s\n' "$backend" "$runner" "$repeat" $((events * repeat)) \
                $(zf_rate "$out/$name-$runner.txt" "$runner" $((events * repeat))) >> "$summary"
        done
    done
}

# tpc: tusk-bench tpc over the event-size scan (160 to 15,000 particles: pp
# to central Pb-Pb, 30,000 to 2.4 M clusters; reference, fast, OpenCL with
# the host steps, transfers and kernels apart, the device's memory
# bandwidth, and Table 9.31's linear fit of time against clusters), once
# more with 256 work-items a group, then the actor in config/tpc-gpu.xml:
# 10 central events replayed from a file through tpc_tracker (opencl, then
# fast) into a null consumer, first once, then `repeat` times for about
# TPC_CHAIN_SECONDS (12) of run time; events/s = events / run time
# (tusk-run) or / wall time (tusk-emulate) in tpc-chains.txt.
tpc() {
    local events=10 target=${TPC_CHAIN_SECONDS:-12} summary=$out/tpc-chains.txt
    if [ -z "${SKIP_BENCH:-}" ]; then
        tusk-bench tpc --device "$gpu" > "$out/tpc-bench.txt" 2>&1
        tusk-bench tpc --device "$gpu" --group-size 256 --ref-runs 0 --tracks 2500,15000 \
            > "$out/tpc-bench-wg256.txt" 2>&1
    fi
    ( cd "$work" && tusk-tpc sim --preset central --events $events --set truth=no -o tpc-central.adf ) \
        > "$out/tpc-sim.txt" 2>&1
    printf '%-8s %-8s %7s %9s %9s %9s\n' backend runner repeat events seconds events/s > "$summary"
    for backend in opencl fast; do
        local name=tpc-$backend repeat t1 frames
        sed -e "s/name=\"backend\">opencl/name=\"backend\">$backend/" \
            -e "s/name=\"device\">gpu/name=\"device\">$gpu/" \
            "$share/tpc-gpu.xml" > "$work/tpc-$backend.xml"
        ( cd "$work" && time tusk-emulate "$work/tpc-$backend.xml" ) > "$out/$name-pass1-emulate.txt" 2>&1
        t1=$(zf_rate "$out/$name-pass1-emulate.txt" emulate $events | awk '{ print $1 }')
        frames=$(awk '$1 == "sink" && $2 == "consumer" { print $7 }' "$out/$name-pass1-emulate.txt")
        if [ "$t1" = failed ] || [ -z "$frames" ]; then
            printf '%-8s %-8s %7s %9s %9s %9s\n' "$backend" pass1 1 $events failed - >> "$summary"
            continue
        fi
        repeat=$(awk -v t="$t1" -v T="$target" 'BEGIN { r = t > 0 ? int(T / t) + 1 : 1; print (r > 500 ? 500 : r) }')
        zf_long "$work/tpc-$backend.xml" "$repeat" $((frames * repeat)) tracker > "$work/$name-long.xml"
        chain "$name" "$work/$name-long.xml"
        for runner in run emulate; do
            printf '%-8s %-8s %7s %9s %9s %9s\n' "$backend" "$runner" "$repeat" $((events * repeat)) \
                $(zf_rate "$out/$name-$runner.txt" "$runner" $((events * repeat))) >> "$summary"
        done
    done
}

machine
for sys in "$@"; do
    "$sys"
done
rm -rf "$work"
