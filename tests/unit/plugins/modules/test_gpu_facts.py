"""rocm_fleet.core.gpu_facts through main(), with fake tools on PATH printing the real captures.

The expected GPU count of each capture is read from the captures' MANIFEST.md
(its 'GPU count' column), so the module is held to what the capture's source
says, not to what the parser happens to return.
"""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.amd_smi import report as amd_smi
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.rocm_smi import report as rocm_smi
from ansible_collections.rocm_fleet.core.plugins.module_utils.host.facts import HOST_FACTS
from fleet_testing.fake_tools import ARGPARSE_REJECT, install_fake_tool

CAPTURES = Path(__file__).resolve().parents[3] / "fixtures" / "captures"


def manifest_rows():
    """The first table of MANIFEST.md, whose third column is the GPU count."""
    rows = {}
    first_table = (CAPTURES / "MANIFEST.md").read_text(encoding="utf-8").split("\n## Second set")[0]
    for line in first_table.splitlines():
        cells = [cell.strip() for cell in line.split(" | ")]
        if line.startswith("| ") and len(cells) >= 7 and (CAPTURES / cells[0].lstrip("| ")).is_file():
            rows[cells[0].lstrip("| ")] = {"count": int(re.match(r"\d+", cells[2]).group()), "expected": cells[-1]}
    return rows


MANIFEST = manifest_rows()
# The second table has no count column: the counts its 'Expected parse' column states
# (what a capture cut short by its poster shows, never a total it does not give).
SECOND_SET_COUNTS = {
    "mi300a-1apu-spx-nps1_rocm6.3.3_rocm-smi-i.txt": 1,
    "mi300a-1apu-tpx-nps1_rocm6.3.3_rocm-smi-default.txt": 3,
    "mi300a-1apu-tpx-nps1_rocm6.3.3_rocm-smi-showmeminfo-vram_per-partition-one-third.txt": 3,
    "mi300a-unknowncount-cpx-nps1_unknown_rocm-smi-default_container-renderD128-129-secondary-na.txt": 2,
    "mi300x-8gpu-cpx-nps1_rocm6.3.3_rocm-smi-default_63-of-64-partitions.txt": 63,
    "mi300x-8gpu-cpx-nps1_rocm6.3.3_rocm-smi-showmeminfo-vram_spaces-not-tabs_per-partition-reports-full-gpu-vram.txt": 63,  # noqa: E501
    "mi300x-8gpu-cpx-nps4_rocm6.3.3_rocm-smi-showmeminfo-vram_per-partition-reports-full-gpu-vram.txt": 63,
    "mi300x-8gpu-cpx-nps4_unknown_rocm-smi-default_container-renderD128-129-secondary-na.txt": 2,
    "mi300x-8gpu-cpx-nps4_unknown_rocm-smi-default_container-renderD128-136-two-primaries.txt": 2,
    "mi300x-8gpu-spx-nps1_unknown_rocm-smi-default_whitespace-collapsed-by-poster_pwrcap-500w-gpu0.txt": 8,
    "mi300x-vf-1gpu_rocm6.4.1_rocm-smi-default_vf-did-0x74b5.txt": 1,
    "mi355x-8gpu-spx-nps1_rocm7.1.2-container_kubectl-logs-rocm-smi-plus-amd-smi-version_nbsp-and-tabs-from-paste.txt": 8,  # noqa: E501
    "rx6600xt-1gpu_unknown_rocm-smi-showallinfo-json-via-jq_firmware-versions.txt": 1,
    "mi300x-8gpu-cpx-nps1_rocm6.3.3_rocminfo-excerpt-agents3-4_partitions-share-uuid.txt": 2,
    "mi300x-vf-1gpu_rocm6.4.1_rocminfo_full-1cpu-1gpu-agent.txt": 1,
    "mi300x-8gpu-spx_rocm6.1.2_amd-smi-version-plus-list_kubectl-logs_old-list-format-bdf-uuid-only.txt": 8,
    "mi325x-vf-unknowncount_unknown_amd-smi-list_snipped-by-poster.txt": 2,
    "mi325x-vf-unknowncount_unknown_amd-smi-list-e_snipped-by-poster_hip-id-differs-from-gpu-index.txt": 2,
    "mi325x-vf-unknowncount_unknown_amd-smi-static-g0_snipped-by-poster.txt": 1,
    "rx6600xt-1gpu_unknown_amd-smi-topology-json_bare-list-self-link.txt": 1,
    "rx7900xtx-2gpu_rocm-na-amdsmi26.2.2_amd-smi-default_rocm-version-na_fan-column-no-percent.txt": 2,
    "rx7900xtx-2gpu_rocm-na-amdsmi26.2.2_amd-smi-static-driver_version-is-kernel-banner.txt": 2,
    "mi300a-4apu-spx-nps1_rocm6.3.3_amd-smi-partition_unsupported-all-na.txt": 4,
    "mi300a-4apu-spx-nps1_rocm6.3.3_amd-smi-static-partition.txt": 4,
    "mi300a-4apu-spx-nps1_rocm6.4.0_amd-smi-partition_profiles-without-resources.txt": 4,
    "mi325x-vf-unknowncount_unknown_amd-smi-partition-g0_spx-nps1-profiles.txt": 1,
    # Cut by its poster after GPU 0; 'GPU: 62' survives, and amd-smi numbers its GPUs from 0.
    "mi300x-8gpu-cpx-nps4_rocm6.4.1_amd-smi-static-partition_truncated-by-poster_last-gpu-62.txt": 63,
}
COUNTS = dict([(name, row["count"]) for name, row in MANIFEST.items()] + list(SECOND_SET_COUNTS.items()))


