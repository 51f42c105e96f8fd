# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Checkers for files the roles manage: whole files, single lines, marked blocks, directories, links, modprobe
options."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import stat

from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.core import (
    failed,
    format_mode,
    parse_mode,
    passed,
    unified_diff,
)


def _describe(info):
    if info is None:
        return "absent"
    if stat.S_ISLNK(info.st_mode):
        return "symlink"
    if stat.S_ISDIR(info.st_mode):
        return "directory"
    return "file" if stat.S_ISREG(info.st_mode) else "special file"


def _ownership(expect, info, host):
    """(actual, problems) for mode/owner/group the item names."""
    actual, problems = {}, []
    if expect.get("mode") is not None:
        actual["mode"] = format_mode(stat.S_IMODE(info.st_mode))
        if stat.S_IMODE(info.st_mode) != parse_mode(expect["mode"]):
            problems.append("mode %s, expected %s" % (actual["mode"], format_mode(parse_mode(expect["mode"]))))
    for field, name in (("owner", host.user_name(info.st_uid)), ("group", host.group_name(info.st_gid))):
        if expect.get(field) is not None:
            actual[field] = name
            if name != expect[field]:
                problems.append("%s %s, expected %s" % (field, name, expect[field]))
    return actual, problems


def check_file(expect, host):
    path = expect["path"]
    info = host.lstat(path)
    if expect["state"] == "absent":
        if info is None:
            return passed({"state": "absent"}, "%s is absent" % path)
        return failed({"state": _describe(info)}, "%s exists and should not" % path, action="remove")
    if info is None:
        diff = unified_diff(path, "", expect["content"]) if expect.get("content") is not None else ""
        return failed({"state": "absent"}, "%s does not exist" % path, action="create", diff=diff)
    if not stat.S_ISREG(info.st_mode):
        return failed({"state": _describe(info)}, "%s is a %s, not a file" % (path, _describe(info)), action="replace")
    actual, problems = _ownership(expect, info, host)
    diff = ""
    if expect.get("content") is not None:
        text = host.read_text(path, missing_ok=False)
        if text != expect["content"]:
            diff = unified_diff(path, text, expect["content"])
            problems.insert(0, "content differs")
        actual["content_matches"] = text == expect["content"]
    if problems:
        return failed(actual, "%s: %s" % (path, "; ".join(problems)), action="update", diff=diff)
    return passed(actual, "%s is as expected" % path)


def check_file_lines(expect, host):
    path = expect["path"]
    text = host.read_text(path)
    if text is None:
        if not expect["lines"]:
            return passed({"state": "absent"}, "%s is absent, so none of the unwanted lines is there" % path)
        return failed({"state": "absent"}, "%s does not exist" % path, action="create")
    present = set(line.rstrip() for line in text.splitlines())
    missing = [line for line in expect["lines"] if line.rstrip() not in present]
    unwanted = [line for line in expect["absent"] if line.rstrip() in present]
    actual = {"missing": missing, "unwanted": unwanted}
    problems = []
    if missing:
        problems.append("missing %s" % ", ".join(repr(line) for line in missing))
    if unwanted:
        problems.append("should not contain %s" % ", ".join(repr(line) for line in unwanted))
    if problems:
        return failed(actual, "%s: %s" % (path, "; ".join(problems)), action="update")
    return passed(actual, "%s has the expected lines" % path)


