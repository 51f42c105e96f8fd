# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Device visibility: no variable hides GPUs from every login session or every service (ROCM-ENV-007).

HIP_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES, CUDA_VISIBLE_DEVICES (which HIP reads too) and GPU_DEVICE_ORDINAL
(OpenCL, older HIP) keep only the devices they list. Set for one job they select its GPUs; set for every
session or service of a GPU server they hide the others from every job, however many GPUs the host has.
The check reads what ``job_environment`` reads (compliance.environment, the same readings of the same module
call): the login files (/etc/environment, /etc/profile, /etc/profile.d/*.sh, /etc/bash.bashrc), each listed
user's dotfiles and login shell, the system manager's DefaultEnvironment files, /etc/environment.d and the
running manager's environment. Each finding names the file and line and the GPUs the value hides, out of the
host's logical GPU count (``gpu_count``: what preflight decided, a partitioned GPU counting as its partitions).

A site that sets one on purpose declares it (``declared``, name to value): exactly that value passes.

The decisions are the pure functions ``kept_devices`` and ``hides``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.core import failed, passed
from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.environment import (
    LOGIN_FILES,
    MANAGER_FILES,
    UNSET_MANAGER,
    USER_FILES,
    USER_MANAGER_FILES,
    _expanded_files,
    _read,
    _shell_file_assignments,
    booted_with_systemd,
    login_environment,
    manager_default_environment,
    manager_environment,
    origin_of,
    pending_default_environment,
    pending_note,
    where,
)
from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.schema import VISIBILITY_NAMES

_INDEX = re.compile(r"^[0-9]+$")
# ROCr and HIP take a GPU's UUID (rocminfo's "GPU-<16 hex digits>") as well as its index.
_UUID = re.compile(r"^GPU-[0-9A-Za-z-]+$")

EVERY_SESSION = "every login session"
EVERY_SERVICE = "every service"
EVERY_USER_SERVICE = "every user service (systemd --user)"


def kept_devices(value, count=None):
    """([index], [uuid]) of the devices a runtime keeps for ``value``: the comma-separated list up to its first
    entry that is neither an index below ``count`` (when known) nor a UUID, as the runtimes read it (an empty
    value, or one starting with such an entry, keeps none)."""
    indices, uuids = [], []
    for entry in value.split(","):
        entry = entry.strip()
        if _INDEX.match(entry) and (not count or int(entry) < count):
            if int(entry) not in indices:
                indices.append(int(entry))
        elif _UUID.match(entry):
            if entry not in uuids:
                uuids.append(entry)
        else:
            break
    return indices, uuids


def _ranges(numbers):
    """'1-7', '0, 2-3, 5' for a sorted list of ints."""
    spans, start = [], None
    for position, number in enumerate(numbers):
        if start is None:
            start = number
        if position + 1 == len(numbers) or numbers[position + 1] != number + 1:
            spans.append(str(start) if start == number else "%d-%d" % (start, number))
            start = None
    return ", ".join(spans)


def hides(value, count, who):
    """What ``value`` does to ``who`` on a host with ``count`` logical GPUs (None or 0: not known)."""
    indices, uuids = kept_devices(value, count)
    if not count:
        if not indices and not uuids:
            return "hides every GPU from %s" % who
        kept = ["GPU %s" % _ranges(sorted(indices))] if indices else []
        kept += ["%d named by UUID" % len(uuids)] if uuids else []
        return "leaves only %s to %s (the host's GPU count is not known)" % (" and ".join(kept), who)
    hidden = [index for index in range(count) if index not in indices]
    if uuids:
        number = max(count - len(indices) - len(uuids), 0)
        kept = " and ".join(
            (["GPU %s" % _ranges(sorted(indices))] if indices else []) + ["%d named by UUID" % len(uuids)]
        )
        return "hides %d of %d GPUs (all but %s) from %s" % (number, count, kept, who)
    if not hidden:
        return "hides none of the %d GPUs now, yet fixes which ones %s sees and in what order" % (count, who)
    return "hides %d of %d GPUs (%s) from %s" % (len(hidden), count, _ranges(hidden), who)


def _finding(name, value, place, who, count, declared, note=""):
    """The message for a setting; None when it is the declared value."""
    if name in declared and str(declared[name]) == value:
        return None
    against = ", not the declared %s," % declared[name] if name in declared else ""
    return "%s=%s in %s%s %s%s" % (name, value, place, against, hides(value, count, who), note)


def _visible(assignments):
    """The file lines that set one of the variables to a literal value (what a shell computes, ``$(...)`` or
    ``$X``, is judged from the environment the login shell or the manager really has)."""
    return [
        entry
        for entry in assignments
        if entry["name"] in VISIBILITY_NAMES and "$" not in entry["value"] and "`" not in entry["value"]
    ]


def check_device_visibility(expect, host):
    count, declared = expect["gpu_count"], expect["declared"]
    problems, unknown, settings, as_declared = [], [], [], []

    def report(entry_name, value, place, who, note=""):
        settings.append({"name": entry_name, "value": value, "where": place, "who": who})
        message = _finding(entry_name, value, place, who, count, declared, note)
        if message is None:
            as_declared.append("%s=%s in %s" % (entry_name, value, place))
        elif message not in problems:
            problems.append(message)

    # Every login session: the system files a login shell reads.
    system_files = _expanded_files(host, LOGIN_FILES)
    system = _shell_file_assignments(host, system_files)
    for entry in _visible(system):
        report(entry["name"], entry["value"], where(entry), EVERY_SESSION)
    users = {}
    for user in expect["users"]:
        account = host.user(user)
        if account is None:  # ROCM-ACCESS-002's finding; nothing to read here
            users[user] = {"read": False, "reason": "user %s does not exist" % user}
            continue
        who = "the login sessions of %s" % user
        dotfiles = _shell_file_assignments(host, [os.path.join(account["home"] or "/", name) for name in USER_FILES])
        for entry in _visible(dotfiles):
            report(entry["name"], entry["value"], where(entry), who)
        environment, reason = (
            (None, "not run (run: false)")
            if not expect["run"]
            else login_environment(host, user, account["shell"], expect["timeout"])
        )
        users[user] = {"read": reason is None, "reason": reason}
        if environment is None:
            unknown.append("the login shell of %s: %s" % (user, reason))
            continue
        for name in VISIBILITY_NAMES:
            value = environment.get(name)
            if value is None or any(entry["name"] == name and entry["value"] == value for entry in system + dotfiles):
                continue  # unset, or the file's finding already
            # A value no file line has as written: a script computed it (named where a file sets the name) or PAM.
            setting = [entry for entry in system + dotfiles if entry["name"] == name]
            report(
                name,
                value,
                "the login shell of %s%s" % (user, origin_of(name, value, system + dotfiles)),
                EVERY_SESSION if setting and setting[-1] in system else who,
            )
    # Every service: the system manager's DefaultEnvironment and what it runs with; the user managers' files.
    manager_files = _expanded_files(host, MANAGER_FILES)
    configured = manager_default_environment([(path, _read(host, path)) for path in manager_files])
    user_manager_files = _expanded_files(host, USER_MANAGER_FILES)
    booted = booted_with_systemd(host)
    running, reason = None, "not booted with systemd (no /run/systemd/system): only the files were read"
    if booted:
        running, reason = (
            (None, "not run (run: false)") if not expect["run"] else manager_environment(host, expect["timeout"])
        )
        if running is None:
            unknown.append("the systemd manager environment: %s" % reason)
    pending = dict(
        ((entry["path"], entry["line"], entry["name"]), entry)
        for entry in (pending_default_environment(configured, running) if running is not None else [])
    )
    for entry in _visible(configured):
        waiting = pending.get((entry["path"], entry["line"], entry["name"]))
        report(
            entry["name"],
            entry["value"],
            where(entry),
            EVERY_SERVICE,
            " (%s)" % pending_note(waiting) if waiting else "",
        )
    for entry in _visible(_shell_file_assignments(host, user_manager_files)):
        report(entry["name"], entry["value"], where(entry), EVERY_USER_SERVICE)
    for name in VISIBILITY_NAMES:
        value = (running or {}).get(name)
        if value is None or any(entry["name"] == name and entry["value"] == value for entry in configured):
            continue
        report(name, value, "the systemd manager environment%s" % UNSET_MANAGER, EVERY_SERVICE)
    actual = {
        "gpu_count": count,
        "declared": declared,
        "settings": settings,
        "users": users,
        "manager": {
            "booted_with_systemd": booted,
            "read": running is not None,
            "reason": None if running is not None else reason,
        },
        "files": system_files + manager_files + user_manager_files,
    }
    if problems:
        message = "; ".join(problems)
        if unknown:
            message += "; not seen: %s" % "; ".join(unknown)
        return failed(actual, message, action="none")
    if unknown:
        return {
            "status": "unknown",
            "actual": actual,
            "diff": "",
            "action": "",
            "message": "unknown: %s; the files read hide no GPU" % "; ".join(unknown),
        }
    message = "no %s hides a GPU from every login session or service" % ", ".join(VISIBILITY_NAMES)
    if as_declared:
        message += " (as declared: %s)" % "; ".join(as_declared)
    if not booted:
        message += "; services: %s" % reason
    return passed(actual, message)
