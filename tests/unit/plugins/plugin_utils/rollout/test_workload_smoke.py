"""The workload smoke test's verdict (plugin_utils/rollout/workload_smoke.py), on what the script really printed.

Real documents (tests/fixtures/generated/workload-smoke/README.md), each test naming which:
* H200: files/smoke/rocm_fleet_gpu_smoke.py on one NVIDIA H200 (the device tool's nvidia-h200),
  Python 3.12.3, torch 2.11.0+cu130 (CUDA 13.0); also with CUDA_VISIBLE_DEVICES empty, and
  with --tolerance 1e-7 (a real product over its tolerance).
* CPU: the development machine, Python 3.11.7, torch 2.13.0+cpu; and the same Python without torch.
No AMD GPU was at hand: a ROCm case is the H200 document edited as a HIP build reports
(torch.version.hip set, gcnArchName 'gfx942:sramecc+:xnack-'), and its test says so.
"""

import copy
import json
from pathlib import Path

import pytest
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.rollout.workload_smoke import (
    SmokeOutputError,
    base_arch,
    check_workload_smoke,
    normalize_archs,
    parse_smoke_output,
    smoke_run_verdict,
    smoke_verdict,
)

SMOKE = Path(__file__).resolve().parents[4] / "fixtures" / "generated" / "workload-smoke"
H200 = "h200-1gpu_torch-2.11.0-cu130.json"
H200_NO_VISIBLE = "h200-1gpu_torch-2.11.0-cu130_cuda-visible-devices-empty.json"
H200_TIGHT = "h200-1gpu_torch-2.11.0-cu130_tolerance-1e-7.json"
CPU_ONLY = "cpu-vm_torch-2.13.0-cpu.json"
NO_TORCH = "cpu-vm_python-3.11.7_no-torch.json"


def printed(name):
    return (SMOKE / name).read_text()


def document(name):
    return parse_smoke_output(printed(name))


def run_of(name, rc=0, stderr=""):
    return {"rc": rc, "stdout": printed(name), "stderr": stderr}


def as_rocm(report, count, arch="gfx942:sramecc+:xnack-", name="AMD Instinct MI300X"):
    """The H200 document edited as a ROCm build with ``count`` devices would print it (no AMD GPU was at hand)."""
    report = copy.deepcopy(report)
    report["torch"]["version"] = "2.5.1+rocm6.2"
    report["build"].update(kind="rocm", hip="6.2.41133-dd7f95766", cuda=None)
    template = report["devices"][0]
    report["devices"] = []
    for index in range(count):
        device = copy.deepcopy(template)
        device.update(index=index, name=name, arch=base_arch(arch), gcn_arch_name=arch, compute_capability="9.4")
        report["devices"].append(device)
    report["device_count"] = count
    return report


# --- H200, torch 2.11.0+cu130 ---------------------------------------------------------------


def test_h200_sees_its_one_gpu_and_computes_right_when_no_architecture_is_expected():
    verdict = smoke_run_verdict(run_of(H200), expected_count=1)
    assert verdict["status"] == "pass", verdict
    assert verdict["reason"] == (
        "PyTorch (torch 2.11.0+cu130, a CUDA 13.0 build) sees 1 GPU (sm_90), each gives the right matrix product"
    )
    assert verdict["devices"] == [
        {"index": 0, "name": "NVIDIA H200", "arch": "sm_90", "matmul_ok": True, "max_abs_error": 1.19981343686959e-05}
    ]
    assert verdict["torch"] == "2.11.0+cu130" and verdict["build"] == "cuda"


def test_h200_expected_as_gfx942_fails_naming_both_architectures():
    verdict = smoke_run_verdict(run_of(H200), expected_count=1, expected_archs=["gfx942"])
    assert verdict["status"] == "fail"
    assert verdict["reason"] == "expected gfx942, device 0 (NVIDIA H200) reports sm_90 (CUDA build)"


def test_h200_expected_as_an_8x_mi300x_fails_on_count_and_architecture():
    verdict = smoke_run_verdict(run_of(H200), expected_count=8, expected_archs="gfx942")
    assert verdict["status"] == "fail"
    assert verdict["reason"] == (
        "PyTorch sees 1 GPU, expected 8; expected gfx942, device 0 (NVIDIA H200) reports sm_90 (CUDA build)"
    )


