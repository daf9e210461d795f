#!/bin/sh
# layers.sh - the layer rules of the libraries, checked on what was built.
#
#  1. The physics libraries and the layers under them link neither libtusk
#     (runtime/: topologies, actor loading, the wire) nor libxml2 nor libdl:
#     not in the NEEDED entries of their shared object (readelf -d), and not
#     in what libtool hands on to whatever links them (the .la file's
#     dependency_libs: the compiler may link with --as-needed, which drops
#     an unused NEEDED entry, so the .la is the stricter witness).
#  2. Each library depends on the tusk libraries of the table below and no
#     others (the .la's dependency_libs, which lists indirect ones too).
#  3. Tracking does not depend on the simulation: libtusk-tracking and the
#     tracking actor do not link libtusk-sim, and tracking/'s sources, its
#     headers and actors/tracking.c include no sim header.
#  4. The sources of each library (its folder, but the tools tusk_*.c) and
#     its public headers include only headers of its own layer and of the
#     layers the table lets it link: no lower layer includes a higher one
#     (ARCHITECTURE.md draws the picture). A public header belongs to the
#     library of the header_owner table; an internal one to its folder.
#
# Environment (set by Makefile.am's AM_TESTS_ENVIRONMENT): top_builddir,
# top_srcdir.
set -eu

top_builddir=${top_builddir:-.}
top_srcdir=${abs_top_srcdir:-${top_srcdir:-..}}
name=layers
failures=0

fail() {
    echo "$name: FAIL: $*" >&2
    failures=$((failures + 1))
}

command -v readelf >/dev/null 2>&1 || { echo "$name: SKIP: no readelf (binutils)"; exit 77; }

# library (folder/libname) and the tusk libraries it may depend on
# (directly or through another), lowest layers first.
rules='
base/libtusk-base:
adf/libtusk-adf: libtusk-base
germanium/libtusk-germanium:
detector/libtusk-detector: libtusk-base
array/libtusk-array: libtusk-detector libtusk-base
opencl/libtusk-cl: libtusk-base
sim/libtusk-sim: libtusk-array libtusk-germanium libtusk-detector libtusk-base libtusk-adf
psa/libtusk-psa: libtusk-cl libtusk-detector libtusk-base libtusk-adf
tracking/libtusk-tracking: libtusk-array libtusk-germanium libtusk-cl libtusk-detector libtusk-base libtusk-adf
spectra/libtusk-spectra: libtusk-base libtusk-adf
builder/libtusk-builder: libtusk-base libtusk-adf
zfinder/libtusk-zfinder: libtusk-cl libtusk-base libtusk-adf
sts/libtusk-sts: libtusk-cl libtusk-base libtusk-adf
ut/libtusk-ut: libtusk-cl libtusk-base libtusk-adf
tpc/libtusk-tpc: libtusk-cl libtusk-base libtusk-adf
runtime/libtusk: libtusk-base
actorkit/libtusk-actorkit: libtusk-base libtusk-adf
'
# Rule 1 is for the physics libraries and the layers under them: not libtusk.
above_physics='runtime/libtusk'

# The value of a libtool .la variable (dlname, dependency_libs).
la_value() { # file, variable
    sed -n "s/^$2='\\(.*\\)'\$/\\1/p" "$1"
}

# The NEEDED entries of a shared object, one per line.
needed() {
    readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\].*/\1/p'
}

checked=0
while IFS=: read -r lib allowed; do
    [ -n "$lib" ] || continue
    la=$top_builddir/$lib.la
    if [ ! -f "$la" ]; then
        fail "$la not built"
        continue
    fi
    dir=$(dirname "$la")
    so=$dir/.libs/$(la_value "$la" dlname)
    [ -f "$so" ] || { fail "$so (from $la) not found"; continue; }
    deps=$(la_value "$la" dependency_libs)
    # Rule 1.
    case " $above_physics " in *" $lib "*) needs= ;; *) needs=$(needed "$so") ;; esac
    case " $above_physics " in *" $lib "*) deps1= ;; *) deps1=$deps ;; esac
    for n in $needs; do
        case $n in
        libxml2.so* | libdl.so* | libtusk.so*) fail "$so needs $n (readelf -d)" ;;
        esac
    done
    for d in $deps1; do
        case $d in
        */libtusk.la | -lxml2 | -ldl | */libxml2.la | */libdl.la)
            fail "$la hands on $d (dependency_libs)" ;;
        esac
    done
    # Rule 2.
    for d in $deps; do
        case $d in
        *.la) dep=$(basename "$d" .la) ;;
        *) continue ;;
        esac
        case $dep in
        libtusk*) ;;
        *) continue ;;
        esac
        case " $allowed " in
        *" $dep "*) ;;
        *) fail "$lib depends on $dep, not one of its layers below (${allowed# }) (dependency_libs)" ;;
        esac
    done
    checked=$((checked + 1))
done <<EOF
$rules
EOF

