"""Kernel updates in the mirror's RPM part: stand-ins of the RHEL family's kernel packages.

Two kernels newer than the lab machine's per RPM system, named as the family's `uname -r` names them
(<version>-<release>.<arch>, which is also the packages' NEVRA):

* GOOD: the machine kernel's series, next patch (6.18.44-fc-v1272 -> 6.18.45-1.el9.x86_64), which amdgpu-dkms
  builds for;
* BAD: the first series above both the machine's and the newest amdgpu kernel base the mirror serves, the 31.x
  lines' included (amdgpu 7.1.3 of 31.50 -> 7.2.0-1.el9.x86_64), which amdgpu-dkms fails to build for.

As RHEL 9's kernel.spec splits them: ``kernel`` (a meta package) requires kernel-core and kernel-modules of its
version-release. kernel-core carries /usr/lib/modules/<k>/vmlinuz, System.map and config (kernel-install copies them
to /boot); its %posttrans runs `kernel-install add <k> /lib/modules/<k>/vmlinuz` (the lab's 20-grub.install writes
the BLS entry, 95-kernel-hooks.install runs /etc/kernel/postinst.d, where amdgpu-dkms's hook builds the module) and
its %preun `kernel-install remove <k>`. kernel-core, kernel-modules and kernel-devel provide installonlypkg(kernel)
or installonlypkg(kernel-module), so dnf installs them beside the running kernel's instead of replacing them.
kernel-devel and kernel-modules-extra are kernel_packages of the kernel.

kernel_packages: the packages of a kernel that AMD's RHEL instructions install (kernel-headers, kernel-devel,
kernel-devel-matched, kernel-modules-extra of $(uname -r)), for the machine's kernel too.
"""

from __future__ import annotations

import re

from rocm_fleet.lab.mirror.catalog import DRIVER_LINES
from rocm_fleet.lab.mirror.kernel_packages import kernel_numbers, newest_driver_base
from rocm_fleet.lab.mirror.rpm_amd import dist_tag
from rocm_fleet.lab.mirror.rpms import RpmSpec

ARCH = "x86_64"
DISTRO_MAINTAINER = "rocm-fleet lab"
CONFIG = b"CONFIG_MODULES=y\nCONFIG_MODULE_SIG=y\nCONFIG_DRM_AMDGPU=m\n"


def lab_kernels(machine: str, system) -> dict[str, str]:
    """{"good": release, "bad": release} of ``system`` (a RHEL-family lab system) for the lab machine's kernel."""
    major, minor, patch = kernel_numbers(machine)
    tag = dist_tag(system)
    # The 31.x lines count here: an RPM host runs the Core SDK, whose driver is one of them.
    bad_major, bad_minor = max((major, minor), newest_driver_base(DRIVER_LINES))
    return {
        "good": f"{major}.{minor}.{patch + 1}-1.{tag}.{ARCH}",
        "bad": f"{bad_major}.{bad_minor + 1}.0-1.{tag}.{ARCH}",
    }


def rpm_kernel_version(kernel: str) -> tuple[str, str]:
    """(version, release) of the lab's kernel packages of ``kernel``. A RHEL-family release is its packages'
    version-release.arch ("5.14.0-570.12.1.el9_6.x86_64" -> ("5.14.0", "570.12.1.el9_6")); any other its leading
    numbers and the rest with rpm's separators ("6.1.0-28-amd64" -> ("6.1.0", "28_amd64"))."""
    rhel = re.match(rf"^(\d+\.\d+\.\d+)-(.+)\.{ARCH}$", kernel)
    if rhel:
        return rhel.group(1), rhel.group(2)
    match = re.match(r"^(\d+(?:\.\d+)*)(?:[-.](.+))?$", kernel)
    if not match:
        raise ValueError(f"unexpected kernel release {kernel!r}")
    return match.group(1), re.sub(r"[^A-Za-z0-9._+~]", "_", match.group(2) or "1")


def _uname_evr(kernel: str) -> str:
    """What <name>-uname-r provides: the RHEL family's `uname -r`, else the rpm version-release of the kernel."""
    return kernel if kernel.endswith(f".{ARCH}") else "-".join(rpm_kernel_version(kernel))


