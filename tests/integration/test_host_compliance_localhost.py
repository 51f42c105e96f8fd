"""playbooks/compliance.yml on this machine: every role's managed objects evaluated by one host_compliance task,
with Ansible's own variable precedence; and the errors that stop a host before anything is evaluated."""

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TASK = "rocm_fleet.core.compliance : Evaluate the host against what the inventory declares"


def run_compliance(*args, extra_vars=None, playbook="playbooks/compliance.yml"):
    """The compliance playbook in --check on localhost; returns the host_compliance task's result."""
    options = ["--check"] + (["-e", json.dumps(extra_vars)] if extra_vars else []) + list(args)
    environment = dict(os.environ, ANSIBLE_CONFIG=str(REPO / "ansible.cfg"), ANSIBLE_LOAD_CALLBACK_PLUGINS="1",
                       ANSIBLE_STDOUT_CALLBACK="ansible.builtin.json", ANSIBLE_NOCOLOR="1")
    completed = subprocess.run(
        [str(Path(sys.executable).parent / "ansible-playbook"), "-i", "inventory/localhost", playbook, *options],
        cwd=REPO, env=environment, capture_output=True, text=True, timeout=300)
    assert "Traceback" not in completed.stdout + completed.stderr, completed.stdout + completed.stderr
    tasks = json.loads(completed.stdout)["plays"][0]["tasks"]
    by_name = {task["task"]["name"]: task["hosts"]["localhost"] for task in tasks}
    assert TASK in by_name, list(by_name)
    return by_name[TASK]


def test_every_role_declares_its_items_and_a_host_without_gpus_gets_no_driver_or_tuning():
    result = run_compliance()
    assert not result.get("failed"), result.get("msg")
    assert result["module_calls"] == 1  # the facts were read by the task before: one node_compliance call
    roles = {item["role"] for item in result["results"] if item.get("role")}
    assert roles == {f"rocm_fleet.core.{role}" for role in ("repo", "packages", "kernel", "access", "environment")}
    decision = result["decision"]
    assert decision["gpu_count"] == 0 and decision["tuning"]["boot_params"] == []
    ids = {item["id"] for item in result["results"]}
    assert "ROCM-PKG-003" not in ids  # no amdgpu-dkms where no GPU is
    profile = next(item for item in result["results"] if item["id"] == "ROCM-ENV-001")
    # The profile's text is the role's template rendered as the template module would write it.
    assert profile["expected"]["content"].startswith("#")
    assert "export ROCM_PATH=" in profile["expected"]["content"]
    assert profile["label"] == "environment: /etc/profile.d/rocm.sh"
    assert result["summary"]["total"] == len(result["results"])


def test_extra_vars_win_over_the_roles_own_variables_as_in_a_play():
    result = run_compliance(extra_vars={"environment_profile_path": "/etc/profile.d/elsewhere.sh",
                                        "kernel_sysctls": {"vm.max_map_count": 1048576}})
    assert not result.get("failed"), result.get("msg")
    labels = {item["label"] for item in result["results"] if item.get("label")}
    assert "environment: /etc/profile.d/elsewhere.sh" in labels
    assert "kernel: vm.max_map_count=1048576" in labels


def test_skipped_checks_are_left_out():
    result = run_compliance(extra_vars={"compliance_skip_checks": ["ROCM-ENV-001", "ROCM-REPO-001"]})
    assert not result.get("failed"), result.get("msg")
    assert not {"ROCM-ENV-001", "ROCM-REPO-001"} & {item["id"] for item in result["results"]}


def test_a_misspelled_role_variable_stops_the_host_with_the_nearest_name():
    result = run_compliance(extra_vars={"kernel_boot_param": ["iommu=pt"]})
    assert result["failed"]
    assert "unknown variable kernel_boot_param" in result["msg"]
    assert "did you mean kernel_boot_params?" in result["msg"]
    assert "results" not in result


def test_a_variable_the_roles_cannot_render_names_it():
    result = run_compliance(extra_vars={"environment_variables": {"ROCM_X": "{{ no_such_variable }}"}})
    assert result["failed"]
    assert "no_such_variable" in result["msg"]
