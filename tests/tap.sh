#!/bin/sh
# tap.sh - the online sampling tap (distributed/tap.h) on a running chain
# (sim -> psa -> spectra, a fixed number of events), under a controller
# that stays up (tusk-run --serve --web):
#   - `tusk-run --tap 'psa[0]->spectra[0]'` names the tap's address;
#     tusk-tap connects with the run's keys, takes one sample (well-formed
#     ADF, written to a file tusk-adf reads), then stays connected without
#     taking more: a monitor that fell behind; each counted run starts
#     once the status says the tap is listening (its subscription reached
#     the sending instance: "connected" in tusk-tap does not prove that);
#   - the run goes on unchanged: it ends cleanly, every link reconciled,
#     and the spectra are those of the same run without a tap (exact);
#   - nothing is lost silently: on the tapped link every buffer sent was
#     either queued for the tap or dropped and counted (/metrics:
#     tap_samples + tap_dropped = sent), and drops there were (the
#     monitor's and the tap's queues hold a bounded number: the rest must
#     be dropped, whatever the timing);
#   - `--untap` detaches it; a link that is none is refused, naming it;
#   - a tap that runs a consumer actor (tusk-tap --consumer null_consumer)
#     over runs 2 and 3: the consumer's own counts per run (its line at
#     each process_stop) are exactly the samples tusk-tap took of that run,
#     which are exactly those the tap queued (/metrics), queued + dropped
#     = sent; `--untap` ends tusk-tap cleanly (process_stop,
#     process_unload, its configuration folder removed, exit 0).
# Rates with and without a tap: bench/tap.sh (BENCHMARKS.md), not here.
set -eu
b=${abs_top_builddir:?run through make check}
s=${abs_top_srcdir:?run through make check}
me=tap
# shellcheck source=tests/distributed_lib.sh
. "$s/tests/distributed_lib.sh"
pid= tap_pid= cons_pid=
web_chain_setup tap cons_pid tap_pid pid
chain() { # OUT
    cat <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<configuration>
  <producer><name>sim</name><binary_code>gamma_sim</binary_code><size>65536</size>
    <parameter name="config">$s/config/sim-co60.conf</parameter>
    <parameter name="basis">$tmp/basis.tbs</parameter>
    <parameter name="events">60000</parameter></producer>
  <intermediary><name>psa</name><binary_code>psa</binary_code><data_source>sim</data_source><size>65536</size>
    <parameter name="basis">$tmp/basis.tbs</parameter><parameter name="backend">fast</parameter>
    <parameter name="threads">1</parameter></intermediary>
  <consumer><name>spectra</name><binary_code>spectra</binary_code><data_source>psa</data_source>
    <parameter name="out">$tmp/$1</parameter><parameter name="plot">no</parameter>
    <parameter name="lines">1173.2 1332.5</parameter></consumer>
</configuration>
EOF
}

step "the run without a tap (the reference)"
chain plain >plain.xml
run plain.xml >out.txt 2>err.txt || fail "the chain without a tap"

step "a controller that stays up; a tap on psa[0]->spectra[0] before the run"
chain tapped >tapped.xml
mkdir -m 700 rd
"$b/tusk-run" --serve --no-live --actor-bin "$b/tusk-actor" --web 0 --run-dir "$tmp/rd" --report report.txt \
    tapped.xml >serve.txt 2>err.txt &
pid=$!
until_true 600 grep -q "waiting for commands" err.txt || fail "the controller did not get ready"
until_true 600 test -s rd/web || fail "no RUN_FOLDER/web"
url=$(sed -n 1p rd/web)
listening() { # the sending instance's last statistics: the tap has its subscriber
    curl -sf "${url}api/status" | grep -q '"tap":true,"tap_address":"[^"]*","tap_listening":true'
}
expect_refused() {
    st=0
    "$b/tusk-run" --tap "$1" rd >out.txt 2>tap_err.txt || st=$?
    [ "$st" -ne 0 ] || fail "--tap '$1' was taken"
    grep -qF "$2" tap_err.txt || fail "--tap '$1': the message lacks '$2': $(cat tap_err.txt)"
}
expect_refused 'sim[0]->spectra[0]' "no link sim[0]->spectra[0]"
expect_refused 'psa[0]' "UP[K]->DOWN[K]"
expect_refused 'psa[x]->spectra[0]' "no number"
"$b/tusk-run" --tap 'psa[0]->spectra[0]' rd >tap.txt 2>tap_err.txt || fail "--tap: $(cat tap_err.txt)"
address=$(sed -n 's/^tap on psa\[0\]->spectra\[0\]: //p' tap.txt)
[ -n "$address" ] || fail "--tap did not name the tap's address: $(cat tap.txt)"
"$b/tusk-tap" --count 1 --stay --run-dir rd --out sample.adf "$address" >monitor.txt 2>monitor_err.txt &
tap_pid=$!
until_true 300 grep -q "^tusk-tap: connected" monitor.txt || fail "tusk-tap did not connect: $(cat monitor_err.txt)"
until_true 300 listening || fail "the tap never had its subscriber"

