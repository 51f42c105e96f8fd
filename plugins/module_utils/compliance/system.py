# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Checkers for runtime state: accounts, sysctls, the active kernel command line, modules, device nodes."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import glob
import os
import shlex
import stat

from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.core import (
    CheckError,
    failed,
    format_mode,
    parse_mode,
    passed,
    version_matches,
)


def check_group_exists(expect, host):
    group = host.group(expect["group"])
    if group is None:
        return failed({"exists": False}, "group %s does not exist" % expect["group"], action="create")
    if expect.get("gid") is not None and group["gid"] != expect["gid"]:
        message = "group %s has gid %d, expected %d" % (expect["group"], group["gid"], expect["gid"])
        return failed({"gid": group["gid"]}, message, action="update")
    return passed({"gid": group["gid"]}, "group %s exists (gid %d)" % (expect["group"], group["gid"]))


def check_user_exists(expect, host):
    user = host.user(expect["user"])
    if user is None:
        return failed({"exists": False}, "user %s does not exist" % expect["user"], action="create")
    if expect.get("uid") is not None and user["uid"] != expect["uid"]:
        message = "user %s has uid %d, expected %d" % (expect["user"], user["uid"], expect["uid"])
        return failed({"uid": user["uid"]}, message, action="update")
    return passed({"uid": user["uid"]}, "user %s exists (uid %d)" % (expect["user"], user["uid"]))


def check_group_members(expect, host):
    name = expect["group"]
    group = host.group(name)
    if group is None:
        return failed({"exists": False}, "group %s does not exist" % name, action="create")
    members = sorted(group["members"])
    missing = [user for user in expect["members"] if user not in members]
    extra = [user for user in members if user not in expect["members"]] if expect["exclusive"] else []
    problems = []
    if missing:
        problems.append("%s not in group %s" % (", ".join(missing), name))
    if extra:
        problems.append("%s in group %s but not listed" % (", ".join(extra), name))
    if problems:
        return failed({"members": members}, "; ".join(problems), action="add" if not extra else "update")
    return passed({"members": members}, "every listed user is in group %s" % name)


def sysctl_path(name):
    """'vm.max_map_count' -> 'proc/sys/vm/max_map_count'; a name with '/' is taken as a path already."""
    relative = name if "/" in name else name.replace(".", "/")
    return "/proc/sys/" + relative.strip("/")


def normalize_sysctl(value):
    """sysctl prints multi-value entries with tabs; compare them word by word."""
    return " ".join(str(value).split())


def check_sysctl(expect, host):
    text = host.read_text(sysctl_path(expect["name"]))
    if text is None:
        raise CheckError("%s does not exist: unknown key or its module is not loaded" % sysctl_path(expect["name"]))
    actual, wanted = normalize_sysctl(text), normalize_sysctl(expect["value"])
    if actual != wanted:
        return failed(actual, "%s is %s, expected %s" % (expect["name"], actual, wanted), action="set")
    return passed(actual, "%s = %s" % (expect["name"], actual))


def split_cmdline(text):
    try:
        return shlex.split(text)
    except ValueError:  # an unbalanced quote: the kernel itself splits on blanks then
        return text.split()


def _active_values(words):
    """{key: last value or None for a bare flag}: for repeated parameters the kernel keeps the last."""
    values = {}
    for word in words:
        key, equals, value = word.partition("=")
        values[key] = value if equals else None
    return values


def _param_active(param, active):
    key, equals, value = param.partition("=")
    if key not in active:
        return False
    return active[key] == value if equals else True


def check_kernel_cmdline(expect, host):
    text = host.read_text("/proc/cmdline")
    if text is None:
        raise CheckError("/proc/cmdline does not exist: is /proc mounted?")
    active = _active_values(split_cmdline(text))
    missing = [param for param in expect["params"] if not _param_active(param, active)]
    actual = {"cmdline": text.strip(), "missing": missing, "pending": []}
    if not missing:
        return passed(actual, "all %d parameters are active" % len(expect["params"]))
    if not expect.get("grub_file"):
        return failed(actual, "not active: %s" % " ".join(missing))
    grub_text = host.read_text(expect["grub_file"]) or ""
    grub_words = set(split_cmdline(grub_text.replace('"', " ").replace("'", " ")))
    wanted_in_grub = expect.get("grub_contains")
    if wanted_in_grub:
        configured = all(snippet in grub_text for snippet in wanted_in_grub)
        pending = missing if configured else []
    else:
        pending = [param for param in missing if param in grub_words]
    actual["pending"] = pending
    not_configured = [param for param in missing if param not in pending]
    if not not_configured:
        message = "pending reboot: %s in %s but not active" % (" ".join(pending), expect["grub_file"])
        return failed(actual, message, action="reboot")
    message = "missing: %s neither active nor in %s" % (" ".join(not_configured), expect["grub_file"])
    if pending:
        message += "; pending reboot: %s" % " ".join(pending)
    return failed(actual, message, action="update")


