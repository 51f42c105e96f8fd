"""The GPU catalog's partition data: what AMD documents per class, each with its source, and its validation."""

import copy

import pytest
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.decision.data_checks import data_problems
from fleet_testing.roles import load_yaml

CATALOG = load_yaml("preflight/vars/gpu_catalog.yml")["preflight_gpu_catalog_builtin"]
PARTITIONED = {"mi300x", "mi300a", "mi325x", "mi350x", "mi355x"}


def test_only_the_sourced_classes_have_partition_data():
    assert {name for name, entry in CATALOG.items() if entry.get("partitions")} == PARTITIONED
    assert "partitions" not in CATALOG["mi308x"]  # nothing sourced: unknown stays unknown
    assert data_problems(CATALOG, {}) == []


def test_mi300x_modes_counts_and_pairs():
    partitions = CATALOG["mi300x"]["partitions"]
    assert partitions["compute"] == {"SPX": 1, "DPX": 2, "QPX": 4, "CPX": 8}
    assert partitions["memory"] == ["NPS1", "NPS2", "NPS4"]
    assert partitions["pairs"] == {"NPS1": ["SPX", "DPX", "QPX", "CPX"], "NPS2": ["DPX"], "NPS4": ["QPX", "CPX"]}
    assert "SPX" not in partitions["pairs"]["NPS4"]
    assert partitions["memory_change"] == "driver_reload"


def test_mi300a_is_nps1_only_with_spx_tpx_cpx():
    partitions = CATALOG["mi300a"]["partitions"]
    assert partitions["compute"] == {"SPX": 1, "TPX": 3, "CPX": 6}
    assert partitions["pairs"] == {"NPS1": ["SPX", "TPX", "CPX"]} and partitions["memory_change"] is None


@pytest.mark.parametrize("name", sorted(PARTITIONED))
def test_every_pair_uses_listed_modes_and_names_a_source(name):
    partitions = CATALOG[name]["partitions"]
    assert "docs" in partitions["source"] or "amdsmi" in partitions["source"]
    for memory, modes in partitions["pairs"].items():
        assert memory in partitions["memory"] and set(modes) <= set(partitions["compute"])
    # Every memory partition count is at most the compute partitions (AMD's rule for the pairs).
    for memory, modes in partitions["pairs"].items():
        assert all(int(memory[3:]) <= partitions["compute"][mode] for mode in modes)


@pytest.mark.parametrize("change, message", [
    ({"compute": {"XPX": 2}}, "partitions.compute names XPX"),
    ({"compute": {"SPX": 0}}, "partitions.compute.SPX must be a positive partition count"),
    ({"memory": ["NPS3"]}, "partitions.memory names NPS3"),
    ({"pairs": {"NPS8": ["SPX"]}}, "partitions.pairs names memory mode NPS8, which partitions.memory lacks"),
    ({"pairs": {"NPS1": ["TPX"]}}, "partitions.pairs.NPS1 must list compute modes of partitions.compute"),
    ({"memory_change": "reboot"}, "partitions.memory_change must be driver_reload or null"),
    ({"source": ""}, "partitions has no source"),
])
def test_a_wrong_extra_fails_with_its_key(change, message):
    catalog = copy.deepcopy(CATALOG)
    catalog["mi300x"]["partitions"].update(change)
    assert any(problem.startswith("gpu catalog class mi300x: " + message) for problem in data_problems(catalog, {}))


def test_partitions_must_be_a_mapping():
    catalog = copy.deepcopy(CATALOG)
    catalog["mi308x"]["partitions"] = ["SPX"]
    assert data_problems(catalog, {}) == ["gpu catalog class mi308x: partitions must be a mapping or null"]
