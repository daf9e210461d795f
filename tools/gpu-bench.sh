#!/usr/bin/env bash
# gpu-bench.sh OUTDIR SYSTEM... - the GPU machine's figures of BENCHMARKS.md,
# run on an installed tusk (tools/device-bundle.sh here, then on the GPU
# machine: source .device/device-env.sh; tools/gpu-bench.sh "$OUT" zfinder sts ut tpc psa).
#
# For every system it writes OUTDIR/SYSTEM-*.txt: the kernel benchmark
# (tusk-bench, every backend in one run, with the device's own limit) and
# the actor inside running chains (tusk-run and tusk-emulate), GPU and CPU
# backends side by side (zfinder: their RoIs/s in zfinder-chains.txt).
# OUTDIR/machine.txt says what the machine is.
# The device is chosen by TUSK_GPU (default NVIDIA, the platform's name).
# SKIP_BENCH=1 leaves out the ut and tpc parts' tusk-bench runs (chains only).
# Systems: zfinder sts ut tpc psa track agata (agata: the whole AGATA chain
# with one psa instance per GPU, issue 26).
set -uo pipefail
TIMEFORMAT='wall %R s, cpu user %U s, sys %S s'
out=${1:?usage: gpu-bench.sh OUTDIR SYSTEM...}
shift
gpu=${TUSK_GPU:-NVIDIA}
share=$(dirname "$(command -v tusk-run)")/../share/tusk/config
work=$(mktemp -d)
mkdir -p "$out"
out=$(cd "$out" && pwd) # the chains run in $work

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

# reco_chains SYS EVENTS TARGET FIRST: the actor of config/SYS-gpu.xml
# (whose producer reads the file the caller made) in chains, opencl then
# fast: once in tusk-emulate (SYS-BACKEND-pass1-emulate.txt; FIRST is the
# consumer instance whose frame count the long run's null consumer
# expects), then `repeat` times for about TARGET seconds of run time under
# tusk-run and tusk-emulate; events/s = EVENTS x repeat / run time
# (tusk-run) or / wall time (tusk-emulate) in SYS-chains.txt.
reco_chains() {
    local sys=$1 events=$2 target=$3 first=$4 summary=$out/$1-chains.txt
    printf '%-8s %-8s %7s %9s %9s %9s\n' backend runner repeat events seconds events/s > "$summary"
    for backend in opencl fast; do
        local name=$sys-$backend repeat t1 frames
        sed -e "s/name=\"backend\">opencl/name=\"backend\">$backend/" \
            -e "s/name=\"device\">gpu/name=\"device\">$gpu/" \
            "$share/$sys-gpu.xml" > "$work/$name.xml"
        ( cd "$work" && time tusk-emulate "$work/$name.xml" ) > "$out/$name-pass1-emulate.txt" 2>&1
        t1=$(zf_rate "$out/$name-pass1-emulate.txt" emulate "$events" | awk '{ print $1 }')
        frames=$(awk -v c="$first" '$1 == c && $2 == "consumer" { print $7 }' "$out/$name-pass1-emulate.txt")
        if [ "$t1" = failed ] || [ -z "$frames" ]; then
            printf '%-8s %-8s %7s %9s %9s %9s\n' "$backend" pass1 1 "$events" failed - >> "$summary"
            continue
        fi
        repeat=$(awk -v t="$t1" -v T="$target" 'BEGIN { r = t > 0 ? int(T / t) + 1 : 1; print (r > 500 ? 500 : r) }')
        zf_long "$work/$name.xml" "$repeat" $((frames * repeat)) tracker > "$work/$name-long.xml"
        chain "$name" "$work/$name-long.xml"
        for runner in run emulate; do
            printf '%-8s %-8s %7s %9s %9s %9s\n' "$backend" "$runner" "$repeat" $((events * repeat)) \
                $(zf_rate "$out/$name-$runner.txt" "$runner" $((events * repeat))) >> "$summary"
        done
    done
}

# ut: tusk-bench ut (20,000 events in one batch; decoding, Compass and both
# for the reference, fast on all cores and OpenCL, at 5 sectors / 8
# candidates and 1 / 1; the device's memory bandwidth), once more with 256
# work-items an event, then the actor in config/ut-gpu.xml: 20,000 events
# replayed from a file through ut_compass (opencl, then fast), first once
# with the analysis (ut-*-pass1-emulate.txt: its table against the truth),
# then `repeat` times for about UT_CHAIN_SECONDS (12) of run time into a
# null consumer; events/s = events / run time (tusk-run) or / wall time
# (tusk-emulate) in ut-chains.txt.
ut() {
    local events=20000 target=${UT_CHAIN_SECONDS:-12}
    if [ -z "${SKIP_BENCH:-}" ]; then
        tusk-bench ut --device "$gpu" > "$out/ut-bench.txt" 2>&1
        tusk-bench ut --device "$gpu" --group-size 256 --ref-runs 0 > "$out/ut-bench-wg256.txt" 2>&1
    fi
    ( cd "$work" && tusk-ut sim --events $events -o ut-minbias.adf ) > "$out/ut-sim.txt" 2>&1
    reco_chains ut $events "$target" qa
}

