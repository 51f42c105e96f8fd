# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: role_argument_specs
version_added: 0.1.0
short_description: Read the meta/argument_specs.yml of every role in a roles directory
description:
  - Returns one mapping of role name to the parsed content of C(<roles dir>/<role>/meta/argument_specs.yml),
    for every role directory that has one. Roles without argument specs are left out.
  - Reads on the controller. Feeds P(rocm_fleet.core.unknown_role_vars#filter), which finds misspelled role
    variables.
options:
  _terms:
    description: Roles directories; without one, the roles directory of this collection.
    type: list
    elements: path
    required: false
author:
  - rocm-fleet contributors
"""

EXAMPLES = r"""
- name: List the variables every role of the collection declares
  ansible.builtin.debug:
    msg: "{{ lookup('rocm_fleet.core.role_argument_specs') | dict2items | map(attribute='key') }}"
"""

RETURN = r"""
_raw:
  description: One mapping, role name to its argument specs document.
  type: list
  elements: dict
"""

import os

import yaml

from ansible.errors import AnsibleLookupError
from ansible.plugins.lookup import LookupBase

# libyaml's loader where the host has it: this runs once per host of a drift check.
SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
# plugins/lookup/<this file> -> the collection root, which holds roles/.
COLLECTION_ROLES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "roles")


def read_argument_specs(roles_dir):
    """{role: parsed argument_specs.yml} for the roles under roles_dir."""
    if not os.path.isdir(roles_dir):
        raise AnsibleLookupError("role_argument_specs: %s is not a directory" % roles_dir)
    specs = {}
    for role in sorted(os.listdir(roles_dir)):
        path = os.path.join(roles_dir, role, "meta", "argument_specs.yml")
        if not os.path.isfile(path):
            continue
        try:
            with open(path) as handle:
                specs[role] = yaml.load(handle, Loader=SAFE_LOADER) or {}
        except (OSError, yaml.YAMLError) as error:
            raise AnsibleLookupError("role_argument_specs: cannot read %s: %s" % (path, error)) from error
    return specs


class LookupModule(LookupBase):
    def run(self, terms, variables=None, **kwargs):
        self.set_options(var_options=variables, direct=kwargs)
        specs = {}
        for roles_dir in terms or [COLLECTION_ROLES]:
            specs.update(read_argument_specs(str(roles_dir)))
        return [specs]
