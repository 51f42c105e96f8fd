"""Parser bugs that real tools exposed on the lab's hardware model mi300x-8 (issue 10).

Generated, not captured on a machine (tests/fixtures/generated/README.md): printed by
amd-smi 24.5.2 (Debian amd-smi 6.1.2+ds-2, trixie), rocm-smi 5.2.3 (Debian rocm-smi 5.2.3-2,
bookworm) and rocm-smi 6.1.2 (Debian rocm-smi 6.1.2-1, trixie), each test naming which. The
sysfs they are merged with is the same profile rendered by src/rocm_fleet/hardware. Where a
test varies a real output (to show what another run prints), it says how.
"""

import json
import re
from pathlib import Path

import pytest
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.amd_smi import report as amd_smi
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.merge import merge_reports
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.model import GpuParseError
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.rocm_smi.report import (
    collect_rocm_smi,
    parse_rocm_smi_json,
)
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.rocm_smi.text import parse_rocm_smi_text
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.sysfs.devices import collect_sysfs

from rocm_fleet.hardware import load_profile
from rocm_fleet.hardware.render import render_profile

FIXTURES = Path(__file__).resolve().parents[4] / "fixtures"
GENERATED = FIXTURES / "generated"
LAB = FIXTURES / "captures" / "lab"
AMD_SMI_24_5 = {  # amd-smi 24.5.2 (Debian amd-smi 6.1.2+ds-2): one run each, no DRM answer
    tuple(amd_smi.AMD_SMI_LIST_JSON_ARGS): "mi300x-8_list-json_no-drm-garbage-bdf.json",
    tuple(amd_smi.AMD_SMI_STATIC_JSON_ARGS): "mi300x-8_static-asic-bus-vram-driver-json_no-drm-garbage-bdf.txt",
    tuple(amd_smi.AMD_SMI_TOPOLOGY_JSON_ARGS): "mi300x-8_topology-json_no-drm-garbage-bdf.json",
    tuple(amd_smi.AMD_SMI_TOPOLOGY_TEXT_ARGS): "mi300x-8_topology_no-drm-garbage-bdf-headers-run-together.txt",
}
ONLY_ONES = {"sysfs": "ok", "rocm_smi": "missing", "amd_smi": "ok", "rocminfo": "missing"}


def generated(tool, name):
    return (GENERATED / tool / name).read_text(encoding="utf-8")


def amd_smi_24_5_run(replaced=None):
    """run() printing the amd-smi 24.5.2 outputs; ``replaced`` {args: text} stands in for some."""

    def run(args):
        if tuple(args) in (replaced or {}):
            return 0, replaced[tuple(args)], ""
        name = AMD_SMI_24_5.get(tuple(args))
        return (0, generated("amd-smi-6.1.2", name), "") if name else (2, "", "amd-smi: invalid choice")

    return run


def rendered_sysfs(tmp_path, profile=None):
    render_profile(profile or load_profile("mi300x-8"), tmp_path)
    state, report = collect_sysfs(str(tmp_path))
    assert state == "ok", report["warnings"]
    return report


def test_amd_smi_24_5_shared_address_stays_unused_in_every_part():
    # amd-smi 24.5.2: list, static and topology --json each print 0000:00:00.0 for GPUs 2-7.
    state, report = amd_smi.collect_amd_smi(amd_smi_24_5_run())
    assert state == "ok"
    assert [d["pci_bus"] for d in report["devices"]] == [None] * 8
    assert report["shared_pci_buses"] == ["0000:00:00.0"]
    assert "amd-smi topology --json: 6 GPUs share the PCI address 0000:00:00.0; not used" in report["warnings"]
    assert "amd-smi: '746974726170:5f:0c.5' is no PCI address; not used" in report["warnings"]  # GPUs 0 and 1
    assert report["topology"]["weight"][2][3] == 15


