"""Every real capture of a command the gpu_facts collectors run, through the collectors.

A fake ``run`` returns the capture for the command it belongs to; for text captures the
JSON call fails the way an old or broken tool does, so the text fallback is exercised.
Expected values are the MANIFEST's 'Expected parse' column.
"""

from pathlib import Path

import pytest
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu import rocminfo
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.amd_smi import report as amd_smi
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.rocm_smi import report as rocm_smi

CAPTURES = Path(__file__).resolve().parents[4] / "fixtures" / "captures"
ARGPARSE_REJECT = (2, "", "usage: rocm-smi [-h]\nrocm-smi: error: unrecognized arguments: --json\n")
NOT_RUN = (1, "", "")

MI300X_4_BUSES = ["0000:26:00.0", "0000:46:00.0", "0000:65:00.0", "0000:85:00.0"]
MI355X_BUSES = ["0000:%s:00.0" % bus for bus in ("0d", "26", "5d", "75", "8e", "a7", "dc", "f4")]
MI300X_8_BUSES = ["0000:%s:00.0" % bus for bus in ("0c", "22", "38", "5c", "9f", "af", "bf", "df")]


def fake_run(responses):
    calls = []

    def run(args):
        calls.append(list(args))
        return responses.get(tuple(args), NOT_RUN)

    run.calls = calls
    return run


def capture(name):
    return (CAPTURES / name).read_text(encoding="utf-8")


def rocm_smi_text(name, slot):
    return {tuple(rocm_smi.ROCM_SMI_JSON_ARGS): ARGPARSE_REJECT, tuple(slot): (0, capture(name), "")}


def all_equal(value, count):
    return [value] * count


