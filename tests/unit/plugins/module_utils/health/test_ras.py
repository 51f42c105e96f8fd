"""RAS/ECC health: the shared captures of each tool, placeholders as unknown, and the thresholds."""

import json
from pathlib import Path

import pytest
from ansible_collections.rocm_fleet.core.plugins.module_utils.health import ras

CAPTURES = Path(__file__).resolve().parents[4] / "fixtures" / "captures"
RASINFO_MI50 = "mi50-4gpu_unknown_rocm-smi-showrasinfo_gpu0-only-rest-truncated-by-poster.txt"
XGMI_ERR_NA = "mi300-series-unknowncount_unknown_amd-smi-metric-g0-grep-XGMI_ERR_na.txt"
EINVAL = "mi300-series-unknowncount_unknown_cat-sysfs-xgmi_error_einval-on-df4.txt"
RDCI = "mi300-series-unknowncount_unknown_rdci-dmon-ecc-xgmi-wafl.txt"
METRIC_6600 = "rx6600xt-1gpu_unknown_amd-smi-metric-json_bare-list_pcie-x8-of-x16.txt"


def capture(name):
    return (CAPTURES / name).read_text(encoding="utf-8")


def test_mi50_showrasinfo_gpu0_blocks():
    # MANIFEST: GPU[0] only; UMC, SDMA, GFX, MMHUB, PCIE_BIF, HDP ENABLED 0/0; ATHUB, DF, SMN, SEM,
    # MP0, MP1, FUSE ENABLED with empty cells; XGMI_WAFL DISABLED.
    table = ras.parse_rocm_smi_rasinfo(capture(RASINFO_MI50))
    # GPU[1]'s table was cut by the poster ("..."): no blocks, so its state is unknown, not healthy.
    assert sorted(table) == [0, 1] and table[1] == {}
    assert ras.decide_ras(1, table[1], ce_threshold=10)["state"] == "unknown"
    blocks = table[0]
    for name in ("UMC", "SDMA", "GFX", "MMHUB", "PCIE_BIF", "HDP"):
        assert blocks[name] == {"status": "ENABLED", "ce": 0, "ue": 0}
    for name in ("ATHUB", "DF", "SMN", "SEM", "MP0", "MP1", "FUSE"):
        assert blocks[name]["status"] == "ENABLED"
        assert isinstance(blocks[name]["ce"], str) and isinstance(blocks[name]["ue"], str)
    assert blocks["XGMI_WAFL"]["status"] == "DISABLED"
    assert len(blocks) == 14
    verdict = ras.decide_ras(0, blocks, ce_threshold=10)
    assert verdict["state"] == "pass" and verdict["uncorrectable"] == 0 and verdict["correctable"] == 0
    assert "XGMI_WAFL RAS is DISABLED" in verdict["reason"] and "ATHUB" in verdict["reason"]


def test_xgmi_err_na_is_unsupported_not_zero():
    # MANIFEST: XGMI_ERR: N/A means unsupported; do not read it as 0 or healthy.
    metric = ras.parse_amd_smi_metric_text(capture(XGMI_ERR_NA))
    assert metric == {"ecc": {}, "xgmi_err": "N/A"}
    verdict = ras.xgmi_error_state(0, metric["xgmi_err"])
    assert verdict["state"] == "unknown" and "unsupported" in verdict["reason"]
    assert ras.decide_ras(0, {"metric": metric["ecc"]}, ce_threshold=0)["state"] == "unknown"


def test_sysfs_einval_is_unsupported_not_a_count():
    # MANIFEST: Invalid argument: the node exists but is unsupported on DF 4.x. Report unsupported.
    counts = ras.parse_sysfs_err_count(capture(EINVAL))
    assert set(counts) == {"ue", "ce"}
    assert counts["ue"].startswith("EINVAL")
    verdict = ras.decide_ras(0, {"xgmi": counts}, ce_threshold=0, bus="0000:05:00.0")
    assert verdict["state"] == "unknown"
    assert "EINVAL" in verdict["reason"] and "0000:05:00.0" in verdict["reason"]


