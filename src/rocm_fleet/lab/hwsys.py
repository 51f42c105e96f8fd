"""A lab host's hardware as the kernel shows it: the rendered /sys tree and /dev nodes.

The hardware profile (rocm_fleet.hardware) says what is in the box; the host's
fault state says what broke; the boot decides whether amdgpu is loaded and with
which options. This module turns the three into a /sys tree and device nodes.
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import stat
from pathlib import Path

from rocm_fleet.lab import udev
from rocm_fleet.lab.kernelstate import AMDGPU

# Kernel (devtmpfs) modes before udev: amdkfd's kfd_devnode() asks for 0666 (DEVMODE),
# DRM nodes get devtmpfs's 0600; both root:root.
KERNEL_NODE_MODES = {"kfd": 0o666}
DEFAULT_NODE_MODE = 0o600
# Rendered /sys entries a re-render leaves alone: fs/cgroup carries the host's cgroup mount.
KEPT_ENTRIES = ("fs",)


def load_faulted_profile(profile_name: str, faults: dict):
    """The profile after the host's injected faults (GPU gone, XGMI link down, health and boot faults)."""
    from rocm_fleet.hardware.profile import load_profile
    from rocm_fleet.lab.health_state import apply_health_faults

    profile = load_profile(profile_name)
    for index in faults.get("removed_gpus", []):
        profile = profile.without_gpu(index)
    for first, second in faults.get("degraded_links", []):
        profile = profile.with_link(first, second, "PCIE")
    return apply_health_faults(profile, faults)


def gpu_count(profile_name: str, faults: dict) -> int:
    return len(load_faulted_profile(profile_name, faults).gpus)


def render_sys(
    profile_name: str, faults: dict, amdgpu: dict | None, destination: Path, partition_state: dict | None = None
) -> list[dict]:
    """Render /sys into ``destination`` (replacing its content in place); return the GPU device nodes.

    ``amdgpu`` is None when the driver is not loaded, else {"version": str|None, "options": {k: v}}.
    ``partition_state``: the host's partition modes (rocm_fleet.lab.partitions), None for the profile's.
    Content is replaced in place because ``destination`` is bind-mounted into the running host, and
    ``fs`` (the mount point of the host's cgroup, see guest/boot) is never touched.
    """
    try:
        from rocm_fleet.hardware.render import render_profile
    except ImportError:  # renderer not installed: a host with an empty /sys still boots
        render_profile = _render_nothing
    profile = load_faulted_profile(profile_name, faults).with_driver_loaded(amdgpu is not None)
    if partition_state:
        from rocm_fleet.lab.partitions import apply_modes

        profile = apply_modes(profile, partition_state)
    staging = destination.with_name(destination.name + ".new")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    result = render_profile(profile, staging)
    nodes = [_normalize_node(node) for node in getattr(result, "device_nodes", result) or []]
    rendered = staging / "sys"
    if amdgpu is not None:
        _write_module(rendered / "module" / AMDGPU, amdgpu)
    destination.mkdir(parents=True, exist_ok=True)
    (destination / "fs" / "cgroup").mkdir(parents=True, exist_ok=True)
    # Each entry is swapped for its new version in one renameat2(RENAME_EXCHANGE): a reader (gpu facts, a drift)
    # finds the old tree or the new one, never /sys without its devices, as it would for as long as deleting a
    # 64-partition tree takes. The old versions end up in the staging tree, which goes last.
    new = [child for child in rendered.iterdir() if child.name not in KEPT_ENTRIES]
    for child in new:
        target = destination / child.name
        if target.exists() or target.is_symlink():
            _exchange(child, target)
        else:
            child.rename(target)
    names = {child.name for child in new}
    for child in list(destination.iterdir()):
        if child.name not in KEPT_ENTRIES and child.name not in names:
            child.rename(rendered / child.name)  # what the new render no longer has
    shutil.rmtree(staging, ignore_errors=True)
    return nodes


_RENAME_EXCHANGE = 2  # linux/fs.h
_AT_FDCWD = -100


