# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collection's roles on the controller: where they are, their argument specs, and names no spec declares.

closest_name is the "did you mean" of every message that names a misspelt variable or GPU class.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import difflib
import os

import yaml

from ansible.errors import AnsibleError

# libyaml's loader where the controller has it: drift reads these for every host.
SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
# The collection (or the checkout) this file is part of: plugins/plugin_utils/roles/specs.py is four levels down.
COLLECTION_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
ROLES_DIR = os.path.join(COLLECTION_ROOT, "roles")
# difflib's ratio above which a name counts as a likely misspelling; 0.6 is its
# default and still pairs preflight_rocm_verison with preflight_rocm_version.
SIMILARITY_CUTOFF = 0.6


class RoleSpecsError(AnsibleError):
    """An argument spec that cannot be read; the message names the file."""


def closest_name(name, candidates):
    """The candidate most like ``name``, or None when none is close enough."""
    matches = difflib.get_close_matches(str(name), sorted(str(item) for item in candidates), 1, SIMILARITY_CUTOFF)
    return matches[0] if matches else None


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
    """{role: {option: declaration}} from each role's meta/value_syntax.yml (rules: roles/value_syntax.py)."""
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