# (capture, collector, responses builder, expected state, expected {field: [per device]}, topology checks)
ROCM_SMI_CASES = [
    ("mi100-4gpu_rocm5.x_rocm-smi-default.txt", rocm_smi.ROCM_SMI_CONCISE_ARGS, {"index": [0, 1, 2, 3]}),
    ("mi210-1of4gpu-slurm_rocm5.x_rocm-smi-default.txt", rocm_smi.ROCM_SMI_CONCISE_ARGS, {"index": [0]}),
    ("rx6800-2gpu_rocm5.3-5.4_rocm-smi-default.txt", rocm_smi.ROCM_SMI_CONCISE_ARGS, {"index": [0, 1]}),
    (
        "mi210-8gpu_rocm6.0_rocm-smi-default_oldformat.txt",
        rocm_smi.ROCM_SMI_CONCISE_ARGS,
        {
            "index": list(range(8)),
            "subsystem_device_id": all_equal("0x0c34", 8),
            "device_id": all_equal(None, 8),
            "product": all_equal("Instinct MI210", 8),
        },
    ),
    (
        "mi300x-1gpu_rocm6.0-6.1_rocm-smi-default_oldformat.txt",
        rocm_smi.ROCM_SMI_CONCISE_ARGS,
        {"index": [0], "subsystem_device_id": ["0x74a1"], "product": ["AMD Instinct MI300X"]},
    ),
    (
        "mi300x-4gpu_rocm6.0-6.1_rocm-smi-default_oldformat.txt",
        rocm_smi.ROCM_SMI_CONCISE_ARGS,
        {
            "index": [0, 1, 2, 3],
            "subsystem_device_id": all_equal("0x74a1", 4),
            "product": all_equal("AMD Instinct MI300X", 4),
        },
    ),
    (
        "mi300a-1apu_rocm6.1.0_rocm-smi-default_oldformat-truncated-name.txt",
        rocm_smi.ROCM_SMI_CONCISE_ARGS,
        {"index": [0], "subsystem_device_id": ["0x74a0"], "product": [None]},
    ),
    (
        "rx7900xtx-1gpu_rocm6.0.0_rocm-smi-default_oldformat.txt",
        rocm_smi.ROCM_SMI_CONCISE_ARGS,
        {"index": [0], "subsystem_device_id": ["0x5200"], "device_id": ["0x744c"], "product": [None]},
    ),
    (
        "rx7900xtx-1gpu_rocm6.3.1_rocm-smi-default.txt",
        rocm_smi.ROCM_SMI_CONCISE_ARGS,
        {"index": [0], "device_id": ["0x744c"], "kfd_node": [1]},
    ),
    (
        "mi300x-1gpu-vm_rocm6.1.2_rocm-smi-default_under-load.txt",
        rocm_smi.ROCM_SMI_CONCISE_ARGS,
        {"index": [0], "device_id": ["0x74a1"], "kfd_node": [2]},
    ),
    (
        "mi355x-8gpu_rocm-smi-default_nbsp-mangled-paste.txt",
        rocm_smi.ROCM_SMI_CONCISE_ARGS,
        {"index": list(range(8)), "device_id": all_equal("0x75a3", 8), "kfd_node": [3, 5, 4, 2, 7, 9, 8, 6]},
    ),
    (
        "mi300a-node-nodriver_rocm7.1_rocm-smi-default_no-gpus-lowpower-warning.txt",
        rocm_smi.ROCM_SMI_CONCISE_ARGS,
        {"index": []},
    ),
    (
        "mi210-1gpu_rocm6.0_rocm-smi-showproductname_unresolved-name.txt",
        rocm_smi.ROCM_SMI_DETAIL_ARGS,
        {"index": [0], "device_id": ["0x740f"], "subsystem_device_id": ["0x0c34"], "product": [None]},
    ),
    (
        "mi250-1pkg-2gcd_rocm5.7-6.0_rocm-smi-showproductname.txt",
        rocm_smi.ROCM_SMI_DETAIL_ARGS,
        {
            "index": [0, 1],
            "subsystem_device_id": ["0x0b0c", "0x0b0c"],
            "product": all_equal("AMD INSTINCT MI250 (MCM) OAM AC MBA", 2),
        },
    ),
    (
        "mi300a-4apu_rocm6.1.1_rocm-smi-showproduct.txt",
        rocm_smi.ROCM_SMI_DETAIL_ARGS,
        {
            "index": [0, 1, 2, 3],
            "device_id": all_equal("0x74a0", 4),
            "subsystem_device_id": all_equal("0x74a0", 4),
            "product": all_equal("Aqua Vanjaram [Instinct MI300A]", 4),
            "kfd_node": [4, 5, 6, 7],
            "gfx_target": all_equal("gfx942", 4),
        },
    ),
    (
        "mi300a-4apu_rocm6.1.1_rocm-smi-i.txt",
        rocm_smi.ROCM_SMI_DETAIL_ARGS,
        {
            "index": [0, 1, 2, 3],
            "device_id": all_equal("0x74a0", 4),
            "product": all_equal("Aqua Vanjaram [Instinct MI300A]", 4),
        },
    ),
    (
        "mi300x-4gpu_rocm6.0-6.1_rocm-smi-showallinfo.txt",
        rocm_smi.ROCM_SMI_DETAIL_ARGS,
        {
            "pci_bus": MI300X_4_BUSES,
            "device_id": all_equal("0x74a1", 4),
            "product": all_equal("AMD Instinct MI300X OAM", 4),
        },
    ),
    (
        "vega10-rxvega64-1gpu_rocm4.1_rocm-smi-showallinfo.txt",
        rocm_smi.ROCM_SMI_DETAIL_ARGS,
        {"index": [0], "device_id": ["0x687f"], "pci_bus": ["0000:43:00.0"]},
    ),
    (
        "raphael-igpu-gfx1036_rocm5.6_rocm-smi-showallinfo_python-traceback.txt",
        rocm_smi.ROCM_SMI_DETAIL_ARGS,
        {"index": [0], "device_id": ["0x164e"]},
    ),
    (
        "vega10-fe-1gpu_rocm4.1-gentoo_rocm-smi-showallinfo_partial-assertion-abort.txt",
        rocm_smi.ROCM_SMI_DETAIL_ARGS,
        {"index": [0]},
    ),
    (
        "mi210-4gpu_rocm5.x_rocm-smi-showtopo.txt",
        rocm_smi.ROCM_SMI_TOPOLOGY_ARGS,
        {"index": [0, 1, 2, 3], "numa_node": [0, 1, 2, 3]},
    ),
    (
        "unknown-4gpu-pcie-4numa_rocm5.x_rocm-smi-showtopo.txt",
        rocm_smi.ROCM_SMI_TOPOLOGY_ARGS,
        {"index": [0, 1, 2, 3], "numa_node": [0, 1, 3, 2]},
    ),
    (
        "mi210-8gpu_rocm6.0_rocm-smi-showtoponuma.txt",
        rocm_smi.ROCM_SMI_TOPOLOGY_ARGS,
        {"index": list(range(8)), "numa_node": [3, 2, 1, 0, 7, 6, 5, 4]},
    ),
    (
        "mi300a-4apu-tpx-12part_rocm6.1.1_rocm-smi-showtoponuma.txt",
        rocm_smi.ROCM_SMI_TOPOLOGY_ARGS,
        {"numa_node": [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3]},
    ),
    ("mi300a-2apu_rocm6.3_rocm-smi-showtopotype.txt", rocm_smi.ROCM_SMI_TOPOLOGY_ARGS, {"index": [0, 1]}),
]