# tpc: tusk-bench tpc over the event-size scan (160 to 15,000 particles: pp
# to central Pb-Pb, 30,000 to 2.4 M clusters; reference, fast, OpenCL with
# the host steps, transfers and kernels apart, the device's memory
# bandwidth, and Table 9.31's linear fit of time against clusters), once
# more with 256 work-items a group, then the actor in config/tpc-gpu.xml:
# 10 central events replayed from a file through tpc_ca (opencl, then
# fast) into a null consumer, first once, then `repeat` times for about
# TPC_CHAIN_SECONDS (12) of run time; events/s = events / run time
# (tusk-run) or / wall time (tusk-emulate) in tpc-chains.txt.
tpc() {
    local events=10 target=${TPC_CHAIN_SECONDS:-12}
    if [ -z "${SKIP_BENCH:-}" ]; then
        tusk-bench tpc --device "$gpu" > "$out/tpc-bench.txt" 2>&1
        tusk-bench tpc --device "$gpu" --group-size 256 --ref-runs 0 --tracks 2500,15000 \
            > "$out/tpc-bench-wg256.txt" 2>&1
    fi
    ( cd "$work" && tusk-tpc sim --preset central --events $events --set truth=no -o tpc-central.adf ) \
        > "$out/tpc-sim.txt" 2>&1
    reco_chains tpc $events "$target" sink
}

# track: tusk-bench track at multiplicity 1 (TRACK_M1_EVENTS, 100,000
# events a batch) and 30 (TRACK_M30_EVENTS, 20,000) in the 86-crystal
# shell, truth_segments points, every backend in one run: the reference
# (one thread), fast and opencl on 1, 4 and every CPU's host threads
# (track-bench-m1.txt, track-bench-m30.txt: events/s; for opencl the
# kernels and the rest of a batch). Then the tracking actor in a chain:
# TRACK_CHAIN_EVENTS (20,000) M30 decays simulated into a file (data:truth
# frames, and data:crystal frames of 2 samples, which the actor passes on)
# replayed by file_producer -> tracking (truth_segments; opencl on the
# GPU, then fast; threads 0: every CPU) -> null_consumer, first once, then
# `repeat` times for about TRACK_CHAIN_SECONDS (8) of run time. In
# track-chains.txt: events/s = events / run time (tusk-run) or / wall time
# (tusk-emulate), cores used = CPU time / wall time, GPU busy = the mean sm
# % of nvidia-smi dmon over the tusk-run. About 2.5 minutes on the 16-core
# H200 host.
track() {
    local summary=$out/track-chains.txt target=${TRACK_CHAIN_SECONDS:-8} conf=$share/array-shell.conf
    local basis=$work/track-coarse.tbs data=$work/track-m30.adf tracked frames m
    tusk-basis gen -c "$share/crystal-coarse.conf" --field-grid 3 --grid 8 --int16 -q -o "$basis" \
        > "$out/track-basis.txt" 2>&1
    for m in 1 30; do
        local n=${TRACK_M1_EVENTS:-100000}
        [ $m = 1 ] || n=${TRACK_M30_EVENTS:-20000}
        tusk-bench track --basis "$basis" --array "$conf" --multiplicity $m --events "$n" --device "$gpu" \
            --threads 1 --threads 4 --threads 0 > "$out/track-bench-m$m.txt" 2>&1
        echo "exit status $?" >> "$out/track-bench-m$m.txt"
    done
    tusk-sim run "$share/sim-m30.conf" --set "basis=$basis" --set "array=$conf" --set samples=2 --set pretrigger=1 \
        --events "${TRACK_CHAIN_EVENTS:-20000}" -q -o "$data" > "$out/track-sim.txt" 2>&1
    tracked=$(tusk-adf stats "$data" 2>/dev/null | awk '$1 == "data:truth" { print $2 }')
    frames=$(tusk-adf stats "$data" 2>/dev/null | awk '$1 == "frames:" { print $2 }')
    printf '%-8s %-8s %7s %9s %9s %9s %6s %9s\n' backend runner repeat events seconds events/s cores "GPU busy" \
        > "$summary"
    if [ -z "$tracked" ] || [ -z "$frames" ]; then
        echo "no input: tusk-sim failed (track-sim.txt)" >> "$summary"
        return
    fi
    for backend in opencl fast; do
        local name=track-$backend repeat t1 runner
        track_topo "$backend" 1 $((frames + tracked)) > "$work/$name-pass1.xml"
        ( cd "$work" && time tusk-emulate "$work/$name-pass1.xml" ) > "$out/$name-pass1-emulate.txt" 2>&1
        echo "exit status $?" >> "$out/$name-pass1-emulate.txt"
        t1=$(zf_rate "$out/$name-pass1-emulate.txt" emulate "$tracked" | awk '{ print $1 }')
        if [ "$t1" = failed ]; then
            printf '%-8s %-8s %7s %9s %9s %9s\n' "$backend" pass1 1 "$tracked" failed - >> "$summary"
            continue
        fi
        repeat=$(awk -v t="$t1" -v T="$target" 'BEGIN { r = t > 0 ? int(T / t) + 1 : 1; print (r > 500 ? 500 : r) }')
        track_topo "$backend" "$repeat" $(((frames + tracked) * repeat)) > "$work/$name.xml"
        chain "$name" "$work/$name.xml"
        for runner in run emulate; do
            local busy=-
            [ $runner = run ] && busy=$(gpu_busy "$out/$name-gpu-load.txt")
            printf '%-8s %-8s %7s %9s %9s %9s %6s %9s\n' "$backend" "$runner" "$repeat" $((tracked * repeat)) \
                $(zf_rate "$out/$name-$runner.txt" "$runner" $((tracked * repeat))) \
                "$(cores_used "$out/$name-$runner.txt")" "$busy" >> "$summary"
        done
    done
}

