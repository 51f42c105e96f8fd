"""Issue 11 §2 on the lab: the CPX/NPS4 8x MI300X host converges to its declared modes and is compliant; a
changed declared mode is reported by drift under the label site.yml --check prints, and site.yml applies it.

mi300x-cpx-01 (inventory/lab: group mi300x_inference, profile mi300x-8-cpx-nps4, RHEL 10.0) declares CPX/NPS4:
64 logical GPUs. The test changes the converged lab's host and puts its declared modes back before it ends (it
once ran the host in a lab of its own, beside the default instance's tests: a second from-bare converge of an
8-GPU host that the 2-core CI machine paid in full). The changes below are given as -e, as a site would edit its
group_vars, so the committed inventory stays as it is:

- QPX/NPS4: a compute mode, applied at once (32 logical GPUs);
- SPX/NPS1: a memory mode first (amdgpu reload: the lab re-renders /sys when amdgpu loads again), then the
  compute mode (8 logical GPUs, one per physical GPU).
"""

from __future__ import annotations

import json

import pytest
from fleet_testing.lab_drift import change_labels, check_labels, drift, failed_checks, shell
from fleet_testing.lab_site import run_playbook

pytestmark = [pytest.mark.lab, pytest.mark.slow]

HOST = "mi300x-cpx-01"
COMPUTE = "partitions: compute partition {} on every GPU"
MEMORY = "partitions: memory partition {} on every GPU"


def declared(compute: str, memory: str) -> list[str]:
    return ["-e", json.dumps({"preflight_compute_partition": compute, "preflight_memory_partition": memory})]


def logical_gpus(host: dict) -> int:
    return host["gpu"]["count"]


def test_the_cpx_nps4_host_converges_and_is_compliant(compliant_lab, tmp_path):
    code, report, result = drift(tmp_path, "--limit", HOST)
    found = report["hosts"][HOST]
    assert code == 0 and found["status"] == "compliant", (failed_checks(found), result.stderr[-3000:])
    # drift.json lists a passed check by its ID only (schema 3).
    assert {"ROCM-GPU-005", "ROCM-GPU-001"} <= set(found["passed"])
    assert logical_gpus(found) == 64
    # That a second site.yml run changes nothing on this host is test_provision_converge's: inventory/lab's
    # mi300x-cpx-01 declares the same modes.


@pytest.fixture(scope="module")
def declared_modes_back(compliant_lab):
    """Puts the host back to its declared CPX/NPS4 once the module's mode changes are done (passed, failed or
    deselected): the lab stream's later tests use this host."""
    yield
    restored = run_playbook("site.yml", "--limit", HOST)
    assert restored.returncode == 0, restored.tail()
    shell(HOST, "test $(cat /sys/bus/pci/devices/0000:0c:00.0/current_compute_partition) = CPX")


# The checks a changed mode fails: its own, and the count, VRAM and links of the logical GPUs it gives
# (each with site.yml as its repair while ROCM-GPU-005 fails). The cases run in this order, each from the modes
# the one before applied (CPX/NPS4, then QPX/NPS4); declared_modes_back restores the host once, after both.
@pytest.mark.parametrize(("compute", "memory", "labels", "count", "checks"), [
    ("QPX", "NPS4", [COMPUTE.format("QPX")], 32, {"ROCM-GPU-001", "ROCM-GPU-004", "ROCM-GPU-005"}),
    ("SPX", "NPS1", [COMPUTE.format("SPX"), MEMORY.format("NPS1")], 8,
     {"ROCM-GPU-001", "ROCM-GPU-004", "ROCM-GPU-005", "ROCM-TOPO-001"}),
])
def test_a_changed_declared_mode_is_drift_under_the_check_label_and_site_yml_applies_it(
        declared_modes_back, tmp_path, compute, memory, labels, count, checks):
    extra = declared(compute, memory)
    code, report, result = drift(tmp_path / "changed", "--limit", HOST, *extra)
    found = report["hosts"][HOST]
    assert code == 2 and failed_checks(found) == checks, (found["checks"], result.stderr[-3000:])
    repairs = {check["id"]: check["repair"] for check in found["checks"] if check["id"] in checks}
    assert all(repair.startswith("site.yml") for repair in repairs.values()), repairs
    check_run = run_playbook("site.yml", "--check", "--diff", "--limit", HOST, *extra)
    assert check_run.returncode == 0, check_run.tail()
    assert change_labels(found) == sorted(labels) == [
        label for label in check_labels(check_run, HOST) if label.startswith("partitions:")]

    applied = run_playbook("site.yml", "--limit", HOST, *extra)
    assert applied.returncode == 0, applied.tail()
    code, report, result = drift(tmp_path / "applied", "--limit", HOST, *extra)
    assert code == 0, (failed_checks(report["hosts"][HOST]), result.stderr[-3000:])
    assert logical_gpus(report["hosts"][HOST]) == count
