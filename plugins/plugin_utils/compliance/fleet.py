# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet's compliance in a few numbers, from every host's host_compliance result, for set_stats.

A host's status follows the drift report's (src/rocm_fleet/drift/model.py, HostResult.status; a unit
test holds the two to the same answers): drift when an item fails, errors or has a status this code does
not know; unverified when an item could not be measured; else compliant. A host without a result (not
reached, or a task failed before or in its evaluation) is "not_checked": a play does not tell these apart.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.rocm_fleet.core.plugins.module_utils.common.status import CHECK_STATUSES, DRIFT_STATUSES

# A play's view of its hosts; the drift report's (rocm_fleet.drift.model.HOST_STATUSES) tells unreachable
# from errored where this says not_checked.
HOST_STATUSES = ("compliant", "unverified", "drift", "not_checked")


def _drifted(result):
    return result.get("status") in DRIFT_STATUSES or result.get("status") not in CHECK_STATUSES


def host_status(results):
    """One host's status from its node_compliance results list."""
    if any(_drifted(result) for result in results):
        return "drift"
    if any(result.get("status") == "unknown" for result in results):
        return "unverified"
    return "compliant"


def fleet_stats(host_results):
    """``{host: its host_compliance result, or None}`` -> counts, the hosts needing a look and the check IDs.

    ``ok`` is true only when every host was checked and is compliant: the value a workflow branches on.
    """
    hosts = dict((status, []) for status in HOST_STATUSES)
    failing, unknown = set(), set()
    for name in sorted(host_results):
        result = host_results[name]
        if not isinstance(result, dict) or result.get("failed") or not isinstance(result.get("results"), list):
            hosts["not_checked"].append(name)
            continue
        items = result["results"]
        hosts[host_status(items)].append(name)
        failing.update(item.get("id") for item in items if _drifted(item))
        unknown.update(item.get("id") for item in items if item.get("status") == "unknown")
    stats = dict((status, len(names)) for status, names in hosts.items())
    stats.update({
        "hosts": len(host_results),
        "ok": len(hosts["compliant"]) == len(host_results) and bool(host_results),
        "failing_checks": sorted(failing),
        "unknown_checks": sorted(unknown),
        "drift_hosts": hosts["drift"],
        "unverified_hosts": hosts["unverified"],
        "not_checked_hosts": hosts["not_checked"],
    })
    return stats
