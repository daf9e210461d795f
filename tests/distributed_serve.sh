#!/bin/sh
# distributed_serve.sh - a controller that stays up (tusk-run --serve;
# distributed/ctlstate.h), driven from the command line:
#
#  - configured once, then several runs without reloading: each instance
#    of the test filter (tests/actors/runcount.c) says at every stop that
#    process_config ran once in its process and its process id is the
#    same; every run has its own number, summary and report, with exact
#    counts (every buffer the producer sent reached the writer);
#  - reset between runs: process_reset and process_initialise again (the
#    file producer rewinds; the filter counts a second initialise);
#  - a parameter the actor declares changeable, set between runs, takes
#    effect in the next run; one it does not declare, a value its
#    process_update refuses (the old one stays), an unknown actor, a
#    command in the wrong phase: refused with a message saying why;
#  - pause and resume during a run held at a known block (the filter
#    waits for a file: a state, never a time): paused, then every buffer
#    arrives;
#  - an instance killed (kill -9) between runs: the next start respawns
#    it (a new process, configured and initialised, with the parameters
#    set between runs), a restart in the run's report, summary and
#    /metrics (--web); a respawn that cannot start (tusk-actor missing)
#    refuses the start, naming the instance; the run is whole (every
#    buffer, the output equal to the input);
#  - an instance killed during a run: that run stops for it; the reset
#    respawns it and its neighbours send to it again (PEER_BACK): the
#    next run is whole;
#  - --quit: every instance and the controller end, exit status 0;
#  - the live status table: off a terminal plain lines (no escape
#    sequences); on a terminal (script(1)) redrawn in place.
set -eu
b=${abs_top_builddir:?run through make check}
libs=${TUSK_TEST_ACTOR_PATH:?run through make check}
TUSK_ACTOR_PATH=${TUSK_ACTOR_PATH:-$b/actors/.libs}:$libs
export TUSK_ACTOR_PATH
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tusk-serve.XXXXXX")
spid=
trap '[ -n "$spid" ] && kill "$spid" 2>/dev/null; rm -rf "$tmp"' EXIT
cd "$tmp"
TMPDIR=$tmp
export TMPDIR
unset XDG_RUNTIME_DIR

me=distributed_serve
# shellcheck source=tests/distributed_lib.sh
. "${abs_top_srcdir:-${top_srcdir:-..}}/tests/distributed_lib.sh"
srv=$tmp/srv
# ctl ARGS...: a command to the serving controller (its output in ctl.txt, ctl.err).
ctl() { timeout 120 "$b/tusk-run" "$@" "$srv" >ctl.txt 2>ctl.err; }
# refused NEEDLE ARGS...: the command fails, saying NEEDLE.
refused() {
    needle=$1
    shift
    ! ctl "$@" || fail "tusk-run $* was taken"
    grep -qF -- "$needle" ctl.err || { cat ctl.err >&2; fail "tusk-run $*: no '$needle'"; }
}
phase() { "$b/tusk-run" --status "$srv" 2>/dev/null | head -n 1 | grep -q "^run [0-9]*: $1,"; }
# value KEY INSTANCE FILE: a figure of an instance line of a report.
value() { grep "^instance=$2 " "$3" | sed -n "s/.* $1=\([0-9]*\).*/\1/p"; }
total() { sed -n "s/^run=.* $1=\([0-9]*\).*/\1/p" "$2"; }

"$b/tusk-adf" gen -n 3000 --seed 21 -o input.adf 2>/dev/null
# reader -> count (2 instances of the test filter) -> writer.
cat >serve.xml <<XML
<configuration>
  <producer><name>reader</name><binary_code>file_producer</binary_code><size>16384</size>
    <parameter name="file">input.adf</parameter></producer>
  <intermediary instances="2"><name>count</name><binary_code>runcount</binary_code>
    <data_source>reader</data_source><size>16384</size>
    <parameter name="log">$tmp/count.log</parameter><parameter name="tag">A</parameter>
    <parameter name="hold_file">$tmp/go</parameter><parameter name="hold_at">2</parameter></intermediary>
  <consumer><name>writer</name><binary_code>file_writer</binary_code><data_source>count</data_source>
    <parameter name="file">output.adf</parameter></consumer>
</configuration>
XML
touch go # no holding until the pause test
# tusk-actor, unless $tmp/no-actor exists (a respawn that cannot start).
cat >actor.sh <<EOF
#!/bin/sh
[ -e "$tmp/no-actor" ] && { echo "actor.sh: no tusk-actor now" >&2; exit 1; }
exec "$b/tusk-actor" "\$@"
EOF
chmod +x actor.sh

