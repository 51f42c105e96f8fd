"""Partitions in the gpu fact (schema 2): sysfs in CPX, rocm-smi --showhw, and the merge's physical GPUs.

The CPX tree is the lab's rendering of the 8x MI300X profile, reshaped as amdgpu shows CPX
(see gpu.sysfs.partitions): one KFD node per partition, location_id = the GPU's BDF OR'ed with
the partition number, its own render minor, and as its memory bank the real node-3 bank of
an 8x MI300X in CPX/NPS1 (ROCm/ROCm#4750), copied unchanged.
"""

import dataclasses
import json
import shutil
from pathlib import Path

import pytest
from ansible.module_utils.testing import patch_module_args
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.merge import merge_reports
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.model import SOURCES
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.rocm_smi import report as rocm_smi
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.sysfs.devices import collect_sysfs
from ansible_collections.rocm_fleet.core.plugins.modules import gpu_facts

from rocm_fleet.hardware import load_profile
from rocm_fleet.hardware.render import render_profile

CAPTURES = Path(__file__).resolve().parents[4] / "fixtures" / "captures"
MEM_BANK = CAPTURES / "mi300x-8gpu-cpx-nps1_rocm6.3.3_sysfs-kfd-topology-node3-mem_banks0-properties.txt"
PARTITION_VRAM = 25767706624  # that bank's size_in_bytes: 24 GiB of the GPU's 192
MI300X_CPX = 8


def render_cpx(root, skip=()):
    """The 8x MI300X in CPX/NPS1; ``skip``: (GPU, partition) pairs that got no KFD node."""
    profile = load_profile("mi300x-8")
    gpus = tuple(dataclasses.replace(gpu, compute_partition="CPX", memory_partition="NPS1") for gpu in profile.gpus)
    profile = dataclasses.replace(profile, gpus=gpus)
    render_profile(profile, root)
    nodes = root / "sys/class/kfd/kfd/topology/nodes"
    first = len(profile.cpus)
    originals = {}
    for index in range(len(gpus)):
        node_dir = nodes / str(first + index)
        originals[index] = (node_dir / "properties").read_text()
        shutil.rmtree(node_dir)
    node = first
    for index, text in sorted(originals.items()):
        for partition in range(MI300X_CPX):
            if (index, partition) in skip:
                continue
            values = dict(line.split(" ", 1) for line in text.splitlines())
            values["location_id"] = str(int(values["location_id"]) | partition)
            values["drm_render_minor"] = str(128 + MI300X_CPX * index + partition)
            node_dir = nodes / str(node)
            (node_dir / "mem_banks" / "0").mkdir(parents=True)
            (node_dir / "properties").write_text("".join("%s %s\n" % item for item in values.items()))
            shutil.copy(MEM_BANK, node_dir / "mem_banks" / "0" / "properties")
            node += 1
    return profile


def run_module(capsys, monkeypatch, **params):
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setattr(gpu_facts, "ROCM_BIN_DIRS", [])
    with patch_module_args(params), pytest.raises(SystemExit):
        gpu_facts.main()
    return json.loads(capsys.readouterr().out)["ansible_facts"]["gpu"]


