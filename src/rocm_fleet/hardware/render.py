"""Render a hardware profile as a sysfs tree that the real ``rocm-smi`` accepts.

``render_profile(profile, root)`` writes ``<root>/sys`` with relative symlinks
only, so the tree works wherever it is bind-mounted over ``/sys``. It does not
create ``/dev`` nodes; it returns the ones the lab should ``mknod``.

What Debian 12's rocm-smi 5.2.3 (librocm_smi64 + rocm_smi.py) needs, found by
strace on these trees:

* ``/sys/module/amdgpu/initstate`` containing ``live``: rocm_smi.py greps it
  (through ``cat``) before anything else and exits when it is missing.
* ``/sys/class/drm/card<N>``: the library lists ``card*`` entries and keeps
  a card when ``device/vendor`` and ``device/vbios_version`` exist; it finds
  the sensors under ``device/hwmon/hwmon*`` (``name`` = ``amdgpu``) and takes
  the BDF from the ``device`` link target. GPU indexes follow the card number,
  not the PCI address (checked with a tree whose card order differs).
* ``/sys/class/kfd/kfd/topology/nodes/<k>/``: a GPU node (``gpu_id`` != 0)
  is matched to a card by ``location_id``/``domain`` (BDF), not by order;
  topology answers come only from its ``io_links``: a direct XGMI link is
  1 hop; without one, the path goes through the CPU node the GPU's first
  link points at (2 hops on one node, 3 across nodes, weights summed).
* Per device (``card<N>/device/``): ``vendor``, ``device``, ``subsystem_*``,
  ``revision``, ``numa_node``, ``mem_info_vram_total``/``_used``,
  ``gpu_busy_percent``, ``pp_dpm_sclk``/``_mclk``, ``unique_id``,
  ``vbios_version``, ``current_link_speed``/``_width``; hwmon ``temp*_input``,
  ``power1_average``, ``power1_cap``. Missing optional files show as N/A.
  ``vbios_version`` must hold a ``-``: --showproductname cuts the SKU out of
  it and crashes otherwise.
  hwmon needs ``in0_label`` (init fails without it); without ``pwm1`` (passive
  Instinct boards) the concise view prints every row but exits 2.
* ``/sys/module/amdgpu/version`` for ``--showdriverversion``.

The newer tools (rocm-smi 6.1.2/6.4.1, amd-smi 6.1.2/27.1, in the Debian roots of
``lab/toolroots.py``) read the same files through ``/sys/class/drm/renderD*``
and need every KFD node's ``p2p_links`` directory (``render_kfd.py``). What they
take from DRM or KFD ioctls instead, which no rendered tree can answer, is listed
per tool version in ``tests/fleet_testing/tool_limits.py`` and checked by
tests/integration/test_tool_crosscheck.py.

A partitioned GPU (``Profile.partitions()``, e.g. mi300x-8-cpx-nps4) has the
partition files under its PCI device (current_/available_compute_partition,
current_/available_memory_partition), its partition 0's card and render node
below it, and every further DRM slot on a ``devices/platform/amdgpu_xcp.N``
platform device with no other files, as amdxcp registers them (real layout:
a 4x MI300A node lists amdgpu_xcp.0-27, card1/renderD129 on amdgpu_xcp.0).
"""

from __future__ import annotations

import dataclasses
import os
import struct
from pathlib import Path

from rocm_fleet.hardware.render_efi import render_efi
from rocm_fleet.hardware.render_health import health_files, xgmi_num_links
from rocm_fleet.hardware.render_kfd import render_kfd, unique_id

DRM_MAJOR = 226
# amdkfd registers /dev/kfd with register_chrdev(0, ...): the major is dynamic.
# 234 is what Debian 12 kernels usually hand out; the lab only needs it to agree
# with /sys/devices/virtual/kfd/kfd/dev.
KFD_MAJOR = 234
# PCI command register: memory space decoding (set by firmware), bus mastering (set by the driver).
PCI_COMMAND_MEMORY = 0x0002
PCI_COMMAND_MASTER = 0x0004
PCI_INTERRUPT_PIN_INTA = 1
_PCI_SPEED_CLASS = {"32.0 GT/s PCIe": 5, "16.0 GT/s PCIe": 4, "8.0 GT/s PCIe": 3}


@dataclasses.dataclass(frozen=True)
class DeviceNode:
    """A /dev entry the driver creates; its owner, group and mode are udev's rules' to set (lab/udev.py)."""

    path: str
    major: int
    minor: int


