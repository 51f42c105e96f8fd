# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""HSA_OVERRIDE_GFX_VERSION planning.

An override makes the runtime treat a GPU as another target of the same
major (gfx1031 as gfx1030). It is set only for a target the installed ROCm
has no code objects for; a supported target (gfx1100, gfx942) gets none,
because overriding it would load the wrong code objects.

libhsakmt reads ``HSA_OVERRIDE_GFX_VERSION_<node>`` before the global
variable, where <node> is the KFD topology node ID (CPU nodes come first, so
the first GPU of a one-socket host is node 1). Per-node overrides exist from
ROCm 6.2 (ROCm/ROCT-Thunk-Interface#104; libhsakmt topology.c).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.rocm_fleet.core.plugins.module_utils.common.versions import (
    compare_versions,
    gfx_major,
    gfx_target_from_override,
    in_range,
)

PER_DEVICE_OVERRIDE_SINCE = "6.2.0"
GLOBAL_OVERRIDE = "HSA_OVERRIDE_GFX_VERSION"


def runtime_targets(release):
    """Targets the release ships code objects for, deprecated ones included."""
    return set((release or {}).get("gfx_targets") or []) | set((release or {}).get("deprecated_gfx_targets") or [])


def override_for(entry, rocm_version):
    """The catalog's override value for this ROCm version, or None."""
    for rule in (entry or {}).get("hsa_override") or []:
        if in_range(rocm_version, minimum=rule.get("rocm_min"), below=rule.get("rocm_below")):
            return rule.get("value")
    return None


def override_problem(target, value):
    """Why an override value cannot work for a target; None when it can."""
    override_target = gfx_target_from_override(value)
    if override_target is None:
        return "HSA override %r for %s is not of the form major.minor.stepping" % (value, target)
    if gfx_major(override_target) != gfx_major(target):
        # Newer libhsakmt rejects cross-major overrides (ROCm/rocm-systems#5686).
        return "HSA override %s maps %s to %s, another major version, which libhsakmt rejects" % (
            value,
            target,
            override_target,
        )
    return None


def plan_overrides(summary, rocm_version, release):
    """(environment dict, problems) for the classified host under a ROCm release.

    Unclassified devices are skipped: classification already reported them.
    """
    supported = runtime_targets(release)
    catalog = summary.get("catalog") or {}
    needed, problems = {}, []
    classified = [device for device in summary.get("devices") or [] if device.get("class")]
    for device in classified:
        target = device.get("gfx_target")
        if target in supported:
            continue
        value = override_for(catalog.get(device["class"]), rocm_version)
        if value is None:
            problems.append(
                "GPU %s (%s, %s): ROCm %s has no code objects for %s and the catalog knows no HSA override for it"
                % (device["index"], device.get("product"), target, rocm_version, target)
            )
            continue
        problem = override_problem(target, value)
        if problem:
            problems.append("GPU %s (%s): %s" % (device["index"], device.get("product"), problem))
            continue
        needed[device["index"]] = (device, value)
    if problems or not needed:
        return {}, problems
    values = set(value for _unused, value in needed.values())
    if len(needed) == len(classified) and len(values) == 1:
        return {GLOBAL_OVERRIDE: values.pop()}, []
    # Some GPUs need no override or need different ones: a global value would
    # misdirect the others, so each overridden GPU gets its own variable.
    if compare_versions(rocm_version, PER_DEVICE_OVERRIDE_SINCE) < 0:
        return {}, [
            "GPU %s: needs its own HSA override because the GPUs of this host differ; per-device overrides "
            "(HSA_OVERRIDE_GFX_VERSION_<n>) need ROCm %s or later, not %s"
            % (", ".join(str(index) for index in sorted(needed)), PER_DEVICE_OVERRIDE_SINCE, rocm_version)
        ]
    environment = {}
    for index in sorted(needed):
        device, value = needed[index]
        if device.get("kfd_node") is None:
            problems.append("GPU %s needs a per-device HSA override but its KFD node is unknown" % index)
            continue
        environment["%s_%d" % (GLOBAL_OVERRIDE, int(device["kfd_node"]))] = value
    return ({}, problems) if problems else (environment, [])


def effective_targets(summary, rocm_version=None, release=None):
    """The gfx targets the runtime will report: overridden GPUs count as their override target."""
    targets = set(device.get("gfx_target") for device in summary.get("devices") or [] if device.get("gfx_target"))
    if rocm_version is None or release is None:
        return sorted(targets)
    catalog = summary.get("catalog") or {}
    supported = runtime_targets(release)
    result = set()
    for device in summary.get("devices") or []:
        target = device.get("gfx_target")
        if not target:
            continue
        value = override_for(catalog.get(device.get("class")), rocm_version) if target not in supported else None
        result.add(gfx_target_from_override(value) if value and not override_problem(target, value) else target)
    return sorted(result)
