"""ROCM-GPU-005 (the declared partition modes) and the logical count, held against the gpu fact."""

from ansible_collections.rocm_fleet.core.plugins.plugin_utils.compliance.gpu_class import (
    check_partition,
    evaluate_gpu,
    evaluate_gpu_items,
    with_partition_repairs,
)
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.decision.classification import classify_gpus
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.decision.preflight import (
    decide,
    gpu_expectations,
    partitions_per_gpu,
)
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.roles.managed_state import (
    GPU_ITEM_KINDS,
    compliance_items,
    normalize,
)
from fleet_testing.partition_inputs import DEBIAN_12, inputs, mi300x
from fleet_testing.rocm_preflight_data import CATALOG, DRIVERS, MATRIX

GIB = 1024**3
OBJECTS = [
    {"kind": "gpu_partition", "id": "ROCM-GPU-005", "title": "partition modes as declared", "set": "memory",
     "mode": "NPS4"},
    {"kind": "gpu_partition", "id": "ROCM-GPU-005", "title": "partition modes as declared", "set": "compute",
     "mode": "CPX", "memory": "NPS4"},
]


def items():
    return compliance_items(normalize(OBJECTS, "partitions"))


def with_driver(gpu):
    return dict(gpu, driver={"loaded": True, "version": "6.16.13"})


def test_partition_objects_are_items_with_the_label_the_task_prints():
    found = items()
    assert [item["label"] for item in found] == ["partitions: memory partition NPS4 on every GPU",
                                                 "partitions: compute partition CPX on every GPU"]
    assert {item["kind"] for item in found} == set(GPU_ITEM_KINDS)
    assert found[1]["expect"] == {"set": "compute", "mode": "CPX"} and found[1]["role"] == "rocm_fleet.core.partitions"


def test_gpus_in_the_declared_modes_pass():
    results = evaluate_gpu_items(items(), with_driver(mi300x("CPX", "NPS4", parts=8)))
    assert [(r["id"], r["status"]) for r in results] == [("ROCM-GPU-005", "pass")] * 2
    assert results[1]["message"] == "every physical GPU (8) is in compute partition CPX"


def test_a_changed_mode_fails_under_the_objects_label_as_a_change_site_yml_makes():
    results = evaluate_gpu_items(items(), with_driver(mi300x("SPX", "NPS1")))
    assert [r["status"] for r in results] == ["fail", "fail"]
    compute = results[1]
    assert compute["label"] == "partitions: compute partition CPX on every GPU" and compute["action"] == "change"
    assert compute["role"] == "rocm_fleet.core.partitions"
    assert compute["actual"] == ["SPX"] * 8
    assert "compute partition CPX expected, 8 of 8 physical GPUs differ: GPU 0 (PCI 0000:0c:00.0): SPX" \
        in compute["message"]


def test_a_mode_that_cannot_be_read_fails_as_unknown_and_skips_without_amdgpu():
    gpu = mi300x("CPX", "NPS4", parts=8)
    for device in gpu["devices"]:
        device["memory_partition"] = None
    assert "unknown" in check_partition({"set": "memory", "mode": "NPS4"}, gpu)[2]
    skipped = evaluate_gpu_items(items(), dict(gpu, driver={"loaded": False}))
    assert {r["status"] for r in skipped} == {"skipped"}
    assert evaluate_gpu_items([dict(items()[0], expect={"set": "x"})], with_driver(gpu))[0]["status"] == "error"


def test_the_logical_count_comes_from_the_declared_modes():
    # 8 MI300X still in SPX with CPX/NPS4 declared: ROCM-GPU-001 wants 64 logical GPUs, finds 8.
    gpu = mi300x("SPX", "NPS1")
    outcome = decide(dict(DEBIAN_12, gpu=gpu), inputs(compute_partition="CPX", memory_partition="NPS4"),
                     CATALOG, MATRIX, DRIVERS)
    decision = outcome["decision"]
    assert partitions_per_gpu(decision) == 8
    expect = gpu_expectations(decision, CATALOG, MATRIX, None)
    assert expect["count"] == 64
    # A partition has 1/8 of the VRAM (its KFD memory bank); partition links weigh what amdkfd gives them.
    assert expect["vram_bytes_min"] == max(int(192 / 8 * 0.9 * GIB), int(decision["min_vram_gib"] * GIB))
    assert expect["topology"] == {"link_type": "XGMI", "hops": 1}
    count = next(r for r in evaluate_gpu(expect, gpu) if r["id"] == "ROCM-GPU-001")
    assert count["status"] == "fail" and count["message"] == "expected 64 GPUs, found 8"
    # The inventory's own count still wins.
    assert gpu_expectations(decision, CATALOG, MATRIX, None, expected_gpu_count=8)["count"] == 8


