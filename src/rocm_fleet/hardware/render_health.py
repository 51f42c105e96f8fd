"""The health files amdgpu exports per GPU: RAS error counters and firmware versions.

Formats as amdgpu writes them (drivers/gpu/drm/amd/amdgpu):

* ``ras/features``: ``feature mask: 0x%x`` (amdgpu_ras_sysfs_features_read), one bit per
  enabled block, bit = the block's number in ``enum amdgpu_ras_block`` (amdgpu_ras.h).
* ``ras/<block>_err_count``: ``ue: %lu\\nce: %lu\\n`` (amdgpu_ras_sysfs_read; kernels from
  6.10 add ``de:``, the lab renders the older two-line form), block names as
  ``ras_block_string[]`` spells them. A GPU without RAS (Radeon) has no ``ras/`` at all.
* ``fw_version/<name>_fw_version``: ``0x%08x`` (amdgpu_ucode.c FW_VERSION_ATTR); the names are
  the attribute names there (smc = pm.fw_version, the PMFW that amd-smi prints as PM; pldm =
  firmware.pldm_version, amd-smi's PLDM_BUNDLE).
* ``xgmi_num_links`` of a GPU in an XGMI hive: ``%02x `` per GPU of the hive, then a newline
  (amdgpu_xgmi.c amdgpu_xgmi_show_num_links; its own entry 00).
"""

from __future__ import annotations

# enum amdgpu_ras_block order: the bit each block has in ras/features.
RAS_BLOCKS = (
    "umc",
    "sdma",
    "gfx",
    "mmhub",
    "athub",
    "pcie_bif",
    "hdp",
    "xgmi_wafl",
    "df",
    "smn",
    "sem",
    "mp0",
    "mp1",
    "fuse",
    "mca",
    "vcn",
    "jpeg",
    "ih",
    "mpio",
)
# The fw_attrs[] of amdgpu_ucode.c (without the _fw_version suffix).
FIRMWARE_NAMES = (
    "vce", "uvd", "mc", "me", "pfp", "ce", "rlc", "rlc_srlc", "rlc_srlg", "rlc_srls", "mec", "mec2", "imu",
    "sos", "asd", "ta_ras", "ta_xgmi", "smc", "sdma", "sdma2", "vcn", "dmcu", "mes", "mes_kiq", "pldm",
)  # fmt: skip


def ras_block_names(gpu):
    return [name.strip() for name in (gpu.ras_blocks or "").split(",") if name.strip()]


def health_files(gpu):
    """{path below the PCI device: text} for the RAS and firmware files of a GPU amdgpu initialised."""
    files = {}
    blocks = ras_block_names(gpu)
    if blocks:
        mask = sum(1 << RAS_BLOCKS.index(block) for block in blocks)
        files["ras/features"] = "feature mask: 0x%x\n" % mask
        errors = {block: (ue, ce) for block, ue, ce in gpu.ras_errors}
        for block in blocks:
            ue, ce = errors.get(block, (0, 0))
            files["ras/%s_err_count" % block] = "ue: %d\nce: %d\n" % (ue, ce)
    for name, version in gpu.firmware:
        files["fw_version/%s_fw_version" % name] = "0x%08x\n" % version
    return files


def xgmi_num_links(profile, index):
    """The GPU's xgmi_num_links line: physical links to each GPU of the hive (0 where a link is down)."""
    counts = []
    for peer in range(len(profile.gpus)):
        link = profile.link(index, peer) if peer != index else None
        counts.append(link.physical_links if link is not None and link.type == "XGMI" else 0)
    return "".join("%02x " % count for count in counts) + "\n"
