#!/bin/sh
# emulate_memcheck.sh - tusk-emulate runs the example chain of
# config/passthrough.xml under valgrind (memcheck, full leak check) with no
# error, and the chain's output equals its input; the error path (the
# fault actor failing in config/fault.xml) is valgrind-clean too.
# Skipped, visibly, when valgrind is missing.
set -eu
if [ -z "${VALGRIND:-}" ]; then
    echo "emulate_memcheck: SKIP: valgrind not found (Debian: apt-get install valgrind)"
    exit 77
fi
if [ "${SANITIZERS:-no}" = yes ]; then
    echo "emulate_memcheck: SKIP: a sanitizer build (ASan/UBSan check it instead; valgrind cannot run it)"
    exit 77
fi
b=${abs_top_builddir:?}
s=${abs_top_srcdir:?}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tusk-memcheck.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
fail() { echo "emulate_memcheck: FAIL: $*" >&2; exit 1; }

"$b/tusk-adf" gen -n 300 --seed 3 -o input.adf 2>/dev/null
# Libraries stay loaded so valgrind can name their functions.
TUSK_NO_DLCLOSE=1
export TUSK_NO_DLCLOSE
vg() {
    "$b/libtool" --mode=execute "$VALGRIND" -q --leak-check=full --show-leak-kinds=definite,indirect \
        --errors-for-leak-kinds=definite,indirect --error-exitcode=99 "$@"
}

echo "emulate_memcheck: valgrind tusk-emulate config/passthrough.xml"
vg "$b/tusk-emulate" "$s/config/passthrough.xml" || fail "valgrind or the chain failed (status $?)"
cmp input.adf output.adf || fail "output.adf differs from input.adf"

echo "emulate_memcheck: valgrind tusk-emulate config/fault.xml (the actor fails on purpose)"
status=0
vg "$b/tusk-emulate" -q "$s/config/fault.xml" 2>fault.err || status=$?
[ "$status" -eq 1 ] || { cat fault.err >&2; fail "expected exit status 1 from the failing chain, got $status"; }
grep -q "fault injected" fault.err || { cat fault.err >&2; fail "the actor's message is missing"; }
echo "emulate_memcheck: PASS"
