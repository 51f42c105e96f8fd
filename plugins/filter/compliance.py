# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The compliance filter compliance_problems (documented in compliance_problems.yml)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance_evaluate import problems


def compliance_problems(results):
    if not isinstance(results, list):
        raise AnsibleFilterError("compliance_problems expects node_compliance's results list, got %s"
                                 % type(results).__name__)
    return problems(results)


class FilterModule(object):
    def filters(self):
        return {"compliance_problems": compliance_problems}
