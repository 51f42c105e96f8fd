# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Shared vocabulary of the GPU facts parsers.

Every source parser (sysfs, rocm-smi, amd-smi, rocminfo) is a pure function
from text (or a directory tree) to a ``SourceReport``: a plain dict with the
keys below. ``None`` always means "this source does not say"; the merge in
``gpu.merge`` decides what the facts contain.

SourceReport = {
    "devices": [DeviceReport, ...],   # GPUs only, in the order the tool numbers them
    "topology": TopologyReport or None,
    "driver_version": str or None,    # amdgpu version as the source reports it
    "rocm_version": str or None,
    "tool_version": str or None,      # the tool's own version, for warnings
    "warnings": [str, ...],           # non-fatal problems inside otherwise usable output
    "driver_loaded": bool,            # sysfs only: /sys/module/amdgpu/initstate is "live"
    "shared_pci_buses": [str, ...],   # printed for several GPUs it cannot tell apart, so not used
    "partition_counts": {index: {"CPX": 8, ...}},  # amd-smi's profiles: partitions each mode gives
}

DeviceReport = {
    "index": int or None, "pci_bus": "0000:0c:00.0" or None,
    "device_id": "0x74a1" or None, "subsystem_device_id": "0x74a1" or None,
    "product": str or None, "gfx_target": "gfx942" or None,
    "vram_bytes": int or None, "numa_node": int or None,
    "kfd_node": int or None, "render_node": "/dev/dri/renderD128" or None,
    "compute_partition": "CPX" or None, "memory_partition": "NPS4" or None,
    "partition_id": int or None,      # 0 on a GPU that is not partitioned
    "physical_gpu": int or None,      # set by the merge only
    "available_compute_partitions": ["SPX", "CPX"] or None,
    "available_memory_partitions": ["NPS1", "NPS4"] or None,
}

A partitioned GPU (MI300 CPX, TPX ...) is one DeviceReport per partition: each has its own
KFD node and render node, and they share the GPU's PCI address and UUID.

TopologyReport = {
    "link_type": [[str]] or None, "hops": [[int]] or None,
    "weight": [[int]] or None, "numa_affinity": [int or None] or None,
}

A parser raises ``GpuParseError`` when the output is not in any format it
knows; the message names the first offending line.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

SCHEMA_VERSION = 2
AMD_VENDOR_ID = "0x1002"
SOURCES = ("sysfs", "rocm_smi", "amd_smi", "rocminfo")
# What gpu_facts reads unless told otherwise (node_compliance facts=true too).
DEFAULT_SOURCES = SOURCES
# A source's state in the fact's "sources": common/status.py, SOURCE_STATES.
LINK_TYPES = ("SELF", "XGMI", "PCIE", "UNKNOWN")
DEVICE_KEYS = (
    "index",
    "pci_bus",
    "device_id",
    "subsystem_device_id",
    "product",
    "gfx_target",
    "vram_bytes",
    "numa_node",
    "kfd_node",
    "render_node",
    # Schema 2: partitions.
    "compute_partition",
    "memory_partition",
    "partition_id",
    "physical_gpu",
    "available_compute_partitions",
    "available_memory_partitions",
)
# amdgpu's mode names (amdgpu_gfx.c, amdgpu_gmc.c); "UNKNOWN" and "N/A" are no mode.
COMPUTE_PARTITIONS = ("SPX", "DPX", "TPX", "QPX", "CPX")
MEMORY_PARTITIONS = ("NPS1", "NPS2", "NPS4", "NPS8")
TOPOLOGY_KEYS = ("link_type", "hops", "weight", "numa_affinity")

# NBSP, tabs and other odd blanks appear in pasted or re-indented output.
_BLANKS = re.compile("[\u00a0\u2000-\u200b\u202f\u205f\u3000\t]")
# Terminal control sequences: 7-bit CSI (ESC [ ... m), 8-bit CSI (0x9b ... m), charset
# designations such as ESC ( B (what `tput sgr0` prints before ESC [ m) and OSC strings.
_ANSI = re.compile("(?:\x1b\\[|\x9b)[0-?]*[ -/]*[@-~]|\x1b[()*+][0-9A-Za-z]|\x1b\\][^\x07\x1b]*(?:\x07|\x1b\\\\)")
_PCI_BUS = re.compile(r"^(?:([0-9a-fA-F]{4,8}):)?([0-9a-fA-F]{2}):([0-9a-fA-F]{2})\.([0-7])$")


