"""Boot-time kernel state of a lab host, derived from the host's own files."""

from __future__ import annotations

import os

import pytest

from rocm_fleet.lab import kernelstate

RELEASE = os.uname().release


def write(root, relative, text):
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_cmdline_comes_from_the_first_linux_line_of_grub_cfg(tmp_path):
    write(
        tmp_path,
        "boot/grub/grub.cfg",
        "menuentry 'Debian' {\n\tlinux\t/boot/vmlinuz-6.1.0 root=UUID=abc ro  iommu=pt quiet\n}\n"
        "menuentry 'old' {\n\tlinux\t/boot/vmlinuz-5.10 root=UUID=abc ro\n}\n",
    )
    assert kernelstate.kernel_cmdline(tmp_path) == "BOOT_IMAGE=/boot/vmlinuz-6.1.0 root=UUID=abc ro iommu=pt quiet"


def test_a_bls_host_boots_its_default_boot_loader_spec_entry_not_grub_cfg(tmp_path):
    write(tmp_path, "boot/grub/grub.cfg", "menuentry 'Debian' {\n\tlinux\t/boot/vmlinuz-6.1.0 root=UUID=abc ro\n}\n")
    write(
        tmp_path, "boot/loader/entries/m-5.14.0-1.el9.conf", "linux /vmlinuz-5.14.0-1.el9\noptions root=UUID=abc ro\n"
    )
    write(tmp_path, "boot/loader/entries/m-5.14.0-2.el9.conf", "linux /vmlinuz-5.14.0-2.el9\noptions ro iommu=pt\n")
    write(tmp_path, "boot/grub2/grubenv", "# GRUB Environment Block\nsaved_entry=m-5.14.0-1.el9\n")
    assert (
        kernelstate.kernel_cmdline(tmp_path, boot_loader="bls")
        == "BOOT_IMAGE=(hd0,gpt2)/vmlinuz-5.14.0-1.el9 root=UUID=abc ro"
    )
    assert kernelstate.kernel_cmdline(tmp_path).startswith("BOOT_IMAGE=/boot/vmlinuz-6.1.0 ")


def test_cmdline_ignores_etc_default_grub_until_grub_cfg_is_regenerated(tmp_path):
    write(tmp_path, "etc/default/grub", 'GRUB_CMDLINE_LINUX="amd_iommu=on"\n')
    assert "amd_iommu" not in kernelstate.kernel_cmdline(tmp_path)


def test_modprobe_config_reads_blacklist_install_and_options_with_etc_overriding_usr_lib(tmp_path):
    write(tmp_path, "usr/lib/modprobe.d/amdgpu.conf", "options amdgpu ras_enable=0\n")
    write(tmp_path, "etc/modprobe.d/amdgpu.conf", "options amdgpu noretry=0 ppfeaturemask=0xffffffff # tuning\n")
    write(tmp_path, "etc/modprobe.d/blacklist-radeon.conf", "blacklist radeon\ninstall nouveau /bin/false\n")
    config = kernelstate.modprobe_config(tmp_path)
    assert config["options"] == {"amdgpu": {"noretry": "0", "ppfeaturemask": "0xffffffff"}}
    assert config["blacklist"] == {"radeon"}
    assert kernelstate.install_refuses(config, "nouveau")
    assert not kernelstate.install_refuses(config, "amdgpu")


@pytest.mark.parametrize(
    ("files", "cmdline", "has_gpu", "forced_off", "loads"),
    [
        ({}, "ro quiet", True, False, True),
        ({}, "ro quiet", False, False, False),
        ({}, "ro quiet", True, True, False),
        ({}, "ro modprobe.blacklist=nouveau,amdgpu", True, False, False),
        ({}, "ro amdgpu.modeset=0", True, False, False),
        ({"etc/modprobe.d/x.conf": "blacklist amdgpu\n"}, "ro", True, False, False),
        (
            {"etc/modprobe.d/x.conf": "blacklist amdgpu\n", "etc/modules-load.d/gpu.conf": "amdgpu\n"},
            "ro",
            True,
            False,
            True,
        ),
        ({"etc/modprobe.d/x.conf": "install amdgpu /bin/false\n"}, "ro", True, False, False),
    ],
)
def test_amdgpu_loads_at_boot(tmp_path, files, cmdline, has_gpu, forced_off, loads):
    for relative, text in files.items():
        write(tmp_path, relative, text)
    assert kernelstate.amdgpu_loads_at_boot(tmp_path, cmdline, has_gpu, forced_off) is loads


def test_dkms_version_needs_both_the_dkms_tree_and_the_installed_module(tmp_path):
    assert kernelstate.dkms_amdgpu_version(tmp_path) is None
    write(tmp_path, f"var/lib/dkms/amdgpu/6.8.5-2041575.22.04/{RELEASE}/x86_64/module/amdgpu.ko", "")
    write(tmp_path, f"var/lib/dkms/amdgpu/6.10.5-2084815.22.04/{RELEASE}/x86_64/module/amdgpu.ko", "")
    assert kernelstate.dkms_amdgpu_version(tmp_path) is None  # built but not installed for the kernel
    write(tmp_path, f"usr/lib/modules/{RELEASE}/updates/dkms/amdgpu.ko", "")
    assert kernelstate.dkms_amdgpu_version(tmp_path) == "6.10.5-2084815.22.04"  # a stub without version=
    # The lab mirror's amdgpu-dkms of driver 30.30.3: modinfo's version is the module's own.
    stub = "version=6.16.13\nsrcversion=LAB0\nvermagic=x SMP mod_unload modversions\n"
    write(tmp_path, f"var/lib/dkms/amdgpu/6.16.13-2327507.24.04/{RELEASE}/x86_64/module/amdgpu.ko", stub)
    assert kernelstate.dkms_amdgpu_version(tmp_path) == "6.16.13"


def test_proc_modules_lists_amdgpu_with_its_helpers_as_holders(tmp_path):
    modules = kernelstate.boot_modules(tmp_path, amdgpu_loaded=True)
    lines = {line.split()[0]: line.split() for line in kernelstate.proc_modules_text(modules).splitlines()}
    assert lines["amdgpu"][2:5] == ["0", "-", "Live"]
    assert lines["ttm"][2:4] == ["1", "amdgpu,"]
    assert "amdgpu" not in kernelstate.proc_modules_text(kernelstate.boot_modules(tmp_path, amdgpu_loaded=False))


def test_fresh_proc_sys_gets_a_new_boot_id_each_boot(tmp_path):
    snapshot = tmp_path / "snapshot"
    write(snapshot, "kernel/numa_balancing", "1\n")
    first = kernelstate.fresh_proc_sys(snapshot, tmp_path / "boot", "host-a")
    write(tmp_path, "boot/kernel/numa_balancing", "0\n")  # a sysctl -w during the boot
    second = kernelstate.fresh_proc_sys(snapshot, tmp_path / "boot", "host-a")
    assert first != second
    assert (tmp_path / "boot/kernel/random/boot_id").read_text().strip() == second
    assert (tmp_path / "boot/kernel/numa_balancing").read_text() == "1\n"
    assert (tmp_path / "boot/kernel/hostname").read_text() == "host-a\n"


def test_a_boot_s_osrelease_is_the_kernel_it_runs(tmp_path):
    snapshot = write(tmp_path, "snapshot/kernel/osrelease", RELEASE + "\n").parents[1]
    kernelstate.fresh_proc_sys(snapshot, tmp_path / "boot", "h1", "6.19.0-1-amd64")
    assert (tmp_path / "boot/kernel/osrelease").read_text() == "6.19.0-1-amd64\n"