# Rule 3.
actor_la=$top_builddir/actors/tracking.la
if [ -f "$actor_la" ]; then
    for d in $(la_value "$actor_la" dependency_libs); do
        case $d in
        */libtusk-sim.la) fail "$actor_la links $d" ;;
        esac
    done
    actor_so=$top_builddir/actors/.libs/$(la_value "$actor_la" dlname)
    for n in $(needed "$actor_so"); do
        case $n in
        libtusk-sim.so*) fail "$actor_so needs $n (readelf -d)" ;;
        esac
    done
else
    fail "$actor_la not built"
fi
for n in $(needed "$top_builddir/tracking/.libs/$(la_value "$top_builddir/tracking/libtusk-tracking.la" dlname)"); do
    case $n in
    libtusk-sim.so*) fail "libtusk-tracking needs $n (readelf -d)" ;;
    esac
done
if grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"](tusk/sim[a-z]*\.h|transport\.h)' \
        "$top_srcdir"/tracking/*.c "$top_srcdir"/tracking/*.h "$top_srcdir"/tracking/kernels/*.cl \
        "$top_srcdir"/include/tusk/track.h "$top_srcdir"/include/tusk/track_cl.h \
        "$top_srcdir"/actors/tracking.c >&2; then
    fail "tracking includes a header of the simulation (above)"
fi

# Rule 4. The library a public header belongs to (include/tusk/NAME.h).
header_owner() { # tusk/NAME.h
    case $1 in
    tusk/adf*.h) echo adf ;;
    tusk/error.h | tusk/params.h | tusk/export.h | tusk/version.h) echo base ;;
    tusk/actor.h | tusk/actor_host.h | tusk/topology.h) echo runtime ;;
    tusk/cl.h) echo opencl ;;
    tusk/crystal.h | tusk/field.h | tusk/weighting.h | tusk/drift.h | tusk/signal.h | tusk/basis.h) echo detector ;;
    tusk/gexs.h | tusk/compton.h) echo germanium ;;
    tusk/array.h) echo array ;;
    tusk/sim.h) echo sim ;;
    tusk/psa.h | tusk/psa_cl.h) echo psa ;;
    tusk/evbuild.h) echo builder ;;
    tusk/track.h | tusk/track_cl.h) echo tracking ;;
    tusk/spectrum.h) echo spectra ;;
    tusk/zfinder.h) echo zfinder ;;
    tusk/sts.h) echo sts ;;
    tusk/ut.h) echo ut ;;
    tusk/tpc.h) echo tpc ;;
    tusk/actorkit.h) echo actorkit ;;
    *) echo '?' ;;
    esac
}
# The folders of the libraries (the table's), and those above every library.
lib_folders=$(printf '%s\n' "$rules" | sed -n 's|^\([a-z]*\)/.*|\1|p' | tr '\n' ' ')
top_folders='actors emulator distributed bench tests fuzz tools'
# The tusk headers a file includes, one per line.
includes() { # file
    sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]\([^>"]*\)[>"].*/\1/p' "$1"
}
# The folders a library's sources may include: its own and those of the
# libraries it may link.
allowed_folders() { # folder
    row=$(printf '%s\n' "$rules" | grep "^$1/")
    printf '%s' "$1"
    for l in ${row#*:}; do
        printf ' %s' "$(printf '%s\n' "$rules" | sed -n "s|^\([a-z]*\)/$l:.*|\1|p")"
    done
}
check_file() { # file, its library's folder, the folders it may include
    for h in $(includes "$1"); do
        case $h in
        tusk/*) owner=$(header_owner "$h") ;;
        */*) owner=${h%%/*} ;;
        *) continue ;;
        esac
        if [ "$owner" = '?' ]; then
            fail "${1#"$top_srcdir"/} includes $h, which is not in layers.sh's header_owner table"
            continue
        fi
        case " $lib_folders $top_folders " in *" $owner "*) ;; *) continue ;; esac # a system header
        case " $3 " in
        *" $owner "*) ;;
        *) fail "${1#"$top_srcdir"/} ($2) includes $h, of $owner: not a layer below it ($3)" ;;
        esac
    done
    files=$((files + 1))
}
files=0
for f in $lib_folders; do
    allowed=$(allowed_folders "$f")
    for src in "$top_srcdir/$f"/*.c "$top_srcdir/$f"/*.h "$top_srcdir/$f"/kernels/*.cl; do
        [ -f "$src" ] || continue
        case $src in
        */tusk_*.c) continue ;;                            # a tool: above every library
        "$top_srcdir"/runtime/driver.*) continue ;;        # the hosts' actor driver, above libtusk
        esac
        check_file "$src" "$f" "$allowed"
    done
done
for h in "$top_srcdir"/include/tusk/*.h; do
    f=$(header_owner "tusk/${h##*/}")
    if [ "$f" = '?' ]; then
        fail "include/tusk/${h##*/} is not in layers.sh's header_owner table"
        continue
    fi
    check_file "$h" "$f" "$(allowed_folders "$f")"
done

if [ "$failures" -ne 0 ]; then
    echo "$name: $failures failure(s)" >&2
    exit 1
fi
echo "$name: $checked libraries keep their layers; $files source files and public headers include no higher layer;" \
    "tracking does not depend on the simulation"
