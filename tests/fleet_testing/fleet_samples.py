"""A synthetic fleet for the report-size tests: node_compliance-shaped results through the real model.

Each host's results are what node_compliance returns (one item per package,
file, user, GPU), turned into the report by ``drift.results.host_result`` as a
real run does; unreachable and errored hosts are made as the engine makes them.
The mix is deterministic: most hosts compliant, some failing different checks
(with the pending changes their failed items give), a few unreachable or
errored, some unverified, warned or waived, and CPU-only login nodes whose GPU
checks are skipped.
"""

from __future__ import annotations

import random
import zlib

from rocm_fleet.drift import AppliedWaiver, DriftReport, HostResult, RunInfo
from rocm_fleet.drift.results import host_result

MI300X = "AMD Instinct MI300X"
ROCM = "6.3.1"
PACKAGES = ("rocm-core", "rocm-hip-runtime", "rocm-hip-libraries", "rocm-language-runtime", "rocm-opencl-runtime",
            "rocm-smi-lib", "amd-smi-lib", "rocminfo", "hipcc", "rocblas", "miopen-hip", "rccl")
USERS = ("alice", "bob", "carol")
# (check id, title, kind of its items, how many items)
CHECKS = (
    ("ROCM-REPO-001", "the ROCm apt sources point at the mirror", "file", 2),
    ("ROCM-REPO-002", "the ROCm signing key is the pinned one", "file", 2),
    ("ROCM-REPO-003", "apt prefers the pinned ROCm release", "file", 1),
    ("ROCM-PKG-001", "the pinned ROCm version is the default release", "version", 1),
    ("ROCM-PKG-002", "the packages of each listed ROCm release are installed", "package", len(PACKAGES)),
    ("ROCM-PKG-003", "amdgpu-dkms of the decided driver line is installed", "package", 1),
    ("ROCM-DRV-001", "amdgpu loaded, at the expected version", "version", 1),
    ("ROCM-KERN-001", "the running kernel is one amdgpu-dkms builds for", "version", 1),
    ("ROCM-KERN-004", "the kernel packages are pinned per packages_kernel_update_policy", "file", 1),
    ("ROCM-BOOT-001", "the boot loader carries the kernel parameters", "line", 2),
    ("ROCM-BOOT-002", "the running kernel was booted with the parameters", "line", 2),
    ("ROCM-SYSCTL-001", "sysctl settings for GPU work", "sysctl", 3),
    ("ROCM-SYSCTL-002", "the sysctl file of the role", "file", 1),
    ("ROCM-KMOD-001", "amdgpu module options", "file", 1),
    ("ROCM-ACCESS-001", "the GPU groups exist", "group", 2),
    ("ROCM-ACCESS-002", "the listed users are in the GPU groups", "user", len(USERS)),
    ("ROCM-ACCESS-003", "udev rules keep the device nodes' group and mode", "file", 2),
    ("ROCM-ACCESS-004", "/dev/kfd and the render nodes have group render and the mode set", "device", 2),
    ("ROCM-ACCESS-005", "adduser puts new users in the GPU groups", "line", 2),
    ("ROCM-ACCESS-006", "nobody the inventory does not list is in a GPU group", "group", 2),
    ("ROCM-ACCESS-007", "the listed users can open /dev/kfd and the AMD render nodes", "user", len(USERS)),
    ("ROCM-ENV-001", "the ROCm profile file sets PATH and the library path", "file", 1),
    ("ROCM-ENV-002", "ld.so knows the ROCm libraries", "file", 2),
    ("ROCM-ENV-003", "the environment variables the site declares", "line", 2),
    ("ROCM-ENV-004", "the ROCm tools are on PATH", "file", 2),
    ("ROCM-GPU-001", "GPU count as the class expects", "gpu", 1),
    ("ROCM-GPU-002", "GPU products as the class expects", "gpu", 1),
    ("ROCM-GPU-003", "gfx targets as the class expects", "gpu", 1),
    ("ROCM-GPU-004", "VRAM per GPU", "gpu", 1),
    ("ROCM-TOPO-001", "GPU links as the class declares them", "gpu", 1),
    ("ROCM-TOPO-002", "NUMA affinity per GPU", "gpu", 1),
    ("ROCM-HEALTH-001", "every GPU initialised without errors", "gpu", 1),
    ("ROCM-HEALTH-002", "every xGMI link is up", "gpu", 1),
    ("ROCM-HEALTH-003", "no uncorrectable RAS/ECC errors", "gpu", 1),
    ("ROCM-HEALTH-004", "correctable RAS/ECC errors under the threshold", "gpu", 1),
    ("ROCM-HEALTH-005", "PCIe link at the expected speed and width", "gpu", 1),
    ("ROCM-HEALTH-006", "GPU firmware at the fleet baseline", "gpu", 1),
)
ROLES = {"REPO": "repo", "PKG": "packages", "KERN": "packages", "BOOT": "kernel", "SYSCTL": "kernel", "KMOD": "kernel",
         "ACCESS": "access", "ENV": "environment"}  # fmt: skip


def _value(kind: str, check_id: str, number: int, gpu_count: int):
    if kind == "package":
        name = PACKAGES[number] if check_id == "ROCM-PKG-002" else "amdgpu-dkms"
        return f"{name}={ROCM}.60301-48~22.04"
    if kind == "file":
        return {"path": f"/etc/rocm-fleet/{check_id.lower()}-{number}.conf", "mode": "0644",
                "sha1": f"{zlib.crc32(f'{check_id}/{number}'.encode()):08x}" * 5}
    if kind == "gpu":  # one item per class check, a value per GPU
        return [f"GPU{gpu}: {check_id.split('-')[1].lower()} ok" for gpu in range(gpu_count)]
    if kind == "user":
        return f"{USERS[number]} in render, video"
    return f"{check_id.lower()}.{number}={number}"


