# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Is this ROCm version supported for this host's GPUs, OS release and kernel?

The checks follow what an engineer asks before installing, and each failed
check is a problem ``{what, subject, message, acceptable}``. Problems of kind
os, kernel (above the driver's range) and gpu (a product AMD does not list)
describe combinations real sites run anyway: the inventory may accept them
with a reason. The rest (unknown devices, a kernel older than 5.15, missing
code objects, VRAM, inventory mismatches) cannot work and cannot be accepted.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.rocm_fleet.core.plugins.plugin_utils.decision.classification import describe_gpus
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.decision.overrides import plan_overrides
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.decision.support_checks import (
    check_inventory,
    check_kernel,
    check_os,
    check_vram,
    problem,
)
from ansible_collections.rocm_fleet.core.plugins.module_utils.common.versions import (
    in_range,
    normalize_rocm_version,
    os_key,
    os_label,
    os_release_matches,
    version_key,
)

ACCEPTABLE_KINDS = ("os", "kernel", "gpu")
MAX_ALTERNATIVES = 3


def _check_gpus(summary, version, release):
    problems, warnings = [], []
    catalog = summary.get("catalog") or {}
    for name in summary.get("classes") or []:
        entry = catalog.get(name) or {}
        product = entry.get("product") or name
        listed = entry.get("rocm_listed")
        if listed is False:
            problems.append(problem("gpu", name, "%s is not listed by AMD for ROCm on Linux" % product, True))
        elif isinstance(listed, dict):
            if not in_range(version, minimum=listed.get("min"), maximum=listed.get("max")):
                span = " to ".join(str(listed[key]) for key in ("min", "max") if listed.get(key))
                problems.append(
                    problem("gpu", name, "%s is listed for ROCm %s only, not %s" % (product, span, version), True)
                )
        else:
            warnings.append(
                "whether AMD lists %s for ROCm %s is not sourced: only its gfx target was checked" % (product, version)
            )
    for target in summary.get("gfx_targets") or []:
        if target in (release.get("deprecated_gfx_targets") or []):
            warnings.append("%s is deprecated in ROCm %s" % (target, version))
    _unused, override_problems = plan_overrides(summary, version, release)
    problems.extend(problem("gpu", None, text, False) for text in override_problems)
    return problems, warnings


def kernel_limits(release, driver=None):
    """The release's kernel range with the driver line's maximum: the module decides what it builds against."""
    limits = dict((release or {}).get("kernel") or {})
    line_kernel = (driver or {}).get("kernel")
    if line_kernel:
        limits.update((key, line_kernel.get(key)) for key in ("max", "max_certainty", "max_source"))
        limits["driver"] = driver.get("line")
    return limits


def _own_driver(release, drivers):
    line = (release or {}).get("amdgpu_driver")
    entry = (drivers or {}).get(str(line)) if line is not None else None
    return dict(entry, line=str(line)) if isinstance(entry, dict) else None


def _version_problems(summary, version, release, os_name, os_release, kernel, driver=None):
    gpu_problems, warnings = _check_gpus(summary, version, release)
    os_problems = check_os(summary, version, release, os_name, os_release)
    limited = dict(release, kernel=kernel_limits(release, driver))
    kernel_problems, kernel_warnings = check_kernel(version, limited, os_name, kernel)
    return gpu_problems + os_problems + kernel_problems, warnings + kernel_warnings


def _acceptance_errors(acceptances):
    errors = []
    for position, item in enumerate(acceptances):
        if not isinstance(item, dict) or item.get("what") not in ACCEPTABLE_KINDS:
            errors.append(
                problem(
                    "acceptance",
                    None,
                    "acceptance #%d must have what: one of %s" % (position + 1, ", ".join(ACCEPTABLE_KINDS)),
                    False,
                )
            )
        elif not str(item.get("reason") or "").strip():
            errors.append(
                problem("acceptance", None, "acceptance #%d (%s) has no reason" % (position + 1, item["what"]), False)
            )
    return errors


def _acceptance_covers(item, found, version):
    if item.get("what") != found["what"] or not found["acceptable"]:
        return False
    rocm = item.get("rocm")
    if rocm and not os_release_matches(rocm, version):
        return False
    value = item.get("value")
    if value in (None, ""):
        return True
    subject = found.get("subject") or ""
    if found["what"] == "os":
        parts = str(value).split(None, 1)
        host_key, _sep, host_release = subject.partition(" ")
        return os_key(parts[0]) == host_key and (len(parts) == 1 or os_release_matches(parts[1], host_release))
    if found["what"] == "kernel":
        return os_release_matches(value, subject)
    return str(value) == subject


def _apply(problems, acceptances, version):
    open_problems, accepted = [], []
    for found in problems:
        match = next((item for item in acceptances if _acceptance_covers(item, found, version)), None)
        if match is None:
            open_problems.append(found)
        else:
            accepted.append(dict(found, reason=str(match["reason"]).strip()))
    return open_problems, accepted


def _alternatives(summary, matrix, requested, os_name, os_release, kernel, acceptances, drivers=None):
    """Matrix versions under which this host would proceed (each with its own driver line), nearest first."""
    requested_key = version_key(requested) or (0, 0, 0)
    others = sorted((version for version in matrix if version != requested), key=version_key)
    position = sum(1 for version in others if version_key(version) < requested_key)
    workable = []
    for rank, version in enumerate(others):
        release = matrix[version]
        problems, _unused = _version_problems(summary, version, release, os_name, os_release, kernel,
                                              _own_driver(release, drivers))
        if not _apply(problems, acceptances, version)[0]:
            distance = rank - position if rank >= position else position - rank - 1
            workable.append((distance, tuple(-part for part in version_key(version)), version))
    return [version for _unused, _unused, version in sorted(workable)[:MAX_ALTERNATIVES]]


def check_support(
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
    drivers=None,
    driver=None,
):
    """The support verdict for one host (decision.preflight.decide composes it into the whole decision).

    ``driver`` is the amdgpu driver line the host runs (decision.drivers.choose_driver), ``drivers``
    the table the alternatives take their own lines from; without them the release's kernel
    range applies as it stands.

    {supported, proceed, problems (not accepted, each {what, subject, message, acceptable}), accepted
    (with the inventory's reason), warnings, alternatives (up to 3 ROCm versions that would pass, nearest
    first), rocm_version (normalised), os, kernel, gpus (as text), kernel_range}.
    """
    acceptances = [item for item in acceptances or [] if item]
    os_name = os_key(os_family)
    version = normalize_rocm_version(rocm_version)
    problems = [problem("gpu", None, text, False) for text in summary.get("problems") or []]
    warnings = list(summary.get("warnings") or [])
    problems.extend(check_inventory(summary, expected_class, expected_gpu_count, expected_package_count))
    problems.extend(check_vram(summary, workload, min_vram_gib))
    problems.extend(_acceptance_errors(acceptances))
    release = matrix.get(version) if version else None
    if release is None:
        problems.append(
            problem(
                "rocm",
                rocm_version,
                "ROCm %s is not in the support matrix; describe it in "
                "preflight_support_matrix_extra or pick a listed version" % (rocm_version,),
                False,
            )
        )
    else:
        found, found_warnings = _version_problems(summary, version, release, os_name, os_version, kernel, driver)
        problems.extend(found)
        warnings.extend(found_warnings)
    valid = [item for item in acceptances if isinstance(item, dict) and item.get("what") in ACCEPTABLE_KINDS]
    open_problems, accepted = _apply(problems, valid, version)
    return {
        "supported": not problems,
        "proceed": not open_problems,
        "problems": open_problems,
        "accepted": accepted,
        "warnings": warnings,
        "alternatives": _alternatives(summary, matrix, version, os_name, os_version, kernel, valid, drivers),
        "rocm_version": version or rocm_version,
        "os": os_label(os_name, os_version),
        "kernel": kernel,
        "gpus": describe_gpus(summary),
        "kernel_range": kernel_limits(release, driver),
    }
