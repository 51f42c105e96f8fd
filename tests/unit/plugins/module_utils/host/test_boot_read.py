"""host.boot_read: the DKMS tree gives the records `dkms status` prints (shared captures), the boot loader's default."""

from __future__ import annotations

from pathlib import Path

import pytest
from ansible_collections.rocm_fleet.core.plugins.module_utils.host.boot_read import (
    default_kernel,
    dkms_records,
    installed_kernels,
)
from ansible_collections.rocm_fleet.core.plugins.module_utils.host.dkms import parse_dkms_status
from ansible_collections.rocm_fleet.core.plugins.module_utils.host.secure_boot_read import mok_keys, secure_boot
from fleet_testing import health_tree as tree

CAPTURES = Path(__file__).resolve().parents[4] / "fixtures" / "captures"
DKMS_CAPTURES = [
    "mi300a-4apu_rocm6.3.3_dkms-status_amdgpu-installed-original_module-exists.txt",
    "r9-390-1gpu_rocm2.0_dkms-status_old-comma-format_built-not-installed.txt",
    "rx580-1gpu_rocm1.9_dkms-status_old-comma-format_two-amdgpu-versions-built-not-installed.txt",
]


def render_dkms(root, record):
    """The tree dkms leaves for one status record (built, installed, original module kept)."""
    tree.kernel(root, record["kernel"], dkms_version=record["version"], installed=record["state"] == "installed",
                module=b"module of %s for %s" % (record["version"].encode(), record["kernel"].encode()))
    if "original_module exists" in record["notes"]:
        tree.write(root, "/var/lib/dkms/amdgpu/original_module/%s/x86_64/amdgpu.ko.xz" % record["kernel"], b"orig")


@pytest.mark.parametrize("capture", DKMS_CAPTURES)
def test_the_dkms_tree_gives_the_records_dkms_status_printed(tmp_path, capture):
    printed = [r for r in parse_dkms_status((CAPTURES / capture).read_text())["records"] if r["module"] == "amdgpu"]
    for record in printed:
        render_dkms(tmp_path, record)
    key = lambda r: (r["version"], r["kernel"] or "")  # noqa: E731
    assert sorted(dkms_records(str(tmp_path)), key=key) == sorted(printed, key=key)


def test_added_only_and_a_differing_install(tmp_path):
    tree.write(tmp_path, "/var/lib/dkms/amdgpu/6.16.13-1/source/dkms.conf", "")
    assert dkms_records(str(tmp_path)) == [
        {"module": "amdgpu", "version": "6.16.13-1", "kernel": None, "arch": None, "state": "added", "notes": []}]
    tree.kernel(tmp_path, "6.8.0-1", dkms_version="6.16.13-1")
    tree.write(tmp_path, "/usr/lib/modules/6.8.0-1/updates/dkms/amdgpu.ko", b"another build")
    (record,) = dkms_records(str(tmp_path))
    assert record["state"] == "installed" and record["notes"] == ["Differences between built and installed modules"]


def test_grub_submenu_position_and_bls(tmp_path):
    tree.write(tmp_path, "/boot/grub/grub.cfg", (
        "set default=\"1>1\"\n"
        "menuentry 'Ubuntu' $menuentry_id_option 'gnulinux-simple' {\n\tlinux /boot/vmlinuz-6.8.0-2 ro\n}\n"
        "submenu 'Advanced' $menuentry_id_option 'gnulinux-advanced' {\n"
        "\tmenuentry 'Ubuntu, with Linux 6.8.0-2' {\n\t\tlinux /boot/vmlinuz-6.8.0-2 ro\n\t}\n"
        "\tmenuentry 'Ubuntu, with Linux 6.8.0-1' {\n\t\tlinux /boot/vmlinuz-6.8.0-1 ro\n\t}\n}\n"))
    assert default_kernel(str(tmp_path))[0] == "6.8.0-1"
    el = tmp_path / "el"
    for release in ("5.14.0-503.19.1.el9_5.x86_64", "5.14.0-570.el9.x86_64"):
        tree.write(el, "/boot/loader/entries/abc-%s.conf" % release, "title EL\nlinux /vmlinuz-%s\n" % release)
    assert default_kernel(str(el)) == ("5.14.0-570.el9.x86_64", "/boot/loader/entries/abc-5.14.0-570.el9.x86_64.conf")
    tree.write(el, "/boot/grub2/grubenv", "saved_entry=abc-5.14.0-503.19.1.el9_5.x86_64\n")
    assert default_kernel(str(el))[0] == "5.14.0-503.19.1.el9_5.x86_64"


def test_next_entry_wins_and_no_boot_loader_is_a_reason(tmp_path):
    assert default_kernel(str(tmp_path))[0] is None
    tree.grub(tmp_path, ["6.8.0-2", "6.8.0-1"], grubenv="next_entry=gnulinux-6.8.0-1-advanced")
    assert default_kernel(str(tmp_path)) == ("6.8.0-1", "/boot/grub/grub.cfg (grubenv next_entry)")


def test_installed_kernels_need_their_modules_directory(tmp_path):
    tree.kernel(tmp_path, "6.8.0-1")
    tree.write(tmp_path, "/boot/vmlinuz-6.8.0-0", "removed kernel's image left behind\n")
    assert installed_kernels(str(tmp_path)) == ["6.8.0-1"]


def test_secure_boot_states_and_the_mok_list(tmp_path):
    assert secure_boot(str(tmp_path))["state"] == "unsupported"
    tree.secure_boot(tmp_path, enrolled=("other", "mok"))
    assert secure_boot(str(tmp_path))["enforcing"] is True
    keys, how = mok_keys(str(tmp_path))
    assert how == "MokListRT" and [k["subject"] for k in keys] == ["Some other key", "DKMS module signing key"]
    tree.write(tmp_path, "/sys/firmware/efi/mok-variables/MokListRT", b"\x00" * 20)
    assert mok_keys(str(tmp_path))[0] is None  # malformed: a reason, never an exception
