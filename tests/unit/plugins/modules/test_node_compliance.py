"""rocm_fleet.core.node_compliance through main(), and the GPU class checks on the facts it gathers.

node_compliance evaluates the items on the host and, with facts=true, returns
the gpu fact and the host facts in the same call; the GPU class checks run on
the controller (host_compliance) with compliance.gpu_class.evaluate_gpu. Both are
exercised here against sysfs trees rendered from the lab's hardware profiles,
healthy and with faults injected through the profile helpers.
"""

import json
import os
import re
import time

import pytest
import yaml
from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.schema import KIND_FIELDS
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.gather import gather
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.model import DEFAULT_SOURCES
from ansible_collections.rocm_fleet.core.plugins.module_utils.host.facts import HOST_FACTS
from ansible_collections.rocm_fleet.core.plugins.modules import node_compliance
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.compliance.gpu_class import evaluate_gpu

from rocm_fleet.hardware import load_profile
from rocm_fleet.hardware.render import render_profile

MI300X_CLASS = {
    "count": 8,
    "products": "AMD Instinct MI300X OAM",
    "gfx_targets": ["gfx942"],
    "vram_bytes_min": 192 * 1024**3,
    "topology": {"link_type": "XGMI", "hops": 1, "weight": 15},
    "numa_affinity": [0, 0, 0, 0, 1, 1, 1, 1],
}


def rendered(tmp_path, profile):
    render_profile(profile, tmp_path)
    return str(tmp_path)


def no_tool(name, required=False, opt_dirs=None):
    """get_bin_path on a machine without the ROCm tools: only sysfs is read."""
    return None


def gathered(tmp_path, profile):
    """The gpu fact of the profile's sysfs tree, read by the gather node_compliance (facts=true) and gpu_facts run."""
    return gather({"sysfs_root": rendered(tmp_path, profile), "sources": ["sysfs"], "timeout": 30}, no_tool, [])


def by_id(results):
    return {entry["id"]: entry for entry in results}


def gpu_checks(gpu_expect, gpu):
    return by_id(evaluate_gpu(gpu_expect, gpu))


def test_healthy_mi300x_passes_every_class_check(tmp_path):
    gpu = gathered(tmp_path, load_profile("mi300x-8"))
    assert gpu["count"] == 8
    results = evaluate_gpu(MI300X_CLASS, gpu)
    assert [entry for entry in results if entry["status"] != "pass"] == []
    assert set(by_id(results)) == {
        "ROCM-GPU-001",
        "ROCM-GPU-002",
        "ROCM-GPU-003",
        "ROCM-GPU-004",
        "ROCM-TOPO-001",
        "ROCM-TOPO-002",
    }


def test_degraded_xgmi_link_fails_naming_the_pair(tmp_path):
    profile = load_profile("mi300x-8").with_link(2, 5, "PCIE")
    checks = gpu_checks(MI300X_CLASS, gathered(tmp_path, profile))
    topology = checks["ROCM-TOPO-001"]
    assert topology["status"] == "fail"
    # The path now goes through both CPU sockets: 3 hops, 2 * 20 + the SLIT distance.
    expected = profile.expected_topology()
    assert (
        topology["message"]
        == "GPU 2-5: hops 3, expected 1, link_type PCIE, expected XGMI, weight %d, expected 15"
        % (expected["weight"][2][5])
    )
    assert checks["ROCM-GPU-001"]["status"] == "pass"


def test_removed_gpu_fails_count_products_and_numa(tmp_path):
    profile = load_profile("mi300x-8").without_gpu(3)
    results = evaluate_gpu(MI300X_CLASS, gathered(tmp_path, profile))
    checks = by_id(results)
    assert checks["ROCM-GPU-001"]["message"] == "expected 8 GPUs, found 7"
    assert checks["ROCM-TOPO-002"]["status"] == "fail"
    assert checks["ROCM-TOPO-002"]["message"].startswith("7 GPUs, expected 8; GPU 3: node 1, expected 0")
    assert len([entry for entry in results if entry["status"] == "fail"]) >= 2


