# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""rocm-smi -> SourceReport: one --json call, text commands when JSON is not usable.

rocm-smi's --json output (every version since 4.x) is ``{"cardN": {key: "string"}, "system": {...}}``
with the same key names as the text ``GPU[N] : key: value`` lines; topology matrices are flattened
into system keys such as "(Topology) Weight between DRM devices 0 and 1" (upper triangle only).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.model import GpuParseError, new_device, new_report
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.rocm_smi.text import (
    TOOL,
    apply_fields,
    build_topology,
    parse_rocm_smi_text,
    warn_of_vendor_ids,
)
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.tool_json import json_documents
from ansible_collections.rocm_fleet.core.plugins.module_utils.common.status import SOURCE_OK
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.tools import (
    add_warning,
    failed,
    first_line,
    guarded,
    is_unsupported_option,
    link_type_name,
    merge_into,
    tool_int,
    useful_text,
)

# Flags that exist from ROCm 4.x to 7.x; the text commands cover the same facts when JSON fails.
_DETAIL_FLAGS = ["--showdriverversion", "--showproductname", "--showbus", "--showid", "--showmeminfo", "vram"]
ROCM_SMI_JSON_ARGS = _DETAIL_FLAGS + ["--showtopo", "--json"]
ROCM_SMI_CONCISE_ARGS = []
ROCM_SMI_DETAIL_ARGS = list(_DETAIL_FLAGS)
ROCM_SMI_TOPOLOGY_ARGS = ["--showtopo"]
# The concise table comes first: it enumerates the GPUs in every version, even when
# the detail call dies half-way (tracebacks on APUs, assertion failures on old Vega).
ROCM_SMI_TEXT_COMMANDS = (ROCM_SMI_CONCISE_ARGS, ROCM_SMI_DETAIL_ARGS, ROCM_SMI_TOPOLOGY_ARGS)

_CARD_KEY = re.compile(r"^card(\d+)$")
_PAIR_KEY = re.compile(r"^\(Topology\) (Weight|Hops|Link type) between DRM devices (\d+) and (\d+)$", re.I)
_PAIR_KINDS = {"weight": "weight", "hops": "hops", "link type": "link_type"}


def parse_rocm_smi_json(text):
    """Parse rocm-smi --json output; ERROR:/WARNING: lines before or after the document become warnings."""
    documents, notes = json_documents(text)
    document = documents[0]
    if not isinstance(document, dict):
        raise GpuParseError("rocm-smi JSON is not an object", first_line(text))
    cards = sorted((int(m.group(1)), value) for m, value in ((_CARD_KEY.match(k), v) for k, v in document.items()) if m)
    system = document.get("system") or {}
    if not cards and not system:
        raise GpuParseError("rocm-smi JSON has no card or system keys", first_line(text))
    report = new_report()
    for note in notes:
        add_warning(report, "%s: %s" % (TOOL, " ".join(note.split())))
    if len(documents) > 1:
        add_warning(report, "%s: %d more JSON documents after the first ignored" % (TOOL, len(documents) - 1))
    report["driver_version"] = useful_text(system.get("Driver version"))
    numa_affinity, vendor_id_keys = {}, []
    for index, fields in cards:
        if not isinstance(fields, dict):
            raise GpuParseError("card%d is not an object" % index, first_line(text))
        device = new_device(index=index)
        vendor_id_keys.extend(apply_fields(device, fields, numa_affinity))
        report["devices"].append(device)
    warn_of_vendor_ids(report, vendor_id_keys)
    matrices = _system_matrices(system)
    report["topology"] = build_topology([index for index, _unused in cards], matrices, numa_affinity)
    return report


def collect_rocm_smi(run):
    return guarded(TOOL, _collect, run)


def _collect(run):
    rc, stdout, stderr = run(list(ROCM_SMI_JSON_ARGS))
    json_problem = None
    try:
        report = parse_rocm_smi_json(stdout)
        if report["devices"]:
            if rc != 0:
                # rocm-smi exits 1 when any single query failed but still prints the JSON it has.
                add_warning(report, "%s: --json exited %d: %s" % (TOOL, rc, first_line(stderr) or "no message"))
            return SOURCE_OK, report
        json_problem = "--json listed no GPUs"
    except GpuParseError as error:
        json_problem = "--json unusable (%s)" % error
    if is_unsupported_option(rc, stdout, stderr):
        json_problem = "--json or its flags are not supported: %s" % first_line(stderr, stdout)
    return _collect_text(run, json_problem)


def _collect_text(run, json_problem):
    report = new_report()
    problems = []
    parsed_any = False
    for args in ROCM_SMI_TEXT_COMMANDS:
        rc, stdout, stderr = run(list(args))
        command = " ".join([TOOL] + list(args))
        try:
            part = parse_rocm_smi_text(stdout)
        except GpuParseError as error:
            problems.append((command, "exit %d, %s" % (rc, error), error.line))
            continue
        parsed_any = True
        if rc != 0:
            add_warning(report, "%s: exited %d: %s" % (command, rc, first_line(stderr) or "no message"))
        _merge_text_report(report, part)
    if not parsed_any:
        command, problem, line = problems[0]
        return failed(report, TOOL, "%s; text fallback failed too: %s: %s" % (json_problem, command, problem), line)
    add_warning(report, "%s: %s; used the text output instead" % (TOOL, json_problem))
    for command, problem, _line in problems:
        add_warning(report, "%s: %s" % (command, problem))
    return SOURCE_OK, report


def _merge_text_report(report, part):
    """Merge one text command's report into ``report``, matching devices by rocm-smi index."""
    by_index = dict((device["index"], device) for device in report["devices"])
    for device in part["devices"]:
        if device["index"] in by_index:
            merge_into(by_index[device["index"]], device)
        else:
            report["devices"].append(device)
            by_index[device["index"]] = device
    report["devices"].sort(key=lambda device: device["index"])
    for key in ("driver_version", "rocm_version", "tool_version"):
        report[key] = report[key] or part[key]
    if part["topology"] is not None:
        report["topology"] = _merge_topology(report["topology"], part["topology"])
    for warning in part["warnings"]:
        add_warning(report, warning)


def _merge_topology(current, extra):
    if current is None:
        return extra
    merged = dict(current)
    for key, value in extra.items():
        if merged.get(key) is None:
            merged[key] = value
    return merged


def _system_matrices(system):
    matrices = {"weight": {}, "hops": {}, "link_type": {}}
    for key, value in system.items():
        match = _PAIR_KEY.match(str(key))
        if not match:
            continue
        kind = _PAIR_KINDS[match.group(1).lower()]
        source, target = int(match.group(2)), int(match.group(3))
        converted = link_type_name(value) if kind == "link_type" else tool_int(value)
        # JSON holds the upper triangle only; the links are symmetric.
        matrices[kind][(source, target)] = converted
        matrices[kind].setdefault((target, source), converted)
    return matrices
