# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""'amd-smi partition' (6.3+) text output -> SourceReport with each GPU's partition modes.

Its layouts, all titled tables ('CURRENT_PARTITION:' then a header and rows):

* 24.7 (ROCm 6.3): CURRENT_PARTITION, then 'GPU: n' blocks with MEMORY_PARTITION CAPS and
  CURRENT, then ACCELERATOR_PARTITION_PROFILES. Where the driver does not answer, the
  accelerator type, profile and partition ID are N/A: the compute mode is unknown, not SPX.
* 25.x and later: CURRENT_PARTITION, MEMORY_PARTITION, ACCELERATOR_PARTITION_PROFILES and
  ACCELERATOR_PARTITION_RESOURCES tables. A profile's resources continue on rows with empty
  leading cells, and an empty MEMORY_PARTITION_CAPS cell is possible, so cells are found by
  the header's column positions, never by counting words. '*' marks the current profile.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.amd_smi.text import (
    raise_on_error_lines,
    read_blocks,
)
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.model import (
    COMPUTE_PARTITIONS,
    MEMORY_PARTITIONS,
    GpuParseError,
    clean_lines,
    new_device,
    new_report,
    partition_mode,
    partition_modes,
)
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.tools import first_line, tool_int

_TITLE = re.compile(r"^([A-Z][A-Z_]+):$")
_WORD = re.compile(r"\S+")


def read_tables(text):
    """{title: [{column: cell}]}; a cell is the words that start under its header's column."""
    tables, title, header = {}, None, None
    for line in clean_lines(text):
        title_match = _TITLE.match(line)
        if title_match or not line.strip() or line.startswith("GPU: "):
            title, header = (title_match.group(1), None) if title_match else (None, None)
            continue
        if title is None:
            continue
        if header is None:
            header = [(match.start(), match.group()) for match in _WORD.finditer(line)]
            tables.setdefault(title, [])
            continue
        tables[title].append(_cells(header, line))
    return tables


def _cells(header, line):
    row = {}
    for match in _WORD.finditer(line):
        column = [name for start, name in header if start <= match.start()]
        name = column[-1] if column else header[0][1]
        row[name] = (row[name] + " " + match.group()) if name in row else match.group()
    return row


def parse_amd_smi_partition(text):
    """Each GPU's current compute and memory mode, partition ID, available modes and partition counts."""
    raise_on_error_lines(text)
    tables = read_tables(text)
    current = tables.get("CURRENT_PARTITION") or []
    if not current:
        raise GpuParseError("not 'amd-smi partition' output", first_line(text) or "<empty output>")
    report = new_report()
    by_index = {}
    for row in current:
        index = tool_int(row.get("GPU_ID"))
        if index is None or index in by_index:
            continue
        by_index[index] = new_device(
            index=index,
            compute_partition=partition_mode(row.get("ACCELERATOR_TYPE"), COMPUTE_PARTITIONS),
            memory_partition=partition_mode(row.get("MEMORY"), MEMORY_PARTITIONS),
            partition_id=tool_int(row.get("PARTITION_ID")),
        )
        report["devices"].append(by_index[index])
    _read_memory(tables.get("MEMORY_PARTITION") or [], read_blocks(text), by_index)
    _read_profiles(tables.get("ACCELERATOR_PARTITION_PROFILES") or [], by_index, report)
    return report


def _read_memory(rows, blocks, by_index):
    memory = [
        (tool_int(row.get("GPU_ID")), row.get("CURRENT_MEMORY_PARTITION"), row.get("MEMORY_PARTITION_CAPS"))
        for row in rows
    ]
    for kind, index, fields in blocks:  # 24.7's 'GPU: n / MEMORY_PARTITION: CAPS, CURRENT' blocks
        section = fields.get("memory_partition")
        if kind == "GPU" and isinstance(section, dict):
            memory.append((index, section.get("current"), section.get("caps")))
    for index, mode, caps in memory:
        device = by_index.get(index)
        if device is None:
            continue
        device["memory_partition"] = device["memory_partition"] or partition_mode(mode, MEMORY_PARTITIONS)
        device["available_memory_partitions"] = partition_modes(caps, MEMORY_PARTITIONS)


def _read_profiles(rows, by_index, report):
    """Profile rows name a mode and its partition count; rows without a GPU_ID continue the GPU above."""
    index = None
    for row in rows:
        index = tool_int(row.get("GPU_ID")) if row.get("GPU_ID") else index
        device = by_index.get(index)
        mode = partition_mode(row.get("ACCELERATOR_TYPE"), COMPUTE_PARTITIONS)
        if device is None or mode is None:
            continue
        device["available_compute_partitions"] = (device["available_compute_partitions"] or []) + [mode]
        count = tool_int(row.get("NUM_PARTITIONS"))
        if count:
            report["partition_counts"].setdefault(index, {})[mode] = count
        if row["ACCELERATOR_TYPE"].endswith("*") and device["compute_partition"] is None:
            device["compute_partition"] = mode
