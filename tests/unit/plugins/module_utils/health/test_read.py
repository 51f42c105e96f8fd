"""health.read and host.signature_read: sysfs as amdgpu writes it, and the shared captures' values."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from ansible_collections.rocm_fleet.core.plugins.module_utils.health.firmware import parse_amd_smi_firmware
from ansible_collections.rocm_fleet.core.plugins.module_utils.health.read import read_gpus
from ansible_collections.rocm_fleet.core.plugins.module_utils.host.signature_read import (
    MAGIC,
    certificate_key,
    module_signer,
)
from fleet_testing import health_tree as tree

CAPTURES = Path(__file__).resolve().parents[4] / "fixtures" / "captures"


def test_sysfs_firmware_reads_as_amd_smi_prints_it(tmp_path):
    # The kernel's 0x%08x values of the capture's GPU: PLDM bundle 0x01250312, SMU 0x00558103 (85.129.3).
    printed = parse_amd_smi_firmware(
        (CAPTURES / "mi300x-vf-1gpu_rocm7.1.1_amd-smi-firmware_pldm-bundle-25.03-pmfw-85.129.txt").read_text())[0]
    tree.gpu(tmp_path, "0000:05:00.0", pldm=0x01250312, pmfw=0x00558103)
    firmware = read_gpus(str(tmp_path))[0]["firmware"]
    assert (firmware["PLDM_BUNDLE"], firmware["PM"]) == (printed["PLDM_BUNDLE"], printed["PM"])


def test_xgmi_rows_of_the_mi250x_capture(tmp_path):
    text = (CAPTURES / "mi250x-8gcd_sysfs-drm-xgmi_num_links.txt").read_text()
    matrix = [[int(count) for count in line.split()] for line in text.splitlines() if line.strip()]
    for index, row in enumerate(matrix):
        tree.gpu(tmp_path, "0000:%02x:00.0" % (0xC1 + index), device="0x7408", xgmi=row)
    gpus = read_gpus(str(tmp_path))
    assert [g["xgmi_links"] for g in gpus] == matrix
    assert {len([n for n in g["xgmi_links"] if n]) for g in gpus} == {3}  # every GCD: 3 direct peers


def test_only_amd_display_and_accelerator_functions_indexed_as_the_gpu_fact(tmp_path):
    tree.gpu(tmp_path, "0000:c1:00.0")
    tree.gpu(tmp_path, "0000:03:00.0", klass="0x030000", driver=None, ras=False)
    tree.write(tmp_path, "/sys/bus/pci/devices/0000:03:00.1/vendor", "0x1002\n")
    tree.write(tmp_path, "/sys/bus/pci/devices/0000:03:00.1/class", "0x040300\n")  # its HDMI audio
    gpus = read_gpus(str(tmp_path))
    # In bus order; the index is the gpu fact's: DRM card order, None without a card.
    assert [(g["index"], g["bus"], g["driver"], g["ras"] is None) for g in gpus] == [
        (None, "0000:03:00.0", None, True), (0, "0000:c1:00.0", "amdgpu", False)]
    assert gpus[1]["link"] == {"current_speed": 32.0, "current_width": 16, "max_speed": 32.0, "max_width": 16}


def test_module_signer_and_certificate_match():
    body = (tree.GENERATED / "body").read_bytes()
    fields = module_signer(tree.signed(body))
    key = certificate_key((tree.GENERATED / "mok.der").read_bytes())
    assert fields["signer"] == [key["issuer"]] == ["DKMS module signing key"]
    assert fields["sig_key"] == [key["serial"]] and fields["sig_hashalgo"] == ["sha256"]
    assert module_signer(body) == {}


@pytest.mark.parametrize("data", [
    b"x" * 4 + MAGIC,
    b"\x30\x03\x02\x01" + struct.pack(">BBBBB3xI", 0, 0, 2, 0, 0, 4) + MAGIC,
    b"sig!" + struct.pack(">BBBBB3xI", 0, 0, 1, 0, 0, 4) + MAGIC,
])
def test_malformed_signatures_raise_value_error(data):
    with pytest.raises(ValueError):
        module_signer(data)
