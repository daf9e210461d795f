#!/bin/sh
# fuzz_smoke.sh - a short fuzzing run in every `make check`.
#
# 1. A seed corpus: small files from `tusk-adf gen` of each --type.
# 2. fuzz/fuzz_replay runs the three fuzz targets (fuzz_reader, fuzz_decoders,
#    fuzz_file) over the corpus, every truncation of it and 3000 seeded
#    mutations. It needs nothing but the normal build.
# 3. With libFuzzer (HAVE_FUZZER=yes and the binaries in FUZZ_BIN_DIR, which
#    `make check` builds when configure found clang's libFuzzer): each
#    libFuzzer binary runs 20000 inputs with -seed=1 on a copy of the corpus.
#
# Environment (set by Makefile.am's AM_TESTS_ENVIRONMENT): top_builddir,
# top_srcdir, HAVE_FUZZER (yes/no), FUZZ_BIN_DIR (absolute path of the
# build's fuzz/ folder). Exit 0 when everything passed, 1 otherwise.
set -eu

top_builddir=${top_builddir:-.}
HAVE_FUZZER=${HAVE_FUZZER:-no}
FUZZ_BIN_DIR=${FUZZ_BIN_DIR:-$top_builddir/fuzz}
FUZZ_RUNS=${FUZZ_RUNS:-20000}
MUTATIONS=${MUTATIONS:-3000}

tusk_adf=$top_builddir/tusk-adf
replay=$top_builddir/fuzz/fuzz_replay

fail() {
    echo "fuzz_smoke: FAIL: $*" >&2
    exit 1
}

for p in "$tusk_adf" "$replay"; do
    [ -x "$p" ] || fail "$p not built (make tusk-adf fuzz/fuzz_replay)"
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tusk-fuzz-smoke.XXXXXX") || fail "mktemp -d failed"
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
# fuzz_file's temporary file goes here too, so it is cleaned up whatever
# happens to the fuzzers.
TMPDIR=$tmp
export TMPDIR

now() { date +%s; }

# ---- 1. seed corpus -----------------------------------------------------------
mkdir "$tmp/corpus" "$tmp/decoders"
seed=1
for type in crystal psa event-psa tracked truth mixed; do
    for n in 1 3; do
        out=$tmp/corpus/$type-$n.adf
        "$tusk_adf" gen -n "$n" --samples 8 --seed "$seed" --type "$type" -o "$out" 2>"$tmp/gen.log" ||
            { cat "$tmp/gen.log" >&2; fail "tusk-adf gen --type $type failed"; }
        seed=$((seed + 1))
    done
done
# Text seeds for libtusk's parsers: the topologies (good and bad) and a
# parameters file.
mkdir "$tmp/text"
srcdir=${abs_top_srcdir:-${top_srcdir:-..}}
# the z-finder's frames: spacepoints and truth, then with data:zvertex
"$top_builddir/tusk-zfinder" sim --rois 2 --set roi_deg=3 --set pileup=1 -q -o "$tmp/corpus/zfinder-sim.adf" ||
    fail "tusk-zfinder sim failed"
TUSK_ACTOR_PATH=${TUSK_ACTOR_PATH:-$top_builddir/actors/.libs} "$top_builddir/tusk-emulate" -q --only zfinder \
    --input "$tmp/corpus/zfinder-sim.adf" --output "$tmp/corpus/zfinder-out.adf" "$srcdir/config/zfinder-demo.xml" \
    2>"$tmp/gen.log" || { cat "$tmp/gen.log" >&2; fail "the zfinder stage failed"; }
# the STS's frames: a small detector's digis and truth, then with clusters and hits
"$top_builddir/tusk-sts" sim --collisions 1 --set stations_mm=300 --set theta_max_deg=4 --set strips=32 \
    --set tracks=15 --set noise_rate_khz=50 -q -o "$tmp/corpus/sts-sim.adf" || fail "tusk-sts sim failed"
