# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``expect`` schema of every item kind, validated before anything is read from the host.

``validate_item(item)`` returns the item with its ``expect`` completed by the
defaults, or raises ``ItemInvalid`` naming the item id and the field. The
field tables here are also what docs/compliance-checks.md documents.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.core import parse_mode

# Type names read as the end of "must be ...".
STR, INT, BOOL, SCALAR = "a string", "an integer", "a boolean", "a string or an integer"
LIST, DICT = "a list of strings", "a mapping"
REQUIRED = object()
_OVERRIDE = re.compile(r"^HSA_OVERRIDE_GFX_VERSION(?:_\d+)?$")
# HIP, the HSA runtime, AMD SMI: what a ROCm program loads by soname (compliance.loader, ROCM-ENV-008).
RUNTIME_LIBRARIES = ("libamdhip64.so.*", "libhsa-runtime64.so.*", "libamd_smi.so*")
# The variables that keep only the GPUs they list (compliance.visibility, ROCM-ENV-007).
VISIBILITY_NAMES = ("HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL")


class ItemInvalid(ValueError):
    """An item the evaluator cannot check; the message names the item and the field."""


def _field(kind, default=None, choices=None):
    return {"type": kind, "default": default, "choices": choices}


_OWNERSHIP = {"mode": _field(STR), "owner": _field(STR), "group": _field(STR)}

