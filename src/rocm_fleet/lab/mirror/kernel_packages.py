"""Kernel updates in the mirror's Debian part: faithful stand-ins of Debian's kernel packages.

Two kernels newer than the lab machine's (every lab host runs that one):

* GOOD: the next ABI of the machine kernel's own series (6.1.0-18-amd64 -> 6.1.0-19-amd64;
  6.18.44-... -> 6.18.45-1-amd64), which amdgpu-dkms builds for;
* BAD: the first series above both the machine's and the newest amdgpu kernel base the
  mirror serves (6.16 for amdgpu 6.16.13), which amdgpu-dkms fails to build for, as DKMS
  does on a kernel newer than the driver (mirror/scripts.py).

linux-image-<k> installs /boot/vmlinuz-<k>, System.map and config, /usr/lib/modules/<k>/
(no amdgpu of its own: as Ubuntu's image without linux-modules-extra, amdgpu comes from
DKMS only), and its postinst does what Debian's does: depmod, the initramfs, then the
/etc/kernel/postinst.d hooks (dkms autoinstall, zz-update-grub) with --exit-on-error, so a
failed DKMS build fails the package's configuration as on a real host. linux-headers-<k>
runs /etc/kernel/header_postinst.d the same way. Removal runs /etc/kernel/postrm.d.
"""

from __future__ import annotations

import platform
import re

from rocm_fleet.lab.mirror.catalog import RELEASES
from rocm_fleet.lab.mirror.debs import DebSpec
from rocm_fleet.lab.mirror.distro import kernel_headers_package

DEBIAN_MAINTAINER = "rocm-fleet lab <lab@rocm-fleet.invalid>"


def kernel_numbers(release: str) -> tuple[int, int, int]:
    match = re.match(r"^(\d+)\.(\d+)(?:\.(\d+))?", release)
    if not match:
        raise ValueError(f"unexpected kernel release {release!r}")
    return int(match.group(1)), int(match.group(2)), int(match.group(3) or 0)


def good_kernel(machine: str) -> str:
    debian = re.match(r"^(\d+\.\d+\.\d+)-(\d+)(-[a-z0-9]+)$", machine)
    if debian:
        return f"{debian.group(1)}-{int(debian.group(2)) + 1}{debian.group(3)}"
    major, minor, patch = kernel_numbers(machine)
    return f"{major}.{minor}.{patch + 1}-1-amd64"


def newest_driver_base(lines=()) -> tuple[int, int]:
    """The newest kernel series the releases' amdgpu builds for, and that of ``lines`` (catalog.DRIVER_LINES)."""
    modules = [release.driver.module_version for release in RELEASES] + [line.module_version for line in lines]
    return max(kernel_numbers(module)[:2] for module in modules)


def bad_kernel(machine: str) -> str:
    major, minor = max(kernel_numbers(machine)[:2], newest_driver_base())
    return f"{major}.{minor + 1}.0-1-amd64"


def lab_kernels(machine: str | None = None) -> dict[str, str]:
    """{"good": release, "bad": release} for the lab machine's kernel."""
    machine = machine or platform.release()
    return {"good": good_kernel(machine), "bad": bad_kernel(machine)}


def _upstream(release: str) -> str:
    return ".".join(str(n) for n in kernel_numbers(release))


def image_postinst(release: str) -> str:
    return f"""#!/bin/sh
# As Debian's linux-image postinst: modules index, initramfs, then the kernel hooks.
set -e
version={release}
image_path=/boot/vmlinuz-$version
[ "$1" = configure ] || exit 0
depmod -a -F /boot/System.map-$version $version 2>/dev/null || true
if [ ! -x /etc/kernel/postinst.d/initramfs-tools ]; then
    # initramfs-tools' hook, where the host has none: update-initramfs -c -k $version
    : > /boot/initrd.img-$version
fi
if [ -d /etc/kernel/postinst.d ]; then
    DEB_MAINT_PARAMS="$*" run-parts --report --exit-on-error --arg=$version \\
        --arg=$image_path /etc/kernel/postinst.d
fi
exit 0
"""


def image_postrm(release: str) -> str:
    return f"""#!/bin/sh
# As Debian's linux-image postrm: the kernel hooks (dkms, zz-update-grub), then what the package left.
set -e
version={release}
image_path=/boot/vmlinuz-$version
case "$1" in
    remove|purge)
        rm -f /boot/initrd.img-$version
        if [ -d /etc/kernel/postrm.d ]; then
            DEB_MAINT_PARAMS="$*" run-parts --report --arg=$version --arg=$image_path /etc/kernel/postrm.d
        fi
        rm -f /lib/modules/$version/modules.dep /lib/modules/$version/modules.alias \\
            /lib/modules/$version/modules.symbols
        [ "$1" = purge ] && rm -rf /lib/modules/$version
        ;;
esac
exit 0
"""


def headers_postinst(release: str) -> str:
    return f"""#!/bin/sh
# As Debian's linux-headers postinst: the header hooks (dkms builds its modules here).
set -e
version={release}
[ "$1" = configure ] || exit 0
if [ -d /etc/kernel/header_postinst.d ]; then
    DEB_MAINT_PARAMS="$*" run-parts --report --exit-on-error --arg=$version /etc/kernel/header_postinst.d
fi
exit 0
"""


def image_package(release: str) -> DebSpec:
    upstream = _upstream(release)
    return DebSpec(
        name=f"linux-image-{release}",
        version=f"{upstream}-1~lab",
        section="kernel",
        maintainer=DEBIAN_MAINTAINER,
        homepage="https://www.kernel.org/",
        description=f"Linux {upstream} for 64-bit PCs (rocm-fleet lab stand-in; boots only in the lab)",
        provides=["linux-image"],
        files={
            f"/boot/vmlinuz-{release}": f"rocm-fleet lab kernel image {release}\n".encode(),
            f"/boot/System.map-{release}": b"",
            f"/boot/config-{release}": b"CONFIG_MODULES=y\nCONFIG_MODULE_SIG=y\nCONFIG_DRM_AMDGPU=m\n",
            f"/usr/lib/modules/{release}/modules.order": b"",
            f"/usr/lib/modules/{release}/modules.builtin": b"",
            f"/usr/lib/modules/{release}/kernel/.lab-kernel": b"",
        },
        scripts={"postinst": image_postinst(release), "postrm": image_postrm(release)},
    )


def headers_package(release: str) -> DebSpec:
    spec = kernel_headers_package(release)
    spec.version = f"{_upstream(release)}-1~lab"
    spec.description = f"Header files for Linux {release} (rocm-fleet lab stand-in)"
    spec.scripts = {"postinst": headers_postinst(release)}
    return spec


def kernel_update_packages(machine: str | None = None) -> list[DebSpec]:
    """The image and headers of the GOOD and the BAD kernel."""
    return [
        spec for release in lab_kernels(machine).values() for spec in (image_package(release), headers_package(release))
    ]
