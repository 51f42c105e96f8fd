"""Booting a lab host with systemd-nspawn: its command line, its cgroup, its first process.

systemd-nspawn (Debian's ``systemd-container``) is the engine: it makes the host's
namespaces, its /dev, /run and cgroup, starts the host's first process and ends the
boot the way a machine does: ``systemctl reboot`` in the host makes nspawn exit 133,
a poweroff 0. The lab keeps what nspawn does not do: the first process is the lab's
boot shim (``guest/boot``), which lays the host's kernel view over nspawn's mounts and
then execs the host's own systemd as pid 1.

nspawn runs here without systemd on the machine: no machined (``--register=no``), no
scope unit (``--keep-unit``), so the lab gives each host a cgroup of its own
(``<cgroup2>/rocm-fleet-lab/<lab>/<host>``) that nspawn splits into ``supervisor`` and
``payload``, and the host's systemd manages ``payload``.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import time
from pathlib import Path

from rocm_fleet.lab import paths

NSPAWN = "systemd-nspawn"
BOOT_SHIM = "/usr/local/lib/rocm-fleet-lab/boot"
CONTROL_MOUNT = "/run/rocm-fleet-lab"
KERNEL_MOUNT = "/run/rocm-fleet-lab-kernel"
REBOOT_STATUS = 133  # nspawn's exit status when the container rebooted (systemd-nspawn(1))
CGROUP_TOP = "rocm-fleet-lab"
PROPAGATE = Path("/run/systemd/nspawn/propagate")
# The environment nspawn reads: systemd 257 in a Debian 13 host runs only on the unified hierarchy, and the
# machine may mount the v1 controllers next to it; /tmp stays what the host's own units make it.
ENVIRONMENT = {"SYSTEMD_NSPAWN_UNIFIED_HIERARCHY": "1", "SYSTEMD_NSPAWN_TMPFS_TMP": "0"}


class EngineMissing(RuntimeError):
    pass


def lab_id(state_dir: Path | None = None) -> str:
    """A short name for one lab (one state directory): two labs on a machine never share a cgroup or a name."""
    return hashlib.sha256(str((state_dir or paths.state_dir()).resolve()).encode()).hexdigest()[:8]


def machine_name(host: str, state_dir: Path | None = None) -> str:
    return f"lab-{lab_id(state_dir)}-{host}"[:64]


def require_engine() -> str:
    path = shutil.which(NSPAWN)
    if path is None:
        raise EngineMissing(
            "systemd-nspawn is not installed: lab hosts boot systemd with it; install Debian's systemd-container "
            "package (apt-get install systemd-container) and run the command again"
        )
    return path


def command(host: str, root: Path, control: Path, kernel: Path, state_dir: Path | None = None) -> list[str]:
    return [
        require_engine(),
        "--quiet",
        f"--directory={root}",
        f"--machine={machine_name(host, state_dir)}",
        f"--hostname={host}",
        "--register=no",
        "--keep-unit",
        "--console=pipe",
        "--link-journal=no",
        "--resolv-conf=off",
        "--timezone=off",
        # What the supervisor sends nspawn on stop reaches the host's systemd as a halt request.
        "--kill-signal=SIGRTMIN+3",
        f"--bind={control}:{CONTROL_MOUNT}",
        f"--bind={kernel}:{KERNEL_MOUNT}",
        BOOT_SHIM,
    ]


# -- cgroups -------------------------------------------------------------------------------------------------


def _mounts() -> list[tuple[str, str, str]]:
    found = []
    with open("/proc/self/mountinfo") as handle:
        for line in handle:
            fields = line.split()
            separator = fields.index("-")
            found.append((fields[4], fields[separator + 1], fields[separator + 3]))
    return found


def cgroup_roots() -> list[Path]:
    """The hierarchies a host gets a cgroup in: the unified one (required) and v1's name=systemd if mounted."""
    mounts = _mounts()
    unified = [Path(point) for point, fstype, _ in mounts if fstype == "cgroup2"]
    if not unified:
        raise EngineMissing("no cgroup2 hierarchy is mounted: systemd-nspawn boots lab hosts on the unified hierarchy")
    roots = [Path("/sys/fs/cgroup") if Path("/sys/fs/cgroup") in unified else unified[0]]
    roots += [Path(point) for point, fstype, options in mounts if fstype == "cgroup" and "name=systemd" in options]
    return roots


def lab_cgroups(state_dir: Path | None = None) -> list[Path]:
    return [root / CGROUP_TOP / lab_id(state_dir) for root in cgroup_roots()]


def host_cgroups(host: str, state_dir: Path | None = None) -> list[Path]:
    return [directory / host for directory in lab_cgroups(state_dir)]


def prepare_cgroups(directories: list[Path]) -> None:
    for directory in directories:
        directory.mkdir(parents=True, exist_ok=True)


def enter_cgroups(directories: list[Path]) -> None:
    """Move the calling process into ``directories`` (run in the child before it execs nspawn)."""
    for directory in directories:
        (directory / "cgroup.procs").write_text("0\n")


def _procs(directory: Path) -> list[int]:
    pids = []
    for procs in directory.rglob("cgroup.procs"):
        try:
            pids += [int(pid) for pid in procs.read_text().split()]
        except (OSError, ValueError):
            continue
    return pids


def kill_until_gone(find, timeout: float = 5, reap: bool = False) -> list[int]:
    """SIGKILL what ``find()`` lists until it lists nothing; return what is left. ``reap``: wait for those that
    are our own children, so they do not linger as zombies."""
    deadline = time.monotonic() + timeout
    while True:
        remaining = find()
        if not remaining or time.monotonic() > deadline:
            return remaining
        for pid in remaining:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            try:
                if reap:
                    os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                pass
        time.sleep(0.05)


def kill_cgroups(directories: list[Path], timeout: float = 5) -> list[int]:
    """SIGKILL every process left in ``directories``; return the ones still there at the deadline."""
    return kill_until_gone(
        lambda: sorted({pid for directory in directories if directory.is_dir() for pid in _procs(directory)}), timeout
    )


def remove_cgroups(directories: list[Path]) -> None:
    """rmdir the (empty) cgroups, deepest first; one still in use stays."""
    for directory in directories:
        if not directory.is_dir():
            continue
        for path in sorted((p for p in directory.rglob("*") if p.is_dir()), key=lambda p: len(p.parts), reverse=True):
            try:
                path.rmdir()
            except OSError:
                pass
        try:
            directory.rmdir()
        except OSError:
            pass


def forget_machine(host: str, state_dir: Path | None = None) -> None:
    """nspawn leaves its propagation directory where /run is not a tmpfs (it will not delete on a disk)."""
    try:
        (PROPAGATE / machine_name(host, state_dir)).rmdir()
    except OSError:
        pass


# -- the host's first process --------------------------------------------------------------------------------


def _pid_namespace(pid: int) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/ns/pid")
    except OSError:
        return None


def container_init(nspawn_pid: int) -> int | None:
    """The host's pid 1 seen from the machine: nspawn's child in another pid namespace (None before it exists)."""
    ours = _pid_namespace(os.getpid())
    try:
        children = Path(f"/proc/{nspawn_pid}/task/{nspawn_pid}/children").read_text().split()
    except OSError:
        return None
    for child in children:
        namespace = _pid_namespace(int(child))
        if namespace is not None and namespace != ours:
            return int(child)
    return None