BLS_ENTRIES = "/boot/loader/entries"


def check_boot_entries(expect, host):
    """Every Boot Loader Spec entry boots with the parameters: each ``options`` line holds them (what
    ``grubby --update-kernel=ALL --args`` writes on the RHEL family), so no installed kernel boots without."""
    directory = expect.get("directory") or BLS_ENTRIES
    try:
        names = sorted(name for name in os.listdir(host.path(directory)) if name.endswith(".conf"))
    except OSError:
        names = []
    if not names:
        return failed({"entries": {}}, "no boot entry in %s" % directory, action="update")
    lacking = {}
    for name in names:
        text = host.read_text("%s/%s" % (directory, name)) or ""
        words = []
        for line in text.splitlines():
            if line.split(None, 1)[:1] == ["options"]:
                words += split_cmdline(line.split(None, 1)[1] if len(line.split(None, 1)) > 1 else "")
        active = _active_values(words)
        missing = [param for param in expect["params"] if not _param_active(param, active)]
        if missing:
            lacking[name[: -len(".conf")]] = missing
    actual = {"entries": names, "missing": lacking}
    if lacking:
        details = "; ".join("%s lacks %s" % (entry, " ".join(missing)) for entry, missing in sorted(lacking.items()))
        return failed(actual, "%s: %s" % (directory, details), action="update")
    return passed(actual, "all %d boot entries have the %d parameters" % (len(names), len(expect["params"])))


def _bool_text(value):
    """sysfs shows bool parameters as Y/N; int parameters as numbers."""
    text = str(value).strip()
    return {"Y": "1", "N": "0", "True": "1", "False": "0"}.get(text, text)


def check_module_loaded(expect, host):
    name = expect["name"]
    module_dir = "/sys/module/%s" % name.replace("-", "_")
    initstate = host.read_text(module_dir + "/initstate")
    # Built-in modules have no initstate, only their parameters directory.
    loaded = (initstate or "").strip() == "live" or (initstate is None and host.lstat(module_dir) is not None)
    actual = {"loaded": loaded}
    if not expect["loaded"]:
        if loaded:
            return failed(actual, "module %s is loaded and should not be" % name, action="unload")
        return passed(actual, "module %s is not loaded" % name)
    if not loaded:
        state = "in state %s" % initstate.strip() if initstate else "not loaded"
        return failed(actual, "module %s is %s" % (name, state), action="load")
    problems = []
    if expect.get("version") is not None:
        version = (host.read_text(module_dir + "/version") or "").strip() or None
        actual["version"] = version
        if not version_matches(version, expect["version"]):
            problems.append("version %s, expected %s" % (version or "unknown", expect["version"]))
    for key, value in sorted(expect["parameters"].items()):
        text = host.read_text("%s/parameters/%s" % (module_dir, key))
        actual.setdefault("parameters", {})[key] = None if text is None else text.strip()
        if text is None or _bool_text(text) != _bool_text(value):
            shown = "unset" if text is None else text.strip()
            problems.append("parameter %s=%s, expected %s" % (key, shown, value))
    if problems:
        return failed(actual, "module %s: %s" % (name, "; ".join(problems)), action="reload")
    return passed(actual, "module %s is loaded as expected" % name)


def check_device_node(expect, host):
    pattern = host.path(expect["glob"])
    paths = sorted(glob.glob(pattern))
    if not paths:
        if expect["required"]:
            return failed({"nodes": []}, "no device matches %s" % expect["glob"], action="none")
        return passed({"nodes": []}, "no device matches %s (not required)" % expect["glob"])
    wanted_type = stat.S_ISCHR if expect["type"] == "char" else stat.S_ISBLK
    wanted_mode = parse_mode(expect["mode"]) if expect.get("mode") else None
    nodes, problems = {}, []
    for path in paths:
        shown = "/" + os.path.relpath(path, host.root) if host.root not in ("", "/") else path
        info = os.lstat(path)
        node = {"mode": format_mode(stat.S_IMODE(info.st_mode)), "group": host.group_name(info.st_gid)}
        nodes[shown] = node
        if not wanted_type(info.st_mode):
            problems.append("%s is not a %s device" % (shown, expect["type"]))
        if wanted_mode is not None and stat.S_IMODE(info.st_mode) != wanted_mode:
            problems.append("%s mode %s, expected %s" % (shown, node["mode"], format_mode(wanted_mode)))
        if expect.get("group") and node["group"] != expect["group"]:
            problems.append("%s group %s, expected %s" % (shown, node["group"], expect["group"]))
    if problems:
        return failed({"nodes": nodes}, "; ".join(problems), action="update")
    return passed({"nodes": nodes}, "%d device(s) match %s as expected" % (len(paths), expect["glob"]))
