# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Partitions across the merged devices: which logical devices share a physical GPU, and whether it has them all.

Partitions of one GPU share its PCI address and UUID, and their own KFD node, render node and
index differ. So a physical GPU is the devices of one PCI device (bus:device; the function bits
may carry the partition number, see gpu.sysfs.partitions). Without an address (rocm-smi's
concise table) the tools list partitions in order, numbered from 0: a partition ID that does not
go up starts the next GPU. A device with neither an address nor a partition ID (rocm-smi 5.x)
belongs to no known physical GPU (null), unless its mode is SPX: then it is one on its own.

A GPU with fewer partitions than its compute mode gives is a warning that names it: on an
8x MI300X in CPX the 64th partition gets no DRM minor when another DRM driver holds one
(ROCm/ROCm#4750), and a container sees only the partitions passed into it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.tools import DOMAINLESS_BDF

# Both tables copy facts of roles/preflight/vars/gpu_catalog.yml (partitions.compute), which a host cannot read;
# tests/unit/plugins/module_utils/gpu/test_catalog_agreement.py holds them to it.
MODE_PARTITIONS = {"SPX": 1, "DPX": 2, "TPX": 3, "QPX": 4}
# CPX gives one partition per XCD: amdgpu's available_compute_partition follows the XCC count
# (8: SPX, DPX, QPX, CPX; 6: SPX, TPX, CPX), and amd-smi's MI300A profiles say CPX = 6.
XCDS_BY_DEVICE_ID = {
    "0x74a0": 6,  # MI300A
    "0x74a1": 8,  # MI300X
    "0x74a9": 8,  # MI300X HF
    "0x74b5": 8,  # MI300X VF
    "0x74a5": 8,  # MI325X
    "0x74b9": 8,  # MI325X VF
    "0x75a0": 8,  # MI350X
    "0x75a3": 8,  # MI355X
}
# What a partition has because its GPU has it: filled in where one source left it out
# (rocm-smi prints N/A for a partition a container cannot meter).
SHARED_KEYS = ("compute_partition", "memory_partition", "available_compute_partitions", "available_memory_partitions")
KNOWN_CAUSE = "the DRM minors ran out (another DRM driver such as mgag200 holds one) or a container sees only some"


def assign_partitions(devices, groups, usable, warnings):
    """Number the physical GPUs of ``devices`` (merged, in order; ``groups`` their source devices),
    share their modes among their partitions, and warn of a GPU whose partitions are not all there."""
    order, members = [], {}
    for device, group, key in zip(devices, groups, _physical_keys(devices, groups)):  # noqa: B905
        if key is None:
            continue
        if key not in order:
            order.append(key)
        device["physical_gpu"] = order.index(key)
        members.setdefault(device["physical_gpu"], []).append((device, group))
    for number in sorted(members):
        parts = [device for device, _group in members[number]]
        _share(parts)
        _check_count(number, members[number], usable, warnings)


def _physical_keys(devices, groups):
    keys, sequence, previous = [], 0, None
    for device, group in zip(devices, groups):  # noqa: B905 - same length
        address = _pci_device(device.get("pci_bus"))
        if address:
            keys.append(("pci", address))
            previous = None
            continue
        bdf = next((member[DOMAINLESS_BDF] for member in group.values() if member.get(DOMAINLESS_BDF)), None)
        # rocminfo's BDF carries the partition number in its function bits (KFD location_id).
        position = device.get("partition_id")
        if position is None and bdf:
            position = int(bdf[-1])
        if position is None and device.get("compute_partition") != "SPX":
            keys.append(None)
            previous = None
            continue
        place = bdf[:-2] if bdf else None
        if not position or previous is None or previous[0] is None or position <= previous[0] or place != previous[1]:
            sequence += 1
        previous = (position, place)
        keys.append(("sequence", sequence))
    return keys


def _pci_device(pci_bus):
    """'0000:05:00.1' -> '0000:05:00': the function bits may be a partition's number."""
    return pci_bus.rsplit(".", 1)[0] if pci_bus and "." in pci_bus else None


def _share(parts):
    for key in SHARED_KEYS:
        values = []
        for part in parts:
            if part.get(key) is not None and part[key] not in values:
                values.append(part[key])
        if len(values) == 1:
            for part in parts:
                if part.get(key) is None:
                    part[key] = list(values[0]) if isinstance(values[0], list) else values[0]


def _check_count(number, members, usable, warnings):
    parts = [device for device, _group in members]
    mode = next((part["compute_partition"] for part in parts if part.get("compute_partition")), None)
    expected = _expected(mode, members, usable) if mode else None
    if expected is None or expected == len(parts):
        return
    ids = [part.get("partition_id") for part in parts]
    missing = sorted(set(range(expected)) - set(ids)) if None not in ids and len(ids) < expected else []
    nodes = [part["kfd_node"] for part in parts if part.get("kfd_node") is not None]
    where = ", ".join(
        text
        for text in (
            parts[0].get("product") or parts[0].get("device_id"),
            parts[0].get("pci_bus") and "PCI %s" % parts[0]["pci_bus"],
            "logical GPU %s" % number_ranges([part["index"] for part in parts]),
            nodes and "KFD node %s" % number_ranges(nodes),
        )
        if text
    )
    if len(parts) < expected:
        gap = "; partition ID %s missing" % number_ranges(missing) if missing else ""
        warnings.append(
            "physical GPU %d (%s) has %d of the %d partitions %s gives%s: %s"
            % (number, where, len(parts), expected, mode, gap, KNOWN_CAUSE)
        )
    else:
        warnings.append(
            "physical GPU %d (%s) has %d partitions, more than the %d %s gives"
            % (number, where, len(parts), expected, mode)
        )


def _expected(mode, members, usable):
    """Partitions ``mode`` gives on this GPU: amd-smi's profile counts, else what the mode and the GPU say."""
    counts = (usable.get("amd_smi") or {}).get("partition_counts") or {}
    for _device, group in members:
        index = (group.get("amd_smi") or {}).get("index")
        if mode in counts.get(index, {}):
            return counts[index][mode]
    if mode in MODE_PARTITIONS:
        return MODE_PARTITIONS[mode]
    device_ids = [device.get("device_id") for device, _group in members]
    return next((XCDS_BY_DEVICE_ID[key] for key in device_ids if key in XCDS_BY_DEVICE_ID), None)


def number_ranges(numbers):
    """[40, 41, 42, 46] -> '40-42, 46'."""
    numbers = sorted(set(numbers))
    spans, start = [], None
    for position, number in enumerate(numbers):
        start = number if start is None else start
        if position + 1 == len(numbers) or numbers[position + 1] != number + 1:
            spans.append(str(start) if start == number else "%d-%d" % (start, number))
            start = None
    return ", ".join(spans)
