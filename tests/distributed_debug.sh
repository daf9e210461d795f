#!/bin/sh
# distributed_debug.sh - what tusk-run keeps and shows for actor authors,
# and one instance of a running chain under a debugging tool (issue 24):
#   - a clean run keeps its run folder (the retention rule, --keep-runs,
#     default 10) and says where, and prints what its consumers printed
#     (null_consumer's line) under the summary; --keep-runs 0 removes a
#     clean run's own folder; --keep-runs 2 keeps the newest two finished
#     folders and removes (and counts) the older;
#   - --keep keeps it (each instance's log and configuration folder),
#     says where, and the retention rule never removes it;
#   - --debug NAME=valgrind runs that one instance under valgrind's
#     memcheck: a clean actor passes (its report is there and empty), a
#     leaking one (tests/actors/leaky.c) fails the run (exit 3) with a
#     report naming leaky_remember; skipped visibly without valgrind;
#   - --debug NAME=gdbserver:PORT waits for gdb, which attaches with
#     `gdb -batch` and lets the run finish; skipped visibly without
#     gdbserver or gdb;
#   - the same under a controller that stays up (--serve): the instance
#     stays under valgrind over two runs (a reset between) and the verdict
#     comes at the quit (clean: exit 0; the leaking consumer: exit 3
#     naming leaky_remember); gdb attaches once and the instance stays
#     under it over two runs, exiting normally at the quit;
#   - a --debug naming no actor, no instance or no tool: exit 2, said.
# It waits for states, never for time.
set -eu
me=distributed_debug
b=${abs_top_builddir:?run through make check}
s=${abs_top_srcdir:?run through make check}
libs=${TUSK_TEST_ACTOR_PATH:?run through make check}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tusk-ddebug.XXXXXX")
cd "$tmp"
# shellcheck source=tests/distributed_lib.sh
. "$s/tests/distributed_lib.sh"
# Run folders in this test's own private folder (tusk-run's default
# place when XDG_RUNTIME_DIR is not set): what is left there is seen.
mkdir private
TMPDIR=$tmp/private
TUSK_ACTOR_PATH=${TUSK_ACTOR_PATH:?run through make check}:$libs
export TMPDIR TUSK_ACTOR_PATH
unset XDG_RUNTIME_DIR

"$b/tusk-adf" gen -n 300 --seed 3 -o input.adf 2>/dev/null
cat >chain.xml <<'EOF'
<?xml version="1.0"?>
<configuration>
  <producer>
    <name>reader</name>
    <binary_code>file_producer</binary_code>
    <size>65536</size>
    <parameter name="file">input.adf</parameter>
  </producer>
  <intermediary>
    <name>copy</name>
    <binary_code>passthrough</binary_code>
    <data_source>reader</data_source>
    <size>65536</size>
  </intermediary>
  <consumer>
    <name>sink</name>
    <binary_code>null_consumer</binary_code>
    <data_source>copy</data_source>
  </consumer>
</configuration>
EOF
sed 's|<binary_code>null_consumer</binary_code>|<binary_code>leaky</binary_code>|' chain.xml >leak.xml
frames=$("$b/tusk-adf" stats input.adf | sed -n 's/^frames: *\([0-9]*\) .*/\1/p')
[ -n "$frames" ] || fail "tusk-adf stats says no frame count"
report="null_consumer sink[0]: 79 buffers, $frames frames, $(wc -c <input.adf | tr -d ' ') bytes"
# The run folder tusk-run names when it starts.
run_folder() { sed -n 's/^tusk-run: run 1 started: .*(run folder \(.*\))$/\1/p' err.txt; }
# A controller that stays up (--serve) with --debug DEBUG, on TOPOLOGY, in
# the run folder srv: serve_up DEBUG TOPOLOGY [nowait] (nowait: not
# waiting for it to be ready: gdbserver waits for gdb first); ctl ARGS:
# a command to it; two_runs: runs 1 and 2, a reset between, each whole;
# serve_quit STATUS: quit, and it exits STATUS.
spid= gpid=
trap 'for p in $gpid $spid; do kill "$p" 2>/dev/null; done; rm -rf "$tmp"' EXIT
serve_up() {
    # Gone before it starts: the last controller's "waiting for commands"
    # in serve.err would be no news of this one.
    rm -rf srv serve.out serve.err
    mkdir -m 700 srv
    timeout 600 "$b/tusk-run" --no-live --actor-bin "$b/tusk-actor" --serve --debug "$1" --run-dir "$tmp/srv" "$2" \
        >serve.out 2>serve.err &
    spid=$!
    [ "${3:-}" = nowait ] ||
        until_true 1200 grep -q "waiting for commands" serve.err || fail "the controller never became ready: $(cat serve.err)"
}
ctl() { timeout 300 "$b/tusk-run" "$@" "$tmp/srv" >ctl.txt 2>ctl.err; }
two_runs() {
    for r in 1 2; do
        [ "$r" = 1 ] || ctl --reset || fail "--reset: $(cat ctl.err)"
        ctl --start || fail "--start (run $r): $(cat ctl.err)"
        ctl --wait || fail "--wait (run $r): $(cat ctl.err)"
        grep -q "^run $r ended cleanly" ctl.txt || { cat ctl.txt >&2; fail "run $r did not end cleanly"; }
        grep -q "^instance=sink\[0\] .* in_frames=$frames " "srv/run-$r.report" ||
            fail "run $r: sink[0] got not the $frames frames"
    done
}
serve_quit() {
    ctl --quit || fail "--quit: $(cat ctl.err)"
    st=0
    wait "$spid" || st=$?
    spid=
    [ "$st" -eq "$1" ] || { cat serve.err >&2; fail "the controller exited $st after --quit, not $1"; }
}

