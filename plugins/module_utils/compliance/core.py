# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Shared pieces of the compliance evaluator: result shapes, paths under a root, account lookups.

Every checker is ``check(expect, host) -> outcome`` where ``expect`` was
validated by ``compliance.schema`` and ``host`` is a ``HostView``; an outcome
is the dict built by ``passed``/``failed`` (to which a checker may add ``repair``, replacing the
item's, or ``repair_also``, added to it, where what repairs a finding depends on the finding). A
checker raises ``CheckError`` when it cannot tell (unreadable file, malformed state); the evaluator
turns that into status "error".
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import difflib
import fnmatch
import grp
import os
import pwd

from ansible_collections.rocm_fleet.core.plugins.module_utils.common.runner import ToolTimeout
from ansible_collections.rocm_fleet.core.plugins.module_utils.common.runner import make_runner

MAX_TEXT_BYTES = 4 * 1024 * 1024  # a managed config file is small; refuse to diff a disk image
READ_CHUNK = 64 * 1024


class CheckError(Exception):
    """The check could not establish the state; the message says why."""


class CommandUnavailable(Exception):
    """A command a check wanted to run could not run (not the live root, missing, timed out); says why."""


def run_live(argv, timeout):
    """``(rc, stdout, stderr)`` of ``argv`` on this machine, killed after ``timeout`` seconds."""
    try:
        return make_runner(argv[0], timeout)(argv[1:])
    except ToolTimeout as exc:
        raise CommandUnavailable(str(exc)) from None
    except (IOError, OSError) as exc:
        raise CommandUnavailable("cannot run %s: %s" % (argv[0], exc.strerror or exc)) from None


def passed(actual, message="as expected"):
    return {"status": "pass", "actual": actual, "message": message, "diff": "", "action": ""}


def failed(actual, message, action="change", diff=""):
    """``action`` says what the enforcing task would do: create, update, remove, add, ..."""
    return {"status": "fail", "actual": actual, "message": message, "diff": diff, "action": action}


def unified_diff(path, actual_text, expected_text):
    """The change the role would make, host state first, as ``diff -u`` prints it."""
    lines = difflib.unified_diff(
        (actual_text or "").splitlines(True),
        (expected_text or "").splitlines(True),
        fromfile="%s (host)" % path,
        tofile="%s (expected)" % path,
    )
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


def version_matches(actual, pattern):
    """Exact match, or a shell pattern when ``pattern`` has one ('6.4.1*')."""
    if actual is None:
        return False
    if any(char in pattern for char in "*?["):
        return fnmatch.fnmatchcase(actual, pattern)
    return actual == pattern


def parse_mode(text):
    """'0644', '644', '2775' -> int; anything else -> None."""
    text = str(text or "").strip()
    if not text or len(text) > 5 or any(char not in "01234567" for char in text):
        return None
    return int(text, 8)


def format_mode(mode):
    return "%04o" % mode


class HostView:
    """Read-only view of a host's files under ``root``, caching what several checks parse."""

    def __init__(self, root="/", run=None):
        """``run(argv, timeout) -> (rc, stdout, stderr)`` runs a command on the host; tests inject one.

        Without it, commands run only where ``root`` is the live system (a tree under another root
        has no processes to ask), through ``run_live``.
        """
        self.root = root or "/"
        self._run = run
        self._cache = {}

    def run(self, argv, timeout):
        """``(rc, stdout, stderr)``; raises CommandUnavailable when the command cannot run here."""
        if self._run is None and not self.is_live:
            raise CommandUnavailable("%s is not the live system: no command runs there" % self.root)
        try:
            return (self._run or run_live)(list(argv), timeout)
        except ToolTimeout as exc:
            raise CommandUnavailable(str(exc)) from None
        except (IOError, OSError) as exc:
            raise CommandUnavailable("cannot run %s: %s" % (argv[0], exc.strerror or exc)) from None

    def executable(self, candidates):
        """The first of ``candidates`` (host paths) that is an executable file under root, or None."""
        for candidate in candidates:
            full = self.path(candidate)
            if os.path.isfile(full) and os.access(full, os.X_OK):
                return candidate
        return None

    def run_reading(self, argv, timeout):
        """``(rc, stdout, stderr)`` of a command of this machine that only reads files under root, which ``argv``
        names by ``path()`` (``ldconfig -p -C <root>/etc/ld.so.cache``): unlike ``run`` it runs for any root.

        Raises CommandUnavailable when it cannot run.
        """
        try:
            return (self._run or run_live)(list(argv), timeout)
        except ToolTimeout as exc:
            raise CommandUnavailable(str(exc)) from None
        except (IOError, OSError) as exc:
            raise CommandUnavailable("cannot run %s: %s" % (argv[0], exc.strerror or exc)) from None

    @property
    def is_live(self):
        return os.path.realpath(self.root) == "/"

    def path(self, path):
        """Absolute host path -> the path under root (never escapes root by '..' in the item)."""
        relative = os.path.normpath("/" + str(path)).lstrip("/")
        return os.path.join(self.root, relative)

    def read_text(self, path, missing_ok=True):
        """File content as text; None when it does not exist (if ``missing_ok``)."""
        full = self.path(path)
        try:
            data = _read_limited(full, MAX_TEXT_BYTES + 1)
        except (IOError, OSError) as exc:
            if missing_ok and not os.path.lexists(full):
                return None
            raise CheckError("cannot read %s: %s" % (path, exc.strerror or exc)) from None
        if len(data) > MAX_TEXT_BYTES:
            raise CheckError("%s is larger than %d bytes; not a configuration file" % (path, MAX_TEXT_BYTES))
        return data.decode("utf-8", "replace")

    def read_bytes(self, path):
        try:
            return _read_limited(self.path(path), MAX_TEXT_BYTES)
        except (IOError, OSError) as exc:
            raise CheckError("cannot read %s: %s" % (path, exc.strerror or exc)) from None

    def lstat(self, path):
        try:
            return os.lstat(self.path(path))
        except (IOError, OSError):
            return None

    def cached(self, key, compute):
        if key not in self._cache:
            self._cache[key] = compute()
        return self._cache[key]

    # Accounts: the root's /etc files, then NSS (LDAP, sssd) on the live system.
    def groups(self):
        """{name: {"gid": int, "members": [str]}} from <root>/etc/group."""
        return self.cached("groups", lambda: _parse_group(self.read_text("/etc/group") or ""))

    def users(self):
        """{name: {"uid": int, "gid": int, "home": str, "shell": str}} from <root>/etc/passwd."""
        return self.cached("users", lambda: _parse_passwd(self.read_text("/etc/passwd") or ""))

    def group_name(self, gid):
        for name, group in self.groups().items():
            if group["gid"] == gid:
                return name
        if self.is_live:
            try:
                return grp.getgrgid(gid).gr_name
            except KeyError:
                pass
        return str(gid)

    def user_name(self, uid):
        for name, user in self.users().items():
            if user["uid"] == uid:
                return name
        if self.is_live:
            try:
                return pwd.getpwuid(uid).pw_name
            except KeyError:
                pass
        return str(uid)

    def group(self, name):
        """{"gid", "members"} including users whose primary group it is; None when absent."""
        group = self.groups().get(name)
        if group is None and self.is_live:
            try:
                entry = grp.getgrnam(name)
                group = {"gid": entry.gr_gid, "members": list(entry.gr_mem)}
            except KeyError:
                return None
        if group is None:
            return None
        primary = [user for user, data in self.users().items() if data["gid"] == group["gid"]]
        members = list(group["members"]) + [user for user in primary if user not in group["members"]]
        return {"gid": group["gid"], "members": members}

    def user(self, name):
        user = self.users().get(name)
        if user is None and self.is_live:
            try:
                entry = pwd.getpwnam(name)
                user = {"uid": entry.pw_uid, "gid": entry.pw_gid, "home": entry.pw_dir, "shell": entry.pw_shell}
            except KeyError:
                return None
        return user


def _read_limited(path, limit):
    """Read in small chunks: procfs sysctl files fail with ENOMEM when asked for megabytes at once."""
    chunks, size = [], 0
    with open(path, "rb") as handle:
        while size < limit:
            chunk = handle.read(min(READ_CHUNK, limit - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    return b"".join(chunks)


def _parse_group(text):
    groups = {}
    for line in text.splitlines():
        fields = line.split(":")
        if len(fields) < 4 or line.startswith(("#", "+", "-")):
            continue
        try:
            gid = int(fields[2])
        except ValueError:
            continue
        groups[fields[0]] = {"gid": gid, "members": [name for name in fields[3].strip().split(",") if name]}
    return groups


def _parse_passwd(text):
    users = {}
    for line in text.splitlines():
        fields = line.split(":")
        if len(fields) < 7 or line.startswith(("#", "+", "-")):
            continue
        try:
            users[fields[0]] = {"uid": int(fields[2]), "gid": int(fields[3]), "home": fields[5],
                                "shell": fields[6].strip()}
        except ValueError:
            continue
    return users
