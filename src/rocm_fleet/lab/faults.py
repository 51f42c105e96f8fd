"""Fault injection: break one lab host (or the mirror) the way real servers break.

Hardware faults (remove-gpu, degrade-link, unload-amdgpu, and the health faults of
faults_health) are recorded in the
host's faults.json, which every boot reads, and applied at once to a running
host: its /sys tree and /dev nodes are re-rendered, as after a hot-unplug or a
driver unload. Tool faults replace the tool inside the host with a wrapper
(the real one is kept next to it as ``<tool>.lab-real``) until ``clear``.
"""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path

from rocm_fleet.lab import hwsys
from rocm_fleet.lab.host import LabHost

TOOL_DIRS = ("usr/local/sbin", "usr/local/bin", "usr/sbin", "usr/bin", "opt/rocm/bin")
REAL_SUFFIX = ".lab-real"
HANG_WRAPPER = """#!/bin/sh
# rocm-fleet lab fault: this tool hangs (the real one is {real}).
exec sleep infinity
"""
# Every third line dropped and every line cut at 37 characters: output no parser should accept as complete.
CORRUPT_WRAPPER = """#!/bin/sh
# rocm-fleet lab fault: this tool's output is corrupted (the real one is {real}).
"{real}" "$@" 2>&1 | awk 'NR % 3 != 0 {{ print substr($0, 1, 37) }}'
"""


class FaultError(RuntimeError):
    pass


def _faults_path(host: LabHost) -> Path:
    return host.dir / "faults.json"


def _load(host: LabHost) -> dict:
    return hwsys.read_json(_faults_path(host), {})


def _save(host: LabHost, faults: dict) -> None:
    _faults_path(host).write_text(json.dumps(faults, indent=1, sort_keys=True))


# For the fault modules of health, boot and environment (faults_health, faults_boot, faults_env).
load_faults, save_faults = _load, _save


def ask_supervisor(host: LabHost, request: dict, timeout: float = 180) -> dict | None:
    """Send a request to a running host's supervisor; None when the host is not running.

    The supervisor answers once it is done; the timeout only bounds a hung one. A rerender of the
    CPX host (64 logical GPUs) takes about 10 s on an idle 2-core machine and more than 20 s while
    other labs run beside it.
    """
    if not host.is_running():
        return None
    name = f"{time.time_ns()}-{uuid.uuid4().hex[:8]}.json"
    inbox = host.dir / "control" / "requests"
    (inbox / (name + ".tmp")).write_text(json.dumps(request))
    (inbox / (name + ".tmp")).rename(inbox / name)
    reply = host.dir / "control" / "replies" / name
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if reply.exists():
            answer = json.loads(reply.read_text())
            reply.unlink()
            if answer.get("rc"):
                raise FaultError(f"{host.spec.name}: {answer.get('stderr', '').strip()}")
            return answer
        time.sleep(0.05)
    raise FaultError(f"{host.spec.name}: the supervisor did not answer within {timeout:.0f} s")


def remove_gpu(host: LabHost, index: int) -> None:
    faults = _load(host)
    count = hwsys.gpu_count(host.spec.profile, faults)
    if not 0 <= index < count:
        raise FaultError(f"{host.spec.name} has GPUs 0..{count - 1} now; no GPU {index}")
    faults.setdefault("removed_gpus", []).append(index)
    _save(host, faults)
    ask_supervisor(host, {"action": "rerender"})


def degrade_link(host: LabHost, first: int, second: int) -> None:
    faults = _load(host)
    hwsys.load_faulted_profile(host.spec.profile, {**faults, "degraded_links": [[first, second]]})  # validates
    faults.setdefault("degraded_links", []).append([first, second])
    _save(host, faults)
    ask_supervisor(host, {"action": "rerender"})


def unload_amdgpu(host: LabHost) -> None:
    faults = _load(host)
    faults["amdgpu_unloaded"] = True
    _save(host, faults)
    ask_supervisor(host, {"action": "unload", "module": "amdgpu"})


def _tool_dirs(host: LabHost) -> list[Path]:
    # /opt/rocm is an absolute link (update-alternatives) that only resolves inside the host:
    # the versioned trees it points to are wrapped directly.
    return [host.root / directory for directory in TOOL_DIRS] + sorted(host.root.glob("opt/rocm-*/bin"))


def _find_tools(host: LabHost, tool: str) -> list[Path]:
    """Every copy of ``tool``: callers find it on PATH or under /opt/rocm/bin (gpu_facts looks there first)."""
    candidates = [directory / tool for directory in _tool_dirs(host)]
    found = [path for path in candidates if path.exists() or path.is_symlink()]
    if not found:
        raise FaultError(f"{host.spec.name}: no {tool} in {', '.join('/' + d for d in TOOL_DIRS)} (install it first)")
    return found


def break_tool(host: LabHost, tool: str, how: str) -> list[Path]:
    """Replace ``tool`` with a wrapper that hangs (how='hang') or corrupts its output (how='corrupt')."""
    paths = _find_tools(host, tool)
    for path in paths:
        real = path.with_name(path.name + REAL_SUFFIX)
        if not (real.exists() or real.is_symlink()):
            path.rename(real)
        else:
            path.unlink()
        template = HANG_WRAPPER if how == "hang" else CORRUPT_WRAPPER
        path.write_text(template.format(real="/" + str(real.relative_to(host.root))))
        path.chmod(0o755)
    faults = _load(host)
    faults.setdefault("tools", {})[tool] = how
    _save(host, faults)
    return paths


def _restore_tools(host: LabHost) -> None:
    for directory in _tool_dirs(host):
        for real in directory.glob("*" + REAL_SUFFIX):
            real.rename(real.with_name(real.name.removesuffix(REAL_SUFFIX)))


def clear(host: LabHost) -> None:
    """Undo every fault of the host: tools restored, host files (kernels, signatures, users, env) as
    before, hardware and driver as the profile says."""
    from rocm_fleet.lab import faults_boot, faults_env

    _restore_tools(host)
    recorded = _load(host)
    faults_env.undo(host, recorded)
    faults_boot.undo(host, recorded)
    _faults_path(host).unlink(missing_ok=True)
    ask_supervisor(host, {"action": "rerender", "boot_default_amdgpu": True})
