# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Catch misspelled role variables: Ansible silently ignores a variable no role reads.

Filters (documented in plugins/filter/<name>.yml):

* unknown_role_vars: names that carry a role's prefix (``kernel_``) but are not
  declared in that role's meta/argument_specs.yml, each with the nearest known name.
* closest_name: the nearest of a set of names, for "did you mean" messages.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

# The pure logic lives in module_utils, where preflight's decision uses it too.
from ansible_collections.rocm_fleet.core.plugins.module_utils import rocm_decision


def _options_of(role, document):
    """Every option name of every entry point in one role's argument_specs.yml."""
    if document is None:
        return set()
    if not isinstance(document, dict):
        raise AnsibleFilterError("unknown_role_vars: the argument specs of role %s are not a mapping" % role)
    entry_points = document.get("argument_specs", document)
    if not isinstance(entry_points, dict):
        raise AnsibleFilterError("unknown_role_vars: argument_specs of role %s is not a mapping" % role)
    names = set()
    for entry_point in entry_points.values():
        names.update(((entry_point or {}).get("options") or {}).keys())
    return names


def closest_name(name, candidates):
    """The candidate most like ``name`` or None when none is close enough."""
    if not isinstance(name, str):
        raise AnsibleFilterError("closest_name expects a name, got %s" % type(name).__name__)
    return rocm_decision.closest_name(name, candidates)


def unknown_role_vars(names, argument_specs, known=None):
    """[{name, role, suggestion}] for each name with a role's prefix that no argument spec declares.

    ``argument_specs`` maps a role name to its parsed meta/argument_specs.yml;
    the role name plus ``_`` is the prefix its variables carry. ``known`` lists
    names that are declared elsewhere (role vars, facts a role sets as results).
    """
    if not isinstance(argument_specs, dict):
        raise AnsibleFilterError("unknown_role_vars expects argument_specs as a mapping of role name to its specs")
    if isinstance(names, str) or not hasattr(names, "__iter__"):
        raise AnsibleFilterError("unknown_role_vars expects a list of variable names")
    declared = set(str(name) for name in known or [])
    for role, document in argument_specs.items():
        declared.update(_options_of(role, document))
    # The longest prefix wins, so a role named kernel_tuning would own kernel_tuning_x.
    prefixes = sorted(((str(role) + "_", str(role)) for role in argument_specs), key=lambda item: -len(item[0]))
    unknown = []
    for name in sorted(set(str(name) for name in names)):
        role = next((owner for prefix, owner in prefixes if name.startswith(prefix)), None)
        if role is None or name in declared:
            continue
        unknown.append({"name": name, "role": role, "suggestion": closest_name(name, declared)})
    return unknown


class FilterModule(object):
    def filters(self):
        return {"unknown_role_vars": unknown_role_vars, "closest_name": closest_name}
