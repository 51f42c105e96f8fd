"""Finding what the lab left running, also after a crash or a kill -9.

A lab process is either a lab program of the controller (supervisor, the
systemd-nspawn of a host or the mirror server, recognised by its command line and
its lab directory) or a process inside a lab host, recognised by its root mount: an
overlay whose upper layer lies under the lab's state directory. The second test
holds inside the host, whose paths no longer mention the state directory. Each
host's cgroup (rocm_fleet.lab.nspawn) goes last, with whatever it still holds.
"""

from __future__ import annotations

import os
from pathlib import Path

from rocm_fleet.lab import nspawn, paths
from rocm_fleet.lab.mounts import unmount_all_under

LAB_PROGRAMS = (b"rocm_fleet.lab.supervisor", b"systemd-nspawn", b"rocm_fleet.lab.mirror")


def _root_is_lab_overlay(pid: int, state: str) -> bool:
    try:
        with open(f"/proc/{pid}/mountinfo") as handle:
            for line in handle:
                fields = line.split()
                if fields[4] != "/":
                    continue
                separator = fields.index("-")
                fstype, super_options = fields[separator + 1], fields[separator + 3]
                return fstype == "overlay" and f"upperdir={state}/" in super_options
    except (OSError, ValueError, IndexError):
        return False
    return False


def _is_lab_program(pid: int, state: str) -> bool:
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        environ = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return False
    if not any(program in cmdline for program in LAB_PROGRAMS):
        return False
    # Another lab (another state directory, e.g. a test's) is not ours to kill.
    # Whole paths only: /var/lib/rocm-fleet/lab must not match .../lab-molecule.
    arguments = cmdline.split(b"\0")
    return (
        any(arg == state.encode() or arg.startswith(state.encode() + b"/") for arg in arguments)
        or f"ROCM_FLEET_LAB_DIR={state}".encode() in environ.split(b"\0")
        or (state == paths.DEFAULT_STATE_DIR and b"ROCM_FLEET_LAB_DIR=" not in environ)
    )


def lab_processes(state_dir: Path | None = None) -> list[int]:
    state = str((state_dir or paths.state_dir()).resolve())
    me = os.getpid()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == me:
            continue
        pid = int(entry)
        if _is_lab_program(pid, state) or _root_is_lab_overlay(pid, state):
            found.append(pid)
    return found


def kill_lab_processes(state_dir: Path | None = None, timeout: float = 5) -> list[int]:
    """SIGKILL every lab process until none is left; return the ones that would not go."""
    return nspawn.kill_until_gone(lambda: lab_processes(state_dir), timeout, reap=True)


def remove_lab_cgroups(state_dir: Path | None = None) -> list[int]:
    """Kill what is left in the lab's cgroups, remove them and nspawn's leftovers; return pids that stayed."""
    try:
        directories = nspawn.lab_cgroups(state_dir)
    except nspawn.EngineMissing:
        return []
    remaining = nspawn.kill_cgroups(directories)
    nspawn.remove_cgroups(directories)
    for top in {directory.parent for directory in directories}:
        try:
            top.rmdir()  # rocm-fleet-lab itself, once no lab uses it
        except OSError:
            pass
    for leftover in nspawn.PROPAGATE.glob(f"lab-{nspawn.lab_id(state_dir)}-*"):
        try:
            leftover.rmdir()
        except OSError:
            pass
    return remaining


def remove_lab_mounts(state_dir: Path | None = None) -> list[str]:
    return unmount_all_under(state_dir or paths.state_dir())
