# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Set a partition mode through amdgpu's sysfs files, as amd-smi does (the gpu_partition module's logic).

amdgpu exports, under the PCI device of each partitionable GPU (MI300), ``current_memory_partition``
and ``current_compute_partition``; writing a mode's name to them is the kernel interface that
amd-smi's ``set --memory-partition`` / ``--compute-partition`` and rocm-smi use as well
(ROCm/rocm-systems projects/amdsmi, rocm_smi_lib rsmi_dev_{compute,memory}_partition_set).

* A compute mode applies at once (the driver repartitions when no process holds the GPU; EBUSY
  otherwise) and the file then reads the new mode.
* A memory (NPS) mode is only requested: the file keeps the current mode until amdgpu reloads
  (or the host reboots), which then applies it to every GPU of the hive. So a write is recorded
  in a marker file; the next run sees the same request pending and changes nothing.

Functions are pure but for ``read``/``write`` callables, so tests run them on a rendered /sys.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.sysfs.partitions import read_partition_files

AMD_VENDOR = "0x1002"
FILES = {"compute": "current_compute_partition", "memory": "current_memory_partition"}
AVAILABLE = {"compute": "available_compute", "memory": "available_memory"}
CURRENT = {"compute": "compute_partition", "memory": "memory_partition"}


def partition_gpus(root, read, listdir):
    """[{bus, path, compute, memory, available_compute, available_memory}] of the PCI GPUs under
    ``root``/sys that have partition files, by PCI address; ``read(path)`` gives a file's text or
    None, ``listdir(path)`` its entries ([] when absent)."""
    devices = os.path.join(root, "sys", "bus", "pci", "devices")
    gpus = []
    for bus in sorted(listdir(devices)):
        path = os.path.join(devices, bus)
        if (read(os.path.join(path, "vendor")) or "").strip().lower() != AMD_VENDOR:
            continue
        if read(os.path.join(path, FILES["compute"])) is None and read(os.path.join(path, FILES["memory"])) is None:
            continue
        modes = read_partition_files(path, read)
        gpus.append({"bus": bus, "path": path,
                     "compute": modes["compute_partition"], "memory": modes["memory_partition"],
                     "available_compute": modes["available_compute_partitions"],
                     "available_memory": modes["available_memory_partitions"]})
    return gpus


def describe(gpus, pending_memory=None):
    """The --diff text: one line per physical GPU with both modes ('0000:0c:00.0: compute CPX, memory NPS4')."""
    lines = []
    for number, gpu in enumerate(gpus):
        memory = gpu["memory"] or "unknown"
        if pending_memory and gpu["memory"] != pending_memory:
            memory += " (%s at the next amdgpu reload)" % pending_memory
        lines.append("physical GPU %d (PCI %s): compute %s, memory %s"
                     % (number, gpu["bus"], gpu["compute"] or "unknown", memory))
    return "\n".join(lines) + ("\n" if lines else "")


def plan(gpus, kind, mode, pending_memory=None, memory=None):
    """{writes: [GPU dicts], waits: reason or None, problems: [sentences]} for setting ``kind`` to ``mode``.

    ``pending_memory``: the memory mode an earlier run requested and no reload has applied yet.
    ``memory``: for a compute step, the memory mode wanted with it; while the GPUs are not in it
    (a reload is pending), the compute step waits: the reload may reset the compute mode and
    renumbers the logical GPUs (AMD: set the memory mode, reload, then the compute mode).
    """
    problems = []
    if not gpus:
        return {"writes": [], "waits": None,
                "problems": ["no GPU with amdgpu's %s file (not a partitionable GPU, or amdgpu is not loaded)"
                             % FILES[kind]]}
    for gpu in gpus:
        available = gpu[AVAILABLE[kind]]
        current_memory_stays = kind == "memory" or memory in (None, gpu["memory"])
        if available is not None and mode not in available and current_memory_stays:
            problems.append("GPU %s lists %s modes %s as available, not %s"
                            % (gpu["bus"], kind, ", ".join(available), mode))
    if problems:
        return {"writes": [], "waits": None, "problems": problems}
    if kind == "compute" and memory is not None:
        behind = [gpu["bus"] for gpu in gpus if gpu["memory"] != memory]
        if behind:
            return {"writes": [], "problems": [],
                    "waits": "the memory mode %s is not applied yet on %s (amdgpu reload or reboot pending)"
                             % (memory, ", ".join(behind))}
    if kind == "memory":
        # Another mode requested and not applied yet is taken back by writing this one.
        writes = [gpu for gpu in gpus if (gpu["memory"] != mode and pending_memory != mode)
                  or pending_memory not in (None, mode)]
    else:
        writes = [gpu for gpu in gpus if gpu["compute"] != mode]
    return {"writes": writes, "waits": None, "problems": []}


def apply(step, kind, mode, write, read):
    """Write ``mode`` to each GPU of ``step``; (problems, after) with the modes read back.

    A compute mode must read back as written; a memory mode reads back as before until the reload.
    """
    problems = []
    for gpu in step["writes"]:
        path = os.path.join(gpu["path"], FILES[kind])
        try:
            write(path, mode + "\n")
        except (IOError, OSError) as error:
            problems.append("writing %s to %s failed: %s%s" % (mode, path, error.strerror or error,
                            " (a process holds the GPU)" if getattr(error, "errno", None) == 16 else ""))
            continue
        if kind == "compute":
            now = read_partition_files(gpu["path"], read)["compute_partition"]
            if now != mode:
                problems.append("%s reads %s after writing %s" % (path, now or "nothing", mode))
    return problems
