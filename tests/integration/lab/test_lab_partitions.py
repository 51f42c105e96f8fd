"""Issue 11 §2 on the lab: the CPX/NPS4 8x MI300X host converges to its declared modes and is compliant; a
changed declared mode is reported by drift under the label site.yml --check prints, and site.yml applies it.

mi300x-cpx-01 (inventory/lab: group mi300x_inference, profile mi300x-8-cpx-nps4) declares CPX/NPS4: 64
logical GPUs. The test runs that host in a lab of its own (own state directory, port and mirror, the site's
group_vars), so it runs beside the tests of the default instance. The changes below are given as -e, as a site
would edit its group_vars, so the committed inventory stays as it is:

- QPX/NPS4: a compute mode, applied at once (32 logical GPUs);
- SPX/NPS1: a memory mode first (amdgpu reload: the lab re-renders /sys when amdgpu loads again), then the
  compute mode (8 logical GPUs, one per physical GPU).
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest
import yaml
from fleet_testing import lab_drift
from fleet_testing.lab_drift import change_labels, check_labels, failed_checks
from fleet_testing.lab_helpers import lab_available, rocm_fleet
from fleet_testing.lab_site import PlaybookRun, link_site_group_vars
from fleet_testing.lab_site import run_playbook as run_site_playbook

pytestmark = [pytest.mark.lab, pytest.mark.slow]

HOST = "mi300x-cpx-01"
PORT, MIRROR_PORT = 2611, 8690
STATE_DIR = Path("/var/lib/rocm-fleet/lab-partitions-test")
INVENTORY = STATE_DIR.with_name("lab-partitions-test-inventory")
drift = functools.partial(lab_drift.drift, inventory=INVENTORY)
shell = functools.partial(lab_drift.shell, inventory=INVENTORY)
run_playbook = functools.partial(run_site_playbook, inventory=INVENTORY)


@pytest.fixture(scope="module")
def compliant_lab():
    """mi300x-cpx-01 alone, converged: the first site.yml run."""
    reason = lab_available()
    if reason:
        pytest.skip(reason)
    INVENTORY.mkdir(parents=True, exist_ok=True)
    hosts = {"all": {"children": {"gpu_servers": {"children": {"mi300x_inference": {"hosts": {
        HOST: {"lab_profile": "mi300x-8-cpx-nps4", "ansible_port": PORT}}}}}}}}
    (INVENTORY / "hosts.yml").write_text("---\n" + yaml.safe_dump(hosts, sort_keys=False))
    link_site_group_vars(INVENTORY, MIRROR_PORT)
    env = {"ROCM_FLEET_LAB_DIR": str(STATE_DIR), "ROCM_FLEET_LAB_INVENTORY": str(INVENTORY),
           "ROCM_FLEET_LAB_MIRROR_PORT": str(MIRROR_PORT)}
    with pytest.MonkeyPatch.context() as patch:  # the inventory's connection settings read the lab's paths
        for name, value in env.items():
            patch.setenv(name, value)
        try:
            rocm_fleet("lab", "reset", env=env, check=False)
            up = rocm_fleet("lab", "up", env=env, check=False)
            assert up.returncode == 0, up.stdout + up.stderr
            converged: PlaybookRun = run_playbook("site.yml")
            assert converged.returncode == 0, converged.tail()
            yield converged
        finally:
            reset = rocm_fleet("lab", "reset", env=env, check=False)
            assert reset.returncode == 0, reset.stdout + reset.stderr
COMPUTE = "partitions: compute partition {} on every GPU"
MEMORY = "partitions: memory partition {} on every GPU"


def declared(compute: str, memory: str) -> list[str]:
    return ["-e", json.dumps({"preflight_compute_partition": compute, "preflight_memory_partition": memory})]


def logical_gpus(host: dict) -> int:
    return host["gpu"]["count"]


def test_the_cpx_nps4_host_converges_and_is_compliant(compliant_lab, tmp_path):
    assert compliant_lab.recap[HOST]["failed"] == 0, compliant_lab.tail()
    code, report, result = drift(tmp_path, "--limit", HOST)
    found = report["hosts"][HOST]
    assert code == 0 and found["status"] == "compliant", (failed_checks(found), result.stderr[-3000:])
    # drift.json lists a passed check by its ID only (schema 3).
    assert {"ROCM-GPU-005", "ROCM-GPU-001"} <= set(found["passed"])
    assert logical_gpus(found) == 64
    # A second site.yml run changes nothing on the partitions.
    again = run_playbook("site.yml", "--limit", HOST)
    assert again.returncode == 0 and not [label for label in again.changed_objects.get(HOST, [])
                                          if label.startswith("partitions:")], again.tail()


# The checks a changed mode fails: its own, and the count, VRAM and links of the logical GPUs it gives
# (each with site.yml as its repair while ROCM-GPU-005 fails).
@pytest.mark.parametrize(("compute", "memory", "labels", "count", "checks"), [
    ("QPX", "NPS4", [COMPUTE.format("QPX")], 32, {"ROCM-GPU-001", "ROCM-GPU-004", "ROCM-GPU-005"}),
    ("SPX", "NPS1", [COMPUTE.format("SPX"), MEMORY.format("NPS1")], 8,
     {"ROCM-GPU-001", "ROCM-GPU-004", "ROCM-GPU-005", "ROCM-TOPO-001"}),
])
def test_a_changed_declared_mode_is_drift_under_the_check_label_and_site_yml_applies_it(
        compliant_lab, tmp_path, compute, memory, labels, count, checks):
    extra = declared(compute, memory)
    try:
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
    finally:
        restored = run_playbook("site.yml", "--limit", HOST)
        assert restored.returncode == 0, restored.tail()
        shell(HOST, "test $(cat /sys/bus/pci/devices/0000:0c:00.0/current_compute_partition) = CPX")
