# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read the amdkfd topology (``/sys/class/kfd/kfd/topology/nodes``) and derive GPU-GPU links.

Every node directory has ``properties`` (``name value`` lines, decimal) and
``io_links/<n>/properties``. CRAT io_link types: 2 = PCIe, 11 = XGMI.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.model import pci_bus_from_bdfid

IOLINK_TYPE_PCIEXPRESS = 2
IOLINK_TYPE_XGMI = 11
_LINK_NAMES = {IOLINK_TYPE_PCIEXPRESS: "PCIE", IOLINK_TYPE_XGMI: "XGMI"}
# rocm_smi_lib: when two CPU nodes have no direct link, it assumes one more hop of weight 10.
_EXTRA_CPU_HOP_WEIGHT = 10
# HSA_MEM_HEAP_TYPE_FB_PUBLIC / _FB_PRIVATE: the GPU's own memory.
_VRAM_HEAPS = (1, 2)


def _read_properties(path):
    values = {}
    try:
        with open(path, "rb") as handle:
            text = handle.read().decode("ascii", "replace")
    except (IOError, OSError):
        return None
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2:
            try:
                values[parts[0]] = int(parts[1])
            except ValueError:
                continue
    return values


def _listdir(path):
    try:
        return os.listdir(path)
    except (IOError, OSError):
        return []


def read_kfd_nodes(nodes_dir):
    """{node id: {"properties", "bus", "is_cpu", "links", "vram_bytes"}}; links are (node_to, type, weight).

    CPU nodes' io_links are read only when a GPU pair needs the CPU-CPU link (``links`` None until then).
    """
    nodes = {}
    for name in _listdir(nodes_dir):
        if not name.isdigit():
            continue
        node_dir = os.path.join(nodes_dir, name)
        properties = _read_properties(os.path.join(node_dir, "properties"))
        if properties is None:
            continue
        is_gpu = properties.get("simd_count", 0) > 0
        node = {
            "properties": properties,
            "is_cpu": properties.get("cpu_cores_count", 0) > 0,
            "bus": None,
            "links": None,
            "links_dir": os.path.join(node_dir, "io_links"),
            "vram_bytes": None,
        }
        if is_gpu:
            # Bits above the BDF carry a partition's node id on some kernels (see gpu.sysfs.partitions).
            location = properties.get("location_id", 0) & 0xFFFF
            node["bus"] = pci_bus_from_bdfid((properties.get("domain", 0) << 16) | location)
            node["vram_bytes"] = _vram_bytes(os.path.join(node_dir, "mem_banks"))
            node["links"] = _read_links(node["links_dir"])
        nodes[int(name)] = node
    return nodes


def _read_links(links_dir):
    links = []
    for name in sorted(_listdir(links_dir), key=lambda entry: int(entry) if entry.isdigit() else -1):
        properties = _read_properties(os.path.join(links_dir, name, "properties"))
        if properties and "node_to" in properties:
            links.append((properties["node_to"], properties.get("type"), properties.get("weight", 0)))
    return links


def _vram_bytes(banks_dir):
    total = 0
    for name in _listdir(banks_dir):
        properties = _read_properties(os.path.join(banks_dir, name, "properties")) or {}
        if properties.get("heap_type") in _VRAM_HEAPS:
            total += properties.get("size_in_bytes", 0)
    return total or None


def _links(nodes, node_id):
    node = nodes[node_id]
    if node["links"] is None:
        node["links"] = _read_links(node["links_dir"])
    return node["links"]


def _cpu_link(nodes, node_id):
    """(CPU node, link type, weight) of the GPU's first io_link to a CPU node, as rocm_smi_lib picks it."""
    for node_to, link_type, weight in _links(nodes, node_id):
        if node_to in nodes and nodes[node_to]["is_cpu"]:
            return node_to, link_type, weight
    return None, None, None


def _link_between(nodes, node_from, node_to):
    for target, link_type, weight in _links(nodes, node_from):
        if target == node_to:
            return link_type, weight
    return None, None


def topology_from_kfd(nodes, gpu_nodes, numa_affinity):
    """TopologyReport for the GPUs whose KFD node ids are ``gpu_nodes`` (in device index order)."""
    count = len(gpu_nodes)
    link_type = [["SELF"] * count for _index in range(count)]
    hops = [[0] * count for _index in range(count)]
    weight = [[0] * count for _index in range(count)]
    cpu_links = [_cpu_link(nodes, node) for node in gpu_nodes]
    for i, src in enumerate(gpu_nodes):
        for j, dst in enumerate(gpu_nodes):
            if i == j:
                continue
            direct_type, direct_weight = _link_between(nodes, src, dst)
            if direct_type is not None:
                link_type[i][j] = _LINK_NAMES.get(direct_type, "UNKNOWN")
                hops[i][j], weight[i][j] = 1, direct_weight
                continue
            (cpu_src, type_src, weight_src), (cpu_dst, _type, weight_dst) = cpu_links[i], cpu_links[j]
            if cpu_src is None or cpu_dst is None:
                link_type[i][j], hops[i][j], weight[i][j] = "UNKNOWN", None, None
                continue
            link_type[i][j] = _LINK_NAMES.get(type_src, "UNKNOWN")
            weight[i][j] = weight_src + weight_dst
            if cpu_src == cpu_dst:
                hops[i][j] = 2
            else:
                _cpu_type, cpu_weight = _link_between(nodes, cpu_src, cpu_dst)
                hops[i][j] = 3 if cpu_weight is not None else 4
                weight[i][j] += cpu_weight if cpu_weight is not None else _EXTRA_CPU_HOP_WEIGHT
    return {"link_type": link_type, "hops": hops, "weight": weight, "numa_affinity": list(numa_affinity)}
