# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The individual preflight checks behind decision.support.check_support."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.rocm_fleet.core.plugins.plugin_utils.decision.classification import describe_gpus
from ansible_collections.rocm_fleet.core.plugins.module_utils.common.versions import (
    in_range,
    os_label,
    parse_version,
    release_listed,
)

# Enterprise kernels carry the DRM stack of much newer upstream kernels
# (RHEL 9 reports 5.14, RHEL 8 4.18) and AMD builds amdgpu-dkms for each
# listed release, so their version numbers say nothing about the driver range.
VENDOR_KERNEL_OS = ("rhel", "ol", "sles", "centos", "rocky")
MIN_KERNEL = "5.15"


def problem(what, subject, message, acceptable):
    return {"what": what, "subject": subject, "message": message, "acceptable": acceptable}


def _listing(releases_by_os):
    return "; ".join(
        "%s %s" % (os_label(key, None), ", ".join(releases)) for key, releases in sorted(releases_by_os.items())
    )


def _selects(selector, name, entry):
    selector = selector or {}
    return (
        name in (selector.get("classes") or [])
        or entry.get("family") in (selector.get("families") or [])
        or entry.get("segment") in (selector.get("segments") or [])
    )


def _selector_text(selector):
    words = []
    for key in ("classes", "families", "segments"):
        words.extend((selector or {}).get(key) or [])
    return ", ".join(words) or "no GPU"


def check_os(summary, version, release, os_name, os_release):
    """Problems with the OS release under this ROCm release (list, possibly empty)."""
    subject = "%s %s" % (os_name, os_release)
    label = os_label(os_name, os_release)
    if not os_name or not os_release:
        return [problem("os", subject, "the OS release of the host is unknown", False)]
    if not release_listed(release.get("os"), os_name, os_release):
        return [
            problem(
                "os",
                subject,
                "%s is not listed for ROCm %s (listed: %s)" % (label, version, _listing(release.get("os") or {})),
                True,
            )
        ]
    catalog = summary.get("catalog") or {}
    present = dict((name, catalog.get(name) or {}) for name in summary.get("classes") or [])
    problems = []
    for rule in release.get("restrictions") or []:
        note = rule.get("note") or "AMD footnote"
        if rule.get("only_for") is not None and release_listed(rule.get("os"), os_name, os_release):
            outside = sorted(
                entry.get("product") or name
                for name, entry in present.items()
                if not _selects(rule["only_for"], name, entry)
            )
            if outside:
                problems.append(
                    problem(
                        "os",
                        subject,
                        "ROCm %s supports %s only for %s (%s); this host has %s"
                        % (version, label, _selector_text(rule["only_for"]), note, ", ".join(outside)),
                        True,
                    )
                )
            continue
        selected = sorted(name for name, entry in present.items() if _selects(rule.get("gpu"), name, entry))
        if not selected:
            continue
        if rule.get("only_on") is not None and not release_listed(rule["only_on"], os_name, os_release):
            problems.append(
                problem(
                    "os",
                    subject,
                    "ROCm %s supports %s only on %s (%s), not on %s"
                    % (version, ", ".join(selected), _listing(rule["only_on"]), note, label),
                    True,
                )
            )
        if rule.get("not_on") is not None and release_listed(rule["not_on"], os_name, os_release):
            problems.append(
                problem(
                    "os",
                    subject,
                    "ROCm %s does not support %s on %s (%s)" % (version, ", ".join(selected), label, note),
                    True,
                )
            )
    return problems