class GpuParseError(ValueError):
    """Output that no known format explains. ``line`` is the first offending line."""

    def __init__(self, message, line=None):
        self.line = line
        if line is not None:
            message = "%s (at line: %r)" % (message, line[:160])
        super(GpuParseError, self).__init__(message)


def new_report():
    return {
        "devices": [],
        "topology": None,
        "driver_version": None,
        "rocm_version": None,
        "tool_version": None,
        "warnings": [],
        "driver_loaded": None,
        "shared_pci_buses": [],
        "partition_counts": {},
    }


def new_device(**values):
    device = dict((key, None) for key in DEVICE_KEYS)
    unknown = set(values) - set(DEVICE_KEYS)
    if unknown:
        raise KeyError("unknown device keys: %s" % ", ".join(sorted(unknown)))
    device.update(values)
    return device


def strip_ansi(text):
    """``text`` without terminal colour and charset control sequences."""
    return _ANSI.sub("", text or "")


def clean_lines(text):
    """Split tool output into lines with ANSI colour removed and odd blanks made spaces.

    Trailing blanks are stripped; a parser must not rely on padding.
    """
    text = strip_ansi(text)
    return [_BLANKS.sub(" ", line).rstrip() for line in text.splitlines()]


def normalize_hex_id(value, width=4):
    """'0x74A1', '74a1', '29857' (decimal from rocminfo), 29857 -> '0x74a1'; junk -> None."""
    if value is None:
        return None
    if isinstance(value, int):
        number = value
    else:
        text = str(value).strip().lower()
        if not text or text in ("n/a", "na", "none", "unknown"):
            return None
        try:
            number = int(text, 16) if text.startswith("0x") or re.search("[a-f]", text) else int(text, 10)
        except ValueError:
            return None
    if number < 0:
        return None
    return "0x%0*x" % (width, number)


def normalize_pci_bus(value):
    """'0c:00.0', '0000:0C:00.0' -> '0000:0c:00.0'; anything else -> None."""
    if not value:
        return None
    match = _PCI_BUS.match(str(value).strip())
    if not match:
        return None
    domain, bus, dev, func = match.groups()
    return "%04x:%s:%s.%s" % (int(domain or "0", 16), bus.lower(), dev.lower(), func)


def pci_bus_from_bdfid(bdfid):
    """rocminfo/KFD 'location_id' style BDF integer (bus<<8 | dev<<3 | fn), domain separate."""
    try:
        number = int(bdfid)
    except (TypeError, ValueError):
        return None
    return "%04x:%02x:%02x.%d" % ((number >> 16) & 0xFFFF, (number >> 8) & 0xFF, (number >> 3) & 0x1F, number & 0x7)


def gfx_target_from_version(gfx_version):
    """KFD 'gfx_target_version' (e.g. 90402 -> gfx942, 100301 -> gfx1031, 90010 -> gfx90a)."""
    try:
        number = int(gfx_version)
    except (TypeError, ValueError):
        return None
    if number <= 0:
        return None
    major, minor, step = number // 10000, (number // 100) % 100, number % 100
    return "gfx%d%d%s" % (major, minor, format(step, "x"))


def partition_mode(value, modes):
    """'CPX', 'cpx', 'CPX*' (amd-smi's current profile) -> 'CPX' when in ``modes``; else None."""
    text = str(value or "").strip().rstrip("*").strip().upper()
    return text if text in modes else None


def partition_modes(value, modes):
    """'SPX, DPX, QPX, CPX' (sysfs available_*_partition) -> ['SPX', ...]; none known -> None."""
    found = [partition_mode(word, modes) for word in re.split(r"[\s,]+", str(value or ""))]
    found = [mode for mode in found if mode]
    return found or None


def to_int(value):
    try:
        return int(str(value).strip(), 0)
    except (TypeError, ValueError):
        try:
            return int(str(value).strip())
        except (TypeError, ValueError):
            return None
