"""rocm-fleet lab's commands as a person reads them: the status table names each host's operating system."""

from __future__ import annotations

import argparse

from rocm_fleet.lab import cli, lab


def test_status_prints_a_row_per_host_with_its_operating_system(monkeypatch, capsys):
    rows = [
        {
            "host": "mi300x-cpx-01",
            "state": "running",
            "port": 2209,
            "profile": "mi300x-8-cpx-nps4",
            "system": "rhel10.0",
            "boot_id": "b" * 32,
            "pid": 4242,
            "amdgpu": True,
            "systemd": "running",
        },
        {
            "host": "login-01",
            "state": "down",
            "port": 2207,
            "profile": "nogpu",
            "system": "debian12",
            "boot_id": None,
            "pid": None,
            "amdgpu": None,
            "systemd": None,
        },
    ]
    monkeypatch.setattr(lab, "status", lambda: rows)
    assert cli._status(argparse.Namespace(json=False)) == 0
    header, running, down = capsys.readouterr().out.splitlines()
    assert header.split()[:6] == ["HOST", "STATE", "PORT", "PROFILE", "OS", "AMDGPU"]
    assert running.split()[:6] == ["mi300x-cpx-01", "running", "2209", "mi300x-8-cpx-nps4", "rhel10.0", "loaded"]
    assert down.split() == ["login-01", "down", "2207", "nogpu", "debian12", "-", "-", "-", "-"]
