"""Helpers that evaluate the roles' own data and Jinja expressions with Ansible's templar.

Tests read the expressions out of the task files instead of copying them, so a
change to a role's logic is what the tests exercise.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template

# tests/conftest.py has initialised the plugin loader with the checkout's collections/.
ROLES = Path(__file__).resolve().parents[2] / "roles"


def load_yaml(relative: str) -> Any:
    return yaml.safe_load((ROLES / relative).read_text())


def provisioning_roles() -> list[str]:
    """The provisioning roles in the order they run: the loop of the "Provision ROCm" play of playbooks/provision.yml
    (each included where the converge plan runs it) is the one list; tests/unit/roles/
    test_provisioning_role_order.py holds every other list of them to it."""
    plays = yaml.safe_load((ROLES.parent / "playbooks" / "provision.yml").read_text())
    play = next(play for play in plays if play.get("name") == "Provision ROCm")
    task = next(task for task in play["tasks"] if "ansible.builtin.include_role" in task)
    return list(task["loop"])


def trusted(value: Any) -> Any:
    """Mark every string as a template, as Ansible does with vars files."""
    if isinstance(value, str):
        return trust_as_template(value)
    if isinstance(value, list):
        return [trusted(item) for item in value]
    if isinstance(value, dict):
        return {key: trusted(item) for key, item in value.items()}
    return value


def render(expression: Any, **variables: Any) -> Any:
    """Template ``expression`` (a string or a structure of strings) with ``variables``."""
    templar = Templar(loader=DataLoader(), variables=trusted(variables))
    return templar.template(trusted(expression))


def evaluate(condition: str, **variables: Any) -> bool:
    """A task's ``when``/``that`` condition, as Ansible evaluates it."""
    return render("{{ (" + condition + ") | bool }}", **variables)


def render_template(relative: str, **variables: Any) -> str:
    """Render a role template the way ansible.builtin.template does (trim_blocks on)."""
    variables.setdefault("ansible_managed", "Ansible managed")
    templar = Templar(loader=DataLoader(), variables=trusted(variables))
    text = trust_as_template((ROLES / relative).read_text())
    return templar.template(text, escape_backslashes=False, overrides={"trim_blocks": True})


def _tasks(tasks: list) -> list:
    """Each task of a task list, the tasks of its blocks (block, rescue, always) after each block."""
    found = []
    for task in tasks or []:
        found.append(task)
        for part in ("block", "rescue", "always"):
            found.extend(_tasks(task.get(part)))
    return found


def find_task(relative: str, name: str) -> dict:
    for task in _tasks(load_yaml(relative)):
        if task.get("name") == name:
            return task
    raise KeyError(f"no task {name!r} in roles/{relative}")
