"""The lab's update-grub stand-in lists kernels as Debian's 10_linux does: the newest first, then a submenu."""

import os
import shutil
import subprocess

import pytest

from rocm_fleet.lab import kernels, kernelstate
from rocm_fleet.lab.paths import GUEST_FILES

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("unshare"), reason="runs the stand-in in a private mount namespace (root)"
)


def run_update_grub(tmp_path):
    """The stand-in with the host's /etc and /boot bind-mounted where it reads them, in its own mount namespace."""
    script = (
        f"mount --bind {tmp_path}/etc /etc && mount --bind {tmp_path}/boot /boot"
        f" && sh {GUEST_FILES}/grub-mkconfig -o /boot/grub/grub.cfg"
    )
    subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "sh", "-ec", script], check=True, capture_output=True
    )
    return (tmp_path / "boot/grub/grub.cfg").read_text()


def test_a_newer_installed_kernel_becomes_the_first_menuentry(tmp_path):
    (tmp_path / "etc/rocm-fleet-lab").mkdir(parents=True)
    (tmp_path / "etc/rocm-fleet-lab/root-uuid").write_text("0f0e-uuid\n")
    (tmp_path / "etc/default").mkdir()
    (tmp_path / "etc/default/grub").write_text('GRUB_CMDLINE_LINUX_DEFAULT="quiet"\nGRUB_DISTRIBUTOR=Debian\n')
    newer = kernels.next_kernel_release(kernels.machine_kernel())
    kernels.install_kernel(tmp_path, newer, with_amdgpu=False)
    grub_cfg = run_update_grub(tmp_path)
    assert kernelstate.kernel_cmdline(tmp_path).startswith(f"BOOT_IMAGE=/boot/vmlinuz-{newer} root=UUID=0f0e-uuid ro")
    assert grub_cfg.index(f"with Linux {newer}'") < grub_cfg.index(f"with Linux {kernels.machine_kernel()}'")
    assert "submenu 'Advanced options for Debian GNU/Linux'" in grub_cfg
    kernels.remove_kernel(tmp_path, newer)
    run_update_grub(tmp_path)
    assert kernels.booted_kernel(kernelstate.kernel_cmdline(tmp_path)) == kernels.machine_kernel()
