"""The second set of real captures (MANIFEST.md, after the first table), through the collectors.

Partition modes, containers, VFs, amd-smi 24 to 26: each expectation is the MANIFEST's
'Expected parse' for the file. A capture the poster cut short ('---- snipped ----', '...')
is held to what it shows, never to a total it does not give.
"""

from pathlib import Path

import pytest
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu import rocminfo
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.amd_smi import report as amd_smi
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.rocm_smi import report as rocm_smi

CAPTURES = Path(__file__).resolve().parents[4] / "fixtures" / "captures"
ARGPARSE_REJECT = (2, "", "usage: rocm-smi [-h]\nrocm-smi: error: unrecognized arguments: --json\n")
MI300X_CPX_NODES = list(range(2, 65))  # 63 partitions on KFD nodes 2-64


def capture(name):
    return (CAPTURES / name).read_text(encoding="utf-8")


def run_returning(responses):
    calls = []

    def run(args):
        calls.append(list(args))
        return responses.get(tuple(args), (1, "", ""))

    run.calls = calls
    return run


def fields(report, *keys):
    return [tuple(device[key] for key in keys) for device in report["devices"]]


ROCM_SMI_CASES = [
    (
        "mi300a-1apu-spx-nps1_rocm6.3.3_rocm-smi-i.txt",
        rocm_smi.ROCM_SMI_DETAIL_ARGS,
        ("device_id", "subsystem_device_id", "product"),
        [("0x74a0", "0x74a0", "AMD Instinct MI300A")],
    ),
    (
        "mi300a-1apu-tpx-nps1_rocm6.3.3_rocm-smi-default.txt",
        rocm_smi.ROCM_SMI_CONCISE_ARGS,
        ("index", "kfd_node", "device_id"),
        [(0, 1, "0x74a0"), (1, 2, "0x74a0"), (2, 3, "0x74a0")],
    ),
    (
        "mi300a-1apu-tpx-nps1_rocm6.3.3_rocm-smi-showmeminfo-vram_per-partition-one-third.txt",
        rocm_smi.ROCM_SMI_DETAIL_ARGS,
        ("index", "vram_bytes"),
        [(i, 33580773376) for i in range(3)],
    ),
    # The secondary partition a container sees but cannot meter: N/A DID, still a device.
    (
        "mi300a-unknowncount-cpx-nps1_unknown_rocm-smi-default_container-renderD128-129-secondary-na.txt",
        rocm_smi.ROCM_SMI_CONCISE_ARGS,
        ("index", "kfd_node", "device_id"),
        [(0, 1, "0x74a0"), (1, 2, None)],
    ),
    (
        "mi300x-8gpu-cpx-nps4_unknown_rocm-smi-default_container-renderD128-129-secondary-na.txt",
        rocm_smi.ROCM_SMI_CONCISE_ARGS,
        ("index", "kfd_node", "device_id"),
        [(0, 2, "0x74a1"), (1, 3, None)],
    ),
    (
        "mi300x-8gpu-cpx-nps4_unknown_rocm-smi-default_container-renderD128-136-two-primaries.txt",
        rocm_smi.ROCM_SMI_CONCISE_ARGS,
        ("index", "kfd_node", "device_id"),
        [(0, 2, "0x74a1"), (1, 10, "0x74a1")],
    ),
    (
        "mi300x-8gpu-cpx-nps1_rocm6.3.3_rocm-smi-default_63-of-64-partitions.txt",
        rocm_smi.ROCM_SMI_CONCISE_ARGS,
        ("index", "kfd_node", "device_id"),
        [(i, node, "0x74a1") for i, node in enumerate(MI300X_CPX_NODES)],
    ),
    # rocm-smi reports the whole GPU's VRAM for every MI300X CPX partition (a display bug): parsed as printed.
    (
        "mi300x-8gpu-cpx-nps1_rocm6.3.3_rocm-smi-showmeminfo-vram_spaces-not-tabs_per-partition-reports-full-gpu-vram.txt",
        rocm_smi.ROCM_SMI_DETAIL_ARGS,
        ("index", "vram_bytes"),
        [(i, 206141652992) for i in range(63)],
    ),
    (
        "mi300x-8gpu-cpx-nps4_rocm6.3.3_rocm-smi-showmeminfo-vram_per-partition-reports-full-gpu-vram.txt",
        rocm_smi.ROCM_SMI_DETAIL_ARGS,
        ("index", "vram_bytes"),
        [(i, 206141652992) for i in range(63)],
    ),
    (
        "mi300x-8gpu-spx-nps1_unknown_rocm-smi-default_whitespace-collapsed-by-poster_pwrcap-500w-gpu0.txt",
        rocm_smi.ROCM_SMI_CONCISE_ARGS,
        ("index", "kfd_node", "device_id"),
        [(i, 2 + i, "0x74a1") for i in range(8)],
    ),
    (
        "mi300x-vf-1gpu_rocm6.4.1_rocm-smi-default_vf-did-0x74b5.txt",
        rocm_smi.ROCM_SMI_CONCISE_ARGS,
        ("index", "kfd_node", "device_id"),
        [(0, 1, "0x74b5")],
    ),
    (
        "mi355x-8gpu-spx-nps1_rocm7.1.2-container_kubectl-logs-rocm-smi-plus-amd-smi-version_nbsp-and-tabs-from-paste.txt",
        rocm_smi.ROCM_SMI_CONCISE_ARGS,
        ("kfd_node", "device_id"),
        [(node, "0x75a3") for node in (3, 5, 4, 2, 7, 9, 8, 6)],
    ),
]


