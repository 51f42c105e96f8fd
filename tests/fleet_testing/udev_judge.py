"""The real udev as judge: ``udevadm test`` of a device in a Debian root, and what its output says.

``udevadm test`` runs the rules files of the root (and whatever is bound over its
/etc/udev/rules.d) against a device of /sys, as an add event, without a daemon and
without changing a node: it prints the tags the device ends with, the builtins and
programs it would run, and each GROUP and MODE a rule applied. With the lab's rendered
tree mounted over /sys (``SYSTEMD_DEVICE_VERIFY_SYSFS=0``: the tree is not a sysfs) it
judges the lab's GPUs by the distribution's real rules. ``parse`` reads the output of
systemd 252 (Debian 12) and 257 (Debian 13); lab hosts carry udev too, so a test can also
run ``udevadm test`` inside a host and parse that.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

# Debug logging prints each rule that applies: "renderD128: /usr/lib/udev/rules.d/50-udev-default.rules:56 GROUP 993".
_APPLIED = re.compile(r"^\S+: (?P<where>\S+:\d+) (?P<key>GROUP|MODE|RUN) (?P<value>.+)$")
ENVIRONMENT = {"SYSTEMD_DEVICE_VERIFY_SYSFS": "0", "SYSTEMD_LOG_LEVEL": "debug"}
# The private mount namespace: the root read-only, the rendered /sys over its /sys, an empty /run and /tmp.
_SCRIPT = """
set -e
root=$1 sys=$2 rules=$3 device=$4
mount --bind "$root" "$root"
mount -o remount,bind,ro "$root"
mount --rbind "$sys" "$root/sys"
mount -t proc proc "$root/proc"
mount -t tmpfs tmpfs "$root/run"
mount -t tmpfs tmpfs "$root/tmp"
if [ -n "$rules" ]; then mount --bind "$rules" "$root/etc/udev/rules.d"; fi
exec chroot "$root" env SYSTEMD_DEVICE_VERIFY_SYSFS=0 SYSTEMD_LOG_LEVEL=debug udevadm test "$device"
"""


class JudgeError(RuntimeError):
    pass


@dataclass(frozen=True)
class Verdict:
    """What the real udev does to one device."""

    tags: frozenset
    current_tags: frozenset
    run: tuple  # builtins and programs queued, e.g. ("uaccess",)
    group: str | None  # the last GROUP a rule applied (udev logs the gid)
    mode: int | None  # the last MODE a rule applied
    applied: tuple = field(default=())  # ("file:line KEY value", ...), for messages

    @property
    def uaccess(self) -> bool:
        """Whether the seat's user would get an ACL: the tag, or the uaccess builtin queued."""
        return "uaccess" in self.tags or "uaccess" in self.current_tags or "uaccess" in self.run


def parse(output: str) -> Verdict:
    tags, current, run, applied = set(), set(), [], []
    group = mode = None
    queued = False
    for raw in output.splitlines():
        line = raw.strip()
        match = _APPLIED.match(line)
        if match:
            key, value = match["key"], match["value"].strip()
            applied.append(f"{match['where']} {key} {value}")
            if key == "GROUP":
                group = value
            elif key == "MODE":
                mode = int(value, 8)
            continue
        if line.startswith("TAGS="):
            tags.update(tag for tag in line[5:].split(":") if tag)
        elif line.startswith("CURRENT_TAGS="):
            current.update(tag for tag in line[13:].split(":") if tag)
        elif line.startswith("run: "):  # systemd 252: run: 'uaccess'
            run.append(line[5:].strip("'"))
        elif line == "Queued commands:":  # systemd 257: RUN{builtin} : uaccess
            queued = True
        elif queued and raw.startswith("  ") and " : " in line:
            run.append(line.split(" : ", 1)[1])
        elif not raw.startswith("  "):
            queued = False
    return Verdict(frozenset(tags), frozenset(current), tuple(run), group, mode, tuple(applied))


def udevadm_test(root: Path, sys_dir: Path, device: str, rules_dir: Path | None = None, timeout: int = 120) -> Verdict:
    """``udevadm test DEVICE`` in ``root`` with ``sys_dir`` as /sys and, if given, ``rules_dir`` as /etc/udev/rules.d.

    Needs root (a private mount namespace); the root itself is mounted read-only there, so it is not changed.
    """
    argv = ["unshare", "--mount", "--propagation", "private", "sh", "-c", _SCRIPT, "judge",
            str(root), str(sys_dir), str(rules_dir or ""), device]
    result = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    output = result.stdout + result.stderr
    if result.returncode != 0:
        raise JudgeError(f"udevadm test {device} in {root} exited {result.returncode}: {output[-2000:]}")
    return parse(output)
