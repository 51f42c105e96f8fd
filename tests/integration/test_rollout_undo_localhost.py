"""The rollout role on this machine: a host whose step fails and whose undo fails too is recorded, not failed.

Two local hosts in batches of one; each host's step fails, then its undo (rollout_on_failure) fails. Without the
record, the only host of the first batch fails, Ansible ends the run at that batch (serial) and the play after it,
where the report is written, never runs.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
INVENTORY = """\
all:
  hosts:
    batch-one:
      ansible_connection: local
      ansible_python_interpreter: "{{ ansible_playbook_python }}"
    batch-two:
      ansible_connection: local
      ansible_python_interpreter: "{{ ansible_playbook_python }}"
"""
PLAYBOOK = """\
- name: Run the steps in batches of one
  hosts: all
  gather_facts: false
  serial: 1
  order: sorted
  vars:
    rollout_max_fail_percentage: 100
    rollout_steps:
      - {step: install, role: site, tasks_from: install}
    rollout_on_failure: {role: site, tasks_from: undo}
  tasks:
    - name: Run the host's steps
      ansible.builtin.include_role:
        name: rocm_fleet.core.rollout
        tasks_from: steps

- name: Say where each host stands
  hosts: all
  gather_facts: false
  tasks:
    - name: Show the result
      ansible.builtin.debug:
        var: rollout_result
"""

pytestmark = pytest.mark.slow


def test_an_undo_that_fails_is_in_the_reason_and_the_run_goes_on(tmp_path):
    tasks = tmp_path / "roles" / "site" / "tasks"
    tasks.mkdir(parents=True)
    (tasks / "install.yml").write_text("- name: Install\n  ansible.builtin.fail:\n    msg: dpkg refused the unpack\n")
    (tasks / "undo.yml").write_text("- name: Restore\n  ansible.builtin.fail:\n    msg: Unmet dependencies\n")
    (tmp_path / "hosts.yml").write_text(INVENTORY)
    (tmp_path / "play.yml").write_text(PLAYBOOK)
    environment = dict(os.environ, ANSIBLE_CONFIG=str(REPO / "ansible.cfg"), ANSIBLE_ROLES_PATH=str(tmp_path / "roles"),
                       ANSIBLE_STDOUT_CALLBACK="ansible.builtin.json", ANSIBLE_NOCOLOR="1")  # fmt: skip
    run = subprocess.run([str(Path(sys.executable).parent / "ansible-playbook"), "-i", str(tmp_path / "hosts.yml"),
                          str(tmp_path / "play.yml")], cwd=REPO, env=environment, capture_output=True, text=True,
                         timeout=300)  # fmt: skip
    plays = json.loads(run.stdout)["plays"]
    assert [play["play"]["name"] for play in plays][-1] == "Say where each host stands", run.stdout[-2000:]
    [shown] = plays[-1]["tasks"]
    for host in ("batch-one", "batch-two"):
        result = shown["hosts"][host]["rollout_result"]
        assert (result["outcome"], result["step"]) == ("failed", "install"), result
        assert result["reason"] == (
            'task "Install": dpkg refused the unpack; undoing it failed too (the host needs a person): '
            'task "Restore": Unmet dependencies'
        ), result
