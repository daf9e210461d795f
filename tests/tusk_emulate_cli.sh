#!/bin/sh
# tusk_emulate_cli.sh - tusk-emulate from the command line, as a user runs
# it: every example topology in config/ runs (and its output is checked),
# the summary names every actor, and each failure a user can make gives the
# promised exit status and message (missing topology, malformed topology
# with file:line, missing library, failing actor, bad options). A damaged
# input delivers exactly the frames before the damage, then fails with the
# accounting. Every run uses a private TMPDIR: no tusk-emulate.* folder is
# left there, after a configuration error, a failure or a SIGTERM.
set -eu
b=${abs_top_builddir:?run through make check}
s=${abs_top_srcdir:?run through make check}
emulate=$b/tusk-emulate
adf=$b/tusk-adf
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tusk-emulate-cli.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
# The emulator's temporary folders go here, and must never stay.
mkdir private
TMPDIR=$tmp/private
export TMPDIR

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
# no_leftovers WHAT: the private TMPDIR is empty.
no_leftovers() {
    left=$(ls -A private)
    [ -z "$left" ] || fail "$1 left behind in TMPDIR: $left"
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

no_leftovers "a failing actor"

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
expect 2 "--buffers wants a whole number" "$emulate" -n lots "$s/config/passthrough.xml"
expect 2 "usage" "$emulate"
expect 2 "tusk-emulate: unknown option '--frobnicate' (tusk-emulate --help lists the options)" "$emulate" --frobnicate \
    "$s/config/passthrough.xml"
"$emulate" --version >out.txt 2>err.txt || fail "tusk-emulate --version failed"
grep -Eq '^tusk-emulate \(tusk\) [0-9]+\.[0-9]+' out.txt || { cat out.txt >&2; fail "tusk-emulate --version: no version line"; }

step "a damaged input: the frames before the damage reach the output, then exit 1 with the accounting"
# A key corrupted in the middle (frame 1000), then a file cut inside its
# last key: each time output.adf is exactly the input before the damage.
cp input.adf good.adf
size=$(wc -c <good.adf)
# Top-level frames only: dump indents the frames inside composite ones.
off=$("$adf" dump good.adf | awk 'NR > 1 && substr($0, 14, 1) != " " && ++n == 1001 { print $1 }')
[ -n "$off" ] && [ "$off" -gt 65536 ] || fail "no frame 1000 in input.adf"
printf '\000' | dd of=input.adf bs=1 seek=$((off + 7)) conv=notrunc 2>/dev/null
expect 1 "input.adf: offset $off: malformed key" "$emulate" "$s/config/passthrough.xml"
grep -qF "delivered before it: 1000 frames ($off bytes), the $((size - off)) bytes from offset $off to the end of the file were not" err.txt ||
    { cat err.txt >&2; fail "the message does not account for the whole file"; }
head -c "$off" good.adf >before.adf
cmp before.adf output.adf || fail "output.adf is not exactly the $off bytes before the damage"
frames=$("$adf" stats good.adf | awk '/^frames:/ { print $2 }')
{ cat good.adf; head -c 12 good.adf; } >input.adf
expect 1 "input.adf: offset $size: incomplete key" "$emulate" "$s/config/passthrough.xml"
grep -qF "delivered before it: $frames frames ($size bytes), the 12 bytes from offset $size to the end of the file were not" err.txt ||
    { cat err.txt >&2; fail "the message does not account for the cut file"; }
cmp good.adf output.adf || fail "output.adf is not exactly the whole frames of the cut file"
no_leftovers "a damaged input"
cp good.adf input.adf

step "actor configuration errors: exit 2, no temporary folder left"
# The first actor, then the last one after the others were created.
sed 's/input.adf/missing.adf/' "$s/config/passthrough.xml" >noinput.xml
expect 2 "missing.adf: cannot open" "$emulate" noinput.xml
no_leftovers "a producer's configuration error"
sed 's/"file">output.adf/"colour">red/' "$s/config/passthrough.xml" >badparam.xml
expect 2 "unknown parameter 'colour'" "$emulate" badparam.xml
no_leftovers "a consumer's configuration error"
expect 2 "file_writre" "$emulate" nolib.xml
no_leftovers "a missing library"

step "SIGTERM: the run stops between buffers, cleans up and dies of the signal (143)"
# The producer reads a pipe: once the emulator has opened it (the shell's
# open returns), its handlers are in place; SIGTERM then, and EOF after.
mkfifo pipe.adf
sed 's/input.adf/pipe.adf/' "$s/config/passthrough.xml" >pipe.xml
"$emulate" -q pipe.xml >out.txt 2>err.txt &
pid=$!
exec 3>pipe.adf
cat good.adf >&3
kill -TERM "$pid"
exec 3>&-
got=0
wait "$pid" || got=$?
[ "$got" -eq 143 ] || { cat err.txt >&2; fail "tusk-emulate exited $got after SIGTERM, expected 143"; }
grep -qF "stopped by signal 15" err.txt || { cat err.txt >&2; fail "no word of the signal"; }
no_leftovers "SIGTERM"
n=$(wc -c <output.adf)
head -c "$n" good.adf | cmp - output.adf || fail "after SIGTERM output.adf is not a prefix of the input"
"$adf" check output.adf >/dev/null || fail "after SIGTERM output.adf is not whole frames"

step "a failing producer: missing input file, exit 1 or 2 with the path"
rm -f input.adf
got=0
"$emulate" "$s/config/passthrough.xml" >out.txt 2>err.txt || got=$?
[ "$got" -ne 0 ] || fail "a missing input file went unnoticed"
grep -q "input.adf" err.txt || { cat err.txt >&2; fail "the message does not name input.adf"; }
no_leftovers "the whole script"
echo "tusk_emulate_cli: PASS"
