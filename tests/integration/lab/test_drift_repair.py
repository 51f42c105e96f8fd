"""Issue 9 on the lab: each managed object has one definition, which site.yml applies and drift checks.

- -e overriding a role's variable gives the same change in drift and in --check.
- One edit to one definition in a copy of the collection (a file mode, a sysctl value of the GPU catalog, one
  object more in a role's list) shows as the same change in --check and in drift, with no other file edited.

Each kind of managed item broken on a converged host (mode, owner, content, absence, an unwanted file,
membership, a live device node, a link), reported under the label --check prints, repaired by site.yml and clean
afterwards: test_drift.py's BREAKS, in the lab's one batched break-report-repair pass.
"""

from __future__ import annotations

import filecmp
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from fleet_testing.lab_ansible import BIN, LAB_INVENTORY, ansible_env
from fleet_testing.lab_drift import change_labels, check_labels, drift
from fleet_testing.lab_helpers import REPO
from fleet_testing.lab_site import run_playbook

pytestmark = [pytest.mark.lab, pytest.mark.slow]


def test_an_extra_var_gives_the_same_changes_in_drift_and_check_mode(compliant_lab, tmp_path):
    """-e wins over a role default and over a role's vars/main.yml, in a provisioning play and in drift alike."""
    host = "w7900-01"
    overrides = [json.dumps({"environment_profile_path": "/etc/profile.d/rocm-site.sh"}),
                 json.dumps({"__environment_variables": {"ROCM_FLEET_SITE": "lab"}})]
    extra = [option for value in overrides for option in ("-e", value)]
    code, report, result = drift(tmp_path, "--limit", host, *extra)
    check_run = run_playbook("site.yml", "--check", "--limit", host, *extra)
    assert code == 2 and check_run.returncode == 0, result.stderr[-3000:] + check_run.tail(3000)
    assert change_labels(report["hosts"][host]) == check_labels(check_run, host) == [
        "environment: /etc/profile.d/rocm-site.sh", "environment: /etc/systemd/system.conf.d/rocm-fleet.conf"]


def collection_copy(destination: Path) -> Path:
    """What a maintainer edits: the collection's roles, plugins and playbooks, with ansible.cfg and the link."""
    destination.mkdir()
    for name in ("ansible.cfg", "galaxy.yml", "site.yml"):
        shutil.copy2(REPO / name, destination / name)
    for name in ("meta", "plugins", "roles", "playbooks"):
        shutil.copytree(REPO / name, destination / name, ignore=shutil.ignore_patterns("__pycache__"))
    link = destination / "collections" / "ansible_collections" / "rocm_fleet" / "core"
    link.parent.mkdir(parents=True)
    link.symlink_to(Path("../../.."))
    return destination


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert text.count(old) >= 1, (path, old)
    path.write_text(text.replace(old, new, 1))


def edited_files(copy: Path) -> set[str]:
    changed = set()
    for path in copy.rglob("*"):
        relative = path.relative_to(copy)
        mine = path.is_file() and not path.is_symlink() and "collections" not in relative.parts
        if mine and not filecmp.cmp(path, REPO / relative, shallow=False):
            changed.add(str(relative))
    return changed


def test_one_definition_changed_shows_as_the_same_change_in_check_mode_and_drift(compliant_lab, tmp_path):
    host = "mi300x-01"
    copy = collection_copy(tmp_path / "collection")
    edit(copy / "roles/environment/vars/main.yml", "    path: \"{{ environment_profile_path }}\"\n",
         "    path: \"{{ environment_profile_path }}\"\n    mode: \"0640\"\n")
    # The first class of the catalog is the MI300X: its sysctl value is the kernel role's wanted value.
    edit(copy / "roles/preflight/vars/gpu_catalog.yml", "sysctls: {kernel.numa_balancing: 0}",
         "sysctls: {kernel.numa_balancing: 1}")
    edit(copy / "roles/access/vars/main.yml", "__access_managed:\n",
         "__access_managed:\n  - kind: directory\n    id: ROCM-ACCESS-003\n    title: a directory for site rules\n"
         "    path: /etc/udev/rules.d/rocm-fleet.d\n")
    assert edited_files(copy) == {"roles/environment/vars/main.yml", "roles/preflight/vars/gpu_catalog.yml",
                                  "roles/access/vars/main.yml"}
    env = ansible_env({"ANSIBLE_CONFIG": str(copy / "ansible.cfg"), "ROCM_FLEET_COLLECTION_ROOT": str(copy)})
    check_run = subprocess.run(
        [str(BIN / "ansible-playbook"), "-i", str(LAB_INVENTORY), "site.yml", "--check", "--limit", host],
        cwd=copy, env=changes_env(env, tmp_path / "changes.json"), capture_output=True, text=True, timeout=900)
    assert check_run.returncode == 0, check_run.stdout[-3000:]
    printed = sorted(set(json.loads((tmp_path / "changes.json").read_text())["objects"].get(host, [])))
    out = tmp_path / "report"
    result = subprocess.run([str(BIN / "rocm-fleet"), "drift", "-i", str(LAB_INVENTORY), "--limit", host,
                             "--output-dir", str(out)], cwd=tmp_path, env=env, capture_output=True, text=True,
                            timeout=900)
    assert result.returncode == 2, result.stdout + result.stderr[-3000:]
    found = json.loads((out / "drift.json").read_text())["hosts"][host]
    assert change_labels(found) == printed == [
        "access: /etc/udev/rules.d/rocm-fleet.d", "environment: /etc/profile.d/rocm.sh",
        "kernel: kernel.numa_balancing=1"]


def changes_env(env: dict, log: Path) -> dict:
    callbacks = Path(__file__).parent / "callbacks"
    return {**env, "ANSIBLE_CALLBACKS_ENABLED": "rocm_fleet_changes", "ROCM_FLEET_CHANGES_LOG": str(log),
            "ANSIBLE_CALLBACK_PLUGINS": str(callbacks), "ANSIBLE_NOCOLOR": os.environ.get("ANSIBLE_NOCOLOR", "1")}
