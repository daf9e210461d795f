#!/bin/sh
# soak.sh - run every randomised test program many times with fresh seeds.
#
#   tools/soak.sh [-n RUNS] [-j JOBS] [-t SECONDS] [-o DIR] PROG[=RUNS]...
#
# Each PROG (a Check test program, e.g. tests/check_psa) runs once; when
# it prints "random seed: TUSK_TEST_SEED=" (tests/testutil.c) it is
# randomised and runs RUNS times in all (-n, default 200; PROG=RUNS for
# that program alone), each time with a fresh seed from /dev/urandom
# given as TUSK_TEST_SEED, JOBS runs at a time (-j, default: the CPUs).
# A program that does not print a seed is deterministic and runs once; one
# that exits 77 is skipped (no OpenCL device, say). A run fails when it
# exits non-zero, runs past -t SECONDS (default 900), or does not echo the
# seed it was given. The log of every failed run is kept as
# DIR/PROG-SEED.log (-o, default soak-logs).
#
# Prints one line per program (runs, failures, mean seconds a run, the
# failing seeds: the first 20), then a total; exits 1 when any run failed, 2 on a usage error, 0 otherwise.
# Replay a failure with TUSK_TEST_SEED=SEED PROG. `make soak` runs it on
# the unit tests (SOAK_RUNS, SOAK_JOBS); it is not part of `make check`.
# Environment: what the tests need, as `make check` sets it (make soak
# does): abs_top_srcdir, TUSK_ACTOR_PATH, ...
set -eu

seed() { od -An -N8 -tu8 /dev/urandom | tr -d ' '; }

# Seconds since the epoch, with the fraction where date has %N (GNU).
now() { date +%s.%N | sed 's/\.N$//; s/\.$//'; }

# one PROG SEED: run PROG once with SEED; append "PROG SEED STATUS START END"
# to $work/results; keep the log of a failure in $logs.
one() {
    name=$(echo "$1" | tr '/' '_')
    log=$work/$name-$2.log
    start=$(now)
    status=0
    TUSK_TEST_SEED=$2 timeout "$limit" "$1" >"$log" 2>&1 </dev/null || status=$?
    end=$(now)
    if [ "$status" -eq 0 ] && ! grep -q "random seed: TUSK_TEST_SEED=$2\$" "$log"; then
        status=seedless
    fi
    [ "$status" = 0 ] || cp "$log" "$logs/$name-$2.log"
    rm -f "$log"
    echo "$1 $2 $status $start $end" >>"$work/results"
}
# The parallel runs: xargs calls this script again as `soak.sh --one PROG SEED`.
if [ "${1:-}" = --one ]; then
    one "$2" "$3"
    exit 0
fi

runs=200
jobs=$(nproc 2>/dev/null || echo 1)
limit=900
logs=soak-logs
usage() {
    echo "usage: soak.sh [-n RUNS] [-j JOBS] [-t SECONDS] [-o DIR] PROG[=RUNS]..." >&2
    exit 2
}
whole() { # NAME VALUE: a whole number >= 1
    case $2 in
    '' | *[!0-9]* | 0) echo "soak.sh: $1: expected a whole number from 1, got '$2'" >&2; exit 2 ;;
    esac
}
while getopts n:j:t:o:h opt; do
    case $opt in
    n) whole -n "$OPTARG"; runs=$OPTARG ;;
    j) whole -j "$OPTARG"; jobs=$OPTARG ;;
    t) whole -t "$OPTARG"; limit=$OPTARG ;;
    o) logs=$OPTARG ;;
    *) usage ;;
    esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || usage
mkdir -p "$logs"
work=$(mktemp -d "${TMPDIR:-/tmp}/tusk-soak.XXXXXX")
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

for arg in "$@"; do # every argument checked before anything runs
    prog=${arg%%=*}
    [ "$prog" = "$arg" ] || whole "$prog=" "${arg#*=}"
    [ -f "$prog" ] && [ -x "$prog" ] ||
        { echo "soak.sh: $prog: not an executable (build it first: make check TESTS=)" >&2; exit 2; }
done
: >"$work/results"
for arg in "$@"; do
    prog=${arg%%=*}
    n=$runs
    [ "$prog" = "$arg" ] || n=${arg#*=}
    # The first run tells whether the program is randomised (and, run on
    # its own, lets libtool's wrapper set itself up before the others).
    s=$(seed)
    status=0
    start=$(now)
    TUSK_TEST_SEED=$s timeout "$limit" "$prog" >"$work/first.log" 2>&1 </dev/null || status=$?
    end=$(now)
    if [ "$status" -eq 77 ]; then
        echo "$prog - - skipped" >>"$work/kinds"
        continue
    fi
    if ! grep -q "random seed: TUSK_TEST_SEED=" "$work/first.log"; then
        echo "$prog $status - deterministic" >>"$work/kinds"
        [ "$status" -eq 0 ] || cp "$work/first.log" "$logs/$(echo "$prog" | tr '/' '_').log"
        continue
    fi
    echo "$prog - - randomised" >>"$work/kinds"
    if [ "$status" -ne 0 ] || ! grep -q "random seed: TUSK_TEST_SEED=$s\$" "$work/first.log"; then
        cp "$work/first.log" "$logs/$(echo "$prog" | tr '/' '_')-$s.log"
        [ "$status" -ne 0 ] || status=seedless
    fi
    echo "$prog $s $status $start $end" >>"$work/results"
    echo "soak.sh: $prog: $n runs, $jobs at a time" >&2
    k=1
    while [ "$k" -lt "$n" ]; do
        echo "$prog $(seed)"
        k=$((k + 1))
    done >"$work/queue"
    export limit work logs
    [ ! -s "$work/queue" ] || xargs -P "$jobs" -n 2 sh "$0" --one <"$work/queue"
done

# The report: per program, runs, failures and the failing seeds.
echo "soak: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc 2>/dev/null || echo '?') CPUs, $runs runs per randomised program (unless PROG=RUNS), $jobs at a time"
printf '%-28s %6s %8s %7s  %s\n' program runs failures s/run "failing seeds (status)"
awk '
    FNR == NR { if (!($1 in kind)) order[++n] = $1; kind[$1] = $4; status[$1] = $2; next }
    {
        runs[$1]++; secs[$1] += $5 - $4
        if ($3 != "0" && ++fails[$1] <= 20) seeds[$1] = seeds[$1] " " $2 " (" $3 ")"
    }
    END {
        bad = 0
        for (i = 1; i <= n; i++) {
            p = order[i]
            if (kind[p] == "skipped") { printf "%-28s %6s %8s %7s  %s\n", p, "-", "-", "-", "skipped (exit 77)"; continue }
            if (kind[p] == "deterministic") {
                printf "%-28s %6d %8d %7s  %s\n", p, 1, status[p] != 0, "-", "deterministic (no seed printed)" (status[p] != 0 ? ": FAILED, status " status[p] : "")
                bad += status[p] != 0
                continue
            }
            more = fails[p] > 20 ? sprintf(" ... and %d more (logs in the log folder)", fails[p] - 20) : ""
            printf "%-28s %6d %8d %7.2f %s%s\n", p, runs[p], fails[p] + 0, secs[p] / runs[p], seeds[p], more
            total += runs[p]; failed += fails[p]
            bad += fails[p] > 0
        }
        printf "total: %d runs of randomised programs, %d failed\n", total, failed
        exit (bad > 0)
    }' "$work/kinds" "$work/results"
