# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a role manages, as data: the one definition that its tasks apply and compliance checks.

Each role lists its objects in ``__<role>_managed`` (vars/main.yml). ``normalize``
expands and completes them (defaults, the role, the label); the role applies the
result through the shared ``common`` role, whose tasks print each object's
``label``, and ``compliance_items`` turns the same result into node_compliance
items carrying that label, so drift names a change exactly as ``--check`` does.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

COLLECTION = "rocm_fleet.core"
FILE_DEFAULTS = {"owner": "root", "group": "root", "mode": "0644", "state": "present"}
DIRECTORY_DEFAULTS = {"owner": "root", "group": "root", "mode": "0755"}
LINK_STATES = ("present", "absent")

# kind -> (required fields, defaults, the field(s) a label names the object by)
KINDS = {
    "file": (("path",), FILE_DEFAULTS, lambda o: o["path"]),
    "directory": (("path",), DIRECTORY_DEFAULTS, lambda o: o["path"]),
    "line": (("path", "key", "value"), FILE_DEFAULTS, lambda o: "%s %s" % (o["path"], o["key"])),
    # A marked block in a file the role does not own (the role's blockinfile task): marker holds {mark}, which
    # blockinfile makes BEGIN and END; block is its text. The role's own task applies it (not the common role).
    "block": (("path", "marker"), {"state": "present", "block": ""},
              lambda o: "the %s block in %s" % (o["marker"].replace("{mark}", "").strip("# "), o["path"])),
    # A symbolic link whose text is target (present), or no link at path (absent: a directory or file there is
    # not the object's); purpose: what the link is for and who puts it back, said in a failed check's message.
    # The common role never replaces a directory or file at path with a link.
    "link": (("path",), {"state": "present"}, lambda o: o["path"]),
    "sysctl": (("name", "value", "file"), {"apply": True}, lambda o: "%s=%s" % (o["name"], o["value"])),
    "group": (("name",), {"system": True}, lambda o: "group %s" % o["name"]),
    "user": (("name",), {}, lambda o: "user %s" % o["name"]),
    "member": (("user", "groups"), {}, lambda o: "%s in %s" % (o["user"], ", ".join(o["groups"]))),
    "exclusive_members": (("group", "members"), {}, lambda o: "only the listed users in %s" % o["group"]),
    "device": (("glob", "group", "mode"), {}, lambda o: o["glob"]),
    # The distribution's udev uaccess rules, masked in /etc by a copy that skips AMD render nodes (udev_uaccess).
    "uaccess_mask": (("path", "sources"), {"vendor": "0x1002", "owner": "root", "group": "root", "mode": "0644"},
                     lambda o: "%s (the distribution's uaccess rules without the AMD render nodes)" % o["path"]),
    # No ACL entry on the GPU device nodes (a seat user's grant from before the mask).
    "device_acl": (("globs",), {"vendor": "0x1002"}, lambda o: "no ACL on %s" % ", ".join(o["globs"])),
    # No other udev rules file gives every user the GPU nodes (AMD's 70-amdgpu.rules); checked, and the
    # access role removes a file whose every rule does.
    "udev_open_rules": (("dirs", "keep"), {"vendor": "0x1002"},
                        lambda o: "no udev rule in %s opens the GPU nodes to every user" % ", ".join(o["dirs"])),
    "kernel_cmdline": (("params",), {}, lambda o: "boot parameters %s" % " ".join(o["params"])),
    # Every Boot Loader Spec entry's options hold the parameters (grubby edits them; the kernel role applies it).
    "boot_entries": (("params",), {"directory": "/boot/loader/entries"},
                     lambda o: "boot parameters %s in every boot entry" % " ".join(o["params"])),
    "package": (("names",), {"version": None}, lambda o: o.get("release") or ", ".join(o["names"])),
    # fingerprints: every key the keyring may hold (the current and the next key during a rotation).
    "signing_key": (("path", "fingerprints", "sources"), FILE_DEFAULTS, lambda o: o["path"]),
    # rpm: the key file a .repo's gpgkey names, and its keys imported into the rpm database.
    "rpm_key": (("path", "fingerprints"), FILE_DEFAULTS, lambda o: o["path"]),
    # Checked only (no task applies them): what a job gets, who can open the GPUs, who else is in their groups,
    # which GPUs a job sees, which runtime libraries the loader finds.
    "job_environment": (("scope",), {"users": [], "hsa_overrides": {}, "gfx_targets": []},
                        lambda o: "the environment %s get" % ("login shells" if o["scope"] == "login"
                                                              else "services")),
    "device_access": (("users",), {"open": False}, lambda o: "the listed users can open the GPU device nodes"),
    # No HIP/ROCR/CUDA_VISIBLE_DEVICES or GPU_DEVICE_ORDINAL for every session or service but the declared ones.
    "device_visibility": ((), {"users": [], "declared": {}},
                          lambda o: "no variable hides GPUs from every login session or service"),
    # The loader finds the ROCm runtime libraries (HIP, HSA, AMD SMI) of the default release, and no other's.
    "runtime_libraries": ((), {}, lambda o: "the loader resolves the ROCm runtime libraries to the default release"),
    "unlisted_members": (("group",), {"members": [], "exclusive": False},
                         lambda o: "nobody unlisted in %s" % o["group"]),
    # A GPU partition mode (set: compute or memory); checked against the gpu fact with the GPU class checks.
    "gpu_partition": (("set", "mode"), {"memory": None},
                      lambda o: "%s partition %s on every GPU" % (o["set"], o["mode"])),
}
# One object per value: {kind: group, name: [render, video]} is two groups.
EXPANDS = {"group": "name", "user": "name", "exclusive_members": "group", "device": "glob",
           "unlisted_members": "group"}
