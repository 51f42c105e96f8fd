"""rocm_fleet.core.node_compliance through main(): items and GPU class checks in one call.

The GPU side runs against sysfs trees rendered from the lab's hardware
profiles, healthy and with faults injected through the profile helpers.
"""

import json
import os
import time

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


def by_id(result):
    return {entry["id"]: entry for entry in result["results"]}


def test_healthy_mi300x_passes_every_class_check(tmp_path, run_node_compliance):
    result = run_node_compliance(root=rendered(tmp_path, load_profile("mi300x-8")), gpu_expect=MI300X_CLASS)
    assert result["rc"] == 0
    assert result["changed"] is False
    failing = [entry for entry in result["results"] if entry["status"] != "pass"]
    assert failing == []
    assert result["summary"] == {"pass": 6, "fail": 0, "error": 0, "skipped": 0, "total": 6}
    assert result["gpu"]["count"] == 8
    assert set(by_id(result)) == {
        "ROCM-GPU-001",
        "ROCM-GPU-002",
        "ROCM-GPU-003",
        "ROCM-GPU-004",
        "ROCM-TOPO-001",
        "ROCM-TOPO-002",
    }


def test_degraded_xgmi_link_fails_naming_the_pair(tmp_path, run_node_compliance):
    profile = load_profile("mi300x-8").with_link(2, 5, "PCIE")
    result = run_node_compliance(root=rendered(tmp_path, profile), gpu_expect=MI300X_CLASS)
    topology = by_id(result)["ROCM-TOPO-001"]
    assert topology["status"] == "fail"
    # The path now goes through both CPU sockets: 3 hops, 2 * 20 + the SLIT distance.
    expected = profile.expected_topology()
    assert (
        topology["message"]
        == "GPU 2-5: hops 3, expected 1, link_type PCIE, expected XGMI, weight %d, expected 15"
        % (expected["weight"][2][5])
    )
    assert by_id(result)["ROCM-GPU-001"]["status"] == "pass"


def test_removed_gpu_fails_count_products_and_numa(tmp_path, run_node_compliance):
    profile = load_profile("mi300x-8").without_gpu(3)
    result = run_node_compliance(root=rendered(tmp_path, profile), gpu_expect=MI300X_CLASS)
    checks = by_id(result)
    assert checks["ROCM-GPU-001"]["message"] == "expected 8 GPUs, found 7"
    assert checks["ROCM-TOPO-002"]["status"] == "fail"
    assert checks["ROCM-TOPO-002"]["message"].startswith("7 GPUs, expected 8; GPU 3: node 1, expected 0")
    assert result["summary"]["fail"] >= 2


def test_full_topology_matrix_from_the_profile(tmp_path, run_node_compliance):
    profile = load_profile("mi210-4-pcie")
    topology = profile.expected_topology()
    gpu_expect = {"topology": {field: topology[field] for field in ("link_type", "hops", "weight")}}
    result = run_node_compliance(root=rendered(tmp_path, profile), gpu_expect=gpu_expect)
    assert by_id(result)["ROCM-TOPO-001"]["status"] == "pass", by_id(result)["ROCM-TOPO-001"]["message"]
    gpu_expect["topology"]["hops"] = [[0, 1], [1, 0]]
    result = run_node_compliance(root=rendered(tmp_path, profile), gpu_expect=gpu_expect)
    assert by_id(result)["ROCM-TOPO-001"]["message"] == "hops: expected a 4x4 matrix for 4 GPUs"


def test_driver_version_from_sysfs(tmp_path, run_node_compliance):
    profile = load_profile("mi300x-8")
    result = run_node_compliance(
        root=rendered(tmp_path, profile), gpu_expect={"driver": {"version": profile.driver_version}}
    )
    assert by_id(result)["ROCM-DRV-001"]["status"] == "pass", by_id(result)["ROCM-DRV-001"]["message"]


def test_invalid_gpu_expect_is_an_error_result_not_a_failed_module(tmp_path, run_node_compliance):
    result = run_node_compliance(
        root=rendered(tmp_path, load_profile("w7900-2")),
        gpu_expect={"count": "two", "topology": {"link_type": "XGMI", "bandwidth": 1}, "colour": "red"},
    )
    assert result["rc"] == 0
    checks = by_id(result)
    assert checks["ROCM-GPU-000"]["message"].startswith("unknown keys colour (allowed: count, driver, gfx_targets,")
    assert checks["ROCM-GPU-001"]["message"] == "ROCM-GPU-001: gpu_expect.count: count must be an integer"
    assert checks["ROCM-TOPO-001"]["status"] == "error"


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
        {"id": item_id, "title": item_id, "kind": kind, "role": "r", "task": "t", "expect": expect}
        for item_id, kind, expect in items
    ]


def test_items_and_gpu_in_one_call_within_budget(tmp_path, run_node_compliance):
    root = rendered(tmp_path, load_profile("mi300x-8"))
    items = host_items(root)
    started = time.monotonic()
    result = run_node_compliance(root=root, items=items, gpu_expect=MI300X_CLASS)
    elapsed = time.monotonic() - started
    assert [entry["id"] for entry in result["results"][: len(items)]] == [item["id"] for item in items]
    assert result["summary"] == {"pass": 14, "fail": 0, "error": 0, "skipped": 0, "total": 14}, [
        entry["message"] for entry in result["results"] if entry["status"] != "pass"
    ]
    assert elapsed < 1.0, "one evaluation took %.2fs" % elapsed


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
    assert result["gpu"] is None


def test_timeout_must_be_positive(run_node_compliance):
    result = run_node_compliance(timeout=0)
    assert result["rc"] == 1
    assert result["msg"] == "timeout must be a positive number of seconds, got 0"


def test_a_gpu_fact_gathered_earlier_is_checked_without_gathering_again(tmp_path, run_node_compliance):
    gathered = run_node_compliance(root=rendered(tmp_path, load_profile("mi300x-8")), gpu_expect=MI300X_CLASS)["gpu"]
    degraded = json.loads(json.dumps(gathered))
    degraded["topology"]["link_type"][0][1] = degraded["topology"]["link_type"][1][0] = "PCIE"
    # An empty root: had the module gathered, it would have found no GPU at all.
    result = run_node_compliance(root=str(tmp_path / "empty"), gpu=degraded, gpu_expect=MI300X_CLASS)
    assert result["gpu"] == degraded
    assert by_id(result)["ROCM-GPU-001"]["status"] == "pass"
    assert by_id(result)["ROCM-TOPO-001"]["status"] == "fail"
    assert "GPU 0-1" in by_id(result)["ROCM-TOPO-001"]["message"]
