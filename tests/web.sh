#!/bin/sh
# web.sh - tusk-run --web against a running chain (sim -> psa -> spectra,
# the spectra drawn live every second):
#   - RUN_FOLDER/web says where the page is, with its token (0600);
#   - /api/status is JSON naming every instance and the run number;
#     /metrics is read back by the strict Prometheus text-format parser of
#     tests/check_metrics (--parse), every instance and link in it;
#   - the spectra consumer's live picture is served while the run goes;
#   - commands: refused without the token (403), from a page of another
#     Host (DNS rebinding: 421), as GET (405); taken with it, by the same
#     function as the command line: pause shows in `status`, resume, and
#     stop ends the run with every count reconciled (exit 0, no loss);
#   - headless Chromium (Debian's package) loads the page with its token:
#     the DOM has the instances, the run number and a live spectrum
#     picture, and a screenshot is taken (TUSK_WEB_SCREENSHOT=PATH keeps
#     it). Without Chromium the rest runs and the test says SKIP (77).
# No step waits for a time: each waits for a state, with a bound.
set -eu
b=${abs_top_builddir:?run through make check}
s=${abs_top_srcdir:?run through make check}
me=web
# shellcheck source=tests/distributed_lib.sh
. "$s/tests/distributed_lib.sh"
pid=
step "a coarse basis; the chain sim -> psa -> spectra (live pictures every second)"
web_chain_setup web pid
cat >chain.xml <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<configuration>
  <producer><name>sim</name><binary_code>gamma_sim</binary_code><size>262144</size>
    <parameter name="config">$s/config/sim-co60.conf</parameter>
    <parameter name="basis">$tmp/basis.tbs</parameter>
    <parameter name="events">1000000000</parameter></producer>
  <intermediary><name>psa</name><binary_code>psa</binary_code><data_source>sim</data_source><size>262144</size>
    <parameter name="basis">$tmp/basis.tbs</parameter><parameter name="backend">fast</parameter>
    <parameter name="threads">1</parameter></intermediary>
  <consumer><name>spectra</name><binary_code>spectra</binary_code><data_source>psa</data_source>
    <parameter name="out">$tmp/spectra</parameter><parameter name="format">svg</parameter>
    <parameter name="lines">1173.2 1332.5</parameter><parameter name="live">1</parameter></consumer>
</configuration>
EOF
mkdir -m 700 rd
"$b/tusk-run" --no-live --actor-bin "$b/tusk-actor" --web 0 --run 7 --run-dir "$tmp/rd" --report report.txt \
    chain.xml >out.txt 2>err.txt &
