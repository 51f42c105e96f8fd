"""ansible.builtin.reboot, unchanged, reboots a lab host and the new kernel command line applies."""

from __future__ import annotations

import os
import subprocess
import uuid

import pytest
from lab_ansible import LAB_INVENTORY
from lab_helpers import REPO

from rocm_fleet.lab import inventory

pytestmark = pytest.mark.lab
HOST = next(spec for spec in inventory.committed_hosts() if spec.name == "mi210-01")


def test_reboot_changes_boot_id_and_applies_grub_drop_in(lab):
    applied, not_applied = f"lab_test_applied={uuid.uuid4().hex[:8]}", f"lab_test_pending={uuid.uuid4().hex[:8]}"
    before = lab.run(HOST.port, "cat /proc/sys/kernel/random/boot_id").strip()
    lab.run(
        HOST.port,
        f"echo 'GRUB_CMDLINE_LINUX=\"$GRUB_CMDLINE_LINUX {applied}\"' "
        "| sudo tee /etc/default/grub.d/90-lab-test.cfg && sudo update-grub",
    )
    # Written after update-grub: a real machine would not boot with it either.
    lab.run(
        HOST.port,
        f"echo 'GRUB_CMDLINE_LINUX=\"$GRUB_CMDLINE_LINUX {not_applied}\"' "
        "| sudo tee /etc/default/grub.d/91-lab-test.cfg",
    )
    try:
        ansible = [
            str(REPO / ".venv" / "bin" / "ansible"),
            HOST.name,
            "-i",
            str(LAB_INVENTORY),
            "-m",
            "ansible.builtin.reboot",
        ]
        result = subprocess.run(
            ansible,
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, "ANSIBLE_CONFIG": str(REPO / "ansible.cfg")},
        )
        assert result.returncode == 0, result.stdout + result.stderr
        after = lab.run(HOST.port, "cat /proc/sys/kernel/random/boot_id").strip()
        cmdline = lab.run(HOST.port, "cat /proc/cmdline").split()
        assert after != before
        assert applied in cmdline
        assert not_applied not in cmdline
    finally:
        lab.run(
            HOST.port,
            "sudo rm -f /etc/default/grub.d/90-lab-test.cfg /etc/default/grub.d/91-lab-test.cfg && sudo update-grub",
        )
