"""PCIe link health: sysfs, lspci and amd-smi readings of the shared captures, and the verdict rule."""

import json
from pathlib import Path

import pytest
from ansible_collections.rocm_fleet.core.plugins.module_utils.health import link

CAPTURES = Path(__file__).resolve().parents[4] / "fixtures" / "captures"
LSPCI_9070 = "rx9070xt-1gpu_unknown_lspci-vv-grep-lnkcap-lnksta_full-link-vs-lact-x2.txt"
LSPCI_390 = (
    "r9-390-1gpu_rocm2.0_lspci-vvv-excerpt-gpu-stanzas_nonroot-capabilities-access-denied_radeon-driver-bound.txt"
)
METRIC_6600 = "rx6600xt-1gpu_unknown_amd-smi-metric-json_bare-list_pcie-x8-of-x16.txt"


def capture(name):
    return (CAPTURES / name).read_text(encoding="utf-8")


def test_rx9070xt_lspci_link_is_not_degraded():
    # MANIFEST: LnkCap 32GT/s x16 and LnkSta 32GT/s x16, so the link is not degraded.
    links = link.parse_lspci_links(capture(LSPCI_9070), bus="2f:00.0")
    assert links == {"2f:00.0": {"max_speed": 32.0, "max_width": 16, "current_speed": 32.0, "current_width": 16}}
    verdict = link.decide_link(0, links["2f:00.0"], bus="2f:00.0")
    assert verdict["state"] == "pass"
    assert "2f:00.0" in verdict["reason"] and "x16 of x16" in verdict["reason"]


def test_r9_390_nonroot_lspci_is_unknown_not_degraded():
    # MANIFEST: Capabilities <access denied>: no LnkCap/LnkSta, so link speed is unknown, not degraded.
    links = link.parse_lspci_links(capture(LSPCI_390))
    assert set(links) == {"01:00.0", "01:00.1"}
    assert "access denied" in links["01:00.0"]["unknown"]
    verdict = link.decide_link(0, links["01:00.0"], bus="01:00.0")
    assert verdict["state"] == "unknown"
    assert "01:00.0" in verdict["reason"] and "without root" in verdict["reason"]


def test_rx6600xt_metric_width_8_of_16_fails_naming_both():
    # MANIFEST: width 8 at 16 GT/s against static max x16 at 16 GT/s (#47): degraded to half width.
    current = link.parse_amd_smi_metric_pcie(json.loads(capture(METRIC_6600)))
    assert current == {0: {"current_speed": 16.0, "current_width": 8}}
    reading = dict(current[0], max_speed=16.0, max_width=16)
    verdict = link.decide_link(0, reading, bus="0000:0b:00.0")
    assert verdict["state"] == "fail"
    assert "x8 of x16" in verdict["reason"] and "0000:0b:00.0" in verdict["reason"]


def test_metric_gpu_data_wrapper_and_na_values():
    document = {"gpu_data": [{"gpu": 3, "pcie": {"width": "N/A", "speed": "N/A"}}]}
    assert link.parse_amd_smi_metric_pcie(document) == {3: {"current_speed": None, "current_width": None}}
    assert link.parse_amd_smi_metric_pcie(
        [{"gpu": 1, "pcie": {"width": 16, "speed": {"value": 32000, "unit": "MT/s"}}}]
    ) == {1: {"current_speed": 32.0, "current_width": 16}}


@pytest.mark.parametrize("document", ["garbage", {}, [{"no_gpu": 1}], None, 42])
def test_metric_malformed_raises_value_error(document):
    with pytest.raises(ValueError):
        link.parse_amd_smi_metric_pcie(document)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("16.0 GT/s PCIe\n", 16.0),
        ("8 GT/s\n", 8.0),
        ("2.5 GT/s PCIe", 2.5),
        ("Unknown\n", None),
        ("Unknown speed\n", None),
        ("", None),
        (None, None),
        ("garbage", None),
        ("16.0 GT", None),
    ],
)
def test_sysfs_speed_formats(text, expected):
    assert link.parse_sysfs_speed(text) == expected


@pytest.mark.parametrize("text, expected", [("16\n", 16), ("8", 8), ("0\n", None), ("", None), ("x16", None)])
def test_sysfs_width_formats(text, expected):
    assert link.parse_sysfs_width(text) == expected


def test_idle_speed_downshift_is_not_judged_but_full_load_is():
    idle = link.link_from_sysfs("2.5 GT/s PCIe", "16", "16.0 GT/s PCIe", "16")
    calm = link.decide_link(1, idle, bus="0000:03:00.0")
    assert calm["state"] == "pass" and "not judged" in calm["reason"]
    busy = link.decide_link(1, idle, bus="0000:03:00.0", at_max_performance=True)
    assert busy["state"] == "fail"
    assert "2.5 GT/s below its maximum 16.0 GT/s" in busy["reason"]


def test_unknown_speed_or_width_gives_unknown_with_reason():
    no_width = link.decide_link(0, link.link_from_sysfs("16.0 GT/s PCIe", "", "16.0 GT/s PCIe", "16"))
    assert no_width["state"] == "unknown" and "width not reported" in no_width["reason"]
    no_speed = link.link_from_sysfs("Unknown", "16", "Unknown", "16")
    assert link.decide_link(0, no_speed)["state"] == "pass"
    assert link.decide_link(0, no_speed, at_max_performance=True)["state"] == "unknown"
    assert link.decide_link(0, None)["state"] == "unknown"


@pytest.mark.parametrize("text", ["", "garbage\n", capture(LSPCI_9070)[:20], None])
def test_lspci_malformed_gives_no_links_not_a_traceback(text):
    links = link.parse_lspci_links(text, bus="2f:00.0")
    verdict = link.decide_link(0, links.get("2f:00.0"), bus="2f:00.0")
    assert verdict["state"] == "unknown"
