#!/bin/sh
# systemd_engine.sh - tusk-run --engine systemd: every instance a transient
# unit (systemd-run --user), and --units, a unit file for a permanent
# installation.
#
# Where `systemd-run --user` works (a user manager on the D-Bus session
# bus), the chain runs as real transient units. Where it does not (a
# container, CI, this project's dev VM), a fake systemd-run on PATH writes
# down its options and runs the command after `--` as it is (standard
# input and output kept, as --pipe does): the test then checks the exact
# command line tusk-run gives systemd-run, not systemd itself; it says so.
#
#   1. reader -> copy x2 -> writer, with --unit-property MemoryMax=1G and
#      copy:CPUQuota=50%: exit 0, the output is the input frame for frame,
#      every instance went through systemd-run with its unit name, its
#      journal identifier (TUSK_JOURNAL) and its properties (fake: the
#      exact options, four units); the start message and the run folder's
#      journal.txt give the journalctl command of every instance, and each
#      instance's log is in the run folder (saying, where no journald
#      listens, that its output goes there only);
#      tests/systemd_real.sh reads the lines back from a real journal;
#   2. copy[1] killed at its 20th buffer with restart="on-failure": the
#      controller's policy still applies on top: the slot comes back as a
#      new unit (incarnation 1 in its name), the losses are reported
#      (exit 3) and add up;
#   3. --units: the unit file names this tusk-run, the engine, the
#      properties and the topology (ExecStart exactly); a second --units
#      into the same folder is refused; where systemd-analyze is there, it
#      verifies the file;
#   4. --unit-property without a systemd engine, or naming no actor of the
#      topology: refused (exit 2) before anything starts.
set -eu
b=${abs_top_builddir:?run through make check}
TUSK_ACTOR_PATH=${TUSK_ACTOR_PATH:-$b/actors/.libs}
export TUSK_ACTOR_PATH
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tusk-systemd.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
cd "$tmp"
TMPDIR=$tmp
export TMPDIR
unset XDG_RUNTIME_DIR

me=systemd_engine
. "${abs_top_srcdir:-${top_srcdir:-..}}/tests/distributed_lib.sh"

if systemd-run --user --quiet --wait --collect true >probe.txt 2>&1; then
    real=yes
    step "systemd-run --user works here: the instances run as real transient units"
else
    real=no
    step "NOTE: no user systemd here ($(head -n 1 probe.txt 2>/dev/null || echo 'no systemd-run')):"
    step "NOTE: a fake systemd-run checks the command line tusk-run gives it, not systemd itself"
    mkdir fakebin
    cat >fakebin/systemd-run <<'SH'
