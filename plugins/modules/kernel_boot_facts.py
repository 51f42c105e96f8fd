#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: kernel_boot_facts
short_description: Read the installed kernels, the boot loader's default and whether amdgpu (DKMS) is built for each
version_added: 0.1.0
description:
  - Reads the running kernel (C(/proc/sys/kernel/osrelease)), the installed kernels (C(/boot/vmlinuz-<k>) with a
    modules directory), the kernel the boot loader starts next (grub.cfg's default, grubenv's C(saved_entry) and
    C(next_entry), or Boot Loader Spec entries) and each kernel's GRUB menu entry id path.
  - For each kernel it says whether the DKMS module is built and installed (read from the DKMS tree as
    C(dkms status) reads it), and where a build failed, the end of DKMS's C(make.log) for that kernel.
  - With O(kernel), also whether that kernel may become the boot default (C(promotion)), under Secure Boot only when
    its module is signed by an enrolled key.
  - Changes nothing; runs no DKMS or package command.
author:
  - rocm-fleet maintainers (@rocm-fleet)
options:
  kernel:
    description: A kernel release to judge for promotion to the boot default.
    type: str
  module:
    description: The DKMS module.
    type: str
    default: amdgpu
  kernel_max:
    description: The newest kernel series the driver line builds for (named in the reasons), or null.
    type: str
  expected_version:
    description: The module version the driver line installs (a DKMS version starts with it), or null.
    type: str
  root:
    description: The file system root to read (tests).
    type: path
    default: /
attributes:
  check_mode:
    support: full
    description: Reads only.
  diff_mode:
    support: none
    description: Reads only; nothing to show.
  platform:
    support: full
    platforms: posix
    description: Linux hosts with GRUB or Boot Loader Spec entries.
"""

EXAMPLES = r"""
- name: Read the kernels and whether amdgpu is built for the new one
  rocm_fleet.core.kernel_boot_facts:
    kernel: 6.1.0-19-amd64
    kernel_max: "6.16"
  register: boot

- name: Fail when the new kernel would boot without amdgpu
  ansible.builtin.fail:
    msg: "{{ boot.promotion.reason }}"
  when: boot.promotion.state != 'pass'
"""

RETURN = r"""
running:
  description: The running kernel.
  returned: always
  type: str
default:
  description: The kernel the boot loader starts next, or null when it cannot be told.
  returned: always
  type: str
default_source:
  description: Where the default was read (or why it could not be).
  returned: always
  type: str
installed:
  description: The installed kernels.
  returned: always
  type: list
  elements: str
grub_cfg:
  description: The GRUB configuration read, or null.
  returned: always
  type: str
saved_entry:
  description: grubenv's saved_entry, or null.
  returned: always
  type: str
next_entry:
  description: grubenv's next_entry (a one-time boot), or null.
  returned: always
  type: str
kernels:
  description:
    - Per kernel (the installed ones and the running one) C(entry) (GRUB id path), C(headers) (bool),
      C(module_state) (pass, fail or unknown), C(module_reason), C(module_file), C(make_log) and C(make_log_tail).
  returned: always
  type: dict
promotion:
  description: With O(kernel), C(state) (pass or fail), C(reason) (naming the kernel and DKMS's reason) and C(entry).
  returned: when O(kernel) is given
  type: dict
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.health import secure_boot_check
from ansible_collections.rocm_fleet.core.plugins.module_utils.host.kernel_update import boot_facts, promotion


def main():
    module = AnsibleModule(
        argument_spec=dict(
            kernel=dict(type="str"),
            module=dict(type="str", default="amdgpu"),
            kernel_max=dict(type="str"),
            expected_version=dict(type="str"),
            root=dict(type="path", default="/"),
        ),
        supports_check_mode=True,
    )
    params = module.params
    try:
        facts = boot_facts(params["root"], params["module"], params["kernel_max"], params["expected_version"])
        if params["kernel"]:
            secure_boot = secure_boot_check(params["root"], [params["kernel"]])
            facts["promotion"] = promotion(facts, params["kernel"], secure_boot)
    except Exception as error:  # a reader bug must name itself, never a traceback
        module.fail_json(msg="reading the boot facts failed: %s: %s" % (type(error).__name__, error))
    module.exit_json(changed=False, **facts)


if __name__ == "__main__":
    main()
