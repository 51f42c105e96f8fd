"""XGMI health: amd-smi xgmi with max-uint sentinels, sysfs xgmi_num_links, zero weights."""

from pathlib import Path

import pytest
from ansible_collections.rocm_fleet.core.plugins.module_utils import gpu_health_xgmi as xgmi

CAPTURES = Path(__file__).resolve().parents[3] / "fixtures" / "captures"
XGMI_7900 = "rx7900xtx-2gpu_rocm-na-amdsmi26.2.2_amd-smi-xgmi_no-xgmi-maxuint-sentinels-columns-collide.txt"
NUM_LINKS = "mi250x-8gcd_sysfs-drm-xgmi_num_links.txt"


def capture(name):
    return (CAPTURES / name).read_text(encoding="utf-8")


def test_rx7900xtx_xgmi_not_present_and_sentinels_are_no_values():
    # MANIFEST: bit_rate 65535 Gb/s and max_bandwidth 4294967295 Gb/s are max-uint sentinels glued to
    # N/A; port status all X; XGMI LINK STATUS rows use a TAB. Conclude "XGMI not present".
    table = xgmi.parse_amd_smi_xgmi(capture(XGMI_7900))
    assert sorted(table) == [0, 1]
    assert table[0]["bdf"] == "0000:03:00.0" and table[1]["bdf"] == "0000:0c:00.0"
    for gpu in (0, 1):
        info = table[gpu]
        assert "placeholder (65535)" in info["bit_rate"]
        assert "placeholder (4294967295)" in info["max_bandwidth"]
        assert info["link_type"] == "N/A"
        assert info["ports"] == ["X"] * 8
        assert not xgmi.xgmi_present(info)
    assert table[0]["status"] == {0: "SELF", 1: "N/A"}
    assert table[1]["status"] == {0: "N/A", 1: "SELF"}
    consumer = xgmi.decide_xgmi(0, table[0], expected_links=0)
    assert consumer["state"] == "pass" and "none present" in consumer["reason"]
    assert "0000:03:00.0" in consumer["reason"]
    assert "Pb/s" not in consumer["reason"] and "4294967295 Gb/s" not in consumer["reason"]
    expected = xgmi.decide_xgmi(1, table[1], expected_links=4)
    assert expected["state"] == "fail" and "XGMI not present" in expected["reason"]


def test_mi250x_num_links_three_direct_peers_each():
    # MANIFEST: pairs 0-1, 2-3, 4-5, 6-7 have 4 links; 0-2:1, 0-6:2, 1-3:1, 1-5:1, 2-4:2, 3-7:1,
    # 4-6:1, 5-7:1; every GCD has exactly 3 direct peers.
    matrix = xgmi.parse_xgmi_num_links(capture(NUM_LINKS))
    assert len(matrix) == 8
    for a, b in ((0, 1), (2, 3), (4, 5), (6, 7)):
        assert matrix[a][b] == matrix[b][a] == 4
    for (a, b), n in {(0, 2): 1, (0, 6): 2, (1, 3): 1, (1, 5): 1, (2, 4): 2, (3, 7): 1, (4, 6): 1, (5, 7): 1}.items():
        assert matrix[a][b] == matrix[b][a] == n
    for gcd in range(8):
        verdict = xgmi.decide_xgmi_peers(gcd, matrix, expected_peers=3)
        assert verdict["state"] == "pass" and len(verdict["peers"]) == 3
    assert xgmi.decide_xgmi_peers(0, matrix, expected_peers=7)["state"] == "fail"


def test_port_counts_against_expected():
    info = {"bdf": "0000:0c:00.0", "ports": ["U", "U", "D", "X"], "status": {}}
    short = xgmi.decide_xgmi(2, info, expected_links=3)
    assert short["state"] == "fail" and "2 of 3 expected" in short["reason"] and "0000:0c:00.0" in short["reason"]
    assert xgmi.decide_xgmi(2, info, expected_links=2)["state"] == "pass"
    assert xgmi.decide_xgmi(2, {"ports": [], "status": {}}, expected_links=2)["state"] == "unknown"


def test_zero_weight_on_xgmi_mesh_is_unknown():
    zero = [{"peer": 1, "link_type": "XGMI", "weight": 0}, {"peer": 0, "link_type": "SELF", "weight": 0}]
    verdict = xgmi.decide_xgmi_weights(0, zero)
    assert verdict["state"] == "unknown" and "weight 0" in verdict["reason"]
    fine = [{"peer": 1, "link_type": "XGMI", "weight": 15}]
    assert xgmi.decide_xgmi_weights(0, fine)["state"] == "pass"
    assert xgmi.decide_xgmi_weights(0, [{"peer": 1, "link_type": "PCIE", "weight": 40}])["state"] == "unknown"


@pytest.mark.parametrize("text", ["", "garbage\n", None, capture(XGMI_7900)[:30]])
def test_xgmi_malformed_raises(text):
    with pytest.raises(ValueError):
        xgmi.parse_amd_smi_xgmi(text)


def test_xgmi_truncated_keeps_rows():
    table = xgmi.parse_amd_smi_xgmi(capture(XGMI_7900)[:200])
    assert table[0]["bdf"] == "0000:03:00.0" and table[0]["ports"] == []
    assert xgmi.decide_xgmi(0, table[0], expected_links=4)["state"] == "unknown"


@pytest.mark.parametrize("text", ["", "garbage\n", "00 04\n04\n", "0 x\nx 0\n", None, capture(NUM_LINKS)[:30]])
def test_num_links_malformed_raises(text):
    with pytest.raises(ValueError):
        xgmi.parse_xgmi_num_links(text)
