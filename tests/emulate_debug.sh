#!/bin/sh
# emulate_debug.sh - debugging with tusk-emulate, without timing: the
# actors misbehave at a known buffer (actors/fault.c).
#   - A crash (a real SIGSEGV in an actor's hook) is reported with the
#     actor, instance, library, hook and buffer number, then the process
#     dies of the signal (status 139, core-dump friendly).
#   - Ctrl-C (SIGINT, raised by an actor at buffer 3) ends the run as
#     tusk-run's does: the buffers in flight finish, filters flush, every
#     actor stops (the spectra consumer writes its files), the summary is
#     printed, the temporary folder is removed; the output is exactly that
#     of a run limited to 3 buffers, and the process dies of SIGINT (130).
#   - --memcheck runs the chain under valgrind with the libraries kept
#     loaded: a leaking actor's report names its function, a clean chain
#     passes; plain valgrind gets the same by itself (skipped without
#     valgrind).
set -eu
b=${abs_top_builddir:?run through make check}
emulate=$b/tusk-emulate
adf=$b/tusk-adf
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tusk-emulate-debug.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
mkdir private
TMPDIR=$tmp/private
export TMPDIR
unset TUSK_NO_DLCLOSE || true
# No core files from the crashes on purpose.
ulimit -c 0 2>/dev/null || true

step() { echo "emulate_debug: $*"; }
fail() { echo "emulate_debug: FAIL: $*" >&2; exit 1; }
no_leftovers() {
    left=$(ls -A private)
    [ -z "$left" ] || fail "$1 left behind in TMPDIR: $left"
}

