"""lab_helpers: a test module's teardown starts and clears the hosts a fault command touched, and only those."""

from __future__ import annotations

import subprocess

import pytest
from fleet_testing import lab_helpers


@pytest.fixture
def commands(monkeypatch):
    ran = []
    monkeypatch.setattr(lab_helpers, "_FAULTED", set())

    def run(command, **_kwargs):
        ran.append(command[len(lab_helpers.ROCM_FLEET):])
        return subprocess.CompletedProcess(command, 0, "", "")

    monkeypatch.setattr(lab_helpers.subprocess, "run", run)
    return ran


def test_only_the_hosts_a_fault_touched_are_started_and_cleared(commands):
    lab_helpers.rocm_fleet("lab", "fault", "mi300x-01", "remove-gpu", "1")
    lab_helpers.rocm_fleet("lab", "fault", "w7900-01", "stop")
    lab_helpers.rocm_fleet("lab", "fault", "w7900-01", "start")
    lab_helpers.rocm_fleet("lab", "fault", "mi210-01", "clear")  # a clear leaves nothing to clear
    lab_helpers.rocm_fleet("lab", "fault", "mirror", "down")  # not a host
    # Another lab's host (its own state directory): not this process's lab to clear.
    lab_helpers.rocm_fleet("lab", "fault", "new-w7900", "stop", env={"ROCM_FLEET_LAB_DIR": "/var/lib/other"})
    lab_helpers.rocm_fleet("lab", "status")
    commands.clear()
    lab_helpers.clear_faulted()
    assert commands == [["lab", "fault", "mi300x-01", "start"], ["lab", "fault", "mi300x-01", "clear"],
                        ["lab", "fault", "w7900-01", "start"], ["lab", "fault", "w7900-01", "clear"]]
    commands.clear()
    lab_helpers.clear_faulted()
    assert commands == []
