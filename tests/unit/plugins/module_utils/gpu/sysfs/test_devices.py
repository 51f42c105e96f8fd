"""collect_sysfs against rendered profile trees: every profile round-trips, faults show up."""

import json
import os
import shutil

import pytest
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.model import DEVICE_KEYS, TOPOLOGY_KEYS
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.sysfs.devices import collect_sysfs

from rocm_fleet.hardware import available_profiles, load_profile
from rocm_fleet.hardware.render import device_dir, render_profile


def collect(profile, root):
    render_profile(profile, root)
    state, report = collect_sysfs(str(root))
    assert state == "ok", report["warnings"]
    return report


def assert_devices_match(profile, report):
    """One device per logical device of the profile (a partitioned GPU's partitions, else the GPU)."""
    parts = profile.partitions()
    assert len(report["devices"]) == len(parts)
    for index, (part, device) in enumerate(zip(parts, report["devices"], strict=True)):
        gpu = profile.gpus[part.gpu]
        assert set(device) == set(DEVICE_KEYS)
        assert device == {
            "index": index,
            "pci_bus": gpu.bus,
            "device_id": "0x%04x" % gpu.device_id,
            "subsystem_device_id": "0x%04x" % gpu.subsystem_device_id,
            "product": gpu.product,
            "gfx_target": gpu.gfx_target,
            # A partition's VRAM is its KFD mem bank's share; a whole GPU's is mem_info_vram_total.
            "vram_bytes": gpu.vram_bytes // part.count,
            "numa_node": gpu.numa_node,
            "kfd_node": len(profile.cpus) + index,
            "render_node": "/dev/dri/renderD%d" % part.drm.render_minor,
            # Schema 2: an unpartitioned GPU is its own partition 0; the merge numbers physical GPUs.
            "compute_partition": gpu.compute_partition,
            "memory_partition": gpu.memory_partition,
            "partition_id": part.partition_id,
            "physical_gpu": None,
            # The lab may or may not render available_*_partition: a list of modes or nothing.
            "available_compute_partitions": device["available_compute_partitions"],
            "available_memory_partitions": device["available_memory_partitions"],
        }
        for key in ("available_compute_partitions", "available_memory_partitions"):
            assert device[key] is None or isinstance(device[key], list)


@pytest.mark.parametrize("name", available_profiles())
def test_every_profile_round_trips(name, tmp_path):
    profile = load_profile(name)
    report = collect(profile, tmp_path)
    assert_devices_match(profile, report)
    assert report["driver_version"] == (profile.driver_version or None)
    assert report["warnings"] == []
    if profile.gpus:
        assert set(report["topology"]) == set(TOPOLOGY_KEYS)
        assert report["topology"] == profile.expected_topology()
    else:
        assert report["topology"] is None


def test_device_order_follows_drm_cards_not_pci_addresses(tmp_path):
    profile = load_profile("mi300x-8")
    gpus = list(profile.gpus)
    gpus[0], gpus[5] = gpus[5], gpus[0]
    shuffled = type(profile)(**{**profile.__dict__, "gpus": tuple(gpus)})
    report = collect(shuffled, tmp_path)
    assert [d["pci_bus"] for d in report["devices"]][:1] == ["0000:af:00.0"]
    assert_devices_match(shuffled, report)


def test_other_amd_functions_are_not_gpus(tmp_path):
    profile = load_profile("w7900-2")
    render_profile(profile, tmp_path)
    gpu_dir = tmp_path / "sys" / device_dir(profile.gpus[0])
    for function, vendor, pci_class in (("1", "0x1002", "0x040300"), ("2", "0x1022", "0x0c0330")):
        extra = gpu_dir.parent / (profile.gpus[0].bus[:-1] + function)
        extra.mkdir()
        (extra / "vendor").write_text(vendor + "\n")
        (extra / "class").write_text(pci_class + "\n")
        pci_devices = tmp_path / "sys/bus/pci/devices"
        os.symlink(os.path.relpath(extra, pci_devices), pci_devices / extra.name)
    state, report = collect_sysfs(str(tmp_path))
    assert state == "ok"
    assert [d["pci_bus"] for d in report["devices"]] == [gpu.bus for gpu in profile.gpus]


def test_driver_not_loaded_lists_pci_gpus_without_indexes(tmp_path):
    profile = load_profile("mi210-4-pcie").with_driver_loaded(False)
    render_profile(profile, tmp_path)
    state, report = collect_sysfs(str(tmp_path))
    assert state == "ok"
    assert [d["pci_bus"] for d in report["devices"]] == [gpu.bus for gpu in profile.gpus]
    assert {d["index"] for d in report["devices"]} == {None}
    assert {d["device_id"] for d in report["devices"]} == {"0x740f"}
    assert report["topology"] is None and report["driver_version"] is None
    assert report["warnings"] == ["amdgpu is not loaded: 4 AMD GPU(s) on the PCI bus have no driver"]


def test_missing_gpu_and_degraded_link_show_in_the_topology(tmp_path):
    profile = load_profile("mi300x-8").without_gpu(3).with_link(0, 1, "PCIE")
    report = collect(profile, tmp_path)
    assert len(report["devices"]) == 7
    assert "0000:5c:00.0" not in [d["pci_bus"] for d in report["devices"]]
    topology = report["topology"]
    assert (topology["link_type"][0][1], topology["hops"][0][1], topology["weight"][0][1]) == ("PCIE", 2, 40)
    assert topology == profile.expected_topology()


def test_gpu_without_drm_device_gets_a_warning(tmp_path):
    profile = load_profile("w7900-2")
    render_profile(profile, tmp_path)
    shutil.rmtree(tmp_path / "sys" / device_dir(profile.gpus[1]) / "drm")
    state, report = collect_sysfs(str(tmp_path))
    assert state == "ok"
    assert [d["index"] for d in report["devices"]] == [0, None]
    assert "no DRM device for 0000:44:00.0" in report["warnings"][0]
    assert report["topology"] is not None and len(report["topology"]["hops"]) == 1


def test_missing_kfd_topology_keeps_the_devices(tmp_path):
    profile = load_profile("mi300x-8")
    render_profile(profile, tmp_path)
    shutil.rmtree(tmp_path / "sys/devices/virtual/kfd")
    state, report = collect_sysfs(str(tmp_path))
    assert state == "ok"
    assert len(report["devices"]) == 8 and report["devices"][0]["gfx_target"] is None
    assert report["topology"] is None
    assert report["warnings"] == ["KFD topology lists 0 of 8 GPUs: no topology"]


def test_garbage_kfd_properties_do_not_crash(tmp_path):
    profile = load_profile("w7900-2")
    render_profile(profile, tmp_path)
    (tmp_path / "sys/devices/virtual/kfd/kfd/topology/nodes/1/properties").write_bytes(b"\xff\x00 junk\nsimd_count x\n")
    state, report = collect_sysfs(str(tmp_path))
    assert state == "ok"
    assert report["devices"][0]["kfd_node"] is None and report["devices"][1]["kfd_node"] == 2
    assert report["topology"] is None


def test_unreadable_sysfs_fails_without_raising(tmp_path):
    state, report = collect_sysfs(str(tmp_path / "nothing-here"))
    assert state == "failed"
    assert report["devices"] == [] and "cannot list PCI devices" in report["warnings"][0]


def test_facts_for_eight_gpus_stay_small(tmp_path):
    report = collect(load_profile("mi300x-8"), tmp_path)
    assert len(json.dumps(report, separators=(",", ":"))) <= 16 * 1024
