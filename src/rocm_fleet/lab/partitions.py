"""A lab host's GPU partition modes as amdgpu keeps them: set through sysfs, applied as the driver applies them.

amdgpu exports ``current_compute_partition`` and ``current_memory_partition`` under the PCI
device of each partitionable GPU (MI300); amd-smi and rocm-smi write a mode's name there.

* A compute mode applies at once (when no process holds the GPU, which the lab does not model):
  the driver repartitions and the host shows the new logical GPUs (CPX: 8 per MI300X, SPX: 1),
  with their KFD and render nodes.
* A memory (NPS) mode is only requested: the file keeps reading the current mode until amdgpu
  loads again (a modprobe -r/modprobe or a reboot), which applies it to every GPU. Where the
  compute mode does not fit the new memory mode (SPX with NPS4), the lab takes the first mode
  the GPU lists that fits (the real driver resets it to a mode valid for the memory mode; which
  one is the lab's choice).
* A mode the GPU does not list as available, or an invalid pair, is refused (the real write
  fails with EINVAL): the file reverts to the current mode at the next render.

The modes live in the host's ``partitions.json`` (kept over reboots, as the lab keeps faults):
``{"compute": mode or null, "memory": mode or null, "requested_memory": mode or null}``, null
meaning the profile's own. The supervisor compares the files it rendered with what the host
reads now (``written``) and calls ``on_write``; it calls ``on_driver_load`` when amdgpu loads.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from pathlib import Path

STATE_FILE = "partitions.json"
FILES = {"compute": "current_compute_partition", "memory": "current_memory_partition"}
EMPTY = {"compute": None, "memory": None, "requested_memory": None}


def read_state(host_dir: Path) -> dict:
    try:
        data = json.loads((Path(host_dir) / STATE_FILE).read_text())
    except (OSError, ValueError):
        return dict(EMPTY)
    return {key: data.get(key) for key in EMPTY}


def write_state(host_dir: Path, state: dict) -> None:
    path = Path(host_dir) / STATE_FILE
    if state == EMPTY:
        path.unlink(missing_ok=True)
        return
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps(state, indent=1, sort_keys=True))
    temporary.rename(path)


def _available(text: str | None) -> list[str]:
    return [item.strip() for item in (text or "").split(",") if item.strip()]


def pair_problems(gpu, compute: str, memory: str | None) -> list[str]:
    """Why ``gpu`` cannot be in ``compute``/``memory`` (the hardware model's own rules); [] when it can."""
    from rocm_fleet.hardware.profile import _check_partitions

    problems: list[str] = []
    if compute not in _available(gpu.available_compute_partitions):
        problems.append("compute mode %s is not available (%s)" % (compute, gpu.available_compute_partitions))
    if memory is not None and memory not in _available(gpu.available_memory_partitions):
        problems.append("memory mode %s is not available (%s)" % (memory, gpu.available_memory_partitions))
    if not problems:
        candidate = dataclasses.replace(gpu, compute_partition=compute, memory_partition=memory)
        _check_partitions(candidate, gpu.bus, lambda where, message: problems.append(message))
    return problems


def apply_modes(profile, state: dict):
    """``profile`` with the host's modes on each partitionable GPU (unchanged when the state names none)."""
    compute, memory = state.get("compute"), state.get("memory")
    if compute is None and memory is None:
        return profile
    gpus = []
    for gpu in profile.gpus:
        if gpu.partitionable and gpu.compute_partition is not None:
            gpu = dataclasses.replace(
                gpu, compute_partition=compute or gpu.compute_partition, memory_partition=memory or gpu.memory_partition
            )
        gpus.append(gpu)
    return dataclasses.replace(profile, gpus=tuple(gpus))


def rendered_files(sys_dir: Path, profile) -> dict[str, str]:
    """{path: mode} of the partition files a render of ``profile`` (modes applied) wrote under ``sys_dir``."""
    files = {}
    for gpu in profile.gpus:
        if not (gpu.partitionable and gpu.compute_partition):
            continue
        device = Path(sys_dir) / "bus" / "pci" / "devices" / gpu.bus
        files[str(device / FILES["compute"])] = gpu.compute_partition
        if gpu.memory_partition:
            files[str(device / FILES["memory"])] = gpu.memory_partition
    return files


# A file whose mtime is this close to the moment it was read may be written again within the same timestamp (file
# times tick with the kernel's coarse clock, up to 10 ms): its stamp is not kept, so the next call reads it again.
_RACY_NS = 100_000_000


def written(files: dict[str, str], stamps: dict | None = None) -> dict[str, str] | None:
    """{kind: mode} the host wrote over the rendered ``files`` since the last render, or None.

    A tool writes every GPU (amd-smi --gpu all) or one; one written GPU is the mode of all, as
    the lab keeps one mode per host. With ``stamps`` (the caller's dict, kept between calls) a file whose
    modification time, size and inode are those of its last read is not read again: the supervisor calls this at
    every wakeup, and reading an MI300X host's 16 files took 0.63 ms a call, against 0.07 ms with stamps.
    """
    change: dict[str, str] = {}
    now = time.time_ns()
    for path, mode in files.items():
        try:
            if stamps is not None:
                status = os.stat(path)
                stamp = (status.st_mtime_ns, status.st_size, status.st_ino)
                if stamps.get(path) == stamp:
                    continue
            text = Path(path).read_text().strip().upper()
        except OSError:
            continue
        if stamps is not None:
            if now - stamp[0] > _RACY_NS:
                stamps[path] = stamp
            else:
                stamps.pop(path, None)
        if text and text != mode:
            change["compute" if path.endswith(FILES["compute"]) else "memory"] = text
    return change or None


def restore_files(files: dict[str, str]) -> None:
    """Write the rendered modes back (a memory mode request changes what the files read only at the reload)."""
    for path, mode in files.items():
        if Path(path).exists() and Path(path).read_text().strip().upper() != mode:
            Path(path).write_text(mode + "\n")


def on_write(state: dict, change: dict[str, str], profile) -> tuple[dict, list[str]]:
    """(new state, refusals): a valid compute mode applies now, a valid memory mode waits for the reload."""
    state = dict(state)
    refusals: list[str] = []
    gpus = [gpu for gpu in profile.gpus if gpu.partitionable and gpu.compute_partition]
    if not gpus:
        return state, ["no partitionable GPU"]
    gpu = gpus[0]
    if "memory" in change:
        mode = change["memory"]
        if mode not in _available(gpu.available_memory_partitions):
            refusals.append("memory mode %s is not available (%s)" % (mode, gpu.available_memory_partitions))
        else:
            state["requested_memory"] = None if mode == gpu.memory_partition else mode
    if "compute" in change:
        mode = change["compute"]
        problems = pair_problems(gpu, mode, gpu.memory_partition)
        if problems:
            refusals.extend(problems)
        else:
            state["compute"] = mode
            state["memory"] = state.get("memory") or gpu.memory_partition
    return state, refusals


def on_driver_load(state: dict, profile) -> dict:
    """The state after amdgpu loads: a requested memory mode applies, the compute mode fitted to it."""
    requested = state.get("requested_memory")
    if not requested:
        return state
    state = dict(state, requested_memory=None, memory=requested)
    gpus = [gpu for gpu in profile.gpus if gpu.partitionable and gpu.compute_partition]
    if gpus:
        current = apply_modes(profile, {"compute": state.get("compute"), "memory": None}).gpus
        gpu = next(item for item in current if item.partitionable and item.compute_partition)
        if pair_problems(gpu, gpu.compute_partition, requested):
            fitting = [
                mode for mode in _available(gpu.available_compute_partitions) if not pair_problems(gpu, mode, requested)
            ]
            state["compute"] = fitting[0] if fitting else None
        else:
            state["compute"] = gpu.compute_partition
    return state
