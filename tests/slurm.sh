#!/bin/sh
# slurm.sh - tusk on a real Slurm cluster: a private single-host cluster
# (tests/slurm_lib.sh: munged with its own key and socket, slurmctld and
# slurmd with a generated slurm.conf naming this host) started by the test
# and stopped at its end, every daemon by its process id.
#
#   1. reprocessing (tools/tusk-reprocess): two ADF files over a two-task
#      job array (sbatch --wait --array=0-1), each task one tusk-run of the
#      same topology (reader -> copy -> writer) on its file; the merged
#      report counts exactly the frames of both files at every instance and
#      link, nothing lost, runs=2; each task ran in the array (its own
#      Slurm output file and status); the summed spectra equal those of
#      the two input files read together (tusk-spectra);
#   2. a chain inside an allocation (one node, sbatch -w this host): sbatch
#      runs tusk-run --engine slurm
#      --transport tcp (CURVE, the run's keys) on reader -> writer: each
#      instance a job step (srun), two steps of the job in slurmd's log;
#      exit 0, the output is the input, the report exact and "curve";
#   3. refused before anything starts: --engine slurm outside an
#      allocation, and an actor whose <hostname> is no node of it;
#   4. nodes from the allocation: a job of two nodes A B (sbatch -N2)
#      runs reader -> copy -> writer where reader and copy name no host
#      and the writer names B: tusk-run says the placement "reader -> A,
#      copy -> B, writer -> B (its <hostname>)" (round robin over the
#      allocation's nodes; a named host wins), the steps ran there (one in
#      A's slurmd log, two in B's), tcp with CURVE, output = input, exact.
#
# The cluster has two nodes on this host (tests/slurm_lib.sh: the second a
# slurmd -N tusknode2 on a port of its own): Slurm places and launches the
# steps as on two machines, while the data links and the control run over
# this host's addresses.
#
# Skipped (exit 77, with the reason) when not root, when Slurm or munge
# is not installed (Debian: apt-get install slurm-wlm munge), or when a
# daemon does not come up (ports, a container without the rights). Run it
# by hand: make check TESTS=tests/slurm.sh (tests/README.md).
set -eu
b=${abs_top_builddir:?run through make check}
src=${abs_top_srcdir:-${top_srcdir:-..}}
TUSK_ACTOR_PATH=${TUSK_ACTOR_PATH:-$b/actors/.libs}
export TUSK_ACTOR_PATH
me=slurm
skip() { echo "$me: SKIP: $*"; exit 77; }
. "$src/tests/distributed_lib.sh"
. "$src/tests/slurm_lib.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tusk-slurm.XXXXXX")
chmod 755 "$tmp" # slurmd's steps run as root, but the folder must be reachable
cleanup() {
    st=$?
    set +e
    slurm_cluster_stop
    rm -rf "$tmp"
    exit "$st"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
cd "$tmp"
TMPDIR=$tmp
export TMPDIR
unset XDG_RUNTIME_DIR
unset SLURM_JOB_NODELIST SLURM_NODELIST SLURM_JOB_ID SLURMD_NODENAME

frames() { "$b/tusk-adf" stats "$1" | sed -n 's/^frames: *\([0-9]*\).*/\1/p'; }
field() { # KEY LINE-START FILE: the value of KEY on the line starting so
    awk -v s="$2" -v k="$1" 'index($0, s) == 1 { for (i = 1; i <= NF; i++) { n = index($i, "=");
        if (substr($i, 1, n - 1) == k) print substr($i, n + 1) } }' "$3"
}

"$b/tusk-adf" gen -n 400 --seed 31 --type psa -o a.adf 2>/dev/null
"$b/tusk-adf" gen -n 600 --seed 32 --type psa -o b.adf 2>/dev/null
fa=$(frames a.adf) fb=$(frames b.adf)
[ "$fa" -gt 0 ] && [ "$fb" -gt 0 ] || fail "tusk-adf gen made no frames"
host=$(hostname -s)
cat >chain.xml <<XML
<configuration>
  <producer><name>reader</name><binary_code>file_producer</binary_code><size>16384</size>
    <parameter name="file">$tmp/a.adf</parameter></producer>
  <consumer><name>writer</name><hostname>$host</hostname><binary_code>file_writer</binary_code>
    <data_source>reader</data_source><parameter name="file">$tmp/chain-out.adf</parameter></consumer>
</configuration>
XML

step "3. refused before anything starts"
expect 2 "--engine slurm: no node list (run tusk-run inside an allocation" --engine slurm chain.xml
# The reader, without a host, would go to gpu1; the writer names this host.
SLURM_JOB_NODELIST="gpu[1-2]" expect 2 "actor 'writer' (line 4): its <hostname> $host is not a node of the allocation (gpu[1-2])" \
    --engine slurm chain.xml