step "a clean run: the consumer's report under the summary, the run folder kept (the retention rule), said"
run chain.xml >out.txt 2>err.txt || fail "the chain failed"
awk '/^run time/ { t = 1 } t && /^sink\[0\] reports:$/ { r = 1; next } r { print; exit }' out.txt >said.txt
[ "$(cat said.txt)" = "$report" ] || fail "under the summary: '$(cat said.txt)', expected '$report'"
dir=$(run_folder)
[ -n "$dir" ] || fail "tusk-run did not name its run folder"
grep -qxF "tusk-run: logs kept in $dir" err.txt || fail "a clean run did not say where it kept $dir"
[ -f "$dir/sink.0.log" ] && [ -f "$dir/ended" ] && [ ! -e "$dir/lock" ] ||
    fail "the kept run folder $dir lacks its logs or its end mark, or keeps its lock"
first=$dir

step "--keep-runs 0: a clean run removes its own folder and says nothing of logs; others stay"
run --keep-runs 0 chain.xml >out.txt 2>err.txt || fail "the chain failed"
dir=$(run_folder)
[ -n "$dir" ] && [ ! -e "$dir" ] || fail "the run folder '$dir' was left after a clean run with --keep-runs 0"
! grep -q "logs kept" err.txt || fail "a clean run with --keep-runs 0 said it kept its logs"
[ -d "$first" ] || fail "--keep-runs 0 removed another run's folder"

step "--keep-runs 2: the newest 2 finished run folders stay, older ones are removed and counted"
run --keep-runs 2 chain.xml >out.txt 2>err.txt || fail "the chain failed"
second=$(run_folder)
[ -d "$first" ] && [ -d "$second" ] || fail "--keep-runs 2 with 2 finished runs removed one"
! grep -q "older run folder" err.txt || fail "--keep-runs 2 with 2 finished runs said it removed some"
run --keep-runs 2 chain.xml >out.txt 2>err.txt || fail "the chain failed"
third=$(run_folder)
[ ! -e "$first" ] && [ -d "$second" ] && [ -d "$third" ] || fail "--keep-runs 2: not exactly the oldest removed"
grep -qF "tusk-run: removed 1 older run folder of " err.txt || fail "the removal was not said"

step "--keep: the run folder stays, said at the start and the end, with every log and configuration folder, never pruned"
run --keep chain.xml >out.txt 2>err.txt || fail "the chain failed"
dir=$(run_folder)

grep -qxF "tusk-run: logs kept in $dir" err.txt || fail "tusk-run --keep did not say where it kept $dir"
for i in reader.0 copy.0 sink.0; do
    [ -f "$dir/$i.log" ] || fail "$dir/$i.log is missing"
    [ -f "$dir/$i/parameters.conf" ] || fail "$dir/$i/parameters.conf is missing"
done
grep -qxF "$report" "$dir/sink.0.log" || fail "sink.0.log lacks the consumer's report"
run --keep-runs 1 chain.xml >out.txt 2>err.txt || fail "the chain failed"
[ -d "$dir" ] && [ ! -e "$second" ] && [ ! -e "$third" ] || fail "--keep-runs 1 pruned a --keep folder, or not the others"
[ -d "$(run_folder)" ] || fail "--keep-runs 1 removed the run's own folder"

step "--debug with no such actor, instance or tool: exit 2, said"
expect 2 "--debug 'nope=valgrind': chain.xml has no actor 'nope'" --debug nope=valgrind chain.xml
expect 2 "--debug 'copy[1]=valgrind': copy has 1 instance (0 to 0)" --debug 'copy[1]=valgrind' chain.xml
expect 2 "--debug 'copy=gdb': the tool is gdbserver:PORT (a port, 1 to 65535) or valgrind" --debug copy=gdb chain.xml
expect 2 "--debug 'copy': NAME[K]=gdbserver:PORT or NAME[K]=valgrind" --debug copy chain.xml

if [ -z "${VALGRIND:-}" ] || [ "${SANITIZERS:-no}" = yes ]; then
    echo "$me: SKIP (--debug NAME=valgrind): valgrind not found, or a sanitizer build (Debian: apt-get install valgrind)"