# The fields of a checked-only object that its item's expect takes as they are.
JOB_ENVIRONMENT_FIELDS = ("scope", "users", "hsa_overrides", "gfx_targets", "rocm_path", "release_dir",
                          "require_rocm_path", "role_files", "run", "timeout")
DEVICE_ACCESS_FIELDS = ("users", "groups", "globs", "vendor", "open", "timeout")
DEVICE_VISIBILITY_FIELDS = ("users", "gpu_count", "declared", "run", "timeout")
RUNTIME_LIBRARIES_FIELDS = ("rocm_path", "release_dir", "libraries", "role_files", "run", "timeout")
# The kinds the common role's apply tasks write (roles/common/tasks/apply.yml).
# Required fields that may be empty: a line's value ("excludepkgs=" lifts every exclude of dnf.conf).
MAY_BE_EMPTY = (("line", "value"),)
APPLIED_KINDS = ("directory", "file", "link", "line", "sysctl", "group", "user", "member")
# Item kinds that the controller evaluates against the gpu fact (compliance.gpu_class), not node_compliance.
GPU_ITEM_KINDS = ("gpu_partition",)


class ManagedStateError(ValueError):
    """A role's managed data that cannot be applied or checked; the message names the role and the object."""


def normalize(objects, role):
    """The role's objects, expanded and completed, each with ``role`` and ``label``; raises ManagedStateError."""
    if not isinstance(objects, list):
        raise ManagedStateError("role %s: __%s_managed must be a list of objects" % (role, role))
    normalized = []
    for position, raw in enumerate(objects):
        where = "role %s, __%s_managed[%d]" % (role, role, position)
        if not isinstance(raw, dict) or raw.get("kind") not in KINDS:
            raise ManagedStateError("%s: an object needs a kind, one of %s" % (where, ", ".join(sorted(KINDS))))
        if raw.get("when", True) in (False, "false", "False"):
            continue
        for obj in _expanded(raw):
            normalized.append(_completed(obj, role, where))
    labels = [obj["label"] for obj in normalized]
    repeated = sorted(set(label for label in labels if labels.count(label) > 1))
    if repeated:
        raise ManagedStateError("role %s: objects share the label(s) %s" % (role, ", ".join(repeated)))
    return normalized


def _expanded(raw):
    # {kind: link, links: [{path, target}]}: one link per item (a release stream's default links).
    if raw["kind"] == "link" and isinstance(raw.get("links"), list):
        base = dict((key, value) for key, value in raw.items() if key != "links")
        return [dict(base, path=item["path"], target=item["target"]) for item in raw["links"]]
    # {kind: package, releases: {6.4.1: [names]}}: one object per release.
    if raw["kind"] == "package" and isinstance(raw.get("releases"), dict):
        base = dict((key, value) for key, value in raw.items() if key != "releases")
        return [dict(base, release="ROCm %s" % release, names=names) for release, names in raw["releases"].items()]
    # {kind: file, paths: [/a, /b]}: one file per path (what a release stream no longer uses, say).
    if raw["kind"] == "file" and isinstance(raw.get("paths"), list):
        base = dict((key, value) for key, value in raw.items() if key != "paths")
        return [dict(base, path=path) for path in raw["paths"]]
    # {kind: file, directory: /etc/x, name: [a, b]}: one file per name in the directory.
    if raw["kind"] == "file" and raw.get("directory") and raw.get("name") is not None:
        base = dict((key, value) for key, value in raw.items() if key != "directory")
        names = raw["name"] if isinstance(raw["name"], list) else [raw["name"]]
        return [dict(base, name=name, path="%s/%s" % (raw["directory"].rstrip("/"), name)) for name in names]
    if raw["kind"] == "sysctl" and isinstance(raw.get("values"), dict):
        base = dict((key, value) for key, value in raw.items() if key != "values")
        return [dict(base, name=name, value=str(value)) for name, value in sorted(raw["values"].items())]
    if raw["kind"] == "member" and isinstance(raw.get("users"), list):
        base = dict((key, value) for key, value in raw.items() if key != "users")
        return [dict(base, user=user) for user in raw["users"]]
    field = EXPANDS.get(raw["kind"])
    if field and isinstance(raw.get(field), list):
        return [dict(raw, **{field: value}) for value in raw[field]]
    return [raw]


