#!/bin/sh
# install_kit.sh - the installed kit, as an actor author gets it: `make
# install DESTDIR=` into a scratch folder, then, from that tree alone:
#   - every installed library has a pkg-config file whose libraries cover
#     what the library links of tusk (readelf -d), and tusk.pc covers them
#     all; every command answers --version; every command, the actor
#     interface (3) and the topology file (5) have a manual page; the guide,
#     FORMAT.md and the example actor are in the documentation folder;
#   - the actor helpers (tusk/actorkit.h, libtusk-actorkit) are installed
#     with their pkg-config entry, and the header's version is the
#     library's;
#   - the example actor (it uses libtusk-actorkit and libtusk-spectra) is
#     copied out, built by its own Makefile with pkg-config only, and run
#     by the installed tusk-emulate on data the installed tusk-adf made,
#     with the installed file_producer: it writes its peak table, and
#     refuses a parameter it does not know (actorkit's table);
#   - built instead with a tusk.pc as it was before issue 24 (libtusk-cl,
#     libtusk, libtusk-base, libtusk-adf only), the same actor fails:
#     undefined spec_config_init.
# The installed programs run from the scratch tree: LD_LIBRARY_PATH (they
# carry a RUNPATH to the configured folder, which LD_LIBRARY_PATH precedes)
# and TUSK_ACTOR_DIR (the installed actor folder moved with DESTDIR).
set -eu
b=${abs_top_builddir:?run through make check}
command -v pkg-config >/dev/null || { echo "install_kit: SKIP: no pkg-config"; exit 77; }
command -v readelf >/dev/null || { echo "install_kit: SKIP: no readelf"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tusk-install-kit.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
step() { echo "install_kit: $*"; }
fail() { echo "install_kit: FAIL: $*" >&2; exit 1; }

# The configured folders, as make has them.
get() { sed -n "s/^$1 = //p" "$b/Makefile" | head -n 1; }
prefix=$(get prefix) exec_prefix=$(get exec_prefix) datarootdir=$(get datarootdir) PACKAGE_TARNAME=$(get PACKAGE_TARNAME)
eval "exec_prefix=\"$exec_prefix\""
eval "datarootdir=\"$datarootdir\""
for v in bindir libdir includedir datadir docdir mandir; do
    eval "$v=\"$(get $v)\""
    eval "$v=\"\$$v\""
    eval "$v=\"\$$v\"" # ${datarootdir}/doc/${PACKAGE_TARNAME} and the like, twice nested
done
eval "actordir=\"$(get actordir)\""
version=$(get PACKAGE_VERSION)
dest=$tmp/dest

step "make install DESTDIR=$dest"
# A make of its own, not a job of the make running the tests.
(cd "$b" && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s install DESTDIR="$dest" >"$tmp/install.log" 2>&1) ||
    { tail -n 30 "$tmp/install.log" >&2; fail "make install failed"; }

L=$dest$libdir
PKG_CONFIG_SYSROOT_DIR=$dest PKG_CONFIG_LIBDIR=$L/pkgconfig PKG_CONFIG_PATH=
LD_LIBRARY_PATH=$L${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
TUSK_ACTOR_DIR=$dest$actordir
export PKG_CONFIG_SYSROOT_DIR PKG_CONFIG_LIBDIR PKG_CONFIG_PATH LD_LIBRARY_PATH TUSK_ACTOR_DIR
unset TUSK_ACTOR_PATH || true

step "a pkg-config file per library, covering what it links of tusk"
libs=0
for so in "$L"/libtusk*.so; do
    base=$(basename "$so" .so)
    case $base in libtusk) pc=tusk-runtime ;; *) pc=${base#lib} ;; esac
    [ -f "$L/pkgconfig/$pc.pc" ] || fail "$base has no $pc.pc"
    have=$(pkg-config --libs "$pc") || fail "pkg-config --libs $pc failed"
    case " $have " in *" -l${base#lib} "*) ;; *) fail "pkg-config --libs $pc lacks -l${base#lib}: $have" ;; esac
    for need in $(readelf -d "$so" | sed -n 's/.*Shared library: \[\(libtusk[^.]*\)\.so.*/\1/p'); do
        case " $have " in *" -l${need#lib} "*) ;; *) fail "$base links $need, but pkg-config --libs $pc is '$have'" ;; esac
        case " $(pkg-config --libs tusk) " in *" -l${need#lib} "*) ;; *) fail "tusk.pc lacks -l${need#lib}" ;; esac
    done
    [ "$(pkg-config --modversion "$pc")" = "$version" ] || fail "$pc.pc's version is not $version"
    libs=$((libs + 1))
done
[ "$libs" -ge 10 ] || fail "only $libs libraries installed"
# pkg-config puts the sysroot (DESTDIR) before the folders it gives.
[ "$(pkg-config --variable=actordir tusk)" = "$dest$actordir" ] || fail "tusk.pc's actordir is not $actordir"
case " $(pkg-config --cflags tusk-spectra) " in *" -I$dest$includedir "*) ;; *) fail "no -I for the headers" ;; esac

step "every command answers --version and has a manual page; the interface and topology pages too"
n=0
for prog in "$dest$bindir"/tusk-*; do
    name=$(basename "$prog")
    out=$("$prog" --version) || fail "$name --version failed"
    [ "$out" = "$name (tusk) $version" ] || fail "$name --version says '$out'"
    [ -s "$dest$mandir/man1/$name.1" ] || fail "no manual page $name(1)"
    grep -q "^$name \\\\- " "$dest$mandir/man1/$name.1" || fail "$name(1) has no NAME line"
    n=$((n + 1))
