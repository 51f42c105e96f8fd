"""One ordered list of the provisioning roles: playbooks/provision.yml's "Provision ROCm" play.

That play includes each role where the converge plan runs it, in the order its loop lists them, so the loop is
the source; tools/readme_roles.py derives its order from it, and every other list of the roles, in a playbook, a
role, a plugin or its documentation, must equal it (fleet_testing.roles.provisioning_roles reads it for tests).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from ansible_collections.rocm_fleet.core.plugins.action import host_compliance
from ansible_collections.rocm_fleet.core.plugins.modules import host_compliance as host_compliance_doc
from fleet_testing.roles import load_yaml, provisioning_roles

REPO = Path(__file__).resolve().parents[3]
ORDER = provisioning_roles()
PREFIX = "rocm_fleet.core."


def _provision_yml_validation_loop():
    plays = yaml.safe_load((REPO / "playbooks" / "provision.yml").read_text())
    task = next(task for play in plays for task in play.get("tasks", [])
                if task.get("ansible.builtin.include_role", {}).get("tasks_from") == "preflight")
    return task["loop"]


def _loop(relative, module):
    [task] = [task for task in load_yaml(relative) if module in task and "loop" in task]
    return task["loop"]


def _role_vars_imports():
    return [task["ansible.builtin.import_role"]["name"].removeprefix(PREFIX)
            for task in load_yaml("compliance/tasks/role_vars.yml")]


def _readme_roles():
    namespace = {"__file__": str(REPO / "tools" / "readme_roles.py"), "__name__": "readme_roles"}
    exec(compile((REPO / "tools" / "readme_roles.py").read_text(), "readme_roles.py", "exec"), namespace)
    return list(namespace["ROLES"])


# Each other list of the provisioning roles: where it is, how to read it, and what it lists before them.
PLACES = {
    "playbooks/provision.yml: the validation loop of its first play": (_provision_yml_validation_loop, []),
    "roles/onboard/tasks/gate_preflight.yml: the validation loop":
        (lambda: _loop("onboard/tasks/gate_preflight.yml", "ansible.builtin.include_role"), []),
    "roles/onboard/tasks/gate_provision.yml: the provisioning loop":
        (lambda: _loop("onboard/tasks/gate_provision.yml", "ansible.builtin.include_tasks"), []),
    "roles/compliance/vars/main.yml: __compliance_roles":
        (lambda: load_yaml("compliance/vars/main.yml")["__compliance_roles"], []),
    "roles/compliance/tasks/role_vars.yml: the vars imports": (_role_vars_imports, ["preflight"]),
    "plugins/action/host_compliance.py: ROLES": (lambda: list(host_compliance.ROLES), []),
    "plugins/modules/host_compliance.py: the documented default of roles":
        (lambda: yaml.safe_load(host_compliance_doc.DOCUMENTATION)["options"]["roles"]["default"], []),
    "tools/readme_roles.py: ROLES": (_readme_roles, ["preflight"]),
}


def test_the_source_lists_each_provisioning_role_once():
    assert ORDER and len(set(ORDER)) == len(ORDER)
    for role in ORDER:
        assert (REPO / "roles" / role / "tasks" / "preflight.yml").is_file(), role


@pytest.mark.parametrize("place", sorted(PLACES))
def test_every_list_of_the_provisioning_roles_is_provision_yml_s(place):
    read, before = PLACES[place]
    assert read() == [*before, *ORDER], "%s differs from the Provision ROCm play of playbooks/provision.yml" % place


def order_spelled_out(text):
    """Each run of three or more provisioning roles that prose gives as an order ('repo, packages ... in order')."""
    name = "`?(?:%s)`?" % "|".join(ORDER)
    listed = re.compile(r"%s(?:(?:,| and|, and) %s){2,} in [^.]{0,30}order" % (name, name))
    return listed.findall(" ".join(text.split()))


def test_the_docs_leave_the_order_to_provision_yml():
    # Prose that spells the order out goes stale (five READMEs and the onboarding guide had lost partitions).
    docs = [REPO / "README.md", *REPO.glob("docs/*.md"), *REPO.glob("roles/*/README.md")]
    found = [(path.relative_to(REPO).as_posix(), text) for path in docs for text in order_spelled_out(path.read_text())]
    assert found == []
    assert order_spelled_out("runs preflight and then repo,\n packages, kernel, access and environment in that order.")


def test_a_role_skips_its_checks_only_where_provision_yml_checked_them_before_any_change():
    """provision.yml checks the variables of the roles it runs in its first play, then includes each with
    __provision_checked: the role's own checks (tasks/preflight.yml) do not run twice. No other place sets it."""
    for role in ORDER:
        first = load_yaml(f"{role}/tasks/main.yml")[0]
        assert first.get("ansible.builtin.include_tasks") == "preflight.yml", (role, first)
        assert first.get("when") == "not (__provision_checked | default(false))", (role, first)
    setting = [path.relative_to(REPO) for folder in ("playbooks", "roles") for path in (REPO / folder).rglob("*.yml")
               if re.search(r"^\s+__provision_checked:", path.read_text(), re.MULTILINE)]
    assert setting == [Path("playbooks/provision.yml")], setting
    plays = yaml.safe_load((REPO / "playbooks" / "provision.yml").read_text())
    includes = [(number, task) for number, play in enumerate(plays) for task in play.get("tasks", [])
                if task.get("ansible.builtin.include_role", {}).get("name") == "rocm_fleet.core.{{ __provision_role }}"]
    [(checked_in, checks)] = [(n, t) for n, t in includes if t["ansible.builtin.include_role"].get("tasks_from")]
    [(applied_in, applies)] = [(n, t) for n, t in includes if "vars" in t]
    assert checks["ansible.builtin.include_role"]["tasks_from"] == "preflight"
    assert applies["vars"] == {"__provision_checked": True, "__kernel_pending_read_after_the_roles": True}
    assert checked_in < applied_in and checks["loop"] == applies["loop"] == ORDER
    assert checks["when"] == applies["when"], "the roles checked must be the roles applied"


