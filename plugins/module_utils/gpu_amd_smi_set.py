# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The output of ``amd-smi set --memory-partition`` / ``--compute-partition`` as per-GPU results.

parse_partition_set(text, rc=None, expected_gpus=None) -> {
    "status": "ok" | "partial" | "failed",
    "changed": bool,                 # at least one GPU reported its mode as set
    "set": {gpu_id: {"kind": "memory"|"compute", "mode": "NPS4", "profile": 3 or None}},
    "failed": {gpu_id: {"kind", "mode", "status", "code", "bdf", "message"}},
    "unreported": [gpu_id, ...],     # expected GPUs the output says nothing about
    "error": None or {"status", "code", "exception", "message"},
    "crashed": bool,                 # the tool raised after it had reported some GPUs
    "prompted": bool,                # it printed its [Y/N] confirmation
    "message": str,                  # one sentence for a task's msg
}

The forms, from AMD's partitioning guides (shared captures): ``GPU: n`` blocks with
``MEMORY_PARTITION: Successfully set memory partition to NPS4`` or ``ACCELERATOR_PARTITION:
Successfully set accelerator partition to CPX (profile #3)``; a Python exception chain
(``amdsmi.amdsmi_exception.AmdSmiLibraryException: Error code:`` then ``55 |
AMDSMI_STATUS_SETTING_UNAVAILABLE - Setting is not available``, ``ValueError: ... on GPU ID: 0
BDF:0000:11:00.0``, ``PermissionError: Command requires elevation``); and a crash after some
GPUs were reported (``OSError: [Errno 24] Too many open files``), which is partial: AMD says the
mode is set on all GPUs despite it, so the caller confirms from the facts. A GPU ID is amd-smi's
logical index at the time of the command.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu_partitions import number_ranges

_GPU = re.compile(r"^\s*GPU:\s*(\d+)\s*$")
_SUCCESS = re.compile(
    r"^\s*(MEMORY|ACCELERATOR|COMPUTE)_PARTITION:\s*Successfully set (?:memory|accelerator|compute) partition to "
    r"([A-Z0-9]+)(?:\s*\(profile #(\d+)\))?", re.I)
_STATUS = re.compile(r"^\s*(\d+)\s*\|\s*(AMDSMI_STATUS_[A-Z_]+)\s*(?:-\s*(.*))?$")
_BRACKETED = re.compile(r"\[(AMDSMI_STATUS_[A-Z_]+)\]")
_ON_GPU = re.compile(r"GPU ID:\s*(\d+)(?:\s*BDF:\s*([0-9a-fA-F:.]+))?")
_EXCEPTION = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception)):\s*(.*)$")
_KIND = re.compile(r"\b(memory|accelerator|compute) partition\b", re.I)
_MODE = re.compile(r"partition to ([A-Z]{3}\d?)\b")
_KINDS = {"memory": "memory", "accelerator": "compute", "compute": "compute"}


def parse_partition_set(text, rc=None, expected_gpus=None):
    """Per-GPU results of one ``amd-smi set`` partition command (see the module docstring)."""
    lines = str(text or "").replace("\r", "\n").splitlines()
    result = {"status": "ok", "changed": False, "set": {}, "failed": {}, "unreported": [], "error": None,
              "crashed": False, "prompted": False, "message": ""}
    gpu, status, exceptions = None, None, []
    for line in lines:
        if "[Y/N]" in line:
            result["prompted"] = True
        match = _GPU.match(line)
        if match:
            gpu = int(match.group(1))
            continue
        match = _SUCCESS.match(line)
        if match and gpu is not None:
            result["set"][gpu] = {"kind": _KINDS[match.group(1).lower()], "mode": match.group(2).upper(),
                                  "profile": int(match.group(3)) if match.group(3) else None}
            continue
        match = _STATUS.match(line)
        if match:
            status = {"status": match.group(2), "code": int(match.group(1)), "text": (match.group(3) or "").strip()}
            continue
        match = _EXCEPTION.match(line.strip())
        if match and not match.group(1).startswith("amdsmi."):
            exceptions.append((match.group(1), match.group(2).strip()))
        elif not status:
            bracketed = _BRACKETED.search(line)
            if bracketed:
                status = {"status": bracketed.group(1), "code": None, "text": ""}
    _failure(result, lines, status, exceptions)
    if rc not in (None, 0) and not result["error"] and not result["failed"]:
        result["error"] = {"status": None, "code": None, "exception": None, "message": "amd-smi exited with %s" % rc}
    reported = set(result["set"]) | set(result["failed"])
    result["unreported"] = sorted(set(expected_gpus or []) - reported)
    result["changed"] = bool(result["set"])
    if result["error"] or result["failed"] or result["unreported"] or not result["set"]:
        result["status"] = "partial" if result["set"] else "failed"
    result["message"] = _message(result)
    return result


def _failure(result, lines, status, exceptions):
    """The error of the exception chain: on one GPU when it names one, else for the command."""
    if not exceptions and not status:
        return
    exception, message = exceptions[-1] if exceptions else (None, status["text"])
    where = None
    for line in lines:
        found = _ON_GPU.search(line)
        if found:
            where = found
    kind = next((_KINDS[found.group(1).lower()] for found in (_KIND.search(line) for line in lines) if found), None)
    mode = next((found.group(1) for found in (_MODE.search(line) for line in lines) if found), None)
    error = {"status": status["status"] if status else None, "code": status["code"] if status else None,
             "exception": exception, "message": message}
    if where and (status or exception in ("ValueError", "PermissionError")):
        result["failed"][int(where.group(1))] = dict(error, kind=kind, mode=mode, bdf=where.group(2))
    else:
        result["error"] = error
    result["crashed"] = bool(result["set"]) and bool(exceptions)


def _message(result):
    groups = {}
    for gpu, value in sorted(result["set"].items()):
        groups.setdefault((value["kind"], value["mode"]), []).append(gpu)
    parts = ["amd-smi set the %s partition to %s on GPU %s" % (kind, mode, number_ranges(gpus))
             for (kind, mode), gpus in groups.items()]
    for gpu, value in sorted(result["failed"].items()):
        parts.append("GPU %d%s: %s" % (gpu, " (PCI %s)" % value["bdf"] if value["bdf"] else "", _error_text(value)))
    if result["error"]:
        parts.append(("then failed: %s" if result["set"] else "amd-smi failed: %s") % _error_text(result["error"]))
    if result["unreported"]:
        parts.append("no result for GPU %s" % ", ".join(str(gpu) for gpu in result["unreported"]))
    if result["crashed"]:
        parts.append("the tool crashed after reporting some GPUs; read the modes again to confirm the rest")
    if not parts:
        parts.append("amd-smi reported no GPU")
    return "; ".join(parts)


def _error_text(error):
    text = error.get("status") or error.get("exception") or "error"
    if error.get("code") is not None:
        text += " (code %d)" % error["code"]
    if error.get("message"):
        text += ": %s" % error["message"]
    if error.get("status") == "AMDSMI_STATUS_NO_PERM":
        text += " (run as root; on an SR-IOV guest partitions cannot be set at all)"
    elif error.get("status") == "AMDSMI_STATUS_SETTING_UNAVAILABLE":
        text += " (the mode is not available in the current memory mode: set the memory mode first)"
    elif error.get("status") == "AMDSMI_STATUS_BUSY":
        text += " (a process uses the GPU: stop the GPU workloads first)"
    return text
