"""decide(): preflight's whole decision on lab-profile facts; gpu_expectations(): what compliance holds it to."""

import copy

import pytest
import yaml
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.decision.preflight import (
    INPUT_KEYS,
    closest_name,
    decide,
    expected_classes,
    gpu_expectations,
)
from fleet_testing.rocm_preflight_data import CATALOG, DRIVERS, GIB, MATRIX, REPO, profile_facts

DEFAULTS = yaml.safe_load((REPO / "roles" / "preflight" / "defaults" / "main.yml").read_text())
DEBIAN_12 = {"os_family": "Debian", "distribution": "Debian", "distribution_version": "12.7",
             "kernel": "6.1.0-28-amd64", "processor": ["0", "AuthenticAMD", "AMD EPYC 9654"]}
DECISION_KEYS = {"rocm_version", "classes", "gpu_classes_by_index", "gpu_count", "gfx_targets", "tuning",
                 "hsa_overrides", "pytorch_rocm_arch", "runtime_gfx_targets", "reboot_allowed", "supported", "accepted",
                 "warnings", "os",
                 "kernel", "workload", "summary", "expected_classes", "min_vram_gib", "amdgpu_driver", "partitions"}


def inputs(**overrides):
    """The role defaults as preflight_decision_inputs gives them, for host h1, on the legacy 7.2.3 (the facts these
    tests state are that release's; test_the_role_default_is_the_core_sdk decides the default)."""
    values = dict((key, DEFAULTS.get("preflight_" + key)) for key in INPUT_KEYS if key != "host")
    values.update(host="h1", rocm_version="7.2.3")
    values.update(**overrides)
    return values


def facts(profile, **overrides):
    return dict(DEBIAN_12, gpu=profile_facts(profile), **overrides)


def mixed_facts():
    """A W7900 (gfx1100) and an RX 6700 XT (gfx1031, which needs an override) in one host."""
    gpu = profile_facts("w7900-2")
    other = dict(profile_facts("rx6700xt-1")["devices"][0], index=1, kfd_node=2)
    gpu["devices"][1] = other
    return dict(DEBIAN_12, gpu=gpu)


def test_mi300x_host_as_the_inventory_declares_it():
    outcome = decide(facts("mi300x-8"), inputs(expected_class="mi300x", expected_gpu_count=8, workload="llm",
                                               reboot_allowed="yes"), CATALOG, MATRIX, DRIVERS)
    assert outcome["problems"] == [] and outcome["conflicts"] == [] and outcome["proceed"]
    decision = outcome["decision"]
    assert set(decision) == DECISION_KEYS
    assert decision["classes"] == ["mi300x"] and decision["gpu_classes_by_index"] == dict.fromkeys(range(8), "mi300x")
    assert decision["gpu_count"] == 8 and decision["gfx_targets"] == ["gfx942"]
    assert decision["tuning"] == {"boot_params": ["iommu=pt", "pci=realloc=off"],
                                  "sysctls": {"kernel.numa_balancing": 0}, "modprobe_options": {}}
    assert decision["hsa_overrides"] == {} and decision["pytorch_rocm_arch"] == "gfx942"
    assert decision["supported"] and decision["reboot_allowed"] is True
    assert decision["rocm_version"] == "7.2.3"
    assert decision["expected_classes"] == ["mi300x"] and decision["min_vram_gib"] == 24
    assert decision["os"] == "Debian 12.7" and decision["summary"]["package_count"] == 8
    report = outcome["report"]
    assert report.startswith("host h1: ROCm 7.2.3 on Debian 12.7")
    assert report.endswith(": supported")
    assert outcome["gpus"] == "8 x AMD Instinct MI300X (gfx942)"


def test_an_intel_host_gets_the_intel_boot_parameter():
    outcome = decide(facts("mi300x-8", processor=["0", "GenuineIntel", "Intel Xeon"]), inputs(), CATALOG, MATRIX,
                     DRIVERS)
    assert "intel_iommu=on" in outcome["decision"]["tuning"]["boot_params"]


def test_mixed_host_gets_a_per_device_override_and_both_targets():
    outcome = decide(mixed_facts(), inputs(expected_class="w7900, rx6700xt", expected_gpu_count=2,
                                           accept_unsupported=[{"what": "os", "reason": "site image"},
                                                               {"what": "gpu", "value": "rx6700xt",
                                                                "reason": "desk box"}]), CATALOG, MATRIX, DRIVERS)
    assert outcome["proceed"], outcome["report"]
    decision = outcome["decision"]
    assert decision["expected_classes"] == ["w7900", "rx6700xt"] and decision["classes"] == ["rx6700xt", "w7900"]
    assert decision["gpu_classes_by_index"] == {0: "w7900", 1: "rx6700xt"}
    assert decision["hsa_overrides"] == {"HSA_OVERRIDE_GFX_VERSION_2": "10.3.0"}
    assert decision["pytorch_rocm_arch"] == "gfx1030;gfx1100" and not decision["supported"]
    # The RX 6700 XT's gfx1031 runs as gfx1030: the Core SDK's per-target packages follow the runtime.
    assert decision["gfx_targets"] == ["gfx1031", "gfx1100"]
    assert decision["runtime_gfx_targets"] == ["gfx1030", "gfx1100"]
    assert sorted(item["what"] for item in decision["accepted"]) == ["gpu", "os"]
    assert "(reason: desk box)" in outcome["report"]


