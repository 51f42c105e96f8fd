"""The lab layer: a small overlay layer above the base with the lab's stand-ins.

The stand-ins replace what must not touch the machine's kernel or what has no
meaning without a boot loader (update-grub, modprobe), and add the boot shim that
systemd-nspawn starts before the host's systemd (guest/boot). The layer
is named by a hash of its content, so a changed stand-in gives a new layer that
hosts pick up at their next mount, and a running host's layer never changes.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

from rocm_fleet.lab import paths

# guest file -> where it lands inside the host, and its mode.
LAYER_FILES = {
    "boot": ("usr/local/lib/rocm-fleet-lab/boot", 0o755),
    "grub-mkconfig": ("usr/sbin/grub-mkconfig", 0o755),
    # grub-common's environment block tools: GRUB_DEFAULT=saved boots what they store.
    "grub-editenv": ("usr/bin/grub-editenv", 0o755),
    "grub-set-default": ("usr/sbin/grub-set-default", 0o755),
    "grub-reboot": ("usr/sbin/grub-reboot", 0o755),
    # grub2-common's kernel hooks: a kernel package's postinst/postrm runs update-grub through them.
    "kernel-hook-update-grub": ("etc/kernel/postinst.d/zz-update-grub", 0o755),
    "default-grub": ("etc/default/grub", 0o644),
    # PATH puts /usr/local/sbin first for root and in sudo's secure_path.
    "modprobe": ("usr/local/sbin/modprobe", 0o755),
    # /usr/local/bin: the login user's PATH has no sbin, and kmod ships /bin/lsmod too.
    "lsmod": ("usr/local/bin/lsmod", 0o755),
    # No udev daemon: trigger asks the supervisor to apply the host's rules (rocm_fleet.lab.udev);
    # test and verify run the distribution's real /usr/bin/udevadm, which it does not hide.
    "udevadm": ("usr/local/sbin/udevadm", 0o755),
}
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
LINKS = {
    "usr/sbin/update-grub": "grub-mkconfig",
    "etc/kernel/postrm.d/zz-update-grub": "../postinst.d/zz-update-grub",
    "usr/local/sbin/rmmod": "modprobe-r",
}


def _kernel_release() -> str:
    return os.uname().release


def layer_hash() -> str:
    # This file's own text counts too: it decides where the files land.
    digest = hashlib.sha256(_kernel_release().encode() + Path(__file__).read_bytes())
    for name in sorted(LAYER_FILES):
        digest.update(name.encode() + b"\0" + (paths.GUEST_FILES / name).read_bytes())
    for link, target in sorted(LINKS.items()):
        digest.update(f"{link}->{target}".encode())
    digest.update(UDEV_DROP_IN.encode() + "".join(UDEV_UNITS).encode())
    return digest.hexdigest()[:16]


def ensure_layer() -> Path:
    target = paths.state_dir() / "layers" / layer_hash()
    if (target / ".rocm-fleet-layer").exists():
        return target
    building = target.with_name(target.name + ".build")
    shutil.rmtree(building, ignore_errors=True)
    for name, (destination, mode) in LAYER_FILES.items():
        path = building / destination
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(paths.GUEST_FILES / name, path)
        path.chmod(mode)
    for link, target_name in LINKS.items():
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
    # grub-common ships it; roles drop their kernel parameters there.
    (building / "etc" / "default" / "grub.d").mkdir(parents=True)
    # community.general.modprobe reads modules.builtin of the running kernel.
    # usr/lib, not lib: lib is a symlink in the merged-/usr base and a directory here would hide it.
    modules = building / "usr" / "lib" / "modules" / _kernel_release()
    modules.mkdir(parents=True)
    for index in ("modules.builtin", "modules.order", "modules.dep"):
        (modules / index).touch()
    (building / ".rocm-fleet-layer").touch()
    building.rename(target)
    return target