def plan_for(name):
    """Which tool the capture belongs to and which of the module's calls prints it."""
    out = {"stdout_file": str(CAPTURES / name)}
    if "_rocminfo" in name:
        return "rocminfo", {(): out}
    if "_rocm-smi-" in name and "json" in name:
        return "rocm_smi", {tuple(rocm_smi.ROCM_SMI_JSON_ARGS): out}
    if "_rocm-smi-" in name:
        if "showhw" in name:
            return None
        if "showtopo" in name:
            slot = rocm_smi.ROCM_SMI_TOPOLOGY_ARGS
        elif "default" in name:
            slot = rocm_smi.ROCM_SMI_CONCISE_ARGS
        else:  # --showproductname, --showproduct, -i, -a, --showmeminfo: parts of the detail call
            slot = rocm_smi.ROCM_SMI_DETAIL_ARGS
        return "rocm_smi", {tuple(rocm_smi.ROCM_SMI_JSON_ARGS): ARGPARSE_REJECT, tuple(slot): out}
    if "_amd-smi" in name:
        if "error" in name:
            every = amd_smi.AMD_SMI_JSON_COMMANDS + amd_smi.AMD_SMI_TEXT_COMMANDS
            return "amd_smi", {tuple(args): dict(out, rc=1) for args in every}
        # Each subcommand alone names the GPUs; the module's other amd-smi calls fail.
        for marker, slot in (
            ("amd-smi-static-partition", amd_smi.AMD_SMI_STATIC_PARTITION_TEXT_ARGS),
            ("amd-smi-partition", amd_smi.AMD_SMI_PARTITION_TEXT_ARGS),
        ):
            if marker in name:
                return "amd_smi", {tuple(slot): out}
        for marker, slot in (
            ("amd-smi-list", amd_smi.AMD_SMI_LIST_TEXT_ARGS),
            ("amd-smi-version-plus-list", amd_smi.AMD_SMI_LIST_TEXT_ARGS),
            ("amd-smi-static-", amd_smi.AMD_SMI_STATIC_TEXT_ARGS),
            ("amd-smi-default", amd_smi.AMD_SMI_SUMMARY_ARGS),
            ("amd-smi-topology-json", amd_smi.AMD_SMI_TOPOLOGY_JSON_ARGS),
            ("amd-smi-topology-a-t-json", amd_smi.AMD_SMI_TOPOLOGY_JSON_ARGS),
            ("amd-smi-topology", amd_smi.AMD_SMI_TOPOLOGY_TEXT_ARGS),
        ):
            if marker in name and "partition" not in name:
                return "amd_smi", {tuple(slot): out}
    return None  # lspci, sysfs and other commands' captures: the module reads sysfs itself


TOOL_NAMES = {"rocm_smi": "rocm-smi", "amd_smi": "amd-smi", "rocminfo": "rocminfo"}
RUN_BY_MODULE = sorted(name for name in COUNTS if (CAPTURES / name).is_file() and plan_for(name))


