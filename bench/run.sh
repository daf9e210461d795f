#!/bin/sh
# bench/run.sh [BUILD_DIR] - the distributed chain's benchmarks (issue 4):
# raw libzmq PUSH/PULL against tusk-run's producer -> passthrough -> null
# consumer, 1 MiB buffers over ipc and over tcp loopback; per-buffer latency
# at low rate; the emulator's overhead over direct hook calls.
#
# Builds `make bench` in BUILD_DIR (default ./build, configured already),
# runs everything in a temporary folder and prints markdown tables ready
# to paste into BENCHMARKS.md. About 5 minutes on 2 cores.
#
# Environment (defaults in brackets):
#   BENCH_BUFFERS   1 MiB buffers per throughput run [1000]
#   BENCH_REPEAT    runs per throughput figure; the median is shown [3]
#   BENCH_HWM       high-water mark of every link, raw and tusk [8]
#   BENCH_IDLE      wait up to this many seconds for the 1-minute load
#                   average to fall below 0.5 before starting [120]
#   BENCH_KEEP      1: keep the temporary folder (topologies, raw outputs)
set -eu

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/.." && pwd)
arg=${1:-}
build=${1:-build}
case $build in /*) ;; *) build=$(pwd)/$build ;; esac
N=${BENCH_BUFFERS:-1000}
REPEAT=${BENCH_REPEAT:-3}
HWM=${BENCH_HWM:-8}
IDLE=${BENCH_IDLE:-120}
MiB=1048576

[ -f "$build/Makefile" ] || {
    echo "bench/run.sh: $build is not a configured build folder (mkdir build && cd build && ../configure)" >&2
    exit 2
}
echo "building: make -C $build bench" >&2
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

# ---- machine ------------------------------------------------------------------
load1() { cut -d' ' -f1 /proc/loadavg; }
waited=0
while [ "$waited" -lt "$IDLE" ] && awk -v l="$(load1)" 'BEGIN { exit !(l >= 0.5) }'; do
    [ "$waited" -eq 0 ] && log "waiting (up to ${IDLE}s) for the load average ($(load1)) to fall below 0.5"
    sleep 5
    waited=$((waited + 5))
done
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
model=$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -n1)
cores=$(nproc)
mem=$(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)
kernel=$(uname -sr)
zmqv=$(pkg-config --modversion libzmq 2>/dev/null || echo unknown)
ccv=$(sed -n 's/^CC = //p' "$build/Makefile" | head -n1)
ccv="$ccv $($ccv -dumpfullversion 2>/dev/null || $ccv -dumpversion 2>/dev/null || true)"
cflags=$(sed -n 's/^CFLAGS = //p' "$build/Makefile" | head -n1)
virt=$(lscpu 2>/dev/null | sed -n 's/^Hypervisor vendor: *//p' | head -n1)
os=$(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME" || uname -s)

# ---- helpers --------------------------------------------------------------------
# kv KEY: the value of KEY=... in the line on stdin.
kv() { tr ' ' '\n' | sed -n "s/^$1=//p" | head -n1; }
# median of the numbers on stdin.
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.1f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# all FILE: the numbers of FILE on one line ("a / b / c").
all() { paste -sd/ "$1" | sed 's#/# / #g'; }

next_port() { port=$((port + 4)); }

# raw NAME TRANSPORT ARGS...: one zmq_pushpull run, MB/s appended to NAME.
raw() {
    name=$1 tr_=$2
    shift 2
    if [ "$tr_" = tcp ]; then next_port; ep=tcp://127.0.0.1:$port; else ep=ipc://$tmp/zpp; fi
    line=$("$zpp" --kv --hwm "$HWM" -e "$ep" "$@")
    echo "$line" >>"$tmp/$name.lines"
    echo "$line" | kv mb_per_s >>"$tmp/$name"
}

# topology FILE SIZE PRODUCER_PARAMS FILTER(yes|no) CONSUMER CONSUMER_PARAMS
topology() {
    {
        echo "<configuration>"
        echo " <producer hwm=\"$HWM\"><name>source</name><binary_code>bench_producer</binary_code><size>$2</size>"
        echo "  $3</producer>"
        last=source
        if [ "$4" = yes ]; then
            echo " <intermediary hwm=\"$HWM\"><name>copy</name><binary_code>passthrough</binary_code>"
            echo "  <data_source>source</data_source><size>$2</size></intermediary>"
            last=copy
        fi
        echo " <consumer hwm=\"$HWM\"><name>sink</name><binary_code>$5</binary_code><data_source>$last</data_source>"
        echo "  $6</consumer>"
        echo "</configuration>"
    } >"$1"
}
p() { printf '<parameter name="%s">%s</parameter>' "$1" "$2"; }

# tusk NAME TRANSPORT TOPOLOGY: one tusk-run, MB/s (producer out_bytes /
# the run's seconds, from --report) appended to NAME.
tusk() {
    name=$1 tr_=$2 topo=$3
    rep=$tmp/report.txt
    rm -f "$rep"
    extra=
    if [ "$tr_" = tcp ]; then next_port; extra="--base-port $port"; fi
    # shellcheck disable=SC2086
    if ! "$build/tusk-run" --no-live -q --actor-bin "$build/tusk-actor" --transport "$tr_" $extra \
        --report "$rep" "$topo" >"$tmp/tusk.out" 2>"$tmp/tusk.err"; then
        cat "$tmp/tusk.err" >&2
        echo "bench/run.sh: tusk-run failed on $topo" >&2
        exit 1
    fi
    bytes=$(grep '^instance=source' "$rep" | kv out_bytes)
    secs=$(grep '^run=' "$rep" | kv seconds)
    cat "$rep" >>"$tmp/$name.lines"
    awk -v b="$bytes" -v s="$secs" 'BEGIN { printf "%.1f\n", b / 1e6 / s }' >>"$tmp/$name"
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f %%", 100 * a / b }'; }

# ---- throughput -------------------------------------------------------------------
topology "$tmp/chain.xml" $MiB "$(p count "$N")" yes null_consumer ""
topology "$tmp/direct.xml" $MiB "$(p count "$N")" no null_consumer ""
for t in ipc tcp; do
    r=1
    while [ "$r" -le "$REPEAT" ]; do
        log "throughput over $t, round $r of $REPEAT"
        raw "raw2_$t" $t -s $MiB -n "$N"
        raw "raw3_$t" $t -s $MiB -n "$N" --relay
        raw "raw3copy_$t" $t -s $MiB -n "$N" --relay-copy --fill --header
        tusk "tusk3_$t" $t "$tmp/chain.xml"
        tusk "tusk2_$t" $t "$tmp/direct.xml"
        r=$((r + 1))
    done
done

# ---- latency at low rate ------------------------------------------------------------
# lat NAME TRANSPORT SIZE RATE COUNT: tusk chain with stamps, and the raw
# 3-process relay at the same rate.
lat() {
    lname=$1 ltr=$2 size=$3 rate=$4 count=$5
    skip=$((count / 20))
    topology "$tmp/lat.xml" "$size" "$(p count "$count")$(p rate "$rate")$(p stamp true)$(p frame 65536)" yes \
        bench_consumer "$(p stamp true)$(p skip "$skip")$(p latency_file "$tmp/$lname.tusk")"
    log "latency over $ltr: $size B at $rate buffers/s"
    tusk "${lname}_run" "$ltr" "$tmp/lat.xml"
    raw "${lname}_raw" "$ltr" -s "$size" -n "$count" --relay --rate "$rate" --skip "$skip"
    tail -n1 "$tmp/${lname}_raw.lines" >"$tmp/$lname.raw"
}
lat lat_1m_ipc ipc $MiB 100 400
lat lat_4k_ipc ipc 4096 1000 4000
lat lat_1m_tcp tcp $MiB 100 400
lat lat_4k_tcp tcp 4096 1000 4000

# ---- emulator overhead ---------------------------------------------------------------
log "emulator overhead"
"$build/bench/emulator_overhead" --repeat 5 >"$tmp/emu.md"

load_after=$(cut -d' ' -f1-3 /proc/loadavg)

# ---- report ---------------------------------------------------------------------------
us() { awk -v n="$1" 'BEGIN { printf "%.0f", n / 1000 }'; }
cat <<EOF
### Machine

- date: $(date -u '+%Y-%m-%d %H:%M UTC')
- CPU: $model, $cores cores${virt:+, virtualised ($virt)}, memory $mem
- OS: $os, kernel $kernel
- libzmq $zmqv, $ccv, CFLAGS $cflags
- load average before: $load_before; after: $load_after
- command: \`bench/run.sh${arg:+ $arg}\` (BENCH_BUFFERS=$N, BENCH_REPEAT=$REPEAT, BENCH_HWM=$HWM)

### Throughput, 1 MiB buffers, MB/s (10^6 bytes), median of $REPEAT (all runs in brackets)

| chain | processes | ipc | tcp loopback |
| --- | ---: | ---: | ---: |
| raw libzmq PUSH -> PULL, zero-copy | 2 | $(median <"$tmp/raw2_ipc") ($(all "$tmp/raw2_ipc")) | $(median <"$tmp/raw2_tcp") ($(all "$tmp/raw2_tcp")) |
| tusk: bench_producer -> null_consumer | 2 | $(median <"$tmp/tusk2_ipc") ($(all "$tmp/tusk2_ipc")) | $(median <"$tmp/tusk2_tcp") ($(all "$tmp/tusk2_tcp")) |
| raw libzmq PUSH -> relay -> PULL, relay forwards untouched | 3 | $(median <"$tmp/raw3_ipc") ($(all "$tmp/raw3_ipc")) | $(median <"$tmp/raw3_tcp") ($(all "$tmp/raw3_tcp")) |
| raw libzmq, sender fills, relay copies, 2-frame messages | 3 | $(median <"$tmp/raw3copy_ipc") ($(all "$tmp/raw3copy_ipc")) | $(median <"$tmp/raw3copy_tcp") ($(all "$tmp/raw3copy_tcp")) |
| **tusk: bench_producer -> passthrough -> null_consumer** | 3 | **$(median <"$tmp/tusk3_ipc")** ($(all "$tmp/tusk3_ipc")) | **$(median <"$tmp/tusk3_tcp")** ($(all "$tmp/tusk3_tcp")) |
| tusk 3-proc / raw 3-proc (goal >= 80 %) | | $(ratio "$(median <"$tmp/tusk3_ipc")" "$(median <"$tmp/raw3_ipc")") | $(ratio "$(median <"$tmp/tusk3_tcp")" "$(median <"$tmp/raw3_tcp")") |
| tusk 3-proc / raw 3-proc with the same copies | | $(ratio "$(median <"$tmp/tusk3_ipc")" "$(median <"$tmp/raw3copy_ipc")") | $(ratio "$(median <"$tmp/tusk3_tcp")" "$(median <"$tmp/raw3copy_tcp")") |
| tusk 2-proc / raw 2-proc | | $(ratio "$(median <"$tmp/tusk2_ipc")" "$(median <"$tmp/raw2_ipc")") | $(ratio "$(median <"$tmp/tusk2_tcp")" "$(median <"$tmp/raw2_tcp")") |

raw: bytes / (receiver's last message - sender's first send). tusk: the
producer's out_bytes / \`seconds\` of \`tusk-run --report\` (START acknowledged
to the last instance ENDED). $N buffers per run, hwm $HWM on every link.

### Latency at low rate (producer stamp -> consumer entry), 3 processes, us

| transport | buffer | rate | tusk median | tusk p99 | tusk max | raw median | raw p99 | raw max |
| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |
EOF
for row in "ipc 1m 1 MiB 100" "ipc 4k 4 KiB 1000" "tcp 1m 1 MiB 100" "tcp 4k 4 KiB 1000"; do
    set -- $row
    f=$tmp/lat_$2_$1
    t=$(cat "$f.tusk") r=$(cat "$f.raw")
    echo "| $1 | $3 $4 | $5/s | $(us "$(echo "$t" | kv median_ns)") | $(us "$(echo "$t" | kv p99_ns)") | $(us "$(echo "$t" | kv max_ns)") | $(us "$(echo "$r" | kv median_ns)") | $(us "$(echo "$r" | kv p99_ns)") | $(us "$(echo "$r" | kv max_ns)") |"
done
cat <<EOF

### Emulator overhead: bench_producer -> passthrough -> null_consumer, one process

EOF
cat "$tmp/emu.md"
