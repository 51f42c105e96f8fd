# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""amd-smi text output (list, topology, default summary) -> SourceReport.

Device indices are amd-smi's GPU numbers, which need not match HIP/rocm-smi order.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu_model import (
    GpuParseError,
    clean_lines,
    new_device,
    new_report,
    normalize_pci_bus,
)
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu_tools import (
    add_warning,
    first_line,
    link_type_name,
    product_name,
    square_matrix,
    tool_int,
)

TOOL = "amd-smi"

_BLOCK = re.compile(r"^([A-Z][A-Z_ ]*):\s*(\d+)$")
_FIELD = re.compile(r"^([A-Z][A-Z_]*):\s*(.*)$")
_TABLE_TITLE = re.compile(r"^([A-Z][A-Z -]*) TABLE:?$")
_ERROR = re.compile(r"^ERROR[:\s]")
_BANNER = re.compile(r"AMD-SMI\s+(\S+)(?:.*?amdgpu version:\s*(\S+))?(?:.*?ROCm version:\s*(\S+))?")
_SUMMARY_FIRST = re.compile(r"^\|\s*([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\s+(.*?)\s*\|")
_SUMMARY_SECOND = re.compile(r"^\|\s*(\d+)\s+(\d+|N/A)\s+(\d+|N/A)\s+(\S+)\s*\|")
_TABLE_KINDS = {"WEIGHT": "weight", "HOPS": "hops", "LINK TYPE": "link_type"}


def raise_on_error_lines(text):
    """amd-smi reports a missing driver or GPU as 'ERROR:root:...' lines and nothing else."""
    lines = [line.strip() for line in clean_lines(text) if line.strip()]
    if lines and all(_ERROR.match(line) for line in lines):
        raise GpuParseError("amd-smi reported an error", lines[0])


def parse_amd_smi_list_text(text):
    """'amd-smi list': 'GPU: n' blocks of 'KEY: value'; other blocks (AI_NIC) are not GPUs."""
    raise_on_error_lines(text)
    report = new_report()
    block = None
    for line in clean_lines(text):
        stripped = line.strip()
        header = _BLOCK.match(stripped) if line[:1] != " " else None
        if header:
            block = None
            if header.group(1) == "GPU":
                block = new_device(index=int(header.group(2)))
                report["devices"].append(block)
            continue
        field = _FIELD.match(stripped)
        if block is None or not field:
            continue
        key, value = field.groups()
        if key == "BDF":
            block["pci_bus"] = normalize_pci_bus(value)
        elif key == "NODE_ID":
            block["kfd_node"] = tool_int(value)
    if not report["devices"] and not any(_BLOCK.match(line.strip()) for line in clean_lines(text)):
        raise GpuParseError("not 'amd-smi list' output", first_line(text) or "<empty output>")
    return report


def parse_amd_smi_topology_text(text):
    """'amd-smi topology': BDF-keyed tables, with or without blank lines between them."""
    raise_on_error_lines(text)
    tables = {}
    order = None
    kind = None
    columns = None
    for line in clean_lines(text):
        stripped = line.strip()
        title = _TABLE_TITLE.match(stripped)
        if title:
            kind, columns = _TABLE_KINDS.get(title.group(1).strip()), None
            continue
        tokens = stripped.split()
        if not tokens:
            continue
        if columns is None and all(normalize_pci_bus(token) for token in tokens):
            columns = [normalize_pci_bus(token) for token in tokens]
            order = order or columns
            continue
        row_bus = normalize_pci_bus(tokens[0])
        if kind and columns and row_bus:
            for target, value in zip(columns, tokens[1:]):  # noqa: B905 - rows may be cut short
                tables.setdefault(kind, {})[(row_bus, target)] = value
    if order is None:
        raise GpuParseError("not 'amd-smi topology' output", first_line(text) or "<empty output>")
    report = new_report()
    report["devices"] = [new_device(index=n, pci_bus=bus) for n, bus in enumerate(order)]
    position = dict((bus, n) for n, bus in enumerate(order))
    pairs = {}
    for kind, values in tables.items():
        known = ((a, b, v) for (a, b), v in values.items() if a in position and b in position)
        pairs[kind] = dict(((position[a], position[b]), v) for a, b, v in known)
    report["topology"] = topology_from_pairs(len(order), pairs, report)
    return report


def parse_amd_smi_summary(text):
    """Default 'amd-smi' table (26.x+): BDF and product per amd-smi GPU index, tool/driver/ROCm versions."""
    raise_on_error_lines(text)
    report = new_report()
    pending = None
    for line in clean_lines(text):
        stripped = line.strip()
        banner = _BANNER.search(stripped)
        if banner and report["tool_version"] is None:
            report["tool_version"], report["driver_version"], report["rocm_version"] = banner.groups()
            continue
        first = _SUMMARY_FIRST.match(stripped)
        if first:
            pending = (normalize_pci_bus(first.group(1)), product_name(first.group(2)))
            continue
        second = _SUMMARY_SECOND.match(stripped)
        if second and pending:
            report["devices"].append(new_device(index=int(second.group(1)), pci_bus=pending[0], product=pending[1]))
            pending = None
    if report["tool_version"] is None and not report["devices"]:
        raise GpuParseError("not the amd-smi summary table", first_line(text) or "<empty output>")
    return report


def topology_from_pairs(size, pairs, report):
    """TopologyReport from {kind: {(i, j): raw value}} in amd-smi index order.

    A weight or hop count of 0 between two different GPUs is physically impossible (KFD gives
    XGMI links weight 15 and PCIe paths more); amd-smi 26.x prints all zeros on MI355X when it
    does not know, so off-diagonal zeros are reported as unknown (None), not as zero.
    """
    converted = {}
    unknown_zeros = False
    for kind, values in pairs.items():
        converted[kind] = {}
        for (row, column), value in values.items():
            if row == column:
                continue
            if kind == "link_type":
                converted[kind][(row, column)] = link_type_name(value)
                continue
            number = tool_int(value)
            if number == 0:
                unknown_zeros, number = True, None
            converted[kind][(row, column)] = number
    if unknown_zeros:
        add_warning(report, "%s: zero weight/hops between different GPUs read as unknown" % TOOL)
    if not any(v is not None for values in converted.values() for v in values.values()):
        return None
    return {
        "link_type": _known_matrix(size, converted.get("link_type"), "SELF"),
        "hops": _known_matrix(size, converted.get("hops"), 0),
        "weight": _known_matrix(size, converted.get("weight"), 0),
        "numa_affinity": None,
    }


def _known_matrix(size, pairs, diagonal):
    if not pairs or all(value is None for value in pairs.values()):
        return None
    return square_matrix(size, pairs, diagonal)
