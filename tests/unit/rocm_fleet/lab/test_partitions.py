"""A lab host's partition modes: a write to amdgpu's files re-renders /sys as the driver would."""

import json
import os

import pytest

from rocm_fleet.hardware import load_profile
from rocm_fleet.lab import hwsys, partitions, supervisor

CPX = load_profile("mi300x-8-cpx-nps4")
AMDGPU = {"version": None, "options": {}}


def kfd_gpu_nodes(sys_dir):
    """Logical GPUs as KFD shows them: topology nodes with SIMDs (the CPUs have none)."""
    nodes = sys_dir / "class" / "kfd" / "kfd" / "topology" / "nodes"
    return [node for node in nodes.iterdir() if "simd_count 0\n" not in (node / "properties").read_text()]


def test_the_profiles_own_modes_without_a_state():
    assert partitions.read_state("/nonexistent") == partitions.EMPTY
    assert partitions.apply_modes(CPX, partitions.EMPTY) is CPX


def test_a_valid_compute_mode_applies_at_once():
    state, refusals = partitions.on_write(partitions.EMPTY, {"compute": "SPX"}, CPX)
    # SPX with NPS4 is no pair (AMD: NPS4 needs QPX or CPX): refused, as amdgpu's EINVAL.
    assert refusals and state == partitions.EMPTY
    state, refusals = partitions.on_write(partitions.EMPTY, {"compute": "QPX"}, CPX)
    assert refusals == [] and state == {"compute": "QPX", "memory": "NPS4", "requested_memory": None}
    assert {gpu.partition_count for gpu in partitions.apply_modes(CPX, state).gpus} == {4}


def test_a_memory_mode_waits_for_the_driver_load_which_fits_the_compute_mode():
    state, refusals = partitions.on_write(partitions.EMPTY, {"memory": "NPS1"}, CPX)
    assert refusals == [] and state["requested_memory"] == "NPS1" and state["memory"] is None
    assert partitions.on_driver_load(state, CPX) == {"compute": "CPX", "memory": "NPS1", "requested_memory": None}
    # NPS4 after SPX/NPS1: the compute mode becomes the first available one that pairs with NPS4.
    spx = partitions.apply_modes(CPX, {"compute": "SPX", "memory": "NPS1"})
    state, _ = partitions.on_write(
        {"compute": "SPX", "memory": "NPS1", "requested_memory": None}, {"memory": "NPS4"}, spx
    )
    assert partitions.on_driver_load(state, spx) == {"compute": "QPX", "memory": "NPS4", "requested_memory": None}
    assert partitions.on_write(partitions.EMPTY, {"memory": "NPS2"}, CPX)[1] == [
        "memory mode NPS2 is not available (NPS1, NPS4)"
    ]


def _partition_file(tmp_path, mode: str, age_s: float):
    path = tmp_path / partitions.FILES["compute"]
    path.write_text(mode + "\n")
    stamp = path.stat().st_mtime_ns - int(age_s * 1e9)
    os.utime(path, ns=(stamp, stamp))
    return path, stamp


def test_a_file_unchanged_since_its_last_read_is_not_read_again(tmp_path):
    path, stamp = _partition_file(tmp_path, "SPX", age_s=10)
    files, stamps = {str(path): "SPX"}, {}
    assert partitions.written(files, stamps) is None and str(path) in stamps
    # Other text behind the same time, size and inode: skipped, so nothing is found.
    path.write_text("CPX\n")
    os.utime(path, ns=(stamp, stamp))
    assert partitions.written(files, stamps) is None
    assert partitions.written(files) == {"compute": "CPX"}  # without stamps every file is read
    # A write moves the time: found.
    os.utime(path, ns=(stamp + 1, stamp + 1))
    assert partitions.written(files, stamps) == {"compute": "CPX"}


def test_a_file_written_just_now_is_read_again_next_time(tmp_path):
    # Written within the coarse clock's tick of the read: a second write may keep its time, so no stamp is kept.
    path, stamp = _partition_file(tmp_path, "SPX", age_s=0)
    files, stamps = {str(path): "SPX"}, {}
    assert partitions.written(files, stamps) is None and stamps == {}
    path.write_text("CPX\n")
    os.utime(path, ns=(stamp, stamp))
    assert partitions.written(files, stamps) == {"compute": "CPX"}