# tracker_xml SOURCE SIZE POINTS BACKEND: the tracking stage of the track
# and agata chains (the 86-crystal shell, device $gpu, every core).
tracker_xml() {
    cat <<EOF
  <intermediary>
    <name>tracker</name>
    <binary_code>tracking</binary_code>
    <data_source>$1</data_source>
    <size>$2</size>
    <parameter name="array">$share/array-shell.conf</parameter>
    <parameter name="points">$3</parameter>
    <parameter name="backend">$4</parameter>
    <parameter name="device">$gpu</parameter>
    <parameter name="threads">0</parameter>
  </intermediary>
EOF
}

# track_topo BACKEND REPEAT FRAMES: the chain of track() (buffers of 32 MiB:
# a batch of about 4,000 events).
track_topo() {
    cat <<EOF
<configuration>
  <producer>
    <name>reader</name>
    <binary_code>file_producer</binary_code>
    <size>33554432</size>
    <parameter name="file">$work/track-m30.adf</parameter>
    <parameter name="repeat">$2</parameter>
  </producer>
$(tracker_xml reader 33554432 truth_segments "$1")
  <consumer>
    <name>sink</name>
    <binary_code>null_consumer</binary_code>
    <data_source>tracker</data_source>
    <parameter name="expect_frames">$3</parameter>
  </consumer>
</configuration>
EOF
}

# cores_used FILE: CPU time over wall time of the `time` line in FILE.
cores_used() {
    sed -n 's/^wall \([0-9.]*\) s, cpu user \([0-9.]*\) s, sys \([0-9.]*\) s$/\1 \2 \3/p' "$1" |
        awk 'END { if (NR && $1 > 0) printf "%.1f\n", ($2 + $3) / $1; else print "-" }'
}

# gpu_busy FILE [each]: the mean of the sm column of nvidia-smi dmon's lines in
# FILE; with each, every GPU's mean as GPU:N%.
gpu_busy() {
    awk -v each="${2:-}" '/^#/ { for (i = 1; i <= NF; i++) { if ($i == "sm") col = $1 == "#" ? i - 1 : i
                                                           if ($i == "gpu") g = $1 == "#" ? i - 1 : i }; next }
        col && $col ~ /^[0-9]+$/ { s += $col; n++; sg[$g] += $col; ng[$g]++ }
        END { if (!n) { print "-"; exit }
              if (!each) { printf "%.0f %%\n", s / n; exit }
              for (k in sg) { printf "%s%s:%.0f%%", sep, k, sg[k] / ng[k]; sep = " " }; print "" }' "$1" 2>/dev/null ||
        echo -
}

# gpu_working FILE: nvidia-smi dmon's mean sm % (FILE, one GPU) while the
# chain works: the samples between the first and the last busy one, those
# two (the ramps, partly idle) left out; "-" with fewer than 3 between.
gpu_working() {
    awk '/^#/ { for (i = 1; i <= NF; i++) if ($i == "sm") col = $1 == "#" ? i - 1 : i; next }
        col && $col ~ /^[0-9]+$/ { v[n++] = $col }
        END { f = -1; for (i = 0; i < n; i++) if (v[i] > 0) { if (f < 0) f = i; l = i }
              if (f < 0 || l - f - 1 < 3) { print "-"; exit }
              for (i = f + 1; i < l; i++) s += v[i]
              printf "%.0f%%\n", s / (l - f - 1) }' "$1" 2>/dev/null || echo -
}