step "the run, with a monitor that takes one sample and falls behind"
"$b/tusk-run" --start rd >out.txt 2>&1 || fail "--start: $(cat out.txt)"
"$b/tusk-run" --wait rd >summary.txt 2>&1 || fail "--wait: $(cat summary.txt)"
grep -q "run 1 ended cleanly" summary.txt || fail "the tapped run did not end cleanly: $(cat summary.txt)"
until_true 300 grep -q "taking no more" monitor.txt || fail "tusk-tap did not take its sample"
grep -q "^sample: run 1 buffer [0-9]*, [0-9]* bytes, [1-9][0-9]* frames$" monitor.txt || fail "the sample: $(cat monitor.txt)"
"$b/tusk-adf" stats sample.adf >stats.txt 2>&1 || fail "tusk-adf stats on the sample: $(cat stats.txt)"

step "the chain's output is that of the run without a tap"
cmp -s plain/summary.csv tapped/summary.csv || fail "the spectra differ with a tap"
for f in singles.csv addback.csv core.csv; do
    cmp -s "plain/$f" "tapped/$f" || fail "$f differs with a tap"
done
grep -q "^link=psa\[0\]->spectra\[0\] .* lost=0 " rd/run-1.report || fail "psa -> spectra not reconciled"

step "every buffer of the tapped link queued for the tap or dropped and counted"
want=$(sed -n 's/^link=psa\[0\]->spectra\[0\] sent=\([0-9]*\) .*/\1/p' rd/run-1.report)
value() { sed -n "s/^$1{from=psa\[0\],to=spectra\[0\]} //p" samples.txt; }
scrape() { # until the page's snapshot (every 0.5 s) has the run's final counts
    curl -sf "${url}metrics" >metrics.txt || return 1
    "$b/tests/check_metrics" --parse metrics.txt >samples.txt || fail "/metrics does not parse"
    [ "$(value tusk_link_sent_buffers_total)" = "$want" ] || return 1
    # The link's count can be final (spectra's) before psa's own are, the
    # tap's among them: those only grow, up to this sum exactly.
    taken=$(value tusk_link_tap_samples_total) dropped=$(value tusk_link_tap_dropped_total)
    [ $((${taken:-0} + ${dropped:-0})) -eq "$want" ]
}
until_true 100 scrape || fail "/metrics never showed the $want buffers psa[0] sent, each queued for the tap or dropped: $(grep 'to=spectra' samples.txt)"
sent=$(value tusk_link_sent_buffers_total)
taken=$(value tusk_link_tap_samples_total)
dropped=$(value tusk_link_tap_dropped_total)
echo "$me: link psa[0]->spectra[0]: $sent buffers sent, $taken queued for the tap, $dropped dropped"
[ "$sent" -gt 100 ] || fail "too few buffers ($sent) to show drops"
[ $((taken + dropped)) -eq "$sent" ] || fail "tap: $taken + $dropped != $sent sent"
[ "$taken" -ge 1 ] || fail "nothing queued for the tap"
[ "$dropped" -ge 1 ] || fail "nothing dropped, though the monitor took one sample only"
curl -sf "${url}api/status" >status.json || fail "GET /api/status"
grep -q '"tap":true,"tap_address":"'"$address"'"' status.json || fail "/api/status: no tap at $address"

