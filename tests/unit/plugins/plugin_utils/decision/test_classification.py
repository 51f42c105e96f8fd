"""GPU classification against the built-in catalog: lab profiles, shared device IDs, GCDs."""

import pytest
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.decision import provisioning as decisions
from fleet_testing.rocm_preflight_data import CATALOG, LAB_PROFILES, classify, device, profile_facts, support

from rocm_fleet.hardware.profile import available_profiles


def test_every_lab_profile_exists_for_the_expectations():
    assert set(LAB_PROFILES) <= set(available_profiles())


@pytest.mark.parametrize("name", sorted(LAB_PROFILES))
def test_lab_profiles_classify(name):
    expected_class, devices, packages = LAB_PROFILES[name]
    summary = decisions.classify_gpus(profile_facts(name), CATALOG)
    assert summary["problems"] == []
    assert summary["classes"] == ([expected_class] if expected_class else [])
    assert summary["count"] == devices
    assert summary["package_count"] == packages
    assert summary["mixed"] is False


def test_mi250x_counts_two_gcds_per_package_and_flags_a_missing_gcd():
    summary = classify(*[device(i, "0x740c", "gfx90a", 64) for i in range(8)])
    assert summary["class_counts"] == {"mi250x": 8} and summary["packages"] == {"mi250x": 4}
    assert summary["devices"][0]["nominal_vram_gib"] == 64
    odd = classify(*[device(i, "0x7408", "gfx90a", 64) for i in range(7)])
    assert odd["package_count"] == 4
    assert any("GCD is missing" in text for text in odd["warnings"])


def test_mi250_subsystem_id_is_more_specific_than_mi250x():
    assert classify(device(0, "0x740c", "gfx90a", 64, subsystem="0x0b0c"))["classes"] == ["mi250"]
    assert classify(device(0, "0x740c", "gfx90a", 64, subsystem="0x0c34"))["classes"] == ["mi250x"]


@pytest.mark.parametrize(
    ("vram_bytes", "expected"),
    [(25753026560, "rx7900xtx"), (21458059264, "rx7900xt"), (17163091968, "rx7900gre")],
)
def test_shared_744c_is_told_apart_by_vram(vram_bytes, expected):
    gpu = dict(device(0, "0x744c", "gfx1100", 0, subsystem="0x5200"), vram_bytes=vram_bytes)
    summary = decisions.classify_gpus({"devices": [gpu]}, CATALOG)
    assert summary["classes"] == [expected]


def test_shared_id_without_vram_cannot_be_classified():
    gpu = dict(device(0, "0x744c", "gfx1100", 0), vram_bytes=None)
    summary = decisions.classify_gpus({"devices": [gpu]}, CATALOG)
    assert summary["devices"][0]["class"] is None
    assert "rx7900xtx" in summary["problems"][0] and "VRAM" in summary["problems"][0]


def test_unknown_device_gets_no_class_and_cannot_be_accepted():
    summary = classify(device(0, "0x1234", "gfx1036", 2))
    assert summary["devices"][0]["class"] is None and summary["unknown_devices"] == [0]
    assert "0x1234" in summary["problems"][0] and "preflight_gpu_catalog_extra" in summary["problems"][0]
    decision = support(summary, acceptances=[{"what": "gpu", "reason": "try it"}])
    assert not decision["proceed"] and decision["accepted"] == []
