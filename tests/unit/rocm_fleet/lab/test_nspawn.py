"""rocm_fleet.lab.nspawn: the engine's command line, each host's cgroup, the host's first process."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from rocm_fleet.lab import nspawn

HYBRID = [
    ("/sys/fs/cgroup", "tmpfs", "rw"),
    ("/sys/fs/cgroup/memory", "cgroup", "rw,memory"),
    ("/sys/fs/cgroup/systemd", "cgroup", "rw,xattr,name=systemd"),
    ("/sys/fs/cgroup/unified", "cgroup2", "rw"),
]
UNIFIED = [("/sys/fs/cgroup", "cgroup2", "rw,nsdelegate")]


def test_the_command_boots_the_shim_with_the_kernel_view_and_no_machined(monkeypatch, tmp_path):
    monkeypatch.setattr(nspawn.shutil, "which", lambda name: f"/usr/bin/{name}")
    argv = nspawn.command("mi300x-01", tmp_path / "root", tmp_path / "control", tmp_path / "run", tmp_path)
    assert argv[0] == "/usr/bin/systemd-nspawn" and argv[-1] == nspawn.BOOT_SHIM
    assert f"--directory={tmp_path / 'root'}" in argv and "--hostname=mi300x-01" in argv
    # No systemd on the machine: no machined registration, no scope unit.
    assert {"--register=no", "--keep-unit", "--kill-signal=SIGRTMIN+3"} <= set(argv)
    assert f"--bind={tmp_path / 'control'}:/run/rocm-fleet-lab" in argv
    assert f"--bind={tmp_path / 'run'}:/run/rocm-fleet-lab-kernel" in argv


def test_a_missing_engine_says_which_package_to_install(monkeypatch):
    monkeypatch.setattr(nspawn.shutil, "which", lambda name: None)
    with pytest.raises(nspawn.EngineMissing, match="systemd-container"):
        nspawn.require_engine()


def test_two_labs_never_share_a_machine_name_or_a_cgroup(monkeypatch, tmp_path):
    monkeypatch.setattr(nspawn, "_mounts", lambda: HYBRID)
    first, second = tmp_path / "lab", tmp_path / "lab-molecule"
    assert nspawn.machine_name("mi300x-01", first) != nspawn.machine_name("mi300x-01", second)
    assert len(nspawn.machine_name("h" * 80, first)) == 64
    assert set(nspawn.host_cgroups("mi300x-01", first)).isdisjoint(nspawn.host_cgroups("mi300x-01", second))


@pytest.mark.parametrize(
    ("mounts", "roots"),
    [
        (HYBRID, ["/sys/fs/cgroup/unified", "/sys/fs/cgroup/systemd"]),
        (UNIFIED, ["/sys/fs/cgroup"]),
    ],
)
def test_a_host_gets_a_cgroup_on_the_unified_hierarchy_and_v1_name_systemd(monkeypatch, mounts, roots):
    monkeypatch.setattr(nspawn, "_mounts", lambda: mounts)
    assert [str(root) for root in nspawn.cgroup_roots()] == roots


def test_no_cgroup2_stops_before_anything_starts(monkeypatch):
    monkeypatch.setattr(nspawn, "_mounts", lambda: HYBRID[:3])
    with pytest.raises(nspawn.EngineMissing, match="cgroup2"):
        nspawn.cgroup_roots()


def test_leftover_processes_are_killed_and_the_cgroups_removed_deepest_first(tmp_path):
    # A directory tree laid out as nspawn and the host's systemd leave a cgroup (cgroup.procs per level).
    host = tmp_path / "rocm-fleet-lab" / "abcd1234" / "mi300x-01"
    (host / "payload" / "system.slice" / "ssh.service").mkdir(parents=True)
    sleeper = subprocess.Popen(["sleep", "60"])
    (host / "payload" / "system.slice" / "ssh.service" / "cgroup.procs").write_text(f"{sleeper.pid}\n")
    assert nspawn.kill_cgroups([host], timeout=0.5) == [sleeper.pid]  # a real cgroup would have dropped it
    assert sleeper.wait(timeout=5) == -9
    for procs in host.rglob("cgroup.procs"):
        procs.unlink()  # what the kernel does when the last process leaves
    nspawn.remove_cgroups([host])
    assert not host.exists()


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("unshare"), reason="a pid namespace needs root")
def test_the_hosts_first_process_is_found_in_its_own_pid_namespace():
    process = subprocess.Popen(["unshare", "--pid", "--fork", "sleep", "30"])
    try:
        deadline = time.monotonic() + 5
        found = None
        while found is None and time.monotonic() < deadline:
            found = nspawn.container_init(process.pid)
            time.sleep(0.05)
        assert found is not None and found != process.pid
        assert Path(f"/proc/{found}/cmdline").read_bytes().split(b"\0")[0] == b"sleep"
    finally:
        process.kill()
        process.wait()
