"""node_compliance results -> the report's checks and pending changes, using the real evaluator on a temp tree."""

from __future__ import annotations

import pytest
from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.evaluate import (
    evaluate,
    findings_only,
    gpu_brief,
    summarize,
)
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.roles.managed_state import compliance_items, normalize

from rocm_fleet.drift.results import host_result

PROFILE = "/etc/profile.d/rocm.sh"


def items():
    """node_compliance items as host_compliance makes them from the roles' managed objects."""
    environment = normalize([{"kind": "file", "id": "ROCM-ENV-001", "title": "profile", "path": PROFILE,
                              "content": "export ROCM_PATH=/opt/rocm\n", "owner": None, "group": None}],
                            "environment")
    access = normalize([{"kind": "member", "id": "ROCM-ACCESS-002", "title": "users in the GPU groups",
                         "users": ["alice"], "groups": ["render", "video"]}], "access")
    kernel = normalize([{"kind": "kernel_cmdline", "id": "ROCM-BOOT-002", "title": "active", "params": ["iommu=pt"],
                         "repair": "a reboot"}], "kernel")
    return compliance_items(environment + access + kernel)


def tree(tmp_path, profile="export ROCM_PATH=/opt/rocm\n", render="render:x:992:alice\nvideo:x:44:alice\n"):
    (tmp_path / "etc/profile.d").mkdir(parents=True)
    (tmp_path / "etc/profile.d/rocm.sh").write_text(profile)
    (tmp_path / "etc/group").write_text(render)
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc/cmdline").write_text("ro quiet iommu=pt\n")
    return str(tmp_path)


def result_for(root):
    results, summary = evaluate(items(), root)
    return host_result({"results": results, "summary": summary, "gpu": None})


def test_a_compliant_host_has_one_passing_check_per_id_and_no_change(tmp_path):
    host = result_for(tree(tmp_path))
    assert [(check.id, check.status) for check in host.checks] == [
        ("ROCM-ENV-001", "pass"), ("ROCM-ACCESS-002", "pass"), ("ROCM-BOOT-002", "pass")]
    assert host.changes == [] and host.status == "compliant"


def test_the_items_are_one_per_file_and_group_and_share_their_object_label():
    assert [(item["id"], item["label"], item["repair"]) for item in items()] == [
        ("ROCM-ENV-001", "environment: /etc/profile.d/rocm.sh", None),
        ("ROCM-ACCESS-002", "access: alice in render, video", None),
        ("ROCM-ACCESS-002", "access: alice in render, video", None),
        ("ROCM-BOOT-002", None, "a reboot"),
    ]


def test_failed_items_become_one_check_per_id_and_one_change_per_object(tmp_path):
    host = result_for(tree(tmp_path, profile="export ROCM_PATH=/usr\n", render="render:x:992:\nvideo:x:44:\n"))
    checks = {check.id: check for check in host.checks}
    assert checks["ROCM-ACCESS-002"].status == "fail"
    assert checks["ROCM-ACCESS-002"].message == "alice not in group render; alice not in group video"
    assert checks["ROCM-ACCESS-002"].repair == ""  # site.yml repairs it: the change says how
    assert checks["ROCM-BOOT-002"].status == "pass"
    # Two failed items of one object (render, video) are one change, named by the object's label.
    assert [(change.label, change.role) for change in host.changes] == [
        ("environment: /etc/profile.d/rocm.sh", "rocm_fleet.core.environment"),
        ("access: alice in render, video", "rocm_fleet.core.access"),
    ]
    assert host.changes[1].action == "add"
    assert "-export ROCM_PATH=/usr\n+export ROCM_PATH=/opt/rocm\n" in host.changes[0].diff


def test_findings_only_reports_as_the_whole_results_do(tmp_path):
    """drift.yml asks host_compliance for detail=findings: the report must read the same from it."""
    root = tree(tmp_path, profile="export ROCM_PATH=/usr\n")
    results, summary = evaluate(items(), root)
    cut = findings_only(results)
    passed = [result for result in cut if result["status"] == "pass"]
    # One entry per check for its passing items, where its first one was.
    assert [result["id"] for result in passed] == list(dict.fromkeys(
        result["id"] for result in results if result["status"] == "pass"))
    assert all(sorted(result) == ["id", "items", "status", "title"] for result in passed)
    assert sum(result["items"] for result in passed) == summary["pass"] and max(r["items"] for r in passed) > 1
    assert findings_only(cut) == cut  # folding again changes nothing
    assert summarize(cut) == summary  # the counts are of items, folded or not
    assert [result for result in cut if result["status"] != "pass"] == [
        result for result in results if result["status"] != "pass"]
    whole = host_result({"results": results, "summary": summary, "gpu": None})
    compact = host_result({"results": cut, "summary": summary, "gpu": None})
    assert compact.to_dict() == whole.to_dict()
    assert compact.changes == whole.changes and compact.status == whole.status == "drift"


def test_the_diffs_of_one_object_are_joined_in_order():
    def failed(diff, label="repo: /etc/apt/sources.list.d/rocm.sources", status="fail"):
        return {"id": "ROCM-REPO-001", "title": "t", "status": status, "expected": None, "actual": None,
                "message": "m", "label": label, "role": "rocm_fleet.core.repo", "action": "update", "diff": diff}

    host = host_result({"results": [failed("-a\n"), failed("", label="repo: /x"), failed("-b\n"),
                                    failed("-c\n", status="pass")]})
    assert [(change.label, change.diff) for change in host.changes] == [
        ("repo: /etc/apt/sources.list.d/rocm.sources", "-a\n-b\n"), ("repo: /x", "")]


