"""The lab layer: a small overlay layer above the base with the lab's stand-ins.

The stand-ins replace what must not touch the machine's kernel or what has no
meaning without a boot loader (update-grub, grubby, modprobe), and add the boot shim that
systemd-nspawn starts before the host's systemd (guest/boot). There is one layer per boot
loader (systems.LabSystem.boot_loader): a host gets its own family's boot tools and no
other's. A layer is named by a hash of its content, so a changed stand-in gives a new layer
that hosts pick up at their next mount, and a running host's layer never changes.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

from rocm_fleet.lab import paths

# guest file -> where it lands inside the host, and its mode: what every host gets, then the boot loader's.
COMMON_FILES = {
    "boot": ("usr/local/lib/rocm-fleet-lab/boot", 0o755),
    # PATH puts /usr/local/sbin first for root and in sudo's secure_path.
    "modprobe": ("usr/local/sbin/modprobe", 0o755),
    # /usr/local/bin: the login user's PATH has no sbin, and kmod ships /bin/lsmod too.
    "lsmod": ("usr/local/bin/lsmod", 0o755),
    # No udev daemon: trigger asks the supervisor to apply the host's rules (rocm_fleet.lab.udev);
    # test and verify run the distribution's real /usr/bin/udevadm, which it does not hide.
    "udevadm": ("usr/local/sbin/udevadm", 0o755),
}
BOOT_LOADER_FILES = {
    # Debian and Ubuntu: update-grub writes grub.cfg, which the lab boots (rocm_fleet.lab.kernelstate).
    "grub": {
        "grub-mkconfig": ("usr/sbin/grub-mkconfig", 0o755),
        # grub-common's environment block tools: GRUB_DEFAULT=saved boots what they store.
        "grub-editenv": ("usr/bin/grub-editenv", 0o755),
        "grub-set-default": ("usr/sbin/grub-set-default", 0o755),
        "grub-reboot": ("usr/sbin/grub-reboot", 0o755),
        # grub2-common's kernel hooks: a kernel package's postinst/postrm runs update-grub through them.
        "kernel-hook-update-grub": ("etc/kernel/postinst.d/zz-update-grub", 0o755),
        "default-grub": ("etc/default/grub", 0o644),
    },
    # The RHEL family: GRUB2's blscfg boots the Boot Loader Spec entries (rocm_fleet.lab.bls). The base's
    # kernel-install (systemd 252, as on RHEL 9) runs the RHEL plugins that write and remove them.
    "bls": {
        "grubby": ("usr/sbin/grubby", 0o755),
        "grub2-editenv": ("usr/bin/grub2-editenv", 0o755),
        "grub2-set-default": ("usr/sbin/grub2-set-default", 0o755),
        "grub2-reboot": ("usr/sbin/grub2-reboot", 0o755),
        "kernel-install-grub": ("usr/lib/kernel/install.d/20-grub.install", 0o755),
        "kernel-install-dracut": ("usr/lib/kernel/install.d/50-dracut.install", 0o755),
        "kernel-install-hooks": ("usr/lib/kernel/install.d/95-kernel-hooks.install", 0o755),
        # What Anaconda writes on a Rocky Linux 9 install.
        "default-grub-rhel": ("etc/default/grub", 0o644),
        "sysconfig-kernel": ("etc/sysconfig/kernel", 0o644),
    },
    # SLES: GRUB2 with grub.cfg and grubenv in /boot/grub2 (no BLS, no grub.d drop-ins); the grub tools are
    # upstream's under their grub2- names, which the Debian stand-ins follow when called so.
    "grub2": {
        "grub-mkconfig": ("usr/sbin/grub2-mkconfig", 0o755),
        "grub2-editenv": ("usr/bin/grub2-editenv", 0o755),
        "grub-set-default": ("usr/sbin/grub2-set-default", 0o755),
        "grub-reboot": ("usr/sbin/grub2-reboot", 0o755),
        # What the SLES 15 SP7 installer writes.
        "default-grub-sles": ("etc/default/grub", 0o644),
    },
}
BOOT_LOADERS = tuple(BOOT_LOADER_FILES)
# systemd-udevd does not run in a container: systemd decides that from a read-only /sys, which the
# lab's rendered /sys is not (the host writes partition modes into it), so the lab says it directly.
# It would also get the machine's kernel events: the hosts share the machine's network namespace.
UDEV_UNITS = (
    "systemd-udevd.service",
    "systemd-udevd-control.socket",
    "systemd-udevd-kernel.socket",
    "systemd-udev-trigger.service",
    "systemd-udev-settle.service",
)
UDEV_DROP_IN = (
    "# rocm-fleet lab (src/rocm_fleet/lab/layer.py): no udev daemon in a lab host.\n"
    "[Unit]\nConditionVirtualization=!container\n"
)
COMMON_LINKS = {"usr/local/sbin/rmmod": "modprobe-r"}
BOOT_LOADER_LINKS = {
    "grub": {
        "usr/sbin/update-grub": "grub-mkconfig",
        "etc/kernel/postrm.d/zz-update-grub": "../postinst.d/zz-update-grub",
    },
    # Debian's systemd adds a plugin no RHEL host has (it would offer /boot/initrd.img-<k>): masked as
    # kernel-install's documentation says, by a link to /dev/null in /etc.
    "bls": {"etc/kernel/install.d/85-initrd.install": "/dev/null"},
    "grub2": {},
}
# Directories the boot loader's packages ship empty.
BOOT_LOADER_DIRS = {
    # grub-common ships it; roles drop their kernel parameters there.
    "grub": ("etc/default/grub.d",),
    "bls": (),
    "grub2": (),
}


def _kernel_release() -> str:
    return os.uname().release


def layer_files(boot_loader: str) -> dict[str, tuple[str, int]]:
    return {**COMMON_FILES, **BOOT_LOADER_FILES[boot_loader]}


def layer_links(boot_loader: str) -> dict[str, str]:
    return {**COMMON_LINKS, **BOOT_LOADER_LINKS[boot_loader]}


def layer_hash(boot_loader: str) -> str:
    # This file's own text counts too: it decides where the files land.
    digest = hashlib.sha256(_kernel_release().encode() + Path(__file__).read_bytes() + boot_loader.encode())
    for name in sorted(layer_files(boot_loader)):
        digest.update(name.encode() + b"\0" + (paths.GUEST_FILES / name).read_bytes())
    for link, target in sorted(layer_links(boot_loader).items()):
        digest.update(f"{link}->{target}".encode())
    digest.update(UDEV_DROP_IN.encode() + "".join(UDEV_UNITS).encode())
    return digest.hexdigest()[:16]


def ensure_layer(boot_loader: str) -> Path:
    """The layer of hosts whose system boots with ``boot_loader`` (systems.LabSystem.boot_loader)."""
    if boot_loader not in BOOT_LOADER_FILES:
        raise ValueError(f"no lab layer for boot loader {boot_loader!r} (known: {', '.join(BOOT_LOADERS)})")
    target = paths.state_dir() / "layers" / layer_hash(boot_loader)
    if (target / ".rocm-fleet-layer").exists():
        return target
    building = target.with_name(target.name + ".build")
    shutil.rmtree(building, ignore_errors=True)
    for name, (destination, mode) in layer_files(boot_loader).items():
        path = building / destination
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(paths.GUEST_FILES / name, path)
        path.chmod(mode)
    for link, target_name in layer_links(boot_loader).items():
        path = building / link
        path.parent.mkdir(parents=True, exist_ok=True)
        if target_name == "modprobe-r":
            # rmmod NAME == modprobe -r NAME for the lab's purposes.
            path.write_text('#!/bin/sh\nexec /usr/local/sbin/modprobe -r "$@"\n')
            path.chmod(0o755)
        else:
            path.symlink_to(target_name)
    for unit in UDEV_UNITS:
        drop_in = building / "usr" / "lib" / "systemd" / "system" / f"{unit}.d" / "50-rocm-fleet-lab.conf"
        drop_in.parent.mkdir(parents=True)
        drop_in.write_text(UDEV_DROP_IN)
    for directory in BOOT_LOADER_DIRS[boot_loader]:
        (building / directory).mkdir(parents=True, exist_ok=True)
    # community.general.modprobe reads modules.builtin of the running kernel.
    # usr/lib, not lib: lib is a symlink in the merged-/usr base and a directory here would hide it.
    modules = building / "usr" / "lib" / "modules" / _kernel_release()
    modules.mkdir(parents=True)
    for index in ("modules.builtin", "modules.order", "modules.dep"):
        (modules / index).touch()
    (building / ".rocm-fleet-layer").touch()
    building.rename(target)
    return target
