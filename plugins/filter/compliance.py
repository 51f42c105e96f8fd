# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The compliance filters compliance_problems and compliance_fleet_stats (documented in their .yml files)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.evaluate import problems
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.compliance.fleet import fleet_stats


def compliance_problems(results):
    if not isinstance(results, list):
        raise AnsibleFilterError("compliance_problems expects node_compliance's results list, got %s"
                                 % type(results).__name__)
    return problems(results)


def compliance_fleet_stats(hosts, hostvars, result_var="compliance_result"):
    if not isinstance(hosts, list) or not all(isinstance(host, str) for host in hosts):
        raise AnsibleFilterError("compliance_fleet_stats expects a list of host names (ansible_play_hosts_all), got %s"
                                 % type(hosts).__name__)
    results = {}
    for host in hosts:
        results[host] = hostvars[host].get(result_var)
    return fleet_stats(results)


class FilterModule(object):
    def filters(self):
        return {"compliance_problems": compliance_problems, "compliance_fleet_stats": compliance_fleet_stats}