# actor_cpu ACTOR N: in the background while a chain runs (the caller
# kills it), "seconds pid ticks" every half second for each of the N
# tusk-actor processes of ACTOR (their command line says --actor ACTOR
# --instance): its CPU time so far, user + system, in clock ticks. Read
# from /proc without a process per sample.
actor_cpu() {
    local pids=() f p st t cmd tries=0
    while [ "${#pids[@]}" -lt "$2" ] && [ "$tries" -lt 600 ]; do
        pids=()
        for f in /proc/[0-9]*/cmdline; do
            p=${f#/proc/}
            p=${p%/cmdline}
            [ "$p" = "$BASHPID" ] && continue
            cmd=$(tr '\0' ' ' 2>/dev/null < "$f")
            case $cmd in *tusk-actor*" --actor $1 --instance "*) pids+=("$p") ;; esac
        done
        [ "${#pids[@]}" -ge "$2" ] || sleep 0.2
        tries=$((tries + 1))
    done
    while :; do
        t=${EPOCHREALTIME:-$(date +%s.%N)}
        for p in "${pids[@]}"; do
            read -r -a st 2>/dev/null < "/proc/$p/stat" && echo "$t $p $((st[13] + st[14]))"
        done
        sleep 0.5
    done
}

# actor_cores FILE: actor_cpu's samples: the cores (CPU seconds a second)
# of the busiest instance, from a fifth into its sampled time to its last
# sample (leaving out its start: the basis read, the kernels built).
actor_cores() {
    awk -v hz="$(getconf CLK_TCK)" '
        { n[$2]++; t[$2, n[$2]] = $1; c[$2, n[$2]] = $3 }
        END {
            best = -1
            for (p in n) {
                if (n[p] < 3) continue
                i = int(n[p] / 5) + 1
                dt = t[p, n[p]] - t[p, i]
                if (dt > 0 && (r = (c[p, n[p]] - c[p, i]) / hz / dt) > best) best = r
            }
            if (best >= 0) printf "%.1f\n", best; else print "-"
        }' "$1" 2>/dev/null || echo -
}