why=$(slurm_cluster_why)
[ -z "$why" ] || skip "$why"
slurm_cluster_start "$tmp/cluster" 2 || skip "cannot start a Slurm cluster here: $slurm_cluster_error"
step "a private Slurm cluster: nodes $slurm_cluster_nodes on this host, $(nproc) CPUs each ($SLURM_CONF)"

step "1. two files over a two-task job array, reports merged, spectra summed"
cat >reprocess.xml <<'XML'
<configuration>
  <producer><name>reader</name><binary_code>file_producer</binary_code><size>16384</size>
    <parameter name="file">@INPUT@</parameter></producer>
  <intermediary><name>copy</name><binary_code>passthrough</binary_code><data_source>reader</data_source>
    <size>16384</size></intermediary>
  <consumer><name>writer</name><binary_code>file_writer</binary_code><data_source>copy</data_source>
    <parameter name="file">@OUTPUT@</parameter></consumer>
</configuration>
XML
st=0
timeout 300 "$b/tusk-reprocess" --tasks 2 --spectra --out out reprocess.xml a.adf b.adf \
    >out.txt 2>err.txt || st=$?
[ "$st" -eq 0 ] || { cat out/slurm-*.out >&2 2>/dev/null; fail "tusk-reprocess exited $st"; }
grep -q "2 files, 2 tasks of a Slurm job array" out.txt || fail "tusk-reprocess did not use the job array"
for t in 0 1; do
    ls out/slurm-*_"$t".out >/dev/null 2>&1 || fail "no Slurm output of array task $t"
    [ "$(wc -l <out/task-$t/status)" -eq 1 ] || fail "task $t did not run exactly one file"
    [ "$(cut -d' ' -f2 out/task-$t/status)" = 0 ] || fail "task $t: tusk-run failed"
done
r=out/report.txt
[ "$(head -n 1 $r)" = "reports=2" ] || fail "merged report: $(head -n 1 $r)"
total=$((fa + fb))
for x in "reader[0] out_frames" "copy[0] in_frames" "copy[0] out_frames" "writer[0] in_frames"; do
    v=$(field "${x#* }" "instance=${x% *} " $r)
    [ "$v" = "$total" ] || fail "merged report: ${x% *} ${x#* }=$v, expected $fa + $fb = $total"
done
for l in "reader[0]->copy[0]" "copy[0]->writer[0]"; do
    [ "$(field sent "link=$l " $r)" = "$(field received "link=$l " $r)" ] || fail "link $l: sent != received"
    [ "$(field lost "link=$l " $r)" = 0 ] && [ "$(field exact "link=$l " $r)" = 1 ] && [ "$(field runs "link=$l " $r)" = 2 ] ||
        fail "link $l: $(grep "^link=$l " $r)"
done
[ "$(field lost "run=" $r)" = 0 ] && [ "$(field fatal "run=" $r)" = 0 ] || fail "run line: $(grep '^run=' $r)"
"$b/tusk-spectra" --set plot=no --out direct a.adf b.adf >/dev/null || fail "tusk-spectra of the inputs failed"
for f in singles.csv core.csv summary.csv; do
    cmp -s "direct/$f" "out/spectra/$f" || fail "summed spectra: $f differs from the inputs' spectra"
done
[ "$(wc -l <direct/singles.csv)" -gt 10 ] || fail "the spectra are empty: the comparison proves nothing"

step "2. a chain inside an allocation: one job step per instance, tcp with CURVE"
cat >chain.sh <<SH
#!/bin/sh
st=0
"$b/tusk-run" --no-live --engine slurm --transport tcp --actor-bin "$b/tusk-actor" --report "$tmp/chain.report" \
    "$tmp/chain.xml" >"$tmp/chain.out" 2>"$tmp/chain.err" || st=\$?
echo \$st >"$tmp/chain.status"
SH
chmod +x chain.sh
job=$(timeout 300 sbatch --wait --parsable -N1 -w "$host" -o "$tmp/chain-job.out" chain.sh) ||
    { cat chain-job.out chain.err >&2 2>/dev/null; fail "sbatch of the chain failed"; }
