"""The lab's update-grub stand-in lists kernels as Debian's 10_linux does: the newest first, then a submenu."""

import os
import shutil
import subprocess

import pytest

from rocm_fleet.lab import kernels, kernelstate, systems
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


def test_called_grub2_mkconfig_it_writes_suses_grub_cfg_which_the_lab_boots_by_grub2_set_default(tmp_path):
    (tmp_path / "etc/rocm-fleet-lab").mkdir(parents=True)
    (tmp_path / "etc/rocm-fleet-lab/root-uuid").write_text("0f0e-uuid\n")
    (tmp_path / "etc/default").mkdir()
    (tmp_path / "etc/default/grub").write_text(
        (GUEST_FILES / "default-grub-sles").read_text() + 'GRUB_CMDLINE_LINUX_DEFAULT="quiet amd_iommu=on"\n'
    )
    (tmp_path / "etc/os-release").write_text(systems.system("sles15.7").identity["usr/lib/os-release"])
    tools = tmp_path / "tools"
    tools.mkdir()
    for name, guest in (("grub2-mkconfig", "grub-mkconfig"), ("grub2-set-default", "grub-set-default"),
                        ("grub2-editenv", "grub2-editenv")):  # fmt: skip
        (tools / name).write_bytes((GUEST_FILES / guest).read_bytes())  # the layer installs them under these names
        (tools / name).chmod(0o755)
    newer = kernels.next_kernel_release(kernels.machine_kernel())
    kernels.install_kernel(tmp_path, newer, with_amdgpu=False)
    machine_entry = f"gnulinux-advanced-0f0e-uuid>gnulinux-{kernels.machine_kernel()}-advanced-0f0e-uuid"
    script = (
        f"mount --bind {tmp_path}/etc /etc && mount --bind {tmp_path}/boot /boot && export PATH={tools}:$PATH"
        " && grub2-mkconfig -o /boot/grub2/grub.cfg"
    )
    subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-ec", script], check=True)
    # grub2-editenv takes its paths under ROCM_FLEET_LAB_ROOT (the host's /etc would hide this machine's awk).
    environment = {**os.environ, "PATH": f"{tools}:{os.environ['PATH']}", "ROCM_FLEET_LAB_ROOT": str(tmp_path)}
    subprocess.run([tools / "grub2-set-default", machine_entry], check=True, env=environment)
    grub_cfg = (tmp_path / "boot/grub2/grub.cfg").read_text()
    assert "submenu 'Advanced options for SLES 15-SP7'" in grub_cfg
    assert f"menuentry 'SLES 15-SP7, with Linux {newer}' --class sles" in grub_cfg
    assert f"initrd\t/boot/initrd-{newer}" in grub_cfg
    assert not (tmp_path / "boot/grub").exists()
    cmdline = kernelstate.kernel_cmdline(tmp_path, boot_loader="grub2")
    assert kernels.booted_kernel(cmdline) == kernels.machine_kernel()
    assert cmdline.endswith(" ro quiet amd_iommu=on")