def test_amd_smi_24_5_address_another_call_found_shared_is_not_used():
    # amd-smi 24.5.2's topology --json, varied as another run prints it (its BDFs are stack garbage,
    # different each run): only GPU 2 keeps 0000:00:00.0, GPUs 3-7 have their 'bdf' keys removed.
    entries = json.loads(generated("amd-smi-6.1.2", AMD_SMI_24_5[tuple(amd_smi.AMD_SMI_TOPOLOGY_JSON_ARGS)]))
    for entry in entries[3:]:
        del entry["bdf"]
    run = amd_smi_24_5_run({tuple(amd_smi.AMD_SMI_TOPOLOGY_JSON_ARGS): json.dumps(entries)})
    state, report = amd_smi.collect_amd_smi(run)
    assert state == "ok" and [d["pci_bus"] for d in report["devices"]] == [None] * 8
    assert (
        "amd-smi topology --json: PCI address 0000:00:00.0 of GPU 2, which another amd-smi call printed for"
        " several GPUs; not used" in report["warnings"]
    )


def test_amd_smi_24_5_beside_sysfs_is_no_conflict(tmp_path):
    # amd-smi 24.5.2 on the profile it ran on: the sysfs GPUs, amd-smi's names, its address warned of.
    sysfs = rendered_sysfs(tmp_path)
    _, report = amd_smi.collect_amd_smi(amd_smi_24_5_run())
    gpu = merge_reports({"sysfs": sysfs, "amd_smi": report}, ONLY_ONES, [])
    assert gpu["conflicts"] == []
    assert [d["pci_bus"] for d in gpu["devices"]] == [d["pci_bus"] for d in sysfs["devices"]]
    assert {d["product"] for d in gpu["devices"]} == {"AMD Instinct MI300X OAM"}
    assert "amd-smi list --json: 6 GPUs share the PCI address 0000:00:00.0; not used" in gpu["warnings"]


def test_amd_smi_24_5_text_topology_header_run_together_says_so():
    # amd-smi 24.5.2 `topology`: header BDFs longer than the column run together.
    text = generated("amd-smi-6.1.2", AMD_SMI_24_5[tuple(amd_smi.AMD_SMI_TOPOLOGY_TEXT_ARGS)])
    with pytest.raises(GpuParseError, match=r"header is no row of PCI addresses .*746974726170:5f:0c\.5746974726170"):
        amd_smi.parse_amd_smi_topology_text(text)


def amd_smi_27_list(replace_bus=None):
    """amd-smi 27.1.0's list --json printed in the lab (tests/fixtures/captures/lab: real addresses,
    KFD nodes 2-9); ``replace_bus`` {gpu: bdf} varies it as amd-smi 24.5.2 prints an address it
    cannot read (0000:00:00.0) or one it gives another GPU."""
    text = (LAB / "amd-smi-27.1.0_lab-mi300x-8_list-json.txt").read_text(encoding="utf-8")
    for gpu, bdf in (replace_bus or {}).items():
        text, count = re.subn(r'("gpu": %d,\s*"bdf": )"[^"]*"' % gpu, r'\g<1>"%s"' % bdf, text)
        assert count == 1
    return amd_smi.parse_amd_smi_list_json(text)


def test_an_address_sysfs_does_not_see_is_a_warning_naming_amd_smi_and_the_address(tmp_path):
    gpu = merge_reports(
        {"sysfs": rendered_sysfs(tmp_path), "amd_smi": amd_smi_27_list({2: "0000:00:00.0"})}, ONLY_ONES, []
    )
    assert gpu["conflicts"] == []
    assert gpu["warnings"] == [
        "amd-smi: PCI address 0000:00:00.0 of its GPU index 2, which sysfs does not see, is not used; matched"
        " by KFD node to GPU 2 (0000:38:00.0), as the GPU count (8) agrees and no KFD node, device ID, gfx target"
        " or VRAM disagrees"
    ]
    assert gpu["devices"][2]["pci_bus"] == "0000:38:00.0" and gpu["devices"][2]["kfd_node"] == 4


def test_an_address_amd_smi_gives_two_gpus_is_a_warning(tmp_path):
    gpu = merge_reports(
        {"sysfs": rendered_sysfs(tmp_path), "amd_smi": amd_smi_27_list({3: "0000:38:00.0"})}, ONLY_ONES, []
    )
    assert gpu["conflicts"] == []
    assert [w.split(":", 1)[1].split(",")[:2] for w in gpu["warnings"]] == [
        [" PCI address 0000:38:00.0 of its GPU index 3", " which amd-smi also gives its GPU index 2"]
    ]


