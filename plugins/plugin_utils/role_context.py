# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collection's roles' variables as a provisioning play gives them to one host, on the controller.

rocm_fleet.core.host_compliance evaluates the roles' own definitions here (preflight's
decision, each role's templates/desired_state.json.j2, the compliance role's GPU
class expectations) instead of running the roles' tasks, so a drift check costs one
task per host. Nothing a role declares is restated in Python.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import yaml

from ansible.errors import AnsibleError
from ansible.module_utils.common.text.converters import to_text
from ansible.template import trust_as_template
from ansible.vars.clean import namespace_facts

try:  # what ansible-core 2.19's template action reads template_* and ansible_managed from
    from ansible._internal._templating._template_vars import generate_ansible_template_vars
except ImportError:  # pragma: no cover - earlier layouts
    from ansible.template import generate_ansible_template_vars

from ansible_collections.rocm_fleet.core.plugins.filter.role_variables import unknown_role_vars
from ansible_collections.rocm_fleet.core.plugins.lookup.role_argument_specs import (
    COLLECTION_ROLES as ROLES_DIR,
    SAFE_LOADER,
    read_argument_specs,
)

DESIRED_STATE_TEMPLATE = "desired_state.json.j2"
# Data files a role's tasks load unconditionally besides vars/main.yml (preflight's validate.yml).
ROLE_DATA_FILES = {"preflight": ("gpu_catalog.yml", "support_matrix.yml")}
OS_FAMILIES = ("Debian", "RedHat", "Suse")
# The template module's defaults, which every role template is written with.
TEMPLATE_OVERRIDES = {"trim_blocks": True, "lstrip_blocks": False, "newline_sequence": "\n"}


class RoleContextError(Exception):
    """What stops one host's evaluation, said so the operator knows what to fix."""


def desired_state_template(role):
    return os.path.join(ROLES_DIR, role, "templates", DESIRED_STATE_TEMPLATE)


def describing_roles():
    """The roles that describe what they leave on a host."""
    return sorted(role for role in os.listdir(ROLES_DIR) if os.path.isfile(desired_state_template(role)))


