"""node_compliance results -> the report's checks and pending changes, using the real evaluator on a temp tree."""

from __future__ import annotations

from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance_evaluate import evaluate

from rocm_fleet.drift.results import host_result

PROFILE = "/etc/profile.d/rocm.sh"


def items():
    return [
        {"id": "ROCM-ENV-001", "title": "profile", "kind": "file", "role": "rocm_fleet.core.environment",
         "task": "Write the login shell profile",
         "expect": {"path": PROFILE, "content": "export ROCM_PATH=/opt/rocm\n"}},
        {"id": "ROCM-ACCESS-002", "title": "users in the GPU groups", "kind": "group_members",
         "role": "rocm_fleet.core.access", "task": "Add the listed users to the GPU groups [alice]",
         "expect": {"group": "render", "members": ["alice"]}},
        {"id": "ROCM-ACCESS-002", "title": "users in the GPU groups", "kind": "group_members",
         "role": "rocm_fleet.core.access", "task": "Add the listed users to the GPU groups [alice]",
         "expect": {"group": "video", "members": ["alice"]}},
        {"id": "ROCM-BOOT-002", "title": "active", "kind": "kernel_cmdline", "role": "rocm_fleet.core.kernel",
         "task": None, "expect": {"params": ["iommu=pt"]}},
    ]


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


def test_failed_items_become_one_check_and_one_change_per_task_and_loop_item(tmp_path):
    host = result_for(tree(tmp_path, profile="export ROCM_PATH=/usr\n", render="render:x:992:\nvideo:x:44:\n"))
    checks = {check.id: check for check in host.checks}
    assert checks["ROCM-ACCESS-002"].status == "fail"
    assert checks["ROCM-ACCESS-002"].message == "alice not in group render; alice not in group video"
    assert checks["ROCM-BOOT-002"].status == "pass"
    assert [change.label for change in host.changes] == [
        "rocm_fleet.core.environment : Write the login shell profile",
        "rocm_fleet.core.access : Add the listed users to the GPU groups [alice]",
    ]
    assert host.changes[1].item == "alice" and host.changes[1].action == "add"
    assert "-export ROCM_PATH=/usr\n+export ROCM_PATH=/opt/rocm\n" in host.changes[0].diff


def test_a_failed_item_without_a_task_is_a_failed_check_but_no_change(tmp_path):
    root = tree(tmp_path)
    (tmp_path / "proc/cmdline").write_text("ro quiet\n")
    host = result_for(root)
    assert [check.id for check in host.failed_checks] == ["ROCM-BOOT-002"]
    assert host.changes == [] and host.status == "drift"


def test_an_unreadable_item_makes_its_check_an_error(tmp_path):
    root = tree(tmp_path)
    (tmp_path / "proc/cmdline").unlink()
    checks = {check.id: check for check in result_for(root).checks}
    assert checks["ROCM-BOOT-002"].status == "error"