def _items(failing: dict[str, tuple[str, str]], gpu_count: int) -> list[dict]:
    items = []
    for check_id, title, kind, count in CHECKS:
        status, message = failing.get(check_id, ("pass", ""))
        gpu_check = kind == "gpu" or check_id in ("ROCM-DRV-001", "ROCM-ACCESS-004")
        if gpu_check and not gpu_count:
            status, message, count = "skipped", "no AMD GPU on this host (amdgpu not loaded)", 1
        role = ROLES.get(check_id.split("-")[1])
        for number in range(count):
            value = _value(kind, check_id, number, gpu_count)
            finding = status if number == 0 else "pass" if status != "skipped" else "skipped"
            named = value["path"] if isinstance(value, dict) and "path" in value else value
            label = f"{role}: {named}" if role else None
            items.append({
                "id": check_id, "title": title, "kind": kind, "role": role, "label": label, "severity": None,
                "repair": "a person: the hardware differs" if finding == "fail" and not role else None,
                "status": finding, "expected": value, "actual": value if finding == "pass" else f"not {value}",
                "message": message if finding != "pass" else "as expected",
                "diff": f"--- before\n+++ after\n-{check_id} {number}\n+wanted\n" if finding == "fail" and role else "",
                "action": "update" if finding == "fail" else "",
            })  # fmt: skip
    return items


def _gpu(count: int) -> dict | None:
    if not count:
        return None
    link_type = [["SELF" if row == column else "XGMI" for column in range(count)] for row in range(count)]
    return {"count": count, "devices": [{"product": MI300X, "numa_node": n // 4} for n in range(count)],
            "topology": {"link_type": link_type}}  # fmt: skip


# (how many hosts, what fails on them as {check id: (status, message)}); the rest are compliant.
FINDINGS = (
    (40, {"ROCM-PKG-002": ("fail", "rocm-hip-runtime 6.2.4 installed, 6.3.1 wanted")}),
    (12, {"ROCM-SYSCTL-001": ("fail", "kernel.numa_balancing is 1, 0 wanted")}),
    (9, {"ROCM-ACCESS-004": ("fail", "/dev/kfd mode 0666, expected 0660")}),
    (5, {"ROCM-TOPO-001": ("fail", "GPU2 and GPU5 talk over PCIe: an xGMI link is down"),
         "ROCM-HEALTH-002": ("fail", "GPU 2: XGMI link to 5 down")}),
    (4, {"ROCM-HEALTH-004": ("fail", "GPU 3: 412 correctable ECC errors, threshold 100")}),
    (15, {"ROCM-HEALTH-003": ("unknown", "unknown: GPU 3: ecc_count uncorrectable is N/A")}),
    (20, {"ROCM-ACCESS-006": ("warn", "warning: mallory in group render but not listed in the inventory")}),
    (10, {"ROCM-HEALTH-006": ("fail", "PLDM bundle 01.25.03.12 older than the baseline 01.25.05.00")}),
)  # fmt: skip
WAIVED = 10  # the last FINDINGS row's hosts: a waiver excuses their firmware
UNREACHABLE = 8
ERRORED = 2
LOGIN_NODES = 6


def fleet_report(size: int = 1000, seed: int = 14) -> DriftReport:
    names = [f"gpu-mi300x-{number:04d}" for number in range(1, size - LOGIN_NODES + 1)]
    names += [f"login-{number:02d}" for number in range(1, LOGIN_NODES + 1)]
    shuffled = random.Random(seed).sample(names[: size - LOGIN_NODES], k=size - LOGIN_NODES)
    failing: dict[str, dict] = {}
    for count, finding in FINDINGS:
        failing.update({name: finding for name in shuffled[len(failing): len(failing) + count]})
    rest = shuffled[len(failing):]
    unreachable, errored = rest[:UNREACHABLE], rest[UNREACHABLE: UNREACHABLE + ERRORED]
    hosts: dict[str, HostResult] = {}
    for name in names:
        if name in unreachable:
            hosts[name] = HostResult.unreachable(f"Failed to connect to the host via ssh: ssh: connect to host {name} "
                                                 "port 22: Connection timed out")
            continue
        if name in errored:
            hosts[name] = HostResult(error="task 'Evaluate the host' failed: node_compliance: /opt/rocm unreadable")
            continue
        gpus = 0 if name.startswith("login-") else 8
        hosts[name] = host_result({"results": _items(failing.get(name, {}), gpus), "gpu": _gpu(gpus)})
    waiver = AppliedWaiver("vendor RMA pending (TICKET-4711)", "2099-12-31", "gpu-mi300x-*")
    for name in shuffled[len(failing) - WAIVED: len(failing)]:
        for check in hosts[name].checks:
            if check.status == "fail":
                check.status, check.waiver = "waived", waiver
    run = RunInfo(started="2026-12-03T02:00:00+00:00", finished="2026-12-03T02:09:41+00:00",
                  inventory="/etc/rocm-fleet/inventory", command="rocm-fleet drift -i /etc/rocm-fleet/inventory",
                  rocm_fleet_version="0.1.0")  # fmt: skip
    return DriftReport(run=run, hosts=hosts)
