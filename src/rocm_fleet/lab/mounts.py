"""Mount bookkeeping: what is mounted under a directory, and taking it all down."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


def _unescape(field: str) -> str:
    # mountinfo escapes blanks, tabs, newlines and backslashes as octal.
    return field.encode().decode("unicode_escape") if "\\" in field else field


def mounts_under(directory: Path, mountinfo: str = "/proc/self/mountinfo") -> list[str]:
    """Mount points at or below ``directory``, deepest first (the order to unmount them)."""
    prefix = str(Path(directory).resolve())
    found = []
    with open(mountinfo) as handle:
        for line in handle:
            mount_point = _unescape(line.split()[4])
            if mount_point == prefix or mount_point.startswith(prefix + "/"):
                found.append(mount_point)
    # Mounts stacked on one point come out in mount order; reverse so the top one goes first.
    found.reverse()
    return sorted(found, key=lambda point: point.count("/"), reverse=True)


def is_mount_point(path: Path) -> bool:
    return str(Path(path).resolve()) in mounts_under(path)


def unmount_all_under(directory: Path) -> list[str]:
    """Unmount everything at or below ``directory``; return what could not be unmounted."""
    for _attempt in range(3):
        remaining = mounts_under(directory)
        if not remaining:
            return []
        for mount_point in remaining:
            result = subprocess.run(["umount", mount_point], capture_output=True)
            if result.returncode != 0 and os.path.ismount(mount_point):
                # Something still holds it (a dying process): detach now, it goes when released.
                subprocess.run(["umount", "--lazy", mount_point], capture_output=True)
    return mounts_under(directory)