TUSK_ACTOR_PATH=${TUSK_ACTOR_PATH:-$top_builddir/actors/.libs} "$top_builddir/tusk-emulate" -q --only hitfinder \
    --input "$tmp/corpus/sts-sim.adf" --output "$tmp/corpus/sts-out.adf" "$srcdir/config/sts-demo.xml" \
    2>"$tmp/gen.log" || { cat "$tmp/gen.log" >&2; fail "the STS hitfinder stage failed"; }
# the UT's events: raw banks, VELO tracks and truth, then with UT tracks and decoded hits
"$top_builddir/tusk-ut" sim --events 2 --set interactions=1 -q -o "$tmp/corpus/ut-sim.adf" || fail "tusk-ut sim failed"
sed 's|<parameter name="threads">1</parameter>|<parameter name="threads">1</parameter><parameter name="hits">yes</parameter>|' \
    "$srcdir/config/ut-demo.xml" >"$tmp/ut-demo.xml"
TUSK_ACTOR_PATH=${TUSK_ACTOR_PATH:-$top_builddir/actors/.libs} "$top_builddir/tusk-emulate" -q --only tracker \
    --input "$tmp/corpus/ut-sim.adf" --output "$tmp/corpus/ut-out.adf" "$tmp/ut-demo.xml" \
    2>"$tmp/gen.log" || { cat "$tmp/gen.log" >&2; fail "the UT tracker stage failed"; }
# the TPC's events: a few particles' clusters and truth, then with tracks
"$top_builddir/tusk-tpc" sim --tracks 6 --set noise_per_row=0.02 -q -o "$tmp/corpus/tpc-sim.adf" ||
    fail "tusk-tpc sim failed"
TUSK_ACTOR_PATH=${TUSK_ACTOR_PATH:-$top_builddir/actors/.libs} "$top_builddir/tusk-emulate" -q --only tracker \
    --input "$tmp/corpus/tpc-sim.adf" --output "$tmp/corpus/tpc-out.adf" "$srcdir/config/tpc-demo.xml" \
    2>"$tmp/gen.log" || { cat "$tmp/gen.log" >&2; fail "the TPC tracker stage failed"; }
