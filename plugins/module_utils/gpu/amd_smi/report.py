# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""amd-smi -> SourceReport: list/static/topology as JSON, the text commands when no JSON is usable.

Each subcommand is evidence on its own: 'list' names the GPUs when it works, else 'static'
(or, in text, the default summary table) does, else 'topology'; the others fill in fields.
Indices are amd-smi's GPU numbers (not HIP/rocm-smi order); the merge matches devices by
PCI bus, and by amd-smi index where a part gives no bus.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.amd_smi.json_output import (
    parse_amd_smi_list_json,
    parse_amd_smi_static_json,
    parse_amd_smi_topology_json,
)
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.amd_smi.partition import parse_amd_smi_partition
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.amd_smi.text import (
    TOOL,
    parse_amd_smi_list_text,
    parse_amd_smi_static_text,
    parse_amd_smi_summary,
)
# topology_from_pairs: part of this module's public API, re-exported.
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.amd_smi.topology import (  # noqa: F401 pylint: disable=unused-import
    parse_amd_smi_topology_text,
    topology_from_pairs,
)
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.model import GpuParseError, new_device, new_report
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.partitions import number_ranges
from ansible_collections.rocm_fleet.core.plugins.module_utils.common.status import SOURCE_OK
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.tools import (
    add_warning,
    failed,
    first_line,
    guarded,
    is_unsupported_option,
    merge_into,
)

_STATIC_FLAGS = ["--asic", "--bus", "--vram", "--driver"]
AMD_SMI_LIST_JSON_ARGS = ["list", "--json"]
AMD_SMI_STATIC_JSON_ARGS = ["static"] + _STATIC_FLAGS + ["--json"]
AMD_SMI_TOPOLOGY_JSON_ARGS = ["topology", "--json"]
# Partition modes in a call of their own, so an amd-smi without --partition loses only them.
AMD_SMI_PARTITION_JSON_ARGS = ["static", "--partition", "--json"]
AMD_SMI_LIST_TEXT_ARGS = ["list"]
AMD_SMI_STATIC_TEXT_ARGS = ["static"] + _STATIC_FLAGS
AMD_SMI_STATIC_PARTITION_TEXT_ARGS = ["static", "--partition"]
AMD_SMI_PARTITION_TEXT_ARGS = ["partition"]  # 6.3+: also the available modes and their partition counts
AMD_SMI_SUMMARY_ARGS = []  # default table (26.x+): product names and versions
AMD_SMI_TOPOLOGY_TEXT_ARGS = ["topology"]
# Run in this order; the first part that lists GPUs names them.
_JSON_PARTS = (
    (AMD_SMI_LIST_JSON_ARGS, parse_amd_smi_list_json),
    (AMD_SMI_STATIC_JSON_ARGS, parse_amd_smi_static_json),
    (AMD_SMI_TOPOLOGY_JSON_ARGS, parse_amd_smi_topology_json),
    (AMD_SMI_PARTITION_JSON_ARGS, parse_amd_smi_static_json),
)
_TEXT_PARTS = (
    (AMD_SMI_LIST_TEXT_ARGS, parse_amd_smi_list_text),
    (AMD_SMI_STATIC_TEXT_ARGS, parse_amd_smi_static_text),
    (AMD_SMI_STATIC_PARTITION_TEXT_ARGS, parse_amd_smi_static_text),
    (AMD_SMI_PARTITION_TEXT_ARGS, parse_amd_smi_partition),
    (AMD_SMI_SUMMARY_ARGS, parse_amd_smi_summary),
    (AMD_SMI_TOPOLOGY_TEXT_ARGS, parse_amd_smi_topology_text),
)
_PARTITION_COMMANDS = (AMD_SMI_PARTITION_JSON_ARGS, AMD_SMI_STATIC_PARTITION_TEXT_ARGS, AMD_SMI_PARTITION_TEXT_ARGS)
AMD_SMI_JSON_COMMANDS = tuple(args for args, _unused in _JSON_PARTS)
AMD_SMI_TEXT_COMMANDS = tuple(args for args, _unused in _TEXT_PARTS)


def collect_amd_smi(run):
    return guarded(TOOL, _collect, run)


def _collect(run):
    parts, problems = _run_parts(run, _JSON_PARTS, json_output=True)
    report = _combine(parts)
    if report is not None:
        for problem in problems:
            add_warning(report, problem[0])
        return SOURCE_OK, report
    json_problem = "--json unusable (%s)" % problems[0][0]
    parts, text_problems = _run_parts(run, _TEXT_PARTS)
    report = _combine(parts)
    if report is None:
        problem, line = text_problems[0]
        return failed(new_report(), TOOL, "%s; %s" % (json_problem, problem), line)
    add_warning(report, "%s: %s; used the text output instead" % (TOOL, json_problem))
    for problem in problems[1:] + text_problems:
        add_warning(report, problem[0])
    return SOURCE_OK, report


