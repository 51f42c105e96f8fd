#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: node_compliance
short_description: Evaluate a host's whole declared ROCm state in one call
version_added: 0.1.0
description:
  - Compares the host with a list of declared items (files, lines, groups, sysctls, the active kernel command line,
    kernel modules, device nodes, packages, apt sources and pins) and with what its GPU class expects
    (count, products, gfx targets, VRAM, topology, NUMA affinity, driver, ROCm version).
  - The expected state is rendered on the controller from the same variables the roles apply and passed in as
    O(items) and O(gpu_expect); the module itself knows no role. Each item names the role task that enforces it,
    so a failing item says which task C(ansible-playbook --check) would change.
  - Reads files with open and stat calls only (one C(rpm -qa) call on RPM hosts), so a whole host costs a fraction
    of a second plus the GPU sources. Never changes anything.
  - An invalid item or one whose state cannot be read becomes a result with status C(error) naming the item and
    the field; the module fails only on invalid options.
  - Item kinds and their C(expect) keys are documented in C(docs/compliance-checks.md).
author:
  - rocm-fleet maintainers (@rocm-fleet)
extends_documentation_fragment:
  - rocm_fleet.core.gpu_tools
options:
  items:
    description:
      - Declared items to check, each evaluated independently. Keys of each item follow.
        (checked by the module itself, so one bad item is one C(error) result, not a failed task)
      - C(id) (required), a stable check ID such as C(ROCM-ENV-001), or a drift item ID.
      - C(title), what the item asserts; defaults to its C(id).
      - C(kind) (required), one of C(apt_pin), C(apt_source), C(device_node), C(directory), C(file), C(file_lines),
        C(group_exists), C(group_members), C(kernel_cmdline), C(link), C(modprobe_options), C(module_loaded),
        C(package), C(sysctl), C(user_exists).
      - C(role) and C(task), the role and the exact name of its task that enforces the item.
      - C(severity), passed through to the result.
      - C(expect) (required), the kind-specific expected state.
    type: list
    elements: dict
    default: []
  gpu_expect:
    description:
      - What the host's GPU class expects, checked against the GPU facts gathered in the same call.
      - Keys C(count), C(products) (one name for every GPU or a list per GPU), C(gfx_targets) (allowed targets),
        C(vram_bytes_min), C(topology) (C(link_type), C(hops), C(weight), each one value for every pair or a matrix),
        C(numa_affinity) (list per GPU), C(driver) (C(loaded), C(version)), C(rocm_version) (pattern).
    type: dict
  gpu:
    description:
      - The C(gpu) fact that M(rocm_fleet.core.gpu_facts) gathered earlier in the same play. When given, the
        module gathers nothing and O(gpu_sources) is not used, so a play that already classified the GPUs reads
        them once.
    type: dict
  gpu_sources:
    description:
      - Sources of the GPU facts, as in M(rocm_fleet.core.gpu_facts), when O(gpu) is not given. An empty list skips
        the gathering.
    type: list
    elements: str
    choices: [sysfs, rocm_smi, amd_smi, rocminfo]
    default: [sysfs, rocm_smi]
  host_facts:
    description:
      - Also return, in C(ansible_facts), the C(gpu) fact read for the checks and the OS, kernel and CPU facts of
        M(rocm_fleet.core.gpu_facts)'s O(rocm_fleet.core.gpu_facts#module:host_facts), so a caller that rendered
        the items from earlier facts can confirm, in the same call, that they still hold.
    type: bool
    default: false
  root:
    description:
      - Root of the tree to inspect, so tests and chroot inspections can point at another tree.
    type: path
    default: /
    aliases: [sysfs_root]
attributes:
  check_mode:
    support: full
    description: The module only reads.
  diff_mode:
    support: none
    description: File content differences are returned in RV(results[].diff) instead.
notes:
  - C(changed) is always false.
seealso:
  - module: rocm_fleet.core.gpu_facts
"""

EXAMPLES = r"""
- name: Evaluate the host
  rocm_fleet.core.node_compliance:
    items:
      - id: ROCM-SYSCTL-001
        title: vm.max_map_count is raised for large models
        kind: sysctl
        role: kernel
        task: Apply the sysctl settings
        expect: {name: vm.max_map_count, value: 1048576}
      - id: ROCM-BOOT-001
        title: IOMMU passthrough is active
        kind: kernel_cmdline
        role: kernel
        task: Write the GRUB drop-in
        expect:
          params: [iommu=pt]
          grub_file: /etc/default/grub.d/rocm-fleet.cfg
    gpu_expect:
      count: 8
      products: AMD Instinct MI300X
      topology: {link_type: XGMI, hops: 1, weight: 15}
  register: compliance

