# distributed_lib.sh - helpers shared by the tests that run tusk-run
# (distributed.sh, distributed_security.sh), sourced after setting `me`
# (the script's name in messages) and `b` (the build folder); they work in
# the current folder:
#   step WHAT...             announce a step
#   fail WHAT...             print "ME: FAIL: WHAT" with err.txt/out.txt, exit 1
#   run ARGS...              tusk-run with the build's tusk-actor (a timeout
#                            only as a safety net)
#   expect STATUS NEEDLE ARGS...
#                            run tusk-run; fail unless it exits STATUS and
#                            its stderr contains NEEDLE
#   until_true N CMD...      CMD until it succeeds, at most N times 0.1 s
#                            apart (a safety bound: the tests wait for
#                            states, never for time)
#   gone PID                 the process no longer runs (a zombie counts as gone)
#   report KEY INSTANCE      a figure of rep.txt (a --report file): INSTANCE's
#                            line, or the run's totals for INSTANCE ""
#   web_chain_setup NAME VAR...
#                            for the tests of a chain with its status page
#                            (web.sh, tap.sh; `s` is the source folder):
#                            SKIP (77) without curl; TUSK_ACTOR_PATH; a
#                            temporary folder $tmp (tusk-NAME.XXXXXX),
#                            entered, and at exit the processes whose ids
#                            the variables VAR... hold ended and $tmp
#                            removed (kept with TUSK_KEEP set); a coarse
#                            signal basis basis.tbs there
# shellcheck shell=sh disable=SC2154 # me and b come from the sourcing script

step() { echo "$me: $*"; }
fail() {
    echo "$me: FAIL: $*" >&2
    for f in err.txt out.txt; do [ -f "$f" ] && sed 's/^/    | /' "$f" >&2; done
    exit 1
}
run() { timeout 120 "$b/tusk-run" --no-live --actor-bin "$b/tusk-actor" "$@"; }
expect() {
    want=$1 needle=$2
    shift 2
    got=0
    run "$@" >out.txt 2>err.txt || got=$?
    [ "$got" -eq "$want" ] || fail "tusk-run $* exited $got, expected $want"
    grep -qF -- "$needle" err.txt || fail "tusk-run $*: stderr lacks '$needle'"
}
until_true() {
    ut_n=$1
    shift
    ut_i=0
    until "$@"; do
        ut_i=$((ut_i + 1))
        [ $ut_i -lt "$ut_n" ] || return 1
        sleep 0.1
    done
}
gone() {
    st=$(ps -o stat= -p "$1" 2>/dev/null) || return 0
    case "$st" in Z*) return 0 ;; *) return 1 ;; esac
}
report() {
    if [ -z "$2" ]; then
        sed -n "s/^run=.* $1=\([0-9]*\).*/\1/p" rep.txt
    else
        grep "^instance=$2 " rep.txt | sed -n "s/.* $1=\([0-9]*\).*/\1/p"
    fi
}
web_chain_setup() {
    wc_name=$1
    shift
    wc_vars=$*
    TUSK_ACTOR_PATH=${TUSK_ACTOR_PATH:-$b/actors/.libs}
    export TUSK_ACTOR_PATH
    command -v curl >/dev/null || { echo "$me: SKIP: no curl"; exit 77; }
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/tusk-$wc_name.XXXXXX")
    trap web_chain_cleanup EXIT
    cd "$tmp"
    "$b/tusk-basis" gen -c "$s/config/crystal-coarse.conf" --field-grid 3 --grid 8 --int16 -q -o basis.tbs \
        >/dev/null || fail "tusk-basis gen"
}
web_chain_cleanup() {
    for wc_v in $wc_vars; do
        eval "wc_p=\${$wc_v:-}"
        [ -n "$wc_p" ] || continue
        kill "$wc_p" 2>/dev/null || true
        wait "$wc_p" 2>/dev/null || true
    done
    [ -n "${TUSK_KEEP:-}" ] || rm -rf "$tmp"
}
