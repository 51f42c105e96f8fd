"""A boot of the supervisor takes its kernel command line from the boot loader of the host's system."""

from __future__ import annotations

import json
import types

import pytest

from rocm_fleet.lab import bls, kernels, kernelstate, supervisor

RELEASE = kernels.machine_kernel()
OTHER = "5.14.0-570.17.1.el9_6.x86_64"


@pytest.fixture
def lab(tmp_path, monkeypatch):
    monkeypatch.setenv("ROCM_FLEET_LAB_DIR", str(tmp_path))
    (tmp_path / "proc-sys" / "kernel").mkdir(parents=True)
    # No container: the boot's files are what is judged.
    monkeypatch.setattr(
        supervisor.Supervisor, "_start_nspawn", lambda self: setattr(self, "child", types.SimpleNamespace(pid=0))
    )
    return tmp_path


def booted(lab, system):
    host_dir = lab / "hosts" / "h1"
    host_dir.joinpath("host.json").write_text(json.dumps({"profile": "mi300x-8", "port": 2201, "system": system}))
    host = supervisor.Supervisor("h1")
    host.boot()
    return host.status


def entry(root, release):
    path = root / f"boot/loader/entries/m-{release}.conf"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"title {release}\nlinux /vmlinuz-{release}\noptions root=UUID=abc ro rhgb quiet\n")


def test_a_rocky_host_boots_grubenvs_entry_and_uses_up_next_entry(lab):
    root = lab / "hosts" / "h1" / "root"
    entry(root, RELEASE)
    entry(root, OTHER)
    (root / "boot/grub2").mkdir()
    kernelstate.write_grubenv(root, {"saved_entry": f"m-{RELEASE}", "next_entry": f"m-{OTHER}"}, bls.GRUBENV)
    status = booted(lab, "rocky9.6")
    assert status["cmdline"] == f"BOOT_IMAGE=(hd0,gpt2)/vmlinuz-{OTHER} root=UUID=abc ro rhgb quiet"
    assert status["kernel"] == OTHER and not status["amdgpu_loaded"]  # no amdgpu module for that kernel
    assert booted(lab, "rocky9.6")["kernel"] == RELEASE  # next_entry was for one boot


def test_a_debian_host_boots_grub_cfg_and_ignores_bls_entries(lab):
    root = lab / "hosts" / "h1" / "root"
    entry(root, OTHER)
    grub_cfg = root / "boot/grub/grub.cfg"
    grub_cfg.parent.mkdir(parents=True)
    grub_cfg.write_text(f"menuentry 'Debian' {{\n\tlinux\t/boot/vmlinuz-{RELEASE} root=UUID=abc ro quiet\n}}\n")
    assert booted(lab, "debian12")["cmdline"] == f"BOOT_IMAGE=/boot/vmlinuz-{RELEASE} root=UUID=abc ro quiet"
