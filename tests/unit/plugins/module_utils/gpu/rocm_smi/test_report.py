"""rocm-smi parsers and collector: malformed input, fallbacks, never a traceback."""

from pathlib import Path

import pytest
from ansible_collections.rocm_fleet.core.plugins.module_utils.common.runner import ToolTimeout
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.model import GpuParseError
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.rocm_smi import report as rocm_smi
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.rocm_smi.text import parse_rocm_smi_text
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.tools import normalize_gfx_target

CAPTURES = Path(__file__).resolve().parents[5] / "fixtures" / "captures"
JSON_CAPTURE = "rx6800-2gpu_rocm5.4_rocm-smi-alldevices-json-showallinfo.json"
NO_GPU_CAPTURE = "mi300a-node-nodriver_rocm7.1_rocm-smi-default_no-gpus-lowpower-warning.txt"


def capture(name):
    return (CAPTURES / name).read_text(encoding="utf-8")


def run_returning(responses, default=(1, "", "")):
    def run(args):
        return responses.get(tuple(args), default)

    return run


@pytest.mark.parametrize("text", ["", "   \n\n", "garbage that is not rocm-smi\n", '{"card0": {"GPU ID": '])
def test_text_parser_rejects_non_rocm_smi_output(text):
    with pytest.raises(GpuParseError):
        parse_rocm_smi_text(text)


@pytest.mark.parametrize("text", ["", "not json", "[1, 2]", "{}", capture(JSON_CAPTURE)[:200]])
def test_json_parser_rejects_malformed_documents(text):
    with pytest.raises(GpuParseError):
        rocm_smi.parse_rocm_smi_json(text)


def test_json_after_a_warning_line_still_parses():
    warning = next(line for line in capture(NO_GPU_CAPTURE).splitlines() if "low-power" in line)
    report = rocm_smi.parse_rocm_smi_json(warning + "\n" + capture(JSON_CAPTURE))
    assert [device["device_id"] for device in report["devices"]] == ["0x73bf", "0x73bf"]


def test_json_with_nonzero_exit_is_kept_with_a_warning():
    run = run_returning({tuple(rocm_smi.ROCM_SMI_JSON_ARGS): (1, capture(JSON_CAPTURE), "one query failed")})
    state, report = rocm_smi.collect_rocm_smi(run)
    assert state == "ok" and len(report["devices"]) == 2
    assert any("exited 1" in warning for warning in report["warnings"])


def test_everything_unparseable_fails_naming_tool_and_line():
    state, report = rocm_smi.collect_rocm_smi(run_returning({}, default=(0, "Segfault in libfoo\n", "")))
    assert state == "failed" and report["devices"] == []
    assert "rocm-smi" in report["warnings"][0] and "Segfault in libfoo" in report["warnings"][0]


def test_truncated_json_falls_back_to_text():
    responses = {
        tuple(rocm_smi.ROCM_SMI_JSON_ARGS): (0, capture(JSON_CAPTURE)[:300], ""),
        tuple(rocm_smi.ROCM_SMI_CONCISE_ARGS): (0, capture("rx6800-2gpu_rocm5.3-5.4_rocm-smi-default.txt"), ""),
    }
    state, report = rocm_smi.collect_rocm_smi(run_returning(responses))
    assert state == "ok" and [device["index"] for device in report["devices"]] == [0, 1]
    assert any("invalid JSON" in warning for warning in report["warnings"])


def test_collector_turns_unexpected_errors_into_failed_state():
    def run(args):
        raise OSError("exec format error")

    state, report = rocm_smi.collect_rocm_smi(run)
    assert state == "failed" and "exec format error" in report["warnings"][0]


def test_collector_lets_timeouts_through():
    def run(args):
        raise ToolTimeout("rocm-smi hung")

    with pytest.raises(ToolTimeout):
        rocm_smi.collect_rocm_smi(run)


def test_showhw_table_groups_partitions_by_bus():
    report = parse_rocm_smi_text(capture("mi300a-4apu-tpx-12part_rocm6.1.1_rocm-smi-showhw.txt"))
    assert [device["kfd_node"] for device in report["devices"]] == list(range(4, 16))
    buses = [device["pci_bus"] for device in report["devices"]]
    assert buses == [bus for bus in ("0000:01:00.0", "0001:01:00.0", "0002:01:00.0", "0003:01:00.0") for _ in range(3)]
    assert {device["gfx_target"] for device in report["devices"]} == {"gfx942"}


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("gfx942", "gfx942"),
        ("gfx90a", "gfx90a"),
        ("gfx9010", "gfx90a"),
        ("gfx1100", "gfx1100"),
        ("gfx11010", "gfx110a"),
        ("gfx1151", "gfx1151"),
        ("N/A", None),
        ("gfx", None),
        ("", None),
    ],
)
def test_gfx_target_normalization(value, expected):
    # 'gfx9010' is how rocm-smi 6.x prints gfx90a (ROCm/rocm_smi_lib#159).
    assert normalize_gfx_target(value) == expected


def test_error_lines_alone_are_a_failure():
    # What Debian's rocm-smi 5.2.3 prints on a host without amdgpu.
    output = "ERROR:root:Driver not initialized (amdgpu not found in modules)\n"
    state, report = rocm_smi.collect_rocm_smi(run_returning({}, default=(0, output, "")))
    assert state == "failed" and "Driver not initialized" in report["warnings"][0]


def test_text_with_a_cut_banner_is_refused_as_mangled():
    # Malformed input: the lab's corrupt-tool fault cuts every line at 37 characters.
    text = "================================= Con\nGPU  Temp   AvgPwr  SCLK    MCLK\n1    35.0c  150.0W  500Mhz\n"
    with pytest.raises(GpuParseError, match="banner is cut short"):
        parse_rocm_smi_text(text)
