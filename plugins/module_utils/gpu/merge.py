# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Merge the source reports of gpu_facts into the facts contract (schema 2).

Sysfs is what the kernel enumerates, so it decides the device list and the
IDs; the tools add what sysfs cannot say (marketing names) and fill gaps when
sysfs is unavailable. Disagreements are reported as conflicts, never hidden.
Partitions are devices of their own, never collapsed (gpu_partitions numbers their GPUs).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.rocm_fleet.core.plugins.module_utils.common.status import SOURCE_OK, SOURCE_SKIPPED
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.match import (
    CHECKED_FIELDS,
    SOURCE_LABELS,
    group_devices,
)
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.model import (
    AMD_VENDOR_ID,
    DEVICE_KEYS,
    SCHEMA_VERSION,
    SOURCES,
    TOPOLOGY_KEYS,
)
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.partitions import assign_partitions
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.pci_ids import gfx_target_for, product_for

# Which source is trusted first for each device field.
FIELD_PRIORITY = {
    "pci_bus": ("sysfs", "amd_smi", "rocm_smi", "rocminfo"),
    "device_id": ("sysfs", "rocminfo", "amd_smi", "rocm_smi"),
    "subsystem_device_id": ("sysfs", "amd_smi", "rocm_smi", "rocminfo"),
    "product": ("amd_smi", "rocm_smi", "rocminfo", "sysfs"),
    "gfx_target": ("sysfs", "rocminfo", "rocm_smi", "amd_smi"),
    "vram_bytes": ("sysfs", "amd_smi", "rocm_smi", "rocminfo"),
    "numa_node": ("sysfs", "rocm_smi", "amd_smi", "rocminfo"),
    "kfd_node": ("sysfs", "rocminfo", "amd_smi", "rocm_smi"),
    "render_node": ("sysfs", "amd_smi", "rocm_smi", "rocminfo"),
    "compute_partition": ("sysfs", "amd_smi", "rocm_smi"),
    "memory_partition": ("sysfs", "amd_smi", "rocm_smi"),
    "partition_id": ("sysfs", "rocm_smi", "amd_smi"),
    "available_compute_partitions": ("sysfs", "amd_smi"),
    "available_memory_partitions": ("sysfs", "amd_smi"),
}
TOPOLOGY_PRIORITY = ("sysfs", "rocm_smi", "amd_smi")
DRIVER_PRIORITY = ("sysfs", "rocm_smi", "amd_smi", "rocminfo")


def merge_reports(reports, states, warnings, rocm=None):
    """Build the ``gpu`` fact.

    reports: {source: SourceReport} for the sources whose state is "ok".
    states: {source: state} for all four sources.
    warnings: warnings collected so far (copied, then extended).
    rocm: {"version": ..., "path": ...} found on the filesystem.
    """
    warnings = list(warnings)
    conflicts = []
    usable = dict((name, reports[name]) for name in SOURCES if name in reports and states.get(name) == SOURCE_OK)
    for report in usable.values():
        warnings.extend(report.get("warnings") or [])

    _check_counts(usable, conflicts, warnings)
    devices = _merge_devices(usable, conflicts, warnings)
    topology = _merge_topology(usable, len(devices), conflicts)
    driver = _driver(usable, states)
    rocm = dict(rocm or {"version": None, "path": None})
    if not rocm.get("version"):
        rocm["version"] = _first(usable, "rocm_version")
    return {
        "schema": SCHEMA_VERSION,
        "count": len(devices),
        "devices": devices,
        "topology": topology,
        "driver": driver,
        "rocm": rocm,
        "sources": dict((name, states.get(name, SOURCE_SKIPPED)) for name in SOURCES),
        "warnings": warnings,
        "conflicts": conflicts,
    }


