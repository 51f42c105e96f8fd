"""grub2-editenv, grub2-set-default and grub2-reboot of a RHEL-family lab host: grubenv as blscfg reads it."""

from __future__ import annotations

import pytest
from fleet_testing import rhel_boot
from fleet_testing.rhel_boot import grubenv, run

from rocm_fleet.lab import kernelstate


@pytest.fixture
def root(tmp_path, monkeypatch):
    return rhel_boot.rhel_root(tmp_path, monkeypatch)


def entry(root, release):
    """A BLS entry as 20-grub.install writes it; its id."""
    rhel_boot.write(root, f"boot/loader/entries/m-{release}.conf", f"title {release}\nlinux /vmlinuz-{release}\n")
    return f"m-{release}"


def booted(root, consume=False):
    return kernelstate.boot_entry(root, consume_next_entry=consume, boot_loader="bls")["id"]


def test_editenv_dash_is_boot_grub2_grubenv_a_1024_byte_block(root):
    run(root, "/usr/bin/grub2-editenv", "-", "set", "saved_entry=a", "tuned_params=x")
    run(root, "/usr/bin/grub2-editenv", "-", "unset", "tuned_params")
    assert run(root, "/usr/bin/grub2-editenv", "-", "list").stdout == "saved_entry=a\n"
    block = (root / "boot/grub2/grubenv").read_bytes()
    assert len(block) == 1024 and block.startswith(b"# GRUB Environment Block\nsaved_entry=a\n#")
    assert not (root / "boot/grub/grubenv").exists()  # Debian's place: not a RHEL host's
    refused = run(root, "/usr/bin/grub2-editenv", "-", "frob", check=False)
    assert refused.returncode == 1 and "unknown command" in refused.stderr


def test_set_default_stores_the_entry_and_drops_a_pending_one_time_boot(root):
    old, new = entry(root, "5.14.0-1.el9"), entry(root, "5.14.0-2.el9")
    run(root, "/usr/bin/grub2-editenv", "-", "set", f"next_entry={new}", "prev_saved_entry=x")
    run(root, "/usr/sbin/grub2-set-default", old)
    assert grubenv(root) == {"saved_entry": old}
    assert booted(root) == old
    assert run(root, "/usr/sbin/grub2-set-default", check=False).returncode == 1


def test_reboot_boots_the_entry_once_then_the_saved_one_again(root):
    old, new = entry(root, "5.14.0-1.el9"), entry(root, "5.14.0-2.el9")
    run(root, "/usr/sbin/grub2-set-default", new)
    run(root, "/usr/sbin/grub2-reboot", old)
    assert grubenv(root) == {"saved_entry": new, "next_entry": old}
    assert booted(root, consume=True) == old
    assert grubenv(root)["next_entry"] == ""  # grub.cfg's save_env next_entry
    assert booted(root, consume=True) == new


def test_reboot_puts_back_a_saved_entry_an_older_grub2_reboot_kept_aside(root):
    old, new = entry(root, "5.14.0-1.el9"), entry(root, "5.14.0-2.el9")
    run(root, "/usr/bin/grub2-editenv", "-", "set", f"saved_entry={old}", f"prev_saved_entry={new}")
    run(root, "/usr/sbin/grub2-reboot", old)
    assert grubenv(root) == {"saved_entry": new, "next_entry": old}