- name: Show what failed
  ansible.builtin.debug:
    msg: "{{ compliance.results | rejectattr('status', 'eq', 'pass') | map(attribute='message') | list }}"
"""

RETURN = r"""
results:
  description: One entry per item, then one per O(gpu_expect) key.
  returned: always
  type: list
  elements: dict
  contains:
    id:
      description: The item's ID; GPU checks use ROCM-GPU-001..004, ROCM-TOPO-001..002, ROCM-DRV-001, ROCM-PKG-001.
      type: str
    title:
      description: The item's title.
      type: str
    kind:
      description: The item kind, or C(gpu).
      type: str
    role:
      description: The role that manages the item, if given.
      type: str
    task:
      description: The role task that enforces the item, if given.
      type: str
    severity:
      description: As given in the item.
      type: str
    status:
      description:
        - C(pass), C(fail), or C(error) when the item is invalid or the state could not be read.
        - C(skipped) for a GPU check that needs amdgpu (products, VRAM, links) while amdgpu is not loaded;
          the driver check fails instead.
      type: str
    expected:
      description: The validated expectation, defaults filled in.
      type: raw
    actual:
      description: What the host has, in the same terms.
      type: raw
    message:
      description: Why it failed, naming the path, key, user or GPU pair.
      type: str
    diff:
      description: Unified diff from the host's file to the expected content; empty otherwise.
      type: str
    action:
      description: What the enforcing task would do on a failed item (create, update, remove, add, set, reboot, ...).
      type: str
  sample:
    - id: ROCM-TOPO-001
      title: GPU links as the class declares them
      kind: gpu
      role: null
      task: null
      severity: null
      status: fail
      expected: {link_type: XGMI, hops: 1, weight: 15}
      actual: null
      message: "GPU 2-5: hops 2, expected 1; link_type PCIE, expected XGMI; weight 40, expected 15"
      diff: ""
      action: ""
summary:
  description: Counts of results by status, and C(total).
  returned: always
  type: dict
  sample: {pass: 41, fail: 2, error: 0, skipped: 0, total: 43}
gpu:
  description:
    - The GPU facts gathered for the checks, as M(rocm_fleet.core.gpu_facts) returns them.
    - Null when O(gpu_sources) is empty.
  returned: always
  type: dict
ansible_facts:
  description:
    - The C(gpu) fact and the host facts, under the names M(rocm_fleet.core.gpu_facts) gives them.
  returned: when O(host_facts=true)
  type: dict
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu_model import SOURCES
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu_facts_gather import gather
from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance_evaluate import evaluate
from ansible_collections.rocm_fleet.core.plugins.module_utils.host_facts import gather_host_facts

# Module-level so tests can point the tool search away from a real /opt/rocm.
ROCM_BIN_DIRS = ["/opt/rocm/bin"]


def main():
    module = AnsibleModule(
        argument_spec=dict(
            # The evaluator validates each item, so one bad item is one error result, not a failed task.
            items=dict(type="list", elements="dict", default=[]),
            gpu_expect=dict(type="dict"),
            gpu=dict(type="dict"),
            gpu_sources=dict(type="list", elements="str", choices=list(SOURCES), default=["sysfs", "rocm_smi"]),
            host_facts=dict(type="bool", default=False),
            root=dict(type="path", default="/", aliases=["sysfs_root"]),
            timeout=dict(type="int", default=30),
        ),
        supports_check_mode=True,
    )
    params = module.params
    if params["timeout"] <= 0:
        module.fail_json(msg="timeout must be a positive number of seconds, got %d" % params["timeout"])
    gpu, warnings = params["gpu"], []
    if gpu is None and params["gpu_sources"]:
        gather_params = {"sysfs_root": params["root"], "sources": params["gpu_sources"], "timeout": params["timeout"]}
        try:
            gpu = gather(gather_params, module.get_bin_path, ROCM_BIN_DIRS)
        except Exception as exc:  # the item checks are still worth returning
            warnings.append("GPU facts could not be gathered: %s: %s" % (type(exc).__name__, exc))
    try:
        results, summary = evaluate(params["items"], params["root"], params["gpu_expect"], gpu)
    except Exception as exc:  # never end in a traceback
        module.fail_json(msg="node_compliance: evaluation failed: %s: %s" % (type(exc).__name__, exc))
    facts = None
    if params["host_facts"]:
        host, host_warnings = gather_host_facts(module)  # never raises: what it could not read is a warning
        warnings.extend(host_warnings)
        facts = dict(host, gpu=gpu)
    for warning in warnings:
        module.warn(warning)
    if facts is None:
        module.exit_json(changed=False, results=results, summary=summary, gpu=gpu)
    module.exit_json(changed=False, results=results, summary=summary, gpu=gpu, ansible_facts=facts)


if __name__ == "__main__":
    main()