def _check_counts(usable, conflicts, warnings):
    counts = [(name, len(report["devices"])) for name, report in usable.items()]
    # A tool older than GPU partitions (rocm-smi 5.x) lists the physical GPUs of a partitioned host:
    # sysfs's partitions are then that many PCI devices, which is no disagreement about the hardware.
    sysfs = usable.get("sysfs", {}).get("devices") or []
    physical = len(set(device.get("pci_bus") for device in sysfs if device.get("pci_bus")))
    if sysfs and physical < len(sysfs):
        for name, count in counts:
            if name != "sysfs" and count == physical:
                warnings.append(
                    "%s lists the %d physical GPUs, not their %d partitions"
                    % (SOURCE_LABELS[name], physical, len(sysfs))
                )
        counts = [(name, count) for name, count in counts if name == "sysfs" or count != physical]
    if len(set(count for _unused, count in counts)) > 1:
        conflicts.append(
            "GPU count differs between sources: %s"
            % ", ".join("%s sees %d" % (SOURCE_LABELS[name], count) for name, count in counts)
        )


def _merge_devices(usable, conflicts, warnings):
    groups = group_devices(usable, conflicts, warnings)
    devices = [_merge_group(index, group, conflicts) for index, group in enumerate(groups)]
    assign_partitions(devices, groups, usable, warnings)
    return devices


def _merge_group(index, group, conflicts):
    device = dict((key, None) for key in DEVICE_KEYS)
    device["index"] = index
    device["vendor_id"] = AMD_VENDOR_ID
    for key, priority in FIELD_PRIORITY.items():
        for name in priority:
            value = (group.get(name) or {}).get(key)
            if value is not None:
                device[key] = value
                break
    for key in CHECKED_FIELDS:
        seen = [(name, group[name].get(key)) for name in SOURCES if group.get(name, {}).get(key) is not None]
        if len(set(value for _unused, value in seen)) > 1:
            conflicts.append(
                "GPU %d: %s differs between sources: %s"
                % (index, key, ", ".join("%s says %s" % (SOURCE_LABELS[name], value) for name, value in seen))
            )
    # A raw ID or a cut name is no product name: name it from the PCI ID table.
    if device["product"] is None or _looks_unresolved(device["product"]):
        device["product"] = product_for(device["device_id"]) or device["product"]
    if device["gfx_target"] is None:
        device["gfx_target"] = gfx_target_for(device["device_id"])
    return device


def _looks_unresolved(product):
    text = product.strip()
    return text.lower().startswith("0x") or (len(text) == 20 and "[" in text and "]" not in text)


def _merge_topology(usable, count, conflicts):
    if count < 2:
        return None
    chosen = None
    for name in TOPOLOGY_PRIORITY:
        topology = usable.get(name, {}).get("topology")
        if not topology or not _fits(topology.get("link_type"), count):
            continue
        if chosen is None:
            chosen = dict((key, topology.get(key)) for key in TOPOLOGY_KEYS)
            chosen_from = name
            continue
        if topology.get("link_type") and topology["link_type"] != chosen["link_type"]:
            conflicts.append("link types differ between %s and %s" % (SOURCE_LABELS[chosen_from], SOURCE_LABELS[name]))
        for key in TOPOLOGY_KEYS:
            if chosen.get(key) is None and topology.get(key) is not None:
                chosen[key] = topology[key]
    if chosen is None:
        return None
    for key in ("hops", "weight"):
        if chosen.get(key) is not None and not _fits(chosen[key], count):
            chosen[key] = None
    if chosen.get("numa_affinity") is not None and len(chosen["numa_affinity"]) != count:
        chosen["numa_affinity"] = None
    return chosen


def _fits(matrix, count):
    return isinstance(matrix, list) and len(matrix) == count and all(len(row) == count for row in matrix)


def _driver(usable, states):
    version = _first(usable, "driver_version", DRIVER_PRIORITY)
    if "sysfs" in usable:
        loaded = bool(usable["sysfs"].get("driver_loaded"))
    else:
        loaded = any(usable.get(name, {}).get("devices") for name in ("rocm_smi", "amd_smi", "rocminfo"))
    return {"loaded": loaded, "version": version if loaded else None}


def _first(usable, key, priority=SOURCES):
    for name in priority:
        value = usable.get(name, {}).get(key)
        if value:
            return value
    return None
