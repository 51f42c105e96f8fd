"""The health files of the rendered /sys: links, RAS, firmware, driver links, EFI, as amdgpu and efivarfs write them."""

import dataclasses
import struct

import pytest

from rocm_fleet.hardware import available_profiles, load_profile
from rocm_fleet.hardware.render import device_dir, render_profile
from rocm_fleet.hardware.render_efi import EFI_GLOBAL_VARIABLE, SHIM_LOCK_GUID, parse_signature_list
from rocm_fleet.lab.health_state import apply_health_faults, vendor_certificate_der

GPU_PROFILES = [name for name in available_profiles() if load_profile(name).gpus]
INSTINCT = {"mi300x-8", "mi300x-8-cpx-nps4", "mi250x-8gcd", "mi210-4-pcie"}
RAS_BLOCKS = ["umc", "sdma", "gfx", "mmhub", "pcie_bif", "hdp", "xgmi_wafl"]
# enum amdgpu_ras_block bits of those blocks: umc 0, sdma 1, gfx 2, mmhub 3, pcie_bif 5, hdp 6, xgmi_wafl 7.
RAS_MASK = 0b11101111


def render(profile, tmp_path):
    render_profile(profile, tmp_path)
    return tmp_path / "sys"


def pci(sys_dir, gpu):
    return sys_dir / device_dir(gpu)


@pytest.mark.parametrize("name", GPU_PROFILES)
def test_healthy_baseline_of_every_profile(name, tmp_path):
    profile = load_profile(name)
    sys_dir = render(profile, tmp_path)
    for gpu in profile.gpus:
        device = pci(sys_dir, gpu)
        assert (device / "current_link_speed").read_text() == (device / "max_link_speed").read_text()
        assert (device / "current_link_width").read_text() == "%d\n" % gpu.pcie_width
        assert (device / "max_link_width").read_text() == "%d\n" % gpu.pcie_width
        assert (device / "power_dpm_force_performance_level").read_text() == "auto\n"
        assert (device / "driver").resolve() == (sys_dir / "bus/pci/drivers/amdgpu").resolve()
        smc = (device / "fw_version/smc_fw_version").read_text()
        assert smc.startswith("0x") and len(smc) == 11 and smc.endswith("\n")
        if name in INSTINCT:
            assert (device / "ras/features").read_text() == "feature mask: 0x%x\n" % RAS_MASK
            for block in RAS_BLOCKS:
                assert (device / "ras" / f"{block}_err_count").read_text() == "ue: 0\nce: 0\n"
        else:
            assert not (device / "ras").exists()  # Radeon: RAS not supported, not "healthy"
    efi = sys_dir / "firmware/efi"
    if profile.boot_firmware == "bios":
        assert not efi.exists()
    else:
        assert (efi / f"efivars/SecureBoot-{EFI_GLOBAL_VARIABLE}").read_bytes() == b"\x06\x00\x00\x00\x00"
        assert (efi / f"efivars/SetupMode-{EFI_GLOBAL_VARIABLE}").read_bytes() == b"\x06\x00\x00\x00\x00"


def test_mi300x_pmfw_meets_the_preflight_minimum(tmp_path):
    value = int(
        (
            pci(render(load_profile("mi300x-8"), tmp_path), load_profile("mi300x-8").gpus[0])
            / "fw_version/smc_fw_version"
        ).read_text(),
        16,
    )
    program, major, minor, _debug = value.to_bytes(4, "big")
    assert (program, major, minor) >= (0, 85, 130)


def test_degraded_link_ras_errors_and_old_firmware(tmp_path):
    faults = {
        "pcie_links": [{"gpu": 1, "speed": "8.0 GT/s PCIe", "width": 8}],
        "ras_errors": [{"gpu": 2, "block": "umc", "ue": 1, "ce": 7}],
        "firmware": [{"gpu": 3, "fw": "smc", "version": 0x00558103}],
    }
    profile = apply_health_faults(load_profile("mi300x-8"), faults)
    sys_dir = render(profile, tmp_path)
    link = pci(sys_dir, profile.gpus[1])
    assert (link / "current_link_speed").read_text() == "8.0 GT/s PCIe\n"
    assert (link / "current_link_width").read_text() == "8\n"
    assert (link / "max_link_speed").read_text() == "32.0 GT/s PCIe\n"
    assert (link / "max_link_width").read_text() == "16\n"
    assert (pci(sys_dir, profile.gpus[2]) / "ras/umc_err_count").read_text() == "ue: 1\nce: 7\n"
    assert (pci(sys_dir, profile.gpus[2]) / "ras/sdma_err_count").read_text() == "ue: 0\nce: 0\n"
    assert (pci(sys_dir, profile.gpus[3]) / "fw_version/smc_fw_version").read_text() == "0x00558103\n"
    assert (pci(sys_dir, profile.gpus[0]) / "fw_version/smc_fw_version").read_text() == "0x00558200\n"


