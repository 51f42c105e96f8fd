"""preflight_data(): the built-in catalog, matrix and driver lines, read once, combined with the extensions."""

from pathlib import Path

import pytest
import yaml
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.decision import data as rocm_data

VARS = Path(__file__).resolve().parents[5] / "roles" / "preflight" / "vars"
CATALOG = yaml.safe_load((VARS / "gpu_catalog.yml").read_text())["preflight_gpu_catalog_builtin"]
MATRIX = yaml.safe_load((VARS / "support_matrix.yml").read_text())["preflight_support_matrix_builtin"]
DRIVERS = yaml.safe_load((VARS / "amdgpu_drivers.yml").read_text())["preflight_amdgpu_drivers_builtin"]


@pytest.fixture
def fresh_cache(monkeypatch):
    monkeypatch.setattr(rocm_data, "_builtin", {})


def test_without_extras_the_data_is_the_role_files():
    assert rocm_data.preflight_data() == (CATALOG, MATRIX, DRIVERS)
    assert rocm_data.preflight_data({}, None) == (CATALOG, MATRIX, DRIVERS)


def test_each_file_is_read_once_per_process(fresh_cache, monkeypatch):
    reads = []
    read = rocm_data._read
    monkeypatch.setattr(rocm_data, "_read", lambda *args: reads.append(args[0]) or read(*args))
    for _ in range(3):
        rocm_data.preflight_data({"mi300x": {"product": "X"}})
    assert sorted(reads) == ["amdgpu_drivers.yml", "gpu_catalog.yml", "support_matrix.yml"]


def test_callers_cannot_change_the_cache_or_the_extras():
    extra = {"site-gpu": {"product": "Site GPU", "tuning": {"sysctls": {"vm.x": 1}}}}
    catalog, matrix, _ = rocm_data.preflight_data(extra)
    catalog["mi300x"]["tuning"]["sysctls"]["kernel.numa_balancing"] = 1
    catalog["site-gpu"]["tuning"]["sysctls"].clear()
    matrix.clear()
    assert rocm_data.preflight_data() == (CATALOG, MATRIX, DRIVERS)
    assert extra["site-gpu"]["tuning"]["sysctls"] == {"vm.x": 1}


def test_extras_combine_recursively_and_replace_lists():
    catalog, matrix, drivers = rocm_data.preflight_data(
        {"mi300x": {"tuning": {"sysctls": {"vm.swappiness": 10}}, "match": {"device_ids": ["0x74a1"]}}},
        {"6.4.1": {"kernel": {"max": "6.14"}}},
        {"30.30.3": {"kernel_module": "6.16.14"}},
    )
    assert catalog["mi300x"]["product"] == CATALOG["mi300x"]["product"]
    assert catalog["mi300x"]["tuning"]["sysctls"] == {"kernel.numa_balancing": 0, "vm.swappiness": 10}
    assert catalog["mi300x"]["tuning"]["boot_params"] == CATALOG["mi300x"]["tuning"]["boot_params"]
    assert catalog["mi300x"]["match"]["device_ids"] == ["0x74a1"]
    assert matrix["6.4.1"]["kernel"] == dict(MATRIX["6.4.1"]["kernel"], max="6.14")
    assert matrix["6.4.1"]["os"] == MATRIX["6.4.1"]["os"]
    assert drivers["30.30.3"] == dict(DRIVERS["30.30.3"], kernel_module="6.16.14")


def test_an_extension_that_is_not_a_mapping_is_named():
    with pytest.raises(rocm_data.RocmDataError, match="preflight_support_matrix_extra must be a mapping, got list"):
        rocm_data.preflight_data(None, ["6.4.1"])
    with pytest.raises(rocm_data.RocmDataError, match="preflight_amdgpu_drivers_extra must be a mapping, got str"):
        rocm_data.preflight_data(None, None, "30.30.3")


def test_a_missing_data_file_is_named(fresh_cache, monkeypatch, tmp_path):
    monkeypatch.setattr(rocm_data, "ROLES_DIR", str(tmp_path))
    with pytest.raises(rocm_data.RocmDataError, match=r"cannot read the preflight data file .*gpu_catalog\.yml"):
        rocm_data.preflight_data()


def test_a_data_file_without_its_variable_is_named(fresh_cache, monkeypatch, tmp_path):
    monkeypatch.setattr(rocm_data, "ROLES_DIR", str(tmp_path))
    (tmp_path / "preflight" / "vars").mkdir(parents=True)
    (tmp_path / "preflight" / "vars" / "gpu_catalog.yml").write_text("preflight_gpu_catalog: {}\n")
    with pytest.raises(rocm_data.RocmDataError, match="defines no mapping preflight_gpu_catalog_builtin"):
        rocm_data.preflight_data()
