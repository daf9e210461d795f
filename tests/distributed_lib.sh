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