def test_sysfs_in_cpx_gives_every_partition(tmp_path, capsys, monkeypatch):
    profile = render_cpx(tmp_path)
    gpu = run_module(capsys, monkeypatch, sysfs_root=str(tmp_path), sources=["sysfs"])
    assert gpu["schema"] == 2 and gpu["count"] == 64
    devices = gpu["devices"]
    assert [d["physical_gpu"] for d in devices] == [i // MI300X_CPX for i in range(64)]
    assert [d["partition_id"] for d in devices] == [i % MI300X_CPX for i in range(64)]
    assert [d["pci_bus"] for d in devices] == [profile.gpus[i // MI300X_CPX].bus for i in range(64)]
    assert [d["kfd_node"] for d in devices] == list(range(2, 66))
    assert [d["render_node"] for d in devices] == ["/dev/dri/renderD%d" % (128 + i) for i in range(64)]
    assert {(d["compute_partition"], d["memory_partition"]) for d in devices} == {("CPX", "NPS1")}
    # The partition's own memory bank, not the whole GPU's mem_info_vram_total.
    assert {d["vram_bytes"] for d in devices} == {PARTITION_VRAM}
    assert not [text for text in gpu["warnings"] if text.startswith("physical GPU")]


def test_sysfs_missing_partition_names_its_gpu(tmp_path, capsys, monkeypatch):
    profile = render_cpx(tmp_path, skip={(5, 7)})
    gpu = run_module(capsys, monkeypatch, sysfs_root=str(tmp_path), sources=["sysfs"])
    assert gpu["count"] == 63
    assert [d["physical_gpu"] for d in gpu["devices"]].count(5) == 7
    assert [text for text in gpu["warnings"] if text.startswith("physical GPU")] == [
        "physical GPU 5 (%s, PCI %s, logical GPU 40-46, KFD node 42-48) has 7 of the 8"
        " partitions CPX gives; partition ID 7 missing: the DRM minors ran out (another DRM driver such as"
        " mgag200 holds one) or a container sees only some" % (profile.gpus[5].product, profile.gpus[5].bus)
    ]


def test_sysfs_partitions_whose_kfd_nodes_share_the_gpus_bdf(tmp_path):
    # Kernels before location_id carried the partition number: all read the GPU's BDF; node order numbers them.
    render_cpx(tmp_path)
    for properties in (tmp_path / "sys/class/kfd/kfd/topology/nodes").glob("*/properties"):
        lines = properties.read_text().splitlines()
        fixed = [
            "location_id %d" % (int(line.split()[1]) & ~7) if line.startswith("location_id ") else line
            for line in lines
        ]
        properties.write_text("\n".join(fixed) + "\n")
    state, report = collect_sysfs(str(tmp_path))
    assert state == "ok" and len(report["devices"]) == 64
    assert [d["partition_id"] for d in report["devices"]] == [i % MI300X_CPX for i in range(64)]


def merged(reports):
    states = dict((name, "ok" if name in reports else "skipped") for name in SOURCES)
    return merge_reports(reports, states, [])


def test_rocm_smi_showhw_groups_tpx_partitions_by_bus():
    text = (CAPTURES / "mi300a-4apu-tpx-12part_rocm6.1.1_rocm-smi-showhw.txt").read_text(encoding="utf-8")
    gpu = merged({"rocm_smi": rocm_smi.parse_rocm_smi_text(text)})
    assert gpu["count"] == 12
    rows = [(d["pci_bus"], d["partition_id"], d["physical_gpu"], d["kfd_node"]) for d in gpu["devices"]]
    assert rows == [("%04x:01:00.0" % (i // 3), i % 3, i // 3, 4 + i) for i in range(12)]
    assert gpu["conflicts"] == []


def test_sysfs_and_rocm_smi_partitions_match_by_kfd_node_not_uuid(tmp_path):
    # rocm-smi's 63 rows beside a sysfs whose GPU 5 lacks partition 7: each row finds its partition.
    render_cpx(tmp_path, skip={(5, 7)})
    _state, sysfs = collect_sysfs(str(tmp_path))
    name = "mi300x-8gpu-cpx-nps1_rocm6.3.3_rocm-smi-default_63-of-64-partitions.txt"
    concise = rocm_smi.parse_rocm_smi_text((CAPTURES / name).read_text(encoding="utf-8"))
    gpu = merged({"sysfs": sysfs, "rocm_smi": concise})
    assert gpu["count"] == 63 and gpu["conflicts"] == []
    assert [d["partition_id"] for d in gpu["devices"]] == [d["partition_id"] for d in concise["devices"]]
    assert len([text for text in gpu["warnings"] if text.startswith("physical GPU 5 ")]) == 1


def test_gpu_facts_on_the_rendered_cpx_nps4_profile(tmp_path, capsys, monkeypatch):
    # The hardware model's own partitioned MI300X (src/rocm_fleet/hardware/profiles/mi300x-8-cpx-nps4.yml).
    profile = load_profile("mi300x-8-cpx-nps4")
    render_profile(profile, tmp_path)
    gpu = run_module(capsys, monkeypatch, sysfs_root=str(tmp_path), sources=["sysfs"])
    devices = gpu["devices"]
    assert gpu["count"] == 64 and gpu["conflicts"] == []
    assert {(d["compute_partition"], d["memory_partition"]) for d in devices} == {("CPX", "NPS4")}
    assert [d["physical_gpu"] for d in devices] == [i // MI300X_CPX for i in range(64)]
    assert [d["partition_id"] for d in devices] == [i % MI300X_CPX for i in range(64)]
    assert [d["pci_bus"] for d in devices] == [profile.gpus[i // MI300X_CPX].bus for i in range(64)]
    assert [d["render_node"] for d in devices] == ["/dev/dri/renderD%d" % (128 + i) for i in range(64)]
    assert {d["vram_bytes"] for d in devices} == {PARTITION_VRAM}
    assert {tuple(d["available_compute_partitions"]) for d in devices} == {("SPX", "DPX", "QPX", "CPX")}
    assert {tuple(d["available_memory_partitions"]) for d in devices} == {("NPS1", "NPS4")}
    assert not [text for text in gpu["warnings"] if text.startswith("physical GPU")]


def test_gpu_facts_on_the_rendered_63_of_64_case(tmp_path, capsys, monkeypatch):
    # ROCm/ROCm#4750: another DRM driver holds a primary minor; GPU 5 loses partition 7 (logical 40-46).
    profile = load_profile("mi300x-8-cpx-nps4").with_foreign_drm_card(5)
    render_profile(profile, tmp_path)
    gpu = run_module(capsys, monkeypatch, sysfs_root=str(tmp_path), sources=["sysfs"])
    assert gpu["count"] == 63
    assert [d["partition_id"] for d in gpu["devices"] if d["physical_gpu"] == 5] == list(range(7))
    assert [text for text in gpu["warnings"] if text.startswith("physical GPU")] == [
        "physical GPU 5 (%s, PCI %s, logical GPU 40-46, KFD node 42-48) has 7 of the 8"
        " partitions CPX gives; partition ID 7 missing: the DRM minors ran out (another DRM driver such as"
        " mgag200 holds one) or a container sees only some" % (profile.gpus[5].product, profile.gpus[5].bus)
    ]
