#!/bin/sh
# tusk_adf_cli.sh - end-to-end tests of the tusk-adf tool (gen, check, stats,
# dump) and of its exit statuses: 0 fine, 1 bad data, 2 usage or I/O trouble.
#
# Environment (set by Makefile.am's AM_TESTS_ENVIRONMENT): top_builddir.
# Prints what each step checks; stops with a message and status 1 at the
# first failure.
# shellcheck disable=SC2015 # "[ a ] && [ b ] || fail": fail when either test does
set -eu

top_builddir=${top_builddir:-.}
name=tusk_adf_cli
tool=$top_builddir/tusk-adf
tusk=$tool
# shellcheck source=tests/cli_lib.sh
. "${abs_top_srcdir:-${top_srcdir:-..}}/tests/cli_lib.sh"

file_size() { wc -c <"$1" | tr -d ' '; }

# ---- gen -------------------------------------------------------------------------
a=$tmp/a.adf
step "gen writes a file and says how many frames and bytes"
run "$tusk" gen -n 5 --samples 16 --seed 42 -o "$a"
expect_status 0 "gen"
[ -s "$a" ] || fail "gen did not write $a"
gen_frames=$(sed -n 's/.* \([0-9][0-9]*\) frames + meta:eof, \([0-9][0-9]*\) bytes.*/\1/p' "$tmp/err")
gen_bytes=$(sed -n 's/.* \([0-9][0-9]*\) frames + meta:eof, \([0-9][0-9]*\) bytes.*/\2/p' "$tmp/err")
[ -n "$gen_frames" ] && [ -n "$gen_bytes" ] || { show; fail "gen did not report its frames and bytes"; }
size=$(file_size "$a")
[ "$size" -eq "$gen_bytes" ] || fail "gen reported $gen_bytes bytes, the file has $size"
[ "$gen_frames" -gt 0 ] || fail "gen wrote no frames"
echo "  $gen_frames frames + meta:eof, $size bytes"

# ---- check -----------------------------------------------------------------------
step "check on the generated file exits 0 and prints OK with the frame counts"
run "$tusk" check "$a"
expect_status 0 "check"
expect_in out "OK" "check"
total=$(sed -n 's/.*OK: \([0-9][0-9]*\) frames (\([0-9][0-9]*\) top-level), \([0-9][0-9]*\) bytes.*/\1/p' "$tmp/out")
top=$(sed -n 's/.*OK: \([0-9][0-9]*\) frames (\([0-9][0-9]*\) top-level), \([0-9][0-9]*\) bytes.*/\2/p' "$tmp/out")
bytes=$(sed -n 's/.*OK: \([0-9][0-9]*\) frames (\([0-9][0-9]*\) top-level), \([0-9][0-9]*\) bytes.*/\3/p' "$tmp/out")
[ -n "$total" ] && [ -n "$top" ] && [ -n "$bytes" ] || { show; fail "check: no 'N frames (K top-level), B bytes'"; }
[ "$top" -eq $((gen_frames + 1)) ] || fail "check counted $top top-level frames, gen wrote $gen_frames + meta:eof"
[ "$bytes" -eq "$size" ] || fail "check counted $bytes bytes, the file has $size"
[ "$total" -gt "$top" ] || fail "check counted no nested frames ($total in all, $top top-level) in a mixed file"
echo "  $total frames, $top top-level"

step "check reads standard input too (check -)"
rc=0
"$tusk" check - <"$a" >"$tmp/out" 2>"$tmp/err" || rc=$?
expect_status 0 "check -"
expect_in out "OK: $total frames" "check -"

# ---- stats -----------------------------------------------------------------------
step "stats lists every type; the counts add up to what gen and check reported"
run "$tusk" stats "$a"
expect_status 0 "stats"
# "type  frames  in-composite  bytes" rows
type_row() { # type -> "frames nested bytes", or nothing
    awk -v t="$1" '$1 == t && NF == 4 { print $2, $3, $4 }' "$tmp/out"
}
for t in data:crystal data:psa event:data:psa data:tracked meta:eof; do
    [ -n "$(type_row "$t")" ] || { show; fail "stats: no row for $t"; }
