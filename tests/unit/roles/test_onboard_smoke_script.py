"""roles/onboard/files/rocm_fleet_gpu_smoke.py as a host runs it: one JSON document on stdout, exit 0, no traceback.

CI has no PyTorch: these runs put a stand-in ``torch`` package (FAKE_TORCH below, pure Python,
the few calls the script makes) first on PYTHONPATH, and judge what the script printed with
workload_smoke. What the script printed with the real PyTorch on an H200 and a CPU-only build
is in tests/fixtures/generated/workload-smoke/ (test_workload_smoke.py).
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.rollout.workload_smoke import smoke_run_verdict

SCRIPT = Path(__file__).resolve().parents[3] / "roles" / "onboard" / "files" / "rocm_fleet_gpu_smoke.py"

FAKE_TORCH = '''
import math, os, random, warnings
MODE = os.environ["FAKE_TORCH"]
if MODE == "import-error":
    raise OSError("libamdhip64.so.6: cannot open shared object file: No such file or directory")
os.write(1, b"a runtime writing to fd 1\\n")
print("a library printing to sys.stdout")
__version__ = "2.13.0+cpu" if MODE == "cpu" else "2.5.1+rocm6.2"
float32 = "float32"

class version:
    hip = None if MODE == "cpu" else "6.2.41133-dd7f95766"
    cuda = None
    git_version = "fake"

class Generator:
    def manual_seed(self, seed):
        self.random = random.Random(seed)
        return self

class _Scalar:
    def __init__(self, value):
        self.value = value
    def item(self):
        return self.value

class Tensor:
    def __init__(self, rows, where=None):
        self.rows, self.where = rows, where
    def _map(self, function):
        return Tensor([[function(x) for x in row] for row in self.rows], self.where)
    def __mul__(self, factor):
        return self._map(lambda x: x * factor)
    def __sub__(self, other):
        if isinstance(other, Tensor):
            return Tensor([[a - b for a, b in zip(r, s)] for r, s in zip(self.rows, other.rows)], self.where)
        return self._map(lambda x: x - other)
    def double(self):
        return self
    def to(self, where):
        if where.index == 2:
            raise RuntimeError("HIP error: an illegal memory access was encountered")
        return Tensor(self.rows, where)
    def cpu(self):
        return Tensor(self.rows)
    def abs(self):
        return self._map(abs)
    def max(self):
        return _Scalar(max(max(row) for row in self.rows))
    def all(self):
        return _Scalar(all(all(row) for row in self.rows))

def rand(shape, generator, dtype):
    return Tensor([[generator.random.random() for _ in range(shape[1])] for _ in range(shape[0])])

def matmul(a, b):
    wrong = 0.5 if a.where is not None and a.where.index == 1 else 0.0
    columns = list(zip(*b.rows))
    return Tensor([[sum(x * y for x, y in zip(row, col)) + wrong for col in columns] for row in a.rows], a.where)

def isfinite(tensor):
    return tensor._map(math.isfinite)

def set_float32_matmul_precision(precision):
    pass

class device:
    def __init__(self, kind, index):
        self.kind, self.index = kind, index

class backends:
    class cuda:
        class matmul:
            allow_tf32 = True

class _Props:
    def __init__(self, index):
        self.name, self.gcnArchName = "AMD Instinct MI300X", "gfx942:sramecc+:xnack-"
        self.major, self.minor, self.total_memory, self.multi_processor_count = 9, 4, 205822885888, 304

class cuda:
    @staticmethod
    def is_available():
        if MODE == "rocm-no-gpu":
            warnings.warn("HIP initialization: Unexpected error from hipGetDeviceCount()")
            return False
        return MODE != "cpu"
    @staticmethod
    def device_count():
        return 3
    @staticmethod
    def get_device_properties(index):
        return _Props(index)
    @staticmethod
    def synchronize(where):
        pass
'''


def run_script(tmp_path, mode, *args):
    (tmp_path / "torch").mkdir(exist_ok=True)
    (tmp_path / "torch" / "__init__.py").write_text(FAKE_TORCH)
    env = dict(os.environ, FAKE_TORCH=mode, PYTHONPATH=str(tmp_path), HIP_VISIBLE_DEVICES="0,1,2")
    done = subprocess.run([sys.executable, str(SCRIPT), "--size", "4", *args], env=env, capture_output=True,
                          text=True, timeout=60, check=False)
    return {"rc": done.returncode, "stdout": done.stdout, "stderr": done.stderr}


def test_stdout_is_one_document_even_when_the_runtime_prints_there(tmp_path):
    run = run_script(tmp_path, "rocm")
    assert run["rc"] == 0 and "Traceback" not in run["stderr"], run
    assert len(run["stdout"].splitlines()) == 1, run["stdout"]
    assert "a runtime writing to fd 1" in run["stderr"] and "a library printing to sys.stdout" in run["stderr"]
    report = json.loads(run["stdout"])
    assert report["schema"] == "rocm_fleet_gpu_smoke/1"
    assert report["build"]["kind"] == "rocm" and report["device_count"] == 3
    assert [device["arch"] for device in report["devices"]] == ["gfx942"] * 3
    assert report["devices"][0]["gcn_arch_name"] == "gfx942:sramecc+:xnack-"
    assert report["environment"] == {"HIP_VISIBLE_DEVICES": "0,1,2"}
    assert report["matmul"]["size"] == 4 and report["cpu_matmul"]["ok"] is True


def test_a_wrong_and_a_failing_device_are_results_that_name_the_device(tmp_path):
    run = run_script(tmp_path, "rocm")
    devices = json.loads(run["stdout"])["devices"]
    assert devices[0]["matmul"]["ok"] is True
    assert devices[1]["matmul"]["ok"] is False and devices[1]["matmul"]["max_abs_error"] == pytest.approx(0.5)
    assert devices[2]["matmul"]["error"] == "RuntimeError: HIP error: an illegal memory access was encountered"
    verdict = smoke_run_verdict(run, expected_count=3, expected_archs="gfx942")
    assert verdict["status"] == "fail"
    assert verdict["reason"] == (
        "device 1 (AMD Instinct MI300X): the matrix product is off by 0.5 (tolerance 0.001); "
        "device 2 (AMD Instinct MI300X): the matrix product failed: RuntimeError: HIP error: an illegal memory access"
        " was encountered"
    )


def test_a_torch_that_does_not_import_is_a_result(tmp_path):
    run = run_script(tmp_path, "import-error")
    assert run["rc"] == 0 and "Traceback" not in run["stderr"]
    report = json.loads(run["stdout"])
    assert report["torch"]["imported"] is False
    verdict = smoke_run_verdict(run, expected_count=8)
    assert verdict["reason"] == "PyTorch does not import in %s: OSError: libamdhip64.so.6: cannot open shared object" \
        " file: No such file or directory" % sys.executable


def test_a_rocm_build_that_sees_no_gpu_reports_the_runtime_warning(tmp_path):
    run = run_script(tmp_path, "rocm-no-gpu")
    verdict = smoke_run_verdict(run, expected_count=8, expected_archs="gfx942")
    assert verdict["status"] == "fail"
    assert verdict["reason"] == (
        "PyTorch sees no GPU (torch 2.5.1+rocm6.2, a ROCm build (HIP 6.2.41133-dd7f95766)): torch.cuda.is_available()"
        " is False (HIP_VISIBLE_DEVICES='0,1,2' set), HIP initialization: Unexpected error from hipGetDeviceCount()"
    )


def test_a_cpu_only_build_and_bad_arguments_still_give_a_document(tmp_path):
    run = run_script(tmp_path, "cpu", "--tolerance", "x", "--bogus")
    report = json.loads(run["stdout"])
    assert report["warnings"][:2] == ["not a number for --tolerance: x", "unknown or incomplete argument: --bogus"]
    assert smoke_run_verdict(run, 8)["reason"] == "PyTorch sees no GPU (torch 2.13.0+cpu, a CPU-only build)"