step "untap"
"$b/tusk-run" --untap 'psa[0]->spectra[0]' rd >out.txt 2>&1 || fail "--untap: $(cat out.txt)"
grep -q "tap off psa\[0\]->spectra\[0\]" out.txt || fail "--untap said: $(cat out.txt)"
untapped() { curl -sf "${url}api/status" | grep -q '"tap":true' && return 1; return 0; }
until_true 100 untapped || fail "the tap stays in the status"
# The monitor's part is done: it goes now, before the same tap address is
# bound again (ZeroMQ could reconnect it there: a second subscriber).
kill "$tap_pid"
st=0
wait "$tap_pid" || st=$?
tap_pid=
[ "$st" -eq 0 ] || fail "tusk-tap exited $st"
grep -q "^tusk-tap: 1 samples, .* 0 malformed$" monitor.txt || fail "tusk-tap's summary: $(cat monitor.txt)"

step "a tap running a consumer actor (null_consumer) over runs 2 and 3; untap ends it cleanly"
# The link's tap counts add up over the taps it had: those of this one
# are what they grow by from here (no run goes on: they stand still).
curl -sf "${url}metrics" >metrics.txt || fail "GET /metrics"
"$b/tests/check_metrics" --parse metrics.txt >samples.txt || fail "/metrics does not parse"
taken0=$(value tusk_link_tap_samples_total)
dropped0=$(value tusk_link_tap_dropped_total)
[ "$taken0" = "$taken" ] && [ "$dropped0" = "$dropped" ] || fail "the tap's counts moved without a run"
"$b/tusk-run" --tap 'psa[0]->spectra[0]' rd >tap.txt 2>tap_err.txt || fail "--tap: $(cat tap_err.txt)"
address=$(sed -n 's/^tap on psa\[0\]->spectra\[0\]: //p' tap.txt)
[ -n "$address" ] || fail "--tap did not name the tap's address: $(cat tap.txt)"
# Its own TMPDIR: the consumer's configuration folder is made there and
# must be gone at the end.
mkdir tt
TMPDIR=$tmp/tt "$b/tusk-tap" --run-dir rd --consumer null_consumer "$address" >consumer.txt 2>consumer_err.txt &
cons_pid=$!
until_true 300 grep -q "^tusk-tap: connected" consumer.txt || fail "tusk-tap did not connect: $(cat consumer_err.txt)"
total=0
for r in 2 3; do
    # reset: process_reset and process_initialise, the producer starts over
    "$b/tusk-run" --reset rd >out.txt 2>&1 || fail "--reset (before run $r): $(cat out.txt)"
    until_true 300 listening || fail "the tap has no subscriber before run $r"
    "$b/tusk-run" --start rd >out.txt 2>&1 || fail "--start (run $r): $(cat out.txt)"
    "$b/tusk-run" --wait rd >summary.txt 2>&1 || fail "--wait (run $r): $(cat summary.txt)"
    grep -q "run $r ended cleanly" summary.txt || fail "run $r did not end cleanly: $(cat summary.txt)"
    sent_r=$(sed -n 's/^link=psa\[0\]->spectra\[0\] sent=\([0-9]*\) .*/\1/p' "rd/run-$r.report")
    [ -n "$sent_r" ] || fail "run $r's report has no psa[0]->spectra[0] link"
    total=$((total + sent_r))
