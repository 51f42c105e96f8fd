"""playbooks/drift.yml publishes its summary with set_stats, once, on the controller: a real run on this machine.

Two local hosts (this machine, twice) and one that cannot be reached; the json callback with
show_custom_stats gives the stats as AWX receives them (its artifacts), and every task's hosts.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
STATS_TASK = "Publish the run's summary for an AWX workflow (rocm_fleet_drift)"
COMPLIANCE_TASK = "rocm_fleet.core.compliance : Evaluate the host against what the inventory declares"
INVENTORY = """\
all:
  hosts:
    localhost:
      ansible_connection: local
      ansible_python_interpreter: "{{ ansible_playbook_python }}"
    localhost-again:
      ansible_connection: local
      ansible_python_interpreter: "{{ ansible_playbook_python }}"
    nowhere:
      ansible_host: 127.0.0.1
      ansible_port: 9
      ansible_user: nobody
"""

pytestmark = pytest.mark.slow


def _playbook(*args: str, **env: str) -> subprocess.CompletedProcess:
    environment = dict(os.environ, **env, ANSIBLE_CONFIG=str(REPO / "ansible.cfg"), ANSIBLE_LOAD_CALLBACK_PLUGINS="1",
                       ANSIBLE_STDOUT_CALLBACK="ansible.builtin.json", ANSIBLE_SHOW_CUSTOM_STATS="1",
                       ANSIBLE_CACHE_PLUGIN="memory", ANSIBLE_NOCOLOR="1")
    return subprocess.run([str(Path(sys.executable).parent / "ansible-playbook"), *args],
                          cwd=REPO, env=environment, capture_output=True, text=True, timeout=300)


def _gate(tmp_path: Path, stats: dict) -> tuple[int, str]:
    """playbooks/drift_gate.yml with the stats as AWX passes them on: extra variables."""
    (tmp_path / "stats.json").write_text(json.dumps({"rocm_fleet_drift": stats}))
    completed = _playbook("-i", "inventory/localhost", "playbooks/drift_gate.yml", "-e", f"@{tmp_path / 'stats.json'}")
    [task] = json.loads(completed.stdout)["plays"][0]["tasks"]
    return completed.returncode, task["hosts"]["localhost"]["msg"]


def test_the_drift_playbook_publishes_its_summary_once_for_a_workflow(tmp_path):
    (tmp_path / "hosts.yml").write_text(INVENTORY)
    completed = _playbook("-i", str(tmp_path / "hosts.yml"), "playbooks/drift.yml")
    output = json.loads(completed.stdout)
    assert completed.returncode == 4, completed.stderr[-3000:]  # a host was unreachable
    tasks = {task["task"]["name"]: task["hosts"] for task in output["plays"][0]["tasks"]}
    # Once, on one host, as an action of the controller: no module result, nothing changed.
    stats_runs = tasks[STATS_TASK]
    assert list(stats_runs) == ["localhost"], stats_runs
    assert stats_runs["localhost"]["action"] == "ansible.builtin.set_stats"
    assert not stats_runs["localhost"].get("changed") and "invocation" not in stats_runs["localhost"]

    stats = output["global_custom_stats"]["rocm_fleet_drift"]
    results = {host: tasks[COMPLIANCE_TASK][host]["results"] for host in ("localhost", "localhost-again")}
    failing = sorted({item["id"] for items in results.values() for item in items
                      if item["status"] in ("fail", "error")})
    assert stats["hosts"] == 3 and stats["not_checked"] == 1 and stats["not_checked_hosts"] == ["nowhere"]
    assert stats["compliant"] + stats["unverified"] + stats["drift"] == 2
    assert stats["failing_checks"] == failing
    # The play asks for findings only (compliance_result_detail): a check's passed items are one entry, its ID,
    # title, status and their number, no more.
    localhost = tasks[COMPLIANCE_TASK]["localhost"]
    passed = [item for item in localhost["results"] if item["status"] == "pass"]
    assert passed and all(sorted(item) == ["id", "items", "status", "title"] for item in passed)
    assert len({item["id"] for item in passed}) == len(passed)
    assert all("expected" in item for item in localhost["results"] if item["status"] in ("fail", "error"))
    assert "decision" not in localhost and localhost["summary"]["pass"] == sum(item["items"] for item in passed)
    assert stats["ok"] is False
    # The same numbers the play recap gives.
    assert output["stats"]["nowhere"]["unreachable"] == 1

    # The workflow's branch point fails on these stats, naming what to look at; on all-compliant ones it passes.
    code, message = _gate(tmp_path, stats)
    assert code == 2 and "1 not checked (nowhere) of 3 hosts" in message, message
    clean = {**stats, "compliant": 2, "drift": 0, "unverified": 0, "not_checked": 0, "hosts": 2, "ok": True,
             "failing_checks": [], "drift_hosts": [], "unverified_hosts": [], "not_checked_hosts": []}
    assert _gate(tmp_path, clean) == (0, "all 2 hosts checked and compliant")


def test_rocm_fleet_drift_turns_the_summary_off_since_it_builds_its_own_report(tmp_path):
    """The engine's environment says so (tests/unit/rocm_fleet/drift/test_engine.py); set_stats would read every
    host's variables again."""
    (tmp_path / "hosts.yml").write_text(INVENTORY.split("    nowhere:")[0])
    completed = _playbook("-i", str(tmp_path / "hosts.yml"), "playbooks/drift.yml", ROCM_FLEET_DRIFT_SET_STATS="false")
    output = json.loads(completed.stdout)
    tasks = {task["task"]["name"]: task["hosts"] for task in output["plays"][0]["tasks"]}
    assert tasks[STATS_TASK]["localhost"].get("skipped") is True, tasks[STATS_TASK]
    assert "rocm_fleet_drift" not in output.get("global_custom_stats", {})
    assert set(tasks[COMPLIANCE_TASK]) == {"localhost", "localhost-again"}