step "--serve: configured once, then ready for commands"
timeout 300 "$b/tusk-run" --no-live --actor-bin "$tmp/actor.sh" --serve --web 0 --run-dir "$srv" serve.xml \
    >serve.out 2>serve.err &
spid=$!
until_true 600 phase ready || { cat serve.err >&2; fail "the controller never became ready"; }
grep -q "ready: 4 instances of 3 actors configured and initialised" serve.err || fail "no word of being ready"
refused "stop: no run is going on (ready)" --stop
refused "pause: no run is going on" --pause

step "run 1: its own summary and report, every buffer"
ctl --start || fail "--start refused: $(cat ctl.err)"
grep -q "run 1 starting" ctl.txt || fail "--start did not say run 1"
ctl --wait || fail "--wait failed"
grep -q "^run 1 ended cleanly" ctl.txt || { cat ctl.txt >&2; fail "run 1 did not end cleanly"; }
r1=$srv/run-1.report
[ -f "$r1" ] || fail "no $r1"
n=$(value out_buffers 'reader\[0\]' "$r1")
[ "$n" -gt 2 ] || fail "run 1: the reader sent $n buffers"
[ "$(value in_buffers 'writer\[0\]' "$r1")" = "$n" ] || fail "run 1: the writer got not the $n buffers sent"
[ "$(total lost "$r1")" = 0 ] || fail "run 1 lost buffers"
grep -q "^run=1 " "$r1" || fail "run 1's report names no run 1"
"$b/tusk-adf" diff --unordered input.adf output.adf >out.txt || fail "run 1's output differs from its input"
[ "$(grep -c '^stop ' count.log)" -eq 2 ] || fail "not one stop line per count instance after run 1"
grep -q "^stop instance=0 tag=A configs=1 inits=1 updates=0 " count.log || fail "count[0] after run 1: $(cat count.log)"
pids1=$(sed -n 's/.* pid=\([0-9]*\) .*/\1/p' count.log | sort | tr '\n' ' ')

step "between runs: reset, set tag=B; what may not change is refused"
ctl --reset || fail "--reset refused: $(cat ctl.err)"
grep -q "4 instances reset and initialised" ctl.txt || fail "--reset said: $(cat ctl.txt)"
ctl --set count.tag=B || fail "--set count.tag=B refused: $(cat ctl.err)"
grep -q "count.tag = B (2 instances)" ctl.txt || fail "--set said: $(cat ctl.txt)"
refused "parameter 'log' cannot change between runs (changeable: tag)" --set count.log=elsewhere
refused "it declares none changeable" --set reader.file=other.adf
refused "tag 'bad' refused" --set "count[1].tag=bad"
refused "the topology has no actor 'nosuch'" --set nosuch.tag=1
refused "actor count has 2 instances, not 3" --set "count[2].tag=1"

step "run 7 (--run 7): the same processes, configured once, initialised twice, tag B"
ctl --start --run 7 || fail "--start --run 7 refused: $(cat ctl.err)"
ctl --wait || fail "--wait failed"
grep -q "^run 7 ended cleanly" ctl.txt || { cat ctl.txt >&2; fail "run 7 did not end cleanly"; }
r7=$srv/run-7.report
[ "$(value out_buffers 'reader\[0\]' "$r7")" = "$n" ] || fail "run 7: after the reset the reader sent not $n buffers"
[ "$(value in_buffers 'writer\[0\]' "$r7")" = "$n" ] || fail "run 7: the writer got not $n buffers"
c0=$(value in_buffers 'count\[0\]' "$r7")
c1=$(value in_buffers 'count\[1\]' "$r7")
[ $((c0 + c1)) -eq "$n" ] || fail "run 7: count[0] $c0 + count[1] $c1 buffers, not $n"
"$b/tusk-adf" diff --unordered input.adf output.adf >out.txt || fail "run 7's output differs from its input"
[ "$(grep -c '^stop ' count.log)" -eq 4 ] || fail "not one more stop line per count instance after run 7"
for k in 0 1; do
    # count[1] refused tag=bad: it keeps B (and its parameters.conf too).
    grep -q "^stop instance=$k tag=B configs=1 inits=2 updates=1 " count.log ||
        fail "count[$k] after run 7: $(cat count.log)"
done
grep -q "^tag *= *B" "$srv/count.1/parameters.conf" || fail "count[1]'s parameters.conf lost tag B"
# Its blocks this run, as the actor counted them: the report's figure.
tail -n 2 count.log | grep -q "instance=0 .* blocks=$c0\$" || fail "count[0] counted not $c0 blocks in run 7"
pids7=$(tail -n 2 count.log | sed -n 's/.* pid=\([0-9]*\) .*/\1/p' | sort | tr '\n' ' ')
[ "$pids1" = "$pids7" ] || fail "the count instances' processes changed: $pids1 then $pids7"

