"""Preflight decisions: support, overrides, tuning and data validation, against the built-in data."""

import copy

import pytest
from ansible_collections.rocm_fleet.core.plugins.module_utils.common.versions import in_range, os_key, version_key
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.decision import provisioning as decisions
from fleet_testing.rocm_preflight_data import CATALOG, MATRIX, classify, device, kinds, profile_facts, support

MI300X_HOST = classify(*[device(i, "0x74a1", "gfx942", 192, kfd_node=i + 2) for i in range(8)])


def test_builtin_data_is_valid_and_sourced():
    assert decisions.data_problems(CATALOG, MATRIX) == []
    assert all(entry["source"] for entry in CATALOG.values())
    assert all(release["source"] for release in MATRIX.values())


def test_mi300x_on_debian_12_with_641_is_supported():
    decision = support(MI300X_HOST, os_version="12.7")
    assert decision["supported"] and decision["proceed"], decision["problems"]
    assert decision["gpus"] == "8 x AMD Instinct MI300X (gfx942)"


def test_debian_12_before_631_is_not_supported_and_alternatives_are_nearest_first():
    decision = support(MI300X_HOST, rocm="6.3.0")
    assert kinds(decision) == ["os"] and "Debian 12" in decision["problems"][0]["message"]
    assert decision["alternatives"] == ["6.3.1", "6.3.2", "6.3.3"]
    older = support(MI300X_HOST, rocm="7.0.0", os_version="13")
    assert older["alternatives"][0] == "7.0.2"


def test_consumer_radeon_on_debian_needs_an_os_acceptance():
    summary = classify(device(0, "0x744c", "gfx1100", 24))
    decision = support(summary)
    assert kinds(decision) == ["os"] and "Radeon RX 7900 XTX" in decision["problems"][0]["message"]
    accepted = support(summary, acceptances=[{"what": "os", "value": "debian 12", "reason": "site standard"}])
    assert accepted["proceed"] and not accepted["supported"]
    assert accepted["accepted"][0]["reason"] == "site standard"
    assert "accepted in inventory" in decisions.preflight_report(accepted, "ws1")


def test_rx6700xt_is_unsupported_everywhere_and_needs_override():
    summary = classify(device(0, "0x73df", "gfx1031", 12))
    for version in MATRIX:
        decision = support(summary, rocm=version, os_family="Ubuntu", os_version="22.04", kernel="5.15.0-91-generic")
        assert any(p["what"] == "gpu" and p["subject"] == "rx6700xt" for p in decision["problems"]), version
    accepted = support(
        summary,
        os_family="Ubuntu",
        os_version="22.04",
        kernel="5.15.0-91-generic",
        acceptances=[{"what": "gpu", "value": "rx6700xt", "reason": "gfx1030 code objects run on gfx1031"}],
    )
    assert accepted["proceed"]
    assert decisions.hsa_override_environment(summary, "6.4.1", MATRIX) == {"HSA_OVERRIDE_GFX_VERSION": "10.3.0"}
    assert decisions.pytorch_rocm_arch(summary, "6.4.1", MATRIX) == "gfx1030"


def test_supported_targets_get_no_override():
    gfx1100 = classify(device(0, "0x744c", "gfx1100", 24))
    assert decisions.hsa_override_environment(gfx1100, "6.4", MATRIX) == {}
    assert decisions.hsa_override_environment(MI300X_HOST, "6.4.1", MATRIX) == {}


def test_gfx1101_needs_override_only_before_641():
    summary = classify(device(0, "0x747e", "gfx1101", 16))
    assert summary["classes"] == ["rx7800xt"]
    assert decisions.hsa_override_environment(summary, "6.4.0", MATRIX) == {"HSA_OVERRIDE_GFX_VERSION": "11.0.0"}
    assert decisions.hsa_override_environment(summary, "6.4.1", MATRIX) == {}


def test_mixed_host_gets_a_per_node_override_for_the_unsupported_gpu_only():
    # One CPU node (KFD node 0): GPU index 0 is node 1, GPU index 1 is node 2.
    summary = classify(device(0, "0x73df", "gfx1031", 12), device(1, "0x744c", "gfx1100", 24))
    assert summary["mixed"] and summary["gfx_targets"] == ["gfx1031", "gfx1100"]
    assert decisions.hsa_override_environment(summary, "6.4.0", MATRIX) == {"HSA_OVERRIDE_GFX_VERSION_1": "10.3.0"}
    assert decisions.pytorch_rocm_arch(summary) == "gfx1031;gfx1100"
    assert decisions.pytorch_rocm_arch(summary, "6.4.0", MATRIX) == "gfx1030;gfx1100"
    # Overrides need the version's matrix entry: without one there is no answer, not a guess.
    for matrix in (MATRIX, None):
        with pytest.raises(decisions.DecisionError, match=r"ROCm 9\.9 is not in the support matrix"):
            decisions.pytorch_rocm_arch(summary, "9.9", matrix)