def check_file_block(expect, host):
    """A block between marker lines in a file the role does not own (blockinfile's rules: the last begin and the
    last end marker line delimit it). present: exactly ``lines`` between them, so blockinfile changes nothing;
    absent: not both markers, so blockinfile removes nothing."""
    path, begin, end = expect["path"], expect["begin"], expect["end"]
    text = host.read_text(path)
    lines = (text or "").splitlines(True)
    first = last = None
    for number, line in enumerate(lines):  # a marker line ends with its newline, as blockinfile compares it
        if line == begin + "\n":
            first = number
        if line == end + "\n":
            last = number
    marked = first is not None and last is not None
    if expect["state"] == "absent":
        if marked:
            return failed({"state": "present"}, "%s holds the block %s ... %s, which should be gone"
                          % (path, begin, end), action="update")
        return passed({"state": "absent"}, "%s holds no block %s ... %s" % (path, begin, end))
    wanted = [begin + "\n"] + [line + "\n" for line in expect["lines"]] + [end + "\n"]
    if text is None:
        return failed({"state": "absent"}, "%s does not exist" % path, action="create",
                      diff=unified_diff(path, "", "".join(wanted)))
    held = lines[first:last + 1] if marked and first < last else []
    if held == wanted:
        return passed({"state": "present"}, "%s holds the block %s ... %s as expected" % (path, begin, end))
    if not held:
        message = "%s: the block %s ... %s is missing" % (path, begin, end)
    else:
        message = "%s: the block %s ... %s differs" % (path, begin, end)
    return failed({"state": "differs" if held else "absent"}, message, action="update",
                  diff=unified_diff(path, "".join(held), "".join(wanted)))


def check_directory(expect, host):
    path = expect["path"]
    info = host.lstat(path)
    if info is None:
        return failed({"state": "absent"}, "%s does not exist" % path, action="create")
    if not stat.S_ISDIR(info.st_mode):
        kind = _describe(info)
        return failed({"state": kind}, "%s is a %s, not a directory" % (path, kind), action="replace")
    actual, problems = _ownership(expect, info, host)
    if problems:
        return failed(actual, "%s: %s" % (path, "; ".join(problems)), action="update")
    return passed(actual, "%s is as expected" % path)


def check_link(expect, host):
    path, target = expect["path"], expect["target"]
    # What the link is for (and who sets it), where the item says so.
    purpose = ": %s" % expect["purpose"] if expect.get("purpose") else ""
    info = host.lstat(path)
    if expect["state"] == "absent":
        if info is not None and stat.S_ISLNK(info.st_mode):
            actual_target = os.readlink(host.path(path))
            return failed({"target": actual_target}, "%s -> %s is a link and should not be%s"
                          % (path, actual_target, purpose), action="remove")
        return passed({"state": _describe(info)}, "%s is not a link" % path)
    if info is None:
        return failed({"state": "absent"}, "%s does not exist, expected a link to %s%s" % (path, target, purpose),
                      action="create")
    if not stat.S_ISLNK(info.st_mode):
        # The common role refuses to replace it (it may hold data): a person moves it aside first.
        kind = _describe(info)
        return failed({"state": kind}, "%s is a %s, not a symlink to %s%s; a %s is not replaced by the link:"
                      " move it aside first" % (path, kind, target, purpose, kind), action="none")
    actual_target = os.readlink(host.path(path))
    if os.path.normpath(actual_target) != os.path.normpath(target):
        return failed({"target": actual_target}, "%s points to %s, expected %s%s" % (path, actual_target, target,
                                                                                     purpose))
    return passed({"target": actual_target}, "%s -> %s" % (path, actual_target))


def _option_text(value):
    if isinstance(value, bool):
        return "1" if value else "0"
    return str(value)


def parse_modprobe_options(text, module):
    """{option: value} set by 'options <module> ...' lines; later lines win, as in modprobe."""
    options = {}
    for line in text.splitlines():
        words = line.split("#", 1)[0].split()
        if len(words) >= 2 and words[0] == "options" and words[1].replace("-", "_") == module.replace("-", "_"):
            for word in words[2:]:
                key, _sep, value = word.partition("=")
                options[key] = value
    return options


def check_modprobe_options(expect, host):
    path, module = expect["path"], expect["module"]
    text = host.read_text(path)
    if text is None:
        return failed({"state": "absent"}, "%s does not exist" % path, action="create")
    actual = parse_modprobe_options(text, module)
    wrong = []
    for key, value in sorted(expect["options"].items()):
        if actual.get(key) != _option_text(value):
            shown = actual.get(key, "unset")
            wrong.append("%s=%s (expected %s)" % (key, shown, _option_text(value)))
    if wrong:
        return failed(actual, "%s: options %s: %s" % (path, module, ", ".join(wrong)), action="update")
    return passed(actual, "%s sets the expected options for %s" % (path, module))
