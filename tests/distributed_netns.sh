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
#   1. an actor on another host that receives data but names no <address>:
#      refused before anything starts, exit 2;
#   2. reader (10.231.X.1) -> copy x2 (10.231.X.2) -> writer (10.231.X.3)
#      over tcp: exit 0, the output holds every input frame, lost=0, every
#      instance on its host, the data went through host 2's interface, and
#      no process is left behind (copy's library is found only through the
#      TUSK_ACTOR_PATH that the instances inherit through the launcher);
#   3. an actor library missing on one host (each host gets its own actor
#      folder; host 2's lacks the library): exit 2 at configuration, with a
#      message naming the actor, the host and the library;
#   4. an outsider on a fourth host (10.231.X.4) against a running chain
#      (reader -> copy x2 -> sink, until stopped): its stop, pause, claim of
#      an instance's place and buffers into every data input are refused
#      (no keys, or a key of its own and the run's public key), its garbage
#      bytes on every socket too; the run goes on, the owner stops it, exit
#      0, every buffer reconciled, and the report counts what was refused;
#   5. configured keys (--certs): a certificate per host and one for
#      tusk-run, made by tusk-run --new-cert; the chain of 2 runs with them
#      (the report says curve-certs); without host 2's public certificate,
#      its instances are refused and the run never starts (exit 2).
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
    ctl=10.231.$x.254 h1=10.231.$x.1 h2=10.231.$x.2 h3=10.231.$x.3 h4=10.231.$x.4
    if ip netns add "$ctl" 2>/dev/null; then
        ns_exists "$h1" || ns_exists "$h2" || ns_exists "$h3" || ns_exists "$h4" || break
        ip netns del "$ctl"
    fi
    tries=$((tries + 1))
    [ "$tries" -lt 200 ] || fail "no free namespace names 10.231.X.* (ip netns list)"
    x=$(((x + 1) % 200))