def _completed(raw, role, where):
    required, defaults, identity = KINDS[raw["kind"]]
    missing = [name for name in required
               if raw.get(name) is None or (raw.get(name) == "" and (raw["kind"], name) not in MAY_BE_EMPTY)]
    if missing:
        raise ManagedStateError("%s (%s): missing %s" % (where, raw["kind"], ", ".join(missing)))
    wants_content = raw["kind"] == "file" and raw.get("state", "present") == "present"
    if wants_content and not (raw.get("template") or "content" in raw):
        raise ManagedStateError("%s: file %s needs a template or a content" % (where, raw["path"]))
    if raw["kind"] == "link":
        _check_link(raw, where)
    if raw["kind"] == "block":
        _check_block(raw, where)
    # A member object's users were expanded; the checked-only kinds keep theirs.
    checked_only = ("job_environment", "device_access", "device_visibility")
    dropped = ("when", "values") if raw["kind"] in checked_only else ("when", "values", "users")
    obj = dict(defaults, **dict((key, value) for key, value in raw.items() if key not in dropped))
    obj["role"] = "%s.%s" % (COLLECTION, role)
    obj["label"] = "%s: %s" % (role, raw.get("label") or identity(obj))
    return obj


def _check_link(raw, where):
    path, state = raw["path"], raw.get("state", "present")
    if not isinstance(path, str) or not path.startswith("/"):
        raise ManagedStateError("%s: link path must be an absolute path, got %r" % (where, path))
    if state not in LINK_STATES:
        raise ManagedStateError("%s: link %s: state must be one of %s, got %r"
                                % (where, path, ", ".join(LINK_STATES), state))
    if state == "present" and (not isinstance(raw.get("target"), str) or not raw["target"]):
        raise ManagedStateError("%s: link %s needs a target (the text of the link)" % (where, path))
    if state == "absent" and raw.get("target"):
        raise ManagedStateError("%s: link %s: a target makes no sense with state absent" % (where, path))


def _check_block(raw, where):
    path, state = raw["path"], raw.get("state", "present")
    if "{mark}" not in str(raw["marker"]):
        raise ManagedStateError("%s: block in %s: marker must hold {mark} (BEGIN and END), got %r"
                                % (where, path, raw["marker"]))
    if state not in ("present", "absent"):
        raise ManagedStateError("%s: block in %s: state must be present or absent, got %r" % (where, path, state))
    if state == "present" and not str(raw.get("block") or "").strip():
        raise ManagedStateError("%s: block in %s needs a block (its text) with state present" % (where, path))


def of_kind(objects, kind, state=None):
    """The objects of ``kind`` (and ``state``, for files and links) that a task of the common role applies."""
    return [obj for obj in objects if obj["kind"] == kind and (state is None or obj.get("state") == state)]


def compliance_items(objects):
    """node_compliance items for ``objects``; a file's content is named by its template, rendered by the caller."""
    items = []
    for obj in objects:
        for kind, expect, check_id in _checks(obj):
            items.append({"id": check_id or obj["id"], "title": obj.get("title") or obj["id"], "kind": kind,
                          "role": obj["role"], "label": None if obj.get("repair") else obj["label"],
                          "repair": obj.get("repair"), "expect": expect})
    return items


def converge_items(obj):
    """The node_compliance items that prove ``obj`` as the common role's apply task would leave it (managed_check):
    its compliance items, and for a line its file's owner, group and mode, which lineinfile sets too. None for a
    kind no apply task writes (checked only, or applied by its role's own tasks)."""
    if obj["kind"] not in APPLIED_KINDS:
        return None
    items = compliance_items([obj])
    if obj["kind"] == "line":
        ownership = dict(items[0], kind="file", expect=dict(_ownership(obj), path=obj["path"]))
        items.append(ownership)
    return items


def _ownership(obj):
    return dict((key, obj[key]) for key in ("owner", "group", "mode") if obj.get(key) is not None)


def _picked(obj, fields):
    """The fields ``obj`` sets (an empty string from a template stands for unset)."""
    return dict((key, obj[key]) for key in fields if obj.get(key) not in (None, ""))