def test_full_topology_matrix_from_the_profile(tmp_path):
    profile = load_profile("mi210-4-pcie")
    gpu = gathered(tmp_path, profile)
    topology = profile.expected_topology()
    gpu_expect = {"topology": {field: topology[field] for field in ("link_type", "hops", "weight")}}
    check = gpu_checks(gpu_expect, gpu)["ROCM-TOPO-001"]
    assert check["status"] == "pass", check["message"]
    gpu_expect["topology"]["hops"] = [[0, 1], [1, 0]]
    assert gpu_checks(gpu_expect, gpu)["ROCM-TOPO-001"]["message"] == "hops: expected a 4x4 matrix for 4 GPUs"


def test_driver_version_from_sysfs(tmp_path):
    profile = load_profile("mi300x-8")
    check = gpu_checks({"driver": {"version": profile.driver_version}}, gathered(tmp_path, profile))["ROCM-DRV-001"]
    assert check["status"] == "pass", check["message"]


def test_invalid_gpu_expect_is_an_error_result_not_an_exception(tmp_path):
    checks = gpu_checks(
        {"count": "two", "topology": {"link_type": "XGMI", "bandwidth": 1}, "colour": "red"},
        gathered(tmp_path, load_profile("w7900-2")),
    )
    assert checks["ROCM-GPU-000"]["message"].startswith("unknown keys colour (allowed: count, driver, gfx_targets,")
    assert checks["ROCM-GPU-001"]["message"] == "ROCM-GPU-001: gpu_expect.count: count must be an integer"
    assert checks["ROCM-TOPO-001"]["status"] == "error"


def test_a_gpu_fact_gathered_earlier_is_checked_as_it_was_read(tmp_path):
    degraded = json.loads(json.dumps(gathered(tmp_path, load_profile("mi300x-8"))))
    degraded["topology"]["link_type"][0][1] = degraded["topology"]["link_type"][1][0] = "PCIE"
    checks = gpu_checks(MI300X_CLASS, degraded)
    assert checks["ROCM-GPU-001"]["status"] == "pass"
    assert checks["ROCM-TOPO-001"]["status"] == "fail"
    assert "GPU 0-1" in checks["ROCM-TOPO-001"]["message"]


def host_items(root):
    """A realistic mix of items, written so every one passes; the tree is built alongside."""

    def write(path, text):
        full = os.path.join(root, path.lstrip("/"))
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as handle:
            handle.write(text)

    write("/etc/group", "root:x:0:\nvideo:x:44:alice\nrender:x:105:alice\n")
    write("/etc/passwd", "root:x:0:0::/root:/bin/sh\nalice:x:1000:1000::/home/alice:/bin/sh\n")
    write("/etc/profile.d/rocm.sh", "export PATH=$PATH:/opt/rocm/bin\n")
    write("/etc/ld.so.conf.d/rocm.conf", "/opt/rocm/lib\n")
    write("/proc/sys/vm/max_map_count", "1048576\n")
    write("/proc/cmdline", "ro quiet iommu=pt\n")
    write("/var/lib/dpkg/status", "Package: rocm-core\nStatus: install ok installed\nVersion: 6.4.1.60401-83~22.04\n")
    items = [
        ("ROCM-ENV-001", "file", {"path": "/etc/profile.d/rocm.sh", "content": "export PATH=$PATH:/opt/rocm/bin\n"}),
        ("ROCM-ENV-002", "file_lines", {"path": "/etc/ld.so.conf.d/rocm.conf", "lines": ["/opt/rocm/lib"]}),
        ("ROCM-ACCESS-001", "group_members", {"group": "render", "members": ["alice"]}),
        ("ROCM-ACCESS-002", "group_members", {"group": "video", "members": ["alice"]}),
        ("ROCM-SYSCTL-001", "sysctl", {"name": "vm.max_map_count", "value": 1048576}),
        ("ROCM-BOOT-001", "kernel_cmdline", {"params": ["iommu=pt"]}),
        ("ROCM-DRV-002", "module_loaded", {"name": "amdgpu", "parameters": {"noretry": -1}}),
        ("ROCM-PKG-002", "package", {"name": "rocm-core", "version": "6.4.1*"}),
    ]
    return [
        {"id": item_id, "title": item_id, "kind": kind, "role": "rocm_fleet.core.r", "label": "r: " + item_id,
         "expect": expect}
        for item_id, kind, expect in items
    ]


