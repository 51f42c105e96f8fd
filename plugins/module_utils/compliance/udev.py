# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""No seat user reaches the GPUs: the uaccess rules skip AMD render nodes, and no GPU node carries an ACL.

``check_udev_uaccess`` derives the expected /etc/udev/rules.d/70-uaccess.rules from the
host's own distribution file (udev_uaccess.masked_uaccess_rules, as the access role
does), so a distribution update that changes that file is drift until site.yml derives
it again. ``check_device_acl`` finds ACL entries on the nodes: a grant the seat's user
got before the mask took effect stays until the node is created again (a reboot).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import fnmatch
import glob
import os
import re
import stat

from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.access import device_nodes, has_acl
from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.core import failed, passed
from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.files import check_file
from ansible_collections.rocm_fleet.core.plugins.module_utils.host.udev_uaccess import (
    UaccessRulesError,
    masked_uaccess_rules,
)


def distribution_rules(host, sources):
    """(path, text) of the first of ``sources`` on the host, or (None, None)."""
    for source in sources:
        text = host.read_text(source)
        if text is not None:
            return source, text
    return None, None


def check_udev_uaccess(expect, host):
    source, text = distribution_rules(host, expect["sources"])
    if source is None:
        return passed({"source": None}, "no %s on this host: nothing tags the GPU nodes uaccess, nothing to mask"
                      % " or ".join(expect["sources"]))
    try:
        content = masked_uaccess_rules(text, source, expect["vendor"])
    except UaccessRulesError as exc:
        return failed({"source": source}, str(exc), action="none")
    wanted = dict((key, expect[key]) for key in ("owner", "group", "mode") if expect.get(key) is not None)
    result = check_file(dict(wanted, path=expect["path"], content=content, state="present"), host)
    result["actual"] = dict(result.get("actual") or {}, source=source)
    return result


def check_device_acl(expect, host):
    nodes = device_nodes(host, expect["globs"], expect["vendor"])
    with_acl = [node for node in nodes if has_acl(host.path(node))]
    actual = {"nodes": nodes, "with_acl": with_acl}
    if with_acl:
        return failed(actual, "%s carry an ACL that may grant a user what the group and mode do not (a seat grant "
                      "from before the uaccess rules were masked)" % ", ".join(with_acl), action="update")
    return passed(actual, "no ACL on %d device node(s)" % len(nodes) if nodes else
                  "no device node matches %s" % ", ".join(expect["globs"]))


def remove_acl(full):
    """Remove the access ACL of one node (the owner, group and other bits stay); True if there was one."""
    if not has_acl(full):
        return False
    os.removexattr(full, "system.posix_acl_access", follow_symlinks=False)
    return True


# One udev key: KEY or KEY{attr}, an operator and a double-quoted value.
_RULE_KEY = re.compile(r'\s*(?P<key>[A-Za-z_]+)(?:\{(?P<attr>[^}]*)\})?\s*(?P<op>==|!=|\+=|-=|:=|=)\s*'
                       r'"(?P<value>(?:[^"\\]|\\.)*)"\s*,?')
# The nodes a rule may open, each as (name, subsystem): the compute interface and a render node.
AMD_NODES = (("kfd", "kfd", "/dev/kfd"), ("renderD128", "drm", "the render nodes (/dev/dri/renderD*)"))


def rules_lines(text):
    """[(line number, rule text)] of a udev rules file: comments and blank lines out, continuations joined."""
    rules, pending, start = [], "", 0
    for number, line in enumerate(text.splitlines(), 1):
        if not pending:
            start = number
            if line.lstrip().startswith("#"):
                continue
        if line.endswith("\\"):
            pending += line[:-1]
            continue
        line = pending + line
        pending = ""
        if line.strip():
            rules.append((start, line.strip()))
    if pending.strip():
        rules.append((start, pending.strip()))
    return rules


def rule_keys(rule):
    """[(key, attr, op, value)] of one rule, or None where it does not parse (udev ignores such a line)."""
    keys, position = [], 0
    while position < len(rule):
        match = _RULE_KEY.match(rule, position)
        if match is None:
            return None
        keys.append((match.group("key").upper(), match.group("attr"), match.group("op"), match.group("value")))
        position = match.end()
        while position < len(rule) and rule[position] in " \t,":
            position += 1
    return keys


def _matches(pattern, value):
    return any(fnmatch.fnmatchcase(value, alternative) for alternative in pattern.split("|"))


