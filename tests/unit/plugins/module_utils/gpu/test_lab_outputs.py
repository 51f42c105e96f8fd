"""Outputs real amd-smi and rocminfo releases printed in the lab, on the hardware model mi300x-8.

Generated, not captured on a machine (tests/fixtures/captures/lab/README.md): printed by
amd-smi 27.1.0 (Debian amd-smi 10.1-1, forky), amd-smi 24.5.2 (Debian amd-smi 6.1.2+ds-2,
trixie) and rocminfo 7.2.4 (Debian rocminfo 7.2.4-1, forky). They fix the format of those
releases; values the model did not supply yet (N/A names, garbage addresses, no amdkfd)
show how the parsers treat what a tool cannot say.
"""

from pathlib import Path

from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu import rocminfo
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.amd_smi import report as amd_smi

CAPTURES = Path(__file__).resolve().parents[4] / "fixtures" / "captures"
LAB = CAPTURES / "lab"
MI300X_8_BUSES = ["0000:%s:00.0" % bus for bus in ("0c", "22", "38", "5c", "9f", "af", "bf", "df")]
MI300X_VRAM = 196608 * 1024 * 1024  # {"value": 196608, "unit": "MB"}: amd-smi's MB are MiB


def output(name):
    return (LAB / name).read_text(encoding="utf-8")


def amd_smi_27_run(calls):
    files = {
        tuple(amd_smi.AMD_SMI_LIST_JSON_ARGS): "amd-smi-27.1.0_lab-mi300x-8_list-json.txt",
        tuple(amd_smi.AMD_SMI_STATIC_JSON_ARGS): "amd-smi-27.1.0_lab-mi300x-8_static-asic-bus-vram-driver-json.txt",
        tuple(amd_smi.AMD_SMI_TOPOLOGY_JSON_ARGS): "amd-smi-27.1.0_lab-mi300x-8_topology-json.txt",
    }

    def run(args):
        calls.append(list(args))
        if tuple(args) not in files:  # no capture of it: answered as an amd-smi without the option
            return 2, "", "amd-smi: error: unrecognized arguments: %s\n" % " ".join(args[1:])
        return 0, output(files[tuple(args)]), ""

    return run


def test_amd_smi_27_json_needs_no_text_fallback():
    calls = []
    state, report = amd_smi.collect_amd_smi(amd_smi_27_run(calls))
    assert state == "ok" and calls == [list(args) for args in amd_smi.AMD_SMI_JSON_COMMANDS]
    devices = report["devices"]
    assert [d["pci_bus"] for d in devices] == MI300X_8_BUSES
    assert [d["kfd_node"] for d in devices] == list(range(2, 10))
    assert [d["vram_bytes"] for d in devices] == [MI300X_VRAM] * 8
    # 'N/A' market name, device ID and gfx target are unknown, never a value.
    assert {(d["product"], d["device_id"], d["gfx_target"]) for d in devices} == {(None, None, None)}
    topology = report["topology"]
    assert all(topology["link_type"][i][j] == ("SELF" if i == j else "XGMI") for i in range(8) for j in range(8))
    assert all(topology["weight"][i][j] == (0 if i == j else 15) for i in range(8) for j in range(8))
    assert report["warnings"] == []


def test_amd_smi_27_static_json_is_a_gpu_data_object_read_like_its_text():
    from_json = amd_smi.parse_amd_smi_static_json(
        output("amd-smi-27.1.0_lab-mi300x-8_static-asic-bus-vram-driver-json.txt")
    )
    from_text = amd_smi.parse_amd_smi_static_text(output("amd-smi-27.1.0_lab-mi300x-8_static-asic-bus-vram-driver.txt"))
    assert from_json["devices"] == from_text["devices"]
    assert [d["pci_bus"] for d in from_json["devices"]] == MI300X_8_BUSES
    assert from_json["driver_version"] is None  # printed N/A


def test_amd_smi_27_default_table():
    report = amd_smi.parse_amd_smi_summary(output("amd-smi-27.1.0_lab-mi300x-8_default.txt"))
    assert report["tool_version"] == "27.1.0+unknown"
    assert (report["driver_version"], report["rocm_version"]) == (None, None)  # 27.1 prints neither line here
    assert [(d["index"], d["pci_bus"], d["product"]) for d in report["devices"]] == [
        (n, bus, None) for n, bus in enumerate(MI300X_8_BUSES)
    ]


def test_amd_smi_24_5_text_after_its_json_becomes_warnings():
    report = amd_smi.parse_amd_smi_static_json(
        output("amd-smi-24.5.2_lab-mi300x-8_static-asic-bus-vram-driver-json_text-after-json.txt")
    )
    assert [d["product"] for d in report["devices"]] == ["AMD Instinct MI300X OAM"] * 8
    assert report["warnings"] == [
        "amd-smi: Failed to open file: /sys/class/drm//device/max_link_width",
        "amd-smi: '746974726170:5f:0c.5' is no PCI address; not used",
        "amd-smi static --json: 6 GPUs share the PCI address 0000:00:00.0; not used",
    ]


def test_amd_smi_24_5_addresses_it_cannot_read_or_shares_are_not_used():
    listed = amd_smi.parse_amd_smi_list_text(output("amd-smi-24.5.2_lab-mi300x-8_list_unreadable-addresses.txt"))
    # '746974726170:5f:0c.5' is no PCI address; 0000:00:00.0 is printed for six GPUs.
    assert [d["pci_bus"] for d in listed["devices"]] == [None] * 8
    assert listed["warnings"] == [
        "amd-smi: '746974726170:5f:0c.5' is no PCI address; not used",
        "amd-smi list: 6 GPUs share the PCI address 0000:00:00.0; not used",
    ]
    static = output("amd-smi-24.5.2_lab-mi300x-8_static-asic-bus-vram-driver_shared-addresses.txt")
    run = lambda args: (0, static, "") if list(args) == amd_smi.AMD_SMI_STATIC_TEXT_ARGS else (1, "", "")  # noqa: E731
    state, report = amd_smi.collect_amd_smi(run)
    assert state == "ok" and [d["pci_bus"] for d in report["devices"]] == [None] * 8
    assert any("7 GPUs share the PCI address 0000:00:00.0" in warning for warning in report["warnings"])


ROCMINFO_NO_KFD = "rocminfo-7.2.4_lab-mi300x-8_no-amdkfd-behind-dev-kfd.txt"


def test_rocminfo_7_2_without_amdkfd_names_the_driver_not_the_group():
    state, report = rocminfo.collect_rocminfo(lambda args: (1, output(ROCMINFO_NO_KFD), ""))
    assert state == "failed"
    assert "/dev/kfd (no such device)" in report["warnings"][0] and "load amdgpu" in report["warnings"][0]


def test_rocminfo_7_2_user_name_line_naming_the_root_group_is_a_warning():
    # The user-name line as rocminfo 7.2.4 printed it, placed in a real 4x MI300X rocminfo capture.
    line = next(line for line in output(ROCMINFO_NO_KFD).splitlines() if "Failed to get user name" in line)
    text = (CAPTURES / "mi300x-4gpu_rocm6.0-6.1_rocminfo.txt").read_text(encoding="utf-8")
    first, rest = text.split("\n", 1)
    state, report = rocminfo.collect_rocminfo(lambda args: (0, first + "\n" + line + "\n" + rest, ""))
    assert state == "ok" and len(report["devices"]) == 4
    assert report["warnings"] == ["rocminfo: Failed to get user name to check for root group membership"]
