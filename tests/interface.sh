#!/bin/sh
# interface.sh - what the installed libraries and headers offer, checked on
# what was built (include/tusk/export.h says the rules).
#
#  1. The installed headers are exactly include/tusk/*.h and the generated
#     tusk/version.h (make install-tuskincludeHEADERS and
#     install-nodist_tuskincludeHEADERS into a temporary DESTDIR): a header
#     in include/tusk/ is public and installed; an internal one lives next
#     to its library's sources.
#  2. Each installed header compiles alone, against the installed ones
#     only, with the project's warnings and -Werror, as C11 (and as C++
#     when a C++ compiler is there: the extern "C" guards).
#  3. No installed header says TUSK_INTERNAL; no header outside
#     include/tusk/ says TUSK_API; every TUSK_API function is defined by
#     an installed library.
#  4. Every symbol a library exports (nm -D --defined-only) carries the
#     library's prefix (the table below) and is declared TUSK_API in an
#     installed header or TUSK_INTERNAL in an internal one: nothing is
#     exported by accident (-fvisibility=hidden, configure's
#     VISIBILITY_CFLAGS).
#  5. Each actor module exports the NARVAL hooks and its descriptor only.
#
# Environment (set by Makefile.am's AM_TESTS_ENVIRONMENT): top_builddir,
# abs_top_srcdir. The compiler and flags are read from the build's Makefile.
set -eu

top_builddir=${abs_top_builddir:-${top_builddir:-.}}
top_srcdir=${abs_top_srcdir:-${top_srcdir:-..}}
name=interface
failures=0

fail() {
    echo "$name: FAIL: $*" >&2
    failures=$((failures + 1))
}

command -v nm >/dev/null 2>&1 || { echo "$name: SKIP: no nm (binutils)"; exit 77; }
[ -f "$top_builddir/Makefile" ] || { echo "$name: FAIL: no Makefile in $top_builddir" >&2; exit 1; }

# Library (folder/libname) and the prefixes of the symbols it exports
# (tusk_NAME_kernel_source: the embedded kernels, tools/embed-text.sh).
prefixes='
base/libtusk-base: tusk_
adf/libtusk-adf: adf_
runtime/libtusk: tusk_
opencl/libtusk-cl: tusk_cl_
detector/libtusk-detector: det_
germanium/libtusk-germanium: gexs_ compton_ klein_nishina_
array/libtusk-array: array_
sim/libtusk-sim: sim_ transport_
psa/libtusk-psa: psa_ tusk_psa_
builder/libtusk-builder: evbuild_
tracking/libtusk-tracking: track_ tusk_track_
spectra/libtusk-spectra: spec_
zfinder/libtusk-zfinder: zf_ tusk_zfinder_
sts/libtusk-sts: sts_ tusk_sts_
ut/libtusk-ut: ut_ tusk_ut_
tpc/libtusk-tpc: tpc_ tusk_tpc_
actorkit/libtusk-actorkit: ak_
'

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tusk-interface.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

# A variable of the build's Makefile (CC, WARN_CFLAGS, ...).
mk_var() {
    sed -n "s/^$1 = //p" "$top_builddir/Makefile" | head -n 1
}
# Make, without the outer make's jobserver, in the build folder.
sub_make() {
    env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL ${MAKE:-make} -s --no-print-directory -C "$top_builddir" "$@"
}

# ---- 1. the installed headers --------------------------------------------------
dest=$tmp/dest
sub_make DESTDIR="$dest" install-tuskincludeHEADERS install-nodist_tuskincludeHEADERS >"$tmp/install.log" 2>&1 ||
    { cat "$tmp/install.log" >&2; echo "$name: FAIL: make install of the headers failed" >&2; exit 1; }
incdir=$(find "$dest" -type d -name tusk -path '*/include/tusk' | head -n 1)
[ -n "$incdir" ] || { echo "$name: FAIL: no include/tusk under $dest" >&2; exit 1; }
(cd "$incdir" && ls) | sort >"$tmp/installed"
{ (cd "$top_srcdir/include/tusk" && ls -- *.h); echo version.h; } | sort -u >"$tmp/public"
if ! cmp -s "$tmp/installed" "$tmp/public"; then
    diff "$tmp/public" "$tmp/installed" >&2 || true
    fail "installed headers (>) differ from include/tusk/*.h and version.h (<): a public header is not installed, or an installed one is not in include/tusk/"
fi

# ---- 2. each installed header alone ----------------------------------------------
cc=$(mk_var CC)
warn=$(mk_var WARN_CFLAGS)
ocl=$(mk_var OPENCL_CFLAGS)
cxx=$(mk_var CXX)
[ -n "$cxx" ] || cxx=$(command -v c++ || command -v g++ || true)
headers=0
for h in $(cat "$tmp/installed"); do
    printf '#include <tusk/%s>\n#include <tusk/%s>\nint tusk_interface_check(void);\nint tusk_interface_check(void) { return 0; }\n' \
        "$h" "$h" >"$tmp/alone.c"
    # shellcheck disable=SC2086
    if ! $cc -std=c11 $warn -Werror $ocl -I"$(dirname "$incdir")" -c "$tmp/alone.c" -o "$tmp/alone.o" \
            >"$tmp/cc.log" 2>&1; then
        cat "$tmp/cc.log" >&2
        fail "tusk/$h does not compile alone (C11, $warn -Werror, the installed headers only)"
    fi
    if [ -n "$cxx" ]; then
        # shellcheck disable=SC2086
        if ! $cxx -x c++ -Wall -Wextra -Werror $ocl -I"$(dirname "$incdir")" -c "$tmp/alone.c" -o "$tmp/alone.o" \
                >"$tmp/cc.log" 2>&1; then
            cat "$tmp/cc.log" >&2
            fail "tusk/$h does not compile alone as C++ ($cxx)"
        fi
    fi
    headers=$((headers + 1))