def test_host_without_gpus_must_say_so():
    refused = decide(facts("nogpu"), inputs(), CATALOG, MATRIX, DRIVERS)
    assert not refused["proceed"] and "no AMD GPU found" in refused["report"]
    outcome = decide(facts("nogpu"), inputs(expected_gpu_count=0), CATALOG, MATRIX, DRIVERS)
    assert outcome["proceed"] and outcome["decision"]["classes"] == [] and outcome["decision"]["gpu_count"] == 0
    assert outcome["decision"]["tuning"]["boot_params"] == [] and outcome["decision"]["pytorch_rocm_arch"] == ""


def test_the_role_default_is_the_core_sdk():
    outcome = decide(facts("mi300x-8"), inputs(rocm_version=DEFAULTS["preflight_rocm_version"]), CATALOG, MATRIX,
                     DRIVERS)
    assert outcome["proceed"], outcome["report"]
    assert MATRIX[outcome["decision"]["rocm_version"]]["stream"] == "core_sdk_10"
    assert outcome["decision"]["amdgpu_driver"]["line"] == "31.50"
    # The Core SDK's .info/version holds the release alone: the compliance role passes the stream's version_file
    # (the packages plan's), which stays as it is; a bare legacy release gets rocm-core's -<build>.
    expect = gpu_expectations(outcome["decision"], CATALOG, MATRIX, "10.1.0")
    assert expect["rocm_version"] == "10.1.0" and expect["driver"]["version"] == "7.1.3"
    assert gpu_expectations(outcome["decision"], CATALOG, MATRIX, "7.2.3")["rocm_version"] == "7.2.3-*"


def test_unsupported_combination_is_refused_but_still_decided():
    outcome = decide(facts("rx7900xtx-1"), inputs(), CATALOG, MATRIX, DRIVERS)
    assert outcome["problems"] == [] and not outcome["proceed"]
    assert "not supported" in outcome["report"] and "only for instinct" in outcome["report"]
    assert outcome["decision"]["classes"] == ["rx7900xtx"] and not outcome["decision"]["supported"]


def test_a_version_the_matrix_lacks_is_refused_without_overrides():
    outcome = decide(facts("rx6700xt-1"), inputs(rocm_version="5.0"), CATALOG, MATRIX, DRIVERS)
    assert not outcome["proceed"] and "ROCm 5.0 is not in the support matrix" in outcome["report"]
    assert outcome["decision"]["hsa_overrides"] == {} and outcome["decision"]["pytorch_rocm_arch"] == "gfx1031"


BAD_CLASS = dict(CATALOG, mi999={"product": "X"})


@pytest.mark.parametrize(("overrides", "catalog", "expected"), [
    ({"rocm_version": 6.4}, CATALOG, 'preflight_rocm_version must be quoted ("6.4.1"), got the number 6.4'),
    ({}, BAD_CLASS, "preflight_gpu_catalog_extra and preflight_support_matrix_extra) is not usable: "
                    "gpu catalog class mi999: has no source"),
    ({"expected_class": ["mi300z"]}, CATALOG, "preflight_expected_class names GPU class mi300z, which is not in "
                                              "the GPU catalog (did you mean mi300x?); known classes: mi100, mi210"),
    ({"accept_unsupported": [{"what": "gpu", "value": "w7901", "reason": "r"}]}, CATALOG,
     "preflight_accept_unsupported accepts GPU class w7901, which is not in the GPU catalog (did you mean w7900?)"),
    ({"workload": "llms"}, CATALOG,
     "preflight_workload is llms, not a key of preflight_min_vram_gib_per_gpu (general, llm)"),
    ({"accept_unsupported": {"what": "os"}}, CATALOG,
     "preflight_accept_unsupported must be a list of {what, reason} items"),
])
def test_bad_inventory_or_data_is_a_problem_and_nothing_is_decided(overrides, catalog, expected):
    outcome = decide(facts("mi210-4-pcie"), inputs(**overrides), catalog, MATRIX, DRIVERS)
    assert len(outcome["problems"]) == 1 and expected in outcome["problems"][0], outcome["problems"]
    assert outcome["decision"] is None and not outcome["proceed"]
    assert outcome["report"] == "host h1: " + outcome["problems"][0]


def test_every_problem_is_reported_at_once():
    outcome = decide(facts("mi210-4-pcie"), inputs(rocm_version=6.4, workload="llms", expected_class="mi2100"),
                     CATALOG, MATRIX, DRIVERS)
    assert len(outcome["problems"]) == 3 and outcome["report"].count("; ") >= 2


