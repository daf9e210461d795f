#!/bin/sh
# distributed_netns.sh - tusk-run across hosts, with Linux network
# namespaces standing in for the hosts (root only; skipped otherwise).
#
# The test builds a private network that touches nothing of the machine's
# own: a namespace 10.231.X.254 (the control host) holding a bridge with
# that address, and three namespaces 10.231.X.1, .2 and .3 (the hosts, each
# named after its address), each joined to the bridge by a veth pair.
# tusk-run runs on the control host and starts every instance on its
# <hostname> with the launcher 'ip netns exec {host}'. The namespaces share
# the file system, so every host sees the same build tree and files.
#
#   1. an actor on another host that receives data but names no <port>:
#      refused before anything starts, exit 2;
#   2. reader (10.231.X.1) -> copy x2 (10.231.X.2) -> writer (10.231.X.3)
#      over tcp: exit 0, the output holds every input frame, lost=0, every
#      instance on its host, the data went through host 2's interface, and
#      no process is left behind (copy's library is found only through the
#      TUSK_ACTOR_PATH that the instances inherit through the launcher);
#   3. an actor library missing on one host (each host gets its own actor
#      folder; host 2's lacks the library): exit 2 at configuration, with a
#      message naming the actor, the host and the library.
#
# The bridge lives in a namespace of its own rather than in the root one,
# so the machine's firewall (e.g. Docker's FORWARD policy DROP, applied to
# bridged traffic through br_netfilter) cannot get in the way. It takes a
# few seconds; every tusk-run has a 60 s safety timeout.
set -eu
b=${abs_top_builddir:?run through make check}
: "${TUSK_ACTOR_PATH:?run through make check}"
export TUSK_ACTOR_PATH
me=distributed_netns
run=$b/tusk-run
actor=$b/tusk-actor
adf=$b/tusk-adf

step() { echo "$me: $*"; }
fail() { echo "$me: FAIL: $*" >&2; exit 1; }
skip() { echo "$me: SKIP: $*"; exit 77; }

# ---- can we build namespaces here? ----------------------------------------
[ "$(id -u)" -eq 0 ] ||
    skip "needs root (network namespaces, veth pairs, a bridge); run it as root:" \
        "sudo make check TESTS=tests/distributed_netns.sh"
command -v ip >/dev/null 2>&1 || skip "needs ip (Debian: apt-get install iproute2)"
command -v timeout >/dev/null 2>&1 || skip "needs timeout (coreutils)"

