"""amdgpu initialised on every PCI GPU: dmesg evidence from the shared captures and the per-GPU verdict."""

from pathlib import Path

import pytest
from ansible_collections.rocm_fleet.core.plugins.module_utils.health import driver_init as init

CAPTURES = Path(__file__).resolve().parents[4] / "fixtures" / "captures"
R9700 = "r9700-1gpu_rocm6.4.3_dmesg-T-grep-amdgpu_dkms-6.12.12_blank-line-between-lines_tlb-fence-traces.txt"
RX7900 = "rx7900xtx-1gpu_unknown_dmesg-grep-amd_dkms-amdgpu-6.10.5-loaded-after-mok-enroll.txt"


def capture(name):
    return (CAPTURES / name).read_text(encoding="utf-8")


def test_r9700_initialised_with_tlb_fence_traces_flagged():
    # MANIFEST: dmesg -T with an empty line between every line; 1 KFD node; then 10 pairs of
    # "Workqueue: events amdgpu_tlb_fence_work [amdgpu]" + backtrace lines: a warning to flag.
    seen = init.parse_amdgpu_dmesg(capture(R9700))
    assert seen["initialised"] == ["0000:03:00.0"]
    assert seen["failed"] == {}
    assert len(seen["warnings"]) == 10
    assert all("amdgpu_tlb_fence_work" in line for line in seen["warnings"])
    verdict = init.decide_init(["03:00.0"], seen["initialised"], seen["failed"])
    assert verdict["0000:03:00.0"]["state"] == "pass"


def test_rx7900xtx_dkms_driver_initialised_on_minor_0():
    # MANIFEST: 1x RX 7900 XTX at 09:00.0, "Initialized amdgpu 3.59.0 ... on minor 0".
    seen = init.parse_amdgpu_dmesg(capture(RX7900))
    assert seen == {"initialised": ["0000:09:00.0"], "failed": {}, "warnings": []}
    assert init.decide_init(["0000:09:00.0"], seen["initialised"])["0000:09:00.0"]["state"] == "pass"


def test_a_pci_gpu_that_amdgpu_did_not_initialise_fails():
    seen = init.parse_amdgpu_dmesg(capture(RX7900))
    verdict = init.decide_init(["0000:09:00.0", "0000:0c:00.0"], seen["initialised"], seen["failed"])
    assert verdict["0000:09:00.0"]["state"] == "pass"
    assert verdict["0000:0c:00.0"]["state"] == "fail"
    assert "0000:0c:00.0" in verdict["0000:0c:00.0"]["reason"] and "1 of 2" in verdict["0000:0c:00.0"]["reason"]


def test_failure_messages_are_quoted_in_the_reason():
    failed = {"0000:0c:00.0": ["amdgpu 0000:0c:00.0: amdgpu: Fatal error during GPU init"]}
    verdict = init.decide_init(["0c:00.0"], [], failed)["0000:0c:00.0"]
    assert verdict["state"] == "fail" and "Fatal error during GPU init" in verdict["reason"]
    assert verdict["messages"] == failed["0000:0c:00.0"]


def test_no_evidence_is_unknown():
    verdict = init.decide_init(["0000:03:00.0"], None)
    assert verdict["0000:03:00.0"]["state"] == "unknown"


@pytest.mark.parametrize("text", ["", "garbage\n", None, "\n\n\n", b"\xff\xfe"])
def test_malformed_dmesg_gives_no_evidence_so_unknown(text):
    seen = init.parse_amdgpu_dmesg(text)
    assert seen == {"initialised": None, "failed": {}, "warnings": []}
    verdict = init.decide_init(["0000:03:00.0"], seen["initialised"], seen["failed"])
    assert verdict["0000:03:00.0"]["state"] == "unknown"


def test_dmesg_cut_before_the_initialized_line_fails_the_gpu():
    # amdgpu loaded (modesetting, version lines) but no "Initialized amdgpu ... for 0000:03:00.0".
    seen = init.parse_amdgpu_dmesg(capture(R9700)[:300])
    assert seen["initialised"] == [] and seen["failed"] == {}
    verdict = init.decide_init(["0000:03:00.0"], seen["initialised"], seen["failed"])
    assert verdict["0000:03:00.0"]["state"] == "fail"


def test_bus_forms_normalise():
    assert init.normalise_bus("09:00.0") == "0000:09:00.0"
    assert init.normalise_bus("0000:0C:00.0") == "0000:0c:00.0"