def test_no_declared_mode_keeps_the_class_expectations():
    outcome = decide(dict(DEBIAN_12, gpu=mi300x()), inputs(), CATALOG, MATRIX, DRIVERS)
    expect = gpu_expectations(outcome["decision"], CATALOG, MATRIX, None)
    assert partitions_per_gpu(outcome["decision"]) == 1
    assert expect["count"] == 8 and expect["topology"] == {"link_type": "XGMI", "hops": 1, "weight": 15}
    assert expect["vram_bytes_min"] == int(192 * 0.9 * GIB)


def test_partitions_of_one_gpu_count_as_one_package():
    summary = classify_gpus(mi300x("CPX", "NPS4", parts=8), CATALOG)
    assert summary["count"] == 64 and summary["packages"] == {"mi300x": 8} and summary["package_count"] == 8


def test_the_lab_cpx_nps4_host_as_its_group_declares_it_passes_the_gpu_checks(tmp_path):
    # The lab's mi300x-cpx-01: its profile rendered, read by gpu_facts' sysfs source, decided with its group's vars.
    import yaml
    from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.merge import merge_reports
    from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.model import SOURCES
    from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.sysfs.devices import collect_sysfs
    from fleet_testing.rocm_preflight_data import REPO

    from rocm_fleet.hardware import load_profile
    from rocm_fleet.hardware.render import render_profile

    render_profile(load_profile("mi300x-8-cpx-nps4"), tmp_path)
    _state, report = collect_sysfs(str(tmp_path))
    gpu = merge_reports({"sysfs": report}, dict((name, "ok" if name == "sysfs" else "skipped") for name in SOURCES), [])
    group = yaml.safe_load((REPO / "inventory/lab/group_vars/mi300x_inference/preflight.yml").read_text())
    declared = dict((key.removeprefix("preflight_"), value) for key, value in group.items())
    lab_inputs = dict(inputs(), **declared)
    outcome = decide(dict(DEBIAN_12, gpu=gpu), lab_inputs, CATALOG, MATRIX, DRIVERS)
    assert outcome["problems"] == [] and outcome["proceed"], outcome["report"]
    expect = gpu_expectations(outcome["decision"], CATALOG, MATRIX, None)
    expect.pop("driver"), expect.pop("rocm_version")  # packages the rendered tree has not installed
    results = evaluate_gpu(expect, gpu) + evaluate_gpu_items(items(), gpu)
    assert {r["id"]: r["status"] for r in results} == {
        "ROCM-GPU-001": "pass", "ROCM-GPU-002": "pass", "ROCM-GPU-003": "pass", "ROCM-GPU-004": "pass",
        "ROCM-GPU-005": "pass", "ROCM-TOPO-001": "pass"}


def test_count_vram_and_links_a_wrong_mode_explains_are_repaired_by_site_yml():
    gpu = with_driver(mi300x("CPX", "NPS4", parts=8))
    outcome = decide(dict(DEBIAN_12, gpu=gpu), inputs(compute_partition="SPX", memory_partition="NPS1"),
                     CATALOG, MATRIX, DRIVERS)
    expect = gpu_expectations(outcome["decision"], CATALOG, MATRIX, None)
    spx = [dict(item, expect={"set": "compute", "mode": "SPX"}) for item in items()[1:]]
    results = with_partition_repairs(evaluate_gpu(dict(count=expect["count"]), gpu) + evaluate_gpu_items(spx, gpu))
    assert [(r["id"], r["status"]) for r in results] == [("ROCM-GPU-001", "fail"), ("ROCM-GPU-005", "fail")]
    assert results[0]["repair"].startswith("site.yml") and "ROCM-GPU-005" in results[0]["repair"]
    # Without a partition failure a wrong count stays the hardware's.
    alone = with_partition_repairs(evaluate_gpu({"count": 9}, gpu))
    assert alone[0]["repair"].startswith("a person")
