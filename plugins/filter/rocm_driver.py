# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters of the packages role: amdgpu-dkms of the decided driver line (plugin_utils.decision.drivers).

* rocm_dkms_package: the install spec and version glob per package manager;
  a line without a sourced version gives ``problem`` instead, which the role's
  preflight reports before anything changes.
* rocm_dkms_outdated: whether the installed amdgpu-dkms is missing or older
  than the line, compared as dpkg or rpm compares versions.
* rocm_dkms_move: whether amdgpu-dkms moves to the line (a rollback also moves
  back from a newer one), and whether the old driver packages must go first.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.rocm_fleet.core.plugins.plugin_utils.decision.drivers import (
    DKMS,
    dkms_outdated,
    dkms_package,
    dkms_move,
)


def rocm_dkms_package(driver, manager):
    try:
        return dict(dkms_package(driver, manager), problem=None)
    except ValueError as error:
        return {"name": DKMS, "spec": None, "version": None, "floor": None, "problem": str(error)}


def rocm_dkms_outdated(installed, driver, manager):
    try:
        return dkms_outdated(installed, driver, manager)
    except (ValueError, TypeError) as error:
        raise AnsibleFilterError("rocm_dkms_outdated: %s" % error) from error


def rocm_dkms_move(installed, installed_firmware, driver, manager, downgrade=False):
    try:
        return dkms_move(installed, installed_firmware, driver, manager, downgrade=downgrade)
    except (ValueError, TypeError) as error:
        raise AnsibleFilterError("rocm_dkms_move: %s" % error) from error


class FilterModule(object):
    def filters(self):
        return {"rocm_dkms_package": rocm_dkms_package, "rocm_dkms_outdated": rocm_dkms_outdated,
                "rocm_dkms_move": rocm_dkms_move}
