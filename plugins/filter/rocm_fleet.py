# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Preflight decision filters: thin wrappers over module_utils.rocm_decisions and rocm_decision.

preflight_decide is the whole decision preflight fixes; the others are its parts.

Each filter is documented in plugins/filter/<name>.yml (ansible-doc -t filter).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from functools import wraps

from ansible.errors import AnsibleFilterError

from ansible_collections.rocm_fleet.core.plugins.module_utils import rocm_decision, rocm_decisions
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.rocm_data import RocmDataError, preflight_data


def _mapping(value, what, name):
    if not isinstance(value, dict):
        raise AnsibleFilterError("%s expects %s as a mapping, got %s" % (name, what, type(value).__name__))
    return value


def _summary(value, name):
    summary = _mapping(value, "the host summary of rocm_fleet.core.gpu_classify", name)
    if "devices" not in summary or "classes" not in summary:
        raise AnsibleFilterError("%s expects the output of rocm_fleet.core.gpu_classify" % name)
    return summary


def _filter_errors(function):
    """Turn data errors into AnsibleFilterError so the task fails with the reason, not a traceback."""

    @wraps(function)
    def wrapper(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except AnsibleFilterError:
            raise
        except (ValueError, TypeError, KeyError) as error:
            raise AnsibleFilterError("%s: %s" % (function.__name__, error)) from error

    return wrapper


@_filter_errors
def gpu_classify(gpu, catalog):
    devices = gpu.get("devices") if isinstance(gpu, dict) else gpu
    if devices is not None and not isinstance(devices, list):
        raise AnsibleFilterError("gpu_classify expects the gpu fact or its device list")
    return rocm_decisions.classify_gpus(gpu or {}, _mapping(catalog, "the GPU catalog", "gpu_classify"))


@_filter_errors
def rocm_support(
    summary,
    matrix,
    rocm_version,
    os_family,
    os_version,
    kernel,
    acceptances=None,
    workload=None,
    min_vram_gib=None,
    expected_class=None,
    expected_gpu_count=None,
    expected_package_count=None,
):
    if acceptances is not None and not isinstance(acceptances, list):
        raise AnsibleFilterError("rocm_support expects acceptances as a list of {what, reason} items")
    return rocm_decisions.check_support(
        _summary(summary, "rocm_support"),
        _mapping(matrix, "the support matrix", "rocm_support"),
        rocm_version,
        os_family,
        os_version,
        kernel,
        acceptances=acceptances,
        workload=workload,
        min_vram_gib=min_vram_gib,
        expected_class=expected_class,
        expected_gpu_count=expected_gpu_count,
        expected_package_count=expected_package_count,
    )


@_filter_errors
def hsa_overrides(summary, rocm_version, matrix):
    return rocm_decisions.hsa_override_environment(
        _summary(summary, "hsa_overrides"), rocm_version, _mapping(matrix, "the support matrix", "hsa_overrides")
    )


@_filter_errors
def pytorch_rocm_arch(summary, rocm_version=None, matrix=None):
    if rocm_version is not None:
        _mapping(matrix, "the support matrix (needed with rocm_version)", "pytorch_rocm_arch")
    return rocm_decisions.pytorch_rocm_arch(_summary(summary, "pytorch_rocm_arch"), rocm_version, matrix)


@_filter_errors
def gpu_tuning(summary, catalog=None, cpu_vendor=None):
    if catalog is not None:
        _mapping(catalog, "the GPU catalog", "gpu_tuning")
    return rocm_decisions.gpu_tuning(_summary(summary, "gpu_tuning"), catalog, cpu_vendor)


@_filter_errors
def preflight_report(decision, host):
    decision = _mapping(decision, "the result of rocm_fleet.core.rocm_support", "preflight_report")
    if "proceed" not in decision:
        raise AnsibleFilterError("preflight_report expects the result of rocm_fleet.core.rocm_support")
    return rocm_decisions.preflight_report(decision, host)


@_filter_errors
def rocm_data_problems(catalog, matrix):
    return rocm_decisions.data_problems(
        _mapping(catalog, "the GPU catalog", "rocm_data_problems"),
        _mapping(matrix, "the support matrix", "rocm_data_problems"),
    )


def preflight_decide(facts, inputs):
    facts = _mapping(facts, "ansible_facts", "preflight_decide")
    inputs = _mapping(inputs, "preflight_decision_inputs", "preflight_decide")
    try:
        catalog, matrix = preflight_data(inputs.get("gpu_catalog_extra"), inputs.get("support_matrix_extra"))
        return rocm_decision.decide(facts, inputs, catalog, matrix)
    except RocmDataError as error:
        raise AnsibleFilterError("preflight_decide: %s" % error.message) from error
    # Odd data shapes (a class whose match is a list) surface as these, not only as ValueError.
    except (ValueError, TypeError, KeyError, AttributeError) as error:
        raise AnsibleFilterError("preflight_decide: %s" % error) from error


@_filter_errors
def rocm_release_packages(usecase_sets, release, usecases, extra=None):
    if not isinstance(usecase_sets, list):
        raise AnsibleFilterError("rocm_release_packages expects the list of use-case sets")
    return rocm_decisions.release_packages(usecase_sets, release, usecases, extra)


class FilterModule(object):
    def filters(self):
        return {
            "gpu_classify": gpu_classify,
            "rocm_support": rocm_support,
            "hsa_overrides": hsa_overrides,
            "pytorch_rocm_arch": pytorch_rocm_arch,
            "gpu_tuning": gpu_tuning,
            "preflight_report": preflight_report,
            "rocm_data_problems": rocm_data_problems,
            "rocm_release_packages": rocm_release_packages,
            "preflight_decide": preflight_decide,
        }
