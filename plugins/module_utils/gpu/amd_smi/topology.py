# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""amd-smi topology, text and JSON -> SourceReport with one device per row and a topology.

Text: BDF-keyed tables, with blank lines between them (6.1) or without (26.x). JSON: a
list of gpu_N-keyed dicts up to 6.1.0 and of {"gpu", "bdf", "links": [...]} from 6.1.1.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.amd_smi.text import (
    TOOL,
    raise_on_error_lines,
    read_bdf,
)
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.model import (
    GpuParseError,
    clean_lines,
    new_device,
    new_report,
    normalize_pci_bus,
)
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.tools import (
    add_warning,
    first_line,
    link_type_name,
    plain_value,
    square_matrix,
    tool_int,
)

_TABLE_TITLE = re.compile(r"^([A-Z][A-Z -]*) TABLE:?$")
_TABLE_KINDS = {"WEIGHT": "weight", "HOPS": "hops", "LINK TYPE": "link_type"}
_GPU_KEY = re.compile(r"^gpu_(\d+)$")
_LINK_FIELDS = (("weight", ("weight",)), ("hops", ("num_hops", "hops")), ("link_type", ("link_type",)))


def parse_amd_smi_topology_text(text):
    """'amd-smi topology': BDF-keyed tables, with or without blank lines between them."""
    raise_on_error_lines(text)
    tables = {}
    order = None
    kind = None
    columns = None
    unreadable_header = None  # the first header row that is not a row of PCI addresses
    for line in clean_lines(text):
        stripped = line.strip()
        title = _TABLE_TITLE.match(stripped)
        if title:
            kind, columns = _TABLE_KINDS.get(title.group(1).strip()), False
            continue
        tokens = stripped.split()
        if not tokens:
            continue
        if not columns and all(normalize_pci_bus(token) for token in tokens):
            columns = [normalize_pci_bus(token) for token in tokens]
            order = order or columns
            continue
        if columns is False:
            unreadable_header, columns = unreadable_header or stripped, None
        row_bus = normalize_pci_bus(tokens[0])
        if kind and columns and row_bus:
            for target, value in zip(columns, tokens[1:]):  # noqa: B905 - rows may be cut short
                tables.setdefault(kind, {})[(row_bus, target)] = value
    if order is None and unreadable_header:
        # amd-smi 6.1.2 without a DRM answer: garbage BDFs longer than the column run together.
        raise GpuParseError("amd-smi topology tables whose header is no row of PCI addresses", unreadable_header)
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


def topology_report_from_entries(entries):
    """Report from the JSON topology entries (dicts with a 'gpu' number) of either layout."""
    report = new_report()
    indices = [tool_int(entry.get("gpu")) for entry in entries]
    position = dict((index, n) for n, index in enumerate(indices))
    pairs = {"weight": {}, "hops": {}, "link_type": {}}
    for row, entry in enumerate(entries):
        report["devices"].append(new_device(index=indices[row], pci_bus=read_bdf(report, entry.get("bdf"))))
        for target, link in _links(entry):
            if target not in position:
                continue
            for kind, keys in _LINK_FIELDS:
                value = next((link[key] for key in keys if key in link), None)
                if value is not None:
                    pairs[kind][(row, position[target])] = plain_value(value)
    report["topology"] = topology_from_pairs(len(indices), pairs, report)
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
