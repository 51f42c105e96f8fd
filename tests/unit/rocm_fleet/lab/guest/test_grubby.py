"""The lab's grubby stand-in answers and edits as RHEL 9's grubby-bls does, in the forms the roles use."""

from __future__ import annotations

import re

import pytest
from fleet_testing import rhel_boot
from fleet_testing.rhel_boot import MACHINE_ID, ROOT_UUID, grubenv, kernel_install, run, write

from rocm_fleet.lab import kernels, kernelstate

OLD, NEW = "5.14.0-503.40.1.el9_5.x86_64", "5.14.0-570.17.1.el9_6.x86_64"
ARGS = "ro crashkernel=1G-4G:192M,4G-64G:256M,64G-:512M rhgb quiet"


@pytest.fixture
def root(tmp_path, monkeypatch):
    """A Rocky 9 host with two kernels installed the way kernel-core installs them; the newer is the default."""
    root = rhel_boot.rhel_root(tmp_path, monkeypatch)
    write(root, "etc/kernel/cmdline", f"root=UUID={ROOT_UUID} {ARGS}\n")
    for release in (OLD, NEW):
        kernels.install_kernel(root, release, with_amdgpu=False, boot_loader="bls")
        kernel_install(root, "add", release, f"/lib/modules/{release}/vmlinuz")
    return root


def grubby(root, *args, check=True):
    return run(root, "/usr/sbin/grubby", *args, check=check)


def block(index, release):
    return (
        f"index={index}\n"
        f'kernel="/boot/vmlinuz-{release}"\n'
        f'args="{ARGS}"\n'
        f'root="UUID={ROOT_UUID}"\n'
        f'initrd="/boot/initramfs-{release}.img"\n'
        f'title="Rocky Linux ({release}) 9.6 (Blue Onyx)"\n'
        f'id="{MACHINE_ID}-{release}"\n'
    )


def test_info_all_prints_each_entry_newest_first_with_root_split_out_of_args(root):
    assert grubby(root, "--info=ALL").stdout == block(0, NEW) + block(1, OLD)
    assert grubby(root, "--info", f"/boot/vmlinuz-{OLD}").stdout == block(1, OLD)
    assert grubby(root, "--info=1").stdout == block(1, OLD)


def test_an_unknown_kernel_or_option_fails_with_grubbys_message(root):
    missing = grubby(root, "--info=/boot/vmlinuz-9.9.9", check=False)
    assert (missing.returncode, missing.stderr) == (1, "The param /boot/vmlinuz-9.9.9 is incorrect\n")
    unknown = grubby(root, "--frobnicate", check=False)
    assert unknown.returncode == 1 and "unrecognized option '--frobnicate'" in unknown.stderr
    for args in ((), ("--args=iommu=pt",)):
        result = grubby(root, *args, check=False)
        assert (result.returncode, result.stderr) == (1, "no action specified\n")


def test_the_default_is_grubenvs_saved_entry_by_id_else_the_first_entry(root):
    assert grubenv(root)["saved_entry"] == f"{MACHINE_ID}-{NEW}"  # kernel-install with UPDATEDEFAULT=yes
    run(root, "/usr/bin/grub2-editenv", "-", "set", f"saved_entry={MACHINE_ID}-{OLD}")
    assert grubby(root, "--default-kernel").stdout == f"/boot/vmlinuz-{OLD}\n"
    assert grubby(root, "--default-index").stdout == "1\n"
    assert grubby(root, "--default-title").stdout == f"Rocky Linux ({OLD}) 9.6 (Blue Onyx)\n"
    run(root, "/usr/bin/grub2-editenv", "-", "unset", "saved_entry")
    assert grubby(root, "--default-index").stdout == "0\n"
    run(root, "/usr/bin/grub2-editenv", "-", "set", "saved_entry=gone")
    assert grubby(root, "--default-index").stdout == "\n"  # grubby finds none; GRUB boots entry 0
    assert grubby(root, "--default-kernel").stdout == f"/boot/vmlinuz-{NEW}\n"


