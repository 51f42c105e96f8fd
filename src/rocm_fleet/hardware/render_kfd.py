"""Render the amdkfd topology (``/sys/devices/virtual/kfd/kfd/topology``) of a profile.

Formats follow amdkfd ``kfd_topology.c`` (node_show, iolink_show, mem_show):
one ``name value`` pair per line, values in decimal. CPU nodes come first
(one per NUMA node), GPU nodes follow in probe order. Each GPU has one PCIe
io_link to its CPU node (weight 20) and one XGMI io_link per hive peer; each
CPU node links to the other CPU nodes (type 5 QPI, weight = SLIT distance) and
gets the reverse link of every GPU attached to it, as kfd_parse_subtype_iolink
creates them.

Every node has the directories kfd_build_sysfs_node_entry creates (mem_banks,
caches, io_links, p2p_links, perf), empty where the node has none: rocm_smi_lib
6.x asserts on a missing p2p_links directory (rocm_smi_io_link.cc
DiscoverLinksPerNode) and amd-smi then aborts in ``topology``. p2p_links hold
the indirect links kfd_create_indirect_link_prop adds for each GPU: one to every
CPU node but its own (weight = its PCIe link + that CPU-CPU link) and, for a
large-BAR GPU (all VRAM visible, as the profiles render it), the reverse link in
that CPU node. Peer GPU-GPU p2p links (CONFIG_HSA_AMD_P2P, PCIe peers only) are
not rendered: real PCIe-only pairs show DISABLED access in amd-smi (shared
capture unknown-2gpu-pcie_rocm6.1.1_amd-smi-topology-a-t-json.txt).
(Kernel: drivers/gpu/drm/amd/amdkfd/kfd_topology.c, gregkh/linux@213edb43.)

A partitioned GPU (``Profile.partitions()``) has one node per partition, in
partition order (kgd2kfd_device_init adds its nodes one after another): they
share domain, unique_id and hive_id; location_id is the BDF OR'ed with the
partition number (kfd_topology_add_device), gpu_id differs, drm_render_minor is
the partition's own render node, the CUs and XCCs are the partition's share,
and the mem bank holds KFD_XCP_MEMORY_SIZE: its memory partition's size over
the compute partitions sharing it, which is the GPU's VRAM over its partitions
in every valid mode (MI300X CPX: 24 GiB in NPS1 and in NPS4).
"""

from __future__ import annotations

import zlib

from rocm_fleet.hardware.model import PCIE_TO_CPU_WEIGHT

# CRAT_IOLINK_TYPE_* in kfd_crat.h
IOLINK_TYPE_PCIEXPRESS = 2
IOLINK_TYPE_QPI_1_1 = 5
IOLINK_TYPE_XGMI = 11
# HSA_MEM_HEAP_TYPE_FB_PUBLIC: VRAM the host can see through the BAR.
HEAP_TYPE_FB_PUBLIC = 1
# XGMI 3.0 on MI300X reports 64 GB/s per link; PCIe Gen4/5 links report their
# own rate. The lab only needs plausible, stable numbers here.
XGMI_BANDWIDTH_MBS = 64000
PCIE_BANDWIDTH_MBS = {"32.0 GT/s PCIe": 63015, "16.0 GT/s PCIe": 31507, "8.0 GT/s PCIe": 15753}
DEFAULT_WAVES_PER_SIMD = 8
# mem_banks width: MI300X's HBM3 reads 8192 (shared capture
# mi300x-8gpu-cpx-nps1_rocm6.3.3_sysfs-kfd-topology-node3-mem_banks0-properties.txt); others keep 4096.
MEMORY_WIDTH_BITS = {"gfx942": 8192}
# kfd_build_sysfs_node_entry creates these below every node, empty or not.
NODE_DIRECTORIES = ("mem_banks", "caches", "io_links", "p2p_links", "perf")


def kfd_gpu_id(gpu, partition_id=0):
    """A stable non-zero 16-bit id; KFD derives gpu_id from a hash of the device (and partition) too."""
    key = gpu.bus if not partition_id else "%s/%d" % (gpu.bus, partition_id)
    return (zlib.crc32(key.encode()) & 0xFFFF) or 1


def unique_id(gpu):
    """The 64-bit serial KFD and amdgpu print; profiles may fix it, else derive it from the bus."""
    if gpu.unique_id:
        return int(gpu.unique_id, 16)
    return zlib.crc32(gpu.bus.encode()) << 32 | zlib.crc32(gpu.product.encode())


