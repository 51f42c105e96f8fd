"""Installed kernels of a lab host, the one a boot runs, and whether amdgpu loads into it.

All hosts share the machine's kernel (``uname -r``): its modules are not in the host's
root, so its in-tree amdgpu is taken as present, as before. Any other kernel is one the
host installed (the ``new-kernel`` fault, as a kernel upgrade leaves it):
/boot/vmlinuz-<k>, /boot/initrd.img-<k> and /usr/lib/modules/<k>/ (on a RHEL-family host
kernel-core's /usr/lib/modules/<k>/vmlinuz, which kernel-install copies to /boot). A boot runs
the kernel of the boot loader's default entry (/proc/cmdline's BOOT_IMAGE); amdgpu loads into it only if
/usr/lib/modules/<k> has one (modprobe looks in updates/ before kernel/), and with Secure
Boot on only if the module is in-tree (signed by the distribution's key, in the built-in
keyring) or signed by a certificate of shim's MOK list.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

from rocm_fleet.lab import modsign

MODULE_DIRS = ("updates/dkms", "kernel/drivers/gpu/drm/amd/amdgpu")


def machine_kernel() -> str:
    return os.uname().release


def booted_kernel(cmdline: str) -> str:
    """The kernel release a boot with this /proc/cmdline runs."""
    match = re.match(r"BOOT_IMAGE=(?:\([^)]*\))?/(?:boot/)?vmlinuz-(\S+)", cmdline)
    return match.group(1) if match else machine_kernel()


def amdgpu_module(root: Path, kernel: str) -> Path | str | None:
    """The amdgpu.ko modprobe would load for ``kernel``, "in-tree" for the machine's own, None when absent."""
    for directory in MODULE_DIRS:
        found = sorted((root / "usr/lib/modules" / kernel / directory).glob("amdgpu.ko*"))
        if found:
            return found[0]
    return "in-tree" if kernel == machine_kernel() else None


def amdgpu_refusal(root: Path, kernel: str, secure_boot: bool, trusted_der: list[bytes]) -> str | None:
    """Why amdgpu cannot load into ``kernel`` (modprobe's message), None when it can."""
    module = amdgpu_module(root, kernel)
    if module is None:
        return f"modprobe: FATAL: Module amdgpu not found in directory /lib/modules/{kernel}"
    out_of_tree = isinstance(module, Path) and "updates" in module.relative_to(root).parts
    if secure_boot and out_of_tree and not modsign.signed_by_any(module.read_bytes(), trusted_der):
        return modsign.KEY_REJECTED
    return None


def next_kernel_release(current: str) -> str:
    """A release that sorts above ``current`` as Debian's next ABI would (6.1.0-18-amd64 -> 6.1.0-19-amd64)."""
    match = re.match(r"^(\d+\.\d+\.\d+)-(\d+)(-.+)?$", current)
    if match:
        return f"{match.group(1)}-{int(match.group(2)) + 1}{match.group(3) or '-amd64'}"
    major, minor = (re.findall(r"\d+", current) + ["0", "0"])[:2]
    return f"{major}.{int(minor) + 1}.0-1-amd64"


def install_kernel(root: Path, release: str, with_amdgpu: bool, boot_loader: str = "grub") -> None:
    """What installing linux-image-<release> leaves, plus DKMS's autoinstall of amdgpu when asked.

    ``boot_loader`` "bls": what kernel-core's files leave instead, before its scriptlet runs
    kernel-install (the image, System.map and config in the modules directory, nothing in /boot).
    With ``with_amdgpu`` the DKMS build of every installed amdgpu version is made for the new
    kernel too (dkms autoinstall); without DKMS the kernel's in-tree amdgpu.ko is there instead.
    """
    modules = root / "usr/lib/modules" / release
    (modules / "kernel").mkdir(parents=True, exist_ok=True)
    config = "CONFIG_MODULES=y\nCONFIG_MODULE_SIG=y\nCONFIG_DRM_AMDGPU=m\n"
    if boot_loader == "bls":
        for name in ("vmlinuz", "System.map", "modules.builtin", "modules.builtin.modinfo"):
            (modules / name).write_bytes(b"")
        (modules / "config").write_text(config)
    else:
        boot = root / "boot"
        boot.mkdir(parents=True, exist_ok=True)
        for name in (f"vmlinuz-{release}", f"initrd.img-{release}", f"System.map-{release}"):
            (boot / name).write_bytes(b"")
        (boot / f"config-{release}").write_text(config)
    (modules / "modules.dep").write_text("")
    (modules / "modules.order").write_text("")
    if not with_amdgpu:
        return
    built = sorted((root / "var/lib/dkms/amdgpu").glob(f"*/{machine_kernel()}/x86_64/module/amdgpu.ko*"))
    if not built:
        in_tree = modules / MODULE_DIRS[1] / "amdgpu.ko"
        in_tree.parent.mkdir(parents=True, exist_ok=True)
        in_tree.write_text(f"vermagic={release} SMP preempt mod_unload modversions\n")
        return
    for stub in built:
        version_dir = stub.parents[3]
        text = modsign.split_signature(stub.read_bytes())[0].decode(errors="replace")
        text = re.sub(r"^vermagic=\S+", f"vermagic={release}", text, flags=re.MULTILINE)
        target = version_dir / release / "x86_64/module" / stub.name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        (modules / "updates/dkms").mkdir(parents=True, exist_ok=True)
        shutil.copyfile(target, modules / "updates/dkms" / stub.name)


def remove_kernel(root: Path, release: str) -> None:
    for name in ("vmlinuz", "initrd.img", "System.map", "config"):
        (root / "boot" / f"{name}-{release}").unlink(missing_ok=True)
    (root / "boot" / f"initramfs-{release}.img").unlink(missing_ok=True)
    shutil.rmtree(root / "usr/lib/modules" / release, ignore_errors=True)
    for tree in (root / "var/lib/dkms/amdgpu").glob(f"*/{release}"):
        shutil.rmtree(tree, ignore_errors=True)
