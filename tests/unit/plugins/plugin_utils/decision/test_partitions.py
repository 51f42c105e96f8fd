"""Wanted partition modes: checked in decide() before any change, the logical count, and the plan (memory first)."""

import copy

import pytest
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.decision.partitions import (
    partition_decision,
    physical_gpus,
    plan_partitions,
    plan_text,
)
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.decision.preflight import decide
from fleet_testing.partition_inputs import DEBIAN_12, DEFAULTS, MI300X_PAIRS, classes, inputs, mi300x
from fleet_testing.rocm_preflight_data import CATALOG, DRIVERS, MATRIX, profile_facts


def test_defaults_want_no_partition_mode():
    assert DEFAULTS["preflight_compute_partition"] is None and DEFAULTS["preflight_memory_partition"] is None
    outcome = decide(dict(DEBIAN_12, gpu=mi300x()), inputs(), CATALOG, MATRIX, DRIVERS)
    assert outcome["problems"] == [] and outcome["proceed"]
    assert outcome["decision"]["partitions"] == {"compute": None, "memory": None, "physical_gpu_count": 8,
                                                 "expected_gpu_count": None}


def test_cpx_nps4_on_8_mi300x_expects_64_logical_gpus():
    outcome = decide(dict(DEBIAN_12, gpu=mi300x()), inputs(compute_partition="cpx", memory_partition="NPS4"),
                     CATALOG, MATRIX, DRIVERS)
    assert outcome["problems"] == [] and outcome["proceed"]
    decision = outcome["decision"]
    assert decision["partitions"] == {"compute": "CPX", "memory": "NPS4", "physical_gpu_count": 8,
                                      "expected_gpu_count": 64}
    assert decision["gpu_count"] == 8  # what the host has now


@pytest.mark.parametrize("compute, memory, count", [("SPX", "NPS1", 8), ("DPX", "NPS2", 16), ("QPX", "NPS4", 32),
                                                     ("CPX", "NPS1", 64), ("DPX", None, 16)])
def test_every_documented_mi300x_pair_gives_its_count(compute, memory, count):
    result = partition_decision("h1", mi300x(), classes(mi300x()), CATALOG, compute, memory)
    assert result["problems"] == [] and result["expected_gpu_count"] == count


def test_spx_with_nps4_is_refused_before_any_change_naming_host_gpus_and_pairs():
    outcome = decide(dict(DEBIAN_12, gpu=mi300x()), inputs(compute_partition="SPX", memory_partition="NPS4"),
                     CATALOG, MATRIX, DRIVERS)
    assert not outcome["proceed"] and len(outcome["problems"]) == 1
    problem = outcome["problems"][0]
    assert problem.startswith("host h1: GPU 0 (PCI 0000:0c:00.0), GPU 1 (PCI ")
    assert "GPU 7 (PCI " in problem
    assert problem.endswith("compute SPX with memory NPS4 is not a valid pair; allowed (memory, compute) pairs for "
                            "mi300x: " + MI300X_PAIRS)
    assert outcome["report"] == problem
    assert outcome["decision"]["partitions"]["expected_gpu_count"] is None


def test_nps4_alone_on_spx_gpus_is_refused_as_the_pair_it_would_make():
    result = partition_decision("h1", mi300x(), classes(mi300x()), CATALOG, None, "NPS4")
    assert len(result["problems"]) == 1 and "compute SPX with memory NPS4 is not a valid pair" in result["problems"][0]


def test_a_mode_the_gpu_does_not_list_is_refused():
    gpu = mi300x(available_compute=("SPX", "CPX"))
    result = partition_decision("h1", gpu, classes(gpu), CATALOG, "QPX", None)
    assert result["problems"] == ["host h1: " + ", ".join("GPU %d (PCI %s)" % (d["index"], d["pci_bus"])
                                                          for d in gpu["devices"])
                                  + ": the GPU lists compute modes SPX, CPX as available in NPS1, not QPX"]
    gpu = mi300x(available_memory=("NPS1",))
    result = partition_decision("h1", gpu, classes(gpu), CATALOG, "CPX", "NPS4")
    assert "the GPU lists memory modes NPS1 as available, not NPS4" in result["problems"][0]


def test_available_compute_modes_hold_only_under_the_current_memory_mode():
    """In NPS4 amdgpu offers only the modes valid with it; SPX after a change to NPS1 is fine."""
    gpu = mi300x("CPX", "NPS4", parts=8, available_compute=("QPX", "CPX"))
    result = partition_decision("h1", gpu, classes(gpu), CATALOG, "SPX", "NPS1")
    assert result["problems"] == [] and result["expected_gpu_count"] == 8
    assert result["physical_gpu_count"] == 8


def test_only_one_gpu_with_the_problem_is_named():
    gpu = mi300x()
    for device in gpu["devices"][1:]:
        device["available_compute_partitions"] = ["SPX", "DPX", "QPX", "CPX"]
    gpu["devices"][0]["available_compute_partitions"] = ["SPX"]
    result = partition_decision("h1", gpu, classes(gpu), CATALOG, "CPX", None)
    assert len(result["problems"]) == 1 and result["problems"][0].startswith("host h1: GPU 0 (PCI 0000:0c:00.0): ")


