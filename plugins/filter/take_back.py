# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter of the packages role's take-back after a failed apt install: what the install brought
(plugin_utils.decision.take_back)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.rocm_fleet.core.plugins.plugin_utils.decision.take_back import (
    package_states,
    packages_to_take_back,
)


def rocm_packages_to_take_back(states, asked=None, installed_before=None, whole=None, dependencies_broken=False):
    try:
        return packages_to_take_back(package_states(states), asked or [], list(installed_before or []),
                                     whole or [], bool(dependencies_broken))
    except (TypeError, ValueError) as error:
        raise AnsibleFilterError("rocm_packages_to_take_back: %s" % error) from error


class FilterModule(object):
    def filters(self):
        return {"rocm_packages_to_take_back": rocm_packages_to_take_back}