def test_rdci_dmon_xgmi_wafl_zero():
    # MANIFEST: GPU 0: XGMI_WAFL UE 0, CE 0.
    rows = ras.parse_rdci_dmon(capture(RDCI))
    assert rows == {0: {"ECC_XGMI_WAFL_UE": 0, "ECC_XGMI_WAFL_CE": 0}}
    blocks = ras.rdci_blocks(rows[0])
    assert blocks == {"XGMI_WAFL": {"ue": 0, "ce": 0}}
    assert ras.decide_ras(0, blocks, ce_threshold=0)["state"] == "pass"


def test_rx6600xt_metric_json_ecc_zero_and_xgmi_err_na():
    # MANIFEST: ECC 0/0/0, xgmi_err N/A.
    metric = ras.parse_amd_smi_metric_ecc_json(json.loads(capture(METRIC_6600)))
    assert metric == {0: {"ecc": {"ue": 0, "ce": 0, "de": 0}, "xgmi_err": "N/A"}}
    assert ras.decide_ras(0, {"total": metric[0]["ecc"]}, ce_threshold=0)["state"] == "pass"
    assert ras.xgmi_error_state(0, metric[0]["xgmi_err"])["state"] == "unknown"


def test_unsupported_uncorrectable_counter_is_unknown_even_with_zero_correctable():
    counts = ras.parse_sysfs_err_count("ue: 4294967295\nce: 0\n")
    assert counts == {"ue": "ue is a max-uint placeholder (4294967295)", "ce": 0}
    verdict = ras.decide_ras(0, {"umc": counts}, ce_threshold=0)
    assert verdict["state"] == "unknown" and "4294967295" in verdict["reason"]
    over = ras.decide_ras(0, {"umc": {"ue": "N/A", "ce": 9}}, ce_threshold=3)
    assert over["state"] == "fail"


def test_uncorrectable_fails_and_correctable_threshold():
    blocks = {"umc": {"ue": 0, "ce": 5}, "gfx": {"ue": 0, "ce": 2}}
    assert ras.decide_ras(0, blocks, ce_threshold=7)["state"] == "pass"
    over = ras.decide_ras(0, blocks, ce_threshold=6, bus="0000:26:00.0")
    assert over["state"] == "fail" and "7 correctable errors, above the threshold 6" in over["reason"]
    bad = ras.decide_ras(0, {"umc": {"ue": 1, "ce": 0}}, ce_threshold=100)
    assert bad["state"] == "fail" and "umc 1" in bad["reason"]


@pytest.mark.parametrize("value", ["N/A", "", "4294967295", "18446744073709551615", "65535", "-1", "abc", None])
def test_placeholders_are_never_counts(value):
    counts = ras.parse_sysfs_err_count("ue: %s\nce: %s\n" % (value, value))
    verdict = ras.decide_ras(0, {"umc": counts}, ce_threshold=0)
    assert verdict["state"] == "unknown"


@pytest.mark.parametrize("text", ["", "garbage", "ue: 0\n", "Query currently inaccessible\n", None, b"\xff\xfe"])
def test_sysfs_malformed_gives_reasons(text):
    counts = ras.parse_sysfs_err_count(text)
    assert isinstance(counts["ue"], str) and isinstance(counts["ce"], str)


@pytest.mark.parametrize("parser", [ras.parse_rocm_smi_rasinfo, ras.parse_rdci_dmon])
@pytest.mark.parametrize("text", ["", "garbage\n", None])
def test_table_parsers_reject_malformed_input(parser, text):
    with pytest.raises(ValueError):
        parser(text)


def test_truncated_rasinfo_keeps_what_it_has():
    truncated = capture(RASINFO_MI50)[:400]
    table = ras.parse_rocm_smi_rasinfo(truncated)
    assert table[0]["UMC"] == {"status": "ENABLED", "ce": 0, "ue": 0}


@pytest.mark.parametrize("document", ["garbage", {}, [{"no_gpu": 1}], None])
def test_metric_json_malformed_raises(document):
    with pytest.raises(ValueError):
        ras.parse_amd_smi_metric_ecc_json(document)