@pytest.mark.parametrize("name, compute, memory, reason", [
    ("mi300a", "QPX", None, "compute mode QPX is not one mi300a offers"),
    ("mi300a", "CPX", "NPS4", "memory mode NPS4 is not one mi300a offers"),
    ("mi250x", "CPX", None, "GPU class mi250x has no sourced partition modes"),
    ("mi308x", "SPX", None, "GPU class mi308x has no sourced partition modes"),
    ("mi325x", "CPX", "NPS1", "compute CPX with memory NPS1 is not a valid pair"),
])
def test_classes_refuse_what_amd_does_not_document(name, compute, memory, reason):
    gpu = mi300x(available_compute=None, available_memory=None)
    result = partition_decision("h1", gpu, classes(gpu, name), CATALOG, compute, memory)
    assert len(result["problems"]) == 1 and reason in result["problems"][0]


def test_unknown_current_mode_needs_both_declared_and_a_bad_name_is_an_input_problem():
    gpu = mi300x(compute=None, memory=None, available_compute=None, available_memory=None)
    result = partition_decision("h1", gpu, classes(gpu), CATALOG, "CPX", None)
    assert "its current memory mode is unknown" in result["problems"][0]
    assert partition_decision("h1", gpu, classes(gpu), CATALOG, "CPX", "NPS4")["expected_gpu_count"] == 64
    result = partition_decision("h1", gpu, classes(gpu), CATALOG, "XPX", "nps9")
    assert result["problems"] == ["preflight_compute_partition is XPX, not one of SPX, DPX, TPX, QPX, CPX",
                                  "preflight_memory_partition is nps9, not one of NPS1, NPS2, NPS4, NPS8"]


def test_an_unknown_class_cannot_be_checked():
    gpu = mi300x()
    result = partition_decision("h1", gpu, {}, CATALOG, "CPX", "NPS4")
    assert "its GPU class is unknown" in result["problems"][0]


def test_physical_gpus_of_a_cpx_table():
    gpus = physical_gpus(mi300x("CPX", "NPS4", parts=8))
    assert len(gpus) == 8 and gpus[1]["indices"] == list(range(8, 16)) and gpus[1]["primary"] == 8
    assert gpus[1]["compute"] == "CPX" and gpus[1]["memory"] == "NPS4"
    # Schema 1 devices (no physical_gpu): each is a GPU of its own.
    assert [entry["primary"] for entry in physical_gpus(profile_facts("mi300x-8"))] == list(range(8))


def test_plan_spx_nps1_to_cpx_nps4_sets_memory_first_then_asks_for_a_reload_and_a_new_plan():
    gpus = physical_gpus(mi300x())
    plan = plan_partitions(gpus, "CPX", "NPS4", rocm_version="7.2.3")
    assert plan["phase"] == "memory" and plan["driver_reload"] and plan["replan"] and not plan["reload_by_tool"]
    assert [step["set"] for step in plan["steps"]] == ["memory"] * 8
    assert plan["steps"][0] == {"gpu": 0, "primary": 0, "pci_bus": "0000:0c:00.0", "set": "memory",
                                "from": "NPS1", "to": "NPS4"}
    assert plan["commands"] == [["amd-smi", "set", "--memory-partition", "NPS4"]]
    assert plan_text(plan)[-1].startswith("then amdgpu reloads")
    assert plan_partitions(gpus, "CPX", "NPS4", rocm_version="6.4.1")["reload_by_tool"]
    # After the reload the facts show NPS4 (the compute mode may be anything): the compute phase.
    after = physical_gpus(mi300x("SPX", "NPS4"))
    plan = plan_partitions(after, "CPX", "NPS4")
    assert plan["phase"] == "compute" and not plan["driver_reload"] and not plan["replan"]
    assert plan["commands"] == [["amd-smi", "set", "--gpu", "all", "--compute-partition", "CPX"]]
    assert plan_partitions(physical_gpus(mi300x("CPX", "NPS4", parts=8)), "CPX", "NPS4")["steps"] == []


def test_plan_back_to_spx_nps1_sets_nps1_before_spx():
    plan = plan_partitions(physical_gpus(mi300x("CPX", "NPS4", parts=8)), "SPX", "NPS1")
    assert plan["phase"] == "memory" and {step["to"] for step in plan["steps"]} == {"NPS1"}
    plan = plan_partitions(physical_gpus(mi300x("CPX", "NPS1", parts=8)), "SPX", "NPS1")
    assert plan["phase"] == "compute" and [step["primary"] for step in plan["steps"]] == list(range(0, 64, 8))


def test_plan_targets_the_primary_partitions_of_only_the_gpus_that_differ():
    gpu = mi300x("CPX", "NPS1", parts=8)
    for device in gpu["devices"][8:16]:
        device["compute_partition"] = "QPX"
    plan = plan_partitions(physical_gpus(gpu), "CPX", None)
    assert plan["commands"] == [["amd-smi", "set", "--gpu", "8", "--compute-partition", "CPX"]]
    assert plan_text(plan) == ["physical GPU 1 (logical GPU 8, PCI 0000:%s): compute QPX -> CPX"
                               % gpu["devices"][8]["pci_bus"].split(":", 1)[1]]


def test_decide_leaves_its_inputs_alone():
    facts = dict(DEBIAN_12, gpu=mi300x())
    before = copy.deepcopy(facts)
    decide(facts, inputs(compute_partition="CPX", memory_partition="NPS4"), CATALOG, MATRIX, DRIVERS)
    assert facts == before