# psa: the psa actor in tusk-run with the opencl backend on the GPU (issue
# 21). The coarse basis (tusk-basis gen -c crystal-coarse.conf, as the
# demo makes it) and two files of data:crystal records simulated with it:
# single-hit records (a 100 keV line: one hit segment in nearly every
# record) and the 60Co mix. Each chain is file_producer (PSA_PRODUCERS
# instances, 2, each replaying the file) -> psa -> null_consumer, buffers
# of PSA_BUFFER bytes (8 MiB, about 1,500 records); psa is opencl on $gpu
# with 1, 2 and 4 instances sharing the GPU (PSA_THREADS, 8,
# preprocessing threads in all), then the fast CPU backend (1 instance,
# every core); the single-hit and co60 chains with 1 opencl instance run
# again with --transport shm (backend column opencl/shm: the buffers in
# shared memory between the instances, distributed/shmlink.h, beside the
# same chain over ipc). A chain runs once over its file (pass 1: the rate), then
# replays it for about PSA_CHAIN_SECONDS (10) of tusk-run's run time.
# Then the single-hit chain over shm with finer bases (the same crystal,
# basis points every 3 and 2 mm: tusk-basis gen --grid 3 / 2; about 8 and
# 27 times the coarse basis' 2,048 points, so the search, not the host,
# sets the rate: what the GPU delivers inside the chain when it is the
# limit, beside tusk-bench's search alone in psa-bench-g3/-g2.txt), the
# 60Co chain on the 3 mm basis, and the single-hit and 60Co chains with
# residual = no (the psa's default is yes, issue 22's subtraction in
# rounds). The backend column names the variant: opencl/shm/g3,
# opencl/shm/g2, opencl/shm/nores. PSA_SPECS (chains separated by ';',
# each "DATA BACKEND INSTANCES [TRANSPORT [VARIANT...]]") runs other
# chains; PSA_BENCH=no leaves tusk-bench out.
# psa-chains.txt, a line a chain: records/s = records / run time; hits a
# record and FoM terms/s from the psa instances' summaries; cores and GPU
# busy as cores_used and gpu_busy say (the whole tusk-run, start-up
# included); psa cores: the busiest psa instance's own CPU seconds a
# second while it works (actor_cores: issue 21's goal is one instance on
# at most 8 cores); then GPU chain / CPU chain. NAME-run.txt: tusk-run's summary,
# its time, the psa instances' summaries. psa-bench.txt: tusk-bench psa
# (its end-to-end rows start from ADF buffers, as the actor does; the
# tables below them give the host's time per record by step, and the
# steps before and after issue 21 on one thread). About 4 minutes on the
# 16-core H200 host.
psa() {
    local summary=$out/psa-chains.txt basis=$work/crystal-coarse.tbs target=${PSA_CHAIN_SECONDS:-10}
    local threads=${PSA_THREADS:-8} producers=${PSA_PRODUCERS:-3} size=${PSA_BUFFER:-8388608} spec
    local format='%-8s %-10s %4s %7s %6s %10s %8s %10s %8s %11s %6s %9s %8s %8s %7s %s\n'
    printf "$format" data backend inst threads repeat records seconds records/s hits/rec 'FoM terms/s' cores \
        'psa cores' 'GPU busy' 'working' kernels status > "$summary"
    if ! tusk-basis gen -c "$share/crystal-coarse.conf" --int16 -q -o "$basis" > "$out/psa-basis.txt" 2>&1; then
        echo "no basis: tusk-basis gen failed (psa-basis.txt)" >> "$summary"
        return
    fi
    if ! ( cd "$work" &&
           tusk-sim run "$share/sim-co60.conf" --set "basis=$basis" --set source=line --set energy=100 \
               --set truth=no --events "${PSA_LINE_EVENTS:-150000}" -q -o psa-line100.adf &&
           tusk-sim run "$share/sim-co60.conf" --set "basis=$basis" --set truth=no \
               --events "${PSA_CO60_EVENTS:-90000}" -q -o psa-co60.adf ) > "$out/psa-sim.txt" 2>&1; then
        echo "no input: tusk-sim failed (psa-sim.txt)" >> "$summary"
        return
    fi
    # The residual's later rounds made and searched on the device against
    # the same rounds made on the host (TUSK_PSA_CL_RESIDUAL): the same
    # data:psa, byte for byte (psa-residual-check.txt).
    if [ "${PSA_RES_CHECK:-yes}" != no ]; then
        local where
        {
            for where in host device; do
                TUSK_PSA_CL_RESIDUAL=$where tusk-psa run --basis "$basis" --set residual=yes --set t0_search=1 \
                    --backend opencl --device "$gpu" -i "$work/psa-co60.adf" -o "$work/psa-res-$where.adf"
                echo "exit status $?"
            done
            if cmp "$work/psa-res-host.adf" "$work/psa-res-device.adf"; then
                echo "residual rounds on the device: the host's rounds' data:psa, byte for byte"
            else
                echo "residual rounds on the device: OTHER data:psa than the host's rounds"
            fi
        } > "$out/psa-residual-check.txt" 2>&1
    fi
    if [ "${PSA_BENCH:-yes}" != no ]; then
        tusk-bench psa --basis "$basis" --device "$gpu" --seconds "${PSA_BENCH_SECONDS:-1}" > "$out/psa-bench.txt" 2>&1
        echo "exit status $?" >> "$out/psa-bench.txt"
    fi
    local g
    for g in 3 2; do
        if tusk-basis gen -c "$share/crystal-coarse.conf" --grid "$g" --int16 -q -o "$work/crystal-g$g.tbs" \
            > "$out/psa-basis-g$g.txt" 2>&1 && [ "${PSA_BENCH:-yes}" != no ]; then
            tusk-bench psa --basis "$work/crystal-g$g.tbs" --device "$gpu" --seconds "${PSA_BENCH_SECONDS:-1}" \
                > "$out/psa-bench-g$g.txt" 2>&1
            echo "exit status $?" >> "$out/psa-bench-g$g.txt"
        fi
    done
    local specs=${PSA_SPECS:-"line100 opencl 1;line100 opencl 1 shm;co60 opencl 1;co60 opencl 1 shm;line100 opencl 2;\
line100 opencl 4;line100 fast 1;co60 fast 1;line100 opencl 1 shm g3;line100 opencl 1 shm g2;co60 opencl 1 shm g3;\
line100 opencl 1 shm nores;co60 opencl 1 shm nores"}
    local IFS_was=$IFS
    IFS=';'
    # shellcheck disable=SC2206 # split at ';' on purpose
    local list=($specs)
    IFS=$IFS_was
    for spec in "${list[@]}"; do
        # shellcheck disable=SC2086
        psa_chain $spec
    done
    awk '$2 == "opencl" && $3 == 1 && $1 == "line100" { g = $8 } $2 == "fast" && $1 == "line100" { c = $8 }
         END { if (g > 0 && c > 0) printf "\nsingle-hit records/s, GPU chain / CPU chain (1 psa each): %.1f\n", g / c }' \
        "$summary" >> "$summary"
    {
        echo
        echo "file_producer x$producers -> psa -> null_consumer in tusk-run, buffers of $size bytes, device $gpu;"
        echo "records/s over tusk-run's run time; cores (CPU time / wall) and GPU busy (nvidia-smi dmon's mean sm %)"
        echo "over the whole tusk-run, start-up included; working: dmon's mean sm % while the chain works (the"
        echo "samples between its first and last busy one, those two left out: 3 at least); kernels: the device's"
        echo "own time, the psa instances' kernels by their profiling events (us a crystal x crystals) over the run"
        echo "time; psa cores: the busiest psa instance's CPU seconds a second while it works (psa-*-psa-cpu.txt)."
        echo "opencl/shm: the same chain with tusk-run --transport shm (the buffers in shared memory between the"
        echo "instances, not copied through the ipc sockets)."
    } >> "$summary"
}

# reader_xml FILE REPEAT INSTANCES [TIMESTAMPS]: the file_producer of the
# psa and agata chains (buffers of $size bytes).
reader_xml() {
    local stamps=
    [ -z "${4:-}" ] || stamps=$'\n    <parameter name="timestamps">'"$4"'</parameter>'
    cat <<EOF
  <producer instances="$3">
    <name>reader</name>
    <binary_code>file_producer</binary_code>
    <size>$size</size>
    <parameter name="file">$1</parameter>
    <parameter name="repeat">$2</parameter>$stamps
  </producer>
EOF
}

