# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""rocm-smi text output -> SourceReport, and the per-GPU field names shared with --json.

One reader for every text layout seen from ROCm 4.x to 7.x: ``GPU[n] : key: value``
lines (-i, --showproductname, --showbus, --showmeminfo, -a, NUMA lines), the
GPU-by-GPU matrices of --showtopo*, the three concise-table layouts and the
--showhw table. Section banners may have any width; ERROR:/WARNING: lines are
kept as warnings; a traceback or assertion ends the output but keeps what parsed.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.model import (
    GpuParseError,
    clean_lines,
    new_device,
    new_report,
    normalize_pci_bus,
)
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.rocm_smi.fields import (
    TOOL,
    apply_fields,
    warn_of_vendor_ids,
)
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.rocm_smi.partitions import read_partitions_cell
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.tools import (
    add_warning,
    board_id,
    first_line,
    is_banner,
    link_type_name,
    normalize_gfx_target,
    product_name,
    square_matrix,
    strict_hex_id,
    tool_int,
    useful_text,
)

NAME_COLUMN_WIDTH = 20  # 6.0-6.1.0 concise table cuts names at 20 characters

_SECTION = re.compile(r"^=+\s*(.*?)\s*=+$")
# A line that opens like a banner but does not close like one: the output was cut or mangled.
_CUT_BANNER = re.compile(r"^={5,}[^=]*[^=\s][^=]*$")
_KEY_VALUE = re.compile(r"^GPU\s*\[?\s*(\d+)\s*\]?\s*:\s*(.*)$")
_MATRIX_ROW = re.compile(r"^GPU(\d+)\s+(.*)$")
_OLD_CONCISE_ROW = re.compile(r"^(\d+)\s+\[\s*(0x[0-9a-fA-F]+)\s*:\s*(0x[0-9a-fA-F]+)\s*\]")
# Device, Node, DID and GUID; a partition a container sees but cannot meter prints N/A for
# them (ROCm/amdsmi#100), and the row is still a device.
_NEW_CONCISE_ROW = re.compile(r"^(\d+)\s+(\d+|N/A)\s+(0x[0-9a-fA-F]+|N/A),\s*(\d+|N/A)\s", re.I)
_INDEX_ROW = re.compile(r"^(\d+)\s+\S")
_END_MARKERS = (
    re.compile(r"^Traceback \(most recent call last\)"),
    re.compile(r"\.(?:cc|cpp|h):\d+: .*(?:Assertion|assert)", re.I),
    re.compile(r"^Aborted|^Segmentation fault"),
)
_MATRIX_KINDS = (("weight", "weight"), ("hops", "hops"), ("link type", "link_type"))


def build_topology(indices, matrices, numa_affinity):
    """TopologyReport over ``indices`` (sorted tool indices) from {(i, j): value} dicts keyed by tool index."""
    if not any(matrices.values()) and not numa_affinity:
        return None
    position = dict((index, number) for number, index in enumerate(indices))

    def remap(pairs):
        return dict(((position[i], position[j]), v) for (i, j), v in pairs.items() if i in position and j in position)

    return {
        "link_type": square_matrix(len(indices), remap(matrices.get("link_type", {})), "SELF"),
        "hops": square_matrix(len(indices), remap(matrices.get("hops", {})), 0),
        "weight": square_matrix(len(indices), remap(matrices.get("weight", {})), 0),
        "numa_affinity": [numa_affinity.get(index) for index in indices] if numa_affinity else None,
    }


class _TextState:
    def __init__(self):
        self.report = new_report()
        self.fields = {}  # tool index -> {key: value}
        self.rows = {}  # tool index -> partial DeviceReport from table rows
        self.matrices = {"weight": {}, "hops": {}, "link_type": {}}
        self.matrix = None  # kind of the matrix section being read
        self.columns = None  # column indices of the matrix header
        self.concise = None  # "old", "new", "legacy" or "hw"
        self.hw_header = None
        self.pending_name = None  # old concise layout: the name line follows the ID line
        self.recognized = False
        self.vendor_id_keys = []  # what printed the vendor ID where an ID belongs (see board_id)


def parse_rocm_smi_text(text):
    """Parse any rocm-smi text output; raise GpuParseError when nothing in it is rocm-smi output."""
    state = _TextState()
    for line in clean_lines(text):
        stripped = line.strip()
        if not stripped:
            continue
        if any(marker.search(stripped) for marker in _END_MARKERS):
            add_warning(state.report, "%s output ends abnormally; kept what came before: %r" % (TOOL, stripped[:160]))
            state.recognized = True
            break
        _read_line(state, line, stripped)
    if not state.recognized:
        raise GpuParseError("not rocm-smi output", first_line(text) or "<empty output>")
    return _finish(state)


def _read_line(state, line, stripped):
    if _CUT_BANNER.match(stripped):
        raise GpuParseError("a section banner is cut short: the output is truncated or mangled", stripped)
    section = _SECTION.match(stripped)
    if section or is_banner(stripped):
        _start_section(state, section.group(1) if section else "")
        return
    if stripped.startswith(("ERROR:", "WARNING:")):
        # Not proof of rocm-smi output: 'ERROR:root:Driver not initialized' alone is a failure.
        add_warning(state.report, "%s: %s" % (TOOL, " ".join(stripped.split())))
        return
    if stripped.startswith("Driver version:"):
        state.recognized = True
        state.report["driver_version"] = useful_text(stripped.split(":", 1)[1])
        return
    if state.matrix:
        _read_matrix_line(state, stripped)
        return
    key_value = _KEY_VALUE.match(stripped)
    if key_value:
        state.recognized = True
        key, _sep, value = key_value.group(2).partition(":")
        state.fields.setdefault(int(key_value.group(1)), {}).setdefault(key.strip(), value.strip())
        return
    _read_table_line(state, line, stripped)


