"""`lab fault HOST ...` health, boot and environment faults on a host that is not running, and `clear`."""

import json
import os
import shutil
import struct

import pytest

from rocm_fleet.hardware.render_efi import EFI_GLOBAL_VARIABLE
from rocm_fleet.lab import cli_faults, faults, faults_boot, faults_env, hwsys, kernels, modsign
from rocm_fleet.lab.host import HostSpec, LabHost

DKMS = "6.16.13-2327507.24.04"
RELEASE = kernels.machine_kernel()


@pytest.fixture
def host(tmp_path, monkeypatch):
    monkeypatch.setenv("ROCM_FLEET_LAB_DIR", str(tmp_path / "state"))
    lab_host = LabHost(HostSpec("mi300x-01", "mi300x-8", 2201))
    root = lab_host.root
    (root / "etc").mkdir(parents=True)
    (root / "etc/passwd").write_text("root:x:0:0:root:/root:/bin/bash\nfleet:x:1000:1000::/home/fleet:/bin/bash\n")
    (root / "etc/group").write_text("root:x:0:\nrender:x:105:\nvideo:x:44:\n")
    for built in (f"var/lib/dkms/amdgpu/{DKMS}/{RELEASE}/x86_64/module", f"usr/lib/modules/{RELEASE}/updates/dkms"):
        (root / built).mkdir(parents=True)
        (root / built / "amdgpu.ko").write_text(f"version=6.16.13\nvermagic={RELEASE} SMP\n")
    commands = []
    monkeypatch.setattr(faults_boot, "run_in_host", lambda _host, *argv: fake_tool(root, commands, argv))
    monkeypatch.setattr(faults_env, "run_in_host", lambda _host, *argv: fake_tool(root, commands, argv))
    lab_host.commands = commands
    return lab_host


def fake_tool(root, commands, argv):
    """useradd/gpasswd/userdel edit passwd and group as the real ones do; update-grub is recorded."""
    commands.append(list(argv))
    passwd, group = root / "etc/passwd", root / "etc/group"
    if argv[0] == "useradd":
        passwd.write_text(passwd.read_text() + f"{argv[-1]}:x:1001:1001::/home/{argv[-1]}:/bin/bash\n")
    elif argv[0] == "userdel":
        passwd.write_text(
            "".join(line + "\n" for line in passwd.read_text().splitlines() if not line.startswith(argv[-1] + ":"))
        )
    elif argv[0] == "gpasswd":
        action, user, name = argv[1:]
        lines = []
        for line in group.read_text().splitlines():
            fields = line.split(":")
            if fields[0] == name:
                members = [member for member in fields[3].split(",") if member and member != user]
                fields[3] = ",".join(members + ([user] if action == "--add" else []))
            lines.append(":".join(fields))
        group.write_text("\n".join(lines) + "\n")


def recorded(host):
    return json.loads((host.dir / "faults.json").read_text())


def rendered(host, tmp_path, name):
    destination = tmp_path / name / "sys"
    hwsys.render_sys(host.spec.profile, faults.load_faults(host), {"version": None, "options": {}}, destination)
    return destination


def test_gpu_health_faults_are_recorded_and_rendered(host, tmp_path):
    cli_faults.run(host, "pcie-link", ["--gpu", "0", "--width", "8", "--speed", "8.0 GT/s PCIe"])
    cli_faults.run(host, "ras", ["--gpu", "1", "--block", "umc", "--ue", "1", "--ce", "3"])
    assert "0x00558103" in cli_faults.run(host, "firmware", ["--gpu", "2", "--fw", "smc", "--version", "00.85.129.03"])
    cli_faults.run(host, "init-failure", ["--gpu", "7"])
    state = recorded(host)
    assert state["pcie_links"] == [{"gpu": 0, "speed": "8.0 GT/s PCIe", "width": 8}]
    assert state["ras_errors"] == [{"gpu": 1, "block": "umc", "ue": 1, "ce": 3}]
    assert state["firmware"] == [{"gpu": 2, "fw": "smc", "version": 0x00558103}]
    assert state["init_failed_gpus"] == [7]
    sys_dir = rendered(host, tmp_path, "faulted")
    devices = sorted((sys_dir / "bus/pci/devices").iterdir())
    assert (devices[0] / "current_link_width").read_text() == "8\n"
    assert (devices[1] / "ras/umc_err_count").read_text() == "ue: 1\nce: 3\n"
    assert (devices[2] / "fw_version/smc_fw_version").read_text() == "0x00558103\n"
    assert not (devices[7] / "driver").exists() and (devices[7] / "vendor").exists()


def test_health_faults_refuse_what_the_hardware_cannot_be(host):
    with pytest.raises(faults.FaultError, match="maximum"):
        cli_faults.run(host, "pcie-link", ["--gpu", "0", "--width", "32"])
    with pytest.raises(faults.FaultError, match="no GPU 9"):
        cli_faults.run(host, "init-failure", ["--gpu", "9"])
    with pytest.raises(faults.FaultError, match="no vce"):
        cli_faults.run(host, "ras", ["--gpu", "0", "--block", "vce"])
    with pytest.raises(SystemExit):
        cli_faults.run(host, "ras", ["--gpu", "0"])  # --block is required


def test_new_kernel_becomes_the_default_without_touching_the_running_boot(host):
    message = cli_faults.run(host, "new-kernel", ["--version", "6.19.0-1-amd64"])
    assert "6.19.0-1-amd64" in message
    assert (host.root / "boot/vmlinuz-6.19.0-1-amd64").is_file()
    assert not (host.root / "usr/lib/modules/6.19.0-1-amd64/updates").exists()
    assert host.commands == [["/usr/sbin/update-grub"]]
    assert recorded(host)["new_kernels"] == [{"release": "6.19.0-1-amd64", "with_amdgpu": False}]
    assert kernels.amdgpu_refusal(host.root, "6.19.0-1-amd64", False, []).startswith("modprobe: FATAL")


