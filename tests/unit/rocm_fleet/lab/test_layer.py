"""The lab layer: one per boot loader, each with its family's boot tools only."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rocm_fleet.lab import lab, layer
from rocm_fleet.lab.host import HostSpec, LabHost

SHARED = {
    "usr/local/lib/rocm-fleet-lab/boot",
    "usr/local/sbin/modprobe",
    "usr/local/sbin/rmmod",
    "usr/local/bin/lsmod",
    "usr/local/sbin/udevadm",
}
# What a Debian or Ubuntu host's layer has had since before RHEL-family hosts: it must not change.
GRUB = {
    "usr/sbin/grub-mkconfig",
    "usr/sbin/update-grub",
    "usr/bin/grub-editenv",
    "usr/sbin/grub-set-default",
    "usr/sbin/grub-reboot",
    "etc/kernel/postinst.d/zz-update-grub",
    "etc/kernel/postrm.d/zz-update-grub",
    "etc/default/grub",
}
BLS = {
    "usr/sbin/grubby",
    "usr/bin/grub2-editenv",
    "usr/sbin/grub2-set-default",
    "usr/sbin/grub2-reboot",
    "usr/lib/kernel/install.d/20-grub.install",
    "usr/lib/kernel/install.d/50-dracut.install",
    "usr/lib/kernel/install.d/95-kernel-hooks.install",
    "etc/kernel/install.d/85-initrd.install",
    "etc/default/grub",
    "etc/sysconfig/kernel",
}


SUSE = {
    "usr/sbin/grub2-mkconfig",
    "usr/bin/grub2-editenv",
    "usr/sbin/grub2-set-default",
    "usr/sbin/grub2-reboot",
    "etc/default/grub",
}


def tools(directory):
    """Files and links of a layer, leaving out the boot-loader-independent udev drop-ins and module indexes."""
    found = set()
    for parent, _dirs, files in os.walk(directory):
        for name in files:
            relative = os.path.relpath(os.path.join(parent, name), directory)
            if not relative.startswith(("usr/lib/systemd/", "usr/lib/modules/", ".")):
                found.add(relative)
    return found


@pytest.fixture(autouse=True)
def state(tmp_path, monkeypatch):
    monkeypatch.setenv("ROCM_FLEET_LAB_DIR", str(tmp_path))


def test_a_grub_host_gets_the_debian_grub_tools_and_no_rhel_one():
    grub = layer.ensure_layer("grub")
    assert tools(grub) == SHARED | GRUB
    assert (grub / "etc/default/grub.d").is_dir()
    assert 'GRUB_CMDLINE_LINUX_DEFAULT="quiet"' in (grub / "etc/default/grub").read_text()


def test_a_bls_host_gets_the_rhel_tools_and_no_debian_grub_one():
    rhel = layer.ensure_layer("bls")
    assert tools(rhel) == SHARED | BLS
    assert "GRUB_ENABLE_BLSCFG=true" in (rhel / "etc/default/grub").read_text()
    assert os.readlink(rhel / "etc/kernel/install.d/85-initrd.install") == "/dev/null"  # Debian's plugin, masked
    assert os.access(rhel / "usr/sbin/grubby", os.X_OK)


def test_a_sles_host_gets_upstreams_grub2_tools_and_neither_debians_nor_rhels():
    sles = layer.ensure_layer("grub2")
    assert tools(sles) == SHARED | SUSE
    assert "GRUB_DEFAULT=saved" in (sles / "etc/default/grub").read_text()
    assert "GRUB_ENABLE_BLSCFG" not in (sles / "etc/default/grub").read_text()


def test_each_boot_loader_has_a_layer_of_its_own_and_an_unknown_one_is_refused():
    assert len({layer.layer_hash(loader) for loader in ("grub", "bls", "grub2")}) == 3
    assert layer.layer_hash("grub") != layer.layer_hash("bls")
    assert layer.ensure_layer("grub") != layer.ensure_layer("bls")
    with pytest.raises(ValueError, match="no lab layer for boot loader 'uefi'"):
        layer.ensure_layer("uefi")


def test_a_host_is_mounted_on_the_layer_of_its_systems_boot_loader(monkeypatch):
    mounted = []
    monkeypatch.setattr(lab.base, "ensure_system_base", lambda system: Path("/bases", system))
    monkeypatch.setattr(LabHost, "mount_root", lambda self, base_dir, layer_dir: mounted.append(layer_dir))
    monkeypatch.setattr(LabHost, "start", lambda self: None)
    monkeypatch.setattr(LabHost, "wait_ready", lambda self, deadline: True)
    for system in ("rocky9.6", "ubuntu24.04"):
        lab.start_host(LabHost(HostSpec("h1", "mi300x-8", 2201, system=system)))
    assert mounted == [layer.ensure_layer("bls"), layer.ensure_layer("grub")]
