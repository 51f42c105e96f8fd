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
    and returns them as the C(gpu) fact (schema 2).
  - A partitioned GPU (MI300 in DPX, TPX, QPX or CPX) is one device per partition, as ROCm numbers them;
    schema 2 adds each device's compute and memory partition mode, partition ID and physical GPU.
  - Sysfs needs no ROCm userspace, so the module also works on a new server before anything is installed.
  - With O(host_facts=true) it also returns the OS, kernel and CPU facts a GPU decision needs, with the names and
    values of M(ansible.builtin.setup), so one module call can replace C(setup) with C(gather_subset=[min, hardware])
    where only these facts are used.
  - A missing tool is not a failure. A tool that hangs is killed after O(timeout). Output that cannot be
    parsed marks that source C(failed) with a warning naming the tool and the offending line, while the
    other sources still fill the facts. The module fails only on invalid options.
author:
  - rocm-fleet maintainers (@rocm-fleet)
extends_documentation_fragment:
  - rocm_fleet.core.gpu_tools
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
  sources:
    description:
      - Which sources to read. The others are reported as C(skipped).
    type: list
    elements: str
    choices: [sysfs, rocm_smi, amd_smi, rocminfo]
    default: [sysfs, rocm_smi, amd_smi, rocminfo]
  host_facts:
    description:
      - Also return C(distribution), C(distribution_version), C(distribution_major_version), C(distribution_release),
        C(os_family), C(kernel), C(kernel_version), C(architecture) and C(processor), as M(ansible.builtin.setup)
        returns them (C(processor) as with C(gather_subset=[min, hardware])), computed by the same ansible-core code.
      - They describe the host the module runs on; O(sysfs_root) does not apply to them.
      - C(processor) is read from C(/proc/cpuinfo), on Linux only, without running a command.
      - A fact that cannot be read is left out with a warning; the GPU facts are returned all the same.
    type: bool
    default: false
attributes:
  check_mode:
    support: full
    description: The module only reads.
  diff_mode:
    support: none
    description: The module only reads.
  facts:
    support: full
    description: Returns the C(gpu) fact, and the host facts of O(host_facts).
notes:
  - Runs every tool with C(LC_ALL=C).
  - An MI250X package shows as two GPUs (GCDs), as the OS sees it, and as two physical GPUs.
  - Partitions of one GPU share its PCI address and UUID; they are told apart by KFD node and partition ID.
    A physical GPU with fewer partitions than its compute mode gives (an 8x MI300X in CPX shows 63 when another
    DRM driver holds a DRM minor) is a warning that names it.
  - A partition's C(vram_bytes) is its share from the KFD memory banks; rocm-smi and amd-smi print the whole GPU's
    VRAM for each MI300X CPX partition, so they are used only where sysfs cannot be read.
  - The host facts are returned under setup's names (C(ansible_distribution) ...), so plays read them as
    C(ansible_facts.distribution) ... exactly as after M(ansible.builtin.setup).
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