KIND_FIELDS = {
    "file": dict(
        _OWNERSHIP,
        path=_field(STR, REQUIRED),
        content=_field(STR),
        state=_field(STR, "present", ("present", "absent")),
    ),
    "file_lines": {"path": _field(STR, REQUIRED), "lines": _field(LIST, []), "absent": _field(LIST, [])},
    # A marked block in a file the role does not own (blockinfile): begin and end are its marker lines.
    "file_block": {
        "path": _field(STR, REQUIRED),
        "begin": _field(STR, REQUIRED),
        "end": _field(STR, REQUIRED),
        "lines": _field(LIST, []),
        "state": _field(STR, "present", ("present", "absent")),
    },
    "directory": dict(_OWNERSHIP, path=_field(STR, REQUIRED)),
    # purpose: what the link is for and who puts it back, added to a failure's message. absent: no link at path
    # (a directory or file there is not the link's).
    "link": {
        "path": _field(STR, REQUIRED),
        "target": _field(STR),
        "state": _field(STR, "present", ("present", "absent")),
        "purpose": _field(STR),
    },
    "group_members": {
        "group": _field(STR, REQUIRED),
        "members": _field(LIST, REQUIRED),
        "exclusive": _field(BOOL, False),
    },
    "group_exists": {"group": _field(STR, REQUIRED), "gid": _field(INT)},
    "user_exists": {"user": _field(STR, REQUIRED), "uid": _field(INT)},
    "sysctl": {"name": _field(STR, REQUIRED), "value": _field(SCALAR, REQUIRED)},
    "kernel_cmdline": {"params": _field(LIST, REQUIRED), "grub_file": _field(STR), "grub_contains": _field(LIST)},
    "boot_entries": {"params": _field(LIST, REQUIRED), "directory": _field(STR, "/boot/loader/entries")},
    "module_loaded": {
        "name": _field(STR, REQUIRED),
        "loaded": _field(BOOL, True),
        "version": _field(STR),
        "parameters": _field(DICT, {}),
    },
    "modprobe_options": {
        "path": _field(STR, REQUIRED),
        "module": _field(STR, REQUIRED),
        "options": _field(DICT, REQUIRED),
    },
    "device_node": {
        "glob": _field(STR, REQUIRED),
        "group": _field(STR),
        "mode": _field(STR),
        "type": _field(STR, "char", ("char", "block")),
        "required": _field(BOOL, True),
    },
    "package": {
        "name": _field(STR, REQUIRED),
        "version": _field(STR),
        "state": _field(STR, "present", ("present", "absent")),
    },
    "apt_source": {
        "path": _field(STR, REQUIRED),
        "signed_by": _field(STR),
        "uris": _field(LIST, []),
        "suites": _field(LIST, []),
        "components": _field(LIST, []),
        # The keyring may hold these keys only: fingerprint (one) and fingerprints (a key rotation's) together;
        # the rocm-fleet lab's keys (lab_fingerprints) only where lab is true (signing_key_pins.pin_decision).
        "fingerprint": _field(STR),
        "fingerprints": _field(LIST),
        "lab_fingerprints": _field(LIST, []),
        "lab": _field(BOOL, False),
        # The inventory variable that pins them, which messages name.
        "pins_variable": _field(STR, "repo_signing_keys"),
    },
    # An rpm repository key: the file a .repo's gpgkey names holds pinned keys only, each imported (compliance.rpm).
    "rpm_key": {
        "path": _field(STR, REQUIRED),
        "fingerprints": _field(LIST),
        "lab_fingerprints": _field(LIST, []),
        "lab": _field(BOOL, False),
        "pins_variable": _field(STR, "repo_signing_keys"),
    },
    "apt_pin": {
        "path": _field(STR, REQUIRED),
        "package": _field(STR, REQUIRED),
        "pin": _field(STR, REQUIRED),
        "priority": _field(INT, REQUIRED),
    },
    # What a job gets (compliance.environment): a listed user's login shell, or the systemd manager's services.
    "job_environment": {
        "scope": _field(STR, REQUIRED, ("login", "service")),
        "users": _field(LIST, []),
        "hsa_overrides": _field(DICT, {}),
        "gfx_targets": _field(LIST, []),
        "rocm_path": _field(STR, "/opt/rocm"),
        "release_dir": _field(STR),
        "require_rocm_path": _field(BOOL, True),
        # The files the role writes (the service scope: its systemd drop-in): what is pending only in them,
        # site.yml applies.
        "role_files": _field(LIST, []),
        "run": _field(BOOL, True),
        "timeout": _field(INT, 10),
    },
    # No variable hides GPUs from every login session or service (compliance.visibility); gpu_count: the host's
    # logical GPUs, declared: the settings a site makes on purpose (name to value).
    "device_visibility": {
        "users": _field(LIST, []),
        "gpu_count": _field(INT),
        "declared": _field(DICT, {}),
        "run": _field(BOOL, True),
        "timeout": _field(INT, 10),
    },
    # The loader resolves the ROCm runtime libraries to the default release (compliance.loader): library file
    # name patterns; role_files: the ld.so.conf.d file the role writes.
    "runtime_libraries": {
        "rocm_path": _field(STR, "/opt/rocm"),
        "release_dir": _field(STR),
        "libraries": _field(LIST, list(RUNTIME_LIBRARIES)),
        "role_files": _field(LIST, []),
        "run": _field(BOOL, True),
        "timeout": _field(INT, 10),
    },
    # The listed users can open the device nodes (compliance.access).
    "device_access": {
        "users": _field(LIST, REQUIRED),
        # The groups the inventory puts the users in: a denial for want of one is ROCM-ACCESS-002's finding.
        "groups": _field(LIST, []),
        "globs": _field(LIST, ["/dev/kfd", "/dev/dri/renderD*"]),
        "vendor": _field(STR, "0x1002"),
        "open": _field(BOOL, False),
        "timeout": _field(INT, 10),
    },
    # The distribution's 70-uaccess.rules masked by the copy udev_uaccess derives from it (compliance.access).
    "udev_uaccess": {
        "path": _field(STR, REQUIRED),
        "sources": _field(LIST, REQUIRED),
        "vendor": _field(STR, "0x1002"),
        "owner": _field(STR),
        "group": _field(STR),
        "mode": _field(STR),
    },
    # No ACL entry on the matching device nodes (compliance.access).
    "device_acl": {
        "globs": _field(LIST, REQUIRED),
        "vendor": _field(STR, "0x1002"),
    },
    # No udev rules file besides the role's own gives every user /dev/kfd or an AMD render node (compliance.udev).
    "udev_open_rules": {
        "dirs": _field(LIST, ["/etc/udev/rules.d", "/run/udev/rules.d"]),
        "keep": _field(LIST, []),
        "kfd_mode": _field(STR, "0660"),
        "render_mode": _field(STR, "0660"),
        "vendor": _field(STR, "0x1002"),
    },
    # Members of a group whom the inventory does not list: a warning, or a failure when exclusive.
    "group_unlisted": {
        "group": _field(STR, REQUIRED),
        "members": _field(LIST, []),
        "exclusive": _field(BOOL, False),
    },
}
KINDS = tuple(sorted(KIND_FIELDS))
ITEM_KEYS = ("id", "title", "kind", "role", "label", "repair", "expect", "severity")


def validate_item(item, position):
    """The item with defaults filled in; raises ItemInvalid naming the item id (or position) and field."""
    if not isinstance(item, dict):
        raise ItemInvalid("items[%d]: must be a mapping, got %s" % (position, type(item).__name__))
    name = item.get("id") if isinstance(item.get("id"), str) and item.get("id") else "items[%d]" % position

    def fail(field, message):
        raise ItemInvalid("%s: %s: %s" % (name, field, message))

    unknown = sorted(set(item) - set(ITEM_KEYS))
    if unknown:
        fail(", ".join(unknown), "unknown item keys (allowed: %s)" % ", ".join(ITEM_KEYS))
    if name.startswith("items["):
        fail("id", "a non-empty string is required")
    for key in ("title", "role", "label", "repair", "severity"):
        if item.get(key) is not None and not isinstance(item[key], str):
            fail(key, "must be a string")
    if item.get("kind") not in KIND_FIELDS:
        fail("kind", "%r is not one of %s" % (item.get("kind"), ", ".join(KINDS)))
    expect = item.get("expect")
    if not isinstance(expect, dict):
        fail("expect", "must be a mapping")
    fields = KIND_FIELDS[item["kind"]]
    unknown = sorted(set(expect) - set(fields))
    if unknown:
        allowed = ", ".join(sorted(fields))
        fail("expect." + ", expect.".join(unknown), "unknown for kind %s (allowed: %s)" % (item["kind"], allowed))
    completed = {}
    for field, spec in fields.items():
        value = expect.get(field)
        if value is None:
            if spec["default"] is REQUIRED:
                fail("expect." + field, "required for kind %s" % item["kind"])
            completed[field] = _copy(spec["default"])
            continue
        completed[field] = _coerce(value, spec, lambda message, f=field: fail("expect." + f, message))
    _check_rules(item["kind"], completed, lambda field, message: fail("expect." + field, message))
    validated = dict((key, item.get(key)) for key in ITEM_KEYS)
    validated["title"] = validated["title"] or name
    validated["expect"] = completed
    return validated