def test_the_manifest_was_read():
    assert len(MANIFEST) == 47
    assert len(RUN_BY_MODULE) >= 55


@pytest.mark.parametrize("name", RUN_BY_MODULE)
def test_capture_through_the_module(name, tmp_path, run_gpu_facts):
    source, responses = plan_for(name)
    install_fake_tool(tmp_path / "bin", TOOL_NAMES[source], responses)
    result = run_gpu_facts([tmp_path / "bin"], sources=[source])
    assert result["rc"] == 0, result
    gpu = result["ansible_facts"]["gpu"]
    assert gpu["count"] == COUNTS[name], gpu
    assert [device["index"] for device in gpu["devices"]] == list(range(gpu["count"]))
    assert all(device["vendor_id"] == "0x1002" for device in gpu["devices"])
    if gpu["sources"][source] == "failed":
        assert gpu["warnings"] and all(isinstance(text, str) for text in gpu["warnings"])
        assert any(TOOL_NAMES[source] in text for text in gpu["warnings"])
    else:
        assert gpu["sources"][source] == "ok"


def test_raw_device_id_is_named_by_the_module(tmp_path, run_gpu_facts):
    name = "mi210-1gpu_rocm6.0_rocm-smi-showproductname_unresolved-name.txt"
    install_fake_tool(tmp_path / "bin", "rocm-smi", plan_for(name)[1])
    device = run_gpu_facts([tmp_path / "bin"], sources=["rocm_smi"])["ansible_facts"]["gpu"]["devices"][0]
    assert (device["device_id"], device["subsystem_device_id"]) == ("0x740f", "0x0c34")
    assert device["product"] == "AMD Instinct MI210"
    assert device["gfx_target"] == "gfx90a"


def test_a_hung_tool_is_killed_after_the_timeout(tmp_path, run_gpu_facts):
    install_fake_tool(tmp_path / "bin", "rocminfo", {}, default={"sleep": 60})
    result = run_gpu_facts([tmp_path / "bin"], sources=["rocminfo"], timeout=1)
    gpu = result["ansible_facts"]["gpu"]
    assert result["rc"] == 0
    assert gpu["sources"]["rocminfo"] == "timeout"
    assert any("rocminfo" in text and "1s" in text for text in gpu["warnings"])


def test_missing_tools_are_not_a_failure(run_gpu_facts):
    result = run_gpu_facts([], sources=["rocm_smi", "amd_smi", "rocminfo"])
    gpu = result["ansible_facts"]["gpu"]
    assert result["rc"] == 0 and gpu["count"] == 0
    assert gpu["sources"] == {"sysfs": "skipped", "rocm_smi": "missing", "amd_smi": "missing", "rocminfo": "missing"}


def test_explicit_path_that_is_not_a_tool_is_missing_with_a_warning(tmp_path, run_gpu_facts):
    result = run_gpu_facts([], sources=["rocm_smi"], rocm_smi_path=str(tmp_path / "no-such-rocm-smi"))
    gpu = result["ansible_facts"]["gpu"]
    assert gpu["sources"]["rocm_smi"] == "missing"
    assert gpu["warnings"] == ["rocm-smi: %s is not an executable file" % (tmp_path / "no-such-rocm-smi")]


def test_garbage_output_fails_that_source_only(tmp_path, run_gpu_facts):
    garbage = tmp_path / "garbage.txt"
    garbage.write_bytes(b"\x00\xffSegmentation fault (core dumped)\n")
    install_fake_tool(tmp_path / "bin", "rocminfo", {(): {"stdout_file": str(garbage), "rc": 139}})
    name = "mi300x-4gpu_rocm6.0-6.1_rocm-smi-default_oldformat.txt"
    install_fake_tool(tmp_path / "bin", "rocm-smi", plan_for(name)[1])
    gpu = run_gpu_facts([tmp_path / "bin"], sources=["rocm_smi", "rocminfo"])["ansible_facts"]["gpu"]
    assert gpu["sources"]["rocminfo"] == "failed" and gpu["sources"]["rocm_smi"] == "ok"
    assert gpu["count"] == 4
    assert any(text.startswith("rocminfo") and "Segmentation fault" in text for text in gpu["warnings"])