@pytest.mark.parametrize(("name", "slot", "keys", "expected"), ROCM_SMI_CASES, ids=[c[0] for c in ROCM_SMI_CASES])
def test_rocm_smi_text_captures(name, slot, keys, expected):
    run = run_returning({tuple(rocm_smi.ROCM_SMI_JSON_ARGS): ARGPARSE_REJECT, tuple(slot): (0, capture(name), "")})
    state, report = rocm_smi.collect_rocm_smi(run)
    assert state == "ok"
    assert fields(report, *keys) == expected


def test_rocm_smi_json_reformatted_by_jq():
    name = "rx6600xt-1gpu_unknown_rocm-smi-showallinfo-json-via-jq_firmware-versions.txt"
    run = run_returning({tuple(rocm_smi.ROCM_SMI_JSON_ARGS): (0, capture(name), "")})
    state, report = rocm_smi.collect_rocm_smi(run)
    assert state == "ok" and len(run.calls) == 1
    assert fields(report, "pci_bus", "device_id", "gfx_target", "kfd_node") == [
        ("0000:0b:00.0", "0x73ff", "gfx1032", 1)
    ]
    assert report["driver_version"] == "7.0.0-3-pve"  # the kernel's release: an in-tree driver


ROCMINFO_CASES = [
    # Partitions share a Uuid; Node and BDFID (1280/1281 = 05:00.0/05:00.1) tell them apart.
    (
        "mi300x-8gpu-cpx-nps1_rocm6.3.3_rocminfo-excerpt-agents3-4_partitions-share-uuid.txt",
        [
            (2, "05:00.0", "0x74a1", "gfx942", "AMD Instinct MI300X", 25163776 * 1024),
            (3, "05:00.1", "0x74a1", "gfx942", "AMD Instinct MI300X", 25163776 * 1024),
        ],
    ),
    (
        "mi300x-vf-1gpu_rocm6.4.1_rocminfo_full-1cpu-1gpu-agent.txt",
        [(1, "83:00.0", "0x74b5", "gfx942", "AMD Instinct MI300X VF", 200998912 * 1024)],
    ),
]


@pytest.mark.parametrize(("name", "expected"), ROCMINFO_CASES, ids=[c[0] for c in ROCMINFO_CASES])
def test_rocminfo_captures(name, expected):
    state, report = rocminfo.collect_rocminfo(run_returning({(): (0, capture(name), "")}))
    assert state == "ok"
    assert fields(report, "kfd_node", "pci_bdf", "device_id", "gfx_target", "product", "vram_bytes") == expected
    assert [device["pci_bus"] for device in report["devices"]] == [None] * len(expected)


def test_rocminfo_reports_the_dkms_module_version():
    report = rocminfo.parse_rocminfo(capture("mi300x-vf-1gpu_rocm6.4.1_rocminfo_full-1cpu-1gpu-agent.txt"))
    assert report["driver_version"] == "6.12.12"


