"""What the lab's hardware model cannot make each real tool print, and why.

The lab renders /sys (``render.py``, ``render_kfd.py``) and creates the device
nodes, but no kernel driver stands behind /dev/dri/renderD* and /dev/kfd: their
open() fails with ENXIO, so every answer a tool takes from a DRM or KFD ioctl is
missing. The table also lists what a tool version does not print at all, so that
every field a tool leaves unknown is explained. Everything a tool reads from
sysfs is rendered, and the cross-check
(tests/integration/test_tool_crosscheck.py) asserts that gpu_facts' parsers
agree with the tool on it; for the fields listed here it asserts the documented
behaviour instead.

Keys are the Debian package's upstream version (``dpkg-query`` in the tool's
root). A version the table does not know (Debian's next release moves) is held
to the limits of the newest version known for that tool, so a change in what it
prints fails the check with the tool and its version in the message.
"""

from __future__ import annotations

import dataclasses

# What a limited field parses to.
UNKNOWN = "unknown"  # the tool prints N/A (or nothing): the parser must report None, never a value
NOT_THE_GPU = "not-the-gpu"  # the tool prints a value that is not this GPU's: never the real one


@dataclasses.dataclass(frozen=True)
class Limit:
    field: str  # DeviceReport or TopologyReport key (plugins/module_utils/gpu/model.py)
    shows: str  # UNKNOWN or NOT_THE_GPU
    why: str  # which interface answers it on a real machine, with the source
    # Commands whose text keys the GPUs by this field, so a wrong value makes the whole output unusable.
    breaks: tuple[str, ...] = ()


_DRM_DEV_INFO = (
    "DRM ioctl AMDGPU_INFO_DEV_INFO on /dev/dri/renderD* (amdsmi_get_gpu_asic_info, "
    "ROCm/amdsmi:src/amd_smi/amd_smi.cc@rocm-6.1.2)"
)
_NOT_READ = "gpu_facts does not ask amd-smi for it (AMD_SMI_STATIC_JSON_ARGS has no --numa); sysfs gives it"

LIMITS = {
    ("rocm-smi", "5.2.3"): (
        Limit(
            "gfx_target",
            UNKNOWN,
            "rocm-smi 5.2.3 prints no GFX version (--showproductname gained 'GFX Version' in 6.x, "
            "ROCm/rocm_smi_lib:python_smi_tools/rocm_smi.py@rocm-6.1.2)",
        ),
    ),
    ("rocm-smi", "6.1.2"): (),
    ("rocm-smi", "6.4.1"): (
        Limit(
            "product",
            UNKNOWN,
            "the marketing name comes from libdrm_amdgpu's amdgpu_get_marketing_name after "
            "amdgpu_device_initialize, DRM ioctls on the render node (rsmi_dev_market_name_get, "
            "ROCm/rocm-systems:projects/rocm-smi-lib/src/rocm_smi.cc@1b1610fc); Debian's build also "
            "dlopens the unversioned libdrm_amdgpu.so that only libdrm-dev ships, so it prints "
            "'get_name, Failed to load a library' and 'Card Series: N/A' on real hardware too",
        ),
    ),
    ("amd-smi", "6.1.2"): (
        Limit(
            "pci_bus",
            NOT_THE_GPU,
            "the BDF comes only from drmGetDevice on an fd that passed DRM_IOCTL_VERSION "
            "(AMDSmiDrm::init, ROCm/amdsmi:src/amd_smi/amd_smi_drm.cc@rocm-6.1.2); when no render node "
            "opens, the amdsmi_bdf_t stays uninitialised and list/static/topology print stack garbage "
            "such as 746974726170:5f:0c.5 or 0000:00:00.0; the topology table's BDF header then runs "
            "together and cannot be read",
            breaks=("topology",),
        ),
        Limit("device_id", UNKNOWN, _DRM_DEV_INFO),
        Limit(
            "gfx_target",
            UNKNOWN,
            "amd-smi 6.1.2 (tool 24.5.2) prints no target_graphics_version in `static --asic` "
            "(ROCm/amdsmi:amdsmi_cli/amdsmi_commands.py@rocm-6.1.2)",
        ),
        Limit("numa_node", UNKNOWN, _NOT_READ),
        Limit("numa_affinity", UNKNOWN, _NOT_READ),
    ),
    ("amd-smi", "10.1"): (  # amd-smi 27.1 (Debian's amdsmi 10.1)
        Limit("device_id", UNKNOWN, _DRM_DEV_INFO + "; 27.1 prints the whole asic section as N/A when it fails"),
        Limit("product", UNKNOWN, "market_name: part of the same asic query, " + _DRM_DEV_INFO),
        Limit("gfx_target", UNKNOWN, "target_graphics_version: part of the same asic query, " + _DRM_DEV_INFO),
        Limit("numa_node", UNKNOWN, _NOT_READ),
        Limit("numa_affinity", UNKNOWN, _NOT_READ),
    ),
}