def test_per_node_override_uses_the_kfd_node_not_the_device_index():
    # Two sockets: KFD nodes 0 and 1 are CPUs, so the gfx1031 at index 1 is node 3.
    summary = classify(device(0, "0x744c", "gfx1100", 24, kfd_node=2), device(1, "0x73df", "gfx1031", 12, kfd_node=3))
    assert decisions.hsa_override_environment(summary, "6.4.0", MATRIX) == {"HSA_OVERRIDE_GFX_VERSION_3": "10.3.0"}


def test_mixed_override_before_62_is_a_problem():
    summary = classify(device(0, "0x744c", "gfx1100", 24), device(1, "0x73df", "gfx1031", 12))
    with pytest.raises(decisions.DecisionError, match=r"6\.2\.0 or later"):
        decisions.hsa_override_environment(summary, "6.1.2", MATRIX)
    decision = support(
        summary,
        rocm="6.1.2",
        os_family="Ubuntu",
        os_version="22.04",
        acceptances=[{"what": "gpu", "reason": "lab"}],
    )
    assert not decision["proceed"] and any("per-device" in p["message"] for p in decision["problems"])


def test_kernel_older_than_515_is_rejected_even_when_accepted():
    decision = support(
        MI300X_HOST,
        rocm="6.1.2",
        os_family="Ubuntu",
        os_version="20.04",
        kernel="5.4.0-150-generic",
        acceptances=[{"what": "kernel", "reason": "old"}],
    )
    assert not decision["proceed"] and kinds(decision) == ["kernel"]
    assert any("older than 5.15" in p["message"] for p in decision["problems"])


def test_kernel_beyond_driver_range_is_rejected_unless_accepted():
    lab_kernel = "6.18.44-fc-v595"
    decision = support(MI300X_HOST, kernel=lab_kernel)
    assert kinds(decision) == ["kernel"] and "6.12" in decision["problems"][0]["message"]
    # The Core SDK's driver lines build for it (31.40: module 6.19.14; 31.50: 7.1.3), the legacy ones do not.
    assert decision["alternatives"] == ["7.14.0", "10.0.0", "10.1.0"]
    report = decisions.preflight_report(decision, "lab-mi300x")
    for part in ("lab-mi300x", "6.4.1", "Debian 12", lab_kernel, "AMD Instinct MI300X",
                 "nearest ROCm versions that would pass on this host: 7.14.0, 10.0.0, 10.1.0"):
        assert part in report
    wrong_series = support(
        MI300X_HOST, kernel=lab_kernel, acceptances=[{"what": "kernel", "value": "6.17", "reason": "x"}]
    )
    assert not wrong_series["proceed"]
    accepted = support(
        MI300X_HOST, kernel=lab_kernel, acceptances=[{"what": "kernel", "value": "6.18", "reason": "lab"}]
    )
    assert accepted["proceed"] and accepted["accepted"][0]["what"] == "kernel"


def test_enterprise_kernels_are_not_compared():
    decision = support(MI300X_HOST, os_family="RedHat", os_version="9.4", kernel="5.14.0-427.el9.x86_64")
    assert decision["supported"], decision["problems"]


def test_acceptance_without_reason_is_itself_a_problem():
    decision = support(MI300X_HOST, acceptances=[{"what": "kernel"}])
    assert kinds(decision) == ["acceptance"]


def test_unknown_rocm_version_names_nearest_known_versions():
    decision = support(MI300X_HOST, rocm="6.5")
    assert kinds(decision) == ["rocm"]
    # Equally near on both sides: the newer release first.
    assert decision["alternatives"] == ["7.0.0", "6.4.3", "7.0.1"]


def test_llm_workload_needs_24_gib_per_gpu():
    sixteen = classify(device(0, "0x73bf", "gfx1030", 15.98), device(1, "0x73bf", "gfx1030", 15.98))
    decision = support(sixteen, os_family="Ubuntu", os_version="22.04", workload="llm", min_vram_gib={"llm": 24})
    vram = [p for p in decision["problems"] if p["what"] == "vram"]
    assert len(vram) == 2 and "16 GiB" in vram[0]["message"]
    xtx = classify(device(0, "0x744c", "gfx1100", 23.98))
    ok = support(xtx, os_family="Ubuntu", os_version="24.04", workload="llm", min_vram_gib={"llm": 24, "general": 0})
    assert ok["supported"], ok["problems"]


