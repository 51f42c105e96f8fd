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

The build itself is /usr/src/amdgpu-<module version>/lab-build KERNEL, run by the postinst
for each kernel with headers and by dkms's kernel hooks (/etc/kernel/postinst.d/dkms,
header_postinst.d/dkms, postrm.d/dkms: the lab has no dkms package, so amdgpu-dkms carries
them) when a kernel package is installed. It fails as DKMS fails on a kernel newer than the
module's kernel base (the series of its module version: 6.16.13 builds for 6.16 and older):
"Error! Bad return status for module build on kernel: ..." with a make.log. The lab machine's
own series builds too, whatever it is: every lab host runs that kernel.
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


LAB_BUILD = "lab-build"
AUTOINSTALL = "/usr/lib/rocm-fleet-lab/dkms-autoinstall"


def amdgpu_dkms_build(module_version: str, kernel_module_version: str) -> str:
    """/usr/src/amdgpu-<module version>/lab-build KERNEL: ``dkms build`` and ``dkms install`` of amdgpu for KERNEL."""
    base_major, base_minor = kernel_module_version.split(".")[:2]
    return f"""#!/bin/sh
# Simulated `dkms install -m amdgpu -v {module_version} -k KERNEL` (rocm-fleet lab): no compiler
# runs; the module "builds" for kernel series up to {base_major}.{base_minor} (its kernel base; the lab
# machine's series where newer) and fails above it as the real build does, with a make.log.
set -eu
kernel=$1
module=amdgpu
version={module_version}
if [ ! -e "/lib/modules/$kernel/build/Makefile" ]; then
    echo "Error! Your kernel headers for kernel $kernel cannot be found at /lib/modules/$kernel/build" \\
        "or /lib/modules/$kernel/source." >&2
    echo "Please install the linux-headers-$kernel package or use the --kernelsourcedir option" \\
        "to tell DKMS where it's located." >&2
    exit 21
fi
log=/var/lib/dkms/$module/$version/build/make.log
mkdir -p "$(dirname "$log")"
echo "Building for $kernel"
echo "Building initial module for $kernel"
major=$(echo "$kernel" | cut -d. -f1)
minor=$(echo "$kernel" | cut -d. -f2 | sed 's/[^0-9].*//')
printf 'DKMS make.log for %s-%s for kernel %s (x86_64)\\n%s\\n' "$module" "$version" "$kernel" "$(date)" > "$log"
printf 'make -j%s KERNELRELEASE=%s TTM_NAME=amdttm SCHED_NAME=amd-sched -C /lib/modules/%s/build M=%s\\n' \\
    "$(nproc)" "$kernel" "$kernel" "$(dirname "$log")" >> "$log"
# The series it builds for: its kernel base, or the lab machine's own where newer (every lab host runs it).
max_major={base_major}
max_minor={base_minor}
machine_major=$(uname -r | cut -d. -f1)
machine_minor=$(uname -r | cut -d. -f2 | sed 's/[^0-9].*//')
if [ "$machine_major" -gt "$max_major" ] \\
    || {{ [ "$machine_major" -eq "$max_major" ] && [ "$machine_minor" -gt "$max_minor" ]; }}; then
    max_major=$machine_major
    max_minor=$machine_minor
fi
if [ "$major" -gt "$max_major" ] || {{ [ "$major" -eq "$max_major" ] && [ "$minor" -gt "$max_minor" ]; }}; then
    cat >> "$log" <<LOG
$(dirname "$log")/amd/amdgpu/amdgpu_device.c: error: (rocm-fleet lab) amdgpu {kernel_module_version} builds against \\
kernel series up to $max_major.$max_minor; the headers of $kernel declare interfaces it does not know
make[2]: *** [scripts/Makefile.build:243: $(dirname "$log")/amd/amdgpu/amdgpu_device.o] Error 1
make[1]: *** [Makefile:1947: $(dirname "$log")] Error 2
make: *** [Makefile:224: __sub-make] Error 2
LOG
    echo "Error! Bad return status for module build on kernel: $kernel (x86_64)" >&2
    echo "Consult $log for more information." >&2
    exit 10
fi
tree=/var/lib/dkms/$module/$version/$kernel/x86_64/module
mkdir -p "$tree" "/lib/modules/$kernel/updates/dkms"
printf 'version={kernel_module_version}\\nsrcversion=LAB%s\\nvermagic=%s SMP mod_unload modversions\\n' \\
    "$(printf %s "$version" | md5sum | cut -c1-20 | tr a-f A-F)" "$kernel" > "$tree/amdgpu.ko"
cp "$tree/amdgpu.ko" "/lib/modules/$kernel/updates/dkms/amdgpu.ko"
echo "make: Leaving directory '/usr/src/linux-headers-$kernel'" >> "$log"
echo "Installing /lib/modules/$kernel/updates/dkms/amdgpu.ko"
"""


