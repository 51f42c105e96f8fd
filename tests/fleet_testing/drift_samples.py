"""Realistic drift reports for the writer tests and the Chromium test."""

from __future__ import annotations

from rocm_fleet.drift import AppliedWaiver, Change, CheckResult, DriftReport, GpuSummary, HostResult, RunInfo

MI300X = "AMD Instinct MI300X"
PIN_DIFF = """--- before: /etc/apt/preferences.d/rocm-pin-600
+++ after: /etc/apt/preferences.d/rocm-pin-600
@@ -1,3 +1,3 @@
 Package: *
-Pin: release o=repo.radeon.com
+Pin: release o=repo.radeon.com,n=6.3.1
 Pin-Priority: 600
"""


def xgmi_matrix(count: int, pcie_pairs: tuple[tuple[int, int], ...] = ()) -> list[list[str]]:
    matrix = [["SELF" if row == column else "XGMI" for column in range(count)] for row in range(count)]
    for first, second in pcie_pairs:
        matrix[first][second] = matrix[second][first] = "PCIE"
    return matrix


def passing_checks() -> list[CheckResult]:
    return [
        CheckResult("ROCM-DRV-001", "amdgpu driver loaded", "pass", "live", "live"),
        CheckResult("ROCM-VER-001", "ROCm version matches the inventory", "pass", "6.3.1", "6.3.1"),
        CheckResult("ROCM-KERN-002", "Kernel command line carries iommu=pt", "pass", "iommu=pt", "iommu=pt"),
        CheckResult("ROCM-GPU-001", "GPU count matches the inventory", "pass", 8, 8),
        CheckResult("ROCM-TOPO-001", "Every GPU pair is linked by xGMI", "pass", "XGMI", "XGMI"),
    ]


def three_host_report() -> DriftReport:
    """An 8x MI300X compliant host, a drifted one, an unreachable one."""
    compliant_checks = [
        *passing_checks(),
        CheckResult(
            "ROCM-FW-001",
            "GPU firmware at the fleet baseline",
            "waived",
            "01.25.05.00",
            "01.25.03.12",
            "PLDM bundle older than the baseline",
            AppliedWaiver("vendor RMA pending for this node (TICKET-4711)", "2099-12-31", "gpu-mi300x-01"),
        ),
    ]
    drift_checks = passing_checks()
    drift_checks[-1] = CheckResult(
        "ROCM-TOPO-001",
        "Every GPU pair is linked by xGMI",
        "fail",
        {"link_type": "XGMI", "pairs": 28},
        {"PCIE": [[2, 5]]},
        "GPU2 and GPU5 talk over PCIe: an xGMI link is down",
        repair="a person: the hardware differs from what the inventory declares; site.yml cannot change it",
    )
    drift_checks[1] = CheckResult(
        "ROCM-VER-001", "ROCm version matches the inventory", "fail", "6.3.1", "6.2.4", "installed ROCm is 6.2.4"
    )
    return DriftReport(
        run=RunInfo(
            started="2025-06-01T02:17:04+00:00",
            finished="2025-06-01T02:21:39+00:00",
            inventory="/etc/rocm-fleet/inventory",
            command="rocm-fleet drift -i /etc/rocm-fleet/inventory",
            rocm_fleet_version="0.1.0",
        ),
        hosts={
            "gpu-mi300x-01": HostResult(
                checks=compliant_checks,
                gpu=GpuSummary(8, [MI300X] * 8, xgmi_matrix(8), [0, 0, 0, 0, 1, 1, 1, 1]),
            ),
            "gpu-mi300x-02": HostResult(
                checks=drift_checks,
                changes=[
                    Change(
                        label="repo: /etc/apt/preferences.d/rocm-pin-600",
                        role="rocm_fleet.core.repo",
                        action="update",
                        diff=PIN_DIFF,
                    ),
                    Change(label="packages: ROCm 6.3.1", role="rocm_fleet.core.packages", action="install"),
                ],
                gpu=GpuSummary(8, [MI300X] * 8, xgmi_matrix(8, ((2, 5),)), [0, 0, 0, 0, 1, 1, 1, 1]),
            ),
            "gpu-mi210-03": HostResult.unreachable(
                "Failed to connect to the host via ssh: ssh: connect to host 10.20.0.13 port 22: Connection timed out"
            ),
        },
    )


def status_mix_report() -> DriftReport:
    """The statuses that do not fail: a host with only an unmeasured check, one with only a warning, and a
    drifted host with both; the drift sample's run."""
    unmeasured = CheckResult(
        "ROCM-RAS-001", "No uncorrectable ECC errors", "unknown", 0, None,
        "unknown: GPU 3: ecc_count uncorrectable is N/A (amd-smi metric --ecc)",
    )
    warning = CheckResult(
        "ROCM-ACCESS-006", "Only listed users are in the GPU groups", "warn", ["alice"],
        {"members": ["alice", "mallory"], "unlisted": ["mallory"]},
        "warning: mallory in group render but not listed in the inventory",
    )
    report = three_host_report()
    report.hosts = {
        "gpu-mi300x-05": HostResult(checks=[*passing_checks(), unmeasured]),
        "gpu-mi300x-06": HostResult(checks=[*passing_checks(), warning]),
        "gpu-mi300x-07": HostResult(
            checks=[*passing_checks()[:-1], unmeasured, warning,
                    CheckResult("ROCM-TOPO-001", "Every GPU pair is linked by xGMI", "fail", "XGMI", "PCIE",
                                "GPU 0-1 talk over PCIe")],
        ),
    }
    return report