step "pause and resume a run held at count's 2nd block"
ctl --reset || fail "--reset refused: $(cat ctl.err)"
rm -f go
ctl --start || fail "--start refused: $(cat ctl.err)"
grep -q "run 8 starting" ctl.txt || fail "the next run is not run 8: $(cat ctl.txt)"
refused "start: only between runs (now: running" --start
refused "reset: only between runs (now: running" --reset
ctl --pause || fail "--pause refused: $(cat ctl.err)"
touch go
until_true 600 phase paused || fail "the run never showed paused"
"$b/tusk-run" --status "$srv" >status.txt
grep -q "^writer\[0\] .* paused " status.txt || fail "writer[0] is not paused: $(cat status.txt)"
refused "only between runs (now: paused)" --set count.tag=C
ctl --resume || fail "--resume refused: $(cat ctl.err)"
ctl --wait || fail "--wait failed"
grep -q "^run 8 ended cleanly" ctl.txt || { cat ctl.txt >&2; fail "run 8 did not end cleanly"; }
[ "$(value in_buffers 'writer\[0\]' "$srv/run-8.report")" = "$n" ] || fail "run 8: the writer got not $n buffers"
grep -q "pause requested (tusk-run --pause) by cli." serve.err || fail "the pause is not logged"

step "count[1] killed (kill -9) between runs: the next start respawns it, a restart; the run is whole"
# whole RUN: every buffer the reader sent reached the writer through the
# two count instances (c0 + c1), none lost, the output equal to the input.
whole() {
    w_rep=$srv/run-$1.report
    [ "$(value in_buffers 'writer\[0\]' "$w_rep")" = "$n" ] || fail "run $1: the writer got not $n buffers"
    c0=$(value in_buffers 'count\[0\]' "$w_rep")
    c1=$(value in_buffers 'count\[1\]' "$w_rep")
    [ $((c0 + c1)) -eq "$n" ] || fail "run $1: count[0] $c0 + count[1] $c1 buffers, not $n"
    [ "$(total lost "$w_rep")" = 0 ] || fail "run $1 lost buffers"
    "$b/tusk-adf" diff --unordered input.adf output.adf >out.txt || fail "run $1's output differs from its input"
}
# restarts RUN INSTANCE: its figure in /metrics once the page shows run RUN
# (the page's snapshot comes every 0.5 s), or SKIP where there is no curl.
metric_restarts() {
    command -v curl >/dev/null || { echo SKIP; return 0; }
    mr_url=$(sed -n 1p "$srv/web")
    shows_run() {
        curl -sf "${mr_url}metrics" >metrics.txt || return 1
        "$b/tests/check_metrics" --parse metrics.txt >samples.txt || fail "/metrics does not parse"
        grep -q "^tusk_run_number{} $1\$" samples.txt
    }
    until_true 100 shows_run "$1" || fail "/metrics never showed run $1"
    sed -n "s/^tusk_instance_restarts_total{actor=count,index=$2,[^}]*} //p" samples.txt
}
ctl --reset || fail "--reset refused: $(cat ctl.err)"
victim=$(tail -n 2 count.log | sed -n 's/^stop instance=1 .* pid=\([0-9]*\) .*/\1/p')
[ -n "$victim" ] || fail "no pid of count[1] in count.log"
kill -9 "$victim"
is_lost() { "$b/tusk-run" --status "$srv" 2>/dev/null | grep -q "^count\[1\]\*\{0,1\} .* \(FAILED\|gone\|lost\) "; }
until_true 600 is_lost || fail "count[1]'s death is not in the status"
touch no-actor
refused "start: count[1] on localhost was lost and its respawn failed: the process exited with status 1" --start
phase ready || fail "not ready after a refused start"
rm no-actor
ctl --start || fail "--start refused after count[1] was killed: $(cat ctl.err)"
grep -q "run 9 starting" ctl.txt || fail "the next run is not run 9: $(cat ctl.txt)"
grep -q "start: respawning count\[1\] on localhost (it was .*killed by signal 9" serve.err ||
    fail "no word of respawning count[1]: $(tail -n 5 serve.err)"
ctl --wait || fail "--wait failed"
grep -q "^run 9 ended cleanly" ctl.txt || { cat ctl.txt >&2; fail "run 9 did not end cleanly"; }
whole 9
# Two respawns, the first refused: two restarts.
[ "$(value restarts 'count\[1\]' "$srv/run-9.report")" = 2 ] || fail "run 9's report: count[1] restarts not 2"
[ "$(value restarts 'count\[0\]' "$srv/run-9.report")" = 0 ] || fail "run 9's report: count[0] restarts not 0"
grep -q "^count\[1\]\* .* 2\$" ctl.txt || fail "run 9's summary does not show count[1] restarted twice"
# A new process, configured once, with the tag set between runs (B).
tail -n 2 count.log | grep -q "^stop instance=1 tag=B configs=1 inits=1 updates=0 pid=[0-9]* blocks=$c1\$" ||
    fail "count[1] in run 9: $(tail -n 2 count.log)"