namespaces="" # the ones this script created: cleanup deletes these only
tmp=""
cleanup() {
    st=$?
    set +e
    for ns in $namespaces; do
        ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null
    done
    # Deleting a namespace deletes the veth ends and the bridge in it.
    for ns in $namespaces; do
        ip netns del "$ns" 2>/dev/null
    done
    [ -n "$tmp" ] && rm -rf "$tmp"
    exit "$st"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

probe=tusk-probe-$$
why=$(ip netns add "$probe" 2>&1) ||
    skip "cannot create a network namespace (needs CAP_SYS_ADMIN; in a container?): $why"
namespaces=$probe
why=$(ip netns exec "$probe" true 2>&1) || skip "ip netns exec fails here: $why"
why=$(ip -n "$probe" link add tprobe0 type veth peer name tprobe1 2>&1) || skip "cannot create veth pairs: $why"
why=$(ip -n "$probe" link add tprobe2 type bridge 2>&1) || skip "cannot create a bridge: $why"
ip netns del "$probe"
namespaces=""

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tusk-netns.XXXXXX")
cd "$tmp"

# ---- the private network --------------------------------------------------
# Claim a free 10.231.X.0/24: X from the process id, the next one when a
# concurrent run holds it. Nothing outside the namespaces sees the addresses.
ns_exists() { ip netns list | awk '{ print $1 }' | grep -qxF "$1"; }
x=$(($$ % 200))
tries=0
while :; do
    ctl=10.231.$x.254 h1=10.231.$x.1 h2=10.231.$x.2 h3=10.231.$x.3
    if ip netns add "$ctl" 2>/dev/null; then
        ns_exists "$h1" || ns_exists "$h2" || ns_exists "$h3" || break
        ip netns del "$ctl"
    fi
    tries=$((tries + 1))
    [ "$tries" -lt 200 ] || fail "no free namespace names 10.231.X.* (ip netns list)"
    x=$(((x + 1) % 200))
done
namespaces=$ctl
step "private network 10.231.$x.0/24: control host $ctl (bridge), hosts $h1 $h2 $h3"
ip -n "$ctl" link set lo up
ip -n "$ctl" link add br0 type bridge
ip -n "$ctl" addr add "$ctl/24" dev br0
ip -n "$ctl" link set br0 up
i=0
for h in "$h1" "$h2" "$h3"; do
    i=$((i + 1))
    ip netns add "$h"
    namespaces="$namespaces $h"
    ip -n "$ctl" link add "veth$i" type veth peer name eth0 netns "$h"
    ip -n "$ctl" link set "veth$i" master br0 up
    ip -n "$h" link set lo up
    ip -n "$h" addr add "$h/24" dev eth0
    ip -n "$h" link set eth0 up
done

# ---- helpers ---------------------------------------------------------------
base_port=5600 # fresh namespaces: every port is free
# tusk_run RUN_DIR LAUNCHER TOPOLOGY: tusk-run on the control host, with a
# safety timeout; stdout in out.txt, stderr in err.txt; sets $status.
tusk_run() {
    status=0
    timeout --foreground -k 10 60 ip netns exec "$ctl" "$run" --no-live --transport tcp --base-port "$base_port" \
        --control-address "$ctl" --launcher "$2" --actor-bin "$actor" --run-dir "$tmp/$1" \
        --report "$tmp/$1.report" "$3" >out.txt 2>err.txt || status=$?
}
# show RUN_DIR: what a failed run left, for the failure message.
show() {
    {
        echo "--- tusk-run stdout"
        cat out.txt
        echo "--- tusk-run stderr"
        cat err.txt
        for f in "$tmp/$1"/*.log; do
            [ -f "$f" ] || continue
            echo "--- $f"
            tail -n 20 "$f"
        done
    } >&2
}
expect_err() { # NEEDLE RUN_DIR
    grep -qF -- "$1" err.txt || { show "$2"; fail "tusk-run's stderr lacks '$1'"; }
}
# topology FILE COPY_LIBRARY [no-port]: reader on h1 -> copy x2 on h2 ->
# writer on h3; "no-port" leaves out the writer's <port>.
topology() {
    writer_port="<port>$h3</port>"
    [ "${3:-}" = no-port ] && writer_port=""
    cat >"$1" <<EOF
<configuration>
  <producer>
    <name>reader</name>
    <hostname>$h1</hostname>
    <binary_code>file_producer</binary_code>
    <size>65536</size>
    <parameter name="file">$tmp/input.adf</parameter>
  </producer>
  <intermediary instances="2">
    <name>copy</name>
    <hostname>$h2</hostname>
    <port>$h2</port>
    <binary_code>$2</binary_code>
    <size>65536</size>
    <data_source>reader</data_source>
  </intermediary>
  <consumer>
    <name>writer</name>
    <hostname>$h3</hostname>
    $writer_port
    <binary_code>file_writer</binary_code>
    <data_source>copy</data_source>
    <parameter name="file">$tmp/output.adf</parameter>
  </consumer>
</configuration>
EOF
}
# counter HOST rx|tx: bytes through the host's eth0.
counter() { ip netns exec "$1" cat "/sys/class/net/eth0/statistics/$2_bytes"; }
counter "$h2" rx >/dev/null || fail "cannot read the interface counters of $h2"

"$adf" gen -n 300 --seed 21 -o input.adf 2>gen.txt || { cat gen.txt >&2; fail "tusk-adf gen failed"; }
size=$(wc -c <input.adf)

# Actor folders. copy's library is 'netns_copy': the passthrough actor
# under a name that no installed folder has, so it is found only where a
# folder made here is searched. lib/all (every host, through the
# TUSK_ACTOR_PATH that the instances inherit) has it; in scenario 3 each
# host gets its own folder instead, and that of $h2 lacks it.
libs=${TUSK_ACTOR_PATH%%:*}
[ -f "$libs/passthrough.so" ] || fail "no passthrough.so in $libs (TUSK_ACTOR_PATH)"
for d in all "$h1" "$h2" "$h3"; do
    mkdir -p "lib/$d"
    for so in "$libs"/*.so; do
        ln -s "$so" "lib/$d/"
    done
    [ "$d" = "$h2" ] || ln -s "$libs/passthrough.so" "lib/$d/netns_copy.so"
done
TUSK_ACTOR_PATH=$tmp/lib/all

# ---- 1. a remote actor that receives data must name its <port> ------------
step "writer on $h3 without <port>: refused before any instance starts, exit 2"
topology noport.xml netns_copy no-port
tusk_run run0 'ip netns exec {host}' noport.xml
[ "$status" -eq 2 ] || { show run0; fail "tusk-run exited $status, expected 2"; }
expect_err "'writer' on $h3 receives data from another host" run0
expect_err "<port>" run0
for h in "$h1" "$h2" "$h3"; do
    [ -z "$(ip netns pids "$h")" ] || fail "an instance was started on $h"
done

# ---- 2. three hosts, data over tcp between namespaces --------------------
step "reader@$h1 -> copy x2 @$h2 -> writer@$h3 over tcp, control at $ctl"
step "    (copy's library only through the TUSK_ACTOR_PATH the instances inherit)"
topology hosts.xml netns_copy
rx1=$(counter "$h2" rx) tx1=$(counter "$h2" tx)
tusk_run run1 'ip netns exec {host}' hosts.xml
[ "$status" -eq 0 ] || { show run1; fail "tusk-run exited $status, expected 0"; }
sed 's/^/    /' out.txt

step "output.adf holds every frame of input.adf"
"$adf" diff --unordered input.adf output.adf >diff.txt 2>&1 || { cat diff.txt >&2; fail "output.adf differs"; }
grep -q '^same:' diff.txt || { cat diff.txt >&2; fail "tusk-adf diff did not say same"; }
sed 's/^/    /' diff.txt

step "the report: nothing lost, every instance on its host, none failed"
grep -q ' lost=0 fatal=0$' run1.report || { cat run1.report >&2; fail "the report does not say lost=0 fatal=0"; }
[ "$(grep -c '^instance=' run1.report)" -eq 4 ] || { cat run1.report >&2; fail "the report does not list 4 instances"; }
for pair in "reader[0] $h1" "copy[0] $h2" "copy[1] $h2" "writer[0] $h3"; do
    inst=${pair% *} host=${pair#* }
    line=$(grep -F "instance=$inst " run1.report) || fail "the report has no line for $inst"
    case " $line " in
    *" host=$host failed=0 "*) ;;
    *) fail "report: $line (expected host=$host failed=0)" ;;
    esac
done
copied=0
for k in 0 1; do
    n=$(sed -n "s/^instance=copy\[$k\] .* in_buffers=\([0-9]*\) .*/\1/p" run1.report)
    [ -n "$n" ] || { cat run1.report >&2; fail "the report has no in_buffers for copy[$k]"; }
    copied=$((copied + n))
    step "    copy[$k] on $h2 took $n buffers"
done
read_out=$(sed -n 's/^instance=reader\[0\] .* out_buffers=\([0-9]*\) .*/\1/p' run1.report)
[ -n "$read_out" ] || { cat run1.report >&2; fail "the report has no out_buffers for reader[0]"; }
[ "$copied" -eq "$read_out" ] || fail "reader sent $read_out buffers, the copies took $copied"

step "the data crossed namespaces: $h2's eth0 carried the file in and out"
# copy binds its inputs on $h2, an address that exists only in that
# namespace; the counters show the data went through its interface.
rx=$(($(counter "$h2" rx) - rx1)) tx=$(($(counter "$h2" tx) - tx1))
step "    $h2 eth0: received $rx bytes, sent $tx bytes (input.adf: $size bytes)"
[ "$rx" -ge "$size" ] || fail "$h2 received $rx bytes, less than input.adf ($size)"
[ "$tx" -ge "$size" ] || fail "$h2 sent $tx bytes, less than input.adf ($size)"
[ "$(counter "$h1" tx)" -ge "$size" ] || fail "$h1 (reader) sent less than input.adf"
[ "$(counter "$h3" rx)" -ge "$size" ] || fail "$h3 (writer) received less than input.adf"
for inst in reader.0 copy.0 copy.1 writer.0; do
    [ -f "run1/$inst.log" ] || fail "run1/$inst.log is missing"
done

step "no instance is left running on any host"
for h in "$h1" "$h2" "$h3"; do
    left=$(ip netns pids "$h")
    [ -z "$left" ] || fail "processes left on $h: $(echo "$left" | tr '\n' ' ')"
done

# ---- 3. a library missing on one host ---------------------------------------
step "copy's library 'netns_copy' is missing on $h2 only: exit 2 at configuration"
# Each host searches its own folder: the launcher sets TUSK_ACTOR_PATH.
topology missing.xml netns_copy
rm -f output.adf
tusk_run run2 "ip netns exec {host} env TUSK_ACTOR_PATH='$tmp/lib/{host}'" missing.xml
[ "$status" -eq 2 ] || { show run2; fail "tusk-run exited $status, expected 2"; }
expect_err "copy[0] on $h2" run2
expect_err "actor library 'netns_copy' not found" run2
expect_err "$tmp/lib/$h2" run2
grep -F "copy[0] on $h2" err.txt | head -n 1 | sed 's/^/    /'
if grep -qF "reader[0] on $h1:" err.txt || grep -qF "writer[0] on $h3:" err.txt; then
    show run2
    fail "reader or writer failed too, though their hosts have their libraries"
fi
echo "$me: PASS"
