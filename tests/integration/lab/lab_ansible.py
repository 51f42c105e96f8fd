"""Run Ansible against the lab as a site would: ad-hoc modules with JSON results, ROCm from the mirror."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml
from lab_helpers import REPO

BIN = Path(sys.executable).parent
# The release a host without a preflight_rocm_version in the inventory gets.
DEFAULT_ROCM_VERSION = yaml.safe_load((REPO / "roles" / "preflight" / "defaults" / "main.yml").read_text())[
    "preflight_rocm_version"
]
# A second lab instance (ROCM_FLEET_LAB_DIR, ROCM_FLEET_LAB_INVENTORY) runs the lab tests beside the default one.
LAB_INVENTORY = Path(os.environ.get("ROCM_FLEET_LAB_INVENTORY") or REPO / "inventory" / "lab")
# What AMD's Debian instructions do, with the repo role's variables of inventory/lab: the
# armored key under /etc/apt/keyrings (apt reads .asc), a deb822 source with signed-by, the pin.
INSTALL_ROCM_SMI = """\
---
- name: Install rocm-smi from the lab mirror, as the repo and packages roles would
  hosts: all
  # The release decides AMD's Ubuntu suite (__repo_default_apt_suite of the repo role's OS data).
  gather_facts: true
  gather_subset: [min]
  vars_files:
    - {repo_vars}
  vars:
    # The host's release as site.yml would decide it: its inventory pin, else the preflight role's default.
    rocm_version: "{{ preflight_rocm_version | default('{default_rocm_version}') }}"
  tasks:
    - name: ROCm signing key
      ansible.builtin.get_url:
        url: "{{ repo_signing_key_url }}"
        dest: /etc/apt/keyrings/rocm.asc
        mode: "0644"
    - name: ROCm repository (deb822; deb822_repository would need python3-debian on the host)
      ansible.builtin.copy:
        dest: /etc/apt/sources.list.d/rocm.sources
        content: |
          Types: deb
          URIs: {{ repo_rocm_base_url }}/{{ rocm_version }}
          Suites: {{ repo_codename or __repo_default_apt_suite }}
          Components: main
          Architectures: amd64
          Signed-By: /etc/apt/keyrings/rocm.asc
        mode: "0644"
    - name: AMD's packages before Debian's
      ansible.builtin.copy:
        dest: /etc/apt/preferences.d/rocm-pin-600
        content: "Package: *\\nPin: release o=repo.radeon.com\\nPin-Priority: 600\\n"
        mode: "0644"
    - name: rocm-smi
      ansible.builtin.apt:
        name: rocm-smi-lib
        update_cache: true
"""


def ansible_env(extra: dict | None = None) -> dict:
    return {
        **os.environ,
        "PATH": f"{BIN}:{os.environ.get('PATH', '')}",
        "ANSIBLE_CONFIG": str(REPO / "ansible.cfg"),
        **(extra or {}),
    }


def adhoc(
    pattern: str, module: str, args: str = "", timeout: float = 180, inventory: Path = LAB_INVENTORY,
    env: dict | None = None,
) -> dict:
    """Run one module on ``pattern`` (``env``: more environment); return {host: result} from the JSON callback."""
    command = [str(BIN / "ansible"), "-i", str(inventory), pattern, "-m", module]
    if args:
        command += ["-a", args]
    result = subprocess.run(
        command,
        cwd=REPO,
        env=ansible_env({"ANSIBLE_LOAD_CALLBACK_PLUGINS": "1", "ANSIBLE_STDOUT_CALLBACK": "json", **(env or {})}),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    try:
        report = json.loads(result.stdout)
    except ValueError as error:
        output = result.stdout + result.stderr
        raise AssertionError(f"ansible printed no JSON (rc {result.returncode}): {output}") from error
    return report["plays"][0]["tasks"][0]["hosts"]


def gpu_facts(pattern: str, timeout: int = 30) -> dict:
    """{host: ansible_facts.gpu} of gpu_facts run over SSH; fails on a host that did not answer."""
    results = adhoc(pattern, "rocm_fleet.core.gpu_facts", f"timeout={timeout}")
    failed = {
        host: result.get("msg") for host, result in results.items() if result.get("failed") or result.get("unreachable")
    }
    assert not failed, failed
    return {host: result["ansible_facts"]["gpu"] for host, result in results.items()}


def install_rocm_smi(pattern: str, tmp_path: Path) -> None:
    playbook = tmp_path / "install-rocm-smi.yml"
    playbook.write_text(
        INSTALL_ROCM_SMI.replace("{repo_vars}", str(REPO / "roles" / "repo" / "vars" / "Debian.yml")).replace(
            "{default_rocm_version}", DEFAULT_ROCM_VERSION
        )
    )
    result = subprocess.run(
        [str(BIN / "ansible-playbook"), "-i", str(LAB_INVENTORY), "--limit", pattern, str(playbook)],
        cwd=REPO,
        env=ansible_env(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