def test_items_and_facts_in_one_call_within_budget(tmp_path, run_node_compliance):
    root = rendered(tmp_path, load_profile("mi300x-8"))
    items = host_items(root)
    started = time.monotonic()
    result = run_node_compliance(root=root, items=items, facts=True)
    elapsed = time.monotonic() - started
    assert result["rc"] == 0 and result["changed"] is False
    assert [entry["id"] for entry in result["results"]] == [item["id"] for item in items]
    assert [(entry["role"], entry["label"], entry["repair"]) for entry in result["results"]] == [
        (item["role"], item["label"], None) for item in items
    ]
    assert result["summary"] == {
        "pass": 8, "fail": 0, "error": 0, "skipped": 0, "unknown": 0, "warn": 0, "total": 8}, [
        entry["message"] for entry in result["results"] if entry["status"] != "pass"
    ]
    # The same call read the GPU and host facts, as gpu_facts names them.
    facts = result["ansible_facts"]
    assert facts["gpu"]["count"] == 8
    assert {"ansible_os_family", "ansible_kernel", "ansible_architecture"} <= set(facts)
    assert set(facts) <= {"gpu", "ansible_host_facts_digest"} | {"ansible_" + name for name in HOST_FACTS}
    assert elapsed < 1.0, "one evaluation took %.2fs" % elapsed


def test_facts_are_those_gpu_facts_returns_from_the_same_sources(tmp_path, run_node_compliance, run_gpu_facts):
    root = rendered(tmp_path, load_profile("mi300x-8"))
    checked = run_node_compliance(root=root, facts=True)
    reported = run_gpu_facts(sysfs_root=root, sources=["sysfs"], host_facts=True)
    assert checked["ansible_facts"] == reported["ansible_facts"]
    assert checked["ansible_facts"]["gpu"] == gathered(tmp_path, load_profile("mi300x-8"))
    assert evaluate_gpu(MI300X_CLASS, checked["ansible_facts"]["gpu"]) == evaluate_gpu(
        MI300X_CLASS, reported["ansible_facts"]["gpu"]
    )


def test_facts_read_gpu_facts_default_sources_unless_told(tmp_path, run_module, run_node_compliance):
    result = run_module(node_compliance, root=str(tmp_path), facts=True)  # no gpu_sources at all
    assert result["rc"] == 0
    sources = result["ansible_facts"]["gpu"]["sources"]
    assert set(sources) == set(DEFAULT_SOURCES)
    assert "skipped" not in sources.values()
    told = run_node_compliance(root=str(tmp_path), facts=True, gpu_sources=["sysfs"])["ansible_facts"]["gpu"]
    assert [name for name, state in told["sources"].items() if state != "skipped"] == ["sysfs"]


def test_without_facts_no_facts_are_returned(tmp_path, run_node_compliance):
    result = run_node_compliance(root=rendered(tmp_path, load_profile("mi300x-8")), items=host_items(str(tmp_path)))
    assert result["rc"] == 0 and result["summary"]["pass"] == 8
    assert "ansible_facts" not in result
    assert "gpu" not in result


@pytest.mark.parametrize("option", ["gpu", "gpu_expect", "host_facts"])
def test_the_gpu_checks_options_are_gone(tmp_path, run_node_compliance, option):
    value = {"gpu": {"count": 1}, "gpu_expect": {"count": 1}, "host_facts": True}[option]
    result = run_node_compliance(root=str(tmp_path), **{option: value})
    assert result["rc"] == 1 and result["failed"]
    assert result["msg"].startswith("Unsupported parameters for (basic.py) module: %s." % option)


