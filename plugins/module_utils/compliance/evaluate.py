# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Evaluate a host's whole declared state in one pass: every item, then the GPU class expectations.

Nothing here is role-specific: the controller turns the roles' managed
objects into items, and this module only compares them with the host.
Each item costs a few open/stat calls; no item can stop the others.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.access import (
    check_device_access,
    check_group_unlisted,
)
from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.apt import check_apt_pin, check_apt_source
from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.rpm import check_rpm_key
from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.core import CheckError, HostView
from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.environment import check_job_environment
from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.files import (
    check_directory,
    check_file,
    check_file_block,
    check_file_lines,
    check_link,
    check_modprobe_options,
)
from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.loader import check_runtime_libraries
from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.packages import check_package
from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.schema import (
    KIND_FIELDS,
    ItemInvalid,
    validate_item,
)
from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.visibility import check_device_visibility
from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.udev import (
    check_device_acl,
    check_udev_open_rules,
    check_udev_uaccess,
)
from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.system import (
    check_boot_entries,
    check_device_node,
    check_group_exists,
    check_group_members,
    check_kernel_cmdline,
    check_module_loaded,
    check_sysctl,
    check_user_exists,
)
from ansible_collections.rocm_fleet.core.plugins.module_utils.common.status import CHECK_STATUSES, PROBLEM_STATUSES

CHECKERS = {
    "file": check_file,
    "file_lines": check_file_lines,
    "file_block": check_file_block,
    "directory": check_directory,
    "link": check_link,
    "group_members": check_group_members,
    "group_exists": check_group_exists,
    "user_exists": check_user_exists,
    "sysctl": check_sysctl,
    "kernel_cmdline": check_kernel_cmdline,
    "boot_entries": check_boot_entries,
    "module_loaded": check_module_loaded,
    "modprobe_options": check_modprobe_options,
    "device_node": check_device_node,
    "package": check_package,
    "apt_source": check_apt_source,
    "apt_pin": check_apt_pin,
    "rpm_key": check_rpm_key,
    "job_environment": check_job_environment,
    "device_visibility": check_device_visibility,
    "runtime_libraries": check_runtime_libraries,
    "device_access": check_device_access,
    "group_unlisted": check_group_unlisted,
    "udev_uaccess": check_udev_uaccess,
    "device_acl": check_device_acl,
    "udev_open_rules": check_udev_open_rules,
}
if set(CHECKERS) != set(KIND_FIELDS):  # a programming error: fail at import, also under python -O
    raise AssertionError("every kind with a schema needs a checker (and every checker a schema): %s"
                         % ", ".join(sorted(set(CHECKERS) ^ set(KIND_FIELDS))))


def evaluate_item(item, position, host):
    """One result dict; never raises."""
    try:
        item = validate_item(item, position)
    except ItemInvalid as exc:
        return _result(item if isinstance(item, dict) else {}, "error", None, None, str(exc))
    try:
        outcome = CHECKERS[item["kind"]](item["expect"], host)
    except CheckError as exc:
        return _result(item, "error", item["expect"], None, "%s: %s" % (item["id"], exc))
    except Exception as exc:  # a checker bug must cost one item, never the evaluation
        message = "%s: check failed unexpectedly (%s: %s)" % (item["id"], type(exc).__name__, exc)
        return _result(item, "error", item["expect"], None, message)
    return _result(
        item,
        outcome["status"],
        item["expect"],
        outcome["actual"],
        outcome["message"],
        outcome["diff"],
        outcome["action"],
        _repair(item, outcome),
    )


def _repair(item, outcome):
    """The item's repair, unless the outcome knows better: ``repair`` replaces it (site.yml applies what is pending
    in the role's own file), ``repair_also`` adds to it (who repairs a part the item's text does not cover)."""
    repair = item.get("repair") if isinstance(item.get("repair"), str) else None
    if outcome.get("repair"):
        return outcome["repair"]
    if outcome.get("repair_also"):
        return "%s; %s" % (repair, outcome["repair_also"]) if repair else outcome["repair_also"]
    return repair


def _result(item, status, expected, actual, message, diff="", action="", repair=None):
    def text(key):
        value = item.get(key)
        return value if isinstance(value, str) else None

    return {
        "id": text("id") or "",
        "title": text("title") or text("id") or "",
        "kind": text("kind") or "",
        "role": text("role"),
        "label": text("label"),
        "repair": repair if repair is not None else text("repair"),
        "severity": text("severity"),
        "status": status,
        "expected": expected,
        "actual": actual,
        "message": message,
        "diff": diff,
        "action": action,
    }


def problems(results):
    """``"<id> <status>: <message>"`` for each result that failed, could not be read or measured.

    Unknown counts: a gate (onboarding's verify) must not pass a GPU whose health nobody could measure.
    """
    return ["%s %s: %s" % (result.get("id"), result.get("status"), result.get("message") or "")
            for result in results or [] if result.get("status") in PROBLEM_STATUSES]


def findings_only(results):
    """``results`` with each check's passing items folded into one entry, every other result whole.

    The entry is ``{id, title, status: pass, items: N}``, where the check's first passing item was: what a
    fleet's drift report shows of a passed check (host_compliance detail=findings). Folding folded results
    again adds their ``items``.
    """
    out, passed = [], {}
    for result in results:
        if result.get("status") != "pass":
            out.append(result)
            continue
        entry = passed.get(result.get("id"))
        if entry is None:
            entry = passed[result.get("id")] = {"id": result.get("id"), "title": result.get("title"),
                                                "status": "pass", "items": 0}
            out.append(entry)
        entry["items"] += result.get("items", 1)
    return out


def gpu_brief(gpu):
    """What a fleet's drift report shows of the gpu fact (its GPU line and link picture), the rest left out."""
    if not isinstance(gpu, dict):
        return gpu
    devices = [dict((key, device.get(key)) for key in ("product", "numa_node")) if isinstance(device, dict) else device
               for device in gpu.get("devices") or []]
    topology = gpu.get("topology") if isinstance(gpu.get("topology"), dict) else {}
    return {"count": gpu.get("count"), "devices": devices, "topology": {"link_type": topology.get("link_type")}}


def summarize(results):
    """Counts of the items by status (a folded entry counts as its ``items``), and ``total``."""
    counts = dict((status, 0) for status in CHECK_STATUSES)
    for result in results:
        counts[result["status"]] += result.get("items", 1)
    counts["total"] = sum(counts.values())
    return counts


def evaluate(items, root="/", run=None):
    """(results, summary) for ``items``, checked under ``root``; ``run`` runs commands on the host (tests)."""
    host = HostView(root, run=run)
    results = [evaluate_item(item, position, host) for position, item in enumerate(items or [])]
    return results, summarize(results)
