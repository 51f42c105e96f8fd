"""Waiver files: loading, validation messages, matching, and how they change check results."""

from __future__ import annotations

import datetime
import textwrap

import pytest
from fleet_testing.drift_samples import three_host_report

from rocm_fleet.drift import CheckResult, DriftReport, HostResult
from rocm_fleet.drift.waivers import WaiverError, apply_waivers, host_pattern_matches, load_waivers

TODAY = datetime.date(2025, 6, 1)


def _write(tmp_path, text: str):
    path = tmp_path / "waivers.yml"
    path.write_text(textwrap.dedent(text))
    return path


def _waivers(tmp_path, text: str):
    return load_waivers(_write(tmp_path, text))


def _report(checks: dict[str, list[CheckResult]]) -> DriftReport:
    report = three_host_report()
    report.hosts = {name: HostResult(checks=host_checks) for name, host_checks in checks.items()}
    return report


def test_loads_a_valid_file(tmp_path):
    waivers = _waivers(
        tmp_path,
        """\
        ---
        - check: ROCM-TOPO-001
          hosts: "gpu-rack2-*:!gpu-rack2-07"
          reason: rack 2 waits for the xGMI bridge swap
          expires: 2025-09-30
        - check: ROCM-FW-*
          hosts: [gpu-a, gpu-b]
          reason: vendor RMA
          expires: "2025-07-01"
        """,
    )
    assert [waiver.check for waiver in waivers] == ["ROCM-TOPO-001", "ROCM-FW-*"]
    assert waivers[0].expires == datetime.date(2025, 9, 30)
    assert waivers[0].host_patterns == ["gpu-rack2-*", "!gpu-rack2-07"]
    assert waivers[1].hosts == ("gpu-a", "gpu-b")
    assert waivers[1].expires == datetime.date(2025, 7, 1)
    assert waivers[1].source.endswith("waivers.yml entry 2")


def test_accepts_a_waivers_key_and_an_empty_file(tmp_path):
    assert len(_waivers(tmp_path, "waivers:\n  - {check: ROCM-A-001, hosts: x, reason: r, expires: 2025-01-01}\n")) == 1
    assert _waivers(tmp_path, "---\n") == []


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("{check: ROCM-A-001, hosts: x, expires: 2025-01-01}", "entry 2: field 'reason': required"),
        ("{check: ROCM-A-001, hosts: x, reason: '  ', expires: 2025-01-01}", "entry 2: field 'reason': must be"),
        ("{check: ROCM-A-001, hosts: x, reason: r, expires: 2025-13-01}", "entry 2: field 'expires'"),
        ("{check: ROCM-A-001, hosts: x, reason: r, expires: soon}", "entry 2: field 'expires': 'soon'"),
        ("{check: ROCM-A-001, hosts: x, reason: r, expires: 2025-01-01 10:00:00}", "has a time"),
        ("{check: ROCM-A-001, hosts: x, reason: r}", "entry 2: field 'expires': required"),
        ("{check: rocm topo, hosts: x, reason: r, expires: 2025-01-01}", "entry 2: field 'check'"),
        ("{check: ROCM-A-001, hosts: [x, 3], reason: r, expires: 2025-01-01}", "entry 2: field 'hosts'"),
        ("{check: ROCM-A-001, hosts: x, reason: r, expiry: 2025-01-01}", "entry 2: field 'expiry': unknown"),
    ],
)
def test_validation_errors_name_file_entry_and_field(tmp_path, entry, message):
    path = _write(tmp_path, f"- {{check: ROCM-B-001, hosts: y, reason: ok, expires: 2025-01-01}}\n- {entry}\n")
    with pytest.raises(WaiverError, match=message) as caught:
        load_waivers(path)
    assert str(caught.value).startswith(str(path))


def test_unreadable_and_malformed_files_name_the_file(tmp_path):
    with pytest.raises(WaiverError, match=r"missing\.yml: cannot read"):
        load_waivers(tmp_path / "missing.yml")
    with pytest.raises(WaiverError, match="not valid YAML"):
        _waivers(tmp_path, "- check: [unclosed\n")
    with pytest.raises(WaiverError, match="expected a list"):
        _waivers(tmp_path, "check: ROCM-A-001\n")


