# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""amd-smi -> SourceReport: list/static/topology as JSON, the text commands when JSON fails.

JSON layouts: 'list' and 'static' are lists of per-GPU objects (amd-smi 26.x wraps
'static' in {"gpu_data": [...]}); 'topology' is a list of gpu_N-keyed dicts up to
6.1.0 and of {"gpu", "bdf", "links": [...]} from 6.1.1. Indices are amd-smi's
GPU numbers (not HIP/rocm-smi order); the merge matches devices by PCI bus.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu_amd_smi_text import (
    TOOL,
    parse_amd_smi_list_text,
    parse_amd_smi_summary,
    parse_amd_smi_topology_text,
    raise_on_error_lines,
    topology_from_pairs,
)
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu_model import (
    GpuParseError,
    new_device,
    new_report,
    normalize_pci_bus,
)
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu_tools import (
    STATE_OK,
    add_warning,
    failed,
    first_line,
    guarded,
    merge_into,
    normalize_gfx_target,
    parse_json_document,
    product_name,
    strict_hex_id,
    tool_int,
    useful_text,
)

AMD_SMI_LIST_JSON_ARGS = ["list", "--json"]
AMD_SMI_STATIC_JSON_ARGS = ["static", "--asic", "--bus", "--vram", "--driver", "--json"]
AMD_SMI_TOPOLOGY_JSON_ARGS = ["topology", "--json"]
AMD_SMI_LIST_TEXT_ARGS = ["list"]
AMD_SMI_TOPOLOGY_TEXT_ARGS = ["topology"]
AMD_SMI_SUMMARY_ARGS = []  # default table (26.x+): product names and versions
AMD_SMI_JSON_COMMANDS = (AMD_SMI_LIST_JSON_ARGS, AMD_SMI_STATIC_JSON_ARGS, AMD_SMI_TOPOLOGY_JSON_ARGS)
AMD_SMI_TEXT_COMMANDS = (AMD_SMI_LIST_TEXT_ARGS, AMD_SMI_TOPOLOGY_TEXT_ARGS, AMD_SMI_SUMMARY_ARGS)

_GPU_KEY = re.compile(r"^gpu_(\d+)$")
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]?i?B)?\s*$", re.I)
_UNITS = {"B": 1, "KB": 1024, "MB": 1024 ** 2, "GB": 1024 ** 3, "TB": 1024 ** 4}


def parse_amd_smi_list_json(text):
    report = new_report()
    for entry in _gpu_entries(text):
        report["devices"].append(
            new_device(index=tool_int(entry.get("gpu")), pci_bus=normalize_pci_bus(entry.get("bdf")),
                       kfd_node=tool_int(entry.get("node_id")))
        )
    return report


def parse_amd_smi_static_json(text):
    report = new_report()
    for entry in _gpu_entries(text):
        asic = _section(entry, "asic")
        vram = _section(entry, "vram")
        driver = _section(entry, "driver")
        report["devices"].append(new_device(
            index=tool_int(entry.get("gpu")),
            pci_bus=normalize_pci_bus(_section(entry, "bus").get("bdf")),
            device_id=strict_hex_id(asic.get("device_id")),
            subsystem_device_id=strict_hex_id(asic.get("subsystem_id")),
            product=product_name(asic.get("market_name")),
            gfx_target=normalize_gfx_target(asic.get("target_graphics_version")),
            vram_bytes=_bytes(vram.get("size")),
        ))
        report["driver_version"] = report["driver_version"] or useful_text(driver.get("version"))
    return report


def parse_amd_smi_topology_json(text):
    """Both layouts -> report with one device per row (index, bus when given) and a topology."""
    entries = _gpu_entries(text)
    report = new_report()
    indices = [tool_int(entry.get("gpu")) for entry in entries]
    position = dict((index, n) for n, index in enumerate(indices))
    pairs = {"weight": {}, "hops": {}, "link_type": {}}
    for entry in entries:
        row = position[tool_int(entry.get("gpu"))]
        report["devices"].append(new_device(index=indices[row], pci_bus=normalize_pci_bus(entry.get("bdf"))))
        for target, link in _links(entry):
            if target not in position:
                continue
            column = position[target]
            for kind, keys in (("weight", ("weight",)), ("hops", ("num_hops", "hops")), ("link_type", ("link_type",))):
                value = next((link[key] for key in keys if key in link), None)
                if value is not None:
                    pairs[kind][(row, column)] = value
    report["topology"] = topology_from_pairs(len(indices), pairs, report)
    return report


def collect_amd_smi(run):
    return guarded(TOOL, _collect, run)