def _run_parts(run, commands, json_output=False):
    """([(args, report)] of the commands that parsed, [(problem, first offending line)] of the others)."""
    parts, problems = [], []
    for args, parser in commands:
        rc, stdout, stderr = run(list(args))
        try:
            parts.append((args, parser(stdout)))
        except GpuParseError as error:
            if args in _PARTITION_COMMANDS and is_unsupported_option(rc, stdout, stderr):
                continue  # an amd-smi from before partitions has nothing to say of them
            command = " ".join([TOOL] + list(args))
            problems.append(("%s: exit %d, %s" % (command, rc, _explain(error, stderr)), error.line))
            if json_output and not parts and is_unsupported_option(rc, stdout, stderr):
                break  # an amd-smi without --json: the other JSON calls fail the same way
    return parts, problems


def _combine(parts):
    """The report of the first part that lists GPUs (else of the first part), filled from the others."""
    if not parts:
        return None
    shared = _forget_shared_buses(parts)
    listing = next((part for _unused, part in parts if part["devices"]), parts[0][1])
    for _unused, part in parts:
        if part is not listing:
            _merge(listing, part)
    listing["shared_pci_buses"] = shared
    _count_cut_gpus(listing)
    return listing


def _count_cut_gpus(report):
    """amd-smi numbers its GPUs from 0 without gaps: GPUs missing below the highest number
    were cut from the output (a poster's '...'), and are counted, with no fields."""
    indices = set(device["index"] for device in report["devices"] if device["index"] is not None)
    missing = [index for index in range(max(indices) + 1) if index not in indices] if indices else []
    if missing:
        report["devices"].extend(new_device(index=index) for index in missing)
        report["devices"].sort(key=lambda device: (device["index"] is None, device["index"] or 0))
        add_warning(
            report,
            "%s: GPU %s missing from its output below GPU %d; counted as GPUs it says nothing about"
            % (TOOL, number_ranges(missing), max(indices)),
        )


def _forget_shared_buses(parts):
    """A PCI address one part printed for several GPUs names none of them in any part: amd-smi 6.1.2
    without a DRM answer prints an uninitialised BDF, different in each run, often 0000:00:00.0.
    Partitions share their GPU's address, and a part that tells them apart by KFD node keeps it."""
    shared = set(bus for _unused, part in parts for bus in part["shared_pci_buses"])
    for _unused, part in parts:
        buses = [device["pci_bus"] for device in part["devices"] if device["pci_bus"]]
        shared.difference_update(bus for bus in buses if buses.count(bus) > 1)
    for args, part in parts:
        for bus in sorted(shared):
            indices = [device["index"] for device in part["devices"] if device["pci_bus"] == bus]
            for device in part["devices"]:
                if device["pci_bus"] == bus:
                    device["pci_bus"] = None
            if indices:
                add_warning(
                    part,
                    "%s: PCI address %s of GPU %s, which another amd-smi call printed for several GPUs; not used"
                    % (" ".join([TOOL] + list(args)), bus, ", ".join(str(index) for index in indices)),
                )
    return sorted(shared)


def _merge(report, part):
    """Fill ``report`` (authoritative for which GPUs exist) from ``part``.

    Devices match by PCI bus, or by amd-smi index where either side lacks the bus (an
    amd-smi that cannot read one prints N/A or leaves the key out). A topology is taken only
    when its rows are exactly the listed GPUs, in the same order.
    """
    for device in part["devices"]:
        match = _matching_device(report["devices"], device)
        if match is not None:
            merge_into(match, device)
    for key in ("driver_version", "rocm_version", "tool_version"):
        report[key] = report[key] or part[key]
    for index, counts in part["partition_counts"].items():
        report["partition_counts"].setdefault(index, counts)
    if part["topology"] is not None and report["topology"] is None:
        if _same_gpus(report["devices"], part["devices"]):
            report["topology"] = part["topology"]
        else:
            add_warning(report, "%s: topology rows do not match the listed GPUs; topology ignored" % TOOL)
    for warning in part["warnings"]:
        add_warning(report, warning)


def _matching_device(devices, device):
    bus = device["pci_bus"]
    same_bus = next((d for d in devices if bus and d["pci_bus"] == bus), None)
    if same_bus is not None:
        return same_bus
    same_index = next((d for d in devices if d["index"] == device["index"]), None)
    if same_index is not None and not (bus and same_index["pci_bus"]):
        return same_index
    return None


def _same_gpus(listed, rows):
    if len(listed) != len(rows):
        return False
    for device, row in zip(listed, rows):  # noqa: B905 - lengths checked above
        if row["pci_bus"] and device["pci_bus"] and row["pci_bus"] != device["pci_bus"]:
            return False
        if not row["pci_bus"] and row["index"] != device["index"]:
            return False
    return True


def _explain(error, stderr):
    if error.line in (None, "<empty output>") and first_line(stderr):
        return "%s; stderr: %r" % (error, first_line(stderr)[:160])
    return str(error)
