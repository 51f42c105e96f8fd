"""The drift report model: derived statuses, summary, exit codes, JSON validation."""

from __future__ import annotations

import copy

import pytest
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu import model as gpu_model
from fleet_testing.drift_samples import status_mix_report, three_host_report

from rocm_fleet.drift import (
    EXIT_CANNOT_RUN,
    EXIT_DRIFT,
    EXIT_OK,
    EXIT_UNREACHABLE,
    Change,
    CheckResult,
    DriftReport,
    GpuSummary,
    HostResult,
    ReportFormatError,
    exit_code,
)
from rocm_fleet.drift import model as drift_model


def _report(**hosts: HostResult) -> DriftReport:
    report = three_host_report()
    report.hosts = dict(hosts)
    return report


def test_link_types_match_the_gpu_facts_vocabulary():
    assert drift_model.LINK_TYPES == gpu_model.LINK_TYPES


@pytest.mark.parametrize(
    ("host", "status"),
    [
        (HostResult(checks=[CheckResult("ROCM-A-001", "a", "pass")]), "compliant"),
        (HostResult(checks=[CheckResult("ROCM-A-001", "a", "waived")]), "compliant"),
        (HostResult(checks=[CheckResult("ROCM-A-001", "a", "fail")]), "drift"),
        (HostResult(checks=[CheckResult("ROCM-A-001", "a", "error")]), "drift"),
        (HostResult(changes=[Change(label="kernel: /etc/modprobe.d/rocm-fleet.conf", action="create")]), "drift"),
        (HostResult(error="ansible-runner: module failed"), "error"),
        (HostResult.unreachable("ssh: timed out"), "unreachable"),
        # Not measured is not healthy, but nothing was found to differ either.
        (HostResult(checks=[CheckResult("ROCM-A-001", "a", "pass"), CheckResult("ROCM-B-001", "b", "unknown")]),
         "unverified"),
        (HostResult(checks=[CheckResult("ROCM-B-001", "b", "unknown"), CheckResult("ROCM-A-001", "a", "fail")]),
         "drift"),
        (HostResult(checks=[CheckResult("ROCM-B-001", "b", "unknown")],
                    changes=[Change(label="kernel: kernel.numa_balancing=0", action="set")]), "drift"),
        (HostResult(checks=[CheckResult("ROCM-B-001", "b", "unknown")], error="module failed"), "error"),
        # A warning is reported, never a failure.
        (HostResult(checks=[CheckResult("ROCM-A-001", "a", "pass"), CheckResult("ROCM-C-001", "c", "warn")]),
         "compliant"),
        (HostResult(checks=[CheckResult("ROCM-C-001", "c", "warn"), CheckResult("ROCM-B-001", "b", "unknown")]),
         "unverified"),
        (HostResult(checks=[CheckResult("ROCM-A-001", "a", "skipped")]), "compliant"),
    ],
)
def test_host_status_is_derived(host, status):
    assert host.status == status


def test_summary_counts_hosts_failed_checks_and_changes():
    assert three_host_report().summary() == {
        "hosts": 3,
        "compliant": 1,
        "drift": 1,
        "unreachable": 1,
        "error": 0,
        "failed_checks": 2,
        "changes": 2,
        "unverified": 0,
        "unknown_checks": 0,
        "warnings": 0,
    }


def test_exit_codes():
    compliant = HostResult(checks=[CheckResult("ROCM-A-001", "a", "pass")])
    drifted = HostResult(checks=[CheckResult("ROCM-A-001", "a", "fail")])
    assert exit_code(_report(a=compliant)) == EXIT_OK
    assert exit_code(_report(a=compliant, b=drifted)) == EXIT_DRIFT
    assert exit_code(_report(a=compliant, b=HostResult(error="boom"))) == EXIT_DRIFT
    assert exit_code(_report(a=drifted, b=HostResult.unreachable("down"))) == EXIT_UNREACHABLE
    assert exit_code(_report()) == EXIT_CANNOT_RUN


def test_an_unverified_host_and_a_warning_do_not_change_the_exit_status():
    compliant = HostResult(checks=[CheckResult("ROCM-A-001", "a", "pass")])
    unverified = HostResult(checks=[CheckResult("ROCM-B-001", "b", "unknown", message="N/A")])
    warned = HostResult(checks=[CheckResult("ROCM-C-001", "c", "warn", message="warning: x")])
    drifted = HostResult(checks=[CheckResult("ROCM-A-001", "a", "fail")])
    assert exit_code(_report(a=compliant, b=unverified, c=warned)) == EXIT_OK
    assert exit_code(_report(b=unverified)) == EXIT_OK
    assert exit_code(_report(b=unverified, d=drifted)) == EXIT_DRIFT
    assert exit_code(_report(b=unverified, u=HostResult.unreachable("down"))) == EXIT_UNREACHABLE


