#!/bin/sh
# tusk_emulate_cli.sh - tusk-emulate from the command line, as a user runs
# it: every example topology in config/ runs (and its output is checked),
# the summary names every actor, and each failure a user can make gives the
# promised exit status and message (missing topology, malformed topology
# with file:line, missing library, failing actor, bad options).
set -eu
b=${abs_top_builddir:?run through make check}
s=${abs_top_srcdir:?run through make check}
emulate=$b/tusk-emulate
adf=$b/tusk-adf
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tusk-emulate-cli.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"

step() { echo "tusk_emulate_cli: $*"; }
fail() { echo "tusk_emulate_cli: FAIL: $*" >&2; exit 1; }
# expect STATUS NEEDLE CMD...: run CMD, check its exit status and that its
# stderr contains NEEDLE.
expect() {
    want=$1 needle=$2
    shift 2
    got=0
    "$@" >out.txt 2>err.txt || got=$?
    [ "$got" -eq "$want" ] || { cat err.txt >&2; fail "'$*' exited $got, expected $want"; }
    grep -qF -- "$needle" err.txt || { cat err.txt >&2; fail "'$*': stderr lacks '$needle'"; }
}

"$adf" gen -n 500 --seed 11 -o input.adf 2>/dev/null
"$adf" gen -n 200 --seed 12 --type psa -o left.adf 2>/dev/null
"$adf" gen -n 300 --seed 13 --type crystal -o right.adf 2>/dev/null

step "config/passthrough.xml: producer -> 2 x passthrough -> writer, output = input"
"$emulate" "$s/config/passthrough.xml" >summary.txt || fail "passthrough.xml failed"
cmp input.adf output.adf || fail "output.adf differs from input.adf"
for actor in reader copy writer; do
    grep -q "^$actor " summary.txt || fail "summary lacks $actor"
done
grep -q "^copy .* 2 " summary.txt || fail "summary does not show 2 instances of copy"

step "config/fanin.xml: two producers -> merge -> writer, every frame arrives"
"$emulate" -q "$s/config/fanin.xml" || fail "fanin.xml failed"
l=$(wc -c <left.adf) r=$(wc -c <right.adf) m=$(wc -c <merged.adf)
[ "$m" -eq $((l + r)) ] || fail "merged.adf has $m bytes, expected $l + $r"
"$adf" check merged.adf >/dev/null || fail "merged.adf is not valid ADF"

step "config/fault.xml: the fault actor's error stops the chain, exit 1, with its message"
expect 1 "actor broken[0]: process_block failed on buffer 3 with status 1 (failure): fault injected" \
    "$emulate" "$s/config/fault.xml"

step "--describe lists each actor's parameters"
"$emulate" --describe "$s/config/fault.xml" >describe.txt || fail "--describe failed"
grep -q "action" describe.txt || fail "--describe does not document fault's 'action'"

step "--buffers limits the producer"
"$emulate" -q -n 2 "$s/config/passthrough.xml" || fail "-n 2 failed"
[ "$(wc -c <output.adf)" -le 131072 ] || fail "-n 2 wrote more than two 64 KiB buffers"

step "--only copy --input replays one stage"
"$emulate" -q --only copy --input input.adf --output replayed.adf "$s/config/passthrough.xml" ||
    fail "--only replay failed"
cmp input.adf replayed.adf || fail "replayed.adf differs from input.adf"

step "--dump-between writes the link's buffers"
mkdir dumps
"$emulate" -q --dump-between reader:copy --dump-dir dumps "$s/config/passthrough.xml" || fail "dump failed"
cmp input.adf dumps/reader-copy.adf || fail "dumps/reader-copy.adf differs from input.adf"

step "missing topology file: exit 2, names the file"
expect 2 "nothing.xml" "$emulate" nothing.xml

step "malformed topology: exit 2, file:line"
cat >bad.xml <<'XML'
<configuration>
  <producer>
    <name>reader</name>
    <binary_code>file_producer</binary_code>
  </producer>
  <consumer>
    <name>writer</name>
    <binary_code>file_writer</binary_code>
    <data_source>raeder</data_source>
  </consumer>
</configuration>
XML
expect 2 "bad.xml:" "$emulate" bad.xml
grep -q "raeder" err.txt || { cat err.txt >&2; fail "the message does not name the unknown source"; }

step "missing actor library: exit 2, names it and where it looked"
sed 's/file_writer/file_writre/; s/raeder/reader/' bad.xml >nolib.xml
expect 2 "file_writre" "$emulate" nolib.xml

step "bad options: exit 2"
expect 2 "--only needs --input" "$emulate" --only copy "$s/config/passthrough.xml"
expect 2 "is not a count" "$emulate" -n lots "$s/config/passthrough.xml"
expect 2 "usage" "$emulate"

step "a failing producer: missing input file, exit 1 or 2 with the path"
rm -f input.adf
got=0
"$emulate" "$s/config/passthrough.xml" >out.txt 2>err.txt || got=$?
[ "$got" -ne 0 ] || fail "a missing input file went unnoticed"
grep -q "input.adf" err.txt || { cat err.txt >&2; fail "the message does not name input.adf"; }
echo "tusk_emulate_cli: PASS"