def test_missing_inputs_are_named():
    with pytest.raises(ValueError, match="lack host, workload"):
        decide(facts("nogpu"), dict((key, value) for key, value in inputs().items()
                                    if key not in ("host", "workload")), CATALOG, MATRIX, DRIVERS)


def test_decide_changes_none_of_its_arguments():
    host, given = facts("mi250x-8gcd"), inputs(expected_class="mi250x")
    before = copy.deepcopy((host, given, CATALOG, MATRIX))
    decide(host, given, CATALOG, MATRIX, DRIVERS)
    assert (host, given, CATALOG, MATRIX) == before


@pytest.mark.parametrize(("value", "expected"), [
    (None, []), ("", []), ("mi300x", ["mi300x"]), ("w7900, rx6700xt", ["w7900", "rx6700xt"]),
    (["mi210"], ["mi210"]), ("mi210,", ["mi210"]),
])
def test_expected_class_reads_as_a_list(value, expected):
    assert expected_classes(value) == expected


def test_closest_name():
    assert closest_name("mi300z", CATALOG) == "mi300x" and closest_name("zzzz", CATALOG) is None


def decided(profile, **overrides):
    return decide(facts(profile), inputs(**overrides), CATALOG, MATRIX, DRIVERS)["decision"]


# What compliance holds a decided host to, from the catalog and matrix preflight decided with.
def test_mi300x_expectations_are_those_of_its_class():
    assert gpu_expectations(decided("mi300x-8"), CATALOG, MATRIX, "6.4.1") == {
        "count": 8, "gfx_targets": ["gfx942"], "products": "AMD Instinct MI300X*",
        "vram_bytes_min": int(192 * 0.9 * GIB), "topology": {"link_type": "XGMI", "hops": 1, "weight": 15},
        # The decided release (the default, 7.2.3) runs driver line 30.30.3, whose loaded module reports
        # 6.16.13 (shared capture mi210-8gpu_rocm7.2.0_modinfo...); the kernel tells the in-tree driver apart.
        "driver": {"loaded": True, "line": "30.30.3", "version": "6.16.13", "kernel": "6.1.0-28-amd64"},
        "rocm_version": "6.4.1-*",
    }


def test_the_declared_class_and_count_win_over_what_was_found():
    expect = gpu_expectations(decided("mi210-4-pcie", expected_class="mi300x"), CATALOG, MATRIX, None,
                              expected_gpu_count=8)
    assert expect["products"] == "AMD Instinct MI300X*" and expect["count"] == 8
    assert expect["rocm_version"] == "7.2.3-*"  # None: the decided version


def test_the_workload_minimum_and_a_mixed_host():
    small = gpu_expectations(decided("rx6700xt-1", workload="llm"), CATALOG, MATRIX, "6.4.1")
    assert small["vram_bytes_min"] == 24 * GIB and "topology" not in small
    # "AMD Radeon RX 6700 XT / 6750 XT" names variants: the first name, as a prefix, matches each.
    assert small["products"] == "AMD Radeon RX 6700 XT*"
    mixed = decide(mixed_facts(), inputs(), CATALOG, MATRIX, DRIVERS)["decision"]
    expect = gpu_expectations(mixed, CATALOG, MATRIX, "6.4.1", numa_affinity=[0, 1])
    assert set(expect) == {"count", "gfx_targets", "driver", "rocm_version", "numa_affinity"}
    assert expect["gfx_targets"] == ["gfx1031", "gfx1100"] and expect["numa_affinity"] == [0, 1]


def test_host_without_gpus_and_distro_packages():
    nogpu = decided("nogpu", expected_gpu_count=0)
    assert gpu_expectations(nogpu, CATALOG, MATRIX, "6.4.1", rocm_from_amd=False, amdgpu_from_amd=False) == {
        "count": 0}
    inbox = gpu_expectations(decided("mi210-4-pcie"), CATALOG, MATRIX, "6.4.1", amdgpu_from_amd=False)
    assert inbox["driver"] == {"loaded": True}


def test_an_unknown_class_is_a_clear_error():
    with pytest.raises(ValueError, match=r"unknown GPU class.*mi999"):
        gpu_expectations({"expected_classes": ["mi999"], "gpu_count": 1}, CATALOG, MATRIX, "6.4.1")


def test_a_site_class_without_devices_per_package_still_gets_its_vram_check():
    # decision.data_checks does not require devices_per_package: one device per package is meant.
    catalog = {"site-gpu": {"product": "Site GPU", "gfx_target": "gfx1100", "vram_gib": 48}}
    expect = gpu_expectations({"classes": ["site-gpu"], "gpu_count": 1}, catalog, {}, None)
    assert expect["vram_bytes_min"] == int(48 * 0.9 * GIB)
