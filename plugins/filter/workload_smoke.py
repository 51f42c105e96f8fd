# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The workload smoke filter workload_smoke_verdict (documented in workload_smoke_verdict.yml)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.rocm_fleet.core.plugins.plugin_utils.rollout.workload_smoke import smoke_run_verdict


def workload_smoke_verdict(run, expected_count=None, expected_archs=None, timeout=None, python=None):
    if not isinstance(run, (dict, str)):
        raise AnsibleFilterError("workload_smoke_verdict expects a command result or the smoke test's stdout, got %s"
                                 % type(run).__name__)
    try:
        return smoke_run_verdict(run, expected_count, expected_archs, timeout=timeout, python=python)
    except ValueError as error:
        raise AnsibleFilterError("workload_smoke_verdict: %s" % error) from None


class FilterModule(object):
    def filters(self):
        return {"workload_smoke_verdict": workload_smoke_verdict}