def _collect(run):
    rc, stdout, stderr = run(list(AMD_SMI_LIST_JSON_ARGS))
    try:
        report = parse_amd_smi_list_json(stdout)
    except GpuParseError as error:
        return _collect_text(run, "list --json unusable (exit %d, %s)" % (rc, _explain(error, stderr)))
    for args, parser in ((AMD_SMI_STATIC_JSON_ARGS, parse_amd_smi_static_json),
                         (AMD_SMI_TOPOLOGY_JSON_ARGS, parse_amd_smi_topology_json)):
        rc, stdout, stderr = run(list(args))
        try:
            _merge(report, parser(stdout))
        except GpuParseError as error:
            add_warning(report, "%s %s: exit %d, %s" % (TOOL, " ".join(args), rc, _explain(error, stderr)))
    return STATE_OK, report


def _collect_text(run, json_problem):
    """Text fallback: `list` names the GPUs; the default summary table (26.x) names them too
    when `list` is unusable; `topology` and the summary then fill in fields."""
    parts, problems, first_bad_line = {}, [], None
    for args, parser in ((AMD_SMI_LIST_TEXT_ARGS, parse_amd_smi_list_text),
                         (AMD_SMI_TOPOLOGY_TEXT_ARGS, parse_amd_smi_topology_text),
                         (AMD_SMI_SUMMARY_ARGS, parse_amd_smi_summary)):
        rc, stdout, stderr = run(list(args))
        try:
            parts[tuple(args)] = parser(stdout)
        except GpuParseError as error:
            problems.append("%s: exit %d, %s" % (" ".join([TOOL] + list(args)), rc, _explain(error, stderr)))
            first_bad_line = first_bad_line if first_bad_line is not None else error.line
    listed = parts.pop(tuple(AMD_SMI_LIST_TEXT_ARGS), None)
    summary = parts.pop(tuple(AMD_SMI_SUMMARY_ARGS), None)
    report = listed if listed is not None else summary
    if report is None:
        return failed(new_report(), TOOL, "%s; %s" % (json_problem, problems[0]), first_bad_line)
    for part in (summary if report is listed else None, parts.get(tuple(AMD_SMI_TOPOLOGY_TEXT_ARGS))):
        if part is not None:
            _merge(report, part)
    add_warning(report, "%s: %s; used the text output instead" % (TOOL, json_problem))
    for problem in problems:
        add_warning(report, problem)
    return STATE_OK, report


def _merge(report, part):
    """Fill ``report`` (the list output, authoritative for which GPUs exist) from ``part``.

    Devices match by PCI bus, or by amd-smi index when ``part`` gives no bus. A topology is
    taken only when its rows are exactly the listed GPUs, in the same order.
    """
    for device in part["devices"]:
        if device["pci_bus"]:
            match = next((d for d in report["devices"] if d["pci_bus"] == device["pci_bus"]), None)
        else:
            match = next((d for d in report["devices"] if d["index"] == device["index"]), None)
        if match is not None:
            merge_into(match, device)
    for key in ("driver_version", "rocm_version", "tool_version"):
        report[key] = report[key] or part[key]
    if part["topology"] is not None and report["topology"] is None:
        if _same_gpus(report["devices"], part["devices"]):
            report["topology"] = part["topology"]
        else:
            add_warning(report, "%s: topology rows do not match the listed GPUs; topology ignored" % TOOL)
    for warning in part["warnings"]:
        add_warning(report, warning)


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


def _gpu_entries(text):
    raise_on_error_lines(text)
    document = parse_json_document(text)
    if isinstance(document, dict):
        document = next((value for value in document.values() if isinstance(value, list)), None)
    if not isinstance(document, list):
        raise GpuParseError("amd-smi JSON is not a list of GPUs", first_line(text))
    entries = [entry for entry in document if isinstance(entry, dict) and tool_int(entry.get("gpu")) is not None]
    if len(entries) != len(document):
        raise GpuParseError("amd-smi JSON entry without a 'gpu' number", first_line(text))
    return entries


def _section(entry, name):
    value = entry.get(name)
    return value if isinstance(value, dict) else {}


def _links(entry):
    """(target gpu, {field: value}) for the 6.1.1+ 'links' list or the 6.1.0 gpu_N-keyed dicts."""
    if isinstance(entry.get("links"), list):
        return [(tool_int(link.get("gpu")), link) for link in entry["links"] if isinstance(link, dict)]
    targets = {}
    for field in ("weight", "hops", "link_type"):
        for key, value in (entry.get(field) or {}).items() if isinstance(entry.get(field), dict) else ():
            match = _GPU_KEY.match(str(key))
            if match:
                targets.setdefault(int(match.group(1)), {})[field] = value
    return sorted(targets.items())


def _bytes(value):
    """{'value': 196592, 'unit': 'MB'} or '196592 MB' -> bytes (amd-smi's MB are MiB)."""
    if isinstance(value, dict):
        value = "%s %s" % (value.get("value"), value.get("unit") or "B")
    match = _SIZE.match(str(value or ""))
    if not match:
        return None
    unit = (match.group(2) or "B").upper().replace("I", "")
    return int(float(match.group(1)) * _UNITS.get(unit, 0)) or None