"$adf" gen -n 400 --seed 21 -o input.adf 2>/dev/null
# chain ACTION [HOOK] [CONSUMER]: file_producer -> fault -> CONSUMER
chain() {
    hook=${2:-block}
    consumer='<binary_code>file_writer</binary_code><parameter name="file">output.adf</parameter>'
    [ $# -lt 3 ] || consumer=$3
    cat <<XML
<configuration>
  <producer><name>reader</name><binary_code>file_producer</binary_code><size>65536</size>
    <parameter name="file">input.adf</parameter></producer>
  <intermediary><name>bad</name><binary_code>fault</binary_code><data_source>reader</data_source>
    <parameter name="action">$1</parameter><parameter name="hook">$hook</parameter>
    <parameter name="at_block">3</parameter></intermediary>
  <consumer><name>sink</name>$consumer<data_source>bad</data_source></consumer>
</configuration>
XML
}

step "a SIGSEGV in process_block: the actor, instance, library, hook and buffer, then death by the signal"
chain segv >segv.xml
got=0
"$emulate" segv.xml >out.txt 2>err.txt || got=$?
[ "$got" -eq 139 ] || { cat err.txt >&2; fail "exit status $got after a SIGSEGV, expected 139"; }
grep -qF "tusk-emulate: SIGSEGV (invalid memory access) in actor bad[0] (library $b/actors/.libs/fault.so), hook process_block, buffer 3" err.txt ||
    { cat err.txt >&2; fail "the crash report does not name the actor, hook and buffer"; }
grep -qF "tusk-emulate: the instances' configuration folders are kept in $tmp/private/tusk-emulate." err.txt ||
    { cat err.txt >&2; fail "the crash report does not say where the configuration folders are"; }
rm -rf private/tusk-emulate.*

step "a SIGSEGV in process_start: the hook named, no buffer"
chain segv start >segv-start.xml
got=0
"$emulate" segv-start.xml >out.txt 2>err.txt || got=$?
[ "$got" -eq 139 ] || { cat err.txt >&2; fail "exit status $got, expected 139"; }
grep -qF "in actor bad[0] (library $b/actors/.libs/fault.so), hook process_start" err.txt ||
    { cat err.txt >&2; fail "the crash report does not name process_start"; }
grep -qF "process_start, buffer" err.txt && fail "a buffer number for process_start"
rm -rf private/tusk-emulate.*

step "Ctrl-C at buffer 3: stop hooks, the consumer's output, the summary, no temporary folder, death by SIGINT"
chain interrupt >int.xml
# What 3 buffers make, by a limit.
sed 's/"action">interrupt/"action">error/; s/"at_block">3/"at_block">999999/' int.xml >ref.xml
"$emulate" -q -n 3 ref.xml || fail "the reference run failed"
mv output.adf ref.adf
got=0
"$emulate" int.xml >summary.txt 2>err.txt || got=$?
[ "$got" -eq 130 ] || { cat err.txt >&2; fail "exit status $got after SIGINT, expected 130"; }
grep -qF "stopped by signal 2" err.txt || { cat err.txt >&2; fail "no word of the signal"; }
grep -qF "every actor was stopped" err.txt || { cat err.txt >&2; fail "no word of the actors being stopped"; }
awk '$1 == "sink" && $5 == 3 { ok = 1 } END { exit !ok }' summary.txt ||
    { cat summary.txt >&2; fail "the summary (printed) does not show 3 buffers into the consumer"; }
cmp ref.adf output.adf || fail "the interrupted run's output differs from a run of 3 buffers"
no_leftovers "SIGINT"

step "Ctrl-C with the spectra consumer: its files are written at its stop"
chain interrupt block '<binary_code>spectra</binary_code><parameter name="out">spectra</parameter><parameter name="plot">no</parameter>' >spectra.xml
got=0
"$emulate" -q spectra.xml >out.txt 2>err.txt || got=$?
[ "$got" -eq 130 ] || { cat err.txt >&2; fail "exit status $got, expected 130"; }
[ -s spectra/summary.csv ] && [ -s spectra/singles.csv ] || fail "the spectra consumer wrote nothing after SIGINT"
no_leftovers "SIGINT with spectra"

if [ -z "${VALGRIND:-}" ] || [ "${SANITIZERS:-no}" = yes ]; then
    echo "emulate_debug: --memcheck steps skipped (no valgrind, or a sanitizer build)"
    echo "emulate_debug: PASS"
    exit 0
fi
leaky='<binary_code>'"${TUSK_TEST_ACTOR_PATH:?}"'/leaky.so</binary_code>'
step "--memcheck: a leaking actor's report names its function; exit 1"
chain error block "$leaky" | sed 's/"at_block">3/"at_block">999999/' >leak.xml
got=0
"$emulate" --memcheck -q -n 4 leak.xml >out.txt 2>err.txt || got=$?
[ "$got" -eq 1 ] || { cat err.txt >&2; fail "--memcheck exited $got on a leaking actor, expected 1"; }
grep -q "definitely lost" err.txt || { cat err.txt >&2; fail "no leak reported"; }
grep -q "leaky_remember" err.txt || { cat err.txt >&2; fail "the leak report does not name leaky_remember"; }

step "--memcheck: a clean chain passes"
sed 's/"action">interrupt/"action">error/; s/"at_block">3/"at_block">999999/' int.xml >clean.xml
"$emulate" --memcheck -q -n 4 clean.xml >out.txt 2>err.txt || { cat err.txt >&2; fail "--memcheck failed a clean chain"; }

step "plain valgrind: the libraries stay loaded by themselves"
got=0
"$b/libtool" --mode=execute "$VALGRIND" -q --leak-check=full --errors-for-leak-kinds=definite --error-exitcode=1 \
    "$emulate" -q -n 4 leak.xml >out.txt 2>err.txt || got=$?
[ "$got" -eq 1 ] || { cat err.txt >&2; fail "valgrind exited $got, expected 1"; }
grep -q "leaky_remember" err.txt || { cat err.txt >&2; fail "under plain valgrind the report does not name leaky_remember"; }
no_leftovers "--memcheck"
echo "emulate_debug: PASS"
