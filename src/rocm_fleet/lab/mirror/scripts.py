"""Maintainer scripts of the lab's AMD packages.

rocm-core's scripts follow ROCm/rocm-core rocm-core.postinst/.prerm: /opt/rocm is an
update-alternatives link whose priority grows with the release, so the newest
installed release wins. amdgpu-dkms simulates what ``dkms install`` leaves behind
(no compiler runs in the lab); the lab runtime reads these paths at boot:

    /usr/src/amdgpu-<module version>/dkms.conf
    /var/lib/dkms/amdgpu/<module version>/<kernel>/x86_64/module/amdgpu.ko
    /lib/modules/<kernel>/updates/dkms/amdgpu.ko

where <module version> is dkms's, e.g. 6.12.12-2164967.22.04 or 6.16.13-2327507.24.04
(amdgpu 30.30.3). The .ko files are text stubs of ``modinfo``-style ``key=value`` lines
(version=, srcversion=, vermagic=); version= is the kernel module's own version (6.16.13),
which the lab reports as /sys/module/amdgpu/version once the host boots with it.
"""

from __future__ import annotations


def rocm_core_postinst(version: str, prefix: str) -> str:
    major, minor, patch = (int(part) for part in version.split("."))
    return f"""#!/bin/sh
set -e
if [ "$1" = configure ] && command -v update-alternatives >/dev/null; then
    # AMD's score: newer release first, then newer install time (minutes since 2020-09-13).
    score=$(( (({major} - 3) * 14 + {minor}) * 14 + {patch} ))
    score=$(( score * 1000000 + ($(date -u +%s) - 1600000000) / 60 ))
    update-alternatives --install /opt/rocm rocm {prefix} "$score"
fi
exit 0
"""


def rocm_core_prerm(prefix: str) -> str:
    return f"""#!/bin/sh
set -e
case "$1" in
    remove|upgrade|deconfigure)
        update-alternatives --remove rocm {prefix} || true ;;
esac
exit 0
"""


def amdgpu_dkms_postinst(module_version: str, kernel_module_version: str) -> str:
    """``module_version``: dkms's (6.16.13-2327507.24.04); ``kernel_module_version``: modinfo's (6.16.13)."""
    return f"""#!/bin/sh
# Simulated DKMS build of amdgpu {module_version}: the lab compiles nothing, it leaves
# the files dkms would and fails the way dkms does when kernel headers are missing.
set -e
[ "$1" = configure ] || exit 0
module=amdgpu
version={module_version}
src=/usr/src/$module-$version
mkdir -p "$src"
cat > "$src/dkms.conf" <<CONF
PACKAGE_NAME="$module"
PACKAGE_VERSION="$version"
AUTOINSTALL="yes"
BUILT_MODULE_NAME[0]="amdgpu"
BUILT_MODULE_LOCATION[0]="amd/amdgpu"
DEST_MODULE_LOCATION[0]="/updates/dkms"
CONF
echo "Loading new $module-$version DKMS files..."
running=$(uname -r)
built_running=no
for build in /lib/modules/*/build; do
    [ -e "$build/Makefile" ] || continue
    kernel=${{build#/lib/modules/}}
    kernel=${{kernel%/build}}
    echo "Building for $kernel"
    tree=/var/lib/dkms/$module/$version/$kernel/x86_64/module
    mkdir -p "$tree" "/lib/modules/$kernel/updates/dkms"
    printf 'version={kernel_module_version}\\nsrcversion=LAB%s\\nvermagic=%s SMP mod_unload modversions\\n' \\
        "$(printf %s "$version" | md5sum | cut -c1-20 | tr a-f A-F)" "$kernel" > "$tree/amdgpu.ko"
    cp "$tree/amdgpu.ko" "/lib/modules/$kernel/updates/dkms/amdgpu.ko"
    [ "$kernel" = "$running" ] && built_running=yes
done
if [ "$built_running" = no ]; then
    echo "Error! Your kernel headers for kernel $running cannot be found at /lib/modules/$running/build" \\
        "or /lib/modules/$running/source." >&2
    echo "Please install the linux-headers-$running package or use the --kernelsourcedir option" \\
        "to tell DKMS where it's located." >&2
    exit 10
fi
exit 0
"""


def amdgpu_dkms_prerm(module_version: str) -> str:
    return f"""#!/bin/sh
set -e
case "$1" in
    remove|upgrade|deconfigure)
        for tree in /var/lib/dkms/amdgpu/{module_version}/*/; do
            [ -d "$tree" ] || continue
            kernel=$(basename "$tree")
            rm -f "/lib/modules/$kernel/updates/dkms/amdgpu.ko"
        done
        rm -rf /var/lib/dkms/amdgpu/{module_version} /usr/src/amdgpu-{module_version} ;;
esac
exit 0
"""
