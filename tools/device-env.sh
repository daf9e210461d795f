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
for lib in "$bundle"/lib/*; do
    name=$(basename "$lib")
    ldconfig -p | grep -q "^[[:space:]]*$name " || cp -L "$lib" /tmp/tusk-lib/
done
export LD_LIBRARY_PATH=/opt/tusk/lib:/tmp/tusk-lib:/tmp/cl/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=/opt/tusk/bin:/tmp/cl/usr/bin:$PATH
export TUSK_ACTOR_PATH=/opt/tusk/lib/tusk/actors
export OCL_ICD_VENDORS=/etc/OpenCL/vendors
