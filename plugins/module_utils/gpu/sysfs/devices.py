# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The sysfs source of the GPU facts: PCI devices, DRM minors, amdkfd topology.

``collect_sysfs(root)`` reads what the kernel exports and returns
``(state, report)`` with a gpu.model SourceReport; it never raises.

* GPUs are PCI functions of vendor 0x1002 with class 0x03xxxx (display) or
  0x12xxxx (processing accelerator); the AMD USB, audio and other functions
  on the same bus are not GPUs.
* Indexes follow rocm_smi_lib 5.x: AMD devices bound to amdgpu, in DRM card
  number order. A GPU without a DRM card (driver not loaded or failed to
  initialise) gets index None and a warning.
* Topology follows rocm_smi_lib's rsmi_topo_get_link_type/_weight over the KFD
  io_links: a direct XGMI link is 1 hop with its own weight; otherwise the
  path goes through the CPU node of each GPU's link to a CPU: 2 hops on one
  node (weight = both GPU-CPU weights), 3 when the CPU nodes are linked (plus
  that link's weight), else 4 (plus 10).
* A partitioned GPU (MI300 in DPX ... CPX) is one device per partition, each with its own KFD
  node, render node and VRAM share (gpu.sysfs.partitions); the topology covers the partitions.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.rocm_fleet.core.plugins.module_utils.common.status import SOURCE_FAILED, SOURCE_OK
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.model import (
    AMD_VENDOR_ID,
    new_device,
    new_report,
    normalize_hex_id,
    normalize_pci_bus,
    to_int,
)
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.sysfs.kfd import read_kfd_nodes, topology_from_kfd
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.sysfs.partitions import (
    expand_partitions,
    read_partition_files,
)

GPU_CLASS_PREFIXES = ("0x03", "0x12")


def _read(path):
    try:
        with open(path, "rb") as handle:
            return handle.read().decode("ascii", "replace").strip()
    except (IOError, OSError):
        return None


def _listdir(path):
    try:
        return os.listdir(path)
    except (IOError, OSError):
        return []


def find_amd_gpus(sys_dir):
    """PCI bus addresses of AMD GPU functions, sorted; raises OSError if the PCI tree is unreadable."""
    pci_dir = os.path.join(sys_dir, "bus", "pci", "devices")
    found = []
    for name in os.listdir(pci_dir):
        device_dir = os.path.join(pci_dir, name)
        if _read(os.path.join(device_dir, "vendor")) != AMD_VENDOR_ID:
            continue
        pci_class = _read(os.path.join(device_dir, "class")) or ""
        if pci_class.startswith(GPU_CLASS_PREFIXES):
            found.append(name)
    return sorted(found)


def _drm_minors(device_dir):
    """(card number, render node path) from the device's drm/ directory."""
    card = render = None
    for entry in _listdir(os.path.join(device_dir, "drm")):
        if entry.startswith("card") and entry[4:].isdigit():
            card = int(entry[4:])
        elif entry.startswith("renderD") and entry[7:].isdigit():
            render = "/dev/dri/" + entry
    return card, render


def _read_device(sys_dir, bus):
    device_dir = os.path.join(sys_dir, "bus", "pci", "devices", bus)
    numa_node = to_int(_read(os.path.join(device_dir, "numa_node")))
    card, render = _drm_minors(device_dir)
    device = new_device(
        pci_bus=normalize_pci_bus(bus),
        device_id=normalize_hex_id(_read(os.path.join(device_dir, "device"))),
        subsystem_device_id=normalize_hex_id(_read(os.path.join(device_dir, "subsystem_device"))),
        product=_read(os.path.join(device_dir, "product_name")) or None,
        vram_bytes=to_int(_read(os.path.join(device_dir, "mem_info_vram_total"))),
        # The kernel prints -1 when firmware gives no NUMA information.
        numa_node=numa_node if numa_node is not None and numa_node >= 0 else None,
        render_node=render,
        **read_partition_files(device_dir, _read),
    )
    return card, device


def collect_sysfs(root="/"):
    """Read the GPU facts from ``<root>/sys``; return (state, SourceReport). Never raises."""
    report = new_report()
    try:
        _collect(os.path.join(root, "sys"), report)
    except Exception as exc:  # a fact source must report, never crash the module
        report["warnings"].append("sysfs: %s: %s" % (type(exc).__name__, exc))
        return SOURCE_FAILED, report
    return SOURCE_OK, report


def _collect(sys_dir, report):
    try:
        buses = find_amd_gpus(sys_dir)
    except (IOError, OSError) as exc:
        raise OSError("cannot list PCI devices: %s" % exc) from None

    module_dir = os.path.join(sys_dir, "module", "amdgpu")
    initstate = _read(os.path.join(module_dir, "initstate"))
    report["driver_loaded"] = initstate == "live"
    if initstate == "live":
        report["driver_version"] = _read(os.path.join(module_dir, "version")) or None
    elif buses:
        report["warnings"].append("amdgpu is not loaded: %d AMD GPU(s) on the PCI bus have no driver" % len(buses))

    with_card, without_card = [], []
    for bus in buses:
        card, device = _read_device(sys_dir, bus)
        if card is None:
            without_card.append(device)
        else:
            with_card.append((card, device))
    with_card.sort(key=lambda item: item[0])
    nodes = read_kfd_nodes(os.path.join(sys_dir, "class", "kfd", "kfd", "topology", "nodes"))
    devices, gpu_nodes = expand_partitions([device for _card, device in with_card], nodes)
    if without_card and initstate == "live":
        report["warnings"].append(
            "no DRM device for %s: amdgpu did not initialise it" % ", ".join(d["pci_bus"] for d in without_card)
        )
    report["devices"] = devices + without_card
    if devices and len(gpu_nodes) == len(devices):
        report["topology"] = topology_from_kfd(nodes, gpu_nodes, [d["numa_node"] for d in devices])
    elif devices and initstate == "live":
        listed = len(set(d["pci_bus"] for d in devices if d["kfd_node"] is not None))
        report["warnings"].append("KFD topology lists %d of %d GPUs: no topology" % (listed, len(with_card)))