#!/bin/sh
# Write down the options (up to --), then run the command as it is, with
# the --setenv=NAME=VALUE variables set (--setenv=NAME: ours, as it is).
opts=""
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
    opts="$opts $1"
    case "$1" in --setenv=*=*) v=${1#--setenv=}; export "${v%%=*}=${v#*=}" ;; esac
    shift
done
[ "${1:-}" = "--" ] || { echo "fake systemd-run: no -- before the command" >&2; exit 64; }
shift
echo "systemd-run$opts" >>"$FAKE_SYSTEMD_LOG"
exec "$@"
SH
    chmod +x fakebin/systemd-run
    PATH=$tmp/fakebin:$PATH
    FAKE_SYSTEMD_LOG=$tmp/systemd-run.log
    export PATH FAKE_SYSTEMD_LOG
fi

chain() {
    cat >"$1" <<XML
<configuration>
  <producer><name>reader</name><binary_code>file_producer</binary_code><size>16384</size>
    <parameter name="file">$tmp/input.adf</parameter></producer>
  <intermediary instances="2" $2><name>copy</name><binary_code>fault</binary_code>
    <data_source>reader</data_source><size>16384</size>$3</intermediary>
  <consumer><name>writer</name><binary_code>file_writer</binary_code><data_source>copy</data_source>
    <parameter name="file">$tmp/output.adf</parameter></consumer>
</configuration>
XML
}
harmless='<parameter name="action">exit</parameter><parameter name="at_block">1000000000</parameter>'
"$b/tusk-adf" gen -n 3000 --seed 27 -o input.adf 2>/dev/null

step "1. a chain of transient units, with properties"
chain chain.xml '' "$harmless"
props="--unit-property MemoryMax=1G --unit-property copy:CPUQuota=50%"
# shellcheck disable=SC2086 # the words of $props
expect 0 "each instance's output is in the run folder and in the journal: journalctl -t tusk-r1-" \
    --engine systemd $props --run-dir "$tmp/rd1" --report rep.txt chain.xml
"$b/tusk-adf" diff --unordered input.adf output.adf >/dev/null 2>&1 ||
    fail "the output is not the input, frame for frame"
# The operator's pointer: the journalctl command of every instance.
grep -qF "(every instance: $tmp/rd1/journal.txt)" err.txt || fail "the start message names no journal.txt"
sed 's/tusk-r1-[0-9]*-/tusk-r1-PID-/' rd1/journal.txt | grep '^journalctl' >got.txt
printf 'journalctl -t tusk-r1-PID-%s\n' reader.0 copy.0 copy.1 writer.0 >want.txt
diff want.txt got.txt >diff.txt || { cat diff.txt >&2; fail "journal.txt: the commands differ"; }
# Each instance's log is in the run folder either way; without a journald
# (no socket) it says that its output goes there only.
for i in reader.0 copy.0 copy.1 writer.0; do
    [ -f "rd1/$i.log" ] || fail "no log of $i in the run folder"
    if [ -S /run/systemd/journal/stdout ]; then
        ! grep -q "no journal" "rd1/$i.log" || fail "$i: $(cat "rd1/$i.log")"
    else
        grep -qF "no journal (connect /run/systemd/journal/stdout: No such file or directory): the output goes to the run folder only" \
            "rd1/$i.log" || fail "$i's log does not say that there is no journal: $(cat "rd1/$i.log")"
    fi
done
[ "$(report out_buffers 'reader\[0\]')" = "$(report in_buffers 'writer\[0\]')" ] || fail "buffers lost"
if [ "$real" = no ]; then
    sed 's/tusk-r1-[0-9]*-/tusk-r1-PID-/g' systemd-run.log | sort >got.txt
    cat >want.txt <<'TXT'
systemd-run --user --pipe --wait --collect --quiet --same-dir --unit=tusk-r1-PID-copy.0.0 --setenv=TUSK_JOURNAL=tusk-r1-PID-copy.0 --setenv=TUSK_ACTOR_PATH -p MemoryMax=1G -p CPUQuota=50%
systemd-run --user --pipe --wait --collect --quiet --same-dir --unit=tusk-r1-PID-copy.1.0 --setenv=TUSK_JOURNAL=tusk-r1-PID-copy.1 --setenv=TUSK_ACTOR_PATH -p MemoryMax=1G -p CPUQuota=50%
systemd-run --user --pipe --wait --collect --quiet --same-dir --unit=tusk-r1-PID-reader.0.0 --setenv=TUSK_JOURNAL=tusk-r1-PID-reader.0 --setenv=TUSK_ACTOR_PATH -p MemoryMax=1G
systemd-run --user --pipe --wait --collect --quiet --same-dir --unit=tusk-r1-PID-writer.0.0 --setenv=TUSK_JOURNAL=tusk-r1-PID-writer.0 --setenv=TUSK_ACTOR_PATH -p MemoryMax=1G
TXT
    diff want.txt got.txt >diff.txt || { cat diff.txt >&2; fail "systemd-run's command lines differ"; }
    # One tusk-run: one process id in every unit name.
    [ "$(sed -n 's/.*--unit=tusk-r1-\([0-9]*\)-.*/\1/p' systemd-run.log | sort -u | wc -l)" -eq 1 ] ||
        fail "the unit names carry different process ids"
fi

step "2. the controller's restart policy on top: a killed copy comes back as a new unit"
rm -f output.adf systemd-run.log
chain restart.xml 'restart="on-failure"' \
    "<parameter name=\"action\">kill</parameter><parameter name=\"at_block\">20</parameter><parameter name=\"only_instance\">1</parameter><parameter name=\"once\">$tmp/killed-once</parameter>"
expect 3 "copy[1] restarted" --engine systemd --report rep.txt restart.xml
sent=$(report out_buffers 'reader\[0\]')
got=$(report in_buffers 'writer\[0\]')
lost=$(sed -n 's/^run=.* lost=\([0-9]*\).*/\1/p' rep.txt)
[ $((sent - got)) -eq "$lost" ] || fail "restart: reported loss $lost, but $((sent - got)) buffers are missing"
[ "$(report restarts 'copy\[1\]')" -ge 1 ] || fail "copy[1] shows no restart"
if [ "$real" = no ]; then
    grep -q -- '--unit=tusk-r1-[0-9]*-copy\.1\.1 ' systemd-run.log || fail "no unit for copy[1]'s incarnation 1"
fi

step "3. --units: a permanent installation"
mkdir units
"$b/tusk-run" --engine systemd --unit-property MemoryMax=1G --units units chain.xml >out.txt 2>err.txt ||
    fail "--units failed"
grep -qF "wrote units/tusk-chain.service" out.txt || fail "--units did not say what it wrote"
run_abs=$(cd "$b" && pwd -P)/tusk-run
[ -x "$b/.libs/lt-tusk-run" ] && run_abs=$(cd "$b/.libs" && pwd -P)/lt-tusk-run
[ -x "$b/.libs/tusk-run" ] && [ ! -x "$b/.libs/lt-tusk-run" ] && run_abs=$(cd "$b/.libs" && pwd -P)/tusk-run
want="ExecStart=$run_abs --no-live --engine systemd --unit-property MemoryMax=1G $(pwd -P)/chain.xml"
got=$(grep '^ExecStart=' units/tusk-chain.service)
[ "$got" = "$want" ] || fail "ExecStart: '$got', expected '$want'"
expect 2 "units/tusk-chain.service: exists already" --engine systemd --units units chain.xml
if command -v systemd-analyze >/dev/null 2>&1 && systemd-analyze --help 2>&1 | grep -q verify; then
    if systemd-analyze verify --man=no units/tusk-chain.service >verify.txt 2>&1; then
        step "systemd-analyze verify: the unit file is valid"
    elif grep -qi "bus\|No medium\|connect" verify.txt; then
        step "NOTE: systemd-analyze verify cannot run here: $(head -n 1 verify.txt)"
    else
        cat verify.txt >&2
        fail "systemd-analyze verify refused the unit file"
    fi
fi

step "4. properties refused before anything starts"
expect 2 "--unit-property: only with --engine systemd or systemd-system" --unit-property MemoryMax=1G chain.xml
expect 2 "the topology has no actor 'sorter'" --engine systemd --unit-property sorter:MemoryMax=1G chain.xml
expect 2 "only with --engine systemd or systemd-system" --engine slurm --unit-property MemoryMax=1G chain.xml
step "ok ($([ "$real" = yes ] && echo 'real transient units' || echo 'fake systemd-run: command lines only'))"