def dkms_autoinstall() -> str:
    """dkms autoinstall -k KERNEL over every amdgpu source tree: what dkms's kernel hooks run."""
    return """#!/bin/sh
# `dkms autoinstall --kernelver KERNEL` (rocm-fleet lab): builds each added amdgpu for a kernel
# that has none, and fails as dkms 3 does when one fails (the kernel package's script fails with it).
kernel=$1
if [ ! -e "/lib/modules/$kernel/build/Makefile" ]; then
    echo "dkms: autoinstall for kernel $kernel skipped: its headers are not installed" \\
        "(install linux-headers-$kernel)" >&2
    exit 0
fi
failed=
for build in /usr/src/amdgpu-*/lab-build; do
    [ -x "$build" ] || continue
    version=${build#/usr/src/amdgpu-}
    version=${version%/lab-build}
    if [ -e "/var/lib/dkms/amdgpu/$version/$kernel/x86_64/module/amdgpu.ko" ] \\
        && [ -e "/lib/modules/$kernel/updates/dkms/amdgpu.ko" ]; then
        echo "Module amdgpu/$version already installed on kernel $kernel/x86_64, skip."
        continue
    fi
    "$build" "$kernel" || { echo "dkms autoinstall on $kernel/x86_64 failed for amdgpu($?)" >&2; failed=yes; }
done
if [ -n "$failed" ]; then
    echo "Error! One or more modules failed to install during autoinstall." >&2
    echo "Refer to previous errors for more information." >&2
    exit 11
fi
exit 0
"""


def dkms_kernel_hook(kind: str) -> str:
    """/etc/kernel/{postinst,header_postinst,postrm}.d/dkms as the dkms package ships them."""
    if kind == "postrm":
        return """#!/bin/sh
# dkms's kernel hook: remove the modules DKMS built for a removed kernel.
kernel=$1
for tree in /var/lib/dkms/amdgpu/*/"$kernel"; do
    [ -d "$tree" ] && rm -rf "$tree"
done
rm -f "/lib/modules/$kernel/updates/dkms/amdgpu.ko"
rmdir -p "/lib/modules/$kernel/updates/dkms" 2>/dev/null || true
exit 0
"""
    return f"""#!/bin/sh
# dkms's kernel hook: build the DKMS modules for the kernel being installed.
exec {AUTOINSTALL} "$1"
"""


def amdgpu_dkms_postinst(module_version: str, kernel_module_version: str, package_format: str = "deb") -> str:
    """``module_version``: dkms's (6.16.13-2327507.24.04); ``kernel_module_version``: modinfo's (6.16.13).
    As dpkg's postinst it acts on "configure"; as rpm's %post on every install and upgrade."""
    only_configure = '[ "$1" = configure ] || exit 0\n' if package_format == "deb" else ""
    return f"""#!/bin/sh
# Simulated DKMS build of amdgpu {module_version} for every kernel with headers: the lab
# compiles nothing, it leaves the files dkms would and fails the way dkms does when the
# running kernel's headers are missing or its build fails.
set -e
{only_configure}module=amdgpu
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
if [ ! -e "/lib/modules/$running/build/Makefile" ]; then
    "$src/{LAB_BUILD}" "$running" || exit 10
fi
for build in /lib/modules/*/build; do
    [ -e "$build/Makefile" ] || continue
    kernel=${{build#/lib/modules/}}
    kernel=${{kernel%/build}}
    status=0
    "$src/{LAB_BUILD}" "$kernel" || status=$?
    if [ "$status" -ne 0 ] && [ "$kernel" = "$running" ]; then
        exit 10
    fi
done
exit 0
"""