def _start_section(state, title):
    lowered = title.lower()
    state.matrix = None
    state.columns = None
    state.pending_name = None
    if title:
        state.recognized = True
    if "between two gpus" in lowered:
        state.matrix = next((kind for word, kind in _MATRIX_KINDS if lowered.startswith(word)), "ignored")
    if not is_banner(title or "=") and "concise" not in lowered:
        state.concise = None


def _read_matrix_line(state, stripped):
    tokens = stripped.split()
    if tokens and all(re.match(r"^GPU\d+$", token) for token in tokens):
        state.columns = [int(token[3:]) for token in tokens]
        return
    row = _MATRIX_ROW.match(stripped)
    if not row or state.columns is None or state.matrix == "ignored":
        return
    source = int(row.group(1))
    state.rows.setdefault(source, new_device(index=source))
    values = row.group(2).split()
    for target, value in ((state.columns[n], values[n]) for n in range(min(len(values), len(state.columns)))):
        if source == target:
            continue
        if state.matrix == "link_type":
            state.matrices["link_type"][(source, target)] = link_type_name(value)
        else:
            state.matrices[state.matrix][(source, target)] = tool_int(value)


def _read_table_line(state, line, stripped):
    if stripped.startswith("Device ") and "[Model : Revision]" in stripped:
        state.concise, state.recognized = "old", True
    elif stripped.startswith("Device ") and " Node " in stripped:
        state.concise, state.recognized = "new", True
    elif stripped.startswith("GPU ") and "Temp" in stripped:
        state.concise, state.recognized = "legacy", True
    elif stripped.startswith("GPU ") and " DID " in stripped:
        state.concise, state.recognized = "hw", True
        state.hw_header = re.split(r"\s{2,}", stripped)
    elif state.concise:
        _read_table_row(state, line, stripped)


def _read_table_row(state, line, stripped):
    if state.concise == "old":
        match = _OLD_CONCISE_ROW.match(stripped)
        if match:
            device = state.rows.setdefault(int(match.group(1)), new_device(index=int(match.group(1))))
            device["subsystem_device_id"] = _table_id(state, match.group(2), "[Model : Revision]")
            read_partitions_cell(device, stripped)
            state.pending_name = device
        elif state.pending_name is not None and line[:1] == " ":
            _read_name_line(state, state.pending_name, stripped)
            state.pending_name = None
    elif state.concise == "new":
        match = _NEW_CONCISE_ROW.match(stripped + " ")
        if match:
            index = int(match.group(1))
            device = state.rows.setdefault(index, new_device(index=index))
            device["kfd_node"] = tool_int(match.group(2))
            device["device_id"] = board_id(match.group(3))
            read_partitions_cell(device, stripped)
    elif state.concise == "hw":
        _read_hw_row(state, stripped)
    elif _INDEX_ROW.match(stripped):
        index = int(stripped.split()[0])
        state.rows.setdefault(index, new_device(index=index))


def _table_id(state, value, column):
    if strict_hex_id(value) is not None and board_id(value) is None:
        state.vendor_id_keys.append(column)
    return board_id(value)


def _read_name_line(state, device, name):
    if strict_hex_id(name) is not None:
        device["device_id"] = _table_id(state, name, "Name")  # unresolved name: the ID the lookup fell back to
    elif len(name) < NAME_COLUMN_WIDTH:
        device["product"] = product_name(name)  # a 20-character name is probably cut, so left unknown


def _read_hw_row(state, stripped):
    tokens = stripped.split()
    if not tokens or not tokens[0].isdigit():
        return
    index = int(tokens[0])
    device = state.rows.setdefault(index, new_device(index=index))
    header = state.hw_header or []
    columns = dict((header[n], tokens[n]) for n in range(len(tokens))) if len(tokens) == len(header) else {}
    device["kfd_node"] = tool_int(columns.get("NODE"))
    device["partition_id"] = tool_int(columns.get("PARTITION ID"))
    for token in tokens[1:]:
        if device["device_id"] is None and board_id(token) and token.lower().startswith("0x"):
            device["device_id"] = board_id(token)
        elif device["gfx_target"] is None and normalize_gfx_target(token):
            device["gfx_target"] = normalize_gfx_target(token)
        elif device["pci_bus"] is None and normalize_pci_bus(token):
            device["pci_bus"] = normalize_pci_bus(token)


def _finish(state):
    report = state.report
    indices = sorted(set(state.fields) | set(state.rows))
    numa_affinity = {}
    for index in indices:
        device = state.rows.get(index) or new_device(index=index)
        state.vendor_id_keys.extend(apply_fields(device, state.fields.get(index, {}), numa_affinity))
        report["devices"].append(device)
    report["topology"] = build_topology(indices, state.matrices, numa_affinity)
    warn_of_vendor_ids(report, state.vendor_id_keys)
    return report