# psa_xml INSTANCES BACKEND DEVICE THREADS: the psa stage of the psa and
# agata chains, fed by reader_xml's producer (the basis $basis; further
# parameter lines in $psa_extra).
psa_xml() {
    cat <<EOF
  <intermediary instances="$1">
    <name>psa</name>
    <binary_code>psa</binary_code>
    <data_source>reader</data_source>
    <size>$size</size>
    <parameter name="basis">$basis</parameter>
    <parameter name="backend">$2</parameter>
    <parameter name="device">$3</parameter>
    <parameter name="threads">$4</parameter>${psa_extra:-}
  </intermediary>
EOF
}

# psa_topology FILE REPEAT BACKEND INSTANCES THREADS FRAMES: psa()'s chain.
psa_topology() {
    echo "<configuration>"
    reader_xml "$1" "$2" "$producers"
    psa_xml "$4" "$3" "$gpu" "$5"
    cat <<EOF
  <consumer>
    <name>sink</name>
    <binary_code>null_consumer</binary_code>
    <data_source>psa</data_source>
    <parameter name="expect_frames">$6</parameter>
  </consumer>
</configuration>
EOF
}

# psa_chain DATA BACKEND INSTANCES [TRANSPORT [VARIANT...]]: pass 1, then
# the long run with the GPU's load sampled; its line in psa-chains.txt.
# TRANSPORT: tusk-run's --transport (default: its own choice, ipc).
# VARIANTs: g3 or g2 (the basis of that grid, made by psa()); nores
# (residual = no; the default is yes, its later rounds on the device where
# it can); precise (preset = precise: square mask, the hit's own trace,
# refine 2, subgrid); sub (subgrid = yes: the positions fitted between
# the grid points on the host); reshost (residual = yes, those rounds made on the host:
# TUSK_PSA_CL_RESIDUAL).
psa_chain() {
    local data=$1 backend=$2 n=$3 vs=${5:-}${6:+-$6}
    local name=psa-$1-$2-$3${4:+-$4}${vs:+-$vs} file=$work/psa-$1.adf
    local transport=${4:+--transport $4} label=$2${4:+/$4}${vs:+/$vs}
    local records th t1 repeat frames status secs dmon= cpu= basis=$basis psa_extra= res_where=device v
    for v in ${5:-} ${6:-}; do
        case $v in
            g[0-9]) basis=$work/crystal-$v.tbs ;;
            nores) psa_extra+=$'\n    <parameter name="residual">no</parameter>' ;;
            precise) psa_extra+=$'\n    <parameter name="preset">precise</parameter>' ;;
            sub) psa_extra+=$'\n    <parameter name="subgrid">yes</parameter>' ;;
            reshost) res_where=host ;;
            *) printf "$format" "$data" "$label" "$n" - - - - - - - - - - "FAILED (variant $v?)" >> "$summary"
               return ;;
        esac
    done
    if [ ! -f "$basis" ]; then
        printf "$format" "$data" "$label" "$n" - - - - - - - - - - "FAILED (no basis: $basis)" >> "$summary"
        return
    fi
    records=$(tusk-adf stats "$file" | awk '$1 == "data:crystal" { print $2 }')
    if [ "$backend" = fast ]; then th=0; else th=$((threads / n)); [ "$th" -ge 1 ] || th=1; fi
    psa_topology "$file" 1 "$backend" "$n" "$th" $((records * producers)) > "$work/$name-pass1.xml"
    # shellcheck disable=SC2086 # $transport: no word or two words
    ( cd "$work" && TUSK_PSA_CL_RESIDUAL=$res_where tusk-run --no-live $transport \
        --report "$work/$name-pass1.report" "$work/$name-pass1.xml" ) > "$out/$name-pass1.txt" 2>&1
    t1=$(sed -n 's/^run=.* seconds=\([0-9.]*\) .*fatal=0$/\1/p' "$work/$name-pass1.report" 2>/dev/null)
    if [ -z "$t1" ]; then
        printf "$format" "$data" "$label" "$n" "$th" 1 $((records * producers)) - - - - - - - \
            "FAILED (pass 1: $name-pass1.txt)" >> "$summary"
        return
    fi
    repeat=$(awk -v t="$t1" -v T="$target" 'BEGIN { r = t > 0 ? int(T / t) + 1 : 1; print (r > 5000 ? 5000 : r) }')
    frames=$((records * producers * repeat))
    psa_topology "$file" "$repeat" "$backend" "$n" "$th" "$frames" > "$work/$name.xml"
    if command -v nvidia-smi >/dev/null; then
        nvidia-smi dmon -s u -o T > "$out/$name-gpu-load.txt" 2>&1 &
        dmon=$!
    fi
    rm -rf "$work/$name-rundir"
    actor_cpu psa "$n" > "$out/$name-psa-cpu.txt" 2>/dev/null &
    cpu=$!
    # shellcheck disable=SC2086
    ( cd "$work" && export TUSK_PSA_CL_RESIDUAL=$res_where && time tusk-run --no-live $transport \
        --run-dir "$work/$name-rundir" --report "$work/$name.report" "$work/$name.xml" ) > "$out/$name-run.txt" 2>&1
    status=$?
    [ -n "$dmon" ] && kill "$dmon" 2>/dev/null
    kill "$cpu" 2>/dev/null
    wait "$cpu" 2>/dev/null
    echo "exit status $status" >> "$out/$name-run.txt"
    cat "$work/$name-rundir"/psa.*.log >> "$out/$name-run.txt" 2>/dev/null
    rm -rf "$work/$name-rundir"
    secs=$(sed -n 's/^run=.* seconds=\([0-9.]*\) .*fatal=0$/\1/p' "$work/$name.report" 2>/dev/null)
    [ "$status" = 0 ] || secs=
    # The psa instances' summaries: "psa psa[i]: N crystals, H hits (...), T FoM terms ...".
    awk -v format="$format" -v data="$data" -v be="$label" -v n="$n" -v th="$th" -v rep="$repeat" \
        -v frames="$frames" -v secs="$secs" -v cores="$(cores_used "$out/$name-run.txt")" \
        -v pcores="$(actor_cores "$out/$name-psa-cpu.txt")" \
        -v busy="$([ -n "$dmon" ] && gpu_busy "$out/$name-gpu-load.txt" | tr -d ' ' || echo -)" \
        -v work="$([ -n "$dmon" ] && gpu_working "$out/$name-gpu-load.txt" || echo -)" -v name="$name" '
        /^psa psa\[[0-9]+\]: [0-9]+ crystals, [0-9]+ hits/ {
            crystals += $3; hits += $5; mine[$2] = $3
            for (i = 1; i + 2 <= NF; i++) if ($(i + 1) == "FoM" && $(i + 2) == "terms") fom += $i
        }
        /^psa psa\[[0-9]+\]: the device, / {
            for (i = 1; i < NF; i++) if ($i == "kernels") { v = $(i + 1); sub(/,$/, "", v); kus += v * mine[$2] }
        }
        END {
            ok = secs != "" && secs > 0
            s = ok ? sprintf("%.2f", secs) : "-"
            rate = ok ? sprintf("%.0f", frames / secs) : "-"
            per = crystals ? sprintf("%.2f", hits / crystals) : "-"
            terms = (ok && fom > 0) ? sprintf("%.3g", fom / secs) : "-"
            kern = (ok && kus > 0) ? sprintf("%.0f%%", kus * 1e-4 / secs) : "-"
            how = ok ? "ok" : "FAILED (" name "-run.txt)"
            printf format, data, be, n, th, rep, frames, s, rate, per, terms, cores, pcores, busy, work, kern, how
        }' "$out/$name-run.txt" >> "$summary"
}

