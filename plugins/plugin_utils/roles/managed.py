# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A role's managed objects on the controller: plugin_utils.roles.managed_state plus where the role's files are.

The rocm_fleet.core.managed_objects filter (provisioning, through the common
role) and the host_compliance action (drift) both call ``role_objects``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.rocm_fleet.core.plugins.plugin_utils.roles.managed_state import ManagedStateError, normalize
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.roles.specs import ROLES_DIR

OS_FAMILIES = ("Debian", "RedHat", "Suse")


def role_objects(objects, role):
    """normalize(), each template resolved to roles/<role>/templates/ (absolute: the common role applies it)."""
    normalized = normalize(objects, role)
    for obj in normalized:
        if obj["kind"] == "file" and obj.get("template"):
            path = os.path.join(ROLES_DIR, role, "templates", obj["template"])
            if not os.path.isfile(path):
                raise ManagedStateError("%s: roles/%s/templates/%s does not exist"
                                        % (obj["label"], role, obj["template"]))
            obj["template_path"] = path
    return normalized


def os_vars_files(role, facts):
    """roles/<role>/vars/<os_family>.yml, then <distribution>.yml where it exists: the role's OS data, in that order.

    A role with OS data and no file for the host's family cannot run there: the error says which families it has.
    """
    vars_dir = os.path.join(ROLES_DIR, role, "vars")
    families = [name for name in OS_FAMILIES if os.path.isfile(os.path.join(vars_dir, name + ".yml"))]
    if not families:
        return []
    family, distribution = (facts or {}).get("os_family"), (facts or {}).get("distribution")
    if family not in families:
        raise ManagedStateError("role %s has no vars/%s.yml: OS family %s is not supported (supported: %s)"
                                % (role, family, family, ", ".join(families)))
    files = [os.path.join(vars_dir, family + ".yml")]
    if distribution and distribution != family and os.path.isfile(os.path.join(vars_dir, distribution + ".yml")):
        files.append(os.path.join(vars_dir, distribution + ".yml"))
    return files
