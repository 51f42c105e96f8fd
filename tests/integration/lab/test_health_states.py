"""Issue 11's failure states, all injected on one converged lab host: each is drift's finding under its own check ID.

A degraded PCIe link, an uncorrectable RAS error, old PMFW, a new default kernel without its amdgpu module,
Secure Boot on with the lab's unsigned DKMS module, a foreign HSA override in /etc/profile.d and an unlisted
member of the render group (the lab's GPU servers ask for exclusive membership). One drift run must name
exactly those checks as failed, nothing unknown or warned besides, and exit 2; cleared, the host is compliant.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from fleet_testing.lab_ansible import BIN, LAB_INVENTORY, ansible_env
from fleet_testing.lab_helpers import REPO, rocm_fleet

pytestmark = [pytest.mark.lab, pytest.mark.slow]
HOST = "mi300x-01"
# fault arguments -> the check that must report it, and what its message must say
STATES = [
    (["pcie-link", "--gpu", "1", "--width", "8"], "ROCM-HEALTH-001", "GPU 1 (0000:22:00.0)"),
    (["ras", "--gpu", "2", "--block", "umc", "--ue", "1"], "ROCM-HEALTH-003", "GPU 2 (0000:38:00.0)"),
    # PMFW 85.129, below the 85.130 the MI300X minimum names (shared capture of ROCm/ROCm#5231).
    (["firmware", "--gpu", "3", "--fw", "smc", "--version", "0x00558103"], "ROCM-HEALTH-005", "GPU 3 (0000:5c:00.0)"),
    (["new-kernel"], "ROCM-KERN-001", "next kernel: amdgpu has no module for"),
    (["secure-boot", "on"], "ROCM-KERN-003", "Secure Boot is on and the DKMS amdgpu module is unsigned"),
    (["foreign-env", "--value", "11.0.0"], "ROCM-ENV-005", "HSA_OVERRIDE_GFX_VERSION=11.0.0"),
    (["unlisted-member", "--user", "intruder", "--group", "render"], "ROCM-ACCESS-002", "intruder"),
]


def drift(tmp_path: Path) -> tuple[int, dict, str]:
    out = tmp_path / "report"
    result = subprocess.run(
        [str(BIN / "rocm-fleet"), "drift", "-i", str(LAB_INVENTORY), "--limit", HOST, "--output-dir", str(out)],
        cwd=REPO, env=ansible_env(), capture_output=True, text=True, timeout=900,
    )
    report = json.loads((out / "drift.json").read_text()) if (out / "drift.json").exists() else {}
    return result.returncode, report.get("hosts", {}).get(HOST, {}), result.stderr[-3000:]


def flagged(host: dict) -> dict[str, tuple[str, str]]:
    return {check["id"]: (check["status"], check["message"]) for check in host.get("checks", [])
            if check["status"] not in ("pass", "skipped")}


@pytest.fixture
def faulted(compliant_lab):
    try:
        for arguments, _check, _says in STATES:
            rocm_fleet("lab", "fault", HOST, *arguments)
        yield
    finally:
        rocm_fleet("lab", "fault", HOST, "clear", check=False)


def test_each_injected_state_is_its_own_finding_and_nothing_else_is_flagged(faulted, tmp_path):
    code, host, stderr = drift(tmp_path)
    found = flagged(host)
    assert {check: status for check, (status, _m) in found.items()} == {
        check: "fail" for _arguments, check, _says in STATES}, (found, stderr)
    for _arguments, check, says in STATES:
        assert says in found[check][1], (check, found[check][1])
    assert code == 2 and host["status"] == "drift"


def test_the_host_is_compliant_again_once_the_states_are_cleared(compliant_lab, tmp_path):
    for arguments, _check, _says in STATES:
        rocm_fleet("lab", "fault", HOST, *arguments)
    rocm_fleet("lab", "fault", HOST, "clear")
    code, host, stderr = drift(tmp_path)
    assert (code, host.get("status"), flagged(host)) == (0, "compliant", {}), stderr
