"""The health files amdgpu exports per GPU: RAS error counters and firmware versions.

Formats as amdgpu writes them (drivers/gpu/drm/amd/amdgpu):

* ``ras/features``: ``feature mask: 0x%x`` (amdgpu_ras_sysfs_features_read), one bit per
  enabled block, bit = the block's number in ``enum amdgpu_ras_block`` (amdgpu_ras.h).
* ``ras/<block>_err_count``: ``ue: %lu\\nce: %lu\\n`` (amdgpu_ras_sysfs_read; kernels from
  6.10 add ``de:``, the lab renders the older two-line form), block names as
  ``ras_block_string[]`` spells them. A GPU without RAS (Radeon) has no ``ras/`` at all.
* ``fw_version/<name>_fw_version``: ``0x%08x`` (amdgpu_ucode.c FW_VERSION_ATTR); the names are
  the attribute names there (smc = pm.fw_version, the PMFW that amd-smi prints as PM).
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
    "sos", "asd", "ta_ras", "ta_xgmi", "smc", "sdma", "sdma2", "vcn", "dmcu", "mes", "mes_kiq",
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
