# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The partitions of each PCI GPU in sysfs: MI300 compute (SPX ... CPX) and memory (NPS1 ... NPS8) modes.

What amdgpu exports (drivers/gpu/drm/amd/amdgpu/amdgpu_gfx.c, amdgpu_gmc.c, amdgpu_xcp.c and
amdkfd/kfd_topology.c):

* Under the PCI device, on partitionable parts only: current_compute_partition ("CPX"),
  available_compute_partition ("SPX, DPX, QPX, CPX", or "Not supported"),
  current_memory_partition ("NPS1") and available_memory_partition ("NPS1, NPS4").
* One KFD topology node per partition, in partition order. They share the GPU's domain and
  unique_id (so rocminfo's Uuid), and location_id is the PCI device's BDF OR'ed with the
  partition's number (kfd_topology_add_device), so partition 1 of 05:00.0 reads 05:00.1. One
  kernel briefly put the number in bits 31:28 instead; with neither, all read the same BDF.
* Each partition's render node is its KFD node's drm_render_minor: partitions after the first
  are platform devices (amdgpu_xcp.N), not children of the PCI device, whose drm/ directory
  holds the first partition's nodes only. Every GPU reserves DRM minors for all its possible
  partitions, which is why 8 MI300X in CPX exhaust DRM's 64 minors when another driver holds one.
* A partition's KFD mem_banks hold its share of VRAM (24 GiB of an MI300X in CPX/NPS1), while
  mem_info_vram_total under the PCI device stays the whole GPU's.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.model import (
    COMPUTE_PARTITIONS,
    MEMORY_PARTITIONS,
    gfx_target_from_version,
    partition_mode,
    partition_modes,
)

_PARTITION_BITS = 28  # the short-lived kernel layout: node id in location_id[31:28]
_FUNCTION_MASK = 0x7


def read_partition_files(device_dir, read):
    """The partition modes under one PCI device (``read(path)`` -> text or None); all None when absent."""

    def value(name):
        return read(os.path.join(device_dir, name))

    return {
        "compute_partition": partition_mode(value("current_compute_partition"), COMPUTE_PARTITIONS),
        "memory_partition": partition_mode(value("current_memory_partition"), MEMORY_PARTITIONS),
        "available_compute_partitions": partition_modes(value("available_compute_partition"), COMPUTE_PARTITIONS),
        "available_memory_partitions": partition_modes(value("available_memory_partition"), MEMORY_PARTITIONS),
    }


def kfd_nodes_by_gpu(buses, nodes):
    """{PCI address: [KFD node ids]} for the GPUs at ``buses``: a node whose BDF is no GPU's belongs
    to the GPU at function 0 of its device (the partition number sits in the function bits)."""
    found = {}
    for node_id in sorted(nodes):
        bus = nodes[node_id]["bus"]
        if bus is None:
            continue
        if bus not in buses:
            bus = bus[:-1] + "0"
        if bus in buses:
            found.setdefault(bus, []).append(node_id)
    return found


def partition_ids(nodes, node_ids):
    """Each node's partition number, from location_id where the kernel put it there, else node order."""
    if len(node_ids) == 1:
        return [0]
    locations = [nodes[node_id]["properties"].get("location_id", 0) for node_id in node_ids]
    for ids in ([loc >> _PARTITION_BITS for loc in locations], [loc & _FUNCTION_MASK for loc in locations]):
        if len(set(ids)) == len(ids):
            return ids
    return list(range(len(node_ids)))


def expand_partitions(devices, nodes):
    """(logical devices, their KFD node ids): one device per partition, numbered in KFD node order.

    ``devices`` are the PCI GPUs with a DRM card, in card order. A GPU without a KFD node stays
    one device with no node (the caller then gives no topology).
    """
    by_gpu = kfd_nodes_by_gpu(set(device["pci_bus"] for device in devices), nodes)
    logical, gpu_nodes = [], []
    for device in devices:
        node_ids = by_gpu.get(device["pci_bus"], [])
        if not node_ids:
            logical.append(device)
            continue
        for node_id, partition_id in zip(node_ids, partition_ids(nodes, node_ids)):  # noqa: B905 - same length
            logical.append(_partition(device, nodes[node_id], node_id, partition_id, len(node_ids) > 1))
            gpu_nodes.append(node_id)
    for index, device in enumerate(logical):
        device["index"] = index
    return logical, gpu_nodes


def _partition(device, node, node_id, partition_id, partitioned):
    part = dict(device)
    properties = node["properties"]
    part["kfd_node"] = node_id
    part["partition_id"] = partition_id
    part["gfx_target"] = gfx_target_from_version(properties.get("gfx_target_version"))
    minor = properties.get("drm_render_minor")
    if partitioned:
        # The PCI device's VRAM and render node are the whole GPU's and the first partition's.
        part["vram_bytes"] = node["vram_bytes"]
        part["render_node"] = "/dev/dri/renderD%d" % minor if minor else None
        return part
    if part["vram_bytes"] is None:
        part["vram_bytes"] = node["vram_bytes"]
    if part["render_node"] is None and minor:
        part["render_node"] = "/dev/dri/renderD%d" % minor
    return part
