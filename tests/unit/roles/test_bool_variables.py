"""A boolean role variable means what it says when it comes from ``-e name=false``.

``-e pull_timer_enabled=false`` makes the string "false", and a role's argument spec validates it as a bool
without converting it. Alone in a condition Ansible reads the string as false, but in an expression it is a
non-empty string: ``"false" and true`` is true, so the pull benchmark's ``-e pull_timer_enabled=false`` started
every host's timer. Every expression of the roles (conditions, ``{{ }}`` in vars and tasks, templates) reads
each public variable that ``meta/argument_specs.yml`` types bool through ``| bool``.
"""

from __future__ import annotations

import functools
import re

import pytest
import yaml
from fleet_testing.roles import ROLES, evaluate, find_task

CONDITION_KEYS = {"when", "that", "failed_when", "changed_when", "until"}
JINJA = re.compile(r"\{\{(.*?)\}\}|\{%(.*?)%\}", re.S)
STRING_LITERAL = re.compile(r"'[^']*'|\"[^\"]*\"")


@functools.cache  # read once: each parametrized test asks (about 90 YAML parses of every argument spec)
def bool_variables() -> frozenset[str]:
    names = set()
    for spec in ROLES.glob("*/meta/argument_specs.yml"):
        for entry in yaml.safe_load(spec.read_text())["argument_specs"].values():
            names.update(name for name, option in (entry.get("options") or {}).items() if option.get("type") == "bool")
    return frozenset(names)


def expressions(node, key=None):
    """Each Jinja expression of a parsed YAML file: conditions whole, other strings' {{ }} and {% %} blocks."""
    if isinstance(node, dict):
        for child_key, child in node.items():
            yield from expressions(child, child_key)
    elif isinstance(node, list):
        for child in node:
            yield from expressions(child, key)
    elif isinstance(node, str):
        if key in CONDITION_KEYS and "{{" not in node:
            yield node
        else:
            yield from (first or second for first, second in JINJA.findall(node))


def bare_reads(expression: str, names: set[str]) -> list[str]:
    code = STRING_LITERAL.sub("''", expression)  # prose inside quotes names variables without reading them
    read = re.compile(r"\b(%s)\b(?!\s*\|\s*(?:default\([^)]*\)\s*\|\s*)?bool\b)(?!\s*is\s+(?:not\s+)?defined)"
                      % "|".join(sorted(names)))
    return read.findall(code)


def role_files():
    for path in sorted(ROLES.rglob("*")):
        relative = path.relative_to(ROLES)
        if path.suffix in {".yml", ".j2"} and relative.parts[1] not in {"meta", "defaults"}:
            yield relative


def test_the_roles_have_boolean_variables_to_hold():
    assert {"kernel_reboot_allowed", "pull_timer_enabled", "access_udev_rules"} <= bool_variables()


@pytest.mark.parametrize("relative", list(role_files()), ids=str)
def test_each_boolean_variable_is_read_through_the_bool_filter(relative):
    names = bool_variables()
    text = (ROLES / relative).read_text()
    found = JINJA.findall(text) if relative.suffix == ".j2" else None
    blocks = [first or second for first, second in found] if found is not None else expressions(yaml.safe_load(text))
    bare = sorted({name for block in blocks for name in bare_reads(block, names)})
    assert not bare, f"roles/{relative} reads {bare} without '| bool': -e {bare[0]}=false can count as true"


@pytest.mark.parametrize("given", ["false", "no", False])
def test_a_timer_turned_off_on_the_command_line_is_not_started(given):
    """The condition the pull benchmark met: "false" and true is true in Jinja."""
    task = find_task("pull/tasks/units.yml", "Enable and start the timer")
    variables = {"pull_timer_enabled": given, "__pull_systemd": {"stat": {"exists": True}},
                 "ansible_check_mode": False, "__pull_unit_files": {"changed": False}}
    assert not evaluate(task["when"], **variables)


def test_the_check_finds_a_bare_read():
    assert bare_reads("kernel_reboot_pending and kernel_reboot_allowed", {"kernel_reboot_allowed"})
    assert not bare_reads("kernel_reboot_allowed | bool and 'kernel_reboot_allowed is true'", {"kernel_reboot_allowed"})
    assert not bare_reads("upgrade_rollback | default(false) | bool", {"upgrade_rollback"})
