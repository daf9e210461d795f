#!/bin/sh
# tusk_cl_cli.sh - end-to-end tests of the tusk-cl tool: list, which and
# selftest on the test device (PoCL's CPU in CI; TUSK_CL_TEST_DEVICE picks
# another), the program cache across runs, and exit statuses: 0 fine,
# 1 failure (no such device, self-test mismatch), 2 usage.
#
# Environment (set by Makefile.am's AM_TESTS_ENVIRONMENT): top_builddir.
set -eu

top_builddir=${top_builddir:-.}
name=tusk_cl_cli
tool=$top_builddir/tusk-cl
device=${TUSK_CL_TEST_DEVICE:-cpu}
# shellcheck source=tests/cli_lib.sh
. "${abs_top_srcdir:-${top_srcdir:-..}}/tests/cli_lib.sh"
# Never the user's own cache, never an inherited selection.
TUSK_CL_CACHE_DIR=$tmp/cache
export TUSK_CL_CACHE_DIR
unset TUSK_CL_DEVICE TUSK_CL_CACHE || true

step "list shows the devices with their properties"
run "$tool" list
expect_status 0 "tusk-cl list"
for field in "platform" "driver version" "OpenCL C version" "compute units" "global memory" \
             "max allocation" "max work-group size" "int64 atomics" "extensions" "default selection"; do
    expect_in out "$field" "tusk-cl list"
done

step "which resolves a selection, and names the devices when none matches"
run "$tool" which "$device"
expect_status 0 "tusk-cl which $device"
run "$tool" which no-such-device-anywhere
expect_status 1 "tusk-cl which no-such-device-anywhere"
expect_in err "no OpenCL device matches 'no-such-device-anywhere'; available: [0]" "which"
run "$tool" which "gpu:x"
expect_status 2 "tusk-cl which gpu:x (a malformed selection is a usage error)"
expect_in err "after ':' expected a number or 'instance'" "which gpu:x"

step "selftest on $device matches the CPU, and stores the program binary"
run "$tool" selftest --device "$device" --signals 5000 --repeat 2
expect_status 0 "tusk-cl selftest --device $device"
expect_in out "PASS" "selftest"
expect_in out "2 of 2 runs passed" "selftest"
expect_in out "1 stores" "selftest (cache)"
ls "$tmp/cache"/cl-*.bin >/dev/null 2>&1 || fail "no binary in the cache folder $tmp/cache"

step "a second selftest builds from the cache"
run "$tool" selftest --device "$device" --signals 1000 --seed 42
expect_status 0 "second selftest"
expect_in out "1 hits, 0 misses" "second selftest (cache)"
expect_in out "seed 42" "second selftest"
run "$tool" selftest --device "$device" --signals 1000 --no-cache
expect_status 0 "selftest --no-cache"
expect_in out "program cache: off" "selftest --no-cache"

step "the environment selects the device when --device is not given"
TUSK_CL_DEVICE=no-such-device-anywhere run "$tool" selftest --signals 10
expect_status 1 "selftest with TUSK_CL_DEVICE=no-such-device-anywhere"
expect_in err "no OpenCL device matches 'no-such-device-anywhere'" "selftest env"

step "usage errors exit 2"
for args in "" "frobnicate" "selftest --signals abc" "selftest --signals" "selftest --seed 12x" \
            "selftest --repeat 0" "selftest --bogus" "which"; do
    # shellcheck disable=SC2086 # split the argument list on purpose
    run "$tool" $args
    expect_status 2 "tusk-cl $args"
done
run "$tool" --help
expect_status 0 "tusk-cl --help"
expect_in out "TUSK_CL_DEVICE" "help"
expect_in out ":instance" "help"

step "--version, an unknown command and option (base/cli.h)"
cli_conventions "$tool" tusk-cl selftest

echo "tusk_cl_cli: all $steps steps passed"