MI300X_OCI_BUSES = ["0000:%s:00.0" % bus for bus in ("11", "2f", "46", "5d", "8b", "aa", "c2", "da")]
AMD_SMI_TEXT_CASES = [
    (
        "mi300x-8gpu-spx_rocm6.1.2_amd-smi-version-plus-list_kubectl-logs_old-list-format-bdf-uuid-only.txt",
        amd_smi.AMD_SMI_LIST_TEXT_ARGS,
        ("index", "pci_bus", "kfd_node"),
        [(i, bus, None) for i, bus in enumerate(MI300X_OCI_BUSES)],
    ),
    (
        "mi325x-vf-unknowncount_unknown_amd-smi-list_snipped-by-poster.txt",
        amd_smi.AMD_SMI_LIST_TEXT_ARGS,
        ("index", "pci_bus", "kfd_node"),
        [(0, "0000:83:00.0", 9), (1, "0000:8b:00.0", 8)],
    ),
    (
        "mi325x-vf-unknowncount_unknown_amd-smi-list-e_snipped-by-poster_hip-id-differs-from-gpu-index.txt",
        amd_smi.AMD_SMI_LIST_TEXT_ARGS,
        ("index", "pci_bus", "kfd_node"),
        [(0, "0000:83:00.0", 9), (1, "0000:8b:00.0", 8)],
    ),
    (
        "mi325x-vf-unknowncount_unknown_amd-smi-static-g0_snipped-by-poster.txt",
        amd_smi.AMD_SMI_STATIC_TEXT_ARGS,
        ("pci_bus", "device_id", "subsystem_device_id", "product", "gfx_target"),
        [("0000:83:00.0", "0x74b9", "0x74a5", "AMD Instinct Mi325X VF", "gfx942")],
    ),
    (
        "rx7900xtx-2gpu_rocm-na-amdsmi26.2.2_amd-smi-default_rocm-version-na_fan-column-no-percent.txt",
        amd_smi.AMD_SMI_SUMMARY_ARGS,
        ("index", "pci_bus", "product"),
        [(0, "0000:03:00.0", "AMD Radeon RX 7900 XTX"), (1, "0000:0c:00.0", "AMD Radeon RX 7900 XTX")],
    ),
    (
        "rx7900xtx-2gpu_rocm-na-amdsmi26.2.2_amd-smi-static-driver_version-is-kernel-banner.txt",
        amd_smi.AMD_SMI_STATIC_TEXT_ARGS,
        ("index", "pci_bus"),
        [(0, None), (1, None)],
    ),
]


@pytest.mark.parametrize(
    ("name", "slot", "keys", "expected"), AMD_SMI_TEXT_CASES, ids=[c[0] for c in AMD_SMI_TEXT_CASES]
)
def test_amd_smi_text_captures_alone_name_the_gpus(name, slot, keys, expected):
    run = run_returning({tuple(slot): (0, capture(name), "")})
    state, report = amd_smi.collect_amd_smi(run)
    assert state == "ok"
    assert fields(report, *keys) == expected


def test_amd_smi_version_line_before_the_list():
    name = "mi300x-8gpu-spx_rocm6.1.2_amd-smi-version-plus-list_kubectl-logs_old-list-format-bdf-uuid-only.txt"
    report = amd_smi.parse_amd_smi_list_text(capture(name))
    assert (report["tool_version"], report["rocm_version"]) == ("24.5.1+c5106a9", "6.1.2")


def test_amd_smi_26_summary_without_rocm_and_with_an_in_tree_driver():
    name = "rx7900xtx-2gpu_rocm-na-amdsmi26.2.2_amd-smi-default_rocm-version-na_fan-column-no-percent.txt"
    report = amd_smi.parse_amd_smi_summary(capture(name))
    assert report["tool_version"] == "26.2.2+unknown"
    assert report["rocm_version"] is None  # 'ROCm version: N/A' is unknown, never a version
    assert report["driver_version"] == "Linuxver"  # the in-tree banner, cut; kept as printed


def test_amd_smi_static_driver_of_an_in_tree_amdgpu_is_the_kernel_banner():
    name = "rx7900xtx-2gpu_rocm-na-amdsmi26.2.2_amd-smi-static-driver_version-is-kernel-banner.txt"
    report = amd_smi.parse_amd_smi_static_text(capture(name))
    assert report["driver_version"].startswith("Linuxversion6.19.11(")


def test_amd_smi_topology_json_of_one_gpu_has_no_peers():
    name = "rx6600xt-1gpu_unknown_amd-smi-topology-json_bare-list-self-link.txt"
    state, report = amd_smi.collect_amd_smi(
        run_returning({tuple(amd_smi.AMD_SMI_TOPOLOGY_JSON_ARGS): (0, capture(name), "")})
    )
    assert state == "ok"
    assert fields(report, "index", "pci_bus") == [(0, "0000:0b:00.0")]
    assert report["topology"] is None