done

# ---- 3. the marks in the headers ---------------------------------------------------
# The name a marked declaration declares: the identifier before its '(' (a
# function) or before its '[' / ';' (an object).
declared() { # files...
    sed -n -E 's/^(extern[[:space:]]+)?TUSK_(API|INTERNAL)[[:space:]]+//p' "$@" |
        sed -E 's/\(.*//; s/[[;].*//; s/.*[^A-Za-z0-9_]([A-Za-z_][A-Za-z0-9_]*)[[:space:]]*$/\1/' | sort -u
}
# Every header of the sources but tests' and fuzz targets'.
internal_headers=$(cd "$top_srcdir" && find . -maxdepth 3 -name '*.h' -not -path './include/*' -not -path './tests/*' \
    -not -path './fuzz/*' -not -path './build*' -not -path './.*' -not -path './_build/*' | sed 's|^\./||' | sort)
for h in $(cat "$tmp/installed"); do
    if grep -nE '^(extern[[:space:]]+)?TUSK_INTERNAL[[:space:]]' "$incdir/$h" >&2; then
        fail "installed tusk/$h uses TUSK_INTERNAL (above): internal declarations belong in a header that is not installed"
    fi
done
for h in $internal_headers; do
    if grep -nE '^(extern[[:space:]]+)?TUSK_API[[:space:]]' "$top_srcdir/$h" >&2; then
        fail "$h (not installed) declares TUSK_API (above): public declarations belong in include/tusk/"
    fi
done
(cd "$incdir" && declared $(cat "$tmp/installed")) >"$tmp/api"
(cd "$top_srcdir" && declared $internal_headers) >"$tmp/internal"
[ -s "$tmp/api" ] || fail "no TUSK_API declaration found in the installed headers"

# ---- 4. what each library exports ----------------------------------------------------
la_value() { # file, variable
    sed -n "s/^$2='\\(.*\\)'\$/\\1/p" "$1"
}
: >"$tmp/exported"
libs=0
while IFS=: read -r lib allowed; do
    [ -n "$lib" ] || continue
    la=$top_builddir/$lib.la
    [ -f "$la" ] || { fail "$la not built"; continue; }
    so=$(dirname "$la")/.libs/$(la_value "$la" dlname)
    [ -f "$so" ] || { fail "$so (from $la) not found"; continue; }
    nm -D --defined-only "$so" | awk '$2 ~ /^[TDRBVWiu]$/ {print $3}' | sort -u >"$tmp/syms"
    cat "$tmp/syms" >>"$tmp/exported"
    n=0
    while read -r sym; do
        case $sym in _init | _fini | _edata | _end | __bss_start) continue ;; esac
        n=$((n + 1))
        ok=no
        for p in $allowed; do
            case $sym in "$p"*) ok=yes ;; esac
        done
        [ $ok = yes ] || fail "$lib exports $sym, without its prefix (${allowed# })"
        if grep -qx "$sym" "$tmp/api" || grep -qx "$sym" "$tmp/internal"; then
            :
        else
            fail "$lib exports $sym, declared neither TUSK_API in an installed header nor TUSK_INTERNAL in an internal one"
        fi
    done <"$tmp/syms"
    [ "$n" -gt 0 ] || fail "$lib exports nothing"
    libs=$((libs + 1))
done <<EOF
$prefixes
EOF
# Every installed library has a row.
printf 'tusk-interface-libs:\n\t@echo $(lib_LTLIBRARIES)\n' >"$tmp/libs.mk"
for la in $(sub_make -f Makefile -f "$tmp/libs.mk" tusk-interface-libs 2>/dev/null | tr ' ' '\n' | grep '\.la$'); do
    lib=${la%.la}
    printf '%s\n' "$prefixes" | grep -q "^$lib:" || fail "$la is installed but has no row in $name.sh's table of prefixes"
done
sort -u -o "$tmp/exported" "$tmp/exported"
while read -r sym; do
    grep -qx "$sym" "$tmp/exported" || fail "TUSK_API $sym is declared in an installed header but no library defines it"
done <"$tmp/api"

# ---- 5. actor modules ----------------------------------------------------------------------
actors=0
for la in "$top_builddir"/actors/*.la; do
    [ -f "$la" ] || continue
    dlname=$(la_value "$la" dlname)
    [ -n "$dlname" ] || continue # a convenience library (actorkit)
    so=$(dirname "$la")/.libs/$dlname
    for sym in $(nm -D --defined-only "$so" | awk '$2 ~ /^[TDRBVWiu]$/ {print $3}'); do
        case $sym in
        process_* | tusk_actor_descriptor | _init | _fini | _edata | _end | __bss_start) ;;
        *) fail "actor $(basename "$so") exports $sym (only the hooks and tusk_actor_descriptor)" ;;
        esac
    done
    nm -D --defined-only "$so" | grep -q ' process_config$' || fail "actor $(basename "$so") does not export process_config"
    actors=$((actors + 1))
done
[ "$actors" -gt 0 ] || fail "no actor module found in $top_builddir/actors"

if [ "$failures" -ne 0 ]; then
    echo "$name: $failures failure(s)" >&2
    exit 1
fi
echo "$name: $headers installed headers compile alone; $libs libraries export $(wc -l <"$tmp/exported") symbols, each declared" \
    "($(wc -l <"$tmp/api") TUSK_API, $(wc -l <"$tmp/internal") TUSK_INTERNAL declarations); $actors actors export their hooks only"
