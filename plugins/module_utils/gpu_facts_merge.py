# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Merge the source reports of gpu_facts into the facts contract (schema 1).

Sysfs is what the kernel enumerates, so it decides the device list and the
IDs; the tools add what sysfs cannot say (marketing names) and fill gaps when
sysfs is unavailable. Disagreements are reported as conflicts, never hidden.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu_model import (
    AMD_VENDOR_ID,
    DEVICE_KEYS,
    SCHEMA_VERSION,
    SOURCES,
    TOPOLOGY_KEYS,
)
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu_pci_ids import gfx_target_for, product_for
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu_tools import DOMAINLESS_BDF, domainless_bdf

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
}
# Fields where two sources disagreeing points at a real problem.
CHECKED_FIELDS = ("device_id", "gfx_target", "kfd_node")
# Which source decides the device list and numbers it, first that has any. Sysfs is what
# the OS enumerates and numbers GPUs as rocm-smi does (by DRM card), so it comes first.
ORDER_PRIORITY = ("sysfs", "rocm_smi", "amd_smi", "rocminfo")
TOPOLOGY_PRIORITY = ("sysfs", "rocm_smi", "amd_smi")
DRIVER_PRIORITY = ("sysfs", "rocm_smi", "amd_smi", "rocminfo")
SOURCE_LABELS = {"sysfs": "sysfs", "rocm_smi": "rocm-smi", "amd_smi": "amd-smi", "rocminfo": "rocminfo"}


def merge_reports(reports, states, warnings, rocm=None):
    """Build the ``gpu`` fact.

    reports: {source: SourceReport} for the sources whose state is "ok".
    states: {source: state} for all four sources.
    warnings: warnings collected so far (copied, then extended).
    rocm: {"version": ..., "path": ...} found on the filesystem.
    """
    warnings = list(warnings)
    conflicts = []
    usable = dict((name, reports[name]) for name in SOURCES if name in reports and states.get(name) == "ok")
    for report in usable.values():
        warnings.extend(report.get("warnings") or [])

    _check_counts(usable, conflicts)
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
        "sources": dict((name, states.get(name, "skipped")) for name in SOURCES),
        "warnings": warnings,
        "conflicts": conflicts,
    }


def _check_counts(usable, conflicts):
    counts = [(name, len(report["devices"])) for name, report in usable.items()]
    if len(set(count for _, count in counts)) > 1:
        conflicts.append(
            "GPU count differs between sources: %s"
            % ", ".join("%s sees %d" % (SOURCE_LABELS[name], count) for name, count in counts)
        )


def _merge_devices(usable, conflicts, warnings):
    order_source = next((name for name in ORDER_PRIORITY if usable.get(name, {}).get("devices")), None)
    if order_source is None:
        return []
    # Start from the numbering source. When that is sysfs, a tool's GPU that matches none of
    # the OS's GPUs is a conflict, never an extra GPU; otherwise it is a GPU only that tool sees.
    groups = [{order_source: device} for device in _ordered(usable[order_source]["devices"])]
    for name in SOURCES:
        if name == order_source or name not in usable:
            continue
        unmatched = []
        for device in _ordered(usable[name]["devices"]):
            group = _find_group(groups, device, name)
            if group is not None:
                group[name] = device
            else:
                unmatched.append(device)
        # Only once the others are matched: the GPU a wrong address belongs to is then free.
        for device in unmatched:
            if order_source != "sysfs":
                groups.append({name: device})
            elif not _match_despite_address(groups, device, name, usable, warnings):
                label = SOURCE_LABELS[name]
                conflicts.append("%s reports a GPU that sysfs does not see: %s" % (label, _describe(device)))
    return [_merge_group(index, group, conflicts) for index, group in enumerate(groups)]


