"""The drift report model: derived statuses, summary, exit codes, JSON validation."""

from __future__ import annotations

import copy

import pytest
from ansible_collections.rocm_fleet.core.plugins.module_utils import gpu_model

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

from .drift_samples import status_mix_report, three_host_report


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
    assert data["schema"] == 2
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


def test_dict_round_trip_is_lossless():
    report = three_host_report()
    data = report.to_dict()
    assert data["schema"] == drift_model.SCHEMA_VERSION == 2
    assert list(data["hosts"]) == sorted(data["hosts"])
    assert DriftReport.from_dict(copy.deepcopy(data)).to_dict() == data


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
        (("schema",), 1, "version 1 is not 2"),
        (("schema",), 3, "version 3 is not 2"),
        (("hosts", "gpu-mi300x-01", "checks", 0, "status"), "ok", "'ok' is not one of"),
        (("hosts", "gpu-mi300x-01", "checks", 0, "id"), "topo check", "ROCM-AREA-NNN"),
        (("hosts", "gpu-mi300x-01", "gpu", "count"), True, "expected int"),
        (("hosts", "gpu-mi300x-02", "changes", 0, "diff"), None, r"changes\[0\]\.diff"),
        (("hosts", "gpu-mi300x-02", "changes", 0, "label"), None, r"changes\[0\]\.label"),
        (("hosts", "gpu-mi300x-02", "checks", 4, "repair"), None, r"checks\[4\]\.repair"),
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