def kernel_packages(kernel: str, system) -> list[RpmSpec]:
    """kernel-headers, kernel-devel, kernel-devel-matched and kernel-modules-extra of ``kernel``, each also providing
    <name>-<kernel> (what AMD's `dnf install kernel-devel-$(uname -r)` asks for). kernel-devel carries the header
    tree the lab's DKMS build looks for and, standing in for kernel-core (no package of the machine's kernel), the
    /lib/modules/<kernel>/build link."""
    version, release = rpm_kernel_version(kernel)
    tree = f"/usr/src/kernels/{kernel}"
    common = {"license": "GPL-2.0-only", "url": "https://www.kernel.org/", "vendor": DISTRO_MAINTAINER}
    devel = RpmSpec(
        "kernel-devel",
        version,
        release,
        f"Development package for building kernel modules to match the {kernel} kernel (rocm-fleet lab)",
        provides=[f"kernel-devel-{kernel}", f"kernel-devel-uname-r = {_uname_evr(kernel)}", "installonlypkg(kernel)"],
        files={
            f"{tree}/Makefile": f"# rocm-fleet lab stub\nKERNELRELEASE = {kernel}\n".encode(),
            f"{tree}/include/config/kernel.release": f"{kernel}\n".encode(),
            f"{tree}/include/generated/utsrelease.h": f'#define UTS_RELEASE "{kernel}"\n'.encode(),
        },
        symlinks={f"/usr/lib/modules/{kernel}/build": tree},
        **common,
    )
    headers = RpmSpec(
        "kernel-headers",
        version,
        release,
        f"Header files for the Linux kernel for use by glibc (rocm-fleet lab, {kernel})",
        provides=[f"kernel-headers-{kernel}"],
        files={f"/usr/include/linux/rocm-fleet-lab-{kernel}.h": b"/* rocm-fleet lab: the kernel's uapi headers */\n"},
        **common,
    )
    matched = RpmSpec(
        "kernel-devel-matched",
        version,
        release,
        f"Meta package to install matching core and devel packages for the {kernel} kernel (rocm-fleet lab)",
        provides=[f"kernel-devel-matched-{kernel}"],
        requires=[f"kernel-devel = {version}-{release}"],
        **common,
    )
    extra = RpmSpec(
        "kernel-modules-extra",
        version,
        release,
        f"Extra kernel modules to match the {kernel} kernel (rocm-fleet lab)",
        provides=[
            f"kernel-modules-extra-{kernel}",
            f"kernel-modules-extra-uname-r = {_uname_evr(kernel)}",
            "installonlypkg(kernel-module)",
        ],
        files={f"/usr/lib/modules/{kernel}/extra/rocm-fleet-lab-extra": b"rocm-fleet lab: the extra modules\n"},
        **common,
    )
    return [headers, devel, matched, extra]


def kernel_core(kernel: str) -> RpmSpec:
    version, release = rpm_kernel_version(kernel)
    modules = f"/usr/lib/modules/{kernel}"
    return RpmSpec(
        "kernel-core",
        version,
        release,
        f"The Linux kernel {kernel}, core files (rocm-fleet lab stand-in; boots only in the lab)",
        license="GPL-2.0-only",
        url="https://www.kernel.org/",
        vendor=DISTRO_MAINTAINER,
        provides=["installonlypkg(kernel)", f"kernel-uname-r = {_uname_evr(kernel)}"],
        files={
            f"{modules}/vmlinuz": f"rocm-fleet lab kernel image {kernel}\n".encode(),
            f"{modules}/System.map": b"",
            f"{modules}/config": CONFIG,
            f"{modules}/modules.builtin": b"",
            f"{modules}/modules.builtin.modinfo": b"",
        },
        scripts={
            # kernel.spec's %posttrans core and %preun core.
            "posttrans": f"#!/bin/sh\n/bin/kernel-install add {kernel} /lib/modules/{kernel}/vmlinuz || exit $?\n",
            "prerm": f"#!/bin/sh\n/bin/kernel-install remove {kernel} /lib/modules/{kernel}/vmlinuz || exit $?\n",
        },
    )


def kernel_modules(kernel: str) -> RpmSpec:
    version, release = rpm_kernel_version(kernel)
    return RpmSpec(
        "kernel-modules",
        version,
        release,
        f"Kernel modules to match the {kernel} core kernel (rocm-fleet lab: amdgpu comes from DKMS only)",
        license="GPL-2.0-only",
        url="https://www.kernel.org/",
        vendor=DISTRO_MAINTAINER,
        requires=[f"kernel-core = {version}-{release}"],
        provides=["installonlypkg(kernel-module)", f"kernel-modules-uname-r = {_uname_evr(kernel)}"],
        files={f"/usr/lib/modules/{kernel}/modules.order": b"", f"/usr/lib/modules/{kernel}/kernel/.lab-kernel": b""},
        scripts={"posttrans": f"#!/bin/sh\n/sbin/depmod -a {kernel} 2>/dev/null || true\n"},
    )


def kernel_meta(kernel: str) -> RpmSpec:
    version, release = rpm_kernel_version(kernel)
    return RpmSpec(
        "kernel",
        version,
        release,
        f"The Linux kernel {kernel} (rocm-fleet lab stand-in; the meta package of kernel-core and kernel-modules)",
        license="GPL-2.0-only",
        url="https://www.kernel.org/",
        vendor=DISTRO_MAINTAINER,
        requires=[f"kernel-core = {version}-{release}", f"kernel-modules = {version}-{release}"],
    )


def update_packages(machine: str, system) -> dict[str, list[RpmSpec]]:
    """{"baseos": [...], "appstream": [...]}: GOOD's and BAD's packages, where the distribution serves them."""
    baseos, appstream = [], []
    for kernel in lab_kernels(machine, system).values():
        extra = {spec.name: spec for spec in kernel_packages(kernel, system)}
        baseos += [kernel_meta(kernel), kernel_core(kernel), kernel_modules(kernel), extra["kernel-modules-extra"]]
        appstream.append(extra["kernel-devel"])
    return {"baseos": baseos, "appstream": appstream}
