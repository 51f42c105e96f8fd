"""A command without -i never acts on the lab's definitions: ansible.cfg names no default inventory."""

from __future__ import annotations

import configparser
import os
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def lab_hosts() -> set[str]:
    def walk(group: dict) -> set[str]:
        names = set((group.get("hosts") or {}).keys())
        for child in (group.get("children") or {}).values():
            names |= walk(child or {})
        return names

    return walk(yaml.safe_load((REPO / "inventory" / "lab" / "hosts.yml").read_text())["all"])


def test_ansible_cfg_has_no_default_inventory():
    config = configparser.ConfigParser()
    config.read(REPO / "ansible.cfg")
    assert "inventory" not in config["defaults"]
    assert "hostfile" not in config["defaults"]


def test_site_yml_without_inventory_targets_no_lab_host():
    env = {key: value for key, value in os.environ.items() if key != "ANSIBLE_INVENTORY"}
    env.update(ANSIBLE_CONFIG=str(REPO / "ansible.cfg"), ANSIBLE_NOCOLOR="1")
    result = subprocess.run([str(BIN / "ansible-playbook"), "site.yml", "--list-hosts"], cwd=REPO, env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    listed = {line.strip() for line in result.stdout.splitlines()}
    assert "mi300x-01" in lab_hosts()
    assert listed & lab_hosts() == set(), result.stdout
