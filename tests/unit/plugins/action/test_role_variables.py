"""The role_variables action: the host's variables, templated where they are checked, against the roles' specs."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template
from ansible_collections.rocm_fleet.core.plugins.action import role_variables

REPO = Path(__file__).resolve().parents[4]
HOST = {"inventory_hostname": "gpu-01"}


def run(args=None, **variables):
    """One run of the action as the task executor would start it, with a stand-in task and connection."""
    task_vars = dict(HOST, **variables)
    task = SimpleNamespace(args=dict(args or {}), async_val=0, check_mode=False, action="role_variables")
    connection = SimpleNamespace(_shell=SimpleNamespace(tmpdir=None))
    loader = DataLoader()
    action = role_variables.ActionModule(task, connection, None, loader, Templar(loader=loader, variables=task_vars))
    return action.run(task_vars=task_vars)


def test_fitting_variables_pass_and_change_nothing():
    result = run({"roles": ["kernel"]}, kernel_boot_params=["iommu=pt"], kernel_reboot_pending=True)
    assert not result.get("failed") and result["changed"] is False


def test_a_misspelled_variable_fails_naming_host_and_the_nearest_name():
    result = run({"roles": ["kernel"]}, kernel_bootparams="iommu=pt")
    assert result["failed"] and result["msg"].startswith("host gpu-01: unknown variable kernel_bootparams")
    assert "did you mean kernel_boot_params?" in result["msg"]


def test_problems_are_joined_and_values_are_templated_before_the_check():
    result = run(kernel_boot_params=trust_as_template("{{ params }}"), params="iommu=pt", access_user=[])
    assert result["failed"]
    assert result["msg"] == (
        "host gpu-01: unknown variable access_user, not declared in roles/access/meta/argument_specs.yml;"
        " did you mean access_users?; kernel_boot_params must be a YAML list, not a string"
    )
    assert not run(kernel_boot_params=trust_as_template("{{ params }}"), params=["iommu=pt"]).get("failed")


def test_a_value_that_cannot_be_templated_is_named():
    result = run({"roles": ["kernel"]}, kernel_sysctls=trust_as_template("{{ no_such_variable }}"))
    assert result["failed"] and "host gpu-01: kernel_sysctls cannot be templated" in result["msg"]
    assert "no_such_variable" in result["msg"]


def test_only_the_checked_roles_values_are_templated():
    assert not run({"roles": ["kernel"]}, access_users=trust_as_template("{{ no_such_variable }}")).get("failed")


@pytest.mark.parametrize(("args", "words"), [
    ({"roles": ["kernal"]}, "role kernal has no meta/argument_specs.yml"),
    ({"rols": ["kernel"]}, "Unsupported parameters"),
])
def test_bad_arguments_fail_with_a_message(args, words):
    result = run(args)
    assert result["failed"] and result["msg"].startswith("host gpu-01: ") and words in result["msg"]


def test_any_error_becomes_a_failed_result(monkeypatch):
    def broken():
        raise RuntimeError("roles directory gone")

    monkeypatch.setattr(role_variables.role_variables, "read_specs", broken)
    assert run() == {"failed": True, "changed": False, "msg": "host gpu-01: roles directory gone"}


def localhost_ansible():
    from fleet_testing import localhost_ansible as module

    return module


@pytest.mark.parametrize(("extra_vars", "words"), [
    ("kernel_bootparams=x", "unknown variable kernel_bootparams, not declared in roles/kernel/meta/argument_specs.yml;"
                            " did you mean kernel_boot_params?"),
    (json.dumps({"kernel_boot_params": "iommu=pt"}), "kernel_boot_params must be a YAML list, not a string"),
])
def test_through_ansible_with_extra_vars(extra_vars, words):
    helper = localhost_ansible()
    completed = helper.run_on_localhost("rocm_fleet.core.role_variables", "-a", "roles=kernel", "-e", extra_vars)
    assert "Traceback" not in completed.stdout + completed.stderr, completed.stdout + completed.stderr
    result = helper.localhost_result(completed)
    assert result["failed"] and result["msg"] == "host localhost: " + words


def test_a_value_that_breaks_out_of_its_file_fails_naming_host_variable_and_character():
    result = run({"roles": ["kernel"]}, kernel_modprobe_options={"amdgpu": {"noretry": "0\ninstall amdgpu /bin/sh"}})
    assert result["failed"] and result["changed"] is False
    assert result["msg"].startswith("host gpu-01: kernel_modprobe_options.amdgpu.noretry contains '\\n' (newline)")


def test_names_only_checks_the_syntax_of_what_can_be_templated_and_leaves_the_rest_to_the_role():
    result = run({"values": False}, kernel_boot_params=["x`id`"],
                 kernel_sysctls=trust_as_template("{{ preflight_decision.tuning.sysctls }}"))
    assert result["failed"] and result["msg"].startswith("host gpu-01: kernel_boot_params[0] contains '`' (backtick)")
    assert "kernel_sysctls" not in result["msg"]