# agata: the whole AGATA chain on the machine's GPUs (issue 26): replayed
# data:crystal (the 60Co mix in the 86-crystal shell, AGATA_EVENTS decays,
# 100,000; the file replayed with timestamps=continue, so the builder sees
# one stream going forward) -> psa x N (opencl, device "NVIDIA:instance": instance k on GPU
# k mod the GPUs; PSA_THREADS / N preprocessing threads each, at least 2)
# -> builder (event_builder) -> tracker (tracking of the psa points, opencl
# on the first GPU) -> null_consumer, for N in AGATA_INSTANCES (default: 1,
# 2, 4 and 8 up to the machine's GPU count, and 2 and 4 sharing one GPU
# where there is one). Every chain runs once over the file under tusk-run
# (pass 1: its rate), then replays it for about AGATA_CHAIN_SECONDS (10).
# agata-chains.txt: records/s and events/s over the run time, cores used,
# every GPU's mean busy; scaling efficiency = rate(N) / (N x rate(1)) where
# the N instances have N GPUs. agata-N-run.txt: tusk-run's summary and
# the instances' logs (the builder's and tracker's summaries say what
# limits: late frames, held frames).
agata() {
    local summary=$out/agata-chains.txt basis=$work/crystal-coarse.tbs data=$work/agata-co60.adf
    local threads=${PSA_THREADS:-8} size=${PSA_BUFFER:-8388608} gpus records n name th
    local format='%4s %5s %7s %10s %8s %10s %10s %6s %11s %s\n'
    gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU') || gpus=0
    [ "$gpus" -ge 1 ] || gpus=1
    local list=${AGATA_INSTANCES:-}
    if [ -z "$list" ]; then
        for n in 1 2 4 8; do [ "$n" -le "$gpus" ] && list="$list $n"; done
        [ "$gpus" = 1 ] && list="$list 2 4"
    fi
    printf "$format" psa gpus threads records seconds records/s events/s cores efficiency 'GPU busy (each)' > "$summary"
    [ -f "$basis" ] || tusk-basis gen -c "$share/crystal-coarse.conf" --int16 -q -o "$basis" > "$out/agata-basis.txt" 2>&1
    if ! ( cd "$work" && tusk-sim run "$share/sim-co60.conf" --set "basis=$basis" --set "array=$share/array-shell.conf" \
             --set truth=no \
             --events "${AGATA_EVENTS:-100000}" -q -o "$data" ) > "$out/agata-sim.txt" 2>&1; then
        echo "no input: tusk-sim failed (agata-sim.txt)" >> "$summary"
        return
    fi
    records=$(tusk-adf stats "$data" | awk '$1 == "data:crystal" { print $2 }')
    local one=
    for n in $list; do
        name=agata-$n
        th=$((threads / n))
        [ "$th" -ge 2 ] || th=2
        agata_topology "$n" "$th" 1 > "$work/$name-pass1.xml"
        ( cd "$work" && tusk-run --no-live --report "$work/$name-pass1.report" "$work/$name-pass1.xml" ) \
            > "$out/$name-pass1.txt" 2>&1
        local t1 repeat
        t1=$(sed -n 's/^run=.* seconds=\([0-9.]*\) .*fatal=0$/\1/p' "$work/$name-pass1.report" 2>/dev/null)
        if [ -z "$t1" ]; then
            printf "$format" "$n" - "$th" "$records" - - - - - "FAILED (pass 1: $name-pass1.txt)" >> "$summary"
            continue
        fi
        repeat=$(awk -v t="$t1" -v T="${AGATA_CHAIN_SECONDS:-10}" 'BEGIN { r = t > 0 ? int(T / t) + 1 : 1; print (r > 2000 ? 2000 : r) }')
        agata_topology "$n" "$th" "$repeat" > "$work/$name.xml"
        local dmon=
        if command -v nvidia-smi >/dev/null; then
            nvidia-smi dmon -s u -o T > "$out/$name-gpu-load.txt" 2>&1 &
            dmon=$!
        fi
        rm -rf "$work/$name-rundir"
        ( cd "$work" && time tusk-run --no-live --run-dir "$work/$name-rundir" --report "$work/$name.report" \
            "$work/$name.xml" ) > "$out/$name-run.txt" 2>&1
        local status=$?
        [ -n "$dmon" ] && kill "$dmon" 2>/dev/null
        echo "exit status $status" >> "$out/$name-run.txt"
        cat "$work/$name-rundir"/*.log >> "$out/$name-run.txt" 2>/dev/null
        rm -rf "$work/$name-rundir"
        local secs events used=$((n < gpus ? n : gpus)) rate eff busy all=$((records * repeat))
        secs=$(sed -n 's/^run=.* seconds=\([0-9.]*\) .*fatal=0$/\1/p' "$work/$name.report" 2>/dev/null)
        [ "$status" = 0 ] || secs=
        events=$(sed -n 's/^event_builder builder\[0\]: .* \([0-9][0-9]*\) events.*$/\1/p' "$out/$name-run.txt" | head -n 1)
        if [ -z "$secs" ]; then
            printf "$format" "$n" "$used" "$th" "$all" - - - - - "FAILED ($name-run.txt)" >> "$summary"
            continue
        fi
        rate=$(awk -v r="$all" -v s="$secs" 'BEGIN { printf "%.0f", r / s }')
        [ "$n" = 1 ] && one=$rate
        eff=-
        [ -n "$one" ] && [ "$used" = "$n" ] &&
            eff=$(awk -v r="$rate" -v o="$one" -v n="$n" 'BEGIN { printf "%.2f", r / (n * o) }')
        busy=$(gpu_busy "$out/$name-gpu-load.txt" each)
        printf "$format" "$n" "$used" "$th" "$all" "$(printf %.2f "$secs")" "$rate" \
            "$(awk -v e="${events:-0}" -v s="$secs" 'BEGIN { printf "%.0f", e / s }')" \
            "$(cores_used "$out/$name-run.txt")" "$eff" "${busy:--}" >> "$summary"
    done
    {
        echo
        echo "file_producer -> psa x N (opencl, $gpu:instance) -> event_builder -> tracking (opencl) -> null_consumer"
        echo "in tusk-run, a file of $records data:crystal records of the 60Co mix (86-crystal shell) replayed, buffers"
        echo "of $size bytes;"
        echo "$gpus GPU(s) here; rates over tusk-run's run time; efficiency = rate / (N x rate of 1) where N GPUs."
    } >> "$summary"
}

# agata_topology N THREADS REPEAT: agata()'s chain.
agata_topology() {
    echo "<configuration>"
    reader_xml "$data" "$3" 1 continue
    psa_xml "$1" opencl "${gpu}:instance" "$2"
    cat <<EOF
  <intermediary>
    <name>builder</name>
    <binary_code>event_builder</binary_code>
    <data_source>psa</data_source>
    <size>$size</size>
    <parameter name="window">10</parameter>
    <parameter name="reorder">100000000</parameter>
  </intermediary>
$(tracker_xml builder "$size" psa opencl)
  <consumer>
    <name>sink</name>
    <binary_code>null_consumer</binary_code>
    <data_source>tracker</data_source>
  </consumer>
</configuration>
EOF
}

machine
for sys in "$@"; do
    "$sys"
done
rm -rf "$work"
