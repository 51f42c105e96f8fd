# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which GPU of each source is which: the device groups gpu.merge builds the facts from.

GPUs match by PCI address, else KFD node, else index; partitions, which share their GPU's
address and UUID, by address with their KFD node and partition ID. A UUID is never a key.
A tool's address that names no free sysfs GPU is an address the tool could not read where
all else agrees (a warning), and a conflict otherwise: a GPU the OS does not see is never hidden.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.model import SOURCES
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.tools import DOMAINLESS_BDF, domainless_bdf

# Fields where two sources disagreeing points at a real problem.
CHECKED_FIELDS = ("device_id", "gfx_target", "kfd_node", "compute_partition", "memory_partition")
# Which source decides the device list and numbers it, first that has any. Sysfs is what
# the OS enumerates and numbers GPUs as rocm-smi does (by DRM card), so it comes first.
ORDER_PRIORITY = ("sysfs", "rocm_smi", "amd_smi", "rocminfo")
SOURCE_LABELS = {"sysfs": "sysfs", "rocm_smi": "rocm-smi", "amd_smi": "amd-smi", "rocminfo": "rocminfo"}


def group_devices(usable, conflicts, warnings):
    """[{source: DeviceReport}] per GPU, in the numbering source's order; what fits no GPU is a conflict."""
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
    return groups


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
    bus, node, ids = device.get("pci_bus"), device.get("kfd_node"), (device.get("kfd_node"), device.get("partition_id"))
    if bus:
        return next((group for group in free if _same_address(group, bus, ids, lambda m: m.get("pci_bus"))), None)
    bdf = device.get(DOMAINLESS_BDF)
    if bdf:
        matches = [group for group in free if _same_address(group, bdf, (node, None), _member_bdf)]
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


def _same_address(group, address, ids, address_of):
    # Partitions share their GPU's BDF: the KFD node and the partition ID tell them apart.
    node, partition = ids
    members = group.values()
    return any(address_of(m) == address for m in members) and all(
        (node is None or m.get("kfd_node") in (None, node))
        and (partition is None or m.get("partition_id") in (None, partition))
        for m in members
    )


def _member_bdf(member):
    return member.get(DOMAINLESS_BDF) or domainless_bdf(member.get("pci_bus"))