def test_init_failure_leaves_the_pci_function_without_driver_drm_or_kfd_node(tmp_path):
    profile = apply_health_faults(load_profile("mi300x-8"), {"init_failed_gpus": [5]})
    result = render_profile(profile, tmp_path)
    sys_dir = tmp_path / "sys"
    failed = pci(sys_dir, profile.gpus[5])
    assert (failed / "vendor").read_text() == "0x1002\n"
    assert (failed / "class").read_text() == "0x120000\n"
    assert (failed / "device").read_text() == "0x74a1\n"
    assert not (failed / "driver").exists() and not (failed / "drm").exists()
    assert not (failed / "fw_version").exists() and not (failed / "ras").exists()
    assert "DRIVER=" not in (failed / "uevent").read_text()
    assert len(list((sys_dir / "class/drm").glob("card*"))) == 7
    gpu_nodes = [
        node for node in (sys_dir / "devices/virtual/kfd/kfd/topology/nodes").iterdir()
        if (node / "gpu_id").read_text().strip() != "0"
    ]  # fmt: skip
    assert len(gpu_nodes) == 7
    assert len([node for node in result.device_nodes if node.path.startswith("/dev/dri/card")]) == 7


def test_secure_boot_on_with_the_dkms_key_enrolled_lists_it_in_mok(tmp_path):
    import base64

    certificate = vendor_certificate_der()[::-1]  # any DER-sized blob: the list keeps bytes as given
    faults = {"secure_boot": {"enabled": True, "enrolled": [base64.b64encode(certificate).decode()]}}
    profile = apply_health_faults(load_profile("rx7900xtx-1"), faults)  # a BIOS profile becomes UEFI
    sys_dir = render(profile, tmp_path)
    efivars = sys_dir / "firmware/efi/efivars"
    assert (efivars / f"SecureBoot-{EFI_GLOBAL_VARIABLE}").read_bytes() == b"\x06\x00\x00\x00\x01"
    raw = (sys_dir / "firmware/efi/mok-variables/MokListRT").read_bytes()
    assert (efivars / f"MokListRT-{SHIM_LOCK_GUID}").read_bytes() == b"\x06\x00\x00\x00" + raw
    assert parse_signature_list(raw) == [vendor_certificate_der(), certificate]
    list_size, header_size, entry_size = struct.unpack("<III", raw[16:28])
    assert (header_size, entry_size, list_size) == (0, 16 + len(vendor_certificate_der()), 28 + entry_size)


def test_secure_boot_off_keeps_efivars_with_the_switch_at_zero(tmp_path):
    profile = apply_health_faults(load_profile("mi210-4-pcie"), {"secure_boot": {"enabled": False, "enrolled": []}})
    assert dataclasses.replace(profile).secure_boot is False
    raw = (render(profile, tmp_path) / f"firmware/efi/efivars/SecureBoot-{EFI_GLOBAL_VARIABLE}").read_bytes()
    assert raw == b"\x06\x00\x00\x00\x00"


def test_xgmi_num_links_per_hive_gpu_and_after_a_link_goes_down(tmp_path):
    mi250x = load_profile("mi250x-8gcd")
    sys_dir = render(mi250x, tmp_path / "mi250x")
    capture = "00 04 01 00 00 00 02 00"  # CAP mi250x-8gcd_sysfs-drm-xgmi_num_links.txt, GCD 0
    assert (pci(sys_dir, mi250x.gpus[0]) / "xgmi_num_links").read_text() == capture + " \n"
    degraded = load_profile("mi300x-8").with_link(0, 4, "PCIE")
    sys_dir = render(degraded, tmp_path / "mi300x")
    assert (pci(sys_dir, degraded.gpus[1]) / "xgmi_num_links").read_text() == "01 00 01 01 01 01 01 01 \n"
    assert (pci(sys_dir, degraded.gpus[0]) / "xgmi_num_links").read_text() == "00 01 01 01 00 01 01 01 \n"
    assert not (
        pci(render(load_profile("mi210-4-pcie"), tmp_path / "mi210"), load_profile("mi210-4-pcie").gpus[0])
        / "xgmi_num_links"
    ).exists()


def test_mi300x_pldm_bundle_and_the_performance_level_of_a_link_fault(tmp_path):
    faults = {"pcie_links": [{"gpu": 0, "speed": "16.0 GT/s PCIe", "width": 16, "performance_level": "high"}]}
    profile = apply_health_faults(load_profile("mi300x-8"), faults)
    device = pci(render(profile, tmp_path), profile.gpus[0])
    assert (device / "fw_version/pldm_fw_version").read_text() == "0x01250312\n"  # amd-smi: PLDM_BUNDLE 01.25.03.12
    assert (device / "power_dpm_force_performance_level").read_text() == "high\n"
    assert (device / "current_link_speed").read_text() == "16.0 GT/s PCIe\n"
