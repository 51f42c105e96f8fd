"""amd-smi parsers and collector: malformed input, unknown weights, no tracebacks."""

from pathlib import Path

import pytest
from ansible_collections.rocm_fleet.core.plugins.module_utils.common.runner import ToolTimeout
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.amd_smi import report as amd_smi
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.amd_smi.topology import topology_from_pairs
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.model import GpuParseError, new_report

CAPTURES = Path(__file__).resolve().parents[5] / "fixtures" / "captures"
OLD_JSON = "unknown-2gpu-pcie_rocm6.1.0_amd-smi-topology-json_oldformat.txt"


def capture(name):
    return (CAPTURES / name).read_text(encoding="utf-8")


@pytest.mark.parametrize("text", ["", "garbage", capture(OLD_JSON)[:150], '{"error": "x"}', "[1, 2]"])
def test_json_parsers_reject_malformed_input(text):
    for parser in (
        amd_smi.parse_amd_smi_list_json,
        amd_smi.parse_amd_smi_static_json,
        amd_smi.parse_amd_smi_topology_json,
    ):
        with pytest.raises(GpuParseError):
            parser(text)


@pytest.mark.parametrize("text", ["", "garbage\n", "ERROR:root:Unable to detect any GPU devices\n"])
def test_text_parsers_reject_malformed_input(text):
    for parser in (amd_smi.parse_amd_smi_list_text, amd_smi.parse_amd_smi_topology_text, amd_smi.parse_amd_smi_summary):
        with pytest.raises(GpuParseError):
            parser(text)


def test_all_zero_weights_are_unknown_not_zero():
    # amd-smi 26.x printed an all-zero WEIGHT TABLE on MI355X: zero between two GPUs means unknown.
    report = new_report()
    pairs = {"weight": {(0, 1): "0", (1, 0): "0"}, "link_type": {(0, 1): "XGMI", (1, 0): "XGMI"}}
    topology = topology_from_pairs(2, pairs, report)
    assert topology["weight"] is None
    assert topology["link_type"] == [["SELF", "XGMI"], ["XGMI", "SELF"]]
    assert any("unknown" in warning for warning in report["warnings"])


def test_failed_list_and_text_fallback_fails_without_traceback():
    state, report = amd_smi.collect_amd_smi(lambda args: (2, "", "Traceback (most recent call last):\n  boom\n"))
    assert state == "failed" and report["devices"] == []
    assert "amd-smi" in report["warnings"][0] and "Traceback" in report["warnings"][0]


def test_unexpected_exception_becomes_failed_state():
    def run(args):
        raise UnicodeDecodeError("utf-8", b"\xff", 0, 1, "bad byte")

    state, report = amd_smi.collect_amd_smi(run)
    assert state == "failed" and "UnicodeDecodeError" in report["warnings"][0]


def test_timeout_propagates():
    def run(args):
        raise ToolTimeout("amd-smi hung")

    with pytest.raises(ToolTimeout):
        amd_smi.collect_amd_smi(run)
