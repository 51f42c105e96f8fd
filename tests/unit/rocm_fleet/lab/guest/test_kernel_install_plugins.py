"""The lab's RHEL kernel-install plugins (20-grub, 50-dracut, 95-kernel-hooks) add and remove a kernel's boot files."""

from __future__ import annotations

import pytest
from fleet_testing import rhel_boot
from fleet_testing.rhel_boot import MACHINE_ID, ROOT_UUID, entry_text, grubenv, kernel_install, write

from rocm_fleet.lab import kernels

RUNNING, NEW = "5.14.0-503.40.1.el9_5.x86_64", "5.14.0-570.17.1.el9_6.x86_64"
CMDLINE = f"root=UUID={ROOT_UUID} ro crashkernel=1G-4G:192M,4G-64G:256M,64G-:512M rhgb quiet"


@pytest.fixture
def root(tmp_path, monkeypatch):
    root = rhel_boot.rhel_root(tmp_path, monkeypatch)
    kernels.install_kernel(root, NEW, with_amdgpu=False, boot_loader="bls")
    return root


def add(root, release=NEW):
    kernel_install(root, "add", release, f"/lib/modules/{release}/vmlinuz")


def test_add_copies_the_image_writes_the_entry_from_etc_kernel_cmdline_and_makes_it_the_default(root):
    write(root, "etc/kernel/cmdline", CMDLINE + "\n")
    add(root)
    assert entry_text(root, NEW) == (
        f"title Rocky Linux ({NEW}) 9.6 (Blue Onyx)\n"
        f"version {NEW}\n"
        f"linux /vmlinuz-{NEW}\n"
        f"initrd /initramfs-{NEW}.img\n"
        f"options {CMDLINE}\n"
        "grub_users $grub_users\n"
        "grub_arg --unrestricted\n"
        "grub_class rocky\n"
    )
    for name in (f"vmlinuz-{NEW}", f"System.map-{NEW}", f"config-{NEW}", f"initramfs-{NEW}.img"):
        assert (root / "boot" / name).is_file(), name
    assert grubenv(root) == {"saved_entry": f"{MACHINE_ID}-{NEW}"}  # /etc/sysconfig/kernel: UPDATEDEFAULT=yes


def test_without_etc_kernel_cmdline_the_running_boots_arguments_are_taken(root):
    write(root, "proc/cmdline", f"BOOT_IMAGE=(hd0,gpt2)/vmlinuz-{RUNNING} {CMDLINE} iommu=pt\n")
    add(root)
    assert f"options {CMDLINE} iommu=pt\n" in entry_text(root, NEW)


@pytest.mark.parametrize(
    ("sysconfig", "release", "becomes_default"),
    [
        ("UPDATEDEFAULT=no\nDEFAULTKERNEL=kernel-core\n", NEW, False),  # the kernel role's pin
        ("UPDATEDEFAULT=yes\nDEFAULTKERNEL=kernel-core\n", NEW + "+debug", False),
        ("UPDATEDEFAULT=yes\nDEFAULTKERNEL=kernel-core\n", "5.14.0-570.17.1.el9_6.x86_64+rt", False),
        ("UPDATEDEFAULT=yes\nDEFAULTKERNEL=kernel-rt-core\n", "5.14.0-570.17.1.el9_6.x86_64+rt", True),
    ],
)
def test_only_updatedefault_yes_moves_the_default_and_only_to_a_kernel_of_the_default_kind(
    root, sysconfig, release, becomes_default
):
    write(root, "etc/kernel/cmdline", CMDLINE + "\n")
    write(root, "etc/sysconfig/kernel", sysconfig)
    run_default = f"{MACHINE_ID}-{RUNNING}"
    rhel_boot.run(root, "/usr/bin/grub2-editenv", "-", "set", f"saved_entry={run_default}")
    kernels.install_kernel(root, release, with_amdgpu=False, boot_loader="bls")
    add(root, release)
    assert grubenv(root)["saved_entry"] == (f"{MACHINE_ID}-{release}" if becomes_default else run_default)


def test_remove_deletes_the_entry_and_boot_files_and_leaves_the_saved_entry(root):
    write(root, "etc/kernel/cmdline", CMDLINE + "\n")
    add(root)
    kernel_install(root, "remove", NEW)
    assert not (root / f"boot/loader/entries/{MACHINE_ID}-{NEW}.conf").exists()
    assert sorted(path.name for path in (root / "boot").iterdir()) == ["grub2", "loader"]
    assert grubenv(root)["saved_entry"] == f"{MACHINE_ID}-{NEW}"  # GRUB falls back to the first entry


def test_old_style_kernel_hooks_run_on_add_and_remove_with_the_kernel_and_its_image(root):
    log = root / "hooks.log"
    for directory in ("postinst.d", "prerm.d"):
        hook = write(root, f"etc/kernel/{directory}/dkms", f'#!/bin/sh\necho "{directory} $*" >>"{log}"\n')
        hook.chmod(0o755)
    write(root, "etc/kernel/cmdline", CMDLINE + "\n")
    add(root)
    kernel_install(root, "remove", NEW)
    assert log.read_text() == f"postinst.d {NEW} /boot/vmlinuz-{NEW}\nprerm.d {NEW} /boot/vmlinuz-{NEW}\n"


def test_a_systemd_boot_layout_is_left_to_other_plugins(root):
    (root / "boot" / MACHINE_ID / NEW).mkdir(parents=True)
    add(root)
    assert not (root / "boot/loader").exists() and not (root / f"boot/vmlinuz-{NEW}").exists()
