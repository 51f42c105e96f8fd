# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Who can use the GPUs: the listed users can open /dev/kfd and the render nodes; nobody else is in the groups.

``may_open`` decides from a device node's owner, group and mode and a user's uid
and groups (from the group database, never from this process's own ``id``), as
the kernel's permission check does: the owner bits for the owner, else the
group bits for a member of the node's group, else the other bits. An ACL on a
node can grant more than its bits say, so a denial there is unknown, not a
failure. Optionally the check also asks the kernel itself, as the user:
``runuser -u USER -- sh -c 'test -r NODE -a -w NODE ...'``, one command per user.

``unlisted_members`` decides who is in a GPU group without being listed.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import glob
import grp
import os
import stat

from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.core import (
    CommandUnavailable,
    failed,
    passed,
)

RUNUSER = ("/usr/sbin/runuser", "/sbin/runuser", "/usr/bin/runuser", "/bin/runuser")
AMD_VENDOR = "0x1002"
ACL_XATTR = "system.posix_acl_access"
# Prints "ok <node>" or "no <node>" for each node, as the user.
OPEN_SCRIPT = 'for node; do if test -r "$node" -a -w "$node"; then echo "ok $node"; else echo "no $node"; fi; done'


def may_open(uid, gids, node_uid, node_gid, mode):
    """True when a user with ``uid`` and groups ``gids`` may read and write a node of that owner, group, mode."""
    if uid == 0:
        return True
    if uid == node_uid:
        bits = (mode >> 6) & 0o7
    elif node_gid in gids:
        bits = (mode >> 3) & 0o7
    else:
        bits = mode & 0o7
    return bits & 0o6 == 0o6


def unlisted_members(members, listed, primary=()):
    """[(user, how)] of ``members`` that are not ``listed``; ``how`` says 'primary group' for those in ``primary``."""
    listed = set(listed)
    return [(user, "primary group" if user in primary else "member") for user in sorted(set(members))
            if user not in listed]


def user_groups(host, user):
    """(uid, set of gids) from the root's passwd and group files (and NSS on the live system); None if no user."""
    entry = host.user(user)
    if entry is None:
        return None
    gids = set([entry["gid"]])
    gids.update(group["gid"] for group in host.groups().values() if user in group["members"])
    if host.is_live and hasattr(os, "getgrouplist"):
        try:
            gids.update(os.getgrouplist(user, entry["gid"]))
        except (KeyError, OSError):
            pass
    return entry["uid"], gids


def _shown(host, full):
    root = host.root.rstrip("/")
    return full[len(root):] if root else full


def device_nodes(host, globs, vendor):
    """The host paths matching ``globs``, less the render nodes whose sysfs vendor is not ``vendor``."""
    nodes = []
    for pattern in globs:
        for full in sorted(glob.glob(host.path(pattern))):
            path = _shown(host, full)
            name = os.path.basename(path)
            if vendor and name.startswith("renderD"):
                found = host.read_text("/sys/class/drm/%s/device/vendor" % name)
                if found is not None and found.strip().lower() != vendor.lower():
                    continue
            nodes.append(path)
    return nodes


def has_acl(full):
    try:
        return ACL_XATTR in os.listxattr(full, follow_symlinks=False)
    except (AttributeError, OSError):
        return False


def _opened_as(host, user, nodes, timeout):
    """({node: True/False} as the kernel answers for ``user``, or None, and the reason it could not ask)."""
    if host.is_live and hasattr(os, "geteuid") and os.geteuid() != 0:
        return None, "not root (run with become), so nothing runs as %s" % user
    runuser = host.executable(RUNUSER)
    if runuser is None:
        return None, "runuser is not installed"
    argv = [runuser, "-u", user, "--", "/bin/sh", "-c", OPEN_SCRIPT, "sh"] + list(nodes)
    try:
        rc, out, err = host.run(argv, timeout)
    except CommandUnavailable as exc:
        return None, str(exc)
    answers = {}
    for line in out.splitlines():
        verdict, _sep, node = line.partition(" ")
        if verdict in ("ok", "no") and node in nodes:
            answers[node] = verdict == "ok"
    if rc != 0 or set(answers) != set(nodes):
        detail = (err or "").strip().splitlines()
        return None, "runuser -u %s exited %d%s" % (user, rc, ": %s" % detail[-1][:200] if detail else "")
    return answers, None


def check_device_access(expect, host):
    nodes = device_nodes(host, expect["globs"], expect["vendor"])
    if not nodes:
        # Whether the nodes exist is the driver check's finding; nothing to open is nothing to judge.
        return {"status": "skipped", "actual": {"nodes": []}, "diff": "", "action": "",
                "message": "unknown: no device node matches %s" % ", ".join(expect["globs"])}
    info = {}
    for node in nodes:
        full = host.path(node)
        try:
            status = os.stat(full)
        except OSError:
            continue
        info[node] = (status, has_acl(full))
    problems, unknown, explained, actual = [], [], [], {"nodes": nodes, "users": {}}
    for user in expect["users"]:
        found = user_groups(host, user)
        if found is None:
            # Not a failure of its own: a listed user that does not exist is ROCM-ACCESS-002's finding.
            unknown.append("user %s does not exist" % user)
            continue
        uid, gids = found
        denied = [node for node, (status, _acl) in sorted(info.items())
                  if not may_open(uid, gids, status.st_uid, status.st_gid, stat.S_IMODE(status.st_mode))]
        by_acl = [node for node in denied if info[node][1]]
        denied = [node for node in denied if node not in by_acl]
        entry = {"groups": sorted(host.group_name(gid) for gid in gids), "denied": denied}
        if by_acl:
            unknown.append("%s: %s have an ACL, which may grant what the mode denies" % (user, ", ".join(by_acl)))
        for node in denied:
            status = info[node][0]
            group = host.group_name(status.st_gid)
            if group in expect["groups"] and group not in entry["groups"]:
                # The user misses a group the inventory gives them: ROCM-ACCESS-002's finding, reported once.
                explained.append("%s cannot open %s: not in %s (ROCM-ACCESS-002)" % (user, node, group))
                continue
            problems.append("%s cannot open %s (%s:%s %04o; %s is in %s)" % (
                user, node, host.user_name(status.st_uid), host.group_name(status.st_gid),
                stat.S_IMODE(status.st_mode), user, ", ".join(entry["groups"]) or "no group"))
        if expect["open"]:
            answers, reason = _opened_as(host, user, sorted(info), expect["timeout"])
            entry["opened"] = answers
            if answers is None:
                unknown.append("%s: %s" % (user, reason))
            else:
                refused = [node for node in sorted(answers) if not answers[node] and node not in denied
                           and not any(line.startswith("%s cannot open %s:" % (user, node)) for line in explained)]
                problems.extend("%s cannot open %s: the kernel refuses it (test -r -w as %s)" % (user, node, user)
                                for node in refused)
        actual["users"][user] = entry
    if problems:
        return failed(actual, "; ".join(problems), action="none")
    if unknown:
        return {"status": "unknown", "actual": actual, "diff": "", "action": "",
                "message": "unknown: %s" % "; ".join(unknown)}
    if explained:
        return {"status": "skipped", "actual": actual, "diff": "", "action": "", "message": "; ".join(explained)}
    return passed(actual, "%d user(s) can open %d device node(s)" % (len(expect["users"]), len(nodes)))


def check_group_unlisted(expect, host):
    name = expect["group"]
    group = host.group(name)
    if group is None:
        return passed({"members": []}, "group %s does not exist, so nobody unlisted is in it" % name)
    primary = [user for user, data in host.users().items() if data["gid"] == group["gid"]]
    if host.is_live:
        try:
            listed_members = grp.getgrgid(group["gid"]).gr_mem
        except KeyError:
            listed_members = []
        group = dict(group, members=list(group["members"]) + [user for user in listed_members
                                                              if user not in group["members"]])
    extra = unlisted_members(group["members"], expect["members"], primary)
    actual = {"members": sorted(group["members"]), "unlisted": [user for user, _how in extra]}
    if not extra:
        return passed(actual, "only listed users are in group %s" % name)
    shown = ", ".join("%s (%s)" % (user, how) if how != "member" else user for user, how in extra)
    message = "%s in group %s but not listed in the inventory" % (shown, name)
    if expect["exclusive"]:
        # The access role takes plain members out (gpasswd --delete); a primary group is a person's to change.
        removable = any(how == "member" for _user, how in extra)
        return failed(actual, message, action="update" if removable else "none")
    return {"status": "warn", "actual": actual, "message": "warning: " + message, "diff": "", "action": ""}
