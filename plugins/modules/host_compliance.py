#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: host_compliance
short_description: Evaluate a host against what the roles and the inventory declare, in one task
version_added: 0.1.0
description:
  - An action that runs on the controller around one or two module calls on the host, over one connection.
  - First M(rocm_fleet.core.gpu_facts) reads the GPUs and the OS facts the decisions need (C(host_facts=true)).
    Where the host's C(gpu) and OS facts are known already (Ansible's fact cache, which C(rocm-fleet drift) keeps
    between runs, or an earlier task of the play), that call is left out. The decision is then made from the known
    facts, and the one M(rocm_fleet.core.node_compliance) call reads the facts again. If they differ, the action
    decides again from the fresh facts and makes a second node_compliance call. Either way, the results are those
    of deciding from what the host reports now.
  - Then, on the controller, it evaluates the roles' own definitions in the variable context a provisioning play
    gives them (every role's C(defaults/main.yml), then the host's variables, then every role's C(vars/main.yml),
    C(rocm_fleet.core.preflight)'s catalog and support matrix, and the C(vars/<os_family>.yml) and
    C(vars/<distribution>.yml) files).
  - From that context it takes preflight's decision (C(__preflight_decision)), never refusing the host. It renders
    each role's C(templates/desired_state.json.j2) into items. It adds the GPU class expectations
    (C(__compliance_gpu_expect) of C(rocm_fleet.core.compliance)).
  - Finally one M(rocm_fleet.core.node_compliance) call evaluates all of it, with the GPU facts already read.
  - A role variable that no role's C(meta/argument_specs.yml) declares fails the host, naming the nearest declared
    name, as preflight's validation does. So does a variable the roles cannot render, naming the role.
  - Changes nothing on the host.
author:
  - rocm-fleet maintainers (@rocm-fleet)
extends_documentation_fragment:
  - rocm_fleet.core.gpu_tools
options:
  roles:
    description:
      - Roles of this collection whose desired state is evaluated; each needs C(templates/desired_state.json.j2).
    type: list
    elements: str
    default: [repo, packages, kernel, access, environment]
  gpu_sources:
    description:
      - Sources of the GPU facts, as in M(rocm_fleet.core.gpu_facts). An empty list classifies from sysfs but leaves
        the GPU class checks out.
    type: list
    elements: str
    choices: [sysfs, rocm_smi, amd_smi, rocminfo]
    default: [sysfs]
  skip_checks:
    description:
      - Check IDs not evaluated on this host.
    type: list
    elements: str
    default: []
attributes:
  action:
    support: full
    description: Runs on the controller around one or two module calls on the host.
  check_mode:
    support: full
    description: It only reads.
  diff_mode:
    support: none
    description: Drift items carry their own diffs in the results.
  platform:
    support: full
    platforms: posix
    description: Any POSIX host with Python that M(rocm_fleet.core.gpu_facts) supports.
notes:
  - The item kinds and their expected state are documented in C(docs/compliance-checks.md); the check IDs in
    C(docs/compliance-controls.md).
  - The C(rocm_fleet.core.compliance) role runs this action with the C(compliance_*) variables.
seealso:
  - module: rocm_fleet.core.node_compliance
  - module: rocm_fleet.core.gpu_facts
"""

EXAMPLES = r"""
- name: Evaluate the host against what the inventory declares
  rocm_fleet.core.host_compliance:
    gpu_sources: [sysfs, rocm_smi]  # rocm-smi's disagreements with sysfs become conflicts in the gpu fact
  register: compliance_result

- name: Leave the NUMA check out and look only at the kernel and access roles
  rocm_fleet.core.host_compliance:
    roles: [kernel, access]
    skip_checks: [ROCM-TOPO-002]
"""

RETURN = r"""
results:
  description: One result per item and per GPU class check, as M(rocm_fleet.core.node_compliance) returns them.
  returned: success
  type: list
  elements: dict
summary:
  description: Counts of results by status.
  returned: success
  type: dict
  sample: {pass: 41, fail: 0, error: 0, skipped: 0, total: 41}
gpu:
  description: The C(gpu) fact the checks read.
  returned: success
  type: dict
decision:
  description: What preflight decides for this host (the C(preflight_decision) keys), never a refusal.
  returned: success
  type: dict
ansible_facts:
  description: The gpu fact and the OS facts gathered (C(distribution), C(os_family), C(kernel), C(processor), ...).
  returned: success
  type: dict
module_calls:
  description: Module calls this host cost; 1 when known facts still held, else 2.
  returned: success
  type: int
  sample: 1
"""
