"""`ansible localhost -m rocm_fleet.core.host_compliance` on this machine: the roles' declared state, rendered on the
controller, evaluated by node_compliance here; and the errors that stop a host before anything is evaluated."""

import json

from localhost_ansible import localhost_result, run_on_localhost


def run_action(args="", extra_vars=None):
    options = ["--check"] + (["-a", args] if args else []) + (["-e", json.dumps(extra_vars)] if extra_vars else [])
    completed = run_on_localhost("rocm_fleet.core.host_compliance", *options)
    assert "Traceback" not in completed.stdout + completed.stderr, completed.stdout + completed.stderr
    return localhost_result(completed)


def test_every_role_declares_its_items_and_a_host_without_gpus_gets_no_driver_or_tuning(tmp_path):
    result = run_action()
    assert not result.get("failed"), result.get("msg")
    assert result["module_calls"] == 2  # no facts known yet: gpu_facts, then node_compliance
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
    assert result["summary"]["total"] == len(result["results"])


def test_skipped_checks_are_left_out():
    result = run_action("skip_checks=ROCM-ENV-001,ROCM-REPO-001")
    assert not result.get("failed"), result.get("msg")
    assert not {"ROCM-ENV-001", "ROCM-REPO-001"} & {item["id"] for item in result["results"]}


def test_a_misspelled_role_variable_stops_the_host_with_the_nearest_name():
    result = run_action(extra_vars={"kernel_boot_param": ["iommu=pt"]})
    assert result["failed"]
    assert "unknown variable kernel_boot_param" in result["msg"]
    assert "did you mean kernel_boot_params?" in result["msg"]
    assert "results" not in result


def test_a_role_without_a_declared_state_is_named():
    result = run_action("roles=kernel,onboard")
    assert result["failed"]
    assert "roles onboard have no templates/desired_state.json.j2" in result["msg"]
    assert "kernel" in result["msg"]


def test_a_variable_the_roles_cannot_render_names_the_role():
    result = run_action(extra_vars={"environment_variables": {"ROCM_X": "{{ no_such_variable }}"}})
    assert result["failed"]
    assert "role environment" in result["msg"] or "roles/environment" in result["msg"]
    assert "no_such_variable" in result["msg"]


def test_an_unknown_gpu_source_is_refused_by_the_argument_spec():
    result = run_action("gpu_sources=nvml")
    assert result["failed"]
    assert "gpu_sources" in result["msg"] and "nvml" in result["msg"]