def test_inventory_expectations_must_match_the_hardware():
    summary = decisions.classify_gpus(profile_facts("mi250x-8gcd"), CATALOG)
    good = support(summary, expected_class="mi250x", expected_gpu_count=8, expected_package_count="4")
    assert "inventory" not in kinds(good)
    bad = support(summary, expected_class="mi300x", expected_gpu_count=4)
    assert kinds(bad).count("inventory") == 2 and "mi300x" in bad["problems"][0]["message"]


def test_host_without_gpu_must_be_declared():
    summary = decisions.classify_gpus(profile_facts("nogpu"), CATALOG)
    assert any("no AMD GPU" in p["message"] for p in support(summary)["problems"])
    assert support(summary, expected_gpu_count=0)["supported"]


def test_restriction_only_on_for_mi300x_under_600():
    decision = support(MI300X_HOST, rocm="6.0.0", os_family="RedHat", os_version="9.3")
    assert kinds(decision) == ["os"] and "only on" in decision["problems"][0]["message"]


def test_extension_from_inventory_adds_a_class_and_a_release():
    catalog = copy.deepcopy(CATALOG)
    catalog["radeon780m"] = {
        "product": "AMD Radeon 780M",
        "match": {"device_ids": ["0x1900"]},
        "gfx_target": "gfx1103",
        "arch": "RDNA3",
        "segment": "consumer",
        "family": "radeon",
        "vram_gib": None,
        "devices_per_package": 1,
        "rocm_listed": False,
        "hsa_override": [{"value": "11.0.0"}],
        "tuning": {},
        "source": "site test bench",
    }
    matrix = copy.deepcopy(MATRIX)
    matrix["7.2.0"] = dict(copy.deepcopy(MATRIX["7.1.0"]), source="site: AMD 7.2 release notes")
    assert decisions.data_problems(catalog, matrix) == []
    summary = decisions.classify_gpus({"devices": [device(0, "0x1900", "gfx1103", 2)]}, catalog)
    assert summary["classes"] == ["radeon780m"]
    decision = decisions.check_support(
        summary, matrix, "7.2", "Ubuntu", "24.04", "6.8.0-50-generic", acceptances=[{"what": "gpu", "reason": "APU"}]
    )
    assert decision["proceed"] and decision["rocm_version"] == "7.2.0"
    assert decisions.hsa_override_environment(summary, "7.2.0", matrix) == {"HSA_OVERRIDE_GFX_VERSION": "11.0.0"}


def test_data_problems_name_the_broken_entry():
    catalog = {
        "bad": {
            "product": "X",
            "match": {"device_ids": ["zz"]},
            "gfx_target": "gfx1031",
            "segment": "gaming",
            "family": "radeon",
            "hsa_override": [{"value": "9.0.10"}],
        }
    }
    matrix = {"6.4": {"os": {}, "gfx_targets": [], "source": "x"}}
    problems = decisions.data_problems(catalog, matrix)
    text = "\n".join(problems)
    for part in ("class bad: has no source", "device_ids", "segment", "another major", "ROCm 6.4: key"):
        assert part in text


def test_gpu_tuning_for_mi300x_and_intel_cpus():
    tuning = decisions.gpu_tuning(MI300X_HOST, cpu_vendor="GenuineIntel")
    assert tuning["boot_params"] == ["iommu=pt", "pci=realloc=off", "intel_iommu=on"]
    assert tuning["sysctls"] == {"kernel.numa_balancing": 0} and tuning["conflicts"] == []
    assert decisions.gpu_tuning(classify(device(0, "0x744c", "gfx1100", 24)))["boot_params"] == []


def test_gpu_tuning_reports_conflicts():
    catalog = {
        "a": {"tuning": {"boot_params": ["iommu=pt"], "sysctls": {"vm.x": 1}}},
        "b": {"tuning": {"boot_params": ["iommu=on"], "sysctls": {"vm.x": 2}}},
    }
    tuning = decisions.gpu_tuning({"classes": ["a", "b"], "catalog": catalog})
    assert tuning["boot_params"] == ["iommu=pt"] and len(tuning["conflicts"]) == 2


@pytest.mark.parametrize(
    ("value", "minimum", "maximum", "expected"),
    [("6.12.40-1", "5.15", "6.12", True), ("6.13.0", "5.15", "6.12", False), ("5.14.21", "5.15", None, False)],
)
def test_kernel_range_compares_series(value, minimum, maximum, expected):
    assert in_range(value, minimum=minimum, maximum=maximum) is expected


def test_version_helpers():
    assert version_key("6.4") == version_key("6.4.0") < version_key("6.4.1") < version_key("6.10")
    assert os_key("RedHat") == "rhel" and os_key("OracleLinux") == "ol" and os_key("SLES_SAP") == "sles"
