"""The merge of source reports into the gpu fact (schema 1)."""

import re
from pathlib import Path

from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.merge import merge_reports
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.model import new_device, new_report
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.rocminfo import parse_rocminfo

CAPTURES = Path(__file__).resolve().parents[4] / "fixtures" / "captures"

ALL_OK = {"sysfs": "ok", "rocm_smi": "ok", "amd_smi": "missing", "rocminfo": "skipped"}


def sysfs_report(count, loaded=True):
    report = new_report()
    report["driver_loaded"] = loaded
    report["driver_version"] = "6.12.12" if loaded else None
    for i in range(count):
        report["devices"].append(
            new_device(
                index=i,
                pci_bus="0000:%02x:00.0" % (0x10 + i),
                device_id="0x74a1",
                subsystem_device_id="0x74a1",
                gfx_target="gfx942",
                vram_bytes=192 << 30,
                numa_node=i // 4,
                kfd_node=2 + i,
                render_node="/dev/dri/renderD%d" % (128 + i),
            )
        )
    if count > 1:
        report["topology"] = {
            "link_type": [["SELF" if i == j else "XGMI" for j in range(count)] for i in range(count)],
            "hops": [[0 if i == j else 1 for j in range(count)] for i in range(count)],
            "weight": [[0 if i == j else 15 for j in range(count)] for i in range(count)],
            "numa_affinity": [i // 4 for i in range(count)],
        }
    return report


def rocm_smi_report(buses, product="AMD Instinct MI300X"):
    report = new_report()
    for i, bus in enumerate(buses):
        report["devices"].append(new_device(index=i, pci_bus=bus, product=product, device_id="0x74a1"))
    return report


def test_sources_agree_gives_complete_devices_and_no_conflict():
    sysfs = sysfs_report(8)
    smi = rocm_smi_report([d["pci_bus"] for d in sysfs["devices"]])
    gpu = merge_reports({"sysfs": sysfs, "rocm_smi": smi}, ALL_OK, [])
    assert gpu["count"] == 8
    assert gpu["conflicts"] == []
    assert gpu["devices"][3]["product"] == "AMD Instinct MI300X"
    assert gpu["devices"][3]["kfd_node"] == 5
    assert gpu["devices"][3]["vendor_id"] == "0x1002"
    assert gpu["topology"]["link_type"][0][7] == "XGMI"
    assert gpu["driver"] == {"loaded": True, "version": "6.12.12"}
    assert gpu["sources"] == ALL_OK


def test_tool_missing_a_gpu_is_a_conflict_and_the_os_count_wins():
    sysfs = sysfs_report(8)
    smi = rocm_smi_report([d["pci_bus"] for d in sysfs["devices"]][:7])
    gpu = merge_reports({"sysfs": sysfs, "rocm_smi": smi}, ALL_OK, [])
    assert gpu["count"] == 8
    assert any("sysfs sees 8" in c and "rocm-smi sees 7" in c for c in gpu["conflicts"])


def test_raw_id_product_is_named_from_the_pci_id_table():
    sysfs = sysfs_report(1)
    sysfs["devices"][0]["device_id"] = "0x740f"
    sysfs["devices"][0]["gfx_target"] = None
    smi = rocm_smi_report([sysfs["devices"][0]["pci_bus"]], product="0x740f")
    smi["devices"][0]["device_id"] = "0x740f"
    gpu = merge_reports({"sysfs": sysfs, "rocm_smi": smi}, ALL_OK, [])
    assert gpu["devices"][0]["product"] == "AMD Instinct MI210"
    assert gpu["devices"][0]["gfx_target"] == "gfx90a"
    assert gpu["topology"] is None


def test_device_id_disagreement_is_reported():
    sysfs = sysfs_report(2)
    smi = rocm_smi_report([d["pci_bus"] for d in sysfs["devices"]])
    smi["devices"][1]["device_id"] = "0x74a5"
    gpu = merge_reports({"sysfs": sysfs, "rocm_smi": smi}, ALL_OK, [])
    assert gpu["conflicts"] == ["GPU 1: device_id differs between sources: sysfs says 0x74a1, rocm-smi says 0x74a5"]


def test_sources_without_keys_match_by_position():
    smi = new_report()
    smi["devices"] = [new_device(index=0), new_device(index=1)]
    info = new_report()
    info["devices"] = [new_device(index=0, gfx_target="gfx1030"), new_device(index=1, gfx_target="gfx1030")]
    states = {"sysfs": "failed", "rocm_smi": "ok", "amd_smi": "missing", "rocminfo": "ok"}
    gpu = merge_reports({"rocm_smi": smi, "rocminfo": info}, states, ["sysfs: broken"])
    assert gpu["count"] == 2
    assert [d["gfx_target"] for d in gpu["devices"]] == ["gfx1030", "gfx1030"]
    assert gpu["warnings"] == ["sysfs: broken"]
    assert gpu["driver"]["loaded"] is True


def test_no_gpu_at_all():
    gpu = merge_reports({"sysfs": sysfs_report(0, loaded=False)}, ALL_OK, [])
    assert gpu["count"] == 0 and gpu["devices"] == [] and gpu["topology"] is None
    assert gpu["driver"] == {"loaded": False, "version": None}


def test_partitioned_gpus_sharing_a_bdf_stay_apart():
    sysfs = sysfs_report(3)
    for device in sysfs["devices"]:
        device["pci_bus"] = "0000:01:00.0"
    smi = new_report()
    smi["devices"] = [new_device(index=i, pci_bus="0000:01:00.0", kfd_node=2 + i, product="MI300A") for i in range(3)]
    gpu = merge_reports({"sysfs": sysfs, "rocm_smi": smi}, ALL_OK, [])
    assert gpu["count"] == 3
    assert [d["kfd_node"] for d in gpu["devices"]] == [2, 3, 4]
    assert gpu["conflicts"] == []


def test_a_gpu_only_a_tool_reports_is_a_conflict_not_an_extra_gpu():
    sysfs = sysfs_report(2)
    smi = rocm_smi_report(["0000:10:00.0", "0000:11:00.0", "0000:99:00.0"])
    gpu = merge_reports({"sysfs": sysfs, "rocm_smi": smi}, ALL_OK, [])
    assert gpu["count"] == 2
    assert gpu["conflicts"] == [
        "GPU count differs between sources: sysfs sees 2, rocm-smi sees 3",
        "rocm-smi reports a GPU that sysfs does not see: index 2, pci_bus 0000:99:00.0, device_id 0x74a1",
    ]


def test_an_address_sysfs_does_not_see_is_a_warning_where_the_count_and_the_rest_agree():
    sysfs = sysfs_report(2)
    smi = rocm_smi_report(["0000:10:00.0", "0000:99:00.0"])
    smi["devices"][1]["vram_bytes"] = 192 << 30
    gpu = merge_reports({"sysfs": sysfs, "rocm_smi": smi}, ALL_OK, [])
    assert gpu["conflicts"] == []
    assert gpu["warnings"] == [
        "rocm-smi: PCI address 0000:99:00.0 of its GPU index 1, which sysfs does not see, is not used; matched"
        " by index to GPU 1 (0000:11:00.0), as the GPU count (2) agrees and no KFD node, device ID, gfx target"
        " or VRAM disagrees"
    ]
    assert [(d["pci_bus"], d["product"]) for d in gpu["devices"]] == [
        ("0000:10:00.0", "AMD Instinct MI300X"),
        ("0000:11:00.0", "AMD Instinct MI300X"),
    ]


def test_an_address_sysfs_does_not_see_stays_a_conflict_where_another_field_disagrees():
    for key, value in (("device_id", "0x74a5"), ("vram_bytes", 64 << 30), ("kfd_node", 9)):
        sysfs = sysfs_report(2)
        smi = rocm_smi_report(["0000:10:00.0", "0000:99:00.0"])
        smi["devices"][1][key] = value
        gpu = merge_reports({"sysfs": sysfs, "rocm_smi": smi}, ALL_OK, [])
        assert len(gpu["conflicts"]) == 1 and "rocm-smi reports a GPU that sysfs does not see" in gpu["conflicts"][0]
        assert gpu["warnings"] == [], key


def test_tool_devices_without_identifiers_match_by_their_index():
    sysfs = sysfs_report(3)
    smi = new_report()
    smi["devices"] = [new_device(index=i, product="AMD Instinct MI300X") for i in (2, 0)]
    gpu = merge_reports({"sysfs": sysfs, "rocm_smi": smi}, ALL_OK, [])
    assert gpu["count"] == 3
    assert [d["product"] for d in gpu["devices"]] == ["AMD Instinct MI300X"] * 3


def rocminfo_mi300a_four_domains():
    """The real 4x MI300X rocminfo with every BDFID made 256 (01:00.0), as four MI300A in
    PCI domains 0-3 print it (lspci: 0000:01:00.0 ... 0003:01:00.0): BDFID drops the domain."""
    text = (CAPTURES / "mi300x-4gpu_rocm6.0-6.1_rocminfo.txt").read_text(encoding="utf-8")
    varied = re.sub(r"(BDFID:\s+)(9728|17920|25856|34048)\b", lambda m: m.group(1) + "256", text)
    assert varied.count("BDFID:                   256") == 4
    return parse_rocminfo(varied)


def sysfs_mi300a_four_domains():
    sysfs = sysfs_report(4)
    for domain, device in enumerate(sysfs["devices"]):
        device["pci_bus"], device["kfd_node"] = "%04x:01:00.0" % domain, 2 + domain
    return sysfs


def test_rocminfo_without_pci_domains_joins_sysfs_by_bdf_and_kfd_node():
    states = {"sysfs": "ok", "rocm_smi": "missing", "amd_smi": "missing", "rocminfo": "ok"}
    gpu = merge_reports({"sysfs": sysfs_mi300a_four_domains(), "rocminfo": rocminfo_mi300a_four_domains()}, states, [])
    assert gpu["conflicts"] == [] and gpu["count"] == 4
    assert [d["pci_bus"] for d in gpu["devices"]] == ["%04x:01:00.0" % domain for domain in range(4)]
    assert [d["product"] for d in gpu["devices"]] == ["AMD Instinct MI300X"] * 4


def test_rocminfo_alone_leaves_the_pci_domain_unknown():
    states = {"sysfs": "failed", "rocm_smi": "missing", "amd_smi": "missing", "rocminfo": "ok"}
    gpu = merge_reports({"rocminfo": rocminfo_mi300a_four_domains()}, states, [])
    assert gpu["count"] == 4 and [d["pci_bus"] for d in gpu["devices"]] == [None] * 4
    assert all("pci_bdf" not in device for device in gpu["devices"])


def test_rocminfo_bdf_matches_a_tool_s_domain_qualified_bus():
    smi = rocm_smi_report(["0000:26:00.0", "0000:46:00.0", "0000:65:00.0", "0000:85:00.0"])
    info = parse_rocminfo((CAPTURES / "mi300x-4gpu_rocm6.0-6.1_rocminfo.txt").read_text(encoding="utf-8"))
    states = {"sysfs": "failed", "rocm_smi": "ok", "amd_smi": "missing", "rocminfo": "ok"}
    gpu = merge_reports({"rocm_smi": smi, "rocminfo": info}, states, [])
    assert gpu["count"] == 4 and gpu["conflicts"] == []
    assert [d["kfd_node"] for d in gpu["devices"]] == [2, 3, 4, 5]


def partitioned_sysfs(gpus, partitions):
    sysfs = sysfs_report(gpus * partitions)
    for index, device in enumerate(sysfs["devices"]):
        device["pci_bus"] = "0000:%02x:00.0" % (0x10 + index // partitions)
    return sysfs


def test_a_tool_that_lists_the_physical_gpus_of_partitions_is_a_warning_not_a_conflict():
    """rocm-smi 5.x predates partitions: on 8 MI300X in CPX (the lab's mi300x-cpx-01) it lists 8, sysfs 64."""
    sysfs = partitioned_sysfs(8, 8)
    smi = rocm_smi_report(sorted({d["pci_bus"] for d in sysfs["devices"]}))
    gpu = merge_reports({"sysfs": sysfs, "rocm_smi": smi}, ALL_OK, [])
    assert gpu["count"] == 64
    assert not any("count differs" in conflict for conflict in gpu["conflicts"])
    assert "rocm-smi lists the 8 physical GPUs, not their 64 partitions" in gpu["warnings"]


def test_a_tool_missing_a_physical_gpu_of_a_partitioned_host_is_still_a_conflict():
    sysfs = partitioned_sysfs(8, 8)
    smi = rocm_smi_report(sorted({d["pci_bus"] for d in sysfs["devices"]})[:7])
    gpu = merge_reports({"sysfs": sysfs, "rocm_smi": smi}, ALL_OK, [])
    assert any("sysfs sees 64" in c and "rocm-smi sees 7" in c for c in gpu["conflicts"])
