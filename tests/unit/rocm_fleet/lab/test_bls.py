"""A RHEL-family lab host boots as GRUB2's blscfg would: its BLS entries, newest first, and grubenv's choice."""

from __future__ import annotations

import os

import pytest
from ansible_collections.rocm_fleet.core.plugins.module_utils.host.boot_read import default_kernel
from fleet_testing import rhel_boot
from fleet_testing.rhel_boot import MACHINE_ID, ROOT_UUID, grubenv, write

from rocm_fleet.lab import bls, kernels, kernelstate

OLD, NEW = "5.14.0-503.40.1.el9_5.x86_64", "5.14.0-570.17.1.el9_6.x86_64"


@pytest.mark.parametrize(
    ("one", "two", "result"),
    [
        ("5.14.0", "5.14.0", 0),
        ("570.17.1.el9_6.x86_64", "503.40.1.el9_5.x86_64", 1),
        ("6.18.9", "6.18.10", -1),  # numbers, not text
        ("010", "10", 0),  # leading zeros do not count
        ("1.0a", "1.0", 1),  # what is left over wins
        ("1.0~rc1", "1.0", -1),  # a tilde sorts before the end
        ("1.0+rt", "1.0", 1),  # a plus after it
        ("1.a", "1.1", -1),  # letters before numbers
    ],
)
def test_vercmp_is_blscfgs_rpm_style_compare(one, two, result):
    assert bls.vercmp(one, two) == result
    assert bls.vercmp(two, one) == -result


def entry(root, release, title=None, options="root=UUID=abc ro quiet", name=None):
    body = f"title {title or release}\nversion {release}\nlinux /vmlinuz-{release}\noptions {options}\n"
    write(root, f"boot/loader/entries/{name or f'{MACHINE_ID}-{release}'}.conf", body)
    (root / "boot/grub2").mkdir(exist_ok=True)


def test_entries_are_newest_first_and_files_blscfg_skips_are_left_out(tmp_path):
    for release in (OLD, "0-rescue", NEW):
        entry(tmp_path, release)
    write(tmp_path, f"boot/loader/entries/{MACHINE_ID}-9.9.9.conf", "title no linux line\n")
    entry(tmp_path, "9.9.8", name=".hidden")
    ids = [found["id"] for found in bls.entries(tmp_path)]
    assert ids == [f"{MACHINE_ID}-{NEW}", f"{MACHINE_ID}-{OLD}", f"{MACHINE_ID}-0-rescue"]


def test_saved_entry_names_the_entry_by_id_title_or_index_and_else_the_first_boots(tmp_path):
    entry(tmp_path, OLD, title="Rocky Linux old")
    entry(tmp_path, NEW)
    for saved, release in [
        (f"{MACHINE_ID}-{OLD}", OLD),
        ("Rocky Linux old", OLD),
        ("1", OLD),
        ("gone", NEW),
        ("", NEW),
    ]:
        kernelstate.write_grubenv(tmp_path, {"saved_entry": saved}, bls.GRUBENV)
        cmdline = kernelstate.kernel_cmdline(tmp_path, boot_loader="bls")
        assert kernels.booted_kernel(cmdline) == release, saved


def test_cmdline_is_the_entrys_linux_line_on_the_boot_partition_with_grubenv_variables_expanded(tmp_path):
    entry(tmp_path, NEW, options="root=UUID=abc ro rhgb quiet $tuned_params ${missing}")
    kernelstate.write_grubenv(tmp_path, {"tuned_params": "skew_tick=1"}, bls.GRUBENV)
    cmdline = kernelstate.kernel_cmdline(tmp_path, boot_loader="bls")
    assert cmdline == f"BOOT_IMAGE=(hd0,gpt2)/vmlinuz-{NEW} root=UUID=abc ro rhgb quiet skew_tick=1"
    assert kernels.booted_kernel(cmdline) == NEW
    assert kernelstate.boot_entry(tmp_path) is None  # a GRUB host's files (grub.cfg) are not read


def test_next_entry_boots_once_and_a_kept_aside_saved_entry_comes_back(tmp_path):
    entry(tmp_path, OLD)
    entry(tmp_path, NEW)
    env = {"saved_entry": f"{MACHINE_ID}-{OLD}", "next_entry": f"{MACHINE_ID}-{NEW}", "prev_saved_entry": "x"}
    kernelstate.write_grubenv(tmp_path, env, bls.GRUBENV)
    assert kernelstate.boot_entry(tmp_path, boot_loader="bls")["id"] == f"{MACHINE_ID}-{NEW}"  # not consumed
    assert kernelstate.boot_entry(tmp_path, True, "bls")["id"] == f"{MACHINE_ID}-{NEW}"
    assert kernelstate.read_grubenv(tmp_path, bls.GRUBENV) == {
        "saved_entry": "x",
        "next_entry": "",
        "prev_saved_entry": "",
    }


def test_first_boot_leaves_what_the_installer_does_and_host_side_readers_agree(tmp_path, monkeypatch):
    root = rhel_boot.rhel_root(tmp_path, monkeypatch)
    # The plugin as the first boot runs it in the host's root (chroot), here under ROCM_FLEET_LAB_ROOT.
    monkeypatch.setattr(
        bls, "in_host", lambda _root, argv: rhel_boot.run(root, *argv[1:], env=dict([argv[0].split("=", 1)]))
    )
    release = os.uname().release
    bls.install(root, release)
    args = "ro crashkernel=1G-4G:192M,4G-64G:256M,64G-:512M rhgb quiet"
    assert (root / "etc/kernel/cmdline").read_text() == f"root=UUID={ROOT_UUID} {args}\n"
    assert f"options root=UUID={ROOT_UUID} {args}\n" in rhel_boot.entry_text(root, release)
    assert grubenv(root) == {"saved_entry": f"{MACHINE_ID}-{release}"}
    assert "\nblscfg\n" in (root / "boot/grub2/grub.cfg").read_text()
    assert not (root / f"boot/vmlinuz-{release}").exists()  # no lab host has the machine kernel's image
    cmdline = kernelstate.kernel_cmdline(root, boot_loader="bls")
    assert cmdline == f"BOOT_IMAGE=(hd0,gpt2)/vmlinuz-{release} root=UUID={ROOT_UUID} {args}"
    assert default_kernel(str(root)) == (release, f"/boot/loader/entries/{MACHINE_ID}-{release}.conf")
