# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The provisioning decisions, as pure functions of gpu facts and the preflight data.

One import point for the filters and the compliance module:

* classify_gpus(gpu, catalog) -> host summary (decision.classification)
* check_support(summary, matrix, rocm_version, ...) -> decision (decision.support)
* hsa_override_environment, runtime_gfx_targets, pytorch_rocm_arch, gpu_tuning, preflight_report (here)
* data_problems(catalog, matrix): what is wrong with catalog or matrix data,
  built-in or merged from inventory (decision.data_checks)
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.rocm_fleet.core.plugins.plugin_utils.decision.classification import (  # noqa: F401 pylint: disable=unused-import
    classify_gpus,
    describe_gpus,
)
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.decision.data_checks import data_problems  # noqa: F401 pylint: disable=unused-import
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.decision.overrides import (
    effective_targets,
    plan_overrides,
)
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.decision.support import check_support  # noqa: F401 pylint: disable=unused-import
from ansible_collections.rocm_fleet.core.plugins.module_utils.common.versions import (
    normalize_rocm_version,
)


class DecisionError(ValueError):
    """A decision that cannot be made from the data given; the message says what is missing."""


def _release(matrix, rocm_version):
    version = normalize_rocm_version(rocm_version)
    release = (matrix or {}).get(version) if version else None
    if release is None:
        raise DecisionError("ROCm %s is not in the support matrix" % (rocm_version,))
    return version, release


def hsa_override_environment(summary, rocm_version, matrix):
    """{} or {'HSA_OVERRIDE_GFX_VERSION': '10.3.0'} or per-KFD-node variables; DecisionError when impossible."""
    version, release = _release(matrix, rocm_version)
    environment, problems = plan_overrides(summary, version, release)
    if problems:
        raise DecisionError("; ".join(problems))
    return environment


def runtime_gfx_targets(summary, rocm_version=None, matrix=None):
    """['gfx1030']: the targets the runtime reports, overrides applied when a version is given (an RX 6700 XT's
    gfx1031 runs as gfx1030): the code a host needs, so the Core SDK's per-target packages follow it."""
    if rocm_version is None:
        return effective_targets(summary)
    version, release = _release(matrix, rocm_version)
    return effective_targets(summary, version, release)


def pytorch_rocm_arch(summary, rocm_version=None, matrix=None):
    """'gfx942' or 'gfx90a;gfx942': the targets the runtime reports, overrides applied when a version is given."""
    return ";".join(runtime_gfx_targets(summary, rocm_version, matrix))


def _cpu_vendor(value):
    text = str(value or "").lower()
    if "intel" in text:
        return "intel"
    if "amd" in text:
        return "amd"
    return None


def _param_key(param):
    return str(param).split("=", 1)[0]


def gpu_tuning(summary, catalog=None, cpu_vendor=None):
    """Boot parameters, sysctls and modprobe options of the host's GPU classes, merged.

    Classes that disagree on a value (iommu=pt against iommu=on, two values of
    one sysctl) are listed in ``conflicts`` instead of one silently winning.
    """
    catalog = catalog or summary.get("catalog") or {}
    vendor = _cpu_vendor(cpu_vendor)
    boot_params, sysctls, modprobe, conflicts = [], {}, {}, []
    owners = {}
    for name in summary.get("classes") or []:
        tuning = (catalog.get(name) or {}).get("tuning") or {}
        params = list(tuning.get("boot_params") or [])
        params.extend(((tuning.get("boot_params_by_cpu") or {}).get(vendor) or []) if vendor else [])
        for param in params:
            key = _param_key(param)
            previous = next((existing for existing in boot_params if _param_key(existing) == key), None)
            if previous is None:
                boot_params.append(param)
            elif previous != param:
                conflicts.append("boot parameter %s (%s) against %s (%s)" % (param, name, previous, owners[key]))
            owners.setdefault(key, name)
        for key, value in (tuning.get("sysctls") or {}).items():
            if key in sysctls and str(sysctls[key]) != str(value):
                conflicts.append("sysctl %s=%s (%s) against %s" % (key, value, name, sysctls[key]))
            sysctls.setdefault(key, value)
        for module, options in (tuning.get("modprobe_options") or {}).items():
            merged = modprobe.setdefault(module, {})
            for option, value in (options or {}).items():
                if option in merged and str(merged[option]) != str(value):
                    conflicts.append(
                        "modprobe %s %s=%s (%s) against %s" % (module, option, value, name, merged[option])
                    )
                merged.setdefault(option, value)
    return {"boot_params": boot_params, "sysctls": sysctls, "modprobe_options": modprobe, "conflicts": conflicts}


def preflight_report(decision, host):
    """One message naming host, GPUs, OS, kernel, the requested ROCm version, problems and alternatives."""
    head = "host %s: ROCm %s on %s, kernel %s, %s" % (
        host,
        decision.get("rocm_version"),
        decision.get("os"),
        decision.get("kernel"),
        decision.get("gpus"),
    )
    lines = []
    if not decision.get("proceed"):
        lines.append(head + ": not supported")
        lines.extend("  - %s: %s" % (item["what"], item["message"]) for item in decision.get("problems") or [])
        alternatives = decision.get("alternatives") or []
        lines.append(
            "  nearest ROCm versions that would pass on this host: %s" % ", ".join(alternatives)
            if alternatives
            else "  no ROCm version in the support matrix passes on this host as it is"
        )
    elif decision.get("accepted"):
        lines.append(head + ": runs an unsupported combination, accepted in inventory")
    else:
        lines.append(head + ": supported")
    lines.extend(
        "  - accepted %s: %s (reason: %s)" % (item["what"], item["message"], item["reason"])
        for item in decision.get("accepted") or []
    )
    lines.extend("  - warning: %s" % text for text in decision.get("warnings") or [])
    return "\n".join(lines)