def test_summary_counts_unverified_hosts_unknown_checks_and_warnings():
    summary = status_mix_report().summary()
    assert summary == {"hosts": 3, "compliant": 1, "drift": 1, "unreachable": 0, "error": 0, "unverified": 1,
                       "failed_checks": 1, "changes": 0, "unknown_checks": 2, "warnings": 2}
    hosts = status_mix_report().hosts
    assert {name: host.status for name, host in hosts.items()} == {
        "gpu-mi300x-05": "unverified", "gpu-mi300x-06": "compliant", "gpu-mi300x-07": "drift"}
    assert [check.id for check in hosts["gpu-mi300x-07"].failed_checks] == ["ROCM-TOPO-001"]  # not the unknown


def test_unknown_and_warn_go_through_the_json():
    data = status_mix_report().to_dict()
    assert data["schema"] == 3
    # Neither an unmeasured check nor a warning is a clean pass: both keep their full detail.
    unverified = data["hosts"]["gpu-mi300x-05"]
    assert [(c["id"], c["status"], c["message"][:8]) for c in unverified["checks"]] == [
        ("ROCM-RAS-001", "unknown", "unknown:")]
    assert "ROCM-RAS-001" not in unverified["passed"]
    assert data["by_check"]["ROCM-RAS-001"]["hosts"] == {"unknown": ["gpu-mi300x-05", "gpu-mi300x-07"]}
    assert DriftReport.from_dict(copy.deepcopy(data)).to_dict() == data
    claimed = copy.deepcopy(data)
    claimed["hosts"]["gpu-mi300x-05"]["status"] = "compliant"
    claimed.pop("summary")
    with pytest.raises(ReportFormatError, match=r"says 'compliant' but .* make it 'unverified'"):
        DriftReport.from_dict(claimed)


def test_a_report_written_before_unknown_and_warn_still_reads():
    data = three_host_report().to_dict()
    for key in drift_model.SUMMARY_ADDED:
        del data["summary"][key]  # as schema 2 wrote it before the counts existed
    report = DriftReport.from_dict(copy.deepcopy(data))
    assert report.to_dict()["summary"] == three_host_report().summary()


def test_the_new_summary_counts_may_be_missing_only_where_they_are_0():
    data = status_mix_report().to_dict()
    del data["summary"]["unknown_checks"]
    with pytest.raises(ReportFormatError, match="summary"):
        DriftReport.from_dict(data)
    data = three_host_report().to_dict()
    data["summary"]["skipped_checks"] = 0
    with pytest.raises(ReportFormatError, match="summary"):
        DriftReport.from_dict(data)
    data = three_host_report().to_dict()
    data["summary"] = [1]
    with pytest.raises(ReportFormatError, match="summary"):
        DriftReport.from_dict(data)


def test_dict_round_trip_reads_back_what_it_wrote():
    report = three_host_report()
    data = report.to_dict()
    assert data["schema"] == drift_model.SCHEMA_VERSION == 3
    # Those most in need of a look first.
    assert list(data["hosts"]) == ["gpu-mi210-03", "gpu-mi300x-02", "gpu-mi300x-01"]
    assert DriftReport.from_dict(copy.deepcopy(data)).to_dict() == data


def test_json_keeps_findings_in_full_and_passed_checks_as_ids():
    data = three_host_report().to_dict()
    drifted, compliant = data["hosts"]["gpu-mi300x-02"], data["hosts"]["gpu-mi300x-01"]
    assert [(check["id"], check["status"]) for check in drifted["checks"]] == [
        ("ROCM-VER-001", "fail"), ("ROCM-TOPO-001", "fail")]
    assert drifted["checks"][1]["actual"] == {"PCIE": [[2, 5]]} and drifted["checks"][1]["repair"]
    assert drifted["passed"] == ["ROCM-DRV-001", "ROCM-KERN-002", "ROCM-GPU-001"]
    assert [check["status"] for check in compliant["checks"]] == ["waived"]  # excused, still in full
    assert len(compliant["passed"]) == 5
    # The drifted host keeps its link matrix; the compliant one's passed topology check saw the declared one.
    assert drifted["gpu"]["link_type"][2][5] == "PCIE" and compliant["gpu"]["link_type"] is None
    assert compliant["gpu"]["count"] == 8
    assert list(data["by_check"])[:2] == ["ROCM-TOPO-001", "ROCM-VER-001"]  # failing checks lead
    assert data["by_check"]["ROCM-VER-001"] == {
        "title": "ROCm version matches the inventory", "counts": {"pass": 1, "fail": 1},
        "hosts": {"fail": ["gpu-mi300x-02"]}}
    read = DriftReport.from_dict(copy.deepcopy(data)).hosts["gpu-mi300x-01"]
    passed = next(check for check in read.checks if check.id == "ROCM-GPU-001")
    assert (passed.title, passed.status, passed.expected) == ("GPU count matches the inventory", "pass", None)


def _schema_2(report: DriftReport) -> dict:
    """A report as schema 2 wrote it: every check in full, no passed list, no by_check."""
    hosts = {name: {"status": host.status, "error": host.error, "checks": [c.to_dict() for c in host.checks],
                    "changes": [c.to_dict() for c in host.changes], "gpu": host.gpu.to_dict() if host.gpu else None}
             for name, host in report.hosts.items()}  # fmt: skip
    return {"schema": 2, "run": report.run.to_dict(), "hosts": hosts, "summary": report.summary(),
            "stale_waivers": []}  # fmt: skip


