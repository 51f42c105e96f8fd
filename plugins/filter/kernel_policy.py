# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters of the kernel update policy (plugin_utils.decision.kernel_policy), shared by the packages and kernel roles.

* rocm_kernel_policy: which kernel series a host may install, with the apt pins and dnf excludes.
* rocm_kernel_update_target: the kernel an update installs (the asked one or the newest allowed).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.rocm_fleet.core.plugins.plugin_utils.decision.kernel_policy import kernel_policy, update_target


def rocm_kernel_policy(policy, kernel_max=None, running_kernel=None, manager="apt"):
    try:
        return kernel_policy(policy, kernel_max, running_kernel, manager)
    except ValueError as error:
        raise AnsibleFilterError("rocm_kernel_policy: %s" % error) from error


def rocm_kernel_update_target(available, decision, running_kernel, wanted=None):
    if not isinstance(decision, dict) or "policy" not in decision:
        raise AnsibleFilterError("rocm_kernel_update_target: the decision must be rocm_kernel_policy's result")
    return update_target(available or [], decision, running_kernel, wanted or None)


class FilterModule(object):
    def filters(self):
        return {"rocm_kernel_policy": rocm_kernel_policy, "rocm_kernel_update_target": rocm_kernel_update_target}
