"""rocminfo parser and collector: malformed input and non-GPU agents."""

from pathlib import Path

import pytest
from ansible_collections.rocm_fleet.core.plugins.module_utils.common.runner import ToolTimeout
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu import rocminfo
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.model import GpuParseError

CAPTURES = Path(__file__).resolve().parents[4] / "fixtures" / "captures"
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


# ROCm/ROCm#928 comment 4: what rocminfo prints under sudo (and in containers) before the agents.
USER_NAME_LINE = "Failed to get user name to check for video group membership"


@pytest.mark.parametrize("name", [MI300X, "mi300x-vf-1gpu_rocm6.4.1_rocminfo_full-1cpu-1gpu-agent.txt"])
def test_user_name_line_is_a_warning_not_a_failure(name):
    text = capture(name)
    first, rest = text.split("\n", 1)
    state, report = rocminfo.collect_rocminfo(lambda args: (0, first + "\n" + USER_NAME_LINE + "\n" + rest, ""))
    assert state == "ok"
    assert report["devices"] == rocminfo.parse_rocminfo(text)["devices"]
    assert report["warnings"] == ["rocminfo: " + USER_NAME_LINE]


def test_kfd_missing_names_the_driver_or_the_container_not_the_group():
    # The same failure with the reason a container without /dev/kfd prints (ROCm/ROCm#1798).
    text = capture("vega-fe-1gpu_rocm4.x_rocminfo_error-kfd-permission-denied.txt")
    varied = text.replace("Permission denied", "No such file or directory")
    assert varied != text
    state, report = rocminfo.collect_rocminfo(lambda args: (1, varied, ""))
    assert state == "failed"
    assert "not loaded" in report["warnings"][0] and "/dev/kfd" in report["warnings"][0]
    assert "render" not in report["warnings"][0]


def test_bdfid_has_no_domain_so_none_is_claimed():
    # BDFID is KFD's 16-bit location_id (bus << 8 | devfn): 9728 = 26:00.0 in some domain.
    devices = rocminfo.parse_rocminfo(capture(MI300X))["devices"]
    assert [(d["pci_bus"], d["pci_bdf"]) for d in devices] == [
        (None, "26:00.0"),
        (None, "46:00.0"),
        (None, "65:00.0"),
        (None, "85:00.0"),
    ]
