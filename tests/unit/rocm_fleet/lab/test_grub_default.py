"""The lab boots the entry GRUB would: GRUB_DEFAULT (index, "1>2", id path, title), saved_entry, next_entry once."""

import os
import shutil
import subprocess

import pytest

from rocm_fleet.lab import kernels, kernelstate
from rocm_fleet.lab.mirror import kernel_packages
from rocm_fleet.lab.paths import GUEST_FILES

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("unshare"), reason="runs the stand-ins in a private mount namespace (root)"
)
MACHINE = kernels.machine_kernel()
NEWER = kernel_packages.good_kernel(MACHINE)


def in_host(tmp_path, command):
    """A lab stand-in with the host's /etc and /boot bind-mounted where it reads them."""
    script = f"mount --bind {tmp_path}/etc /etc && mount --bind {tmp_path}/boot /boot && {command}"
    return subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "sh", "-ec", script],
        check=True,
        capture_output=True,
        text=True,
    ).stdout


@pytest.fixture
def host(tmp_path):
    (tmp_path / "etc/rocm-fleet-lab").mkdir(parents=True)
    (tmp_path / "etc/rocm-fleet-lab/root-uuid").write_text("0f0e-uuid\n")
    (tmp_path / "etc/default").mkdir()
    kernels.install_kernel(tmp_path, NEWER, with_amdgpu=False)
    return tmp_path


def update_grub(host, default):
    (host / "etc/default/grub").write_text(f"GRUB_DEFAULT={default}\nGRUB_DISTRIBUTOR=Debian\n")
    in_host(host, f"sh {GUEST_FILES}/grub-mkconfig -o /boot/grub/grub.cfg")


def editenv(host, *args):
    return in_host(host, f"sh {GUEST_FILES}/grub-editenv /boot/grub/grubenv " + " ".join(f"'{a}'" for a in args))


def booted(host, consume=False):
    return kernels.booted_kernel(kernelstate.kernel_cmdline(host, consume_next_entry=consume))


def test_default_0_boots_the_newest_kernel_and_an_index_path_another(host):
    update_grub(host, "0")
    assert booted(host) == NEWER
    update_grub(host, '"1>2"')  # the submenu's third entry: the older kernel (each kernel has a recovery entry)
    assert booted(host) == MACHINE


def test_saved_boots_the_entry_grub_set_default_stored(host):
    update_grub(host, "saved")
    assert booted(host) == NEWER  # no saved entry yet: GRUB falls back to the first entry
    entry = f"gnulinux-advanced-0f0e-uuid>gnulinux-{MACHINE}-advanced-0f0e-uuid"
    editenv(host, "set", f"saved_entry={entry}")
    assert booted(host) == MACHINE
    assert f"saved_entry={entry}" in editenv(host, "list")
    assert (host / "boot/grub/grubenv").stat().st_size == 1024


def test_a_bare_submenu_entry_id_is_not_found_and_boots_the_first_entry(host):
    update_grub(host, "saved")
    editenv(host, "set", f"saved_entry=gnulinux-{MACHINE}-advanced-0f0e-uuid")
    assert booted(host) == NEWER


def test_next_entry_boots_once_and_is_cleared(host):
    update_grub(host, "saved")
    editenv(host, "set", f"saved_entry=gnulinux-advanced-0f0e-uuid>gnulinux-{NEWER}-advanced-0f0e-uuid")
    editenv(host, "set", f"next_entry=gnulinux-advanced-0f0e-uuid>gnulinux-{MACHINE}-advanced-0f0e-uuid")
    assert booted(host, consume=True) == MACHINE
    assert booted(host, consume=True) == NEWER
    assert "next_entry=\n" in editenv(host, "list") + "\n"


def test_the_mirror_kernels_are_one_amdgpu_builds_for_and_one_above_every_driver():
    good, bad = kernel_packages.good_kernel("6.1.0-18-amd64"), kernel_packages.bad_kernel("6.1.0-18-amd64")
    assert good == "6.1.0-19-amd64"
    assert kernel_packages.kernel_numbers(bad)[:2] > kernel_packages.newest_driver_base()
    assert kernel_packages.bad_kernel("7.2.1") == "7.3.0-1-amd64"
    assert kernel_packages.good_kernel("6.18.44-fc-v1045") == "6.18.45-1-amd64"