def test_set_default_by_image_stores_the_entry_id_and_the_next_boot_runs_it(root):
    result = grubby(root, "--set-default", f"/boot/vmlinuz-{OLD}")  # the kernel role's form
    assert grubenv(root)["saved_entry"] == f"{MACHINE_ID}-{OLD}"
    assert result.stderr == (
        f"The default is /boot/loader/entries/{MACHINE_ID}-{OLD}.conf with index 1 and kernel /boot/vmlinuz-{OLD}\n"
    )
    assert kernels.booted_kernel(kernelstate.kernel_cmdline(root, boot_loader="bls")) == OLD
    grubby(root, "--set-default-index=0")
    assert kernels.booted_kernel(kernelstate.kernel_cmdline(root, boot_loader="bls")) == NEW


def test_update_all_adds_a_parameter_to_every_entry_and_for_kernels_installed_later(root):
    grubby(root, "--update-kernel=ALL", "--args=iommu=pt")
    info = grubby(root, "--info=ALL").stdout
    # The kernel role's check: every args= line has the parameter between blanks or quotes.
    args = [line for line in info.splitlines() if line.startswith("args=")]
    assert len(args) == 2 and all(re.search(r'[ "]iommu=pt([ "]|$)', line) for line in args)
    assert (root / "etc/kernel/cmdline").read_text() == f"root=UUID={ROOT_UUID} {ARGS} iommu=pt\n"
    assert (
        'GRUB_CMDLINE_LINUX="crashkernel=1G-4G:192M,4G-64G:256M,64G-:512M rhgb quiet iommu=pt"\n'
        in (root / "etc/default/grub").read_text()
    )
    grubby(root, "--update-kernel=ALL", "--args=iommu=pt")  # again: still once
    assert grubby(root, "--info=0").stdout.count("iommu=pt") == 1
    assert kernelstate.kernel_cmdline(root, boot_loader="bls").endswith(" quiet iommu=pt")


def test_a_key_value_replaces_the_keys_value_and_remove_args_drops_bare_keys_and_their_values(root):
    grubby(root, f"--update-kernel=/boot/vmlinuz-{OLD}", "--args=crashkernel=2G amd_iommu=on")
    assert 'args="ro rhgb quiet crashkernel=2G amd_iommu=on"' in grubby(root, "--info=1").stdout
    grubby(root, "--update-kernel=DEFAULT", "--remove-args=quiet crashkernel")
    assert 'args="ro rhgb"' in grubby(root, "--info=0").stdout
    grubby(root, "--update-kernel=1", "--remove-args=amd_iommu=off")  # a key=value removes that word only
    assert "amd_iommu=on" in grubby(root, "--info=1").stdout
    assert (root / "etc/kernel/cmdline").read_text() == f"root=UUID={ROOT_UUID} {ARGS}\n"  # not ALL: unchanged


def test_update_all_without_etc_kernel_cmdline_starts_it_from_the_oldest_entry(root):
    (root / "etc/kernel/cmdline").unlink()
    grubby(root, "--update-kernel=1", "--args=debug")
    grubby(root, "--update-kernel=ALL", "--args=iommu=pt", "--no-etc-grub-update")
    assert (root / "etc/kernel/cmdline").read_text() == f"root=UUID={ROOT_UUID} {ARGS} debug iommu=pt\n"
    assert "iommu=pt" not in (root / "etc/default/grub").read_text()


def test_add_kernel_and_remove_kernel_edit_the_entries_and_the_default(root):
    write(root, "boot/vmlinuz-custom", "")
    grubby(root, "--add-kernel=/boot/vmlinuz-custom", "--title=Custom", "--args=nomodeset", "--make-default")
    entry = (root / f"boot/loader/entries/{MACHINE_ID}-custom.conf").read_text()
    assert "linux /vmlinuz-custom\ninitrd /initramfs-custom.img\n" in entry
    assert f"options root=UUID={ROOT_UUID} nomodeset\n" in entry  # the default's root= only, then --args
    assert grubenv(root)["saved_entry"] == f"{MACHINE_ID}-custom"
    grubby(root, "--remove-kernel=/boot/vmlinuz-custom")
    assert not (root / f"boot/loader/entries/{MACHINE_ID}-custom.conf").exists()
    assert "saved_entry" not in grubenv(root)  # it was the default
    refused = grubby(root, "--add-kernel=/boot/vmlinuz-absent", "--title=x", check=False)
    assert (refused.returncode, refused.stderr) == (1, "The absent kernel isn't installed in the machine\n")