class RoleContext:
    """The variables of ``roles`` for one host, lowest precedence first, as Ansible orders them.

    Role defaults; the host's variables (inventory, play, extra vars); role
    vars/main.yml; data files and OS family files (include_vars); then the facts
    gathered now. ``set`` adds what set_fact would (the decision).
    """

    def __init__(self, loader, templar, task_vars, facts, roles):
        self._loader = loader
        self._templar = templar
        self._task_vars = task_vars
        self._data_names = set()
        roles = list(dict.fromkeys(roles))
        facts = namespace_facts(facts)["ansible_facts"]  # ansible_distribution -> distribution
        variables = {}
        for role in roles:
            variables.update(self._load(role, "defaults", "main.yml"))
        # "vars" is the play's whole variable set again: stale here, and costly to copy.
        variables.update((name, value) for name, value in task_vars.items() if name != "vars")
        for role in roles:
            variables.update(self._load(role, "vars", "main.yml"))
            for name in ROLE_DATA_FILES.get(role, ()):
                data = self._load(role, "vars", name, templates=False)
                self._data_names.update(data)
                variables.update(data)
            variables.update(self._os_vars(role, facts.get("os_family"), facts.get("distribution")))
        variables["ansible_facts"] = dict(task_vars.get("ansible_facts") or {}, **facts)
        self._variables = variables

    def set(self, name, value):
        self._variables[name] = value

    def fix(self, role, names, purpose):
        """Evaluate each name once, in order, and keep the value, as set_fact would."""
        for name in names:
            self.set(name, self.evaluate(role, name, purpose))

    def drop_data(self, names=()):
        """Forget the role data files (and ``names``): large, and read by no template."""
        for name in self._data_names.union(names):
            self._variables.pop(name, None)

    def unknown_variables(self, known_from):
        """Role-prefixed variables of the host that no argument spec declares, as preflight names them."""
        try:
            specs = read_argument_specs(ROLES_DIR)
        except AnsibleError as error:
            raise RoleContextError(to_text(error)) from error
        role, name = known_from
        known = self.evaluate(role, name, "read the role-prefixed names that are not settings")
        return [
            "unknown variable %s, not declared in roles/%s/meta/argument_specs.yml%s"
            % (item["name"], item["role"], "; did you mean %s?" % item["suggestion"] if item["suggestion"] else "")
            for item in unknown_role_vars(list(self._task_vars), specs, known=known)
        ]

    def evaluate(self, role, name, purpose):
        if name not in self._variables:
            raise RoleContextError("cannot %s: roles/%s defines no %s" % (purpose, role, name))
        return self._template(role, self._variables[name], purpose)

    def render_items(self, role):
        """The role's desired state: its template's items, file contents rendered as the template module would."""
        purpose = "render the desired state of role %s" % role
        text = self._loader.get_text_file_contents(desired_state_template(role))
        rendered = self._template(role, trust_as_template(text), purpose)
        try:
            items = json.loads(rendered) if isinstance(rendered, str) else rendered
        except ValueError as error:
            raise RoleContextError("cannot %s: its template gave no JSON list (%s)" % (purpose, error)) from error
        if not isinstance(items, list) or not all(isinstance(item, dict) for item in items):
            raise RoleContextError("cannot %s: its template gave no list of items" % purpose)
        for item in items:
            expect = item.get("expect")
            if isinstance(expect, dict) and "template" in expect:
                source = expect.pop("template")
                expect["content"] = self.render_file(role, source.get("src"), expect.get("path"), source.get("vars"))
        return items

    def render_file(self, role, src, dest, template_vars=None):
        """roles/<role>/templates/<src> as ansible.builtin.template writes it to ``dest``."""
        templates = os.path.join(ROLES_DIR, role, "templates")
        source = os.path.join(templates, str(src))
        if not os.path.isfile(source):
            raise RoleContextError("cannot render roles/%s/templates/%s: no such file" % (role, src))
        # A shallow copy, as the template action makes (the template lookup's deep copy
        # of every variable would cost more than all the rest of a host's evaluation).
        variables = dict(self._variables, role_path=os.path.join(ROLES_DIR, role))
        variables.update(generate_ansible_template_vars(
            path=src, fullpath=source, dest_path=dest, include_ansible_managed="ansible_managed" not in variables,
        ))
        variables.update(template_vars or {})
        templar = self._templar.copy_with_new_env(searchpath=[templates, os.path.dirname(templates)],
                                                  available_variables=variables)
        data = trust_as_template(self._loader.get_text_file_contents(source))
        try:
            text = templar.template(data, escape_backslashes=False, overrides=TEMPLATE_OVERRIDES)
        except AnsibleError as error:
            raise _variable_error("render roles/%s/templates/%s" % (role, src), role, error) from error
        return text if text is not None else ""

    def _template(self, role, value, purpose):
        variables = dict(self._variables, role_path=os.path.join(ROLES_DIR, role),
                         role_name="rocm_fleet.core." + role)
        try:
            return self._templar.copy_with_new_env(available_variables=variables).template(value)
        except AnsibleError as error:
            raise _variable_error(purpose, role, error) from error

    def _load(self, role, folder, name, templates=True):
        path = os.path.join(ROLES_DIR, role, folder, name)
        if not os.path.isfile(path):
            if folder == "vars" and name in ROLE_DATA_FILES.get(role, ()):
                raise RoleContextError("roles/%s/vars/%s is missing" % (role, name))
            return {}
        if templates:
            data = self._loader.load_from_file(path, trusted_as_template=True)
        else:  # plain data (the catalog, the matrix): libyaml reads it several times faster
            try:
                with open(path) as handle:
                    data = yaml.load(handle, Loader=SAFE_LOADER)
            except (OSError, yaml.YAMLError) as error:
                raise RoleContextError("cannot read roles/%s/%s/%s: %s" % (role, folder, name, error)) from error
        if data is None:
            return {}
        if not isinstance(data, dict):
            raise RoleContextError("roles/%s/%s/%s is not a mapping of variables" % (role, folder, name))
        return data

    def _os_vars(self, role, family, distribution):
        """vars/<os_family>.yml, then vars/<distribution>.yml, as the role's preflight.yml includes them."""
        vars_dir = os.path.join(ROLES_DIR, role, "vars")
        if not any(os.path.isfile(os.path.join(vars_dir, known + ".yml")) for known in OS_FAMILIES):
            return {}
        if not family or not os.path.isfile(os.path.join(vars_dir, "%s.yml" % family)):
            raise RoleContextError("role %s has no vars/%s.yml: OS family %s is not supported (supported: %s)"
                                   % (role, family, family, ", ".join(OS_FAMILIES)))
        variables = dict(self._load(role, "vars", "%s.yml" % family))
        if distribution and distribution != family:
            variables.update(self._load(role, "vars", "%s.yml" % distribution))
        return variables


def _variable_error(purpose, role, error):
    message = to_text(getattr(error, "message", None) or error).strip()
    return RoleContextError("cannot %s: %s; check the variables against roles/%s/meta/argument_specs.yml"
                            % (purpose, message, role))