def amdgpu_dkms_prerm(module_version: str, package_format: str = "deb") -> str:
    """``dkms remove`` of this version: its trees, and each kernel's installed module where it is this version's
    (on rpm an upgrade runs the old package's %preun after the new one's %post has installed its own module)."""
    remove = f"""for tree in /var/lib/dkms/amdgpu/{module_version}/*/; do
    [ -d "$tree" ] || continue
    kernel=$(basename "$tree")
    if cmp -s "$tree/x86_64/module/amdgpu.ko" "/lib/modules/$kernel/updates/dkms/amdgpu.ko"; then
        rm -f "/lib/modules/$kernel/updates/dkms/amdgpu.ko"
    fi
done
rm -rf /var/lib/dkms/amdgpu/{module_version} /usr/src/amdgpu-{module_version}
"""
    if package_format == "rpm":
        return f"#!/bin/sh\nset -e\n{remove}exit 0\n"
    indented = "".join(f"        {line}\n" if line else "\n" for line in remove.splitlines())
    return f"""#!/bin/sh
set -e
case "$1" in
    remove|upgrade|deconfigure)
{indented}        ;;
esac
exit 0
"""


# ROCm Core SDK 10.x ---------------------------------------------------------------------------
# amdrocm-core's postinst and prerm are AMD's templates (TheRock
# build_tools/packaging/linux/template/scripts/amdrocm-core-{postinst,prerm}.j2 @ 89553ce3) rendered
# as TheRock renders them for a deb (target "deb", install_prefix, version_major/minor/patch). The
# binaries list is AMD's, rocm-smi included: AMD's script skips a binary its prefix lacks ("not found,
# but that is OK"), and no 10.x package carries rocm-smi.
AMDROCM_BINARIES = (
    "hipcc hipconfig hipify-clang rocminfo amd-smi rocm_agent_enumerator rocm-smi rocprofv3 rocprofv3-avail"
    " rocgdb rocpd amdclang amdclang++ amdclang-cl amdclang-cpp amdflang amdlld"
)
# The /opt/rocm links amdrocm-core's postinst registers: (link under /opt/rocm, alternative, path under the prefix).
AMDROCM_DIRECTORY_LINKS = (
    ("bin", "rocm-bin", "bin"),
    ("lib", "rocm-lib", "lib"),
    ("include", "rocm-include", "include"),
    ("llvm", "rocm-llvm", "llvm"),
    ("amdgcn", "rocm-amdgcn", "amdgcn"),
    ("libexec", "rocm-libexec", "libexec"),
    ("share", "rocm-share", "share"),
)

_IS_DEBIAN_LIKE = """is_debian_like() {
    local id_like="$1"
    case " $id_like " in
        (*" debian "*|*" ubuntu "*)
            return 0
            ;;
        (*)
            return 1
            ;;
    esac
}"""