done
namespaces=$ctl
step "private network 10.231.$x.0/24: control host $ctl (bridge), hosts $h1 $h2 $h3, outsider $h4"
ip -n "$ctl" link set lo up
ip -n "$ctl" link add br0 type bridge
ip -n "$ctl" addr add "$ctl/24" dev br0
ip -n "$ctl" link set br0 up
i=0
for h in "$h1" "$h2" "$h3" "$h4"; do
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
# writer on h3; "no-port" leaves out the writer's <address>.
topology() {
    writer_port="<address>$h3</address>"
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
    <address>$h2</address>
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

# ---- 1. a remote actor that receives data must name its <address> ---------
step "writer on $h3 without <address>: refused before any instance starts, exit 2"
topology noport.xml netns_copy no-port
tusk_run run0 'ip netns exec {host}' noport.xml
[ "$status" -eq 2 ] || { show run0; fail "tusk-run exited $status, expected 2"; }
expect_err "'writer' on $h3 receives data from another host" run0
expect_err "name the interface or address its inputs bind to" run0
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
# ---- 4. an outsider on another host -----------------------------------------
step "an outsider on $h4 against a running chain (reader -> copy x2 -> sink)"
W=$b/tests/wire_inject
cat >long.xml <<EOF
<configuration>
  <producer><name>reader</name><hostname>$h1</hostname><binary_code>file_producer</binary_code><size>65536</size>
    <parameter name="file">$tmp/input.adf</parameter><parameter name="repeat">1000000</parameter></producer>
  <intermediary instances="2"><name>copy</name><hostname>$h2</hostname><address>$h2</address>
    <binary_code>netns_copy</binary_code><size>65536</size><data_source>reader</data_source></intermediary>
  <consumer><name>sink</name><hostname>$h3</hostname><address>$h3</address><binary_code>null_consumer</binary_code>
    <data_source>copy</data_source></consumer>
</configuration>
EOF
timeout --foreground -k 10 120 ip netns exec "$ctl" "$run" --no-live -q --control-address "$ctl" \
    --launcher 'ip netns exec {host}' --actor-bin "$actor" --run-dir "$tmp/run3" --report "$tmp/run3.report" \
    long.xml >out.txt 2>err.txt &
rpid=$!
status3() { ip netns exec "$ctl" "$run" --status "$tmp/run3" >status.txt 2>/dev/null; }
i=0
until status3 && grep -q "^sink\[0\] .* running " status.txt; do
    i=$((i + 1))
    [ $i -lt 300 ] && kill -0 "$rpid" 2>/dev/null || { show run3; fail "the long run never ran"; }
    sleep 0.1
done
ctl_ep=$(cat "$tmp/run3/control")
key=$(sed -n 's/^server-key //p' "$tmp/run3/keys")
inputs=$(sed -n 's/.* endpoint=//p' "$tmp/run3/endpoints")
[ "$(echo "$inputs" | wc -l)" -eq 3 ] || fail "expected 3 inputs in run3/endpoints"
# attack ARGS...: wire_inject on the outsider's host; it must be refused (exit 3).
attack() {
    got=0
    ip netns exec "$h4" "$W" "$@" >att.txt 2>&1 || got=$?
    [ "$got" -eq 3 ] || { cat att.txt >&2; kill "$rpid"; fail "$h4 was not refused (exit $got): $*"; }
}
for k in "" "--stranger $key"; do
    # shellcheck disable=SC2086
    attack $k --control "$ctl_ep" cli.1 "CLI cmd=stop"
    # shellcheck disable=SC2086
    attack $k --control "$ctl_ep" cli.2 "CLI cmd=pause"
    # shellcheck disable=SC2086
    attack $k --control "$ctl_ep" copy.1.0 "HELLO actor=copy instance=1 incarnation=0"
done
for ep in $inputs; do
    attack "$ep" 1 0 0 0 1 "$tmp/input.adf"
    attack --stranger "$key" "$ep" 1 0 0 0 1 "$tmp/input.adf"
done
for ep in "$ctl_ep" $inputs; do
    ip netns exec "$h4" "$W" --raw "$ep" '\x01\x02garbage1234!!' || fail "garbage from $h4 to $ep: no connection"
done
step "    stop, pause, an instance's place, a buffer into each input, garbage: all refused"
counted() {
    status3 || return 1
    grep -qF "security: tusk-run's control socket: 7 connections refused (3 denied by the authentication), 0 malformed messages dropped, 0 messages refused" status.txt || return 1
    for inst in "copy\[0\]" "copy\[1\]" "sink\[0\]"; do
        grep -q "^security: $inst's inputs: 3 connections refused (1 denied by the authentication), 0 messages dropped$" status.txt || return 1
    done
}
i=0
until counted; do
    i=$((i + 1))
    [ $i -lt 300 ] || { cat status.txt >&2; kill "$rpid"; fail "--status never showed what was refused"; }
    sleep 0.1
done
grep -q "^reader\[0\] .* running " status.txt || { kill "$rpid"; fail "the run is not running any more"; }
ip netns exec "$ctl" "$run" --stop "$tmp/run3" >/dev/null || { kill "$rpid"; fail "the owner's --stop failed"; }
status=0
wait "$rpid" || status=$?
[ "$status" -eq 0 ] || { show run3; fail "the attacked run exited $status, expected 0"; }
grep -qF "refused a connection from $h4 (tusk-tcp, CURVE): an unknown key" err.txt || fail "the refusals do not name $h4"
r=$tmp/run3.report
grep -q "^control=tusk-run security=curve refused=7 denied=3 bad_control=0 refused_commands=0$" "$r" ||
    fail "the report's control line: $(grep '^control=' "$r")"
for inst in "copy\[0\]" "copy\[1\]" "sink\[0\]"; do
    grep -q "^instance=$inst .* refused=3 denied=1 dropped=0$" "$r" || fail "the report's $inst: $(grep "^instance=$inst" "$r")"
done
grep -q ' lost=0 fatal=0$' "$r" || fail "the attacked run lost buffers"
sent=$(sed -n 's/^instance=reader\[0\] .* out_buffers=\([0-9]*\) .*/\1/p' "$r")
got=$(sed -n 's/^instance=sink\[0\] .* in_buffers=\([0-9]*\) .*/\1/p' "$r")
[ -n "$sent" ] && [ "$sent" = "$got" ] || fail "the reader sent $sent buffers, the sink got $got"

# ---- 5. configured keys --------------------------------------------------------
step "configured keys: a certificate per host (tusk-run --new-cert), the chain of 2 with --certs"
mkdir -m 700 certs
for n in controller "$h1" "$h2" "$h3"; do
    "$run" --new-cert "$tmp/certs/$n" >/dev/null || fail "tusk-run --new-cert certs/$n failed"
done
[ "$(stat -c %a "certs/$h2.key_secret")" = 600 ] || fail "a secret certificate is not 0600"
rm -f output.adf
certs_run() { # RUN_DIR
    status=0
    timeout --foreground -k 10 60 ip netns exec "$ctl" "$run" --no-live --transport tcp --certs "$tmp/certs" \
        --control-address "$ctl" --launcher 'ip netns exec {host}' --actor-bin "$actor" --run-dir "$tmp/$1" \
        --start-timeout-ms 5000 --report "$tmp/$1.report" hosts.xml >out.txt 2>err.txt || status=$?
}
certs_run run4
[ "$status" -eq 0 ] || { show run4; fail "the run with configured keys exited $status"; }
"$adf" diff --unordered input.adf output.adf >diff.txt 2>&1 || { cat diff.txt >&2; fail "output.adf differs"; }
grep -q "^control=tusk-run security=curve-certs refused=0 " run4.report || fail "the report does not say curve-certs"
step "without $h2's public certificate, its instances are refused: the run never starts (exit 2)"
rm "certs/$h2.key"
certs_run run5
[ "$status" -eq 2 ] || { show run5; fail "tusk-run exited $status, expected 2"; }
expect_err "refused a connection from $h2 (tusk-tcp, CURVE): an unknown key" run5
for h in "$h1" "$h2" "$h3"; do
    left=$(ip netns pids "$h")
    [ -z "$left" ] || fail "processes left on $h: $(echo "$left" | tr '\n' ' ')"
done
echo "$me: PASS"
