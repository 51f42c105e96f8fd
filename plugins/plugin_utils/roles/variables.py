# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What is wrong with a host's role variables, judged by the roles' meta/argument_specs.yml, on the controller.

One definition of the check every role's preflight runs first (through the
rocm_fleet.core.role_variables action): a role-prefixed name no argument spec
declares (Ansible would silently ignore it), a list option given as a string
(argument validation splits "a,b" for its own copy only; the role would see the
string), a value that does not fit its option's spec, and a string that the
file it is written to cannot hold as a value (the role's meta/value_syntax.yml
declares the file syntax per option; plugins/plugin_utils/roles/value_syntax.py).

role_variable_problems is pure and wants templated values: templated_options
templates just the values it checks, with the caller's templar.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
from collections.abc import Mapping

import yaml

from ansible.errors import AnsibleError
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.module_utils.common.text.converters import to_text

from ansible_collections.rocm_fleet.core.plugins.plugin_utils.roles.value_syntax import declared_problems
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.roles.specs import (
    ROLES_DIR,
    SAFE_LOADER,
    read_argument_specs,
    read_value_syntax,
    unknown_role_vars,
)

# The role-prefixed names that are results, not settings, are data of the common role.
RESULTS_FILE = os.path.join(ROLES_DIR, "common", "vars", "main.yml")
RESULTS_NAME = "__common_role_results"
# Documentation, or meaningless for a value that is present: role specs write defaults as prose too.
NOT_CHECKED = ("default", "required", "description", "version_added")
SHOWN_CHARACTERS = 80


def read_specs():
    """{role: argument specs} of this collection's roles."""
    return read_argument_specs(ROLES_DIR)


def role_results(path=RESULTS_FILE):
    """The role-prefixed names that roles set as results (__common_role_results in roles/common/vars/main.yml)."""
    try:
        with open(path) as handle:
            data = yaml.load(handle, Loader=SAFE_LOADER) or {}
    except (OSError, yaml.YAMLError) as error:
        raise ValueError("cannot read %s: %s" % (path, error)) from error
    names = data.get(RESULTS_NAME) if isinstance(data, dict) else None
    if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
        raise ValueError("%s must define %s as a list of variable names" % (path, RESULTS_NAME))
    return names


def checked_roles(specs, roles=None):
    """``roles``, or every role with argument specs but the private ones (common), whose names are internal."""
    if roles is None:
        return sorted(role for role in specs if not role.startswith("_"))
    return list(dict.fromkeys(str(role) for role in roles))


def declared_options(document):
    """{option: spec} over every entry point of one argument_specs.yml, main's spec first."""
    entry_points = (document or {}).get("argument_specs", document) or {}
    options = {}
    for name in sorted(entry_points, key=lambda entry_point: entry_point != "main"):
        for option, spec in ((entry_points[name] or {}).get("options") or {}).items():
            options.setdefault(option, spec or {})
    return options


def read_syntaxes():
    """{role: {option: declaration}} of this collection's roles (meta/value_syntax.yml)."""
    return read_value_syntax(ROLES_DIR)


def templated_options(templar, variables, specs, roles=None, skip_untemplatable=False):
    """(variables with the checked roles' declared options templated, problems of those that cannot be).

    The other names only count by name, so their values are left as they are. ``skip_untemplatable``
    leaves out, without a problem, a value that cannot be templated yet (it reads preflight_decision).
    """
    declared = set()
    for role in checked_roles(specs, roles):
        declared.update(declared_options(specs.get(role)))
    templated, problems = {}, []
    for name, value in variables.items():
        if name in declared:
            try:
                value = templar.template(value)
            except AnsibleError as error:
                if not skip_untemplatable:
                    problems.append("%s cannot be templated: %s" % (name, error_message(error)))
                continue
        templated[name] = value
    return templated, problems


def error_message(error):
    return to_text(getattr(error, "message", None) or error).strip() or type(error).__name__


def role_variable_problems(variables, specs, roles=None, known=None, values=True, syntaxes=None):
    """Messages for each problem of ``variables`` (name to templated value) against ``specs``.

    ``specs`` is read_argument_specs' output; ``roles`` limits the check to those
    roles' prefixes and options; ``known`` names role-prefixed results to accept;
    ``values=False`` checks the names and the file syntax of the values given, not
    their types (before every value can be templated); ``syntaxes`` is
    read_value_syntax's output (read from the roles when None).
    """
    roles = checked_roles(specs, roles)
    syntaxes = read_syntaxes() if syntaxes is None else syntaxes
    problems = ["role %s has no meta/argument_specs.yml" % role for role in roles if role not in specs]
    roles = [role for role in roles if role in specs]
    # Every role's spec decides which role owns a prefix; only the checked roles' names are reported.
    for item in unknown_role_vars(list(variables), specs, known=known):
        if item["role"] in roles:
            problems.append("unknown variable %s, not declared in roles/%s/meta/argument_specs.yml%s" % (
                item["name"], item["role"], "; did you mean %s?" % item["suggestion"] if item["suggestion"] else ""))
    for role in roles:
        declarations = syntaxes.get(role) or {}
        for name, spec in sorted(declared_options(specs[role]).items()):
            if name not in variables:
                continue
            type_problems = _value_problems(name, variables[name], spec) if values else []
            problems.extend(type_problems)
            if not type_problems and name in declarations:
                problems.extend(declared_problems(name, variables[name], declarations[name]))
    return problems


def _value_problems(name, value, spec):
    if spec.get("type") == "list" and isinstance(value, str):
        return ["%s must be a YAML list, not a string" % name]
    checked = {key: setting for key, setting in spec.items() if key not in NOT_CHECKED}
    errors = ArgumentSpecValidator({name: checked}).validate({name: value}).error_messages
    if not errors:
        return []
    expected = checked.get("type", "str")
    if checked.get("elements"):
        expected += " of %s" % checked["elements"]
    # The validator's own type error says what the message below says; what else it found is added.
    details = [error for error in errors if not error.startswith("argument '%s' is of type" % name)]
    shown = "" if spec.get("no_log") else " " + _shown(value)
    detail = " (%s)" % "; ".join(details) if details and not spec.get("no_log") else ""
    return ["%s must be %s, got %s%s%s" % (name, expected, _kind(value), shown, detail)]


def _kind(value):
    """The YAML kind of a value; Ansible's own types (tagged strings) are subclasses of these."""
    for kind, types in (("null", type(None)), ("bool", bool), ("int", int), ("float", float), ("str", str),
                        ("dict", Mapping), ("list", (list, tuple, set))):
        if isinstance(value, types):
            return kind
    return type(value).__name__


def _shown(value):
    text = repr(value)
    return text if len(text) <= SHOWN_CHARACTERS else text[:SHOWN_CHARACTERS - 3] + "..."
