# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Partition modes in rocm-smi's output.

* The concise table's ``Partitions`` column: ``NPS1, SPX`` (6.0-6.1.0, ``(Mem, Compute)``) or
  ``NPS4, CPX, 3`` (6.1.1+, ``(Mem, Compute, ID)``). A partition a container sees but cannot
  meter prints ``N/A, N/A, 1``: no modes, still partition 1 (ROCm/amdsmi#100). Consumer GPUs
  print ``N/A, N/A, 0``.
* ``--showhw``'s ``PARTITION ID`` column.
* ``--showcomputepartition`` / ``--showmemorypartition`` (and ``-a``): ``GPU[n] : Compute
  Partition: SPX`` and ``GPU[n] : Memory Partition: NPS1``; --json uses the same keys.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.model import (
    COMPUTE_PARTITIONS,
    MEMORY_PARTITIONS,
    partition_mode,
)
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.tools import tool_int

_CELL = re.compile(r"(?:^|\s)(NPS\d|N/A),\s*([SDTQC]PX|N/A)(?:,\s*(\d+|N/A))?(?=\s|$)", re.I)
FIELD_KEYS = {"Compute Partition": "compute_partition", "Memory Partition": "memory_partition"}


def read_partitions_cell(device, row):
    """Fill the device's modes and partition ID from a concise-table row's Partitions cell."""
    match = _CELL.search(row)
    if match:
        device["memory_partition"] = partition_mode(match.group(1), MEMORY_PARTITIONS)
        device["compute_partition"] = partition_mode(match.group(2), COMPUTE_PARTITIONS)
        device["partition_id"] = tool_int(match.group(3))


def partition_fields(fields):
    """The modes among rocm-smi's per-GPU key/value fields (text or --json)."""
    return {
        "compute_partition": partition_mode(fields.get("Compute Partition"), COMPUTE_PARTITIONS),
        "memory_partition": partition_mode(fields.get("Memory Partition"), MEMORY_PARTITIONS),
    }