pid=$!
until_true 600 test -s rd/web || fail "no RUN_FOLDER/web"
[ "$(stat -c %a rd/web)" = 600 ] || fail "RUN_FOLDER/web is not 0600"
url=$(sed -n 1p rd/web)
page=$(sed -n 2p rd/web)
token=${page##*token=}
case "$url" in http://127.0.0.1:[0-9]*/) ;; *) fail "page address '$url'" ;; esac
grep -qF "status page $url" err.txt || fail "tusk-run did not say where the page is"
until_true 600 grep -q "run 7 started" err.txt || fail "the run did not start"

step "/api/status: JSON with every instance and the run number"
curl -sf "${url}api/status" >status.json || fail "GET /api/status"
python3 - status.json <<'EOF' || fail "/api/status"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["run"] == 7, s["run"]
labels = [i["label"] for i in s["instances"]]
assert labels == ["sim[0]", "psa[0]", "spectra[0]"], labels
assert [(l["from"], l["to"]) for l in s["links"]] == [(0, 1), (1, 2)], s["links"]
EOF

step "/metrics: strict Prometheus text format, every instance and link"
curl -sf "${url}metrics" >metrics.txt || fail "GET /metrics"
curl -sfI "${url}metrics" | grep -qi '^content-type: text/plain; version=0.0.4' || fail "/metrics content type"
"$b/tests/check_metrics" --parse metrics.txt >samples.txt 2>parse.txt || { cat parse.txt; fail "/metrics does not parse"; }
for inst in sim psa spectra; do
    for m in input_buffers_total output_bytes_total queue_buffers restarts_total dropped_messages_total; do
        grep -q "^tusk_instance_$m{actor=$inst,index=0,host=localhost} [0-9]" samples.txt ||
            fail "/metrics lacks tusk_instance_$m of $inst"
    done
done
for link in "from=sim\[0\],to=psa\[0\]" "from=psa\[0\],to=spectra\[0\]"; do
    for m in sent_buffers_total received_buffers_total finished_buffers_total gap_buffers_total; do
        grep -q "^tusk_link_$m{$link} [0-9]" samples.txt || fail "/metrics lacks tusk_link_$m{$link}"
    done
done
grep -q '^tusk_run_number{} 7$' samples.txt || fail "/metrics: run number"

step "the spectra consumer's live picture, during the run"
live() { curl -sf "${url}api/live/2" | grep -q '"spectra.svg"'; }
until_true 1200 live || fail "no live picture listed"
curl -sf "${url}live/2/spectra.svg" >live.svg || fail "GET the live picture"
grep -q "<svg" live.svg || fail "the live picture is no SVG"
code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
[ "$(code "${url}live/2/..%2Fkeys")" = 404 ] || fail "a path out of the live folder was served"
[ "$(code "${url}live/9/spectra.svg")" = 404 ] || fail "a picture of no instance was served"

step "commands: the token, the Host, POST"
[ "$(code -X POST "${url}api/command?verb=stop")" = 403 ] || fail "a command without the token was taken"
[ "$(code -X POST -H "X-Tusk-Token: x$token" "${url}api/command?verb=stop")" = 403 ] ||
    fail "a command with a wrong token was taken"
[ "$(code -X POST -H "Host: attacker.example:80" -H "X-Tusk-Token: $token" "${url}api/command?verb=stop")" = 421 ] ||
    fail "a command naming another Host was taken"
[ "$(code -H "Host: attacker.example:80" "${url}api/status")" = 421 ] || fail "a read naming another Host was served"
[ "$(code "${url}api/command?verb=stop&token=$token")" = 405 ] || fail "a command as GET was taken"
grep -q "refused\|stop requested" err.txt && fail "a refused command reached the controller"
cmd() { # the reply on stdout; fails unless 200
    rm -f cmd.txt
    cmd_st=0
    cmd_code=$(curl -sS -o cmd.txt -w '%{http_code}' -X POST -H "X-Tusk-Token: $token" \
        "${url}api/command?verb=$1" 2>curl.txt) || cmd_st=$?
    [ "$cmd_code" = 200 ] && { cat cmd.txt; return 0; }
    echo "HTTP $cmd_code, curl exit $cmd_st: $(cat curl.txt) $(cat cmd.txt 2>/dev/null)"
    return 1
}
cmd pause >reply.txt || fail "pause: $(cat reply.txt)"
paused() { cmd status >table.txt && grep -q '^sim\[0\] .* paused ' table.txt; }
until_true 300 paused || fail "pause did not show in the status table: $(cat table.txt)"
grep -q "by web 127.0.0.1" err.txt || fail "the controller's log does not say the web page asked"
cmd resume >reply.txt || fail "resume: $(cat reply.txt)"

browser=
for c in chromium chromium-browser; do command -v "$c" >/dev/null && browser=$c && break; done
if [ -n "$browser" ]; then
    step "headless $browser: the page's content and a screenshot"
    chrome() {
        timeout 120 "$browser" --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$tmp/chrome" \
            --virtual-time-budget=8000 --window-size=1280,1100 "$@" 2>>chrome.txt
    }
    dom_ok() {
        chrome --dump-dom "$page" >dom.html || return 1
        grep -q 'id="runno">7<' dom.html && grep -q '<img class="live"[^>]*src="/live/2/spectra.svg' dom.html
    }
    until_true 20 dom_ok || { cat chrome.txt >&2; fail "the page in $browser lacks the run number or the spectrum"; }
    for name in 'sim\[0\]' 'psa\[0\]' 'spectra\[0\]'; do
        grep -q "<td class=\"l\">$name</td>" dom.html || fail "the page lacks the instance $name"
        grep -q "data-label=\"$name\"" dom.html || fail "the topology graph lacks $name"
    done
    chrome --screenshot="$tmp/page.png" "$page" >/dev/null || fail "$browser --screenshot"
    [ "$(head -c 8 page.png | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "the screenshot is no PNG"
    [ -z "${TUSK_WEB_SCREENSHOT:-}" ] || cp page.png "$TUSK_WEB_SCREENSHOT"
fi

step "stop from the page: the run ends, every count reconciled"
cmd stop >reply.txt || fail "stop: $(cat reply.txt)"
st=0
wait "$pid" || st=$?
pid=
[ "$st" -eq 0 ] || fail "tusk-run exited $st after the page's stop"
grep -q "stop requested .*web 127.0.0.1" err.txt || fail "the stop is not said as the page's"
grep -q "^link=sim\[0\]->psa\[0\] .* lost=0 " report.txt || fail "sim -> psa not reconciled"
grep -q "^link=psa\[0\]->spectra\[0\] .* lost=0 " report.txt || fail "psa -> spectra not reconciled"
[ ! -e rd/web ] || fail "RUN_FOLDER/web stays after the run"

if [ -z "$browser" ]; then
    echo "$me: SKIP: no chromium: the page was not checked in a browser (the rest passed)"
    exit 77
fi
echo "$me: ok"
