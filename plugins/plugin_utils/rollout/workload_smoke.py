# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The workload smoke test's verdict: what PyTorch in the site's environment sees, judged.

roles/onboard/files/rocm_fleet_gpu_smoke.py, run on the host by the site's Python,
prints one JSON document (schema ``rocm_fleet_gpu_smoke/1``). These functions
judge it against what the host should have, and change nothing:

* parse_smoke_output(stdout): the document, or SmokeOutputError.
* smoke_verdict(report, expected_count, expected_archs): {status, reason, ...},
  status ``pass``, ``fail`` or ``unknown`` (the output cannot be judged).
* smoke_run_verdict(run, expected_count, expected_archs): the same for a
  command's result ({rc, stdout, stderr}), a timed-out or missing interpreter included.
* check_workload_smoke(expected, run): (status, actual, message), the shape of
  a compliance check (``expected``: {count, gfx_targets}).

``expected_count`` is the number of devices the runtime enumerates: logical
devices, so an 8x MI300X in CPX mode expects 64 (preflight_decision.gpu_count).
``expected_archs`` are the gfx targets PyTorch reports, overrides applied
(preflight_decision.pytorch_rocm_arch, "gfx90a;gfx942" or a list); feature
suffixes (gfx942:sramecc+:xnack-) are ignored. None or empty: not checked.

Stdlib only (runs on managed hosts too).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

SCHEMA = "rocm_fleet_gpu_smoke/1"
# Exit statuses of coreutils timeout(1) and of a shell: the run's own failure.
TIMED_OUT = (124, 137)
NOT_RUN = {126: "is not executable", 127: "was not found"}
VISIBILITY = ("HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL")


class SmokeOutputError(ValueError):
    pass


def parse_smoke_output(stdout):
    """The smoke document in ``stdout`` (the whole output, else its last line that is a JSON object)."""
    text = (stdout or "").strip()
    if not text:
        raise SmokeOutputError("the smoke test printed nothing")
    candidates = [text] + [line.strip() for line in reversed(text.splitlines()) if line.strip().startswith("{")]
    for candidate in candidates:
        try:
            report = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(report, dict):
            if report.get("schema") != SCHEMA:
                raise SmokeOutputError("not a %s document (schema %r)" % (SCHEMA, report.get("schema")))
            return report
    raise SmokeOutputError("the smoke test printed no JSON document: %s" % _tail(text))


def _tail(text, lines=3):
    kept = [line.strip() for line in str(text or "").strip().splitlines() if line.strip()][-lines:]
    return " | ".join(kept) or "(nothing)"


def base_arch(arch):
    """'gfx942' of 'gfx942:sramecc+:xnack-'; None stays None."""
    if arch is None:
        return None
    return str(arch).strip().split(":", 1)[0] or None


def normalize_archs(expected_archs):
    """A sorted list of base targets from a list or a ';'/','-separated string; [] when none."""
    if expected_archs is None:
        return []
    if isinstance(expected_archs, (list, tuple, set)):
        items = list(expected_archs)
    else:
        items = str(expected_archs).replace(",", ";").split(";")
    return sorted(set(base_arch(item) for item in items if base_arch(item)))


def describe_build(report):
    """'torch 2.13.0+cpu, a CPU-only build', '... a CUDA 13.0 build', '... a ROCm build (HIP 6.2.41133)'."""
    version = (report.get("torch") or {}).get("version") or "?"
    build = report.get("build") or {}
    kind = build.get("kind")
    if kind == "rocm":
        what = "a ROCm build (HIP %s)" % build.get("hip")
    elif kind == "cuda":
        what = "a CUDA %s build" % build.get("cuda")
    else:
        what = "a CPU-only build"
    return "torch %s, %s" % (version, what)


def _device_label(device):
    name = device.get("name")
    return "device %s (%s)" % (device.get("index"), name) if name else "device %s" % device.get("index")


def _visibility_note(report):
    env = report.get("environment") or {}
    set_here = ["%s=%r" % (name, env[name]) for name in VISIBILITY if name in env]
    return " (%s set)" % ", ".join(set_here) if set_here else ""


def _arch_problem(device, kind, expected):
    arch = base_arch(device.get("arch"))
    if not expected:
        return None
    if kind != "rocm":
        return "expected %s, %s reports %s (%s build)" % (
            " or ".join(expected), _device_label(device), arch or "no architecture", (kind or "cpu").upper())
    if arch not in expected:
        return "expected %s, %s reports %s" % (" or ".join(expected), _device_label(device), arch or "no architecture")
    return None


def _number(value):
    return "%.3g" % value if isinstance(value, float) else str(value)


def _matmul_problem(device, report):
    matmul = device.get("matmul") or {}
    tolerance = (report.get("matmul") or {}).get("tolerance")
    if matmul.get("error"):
        return "%s: the matrix product failed: %s" % (_device_label(device), matmul["error"])
    if matmul.get("finite") is False:
        return "%s: the matrix product gives non-finite values" % _device_label(device)
    if not matmul.get("ok"):
        problem = "%s: the matrix product is off by %s (tolerance %s)" % (
            _device_label(device), _number(matmul.get("max_abs_error")), _number(tolerance))
        cpu = report.get("cpu_matmul") or {}
        if cpu and not cpu.get("ok"):
            problem += "; the CPU's own float32 product is off by %s too: the tolerance is below float32's error" % (
                _number(cpu.get("max_abs_error")))
        return problem
    return None