def test_a_gpu_sysfs_lacks_is_still_a_conflict(tmp_path):
    # sysfs sees 7 (GPU 5, 0000:af:00.0, gone), amd-smi 27.1.0 8 with 8 distinct real addresses. (The
    # rendered KFD nodes of GPUs 6-7 move down one, so amd-smi's nodes 8-9 disagree with them too.)
    sysfs = rendered_sysfs(tmp_path, load_profile("mi300x-8").without_gpu(5))
    gpu = merge_reports({"sysfs": sysfs, "amd_smi": amd_smi_27_list()}, ONLY_ONES, [])
    assert gpu["count"] == 7 and gpu["warnings"] == []
    assert gpu["conflicts"][:2] == [
        "GPU count differs between sources: sysfs sees 7, amd-smi sees 8",
        "amd-smi reports a GPU that sysfs does not see: index 5, pci_bus 0000:af:00.0, kfd_node 7",
    ]


VENDOR_ID_WARNING = (
    "rocm-smi: '%s' printed as the vendor ID 0x1002 (rocm_smi_lib found no pci.ids file): read as unknown"
)
NO_PCI_IDS = {  # tool folder -> (the showproductname output, the JSON call's output), both without pci.ids
    "rocm-smi-5.2.3": ("mi300x-8_showproductname_no-pci-ids-card-model-is-vendor-id.txt",
                       "mi300x-8_detail-showtopo-json_no-pci-ids-card-model-is-vendor-id.json"),
    "rocm-smi-6.1.2": ("mi300x-8_showproductname_no-pci-ids-subsystem-id-is-vendor-id.txt",
                       "mi300x-8_detail-showtopo-json_no-pci-ids-subsystem-id-is-vendor-id.json"),
}  # fmt: skip


@pytest.mark.parametrize(
    "tool, output, key",
    [
        # rocm-smi 5.2.3 (Debian 5.2.3-2): 'Card model' is the subsystem; without pci.ids the vendor ID.
        ("rocm-smi-5.2.3", 0, "Card model"),
        ("rocm-smi-5.2.3", 1, "Card model"),
        # rocm-smi 6.1.2 (Debian 6.1.2-1): 'Subsystem ID' is a name lookup too.
        ("rocm-smi-6.1.2", 0, "Subsystem ID"),
        ("rocm-smi-6.1.2", 1, "Subsystem ID"),
    ],
)
def test_rocm_smi_without_pci_ids_vendor_id_is_no_subsystem_id(tool, output, key):
    parse = (parse_rocm_smi_text, parse_rocm_smi_json)[output]
    report = parse(generated(tool, NO_PCI_IDS[tool][output]))
    assert len(report["devices"]) == 8
    assert {d["subsystem_device_id"] for d in report["devices"]} == {None}
    assert {d["device_id"] for d in report["devices"]} <= {None, "0x74a1"}  # 5.2.3's showproductname has no ID
    assert {d["product"] for d in report["devices"]} == {"AMD Instinct MI300X OAM"}
    assert report["warnings"] == [VENDOR_ID_WARNING % key]


@pytest.mark.parametrize("tool", ["rocm-smi-5.2.3", "rocm-smi-6.1.2"])
def test_rocm_smi_with_pci_ids_reads_the_subsystem(tool):
    # The same command in the same root, with Debian's pci.ids: the subsystem device 0x74a1.
    report = parse_rocm_smi_text(generated(tool, "mi300x-8_showproductname_with-pci-ids.txt"))
    assert {d["subsystem_device_id"] for d in report["devices"]} == {"0x74a1"}
    assert report["warnings"] == []


def test_rocm_smi_5_2_3_collector_without_pci_ids(tmp_path):
    # rocm-smi 5.2.3's JSON call (gpu_facts' first) without pci.ids, merged with the rendered sysfs.
    text = generated("rocm-smi-5.2.3", NO_PCI_IDS["rocm-smi-5.2.3"][1])
    state, report = collect_rocm_smi(lambda args: (0, text, ""))
    assert state == "ok"
    assert [(d["device_id"], d["subsystem_device_id"]) for d in report["devices"]] == [("0x74a1", None)] * 8
    states = dict(ONLY_ONES, rocm_smi="ok", amd_smi="missing")
    gpu = merge_reports({"sysfs": rendered_sysfs(tmp_path), "rocm_smi": report}, states, [])
    assert gpu["conflicts"] == [] and {d["subsystem_device_id"] for d in gpu["devices"]} == {"0x74a1"}
    assert gpu["warnings"] == [VENDOR_ID_WARNING % "Card model"]