def test_state_file_round_trip(tmp_path):
    partitions.write_state(tmp_path, {"compute": "SPX", "memory": "NPS1", "requested_memory": None})
    assert partitions.read_state(tmp_path)["compute"] == "SPX"
    partitions.write_state(tmp_path, dict(partitions.EMPTY))
    assert not (tmp_path / partitions.STATE_FILE).exists()


@pytest.fixture
def host(tmp_path, monkeypatch):
    """A supervisor of an 8x MI300X CPX/NPS4 host in a lab of its own, rendered once with amdgpu loaded."""
    monkeypatch.setenv("ROCM_FLEET_LAB_DIR", str(tmp_path))
    host_dir = tmp_path / "hosts" / "cpx-01"
    (host_dir / "root").mkdir(parents=True)
    (host_dir / "run" / "dev").mkdir(parents=True)
    (host_dir / "control").mkdir()
    (host_dir / "host.json").write_text(json.dumps({"profile": CPX.name, "port": 2299}))
    synced = []
    monkeypatch.setattr(hwsys, "sync_gpu_nodes", lambda dev, nodes, root, sys_dir, **_: synced.append(nodes))
    monkeypatch.setattr(supervisor.kernelstate, "modprobe_config", lambda root: {"options": {}, "install": {}})
    monkeypatch.setattr(supervisor.kernelstate, "dkms_amdgpu_version", lambda root, kernel=None: None)
    host = supervisor.Supervisor("cpx-01")
    host.init_pid = os.getpid()  # a running host: its /dev is reached through /proc/<pid 1>/root
    host.status = {"cmdline": "", "amdgpu_loaded": True}
    host.amdgpu = dict(AMDGPU)
    host._render()
    return host


def current(host, kind):
    sys_dir = host.run_dir / "sys"
    return {(sys_dir / "bus/pci/devices" / gpu.bus / partitions.FILES[kind]).read_text().strip() for gpu in CPX.gpus}


def test_a_write_to_the_compute_file_re_renders_the_host(host):
    sys_dir = host.run_dir / "sys"
    assert len(kfd_gpu_nodes(sys_dir)) == 64
    host._partition_writes()  # nothing written: nothing happens
    assert partitions.read_state(host.dir) == partitions.EMPTY
    # amd-smi set --gpu all --compute-partition QPX, as the module writes it.
    for gpu in CPX.gpus:
        (sys_dir / "bus/pci/devices" / gpu.bus / "current_compute_partition").write_text("QPX\n")
    host._partition_writes()
    assert len(kfd_gpu_nodes(sys_dir)) == 32 and current(host, "compute") == {"QPX"}
    # The memory mode waits for amdgpu to load again; its file keeps the current mode meanwhile.
    (sys_dir / "bus/pci/devices" / CPX.gpus[0].bus / "current_memory_partition").write_text("NPS1\n")
    host._partition_writes()
    assert current(host, "memory") == {"NPS4"} and partitions.read_state(host.dir)["requested_memory"] == "NPS1"
    host._set_amdgpu(False, [])
    host._set_amdgpu(True, [])
    assert current(host, "memory") == {"NPS1"} and current(host, "compute") == {"QPX"}
    # SPX with NPS1: 8 logical GPUs, one per physical GPU.
    for gpu in CPX.gpus:
        (sys_dir / "bus/pci/devices" / gpu.bus / "current_compute_partition").write_text("SPX\n")
    host._partition_writes()
    assert len(kfd_gpu_nodes(sys_dir)) == 8
    # A mode the GPU does not offer is refused: the file reads the current mode again.
    (sys_dir / "bus/pci/devices" / CPX.gpus[0].bus / "current_compute_partition").write_text("TPX\n")
    host._partition_writes()
    assert current(host, "compute") == {"SPX"} and "partition mode refused" in (host.dir / "boot.log").read_text()
