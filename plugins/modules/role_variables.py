#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: role_variables
short_description: Fail on role variables that the roles' argument specs do not declare or that do not fit them
version_added: 0.1.0
description:
  - An action that runs on the controller only; it calls no module and needs no connection to the host.
  - Reads the host's variables and the C(meta/argument_specs.yml) of every role of this collection.
  - Fails the host on a variable with a role's prefix (C(kernel_)) that no argument spec of that role declares,
    naming the nearest declared name. Ansible would otherwise ignore the misspelled variable silently. The names
    that roles set as results (C(__common_role_results) in C(roles/common/vars/main.yml)) are accepted.
  - Fails on an option of type C(list) given as a string. Argument validation splits C(a,b) into a list for its own
    copy only, and the role would see the string.
  - Fails on an option whose value does not fit its argument spec (type, elements, choices, suboptions), naming the
    variable, the expected type and what it got. Only the values of the checked roles' declared options are
    templated; a value that cannot be templated fails, naming the variable.
  - Fails on a string that the file it is written to cannot hold as a value (a newline, a quote, shell characters
    where the file is shell or splits words, NUL, over-long), naming the variable's full path
    (C(kernel_modprobe_options.amdgpu.noretry)) and each character escaped. Each role's C(meta/value_syntax.yml)
    declares the file syntax per option; the rules are C(plugins/plugin_utils/roles/value_syntax.py)
    (docs/value-syntax.md).
  - Changes nothing.
author:
  - rocm-fleet maintainers (@rocm-fleet)
options:
  roles:
    description:
      - Roles of this collection whose variables are checked; each needs C(meta/argument_specs.yml).
      - Without it, every role of the collection that has argument specs, except the private C(common).
    type: list
    elements: str
  values:
    description:
      - Also check the values against the specs' types (templated first). False checks the names and the file syntax
        of the values that can be templated already, for a check made before the variables the other values read
        exist (preflight's, before its decision); the role's own check takes those.
    type: bool
    default: true
attributes:
  action:
    support: full
    description: Runs on the controller only.
  check_mode:
    support: full
    description: It only reads.
  diff_mode:
    support: none
    description: Nothing changes.
  platform:
    support: full
    platforms: posix
    description: Any host; nothing runs on it.
notes:
  - Each provisioning role runs it first in its C(tasks/preflight.yml) for its own variables, and the
    C(rocm_fleet.core.preflight) role for every role's.
seealso:
  - module: rocm_fleet.core.host_compliance
"""

EXAMPLES = r"""
- name: Fail on kernel_* variables that the argument specs do not declare or that do not fit them
  rocm_fleet.core.role_variables:
    roles: [kernel]

- name: Check the variables of every role of the collection
  rocm_fleet.core.role_variables:
"""

RETURN = r"""
msg:
  description: The problems, C(host H:) then each problem, joined by C(; ); on success which roles were checked.
  returned: always
  type: str
  sample: "host gpu-01: unknown variable kernel_bootparams, not declared in roles/kernel/meta/argument_specs.yml;
    did you mean kernel_boot_params?"
"""
