"""A host's files as a temp tree, and one compliance item evaluated against it (shared by the compliance tests)."""

import os
import subprocess

from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.core import HostView
from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.evaluate import evaluate_item


def write(root, path, data, mode=0o644):
    """Write text or bytes at ``path`` under ``root`` with ``mode`` (as os.chmod takes it), whatever the umask."""
    full = root / path.lstrip("/")
    full.parent.mkdir(parents=True, exist_ok=True)
    (full.write_bytes if isinstance(data, bytes) else full.write_text)(data)
    os.chmod(full, mode)
    return full


def check(root, kind, item_id="ROCM-TEST-001", **fields):
    """Evaluate one item of ``kind``; ``role``/``label``/``repair`` go on the item, everything else into ``expect``."""
    item = {"id": item_id, "kind": kind, "expect": fields}
    for key in ("role", "label", "repair"):
        if key in fields:
            item[key] = fields.pop(key)
    return evaluate_item(item, 0, HostView(str(root)))


def login_runner(root, calls=None):
    """A runner for a job_environment login command: a real ``sh`` that reads the tree's /etc/profile (which sources
    its profile.d with ``$ROOT``) and the user's ~/.profile, then runs the checker's own command."""

    def run(argv, timeout):
        if calls is not None:
            calls.append(argv)
        user = argv[argv.index("-c") - 1]
        script = '. "$ROOT/etc/profile"; [ -r "$HOME/.profile" ] && . "$HOME/.profile"; %s' % argv[-1]
        home = "%s/home/%s" % (root, user)
        done = subprocess.run(["env", "-i", "PATH=/usr/bin:/bin", "HOME=" + home, "ROOT=" + str(root),
                               "sh", "-c", script], capture_output=True, text=True, timeout=timeout)
        return done.returncode, done.stdout, done.stderr

    return run


def host_runner(root, manager=None, calls=None):
    """login_runner for login shells, and ``systemctl show-environment`` of a manager running with ``manager``
    ({name: value}; printed a line each, as systemctl prints values without special characters)."""
    login = login_runner(root, calls)

    def run(argv, timeout):
        if argv[1:] == ["show-environment"]:
            if calls is not None:
                calls.append(argv)
            if manager is None:
                return 1, "", "System has not been booted with systemd as init system (PID 1). Can't operate.\n"
            return 0, "".join("%s=%s\n" % item for item in sorted(manager.items())), ""
        return login(argv, timeout)

    return run
