# slurm_lib.sh - a private single-host Slurm cluster, for tests/slurm.sh and
# tools/slurm-bench.sh (sourced; POSIX sh). It touches nothing of the
# machine's own Slurm or munge: its own munge key and socket, its own
# slurm.conf naming this host (one node, NodeAddr 127.0.0.1, its CPUs) on
# two free ports, all state, spool and logs in one folder.
#
#   slurm_cluster_why               why a cluster cannot start here ("" if it
#                                   can): not root, binaries missing
#   slurm_cluster_start DIR [2]     start munged, slurmctld and slurmd with
#                                   their files in DIR (a new folder); sets
#                                   and exports SLURM_CONF; returns 1 with
#                                   $slurm_cluster_error set when a daemon
#                                   does not come up (the caller skips);
#                                   with 2, a second node "tusknode2" on this
#                                   host too (below); $slurm_cluster_nodes:
#                                   the node names; slurmd's log of node N:
#                                   DIR/log/slurmd-N.log
#   slurm_cluster_stop              stop every daemon slurm_cluster_start
#                                   started (by their process ids), and
#                                   wait for them to be gone
#
# Two nodes on one host: Debian's slurmd is built without
# --enable-multiple-slurmd, but `slurmd -N NAME` still runs a slurmd as node
# NAME; the second node has its own port (Port=) and NodeHostname this
# host, so both are reached at 127.0.0.1 and their steps run here.
# shellcheck shell=sh

slurm_cluster_dir=""
slurm_cluster_pids=""
slurm_cluster_munge=""
slurm_cluster_error=""
slurm_cluster_nodes=""

slurm_cluster_why() {
    [ "$(id -u)" -eq 0 ] || { echo "needs root (slurmd starts job steps as their user; SlurmUser=root)"; return; }
    for p in munged slurmctld slurmd srun sbatch scontrol sinfo; do
        command -v "$p" >/dev/null 2>&1 ||
            { echo "needs $p (Debian: apt-get install slurm-wlm munge)"; return; }
    done
    echo ""
}

# A TCP port nobody listens on, from $1 on.
slurm_free_port() {
    p=$1
    while [ "$p" -lt $(($1 + 200)) ]; do
        if ! (ss -Hltn 2>/dev/null || netstat -ltn 2>/dev/null) | awk '{ print $4 }' | grep -q ":$p\$"; then
            echo "$p"
            return 0
        fi
        p=$((p + 1))
    done
    return 1
}

