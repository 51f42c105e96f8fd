"""gpu_class_expectations: the compliance expectations of a host, from the catalog and matrix preflight uses."""

from pathlib import Path

import pytest
import yaml
from ansible.errors import AnsibleFilterError
from ansible_collections.rocm_fleet.core.plugins.filter.compliance import FilterModule

VARS = Path(__file__).resolve().parents[4] / "roles" / "preflight" / "vars"
expect_for = FilterModule().filters()["gpu_class_expectations"]


@pytest.fixture(scope="module")
def data():
    catalog = yaml.safe_load((VARS / "gpu_catalog.yml").read_text())["preflight_gpu_catalog_builtin"]
    matrix = yaml.safe_load((VARS / "support_matrix.yml").read_text())["preflight_support_matrix_builtin"]
    return catalog, matrix


def test_mi300x_host_is_held_to_its_class(data):
    catalog, matrix = data
    expect = expect_for(["mi300x"], catalog, matrix, 8, rocm_version="6.4.1")
    assert expect == {
        "count": 8,
        "gfx_targets": ["gfx942"],
        "products": "AMD Instinct MI300X*",
        "vram_bytes_min": int(192 * 0.9 * (1 << 30)),
        "topology": {"link_type": "XGMI", "hops": 1, "weight": 15},
        "driver": {"loaded": True, "version": "6.12.12*"},
        "rocm_version": "6.4.1-*",
    }


def test_workload_minimum_wins_over_a_smaller_card(data):
    catalog, matrix = data
    expect = expect_for(["rx6700xt"], catalog, matrix, 1, rocm_version="6.4.1", min_vram_gib=24)
    assert expect["vram_bytes_min"] == 24 * (1 << 30)
    assert "topology" not in expect
    assert expect["products"].endswith("*") and " / " not in expect["products"]


def test_mixed_host_only_count_targets_and_driver(data):
    catalog, matrix = data
    expect = expect_for(["w7900", "rx6700xt"], catalog, matrix, 2, rocm_version="6.4.1")
    assert set(expect) == {"count", "gfx_targets", "driver", "rocm_version"}
    assert expect["gfx_targets"] == ["gfx1031", "gfx1100"]


def test_host_without_gpu_and_distro_packages(data):
    catalog, matrix = data
    assert expect_for([], catalog, matrix, 0, rocm_version="6.4.1", rocm_from_amd=False) == {"count": 0}


def test_inbox_driver_has_no_version_to_check(data):
    catalog, matrix = data
    expect = expect_for(["mi210"], catalog, matrix, 4, rocm_version="6.4.1", amdgpu_from_amd=False)
    assert expect["driver"] == {"loaded": True, "version": None}


def test_unknown_class_is_a_clear_error(data):
    catalog, matrix = data
    with pytest.raises(AnsibleFilterError, match=r"unknown GPU class.*mi999"):
        expect_for(["mi999"], catalog, matrix, 1)


def test_a_site_class_without_devices_per_package_still_gets_its_vram_check():
    # rocm_data_checks does not require devices_per_package: one device per package is meant.
    catalog = {"site-gpu": {"product": "Site GPU", "gfx_target": "gfx1100", "vram_gib": 48}}
    expect = expect_for(["site-gpu"], catalog, {}, 1)
    assert expect["vram_bytes_min"] == int(48 * 0.9 * 1024**3)
