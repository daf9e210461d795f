#!/bin/sh
# bench/run.sh [BUILD_DIR] - the distributed chain's benchmarks (issue 4):
# raw libzmq PUSH/PULL against tusk-run's producer -> passthrough ->
# consumer, 1 MiB buffers over ipc and over tcp loopback; per-buffer
# latency at low rate; the emulator's overhead over direct hook calls.
#
# Builds `make bench` in BUILD_DIR (default ./build, configured already),
# runs everything in a temporary folder and prints markdown tables ready to
# paste into BENCHMARKS.md. About 5 minutes on 2 cores. See bench/README.md
# for what each figure means.
#
# Environment (defaults in brackets):
#   BENCH_BUFFERS   1 MiB buffers per throughput run [1000]
#   BENCH_SMALL     4 KiB buffers per message-rate run [50000]
#   BENCH_REPEAT    runs per throughput figure; the median is shown [3]
#   BENCH_HWM       high-water mark of every link, raw and tusk [8]
#   BENCH_IDLE      wait up to this many seconds for the 1-minute load
#                   average to fall below 0.5 before starting [120]
#   BENCH_KEEP      1: keep the temporary folder (topologies, raw outputs)
#   BENCH_CURVE_ONLY  1: only the cost of CURVE (issue 23): tcp throughput
#                   with every link authenticated and encrypted, and
#                   without, raw and tusk, then that table alone [0]
#
# tusk-run authenticates and encrypts tcp with CURVE by default; the rows
# of issue 4 run it with --security none, like for like with raw libzmq
# (no CURVE); the CURVE table has both.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/.." && pwd)
arg=${1:-}
build=${1:-build}
case $build in /*) ;; *) build=$(pwd)/$build ;; esac
N=${BENCH_BUFFERS:-1000}
K=${BENCH_SMALL:-50000}
REPEAT=${BENCH_REPEAT:-3}
HWM=${BENCH_HWM:-8}
IDLE=${BENCH_IDLE:-120}
MiB=1048576

[ -f "$build/Makefile" ] || {
    echo "bench/run.sh: $build is not a configured build folder (mkdir build && cd build && ../configure)" >&2
    exit 2
}
echo "bench: make -C $build bench" >&2
make -C "$build" bench >/dev/null

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tusk-bench.XXXXXX")
[ "${BENCH_KEEP:-0}" = 1 ] || trap 'rm -rf "$tmp"' EXIT
TMPDIR=$tmp
export TMPDIR
TUSK_ACTOR_PATH=$build/actors/.libs:$build/bench/.libs
export TUSK_ACTOR_PATH
zpp=$build/bench/zmq_pushpull
port=$((20000 + $$ % 20000))

log() { echo "bench: $*" >&2; }

# ---- machine --------------------------------------------------------------------
load1() { cut -d' ' -f1 /proc/loadavg; }
waited=0
while [ "$waited" -lt "$IDLE" ] && awk -v l="$(load1)" 'BEGIN { exit !(l >= 0.5) }'; do
    [ "$waited" -eq 0 ] && log "waiting (up to ${IDLE}s) for the load average ($(load1)) to fall below 0.5"
    sleep 5
    waited=$((waited + 5))
done
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
model=$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -n1)
virt=$(lscpu 2>/dev/null | sed -n 's/^Hypervisor vendor: *//p' | head -n1)
cores=$(nproc)
mem=$(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)
kernel=$(uname -sr)
os=$( (. /etc/os-release && echo "$PRETTY_NAME") 2>/dev/null || uname -s)
zmqv=$(pkg-config --modversion libzmq 2>/dev/null || echo unknown)
cc=$(sed -n 's/^CC = //p' "$build/Makefile" | head -n1)
ccv="$cc $($cc -dumpfullversion 2>/dev/null || $cc -dumpversion 2>/dev/null || true)"
cflags=$(sed -n 's/^CFLAGS = //p' "$build/Makefile" | head -n1)
rev=$(git -C "$src" describe --always --dirty 2>/dev/null || echo "not a git checkout")