def assert_devices(report, expected):
    for field, values in expected.items():
        assert [device[field] for device in report["devices"]] == values, field


@pytest.mark.parametrize(("name", "slot", "expected"), ROCM_SMI_CASES, ids=[case[0] for case in ROCM_SMI_CASES])
def test_rocm_smi_text_captures_through_the_fallback(name, slot, expected):
    run = fake_run(rocm_smi_text(name, slot))
    state, report = rocm_smi.collect_rocm_smi(run)
    assert state == "ok"
    assert_devices(report, expected)
    assert run.calls[0] == rocm_smi.ROCM_SMI_JSON_ARGS
    assert [call for call in run.calls[1:]] == [list(args) for args in rocm_smi.ROCM_SMI_TEXT_COMMANDS]
    assert any("--json" in warning for warning in report["warnings"])


def topology_of(name, slot):
    return rocm_smi.collect_rocm_smi(fake_run(rocm_smi_text(name, slot)))[1]["topology"]


def test_rocm_smi_showtopo_xgmi_matrices():
    topology = topology_of("mi210-4gpu_rocm5.x_rocm-smi-showtopo.txt", rocm_smi.ROCM_SMI_TOPOLOGY_ARGS)
    off = [(i, j) for i in range(4) for j in range(4) if i != j]
    assert all(topology["weight"][i][j] == 15 and topology["hops"][i][j] == 1 for i, j in off)
    assert all(topology["link_type"][i][j] == "XGMI" for i, j in off)
    assert [topology["link_type"][i][i] for i in range(4)] == ["SELF"] * 4
    assert topology["numa_affinity"] == [0, 1, 2, 3]


def test_rocm_smi_showtopo_pcie_cross_numa():
    topology = topology_of("unknown-4gpu-pcie-4numa_rocm5.x_rocm-smi-showtopo.txt", rocm_smi.ROCM_SMI_TOPOLOGY_ARGS)
    assert topology["weight"][0] == [0, 52, 52, 52]
    assert topology["hops"][3] == [3, 3, 3, 0]
    assert topology["link_type"][2] == ["PCIE", "PCIE", "SELF", "PCIE"]
    assert topology["numa_affinity"] == [0, 1, 3, 2]


def test_rocm_smi_showtopotype_only_gives_link_types():
    topology = topology_of("mi300a-2apu_rocm6.3_rocm-smi-showtopotype.txt", rocm_smi.ROCM_SMI_TOPOLOGY_ARGS)
    assert topology["link_type"] == [["SELF", "XGMI"], ["XGMI", "SELF"]]
    assert topology["weight"] is None and topology["hops"] is None and topology["numa_affinity"] is None


def test_rocm_smi_toponuma_tpx_partitions():
    topology = topology_of(
        "mi300a-4apu-tpx-12part_rocm6.1.1_rocm-smi-showtoponuma.txt", rocm_smi.ROCM_SMI_TOPOLOGY_ARGS
    )
    assert topology["numa_affinity"] == [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3]


def test_rocm_smi_broken_output_keeps_partial_result_with_warning():
    for name in (
        "raphael-igpu-gfx1036_rocm5.6_rocm-smi-showallinfo_python-traceback.txt",
        "vega10-fe-1gpu_rocm4.1-gentoo_rocm-smi-showallinfo_partial-assertion-abort.txt",
    ):
        state, report = rocm_smi.collect_rocm_smi(fake_run(rocm_smi_text(name, rocm_smi.ROCM_SMI_DETAIL_ARGS)))
        assert state == "ok" and len(report["devices"]) == 1
        assert any("ends abnormally" in warning for warning in report["warnings"])


def test_rocm_smi_no_gpus_is_zero_devices_with_the_tool_warnings():
    name = "mi300a-node-nodriver_rocm7.1_rocm-smi-default_no-gpus-lowpower-warning.txt"
    state, report = rocm_smi.collect_rocm_smi(fake_run(rocm_smi_text(name, rocm_smi.ROCM_SMI_CONCISE_ARGS)))
    assert state == "ok" and report["devices"] == []
    assert any("No AMD GPUs specified" in warning for warning in report["warnings"])


