# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters over the roles' managed state (plugin_utils.roles.managed); documented in plugins/filter/<name>.yml."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.rocm_fleet.core.plugins.plugin_utils.roles.managed_state import ManagedStateError
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.roles.managed import os_vars_files, role_objects


def managed_objects(objects, role):
    try:
        return role_objects(objects, role)
    except ManagedStateError as error:
        raise AnsibleFilterError(str(error)) from error


def role_os_vars_files(role, facts):
    try:
        return os_vars_files(role, facts)
    except ManagedStateError as error:
        raise AnsibleFilterError(str(error)) from error


class FilterModule(object):
    def filters(self):
        return {"managed_objects": managed_objects, "role_os_vars_files": role_os_vars_files}
