"""gpu_facts over SSH and lspci inside the hosts: each lab host shows exactly its profile."""

from __future__ import annotations

import re

import pytest
from fleet_testing.lab_ansible import adhoc, gpu_facts

from rocm_fleet.hardware.profile import load_profile
from rocm_fleet.lab import inventory, systems

pytestmark = pytest.mark.lab
HOSTS = {spec.name: spec for spec in inventory.committed_hosts()}


def test_gpu_facts_over_ssh_returns_each_hosts_profile(lab):
    facts = gpu_facts("all")
    assert set(facts) == set(HOSTS)
    for name, gpu in facts.items():
        profile = load_profile(HOSTS[name].profile)
        # One logical device per partition (mi300x-cpx-01: 8 MI300X in CPX are 64).
        logical = len(profile.partitions())
        assert gpu["count"] == logical, name
        assert gpu["conflicts"] == [], (name, gpu["conflicts"])
        if logical > 1:
            assert {"link_type", "hops", "weight"} <= set(gpu["topology"]), name
            assert gpu["topology"] == {
                key: value for key, value in profile.expected_topology().items() if key in gpu["topology"]
            }, name
        else:  # gpu_facts reports a topology only between GPUs
            assert gpu["topology"] is None, name


@pytest.mark.parametrize(
    ("host", "count", "pci_class"),
    [("mi300x-01", 8, "Processing accelerators [1200]"), ("rx7900xtx-01", 1, "VGA compatible controller [0300]")],
)
def test_lspci_lists_the_gpus_with_their_class(lab, host, count, pci_class):
    result = lab.run(HOSTS[host].port, "lspci -nn -d 1002: 2>&1")
    assert "pcilib" not in result
    lines = result.splitlines()
    assert len(lines) == count
    assert all(pci_class in line and re.search(r"\[1002:[0-9a-f]{4}\]", line) for line in lines), lines


def test_ansible_sees_each_host_on_the_system_its_inventory_names(lab):
    facts = adhoc("all", "ansible.builtin.setup", "gather_subset=min,!all filter=ansible_distribution*")
    seen = {
        name: {key: result["ansible_facts"][f"ansible_distribution{key}"] for key in ("", "_major_version", "_release")}
        for name, result in facts.items()
    }
    # Ubuntu: ansible-core's distribution collector reads ID=ubuntu and VERSION_CODENAME from /etc/os-release; Rocky
    # and RHEL: /etc/redhat-release's name ("RedHat" for Red Hat Enterprise Linux) and release name.
    expected = {
        key: {"": system.ansible_distribution, "_major_version": system.major, "_release": system.ansible_release}
        for key, system in systems.SYSTEMS.items()
    }
    assert seen == {name: expected[spec.system] for name, spec in HOSTS.items()}
    assert {spec.system for spec in HOSTS.values()} == set(systems.SYSTEMS)