def hive_id(profile, index, partitions=1):
    """Non-zero for GPUs with XGMI peers (one hive per server in these profiles); a partitioned GPU
    without peers gets its PCI id (bus << 8 | devfn), as kgd2kfd_device_init assigns it."""
    has_peer = any(index in pair for pair in profile.links)
    if has_peer:
        return zlib.crc32(profile.name.encode()) | 1
    return profile.gpus[index].location_id if partitions > 1 else 0


def render_kfd(profile, write, link, mkdir):
    """Write the KFD topology through ``write(relpath, text)``, ``link(relpath, target)`` and ``mkdir(relpath)``."""
    base = "devices/virtual/kfd/kfd"
    write(base + "/topology/generation_id", "1\n")
    write(base + "/topology/system_properties", "platform_oem 0\nplatform_id 0\nplatform_rev 0\n")
    link("class/kfd/kfd", "../../devices/virtual/kfd/kfd")

    parts = profile.partitions()
    first_gpu_node = len(profile.cpus)
    io_links = {node: [] for node in range(first_gpu_node + len(parts))}
    for a, cpu in enumerate(profile.cpus):
        for b in range(len(profile.cpus)):
            if a != b:
                weight = profile.numa_distance[cpu.numa_node][profile.cpus[b].numa_node]
                io_links[a].append(_io_link(IOLINK_TYPE_QPI_1_1, a, b, weight, 0))
    for number, part in enumerate(parts):
        gpu = profile.gpus[part.gpu]
        node, cpu_node = first_gpu_node + number, profile.kfd_node_of_numa(gpu.numa_node)
        bandwidth = PCIE_BANDWIDTH_MBS.get(gpu.pcie_speed, 0)
        io_links[node].append(_io_link(IOLINK_TYPE_PCIEXPRESS, node, cpu_node, PCIE_TO_CPU_WEIGHT, bandwidth))
        io_links[cpu_node].append(_io_link(IOLINK_TYPE_PCIEXPRESS, cpu_node, node, PCIE_TO_CPU_WEIGHT, bandwidth))
        for peer_number, peer in enumerate(parts):
            peer_link = profile.partition_link(part, peer)
            if peer_number != number and peer_link is not None:
                peer_node = first_gpu_node + peer_number
                io_links[node].append(_io_link(IOLINK_TYPE_XGMI, node, peer_node, peer_link.weight, XGMI_BANDWIDTH_MBS))

    p2p_links = _indirect_links(profile, parts)
    for node, cpu in enumerate(profile.cpus):
        links = (io_links[node], p2p_links[node])
        properties = _cpu_properties(cpu, len(links[0]), len(links[1]))
        _write_node(write, mkdir, base, node, 0, "", properties, links, None)
    for number, part in enumerate(parts):
        gpu = profile.gpus[part.gpu]
        node = first_gpu_node + number
        links = (io_links[node], p2p_links[node])
        properties = _gpu_properties(profile, part, node, len(links[0]), len(links[1]))
        bank = "heap_type %d\nsize_in_bytes %d\nflags 0\nwidth %d\nmem_clk_max 1300\n" % (
            HEAP_TYPE_FB_PUBLIC,
            gpu.vram_bytes // part.count,
            MEMORY_WIDTH_BITS.get(gpu.gfx_target, 4096),
        )
        gpu_id = kfd_gpu_id(gpu, part.partition_id)
        _write_node(write, mkdir, base, node, gpu_id, gpu.kfd_name, properties, links, bank)


def _indirect_links(profile, parts):
    """p2p_links per KFD node, in the order kfd_create_indirect_link_prop adds them (GPU probe order)."""
    first_gpu_node = len(profile.cpus)
    links = {node: [] for node in range(first_gpu_node + len(parts))}
    for number, part in enumerate(parts):
        gpu = profile.gpus[part.gpu]
        node, own_cpu = first_gpu_node + number, profile.kfd_node_of_numa(gpu.numa_node)
        for cpu_node, cpu in enumerate(profile.cpus):
            if cpu_node == own_cpu:
                continue
            weight = PCIE_TO_CPU_WEIGHT + profile.numa_distance[cpu.numa_node][gpu.numa_node]
            # Bandwidth: the kernel takes the min() with the CPU-CPU link's, which carries none (0).
            links[node].append(_io_link(IOLINK_TYPE_PCIEXPRESS, node, cpu_node, weight, 0))
            links[cpu_node].append(_io_link(IOLINK_TYPE_PCIEXPRESS, cpu_node, node, weight, 0))
    return links


