# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Preflight filters: preflight_decide (plugin_utils.decision.preflight); package names are rocm_stream_plan's.

Each filter is documented in plugins/filter/<name>.yml (ansible-doc -t filter).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.rocm_fleet.core.plugins.plugin_utils.decision import preflight as rocm_decision

from ansible_collections.rocm_fleet.core.plugins.plugin_utils.decision.data import RocmDataError, preflight_data


def _mapping(value, what, name):
    if not isinstance(value, dict):
        raise AnsibleFilterError("%s expects %s as a mapping, got %s" % (name, what, type(value).__name__))
    return value


def preflight_decide(facts, inputs):
    facts = _mapping(facts, "ansible_facts", "preflight_decide")
    inputs = _mapping(inputs, "preflight_decision_inputs", "preflight_decide")
    try:
        catalog, matrix, drivers = preflight_data(
            inputs.get("gpu_catalog_extra"), inputs.get("support_matrix_extra"), inputs.get("amdgpu_drivers_extra")
        )
        return rocm_decision.decide(facts, inputs, catalog, matrix, drivers)
    except RocmDataError as error:
        raise AnsibleFilterError("preflight_decide: %s" % error.message) from error
    # Odd data shapes (a class whose match is a list) surface as these, not only as ValueError.
    except (ValueError, TypeError, KeyError, AttributeError) as error:
        raise AnsibleFilterError("preflight_decide: %s" % error) from error


class FilterModule(object):
    def filters(self):
        return {"preflight_decide": preflight_decide}