def test_on_a_rhel_family_host_a_new_kernel_comes_and_goes_through_kernel_install(host):
    rocky = LabHost(HostSpec(host.spec.name, host.spec.profile, host.spec.port, system="rocky9.6"))
    cli_faults.run(rocky, "new-kernel", ["--version", "6.19.0-1-amd64"])
    assert (rocky.root / "usr/lib/modules/6.19.0-1-amd64/vmlinuz").is_file()  # kernel-core's files
    assert not (rocky.root / "boot").exists()  # kernel-install's plugins copy the image
    faults.clear(rocky)
    assert host.commands == [
        ["kernel-install", "add", "6.19.0-1-amd64", "/lib/modules/6.19.0-1-amd64/vmlinuz"],
        ["kernel-install", "remove", "6.19.0-1-amd64"],
    ]
    assert not (rocky.root / "usr/lib/modules/6.19.0-1-amd64").exists()


def test_secure_boot_with_unsigned_then_signed_and_enrolled_amdgpu(host, tmp_path):
    cli_faults.run(host, "secure-boot", ["on"])
    profile = hwsys.load_faulted_profile(host.spec.profile, faults.load_faults(host))
    assert profile.secure_boot
    module = host.root / f"usr/lib/modules/{RELEASE}/updates/dkms/amdgpu.ko"
    assert kernels.amdgpu_refusal(host.root, RELEASE, True, list(profile.mok_certificates)) == modsign.KEY_REJECTED
    cli_faults.run(host, "amdgpu-signature", ["signed"])
    assert module.read_bytes().endswith(modsign.MAGIC)
    built = host.root / f"var/lib/dkms/amdgpu/{DKMS}/{RELEASE}/x86_64/module/amdgpu.ko"
    assert built.read_bytes() == module.read_bytes()  # dkms installs a copy of the built module
    assert (host.root / modsign.DKMS_CERTIFICATE).is_file()
    assert kernels.amdgpu_refusal(host.root, RELEASE, True, list(profile.mok_certificates)) == modsign.KEY_REJECTED
    cli_faults.run(host, "secure-boot", ["on", "--enroll-dkms-key"])
    profile = hwsys.load_faulted_profile(host.spec.profile, faults.load_faults(host))
    assert kernels.amdgpu_refusal(host.root, RELEASE, True, list(profile.mok_certificates)) is None
    efivar = rendered(host, tmp_path, "sb") / f"firmware/efi/efivars/SecureBoot-{EFI_GLOBAL_VARIABLE}"
    assert struct.unpack("<IB", efivar.read_bytes()) == (6, 1)


def test_environment_faults_write_as_root_inside_the_host(host):
    assert cli_faults.run(host, "foreign-env", []) == "wrote /etc/profile.d/gfx-override.sh"
    path = host.root / "etc/profile.d/gfx-override.sh"
    assert path.read_text() == "export HSA_OVERRIDE_GFX_VERSION=11.0.0\n"
    assert (path.stat().st_uid, path.stat().st_mode & 0o777) == (0, 0o644)
    cli_faults.run(host, "unlisted-member", ["--user", "mallory"])
    assert ["useradd", "--create-home", "--shell", "/bin/bash", "mallory"] in host.commands
    assert "render:x:105:mallory" in (host.root / "etc/group").read_text()


def test_clear_restores_the_baseline(host, tmp_path):
    before = {p: p.read_bytes() for p in sorted(host.root.rglob("*")) if p.is_file()}
    baseline = rendered(host, tmp_path, "baseline")
    for fault, arguments in [
        ("pcie-link", ["--gpu", "0", "--width", "8"]),
        ("ras", ["--gpu", "1", "--block", "umc", "--ue", "1"]),
        ("firmware", ["--gpu", "2", "--fw", "smc", "--version", "0x00558103"]),
        ("init-failure", ["--gpu", "3"]),
        ("new-kernel", ["--with-amdgpu"]),
        ("amdgpu-signature", ["signed"]),
        ("secure-boot", ["on", "--enroll-dkms-key"]),
        ("foreign-env", []),
        ("unlisted-member", ["--user", "mallory"]),
    ]:
        cli_faults.run(host, fault, arguments)
    faults.clear(host)
    assert not (host.dir / "faults.json").exists()
    after = {p: p.read_bytes() for p in sorted(host.root.rglob("*")) if p.is_file()}
    assert after == before
    again = rendered(host, tmp_path, "cleared")
    assert tree(again) == tree(baseline)
    shutil.rmtree(tmp_path / "cleared")


def tree(sys_dir):
    entries = {}
    for path in sorted(sys_dir.rglob("*")):
        key = str(path.relative_to(sys_dir))
        entries[key] = os.readlink(path) if path.is_symlink() else (path.read_bytes() if path.is_file() else None)
    return entries


def test_dotted_firmware_versions_read_as_amd_smi_prints_them():
    from rocm_fleet.lab.faults_health import parse_firmware_version

    assert parse_firmware_version("00.85.129.03", "smc") == 0x00558103  # PM: decimal bytes
    assert parse_firmware_version("01.25.03.12", "pldm") == 0x01250312  # PLDM_BUNDLE: hex bytes
    assert parse_firmware_version("0x00558103", "smc") == parse_firmware_version("5603587", "smc")