- name: GPU, OS, kernel and CPU facts in one call, instead of setup with gather_subset [min, hardware]
  rocm_fleet.core.gpu_facts:
    sources: [sysfs]
    host_facts: true

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
      description: The host's AMD GPUs (schema 2).
      returned: always
      type: dict
      contains:
        schema:
          description: Version of this layout; 2 added the partition fields of each device.
          type: int
          sample: 2
        count:
          description: Logical GPUs as the OS sees them (each partition one); 0 when none.
          type: int
          sample: 8
        devices:
          description:
            - One entry per GPU, ordered by index as rocm-smi and amd-smi number them.
            - A field is null where no source says it. C(pci_bus) is null where only C(rocminfo) saw the GPU,
              because its BDFID carries no PCI domain.
            - C(compute_partition) is SPX, DPX, TPX, QPX or CPX and C(memory_partition) NPS1, NPS2, NPS4 or NPS8;
              null on GPUs without partition modes or where no source says.
            - C(partition_id) numbers the partitions of one GPU from 0; an unpartitioned GPU is its own partition 0.
            - C(physical_gpu) numbers the physical GPUs (PCI devices) in device order, the same for all partitions
              of one GPU; null where no source places the device.
            - C(available_compute_partitions) and C(available_memory_partitions) list the modes the GPU accepts
              (sysfs, amd-smi), or are null.
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
              compute_partition: SPX
              memory_partition: NPS1
              partition_id: 0
              physical_gpu: 0
              available_compute_partitions: [SPX, DPX, QPX, CPX]
              available_memory_partitions: [NPS1, NPS4]
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
    ansible_distribution:
      description: Name of the distribution, as setup's C(distribution) (plays read C(ansible_facts.distribution)).
      returned: when O(host_facts=true) and it could be read
      type: str
      sample: Ubuntu
    ansible_distribution_version:
      description: Version of the distribution, as setup's C(distribution_version).
      returned: when O(host_facts=true) and it could be read
      type: str
      sample: "22.04"
    ansible_distribution_major_version:
      description: Major version of the distribution, as setup's C(distribution_major_version).
      returned: when O(host_facts=true) and it could be read
      type: str
      sample: "22"
    ansible_distribution_release:
      description: Release (code) name of the distribution, as setup's C(distribution_release).
      returned: when O(host_facts=true) and it could be read
      type: str
      sample: jammy
    ansible_os_family:
      description: OS family, as setup's C(os_family).
      returned: when O(host_facts=true) and it could be read
      type: str
      sample: Debian
    ansible_kernel:
      description: Release of the running kernel (C(uname -r)), as setup's C(kernel).
      returned: when O(host_facts=true) and it could be read
      type: str
      sample: 6.8.0-60-generic
    ansible_kernel_version:
      description: Version string of the running kernel (C(uname -v)), as setup's C(kernel_version).
      returned: when O(host_facts=true) and it could be read
      type: str
      sample: "#63~22.04.1-Ubuntu SMP PREEMPT_DYNAMIC Tue Apr 22 19:00:15 UTC 2"
    ansible_architecture:
      description: Machine architecture, as setup's C(architecture).
      returned: when O(host_facts=true) and it could be read
      type: str
      sample: x86_64
    ansible_processor:
      description:
        - The CPUs from C(/proc/cpuinfo), as setup's C(processor) (hardware subset) on Linux.
        - On x86, for each logical CPU in turn, its index, C(vendor_id) and C(model name).
      returned: when O(host_facts=true), on Linux, and it could be read
      type: list
      elements: str
      sample:
        - "0"
        - AuthenticAMD
        - AMD EPYC 9654 96-Core Processor
        - "1"
        - AuthenticAMD
        - AMD EPYC 9654 96-Core Processor
    ansible_host_facts_digest:
      description:
        - SHA-256 over what the distribution and processor facts are read from (the release files, C(/proc/cpuinfo)
          less its clock, C(uname)). M(rocm_fleet.core.node_compliance) given it back reads those facts again only
          where it changed.
      returned: when O(host_facts=true), on Linux, and every host fact could be read
      type: str
      sample: 3f0c2b6a6f4f1e0a4b8e1c1b9d6f2e7a5c3d4b2a1908f7e6d5c4b3a29180f7e6
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.model import DEFAULT_SOURCES, SOURCES
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.gather import gather
from ansible_collections.rocm_fleet.core.plugins.module_utils.host.facts import gather_host_facts

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
            sources=dict(type="list", elements="str", choices=list(SOURCES), default=list(DEFAULT_SOURCES)),
            host_facts=dict(type="bool", default=False),
        ),
        supports_check_mode=True,
    )
    if module.params["timeout"] <= 0:
        module.fail_json(msg="timeout must be a positive number of seconds, got %d" % module.params["timeout"])
    try:
        gpu = gather(module.params, module.get_bin_path, ROCM_BIN_DIRS)
    except Exception as exc:  # never end in a traceback
        module.fail_json(msg="gpu_facts: could not merge the GPU sources: %s: %s" % (type(exc).__name__, exc))
    facts = {"gpu": gpu}
    if module.params["host_facts"]:
        host, warnings = gather_host_facts(module)  # never raises: what it could not read is a warning
        for warning in warnings:
            module.warn(warning)
        facts.update(host)
    module.exit_json(changed=False, ansible_facts=facts)


if __name__ == "__main__":
    main()
