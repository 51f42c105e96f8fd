"""rocm_fleet.core.gpu_partition through main(), on the lab's rendered /sys of 8x MI300X in CPX/NPS4."""

import json
import shutil

import pytest
from ansible.module_utils.testing import patch_module_args
from ansible_collections.rocm_fleet.core.plugins.modules import gpu_partition

from rocm_fleet.hardware import load_profile
from rocm_fleet.hardware.render import render_profile

BUSES = [gpu.bus for gpu in load_profile("mi300x-8-cpx-nps4").gpus]


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    # Rendering 64 partitions takes seconds: once, copied for each test.
    tree = tmp_path_factory.mktemp("cpx")
    render_profile(load_profile("mi300x-8-cpx-nps4"), tree)
    return tree


@pytest.fixture
def root(rendered, tmp_path):
    shutil.copytree(rendered / "sys", tmp_path / "sys", symlinks=True)
    return tmp_path


def run(capsys, root, check=False, **params):
    params = dict(params, root=str(root), pending_file=str(root / "run" / "partitions-memory-mode"))
    if check:
        params["_ansible_check_mode"] = True
    with patch_module_args(params), pytest.raises(SystemExit):
        gpu_partition.main()
    return json.loads(capsys.readouterr().out)


def mode_file(root, bus, kind):
    return root / "sys" / "bus" / "pci" / "devices" / bus / ("current_%s_partition" % kind)


def test_a_compute_mode_is_written_to_every_gpu_then_nothing_changes(capsys, root):
    result = run(capsys, root, set="compute", mode="qpx", memory="NPS4")
    assert result["changed"] and result["written"] == BUSES and not result.get("failed")
    assert {mode_file(root, bus, "compute").read_text().strip() for bus in BUSES} == {"QPX"}
    assert "compute CPX, memory NPS4" in result["diff"]["before"]
    assert "compute QPX, memory NPS4" in result["diff"]["after"]
    again = run(capsys, root, set="compute", mode="QPX", memory="NPS4")
    assert not again["changed"] and again["written"] == []


def test_check_mode_reports_the_change_and_writes_nothing(capsys, root):
    result = run(capsys, root, check=True, set="compute", mode="SPX")
    assert result["changed"] and result["written"] == BUSES
    assert "compute SPX" in result["diff"]["after"]
    assert {mode_file(root, bus, "compute").read_text().strip() for bus in BUSES} == {"CPX"}


def test_a_memory_mode_is_requested_once_and_waits_for_the_reload(capsys, root):
    result = run(capsys, root, set="memory", mode="NPS1")
    assert result["changed"] and result["reload_needed"]
    assert (root / "run" / "partitions-memory-mode").read_text() == "NPS1\n"
    assert "NPS1 at the next amdgpu reload" in result["diff"]["after"]
    # The file reads the current mode until amdgpu reloads (the lab renders it so too): asked again, nothing changes.
    for bus in BUSES:
        mode_file(root, bus, "memory").write_text("NPS4\n")
    again = run(capsys, root, set="memory", mode="NPS1")
    assert not again["changed"] and again["reload_needed"]
    # The compute step waits for the memory mode it pairs with.
    waiting = run(capsys, root, set="compute", mode="SPX", memory="NPS1")
    assert not waiting["changed"] and "NPS1 is not applied yet" in waiting["waits"]
    # In --check, the compute step shows the change it would make after the reload.
    assert run(capsys, root, check=True, set="compute", mode="SPX", memory="NPS1")["changed"]
    # The reload applied it: the marker goes, no reboot is due for it.
    for bus in BUSES:
        mode_file(root, bus, "memory").write_text("NPS1\n")
    done = run(capsys, root, set="memory", mode="NPS1")
    assert not done["changed"] and not done["reload_needed"]
    assert not (root / "run" / "partitions-memory-mode").exists()


def test_a_mode_the_gpus_do_not_offer_fails_before_any_write(capsys, root):
    result = run(capsys, root, set="memory", mode="NPS2")
    assert result["failed"] and "lists memory modes NPS1, NPS4 as available, not NPS2" in result["msg"]
    assert BUSES[0] in result["msg"]
    assert not (root / "run" / "partitions-memory-mode").exists()
    assert run(capsys, root, set="compute", mode="XPX")["failed"]


def test_no_partitionable_gpu_fails(capsys, tmp_path):
    render_profile(load_profile("mi210-4-pcie"), tmp_path)
    result = run(capsys, tmp_path, set="compute", mode="CPX")
    assert result["failed"] and "no GPU with amdgpu's current_compute_partition file" in result["msg"]


def test_a_refused_write_fails_naming_the_file(capsys, root, monkeypatch):
    def busy(path, text):
        raise OSError(16, "Device or resource busy")

    monkeypatch.setattr(gpu_partition, "_write", busy)
    result = run(capsys, root, set="compute", mode="SPX")
    assert result["failed"] and "a process holds the GPU" in result["msg"]
    assert "current_compute_partition" in result["msg"]
