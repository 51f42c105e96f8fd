# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter of the packages role's preflight: the package holds and version locks that would block the run
(plugin_utils.decision.package_locks), as one message naming the host, or none."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.rocm_fleet.core.plugins.plugin_utils.decision.drivers import DKMS
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.decision.package_locks import (
    blocking_locks,
    lock_problem,
)


def rocm_package_lock_problem(locks, host, removes=(), installs=(), dkms=None, installed=(), dkms_moves=False):
    try:
        wanted = dict.fromkeys(installs or [], "")
        if dkms:
            wanted[DKMS] = dkms
        return lock_problem(host, blocking_locks(locks, removes, wanted, installed, dkms_moves))
    except (KeyError, TypeError, ValueError) as error:
        raise AnsibleFilterError("rocm_package_lock_problem: %s" % error) from error


class FilterModule(object):
    def filters(self):
        return {"rocm_package_lock_problem": rocm_package_lock_problem}