def test_h200_with_no_visible_device_sees_no_gpu_and_names_the_variable():
    verdict = smoke_run_verdict(run_of(H200_NO_VISIBLE), expected_count=1)
    assert verdict["status"] == "fail"
    assert verdict["reason"] == (
        "PyTorch sees no GPU (torch 2.11.0+cu130, a CUDA 13.0 build): torch.cuda.is_available() is False"
        " (CUDA_VISIBLE_DEVICES='' set)"
    )


def test_h200_product_over_its_tolerance_names_the_device_and_says_the_cpu_misses_it_too():
    verdict = smoke_run_verdict(run_of(H200_TIGHT), expected_count=1)
    assert verdict["status"] == "fail"
    assert verdict["reason"] == (
        "device 0 (NVIDIA H200): the matrix product is off by 1.2e-05 (tolerance 1e-07); the CPU's own float32"
        " product is off by 1.63e-05 too: the tolerance is below float32's error"
    )
    assert verdict["devices"][0]["matmul_ok"] is False


# --- CPU only: torch 2.13.0+cpu, and no torch ----------------------------------------------------


def test_cpu_only_build_sees_no_gpu_and_names_the_build():
    verdict = smoke_run_verdict(run_of(CPU_ONLY), expected_count=8, expected_archs="gfx942")
    assert verdict["status"] == "fail"
    assert verdict["reason"] == "PyTorch sees no GPU (torch 2.13.0+cpu, a CPU-only build)"
    assert verdict["build"] == "cpu" and verdict["device_count"] == 0


def test_cpu_only_build_passes_where_no_gpu_is_expected():
    verdict = smoke_run_verdict(run_of(CPU_ONLY), expected_count=0, expected_archs="")
    assert verdict["status"] == "pass"
    assert verdict["reason"] == "no GPU expected and PyTorch sees none (torch 2.13.0+cpu, a CPU-only build)"


def test_a_python_without_torch_fails_naming_the_interpreter_and_the_import_error():
    verdict = smoke_run_verdict(run_of(NO_TORCH), expected_count=0)
    assert verdict["status"] == "fail"
    assert verdict["reason"] == (
        "PyTorch does not import in /root/.pyenv/versions/3.11.7/bin/python3: ModuleNotFoundError: No module named"
        " 'torch'"
    )


# --- ROCm: the H200 document edited as a HIP build reports (no AMD GPU at hand) -----------------


def test_rocm_8x_mi300x_passes_with_feature_flags_in_the_arch_name():
    verdict = smoke_verdict(as_rocm(document(H200), 8), expected_count=8, expected_archs="gfx942")
    assert verdict["status"] == "pass", verdict
    assert verdict["reason"].startswith("PyTorch (torch 2.5.1+rocm6.2, a ROCm build (HIP 6.2.41133-dd7f95766)) sees 8")


def test_rocm_mi300x_cpx_expects_the_logical_count_and_names_a_missing_partition():
    report = as_rocm(document(H200), 63)  # 8x MI300X in CPX mode: 64 logical devices, one not enumerated
    verdict = smoke_verdict(report, expected_count=64, expected_archs=["gfx942"])
    assert verdict["status"] == "fail"
    assert verdict["reason"] == "PyTorch sees 63 GPUs, expected 64"
    report["environment"]["HIP_VISIBLE_DEVICES"] = "0,1,2"
    assert smoke_verdict(report, 64, ["gfx942"])["reason"] == (
        "PyTorch sees 63 GPUs, expected 64 (HIP_VISIBLE_DEVICES='0,1,2' set)"
    )


def test_rocm_wrong_architecture_names_the_device():
    report = as_rocm(document(H200), 2)
    report["devices"][1].update(arch="gfx90a", gcn_arch_name="gfx90a:sramecc+:xnack-", name="AMD Instinct MI210")
    verdict = smoke_verdict(report, 2, "gfx942")
    assert verdict["reason"] == "expected gfx942, device 1 (AMD Instinct MI210) reports gfx90a"
    assert smoke_verdict(report, 2, "gfx90a;gfx942")["status"] == "pass"


def test_rocm_device_whose_product_fails_or_is_not_finite_is_named():
    report = as_rocm(document(H200), 3)
    report["devices"][1]["matmul"].update(ok=False, max_abs_error=None, error="RuntimeError: HIP error: an illegal"
                                          " memory access was encountered")
    report["devices"][2]["matmul"].update(ok=False, max_abs_error=None, finite=False)
    verdict = smoke_verdict(report, 3, ["gfx942"])
    assert verdict["status"] == "fail"
    assert verdict["reason"] == (
        "device 1 (AMD Instinct MI300X): the matrix product failed: RuntimeError: HIP error: an illegal memory access"
        " was encountered; device 2 (AMD Instinct MI300X): the matrix product gives non-finite values"
    )


