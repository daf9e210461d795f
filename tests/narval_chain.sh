#!/bin/sh
# narval_chain.sh - NARVAL compatibility beyond the ABI: a topology written
# after NARVAL's documented example (generic_producer/filter/consumer,
# sizes 1_000_000, fifo ports, <log_level>, buffer names and counts) and
# three C actors written from NARVAL's C actor interface (tests/actors/
# narval_*.c: NARVAL hooks only), named as NARVAL names them, by the
# "set library" lines of a NARVAL shell script (tests/narval/narval.sh),
# run unchanged by tusk-emulate, then by tusk-run (one tusk-actor process
# per instance) with the same figures. Each actor reads its own files from the
# configuration folder its <config_dir> names (the filter a crate map),
# which it gets in process_config: the consumer's figures are checked
# against the producer's formula. Then what goes wrong says so: no script,
# a script naming an unknown actor, a missing configuration folder, a
# configuration file missing from it, an address in <port>.
set -eu
b=${abs_top_builddir:?run through make check}
s=${abs_top_srcdir:?run through make check}
emulate=$b/tusk-emulate
libs=${TUSK_TEST_ACTOR_PATH:?run through make check}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tusk-narval.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cp -R "$s/tests/narval" "$tmp/narval"
chmod -R u+w "$tmp/narval"
cd "$tmp/narval"
mkdir private
TMPDIR=$tmp/narval/private
# The NARVAL libraries are test actors: on the actor search path only.
TUSK_ACTOR_PATH=$libs
export TMPDIR TUSK_ACTOR_PATH

step() { echo "narval_chain: $*"; }
fail() { echo "narval_chain: FAIL: $*" >&2; exit 1; }
expect() {
    want=$1 needle=$2
    shift 2
    got=0
    "$@" >out.txt 2>err.txt || got=$?
    [ "$got" -eq "$want" ] || { cat out.txt err.txt >&2; fail "'$*' exited $got, expected $want"; }
    grep -qF -- "$needle" err.txt || { cat err.txt >&2; fail "'$*': stderr lacks '$needle'"; }
}

buffers=5
step "the NARVAL chain runs unchanged: $buffers buffers of 1000 events, each actor configured from its own folder"
"$emulate" -n "$buffers" --narval-script narval.sh topology.xml >summary.txt 2>err.txt ||
    { cat err.txt >&2; fail "the NARVAL chain failed"; }
for actor in data_transmitter data_filter data_receiver; do
    grep -q "^$actor " summary.txt || fail "the summary lacks $actor"
done
# The producer's formula through the crate map, computed here.
awk -v n=$((buffers * 1000)) 'NR == FNR { det[$1] = $2; next }
    END {
        for (e = 0; e < n; e++) { d = det[e % 8]; cnt[d]++; sum[d] += (e * 37) % 1000 }
        print "buffers '"$buffers"'"
        for (d = 0; d < 64; d++) if (d in cnt) printf "detector %d: events %d, amplitude sum %d\n", d, cnt[d], sum[d]
    }' filter.d/crate.map filter.d/crate.map >expected.txt
cmp expected.txt counts.txt || { diff expected.txt counts.txt >&2 || true; fail "the consumer's figures differ"; }
[ -z "$(ls -A private)" ] || fail "a temporary folder was left: $(ls -A private)"
# Nothing was written into the actors' own folders.
[ "$(ls filter.d)" = "crate.map" ] || fail "filter.d holds more than crate.map: $(ls filter.d)"

step "the same chain under tusk-run --narval-script: one process per actor, each configured from its own folder, the consumer's figures equal tusk-emulate's"
# The producer ends by itself after 7 buffers (a test producer's option).
mv counts.txt counts-5.txt
cp producer.d/producer.conf producer.conf.orig
echo "buffers 7" >>producer.d/producer.conf
"$emulate" --narval-script narval.sh topology.xml >summary.txt 2>err.txt ||
    { cat err.txt >&2; fail "the NARVAL chain of 7 buffers failed in tusk-emulate"; }
mv counts.txt emulated.txt
grep -qx "buffers 7" emulated.txt || fail "tusk-emulate: the consumer did not count 7 buffers"
# Its run folders out of private/ (which must stay empty).
mkdir runs
trun() { env -u XDG_RUNTIME_DIR TMPDIR="$tmp/narval/runs" timeout 120 "$b/tusk-run" --no-live --actor-bin "$b/tusk-actor" "$@"; }
trun --narval-script narval.sh topology.xml >run.txt 2>err.txt ||
    { cat run.txt err.txt >&2; fail "the NARVAL chain failed in tusk-run"; }
