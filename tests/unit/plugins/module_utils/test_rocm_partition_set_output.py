"""parse_partition_set(): the real amd-smi set --memory-partition/--compute-partition outputs (shared captures)."""

from pathlib import Path

import pytest
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu_amd_smi_set import parse_partition_set

CAPTURES = Path(__file__).resolve().parents[3] / "fixtures" / "captures"
NPS4 = ("mi300x-8gpu-spx-to-cpx-nps4_rocm6.4_amd-smi-set-memory-partition-nps4"
        "_progress-bar-then-oserror-too-many-open-files.txt")
SPX_IN_NPS4 = "mi300x-8gpu-cpx-nps4_rocm6.4_amd-smi-set-compute-partition-spx_error-setting-unavailable.txt"
NO_PERM = "mi300x-8gpu_rocm6.4_amd-smi-set-compute-partition_error-no-perm-without-sudo.txt"


def capture(name):
    return (CAPTURES / name).read_text(encoding="utf-8")


def test_memory_nps4_with_progress_bar_then_oserror_is_partial():
    result = parse_partition_set(capture(NPS4))
    assert result["status"] == "partial" and result["changed"] and result["crashed"] and result["prompted"]
    assert sorted(result["set"]) == list(range(15))
    assert {value["kind"] for value in result["set"].values()} == {"memory"}
    assert {value["mode"] for value in result["set"].values()} == {"NPS4"}
    assert result["failed"] == {}
    assert result["error"] == {"status": None, "code": None, "exception": "OSError",
                               "message": "[Errno 24] Too many open files"}
    assert result["message"].startswith("amd-smi set the memory partition to NPS4 on GPU 0-14; then failed: OSError")
    assert "read the modes again" in result["message"]


def test_expected_gpus_the_crash_left_out_are_unreported():
    result = parse_partition_set(capture(NPS4), expected_gpus=range(16))
    assert result["unreported"] == [15] and result["status"] == "partial"
    assert "no result for GPU 15" in result["message"]


def test_spx_while_nps4_fails_on_gpu_0_with_its_bus():
    result = parse_partition_set(capture(SPX_IN_NPS4))
    assert result["status"] == "failed" and not result["changed"] and result["set"] == {}
    assert result["error"] is None and list(result["failed"]) == [0]
    failure = result["failed"][0]
    assert failure["status"] == "AMDSMI_STATUS_SETTING_UNAVAILABLE" and failure["code"] == 55
    assert failure["kind"] == "compute" and failure["mode"] == "SPX" and failure["bdf"] == "0000:11:00.0"
    assert failure["exception"] == "ValueError"
    assert result["message"].startswith("GPU 0 (PCI 0000:11:00.0): AMDSMI_STATUS_SETTING_UNAVAILABLE (code 55)")
    assert "set the memory mode first" in result["message"]


def test_no_perm_without_sudo_is_a_command_error():
    result = parse_partition_set(capture(NO_PERM), expected_gpus=range(8))
    assert result["status"] == "failed" and not result["changed"] and result["failed"] == {}
    assert result["error"] == {"status": "AMDSMI_STATUS_NO_PERM", "code": 10, "exception": "PermissionError",
                               "message": "Command requires elevation"}
    assert result["unreported"] == list(range(8))
    assert result["message"].startswith("amd-smi failed: AMDSMI_STATUS_NO_PERM (code 10): Command requires elevation")


def test_tab_indented_no_perm_of_a_guest_reads_the_same():
    """The same exception chain from another amd-smi set (power cap on an MI300X VF), code tab-indented."""
    result = parse_partition_set(capture("mi300x-vf-1gpu_rocm7.1.1_amd-smi-set-o-500_error-no-perm.txt"))
    assert result["error"]["status"] == "AMDSMI_STATUS_NO_PERM" and result["error"]["code"] == 10
    assert "SR-IOV guest" in result["message"]


@pytest.mark.parametrize("text, rc", [("", None), ("", 1), (None, 2), ("\x00\xff garbage\n|||\nGPU: x\n", 0),
                                      ("GPU: 3\n", 0)])
def test_no_result_is_failed_never_a_traceback(text, rc):
    result = parse_partition_set(text, rc=rc)
    assert result["status"] == "failed" and not result["changed"] and result["set"] == {}
    assert result["message"]
    if rc:
        assert result["error"]["message"] == "amd-smi exited with %s" % rc


def test_windows_line_endings_and_a_non_zero_rc_with_results():
    result = parse_partition_set(capture(NPS4).replace("\n", "\r\n"), rc=1)
    assert sorted(result["set"]) == list(range(15)) and result["status"] == "partial"
