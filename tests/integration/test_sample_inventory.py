"""inventory/sample is documentation a site copies: every variable in it must be one the roles declare."""

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
VALIDATE = """---
- name: Validate the sample inventory's variables as preflight does
  hosts: all
  gather_facts: false
  connection: local
  tasks:
    - name: Validate
      ansible.builtin.include_role:
        name: rocm_fleet.core.preflight
        tasks_from: validate
"""


def test_sample_inventory_passes_preflight_validation(tmp_path):
    playbook = tmp_path / "validate.yml"
    playbook.write_text(VALIDATE)
    env = dict(os.environ, ANSIBLE_CONFIG=str(REPO / "ansible.cfg"), ANSIBLE_NOCOLOR="1")
    ansible_playbook = str(Path(sys.executable).parent / "ansible-playbook")
    # One host of each group: the 16 training nodes share their variables.
    limit = "gpu-node-01.example.org,ws-01.example.org,ws-02.example.org,login-01.example.org"
    command = [ansible_playbook, "-i", "inventory/sample", "--limit", limit, str(playbook)]
    result = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "failed=0" in result.stdout and "ws-02.example.org" in result.stdout
