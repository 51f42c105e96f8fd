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
    fixed = [name for task in tasks("preflight/tasks/decide.yml") for name in task["ansible.builtin.set_fact"]]
    assert tuple(fixed) == host_compliance.DECISION_STEPS[2:]
    assert "__preflight_decision" in definitions


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


def test_the_facts_compared_are_the_gathered_ones_under_either_name():
    module_facts = {"ansible_os_family": "Debian", "ansible_kernel": "6.8", "gpu": {"count": 1}, "ansible_fqdn": "x"}
    play_facts = {"os_family": "Debian", "kernel": "6.8", "gpu": {"count": 1}, "fqdn": "x"}
    assert host_compliance._decision_inputs(module_facts) == host_compliance._decision_inputs(play_facts) == {
        "os_family": "Debian", "kernel": "6.8", "gpu": {"count": 1}
    }


def test_known_facts_count_only_when_read_from_the_same_gpu_sources():
    gpu = {"count": 1, "sources": {"sysfs": "ok", "rocm_smi": "skipped", "amd_smi": "skipped", "rocminfo": "skipped"}}
    task_vars = {"ansible_facts": {"gpu": gpu, "os_family": "Debian"}}
    assert host_compliance._known_facts(task_vars, ["sysfs"]) == {"gpu": gpu, "os_family": "Debian"}
    # preflight's default reads every tool: facts from it would never compare equal with a sysfs read
    assert host_compliance._known_facts(task_vars, ["sysfs", "rocm_smi"]) is None
    assert host_compliance._known_facts({"ansible_facts": {"gpu": gpu}}, ["sysfs"]) is None
