"""Every lab fault, seen the way the fleet's tools see it: over SSH, through gpu_facts and the real rocm-smi."""

from __future__ import annotations

import re
import time

import pytest
from fleet_testing.lab_ansible import adhoc, gpu_facts
from fleet_testing.lab_helpers import rocm_fleet

from rocm_fleet.hardware.profile import load_profile
from rocm_fleet.lab import inventory

pytestmark = [pytest.mark.lab, pytest.mark.slow]
HOSTS = {spec.name: spec for spec in inventory.committed_hosts()}
MI300X = HOSTS["mi300x-01"]
PROFILE = load_profile(MI300X.profile)


@pytest.fixture(scope="module")
def mi300x(lab, converged_lab):
    """mi300x-01 as site.yml left it (rocm-smi from the lab mirror, as the packages role installs it); every fault
    cleared afterwards, so the host stays converged for the tests after these."""
    yield lab
    rocm_fleet("lab", "fault", "mirror", "up", check=False)
    rocm_fleet("lab", "fault", MI300X.name, "start", check=False)
    rocm_fleet("lab", "fault", MI300X.name, "clear", check=False)


def fault(*arguments: str) -> None:
    rocm_fleet("lab", "fault", *arguments)


def showtopo_link_types(lab) -> list[list[str]]:
    lines = lab.run(MI300X.port, "rocm-smi --showtopo").splitlines()
    title = next(number for number, line in enumerate(lines) if "Link Type between two GPUs" in line)
    rows = []
    for line in lines[title + 1 :]:
        if line.startswith("="):
            break
        if line.startswith("GPU"):
            rows.append(line.split()[1:])
    return rows


def test_stop_makes_the_host_unreachable_and_start_brings_it_back(mi300x):
    fault(MI300X.name, "stop")
    try:
        assert adhoc(MI300X.name, "ansible.builtin.ping")[MI300X.name].get("unreachable") is True
    finally:
        fault(MI300X.name, "start")
    assert adhoc(MI300X.name, "ansible.builtin.ping")[MI300X.name]["ping"] == "pong"
    assert mi300x.run(MI300X.port, "hostname").strip() == MI300X.name


def test_a_hanging_rocm_smi_times_out_and_sysfs_still_answers(mi300x):
    # The same call unfaulted, just before: what Ansible and SSH cost on this machine now (5 to 12 s on a
    # saturated CI machine), so the bound below measures the module's wait alone.
    started = time.monotonic()
    gpu_facts(MI300X.name, timeout=2)
    baseline = time.monotonic() - started
    fault(MI300X.name, "hang-tool", "rocm-smi")
    try:
        started = time.monotonic()
        facts = gpu_facts(MI300X.name, timeout=2)[MI300X.name]
        elapsed = time.monotonic() - started
    finally:
        fault(MI300X.name, "clear")
    assert facts["sources"]["rocm_smi"] == "timeout"
    assert facts["sources"]["sysfs"] == "ok"
    assert facts["count"] == len(PROFILE.gpus)
    # The hanging tool never ends (sleep infinity); a module that ignored timeout=2 would wait the default 30 s.
    assert elapsed - baseline < 15, f"gpu_facts took {elapsed:.1f} s with timeout=2, {baseline:.1f} s unfaulted"


def test_corrupt_rocm_smi_output_is_reported_as_failed(mi300x):
    fault(MI300X.name, "corrupt-tool", "rocm-smi")
    try:
        facts = gpu_facts(MI300X.name)[MI300X.name]
    finally:
        fault(MI300X.name, "clear")
    assert facts["sources"]["rocm_smi"] == "failed"
    assert any("rocm-smi" in warning or "rocm_smi" in warning for warning in facts["warnings"]), facts["warnings"]
    assert facts["count"] == len(PROFILE.gpus)


def test_a_removed_gpu_drops_the_count_and_tools_that_saw_it_disagree(mi300x):
    before = gpu_facts(MI300X.name)[MI300X.name]
    assert before["count"] == len(PROFILE.gpus) and before["conflicts"] == []
    fault(MI300X.name, "remove-gpu", "5")
    try:
        after = gpu_facts(MI300X.name)[MI300X.name]
        lspci = mi300x.run(MI300X.port, "lspci -n -d 1002:")
    finally:
        fault(MI300X.name, "clear")
    assert after["count"] == len(PROFILE.gpus) - 1
    assert len(lspci.splitlines()) == len(PROFILE.gpus) - 1
    # Every source reads the same (faulted) /sys, so they agree on the smaller count.
    assert after["conflicts"] == [], after["conflicts"]


def test_a_degraded_xgmi_link_shows_as_pcie_in_gpu_facts_and_rocm_smi(mi300x):
    fault(MI300X.name, "degrade-link", "2", "6")
    try:
        facts = gpu_facts(MI300X.name)[MI300X.name]
        smi = showtopo_link_types(mi300x)
    finally:
        fault(MI300X.name, "clear")
    link_type = facts["topology"]["link_type"]
    assert link_type[2][6] == link_type[6][2] == "PCIE"
    assert link_type[2][5] == "XGMI"
    assert smi[2][6] == smi[6][2] == "PCIE"
    assert smi[2][5] == "XGMI"


def test_unloaded_amdgpu_leaves_the_gpus_on_the_pci_bus(mi300x):
    fault(MI300X.name, "unload-amdgpu")
    try:
        facts = gpu_facts(MI300X.name)[MI300X.name]
        nodes = mi300x.run(MI300X.port, "ls /dev/kfd /dev/dri 2>&1 || true")
    finally:
        fault(MI300X.name, "clear")
    assert facts["driver"]["loaded"] is False
    assert len(facts["devices"]) == len(PROFILE.gpus)
    assert any("amdgpu is not loaded" in warning for warning in facts["warnings"]), facts["warnings"]
    assert "renderD" not in nodes


def test_a_mirror_that_is_down_fails_apt_update(mi300x):
    fault("mirror", "down")
    try:
        update = mi300x.run(MI300X.port, "sudo apt-get update 2>&1; echo rc=$?", timeout=120)
    finally:
        fault("mirror", "up")
    assert re.search(r"Failed to fetch http://127\.0\.0\.1:\d+/", update), update
    assert "rc=0" not in update or "W: Some index files failed to download" in update
    assert "Failed to fetch" not in mi300x.run(MI300X.port, "sudo apt-get update 2>&1", timeout=120)


def test_after_clear_the_host_is_its_profile_again(mi300x):
    for arguments in (("remove-gpu", "0"), ("degrade-link", "0", "1"), ("hang-tool", "rocm-smi"), ("unload-amdgpu",)):
        fault(MI300X.name, *arguments)
    fault(MI300X.name, "clear")
    facts = gpu_facts(MI300X.name, timeout=10)[MI300X.name]
    assert facts["driver"]["loaded"] is True
    assert facts["count"] == len(PROFILE.gpus)
    assert facts["topology"]["link_type"] == PROFILE.expected_topology()["link_type"]
    assert facts["sources"]["rocm_smi"] == "ok"
    assert facts["conflicts"] == []
    # rocminfo (installed with rocm-smi-lib) cannot open the lab's /dev/kfd: no real driver behind it.
    assert [warning for warning in facts["warnings"] if not warning.startswith("rocminfo")] == []
    assert showtopo_link_types(mi300x) == [
        ["0" if column == row else "XGMI" for column in range(len(PROFILE.gpus))] for row in range(len(PROFILE.gpus))
    ]
