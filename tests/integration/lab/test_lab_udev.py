"""A udev rule written inside a host decides its GPU nodes' group and mode after a reboot or a trigger."""

from __future__ import annotations

import pytest
from fleet_testing.lab_ansible import adhoc

from rocm_fleet.lab import inventory

pytestmark = [pytest.mark.lab, pytest.mark.slow]
HOST = {spec.name: spec for spec in inventory.committed_hosts()}["rx6700xt-01"]
# 00- and := : the test's rule wins whatever rules a role left on the host's disk.
RULE = "/etc/udev/rules.d/00-lab-test.rules"
STAT = "stat -c '%n %a %G' /dev/kfd /dev/dri/renderD128 /dev/dri/card0"


def nodes(lab) -> list[str]:
    return lab.run(HOST.port, STAT).splitlines()


def test_a_rule_applies_after_reboot_and_on_trigger(lab):
    before = nodes(lab)
    rule = 'SUBSYSTEM=="drm", KERNEL=="renderD*", ATTRS{vendor}=="0x1002", GROUP:="video", MODE:="0666"'
    lab.run(HOST.port, f"echo '{rule}' | sudo tee {RULE} >/dev/null")
    try:
        assert nodes(lab) == before  # no udev daemon: nothing changes until the next add event
        rebooted = adhoc(HOST.name, "ansible.builtin.reboot", "reboot_timeout=120")[HOST.name]
        assert rebooted.get("rebooted") is True, rebooted
        assert nodes(lab) == [before[0], "/dev/dri/renderD128 666 video", before[2]]
        lab.run(HOST.port, f"echo 'SUBSYSTEM==\"kfd\", MODE:=\"0600\"' | sudo tee {RULE} >/dev/null")
        lab.run(HOST.port, "sudo udevadm control --reload-rules && sudo udevadm trigger")
        assert nodes(lab)[0].split()[:2] == ["/dev/kfd", "600"]
        assert nodes(lab)[1:] == before[1:]
    finally:
        lab.run(HOST.port, f"sudo rm -f {RULE} && sudo udevadm trigger")
    assert nodes(lab) == before