@dataclasses.dataclass(frozen=True)
class RenderResult:
    root: Path
    sys_dir: Path
    device_nodes: tuple[DeviceNode, ...]
    gpu_buses: tuple[str, ...]


class _Tree:
    def __init__(self, sys_dir):
        self.sys_dir = sys_dir
        self._made = set()

    def write(self, relpath, text):
        path = self.sys_dir / relpath
        self._make(path.parent)
        path.write_text(text, encoding="ascii")

    def write_bytes(self, relpath, data):
        path = self.sys_dir / relpath
        self._make(path.parent)
        path.write_bytes(data)

    def link(self, relpath, target):
        path = self.sys_dir / relpath
        self._make(path.parent)
        if path.is_symlink():
            path.unlink()
        os.symlink(target, path)

    def mkdir(self, relpath):
        self._make(self.sys_dir / relpath)

    def _make(self, directory):
        if directory not in self._made:
            directory.mkdir(parents=True, exist_ok=True)
            self._made.add(directory)


def render_profile(profile, root):
    """Write ``profile`` as ``<root>/sys``; return what the lab needs to finish the host."""
    root = Path(root)
    tree = _Tree(root / "sys")
    for name in ("class/drm", "class/hwmon", "bus/pci/devices", "devices/system/node"):
        tree.mkdir(name)
    _render_numa(tree, profile)
    render_efi(profile, tree.write_bytes)
    slots = profile.drm_slots() if profile.driver_loaded else {}
    for index, gpu in enumerate(profile.gpus):
        _render_pci_device(tree, profile, index, gpu, slots.get(index))
    nodes = []
    if profile.driver_loaded:
        _render_module(tree, profile)
        render_kfd(profile, tree.write, tree.link, tree.mkdir)
        tree.write("devices/virtual/kfd/kfd/dev", "%d:0\n" % KFD_MAJOR)
        tree.write("devices/virtual/kfd/kfd/uevent", "MAJOR=%d\nMINOR=0\nDEVNAME=kfd\n" % KFD_MAJOR)
        # As in the kernel's sysfs; udev (udevadm test too) needs it to know the device's subsystem.
        tree.link("devices/virtual/kfd/kfd/subsystem", "../../../../class/kfd")
        nodes.append(DeviceNode("/dev/kfd", KFD_MAJOR, 0))
        for index in range(len(profile.gpus)):
            for slot in slots[index]:  # none for a GPU whose probe failed
                if slot.platform_device:
                    _render_xcp_device(tree, slot)
                nodes.append(DeviceNode("/dev/dri/card%d" % slot.card_minor, DRM_MAJOR, slot.card_minor))
                nodes.append(DeviceNode("/dev/dri/renderD%d" % slot.render_minor, DRM_MAJOR, slot.render_minor))
    return RenderResult(root, tree.sys_dir, tuple(nodes), tuple(gpu.bus for gpu in profile.gpus))


def device_dir(gpu):
    """sysfs path of a GPU below /sys, e.g. devices/pci0000:0c/0000:0c:00.0."""
    return "devices/pci%s:%s/%s" % (gpu.bus[:4], gpu.bus[5:7], gpu.bus)


def _render_numa(tree, profile):
    for cpu in profile.cpus:
        base = "devices/system/node/node%d" % cpu.numa_node
        tree.write(base + "/cpulist", cpu.cpulist + "\n")
        tree.write(base + "/distance", " ".join(str(d) for d in profile.numa_distance[cpu.numa_node]) + "\n")


def _render_module(tree, profile):
    tree.write("module/amdgpu/initstate", "live\n")
    tree.write("module/amdgpu/version", profile.driver_version + "\n")
    tree.write("module/amdgpu/parameters/ras_enable", "-1\n")
    tree.write("module/amdgpu/parameters/noretry", "-1\n")
    tree.mkdir("bus/pci/drivers/amdgpu")
    tree.link("module/amdgpu/drivers/pci:amdgpu", "../../../bus/pci/drivers/amdgpu")


