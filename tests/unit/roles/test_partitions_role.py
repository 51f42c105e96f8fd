"""The partitions role's data: the modes come from preflight's decision, memory before compute, labels shared."""

from __future__ import annotations

import yaml
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.compliance.gpu_class import evaluate_gpu_items
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.roles.managed import role_objects
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.roles.managed_state import compliance_items
from fleet_testing.roles import ROLES, evaluate, find_task, load_yaml, provisioning_roles, render

REPO = ROLES.parent
VARS = load_yaml("partitions/vars/main.yml")


def objects(compute, memory):
    decision = {"partitions": {"compute": compute, "memory": memory, "physical_gpu_count": 8,
                               "expected_gpu_count": None}}
    variables = dict(VARS, preflight_decision=decision)
    rendered = render("{{ __partitions_managed }}", **variables)
    return role_objects(rendered, "partitions")


def test_main_reads_like_a_table_of_contents_memory_first():
    tasks = load_yaml("partitions/tasks/main.yml")
    assert [task.get("ansible.builtin.import_tasks") or task["ansible.builtin.include_tasks"] for task in tasks] == [
        "preflight.yml", "memory.yml", "reload.yml", "compute.yml"]


def test_the_declared_modes_are_objects_memory_before_compute():
    found = objects("CPX", "NPS4")
    assert [(obj["set"], obj["mode"]) for obj in found] == [("memory", "NPS4"), ("compute", "CPX")]
    assert [obj["label"] for obj in found] == ["partitions: memory partition NPS4 on every GPU",
                                               "partitions: compute partition CPX on every GPU"]
    assert found[1]["memory"] == "NPS4"
    assert {item["id"] for item in compliance_items(found)} == {"ROCM-GPU-005"}


def test_a_mode_left_null_is_not_managed():
    assert [obj["set"] for obj in objects("QPX", None)] == ["compute"]
    assert objects(None, None) == []
    # Without a decision (the compliance role reads the vars before it): nothing.
    assert role_objects(render("{{ __partitions_managed }}", **VARS), "partitions") == []


def test_the_tasks_loop_over_the_objects_and_print_their_labels():
    for relative, kind in (("partitions/tasks/memory.yml", "memory"), ("partitions/tasks/compute.yml", "compute")):
        task = load_yaml(relative)[0]
        assert task["loop"] == "{{ __partitions_objects | selectattr('set', 'eq', '%s') }}" % kind
        assert task["loop_control"] == {"label": "{{ item.label }}"}
        assert task["rocm_fleet.core.gpu_partition"]["mode"] == "{{ item.mode }}"


def test_drift_names_a_changed_mode_by_the_label_the_task_prints():
    found = objects("CPX", "NPS4")
    gpu = {"driver": {"loaded": True}, "devices": [
        {"index": 0, "physical_gpu": 0, "partition_id": 0, "compute_partition": "SPX", "memory_partition": "NPS4"}]}
    failed = [result for result in evaluate_gpu_items(compliance_items(found), gpu) if result["status"] == "fail"]
    assert [result["label"] for result in failed] == [found[1]["label"]]


def test_the_reload_runs_only_where_allowed_and_a_memory_mode_waits():
    unload = find_task("partitions/tasks/reload.yml", "Unload amdgpu to apply the memory mode")
    waiting = {"results": [{"reload_needed": True}]}
    conditions = " and ".join("(%s)" % condition for condition in unload["when"])
    assert evaluate(conditions, __partitions_memory_step=waiting, partitions_reload_allowed=True,
                    ansible_check_mode=False)
    assert not evaluate(conditions, __partitions_memory_step=waiting, partitions_reload_allowed=False,
                        ansible_check_mode=False)
    assert not evaluate(conditions, __partitions_memory_step={"results": [{"reload_needed": False}]},
                        partitions_reload_allowed=True, ansible_check_mode=False)


def test_the_pending_memory_mode_is_a_reboot_marker_of_the_kernel_role():
    assert VARS["__partitions_pending_file"].startswith("/run/rocm-fleet/reboot-required/")


def test_provisioning_runs_the_role_after_the_kernel_role_and_checks_it_first():
    plays = yaml.safe_load((REPO / "playbooks" / "provision.yml").read_text())
    roles = provisioning_roles()
    assert roles.index("partitions") == roles.index("kernel") + 1
    validation = next(task for task in plays[0]["tasks"] if "loop" in task)
    assert "partitions" in validation["loop"]
    compliance = load_yaml("compliance/vars/main.yml")["__compliance_roles"]
    assert "partitions" in compliance


def test_the_lab_inference_host_declares_cpx_nps4():
    hosts = yaml.safe_load((REPO / "inventory" / "lab" / "hosts.yml").read_text())
    group = hosts["all"]["children"]["gpu_servers"]["children"]["mi300x_inference"]
    assert group["hosts"]["mi300x-cpx-01"]["lab_profile"] == "mi300x-8-cpx-nps4"
    declared = yaml.safe_load((REPO / "inventory/lab/group_vars/mi300x_inference/preflight.yml").read_text())
    assert (declared["preflight_compute_partition"], declared["preflight_memory_partition"]) == ("CPX", "NPS4")