def _write_node(write, mkdir, base, node, gpu_id, name, properties, links, mem_bank):
    prefix = "%s/topology/nodes/%d" % (base, node)
    write(prefix + "/gpu_id", "%d\n" % gpu_id)
    write(prefix + "/name", name + "\n")
    write(prefix + "/properties", "".join("%s %d\n" % item for item in properties))
    for directory in NODE_DIRECTORIES:
        mkdir(prefix + "/" + directory)
    for directory, entries in zip(("io_links", "p2p_links"), links, strict=True):
        for number, text in enumerate(entries):
            write("%s/%s/%d/properties" % (prefix, directory, number), text)
    if mem_bank is not None:
        write(prefix + "/mem_banks/0/properties", mem_bank)


def _io_link(link_type, node_from, node_to, weight, bandwidth):
    fields = (
        ("type", link_type),
        ("version_major", 0),
        ("version_minor", 0),
        ("node_from", node_from),
        ("node_to", node_to),
        ("weight", weight),
        ("min_latency", 0),
        ("max_latency", 0),
        ("min_bandwidth", bandwidth),
        ("max_bandwidth", bandwidth),
        ("recommended_transfer_size", 0),
        ("flags", 1),
    )
    return "".join("%s %d\n" % field for field in fields)


def _cpu_properties(cpu, io_link_count, p2p_link_count):
    first_core = int(cpu.cpulist.split(",")[0].split("-")[0])
    return _common_properties(
        cpu_cores_count=cpu.cores,
        io_links_count=io_link_count,
        p2p_links_count=p2p_link_count,
        cpu_core_id_base=first_core,
    ) + [("max_engine_clk_ccompute", 3700)]


def _gpu_properties(profile, part, node, io_link_count, p2p_link_count):
    gpu = profile.gpus[part.gpu]
    common = _common_properties(
        simd_count=gpu.compute_units // part.count * gpu.simd_per_cu,
        mem_banks_count=1,
        io_links_count=io_link_count,
        p2p_links_count=p2p_link_count,
        simd_id_base=0x80001000 + 0x10 * node,
        max_waves_per_simd=DEFAULT_WAVES_PER_SIMD,
        lds_size_in_kb=64,
        wave_front_size=64 if gpu.gfx_target_version < 100000 else 32,
        simd_per_cu=gpu.simd_per_cu,
        gfx_target_version=gpu.gfx_target_version,
        vendor_id=gpu.vendor_id,
        device_id=gpu.device_id,
        location_id=gpu.location_id | (part.partition_id if part.count > 1 else 0),
        domain=gpu.domain,
        drm_render_minor=part.drm.render_minor,
        hive_id=hive_id(profile, part.gpu, part.count),
    )
    return common + [
        ("max_engine_clk_fcompute", 2100),
        ("local_mem_size", 0),
        ("fw_version", 0),
        ("capability", 0),
        ("debug_prop", 0),
        ("sdma_fw_version", 0),
        ("unique_id", unique_id(gpu)),
        ("num_xcc", max(1, gpu.xcc_count // part.count)),
        ("max_engine_clk_ccompute", 3700),
    ]


def _common_properties(**values):
    names = (
        "cpu_cores_count",
        "simd_count",
        "mem_banks_count",
        "caches_count",
        "io_links_count",
        "p2p_links_count",
        "cpu_core_id_base",
        "simd_id_base",
        "max_waves_per_simd",
        "lds_size_in_kb",
        "gds_size_in_kb",
        "num_gws",
        "wave_front_size",
        "array_count",
        "simd_arrays_per_engine",
        "cu_per_simd_array",
        "simd_per_cu",
        "max_slots_scratch_cu",
        "gfx_target_version",
        "vendor_id",
        "device_id",
        "location_id",
        "domain",
        "drm_render_minor",
        "hive_id",
        "num_sdma_engines",
        "num_sdma_xgmi_engines",
        "num_sdma_queues_per_engine",
        "num_cp_queues",
    )
    return [(name, values.get(name, 0)) for name in names]
