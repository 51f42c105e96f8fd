"""The issue 11 health and boot faults on a booted host: what the running boot shows, what a reboot does, `clear`.

Runs its own one-host lab (own state directory, inventory and port, no mirror) beside the session's lab.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest
from fleet_testing.lab_helpers import LabShell, lab_available, rocm_fleet

pytestmark = pytest.mark.lab
PORT = 2297
HOST = "health-01"
DEVICE = "/sys/bus/pci/devices/0000:22:00.0"
# What the mirror's amdgpu-dkms leaves (lab/mirror/scripts.py), without the package.
DKMS_STUB = (
    "k=$(uname -r); t=/var/lib/dkms/amdgpu/6.16.13-2327507.24.04/$k/x86_64/module;"
    " mkdir -p $t /lib/modules/$k/updates/dkms;"
    ' printf "version=6.16.13\\nvermagic=$k SMP\\n" > $t/amdgpu.ko; cp $t/amdgpu.ko /lib/modules/$k/updates/dkms/'
)


@pytest.fixture
def health_lab(tmp_path):
    reason = lab_available()
    if reason:
        pytest.skip(reason)
    inventory = tmp_path / "inventory"
    (inventory / "group_vars").mkdir(parents=True)
    (inventory / "hosts.yml").write_text(
        f"---\nall:\n  hosts:\n    {HOST}:\n      lab_profile: mi300x-8\n      ansible_port: {PORT}\n"
    )
    env = {"ROCM_FLEET_LAB_DIR": str(tmp_path / "state"), "ROCM_FLEET_LAB_INVENTORY": str(inventory),
           "ROCM_FLEET_LAB_MIRROR": "off"}  # fmt: skip
    up = rocm_fleet("lab", "up", env=env, check=False)
    assert up.returncode == 0, up.stdout + up.stderr
    try:
        yield tmp_path / "state", env, LabShell(tmp_path / "state")
    finally:
        rocm_fleet("lab", "down", env=env, check=False)


def status(state: Path) -> dict:
    return json.loads((state / "hosts" / HOST / "status.json").read_text())


def reboot(state: Path, shell: LabShell) -> dict:
    before = status(state)["boot_id"]
    shell.run(PORT, "sudo reboot", check=False)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            now = status(state)
            if now.get("boot_id") != before and shell.run(PORT, "echo up", check=False, timeout=5).strip() == "up":
                return now
        except (OSError, ValueError, subprocess.TimeoutExpired):
            pass
        time.sleep(0.5)
    raise AssertionError("the host did not come back after the reboot")


def fault(env, *arguments):
    result = rocm_fleet("lab", "fault", HOST, *arguments, env=env, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def test_health_faults_show_at_once_and_boot_faults_at_the_next_boot(health_lab):
    state, env, shell = health_lab
    assert (
        shell.run(PORT, f"cat {DEVICE}/ras/umc_err_count {DEVICE}/fw_version/smc_fw_version")
        == "ue: 0\nce: 0\n0x00558200\n"
    )
    fault(env, "pcie-link", "--gpu", "1", "--width", "8", "--speed", "8.0 GT/s PCIe")
    fault(env, "ras", "--gpu", "1", "--block", "umc", "--ue", "1")
    assert shell.run(PORT, f"cat {DEVICE}/current_link_width {DEVICE}/ras/umc_err_count") == "8\nue: 1\nce: 0\n"

    shell.run(PORT, f"sudo sh -c '{DKMS_STUB}'")
    fault(env, "secure-boot", "on")
    assert reboot(state, shell)["amdgpu_refused"].endswith("Key was rejected by service")
    assert "amdgpu" not in shell.run(PORT, "lsmod")
    fault(env, "amdgpu-signature", "signed")
    fault(env, "secure-boot", "on", "--enroll-dkms-key")
    shell.run(PORT, "sudo modprobe amdgpu")
    assert "6.16.13" in shell.run(PORT, "cat /sys/module/amdgpu/version")

    cmdline = shell.run(PORT, "cat /proc/cmdline")
    fault(env, "new-kernel", "--version", "6.99.0-1-amd64")
    assert shell.run(PORT, "cat /proc/cmdline") == cmdline  # the running boot keeps its kernel
    booted = reboot(state, shell)
    assert booted["kernel"] == "6.99.0-1-amd64" and not booted["amdgpu_loaded"]
    assert shell.run(PORT, "cat /proc/cmdline").startswith("BOOT_IMAGE=/boot/vmlinuz-6.99.0-1-amd64 ")

    fault(env, "clear")
    booted = reboot(state, shell)
    assert booted["amdgpu_loaded"] and booted["amdgpu_refused"] is None
    assert shell.run(PORT, f"cat {DEVICE}/current_link_width {DEVICE}/ras/umc_err_count") == "16\nue: 0\nce: 0\n"
