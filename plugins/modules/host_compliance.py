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
  - An action that runs on the controller around one or two M(rocm_fleet.core.node_compliance) calls on the host.
    The C(rocm_fleet.core.compliance) role runs it after reading the GPU and OS facts (or finding them in the fact
    cache) and after importing each role's C(vars) entry point, so the task sees every role's variables with the
    precedence Ansible gives them in a provisioning play (C(-e) wins).
  - It validates the role variables (names, types) with the same function as the roles' own validation.
  - It decides as preflight does, with the same function (C(plugin_utils/decision/preflight.py)) that preflight's
    C(rocm_fleet.core.preflight_decide) filter calls, never refusing the host.
  - It takes each role's managed objects (C(__<role>_objects), the list the role's tasks loop over), turns them into
    items, renders the files' contents from the role's templates as M(ansible.builtin.template) writes them, and
    evaluates them in one M(rocm_fleet.core.node_compliance) call. The GPU class checks run on the controller,
    against the gpu fact, with what the compliance role's C(__compliance_gpu_inputs) adds to the decision (the
    default ROCm release, the declared NUMA affinity, where ROCm and the driver come from).
  - The same call also runs the health, kernel/DKMS and Secure Boot checks (ROCM-HEALTH-001 to 006, ROCM-KERN-001
    to 003; M(rocm_fleet.core.node_compliance)'s O(rocm_fleet.core.node_compliance#module:health)), with
    expectations built here from the decision and preflight's data (the class's firmware minimums in
    C(roles/preflight/vars/gpu_firmware.yml), the driver line's kernel maximum and module version) and
    C(compliance_health_ce_threshold). A failing ROCM-HEALTH-002 makes a failing ROCM-TOPO-001 C(skipped), so one cause
    is reported once (C(docs/compliance-controls.md)).
  - Where the facts came from an earlier run (O(facts_fresh=false)), that call reads the facts again; if they
    differ, the action decides again from the fresh facts and makes a second call, so the results are always those
    of deciding from what the host reports now.
  - Changes nothing on the host.
author:
  - rocm-fleet maintainers (@rocm-fleet)
extends_documentation_fragment:
  - rocm_fleet.core.gpu_tools
options:
  roles:
    description:
      - Roles of this collection whose managed objects (C(__<role>_objects)) are evaluated; the play must have
        imported their variables.
    type: list
    elements: str
    default: [repo, packages, kernel, partitions, access, environment]
  gpu_sources:
    description:
      - Sources the facts are read again from when O(facts_fresh=false), as in M(rocm_fleet.core.gpu_facts), with
        its default.
    type: list
    elements: str
    choices: [sysfs, rocm_smi, amd_smi, rocminfo]
  facts_fresh:
    description:
      - Whether the play read the host's facts just now; false (the fact cache) makes the evaluating call confirm them.
    type: bool
    default: false
  skip_checks:
    description:
      - Check IDs not evaluated on this host.
    type: list
    elements: str
    default: []
  state_cache:
    description:
      - Directory where the host's declared state (the decision, the roles' items, the GPU class expectations) is kept
        between runs, keyed by everything it is rendered from (its variables unrendered, its facts, the collection's
        roles and plugins, ansible-core's version, O(state_key)); a run whose key is unchanged reads it instead of
        rendering it. Unset renders it on every run.
      - A value a lookup reads from outside the inventory (a file, a secret store) is not part of the key; entries
        older than O(state_cache_max_age) are rendered again.
    type: path
  state_key:
    description:
      - The caller's part of the key, such as a digest of the environment that lookups of env read.
    type: str
    default: ""
  state_cache_max_age:
    description:
      - Seconds a kept declared state serves.
    type: int
    default: 604800
  detail:
    description:
      - V(all) returns every result whole, and the decision.
      - V(findings) folds each check's passing items into one result (its C(id), C(title), C(status) and the number
        of C(items)), already on the host
        (M(rocm_fleet.core.node_compliance)'s O(rocm_fleet.core.node_compliance#module:detail)), cuts RV(gpu) to
        what a drift report shows (C(count), each device's C(product) and C(numa_node), C(topology.link_type)) and
        leaves out RV(decision); every other result is whole. The nightly drift asks for this, as its report lists
        a passed check by its ID, and a fleet's results pass through Ansible's single main process (about 75 KB a
        compliant 8-GPU host in full, 6 KB folded).
    type: str
    choices: [all, findings]
    default: all
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
    description: Any POSIX host with Python that M(rocm_fleet.core.node_compliance) supports.
notes:
  - The item kinds and their expected state are documented in C(docs/compliance-checks.md); the check IDs in
    C(docs/compliance-controls.md).
seealso:
  - module: rocm_fleet.core.node_compliance
  - module: rocm_fleet.core.gpu_facts
"""

EXAMPLES = r"""
- name: Evaluate the host against what the inventory declares
  rocm_fleet.core.host_compliance:
    facts_fresh: true
  register: compliance_result

- name: Look only at the kernel and access roles, without the NUMA check
  rocm_fleet.core.host_compliance:
    roles: [kernel, access]
    skip_checks: [ROCM-TOPO-002]
"""

RETURN = r"""
results:
  description:
    - One result per item, per GPU class check and per health check (per GPU where it applies), as
      M(rocm_fleet.core.node_compliance) returns them; a health check whose reading is no value is C(unknown).
    - With O(detail=findings), one result per check for its passing items, with their number in C(items).
  returned: success
  type: list
  elements: dict
summary:
  description: Counts of the items by status, the same whatever O(detail).
  returned: success
  type: dict
  sample: {pass: 41, fail: 0, error: 0, skipped: 0, unknown: 0, warn: 0, total: 41}
gpu:
  description: The C(gpu) fact the checks read; with O(detail=findings), what a drift report shows of it.
  returned: success
  type: dict
decision:
  description: What preflight decides for this host (the C(preflight_decision) keys), never a refusal.
  returned: success, unless O(detail=findings)
  type: dict
ansible_facts:
  description:
    - The gpu fact and the OS facts read again (C(distribution), C(os_family), C(kernel), C(processor), ...), for the
      fact cache; the task decided again from them, an OS reinstalled since included.
  returned: when O(facts_fresh=false) and the facts read again differ from those decided from
  type: dict
module_calls:
  description:
    - M(rocm_fleet.core.node_compliance) calls this task made; 1 unless the cached facts no longer held. Reading the
      facts first (the compliance role's gpu_facts task, left out where they are cached) is one call more.
  returned: success
  type: int
  sample: 1
"""