def amdrocm_core_postinst(version: str, prefix: str) -> str:
    major, minor, patch = (int(part) for part in version.split("."))
    return f"""#!/bin/bash

{_IS_DEBIAN_LIKE}

do_update_alternatives(){{
    # skip update if program doesn't exist
    command -v update-alternatives >/dev/null || return 0
    local binaries altscore now
    now=$(date -u +%s)          # Number of seconds since 1 Jan 1970

    # Build up a score. It needs to fit in 32 bits
    altscore=$(({major} - 3))
    altscore=$((altscore * 14 + {minor})) # Allow up to 14 minor
    altscore=$((altscore * 14 + {patch})) # Allow up to 14 patch

    # Minutes since Sep 13 12:26:40 2020: the newest install of one version wins.
    altscore=$((altscore*1000000+(now-1600000000)/60))

    binaries=( {AMDROCM_BINARIES} )

    PKG_INSTALL_PREFIX={prefix}

    # Install /opt/rocm/core soft link
    update-alternatives --install "/opt/rocm/core" "core" "$PKG_INSTALL_PREFIX" "$altscore"
    update-alternatives --install "/opt/rocm/core-{major}" "core-{major}" "$PKG_INSTALL_PREFIX" "$altscore"

    # Install /opt/rocm/bin, /opt/rocm/lib, and /opt/rocm/include soft links
    update-alternatives --install "/opt/rocm/bin" "rocm-bin" "$PKG_INSTALL_PREFIX/bin" "$altscore"
    update-alternatives --install "/opt/rocm/lib" "rocm-lib" "$PKG_INSTALL_PREFIX/lib" "$altscore"
    update-alternatives --install "/opt/rocm/include" "rocm-include" "$PKG_INSTALL_PREFIX/include" "$altscore"

    # Install /opt/rocm/llvm, /opt/rocm/amdgcn, /opt/rocm/libexec, and /opt/rocm/share soft links
    update-alternatives --install "/opt/rocm/llvm" "rocm-llvm" "$PKG_INSTALL_PREFIX/llvm" "$altscore"
    update-alternatives --install "/opt/rocm/amdgcn" "rocm-amdgcn" "$PKG_INSTALL_PREFIX/amdgcn" "$altscore"
    update-alternatives --install "/opt/rocm/libexec" "rocm-libexec" "$PKG_INSTALL_PREFIX/libexec" "$altscore"
    update-alternatives --install "/opt/rocm/share" "rocm-share" "$PKG_INSTALL_PREFIX/share" "$altscore"

    for i in "${{binaries[@]}}"
    do
        # No obvious recover strategy if things fail
        # No manual or other slave pages to install
        if [ -e $PKG_INSTALL_PREFIX/bin/"$i" ]
        then
            update-alternatives --install /usr/bin/"$i" "$i" \\
                                $PKG_INSTALL_PREFIX/bin/"$i" "$altscore"
        else
            echo "$PKG_INSTALL_PREFIX/bin/$i not found, but that is OK" >&2
        fi
    done
    true
}}

if [ -e /etc/os-release ] && source /etc/os-release && is_debian_like "${{ID_LIKE:-$ID}}"
then
    case "$1" in
       (configure)
       do_update_alternatives
       ;;
       (abort-upgrade|abort-remove|abort-deconfigure)
           echo "$1"
       ;;
       (*)
          exit 0
       ;;
    esac
else
    do_update_alternatives
fi
"""