def _render_pci_device(tree, profile, index, gpu, slots):
    # A function amdgpu failed to probe keeps its PCI files only: no driver link, DRM, hwmon or amdgpu files.
    bound = profile.driver_loaded and not gpu.init_failed
    path = device_dir(gpu)
    cpulist = profile.cpus[gpu.numa_node].cpulist
    ids = "%04X:%04X" % (gpu.vendor_id, gpu.device_id)
    subsys = "%04X:%04X" % (gpu.subsystem_vendor_id, gpu.subsystem_device_id)
    modalias = "pci:v%08Xd%08Xsv%08Xsd%08Xbc%02Xsc%02Xi%02X" % (
        gpu.vendor_id,
        gpu.device_id,
        gpu.subsystem_vendor_id,
        gpu.subsystem_device_id,
        gpu.pci_class >> 16,
        (gpu.pci_class >> 8) & 0xFF,
        gpu.pci_class & 0xFF,
    )
    uevent = "PCI_CLASS=%X\nPCI_ID=%s\nPCI_SUBSYS_ID=%s\nPCI_SLOT_NAME=%s\nMODALIAS=%s\n" % (
        gpu.pci_class,
        ids,
        subsys,
        gpu.bus,
        modalias,
    )
    files = {
        "vendor": "0x%04x" % gpu.vendor_id,
        "device": "0x%04x" % gpu.device_id,
        "subsystem_vendor": "0x%04x" % gpu.subsystem_vendor_id,
        "subsystem_device": "0x%04x" % gpu.subsystem_device_id,
        "class": "0x%06x" % gpu.pci_class,
        "revision": "0x%02x" % gpu.revision,
        "numa_node": str(gpu.numa_node),
        "local_cpulist": cpulist,
        "enable": "1",
        "current_link_speed": gpu.current_link_speed or gpu.pcie_speed,
        "max_link_speed": gpu.pcie_speed,
        "current_link_width": str(gpu.current_link_width or gpu.pcie_width),
        "max_link_width": str(gpu.pcie_width),
        "uevent": ("DRIVER=amdgpu\n" if bound else "") + uevent.rstrip("\n"),
        # lspci -v reads these next to config: no legacy IRQ (amdgpu uses MSI), no BARs mapped.
        "irq": "0",
        "resource": "\n".join(["0x0000000000000000 0x0000000000000000 0x0000000000000000"] * 13),
    }
    tree.link("bus/pci/devices/" + gpu.bus, "../../../" + path)
    if bound:
        files.update(_amdgpu_files(gpu))
        for name, text in health_files(gpu).items():
            tree.write("%s/%s" % (path, name), text)
        if profile.xgmi_hive:
            tree.write(path + "/xgmi_num_links", xgmi_num_links(profile, index))
        tree.link(path + "/driver", "../../../bus/pci/drivers/amdgpu")
        tree.link("bus/pci/drivers/amdgpu/" + gpu.bus, "../../../../" + path)
        _render_drm(tree, path, slots[0])
        _render_hwmon(tree, path, index, gpu)
    for name, text in files.items():
        tree.write("%s/%s" % (path, name), text + "\n")
    tree.write_bytes(path + "/config", pci_config_header(gpu, bound))


def pci_config_header(gpu, driver_loaded):
    """The 64-byte type 0 header of the GPU's PCI config space, what ``lspci`` reads from sysfs.

    BARs are left zero (lspci takes addresses from ``resource``) and the status register
    announces no capability list, so nothing past the 64 bytes is ever read.
    """
    command = PCI_COMMAND_MEMORY | (PCI_COMMAND_MASTER if driver_loaded else 0)
    return struct.pack(
        "<HHHHB3sBBBB24sIHHIB7sBBBB",
        gpu.vendor_id,
        gpu.device_id,
        command,
        0,  # status
        gpu.revision,
        gpu.pci_class.to_bytes(3, "little"),  # prog-if, subclass, base class
        0,  # cache line size
        0,  # latency timer
        0x00,  # header type 0 (single-function endpoint)
        0,  # BIST
        bytes(24),  # BAR0-5
        0,  # CardBus CIS
        gpu.subsystem_vendor_id,
        gpu.subsystem_device_id,
        0,  # expansion ROM
        0,  # capabilities pointer
        bytes(7),  # reserved
        0xFF,  # interrupt line: not routed through the legacy PIC
        PCI_INTERRUPT_PIN_INTA,
        0,  # min grant
        0,  # max latency
    )


