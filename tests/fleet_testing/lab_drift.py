"""Drift runs against the lab, shared by the lab tests that make a change and look for it in drift's report."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from fleet_testing.lab_ansible import BIN, LAB_INVENTORY, adhoc, ansible_env
from fleet_testing.lab_helpers import REPO
from rocm_fleet.drift.model import Change


def drift(tmp_path: Path, *args: str, inventory: Path = LAB_INVENTORY) -> tuple[int, dict, subprocess.CompletedProcess]:
    out = tmp_path / "report"
    result = subprocess.run(
        [str(BIN / "rocm-fleet"), "drift", "-i", str(inventory), "--output-dir", str(out), *args],
        cwd=REPO, env=ansible_env(), capture_output=True, text=True, timeout=900,
    )
    report = json.loads((out / "drift.json").read_text()) if (out / "drift.json").exists() else {}
    return result.returncode, report, result


def failed_checks(host: dict) -> set[str]:
    return {check["id"] for check in host["checks"] if check["status"] in ("fail", "error")}


def change_labels(host: dict) -> list[str]:
    return sorted(Change.from_dict(change, "change").label for change in host["changes"])


def check_labels(run, host: str) -> list[str]:
    """What site.yml --check printed for each change on ``host``: a managed object's label, once each."""
    return sorted(set(run.changed_objects.get(host, [])))


def compliance_task(host: str, env: dict | None = None) -> tuple[bool, dict]:
    """playbooks/drift.yml on ``host`` alone: (whether the play read its facts first, the host_compliance result).

    With every result whole and the decision (``compliance_result_detail=all``; the play asks for findings only).
    """
    result = subprocess.run(
        [str(BIN / "ansible-playbook"), "-i", str(LAB_INVENTORY), "playbooks/drift.yml", "--limit", host,
         "-e", "compliance_result_detail=all"], cwd=REPO,
        env=ansible_env({"ANSIBLE_LOAD_CALLBACK_PLUGINS": "1", "ANSIBLE_STDOUT_CALLBACK": "json", **(env or {})}),
        capture_output=True, text=True, timeout=300)
    tasks = {task["task"]["name"]: task["hosts"][host] for task in json.loads(result.stdout)["plays"][0]["tasks"]}
    evaluated = tasks["rocm_fleet.core.compliance : Evaluate the host against what the inventory declares"]
    assert not evaluated.get("failed"), evaluated.get("msg")
    # Smart gathering leaves the play's fact gathering out where the fact cache has the host's facts.
    return "Gathering Facts" in tasks, evaluated


def shell(pattern: str, command: str, inventory: Path = LAB_INVENTORY) -> None:
    results = adhoc(pattern, "ansible.builtin.shell", command, inventory=inventory)
    failed = {host: result.get("stderr") or result.get("msg") for host, result in results.items()
              if result.get("failed")}
    assert not failed, failed


def shell_each(commands: dict[str, list[str]], inventory: Path = LAB_INVENTORY) -> None:
    """Each host's commands, in order, in one ad-hoc run over all of them (``set -e``: the first that fails stops
    that host's script and fails the test with its message)."""
    scripts = {host: "set -e\n" + "\n".join(lines) for host, lines in commands.items() if lines}
    variables = json.dumps({"__lab_scripts": scripts})
    results = adhoc(",".join(scripts), "ansible.builtin.shell", '{"cmd": "{{ __lab_scripts[inventory_hostname] }}"}',
                    inventory=inventory, extra_vars=variables)
    failed = {host: result.get("stderr") or result.get("msg") for host, result in results.items()
              if result.get("failed")}
    assert not failed and set(results) == set(scripts), (failed, sorted(results))


def reboot(pattern: str) -> None:
    results = adhoc(pattern, "ansible.builtin.reboot", "reboot_timeout=300", timeout=600)
    failed = {host: result.get("msg") for host, result in results.items() if result.get("failed")}
    assert not failed, failed
