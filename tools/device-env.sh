# device-env.sh - source this on the GPU machine, from the repository root,
# after tools/device-bundle.sh packed .device here and the device tool
# carried it:
#     source .device/device-env.sh
# It unpacks the OpenCL ICD loader and clinfo to /tmp/cl, registers
# NVIDIA's OpenCL driver as an ICD (/etc/OpenCL/vendors/nvidia.icd), puts
# the installed tusk (/opt/tusk) in place, adds to LD_LIBRARY_PATH only the
# bundled libraries the machine lacks (ldconfig -p), and sets PATH and
# TUSK_ACTOR_PATH. Select the NVIDIA platform explicitly (PoCL may be
# there too): --device NVIDIA or TUSK_CL_DEVICE=NVIDIA.
bundle=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mkdir -p /tmp/cl /tmp/tusk-lib /etc/OpenCL/vendors
for deb in "$bundle"/debs/*.deb; do dpkg -x "$deb" /tmp/cl; done
nv=$(ldconfig -p | awk '/libnvidia-opencl\.so\.1/ { print $NF; exit }')
echo "${nv:-/usr/lib/libnvidia-opencl.so.1}" > /etc/OpenCL/vendors/nvidia.icd
cp -a "$bundle/root/opt/tusk" /opt/ 2>/dev/null || cp -a "$bundle/root/opt/." /opt/
tar -C /tmp/tusk-lib -xJf "$bundle/lib.tar.xz"
for lib in /tmp/tusk-lib/lib/*; do
    name=$(basename "$lib")
    ldconfig -p | grep -q "^[[:space:]]*$name " || mv "$lib" /tmp/tusk-lib/
done
rm -rf /tmp/tusk-lib/lib
export LD_LIBRARY_PATH=/opt/tusk/lib:/tmp/tusk-lib:/tmp/cl/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=/opt/tusk/bin:/tmp/cl/usr/bin:$PATH
export TUSK_ACTOR_PATH=/opt/tusk/lib/tusk/actors
export OCL_ICD_VENDORS=/etc/OpenCL/vendors
# Slurm and munge (device-bundle.sh with TUSK_BUNDLE_SLURM=1) for
# tools/slurm-bench.sh: unpacked into / (a lent machine, wiped after use);
# Debian's alternatives links made by hand, as the packages' scripts do not run.
if [ "${TUSK_DEVICE_SLURM:-0}" = 1 ] && [ -d "$bundle/slurm" ]; then
    for deb in "$bundle"/slurm/*.deb; do dpkg -x "$deb" /; done
    for p in slurmctld slurmd slurmstepd; do ln -sf "/usr/sbin/$p-wlm" "/usr/sbin/$p"; done
    # No systemd there: slurmd's cgroup/v2 (told IgnoreSystemd=yes by
    # tests/slurm_lib.sh) makes its scope under system.slice itself, which
    # systemd would have made, with the controllers it wants enabled.
    if [ "$(stat -fc %T /sys/fs/cgroup 2>/dev/null)" = cgroup2fs ]; then
        mkdir -p /sys/fs/cgroup/system.slice
        for c in /sys/fs/cgroup /sys/fs/cgroup/system.slice; do
            echo "+cpu +cpuset +memory" >"$c/cgroup.subtree_control" 2>/dev/null || true
        done
    fi
fi