def check_kernel(version, release, os_name, kernel):
    """(problems, warnings) for the running kernel under this ROCm release."""
    if os_name in VENDOR_KERNEL_OS:
        return [], []
    if parse_version(kernel) is None:
        return [problem("kernel", kernel, "the kernel version of the host is unknown (%r)" % (kernel,), False)], []
    limits = release.get("kernel") or {}
    minimum = limits.get("min") or MIN_KERNEL
    if not in_range(kernel, minimum=minimum):
        return [
            problem(
                "kernel",
                kernel,
                "kernel %s is older than %s, the oldest kernel ROCm %s supports" % (kernel, minimum, version),
                False,
            )
        ], []
    maximum = limits.get("max")
    if maximum is None:
        return [], [
            "the newest kernel ROCm %s supports is not sourced: kernel %s not checked against it" % (version, kernel)
        ]
    if not in_range(kernel, maximum=maximum):
        how = limits.get("max_certainty") or "unknown certainty"
        return [
            problem(
                "kernel",
                kernel,
                "kernel %s is newer than %s, the newest kernel series amdgpu-dkms of %s "
                "builds against (%s: %s)"
                % (kernel, maximum, "driver line %s (ROCm %s)" % (limits["driver"], version) if limits.get("driver")
                   else "ROCm %s" % version, how, limits.get("max_source") or "no source"),
                True,
            )
        ], []
    return [], []


def check_vram(summary, workload, min_vram_gib):
    """Problems for GPUs with less VRAM than the workload needs; min_vram_gib is a number or {workload: GiB}."""
    if isinstance(min_vram_gib, dict):
        min_vram_gib = min_vram_gib.get(workload) if workload else None
    if not min_vram_gib:
        return []
    problems = []
    for device in summary.get("devices") or []:
        # sysfs leaves the firmware reserve out of the VRAM total (an RX 7900 XTX shows 23.98 GiB),
        # so the catalog's nominal size decides and a measured size is rounded.
        vram = device.get("nominal_vram_gib")
        if vram is None and device.get("vram_gib") is not None:
            vram = round(device["vram_gib"])
        name = "GPU %s (%s)" % (device.get("index"), device.get("product") or device.get("device_id"))
        if vram is None:
            problems.append(
                problem(
                    "vram",
                    None,
                    "%s: VRAM size unknown, cannot check the %s GiB the %s workload "
                    "needs" % (name, min_vram_gib, workload or "declared"),
                    False,
                )
            )
        elif vram < float(min_vram_gib):
            problems.append(
                problem(
                    "vram",
                    None,
                    "%s has %g GiB VRAM; the %s workload needs at least %s GiB per GPU"
                    % (name, vram, workload or "declared", min_vram_gib),
                    False,
                )
            )
    return problems


def _expected_int(value):
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    return int(value)


def check_inventory(summary, expected_class, expected_gpu_count, expected_package_count):
    """Problems where the inventory's declared hardware differs from what the host has."""
    problems = []
    found = describe_gpus(summary)
    if expected_class:
        expected = sorted(set([expected_class] if isinstance(expected_class, str) else expected_class))
        if expected != sorted(summary.get("classes") or []) or summary.get("unknown_devices"):
            problems.append(
                problem(
                    "inventory",
                    None,
                    "inventory expects GPU class %s, the host has %s" % (", ".join(expected), found),
                    False,
                )
            )
    gpu_count = _expected_int(expected_gpu_count)
    if gpu_count is not None and gpu_count != summary.get("count", 0):
        problems.append(
            problem(
                "inventory",
                None,
                "inventory expects %d GPU devices, the host has %d (%s)" % (gpu_count, summary.get("count", 0), found),
                False,
            )
        )
    package_count = _expected_int(expected_package_count)
    if package_count is not None and package_count != summary.get("package_count", 0):
        problems.append(
            problem(
                "inventory",
                None,
                "inventory expects %d GPU packages, the host has %d (%s)"
                % (package_count, summary.get("package_count", 0), found),
                False,
            )
        )
    if gpu_count is None and not summary.get("count"):
        problems.append(
            problem(
                "gpu",
                None,
                "no AMD GPU found; a host meant to have none declares preflight_expected_gpu_count: 0",
                False,
            )
        )
    return problems