done
# shellcheck disable=SC2046 # split into the three numbers on purpose
set -- $(type_row meta:eof)
[ "$1" -eq 1 ] || { show; fail "stats: meta:eof shows $1 frames, expected 1"; }
# shellcheck disable=SC2046
set -- $(type_row data:crystal)
[ "$1" -gt 0 ] || { show; fail "stats: data:crystal shows $1 frames, expected some"; }
sums=$(awk 'NF == 4 && $2 ~ /^[0-9]+$/ && $3 ~ /^[0-9]+$/ && $4 ~ /^[0-9]+$/ { f += $2; n += $3; b += $4 }
            END { print f + 0, n + 0, b + 0 }' "$tmp/out")
# shellcheck disable=SC2086
set -- $sums
[ "$1" -eq "$top" ] || { show; fail "stats: top-level frames add up to $1, check counted $top"; }
[ $(($1 + $2)) -eq "$total" ] || { show; fail "stats: frames + nested add up to $(($1 + $2)), check counted $total"; }
[ "$1" -eq $((gen_frames + 1)) ] || { show; fail "stats: $1 top-level frames, gen wrote $gen_frames + meta:eof"; }
expect_in out "frames:     $top ($size bytes)" "stats"

# ---- dump ------------------------------------------------------------------------
step "dump prints a header line and one line per frame, nested ones included"
run "$tusk" dump "$a"
expect_status 0 "dump"
lines=$(wc -l <"$tmp/out" | tr -d ' ')
[ "$lines" -eq $((total + 1)) ] || { show; fail "dump printed $lines lines, expected 1 + $total"; }
head -n 1 "$tmp/out" | grep -q 'offset.*type.*length.*event.*timestamp' || { show; fail "dump: no header line"; }
first_len=$(awk 'NR == 2 { print $3 }' "$tmp/out")
first_type=$(awk 'NR == 2 { print $2 }' "$tmp/out")
[ "$first_type" = data:crystal ] || { show; fail "dump: first frame is $first_type, expected data:crystal"; }
# ADF_KEY_SIZE + adf_crystal_payload_size(16) = 20 + 160 + 38 * 16 * 2
[ "$first_len" -eq 1396 ] || { show; fail "dump: first frame is $first_len bytes, expected 1396 for 16 samples"; }

step "dump -n 1 stops after the first frame"
run "$tusk" dump -n 1 "$a"
expect_status 0 "dump -n 1"
[ "$(wc -l <"$tmp/out" | tr -d ' ')" -eq 2 ] || { show; fail "dump -n 1 printed more than header + 1 frame"; }

step "dump -v decodes payloads: hits, gammas, crystals, the meta:eof counts"
run "$tusk" dump -v "$a"
expect_status 0 "dump -v"
expect_in out "hit 0:" "dump -v"
expect_in out "gamma 0:" "dump -v"
expect_in out "samples 16" "dump -v"
expect_in out "run 1, $gen_frames frames before" "dump -v"

# ---- gen is deterministic ------------------------------------------------------------
step "gen with the same --seed writes the same bytes; another seed does not"
run "$tusk" gen -n 5 --samples 16 --seed 42 -o "$tmp/same.adf"
expect_status 0 "gen (same seed)"
cmp -s "$a" "$tmp/same.adf" || fail "gen --seed 42 twice gave different files"
run "$tusk" gen -n 5 --samples 16 --seed 43 -o "$tmp/other.adf"
expect_status 0 "gen (other seed)"
if cmp -s "$a" "$tmp/other.adf"; then fail "gen --seed 42 and --seed 43 gave identical files"; fi

step "gen --type writes only that type (plus meta:eof)"
for t in crystal:data:crystal psa:data:psa event-psa:event:data:psa tracked:data:tracked truth:data:truth; do
    opt=${t%%:*}
    name=${t#*:}
    run "$tusk" gen -n 2 --samples 8 --type "$opt" -o "$tmp/t.adf"
    expect_status 0 "gen --type $opt"
    run "$tusk" stats "$tmp/t.adf"
    expect_status 0 "stats of gen --type $opt"
    rows=$(awk 'NF == 4 && $2 ~ /^[0-9]+$/ && $3 ~ /^[0-9]+$/ && $2 > 0 { print $1 }' "$tmp/out" | sort | tr '\n' ' ')
    want=$(printf '%s\n' "$name" meta:eof | sort | tr '\n' ' ')
    [ "$rows" = "$want" ] || { show; fail "gen --type $opt: top-level types '$rows', expected '$want'"; }
done

step "dump -v prints data:truth frames: the decay, its gammas and points"
run "$tusk" gen -n 4 --type truth --seed 5 -o "$tmp/truth.adf"
expect_status 0 "gen --type truth"
run "$tusk" check "$tmp/truth.adf"
expect_status 0 "check of gen --type truth"
run "$tusk" dump -v "$tmp/truth.adf"
expect_status 0 "dump -v (truth)"
expect_in out "decay 0, " "dump -v (truth)"
expect_in out "decay 3, " "dump -v (truth)"
expect_in out "gamma 0: " "dump -v (truth)"
grep -E 'point [0-9]+: crystal [0-9]+ seg -?[0-9]+ gamma [0-9]+ (compton|photo) [0-9.]+ keV' "$tmp/out" >/dev/null ||
    { show; fail "dump -v (truth): no point line with crystal, segment, process and energy"; }

# ---- corrupted data --------------------------------------------------------------------
b=$tmp/corrupt.adf
cp "$a" "$b"
# The second frame starts at the first one's length; byte 7 of its key is the
# class byte (0xFA or 0xCA); 0x00 makes the key malformed.
pos=$((first_len + 7))
printf '\000' | dd of="$b" bs=1 seek="$pos" conv=notrunc 2>/dev/null
cmp -s "$a" "$b" && fail "could not corrupt byte $pos of $b"
[ "$(file_size "$b")" -eq "$size" ] || fail "corrupting $b changed its size"

step "check on a file with a corrupted key exits 1 and names the offset"
run "$tusk" check "$b"
expect_status 1 "check (corrupted key)"
expect_in both "offset $first_len" "check (corrupted key)"
expect_in out "stopped at the first" "check (corrupted key)"
stop_frames=$(sed -n 's/.*; \([0-9][0-9]*\) frames read.*/\1/p' "$tmp/out")
[ -n "$stop_frames" ] || { show; fail "check: no 'N frames read'"; }

step "check --resync reports the errors, goes on, counts the skipped bytes, exits 1"
run "$tusk" check --resync "$b"
expect_status 1 "check --resync (corrupted key)"
expect_in out "bytes skipped" "check --resync"
expect_in err "offset $first_len" "check --resync"
resync_frames=$(sed -n 's/.*; \([0-9][0-9]*\) frames read, \([0-9][0-9]*\) bytes skipped.*/\1/p' "$tmp/out")
skipped=$(sed -n 's/.*; \([0-9][0-9]*\) frames read, \([0-9][0-9]*\) bytes skipped.*/\2/p' "$tmp/out")
[ -n "$resync_frames" ] && [ -n "$skipped" ] || { show; fail "check --resync: no 'N frames read, S bytes skipped'"; }
[ "$resync_frames" -gt "$stop_frames" ] ||
    { show; fail "check --resync read $resync_frames frames, no more than without it ($stop_frames)"; }
[ "$skipped" -gt 0 ] || { show; fail "check --resync skipped no bytes"; }
# It skipped the broken frame, so meta:eof's count no longer matches either.
expect_in err "meta:eof says" "check --resync"
echo "  $resync_frames frames read, $skipped bytes skipped"

step "check on a truncated file exits 1 and says truncated"
head -c $((size - 10)) "$a" >"$tmp/short.adf"
run "$tusk" check "$tmp/short.adf"
expect_status 1 "check (truncated)"
expect_in err "truncated" "check (truncated)"

step "stats on a truncated file still prints what it read, exits 1"
run "$tusk" stats "$tmp/short.adf"
expect_status 1 "stats (truncated)"
expect_in out "frames:     $((top - 1)) (" "stats (truncated)"

# ---- usage and I/O errors ---------------------------------------------------------------
missing=$tmp/no/such/file.adf
for cmd in check stats dump; do
    step "$cmd on a missing file exits 2 and names it"
    run "$tusk" "$cmd" "$missing"
    expect_status 2 "$cmd (missing file)"
    expect_in err "$missing" "$cmd (missing file)"
done

step "an unknown command exits 2"
run "$tusk" frobnicate "$a"
expect_status 2 "unknown command"
expect_in err "unknown command" "unknown command"

step "gen --type bogus exits 2 and writes nothing"
run "$tusk" gen --type bogus -o "$tmp/bogus.adf"
expect_status 2 "gen --type bogus"
expect_in err "bogus" "gen --type bogus"
[ ! -e "$tmp/bogus.adf" ] || fail "gen --type bogus wrote $tmp/bogus.adf"

step "no arguments: usage, exit 2; --help: usage, exit 0"
run "$tusk"
expect_status 2 "no arguments"
expect_in err "usage:" "no arguments"
run "$tusk" --help
expect_status 0 "--help"
expect_in out "usage:" "--help"

step "--version, an unknown command and option (base/cli.h)"
cli_conventions "$tool" tusk-adf dump

echo "tusk_adf_cli: all $steps steps passed"
