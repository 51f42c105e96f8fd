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

import base64
import binascii

from ansible.errors import AnsibleFilterError
from ansible.module_utils.parsing.convert_bool import boolean

from ansible_collections.rocm_fleet.core.plugins.plugin_utils.decision.data import (
    RocmDataError,
    preflight_data,
    release_streams,
)
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.rollout.upgrade import host_state, upgrade_plan
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.rollout.batches import (
    failure_reason,
    rollout_report as _report,
    rollout_table as _table,
    stop_rollout,
)


def _resolved(value):
    """The resolved path of a link: a path, ansible.builtin.stat's result or its ``stat`` (lnk_source), or None."""
    if isinstance(value, dict):
        value = value.get("stat", value)
        if not isinstance(value, dict) or value.get("skipped") or not value.get("exists", True):
            return None
        value = value.get("lnk_source")
    return str(value) if value else None


def _text(value):
    """A file's text: the text itself, or ansible.builtin.slurp's result (None where it was skipped or failed)."""
    if isinstance(value, dict):
        if value.get("skipped") or value.get("failed") or "content" not in value:
            return None
        content = value["content"]
        if value.get("encoding", "base64") == "base64":
            try:
                content = base64.b64decode(content).decode("utf-8", "replace")
            except (binascii.Error, ValueError, TypeError):
                return None
        value = content
    return str(value) if value is not None else None


def rocm_upgrade_plan(default, packages, record, target, allow_downgrade=False, rollback=False, core=None,
                      core_version=None, served=None, extras=None):
    """The plan, or {'action': 'error', 'error': why} for the plan play to fail the host with before anything changes.

    ``default`` and ``core``: /opt/rocm and /opt/rocm/core (ansible.builtin.stat's result, its ``stat``, or the
    resolved path); ``packages``: ansible_facts.packages (or the package names); ``core_version``: the text of
    /opt/rocm/core/.info/version (or ansible.builtin.slurp's result); ``served``: repo_available_rocm_versions;
    ``extras``: {streams, keys, matrix}, the inventory's preflight_release_streams_extra,
    preflight_repository_keys_extra and preflight_support_matrix_extra.
    """
    extras = extras or {}
    try:
        streams = release_streams(extras.get("streams"), extras.get("keys"))[0]
        matrix = preflight_data(None, extras.get("matrix"), None)[1]
        state = host_state(_resolved(default), packages, record, _resolved(core), _text(core_version), streams, matrix)
        plan = upgrade_plan(state, target, allow_downgrade=boolean(allow_downgrade, strict=False),
                            rollback=boolean(rollback, strict=False),
                            served=[served] if isinstance(served, str) else list(served or []), streams=streams,
                            matrix=matrix)
        return dict(plan, error=None)
    except (ValueError, RocmDataError) as error:
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
