#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: managed_check
short_description: Find which of a role's managed objects differ from the host, in one module call
version_added: 0.1.0
description:
  - An action that runs on the controller around one M(rocm_fleet.core.node_compliance) call on the host. The
    C(rocm_fleet.core.common) role's apply tasks run it first and then loop over only the objects it returns, so a
    converge where nothing differs costs one module call per role instead of one or two per object.
  - Each object of a kind those tasks write (directory, file, link, line, sysctl, group, user, member) becomes the
    items that prove it as its task would leave it, the same items drift evaluates (a line also gets its file's owner,
    group and mode, which M(ansible.builtin.lineinfile) sets too). A file's content is rendered from the role's
    template as M(ansible.builtin.template) renders it.
  - An object is returned unless every one of its items passes. An item that fails, cannot be read or is unknown
    returns the object, so its task decides, in C(--check) too.
  - Objects of other kinds are left out. It changes nothing on the host and runs the same in C(--check).
author:
  - rocm-fleet maintainers (@rocm-fleet)
options:
  objects:
    description:
      - A role's managed objects, as the C(rocm_fleet.core.managed_objects) filter returns them.
    type: list
    elements: dict
    required: true
  timeout:
    description:
      - Seconds each command the checks run may take on the host.
    type: int
    default: 30
notes:
  - Used by the C(rocm_fleet.core.common) role's C(apply) tasks; a role's own tasks never call it directly.
"""

EXAMPLES = r"""
- name: Find the managed objects that differ from the host
  rocm_fleet.core.managed_check:
    objects: "{{ __common_objects }}"
  check_mode: false
  register: __common_differ

- name: Write the managed files that differ
  ansible.builtin.copy:
    content: "{{ item.content }}"
    dest: "{{ item.path }}"
    mode: "{{ item.mode }}"
  loop: "{{ __common_differ.objects | selectattr('kind', 'eq', 'file') }}"
"""

RETURN = r"""
objects:
  description:
    - The given objects that the apply tasks write and that differ from the host (or could not be proven not to),
      in the order given.
  returned: success
  type: list
  elements: dict
checked:
  description:
    - How many of the given objects are of a kind the apply tasks write.
  returned: success
  type: int
  sample: 12
differ:
  description:
    - The labels of the returned objects.
  returned: success
  type: list
  elements: str
  sample: [/etc/profile.d/rocm.sh]
module_calls:
  description:
    - M(rocm_fleet.core.node_compliance) calls made, 0 where no given object is of a kind the apply tasks write.
  returned: success
  type: int
  sample: 1
"""
