# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""rocm-fleet's workload smoke test: what PyTorch in this Python environment sees.

Run by the site's own interpreter (the environment its jobs use), it prints ONE
JSON document on stdout and exits 0, whatever it finds: a PyTorch that does not
import, a CPU-only build, no visible GPU or a device whose matrix product is
wrong are results with a message, never a traceback. ROCm (HIP) builds of
PyTorch answer through the same ``torch.cuda`` API as CUDA builds.

For each device: its name, its architecture (``gcnArchName`` without its
feature flags on a HIP build, e.g. gfx942; ``sm_<major><minor>`` on a CUDA
build) and an ``n`` x ``n`` float32 matrix product of fixed-seed inputs,
compared with a float64 product on the CPU (max abs error against a tolerance).
The verdict is not made here: plugins/plugin_utils/rollout/workload_smoke.py judges the
document against what the host should have.

Usage: python rocm_fleet_gpu_smoke.py [--size N] [--seed S] [--tolerance T]
Stdlib and torch only; Python 3.8 or later.
"""

import json
import os
import platform
import sys
import time
import traceback
import warnings

SCHEMA = "rocm_fleet_gpu_smoke/1"
DEFAULTS = {"size": 512, "seed": 20240611, "tolerance": 1e-3}
# Variables that change what the runtime shows a job (reported, never changed).
ENVIRONMENT = (
    "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL",
    "HSA_OVERRIDE_GFX_VERSION", "PYTORCH_ROCM_ARCH", "ROCM_PATH", "HIP_PLATFORM",
)


def _error_text(error):
    text = str(error).strip().splitlines()
    return "%s: %s" % (type(error).__name__, text[0] if text else "")


def _last_frame(error):
    frames = traceback.extract_tb(error.__traceback__)
    if not frames:
        return None
    frame = frames[-1]
    return "%s:%s in %s" % (os.path.basename(frame.filename), frame.lineno, frame.name)


def _parse_args(argv):
    options = dict(DEFAULTS)
    problems = []
    index = 0
    while index < len(argv):
        name = argv[index]
        key = name[2:] if name.startswith("--") else None
        if key not in options or index + 1 >= len(argv):
            problems.append("unknown or incomplete argument: %s" % name)
            index += 1
            continue
        try:
            options[key] = (float if key == "tolerance" else int)(argv[index + 1])
        except ValueError:
            problems.append("not a number for %s: %s" % (name, argv[index + 1]))
        index += 2
    if options["size"] < 1 or options["tolerance"] <= 0:
        problems.append("size must be at least 1 and tolerance above 0")
        options.update(size=DEFAULTS["size"], tolerance=DEFAULTS["tolerance"])
    return options, problems


def _caught_warnings(caught):
    return [str(item.message).strip() for item in caught]


def _build(torch):
    hip = getattr(torch.version, "hip", None)
    cuda = getattr(torch.version, "cuda", None)
    kind = "rocm" if hip else "cuda" if cuda else "cpu"
    return {"kind": kind, "hip": hip, "cuda": cuda, "git_version": getattr(torch.version, "git_version", None)}


def _arch(props, kind):
    """(arch, raw gcnArchName, compute capability): gfx942 from 'gfx942:sramecc+:xnack-' on HIP, sm_90 on CUDA."""
    raw = getattr(props, "gcnArchName", None)
    raw = str(raw) if raw is not None else None
    capability = "%s.%s" % (getattr(props, "major", "?"), getattr(props, "minor", "?"))
    if kind == "rocm" and raw:
        return raw.split(":", 1)[0], raw, capability
    if kind == "cuda":
        return "sm_%s%s" % (getattr(props, "major", "?"), getattr(props, "minor", "?")), raw, capability
    return None, raw, capability


def _inputs(torch, size, seed):
    generator = torch.Generator().manual_seed(seed)
    left = torch.rand((size, size), generator=generator, dtype=torch.float32) * 2 - 1
    right = torch.rand((size, size), generator=generator, dtype=torch.float32) * 2 - 1
    reference = torch.matmul(left.double(), right.double())
    return left, right, reference


def _compare(torch, product, reference, tolerance):
    product = product.double()
    finite = bool(torch.isfinite(product).all().item())
    error = float((product - reference).abs().max().item()) if finite else None
    return {
        "finite": finite,
        "max_abs_error": error,
        "ok": finite and error is not None and error <= tolerance,
    }


def _matmul_on(torch, index, left, right, reference, tolerance):
    result = {"ok": False, "max_abs_error": None, "finite": None, "seconds": None, "error": None}
    try:
        device = torch.device("cuda", index)
        started = time.time()
        product = torch.matmul(left.to(device), right.to(device))
        torch.cuda.synchronize(device)
        product = product.cpu()
        result["seconds"] = round(time.time() - started, 4)
        result.update(_compare(torch, product, reference, tolerance))
    except Exception as error:  # a failing device is a result
        result["error"] = _error_text(error)
        result["where"] = _last_frame(error)
    return result


def _device(torch, index, kind, inputs, tolerance):
    device = {"index": index, "name": None, "arch": None}
    try:
        props = torch.cuda.get_device_properties(index)
        arch, raw, capability = _arch(props, kind)
        uuid = getattr(props, "uuid", None)
        device.update(
            name=str(getattr(props, "name", "")) or None,
            arch=arch,
            gcn_arch_name=raw,
            compute_capability=capability,
            total_memory_bytes=int(getattr(props, "total_memory", 0)) or None,
            multi_processor_count=getattr(props, "multi_processor_count", None),
            uuid=str(uuid) if uuid is not None else None,
        )
    except Exception as error:  # a device that cannot be read is a result
        device["error"] = _error_text(error)
    device["matmul"] = _matmul_on(torch, index, inputs[0], inputs[1], inputs[2], tolerance)
    return device


def _torch_report(report, options):
    try:
        import torch
    except Exception as error:  # ImportError, or a broken install raising anything else
        report["torch"] = {"imported": False, "error": _error_text(error), "where": _last_frame(error)}
        report["message"] = "PyTorch does not import in %s: %s" % (sys.executable, _error_text(error))
        return
    build = _build(torch)
    report["torch"] = {"imported": True, "version": str(torch.__version__), "file": getattr(torch, "__file__", None)}
    report["build"] = build
    # Full float32 products: TF32 would miss the tolerance on a healthy GPU.
    try:
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.set_float32_matmul_precision("highest")
    except Exception as error:
        report["warnings"].append("could not set float32 matmul precision: %s" % _error_text(error))
    inputs = _inputs(torch, options["size"], options["seed"])
    report["cpu_matmul"] = _compare(torch, torch.matmul(inputs[0], inputs[1]), inputs[2], options["tolerance"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            report["cuda_available"] = bool(torch.cuda.is_available())
            report["device_count"] = int(torch.cuda.device_count()) if report["cuda_available"] else 0
        except Exception as error:
            report["cuda_available"], report["device_count"] = False, 0
            report["cuda_error"] = _error_text(error)
    report["warnings"].extend(_caught_warnings(caught))
    report["devices"] = [
        _device(torch, index, build["kind"], inputs, options["tolerance"]) for index in range(report["device_count"])
    ]


def collect(argv):
    """The report for the arguments ``argv``; never raises."""
    options, problems = _parse_args(argv)
    report = {
        "schema": SCHEMA,
        "python": {"executable": sys.executable, "version": platform.python_version()},
        "host": platform.node(),
        "environment": dict((name, os.environ[name]) for name in ENVIRONMENT if name in os.environ),
        "matmul": {"size": options["size"], "seed": options["seed"], "tolerance": options["tolerance"],
                   "dtype": "float32", "reference": "float64 on the CPU"},
        "torch": {"imported": False},
        "build": None,
        "cuda_available": False,
        "device_count": 0,
        "devices": [],
        "warnings": problems,
        "message": None,
    }
    started = time.time()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            _torch_report(report, options)
        report["warnings"].extend(_caught_warnings(caught))
    except BaseException as error:  # nothing may end the report but the report
        report["error"] = _error_text(error)
        report["where"] = _last_frame(error)
    report["seconds"] = round(time.time() - started, 3)
    return report


def main(argv):
    # Libraries may print to fd 1 (the HIP runtime's own messages, say): while the
    # test runs, fd 1 is stderr, so stdout carries the JSON document alone.
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    try:
        report = collect(argv)
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)
    sys.stdout.write(json.dumps(report, sort_keys=True) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
