"""The real rocm-smi, run on rendered trees, agrees with collect_sysfs and the profiles.

Debian's rocm-smi 5.2.3 (librocm_smi64) reads the rendered /sys through a bind
mount in a private mount namespace; its JSON and text outputs go through the
collection's own parsers and must give the same devices and topology.
"""

import shutil

import pytest
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu_rocm_smi import (
    ROCM_SMI_JSON_ARGS,
    parse_rocm_smi_json,
)
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu_rocm_smi_text import parse_rocm_smi_text
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu_sysfs import collect_sysfs

from rocm_fleet.hardware import available_profiles, load_profile
from rocm_fleet.hardware.render import render_profile
from rocm_fleet.hardware.sandbox import run_with_sysfs, sandbox_problem

pytestmark = pytest.mark.lab

MULTI_GPU = [name for name in available_profiles() if len(load_profile(name).gpus) > 1]
FAULTS = {
    "mi300x-8 without GPU 5": lambda: load_profile("mi300x-8").without_gpu(5),
    "mi300x-8 with 0-4 on PCIe": lambda: load_profile("mi300x-8").with_link(0, 4, "PCIE"),
    "mi250x-8gcd with 0-1 on PCIe": lambda: load_profile("mi250x-8gcd").with_link(0, 1, "PCIE"),
}


@pytest.fixture(scope="module", autouse=True)
def _needs_real_rocm_smi():
    problem = sandbox_problem()
    if problem:
        pytest.skip("rocm-smi cross-check %s" % problem)
    if shutil.which("rocm-smi") is None:
        pytest.skip("rocm-smi is not installed (apt-get install rocm-smi)")


def rocm_smi(root, *args, fanless_ok=False):
    result = run_with_sysfs(root, ["rocm-smi", *args])
    # The concise view exits 2 (RSMI_STATUS_NOT_SUPPORTED) on fanless boards but prints every row.
    allowed = (0, 2) if fanless_ok else (0,)
    assert result.returncode in allowed, result.stdout[-2000:] + result.stderr[-2000:]
    return result.stdout


def crosscheck(profile, root):
    render_profile(profile, root)
    state, sysfs = collect_sysfs(str(root))
    assert state == "ok", sysfs["warnings"]
    assert sysfs["topology"] == profile.expected_topology()

    from_json = parse_rocm_smi_json(rocm_smi(root, *ROCM_SMI_JSON_ARGS))
    from_text = parse_rocm_smi_text(rocm_smi(root, "--showtopo"))
    for source in (from_json, from_text):
        for key in ("link_type", "hops", "weight", "numa_affinity"):
            assert source["topology"][key] == sysfs["topology"][key], key

    concise = parse_rocm_smi_text(rocm_smi(root, fanless_ok=True))
    assert [device["index"] for device in concise["devices"]] == [device["index"] for device in sysfs["devices"]]

    assert from_json["driver_version"] == sysfs["driver_version"] == profile.driver_version
    assert len(from_json["devices"]) == len(sysfs["devices"])
    for tool_device, sysfs_device in zip(from_json["devices"], sysfs["devices"], strict=True):
        for key in ("index", "pci_bus", "device_id", "vram_bytes", "numa_node"):
            assert tool_device[key] == sysfs_device[key], (key, tool_device, sysfs_device)


@pytest.mark.parametrize("name", MULTI_GPU)
def test_rocm_smi_agrees_with_sysfs(name, tmp_path):
    crosscheck(load_profile(name), tmp_path)


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_rocm_smi_agrees_on_faults(fault, tmp_path):
    crosscheck(FAULTS[fault](), tmp_path)


def test_rocm_smi_numbers_gpus_like_sysfs_when_cards_are_not_in_bus_order(tmp_path):
    profile = load_profile("mi300x-8")
    gpus = list(profile.gpus)
    gpus[0], gpus[5] = gpus[5], gpus[0]
    crosscheck(type(profile)(**{**profile.__dict__, "gpus": tuple(gpus)}), tmp_path)


@pytest.mark.parametrize("name", ["rx7900xtx-1", "rx6700xt-1"])
def test_single_gpu_views_work(name, tmp_path):
    profile = load_profile(name)
    render_profile(profile, tmp_path)
    concise = rocm_smi(tmp_path)  # VGA boards have a fan: exit status 0
    assert "Concise Info" in concise and "\n0 " in concise
    product = rocm_smi(tmp_path, "--showproductname", "--showbus", "--showid")
    assert profile.gpus[0].bus.upper() in product.upper()
    assert "0x%04x" % profile.gpus[0].device_id in product


def test_driver_not_loaded_is_what_rocm_smi_rejects(tmp_path):
    render_profile(load_profile("mi300x-8").with_driver_loaded(False), tmp_path)
    result = run_with_sysfs(tmp_path, ["rocm-smi", "--showtopo", "--json"])
    assert "Driver not initialized" in result.stdout + result.stderr
    state, report = collect_sysfs(str(tmp_path))
    assert state == "ok" and len(report["devices"]) == 8 and report["topology"] is None
