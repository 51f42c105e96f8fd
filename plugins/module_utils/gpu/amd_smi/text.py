# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""amd-smi text output (list, static, default summary) -> SourceReport.

'list' and 'static' print the JSON dict of each device as 'GPU: n' blocks of upper-case,
indented 'KEY: value' lines (ROCm/rocm-systems projects/amdsmi/amdsmi_cli/amdsmi_logger.py
@d11f630e, _convert_json_to_human_readable), so both are read back into that dict and
share the field reading of the JSON parsers. Device indices are amd-smi's GPU numbers,
which need not match HIP/rocm-smi order.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.model import (
    COMPUTE_PARTITIONS,
    MEMORY_PARTITIONS,
    GpuParseError,
    clean_lines,
    new_device,
    new_report,
    normalize_pci_bus,
    partition_mode,
)
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.tools import (
    add_warning,
    board_id,
    first_line,
    normalize_gfx_target,
    plain_value,
    product_name,
    tool_int,
    useful_text,
)

TOOL = "amd-smi"

_BLOCK = re.compile(r"^([A-Z][A-Z_ ]*):\s*(\d+)$")
_ERROR = re.compile(r"^ERROR[:\s]")
_VERSION_LINE = re.compile(r"AMDSMI Tool:\s*(\S+).*?ROCm version:\s*(\S+)", re.I)
_BANNER_TOOL = re.compile(r"AMD-SMI\s+(\S+)")
_BANNER_DRIVER = re.compile(r"amdgpu version:\s*(\S+)", re.I)
_BANNER_ROCM = re.compile(r"ROCm version:\s*(\S+)", re.I)
_BDF_OR_NA = r"([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]|N/A)"
_SUMMARY_FIRST = re.compile(r"^\|\s*" + _BDF_OR_NA + r"\s+(.*?)\s*\|")
_SUMMARY_SECOND = re.compile(r"^\|\s*(\d+)\s+(\d+|N/A)\s+(\d+|N/A)\s+(\S+)\s*\|")
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]?i?B)?\s*$", re.I)
_UNITS = {"B": 1, "KB": 1024, "MB": 1024**2, "GB": 1024**3, "TB": 1024**4}


def raise_on_error_lines(text):
    """amd-smi reports a missing driver or GPU as 'ERROR:root:...' lines and nothing else."""
    lines = [line.strip() for line in clean_lines(text) if line.strip()]
    if lines and all(_ERROR.match(line) for line in lines):
        raise GpuParseError("amd-smi reported an error", lines[0])


