# cli_lib.sh - helpers shared by the command-line test scripts, sourced
# after setting `name` (the script's name in messages) and `tool`:
#   step WHAT...            announce a numbered step
#   fail WHAT...            print "NAME: FAIL: WHAT" and exit 1
#   run CMD...              stdout into $tmp/out, stderr into $tmp/err, status into $rc
#   expect_status N WHAT    fail unless the last run exited N (shows its output)
#   expect_in out|err|both TEXT WHAT
#                           fail unless the last run's stream contains TEXT
#   cli_conventions TOOL NAME [CMD]
#                           base/cli.h's conventions, the same in every tool:
#                           --version prints "NAME (tusk) VERSION", exit 0;
#                           an unknown command (when the tool has commands,
#                           CMD one of them) and an unknown option (after CMD)
#                           exit 2 with one line naming them
# It makes $tmp (removed on exit) and checks that $tool was built.
# shellcheck shell=sh disable=SC2154 # name and tool come from the sourcing script

[ -x "$tool" ] || { echo "$name: FAIL: $tool not built" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/$name.XXXXXX") || { echo "$name: mktemp failed" >&2; exit 1; }
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

steps=0
step() {
    steps=$((steps + 1))
    echo "$name: [$steps] $*"
}

fail() {
    echo "$name: FAIL: $*" >&2
    exit 1
}

run() {
    rc=0
    "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
}

show() {
    echo "--- command stdout:" >&2
    head -n 60 "$tmp/out" >&2
    echo "--- command stderr:" >&2
    head -n 40 "$tmp/err" >&2
}

expect_status() { # expected status, what
    if [ "$rc" -ne "$1" ]; then
        show
        fail "$2: exit status $rc, expected $1"
    fi
}

expect_in() { # stream (out, err or both), text, what
    case $1 in
    both) cat "$tmp/out" "$tmp/err" >"$tmp/both" ;;
    esac
    if ! grep -F -e "$2" "$tmp/$1" >/dev/null; then
        show
        fail "$3: no '$2' in its $1"
    fi
}

cli_conventions() { # tool, its name, a command of it (none: a tool without commands)
    run "$1" --version
    expect_status 0 "$2 --version"
    grep -Eq "^$2 \(tusk\) [0-9]+\.[0-9]+" "$tmp/out" || { show; fail "$2 --version: no '$2 (tusk) VERSION' line"; }
    if [ -n "${3:-}" ]; then
        run "$1" frobnicate
        expect_status 2 "$2 frobnicate"
        expect_in err "$2: unknown command 'frobnicate' (commands: " "$2 frobnicate"
        run "$1" "$3" --frobnicate
        expect_status 2 "$2 $3 --frobnicate"
        expect_in err "$2 $3: unknown option '--frobnicate' ($2 --help lists the options)" "$2 $3 --frobnicate"
    else
        run "$1" --frobnicate
        expect_status 2 "$2 --frobnicate"
        expect_in err "$2: unknown option '--frobnicate' ($2 --help lists the options)" "$2 --frobnicate"
    fi
    [ "$(wc -l <"$tmp/err")" -eq 1 ] || { show; fail "$2: a usage error takes one line, not the whole usage"; }
}
