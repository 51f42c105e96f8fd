"""A host's first boot sets up the boot loader of its system: update-grub, or a RHEL install's BLS entry."""

from __future__ import annotations

import os

import pytest

from rocm_fleet.lab import host as lab_host
from rocm_fleet.lab.host import HostSpec, LabHost


@pytest.fixture
def first_boot(tmp_path, monkeypatch):
    """configure() of a fresh host of ``system``: what it ran (recorded, not run), ssh-keygen left out."""
    monkeypatch.setenv("ROCM_FLEET_LAB_DIR", str(tmp_path))
    ran = []
    monkeypatch.setattr(lab_host.subprocess, "run", lambda argv, **_: ran.append(argv))
    monkeypatch.setattr(lab_host.bls, "install", lambda root, release: ran.append(["bls.install", release]))

    def configure(system):
        host = LabHost(HostSpec("h1", "mi300x-8", 2201, system=system))
        (host.root / "etc/ssh/sshd_config.d").mkdir(parents=True)
        (host.root / "etc/passwd").write_text(f"fleet:x:{os.getuid()}:{os.getgid()}::/home/fleet:/bin/bash\n")
        (host.root / "home/fleet/.ssh").mkdir(parents=True)
        host.configure("ssh-ed25519 KEY")
        return [argv for argv in ran if argv[0] != "ssh-keygen"]

    return configure


def test_a_debian_host_runs_update_grub(first_boot):
    assert [argv[-1] for argv in first_boot("debian12")] == ["/usr/sbin/update-grub"]


def test_a_rocky_host_gets_the_machine_kernels_bls_entry_instead(first_boot):
    assert first_boot("rocky9.6") == [["bls.install", os.uname().release]]


def test_a_supervisor_rewriting_its_pid_file_is_never_seen_gone(tmp_path, monkeypatch):
    """`lab up` polls the pid file while the launcher and then the supervisor write it (a CI boot failed so)."""
    import threading

    monkeypatch.setenv("ROCM_FLEET_LAB_DIR", str(tmp_path))
    host = LabHost(HostSpec("h1", "mi300x-8", 2201))
    host.dir.mkdir(parents=True)
    pid_file = host.dir / "supervisor.pid"
    lab_host.write_pid_file(pid_file, os.getpid())
    writing = threading.Event()
    seen_gone = []

    def poll():
        while not writing.is_set():
            if not host._supervisor_alive():
                seen_gone.append(pid_file.read_bytes() if pid_file.exists() else None)

    reader = threading.Thread(target=poll)
    reader.start()
    try:
        for _ in range(3000):
            lab_host.write_pid_file(pid_file, os.getpid())
    finally:
        writing.set()
        reader.join()
    assert seen_gone == []
    assert [path.name for path in host.dir.iterdir()] == ["supervisor.pid"]
