"""What the site playbook leaves on each molecule lab host, checked over SSH with testinfra."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "src"))

from rocm_fleet.hardware.profile import load_profile  # noqa: E402

testinfra_hosts = ["all"]


@pytest.fixture
def profile(host):
    return load_profile(host.ansible.get_variables()["lab_profile"])


@pytest.fixture
def gpu(host):
    return host.ansible("rocm_fleet.core.gpu_facts", "timeout=20", check=False)["ansible_facts"]["gpu"]


def test_hostname_is_the_inventory_name(host):
    assert host.check_output("hostname") == host.ansible.get_variables()["inventory_hostname"]


def test_gpu_facts_sees_the_profiles_gpus(gpu, profile):
    assert gpu["count"] == len(profile.gpus)
    assert gpu["driver"]["loaded"] is True
    assert gpu["conflicts"] == []
    if len(profile.gpus) > 1:
        assert gpu["topology"]["link_type"] == profile.expected_topology()["link_type"]


def test_gpu_device_nodes_exist_for_the_render_group(host, profile):
    kfd = host.file("/dev/kfd")
    assert kfd.exists and host.check_output("stat -c %F /dev/kfd") == "character special file"
    assert kfd.group == "render"
    render_nodes = host.check_output("ls /dev/dri").split()
    assert len([name for name in render_nodes if name.startswith("renderD")]) == len(profile.gpus)


def test_lspci_lists_the_gpus(host, profile):
    listing = host.check_output("lspci -nn -d 1002: 2>&1")
    assert "pcilib" not in listing
    assert len(listing.splitlines()) == len(profile.gpus)


def test_the_releases_gpu_tool_lists_the_gpus_once_rocm_is_installed(host, profile):
    if not host.file("/opt/rocm").exists:
        pytest.skip("site.yml installs no ROCm yet (/opt/rocm is absent)")
    if not host.file("/opt/rocm/core").exists:  # the legacy stream: rocm-smi beside the release
        output = host.check_output("/opt/rocm/bin/rocm-smi --showid")
        assert len({line.split()[0] for line in output.splitlines() if line.startswith("GPU[")}) == len(profile.gpus)
        return
    # The ROCm Core SDK (the default, 10.x) ships no ROCm SMI, only amd-smi; the lab's amd-smi is Debian forky's,
    # which a Debian 12 host cannot run (docs/lab-mirror.md), so there rocminfo is the release's only tool.
    assert not host.exists("rocm-smi") and not host.file("/opt/rocm/bin/rocm-smi").exists
    assert host.file("/opt/rocm/bin/rocminfo").exists
    if host.exists("amd-smi"):
        output = host.check_output("amd-smi list")
        assert len([line for line in output.splitlines() if line.startswith("GPU: ")]) == len(profile.gpus)


def test_the_scenario_runs_its_own_lab():
    assert os.environ.get("ROCM_FLEET_LAB_DIR", "").endswith("molecule-default")
