"""Run a real tool against a rendered sysfs tree, in a private mount namespace.

``unshare -m`` gives the command its own mount table (propagation private, so
nothing leaks to the host); ``<root>/sys`` is bind-mounted over ``/sys`` there.
The rendered tree uses relative symlinks only, so every link resolves inside
the bind mount. Needs root (CAP_SYS_ADMIN) and util-linux ``unshare``.
"""

from __future__ import annotations

import os
import shutil
import subprocess

_MOUNT_AND_EXEC = 'mount --bind "$0/sys" /sys && exec "$@"'


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
