"""Run a real tool against a rendered sysfs tree, in a private mount namespace.

``unshare -m`` gives the command its own mount table (propagation private, so
nothing leaks to the host); ``<root>/sys`` is bind-mounted over ``/sys`` there.
The rendered tree uses relative symlinks only, so every link resolves inside
the bind mount. Needs root (CAP_SYS_ADMIN) and util-linux ``unshare``.

``run_in_tool_root`` runs a tool of another Debian release the same way, inside
that release's root (``lab/toolroots.py``), with what the tools open besides
/sys: /proc, a /dev of the device nodes the driver would create, /dev/shm
(rocm_smi_lib 6.x keeps its per-device mutexes there) and a private /tmp. The
tool root itself is mounted read-only, so no run changes the cached root.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess

_MOUNT_AND_EXEC = 'mount --bind "$0/sys" /sys && exec "$@"'
# Character devices every process expects (mem.c: 1:3 null, 1:5 zero, 1:7 full, 1:8 random, 1:9 urandom).
_BASIC_DEVICES = (("null", 1, 3), ("zero", 1, 5), ("full", 1, 7), ("random", 1, 8), ("urandom", 1, 9))


def sandbox_problem():
    """Why tools cannot run against rendered trees here, or None when they can."""
    if os.geteuid() != 0:
        return "needs root for mount namespaces"
    if shutil.which("unshare") is None:
        return "util-linux unshare is missing"
    return None


def run_with_sysfs(root, argv, timeout=120):
    """Run ``argv`` with ``<root>/sys`` mounted over ``/sys``; return the CompletedProcess."""
    command = ["unshare", "--mount", "--propagation", "private", "sh", "-c", _MOUNT_AND_EXEC, str(root), *argv]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)


def tool_root_script(tool_root, sys_root, device_nodes=()):
    """The shell script that builds the tool's view of the machine, then execs the tool in it."""
    new = shlex.quote(str(tool_root))
    steps = [
        "set -e",
        f"mount --bind {new} {new}",
        f"mount -o remount,bind,ro {new}",
        f"mount --rbind {shlex.quote(str(sys_root))}/sys {new}/sys",
        f"mount -t proc proc {new}/proc",
        f"mount -t tmpfs -o mode=0755,size=1m dev {new}/dev",
        f"mount -t tmpfs -o mode=1777,size=16m tmp {new}/tmp",
        f"mkdir -m 1777 {new}/dev/shm {new}/dev/dri",
        f"mount -t tmpfs -o mode=1777,size=16m shm {new}/dev/shm",
    ]
    for name, major, minor in _BASIC_DEVICES:
        steps.append(f"mknod -m 0666 {new}/dev/{name} c {major} {minor}")
    for node in device_nodes:
        # The nodes the lab creates too: without a driver behind them, open() fails as on a dead GPU.
        steps.append(f"mknod -m 0666 {new}{shlex.quote(node.path)} c {node.major} {node.minor}")
    steps.append(f'exec chroot {new} "$@"')
    return "\n".join(steps)


def run_in_tool_root(tool_root, sys_root, argv, device_nodes=(), timeout=120, env=None):
    """Run ``argv`` inside ``tool_root`` with ``<sys_root>/sys`` as its /sys; return the CompletedProcess."""
    script = tool_root_script(tool_root, sys_root, device_nodes)
    command = ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "tool-root", *argv]
    # A plain environment: the tool must not see this machine's PYTHONPATH, virtualenv or locale.
    environment = {"PATH": "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", "LANG": "C.UTF-8", "HOME": "/tmp"}
    environment.update(env or {})
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False, env=environment)