def _summary(report, expected_count, expected):
    devices = report.get("devices") or []
    return {
        "torch": (report.get("torch") or {}).get("version"),
        "build": (report.get("build") or {}).get("kind"),
        "python": (report.get("python") or {}).get("executable"),
        "device_count": len(devices),
        "devices": [
            {"index": device.get("index"), "name": device.get("name"), "arch": base_arch(device.get("arch")),
             "matmul_ok": bool((device.get("matmul") or {}).get("ok")),
             "max_abs_error": (device.get("matmul") or {}).get("max_abs_error")}
            for device in devices
        ],
        "expected": {"count": expected_count, "archs": expected},
    }


def _verdict(status, reason, summary):
    result = dict(summary)
    result.update(status=status, reason=reason)
    return result


def _expected_count(expected_count):
    if expected_count in (None, ""):
        return None
    if isinstance(expected_count, bool):
        raise ValueError("expected_count must be a number of devices, got %r" % (expected_count,))
    text = str(expected_count).strip()
    if not text.isdigit():
        raise ValueError("expected_count must be a number of devices (0 or more), got %r" % (expected_count,))
    return int(text)


def smoke_verdict(report, expected_count=None, expected_archs=None):
    """{status, reason, torch, build, python, device_count, devices, expected} of one smoke document.

    ValueError for an expected count that is not a number; a report that is not a
    smoke document is ``unknown``.
    """
    count = _expected_count(expected_count)
    expected = normalize_archs(expected_archs)
    if not isinstance(report, dict) or report.get("schema") != SCHEMA:
        return _verdict("unknown", "not a %s document" % SCHEMA, _summary({}, count, expected))
    summary = _summary(report, count, expected)
    python = (report.get("python") or {}).get("executable") or "the site's Python"
    torch = report.get("torch") or {}
    if report.get("error"):
        return _verdict("unknown", "the smoke test stopped: %s (%s)" % (report["error"], report.get("where")), summary)
    if not torch.get("imported"):
        return _verdict("fail", "PyTorch does not import in %s: %s" % (python, torch.get("error") or "?"), summary)
    devices = report.get("devices") or []
    build = describe_build(report)
    if not devices:
        if count == 0:
            return _verdict("pass", "no GPU expected and PyTorch sees none (%s)" % build, summary)
        why = ""
        if (report.get("build") or {}).get("kind") not in (None, "cpu"):
            warned = [text for text in report.get("warnings") or [] if text]
            why = ": torch.cuda.is_available() is %s%s%s" % (
                report.get("cuda_available"), _visibility_note(report), (", " + warned[0]) if warned else "")
        return _verdict("fail", "PyTorch sees no GPU (%s)%s" % (build, why), summary)
    kind = (report.get("build") or {}).get("kind")
    problems = []
    if count is not None and len(devices) != count:
        problems.append("PyTorch sees %d GPU%s, expected %d%s" % (
            len(devices), "" if len(devices) == 1 else "s", count, _visibility_note(report)))
    for device in devices:
        if device.get("error"):
            problems.append("%s: its properties cannot be read: %s" % (_device_label(device), device["error"]))
        problem = _arch_problem(device, kind, expected)
        if problem:
            problems.append(problem)
        problem = _matmul_problem(device, report)
        if problem:
            problems.append(problem)
    if problems:
        return _verdict("fail", "; ".join(problems), summary)
    archs = sorted(set(base_arch(device.get("arch")) or "?" for device in devices))
    return _verdict("pass", "PyTorch (%s) sees %d GPU%s (%s), each gives the right matrix product" % (
        build, len(devices), "" if len(devices) == 1 else "s", ", ".join(archs)), summary)


def smoke_run_verdict(run, expected_count=None, expected_archs=None, timeout=None, python=None):
    """The verdict of a command's result ({rc, stdout, stderr}) that ran the smoke script.

    A run stopped by timeout(1) (rc 124 or 137) fails: a device that hangs is a
    failed device. An interpreter that is missing or not executable (rc 127, 126)
    fails: the job environment does not run. Output that is no document is ``unknown``.
    """
    count = _expected_count(expected_count)
    expected = normalize_archs(expected_archs)
    run = run if isinstance(run, dict) else {"rc": 0, "stdout": run}
    rc = run.get("rc")
    stderr = run.get("stderr") or ""
    if rc in TIMED_OUT:
        return _verdict("fail", "the smoke test did not finish within %s s (a GPU that hangs?): %s" % (
            timeout if timeout is not None else "its time limit", _tail(stderr)), _summary({}, count, expected))
    if rc in NOT_RUN:
        return _verdict("fail", "the Python interpreter %s %s: %s" % (
            python or "of the smoke test", NOT_RUN[rc], _tail(stderr)), _summary({}, count, expected))
    try:
        report = parse_smoke_output(run.get("stdout"))
    except SmokeOutputError as error:
        reason = "%s (exit %s)" % (error, rc) if rc not in (None, 0) else str(error)
        if stderr.strip():
            reason += "; stderr: %s" % _tail(stderr)
        return _verdict("unknown", reason, _summary({}, count, expected))
    return smoke_verdict(report, count, expected)


def check_workload_smoke(expected, run):
    """(status, actual, message) for a compliance check: ``expected`` {count, gfx_targets} (both optional).

    ``run`` is the command's result or the parsed document; ``actual`` is the
    verdict's summary (torch version, build, each device's arch and matrix product).
    """
    expected = expected or {}
    if not isinstance(expected, dict):
        raise ValueError("the workload smoke expectation must be a mapping {count, gfx_targets}")
    if isinstance(run, dict) and "schema" in run:
        verdict = smoke_verdict(run, expected.get("count"), expected.get("gfx_targets"))
    else:
        verdict = smoke_run_verdict(run, expected.get("count"), expected.get("gfx_targets"))
    actual = dict((key, value) for key, value in verdict.items() if key not in ("status", "reason"))
    return verdict["status"], actual, verdict["reason"]