def test_rocm_smi_driver_versions_from_text():
    for name, version in (
        ("mi300x-4gpu_rocm6.0-6.1_rocm-smi-showallinfo.txt", "6.7.0"),
        ("vega10-rxvega64-1gpu_rocm4.1_rocm-smi-showallinfo.txt", "5.9.15"),
        ("raphael-igpu-gfx1036_rocm5.6_rocm-smi-showallinfo_python-traceback.txt", "6.1.5"),
    ):
        report = rocm_smi.collect_rocm_smi(fake_run(rocm_smi_text(name, rocm_smi.ROCM_SMI_DETAIL_ARGS)))[1]
        assert report["driver_version"] == version


def test_rocm_smi_json_capture_needs_one_call():
    run = fake_run(
        {
            tuple(rocm_smi.ROCM_SMI_JSON_ARGS): (
                0,
                capture("rx6800-2gpu_rocm5.4_rocm-smi-alldevices-json-showallinfo.json"),
                "",
            )
        }
    )
    state, report = rocm_smi.collect_rocm_smi(run)
    assert state == "ok" and len(run.calls) == 1
    assert_devices(
        report,
        {
            "index": [0, 1],
            "device_id": ["0x73bf", "0x73bf"],
            "subsystem_device_id": ["0x2407", "0x2407"],
            "pci_bus": ["0000:03:00.0", "0000:06:00.0"],
            "product": [None, None],
        },
    )
    assert report["driver_version"] == "5.18.13"
    assert report["warnings"] == []


AMD_SMI_ERROR = "rx7900xtx-wsl2_rocm6.1.3_amd-smi_error-driver-not-initialized.txt"


def test_amd_smi_error_capture_fails_with_the_first_error_line():
    run = fake_run(
        dict(
            (tuple(args), (1, capture(AMD_SMI_ERROR), ""))
            for args in amd_smi.AMD_SMI_JSON_COMMANDS + amd_smi.AMD_SMI_TEXT_COMMANDS
        )
    )
    state, report = amd_smi.collect_amd_smi(run)
    assert state == "failed" and report["devices"] == []
    assert "amd-smi" in report["warnings"][0] and "driver not initialized" in report["warnings"][0]


@pytest.mark.parametrize(
    ("name", "buses", "kfd_nodes"),
    [
        ("mi210-1gpu-plus-pollara-nic_amdsmi-dev2026_amd-smi-list.txt", ["0000:23:00.0"], [2]),
        ("radeon780m-apu-phoenix3_rocm-unknown_amd-smi-list.txt", ["0000:65:00.0"], [None]),
    ],
)
def test_amd_smi_list_text_counts_gpus_only(name, buses, kfd_nodes):
    run = fake_run(
        {
            ("list", "--json"): (2, "", "amd-smi: error: unrecognized arguments: --json"),
            ("list",): (0, capture(name), ""),
        }
    )
    state, report = amd_smi.collect_amd_smi(run)
    assert state == "ok"
    assert_devices(report, {"index": [0], "pci_bus": buses, "kfd_node": kfd_nodes})


def text_fallback_run(topology=None, summary=None):
    responses = {("list",): (0, capture("radeon780m-apu-phoenix3_rocm-unknown_amd-smi-list.txt"), "")}
    if topology:
        responses[("topology",)] = (0, capture(topology), "")
    if summary:
        responses[()] = (0, capture(summary), "")
    return fake_run(responses)


def test_amd_smi_topology_text_610_tables():
    report = amd_smi.parse_amd_smi_topology_text(capture("mi300x-8gpu_rocm6.1.0_amd-smi-topology.txt"))
    assert [device["pci_bus"] for device in report["devices"]] == MI300X_8_BUSES
    topology = report["topology"]
    assert all(topology["weight"][i][j] == (0 if i == j else 15) for i in range(8) for j in range(8))
    assert all(topology["hops"][i][j] == (0 if i == j else 1) for i in range(8) for j in range(8))
    assert all(topology["link_type"][i][j] == ("SELF" if i == j else "XGMI") for i in range(8) for j in range(8))


def test_amd_smi_summary_table_mi355x():
    report = amd_smi.parse_amd_smi_summary(capture("mi355x-8gpu_rocm7.0.2_amd-smi-default.txt"))
    assert_devices(
        report, {"index": list(range(8)), "pci_bus": MI355X_BUSES, "product": all_equal("AMD Instinct MI355X", 8)}
    )
    assert (report["tool_version"], report["driver_version"], report["rocm_version"]) == (
        "26.0.2+39589fda",
        "6.16.13",
        "7.0.2",
    )


