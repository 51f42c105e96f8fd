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
from ansible_collections.rocm_fleet.core.plugins.module_utils import gpu_amd_smi as amd_smi
from ansible_collections.rocm_fleet.core.plugins.module_utils import gpu_rocm_smi as rocm_smi
from ansible_collections.rocm_fleet.core.plugins.module_utils.host_facts import HOST_FACTS
from fake_tools import ARGPARSE_REJECT, install_fake_tool

CAPTURES = Path(__file__).resolve().parents[3] / "fixtures" / "captures"


def manifest_rows():
    rows = {}
    for line in (CAPTURES / "MANIFEST.md").read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.split(" | ")]
        if line.startswith("| ") and len(cells) >= 7 and (CAPTURES / cells[0].lstrip("| ")).is_file():
            rows[cells[0].lstrip("| ")] = {"count": int(re.match(r"\d+", cells[2]).group()), "expected": cells[-1]}
    return rows


MANIFEST = manifest_rows()


def plan_for(name):
    """Which tool the capture belongs to and which of the module's calls prints it."""
    out = {"stdout_file": str(CAPTURES / name)}
    if "_rocminfo" in name:
        return "rocminfo", {(): out}
    if "rocm-smi-alldevices-json" in name:
        return "rocm_smi", {tuple(rocm_smi.ROCM_SMI_JSON_ARGS): out}
    if "_rocm-smi-" in name:
        if "showhw" in name:
            return None
        if "showtopo" in name:
            slot = rocm_smi.ROCM_SMI_TOPOLOGY_ARGS
        elif "default" in name:
            slot = rocm_smi.ROCM_SMI_CONCISE_ARGS
        else:  # --showproductname, --showproduct, -i, -a: parts of the detail call
            slot = rocm_smi.ROCM_SMI_DETAIL_ARGS
        return "rocm_smi", {tuple(rocm_smi.ROCM_SMI_JSON_ARGS): ARGPARSE_REJECT, tuple(slot): out}
    if "_amd-smi" in name:
        if "error" in name:
            every = amd_smi.AMD_SMI_JSON_COMMANDS + amd_smi.AMD_SMI_TEXT_COMMANDS
            return "amd_smi", {tuple(args): dict(out, rc=1) for args in every}
        if "amd-smi-list" in name:
            return "amd_smi", {tuple(amd_smi.AMD_SMI_LIST_TEXT_ARGS): out}
        if "amd-smi-default" in name:
            return "amd_smi", {tuple(amd_smi.AMD_SMI_SUMMARY_ARGS): out}
        return None  # topology alone names no GPU: amd-smi list decides which exist
    return None  # lspci and sysfs captures: the module reads sysfs itself


TOOL_NAMES = {"rocm_smi": "rocm-smi", "amd_smi": "amd-smi", "rocminfo": "rocminfo"}
RUN_BY_MODULE = sorted(name for name in MANIFEST if plan_for(name))


def test_the_manifest_was_read():
    assert len(MANIFEST) == 47
    assert len(RUN_BY_MODULE) >= 30


@pytest.mark.parametrize("name", RUN_BY_MODULE)
def test_capture_through_the_module(name, tmp_path, run_gpu_facts):
    source, responses = plan_for(name)
    install_fake_tool(tmp_path / "bin", TOOL_NAMES[source], responses)
    result = run_gpu_facts([tmp_path / "bin"], sources=[source])
    assert result["rc"] == 0, result
    gpu = result["ansible_facts"]["gpu"]
    assert gpu["count"] == MANIFEST[name]["count"], gpu
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
    assert set(facts) == {"gpu"} | {"ansible_" + name for name in HOST_FACTS}
    for name in HOST_FACTS:
        assert facts["ansible_" + name] == expected["ansible_" + name], name
    assert facts["ansible_processor"], "no CPU in /proc/cpuinfo"
    assert facts["gpu"]["count"] == 0


def test_host_facts_are_off_by_default(run_gpu_facts):
    result = run_gpu_facts([], sources=["sysfs"])
    assert set(result["ansible_facts"]) == {"gpu"}
