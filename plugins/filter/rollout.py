# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters of the rollouts (playbooks/upgrade.yml, playbooks/kernel_update.yml).

* rocm_upgrade_plan: one host's upgrade or rollback plan (plugin_utils.rollout.upgrade).
* rollout_stop: whether a batch failed more hosts than allowed (plugin_utils.rollout.batches).
* rollout_report and rollout_table: the run's report and the table it ends with.
* rollout_failure_reason: why a step failed, in the failed module's words.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.rocm_fleet.core.plugins.plugin_utils.rollout.upgrade import host_state, upgrade_plan
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.rollout.batches import (
    failure_reason,
    rollout_report as _report,
    rollout_table as _table,
    stop_rollout,
)


def rocm_upgrade_plan(default_path, package_names, record, target, allow_downgrade=False, rollback=False):
    """The plan, or {'error': why} for the plan play to fail the host with before anything changes."""
    try:
        state = host_state(default_path, package_names, record)
        return dict(upgrade_plan(state, target, allow_downgrade=allow_downgrade, rollback=rollback), error=None)
    except ValueError as error:
        return {"action": "error", "error": str(error)}


def rollout_stop(results, batch, max_fail_percentage):
    try:
        return stop_rollout(results, batch, max_fail_percentage)
    except ValueError as error:
        raise AnsibleFilterError("rollout_stop: %s" % error) from error


def rollout_report(plans, kind, results, context=None):
    try:
        return _report(kind, plans, results, context)
    except (ValueError, KeyError, TypeError) as error:
        raise AnsibleFilterError("rollout_report: %s" % error) from error


def rollout_table(report):
    try:
        return _table(report)
    except (KeyError, TypeError) as error:
        raise AnsibleFilterError("rollout_table expects what rollout_report returns: %s" % error) from error


def rollout_failure_reason(result, task=None):
    return failure_reason(result, task)


class FilterModule(object):
    def filters(self):
        return {
            "rocm_upgrade_plan": rocm_upgrade_plan,
            "rollout_stop": rollout_stop,
            "rollout_report": rollout_report,
            "rollout_table": rollout_table,
            "rollout_failure_reason": rollout_failure_reason,
        }
