#!/bin/sh
# help2man.sh - the section 1 manual page of a tusk command, from the
# command itself: its --help text (the one description of its options,
# base/cli.h) and its --version, set in roff. Nothing else to keep in step.
#
#   help2man.sh PROGRAM NAME > NAME.1
#
# PROGRAM is the built program (a libtool wrapper in a build tree is
# fine); NAME the command's name. The one-line summary of each command is
# below (a command missing there is an error: say what a new one is for).
set -eu
[ $# -eq 2 ] || { echo "usage: help2man.sh PROGRAM NAME" >&2; exit 2; }
prog=$1 name=$2

case $name in
tusk-adf) summary="inspect, check, compare and generate ADF (AGATA Data Flow) files" ;;
tusk-emulate) summary="run a topology of actors serially in one process (gdb, valgrind, replay)" ;;
tusk-run) summary="run a topology of actors distributed, one process per instance" ;;
tusk-reprocess) summary="reprocess ADF files over a Slurm job array, reports and spectra merged" ;;
tusk-actor) summary="host one actor instance of a distributed run (started by tusk-run)" ;;
tusk-tap) summary="take samples of a link of a running chain from its sampling tap" ;;
tusk-cl) summary="list, pick and self-test OpenCL devices" ;;
tusk-basis) summary="make, inspect and plot the signal basis of a segmented HPGe crystal" ;;
tusk-sim) summary="simulate gamma-ray events in a detector array" ;;
tusk-bench) summary="benchmark the reconstruction backends" ;;
tusk-psa) summary="pulse shape analysis of ADF files, and its validation" ;;
tusk-track) summary="gamma-ray tracking of ADF files" ;;
tusk-spectra) summary="energy spectra and peak analysis of ADF files" ;;
tusk-zfinder) summary="the ATLAS Level-2 z-finder: simulation, quality, plots" ;;
tusk-sts) summary="the CBM STS local reconstruction: simulation, quality, plots" ;;
tusk-ut) summary="the LHCb UT tracking: simulation, quality, plots" ;;
tusk-tpc) summary="the ALICE TPC slice tracker: simulation, quality, comparison, plots" ;;
*) echo "help2man.sh: no summary of $name: add one to tools/help2man.sh" >&2; exit 1 ;;
esac

help=$("$prog" --help) || { echo "help2man.sh: $prog --help failed" >&2; exit 1; }
version=$("$prog" --version | sed -n '1s/.*(tusk) \([^ ]*\).*/\1/p')
[ -n "$version" ] || { echo "help2man.sh: $prog --version says no version" >&2; exit 1; }

# Text for roff: backslashes doubled, a leading dot or quote made literal.
roff() {
    sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"
}

upper=$(printf '%s' "$name" | tr 'a-z-' 'A-Z-')
printf '.\\" Made by tools/help2man.sh from %s --help; not to be edited.\n' "$name"
printf '.TH %s 1 "" "tusk %s" "tusk manual"\n' "$upper" "$version"
printf '.SH NAME\n%s \\- %s\n' "$name" "$summary"
# The usage: the first lines, to the first blank one, without "usage: ".
printf '.SH SYNOPSIS\n.nf\n'
printf '%s\n' "$help" | awk 'NF == 0 { exit } { sub(/^usage: /, ""); sub(/^       /, ""); print }' | roff
printf '.fi\n.SH DESCRIPTION\n.nf\n'
printf '%s\n' "$help" | awk 'seen { print } NF == 0 { seen = 1 }' | roff
printf '.fi\n'
case $name in
tusk-emulate | tusk-run | tusk-actor | tusk-psa | tusk-track)
    cat <<'EOF'
.SH ENVIRONMENT
.TP
.B TUSK_ACTOR_PATH
Folders searched first for actor libraries named by a bare name
(NAME.so), colon-separated.
.TP
.B TUSK_ACTOR_DIR
Replaces the installed actor folder (\fBpkg-config \-\-variable=actordir
tusk\fR) in that search; set empty, no installed folder is searched.
.TP
.B TUSK_NO_DLCLOSE
Set (not 0): actor libraries stay loaded at the end, so that valgrind
can name their functions (\fBtusk-emulate \-\-memcheck\fR sets it).
EOF
    ;;
esac
cat <<'EOF'
.SH SEE ALSO
.BR tusk_actor.h (3),
.BR tusk-topology (5),
.BR tusk-emulate (1),
.BR tusk-run (1),
.BR tusk-adf (1);
the guide to writing actors and the example actor in the tusk
documentation folder (\fIwriting-actors.md\fR, \fIexamples/actor/\fR).
EOF