def test_a_schema_2_report_still_reads():
    report = three_host_report()
    read = DriftReport.from_dict(_schema_2(report))
    assert read.hosts["gpu-mi300x-01"].checks == report.hosts["gpu-mi300x-01"].checks
    assert read.to_dict() == report.to_dict()


def test_from_dict_refuses_a_by_check_view_that_does_not_match_the_hosts():
    data = three_host_report().to_dict()
    data["by_check"]["ROCM-VER-001"]["hosts"] = {}
    with pytest.raises(ReportFormatError, match="by_check"):
        DriftReport.from_dict(copy.deepcopy(data))
    data = three_host_report().to_dict()
    data["hosts"]["gpu-mi300x-01"]["passed"].append("ROCM-NEW-001")
    with pytest.raises(ReportFormatError, match=r"passed\[5\]: 'ROCM-NEW-001' is not in report.by_check"):
        DriftReport.from_dict(data)
    data = three_host_report().to_dict()
    del data["hosts"]["gpu-mi300x-01"]["passed"]
    with pytest.raises(ReportFormatError, match=r"\.passed: missing"):
        DriftReport.from_dict(data)


def test_from_dict_rejects_a_status_that_contradicts_the_checks():
    data = three_host_report().to_dict()
    data["hosts"]["gpu-mi300x-02"]["status"] = "compliant"
    data.pop("summary")
    with pytest.raises(ReportFormatError, match=r"hosts\['gpu-mi300x-02'\]\.status"):
        DriftReport.from_dict(data)


def test_from_dict_rejects_a_wrong_summary():
    data = three_host_report().to_dict()
    data["summary"]["drift"] = 0
    with pytest.raises(ReportFormatError, match="summary"):
        DriftReport.from_dict(data)


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        # a report of schema 1 named changes by task: it is refused, not misread
        (("schema",), 1, r"version 1 is not one of \(2, 3\)"),
        (("schema",), 4, r"version 4 is not one of \(2, 3\)"),
        (("hosts", "gpu-mi300x-01", "checks", 0, "status"), "ok", "'ok' is not one of"),
        (("hosts", "gpu-mi300x-01", "checks", 0, "id"), "topo check", "ROCM-AREA-NNN"),
        (("hosts", "gpu-mi300x-01", "gpu", "count"), True, "expected int"),
        (("hosts", "gpu-mi300x-02", "changes", 0, "diff"), None, r"changes\[0\]\.diff"),
        (("hosts", "gpu-mi300x-02", "changes", 0, "label"), None, r"changes\[0\]\.label"),
        (("hosts", "gpu-mi300x-02", "checks", 1, "repair"), None, r"checks\[1\]\.repair"),
        (("run", "started"), 17, r"run\.started"),
    ],
)
def test_from_dict_names_the_bad_value(path, value, message):
    data = three_host_report().to_dict()
    target = data
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    with pytest.raises(ReportFormatError, match=message):
        DriftReport.from_dict(data)


def test_link_matrix_must_be_square_and_known():
    with pytest.raises(ReportFormatError, match="row 1"):
        GpuSummary(2, ["x", "x"], [["SELF", "XGMI"], ["XGMI"]])
    with pytest.raises(ReportFormatError, match="'NVLINK'"):
        GpuSummary(2, ["x", "x"], [["SELF", "NVLINK"], ["XGMI", "SELF"]])


def test_a_change_is_its_object_label_and_nothing_of_a_task():
    change = Change(label="kernel: kernel.numa_balancing=0", action="set", role="rocm_fleet.core.kernel")
    assert change.to_dict() == {"label": "kernel: kernel.numa_balancing=0", "role": "rocm_fleet.core.kernel",
                                "action": "set", "diff": ""}
    assert Change.from_dict(change.to_dict(), "change") == change
    with pytest.raises(TypeError):
        Change(task="Pin", action="copy")  # schema 1 named a change by its task: that field is gone


def test_a_schema_1_change_is_refused_naming_the_missing_label():
    old = {"task": "Pin the ROCm repository", "role": "repo", "action": "copy", "item": "/etc/x", "diff": ""}
    with pytest.raises(ReportFormatError, match="label"):
        Change.from_dict(old, "hosts['h'].changes[0]")


def test_a_check_carries_what_repairs_it_through_the_json():
    check = CheckResult("ROCM-BOOT-002", "active", "fail", ["iommu=pt"], "ro quiet", "iommu=pt is not active",
                        repair="a reboot")
    data = check.to_dict()
    assert data["repair"] == "a reboot"
    assert CheckResult.from_dict(data, "check") == check
    assert CheckResult("ROCM-A-001", "a", "pass").repair == ""
    data.pop("repair")
    with pytest.raises(ReportFormatError, match="repair"):
        CheckResult.from_dict(data, "check")