def test_a_failed_item_without_a_label_is_a_failed_check_but_no_change(tmp_path):
    root = tree(tmp_path)
    (tmp_path / "proc/cmdline").write_text("ro quiet\n")
    host = result_for(root)
    assert [check.id for check in host.failed_checks] == ["ROCM-BOOT-002"]
    # No task repairs it: the check says what does.
    assert host.failed_checks[0].repair == "a reboot"
    assert host.changes == [] and host.status == "drift"


def test_a_check_names_each_distinct_repair_of_its_bad_items_once():
    def gpu(check_id, status, repair):
        return {"id": check_id, "title": "t", "status": status, "expected": None, "actual": None, "message": "m",
                "label": None, "repair": repair}

    host = host_result({"results": [gpu("ROCM-DRV-001", "fail", "a reboot"), gpu("ROCM-DRV-001", "error", "a reboot"),
                                    gpu("ROCM-DRV-001", "fail", "a person"), gpu("ROCM-GPU-001", "pass", "a person")]})
    checks = {check.id: check for check in host.checks}
    assert (checks["ROCM-DRV-001"].status, checks["ROCM-DRV-001"].repair) == ("error", "a reboot; a person")
    assert checks["ROCM-GPU-001"].repair == ""  # a passing check needs no repair
    assert host.changes == []


def test_an_unreadable_item_makes_its_check_an_error(tmp_path):
    root = tree(tmp_path)
    (tmp_path / "proc/cmdline").unlink()
    checks = {check.id: check for check in result_for(root).checks}
    assert checks["ROCM-BOOT-002"].status == "error"


def _item(check_id, status, message="m", **extra):
    return {"id": check_id, "title": "t", "status": status, "expected": f"e-{status}", "actual": f"a-{status}",
            "message": message, "label": None, **extra}


def test_an_unmeasured_item_makes_its_check_unknown_with_the_reason_and_never_a_pass():
    host = host_result({"results": [_item("ROCM-RAS-001", "pass"),
                                    _item("ROCM-RAS-001", "unknown", "unknown: GPU 3: ecc_count is N/A")]})
    (check,) = host.checks
    assert (check.status, check.message, check.expected, check.actual) == (
        "unknown", "unknown: GPU 3: ecc_count is N/A", "e-unknown", "a-unknown")
    assert host.status == "unverified" and host.changes == [] and host.failed_checks == []


def test_a_warning_item_makes_its_check_warn_and_is_never_dropped():
    host = host_result({"results": [_item("ROCM-ACCESS-006", "pass"),
                                    _item("ROCM-ACCESS-006", "warn", "warning: mallory in group render",
                                          label="access: render members", action="")]})
    (check,) = host.checks
    assert (check.status, check.message) == ("warn", "warning: mallory in group render")
    assert host.status == "compliant" and host.changes == []  # a warning is no change site.yml makes


@pytest.mark.parametrize(
    ("statuses", "status"),
    [
        (("warn", "unknown", "pass"), "unknown"),
        (("unknown", "fail"), "fail"),
        (("fail", "error", "unknown"), "error"),
        (("skipped", "unknown"), "unknown"),
        (("skipped", "warn"), "warn"),
        (("skipped", "pass"), "pass"),
        (("skipped", "skipped"), "skipped"),
    ],
)
def test_a_check_takes_the_gravest_status_of_its_items(statuses, status):
    (check,) = host_result({"results": [_item("ROCM-X-001", s, f"{s} message") for s in statuses]}).checks
    assert check.status == status


def test_every_finding_of_a_check_shows_beside_its_failure():
    (check,) = host_result({"results": [_item("ROCM-X-001", "fail", "missing: a"), _item("ROCM-X-001", "pass"),
                                        _item("ROCM-X-001", "warn", "warning: b"),
                                        _item("ROCM-X-001", "unknown", "unknown: c", repair="install amd-smi")]}).checks
    assert check.status == "fail"
    assert check.message == "missing: a; warning: b; unknown: c"
    assert check.actual == ["a-fail", "a-warn", "a-unknown"]
    assert check.repair == "install amd-smi"


def test_an_item_status_this_version_does_not_know_is_an_error_not_a_pass():
    (check,) = host_result({"results": [_item("ROCM-X-001", "pass"), _item("ROCM-X-001", "maybe", "odd")]}).checks
    assert check.status == "error"
    assert check.message == "status 'maybe' is not one of pass, fail, error, skipped, unknown, warn: odd"


def test_the_gpu_brief_draws_the_report_the_whole_gpu_fact_draws():
    """host_compliance detail=findings sends gpu_brief of the gpu fact: the report's GPU line must not change."""
    gpu = {"count": 2, "schema": 2, "driver": {"loaded": True}, "sources": {"sysfs": "ok"},
           "devices": [{"index": 0, "product": "AMD Instinct MI300X OAM", "numa_node": 0, "gfx_target": "gfx942"},
                       {"index": 1, "product": "AMD Instinct MI300X OAM", "numa_node": 1, "gfx_target": "gfx942"}],
           "topology": {"link_type": [["SELF", "XGMI"], ["XGMI", "SELF"]], "hops": [[0, 1], [1, 0]]}}
    whole = host_result({"results": [], "gpu": gpu})
    brief = host_result({"results": [], "gpu": gpu_brief(gpu)})
    assert brief.to_dict() == whole.to_dict() and whole.gpu is not None
    assert gpu_brief(None) is None
