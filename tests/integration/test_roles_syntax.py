"""ansible-playbook --syntax-check over every OS family's task files of the provisioning roles.

Only the Debian family runs end to end in the lab; the RHEL-family and SLES task
files are at least parsed, their modules resolved and their variables files loaded
here, so a typo there fails CI instead of a customer's first run.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import yaml
from fleet_testing.roles import provisioning_roles

REPO = Path(__file__).resolve().parents[2]
ANSIBLE_PLAYBOOK = REPO / ".venv" / "bin" / "ansible-playbook"
ROLES = provisioning_roles()

# Task files that only one OS family includes, by the family's vars file.
FAMILY_TASK_FILES = {
    # Debian's GRUB drop-in is a managed file of the kernel role (vars/main.yml): no task file of its own.
    "Debian": {"repo": ["apt.yml"]},
    "RedHat": {"repo": ["dnf.yml", "rpm_key.yml"], "kernel": ["boot_params_grubby.yml"]},
    "Suse": {"repo": ["zypper.yml", "rpm_key.yml"], "kernel": ["boot_params_grub_default.yml"]},
}


def syntax_check(playbook: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, ANSIBLE_CONFIG=str(REPO / "ansible.cfg"), ANSIBLE_NOCOLOR="1")
    return subprocess.run(
        [str(ANSIBLE_PLAYBOOK), "--syntax-check", "-i", "localhost,", str(playbook)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def family_playbook(family: str) -> list[dict]:
    tasks = [
        {
            "name": f"Parse {role} {task_file} ({family})",
            "ansible.builtin.import_role": {"name": f"rocm_fleet.core.{role}", "tasks_from": task_file},
        }
        for role, task_files in FAMILY_TASK_FILES[family].items()
        for task_file in task_files
    ]
    return [{"name": f"{family} family task files", "hosts": "all", "gather_facts": False, "tasks": tasks}]


@pytest.mark.skipif(not ANSIBLE_PLAYBOOK.exists(), reason="no .venv with ansible-playbook")
@pytest.mark.parametrize("family", sorted(FAMILY_TASK_FILES))
def test_family_task_files_pass_syntax_check(tmp_path, family):
    playbook = tmp_path / f"{family.lower()}.yml"
    playbook.write_text(yaml.safe_dump(family_playbook(family), sort_keys=False))
    result = syntax_check(playbook)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.skipif(not ANSIBLE_PLAYBOOK.exists(), reason="no .venv with ansible-playbook")
@pytest.mark.parametrize("playbook", ["provision.yml", "reboot.yml"])
def test_provisioning_playbooks_pass_syntax_check(playbook):
    result = syntax_check(REPO / "playbooks" / playbook)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("family", sorted(FAMILY_TASK_FILES))
@pytest.mark.parametrize("role", ROLES)
def test_every_family_has_the_variables_its_task_files_need(family, role):
    """A role with OS data has a vars file per family, naming only task files that exist (the kernel role's boot
    loader: a task file, or the drop-in its managed files write)."""
    vars_dir = REPO / "roles" / role / "vars"
    family_files = sorted(path.stem for path in vars_dir.glob("*.yml") if path.stem != "main")
    if not family_files:
        pytest.skip(f"{role} has no OS-specific data")
    data = yaml.safe_load((vars_dir / f"{family}.yml").read_text())
    for key, value in data.items():
        if key.endswith("_tasks"):
            assert (REPO / "roles" / role / "tasks" / f"{value}.yml").exists(), (role, family, key, value)
        if key == "__kernel_boot_loader" and value != "grub_dropin":
            assert (REPO / "roles" / role / "tasks" / f"boot_params_{value}.yml").exists(), (family, value)
