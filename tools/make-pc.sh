#!/bin/sh
# make-pc.sh - the pkg-config files of tusk's installed libraries.
#
#   make-pc.sh OUTDIR VERSION PREFIX EXEC_PREFIX LIBDIR INCLUDEDIR ACTORDIR LIB.la...
#
# One file per library, OUTDIR/tusk-NAME.pc for libtusk-NAME.la and
# OUTDIR/tusk-runtime.pc for libtusk.la (the runtime: topologies, the actor
# host), whose Requires are the tusk libraries the library links (read
# from the libtool file's dependency_libs: the link line in Makefile.am is
# the one source) and whose Libs.private are the system libraries it
# links. And OUTDIR/tusk.pc, which requires them all: `pkg-config --libs
# tusk` links every installed library; `pkg-config --libs tusk-spectra`
# only libtusk-spectra and what it needs. Both carry the installed actor
# folder as the variable actordir. PREFIX and the folders are written as
# given (${prefix}-relative, as configure leaves them).
set -eu
[ $# -ge 8 ] || { echo "usage: make-pc.sh OUTDIR VERSION PREFIX EXEC_PREFIX LIBDIR INCLUDEDIR ACTORDIR LIB.la..." >&2; exit 2; }
out=$1 version=$2 prefix=$3 exec_prefix=$4 libdir=$5 includedir=$6 actordir=$7
shift 7
mkdir -p "$out"

# The pkg-config name of a libtool library file.
pc_name() {
    base=$(basename "$1" .la)
    case $base in
    libtusk) echo tusk-runtime ;;
    libtusk-*) echo "${base#lib}" ;;
    *) echo "make-pc.sh: $1 is not a tusk library" >&2; exit 1 ;;
    esac
}

# One line on what each library is. A library missing here is an error:
# say what a new one is for.
describe() {
    case $1 in
    tusk-base) echo "tusk's base: errors, actor parameters, text files, the clock, number parsing" ;;
    tusk-adf) echo "AGATA Data Flow (ADF) frames: reader, writer, typed codecs, files" ;;
    tusk-runtime) echo "tusk's runtime: topologies (NARVAL's XML) and the actor host" ;;
    tusk-cl) echo "tusk's OpenCL device layer: device selection, programs, binary cache, buffers" ;;
    tusk-detector) echo "a segmented HPGe crystal: fields, weighting potentials, signals, the signal basis" ;;
    tusk-germanium) echo "gamma-ray interactions in germanium: cross sections, Compton kinematics" ;;
    tusk-array) echo "the geometry of a gamma-ray detector array" ;;
    tusk-sim) echo "gamma-ray event simulation of a detector array" ;;
    tusk-psa) echo "pulse shape analysis by grid search (CPU and OpenCL)" ;;
    tusk-builder) echo "event building: merging timestamped streams into events" ;;
    tusk-tracking) echo "gamma-ray tracking (CPU and OpenCL)" ;;
    tusk-spectra) echo "energy spectra and peak analysis" ;;
    tusk-zfinder) echo "the ATLAS Level-2 z-finder (CPU and OpenCL)" ;;
    tusk-sts) echo "the CBM STS local reconstruction (CPU and OpenCL)" ;;
    tusk-ut) echo "the LHCb UT decoding and Compass tracking (CPU and OpenCL)" ;;
    tusk-tpc) echo "the ALICE TPC slice tracker (CPU and OpenCL)" ;;
    tusk-actorkit) echo "helpers for writing tusk actors: frame copying, parameter tables, actor skeletons" ;;
    *) echo "make-pc.sh: no description of $1: add one to tools/make-pc.sh" >&2; exit 1 ;;
    esac
}

header() {
    cat <<EOF
# Written by tools/make-pc.sh at build time; not to be edited.
prefix=$prefix
exec_prefix=$exec_prefix
libdir=$libdir
includedir=$includedir
actordir=$actordir

EOF
}

all=""
for la in "$@"; do
    name=$(pc_name "$la")
    desc=$(describe "$name")
    [ -f "$la" ] || { echo "make-pc.sh: $la is not built" >&2; exit 1; }
    deps=$(sed -n "s/^dependency_libs='\\(.*\\)'\$/\\1/p" "$la")
    requires="" private=""
    for d in $deps; do
        case $d in
        *.la) r=$(pc_name "$d")
            case " $requires " in *" $r "*) ;; *) requires="$requires $r" ;; esac ;;
        -l*) case " $private " in *" $d "*) ;; *) private="$private $d" ;; esac ;;
        esac
    done
    lib=$(basename "$la" .la)
    {
        header
        echo "Name: $name"
        echo "Description: $desc"
        echo "Version: $version"
        [ -z "$requires" ] || echo "Requires:$requires"
        echo "Libs: -L\${libdir} -l${lib#lib}"
        [ -z "$private" ] || echo "Libs.private:$private"
        echo "Cflags: -I\${includedir}"
    } >"$out/$name.pc.tmp"
    mv "$out/$name.pc.tmp" "$out/$name.pc"
    all="$all $name"
done

{
    header
    echo "Name: tusk"
    echo "Description: tusk, every library: the actor interface and runtime, ADF, OpenCL, the physics"
    echo "Version: $version"
    echo "Requires:$all"
    echo "Cflags: -I\${includedir}"
} >"$out/tusk.pc.tmp"
mv "$out/tusk.pc.tmp" "$out/tusk.pc"
