"""Firmware health: amd-smi firmware in every captured layout, version order, and the minimums data."""

from pathlib import Path

import pytest
import yaml
from ansible_collections.rocm_fleet.core.plugins.module_utils.health import firmware as fw

REPO = Path(__file__).resolve().parents[5]
CAPTURES = REPO / "tests" / "fixtures" / "captures"
MI300A = "mi300a-4apu_rocm6.3.3_amd-smi-firmware.txt"
MI300X_VF = "mi300x-vf-1gpu_rocm7.1.1_amd-smi-firmware_pldm-bundle-25.03-pmfw-85.129.txt"
MI355X = "mi355x-8gpu_rocm7.0.2_amd-smi-firmware_only-gpu0-shown_pldm-01.25.17.07.txt"
RX7900 = "rx7900xtx-2gpu_rocm-na-amdsmi26.2.2_amd-smi-firmware_rdna3-fw-ids.txt"
CATALOG = REPO / "roles" / "preflight" / "vars" / "gpu_catalog.yml"
MINIMUMS = REPO / "roles" / "preflight" / "vars" / "gpu_firmware.yml"


def capture(name):
    return (CAPTURES / name).read_text(encoding="utf-8")


def minimums():
    return yaml.safe_load(MINIMUMS.read_text())["__preflight_gpu_firmware"]


def test_mi300a_four_identical_blocks_without_pldm():
    # MANIFEST: 4 identical blocks of 10 entries: CP_MEC1/2 166, RLC 65, SDMA0/1 22, VCN 06.11.30.0C,
    # PSP_SOSDRV 00.36.01.50, TA_RAS 1B.36.02.0F, TA_XGMI 20.00.01.13, PM 04.85.103.184; no PLDM_BUNDLE.
    parsed = fw.parse_amd_smi_firmware(capture(MI300A))
    expected = {
        "CP_MEC1": "166",
        "CP_MEC2": "166",
        "RLC": "65",
        "SDMA0": "22",
        "SDMA1": "22",
        "VCN": "06.11.30.0C",
        "PSP_SOSDRV": "00.36.01.50",
        "TA_RAS": "1B.36.02.0F",
        "TA_XGMI": "20.00.01.13",
        "PM": "04.85.103.184",
    }
    assert parsed == {gpu: expected for gpu in range(4)}
    assert fw.pmfw_version(parsed[0]["PM"]) == (4, "85.103.184")
    # No sourced minimum for the MI300A (its BKC names map to no FW_ID): unknown, never a pass.
    verdict = fw.decide_firmware(0, parsed[0], minimums().get("mi300a", {}))
    assert verdict["state"] == "unknown", verdict


def test_mi300x_vf_pmfw_85_129_is_below_85_130():
    # MANIFEST: 13 FW entries ... PM 00.85.129.03, PLDM_BUNDLE 01.25.03.12; BKC 25.03 with PMFW 85.129,
    # below the 85.130 needed for guest power-cap.
    parsed = fw.parse_amd_smi_firmware(capture(MI300X_VF))
    assert list(parsed) == [0] and len(parsed[0]) == 13
    assert parsed[0]["CP_MEC1"] == parsed[0]["CP_MEC2"] == "32959"
    assert (parsed[0]["RLC"], parsed[0]["SDMA0"], parsed[0]["SDMA1"]) == ("69", "25", "25")
    assert parsed[0]["VCN"] == "09.11.80.15" and parsed[0]["TA_RAS"] == "1B.36.02.1A"
    assert parsed[0]["TA_XGMI"] == "20.00.00.14"
    assert parsed[0]["PM"] == "00.85.129.03" and parsed[0]["PLDM_BUNDLE"] == "01.25.03.12"
    assert fw.pmfw_version(parsed[0]["PM"]) == (0, "85.129.3")
    assert fw.meets_minimum("PM", parsed[0]["PM"], "85.130") == -1
    verdict = fw.decide_firmware(0, parsed[0], minimums()["mi300x"], bus="0000:83:00.0")
    assert verdict["state"] == "fail"
    assert "PMFW 85.129.3" in verdict["reason"] and "below minimum 85.130" in verdict["reason"]
    assert "0000:83:00.0" in verdict["reason"]
    assert verdict["met"] == ["PLDM_BUNDLE 01.25.03.12 meets minimum 01.25.03.12"]