def test_timeout_must_be_positive(run_gpu_facts):
    result = run_gpu_facts([], timeout=0)
    assert result["failed"] is True and "timeout" in result["msg"]


def setup_facts(tmp_path, gather_subset=("min", "hardware")):
    """ansible.builtin.setup's facts on this machine: its own code in a fresh interpreter, as Ansible runs it."""
    args = tmp_path / "setup-args.json"
    args.write_text(json.dumps({"ANSIBLE_MODULE_ARGS": {"gather_subset": list(gather_subset)}}))
    result = subprocess.run(
        [sys.executable, "-m", "ansible.modules.setup", str(args)], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    return json.loads(result.stdout)["ansible_facts"]


@pytest.mark.skipif(not Path("/proc/cpuinfo").is_file(), reason="setup reads processor from Linux's /proc/cpuinfo")
def test_host_facts_are_setups_facts_on_this_machine(tmp_path, run_gpu_facts):
    expected = setup_facts(tmp_path)
    # The machine's own PATH, as setup had it (the distribution code asks lsb_release where there is one);
    # sources=[sysfs] under an empty root keeps the machine's GPU tools out.
    path_dirs = os.environ.get("PATH", "").split(os.pathsep)
    result = run_gpu_facts(path_dirs, sources=["sysfs"], host_facts=True)
    assert result["rc"] == 0 and "warnings" not in result, result
    facts = result["ansible_facts"]
    assert set(facts) == {"gpu", "ansible_host_facts_digest"} | {"ansible_" + name for name in HOST_FACTS}
    for name in HOST_FACTS:
        assert facts["ansible_" + name] == expected["ansible_" + name], name
    assert facts["ansible_processor"], "no CPU in /proc/cpuinfo"
    assert facts["gpu"]["count"] == 0


def test_host_facts_are_off_by_default(run_gpu_facts):
    result = run_gpu_facts([], sources=["sysfs"])
    assert set(result["ansible_facts"]) == {"gpu"}


GENERATED = CAPTURES.parent / "generated"


def test_amd_smi_24_5_beside_the_sysfs_it_ran_on_is_no_conflict(tmp_path, run_gpu_facts):
    # amd-smi 24.5.2 (Debian amd-smi 6.1.2+ds-2) printed these on the lab's mi300x-8, whose sysfs is rendered here.
    from rocm_fleet.hardware import load_profile
    from rocm_fleet.hardware.render import render_profile

    render_profile(load_profile("mi300x-8"), tmp_path / "root")
    outputs = (
        (amd_smi.AMD_SMI_LIST_JSON_ARGS, "mi300x-8_list-json_no-drm-garbage-bdf.json"),
        (amd_smi.AMD_SMI_STATIC_JSON_ARGS, "mi300x-8_static-asic-bus-vram-driver-json_no-drm-garbage-bdf.txt"),
        (amd_smi.AMD_SMI_TOPOLOGY_JSON_ARGS, "mi300x-8_topology-json_no-drm-garbage-bdf.json"),
    )
    responses = {tuple(args): {"stdout_file": str(GENERATED / "amd-smi-6.1.2" / name)} for args, name in outputs}
    install_fake_tool(tmp_path / "bin", "amd-smi", responses)
    gpu = run_gpu_facts([tmp_path / "bin"], sources=["sysfs", "amd_smi"], sysfs_root=str(tmp_path / "root"))[
        "ansible_facts"
    ]["gpu"]
    assert gpu["sources"]["amd_smi"] == "ok" and gpu["count"] == 8
    assert gpu["conflicts"] == []
    assert "amd-smi list --json: 6 GPUs share the PCI address 0000:00:00.0; not used" in gpu["warnings"]


def test_rocm_smi_5_2_3_without_pci_ids_leaves_the_subsystem_unknown(tmp_path, run_gpu_facts):
    # rocm-smi 5.2.3 (Debian rocm-smi 5.2.3-2) printed 'Card model: 0x1002', the vendor ID, without pci.ids.
    name = "mi300x-8_detail-showtopo-json_no-pci-ids-card-model-is-vendor-id.json"
    responses = {tuple(rocm_smi.ROCM_SMI_JSON_ARGS): {"stdout_file": str(GENERATED / "rocm-smi-5.2.3" / name)}}
    install_fake_tool(tmp_path / "bin", "rocm-smi", responses)
    gpu = run_gpu_facts([tmp_path / "bin"], sources=["rocm_smi"])["ansible_facts"]["gpu"]
    assert gpu["count"] == 8
    assert {(d["device_id"], d["subsystem_device_id"]) for d in gpu["devices"]} == {("0x74a1", None)}
    assert any("vendor ID 0x1002" in text for text in gpu["warnings"])


def runs(*spans):
    """[(value, times), ...] -> the values repeated: the expected rows of a capture, compactly."""
    return [value for value, times in spans for _ in range(times)]


CPX_63 = runs(*[((("CPX", "NPS1", pid, gpu)), 1) for gpu in range(8) for pid in range(7 if gpu == 5 else 8)])
# Per capture of the shared partition set (MANIFEST 'Expected parse'): count, then per logical
# device (compute mode, memory mode, partition ID, physical GPU), then the partition warnings.
PARTITION_CASES = [
    (
        "mi300x-8gpu-cpx-nps1_rocm6.3.3_rocm-smi-default_63-of-64-partitions.txt",
        63,
        CPX_63,
        [
            "physical GPU 5 (AMD Instinct MI300X, logical GPU 40-46, KFD node 42-48) has 7 of the 8 partitions"
            " CPX gives; partition ID 7 missing: the DRM minors ran out (another DRM driver such as mgag200"
            " holds one) or a container sees only some"
        ],
    ),
    # The secondary partition prints N/A modes: it has its GPU's; the container sees 2 of 8.
    (
        "mi300x-8gpu-cpx-nps4_unknown_rocm-smi-default_container-renderD128-129-secondary-na.txt",
        2,
        [("CPX", "NPS4", 0, 0), ("CPX", "NPS4", 1, 0)],
        ["physical GPU 0 (AMD Instinct MI300X, logical GPU 0-1, KFD node 2-3) has 2 of the 8 partitions CPX"],
    ),
    (
        "mi300x-8gpu-cpx-nps4_unknown_rocm-smi-default_container-renderD128-136-two-primaries.txt",
        2,
        [("CPX", "NPS4", 0, 0), ("CPX", "NPS4", 0, 1)],
        [
            "physical GPU 0 (AMD Instinct MI300X, logical GPU 0, KFD node 2) has 1 of the 8 partitions CPX",
            "physical GPU 1 (AMD Instinct MI300X, logical GPU 1, KFD node 10) has 1 of the 8 partitions CPX",
        ],
    ),
    (
        "mi300a-unknowncount-cpx-nps1_unknown_rocm-smi-default_container-renderD128-129-secondary-na.txt",
        2,
        [("CPX", "NPS1", 0, 0), ("CPX", "NPS1", 1, 0)],
        ["physical GPU 0 (AMD Instinct MI300A, logical GPU 0-1, KFD node 1-2) has 2 of the 6 partitions CPX"],
    ),
    ("mi300a-1apu-tpx-nps1_rocm6.3.3_rocm-smi-default.txt", 3, [("TPX", "NPS1", i, 0) for i in range(3)], []),
    # 05:00.0 and 05:00.1 with one Uuid: partitions 0 and 1 of one GPU (KFD puts the number in the function).
    (
        "mi300x-8gpu-cpx-nps1_rocm6.3.3_rocminfo-excerpt-agents3-4_partitions-share-uuid.txt",
        2,
        [(None, None, None, 0), (None, None, None, 0)],
        [],
    ),
    # Cut after GPU 0: the others are counted, and nothing is known of their partitions.
    (
        "mi300x-8gpu-cpx-nps4_rocm6.4.1_amd-smi-static-partition_truncated-by-poster_last-gpu-62.txt",
        63,
        [("CPX", "NPS4", 0, 0)] + [(None, None, None, None)] * 62,
        [],
    ),
    # amd-smi 24.7 'partition' says N/A for the compute mode: unknown, not SPX.
    (
        "mi300a-4apu-spx-nps1_rocm6.3.3_amd-smi-partition_unsupported-all-na.txt",
        4,
        [(None, "NPS1", None, None)] * 4,
        [],
    ),
    (
        "mi300a-4apu-spx-nps1_rocm6.3.3_amd-smi-static-partition.txt",
        4,
        [("SPX", "NPS1", 0, gpu) for gpu in range(4)],
        [],
    ),
    (
        "mi300a-4apu-spx-nps1_rocm6.4.0_amd-smi-partition_profiles-without-resources.txt",
        4,
        [(None, "NPS1", 0, gpu) for gpu in range(4)],
        [],
    ),
    ("mi325x-vf-unknowncount_unknown_amd-smi-partition-g0_spx-nps1-profiles.txt", 1, [("SPX", "NPS1", 0, 0)], []),
    ("mi355x-8gpu_rocm7.0.2_amd-smi-default.txt", 8, [("SPX", "NPS1", None, gpu) for gpu in range(8)], []),
    (
        "mi300x-8gpu-spx-nps1_unknown_rocm-smi-default_whitespace-collapsed-by-poster_pwrcap-500w-gpu0.txt",
        8,
        [("SPX", "NPS1", 0, gpu) for gpu in range(8)],
        [],
    ),
    ("mi300x-vf-1gpu_rocm6.4.1_rocm-smi-default_vf-did-0x74b5.txt", 1, [("SPX", "NPS1", 0, 0)], []),
    ("mi300x-1gpu_rocm6.0-6.1_rocm-smi-default_oldformat.txt", 1, [("SPX", "NPS1", None, 0)], []),
    ("mi300x-4gpu_rocm6.0-6.1_rocm-smi-showallinfo.txt", 4, [("SPX", "NPS1", None, gpu) for gpu in range(4)], []),
    # Per-partition VRAM as rocm-smi prints it: the partitions' modes are not in this output.
    (
        "mi300x-8gpu-cpx-nps1_rocm6.3.3_rocm-smi-showmeminfo-vram_spaces-not-tabs_per-partition-reports-full-gpu-vram.txt",
        63,
        [(None, None, None, None)] * 63,
        [],
    ),
    (
        "mi300a-1apu-tpx-nps1_rocm6.3.3_rocm-smi-showmeminfo-vram_per-partition-one-third.txt",
        3,
        [(None, None, None, None)] * 3,
        [],
    ),
    ("mi300a-1apu-spx-nps1_rocm6.3.3_rocm-smi-i.txt", 1, [(None, None, None, None)], []),
    # The NUMA table alone: 12 logical GPUs (4 APUs in TPX, MANIFEST), their modes not printed.
    ("mi300a-4apu-tpx-12part_rocm6.1.1_rocm-smi-showtoponuma.txt", 12, [(None, None, None, None)] * 12, []),
    # A consumer GPU: no modes, partition 0 of itself.
    ("rx7900xtx-1gpu_rocm6.3.1_rocm-smi-default.txt", 1, [(None, None, 0, 0)], []),
]


@pytest.mark.parametrize(("name", "count", "rows", "warnings"), PARTITION_CASES, ids=[c[0] for c in PARTITION_CASES])
def test_partition_capture_through_the_module(name, count, rows, warnings, tmp_path, run_gpu_facts):
    source, responses = plan_for(name)
    install_fake_tool(tmp_path / "bin", TOOL_NAMES[source], responses)
    gpu = run_gpu_facts([tmp_path / "bin"], sources=[source])["ansible_facts"]["gpu"]
    assert gpu["schema"] == 2 and gpu["count"] == count
    keys = ("compute_partition", "memory_partition", "partition_id", "physical_gpu")
    assert [tuple(device[key] for key in keys) for device in gpu["devices"]] == rows
    found = [text for text in gpu["warnings"] if text.startswith("physical GPU")]
    assert len(found) == len(warnings) and all(
        text.startswith(start) for text, start in zip(found, warnings, strict=True)
    )
    assert gpu["conflicts"] == []


def test_amd_smi_partition_profiles_give_the_available_modes(tmp_path, run_gpu_facts):
    name = "mi300a-4apu-spx-nps1_rocm6.4.0_amd-smi-partition_profiles-without-resources.txt"
    install_fake_tool(tmp_path / "bin", "amd-smi", plan_for(name)[1])
    gpu = run_gpu_facts([tmp_path / "bin"], sources=["amd_smi"])["ansible_facts"]["gpu"]
    assert {tuple(d["available_compute_partitions"]) for d in gpu["devices"]} == {("SPX", "TPX", "CPX")}
    # No '*' marks a profile: the current compute mode stays unknown.
    assert {d["compute_partition"] for d in gpu["devices"]} == {None}