def _match_despite_address(groups, device, source, usable, warnings):
    """Match a tool's GPU whose PCI address names no free sysfs GPU by its other evidence.

    An address sysfs does not see, or one this tool already gave another of its GPUs, is one
    the tool could not read (amd-smi without a DRM answer prints 0000:00:00.0; a container
    may lack the render node). When the tool sees as many GPUs as sysfs, the GPU is matched
    as one without an address (KFD node, else index) if nothing it says (KFD node, device ID,
    gfx target, VRAM) contradicts that GPU; a warning names the tool and the address. A GPU
    count that differs, or a real address with other evidence against it, stays a conflict.
    """
    bus = device.get("pci_bus")
    if not bus or len(usable[source]["devices"]) != len(usable["sysfs"]["devices"]):
        return False
    holders = [group for group in groups if group["sysfs"].get("pci_bus") == bus]
    if any(source not in group for group in holders):
        return False  # the address is a real GPU's, and the tool's KFD node says another one
    anonymous = dict(device, pci_bus=None)
    group = _find_group(groups, anonymous, source)
    if group is None or not _consistent(group["sysfs"], anonymous):
        return False
    group[source] = anonymous
    label = SOURCE_LABELS[source]
    why = (
        "which %s also gives its GPU index %s" % (label, holders[0][source].get("index"))
        if holders
        else "which sysfs does not see"
    )
    warnings.append(
        "%s: PCI address %s of its GPU index %s, %s, is not used; matched by %s to GPU %d (%s), as the GPU"
        " count (%d) agrees and no KFD node, device ID, gfx target or VRAM disagrees"
        % (
            label,
            bus,
            device.get("index"),
            why,
            "KFD node" if device.get("kfd_node") is not None else "index",
            groups.index(group),
            group["sysfs"].get("pci_bus"),
            len(groups),
        )
    )
    return True


def _consistent(sysfs_device, device):
    """Nothing ``device`` says contradicts the sysfs GPU (VRAM to the MiB: amd-smi prints MiB)."""
    for key in CHECKED_FIELDS:
        if None not in (sysfs_device.get(key), device.get(key)) and sysfs_device[key] != device[key]:
            return False
    vram = (sysfs_device.get("vram_bytes"), device.get("vram_bytes"))
    return None in vram or abs(vram[0] - vram[1]) < 1 << 20


def _describe(device):
    keys = ("index", "pci_bus", DOMAINLESS_BDF, "kfd_node", "device_id")
    return ", ".join("%s %s" % (key, device[key]) for key in keys if device.get(key) is not None) or "no identifiers"


def _ordered(devices):
    return sorted(devices, key=lambda device: (device.get("index") is None, device.get("index") or 0))


def _find_group(groups, device, source):
    """The group this source's device belongs to: same BDF, else same KFD node, else same index.

    A BDF without its PCI domain (rocminfo) matches by bus:device.function where that names
    one group; the KFD node decides between GPUs that differ only by domain (MI300A).
    """
    free = [group for group in groups if source not in group]
    bus, node = device.get("pci_bus"), device.get("kfd_node")
    if bus:
        return next((group for group in free if _same_address(group, bus, node, lambda m: m.get("pci_bus"))), None)
    bdf = device.get(DOMAINLESS_BDF)
    if bdf:
        matches = [group for group in free if _same_address(group, bdf, node, _member_bdf)]
        same_node = [group for group in matches if any(m.get("kfd_node") == node for m in group.values())]
        if len(same_node) == 1 or len(matches) == 1:
            return (same_node or matches)[0]
    if node is not None:
        return next((group for group in free if any(m.get("kfd_node") == node for m in group.values())), None)
    # No identifier (old rocm-smi text): the tools number GPUs the same way.
    index = device.get("index")
    if index is not None and index < len(groups) and source not in groups[index]:
        return groups[index]
    return None


def _same_address(group, address, node, address_of):
    # Partitioned GPUs (MI300A TPX) share one BDF: the KFD node tells them apart.
    members = group.values()
    return any(address_of(m) == address for m in members) and all(
        node is None or m.get("kfd_node") in (None, node) for m in members
    )


def _member_bdf(member):
    return member.get(DOMAINLESS_BDF) or domainless_bdf(member.get("pci_bus"))


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
        if len(set(value for _, value in seen)) > 1:
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