# --- runs that printed no document ---------------------------------------------------------------


def test_a_timed_out_run_fails_and_a_missing_interpreter_fails_naming_it():
    timed_out = smoke_run_verdict({"rc": 124, "stdout": "", "stderr": ""}, 8, "gfx942", timeout=300)
    assert timed_out["status"] == "fail"
    assert timed_out["reason"] == "the smoke test did not finish within 300 s (a GPU that hangs?): (nothing)"
    missing = smoke_run_verdict(
        {"rc": 127, "stdout": "", "stderr": "timeout: failed to run command '/opt/venv/bin/python': No such file or"
                                            " directory"}, 8, python="/opt/venv/bin/python")
    assert missing["status"] == "fail"
    assert missing["reason"].startswith("the Python interpreter /opt/venv/bin/python was not found: timeout: failed")


def test_output_that_is_no_document_is_unknown_with_the_exit_status_and_stderr():
    crashed = smoke_run_verdict({"rc": 139, "stdout": "", "stderr": "Segmentation fault (core dumped)"}, 8)
    assert crashed["status"] == "unknown"
    assert crashed["reason"] == "the smoke test printed nothing (exit 139); stderr: Segmentation fault (core dumped)"
    other = smoke_run_verdict({"rc": 0, "stdout": '{"schema": "other/1"}'}, 8)
    assert other["status"] == "unknown" and "schema 'other/1'" in other["reason"]
    assert smoke_run_verdict({"rc": 0, "stdout": "hello"}, 8)["status"] == "unknown"
    with pytest.raises(SmokeOutputError, match="no JSON document: hello"):
        parse_smoke_output("hello")


def test_a_line_printed_before_the_document_does_not_hide_it():
    noisy = "some library said hello\n" + printed(CPU_ONLY)
    assert smoke_run_verdict(noisy, 8)["reason"] == "PyTorch sees no GPU (torch 2.13.0+cpu, a CPU-only build)"


def test_an_error_inside_the_script_is_unknown():
    report = document(CPU_ONLY)
    report.update(error="MemoryError: ", where="rocm_fleet_gpu_smoke.py:97 in _inputs")
    verdict = smoke_verdict(report, 8)
    assert verdict["status"] == "unknown"
    assert verdict["reason"] == "the smoke test stopped: MemoryError:  (rocm_fleet_gpu_smoke.py:97 in _inputs)"


# --- expectations and the compliance shape -------------------------------------------------------


def test_expected_architectures_and_count_are_normalised_or_refused():
    assert normalize_archs("gfx90a;gfx942:sramecc+:xnack-") == ["gfx90a", "gfx942"]
    assert normalize_archs(["gfx1100", "gfx1100"]) == ["gfx1100"]
    assert normalize_archs(None) == [] and normalize_archs("") == []
    assert smoke_verdict(document(H200), "1")["status"] == "pass"
    for bad in (True, -1, "eight", 1.5):
        with pytest.raises(ValueError, match="expected_count"):
            smoke_verdict(document(H200), bad)


def test_check_workload_smoke_has_the_shape_of_a_compliance_check():
    status, actual, message = check_workload_smoke({"count": 8, "gfx_targets": ["gfx942"]}, run_of(CPU_ONLY))
    assert (status, message) == ("fail", "PyTorch sees no GPU (torch 2.13.0+cpu, a CPU-only build)")
    assert actual["torch"] == "2.13.0+cpu" and actual["expected"] == {"count": 8, "archs": ["gfx942"]}
    status, actual, message = check_workload_smoke({"count": 1}, document(H200))
    assert status == "pass" and actual["devices"][0]["arch"] == "sm_90"
    assert check_workload_smoke(None, {"rc": 0, "stdout": ""})[0] == "unknown"
    with pytest.raises(ValueError, match="mapping"):
        check_workload_smoke(["gfx942"], document(H200))


def test_every_fixture_is_one_json_line_of_the_schema():
    for path in sorted(SMOKE.glob("*.json")):
        lines = path.read_text().splitlines()
        assert len(lines) == 1, path.name
        assert json.loads(lines[0])["schema"] == "rocm_fleet_gpu_smoke/1", path.name