def amdrocm_core_prerm(version: str, prefix: str) -> str:
    major = int(version.split(".")[0])
    return f"""#!/bin/bash

binaries=( {AMDROCM_BINARIES} )

{_IS_DEBIAN_LIKE}

do_update_alternatives(){{
    # skip update if program doesn't exist
    command -v update-alternatives >/dev/null || return 0

    PKG_INSTALL_PREFIX={prefix}

    for i in "${{binaries[@]}}"
    do
        update-alternatives --remove "$i" \\
            "$PKG_INSTALL_PREFIX/bin/$i" || true
    done

    # Remove /opt/rocm/core soft link
    update-alternatives --remove "core" "$PKG_INSTALL_PREFIX" || true
    update-alternatives --remove "core-{major}" "$PKG_INSTALL_PREFIX" || true

    # Remove /opt/rocm/bin, /opt/rocm/lib, and /opt/rocm/include soft links
    update-alternatives --remove "rocm-bin" "$PKG_INSTALL_PREFIX/bin" || true
    update-alternatives --remove "rocm-lib" "$PKG_INSTALL_PREFIX/lib" || true
    update-alternatives --remove "rocm-include" "$PKG_INSTALL_PREFIX/include" || true

    # Remove /opt/rocm/llvm, /opt/rocm/amdgcn, /opt/rocm/libexec, and /opt/rocm/share  soft links
    update-alternatives --remove "rocm-llvm" "$PKG_INSTALL_PREFIX/llvm" || true
    update-alternatives --remove "rocm-amdgcn" "$PKG_INSTALL_PREFIX/amdgcn" || true
    update-alternatives --remove "rocm-libexec" "$PKG_INSTALL_PREFIX/libexec" || true
    update-alternatives --remove "rocm-share" "$PKG_INSTALL_PREFIX/share" || true
}}

if [ -e /etc/os-release ] && source /etc/os-release && is_debian_like "${{ID_LIKE:-$ID}}"
then
   case "$1" in
       (remove|upgrade)
           do_update_alternatives
       ;;
       (purge)
           # nothing to do
       ;;
       (*)
           exit 0
       ;;
   esac
else
    do_update_alternatives
fi
"""


LEGACY_REFUSAL = "If you have ROCm 7.2.4 or older installed, please uninstall it before proceeding."


def _legacy_refusal(prefix: str, package: str, remove: str) -> str:
    """The refusal both package formats print, once the legacy stream is found ($legacy, or the /opt/rocm link)."""
    return f"""if [ -n "$legacy" ] || [ -L /opt/rocm ]; then
    found=${{legacy:-/opt/rocm -> $(readlink /opt/rocm)}}
    echo "{package}: the legacy ROCm stream is installed ($found)." >&2
    echo "{LEGACY_REFUSAL}" >&2
    echo "The ROCm Core SDK installs into {prefix} and needs /opt/rocm to be a directory, not the legacy" >&2
    echo "stream's /opt/rocm link; remove the legacy packages ({remove} rocm-core<release> ...) first." >&2
    exit 1
fi
exit 0
"""


def amdrocm_preinst_rpm(prefix: str) -> str:
    """amdrocm_preinst as rpm's %pre: the legacy stream's rocm-core packages are AMD's in the rpm database."""
    return f"""#!/bin/sh
# rocm-fleet lab: refuse to install beside the legacy ROCm stream (AMD's packages carry no %pre;
# AMD's install pages say: "{LEGACY_REFUSAL}").
legacy=$(rpm -qa --qf '%{{NAME}} %{{VENDOR}}\\n' 'rocm-core*' 2>/dev/null \\
    | awk '/Advanced Micro Devices/ {{print $1}}' | tr '\\n' ' ')
{_legacy_refusal(prefix, "amdrocm", "dnf remove")}"""


def amdrocm_preinst(prefix: str) -> str:
    """The lab's guard (AMD's packages have no preinst): refuse to unpack beside the legacy stream.

    The legacy rocm-core makes /opt/rocm an update-alternatives link to /opt/rocm-<release>; dpkg
    would unpack <prefix> through it into the legacy tree. So while an AMD rocm-core* package is
    installed (in any state but not-installed or config-files) or /opt/rocm is a link, it fails.
    """
    return f"""#!/bin/sh
# rocm-fleet lab: refuse to install beside the legacy ROCm stream (AMD's packages carry no preinst;
# AMD's install pages say: "{LEGACY_REFUSAL}").
set -e
case "$1" in
    install|upgrade) ;;
    *) exit 0 ;;
esac
legacy=$(dpkg-query -W -f '${{db:Status-Abbrev}} ${{Package}} ${{Maintainer}}\\n' 'rocm-core*' 2>/dev/null \\
    | awk '$1 !~ /^.[nc]/ && /@amd\\.com/ {{print $2}}' | tr '\\n' ' ')
{_legacy_refusal(prefix, "${DPKG_MAINTSCRIPT_PACKAGE:-amdrocm}", "apt autoremove")}"""
