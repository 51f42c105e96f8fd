#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: converge_plan
short_description: Decide which provisioning roles a converge runs on a host, in one module call
version_added: 0.1.0
description:
  - An action that runs on the controller around one M(rocm_fleet.core.node_compliance) call on the host.
    C(playbooks/provision.yml) runs it through the C(rocm_fleet.core.compliance) role's C(plan) entry point, after
    preflight and with every role's variables imported, and includes only the roles it returns.
  - It renders the declared state as M(rocm_fleet.core.host_compliance) does (the same decision, role variables,
    OS data and templates). Each managed object becomes the items that prove it as its tasks would leave it, as
    M(rocm_fleet.core.managed_check) proves them (a line also gets its file's owner, group and mode); an object
    of a kind no apply task writes is checked as drift checks it. The GPU partition modes are checked against the
    gpu fact on the controller.
  - Each role's C(__<role>_converge) says what its objects cannot prove. C(absent) lists paths whose existence its
    tasks read (the kernel role's reboot markers); one that exists runs the role. C(unproven) lists reasons that
    run the role whatever its objects show (a setting whose state is not among them).
  - The first role with an item that does not pass (failed, unknown, skipped, error) or with an C(unproven)
    reason runs, and so does every role after it in O(roles), as each later role reads what the earlier ones
    install and write.
  - Changes nothing on the host and runs the same in C(--check).
author:
  - rocm-fleet maintainers (@rocm-fleet)
options:
  roles:
    description:
      - The provisioning roles of this collection, in the order they run; the play must have imported their
        variables.
    type: list
    elements: str
    default: [repo, packages, kernel, partitions, access, environment]
  timeout:
    description:
      - Seconds each command the checks run may take on the host.
    type: int
    default: 30
notes:
  - C(docs/scaling.md) says what a converge costs with it, against its floor.
seealso:
  - module: rocm_fleet.core.host_compliance
  - module: rocm_fleet.core.managed_check
"""

EXAMPLES = r"""
- name: Prove which roles' objects already hold as their tasks would leave them
  rocm_fleet.core.converge_plan:
  register: compliance_converge_plan

- name: Apply the roles the plan runs on the host, in order
  ansible.builtin.include_role:
    name: "rocm_fleet.core.{{ provision_role }}"
  loop: [repo, packages, kernel, partitions, access, environment]
  loop_control:
    loop_var: provision_role
  when: provision_role in compliance_converge_plan.roles
"""

RETURN = r"""
roles:
  description: The roles to run on the host, in the order of O(roles); empty where every object is proven.
  returned: success
  type: list
  elements: str
  sample: [access, environment]
reasons:
  description: Why each role of RV(roles) runs, the objects that differ by their labels.
  returned: success
  type: dict
  sample: {access: ["access: render has exactly the listed members fail: gpu-02 has alice"],
           environment: ["runs after access, whose changes it reads"]}
proven:
  description: For each role not run, the labels of its objects, each proven as its tasks would leave it.
  returned: success
  type: dict
  sample: {repo: ["repo: /etc/apt/preferences.d/rocm-pin-600"]}
module_calls:
  description: M(rocm_fleet.core.node_compliance) calls this task made.
  returned: success
  type: int
  sample: 1
"""
