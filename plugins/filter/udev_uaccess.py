# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter udev_uaccess_masked (module_utils.host.udev_uaccess); documented in plugins/filter/udev_uaccess_masked.yml."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.rocm_fleet.core.plugins.module_utils.host.udev_uaccess import (
    AMD_VENDOR,
    UaccessRulesError,
    masked_uaccess_rules,
)


def udev_uaccess_masked(text, source, host="", vendor=AMD_VENDOR):
    try:
        return masked_uaccess_rules(text, source, vendor)
    except UaccessRulesError as error:
        raise AnsibleFilterError("%s%s" % ("%s: " % host if host else "", error)) from error


class FilterModule(object):
    def filters(self):
        return {"udev_uaccess_masked": udev_uaccess_masked}
