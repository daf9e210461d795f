#!/usr/bin/env bash
# device-bundle.sh [DIR] - pack an installed tusk for a GPU machine that has
# no build tools, no network and no OpenCL ICD loader (the benchmark
# machines of BENCHMARKS.md).
#
# Here (a Debian 12 build machine):
#   - configures a --prefix=/opt/tusk build in build-device/ and installs
#     it into DIR/root (make install DESTDIR=...);
#   - packs into DIR/lib.tar.xz every shared library the installed programs
#     and actors need, except glibc's own (the target has its own glibc);
#   - downloads the ocl-icd-libopencl1 and clinfo packages into DIR/debs;
#   - copies tools/device-env.sh into DIR.
# DIR defaults to .device (git-ignored); name it in the device tool's
# `carry`. There, before anything else:
#     source .device/device-env.sh
# which unpacks the loader, registers NVIDIA's ICD, puts /opt/tusk on PATH
# and sets LD_LIBRARY_PATH and TUSK_ACTOR_PATH (see device-env.sh).
#
# With TUSK_BUNDLE_SLURM=1 it also packs Slurm and munge for
# tools/slurm-bench.sh on the quiet GPU machine (issue 27): Debian's
# slurmctld, slurmd, slurm-client, slurm-wlm-basic-plugins, munge and
# libmunge2 packages into DIR/slurm (this machine needs slurm-wlm and munge
# installed, for their libraries), and every library their programs and the
# plugins tests/slurm_lib.sh configures need into DIR/lib.tar.xz. There,
# TUSK_DEVICE_SLURM=1 before sourcing device-env.sh unpacks them into /.
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:-$top/.device}
case $out in /*) ;; *) out=$PWD/$out ;; esac
build=$top/build-device
jobs=$(nproc 2>/dev/null || echo 2)

cd "$top"
[ -x configure ] && [ ! configure.ac -nt configure ] && [ ! Makefile.am -nt Makefile.in ] || autoreconf -fi
mkdir -p "$build"
cd "$build"
if [ ! -f Makefile ]; then
    "$top/configure" --prefix=/opt/tusk -q
fi
make -j"$jobs" >/dev/null
rm -rf "$out"
mkdir -p "$out/root" "$out/lib" "$out/debs"
make install DESTDIR="$out/root" >/dev/null
# libtool .la files name this machine's paths; the target needs none.
find "$out/root" -name '*.la' -delete

# Shared libraries: everything ldd names that is not glibc's (ldd fails on
# the installed scripts, tusk-reprocess: not a dynamic executable).
glibc='^(libc|libm|libdl|libpthread|librt|libresolv|libutil|ld-linux-x86-64|linux-vdso)\.so'
find "$out/root/opt/tusk" -type f \( -perm -u+x -o -name '*.so*' \) -print0 |
    { xargs -0 -r env LD_LIBRARY_PATH="$out/root/opt/tusk/lib" ldd 2>/dev/null || true; } |
    awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }' | sort -u |
    while read -r name path; do
        [[ $name =~ $glibc ]] && continue
        case $path in "$out"/*) continue ;; esac
        cp -L "$path" "$out/lib/$name"
    done

cd "$out/debs"
apt-get download ocl-icd-libopencl1 clinfo >/dev/null

if [ "${TUSK_BUNDLE_SLURM:-0}" = 1 ]; then
    mkdir -p "$out/slurm"
    (cd "$out/slurm" && apt-get download slurmctld slurmd slurm-client slurm-wlm-basic-plugins munge libmunge2 >/dev/null)
    plugins=/usr/lib/x86_64-linux-gnu/slurm-wlm
    for f in /usr/sbin/slurmctld-wlm /usr/sbin/slurmd-wlm /usr/sbin/slurmstepd-wlm /usr/bin/srun /usr/bin/sbatch \
        /usr/bin/scontrol /usr/bin/sinfo /usr/sbin/munged "$plugins"/libslurmfull.so "$plugins"/auth_munge.so \
        "$plugins"/cred_munge.so "$plugins"/select_cons_tres.so "$plugins"/proctrack_pgid.so "$plugins"/cgroup_v1.so \
        "$plugins"/cgroup_v2.so; do
        ldd "$f"
    done | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }' | sort -u |
        while read -r name path; do
            [[ $name =~ $glibc ]] && continue
            case $path in "$plugins"/*) continue ;; esac
            cp -L "$path" "$out/lib/$name"
        done
fi
# Packed: the device tool carries at most 64 MiB with the working tree, and
# libicudata alone is 30 MB (a fifth of that packed).
tar -C "$out" -cJf "$out/lib.tar.xz" lib
rm -rf "$out/lib"
cp "$top/tools/device-env.sh" "$out/device-env.sh"
du -sh "$out" | awk '{ print "device-bundle: " $1 " in " "'"$out"'" }'