slurm_cluster_start() {
    d=$1
    slurm_cluster_dir=$d
    mkdir -p "$d/munge" "$d/state" "$d/spool" "$d/log"
    chmod 755 "$d" "$d/munge" # munged: its socket folder open to all (to reach), written by no other
    # munged: a key of its own (0400), a socket of its own.
    dd if=/dev/urandom of="$d/munge/munge.key" bs=1024 count=1 2>/dev/null
    chmod 400 "$d/munge/munge.key"
    if ! munged --socket="$d/munge/socket" --key-file="$d/munge/munge.key" --pid-file="$d/munge/pid" \
        --log-file="$d/munge/log" --seed-file="$d/munge/seed" >"$d/munge/start.txt" 2>&1; then
        slurm_cluster_error="munged does not start: $(tail -n 1 "$d/munge/start.txt")"
        return 1
    fi
    slurm_cluster_munge=$d/munge/socket
    slurm_cluster_pids="$(cat "$d/munge/pid")"
    base=$((20000 + ($$ % 500) * 20))
    ctld_port=$(slurm_free_port "$base") && slurmd_port=$(slurm_free_port $((ctld_port + 1))) &&
        slurmd_port2=$(slurm_free_port $((slurmd_port + 1))) || {
        slurm_cluster_error="no free TCP ports from $base"
        return 1
    }
    host=$(hostname -s)
    cpus=$(nproc)
    cat >"$d/slurm.conf" <<CONF
ClusterName=tusktest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
AuthType=auth/munge
AuthInfo=socket=$d/munge/socket
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$d/state
SlurmdSpoolDir=$d/spool/%n
SlurmctldPidFile=$d/slurmctld.pid
SlurmdPidFile=$d/slurmd-%n.pid
SlurmctldLogFile=$d/log/slurmctld.log
SlurmdLogFile=$d/log/slurmd-%n.log
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
SwitchType=switch/none
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
ReturnToService=2
MaxArraySize=1000
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
CONF
    slurm_cluster_nodes=$host
    if [ "${2:-1}" -eq 2 ]; then
        echo "NodeName=tusknode2 NodeHostname=$host NodeAddr=127.0.0.1 Port=$slurmd_port2 CPUs=$cpus State=UNKNOWN" \
            >>"$d/slurm.conf"
        slurm_cluster_nodes="$host tusknode2"
    fi
    echo "PartitionName=tusk Nodes=$(echo "$slurm_cluster_nodes" | tr ' ' ,) Default=YES MaxTime=INFINITE State=UP" \
        "OverSubscribe=FORCE:4" >>"$d/slurm.conf"
    # Where the hierarchy is cgroup v2 (slurmd loads cgroup/v2 even with
    # proctrack/pgid and task/none), slurmd asks systemd over D-Bus for a
    # scope unless told not to: no systemd here to ask.
    printf 'IgnoreSystemd=yes\n' >"$d/cgroup.conf"
    SLURM_CONF=$d/slurm.conf
    export SLURM_CONF
    if ! slurmctld -i -f "$SLURM_CONF" >"$d/log/slurmctld.start" 2>&1; then
        slurm_cluster_error="slurmctld does not start: $(tail -n 1 "$d/log/slurmctld.start")"
        return 1
    fi
    slurm_wait_file "$d/slurmctld.pid" || { slurm_cluster_error="slurmctld wrote no pid file"; return 1; }
    slurm_cluster_pids="$slurm_cluster_pids $(cat "$d/slurmctld.pid")"
    for n in $slurm_cluster_nodes; do
        if ! slurmd -N "$n" -f "$SLURM_CONF" >"$d/log/slurmd-$n.start" 2>&1; then
            slurm_cluster_error="slurmd of node $n does not start: $(tail -n 1 "$d/log/slurmd-$n.start")"
            return 1
        fi
        slurm_wait_file "$d/slurmd-$n.pid" || { slurm_cluster_error="slurmd of $n wrote no pid file"; return 1; }
        slurm_cluster_pids="$slurm_cluster_pids $(cat "$d/slurmd-$n.pid")"
    done
    # Up when every node is idle (a safety bound of 30 s, not a timing).
    i=0
    until [ "$(sinfo -h -N -o %t 2>/dev/null | grep -cx idle)" -eq "$(echo "$slurm_cluster_nodes" | wc -w)" ]; do
        i=$((i + 1))
        if [ $i -ge 300 ]; then
            slurm_cluster_error="the nodes never became idle: $(sinfo -h -N -o '%N %t %E' 2>&1 | tr '\n' ' ');" \
                "$(tail -n 2 "$d/log/slurmctld.log" 2>/dev/null)"
            return 1
        fi
        sleep 0.1
    done
    return 0
}

slurm_wait_file() {
    i=0
    until [ -s "$1" ]; do
        i=$((i + 1))
        [ $i -lt 100 ] || return 1
        sleep 0.1
    done
}

slurm_cluster_stop() {
    [ -n "$slurm_cluster_dir" ] || return 0
    [ -n "${SLURM_CONF:-}" ] && [ -f "$SLURM_CONF" ] && scontrol shutdown >/dev/null 2>&1
    [ -n "$slurm_cluster_munge" ] && munged -s --socket="$slurm_cluster_munge" >/dev/null 2>&1
    for pid in $slurm_cluster_pids; do
        i=0
        while kill -0 "$pid" 2>/dev/null; do
            i=$((i + 1))
            if [ $i -ge 100 ]; then
                kill -9 "$pid" 2>/dev/null
                break
            fi
            sleep 0.1
        done
    done
    slurm_cluster_pids=""
    slurm_cluster_dir=""
}