def _exchange(first: Path, second: Path) -> None:
    """Swap two paths atomically (renameat2(2), RENAME_EXCHANGE; Linux 3.15, glibc 2.28)."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.renameat2(_AT_FDCWD, os.fsencode(first), _AT_FDCWD, os.fsencode(second), _RENAME_EXCHANGE) != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"renameat2 RENAME_EXCHANGE {first} {second}: {os.strerror(error)}")


def _render_nothing(_profile, root: Path) -> list:
    for directory in ("bus/pci/devices", "class/drm", "module", "devices"):
        (root / "sys" / directory).mkdir(parents=True, exist_ok=True)
    return []


def _write_module(module_dir: Path, amdgpu: dict) -> None:
    parameters = module_dir / "parameters"
    parameters.mkdir(parents=True, exist_ok=True)
    for key, value in amdgpu.get("options", {}).items():
        (parameters / key).write_text(f"{value}\n")
    (module_dir / "initstate").write_text("live\n")
    (module_dir / "refcnt").write_text("0\n")
    (module_dir / "holders").mkdir(exist_ok=True)
    version_file = module_dir / "version"
    if amdgpu.get("version"):
        version_file.write_text(f"{amdgpu['version']}\n")
    elif version_file.exists():
        # The in-tree driver has no version file; only an out-of-tree (DKMS) build sets one.
        version_file.unlink()


def _normalize_node(node) -> dict:
    """Accept the renderer's node records as mappings or objects with the same field names."""
    if not isinstance(node, dict):
        node = {key: getattr(node, key) for key in dir(node) if not key.startswith("_")}
    path = str(node["path"]).removeprefix("/dev/").lstrip("/")
    return {
        "path": path,
        "major": int(node["major"]),
        "minor": int(node["minor"]),
    }


def sync_gpu_nodes(dev: Path, gpu_nodes: list[dict], root: Path, sys_dir: Path, retrigger: bool = False) -> None:
    """Make /dev/kfd and /dev/dri/* exactly the renderer's list (a vanished GPU loses its nodes).

    A new node gets the kernel's mode, then what the host's udev rules say (rocm_fleet.lab.udev),
    judged on the rendered ``sys_dir``; a node that stays keeps the ownership and mode it has, unless
    ``retrigger`` replays the rules (udevadm trigger). ``dev`` is the running host's own /dev (the
    tmpfs systemd-nspawn made), reached from the machine through /proc/<host pid 1>/root.
    """
    wanted = {node["path"]: node for node in gpu_nodes}
    existing = [dev / "kfd"] + (sorted((dev / "dri").iterdir()) if (dev / "dri").is_dir() else [])
    for path in existing:
        relative = str(path.relative_to(dev))
        if (path.exists() or path.is_symlink()) and relative not in wanted and not path.is_dir():
            path.unlink()
    rules = udev.load_rules(root) if wanted else []
    for relative, node in wanted.items():
        path = dev / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists() and stat.S_ISCHR(path.stat().st_mode):
            current = path.stat()
            if os.major(current.st_rdev) == node["major"] and os.minor(current.st_rdev) == node["minor"]:
                if retrigger:
                    _apply_udev(path, relative, root, sys_dir, rules)
                continue  # keep ownership and mode a udev rule or a role gave it
            path.unlink()
        _mknod(path, node["major"], node["minor"], DEFAULT_NODE_MODE)
        _apply_udev(path, relative, root, sys_dir, rules)


def _apply_udev(path: Path, relative: str, root: Path, sys_dir: Path, rules) -> None:
    name = Path(relative).name
    subsystem = "kfd" if name == "kfd" else "drm"
    permissions = udev.evaluate(rules, udev.device_from_sys(sys_dir, subsystem, name))
    uid, gid, mode = udev.node_ownership(root, permissions, KERNEL_NODE_MODES.get(name))
    os.chown(path, uid, gid)
    os.chmod(path, mode)


def _mknod(path: Path, major: int, minor: int, mode: int) -> None:
    if path.exists():
        return
    os.mknod(path, stat.S_IFCHR | mode, os.makedev(major, minor))
    os.chmod(path, mode)  # mknod applies the umask


def read_json(path: Path, default):
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return default
