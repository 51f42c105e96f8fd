"""rocminfo parser and collector: malformed input and non-GPU agents."""

from pathlib import Path

import pytest
from ansible_collections.rocm_fleet.core.plugins.module_utils import gpu_rocminfo as rocminfo
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu_model import GpuParseError, ToolTimeout

CAPTURES = Path(__file__).resolve().parents[3] / "fixtures" / "captures"
MI300X = "mi300x-4gpu_rocm6.0-6.1_rocminfo.txt"


def capture(name):
    return (CAPTURES / name).read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "text", ["", "\n\n", "bash: rocminfo: command not found\n", "hsa api call failure at: foo.cpp:12\n"]
)
def test_parser_rejects_non_rocminfo_output(text):
    with pytest.raises(GpuParseError):
        rocminfo.parse_rocminfo(text)


def test_cpu_agents_never_count():
    report = rocminfo.parse_rocminfo(capture(MI300X))
    assert len(report["devices"]) == 4
    assert all(device["gfx_target"] == "gfx942" for device in report["devices"])


def test_ansi_colour_and_missing_padding_are_tolerated():
    text = capture(MI300X)
    coloured = "\x1b[32m" + text.replace("ROCk module is loaded", "ROCk module is loaded\x1b[0m", 1)
    stripped = "\n".join(line.rstrip() for line in coloured.splitlines())
    assert rocminfo.parse_rocminfo(stripped)["devices"] == rocminfo.parse_rocminfo(text)["devices"]


def test_output_cut_mid_agent_keeps_complete_agents():
    text = capture(MI300X)
    cut = text[: text.index("Agent 5")]
    report = rocminfo.parse_rocminfo(cut)
    assert [device["kfd_node"] for device in report["devices"]] == [2, 3]


def test_nonzero_exit_without_agents_fails():
    state, report = rocminfo.collect_rocminfo(lambda args: (1, "", "Segmentation fault\n"))
    assert state == "failed" and report["warnings"]


def test_timeout_propagates():
    def run(args):
        raise ToolTimeout("rocminfo hung")

    with pytest.raises(ToolTimeout):
        rocminfo.collect_rocminfo(run)
