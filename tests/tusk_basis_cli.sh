#!/bin/sh
# tusk_basis_cli.sh - tusk-basis end to end on the coarse crystal: gen
# writes a basis that info validates (and where the points' charge is
# collected, by ring), a damaged or version-1 file is refused, signal
# prints the traces of one point (one behind the front ring collected on
# ring 1), plot draws the pictures (gnuplot), and bad settings exit 1 or 2
# with a message.
#
# Environment (set by Makefile.am's AM_TESTS_ENVIRONMENT): top_builddir,
# top_srcdir.
set -eu

top_builddir=${top_builddir:-.}
name=tusk_basis_cli
tool=$top_builddir/tusk-basis
# shellcheck source=tests/cli_lib.sh
. "${abs_top_srcdir:-${top_srcdir:-..}}/tests/cli_lib.sh"
conf=${abs_top_srcdir:-${top_srcdir:-..}}/config/crystal-coarse.conf

step "gen: a coarse basis (field grid 3 mm, points every 8 mm), int16"
run "$tool" gen -c "$conf" --field-grid 3 --grid 8 --int16 -o "$tmp/coarse.tbs"
expect_status 0 "gen"
expect_in out "points" "gen"
expect_in out "time: potential" "gen"
expect_in out "collection: " "gen"
expect_in out "points collected on another segment than the one they lie in" "gen"
expect_in err "signals:" "gen progress"
[ -s "$tmp/coarse.tbs" ] || fail "gen wrote no file"

step "info validates it and shows its shape"
run "$tool" info "$tmp/coarse.tbs"
expect_status 0 "info"
expect_in out "valid basis" "info"
expect_in out "channels      37 (36 segments + core)" "info"
expect_in out "samples       60 of 10.0 ns" "info"
expect_in out "int16" "info"
expect_in out "basis_grid = 8" "info (configuration)"
expect_in out "ring  points  elsewhere" "info (collection)"
# Ring 1 collects its own; 4-6 too; the charge of rings 2-3 partly goes forward.
awk '$1 == 1 && NF == 5 { one = $3 } $1 == 6 && NF == 5 { six = $3 } $1 == 2 && NF == 5 { two = $3 }
     END { exit !(one == 0 && six == 0 && two > 0) }' "$tmp/out" || { show; fail "info: the collection table"; }

step "a truncated or damaged basis is refused"
size=$(wc -c <"$tmp/coarse.tbs" | tr -d ' ')
head -c $((size - 100)) "$tmp/coarse.tbs" >"$tmp/short.tbs"
run "$tool" info "$tmp/short.tbs"
expect_status 1 "info on a truncated file"
expect_in err "short.tbs" "info on a truncated file"
cp "$tmp/coarse.tbs" "$tmp/bad.tbs"
printf 'XX' | dd of="$tmp/bad.tbs" bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
run "$tool" info "$tmp/bad.tbs"
expect_status 1 "info on a damaged file"
expect_in err "bad.tbs" "info on a damaged file"
run "$tool" info "$tmp/none.tbs"
expect_status 1 "info on a missing file"
cp "$tmp/coarse.tbs" "$tmp/v1.tbs"
printf '\001' | dd of="$tmp/v1.tbs" bs=1 seek=8 conv=notrunc 2>/dev/null
run "$tool" info "$tmp/v1.tbs"
expect_status 1 "info on a version-1 file"
expect_in err "format version 1, this tusk reads 2" "info on a version-1 file"
expect_in err "make the basis again (tusk-basis gen)" "info on a version-1 file"

step "signal: 37 traces of one point, hit segment and core reach 1"
run "$tool" signal -c "$conf" --field-grid 3 --at 20,10,45
expect_status 0 "signal"
expect_in out "segment A4" "signal"
expect_in out "holes: collected at A4" "signal"
expect_in out "electrons: collected at CC" "signal"
last=$(tail -n 1 "$tmp/out")
run "$tool" signal -c "$conf" --field-grid 3 --at 2,1,10.5
expect_status 0 "signal behind the front ring"
expect_in out "segment A2" "signal behind the front ring"
expect_in out "holes: collected at A1" "signal behind the front ring"
run "$tool" signal -c "$conf" --field-grid 3 --at 20,10,45
# Columns: t, then electrodes 0..36 (A1..A6, B1.., F6, CC): electrode e is
# column e + 2. A4 is 3, B4 is 9, CC is 36.
a4=$(echo "$last" | awk '{print $5}')
b4=$(echo "$last" | awk '{print $11}')
cc=$(echo "$last" | awk '{print $38}')
awk -v a="$a4" -v c="$cc" -v b="$b4" 'BEGIN { exit !(a > 0.99 && a < 1.01 && c > 0.99 && c < 1.01 && b > -0.01 && b < 0.01) }' ||
    fail "last sample: A4 $a4, CC $cc, B4 $b4 (expected 1, 1, 0)"

step "plot: the pictures"
run "$tool" plot -c "$conf" --field-grid 3 -d "$tmp/pictures"
expect_status 0 "plot"
for p in potential-rz weighting-core-xy weighting-segment-xy weighting-segment-rz paths-xy paths-rz traces; do
    [ -s "$tmp/pictures/$p.png" ] || fail "plot did not draw $p.png"
done

step "bad settings"
run "$tool" gen -c "$conf" --bias 100 --field-grid 4 --grid 20 -o "$tmp/x.tbs"
expect_status 1 "gen with 100 V"
expect_in err "deplet" "gen with 100 V"
printf 'radius = 40\nlength = 90\nring_thickness = 8,13\n' >"$tmp/bad.conf"
run "$tool" gen -c "$tmp/bad.conf" -o "$tmp/x.tbs"
expect_status 1 "gen with bad rings"
expect_in err "ring thicknesses add up to 21 mm, the length is 90 mm" "gen with bad rings"
printf 'radius = 40\nradiu = 3\n' >"$tmp/typo.conf"
run "$tool" gen -c "$tmp/typo.conf" -o "$tmp/x.tbs"
expect_status 1 "gen with a misspelt key"
expect_in err "unknown parameter 'radiu'" "gen with a misspelt key"
printf 'shape = agata-hex\n' >"$tmp/shape.conf"
run "$tool" gen -c "$tmp/shape.conf" -o "$tmp/x.tbs"
expect_status 1 "gen with an unknown shape"
expect_in err "'agata-hex' is not a known shape" "gen with an unknown shape"
run "$tool" gen -c "$conf"
expect_status 2 "gen without -o"
run "$tool" signal --at 1,2
expect_status 2 "signal --at 1,2"
run "$tool" frobnicate
expect_status 2 "unknown command"

step "--version, an unknown command and option (base/cli.h)"
cli_conventions "$tool" tusk-basis gen

echo "$name: all $steps steps passed"