def _amdgpu_files(gpu):
    files = {
        "mem_info_vram_total": str(gpu.vram_bytes),
        "mem_info_vram_used": str(min(gpu.vram_bytes, 12 * 1024 * 1024)),
        "mem_info_vis_vram_total": str(gpu.vram_bytes),
        "mem_info_vis_vram_used": str(min(gpu.vram_bytes, 12 * 1024 * 1024)),
        "mem_busy_percent": "0",
        "gpu_busy_percent": "0",
        "unique_id": "%016x" % unique_id(gpu),
        "product_name": gpu.product,
        "power_dpm_force_performance_level": gpu.performance_level,
        "pp_sclk_od": "0",
        "pp_mclk_od": "0",
        "pp_dpm_sclk": "0: 500Mhz *\n1: 1700Mhz\n2: 2100Mhz",
        "pp_dpm_mclk": "0: 900Mhz\n1: 1300Mhz *",
        "pp_dpm_pcie": "0: %s, x%d %s *"
        % (
            (gpu.current_link_speed or gpu.pcie_speed).split()[0] + "GT/s,",
            gpu.current_link_width or gpu.pcie_width,
            "619Mhz",
        ),
        # rocm_smi_lib skips cards without it; rocm-smi 5.2.3 --showproductname crashes when it is empty.
        "vbios_version": gpu.vbios_version,
    }
    # amdgpu creates these only on partitionable parts (MI300); rocm-smi 6.x and amd-smi print N/A without them.
    if gpu.compute_partition:
        files["current_compute_partition"] = gpu.compute_partition
    if gpu.memory_partition:
        files["current_memory_partition"] = gpu.memory_partition
    if gpu.available_compute_partitions:
        files["available_compute_partition"] = gpu.available_compute_partitions
    if gpu.available_memory_partitions:
        files["available_memory_partition"] = gpu.available_memory_partitions
    return files


def _render_xcp_device(tree, slot):
    """A secondary partition's platform device, as amdxcp registers it (platform_device_register_simple,
    no driver bound): its DRM minors hang below it, not below the PCI device."""
    path = "devices/platform/" + slot.platform_device
    tree.write(path + "/uevent", "MODALIAS=platform:%s\n" % slot.platform_device)
    tree.write(path + "/modalias", "platform:%s\n" % slot.platform_device)
    tree.write(path + "/driver_override", "(null)\n")
    tree.link(path + "/subsystem", "../../../bus/platform")
    tree.mkdir("bus/platform/drivers")
    tree.link("bus/platform/devices/" + slot.platform_device, "../../../" + path)
    _render_drm(tree, path, slot)


def _render_drm(tree, path, slot):
    for name, minor in (
        ("card%d" % slot.card_minor, slot.card_minor),
        ("renderD%d" % slot.render_minor, slot.render_minor),
    ):
        node = "%s/drm/%s" % (path, name)
        tree.write(node + "/dev", "%d:%d\n" % (DRM_MAJOR, minor))
        uevent = "MAJOR=%d\nMINOR=%d\nDEVNAME=dri/%s\nDEVTYPE=drm_minor\n" % (DRM_MAJOR, minor, name)
        tree.write(node + "/uevent", uevent)
        tree.link(node + "/device", "../../../" + path.rsplit("/", 1)[1])
        tree.link(node + "/subsystem", "../../../../../class/drm")
        tree.link("class/drm/" + name, "../../" + node)


def _render_hwmon(tree, path, index, gpu):
    node = "%s/hwmon/hwmon%d" % (path, index)
    power_cap_uw = 750_000_000 if gpu.pci_class >> 16 == 0x12 else 300_000_000
    files = {
        "name": "amdgpu",
        "temp1_input": "35000",
        "temp1_label": "edge",
        "temp2_input": "40000",
        "temp2_label": "junction",
        "temp3_input": "38000",
        "temp3_label": "mem",
        "in0_input": "800",
        "in0_label": "vddgfx",
        "power1_average": "150000000",
        "power1_cap": str(power_cap_uw),
        "power1_cap_max": str(power_cap_uw),
        "power1_cap_default": str(power_cap_uw),
        "freq1_input": "500000000",
        "freq1_label": "sclk",
    }
    if gpu.pci_class >> 8 == 0x0300:
        # VGA-class boards carry a fan; passive Instinct modules export no pwm files.
        files.update({"pwm1": "64", "pwm1_max": "255", "pwm1_enable": "2", "fan1_input": "900"})
    for name, text in files.items():
        tree.write("%s/%s" % (node, name), text + "\n")
    tree.link(node + "/device", "../../../" + path.rsplit("/", 1)[1])
    tree.link("class/hwmon/hwmon%d" % index, "../../" + node)