def _copy(value):
    return list(value) if isinstance(value, list) else dict(value) if isinstance(value, dict) else value


_TYPE_TESTS = {
    STR: lambda value: isinstance(value, str),
    INT: lambda value: isinstance(value, int) and not isinstance(value, bool),
    BOOL: lambda value: isinstance(value, bool),
    SCALAR: lambda value: isinstance(value, (str, int)) and not isinstance(value, bool),
    LIST: lambda value: isinstance(value, list) and all(isinstance(entry, str) for entry in value),
    DICT: lambda value: isinstance(value, dict),
}


def _coerce(value, spec, fail):
    if not _TYPE_TESTS[spec["type"]](value):
        fail("must be %s, got %r" % (spec["type"], value))
    if spec["type"] == SCALAR:
        value = str(value)
    if spec["choices"] and value not in spec["choices"]:
        fail("%r is not one of %s" % (value, ", ".join(spec["choices"])))
    return value


def _check_rules(kind, expect, fail):
    """Rules across fields that a field table cannot say."""
    if expect.get("mode") is not None and parse_mode(expect["mode"]) is None:
        fail("mode", "must be an octal string such as '0644', got %r" % expect["mode"])
    if kind == "file" and expect["state"] == "absent":
        for field in ("content", "mode", "owner", "group"):
            if expect.get(field) is not None:
                fail(field, "makes no sense with state absent")
    if kind == "file_lines" and not (expect["lines"] or expect["absent"]):
        fail("lines", "give lines and/or absent")
    if kind == "file_block" and (expect["state"] == "present") != bool(expect["lines"]):
        fail("lines", "required for a block that is present" if expect["state"] == "present"
             else "makes no sense with state absent")
    if kind == "link" and (expect["state"] == "present") != (expect["target"] is not None):
        fail("target", "required for a link that is present" if expect["state"] == "present"
             else "makes no sense with state absent")
    if kind in ("kernel_cmdline", "boot_entries", "group_members") and not expect[
            "members" if kind == "group_members" else "params"]:
        fail("members" if kind == "group_members" else "params", "must not be empty")
    if kind == "kernel_cmdline" and expect.get("grub_contains") and not expect.get("grub_file"):
        fail("grub_contains", "needs grub_file")
    if kind == "modprobe_options" and not expect["options"]:
        fail("options", "must not be empty")
    if kind == "package" and expect["state"] == "absent" and expect.get("version"):
        fail("version", "makes no sense with state absent")
    for field in ("fingerprint", "fingerprints"):
        if kind == "apt_source" and expect.get(field) and not expect.get("signed_by"):
            fail(field, "needs signed_by (the keyring whose key it pins)")
    if kind == "job_environment":
        if expect["scope"] == "login" and not expect["users"]:
            fail("users", "must not be empty for scope login")
        for name, value in expect["hsa_overrides"].items():
            if not _OVERRIDE.match(str(name)) or isinstance(value, (dict, list, bool)) or value is None:
                fail("hsa_overrides.%s" % name, "must be HSA_OVERRIDE_GFX_VERSION[_<node>] with a version string")
    if kind == "device_visibility":
        if expect["gpu_count"] is not None and expect["gpu_count"] < 0:
            fail("gpu_count", "must not be negative")
        for name, value in expect["declared"].items():
            if name not in VISIBILITY_NAMES:
                fail("declared.%s" % name, "must be one of %s" % ", ".join(VISIBILITY_NAMES))
            if isinstance(value, (dict, list, bool)) or value is None:
                fail("declared.%s" % name, "must be a string or a number")
    if kind == "runtime_libraries" and not expect["libraries"]:
        fail("libraries", "must not be empty")
    if kind in ("job_environment", "device_access", "device_visibility", "runtime_libraries") and \
            expect["timeout"] <= 0:
        fail("timeout", "must be a positive number of seconds")
    if kind == "device_access" and not (expect["users"] and expect["globs"]):
        fail("users" if not expect["users"] else "globs", "must not be empty")
    for field in ("parameters", "options"):
        for key, value in (expect.get(field) or {}).items():
            if isinstance(value, (dict, list)) or value is None:
                fail("%s.%s" % (field, key), "must be a string, number or boolean")
