# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""rocm-smi's per-GPU key/value fields (text ``GPU[n] : key: value`` lines and --json card dicts) -> DeviceReport."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.model import AMD_VENDOR_ID, normalize_pci_bus
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.rocm_smi.partitions import partition_fields
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.tools import (
    add_warning,
    board_id,
    normalize_gfx_target,
    product_name,
    strict_hex_id,
    tool_int,
)

TOOL = "rocm-smi"
# Keys whose hex value is a device or subsystem ID (the names fall back to a hex ID without pci.ids).
_DEVICE_ID_KEYS = ("Device ID", "GPU ID", "Card Model")
_NAME_KEYS = ("Card Series", "Card series", "Device Name")
_SUBSYSTEM_ID_KEYS = ("Subsystem ID", "Card model")


def apply_fields(device, fields, numa_affinity):
    """Copy rocm-smi's per-GPU values (JSON card dict or text key/value pairs) into a DeviceReport.

    Key spellings differ by version: 5.x 'GPU ID'; 6.x 'Device ID'. 'Card model' (lower-case m,
    up to 6.1.0) is the subsystem; 'Card Model' (6.1.1+) is the PCI device ID. Returns the keys
    whose value was the vendor ID (no pci.ids, see board_id), for the caller's warning.
    """
    vendor = fields.get("Card vendor") or fields.get("Card Vendor")
    device_id = _first_id(fields, _DEVICE_ID_KEYS, vendor)
    series = next((fields[key] for key in _NAME_KEYS if fields.get(key)), None)
    if device_id is None:
        # With no pci.ids entry rocm-smi prints the device ID where the name belongs.
        device_id = board_id(series, vendor)
    values = {
        "pci_bus": normalize_pci_bus(fields.get("PCI Bus")),
        "device_id": device_id,
        "subsystem_device_id": _first_id(fields, _SUBSYSTEM_ID_KEYS, vendor),
        "product": product_name(series),
        "gfx_target": normalize_gfx_target(fields.get("GFX Version")),
        "vram_bytes": tool_int(fields.get("VRAM Total Memory (B)")),
        "numa_node": tool_int(fields.get("(Topology) Numa Node")),
        "kfd_node": tool_int(fields.get("Node ID")),
    }
    values.update(partition_fields(fields))
    for key, value in values.items():
        if device[key] is None and value is not None:
            device[key] = value
    affinity = tool_int(fields.get("(Topology) Numa Affinity"))
    if affinity is not None:
        numa_affinity[device["index"]] = affinity
    keys = _DEVICE_ID_KEYS + _NAME_KEYS + _SUBSYSTEM_ID_KEYS
    return [key for key in keys if strict_hex_id(fields.get(key)) and board_id(fields[key], vendor) is None]


def warn_of_vendor_ids(report, keys):
    """One warning for the keys that printed the vendor ID where an ID belongs (apply_fields' result)."""
    if keys:
        names = " and ".join("'%s'" % key for key in sorted(set(keys)))
        add_warning(
            report,
            "%s: %s printed as the vendor ID %s (rocm_smi_lib found no pci.ids file): read as unknown"
            % (TOOL, names, AMD_VENDOR_ID),
        )


def _first_id(fields, keys, vendor):
    return next((board_id(fields[key], vendor) for key in keys if board_id(fields.get(key), vendor)), None)
