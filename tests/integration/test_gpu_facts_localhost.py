"""`ansible localhost -m rocm_fleet.core.gpu_facts` on this machine, which has no AMD GPU."""

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def run_ansible(*args):
    env = dict(os.environ, ANSIBLE_CONFIG=str(REPO / "ansible.cfg"), ANSIBLE_LOAD_CALLBACK_PLUGINS="1",
               ANSIBLE_STDOUT_CALLBACK="ansible.builtin.json", ANSIBLE_NOCOLOR="1")
    ansible = str(Path(sys.executable).parent / "ansible")
    return subprocess.run([ansible, *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=120)


def host_result(completed):
    assert completed.returncode == 0, completed.stdout + completed.stderr
    play = json.loads(completed.stdout)["plays"][0]
    return play["tasks"][0]["hosts"]["localhost"]


def test_machine_without_gpus_reports_zero_and_does_not_fail():
    result = host_result(run_ansible("localhost", "-i", "inventory/localhost", "-m", "rocm_fleet.core.gpu_facts"))
    gpu = result["ansible_facts"]["gpu"]
    assert result.get("failed") is not True
    assert gpu["schema"] == 1
    assert gpu["count"] == 0
    assert gpu["devices"] == []
    assert gpu["topology"] is None
    assert gpu["sources"]["sysfs"] == "ok"
    assert set(gpu["sources"]) == {"sysfs", "rocm_smi", "amd_smi", "rocminfo"}


def test_check_mode_reads_the_same_facts():
    result = host_result(run_ansible("localhost", "-i", "inventory/localhost", "-m", "rocm_fleet.core.gpu_facts",
                                     "-a", "sources=sysfs", "--check"))
    assert result["changed"] is False
    assert result["ansible_facts"]["gpu"]["sources"]["rocm_smi"] == "skipped"


def test_invalid_option_fails_with_a_clear_message():
    completed = run_ansible("localhost", "-i", "inventory/localhost", "-m", "rocm_fleet.core.gpu_facts",
                            "-a", "sources=nvml")
    assert completed.returncode != 0
    message = json.loads(completed.stdout)["plays"][0]["tasks"][0]["hosts"]["localhost"]["msg"]
    assert "sources" in message and "nvml" in message
    assert "Traceback" not in completed.stdout
