#!/usr/bin/env bash
# tusk.sh - set up, build and run tusk on a Debian machine.
#
#   ./tusk.sh demo [--distributed] [CONFIGURE-OPTIONS...]
#                       build, then run the main job: config/agata-demo.xml,
#                       the AGATA chain (simulation -> PSA x2 -> event
#                       builder -> tracking -> spectra) in the emulator, or
#                       with --distributed as processes over ZeroMQ
#   ./tusk.sh check [CONFIGURE-OPTIONS...]   build, then run the test suite
#   ./tusk.sh tour  [CONFIGURE-OPTIONS...]   build, then show the plumbing:
#                       tusk-adf, load sharing, tusk-run, a failing actor
#   ./tusk.sh distcheck                      build the release tarball and test it
#
# Missing Debian packages are installed with apt-get (as root, or through
# sudo). The build lives in ./build (TUSK_BUILD_DIR overrides); configure
# options given here (e.g. --enable-werror, --enable-sanitizers) are kept
# until different ones are given.
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=${TUSK_BUILD_DIR:-$top/build}
jobs=$(nproc 2>/dev/null || echo 2)

say() { printf '\n== %s\n' "$*"; }
die() { printf 'tusk.sh: %s\n' "$*" >&2; exit 1; }

# Build and test dependencies (Debian 12 names). libclang-rt-dev brings
# libFuzzer for clang; valgrind runs `make memcheck`; iproute2 (`ip`, not
# in minimal images) builds the network namespaces of the multi-host test;
# gdb and gdbserver run tests/distributed_debug.sh's `--debug NAME=gdbserver`.
# slurm-wlm and munge: tests/slurm.sh starts a private cluster of its own
# (its own munged, key, socket and slurm.conf). The packages' services
# start nothing in the way: slurmd and slurmctld need /etc/slurm/slurm.conf
# (none is installed: their units' ConditionPathExists, their init scripts
# exit 0), a system munged (where systemd runs, or no policy-rc.d stops
# it) has its own key and socket. systemd: tests/systemd_real.sh runs a
# private user manager and journald in a mount namespace of its own (as
# root with CAP_SYS_ADMIN; it says why it skips otherwise).
packages=(build-essential autoconf automake libtool pkg-config
          libzmq3-dev libxml2-dev check libmicrohttpd-dev
          ocl-icd-opencl-dev opencl-c-headers pocl-opencl-icd clinfo
          valgrind clang libclang-rt-dev iproute2 gnuplot-nox gdb gdbserver
          slurm-wlm munge systemd)

install_missing() {
    local missing=() p
    command -v dpkg-query >/dev/null || die "not a Debian system (no dpkg-query); install the equivalents of: ${packages[*]}"
    for p in "${packages[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    say "installing missing packages: ${missing[*]}"
    local sudo=()
    if [ "$(id -u)" -ne 0 ]; then
        command -v sudo >/dev/null || die "need root (or sudo) to install: ${missing[*]}"
        sudo=(sudo)
    fi
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
}

configure_and_build() {
    local args="$*"
    cd "$top"
    if [ ! -x configure ] || [ configure.ac -nt configure ] || [ Makefile.am -nt Makefile.in ]; then
        say "autoreconf"
        autoreconf -fi
    fi
    mkdir -p "$build"
    cd "$build"
    # Re-run configure when it never ran or the options changed.
    if [ ! -f Makefile ] || [ "$(cat .tusk-configure-args 2>/dev/null)" != "$args" ]; then
        say "configure $args"
        # shellcheck disable=SC2086
        "$top/configure" $args
        printf '%s' "$args" > .tusk-configure-args
    fi
    say "make"
    make -j"$jobs"
}

# Check's own summary lines ("100%: Checks: N, Failures: 0, Errors: 0").
check_summary() {
    say "Check summary"
    local log
    for log in tests/check_*.log; do
        [ -f "$log" ] || continue
        printf '%-28s %s\n' "$(basename "$log" .log)" "$(grep -E '^[0-9]+%: Checks:' "$log" | tail -n 1)"
    done
}