[ "$(cat chain.status)" = 0 ] || { cat chain.err >&2; fail "tusk-run --engine slurm exited $(cat chain.status)"; }
cmp -s a.adf chain-out.adf || fail "the chain's output differs from its input"
[ "$(field out_frames "instance=reader[0] " chain.report)" = "$fa" ] || fail "reader's frames: $(cat chain.report)"
[ "$(field in_frames "instance=writer[0] " chain.report)" = "$fa" ] || fail "writer's frames: $(cat chain.report)"
[ "$(field exact "link=reader[0]->writer[0] " chain.report)" = 1 ] || fail "the link is not exact"
[ "$(field security "control=" chain.report)" = curve ] || fail "not CURVE: $(grep '^control=' chain.report)"
# node_steps NODE JOB: how many steps of JOB NODE's slurmd launched.
node_steps() { grep -c "launch task StepId=$2\.[0-9]* " "$tmp/cluster/log/slurmd-$1.log" || true; }
steps=$(node_steps "$host" "$job")
[ "$steps" -eq 2 ] || fail "job $job: $steps steps launched, expected 2 (one per instance)"
chain_job=$job

step "4. actors without a host spread over the allocation's two nodes; a named host wins"
# Written in the job, with its nodes A B (as Slurm lists them): reader and
# copy have no host (round robin: A, B), the writer names B (round robin
# would give it A). Data crosses nodes: tcp, every input at 127.0.0.1 (both
# nodes are this host), the controller at this host's address.
addr=$(hostname -I 2>/dev/null | awk '{ print $1 }')
if [ -z "$addr" ]; then
    step "NOTE: step 4 not run: it needs a non-loopback address of this host (hostname -I said none)"
    step "ok: job array of 2 ($total frames merged), chain of 2 steps (job $chain_job); no step 4"
    exit 0
fi
cat >spread.sh <<SH
#!/bin/sh
set -- \$(scontrol show hostnames "\$SLURM_JOB_NODELIST")
echo "\$SLURM_JOB_NODELIST \$1 \$2" >"$tmp/spread.nodes"
cat >"$tmp/spread.xml" <<XML
<configuration>
  <producer><name>reader</name><binary_code>file_producer</binary_code><size>16384</size>
    <parameter name="file">$tmp/b.adf</parameter></producer>
  <intermediary><name>copy</name><binary_code>passthrough</binary_code><address>127.0.0.1</address>
    <data_source>reader</data_source><size>16384</size></intermediary>
  <consumer><name>writer</name><hostname>\$2</hostname><address>127.0.0.1</address>
    <binary_code>file_writer</binary_code><data_source>copy</data_source>
    <parameter name="file">$tmp/spread-out.adf</parameter></consumer>
</configuration>
XML
st=0
"$b/tusk-run" --no-live --engine slurm --control-address $addr --actor-bin "$b/tusk-actor" \
    --report "$tmp/spread.report" "$tmp/spread.xml" >"$tmp/spread.out" 2>"$tmp/spread.err" || st=\$?
echo \$st >"$tmp/spread.status"
SH
chmod +x spread.sh
job=$(timeout 300 sbatch --wait --parsable -N2 -o "$tmp/spread-job.out" spread.sh) ||
    { cat spread-job.out spread.err >&2 2>/dev/null; fail "sbatch of the spread chain failed"; }
read -r list na nb <spread.nodes
[ -n "$nb" ] && [ "$na" != "$nb" ] || fail "the job did not get two nodes: $(cat spread.nodes)"
[ "$(cat spread.status)" = 0 ] || { cat spread.err >&2; fail "tusk-run --engine slurm on two nodes exited $(cat spread.status)"; }
want="placement on the allocation's nodes ($list): reader -> $na, copy -> $nb, writer -> $nb (its <hostname>)"
grep -qF "tusk-run: $want" spread.err || { cat spread.err >&2; fail "tusk-run did not say '$want'"; }
cmp -s b.adf spread-out.adf || fail "the spread chain's output differs from its input"
[ "$(field out_frames "instance=reader[0] " spread.report)" = "$fb" ] || fail "reader's frames: $(cat spread.report)"
[ "$(field in_frames "instance=writer[0] " spread.report)" = "$fb" ] || fail "writer's frames: $(cat spread.report)"
for l in "reader[0]->copy[0]" "copy[0]->writer[0]"; do
    [ "$(field exact "link=$l " spread.report)" = 1 ] || fail "link $l is not exact: $(cat spread.report)"
done
[ "$(field security "control=" spread.report)" = curve ] || fail "not CURVE: $(grep '^control=' spread.report)"
# Each step on its node: the reader on A; copy and writer on B.
[ "$(node_steps "$na" "$job")" -eq 1 ] && [ "$(node_steps "$nb" "$job")" -eq 2 ] ||
    fail "job $job: $(node_steps "$na" "$job") steps on $na, $(node_steps "$nb" "$job") on $nb; expected 1 and 2"
step "ok: job array of 2 ($total frames merged), chain of 2 steps (job $chain_job), chain spread over $na and $nb (job $job)"
