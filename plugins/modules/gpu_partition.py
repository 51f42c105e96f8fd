#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: gpu_partition
short_description: Set the compute or memory partition mode of every partitionable AMD GPU through amdgpu's sysfs files
version_added: 0.1.0
description:
  - Writes the mode to C(current_compute_partition) or C(current_memory_partition) under the PCI device of each
    AMD GPU that has the file (MI300), the kernel interface that C(amd-smi set --compute-partition) and
    C(--memory-partition) use. Only GPUs not in the mode are written.
  - A compute mode applies at once and must read back as written.
  - A memory mode applies at the next amdgpu reload or reboot (the file keeps the current mode until then). The
    module records the request in O(pending_file) and reports C(reload_needed); a later run with the same request
    pending changes nothing, and removes the file once every GPU is in the mode.
  - A compute step given O(memory) waits (changes nothing, C(waits) says why) while the GPUs are not yet in that
    memory mode, as AMD's order asks (memory mode, reload, then compute mode).
  - Fails before any write when a GPU lists the mode as not available, naming the GPU.
author:
  - rocm-fleet maintainers (@rocm-fleet)
options:
  set:
    description: Which mode to set.
    type: str
    required: true
    choices: [compute, memory]
  mode:
    description: The mode, for example C(CPX) or C(NPS4).
    type: str
    required: true
  memory:
    description: For O(set=compute), the memory mode wanted with it; the step waits until the GPUs are in it.
    type: str
  pending_file:
    description: Where a requested memory mode is recorded until a reload applies it (a reboot marker).
    type: path
    default: /run/rocm-fleet/reboot-required/partitions-memory-mode
  root:
    description: The file system root whose C(sys) is read (tests).
    type: path
    default: /
attributes:
  check_mode:
    support: full
    description: Reports what it would write, and a compute step that waits on a memory mode as it would be after it.
  diff_mode:
    support: full
    description: The modes of each physical GPU before and after.
  platform:
    support: full
    platforms: posix
    description: Linux hosts whose amdgpu exposes the current_*_partition files (MI300 series and later).
"""

EXAMPLES = r"""
- name: Set the memory partition
  rocm_fleet.core.gpu_partition:
    set: memory
    mode: NPS4

- name: Set the compute partition once the memory mode applies
  rocm_fleet.core.gpu_partition:
    set: compute
    mode: CPX
    memory: NPS4
"""

RETURN = r"""
gpus:
  description: The physical GPUs with their modes as read after the step.
  returned: always
  type: list
  elements: dict
written:
  description: PCI addresses of the GPUs written (or that would be, in check mode).
  returned: always
  type: list
  elements: str
reload_needed:
  description: A memory mode is requested and waits for an amdgpu reload or reboot.
  returned: always
  type: bool
waits:
  description: Why a compute step changed nothing (its memory mode is not applied yet), or null.
  returned: always
  type: str
"""

import errno
import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.sysfs import partition_write as partitions
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.model import COMPUTE_PARTITIONS, MEMORY_PARTITIONS


def _read(path):
    try:
        with open(path) as handle:
            return handle.read()
    except (IOError, OSError):
        return None


def _listdir(path):
    try:
        return os.listdir(path)
    except OSError:
        return []


def _write(path, text):
    with open(path, "w") as handle:
        handle.write(text)


def _pending(path):
    text = _read(path)
    return text.strip().upper() if text else None


def run(module):
    params = module.params
    kind, mode = params["set"], str(params["mode"]).strip().upper()
    memory = str(params["memory"]).strip().upper() if params.get("memory") else None
    modes = COMPUTE_PARTITIONS if kind == "compute" else MEMORY_PARTITIONS
    if mode not in modes:
        module.fail_json(msg="%s mode %s is not one of %s" % (kind, params["mode"], ", ".join(modes)))
    gpus = partitions.partition_gpus(params["root"], _read, _listdir)
    pending_file = params["pending_file"]
    pending = _pending(pending_file)
    step = partitions.plan(gpus, kind, mode, pending_memory=pending, memory=memory)
    step_gpus = gpus
    before = partitions.describe(gpus, pending)
    if step["problems"]:
        module.fail_json(msg="; ".join(step["problems"]), gpus=gpus)
    if step["waits"] and module.check_mode:
        # A check run has not reloaded amdgpu: show the step as it would be once the memory mode applies.
        step = partitions.plan([dict(gpu, memory=memory) for gpu in gpus], kind, mode)
    written = [gpu["bus"] for gpu in step["writes"]]
    result = {"changed": bool(written), "written": written, "waits": step["waits"], "gpus": gpus}
    if kind == "memory":
        result["reload_needed"] = any(gpu["memory"] != mode for gpu in gpus)
    else:
        result["reload_needed"] = False
    if written and not module.check_mode:
        problems = partitions.apply(step, kind, mode, _write, _read)
        if problems:
            module.fail_json(msg="; ".join(problems), written=written, gpus=gpus)
        if kind == "memory" and result["reload_needed"]:
            # It applies only at the next amdgpu load, whatever the file reads now.
            _record(module, pending_file, mode)
        gpus = partitions.partition_gpus(params["root"], _read, _listdir)
        result["gpus"] = gpus
    wanted_memory = mode if kind == "memory" else memory
    applied = wanted_memory is not None and not result["reload_needed"] and all(
        gpu["memory"] == wanted_memory for gpu in (gpus if kind == "compute" else step_gpus))
    if applied and pending is not None and not module.check_mode and os.path.exists(pending_file):
        # Every GPU is in the memory mode (the reload or reboot applied the request, or a
        # write of the current mode took back another one): no reboot is due for it.
        os.remove(pending_file)
    # A memory mode's file may read the new mode at once or only after the reload: shown as requested.
    after_gpus = result["gpus"] if kind == "compute" else step_gpus
    if module.check_mode and kind == "compute":
        after_gpus = [dict(gpu, compute=mode) if gpu["bus"] in written else gpu for gpu in gpus]
    after_pending = mode if kind == "memory" and result["reload_needed"] else None
    result["diff"] = {"before": before, "after": partitions.describe(after_gpus, after_pending)}
    module.exit_json(**result)


def _record(module, path, mode):
    directory = os.path.dirname(path)
    try:
        if not os.path.isdir(directory):
            os.makedirs(directory, 0o755)
        _write(path, mode + "\n")
    except (IOError, OSError) as error:
        if error.errno != errno.EEXIST:
            module.fail_json(msg="the memory mode %s was requested, but recording it in %s failed: %s"
                             % (mode, path, error))


def main():
    module = AnsibleModule(
        argument_spec=dict(
            set=dict(type="str", required=True, choices=["compute", "memory"]),
            mode=dict(type="str", required=True),
            memory=dict(type="str"),
            pending_file=dict(type="path", default="/run/rocm-fleet/reboot-required/partitions-memory-mode"),
            root=dict(type="path", default="/"),
        ),
        supports_check_mode=True,
    )
    run(module)


if __name__ == "__main__":
    main()
