"""host_compliance evaluates the roles' own definitions; these keep its few constants equal to what the roles do."""

from __future__ import annotations

from pathlib import Path

import yaml
from ansible_collections.rocm_fleet.core.plugins.action import host_compliance
from ansible_collections.rocm_fleet.core.plugins.plugin_utils import role_context

REPO = Path(__file__).resolve().parents[4]
ROLES = REPO / "roles"


def tasks(relative: str) -> list[dict]:
    return yaml.safe_load((ROLES / relative).read_text())


def test_the_data_files_are_those_preflight_loads():
    load = next(task for task in tasks("preflight/tasks/validate.yml") if "ansible.builtin.include_vars" in task)
    assert tuple(load["loop"]) == role_context.ROLE_DATA_FILES["preflight"]


def test_the_decision_steps_are_preflight_definitions_fixed_in_the_same_order():
    definitions = yaml.safe_load((ROLES / "preflight/vars/main.yml").read_text())
    assert set(host_compliance.DECISION_STEPS) <= set(definitions)
    fixed = tasks("preflight/tasks/decide.yml")[0]["ansible.builtin.set_fact"]
    assert tuple(fixed) == host_compliance.DECISION_STEPS[2:]
    assert "__preflight_decision" in definitions
    assert tasks("preflight/tasks/record.yml")[0]["ansible.builtin.set_fact"] == {
        "preflight_decision": "{{ __preflight_decision }}"
    }


def test_each_role_with_os_files_loads_its_family_then_its_distribution_as_the_action_does():
    for role in ("repo", "packages", "kernel", "environment"):
        families = [name for name in role_context.OS_FAMILIES if (ROLES / role / "vars" / f"{name}.yml").exists()]
        assert families, role
        text = (ROLES / role / "tasks" / "preflight.yml").read_text()
        assert '"{{ ansible_facts.os_family }}.yml"' in text, role
        if any(path.stem not in role_context.OS_FAMILIES + ("main",) for path in (ROLES / role / "vars").glob("*.yml")):
            assert '"{{ ansible_facts.distribution }}.yml"' in text, role


def test_the_roles_that_describe_their_state_are_the_provisioning_roles():
    assert role_context.describing_roles() == sorted(host_compliance.ARGUMENT_SPEC["roles"]["default"])


def test_the_gpu_checks_the_compliance_role_maps_are_all_expected():
    compliance = yaml.safe_load((ROLES / "compliance/vars/main.yml").read_text())
    assert "__compliance_gpu_expect" in compliance and "__compliance_gpu_check_ids" in compliance


def test_the_facts_compared_are_what_the_modules_gather():
    assert host_compliance.DECISION_FACTS[0] == "gpu"
    known = host_compliance._decision_inputs({"ansible_os_family": "Debian", "gpu": {"count": 1}, "other": 1})
    assert known == {"os_family": "Debian", "gpu": {"count": 1}}
    assert host_compliance._known_facts({"ansible_facts": {"gpu": {}}}) is None
    assert host_compliance._known_facts({"ansible_facts": {"gpu": {}, "os_family": "Debian"}}) is not None
