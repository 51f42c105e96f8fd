"""ansible.builtin.reboot, unchanged, reboots a lab host and the new kernel command line applies."""

from __future__ import annotations

import os
import subprocess
import uuid

import pytest
from fleet_testing.lab_ansible import LAB_INVENTORY
from fleet_testing.lab_helpers import REPO

from rocm_fleet.lab import inventory

pytestmark = pytest.mark.lab
HOSTS = {spec.name: spec for spec in inventory.committed_hosts()}
# A Debian 12 and a Debian 13 host: the lab's init, shutdown and grub-mkconfig serve both userlands.
REBOOTED = ("mi210-01", "rx7900xtx-01")


def test_the_rebooted_hosts_cover_every_userland_the_lab_installs():
    assert {HOSTS[name].suite for name in REBOOTED} == {spec.suite for spec in HOSTS.values()}


@pytest.mark.parametrize("name", REBOOTED)
def test_reboot_changes_boot_id_and_applies_grub_drop_in(lab, name):
    host = HOSTS[name]
    applied, not_applied = f"lab_test_applied={uuid.uuid4().hex[:8]}", f"lab_test_pending={uuid.uuid4().hex[:8]}"
    before = lab.run(host.port, "cat /proc/sys/kernel/random/boot_id").strip()
    lab.run(
        host.port,
        f"echo 'GRUB_CMDLINE_LINUX=\"$GRUB_CMDLINE_LINUX {applied}\"' "
        "| sudo tee /etc/default/grub.d/90-lab-test.cfg && sudo update-grub",
    )
    # Written after update-grub: a real machine would not boot with it either.
    lab.run(
        host.port,
        f"echo 'GRUB_CMDLINE_LINUX=\"$GRUB_CMDLINE_LINUX {not_applied}\"' "
        "| sudo tee /etc/default/grub.d/91-lab-test.cfg",
    )
    try:
        ansible = [
            str(REPO / ".venv" / "bin" / "ansible"),
            host.name,
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
        after = lab.run(host.port, "cat /proc/sys/kernel/random/boot_id").strip()
        cmdline = lab.run(host.port, "cat /proc/cmdline").split()
        assert after != before
        assert applied in cmdline
        assert not_applied not in cmdline
    finally:
        lab.run(
            host.port,
            "sudo rm -f /etc/default/grub.d/90-lab-test.cfg /etc/default/grub.d/91-lab-test.cfg && sudo update-grub",
        )
