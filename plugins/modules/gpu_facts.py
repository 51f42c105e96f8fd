#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: gpu_facts
short_description: Gather facts about the AMD GPUs of a host
version_added: 0.1.0
description:
  - Reads what a host reports about its AMD GPUs from sysfs, C(rocm-smi), C(amd-smi) and C(rocminfo)
    and returns them as the C(gpu) fact (schema 1).
  - Sysfs needs no ROCm userspace, so the module also works on a new server before anything is installed.
  - A missing tool is not a failure. A tool that hangs is killed after O(timeout). Output that cannot be
    parsed marks that source C(failed) with a warning naming the tool and the offending line, while the
    other sources still fill the facts. The module fails only on invalid options.
author:
  - rocm-fleet maintainers (@rocm-fleet)
options:
  sysfs_root:
    description:
      - Root of the tree holding C(sys/) and C(opt/rocm), so tests and chroot inspections can point at another tree.
    type: path
    default: /
  rocm_smi_path:
    description:
      - Path of C(rocm-smi). Default is the first found on E(PATH), then under C(/opt/rocm/bin).
    type: path
  amd_smi_path:
    description:
      - Path of C(amd-smi). Default is the first found on E(PATH), then under C(/opt/rocm/bin).
    type: path
  rocminfo_path:
    description:
      - Path of C(rocminfo). Default is the first found on E(PATH), then under C(/opt/rocm/bin).
    type: path
  timeout:
    description:
      - Seconds each external command may run before it is killed.
    type: int
    default: 30
  sources:
    description:
      - Which sources to read. The others are reported as C(skipped).
    type: list
    elements: str
    choices: [sysfs, rocm_smi, amd_smi, rocminfo]
    default: [sysfs, rocm_smi, amd_smi, rocminfo]
attributes:
  check_mode:
    support: full
    description: The module only reads.
  diff_mode:
    support: none
    description: The module only reads.
  facts:
    support: full
    description: Returns the C(gpu) fact.
notes:
  - Runs every tool with C(LC_ALL=C).
  - An MI250X package shows as two GPUs (GCDs), as the OS sees it.
seealso:
  - name: ROCm system management
    description: rocm-smi and amd-smi documentation.
    link: https://rocm.docs.amd.com/projects/amdsmi/en/latest/
"""

EXAMPLES = r"""
- name: Gather GPU facts
  rocm_fleet.core.gpu_facts:

- name: Read only sysfs, for a host without ROCm
  rocm_fleet.core.gpu_facts:
    sources: [sysfs]

- name: Inspect a mounted image
  rocm_fleet.core.gpu_facts:
    sysfs_root: /mnt/image
    sources: [sysfs]

- name: Show the GPU count
  ansible.builtin.debug:
    msg: "{{ ansible_facts.gpu.count }} GPUs: {{ ansible_facts.gpu.devices | map(attribute='product') | list }}"
"""

RETURN = r"""
ansible_facts:
  description: Facts added to the host.
  returned: always
  type: dict
  contains:
    gpu:
      description: The host's AMD GPUs (schema 1).
      returned: always
      type: dict
      contains:
        schema:
          description: Version of this layout.
          type: int
          sample: 1
        count:
          description: GPUs as the OS sees them; 0 when none.
          type: int
          sample: 8
        devices:
          description: One entry per GPU, ordered by index as rocm-smi and amd-smi number them.
          type: list
          elements: dict
          sample:
            - index: 0
              pci_bus: "0000:0c:00.0"
              vendor_id: "0x1002"
              device_id: "0x74a1"
              subsystem_device_id: "0x74a1"
              product: AMD Instinct MI300X
              gfx_target: gfx942
              vram_bytes: 206158430208
              numa_node: 0
              kfd_node: 2
              render_node: /dev/dri/renderD128
        topology:
          description:
            - Link matrix between GPUs; null with fewer than 2 GPUs or when no source gave it.
            - C(link_type) is SELF on the diagonal, else XGMI, PCIE or UNKNOWN. C(hops) and C(weight) may be null.
          type: dict
          sample:
            link_type: [[SELF, XGMI], [XGMI, SELF]]
            hops: [[0, 1], [1, 0]]
            weight: [[0, 15], [15, 0]]
            numa_affinity: [0, 0]
        driver:
          description: Whether amdgpu is loaded and its version.
          type: dict
          sample: {loaded: true, version: 6.12.12}
        rocm:
          description: The ROCm installation under /opt/rocm.
          type: dict
          sample: {version: 6.4.1-83, path: /opt/rocm-6.4.1}
        sources:
          description: State of each source, one of ok, missing, failed, timeout, skipped.
          type: dict
          sample: {sysfs: ok, rocm_smi: ok, amd_smi: missing, rocminfo: failed}
        warnings:
          description: Non-fatal problems, each naming the source and what was wrong.
          type: list
          elements: str
        conflicts:
          description: Where sources disagree.
          type: list
          elements: str
          sample: ["GPU count differs between sources: sysfs sees 8, rocm-smi sees 7"]
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu_model import SOURCES
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu_facts_gather import gather

# Module-level so tests can point the search away from a real /opt/rocm.
ROCM_BIN_DIRS = ["/opt/rocm/bin"]


def main():
    module = AnsibleModule(
        argument_spec=dict(
            sysfs_root=dict(type="path", default="/"),
            rocm_smi_path=dict(type="path"),
            amd_smi_path=dict(type="path"),
            rocminfo_path=dict(type="path"),
            timeout=dict(type="int", default=30),
            sources=dict(type="list", elements="str", choices=list(SOURCES), default=list(SOURCES)),
        ),
        supports_check_mode=True,
    )
    if module.params["timeout"] <= 0:
        module.fail_json(msg="timeout must be a positive number of seconds, got %d" % module.params["timeout"])
    try:
        gpu = gather(module.params, module.get_bin_path, ROCM_BIN_DIRS)
    except Exception as exc:  # never end in a traceback
        module.fail_json(msg="gpu_facts: could not merge the GPU sources: %s: %s" % (type(exc).__name__, exc))
    module.exit_json(changed=False, ansible_facts={"gpu": gpu})


if __name__ == "__main__":
    main()