cp "$srcdir"/config/*.xml "$srcdir"/config/bad/*.xml "$tmp/text/"
printf '# comment\nfile = /data/run 1.adf\n  repeat=3\nempty =\nmode = a = b\n' >"$tmp/text/params.conf"
# fuzz_wire seeds: a selector byte (even: data header, odd: control text).
{ printf '\000TSKD\001\000\002\000\001\000\000\000'; head -c 36 /dev/zero; } >"$tmp/text/wire-header"
# ... and a shared-memory slot descriptor (pid 1, fd 3, slot 2, link 1, nonce 7), read whatever the selector.
{ printf '\000TSHM\001\000\000\000\003\000\000\000\002\000\000\000\001\000\000\000'
  printf '\000\000\000\000\007\000\000\000\000\000\000\000'; } >"$tmp/text/wire-shm"
# fuzz_cl_cache seed: odd selector, a made-up program binary (round trip).
printf '\001\177ELF\002\001\001 a program binary' >"$tmp/text/cl-cache-binary"
printf '\001HEARTBEAT state=running in_buffers=3 sent:1:0=7 message=a%%20b' >"$tmp/text/wire-control"
# fuzz_hostlist seeds: Slurm node lists.
printf 'node[01-03,07],gpu5' >"$tmp/text/hostlist-ranges"
printf 'rack[1-2]-n[098-101],login.cluster_1' >"$tmp/text/hostlist-2d"
# fuzz_tap_link seeds: a selector byte (bit 0 untap, bit 1 small buffers), a link.
printf '\000psa[0]->spectra[0] every=10' >"$tmp/text/tap-link"
printf '\001 psa[1] -> builder ' >"$tmp/text/untap-link"
printf '\026a[65535]->b_2[7]' >"$tmp/text/tap-link-small"
# fuzz_webctl seeds: a selector byte (odd: a small address buffer), --web's argument.
printf '\0008080' >"$tmp/text/web-port"
printf '\000127.0.0.1:0' >"$tmp/text/web-ipv4"
printf '\000[fe80::1:2]:65535' >"$tmp/text/web-ipv6"
printf '\035[::1]:80' >"$tmp/text/web-small"
set -- "$tmp"/corpus/*.adf "$tmp"/text/*
echo "fuzz_smoke: seed corpus: $# files, $(cat "$@" | wc -c | tr -d ' ') bytes"

# ---- 2. replay: every build, no libFuzzer needed --------------------------------
start=$(now)
"$replay" -n "$MUTATIONS" -s 1 -d "$tmp/decoders" "$@" || fail "fuzz_replay failed (status $?)"
echo "fuzz_smoke: fuzz_replay took $(($(now) - start)) s"

# ---- 3. libFuzzer -----------------------------------------------------------------
missing=
targets="fuzz_reader fuzz_decoders fuzz_file fuzz_params fuzz_topology fuzz_wire fuzz_cl_cache fuzz_basis fuzz_chain
    fuzz_zfinder fuzz_sts fuzz_ut fuzz_tpc fuzz_hostlist fuzz_tap_link fuzz_webctl"
for t in $targets; do
    [ -x "$FUZZ_BIN_DIR/$t" ] || missing="$missing $t"
done
if [ "$HAVE_FUZZER" != yes ] || [ -n "$missing" ]; then
    echo "fuzz_smoke: ======================================================================"
    if [ "$HAVE_FUZZER" != yes ]; then
        echo "fuzz_smoke: NOTE: no libFuzzer (configure found no clang with -fsanitize=fuzzer):"
    else
        echo "fuzz_smoke: NOTE: libFuzzer binaries missing in $FUZZ_BIN_DIR:$missing (make fuzz):"
    fi
    echo "fuzz_smoke: only fuzz_replay ran; the libFuzzer targets were NOT run."
    echo "fuzz_smoke: ======================================================================"
    exit 0
fi

status=0
for t in $targets; do
    dir=$tmp/run-$t
    case $t in
    fuzz_decoders) cp -R "$tmp/decoders" "$dir" ;; # a selector byte, then a payload
    fuzz_params | fuzz_topology | fuzz_wire | fuzz_cl_cache | fuzz_basis | fuzz_hostlist | fuzz_tap_link | fuzz_webctl)
        cp -R "$tmp/text" "$dir" ;;
    *) cp -R "$tmp/corpus" "$dir" ;;
    esac
    mkdir "$tmp/art-$t"
    start=$(now)
    runs=$FUZZ_RUNS
    # fuzz_basis saves and reloads one input in eight, and a save ends
    # with fsync: an eighth of the runs takes as long as the others' all.
    [ "$t" = fuzz_basis ] && runs=$((FUZZ_RUNS / 8))
    if "$FUZZ_BIN_DIR/$t" -runs="$runs" -seed=1 -timeout=60 -print_final_stats=1 \
        -artifact_prefix="$tmp/art-$t/" "$dir" >"$tmp/$t.log" 2>&1; then
        runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$tmp/$t.log")
        echo "fuzz_smoke: $t: ${runs:-?} runs in $(($(now) - start)) s, OK"
    else
        status=1
        echo "fuzz_smoke: $t FAILED; the end of its log:" >&2
        tail -n 40 "$tmp/$t.log" >&2
        for a in "$tmp/art-$t"/*; do
            [ -f "$a" ] || continue
            keep=$top_builddir/crash-$t-$(basename "$a")
            cp "$a" "$keep" && echo "fuzz_smoke: reproducer kept as $keep (run: $FUZZ_BIN_DIR/$t $keep)" >&2
            echo "fuzz_smoke: its bytes:" >&2
            od -An -tx1 "$a" | head -n 20 >&2
        done
    fi
done
[ "$status" -eq 0 ] || fail "a libFuzzer target failed"
echo "fuzz_smoke: all passed"