run_check() {
    local status=0
    say "make check"
    make -j"$jobs" check || status=$?
    if [ $status -ne 0 ]; then
        [ -f test-suite.log ] && cat test-suite.log
        check_summary
        die "tests failed"
    fi
    if grep -q -- '--enable-sanitizers' .tusk-configure-args 2>/dev/null; then
        say "memcheck skipped: valgrind does not run sanitizer builds"
    else
        say "make memcheck (unit tests under valgrind)"
        make memcheck
    fi
    check_summary
}

# The main job: the AGATA chain of config/agata-demo.xml, run in
# $build/demo (its config/ is the source tree's, so the topology's relative
# paths hold), with the coarse demo basis made once and kept in config/.
run_demo() {
    local distributed=$1 out="$build/demo" basis="$top/config/crystal-coarse.tbs"
    export TUSK_ACTOR_PATH="$build/actors/.libs"
    # Made again when missing or refused (an older format version: issue 22).
    if [ ! -f "$basis" ] || ! "$build/tusk-basis" info "$basis" >/dev/null 2>&1; then
        say "tusk-basis gen: the coarse demo basis (made once, kept as config/crystal-coarse.tbs)"
        "$build/tusk-basis" gen -c "$top/config/crystal-coarse.conf" --int16 -o "$basis.tmp"
        mv "$basis.tmp" "$basis"
    else
        say "demo basis: $basis (delete it to make it again)"
    fi
    mkdir -p "$out"
    cd "$out"
    ln -sfn "$top/config" config
    rm -rf spectra
    if [ "$distributed" = yes ]; then
        say "tusk-run config/agata-demo.xml: sim -> psa x2 -> builder -> tracker -> spectra, one process each"
        "$build/tusk-run" --no-live config/agata-demo.xml
    else
        say "tusk-emulate config/agata-demo.xml: sim -> psa x2 -> builder -> tracker -> spectra, in one process"
        "$build/tusk-emulate" config/agata-demo.xml
    fi
    say "demo done"
    echo "spectra (CSV), peak table (summary.csv) and pictures in $out/spectra:"
    ls "$out/spectra"
    local pic
    for pic in "$out"/spectra/*.png "$out"/spectra/*.svg; do
        [ -f "$pic" ] && echo "picture: $pic"
    done
    return 0
}

# The plumbing, on synthetic data: tusk-adf, load sharing, tusk-run and a
# failing actor.
run_tour() {
    local out="$build/tour" adf="$build/tusk-adf" emulate="$build/tusk-emulate"
    # The actors of this build, not installed ones.
    export TUSK_ACTOR_PATH="$build/actors/.libs"
    mkdir -p "$out"
    cd "$out"
    say "tusk-adf gen: 2000 synthetic events (crystal traces, PSA hits, tracked gammas)"
    "$adf" gen -n 2000 --seed 42 -o input.adf
    say "tusk-adf stats input.adf"
    "$adf" stats input.adf
    say "tusk-emulate config/passthrough.xml: file_producer -> passthrough x2 -> file_writer"
    "$emulate" --verbose "$top/config/passthrough.xml"
    say "tusk-adf check output.adf (and compare with the input)"
    "$adf" check output.adf
    cmp input.adf output.adf && echo "output.adf is identical to input.adf"
    say "tusk-run config/distributed.xml: the chain as separate processes, 3 instances of the filter"
    rm -f output.adf
    "$build/tusk-run" --no-live "$top/config/distributed.xml"
    "$adf" diff --unordered input.adf output.adf
    say "tusk-emulate config/fault.xml: an actor that fails on purpose"
    "$emulate" -q "$top/config/fault.xml" || echo "(exit status $?: the failure above is the expected one)"
    say "tusk-adf dump -v output.adf (first 4 frames)"
    "$adf" dump -v -n 4 output.adf
    say "tour done: files in $out"
}

cmd=${1:-}
[ $# -gt 0 ] && shift
case "$cmd" in
demo)
    distributed=no
    if [ "${1:-}" = --distributed ]; then
        distributed=yes
        shift
    fi
    install_missing
    configure_and_build "$@"
    run_demo "$distributed"
    ;;
tour)
    install_missing
    configure_and_build "$@"
    run_tour
    ;;
check)
    install_missing
    configure_and_build "$@"
    run_check
    ;;
distcheck)
    install_missing
    configure_and_build
    say "make distcheck"
    make -j"$jobs" distcheck
    ;;
*)
    sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'
    [ -z "$cmd" ] && exit 2
    die "unknown command '$cmd'"
    ;;
esac
