"""First process of a lab host boot, pid 1 of the host's new namespaces.

Run by the supervisor through ``unshare --mount --uts --ipc --pid --fork``. It
mounts the host's kernel view (its own /proc, a writable copy of /proc/sys, the
generated /proc/cmdline and /proc/modules, the rendered /sys, /dev, a fresh /run)
on the overlay root, pivots into it, drops the capabilities that reach the
machine's kernel (module loading, the clock, raw I/O) and execs the guest init.
"""

from __future__ import annotations

import ctypes
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

SYS_PIVOT_ROOT = 155  # x86_64
MNT_DETACH = 2
PR_CAPBSET_DROP = 24
PR_SET_PDEATHSIG = 1
CAP_SYS_MODULE, CAP_SYS_RAWIO, CAP_SYS_TIME = 16, 17, 25
GUEST_INIT = "/usr/local/lib/rocm-fleet-lab/init"
CONTROL_MOUNT = "run/rocm-fleet-lab"
# Kernel interfaces that act on the machine itself: masked as Docker and LXC mask them.
MASKED_PROC = ("sysrq-trigger", "kcore", "kmsg", "timer_list")
GUEST_ENV = {
    "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "HOME": "/root",
    "LANG": "C.UTF-8",
}


def mount(*args: str) -> None:
    subprocess.run(["mount", *args], check=True)


def build_root(host_dir: Path, hostname: str) -> Path:
    root = host_dir / "root"
    run = host_dir / "run"
    mount("-t", "proc", "-o", "nosuid,nodev,noexec", "proc", str(root / "proc"))
    mount("--bind", str(run / "proc-sys"), str(root / "proc" / "sys"))
    for name in ("cmdline", "modules"):
        if not (root / "proc" / name).exists():
            continue  # a kernel without module support has no /proc/modules, and procfs takes no new files
        mount("--bind", str(run / name), str(root / "proc" / name))
        mount("-o", "remount,bind,ro", str(root / "proc" / name))
    for name in MASKED_PROC:
        if (root / "proc" / name).exists():
            mount("--bind", str(run / "dev" / "null"), str(root / "proc" / name))
    mount("--bind", str(run / "sys"), str(root / "sys"))
    mount("--bind", str(run / "dev"), str(root / "dev"))
    mount("-t", "devpts", "-o", "newinstance,ptmxmode=0666,mode=0620,gid=5", "devpts", str(root / "dev" / "pts"))
    mount("-t", "tmpfs", "-o", "nosuid,nodev,mode=1777", "shm", str(root / "dev" / "shm"))
    mount("-t", "tmpfs", "-o", "nosuid,nodev,mode=0755,size=64m", "run", str(root / "run"))
    (root / CONTROL_MOUNT).mkdir(parents=True)
    (root / "run" / "lock").mkdir(mode=0o1777)
    mount("--bind", str(host_dir / "control"), str(root / CONTROL_MOUNT))
    socket.sethostname(hostname)
    return root


def pivot_into(root: Path) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    os.chdir(root)
    # pivot_root(".", ".") stacks the old root on the new one; detaching it leaves only the host's root.
    if libc.syscall(SYS_PIVOT_ROOT, b".", b".") != 0:
        raise OSError(ctypes.get_errno(), "pivot_root failed")
    if libc.umount2(b".", MNT_DETACH) != 0:
        raise OSError(ctypes.get_errno(), "detaching the old root failed")
    os.chdir("/")


def drop_kernel_capabilities() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    for capability in (CAP_SYS_MODULE, CAP_SYS_RAWIO, CAP_SYS_TIME):
        if libc.prctl(PR_CAPBSET_DROP, capability, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), f"cannot drop capability {capability}")


def die_with_parent() -> None:
    """The host dies with unshare, which dies with the supervisor: a kill -9 there leaves nothing.

    (unshare --kill-child would do this, but util-linux 2.38 fails it at random with
    "sigprocmask unblock failed".) The setting survives the exec of the guest init.
    """
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def main(argv: list[str]) -> int:
    die_with_parent()
    host_dir, hostname = Path(argv[0]), argv[1]
    root = build_root(host_dir, hostname)
    pivot_into(root)
    drop_kernel_capabilities()
    os.execve(GUEST_INIT, [GUEST_INIT], GUEST_ENV)
    return 1  # not reached


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