grep -q "^links: 2, buffers sent 14, lost 0$" run.txt || { cat run.txt >&2; fail "tusk-run's summary"; }
cmp emulated.txt counts.txt || { diff emulated.txt counts.txt >&2 || true; fail "tusk-run's figures differ from tusk-emulate's"; }
[ "$(ls filter.d)" = "crate.map" ] || fail "tusk-run wrote into filter.d: $(ls filter.d)"
[ "$(ls consumer.d)" = "consumer.conf" ] || fail "tusk-run wrote into consumer.d: $(ls consumer.d)"
mv producer.conf.orig producer.d/producer.conf
step "tusk-run without the script: exit 2, as tusk-emulate"
got=0
trun topology.xml >run.txt 2>err.txt || got=$?
[ "$got" -eq 2 ] || { cat err.txt >&2; fail "tusk-run without --narval-script exited $got, expected 2"; }
grep -qF "no library is set for 'data_transmitter'" err.txt || { cat err.txt >&2; fail "tusk-run's message"; }

step "--describe names the libraries the script set"
"$emulate" --describe --narval-script narval.sh topology.xml >describe.txt 2>err.txt ||
    { cat err.txt >&2; fail "--describe failed"; }
grep -q "data_filter (intermediary, 1 instance): .*/libnarval_filter.so" describe.txt ||
    { cat describe.txt >&2; fail "--describe does not show the filter's library"; }
grep -q "plain NARVAL library" describe.txt || fail "--describe does not call them NARVAL libraries"

step "without the script: exit 2, naming the actor and how NARVAL names its library"
expect 2 "topology.xml:10: <producer> 'data_transmitter': <binary_code> generic_producer is NARVAL's host for a C actor library, and no library is set for 'data_transmitter'" \
    "$emulate" -n 1 topology.xml

step "a script naming an actor the topology lacks: exit 2 with the script's line"
sed 's/data_filter$/data_filtre/' narval.sh >typo.sh
expect 2 "typo.sh:9: set library libnarval_filter.so for 'data_filtre': topology.xml has no such actor" \
    "$emulate" -n 1 --narval-script typo.sh topology.xml

step "a library the script names that does not exist: exit 2, with the folders searched"
sed 's/libnarval_consume.so/libnarval_nothing.so/' narval.sh >nolib.sh
expect 2 "actor library 'libnarval_nothing.so' (set library, nolib.sh:10) not found (searched: $libs" \
    "$emulate" -n 1 --narval-script nolib.sh topology.xml

step "a configuration folder that does not exist: exit 2, before any actor is loaded"
sed 's|<config_dir>filter.d</config_dir>|<config_dir>missing.d</config_dir>|' topology.xml >nodir.xml
expect 2 "nodir.xml:28: <intermediary> 'data_filter': <config_dir> 'missing.d': the actor's configuration folder" \
    "$emulate" -n 1 --narval-script narval.sh nodir.xml

step "the crate map missing from the filter's folder: its process_config fails, exit 2"
mkdir empty.d
sed 's|<config_dir>filter.d</config_dir>|<config_dir>empty.d</config_dir>|' topology.xml >nomap.xml
expect 2 "actor data_filter[0]: process_config failed with status 1 (failure)" \
    "$emulate" -n 1 --narval-script narval.sh nomap.xml
[ -z "$(ls -A private)" ] || fail "a temporary folder was left after a configuration error"

step "<port> is NARVAL's port type: an address there is refused, pointing to <address>"
sed '0,/<port output_buffer="data">fifo<\/port>/s//<port output_buffer="data">10.0.0.2<\/port>/' topology.xml >addr.xml
expect 2 "addr.xml:16: <producer> 'data_transmitter': bad port '10.0.0.2': expected 'fifo', 'eth0', 'eth1', 'eth2', 'eth3', 'ib0' or 'ib1' (NARVAL's port type; the address a tusk actor's inputs bind to is <address>)" \
    "$emulate" -n 1 --narval-script narval.sh addr.xml
echo "narval_chain: PASS"