done
[ "$n" -ge 4 ] || fail "only $n commands installed"
for page in man3/tusk_actor.h.3 man5/tusk-topology.5; do
    [ -s "$dest$mandir/$page" ] || fail "no $page"
done
if command -v groff >/dev/null; then
    for page in "$dest$mandir"/man*/*; do
        warn=$(groff -man -Tutf8 -ww -z "$page" 2>&1) || fail "groff fails on $page"
        [ -z "$warn" ] || fail "groff warns on $page: $warn"
    done
fi

step "the guide, FORMAT.md and the example actor are in the documentation folder"
for f in writing-actors.md FORMAT.md examples/actor/peak_table.c examples/actor/Makefile examples/actor/topology.xml; do
    [ -s "$dest$docdir/$f" ] || fail "$docdir/$f is not installed"
done

step "the actor helpers: tusk/actorkit.h and libtusk-actorkit, the header's version the library's"
[ -s "$dest$includedir/tusk/actorkit.h" ] || fail "tusk/actorkit.h is not installed"
printf '%s\n' '#include <stdio.h>' '#include <tusk/actorkit.h>' \
    'int main(void) { printf("%d %u\n", TUSK_ACTORKIT_VERSION, ak_version()); return 0; }' >"$tmp/akversion.c"
# shellcheck disable=SC2046 # pkg-config's words
cc -std=c11 -Wall -Wextra -Werror $(pkg-config --cflags tusk-actorkit) -o "$tmp/akversion" "$tmp/akversion.c" \
    $(pkg-config --libs tusk-actorkit) >"$tmp/akversion.log" 2>&1 ||
    { cat "$tmp/akversion.log" >&2; fail "a program on tusk-actorkit does not build"; }
# shellcheck disable=SC2046 # two numbers
set -- $("$tmp/akversion")
[ "$#" -eq 2 ] && [ "$1" = "$2" ] && [ "$1" -ge 1000 ] || fail "actorkit's header and library versions: $*"

step "the example actor: built from the installed tree with its own Makefile and pkg-config"
cp -R "$dest$docdir/examples/actor" "$tmp/actor"
chmod -R u+w "$tmp/actor"
(cd "$tmp/actor" && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make >"$tmp/build.log" 2>&1) ||
    { cat "$tmp/build.log" >&2; fail "the example actor does not build"; }
[ -f "$tmp/actor/peak_table.so" ] || fail "no peak_table.so"
readelf -d "$tmp/actor/peak_table.so" | grep -qF 'Shared library: [libtusk-actorkit.so' ||
    fail "the example actor does not link libtusk-actorkit"

step "... and run by the installed tusk-emulate, with the installed file_producer"
cd "$tmp/actor"
"$dest$bindir/tusk-adf" gen -n 2000 --seed 24 --type psa -o input.adf >/dev/null 2>&1 || fail "tusk-adf gen failed"
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make run TUSK_EMULATE="$dest$bindir/tusk-emulate" >run.txt 2>&1 ||
    { cat run.txt >&2; fail "the example chain failed"; }
grep -q "peaks\[0\]: spectra and summary.csv in peak_table/" run.txt || { cat run.txt >&2; fail "peak_table said nothing"; }
[ -s peak_table/summary.csv ] && [ -s peak_table/singles.csv ] || fail "peak_table wrote no spectra"
TUSK_ACTOR_PATH=$tmp/actor "$dest$bindir/tusk-emulate" --describe topology.xml >describe.txt 2>&1 ||
    { cat describe.txt >&2; fail "--describe failed"; }
grep -q "reader (producer, 1 instance): $dest$actordir/file_producer.so" describe.txt ||
    { cat describe.txt >&2; fail "file_producer was not the installed one"; }
sed 's|<parameter name="lines">|<parameter name="quite">yes</parameter><parameter name="lines">|' topology.xml >typo.xml
got=0
TUSK_ACTOR_PATH=$tmp/actor "$dest$bindir/tusk-emulate" typo.xml >typo.txt 2>&1 || got=$?
[ "$got" -eq 2 ] || { cat typo.txt >&2; fail "a misspelt parameter: exit $got, expected 2"; }
grep -qF "peak_table: unknown parameter 'quite' (known: quiet, " typo.txt ||
    { cat typo.txt >&2; fail "the misspelt parameter is not named with the known ones"; }

step "with the tusk.pc of before (four libraries), the same actor does not build"
mkdir "$tmp/oldpc"
cat >"$tmp/oldpc/tusk.pc" <<EOF
prefix=$prefix
exec_prefix=$exec_prefix
libdir=$libdir
includedir=$includedir
Name: tusk
Description: as it was
Version: $version
Libs: -L\${libdir} -ltusk-cl -ltusk -ltusk-base -ltusk-adf
Cflags: -I\${includedir}
EOF
make clean >/dev/null
got=0
PKG_CONFIG_LIBDIR=$tmp/oldpc env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make PACKAGES=tusk >old.log 2>&1 || got=$?
[ "$got" -ne 0 ] || fail "the actor built against the old tusk.pc: the test cannot see what it is for"
grep -q "undefined reference to .spec_config_init" old.log || { cat old.log >&2; fail "not the expected failure"; }
echo "install_kit: PASS"