@pytest.mark.parametrize(
    ("patterns", "host", "groups", "expected"),
    [
        (["gpu-*"], "gpu-01", (), True),
        (["gpu-*"], "cpu-01", (), False),
        (["gpu-*", "!gpu-07"], "gpu-07", (), False),
        (["!gpu-07"], "gpu-01", (), True),
        (["mi300x"], "gpu-01", ("mi300x", "rack2"), True),
        (["gpu-*", "&rack2"], "gpu-01", ("rack1",), False),
        (["gpu-*", "&rack2"], "gpu-01", ("rack2",), True),
        (["GPU-*"], "gpu-01", (), False),
    ],
)
def test_host_patterns(patterns, host, groups, expected):
    assert host_pattern_matches(patterns, host, groups) is expected


def test_active_waiver_waives_a_failed_check(tmp_path):
    waivers = _waivers(tmp_path, "- {check: ROCM-TOPO-*, hosts: 'gpu-*', reason: bridge swap, expires: 2025-06-01}\n")
    report = _report({"gpu-01": [CheckResult("ROCM-TOPO-001", "links", "fail", message="PCIe between 2 and 5")]})
    result = apply_waivers(report, waivers, TODAY)
    check = result.hosts["gpu-01"].checks[0]
    assert check.status == "waived"
    assert check.waiver.reason == "bridge swap"
    assert check.waiver.expires == "2025-06-01"
    assert result.hosts["gpu-01"].status == "compliant"
    # The input report is left as it was.
    assert report.hosts["gpu-01"].checks[0].status == "fail"


def test_expired_waiver_fails_with_its_date_and_reason(tmp_path):
    waivers = _waivers(tmp_path, "- {check: ROCM-TOPO-001, hosts: gpu-01, reason: bridge swap, expires: 2025-05-31}\n")
    report = _report({"gpu-01": [CheckResult("ROCM-TOPO-001", "links", "fail", message="PCIe between 2 and 5")]})
    check = apply_waivers(report, waivers, TODAY).hosts["gpu-01"].checks[0]
    assert check.status == "fail"
    assert check.message == "waiver expired on 2025-05-31: bridge swap; PCIe between 2 and 5"
    assert check.waiver.expires == "2025-05-31"


def test_an_active_waiver_wins_over_an_expired_one(tmp_path):
    waivers = _waivers(
        tmp_path,
        """\
        - {check: ROCM-TOPO-001, hosts: gpu-01, reason: old, expires: 2024-01-01}
        - {check: ROCM-TOPO-001, hosts: gpu-01, reason: renewed, expires: 2025-12-31}
        """,
    )
    report = _report({"gpu-01": [CheckResult("ROCM-TOPO-001", "links", "fail")]})
    check = apply_waivers(report, waivers, TODAY).hosts["gpu-01"].checks[0]
    assert (check.status, check.waiver.reason) == ("waived", "renewed")


def test_waivers_only_touch_matching_hosts_and_failed_checks(tmp_path):
    waivers = _waivers(tmp_path, "- {check: ROCM-*, hosts: 'gpu-01', reason: r, expires: 2025-12-31}\n")
    report = _report(
        {
            "gpu-01": [CheckResult("ROCM-A-001", "a", "error", message="rocm-smi crashed")],
            "gpu-02": [CheckResult("ROCM-A-001", "a", "fail")],
        }
    )
    result = apply_waivers(report, waivers, TODAY)
    assert result.hosts["gpu-01"].checks[0].status == "error"
    assert result.hosts["gpu-02"].checks[0].status == "fail"


def test_only_a_host_a_waiver_changes_is_copied(tmp_path):
    waivers = _waivers(tmp_path, "- {check: ROCM-A-001, hosts: gpu-01, reason: r, expires: 2025-12-31}\n")
    report = _report({"gpu-01": [CheckResult("ROCM-A-001", "a", "fail")],
                      "gpu-02": [CheckResult("ROCM-A-001", "a", "pass")]})
    result = apply_waivers(report, waivers, TODAY)
    assert result is not report and result.hosts is not report.hosts
    assert result.hosts["gpu-01"] is not report.hosts["gpu-01"]
    assert result.hosts["gpu-02"] is report.hosts["gpu-02"]  # nothing to change: not copied
    assert report.hosts["gpu-01"].checks[0].status == "fail"
    assert apply_waivers(report, [], TODAY).hosts == report.hosts


