"""inventory/sample is documentation a site copies: every variable in it must be one the roles declare."""

import os
import subprocess
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
    result = subprocess.run(["ansible-playbook", "-i", "inventory/sample", str(playbook)], cwd=REPO, env=env,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "failed=0" in result.stdout and "ws-02.example.org" in result.stdout