[ "$(tail -n 2 count.log | sed -n 's/^stop instance=1 .* pid=\([0-9]*\) .*/\1/p')" != "$victim" ] ||
    fail "count[1] has its old process"
m=$(metric_restarts 9 1)
if [ "$m" = SKIP ]; then
    step "SKIP: /metrics: no curl here"
else
    [ "$m" = 2 ] || fail "/metrics: count[1] restarts '$m', not 2"
    [ "$(metric_restarts 9 0)" = 0 ] || fail "/metrics: count[0] restarts not 0"
fi

step "count[1] killed during a run: that run stops; reset respawns it; the next run is whole"
rm -f go
ctl --reset || fail "--reset refused: $(cat ctl.err)"
ctl --start || fail "--start refused: $(cat ctl.err)"
grep -q "run 10 starting" ctl.txt || fail "the next run is not run 10: $(cat ctl.txt)"
until_true 600 phase running || fail "run 10 never showed running"
victim=$(tail -n 2 count.log | sed -n 's/^stop instance=1 .* pid=\([0-9]*\) .*/\1/p')
kill -9 "$victim"
until_true 600 is_lost || fail "count[1]'s death in run 10 is not in the status"
touch go
ctl --wait || true
grep -q "^run 10 stopped by a failure: count\[1\]" ctl.txt || { cat ctl.txt >&2; fail "run 10 did not stop for count[1]"; }
ctl --reset || fail "--reset refused after count[1] was lost in a run: $(cat ctl.err)"
grep -q "reset: respawning count\[1\]" serve.err || fail "no word of respawning count[1] at the reset"
ctl --start || fail "--start refused: $(cat ctl.err)"
ctl --wait || fail "--wait failed"
grep -q "^run 11 ended cleanly" ctl.txt || { cat ctl.txt >&2; fail "run 11 did not end cleanly"; }
whole 11
[ "$c1" -gt 0 ] || fail "run 11: the respawned count[1] got nothing (its sender still thinks it lost)"
[ "$(value restarts 'count\[1\]' "$srv/run-11.report")" = 1 ] || fail "run 11's report: count[1] restarts not 1"
m=$(metric_restarts 11 1)
[ "$m" = SKIP ] || [ "$m" = 1 ] || fail "/metrics: count[1] restarts '$m' in run 11, not 1"

step "--quit: every instance and the controller end, exit 0"
ctl --quit || fail "--quit refused: $(cat ctl.err)"
status=0
wait "$spid" || status=$?
spid=
[ "$status" -eq 0 ] || { cat serve.err >&2; fail "the controller exited $status after --quit"; }
grep -q "quitting after 6 runs" serve.err || fail "no word of quitting after 6 runs"
for p in $pids7; do gone "$p" || fail "count instance $p outlived the controller"; done
for r in 1 7 8 9 11; do
    grep -q "^run $r ended cleanly" serve.out || fail "run $r's summary is not on standard output"
done

step "the live table off a terminal: plain lines, no escape sequences"
rm -f go
run --live --report rep.txt serve.xml >live.out 2>live.err &
lpid=$!
until_true 600 grep -q '^-- run 1, ' live.out || { kill "$lpid"; fail "no live table in live.out"; }
touch go
wait "$lpid" || fail "the live run failed: $(cat live.err)"
grep -q "^count\[1\] " live.out || fail "the live table lacks count[1]"
esc=$(printf '\033')
! grep -q "$esc" live.out || fail "escape sequences in a live table off a terminal"

if ! command -v script >/dev/null 2>&1; then
    step "SKIP: on a terminal: no script(1) here (util-linux)"
else
    step "on a terminal (script): redrawn in place"
    rm -f go
    script -qec "$b/tusk-run --live --actor-bin $b/tusk-actor serve.xml" /dev/null >tty.out 2>&1 </dev/null &
    tpid=$!
    # The second table goes back up over the first: cursor up, then lines cleared.
    until_true 600 grep -q "${esc}\[[0-9]*A" tty.out 2>/dev/null || { kill "$tpid"; fail "no redraw in place on a terminal"; }
    touch go
    wait "$tpid" || fail "the run on a terminal failed"
    grep -q "${esc}\[K" tty.out || fail "the lines are not cleared as they are redrawn"
    [ "$(grep -c '^-- run' tty.out)" -eq 0 ] || fail "plain-line tables on a terminal"
fi
step "ok"
