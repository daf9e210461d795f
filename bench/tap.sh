#!/bin/sh
# bench/tap.sh [BUILD_DIR] - the sampling tap's cost (distributed/tap.h):
# bench_producer -> passthrough -> bench_consumer, 1 MiB buffers over ipc,
# under tusk-run --serve, the run's MB/s
#   - without a tap;
#   - with a tap on passthrough -> bench_consumer and a monitor (tusk-tap)
#     that takes every sample it can: every buffer offered, or every 10th
#     (`tap LINK every=10`);
#   - with a tap and a monitor that took one sample and fell behind (the
#     tap drops, and counts, the rest).
# Prints a markdown table (median of BENCH_REPEAT runs) and the tap's
# counts, for BENCHMARKS.md. Builds `make bench tusk-tap` in BUILD_DIR
# (default ./build, configured already).
#
# Environment: BENCH_BUFFERS 1 MiB buffers per run [2000]; BENCH_REPEAT
# runs per figure [3]; BENCH_KEEP 1: keep the temporary folder.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-$here/../build}" && pwd)
N=${BENCH_BUFFERS:-2000}
REPEAT=${BENCH_REPEAT:-3}
make -C "$build" -s bench tusk-tap >/dev/null
export TUSK_ACTOR_PATH="$build/bench/.libs:$build/actors/.libs"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tusk-bench-tap.XXXXXX")
[ "${BENCH_KEEP:-0}" = 1 ] || trap 'rm -rf "$tmp"' EXIT
p() { printf '<parameter name="%s">%s</parameter>' "$1" "$2"; }
cat >"$tmp/chain.xml" <<EOF
<configuration>
 <producer hwm="8"><name>source</name><binary_code>bench_producer</binary_code>
  <size>1048576</size>$(p count "$N")</producer>
 <intermediary hwm="8"><name>copy</name><binary_code>passthrough</binary_code>
  <data_source>source</data_source><size>1048576</size></intermediary>
 <consumer hwm="8"><name>sink</name><binary_code>bench_consumer</binary_code>
  <data_source>copy</data_source></consumer>
</configuration>
EOF

# one MODE: none | fast | tenth | stalled; prints the run's MB/s and the tap's counts
one() {
    rd=$tmp/rd.$$.$1
    rm -rf "$rd"
    mkdir -m 700 "$rd"
    "$build/tusk-run" --serve --no-live -q --actor-bin "$build/tusk-actor" --web 0 --run-dir "$rd" \
        "$tmp/chain.xml" >"$tmp/serve.out" 2>"$tmp/serve.err" &
    spid=$!
    i=0
    until grep -q "waiting for commands" "$tmp/serve.err"; do
        i=$((i + 1))
        [ $i -lt 600 ] || { cat "$tmp/serve.err" >&2; exit 1; }
        sleep 0.1
    done
    tpid=
    if [ "$1" != none ]; then
        every=1
        [ "$1" != tenth ] || every=10
        addr=$("$build/tusk-run" --tap "copy[0]->sink[0] every=$every" "$rd" | sed 's/.*: //')
        if [ "$1" != stalled ]; then
            "$build/tusk-tap" -q --run-dir "$rd" "$addr" >"$tmp/tap.out" 2>&1 &
        else
            "$build/tusk-tap" -q --count 1 --stay --run-dir "$rd" "$addr" >"$tmp/tap.out" 2>&1 &
        fi
        tpid=$!
        until grep -q connected "$tmp/tap.out"; do sleep 0.1; done
    fi
    "$build/tusk-run" --start "$rd" >/dev/null
    "$build/tusk-run" --wait "$rd" >"$tmp/summary.txt"
    rate=$(sed -n 's/.*produced .* MB (\([0-9.]*\) MB\/s).*/\1/p' "$tmp/summary.txt")
    counts=
    if [ -n "$tpid" ]; then
        url=$(sed -n 1p "$rd/web")
        sleep 1 # the page's snapshot: every 0.5 s
        counts=$(curl -s "${url}metrics" | awk '/^tusk_link_tap_(samples|dropped)_total\{from="copy/ {
            sub(/tusk_link_tap_/, ""); sub(/_total.*\}/, ""); printf "%s %s ", $1, $2 }')
        kill "$tpid"
        wait "$tpid" || true
    fi
    "$build/tusk-run" --quit "$rd" >/dev/null
    wait "$spid" || true
    echo "$rate $counts"
}

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
for mode in none fast tenth stalled; do
    : >"$tmp/$mode"
    r=0
    while [ $r -lt "$REPEAT" ]; do
        line=$(one $mode)
        echo "bench/tap.sh: $mode: $line" >&2
        echo "$line" | awk '{ print $1 }' >>"$tmp/$mode"
        echo "$line" >>"$tmp/$mode.lines"
        r=$((r + 1))
    done
done
cat <<EOF
| bench_producer -> passthrough -> bench_consumer, 1 MiB x $N, ipc | MB/s (median of $REPEAT) | tap's counts (last run) |
| --- | ---: | --- |
| no tap | $(median <"$tmp/none") | |
| tap on copy -> sink, a monitor taking every sample it can | $(median <"$tmp/fast") | $(tail -1 "$tmp/fast.lines" | cut -d' ' -f2-) |
| the same, every 10th buffer offered (every=10) | $(median <"$tmp/tenth") | $(tail -1 "$tmp/tenth.lines" | cut -d' ' -f2-) |
| tap on copy -> sink, a monitor that fell behind (one sample) | $(median <"$tmp/stalled") | $(tail -1 "$tmp/stalled.lines" | cut -d' ' -f2-) |
EOF