@pytest.mark.parametrize(
    ("name", "weight", "hops"),
    [
        ("unknown-2gpu-pcie_rocm6.1.0_amd-smi-topology-json_oldformat.txt", [[0, 40], [40, 0]], [[0, 2], [2, 0]]),
        ("unknown-2gpu-pcie_rocm6.1.1_amd-smi-topology-a-t-json.txt", None, None),
    ],
)
def test_amd_smi_topology_json_both_layouts(name, weight, hops):
    report = amd_smi.parse_amd_smi_topology_json(capture(name))
    assert [device["index"] for device in report["devices"]] == [0, 1]
    assert report["topology"]["link_type"] == [["SELF", "PCIE"], ["PCIE", "SELF"]]
    assert report["topology"]["weight"] == weight and report["topology"]["hops"] == hops


def test_amd_smi_topology_json_new_layout_carries_bdfs():
    report = amd_smi.parse_amd_smi_topology_json(capture("unknown-2gpu-pcie_rocm6.1.1_amd-smi-topology-a-t-json.txt"))
    assert [device["pci_bus"] for device in report["devices"]] == ["0000:08:00.0", "0000:44:00.0"]


def test_amd_smi_text_fallback_merges_list_topology_and_summary():
    run = text_fallback_run(
        topology="mi300x-8gpu_rocm6.1.0_amd-smi-topology.txt", summary="mi355x-8gpu_rocm7.0.2_amd-smi-default.txt"
    )
    state, report = amd_smi.collect_amd_smi(run)
    assert state == "ok"
    assert run.calls == [list(args) for args in amd_smi.AMD_SMI_JSON_COMMANDS + amd_smi.AMD_SMI_TEXT_COMMANDS]
    # Captures of different machines: the list decides which GPUs exist; nothing leaks across.
    assert [device["pci_bus"] for device in report["devices"]] == ["0000:65:00.0"]
    assert report["devices"][0]["product"] is None
    assert report["topology"] is None
    assert any("topology rows do not match" in warning for warning in report["warnings"])
    assert report["tool_version"] == "26.0.2+39589fda"


ROCMINFO_CASES = [
    (
        "mi300x-4gpu_rocm6.0-6.1_rocminfo.txt",
        {
            "kfd_node": [2, 3, 4, 5],
            # BDFIDs 9728/17920/25856/34048; BDFID carries no PCI domain, so none is claimed.
            "pci_bdf": ["26:00.0", "46:00.0", "65:00.0", "85:00.0"],
            "pci_bus": [None] * 4,
            "device_id": all_equal("0x74a1", 4),
            "gfx_target": all_equal("gfx942", 4),
            "product": all_equal("AMD Instinct MI300X", 4),
            "vram_bytes": all_equal(201310208 * 1024, 4),
        },
    ),
    (
        "mi25-7gpu_rocm-unknown_rocminfo.txt",
        {
            "kfd_node": [1, 2, 3, 4, 5, 6, 7],
            "device_id": all_equal("0x6860", 7),
            "gfx_target": all_equal("gfx900", 7),
            "product": all_equal("Radeon Instinct MI25", 7),
            "vram_bytes": all_equal(16760832 * 1024, 7),
        },
    ),
    (
        "rx7900xtx-1gpu_rocm6.0.0_rocminfo.txt",
        {"kfd_node": [1], "device_id": ["0x744c"], "gfx_target": ["gfx1100"], "product": ["Radeon RX 7900 XTX"]},
    ),
    (
        "rx7900xtx-wsl2_rocm6.1.3_rocminfo.txt",
        {
            "kfd_node": [1],
            "device_id": ["0x744c"],
            "gfx_target": ["gfx1100"],
            "product": ["AMD Radeon RX 7900 XTX"],
            "pci_bus": [None],
        },
    ),
]


@pytest.mark.parametrize(("name", "expected"), ROCMINFO_CASES, ids=[case[0] for case in ROCMINFO_CASES])
def test_rocminfo_captures(name, expected):
    state, report = rocminfo.collect_rocminfo(fake_run({(): (0, capture(name), "")}))
    assert state == "ok"
    assert_devices(report, expected)


@pytest.mark.parametrize(
    "name",
    [
        "vega-fe-1gpu_rocm4.x_rocminfo_error-kfd-permission-denied.txt",
        "unknown-gpu-buildah-container_rocm5.x-fedora_rocminfo_error-kfd-permission-denied-not-in-video-group.txt",
    ],
)
def test_rocminfo_kfd_permission_denied_names_cause_and_fix(name):
    state, report = rocminfo.collect_rocminfo(fake_run({(): (1, capture(name), "")}))
    assert state == "failed" and report["devices"] == []
    assert (
        "rocminfo" in report["warnings"][0]
        and "/dev/kfd" in report["warnings"][0]
        and "render" in report["warnings"][0]
    )
