# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The compliance filters: gpu_class_expectations and compliance_problems (each documented in <name>.yml)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance_evaluate import problems
from ansible_collections.rocm_fleet.core.plugins.module_utils.rocm_expectations import gpu_class_expectations


def _gpu_class_expectations(class_names, catalog, matrix, gpu_count, **options):
    if not isinstance(catalog, dict) or not isinstance(matrix, dict):
        raise AnsibleFilterError("gpu_class_expectations expects the GPU catalog and the support matrix as mappings")
    try:
        return gpu_class_expectations(list(class_names or []), catalog, matrix, gpu_count, **options)
    except (ValueError, TypeError, KeyError) as error:
        raise AnsibleFilterError("gpu_class_expectations: %s" % error) from error


def compliance_problems(results):
    if not isinstance(results, list):
        raise AnsibleFilterError("compliance_problems expects node_compliance's results list, got %s"
                                 % type(results).__name__)
    return problems(results)


class FilterModule(object):
    def filters(self):
        return {"gpu_class_expectations": _gpu_class_expectations, "compliance_problems": compliance_problems}