def test_a_broken_item_is_one_error_and_the_rest_still_run(tmp_path, run_node_compliance):
    items = [
        {"id": "ROCM-X-001", "kind": "sysctl", "expect": {"name": "vm.swappiness"}},
        {"id": "ROCM-X-002", "kind": "telepathy", "expect": {}},
        {"kind": "sysctl", "expect": {"name": "a", "value": 1}},
        {"id": "ROCM-X-003", "kind": "file", "expect": {"path": "/etc/none", "state": "absent"}},
    ]
    result = run_node_compliance(root=str(tmp_path), items=items, gpu_sources=[])
    assert result["rc"] == 0
    assert [entry["status"] for entry in result["results"]] == ["error", "error", "error", "pass"]
    assert result["results"][0]["message"] == "ROCM-X-001: expect.value: required for kind sysctl"
    assert result["results"][1]["message"].startswith("ROCM-X-002: kind: 'telepathy' is not one of apt_pin, apt_source")
    assert result["results"][2]["message"] == "items[2]: id: a non-empty string is required"
    assert "ansible_facts" not in result


def test_timeout_must_be_positive(run_node_compliance):
    result = run_node_compliance(timeout=0)
    assert result["rc"] == 1
    assert result["msg"] == "timeout must be a positive number of seconds, got 0"


def _health_tree():
    """tests/fleet_testing/health_tree.py, the renderer of the health checks' trees."""
    from fleet_testing import health_tree

    return health_tree


def test_health_checks_run_in_the_same_module_call(tmp_path, run_node_compliance):
    tree = _health_tree()
    tree.healthy(tmp_path)
    tree.write(tmp_path, "/sys/bus/pci/devices/0000:45:00.0/ras/umc_err_count", "ue: 1\nce: 0\n")
    result = run_node_compliance(root=str(tmp_path), health=tree.HEALTH)
    assert result["rc"] == 0 and not result.get("failed")
    failing = [(r["id"], r["status"], r["kind"]) for r in result["results"] if r["status"] != "pass"]
    assert failing == [("ROCM-HEALTH-003", "fail", "health")]
    assert result["summary"]["total"] == 8 * 6 + 3 and result["summary"]["fail"] == 1
    assert "GPU 4 (0000:45:00.0): uncorrectable errors: umc 1" in [
        r["message"] for r in result["results"] if r["status"] == "fail"]


def test_a_bad_health_option_is_a_failed_task_not_a_traceback(run_node_compliance):
    result = run_node_compliance(health="not a mapping")
    assert result["rc"] == 1 and result["failed"] and "health" in result["msg"]


def test_health_names_each_gpu_by_the_gpu_facts_index_and_bus(tmp_path):
    from ansible_collections.rocm_fleet.core.plugins.module_utils.health.read import read_gpus

    gpu = gathered(tmp_path, load_profile("mi300x-8"))
    fact = sorted((device["index"], device["pci_bus"]) for device in gpu["devices"])
    assert sorted((g["index"], g["bus"]) for g in read_gpus(str(tmp_path))) == fact


def test_a_digest_given_back_unchanged_leaves_out_the_distribution_and_processor_facts(tmp_path, run_node_compliance):
    root = rendered(tmp_path, load_profile("mi300x-8"))
    first = run_node_compliance(root=root, facts=True)
    digest = first["ansible_facts"]["ansible_host_facts_digest"]
    again = run_node_compliance(root=root, facts=True, host_facts_digest=digest)
    assert again["rc"] == 0 and "warnings" not in again, again
    left_out = {"ansible_" + name for name in ("distribution", "distribution_version", "distribution_major_version",
                                               "distribution_release", "os_family", "processor")}
    assert set(first["ansible_facts"]) - set(again["ansible_facts"]) == left_out
    assert again["ansible_facts"] == {name: value for name, value in first["ansible_facts"].items()
                                      if name not in left_out}
    stale = run_node_compliance(root=root, facts=True, host_facts_digest="0" * 64)
    assert stale["ansible_facts"] == first["ansible_facts"]


def test_the_documentation_names_every_item_kind_the_evaluator_checks():
    documented = yaml.safe_load(node_compliance.DOCUMENTATION)["options"]["items"]["description"]
    kind_line = " ".join(line for line in documented if line.startswith("C(kind)"))
    assert sorted(re.findall(r"C\((\w+)\)", kind_line)[1:]) == sorted(KIND_FIELDS)