# rocminfo asks KFD itself (AMDKFD_IOC_GET_VERSION and the HSA runtime's queries on /dev/kfd), so it
# prints 'Unable to open /dev/kfd read-write: No such device or address' and no agent in the lab.
ROCMINFO_LIMIT = "rocminfo needs the KFD ioctls on /dev/kfd; the lab has no amdkfd behind the node"


def limits_for(tool, version):
    """(limits, known version they were documented for) of ``tool`` at Debian upstream ``version``."""
    if (tool, version) in LIMITS:
        return {limit.field: limit for limit in LIMITS[(tool, version)]}, version
    known = sorted((v for t, v in LIMITS if t == tool), key=_version_key)
    if not known:
        raise KeyError("no limits documented for %s" % tool)
    return {limit.field: limit for limit in LIMITS[(tool, known[-1])]}, known[-1]


def upstream_version(debian_version):
    """'6.1.2+ds-2' -> '6.1.2', '1:10.1-1' -> '10.1'."""
    version = debian_version.split(":", 1)[-1].rsplit("-", 1)[0]
    return version.split("+", 1)[0].split("~", 1)[0]


def _version_key(version):
    return tuple(int(part) if part.isdigit() else 0 for part in version.split("."))


# What each real tool prints on the partitioned profile mi300x-8-cpx-nps4 (8x MI300X in CPX/NPS4,
# 64 partitions), checked by tests/integration/test_tool_crosscheck.py::test_tools_on_the_cpx_profile.
# None of it is a lab limit but the tools' own reading of the kernel's layout, which the profile
# renders as amdgpu does: partition 0 under the PCI device, partitions 1-7 on amdgpu_xcp.N platform
# devices that carry no PCI or partition files, KFD location_id = BDF | partition.
# (listed devices, devices showing "NPS4, CPX", partition IDs as printed, why)
CPX_VIEWS = {
    ("rocm-smi", "5.2.3"): (
        8,
        0,
        None,
        "rocm_smi_lib 5.2 predates partitions: it keeps a /sys/class/drm/card* only when device/vendor exists, "
        "so the amdgpu_xcp platform devices drop out and each GPU is one device with its whole VRAM",
    ),
    ("rocm-smi", "6.1.2"): (
        64,
        64,
        "all 0",
        "modes come from the PCI device of each partition's BDF; the partition ID from BDF bits [31:28], "
        "where only a short-lived kernel put it (rocm_smi_lib 6.2 changelog: 'some devices may report bits "
        "[31:28] or [2:0]'), so on this kernel layout every partition prints ID 0",
    ),
    ("rocm-smi", "6.4.1"): (
        64,
        8,
        "0-7",
        "each partition's files are read through /sys/class/drm/renderD<n>/device, which for partitions "
        "1-7 is the amdgpu_xcp platform device: DID, metrics and modes print N/A, the ID is right, as in the "
        "shared capture mi300x-8gpu-cpx-nps4_unknown_rocm-smi-default_container-renderD128-129-secondary-na.txt",
    ),
    ("amd-smi", "6.1.2"): (
        64,
        64,
        None,
        "static --partition prints the GPU's modes for every partition and no PARTITION_ID (24.5.2); "
        "list's BDF is the uninitialised amdsmi_bdf_t of the pci_bus limit above",
    ),
    ("amd-smi", "10.1"): (
        64,
        8,
        "0-7",
        "static --partition reads the modes through the render node's device like rocm-smi 6.4.1 (N/A on "
        "partitions 1-7); list names partition p's BDF with function p, from its KFD location_id",
    ),
}