def test_mi355x_gpu0_only_pldm_01_25_17_07():
    # MANIFEST: GPU 0 has 14 FW entries ... PM 04.86.15.106, PLDM_BUNDLE 01.25.17.07; GPUs 1-7 absent.
    parsed = fw.parse_amd_smi_firmware(capture(MI355X))
    assert list(parsed) == [0] and len(parsed[0]) == 14
    assert parsed[0]["PSP_SOSDRV"] == "00.45.00.29" and parsed[0]["TA_RAS"] == "1B.45.00.0A"
    assert parsed[0]["PM"] == "04.86.15.106" and parsed[0]["PLDM_BUNDLE"] == "01.25.17.07"
    for name in ("RLC_RESTORE_LIST_GPM_MEM", "RLC_RESTORE_LIST_SRM_MEM", "RLC_RESTORE_LIST_CNTL"):
        assert parsed[0][name] == "4"
    assert fw.decide_firmware(0, parsed[0], minimums()["mi355x"])["state"] == "pass"


def test_rx7900xtx_rdna3_ids_have_no_xgmi_or_pldm():
    # MANIFEST: 2 identical blocks of 11 IDs: CP_PFP 2640, CP_ME 2470, CP_MEC1 2680, RLC 128, SDMA0/1 27,
    # VCN 09.11.80.10, PSP_SOSDRV 00.31.00.35, ASD 553648393, TA_RAS 1B.00.02.05, PM 00.78.131.00.
    parsed = fw.parse_amd_smi_firmware(capture(RX7900))
    expected = {
        "CP_PFP": "2640",
        "CP_ME": "2470",
        "CP_MEC1": "2680",
        "RLC": "128",
        "SDMA0": "27",
        "SDMA1": "27",
        "VCN": "09.11.80.10",
        "PSP_SOSDRV": "00.31.00.35",
        "ASD": "553648393",
        "TA_RAS": "1B.00.02.05",
        "PM": "00.78.131.00",
    }
    assert parsed == {0: expected, 1: expected}
    assert "rx7900xtx" not in minimums()
    assert fw.decide_firmware(0, parsed[0], minimums().get("rx7900xtx"))["state"] == "unknown"


@pytest.mark.parametrize(
    "actual, minimum, order",
    [
        ("01.25.03.12", "01.25.05.00", -1),
        ("01.25.17.07", "01.25.13.09", 1),
        ("01.25.03.12", "01.25.03.12", 0),
        ("01.25.03.12", "01.25", 0),
        ("01.24.99.99", "01.25", -1),
        ("1B.36.02.1A", "1B.36.02.0F", 1),
        ("0A", "10", -1),
        ("99", "100", -1),
        ("166", "65", 1),
        ("09.11.80.15", "09.10.90.31", 1),
    ],
)
def test_compare_fw(actual, minimum, order):
    assert fw.compare_fw(actual, minimum) == order


@pytest.mark.parametrize("bad", ["N/A", "", None, "1.2.x", "01..02"])
def test_non_versions_are_unknown(bad):
    with pytest.raises(ValueError):
        fw.compare_fw(bad, "01.25")
    verdict = fw.decide_firmware(0, {"PLDM_BUNDLE": bad}, {"PLDM_BUNDLE": "01.25"})
    assert verdict["state"] == "unknown"


@pytest.mark.parametrize("text", ["", "garbage\n", None, "GPU: 0\n    FW_LIST:\n            FW_VERSION: 41\n"])
def test_malformed_firmware_text_raises(text):
    with pytest.raises(ValueError):
        fw.parse_amd_smi_firmware(text)


def test_truncated_firmware_keeps_complete_pairs():
    parsed = fw.parse_amd_smi_firmware(capture(MI300X_VF)[:160])
    assert parsed[0]["CP_MEC1"] == "32959" and "PLDM_BUNDLE" not in parsed[0]


def test_minimums_data_names_catalog_classes_and_sources():
    catalog = yaml.safe_load(CATALOG.read_text())["preflight_gpu_catalog_builtin"]
    for gpu_class, entries in minimums().items():
        assert gpu_class in catalog, gpu_class
        for fw_id, spec in entries.items():
            assert spec["source"] and spec["scope"], (gpu_class, fw_id)
            fw.version_fields(spec["min"])