else
    step "--debug copy=valgrind: that instance under memcheck, clean: exit 0, its empty report kept with --keep"
    run --keep --debug copy=valgrind chain.xml >out.txt 2>err.txt || fail "the chain failed under --debug copy=valgrind"
    dir=$(run_folder)
    grep -qF "tusk-run: copy[0] runs under valgrind's memcheck, its report in $dir/copy.0.valgrind" err.txt ||
        fail "tusk-run did not say where valgrind's report goes"
    grep -qxF "tusk-run: valgrind: no errors and no leaks in copy[0]" err.txt || fail "no verdict on copy[0]"
    [ -f "$dir/copy.0.valgrind" ] || fail "$dir/copy.0.valgrind: not there"
    [ ! -s "$dir/copy.0.valgrind" ] || fail "$dir/copy.0.valgrind: not empty"
    [ ! -e "$dir/reader.0.valgrind" ] || fail "reader[0] ran under valgrind too"
    grep -qxF "$report" out.txt || fail "the consumer's report is missing"

    step "--debug sink=valgrind on a leaking consumer: exit 3, the report naming the leaking function"
    expect 3 "run 1 ended, but valgrind found errors in sink[0]" --debug sink=valgrind leak.xml
    grep -q "definitely lost" err.txt || fail "valgrind's report is not shown"
    grep -q "leaky_remember (leaky.c" err.txt || fail "valgrind's report does not name leaky_remember (leaky.c)"

    step "--serve --debug copy=valgrind: the instance stays under memcheck over two runs; the verdict at the quit"
    serve_up copy=valgrind chain.xml
    grep -qF "tusk-run: copy[0] runs under valgrind's memcheck, its report in $tmp/srv/copy.0.valgrind" serve.err ||
        fail "tusk-run --serve did not say where valgrind's report goes"
    two_runs
    serve_quit 0
    grep -qxF "tusk-run: valgrind: no errors and no leaks in copy[0]" serve.err || fail "no verdict on copy[0]"
    [ -f srv/copy.0.valgrind ] && [ ! -s srv/copy.0.valgrind ] || fail "srv/copy.0.valgrind: not there, or not empty"

    step "--serve --debug sink=valgrind on a leaking consumer: one run, then the quit exits 3 naming the leak"
    serve_up sink=valgrind leak.xml
    ctl --start && ctl --wait || fail "the run of the leaking chain: $(cat ctl.err)"
    serve_quit 3
    grep -q "tusk-run: valgrind found errors in sink\[0\]: $tmp/srv/sink.0.valgrind" serve.err ||
        fail "the quit did not say valgrind's errors: $(tail -n 3 serve.err)"
    grep -q "leaky_remember (leaky.c" serve.err || fail "valgrind's report does not name leaky_remember (leaky.c)"
fi

if ! command -v gdbserver >/dev/null 2>&1 || ! command -v gdb >/dev/null 2>&1; then
    echo "$me: SKIP (--debug NAME=gdbserver:PORT): gdbserver or gdb not found (Debian: apt-get install gdbserver gdb)"
else
    step "--debug copy=gdbserver:PORT: that instance waits for gdb; gdb -batch attaches and the run ends cleanly"
    port=$((20000 + $$ % 20000))
    run --debug "copy=gdbserver:$port" chain.xml >out.txt 2>err.txt &
    pid=$!
    # The glob is expanded at each try: the run folder is made after this starts.
    listening() { grep -qs "Listening on port $port" private/tusk-*/tusk-run.*/copy.0.log; }
    until_true 600 listening ||
        { kill "$pid" 2>/dev/null; fail "gdbserver did not listen on port $port"; }
    grep -qF "tusk-run: copy[0] waits under gdbserver for gdb: gdb -ex 'target remote localhost:$port'" err.txt ||
        { kill "$pid" 2>/dev/null; fail "tusk-run did not say how to attach"; }
    timeout 120 gdb -batch -ex "target remote localhost:$port" -ex continue >gdb.txt 2>&1 ||
        { kill "$pid" 2>/dev/null; cat gdb.txt >&2; fail "gdb -batch failed"; }
    status=0
    wait "$pid" || status=$?
    [ "$status" -eq 0 ] || fail "tusk-run exited $status with copy[0] under gdbserver"
    grep -qxF "$report" out.txt || fail "the consumer's report is missing"

    step "--serve --debug copy=gdbserver:PORT: gdb attaches once, the instance stays under it over two runs"
    port=$((port + 1))
    serve_up "copy=gdbserver:$port" chain.xml nowait
    listening() { grep -qs "Listening on port $port" srv/copy.0.log; }
    until_true 600 listening || fail "gdbserver did not listen on port $port"
    # gdb continues the instance until it exits (at the quit).
    timeout 300 gdb -batch -ex "target remote localhost:$port" -ex continue >gdb.txt 2>&1 &
    gpid=$!
    until_true 1200 grep -q "waiting for commands" serve.err || fail "the controller never became ready under gdb"
    two_runs
    serve_quit 0
    status=0
    wait "$gpid" || status=$?
    gpid=
    [ "$status" -eq 0 ] || { cat gdb.txt >&2; fail "gdb -batch exited $status"; }
    grep -q "exited normally" gdb.txt || { cat gdb.txt >&2; fail "under gdb, copy[0] did not exit normally"; }
fi
echo "$me: PASS"
