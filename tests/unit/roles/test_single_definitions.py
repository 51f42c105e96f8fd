"""Each managed object is defined once: in its role's __<role>_managed, which the tasks loop over.

No task of a provisioning role names a managed path, template, owner or mode of its own: every task that
writes state with a file, template, copy, line, sysctl, group or user module takes it from a loop item (a
managed object), and no managed path or template appears in any task or handler file.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[3]
ROLES = ("repo", "packages", "kernel", "access", "environment")
WRITING_MODULES = {
    "ansible.builtin.template", "ansible.builtin.copy", "ansible.builtin.file", "ansible.builtin.lineinfile",
    "ansible.posix.sysctl", "ansible.builtin.group", "ansible.builtin.user", "ansible.builtin.blockinfile",
}
# Tasks that write what no drift check covers, each for a reason.
NOT_MANAGED_OBJECTS = {
    ("repo", "rpm_key.yml", "Install the signing key"): "RPM hosts: rpm checks it on import; drift checks apt only",
    ("kernel", "reboot.yml", "Clear the reboot markers of the previous boot"): "/run markers, emptied by a reboot",
    # The kernel update flow (playbooks/kernel_update.yml) keeps the boot default; site.yml never sets it.
    ("kernel", "update_pin.yml", "Make GRUB boot the saved entry (GRUB_DEFAULT=saved)"):
        "kernel updates only: the saved boot default, with grub-set-default",
    ("kernel", "update_pin.yml", "Keep new kernels from becoming the default on install (UPDATEDEFAULT=no)"):
        "kernel updates only: EL's install-time default",
    ("kernel", "update_default.yml", "Create the reboot marker directory"): "/run markers, emptied by a reboot",
    ("kernel", "update_default.yml", "Record that the host must reboot into the new kernel"):
        "/run markers, emptied by a reboot",
    ("access", "udev.yml", "Remove udev rules files that open the GPU device nodes to every user"):
        "the paths the udev_open_rules object's own check found removable (ROCM-ACCESS-004)",
}


def tasks_of(role: str):
    for path in sorted((REPO / "roles" / role / "tasks").glob("*.yml")):
        for task in yaml.safe_load(path.read_text()) or []:
            for inner in task.get("block", [task]):
                yield path.name, inner


def managed_values(role: str) -> set[str]:
    """Literal paths and templates of the role's objects, and the OS files' paths they read (__kernel_grub_dropin)."""
    data = yaml.safe_load((REPO / "roles" / role / "vars" / "main.yml").read_text()) or {}
    objects = [obj for value in data.values() if isinstance(value, list) for obj in value if isinstance(obj, dict)]
    fields = [str(obj.get(key, "")) for obj in objects for key in ("path", "template")]
    values = {field for field in fields if field and "{{" not in field}
    referenced = set(re.findall(r"{{\s*(__\w+)", " ".join(fields)))
    for path in (REPO / "roles" / role / "vars").glob("*.yml"):
        os_data = yaml.safe_load(path.read_text()) or {}
        values.update(str(os_data[name]) for name in referenced if isinstance(os_data.get(name), str))
    return values


@pytest.mark.parametrize("role", ROLES)
def test_every_task_that_writes_state_takes_it_from_a_managed_object(role):
    for file_name, task in tasks_of(role):
        module = next((key for key in task if key in WRITING_MODULES), None)
        if module is None or (role, file_name, task.get("name")) in NOT_MANAGED_OBJECTS:
            continue
        arguments = yaml.safe_dump(task[module])
        assert "item." in arguments, (role, file_name, task.get("name"), "writes state that no object defines")


@pytest.mark.parametrize("role", ROLES)
def test_no_task_or_handler_file_repeats_a_managed_path_or_template(role):
    values = managed_values(role)
    assert values, role
    for other in [*ROLES, "common"]:
        for folder in ("tasks", "handlers"):
            for path in (REPO / "roles" / other / folder).glob("*.yml"):
                text = path.read_text()
                assert not [value for value in values if value in text], (role, path)
