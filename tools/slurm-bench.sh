#!/bin/sh
# slurm-bench.sh - the throughput of one chain launched by Slurm against the
# same chain launched by tusk-run directly (issue 27, BENCHMARKS.md).
#
#   tools/slurm-bench.sh BUILD_DIR [EVENTS] [REPEATS]
#
# Starts a private single-host Slurm cluster (tests/slurm_lib.sh; root,
# slurm-wlm and munge), makes an ADF file of EVENTS data:psa events
# (default 200000) and runs reader -> copy -> sink over tcp with CURVE,
# REPEATS times (default 3) each way, alternated:
#   direct  tusk-run --transport tcp, instances forked by tusk-run;
#   slurm   sbatch --wait of a script running tusk-run --engine slurm
#           --transport tcp: every instance a job step (srun).
# Per run: the data-moving time and rate tusk-run reports (seconds from
# the first buffer to the end of run; MB/s of the reader's output), the
# wall time of tusk-run itself, and for slurm the wall time from sbatch to
# its return (queueing and the batch step included). Prints a table and
# the medians. Stops every daemon it started.
set -eu
b=$(cd "${1:?usage: slurm-bench.sh BUILD_DIR [EVENTS] [REPEATS]}" && pwd -P)
events=${2:-200000}
repeats=${3:-3}
src=$(cd "$(dirname "$0")/.." && pwd -P)
TUSK_ACTOR_PATH=${TUSK_ACTOR_PATH:-$b/actors/.libs}
export TUSK_ACTOR_PATH
. "$src/tests/slurm_lib.sh"
why=$(slurm_cluster_why)
[ -z "$why" ] || { echo "slurm-bench: $why" >&2; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tusk-slurm-bench.XXXXXX")
chmod 755 "$tmp"
trap 'slurm_cluster_stop; rm -rf "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
cd "$tmp"
TMPDIR=$tmp
export TMPDIR
unset XDG_RUNTIME_DIR SLURM_JOB_NODELIST SLURM_NODELIST SLURM_JOB_ID SLURMD_NODENAME
slurm_cluster_start "$tmp/cluster" || { echo "slurm-bench: $slurm_cluster_error" >&2; exit 77; }

"$b/tusk-adf" gen -n "$events" --seed 5 --type psa -o in.adf 2>/dev/null
bytes=$(wc -c <in.adf)
cat >chain.xml <<XML
<configuration>
  <producer><name>reader</name><binary_code>file_producer</binary_code><size>262144</size>
    <parameter name="file">$tmp/in.adf</parameter></producer>
  <intermediary><name>copy</name><binary_code>passthrough</binary_code><data_source>reader</data_source>
    <size>262144</size></intermediary>
  <consumer><name>sink</name><binary_code>null_consumer</binary_code><data_source>copy</data_source></consumer>
</configuration>
XML
now() { date +%s.%N; }
field() { awk -v s="$2" -v k="$1" 'index($0, s) == 1 { for (i = 1; i <= NF; i++) { n = index($i, "=");
    if (substr($i, 1, n - 1) == k) print substr($i, n + 1) } }' "$3"; }
cat >job.sh <<SH
#!/bin/sh
t0=\$(date +%s.%N)
"$b/tusk-run" --no-live -q --engine slurm --transport tcp --actor-bin "$b/tusk-actor" --report "\$1" "$tmp/chain.xml" \
    >"\$1.out" 2>&1 || echo "exit \$?" >>"\$1.out"
t1=\$(date +%s.%N)
echo "\$t0 \$t1" >"\$1.wall"
SH
chmod +x job.sh

echo "slurm-bench: $events events, $bytes bytes, reader -> copy -> sink over tcp (CURVE), $repeats runs each"
printf '%-7s %3s %10s %9s %10s %12s\n' how run moving_s MB/s run_wall_s submit_wall_s
# Alternated, so that the load of a shared machine falls on both alike.
r=1
while [ $r -le "$repeats" ]; do
    for how in direct slurm; do
        rep=$tmp/$how-$r.report
        t0=$(now)
        if [ $how = direct ]; then
            "$b/tusk-run" --no-live -q --transport tcp --actor-bin "$b/tusk-actor" --report "$rep" chain.xml \
                >"$rep.out" 2>&1 || { cat "$rep.out" >&2; exit 1; }
            t1=$(now)
            run_wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
            submit=-
        else
            sbatch --wait -N1 -o "$rep.job" job.sh "$rep" >/dev/null || { cat "$rep.job" "$rep.out" >&2; exit 1; }
            t1=$(now)
            run_wall=$(awk '{ printf "%.3f", $2 - $1 }' "$rep.wall")
            submit=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
            ! grep -q '^exit' "$rep.out" || { cat "$rep.out" >&2; exit 1; }
        fi
        [ "$(field lost run= "$rep")" = 0 ] || { echo "slurm-bench: losses in $rep" >&2; exit 1; }
        out=$(field out_bytes "instance=reader[0] " "$rep")
        secs=$(field seconds run= "$rep")
        mbs=$(awk -v o="$out" -v s="$secs" 'BEGIN { printf "%.1f", o / s / 1e6 }')
        printf '%-7s %3d %10s %9s %10.3f %12s\n' $how $r "$secs" "$mbs" "$run_wall" "$submit" | tee -a table.txt
    done
    r=$((r + 1))
done
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
for how in direct slurm; do
    echo "slurm-bench: $how: median $(awk -v h=$how '$1 == h { print $4 }' table.txt | median) MB/s," \
        "median tusk-run wall $(awk -v h=$how '$1 == h { print $5 }' table.txt | median) s"
done