# ---- helpers ----------------------------------------------------------------------
# kv KEY: the value of KEY=... in the line on stdin.
kv() { tr ' ' '\n' | sed -n "s/^$1=//p" | head -n1; }
# median of the numbers on stdin.
median() {
    sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "n/a"; else if (NR % 2) print v[(NR + 1) / 2];
        else printf "%.1f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
med() { median <"$tmp/$1"; }
# all NAME: every run's figure, "a / b / c".
all() { paste -sd/ "$tmp/$1" | sed 's#/# / #g'; }
cell() { echo "$(med "$1") ($(all "$1"))"; }
# ratio A B: A / B round by round (the runs of a round are back to back, so
# a slow spell of the machine hits both): the median, then every round's.
ratio() {
    paste -d' ' "$tmp/$1" "$tmp/$2" | awk '{ printf "%.0f\n", 100 * $1 / $2 }' >"$tmp/ratio"
    echo "$(median <"$tmp/ratio") % ($(paste -sd/ "$tmp/ratio" | sed 's#/# / #g'))"
}
next_port() { port=$((port + 4)); }

# raw NAME TRANSPORT ARGS...: one zmq_pushpull run. NAME gets the steady
# MB/s (first to last message at the receiver), NAME.lines the whole line.
raw() {
    rname=$1 rtr=$2
    shift 2
    if [ "$rtr" = tcp ]; then next_port; ep=tcp://127.0.0.1:$port; else ep=ipc://$tmp/zpp; fi
    line=$("$zpp" --kv --hwm "$HWM" -e "$ep" "$@")
    echo "$line" >>"$tmp/$rname.lines"
    echo "$line" | kv steady_mb_per_s >>"$tmp/$rname"
}

p() { printf '<parameter name="%s">%s</parameter>' "$1" "$2"; }
# topology FILE SIZE PRODUCER_PARAMS FILTER FILTER_PARAMS CONSUMER_PARAMS:
# bench_producer [-> FILTER] -> bench_consumer (FILTER "" for none).
topology() {
    {
        echo "<configuration>"
        echo " <producer hwm=\"$HWM\"><name>source</name><binary_code>bench_producer</binary_code>"
        echo "  <size>$2</size>$3</producer>"
        last=source
        if [ -n "$4" ]; then
            echo " <intermediary hwm=\"$HWM\"><name>copy</name><binary_code>$4</binary_code>"
            echo "  <data_source>source</data_source><size>$2</size>$5</intermediary>"
            last=copy
        fi
        echo " <consumer hwm=\"$HWM\"><name>sink</name><binary_code>bench_consumer</binary_code>"
        echo "  <data_source>$last</data_source>$6</consumer>"
        echo "</configuration>"
    } >"$1"
}

# tusk NAME TRANSPORT TOPOLOGY [SECURITY]: one tusk-run (SECURITY: curve or
# none, the default here). NAME gets the steady MB/s (bench_consumer: first
# to last buffer), NAME.run the whole-run MB/s (the producer's out_bytes /
# `seconds` of --report), NAME.lines the figures.
tusk() {
    tname=$1 ttr=$2 topo=$3
    rep=$tmp/report.txt
    rm -f "$rep" "$tmp/consumer.txt"
    extra="--security ${4:-none}"
    if [ "$ttr" = tcp ]; then next_port; extra="$extra --base-port $port"; fi
    # shellcheck disable=SC2086
    if ! "$build/tusk-run" --no-live -q --actor-bin "$build/tusk-actor" --transport "$ttr" $extra \
        --report "$rep" "$topo" >"$tmp/tusk.out" 2>"$tmp/tusk.err"; then
        cat "$tmp/tusk.err" >&2
        echo "bench/run.sh: tusk-run failed on $topo" >&2
        exit 1
    fi
    bytes=$(grep '^instance=source' "$rep" | kv out_bytes)
    secs=$(grep '^run=' "$rep" | kv seconds)
    { cat "$rep"; echo; cat "$tmp/consumer.txt"; } >>"$tmp/$tname.lines"
    kv mb_per_s <"$tmp/consumer.txt" >>"$tmp/$tname"
    awk -v b="$bytes" -v s="$secs" 'BEGIN { printf "%.1f\n", b / 1e6 / s }' >>"$tmp/$tname.run"
}

# ---- throughput ---------------------------------------------------------------------
# The consumer is bench_consumer with check=true: it walks every frame as
# null_consumer does, and times the buffers.
cons="$(p stamp true)$(p latency_file "$tmp/consumer.txt")"
topology "$tmp/t3.xml" $MiB "$(p count "$N")$(p stamp true)" passthrough "" "$cons"
topology "$tmp/t3keys.xml" $MiB "$(p count "$N")$(p stamp true)$(p fill keys)" bench_filter "$(p copy keys)" "$cons"
# Like for like with the raw relay: a producer that writes only the frame
# keys, a middle hop that forwards its input uncopied (TUSK_ACTOR_FORWARD).
topology "$tmp/t3fwd.xml" $MiB "$(p count "$N")$(p stamp true)$(p fill keys)" passthrough "$(p forward true)" "$cons"
topology "$tmp/t2.xml" $MiB "$(p count "$N")$(p stamp true)" "" "" "$cons"
topology "$tmp/s3.xml" 4096 "$(p count "$K")$(p stamp true)" passthrough "" "$cons"
if [ "${BENCH_CURVE_ONLY:-0}" = 1 ]; then
    # Each round: without CURVE and with it, back to back.
    r=1
    while [ "$r" -le "$REPEAT" ]; do
        log "CURVE on and off over tcp, round $r of $REPEAT"
        raw raw2_tcp tcp -s $MiB -n "$N"
        raw raw2curve_tcp tcp -s $MiB -n "$N" --curve
        tusk tusk2_tcp tcp "$tmp/t2.xml" none
        tusk tusk2curve_tcp tcp "$tmp/t2.xml" curve
        raw raw3_tcp tcp -s $MiB -n "$N" --relay
        raw raw3curve_tcp tcp -s $MiB -n "$N" --relay --curve
        tusk tusk3_tcp tcp "$tmp/t3.xml" none
        tusk tusk3curve_tcp tcp "$tmp/t3.xml" curve
        tusk tusk3fwd_tcp tcp "$tmp/t3fwd.xml" none
        tusk tusk3fwdcurve_tcp tcp "$tmp/t3fwd.xml" curve
        r=$((r + 1))
    done
    load_after=$(cut -d' ' -f1-3 /proc/loadavg)
    cat <<EOF
### Machine and command

- date: $(date -u '+%Y-%m-%d %H:%M UTC'); source: $rev
- CPU: $model, $cores cores${virt:+, virtualised ($virt)}, memory $mem
- OS: $os, kernel $kernel
- libzmq $zmqv (CURVE: libsodium), $ccv, CFLAGS $cflags
- load average (1, 5, 15 min) before: $load_before; after: $load_after
- command: \`BENCH_CURVE_ONLY=1 bench/run.sh${arg:+ $arg}\` (BENCH_BUFFERS=$N, BENCH_REPEAT=$REPEAT, BENCH_HWM=$HWM)

### The cost of CURVE: tcp loopback, 1 MiB buffers, MB/s (10^6 bytes), median of $REPEAT (every run in brackets)

| chain | processes | without CURVE | with CURVE | with / without, per round |
| --- | ---: | ---: | ---: | ---: |
| raw libzmq PUSH -> PULL, zero-copy | 2 | $(cell raw2_tcp) | $(cell raw2curve_tcp) | $(ratio raw2curve_tcp raw2_tcp) |
| tusk: bench_producer -> bench_consumer | 2 | $(cell tusk2_tcp) | $(cell tusk2curve_tcp) | $(ratio tusk2curve_tcp tusk2_tcp) |
| raw PUSH -> relay -> PULL | 3 | $(cell raw3_tcp) | $(cell raw3curve_tcp) | $(ratio raw3curve_tcp raw3_tcp) |
| tusk: bench_producer -> passthrough -> bench_consumer | 3 | $(cell tusk3_tcp) | $(cell tusk3curve_tcp) | $(ratio tusk3curve_tcp tusk3_tcp) |
| tusk, fill=keys -> passthrough forward=true | 3 | $(cell tusk3fwd_tcp) | $(cell tusk3fwdcurve_tcp) | $(ratio tusk3fwdcurve_tcp tusk3fwd_tcp) |
| tusk with CURVE / raw with CURVE, 3 processes | | | | $(ratio tusk3curve_tcp raw3curve_tcp) |
EOF
    exit 0
fi
for t in ipc tcp; do
    r=1
    while [ "$r" -le "$REPEAT" ]; do
        log "throughput over $t, round $r of $REPEAT"
        raw "raw2_$t" $t -s $MiB -n "$N"
        raw "raw2fill_$t" $t -s $MiB -n "$N" --fill
        tusk "tusk2_$t" $t "$tmp/t2.xml"
        raw "raw3_$t" $t -s $MiB -n "$N" --relay
        raw "raw3copy_$t" $t -s $MiB -n "$N" --relay-copy --fill --header
        tusk "tusk3_$t" $t "$tmp/t3.xml"
        tusk "tusk3keys_$t" $t "$tmp/t3keys.xml"
        tusk "tusk3fwd_$t" $t "$tmp/t3fwd.xml"
        raw "raw3small_$t" $t -s 4096 -n "$K" --relay
        tusk "tusk3small_$t" $t "$tmp/s3.xml"
        r=$((r + 1))
    done
done

# ---- latency at low rate --------------------------------------------------------------
# lat NAME TRANSPORT SIZE RATE COUNT: the tusk chain with stamps, then the
# raw 3-process relay at the same rate.
lat() {
    lname=$1 ltr=$2 size=$3 rate=$4 count=$5
    skip=$((count / 20))
    topology "$tmp/lat.xml" "$size" "$(p count "$count")$(p rate "$rate")$(p stamp true)" passthrough "" \
        "$(p stamp true)$(p skip "$skip")$(p latency_file "$tmp/consumer.txt")"
    log "latency over $ltr: $size B at $rate buffers/s"
    tusk "${lname}_tusk" "$ltr" "$tmp/lat.xml"
    cp "$tmp/consumer.txt" "$tmp/$lname.tusk"
    raw "${lname}_raw" "$ltr" -s "$size" -n "$count" --relay --rate "$rate" --skip "$skip"
    tail -n1 "$tmp/${lname}_raw.lines" >"$tmp/$lname.raw"
}
lat lat_1m_ipc ipc $MiB 100 500
lat lat_4k_ipc ipc 4096 1000 5000
lat lat_1m_tcp tcp $MiB 100 500
lat lat_4k_tcp tcp 4096 1000 5000

# ---- emulator overhead -------------------------------------------------------------------
log "emulator overhead"
"$build/bench/emulator_overhead" --repeat 9 >"$tmp/emu.md"

load_after=$(cut -d' ' -f1-3 /proc/loadavg)

# ---- report ---------------------------------------------------------------------------------
us() { awk -v n="$1" 'BEGIN { printf "%.0f", n / 1000 }'; }
msgs() { awk -v m="$(med "$1")" 'BEGIN { printf "%.0f", m * 1e6 / 4096 }'; }
cat <<EOF
### Machine and command

- date: $(date -u '+%Y-%m-%d %H:%M UTC'); source: $rev
- CPU: $model, $cores cores${virt:+, virtualised ($virt)}, memory $mem
- OS: $os, kernel $kernel
- libzmq $zmqv, $ccv, CFLAGS $cflags
- load average (1, 5, 15 min) before: $load_before; after: $load_after
- command: \`bench/run.sh${arg:+ $arg}\` (BENCH_BUFFERS=$N, BENCH_SMALL=$K, BENCH_REPEAT=$REPEAT, BENCH_HWM=$HWM)

### Throughput, 1 MiB buffers: MB/s (10^6 bytes), median of $REPEAT (every run in brackets)

Steady figures: bytes over the time from the first to the last buffer at
the receiver. Every link has hwm $HWM; $N buffers per run.

| chain | processes | ipc | tcp loopback |
| --- | ---: | ---: | ---: |
| raw libzmq PUSH -> PULL, zero-copy | 2 | $(cell raw2_ipc) | $(cell raw2_tcp) |
| raw, the sender copies each buffer first | 2 | $(cell raw2fill_ipc) | $(cell raw2fill_tcp) |
| tusk: bench_producer -> bench_consumer | 2 | $(cell tusk2_ipc) | $(cell tusk2_tcp) |
| raw PUSH -> relay -> PULL, the relay forwards untouched | 3 | $(cell raw3_ipc) | $(cell raw3_tcp) |
| raw, the sender copies, the relay copies, 2-frame messages | 3 | $(cell raw3copy_ipc) | $(cell raw3copy_tcp) |
| **tusk: bench_producer -> passthrough -> bench_consumer** | 3 | **$(cell tusk3_ipc)** | **$(cell tusk3_tcp)** |
| tusk, no actor copies (fill=keys -> bench_filter copy=keys) | 3 | $(cell tusk3keys_ipc) | $(cell tusk3keys_tcp) |
| tusk, fill=keys -> passthrough forward=true (uncopied middle hop) | 3 | $(cell tusk3fwd_ipc) | $(cell tusk3fwd_tcp) |
| tusk 3-proc / raw 3-proc (goal >= 80 %), per round | | **$(ratio tusk3_ipc raw3_ipc)** | **$(ratio tusk3_tcp raw3_tcp)** |
| tusk 3-proc / raw 3-proc with the same copies | | $(ratio tusk3_ipc raw3copy_ipc) | $(ratio tusk3_tcp raw3copy_tcp) |
| tusk without actor copies / raw 3-proc | | $(ratio tusk3keys_ipc raw3_ipc) | $(ratio tusk3keys_tcp raw3_tcp) |
| **tusk forwarding / raw 3-proc (like for like)** | | **$(ratio tusk3fwd_ipc raw3_ipc)** | **$(ratio tusk3fwd_tcp raw3_tcp)** |
| tusk 2-proc / raw 2-proc with the sender's copy | | $(ratio tusk2_ipc raw2fill_ipc) | $(ratio tusk2_tcp raw2fill_tcp) |

Whole run, tusk 3-proc (producer out_bytes / \`seconds\` of \`tusk-run --report\`,
START acknowledged to the last ENDED): ipc $(cell tusk3_ipc.run), tcp $(cell tusk3_tcp.run) MB/s.

Message rate, 4 KiB buffers, 3 processes ($K buffers per run), steady, messages/s:
raw ipc $(msgs raw3small_ipc), tusk ipc $(msgs tusk3small_ipc), tusk / raw $(ratio tusk3small_ipc raw3small_ipc);
raw tcp $(msgs raw3small_tcp), tusk tcp $(msgs tusk3small_tcp), tusk / raw $(ratio tusk3small_tcp raw3small_tcp).

### Latency at low rate, 3 processes: microseconds from the producer's stamp to the consumer

| transport | buffer | rate | tusk median | tusk p99 | tusk max | raw median | raw p99 | raw max |
| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |
EOF
for row in "ipc 1m 1 MiB 100" "ipc 4k 4 KiB 1000" "tcp 1m 1 MiB 100" "tcp 4k 4 KiB 1000"; do
    set -- $row
    f=$tmp/lat_$2_$1
    t=$(cat "$f.tusk")
    r=$(cat "$f.raw")
    echo "| $1 | $3 $4 | $5/s | $(us "$(echo "$t" | kv median_ns)") | $(us "$(echo "$t" | kv p99_ns)") |" \
        "$(us "$(echo "$t" | kv max_ns)") | $(us "$(echo "$r" | kv median_ns)") | $(us "$(echo "$r" | kv p99_ns)") |" \
        "$(us "$(echo "$r" | kv max_ns)") |"
done
cat <<EOF

### Emulator overhead: bench_producer -> passthrough -> null_consumer in one process

EOF
cat "$tmp/emu.md"