def read_blocks(text):
    """[(kind, index, {key: value or {...}})] for each 'GPU: n' / 'AI_NIC: n' block, keys lower-case.

    Nesting follows the 4-space indentation; a block cut short (a poster's '...') keeps
    what it has.
    """
    blocks = []
    stack = None
    for line in clean_lines(text):
        stripped = line.strip()
        header = _BLOCK.match(stripped) if line[:1] != " " else None
        if header:
            fields = {}
            blocks.append((header.group(1).strip(), int(header.group(2)), fields))
            stack = [fields]
            continue
        key, colon, value = stripped.partition(":")
        if stack is None or line[:1] != " " or not colon or not key or key.startswith("-"):
            if line[:1] != " ":
                stack = None  # a snip marker or other text ends the block
            continue
        depth = max(1, (len(line) - len(line.lstrip(" "))) // 4)
        del stack[depth:]
        parent = stack[-1]
        if value.strip():
            parent[key.strip().lower()] = value.strip()
        else:
            parent[key.strip().lower()] = child = {}
            stack.append(child)
    return blocks


def parse_amd_smi_list_text(text):
    """'amd-smi list': 'GPU: n' blocks of 'KEY: value'; other blocks (AI_NIC) are not GPUs."""
    raise_on_error_lines(text)
    report = new_report()
    blocks = read_blocks(text)
    for kind, index, fields in blocks:
        if kind == "GPU":
            report["devices"].append(
                new_device(
                    index=index,
                    pci_bus=read_bdf(report, fields.get("bdf")),
                    kfd_node=tool_int(fields.get("node_id")),
                    partition_id=tool_int(fields.get("partition_id")),
                )
            )
    _read_version_line(report, text)
    if not blocks:
        raise GpuParseError("not 'amd-smi list' output", first_line(text) or "<empty output>")
    return drop_shared_buses(report, "list")


def parse_amd_smi_static_text(text):
    """'amd-smi static [--asic --bus --vram --driver]': the same fields as the JSON output."""
    raise_on_error_lines(text)
    report = new_report()
    blocks = [(index, fields) for kind, index, fields in read_blocks(text) if kind == "GPU"]
    if not blocks:
        raise GpuParseError("not 'amd-smi static' output", first_line(text) or "<empty output>")
    for index, fields in blocks:
        fields["gpu"] = index
        read_static_entry(report, fields)
    return drop_shared_buses(report, "static")


def read_static_entry(report, entry):
    """Add the device of one static entry (JSON object or text block, lower-case keys) to ``report``."""
    asic, bus, vram, driver, partition = (
        _section(entry, name) for name in ("asic", "bus", "vram", "driver", "partition")
    )
    report["devices"].append(
        new_device(
            index=tool_int(entry.get("gpu")),
            pci_bus=read_bdf(report, bus.get("bdf")),
            device_id=board_id(asic.get("device_id"), asic.get("vendor_id")),
            subsystem_device_id=board_id(asic.get("subsystem_id"), asic.get("vendor_id")),
            product=product_name(asic.get("market_name")),
            gfx_target=normalize_gfx_target(plain_value(asic.get("target_graphics_version"))),
            vram_bytes=size_bytes(vram.get("size")),
            # 'static --partition' (its own call: older amd-smi has no such flag).
            compute_partition=partition_mode(partition.get("compute_partition"), COMPUTE_PARTITIONS),
            memory_partition=partition_mode(partition.get("memory_partition"), MEMORY_PARTITIONS),
            partition_id=tool_int(partition.get("partition_id")),
        )
    )
    # An in-tree driver reports the kernel banner ('Linuxversion6.19.11...'): kept as printed.
    report["driver_version"] = report["driver_version"] or useful_text(driver.get("version"))


def parse_amd_smi_summary(text):
    """Default 'amd-smi' table (26.x+): BDF and product per amd-smi GPU index, tool/driver/ROCm versions.

    The versions sit on one banner line (26.0) or one line each (later releases).
    """
    raise_on_error_lines(text)
    report = new_report()
    pending = None
    for line in clean_lines(text):
        stripped = line.strip()
        if _read_banner(report, stripped):
            continue
        first = _SUMMARY_FIRST.match(stripped)
        if first:
            pending = (normalize_pci_bus(first.group(1)), product_name(first.group(2)))
            continue
        second = _SUMMARY_SECOND.match(stripped)
        if second and pending:
            compute, _slash, memory = second.group(4).partition("/")  # Partition-Mode: 'SPX/NPS1' or 'N/A'
            report["devices"].append(
                new_device(
                    index=int(second.group(1)),
                    pci_bus=pending[0],
                    product=pending[1],
                    compute_partition=partition_mode(compute, COMPUTE_PARTITIONS),
                    memory_partition=partition_mode(memory, MEMORY_PARTITIONS),
                )
            )
            pending = None
    if report["tool_version"] is None and not report["devices"]:
        raise GpuParseError("not the amd-smi summary table", first_line(text) or "<empty output>")
    return drop_shared_buses(report, "(default table)")


def read_bdf(report, value):
    """The PCI address amd-smi printed, or None; one that is none (amd-smi 6.1.2 without a DRM answer
    printed '746974726170:5f:0c.5') is named in a warning rather than dropped unseen."""
    text = useful_text(value)
    address = normalize_pci_bus(text)
    if text is not None and address is None:
        add_warning(report, "%s: %r is no PCI address; not used" % (TOOL, text))
    return address


def drop_shared_buses(report, command):
    """Forget a PCI address several GPUs share without KFD nodes or partition IDs to tell them
    apart (partitions have their own): it says nothing about them. On the lab's hardware model
    amd-smi 6.1.2 printed 0000:00:00.0 for seven of eight GPUs."""
    by_bus = {}
    for device in report["devices"]:
        if device["pci_bus"]:
            by_bus.setdefault(device["pci_bus"], []).append(device)
    for bus, devices in sorted(by_bus.items()):
        if len(devices) > 1 and not (_distinct(devices, "kfd_node") or _distinct(devices, "partition_id")):
            for device in devices:
                device["pci_bus"] = None
            report["shared_pci_buses"].append(bus)
            add_warning(
                report, "%s %s: %d GPUs share the PCI address %s; not used" % (TOOL, command, len(devices), bus)
            )
    return report


def _distinct(devices, key):
    values = [device[key] for device in devices]
    return None not in values and len(set(values)) == len(values)


def size_bytes(value):
    """{'value': 196592, 'unit': 'MB'} or '196592 MB' -> bytes (amd-smi's MB are MiB)."""
    if isinstance(value, dict):
        value = "%s %s" % (value.get("value"), value.get("unit") or "B")
    match = _SIZE.match(str(value or ""))
    if not match:
        return None
    unit = (match.group(2) or "B").upper().replace("I", "")
    return int(float(match.group(1)) * _UNITS.get(unit, 0)) or None


def _read_banner(report, stripped):
    if not stripped.startswith("|") or _SUMMARY_FIRST.match(stripped):
        return False
    found = False
    for key, pattern in (
        ("tool_version", _BANNER_TOOL),
        ("driver_version", _BANNER_DRIVER),
        ("rocm_version", _BANNER_ROCM),
    ):
        match = pattern.search(stripped)
        if match and report[key] is None:
            report[key] = useful_text(match.group(1))
            found = True
    return found


def _read_version_line(report, text):
    """'AMDSMI Tool: 24.5.1+c5106a9 | AMDSMI Library version: ... | ROCm version: 6.1.2' ('amd-smi version')."""
    match = _VERSION_LINE.search(text or "")
    if match:
        report["tool_version"] = useful_text(match.group(1))
        report["rocm_version"] = useful_text(match.group(2))


def _section(entry, name):
    value = entry.get(name)
    return value if isinstance(value, dict) else {}