def test_provision_yml_reads_the_pending_reboot_once_after_every_role_and_not_again_before_its_batches():
    """The kernel role's own read is skipped only where playbooks/reboot.yml reads it after every role (a later
    role's handlers leave markers); the batches skip theirs only because reboot.yml's first play has just read it."""
    kernel_read = load_yaml("kernel/tasks/main.yml")[-1]
    assert kernel_read["ansible.builtin.import_tasks"] == "reboot_pending.yml"
    assert kernel_read["when"] == "not (__kernel_pending_read_after_the_roles | default(false))"
    plays = yaml.safe_load((REPO / "playbooks" / "provision.yml").read_text())
    names = [play.get("name") for play in plays]
    applied_in = next(n for n, play in enumerate(plays) for task in play.get("tasks", [])
                      if task.get("vars", {}).get("__kernel_pending_read_after_the_roles") is True)
    reboot_in = next(n for n, play in enumerate(plays) if play.get("ansible.builtin.import_playbook") == "reboot.yml")
    assert applied_in < reboot_in, names
    find, batches = yaml.safe_load((REPO / "playbooks" / "reboot.yml").read_text())[:2]
    [read] = [task for task in find["tasks"]
              if task.get("ansible.builtin.import_role", {}).get("tasks_from") == "reboot_pending"]
    # Skipped only where this run's plan ran no role, which proved no parameter inactive and no marker left.
    assert read["when"] == "compliance_converge_plan.roles | default(none) != []"
    [reboot] = [task for task in batches["tasks"]
                if task.get("ansible.builtin.include_role", {}).get("tasks_from") == "reboot"]
    assert reboot["vars"] == {"__kernel_pending_read_before": True}
    first = load_yaml("kernel/tasks/reboot.yml")[0]
    assert first["ansible.builtin.import_tasks"] == "reboot_pending.yml"
    assert first["when"] == "not (__kernel_pending_read_before | default(false))"
