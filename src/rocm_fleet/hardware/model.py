"""Data model of a simulated GPU server (see ``profile.py`` for the YAML form).

Ordering rules the model keeps, because the kernel keeps them:

* KFD numbers CPU nodes first (one per NUMA node, in NUMA order), then GPUs in
  the order amdgpu probed them; DRM card minors follow the same probe order.
  ``Profile.gpus`` is that order.
* Links are undirected; KFD prints one io_link per direction.
* A partitionable GPU (``xcc_count`` > 1: MI300) is one logical device per
  compute partition (``Profile.partitions()``): its own KFD node and DRM
  minors. amdgpu reserves DRM minors for ``MAX_XCP`` partitions of each such
  GPU at probe, whatever its mode (amdgpu_xcp.c amdgpu_xcp_dev_alloc: partition
  0 is the PCI device's own DRM device, partitions 1-7 are ``amdgpu_xcp.<n>``
  platform devices of amdxcp), so 8 of them use all 64 DRM primary minors.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping

LINK_TYPES = ("XGMI", "PCIE")
# amdkfd kfd_crat.c: KFD_CRAT_XGMI_WEIGHT, one XGMI hop weighs 15; a GPU's
# PCIe io_link to its CPU node weighs 20 (kfd_parse_subtype_iolink).
XGMI_HOP_WEIGHT = 15
PCIE_TO_CPU_WEIGHT = 20
# kfd_crat.c kfd_fill_gpu_xgmi_link_to_gpu: a GPU of several KFD nodes (partitions) does not ask
# the XGMI TA; partitions of one GPU weigh KFD_CRAT_INTRA_SOCKET_WEIGHT (13), partitions of two
# GPUs 2 x 13 + KFD_CRAT_XGMI_WEIGHT (15) = 41, each one hop.
INTRA_SOCKET_WEIGHT = 13
INTER_SOCKET_PARTITION_WEIGHT = 2 * INTRA_SOCKET_WEIGHT + XGMI_HOP_WEIGHT
# amdgpu_xcp.h MAX_XCP; drm_drv.c: primary minors are 0-63, render minors 128-191 (kernels < 6.11
# and the DRM_MINOR_LIMIT of later ones for legacy numbering).
MAX_XCP = 8
DRM_PRIMARY_MINORS = 64
RENDER_MINOR_BASE = 128
# Partitions per compute mode; CPX gives one per XCC (gfx_v9_4_3 / aqua_vanjaram.c). Mirrors the collection's
# gpu/partitions.MODE_PARTITIONS (tests/unit/plugins/module_utils/gpu/test_catalog_agreement.py keeps them equal).
PARTITIONS_OF_MODE = {"SPX": 1, "DPX": 2, "TPX": 3, "QPX": 4}
MEMORY_PARTITIONS_OF_MODE = {"NPS1": 1, "NPS2": 2, "NPS4": 4, "NPS8": 8}

BUS_PATTERN = re.compile(r"^([0-9a-f]{4}):([0-9a-f]{2}):([0-9a-f]{2})\.([0-7])$")
GFX_PATTERN = re.compile(r"^gfx[0-9]{2,3}[0-9a-f]$")


class ProfileError(ValueError):
    """A profile that cannot describe a server; the message names the file and key."""


@dataclasses.dataclass(frozen=True)
class CpuNode:
    numa_node: int
    cores: int
    cpulist: str
    model: str


@dataclasses.dataclass(frozen=True)
class Gpu:
    bus: str
    numa_node: int
    product: str
    device_id: int
    subsystem_vendor_id: int
    subsystem_device_id: int
    pci_class: int
    revision: int
    vram_bytes: int
    gfx_target: str
    gfx_target_version: int
    compute_units: int
    simd_per_cu: int
    kfd_name: str
    vbios_version: str
    pcie_speed: str
    pcie_width: int
    unique_id: str | None = None
    vendor_id: int = 0x1002
    # amdgpu's current_compute_partition / current_memory_partition (GC 9.4.3 parts only, e.g. "SPX", "NPS1").
    compute_partition: str | None = None
    memory_partition: str | None = None
    # available_compute_partition / available_memory_partition, as amdgpu prints them ("SPX, DPX, QPX, CPX").
    available_compute_partitions: str | None = None
    available_memory_partitions: str | None = None
    # XCCs (accelerated compute complexes); > 1 makes the GPU partitionable (MI300X: 8, MI300A: 6).
    xcc_count: int = 1
    # fw_version/<name>_fw_version values as (name, version) pairs; smc is the PMFW (amd-smi's PM).
    firmware: tuple = ()
    # The RAS blocks amdgpu registers, as it names them ("umc, sdma, gfx"); None: no RAS (Radeon), no ras/.
    ras_blocks: str | None = None
    # Health as a fault leaves it: the link trained below its maximum, RAS error counts per block
    # ((block, ue, ce)), amdgpu's probe failing (the PCI function stays, nothing of amdgpu appears).
    current_link_speed: str | None = None
    current_link_width: int | None = None
    # power_dpm_force_performance_level: link speed is only at its maximum under "high" or "profile_peak".
    performance_level: str = "auto"
    ras_errors: tuple = ()
    init_failed: bool = False

    @property
    def partitionable(self):
        return self.xcc_count > 1

    @property
    def partition_count(self):
        """Logical devices of this GPU in its compute mode (CPX: one per XCC)."""
        if not self.partitionable or self.compute_partition is None:
            return 1
        if self.compute_partition == "CPX":
            return self.xcc_count
        return PARTITIONS_OF_MODE[self.compute_partition]

    @property
    def location_id(self):
        """KFD ``location_id``: bus << 8 | device << 3 | function (domain is separate)."""
        _, bus, dev, fn = BUS_PATTERN.match(self.bus).groups()
        return (int(bus, 16) << 8) | (int(dev, 16) << 3) | int(fn)

    @property
    def domain(self):
        return int(self.bus[:4], 16)


@dataclasses.dataclass(frozen=True)
class DrmSlot:
    """The DRM device of one partition slot of a GPU: its minors and, after slot 0, its platform device."""

    gpu: int  # index in Profile.gpus
    slot: int  # partition number
    card_minor: int
    render_minor: int
    platform_device: str | None  # amdgpu_xcp.<n> (slot > 0); slot 0 is the PCI device itself


@dataclasses.dataclass(frozen=True)
class Partition:
    """One logical device: a compute partition with its KFD node (SPX: the whole GPU)."""

    gpu: int
    partition_id: int
    drm: DrmSlot
    count: int  # partitions of its GPU in the current mode


@dataclasses.dataclass(frozen=True)
class Link:
    """A direct GPU-GPU io_link as KFD reports it (XGMI only: PCIe peers go via the CPU)."""

    type: str
    weight: int
    # xgmi_num_links between the pair: physical XGMI links (0: reached over other GPUs, 2 hops).
    physical_links: int = 1


@dataclasses.dataclass(frozen=True)
class Profile:
    name: str
    description: str
    driver_loaded: bool
    driver_version: str
    cpus: tuple[CpuNode, ...]
    numa_distance: tuple[tuple[int, ...], ...]
    gpus: tuple[Gpu, ...]
    links: Mapping[frozenset, Link]
    sources: Mapping[str, str]
    # DRM primary minors held by another DRM driver (mgag200 on the BMC's VGA), taken before amdgpu's.
    foreign_drm_cards: int = 0
    # The GPU whose last partitions find no DRM minor left (None: the last one probed).
    short_gpu: int | None = None
    # "bios" (no /sys/firmware/efi) or "uefi"; Secure Boot state and the MOK list shim mirrors (DER certificates).
    # Whether the GPUs form an XGMI hive (amdgpu's xgmi_* files), also after a fault took links down.
    xgmi_hive: bool = False
    boot_firmware: str = "bios"
    secure_boot: bool = False
    mok_certificates: tuple = ()

    def drm_slots(self):
        """{gpu index: [DrmSlot]} as amdgpu allocates them in probe order; a slot left without a
        primary minor is not created (amdgpu_xcp_dev_alloc: "Skip xcp node #%d when out of drm node
        resource"), and a partition without its slot gets no KFD node either (ROCm/ROCm#4750)."""
        # A GPU whose probe failed registers no DRM device at all.
        wanted = [0 if gpu.init_failed else MAX_XCP if gpu.partitionable else 1 for gpu in self.gpus]
        lost = max(0, sum(wanted) + self.foreign_drm_cards - DRM_PRIMARY_MINORS)
        short = len(self.gpus) - 1 if self.short_gpu is None else self.short_gpu
        if lost:
            wanted[short] -= lost
        card, render, xcp = self.foreign_drm_cards, RENDER_MINOR_BASE, 0
        slots = {}
        for index, count in enumerate(wanted):
            slots[index] = []
            for slot in range(count):
                platform = None
                if slot:
                    platform, xcp = "amdgpu_xcp.%d" % xcp, xcp + 1
                slots[index].append(DrmSlot(index, slot, card, render, platform))
                card, render = card + 1, render + 1
        return slots

    def partitions(self):
        """The logical devices in KFD node order: each GPU's partitions that have a DRM slot."""
        found = []
        for index, slots in self.drm_slots().items():
            count = self.gpus[index].partition_count
            found.extend(Partition(index, slot.slot, slot, count) for slot in slots[:count])
        return found

    @property
    def partitioned(self):
        """Whether any GPU is more than one logical device."""
        return len(self.partitions()) != len(self.gpus)

    def kfd_node_of_gpu(self, index):
        """KFD node of the GPU's first partition."""
        return len(self.cpus) + [part.gpu for part in self.partitions()].index(index)

    def kfd_node_of_numa(self, numa_node):
        return [cpu.numa_node for cpu in self.cpus].index(numa_node)

    def link(self, i, j):
        return self.links.get(frozenset((i, j)))

    def with_foreign_drm_card(self, gpu=None):
        """Another DRM driver holds a primary minor, so a GPU of a server that needs all 64 (8x MI300X)
        loses its last partition (``gpu``, default the last probed; ROCm/ROCm#4750, ROCm/amdsmi#99)."""
        if gpu is not None:
            self._check_gpu_index(gpu)
        slots = sum(MAX_XCP if g.partitionable else 1 for g in self.gpus) + self.foreign_drm_cards + 1
        if slots <= DRM_PRIMARY_MINORS:
            raise ProfileError("%s uses %d DRM primary minors: one more driver takes none of them" % (self.name, slots))
        return dataclasses.replace(self, foreign_drm_cards=self.foreign_drm_cards + 1, short_gpu=gpu)

    def without_gpu(self, index):
        """The server after one GPU vanished from the bus (dead card, failed link training)."""
        self._check_gpu_index(index)
        renumber = {old: old - (old > index) for old in range(len(self.gpus)) if old != index}
        links = {frozenset(renumber[k] for k in pair): link for pair, link in self.links.items() if index not in pair}
        gpus = self.gpus[:index] + self.gpus[index + 1 :]
        short = None if self.short_gpu in (None, index) else renumber[self.short_gpu]
        return dataclasses.replace(self, gpus=gpus, links=links, short_gpu=short)

    def with_link(self, i, j, link_type, weight=None):
        """The server with the i-j link changed: 'PCIE' drops the XGMI link (traffic goes via the CPU)."""
        self._check_gpu_index(i)
        self._check_gpu_index(j)
        if i == j or link_type not in LINK_TYPES:
            raise ProfileError("with_link needs two different GPUs and a type in %s" % (LINK_TYPES,))
        links = dict(self.links)
        links.pop(frozenset((i, j)), None)
        if link_type == "XGMI":
            links[frozenset((i, j))] = Link("XGMI", weight or XGMI_HOP_WEIGHT)
        return dataclasses.replace(self, links=links)

    def expected_topology(self):
        """The topology rocm_smi_lib derives from this server's KFD io_links, per logical device.

        rocm_smi_lib 5.x (rsmi_topo_get_link_type/_weight): a direct XGMI io_link
        is 1 hop with its own weight; otherwise the path goes through the CPU:
        2 hops on one NUMA node, 3 across nodes, weight = both GPU-CPU weights
        plus the CPU-CPU io_link weight (the SLIT distance). Partitions link as
        ``partition_link`` says.
        """
        parts = self.partitions()
        count = len(parts)
        link_type = [["SELF"] * count for _ in range(count)]
        hops = [[0] * count for _ in range(count)]
        weight = [[0] * count for _ in range(count)]
        for i in range(count):
            for j in range(count):
                if i == j:
                    continue
                link = self.partition_link(parts[i], parts[j])
                numa_i, numa_j = self.gpus[parts[i].gpu].numa_node, self.gpus[parts[j].gpu].numa_node
                if link is not None:
                    link_type[i][j], hops[i][j], weight[i][j] = link.type, 1, link.weight
                elif numa_i == numa_j:
                    link_type[i][j], hops[i][j], weight[i][j] = "PCIE", 2, 2 * PCIE_TO_CPU_WEIGHT
                else:
                    cpu_weight = self.numa_distance[numa_i][numa_j]
                    link_type[i][j], hops[i][j], weight[i][j] = "PCIE", 3, 2 * PCIE_TO_CPU_WEIGHT + cpu_weight
        return {
            "link_type": link_type,
            "hops": hops,
            "weight": weight,
            "numa_affinity": [self.gpus[part.gpu].numa_node for part in parts],
        }

    def partition_link(self, source, target):
        """The direct KFD io_link from one logical device to another, or None.

        kfd_fill_gpu_xgmi_link_to_gpu: a GPU of one node takes the XGMI TA's hops (the profile's
        link); a GPU of several nodes links all nodes of its hive, which for a partitioned GPU
        without XGMI peers is its own partitions (kgd2kfd_device_init gives it its PCI id as hive).
        """
        if source.count == 1:
            return self.link(source.gpu, target.gpu)
        if source.gpu == target.gpu:
            return Link("XGMI", INTRA_SOCKET_WEIGHT)
        if self.link(source.gpu, target.gpu) is not None:
            return Link("XGMI", INTER_SOCKET_PARTITION_WEIGHT)
        return None

    def with_gpu(self, index, **changes):
        """The server with GPU ``index`` changed (a fault: its link, error counts, firmware, probe)."""
        self._check_gpu_index(index)
        gpus = list(self.gpus)
        gpus[index] = dataclasses.replace(gpus[index], **changes)
        return dataclasses.replace(self, gpus=tuple(gpus))

    def with_driver_loaded(self, loaded):
        return dataclasses.replace(self, driver_loaded=bool(loaded))

    def _check_gpu_index(self, index):
        if not 0 <= index < len(self.gpus):
            raise ProfileError("%s has no GPU %r (it has %d)" % (self.name, index, len(self.gpus)))