def _applies(keys, name, subsystem, vendor):
    """Whether the rule's matches may hold for AMD's node ``name`` of ``subsystem`` (unknown keys: they may)."""
    named = False
    for key, attr, op, value in keys:
        if op not in ("==", "!="):
            continue
        wanted = op == "=="
        if key in ("KERNEL", "SUBSYSTEM"):
            named = True
            if _matches(value, name if key == "KERNEL" else subsystem) != wanted:
                return False
        elif key == "ACTION" and _matches(value, "add") != wanted:
            return False
        elif key in ("ATTRS", "ATTR") and attr == "vendor" and name != "kfd":
            if _matches(value.lower(), vendor.lower()) != wanted:
                return False
        elif key in ("DRIVERS", "DRIVER") and op == "==" and name != "kfd" and not _matches(value, "amdgpu"):
            return False
    # A rule that names no device at all is not about the GPUs.
    return named


def opening_rules(text, modes, vendor="0x1002"):
    """[{line, rule, mode, nodes}] of the rules in ``text`` that set a MODE giving 'other' read or write on
    /dev/kfd or an AMD render node beyond ``modes`` ({"kfd": "0660", "drm": "0660"}, what the access role sets)."""
    found = []
    for number, rule in rules_lines(text):
        keys = rule_keys(rule)
        if not keys:
            continue
        assigned = [value for key, _attr, op, value in keys if key == "MODE" and op in ("=", ":=")]
        if not assigned:
            continue
        try:
            mode = int(assigned[-1], 8)
        except ValueError:
            continue
        nodes = [shown for name, subsystem, shown in AMD_NODES
                 if mode & 0o006 & ~int(modes.get(subsystem) or "0", 8) and _applies(keys, name, subsystem, vendor)]
        if nodes:
            found.append({"line": number, "rule": rule, "mode": "%04o" % mode, "nodes": nodes})
    return found


def _open_nodes(host, vendor):
    """The live nodes that every user may read and write now ('other' rw), as "NODE MODE"."""
    nodes = []
    for node in device_nodes(host, ["/dev/kfd", "/dev/dri/renderD*"], vendor):
        try:
            mode = stat.S_IMODE(os.stat(host.path(node)).st_mode)
        except OSError:
            continue
        if mode & 0o006 == 0o006:
            nodes.append("%s %04o" % (node, mode))
    return nodes


def check_udev_open_rules(expect, host):
    modes = {"kfd": expect["kfd_mode"], "drm": expect["render_mode"]}
    files, seen = [], set()
    for directory in expect["dirs"]:
        for full in sorted(glob.glob(host.path(directory.rstrip("/") + "/*.rules"))):
            name = os.path.basename(full)
            # udev reads one file per name, the first directory's (/etc hides /run); the role's own file is its own.
            if name in seen or name in expect["keep"]:
                seen.add(name)
                continue
            seen.add(name)
            path = "%s/%s" % (directory.rstrip("/"), name)
            text = host.read_text(path)
            if text is None or os.path.realpath(full) == "/dev/null":
                continue
            rules = opening_rules(text, modes, expect["vendor"])
            if rules:
                # A file whose every rule opens the GPUs (AMD's 70-amdgpu.rules) the role removes;
                # one with other rules too is a person's to edit.
                only = len(rules) == len(rules_lines(text))
                files.append({"path": path, "rules": rules, "removable": only})
    open_now = _open_nodes(host, expect["vendor"])
    actual = {"files": files, "removable": [entry["path"] for entry in files if entry["removable"]],
              "open_now": open_now}
    if not files:
        return passed(actual, "no udev rule in %s gives every user /dev/kfd or an AMD render node"
                      % " or ".join(expect["dirs"]))
    parts = []
    for entry in files:
        said = "; ".join('line %d MODE="%s" for %s' % (rule["line"], rule["mode"], " and ".join(rule["nodes"]))
                         for rule in entry["rules"])
        fix = ("site.yml (the access role) removes it" if entry["removable"] else
               "a person removes those lines (the file holds other rules, which the role leaves alone)")
        parts.append("%s: %s; %s" % (entry["path"], said, fix))
    if open_now:
        now = "every user can open them now: %s" % ", ".join(open_now)
    else:
        now = ("the access role's MODE:= in %s keeps them closed for now, but every user can open them wherever "
               "that rule is gone or loses" % " / ".join(expect["keep"]) if expect["keep"] else
               "no node is open to every user now")
    message = ("udev rules give every user (not only access_users) /dev/kfd and the render nodes, as AMD's "
               "alternative to group membership does: %s; %s" % (" | ".join(parts), now))
    return failed(actual, message, action="update" if actual["removable"] else "none")