def test_waiver_matching_only_passing_checks_is_reported_stale(tmp_path):
    waivers = _waivers(
        tmp_path,
        """\
        - {check: ROCM-TOPO-001, hosts: gpu-01, reason: fixed last week, expires: 2025-01-01}
        - {check: ROCM-GPU-001, hosts: gpu-01, reason: still needed, expires: 2025-12-31}
        - {check: ROCM-VER-001, hosts: other-host, reason: not in this run, expires: 2025-12-31}
        """,
    )
    report = _report(
        {"gpu-01": [CheckResult("ROCM-TOPO-001", "links", "pass"), CheckResult("ROCM-GPU-001", "count", "fail")]}
    )
    result = apply_waivers(report, waivers, TODAY)
    assert result.hosts["gpu-01"].checks[0].status == "pass"
    assert result.hosts["gpu-01"].status == "compliant"
    assert len(result.stale_waivers) == 1
    assert "entry 1" in result.stale_waivers[0]
    assert "expired and no longer needed" in result.stale_waivers[0]


def test_host_groups_let_a_pattern_name_a_group(tmp_path):
    waivers = _waivers(tmp_path, "- {check: ROCM-A-001, hosts: rack2, reason: r, expires: 2025-12-31}\n")
    report = _report({"gpu-01": [CheckResult("ROCM-A-001", "a", "fail")]})
    assert apply_waivers(report, waivers, TODAY).hosts["gpu-01"].checks[0].status == "fail"
    result = apply_waivers(report, waivers, TODAY, host_groups={"gpu-01": ["rack2"]})
    assert result.hosts["gpu-01"].checks[0].status == "waived"


@pytest.mark.parametrize("status", ["fail", "unknown", "warn"])
def test_fail_unknown_and_warn_are_waived_alike_keeping_their_message(tmp_path, status):
    waivers = _waivers(tmp_path, "- {check: ROCM-RAS-*, hosts: gpu-01, reason: no ECC here, expires: 2025-12-31}\n")
    report = _report({"gpu-01": [CheckResult("ROCM-RAS-001", "ecc", status, message=f"{status}: N/A counter")]})
    result = apply_waivers(report, waivers, TODAY)
    check = result.hosts["gpu-01"].checks[0]
    assert (check.status, check.message, check.waiver.reason) == ("waived", f"{status}: N/A counter",
                                                                  "no ECC here")
    assert result.hosts["gpu-01"].status == "compliant"
    assert result.stale_waivers == []  # it excused a finding: still needed


@pytest.mark.parametrize(("status", "host_status"), [("unknown", "unverified"), ("warn", "compliant")])
def test_an_expired_waiver_leaves_an_unknown_or_a_warning_as_it_was(tmp_path, status, host_status):
    waivers = _waivers(tmp_path, "- {check: ROCM-RAS-001, hosts: gpu-01, reason: old SKU, expires: 2025-05-31}\n")
    report = _report({"gpu-01": [CheckResult("ROCM-RAS-001", "ecc", status, message="N/A")]})
    result = apply_waivers(report, waivers, TODAY)
    check = result.hosts["gpu-01"].checks[0]
    assert (check.status, check.message) == (status, "waiver expired on 2025-05-31: old SKU; N/A")
    assert result.hosts["gpu-01"].status == host_status


def test_a_waiver_whose_checks_neither_fail_nor_are_unknown_nor_warn_is_stale(tmp_path):
    waivers = _waivers(tmp_path, "- {check: ROCM-RAS-001, hosts: gpu-01, reason: r, expires: 2025-12-31}\n")
    report = _report({"gpu-01": [CheckResult("ROCM-RAS-001", "ecc", "skipped", message="amdgpu not loaded")]})
    result = apply_waivers(report, waivers, TODAY)
    assert result.hosts["gpu-01"].checks[0].status == "skipped"
    assert len(result.stale_waivers) == 1 and "no check it covers fails, is unknown or warns" in result.stale_waivers[0]
