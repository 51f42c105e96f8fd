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


def test_a_host_that_does_not_come_up_shows_its_logs(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ROCM_FLEET_LAB_DIR", str(tmp_path))
    host_dir = tmp_path / "hosts" / "h1"
    host_dir.mkdir(parents=True)
    (host_dir / "supervisor.log").write_text("".join(f"line {n}\n" for n in range(40)) + "OSError: no cgroup\n")
    result = {"reinstalled": [], "started": ["h1"], "already_up": [], "stopped": [], "mirror": None,
              "generated_inventory": None, "seconds": 0.2, "not_ready": ["h1"], "systemd": {}}  # fmt: skip
    monkeypatch.setattr(cli, "_require_lab_keys", lambda: None)
    monkeypatch.setattr(cli, "_require_root", lambda: None)
    monkeypatch.setattr(lab, "up", lambda extra_hosts: result)
    assert cli._up(argparse.Namespace(count=None, hosts=0)) == 1
    error = capsys.readouterr().err
    assert "NOT REACHABLE: h1" in error
    assert "OSError: no cgroup" in error and "line 26\n" in error and "line 25\n" not in error
    assert "boot.log, last 15 lines\n(none)" in error