done
# Every buffer sent in runs 2 and 3 was queued for the tap or dropped:
# the page's snapshot comes to exactly that (counts only grow).
tap_counts() {
    curl -sf "${url}metrics" >metrics.txt || return 1
    "$b/tests/check_metrics" --parse metrics.txt >samples.txt || fail "/metrics does not parse"
    taken=$(($(value tusk_link_tap_samples_total) - taken0))
    dropped=$(($(value tusk_link_tap_dropped_total) - dropped0))
    [ $((taken + dropped)) -eq "$total" ]
}
until_true 100 tap_counts || fail "tap: $taken queued + $dropped dropped, not the $total sent in runs 2 and 3"
echo "$me: runs 2 and 3: $total buffers sent, $taken queued for the tap, $dropped dropped"
# Every sample queued reaches the monitor (its lines are flushed one by one).
got_all() { [ "$(grep -c '^sample: run [23] ' consumer.txt)" -eq "$taken" ]; }
until_true 600 got_all || fail "tusk-tap took $(grep -c '^sample: ' consumer.txt) samples, not the $taken queued"
"$b/tusk-run" --untap 'psa[0]->spectra[0]' rd >out.txt 2>&1 || fail "--untap: $(cat out.txt)"
until_true 300 gone "$cons_pid" || fail "tusk-tap did not end when the tap closed"
st=0
wait "$cons_pid" || st=$?
cons_pid=
[ "$st" -eq 0 ] || fail "tusk-tap with a consumer exited $st: $(cat consumer_err.txt)"
grep -q "^tusk-tap: the tap at .* closed" consumer.txt || fail "tusk-tap did not say the tap closed"
# What the consumer got, run by run (its line at each process_stop), is
# what tusk-tap took: buffers, frames and bytes, exactly.
sums() { # RUN: "SAMPLES FRAMES BYTES" of the sample lines of run RUN
    sed -n "s/^sample: run $1 buffer [0-9]*, \([0-9]*\) bytes, \([0-9]*\) frames$/\1 \2/p" consumer.txt |
        awk '{ n++; b += $1; f += $2 } END { printf "%d %d %d", n, f, b }'
}
set -- $(sums 2) $(sums 3)
[ "$1" -ge 1 ] && [ "$4" -ge 1 ] || fail "a run without samples: run 2 $1, run 3 $4"
[ $(($1 + $4)) -eq "$taken" ] || fail "the sample lines ($1 + $4) are not the $taken queued"
grep '^null_consumer tap\[0\]: ' consumer_err.txt >consumed.txt || true
printf 'null_consumer tap[0]: %s buffers, %s frames, %s bytes\n' "$1" "$2" "$3" "$4" "$5" "$6" >expected.txt
cmp -s expected.txt consumed.txt || fail "the consumer's runs: $(cat consumed.txt), not $(cat expected.txt)"
grep -q "^tusk-tap: $taken samples, $(($3 + $6)) bytes, $(($2 + $5)) frames, .* 0 malformed$" consumer.txt ||
    fail "tusk-tap's summary: $(tail -n 3 consumer.txt)"
grep -q "^tusk-tap: consumer tap\[0\] (null_consumer): $taken buffers, $(($2 + $5)) frames, $(($3 + $6)) bytes, 2 runs$" \
    consumer.txt || fail "tusk-tap's consumer line: $(tail -n 2 consumer.txt)"
[ -z "$(ls tt)" ] || fail "the consumer's configuration folder is left: $(ls -R tt)"

step "Ctrl-C ends a tap's consumer cleanly too"
"$b/tusk-run" --tap 'psa[0]->spectra[0]' rd >tap.txt 2>tap_err.txt || fail "--tap: $(cat tap_err.txt)"
address=$(sed -n 's/^tap on psa\[0\]->spectra\[0\]: //p' tap.txt)
# Files of its own: "connected" in an earlier monitor's would be no news.
TMPDIR=$tmp/tt "$b/tusk-tap" --run-dir rd --consumer null_consumer --set expect_frames=0 "$address" \
    >sigint.txt 2>sigint_err.txt &
cons_pid=$!
until_true 300 grep -q "^tusk-tap: connected" sigint.txt || fail "tusk-tap did not connect: $(cat sigint_err.txt)"
kill -INT "$cons_pid"
st=0
wait "$cons_pid" || st=$?
cons_pid=
[ "$st" -eq 0 ] || fail "tusk-tap with a consumer exited $st at SIGINT: $(cat sigint_err.txt)"
grep -q '^null_consumer tap\[0\]: 0 buffers, 0 frames, 0 bytes$' sigint_err.txt ||
    fail "the consumer was not stopped: $(cat sigint_err.txt)"
[ -z "$(ls tt)" ] || fail "the consumer's configuration folder is left: $(ls -R tt)"
"$b/tusk-run" --untap 'psa[0]->spectra[0]' rd >out.txt 2>&1 || fail "--untap: $(cat out.txt)"

step "quit"
"$b/tusk-run" --quit rd >out.txt 2>&1 || fail "--quit: $(cat out.txt)"
st=0
wait "$pid" || st=$?
pid=
[ "$st" -eq 0 ] || fail "the controller exited $st"
echo "$me: ok"