def _checks(obj):
    kind = obj["kind"]
    if kind == "file":
        if obj["state"] == "absent":
            return [("file", {"path": obj["path"], "state": "absent"}, None)]
        source = {"template": obj["template"]} if obj.get("template") else {"content": obj["content"]}
        return [("file", dict(_ownership(obj), path=obj["path"], **source), None)]
    if kind == "directory":
        return [("directory", dict(_ownership(obj), path=obj["path"]), None)]
    if kind == "link":
        return [("link", _picked(obj, ("path", "target", "state", "purpose")), None)]
    if kind == "block":
        begin, end = (obj["marker"].replace("{mark}", mark) for mark in ("BEGIN", "END"))
        lines = obj["block"].splitlines() if obj["state"] == "present" else []
        return [("file_block", {"path": obj["path"], "begin": begin, "end": end, "lines": lines,
                                "state": obj["state"]}, None)]
    if kind == "line":
        return [("file_lines", {"path": obj["path"], "lines": ["%s=%s" % (obj["key"], obj["value"])]}, None)]
    if kind == "sysctl":
        setting = "%s=%s" % (obj["name"], obj["value"])
        line = ("file_lines", {"path": obj["file"], "lines": [setting]}, obj.get("file_id"))
        runtime = [("sysctl", {"name": obj["name"], "value": obj["value"]}, None)] if obj["apply"] else []
        return runtime + [line]
    if kind == "group":
        return [("group_exists", {"group": obj["name"]}, None)]
    if kind == "user":
        return [("user_exists", {"user": obj["name"]}, None)]
    if kind == "member":
        return [("group_members", {"group": group, "members": [obj["user"]]}, None) for group in obj["groups"]]
    if kind == "exclusive_members":
        # Only who else is in the group: a listed user missing from it is the member object's finding.
        return [("group_unlisted", {"group": obj["group"], "members": obj["members"], "exclusive": True}, None)]
    if kind == "device":
        return [("device_node", {"glob": obj["glob"], "group": obj["group"], "mode": obj["mode"], "required": False},
                 None)]
    if kind == "uaccess_mask":
        return [("udev_uaccess", dict(_ownership(obj), path=obj["path"], sources=obj["sources"], vendor=obj["vendor"]),
                 None)]
    if kind == "device_acl":
        return [("device_acl", {"globs": obj["globs"], "vendor": obj["vendor"]}, None)]
    if kind == "udev_open_rules":
        return [("udev_open_rules", _picked(obj, ("dirs", "keep", "kfd_mode", "render_mode", "vendor")), None)]
    if kind == "kernel_cmdline":
        expect = {"params": obj["params"]}
        if obj.get("grub_file"):
            expect["grub_file"] = obj["grub_file"]
        return [("kernel_cmdline", expect, None)]
    if kind == "boot_entries":
        return [("boot_entries", {"params": obj["params"], "directory": obj["directory"]}, None)]
    if kind == "package":
        return [("package", {"name": name, "version": obj["version"]}, None) for name in obj["names"]]
    if kind == "job_environment":
        return [("job_environment", _picked(obj, JOB_ENVIRONMENT_FIELDS), None)]
    if kind == "device_access":
        return [("device_access", _picked(obj, DEVICE_ACCESS_FIELDS), None)]
    if kind == "device_visibility":
        return [("device_visibility", _picked(obj, DEVICE_VISIBILITY_FIELDS), None)]
    if kind == "runtime_libraries":
        return [("runtime_libraries", _picked(obj, RUNTIME_LIBRARIES_FIELDS), None)]
    if kind == "unlisted_members":
        return [("group_unlisted", {"group": obj["group"], "members": obj["members"], "exclusive": obj["exclusive"]},
                 None)]
    if kind == "gpu_partition":
        return [("gpu_partition", {"set": obj["set"], "mode": obj["mode"]}, None)]
    if kind == "signing_key":
        return [("apt_source", {"path": obj["sources"], "signed_by": obj["path"], "fingerprints": obj["fingerprints"],
                                "lab_fingerprints": obj.get("lab_fingerprints", []), "lab": obj.get("lab", False),
                                "pins_variable": obj.get("pins_variable", "repo_signing_keys")},
                 None)]
    if kind == "rpm_key":
        return [("rpm_key", {"path": obj["path"], "fingerprints": obj["fingerprints"],
                             "lab_fingerprints": obj.get("lab_fingerprints", []), "lab": obj.get("lab", False),
                             "pins_variable": obj.get("pins_variable", "repo_signing_keys")},
                 None)]
    raise ManagedStateError("%s: no check for kind %s" % (obj["label"], kind))
