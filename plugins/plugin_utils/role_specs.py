# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collection's roles on the controller: where they are, their argument specs, and names no spec declares."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import yaml

from ansible.errors import AnsibleError

from ansible_collections.rocm_fleet.core.plugins.module_utils.rocm_decision import closest_name

# libyaml's loader where the controller has it: drift reads these for every host.
SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
# plugins/plugin_utils/<this file> -> the collection root, which holds roles/.
ROLES_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "roles")


class RoleSpecsError(AnsibleError):
    """An argument spec that cannot be read; the message names the file."""


def read_argument_specs(roles_dir=ROLES_DIR):
    """{role: parsed meta/argument_specs.yml} for the roles under ``roles_dir`` that have one."""
    if not os.path.isdir(roles_dir):
        raise RoleSpecsError("%s is not a directory of roles" % roles_dir)
    specs = {}
    for role in sorted(os.listdir(roles_dir)):
        path = os.path.join(roles_dir, role, "meta", "argument_specs.yml")
        if not os.path.isfile(path):
            continue
        try:
            with open(path) as handle:
                specs[role] = yaml.load(handle, Loader=SAFE_LOADER) or {}
        except (OSError, yaml.YAMLError) as error:
            raise RoleSpecsError("cannot read %s: %s" % (path, error)) from error
    return specs


def read_value_syntax(roles_dir=ROLES_DIR):
    """{role: {option: declaration}} from each role's meta/value_syntax.yml (plugins/module_utils/value_syntax.py)."""
    declarations = {}
    for role in sorted(os.listdir(roles_dir)) if os.path.isdir(roles_dir) else []:
        path = os.path.join(roles_dir, role, "meta", "value_syntax.yml")
        if not os.path.isfile(path):
            continue
        try:
            with open(path) as handle:
                document = yaml.load(handle, Loader=SAFE_LOADER) or {}
        except (OSError, yaml.YAMLError) as error:
            raise RoleSpecsError("cannot read %s: %s" % (path, error)) from error
        options = document.get("value_syntax") if isinstance(document, dict) else None
        if not isinstance(options, dict):
            raise RoleSpecsError("%s must map value_syntax to {option: declaration}" % path)
        declarations[role] = options
    return declarations


def option_names(role, document):
    """Every option name of every entry point in one role's argument_specs.yml."""
    if document is None:
        return set()
    entry_points = document.get("argument_specs", document) if isinstance(document, dict) else None
    if not isinstance(entry_points, dict):
        raise RoleSpecsError("the argument specs of role %s are not a mapping of entry points" % role)
    names = set()
    for entry_point in entry_points.values():
        names.update(((entry_point or {}).get("options") or {}).keys())
    return names


def unknown_role_vars(names, argument_specs, known=None):
    """[{name, role, suggestion}] for each name with a role's prefix (``kernel_``) that no argument spec declares.

    ``known`` lists role-prefixed names declared elsewhere (the results roles set).
    """
    declared = set(str(name) for name in known or [])
    for role, document in argument_specs.items():
        declared.update(option_names(role, document))
    # The longest prefix wins, so a role named kernel_tuning would own kernel_tuning_x.
    prefixes = sorted(((str(role) + "_", str(role)) for role in argument_specs), key=lambda item: -len(item[0]))
    unknown = []
    for name in sorted(set(str(name) for name in names)):
        role = next((owner for prefix, owner in prefixes if name.startswith(prefix)), None)
        if role is None or name in declared:
            continue
        unknown.append({"name": name, "role": role, "suggestion": closest_name(name, declared)})
    return unknown
