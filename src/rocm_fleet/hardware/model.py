"""Data model of a simulated GPU server (see ``profile.py`` for the YAML form).

Ordering rules the model keeps, because the kernel keeps them:

* KFD numbers CPU nodes first (one per NUMA node, in NUMA order), then GPUs in
  the order amdgpu probed them; DRM card minors follow the same probe order.
  ``Profile.gpus`` is that order.
* Links are undirected; KFD prints one io_link per direction.
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

    @property
    def location_id(self):
        """KFD ``location_id``: bus << 8 | device << 3 | function (domain is separate)."""
        _, bus, dev, fn = BUS_PATTERN.match(self.bus).groups()
        return (int(bus, 16) << 8) | (int(dev, 16) << 3) | int(fn)

    @property
    def domain(self):
        return int(self.bus[:4], 16)


@dataclasses.dataclass(frozen=True)
class Link:
    """A direct GPU-GPU io_link as KFD reports it (XGMI only: PCIe peers go via the CPU)."""

    type: str
    weight: int


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

    def kfd_node_of_gpu(self, index):
        return len(self.cpus) + index

    def kfd_node_of_numa(self, numa_node):
        return [cpu.numa_node for cpu in self.cpus].index(numa_node)

    def link(self, i, j):
        return self.links.get(frozenset((i, j)))

    def without_gpu(self, index):
        """The server after one GPU vanished from the bus (dead card, failed link training)."""
        self._check_gpu_index(index)
        renumber = {old: old - (old > index) for old in range(len(self.gpus)) if old != index}
        links = {frozenset(renumber[k] for k in pair): link for pair, link in self.links.items() if index not in pair}
        gpus = self.gpus[:index] + self.gpus[index + 1 :]
        return dataclasses.replace(self, gpus=gpus, links=links)

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
        """The GPU topology rocm_smi_lib derives from this server's KFD io_links.

        rocm_smi_lib 5.x (rsmi_topo_get_link_type/_weight): a direct XGMI io_link
        is 1 hop with its own weight; otherwise the path goes through the CPU:
        2 hops on one NUMA node, 3 across nodes, weight = both GPU-CPU weights
        plus the CPU-CPU io_link weight (the SLIT distance).
        """
        count = len(self.gpus)
        link_type = [["SELF"] * count for _ in range(count)]
        hops = [[0] * count for _ in range(count)]
        weight = [[0] * count for _ in range(count)]
        for i in range(count):
            for j in range(count):
                if i == j:
                    continue
                link = self.link(i, j)
                numa_i, numa_j = self.gpus[i].numa_node, self.gpus[j].numa_node
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
            "numa_affinity": [gpu.numa_node for gpu in self.gpus],
        }

    def with_driver_loaded(self, loaded):
        return dataclasses.replace(self, driver_loaded=bool(loaded))

    def _check_gpu_index(self, index):
        if not 0 <= index < len(self.gpus):
            raise ProfileError("%s has no GPU %r (it has %d)" % (self.name, index, len(self.gpus)))
