# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which kernel series a host may install: the one decision that provisioning and compliance share.

amdgpu-dkms builds only against kernels up to its own kernel base (``kernel.max`` of
the driver line in roles/preflight/vars/amdgpu_drivers.yml); a newer series installed
by a routine update leaves the next boot without GPUs. ``kernel_update_policy``:

* ``hold``: no kernel package is installed or upgraded at all (the running kernel stays).
* ``allowed_series``: kernel packages up to the newest allowed series: the driver line's
  maximum, or the running kernel's series where that is newer (a host that runs a
  series keeps its ABI and security updates). Unknown maximum: the running series.
* ``free``: no pin; the kernel update flow still keeps the GRUB default on the working
  kernel until amdgpu is built for the new one.

* kernel_policy(policy, kernel_max, running_kernel, manager): the decision
  ``{policy, series_max, reason, block, apt_preferences, dnf_excludes, zypper_addlock, running_kernel, problem}``
  (``zypper_addlock``: the zypper addlock command that keeps the refused kernels off a SLES host, which the
  packages role does not apply yet and names in its refusal)
  (``problem``: allowed_series with neither series known; nothing is pinned then).
* series_above_regex(series) / series_above_globs(series): what names a newer series.
* kernel_allowed(kernel, decision) / newest_allowed(kernels, decision).

Stdlib only; Python 2.7 compatible.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

POLICIES = ("hold", "allowed_series", "free")
MANAGERS = ("apt", "dnf", "zypper")
# Debian/Ubuntu kernel packages named by their ABI (linux-image-6.1.0-18-amd64) and the meta packages
# that pull a new ABI in (linux-image-amd64, linux-generic): their Version names the upstream release.
APT_ABI_PACKAGES = r"^linux-(image|headers|modules|modules-extra)-"
APT_META_PACKAGES = (
    "linux-image-amd64 linux-headers-amd64 linux-image-cloud-amd64 linux-headers-cloud-amd64 "
    "linux-generic linux-image-generic linux-headers-generic "
    "linux-generic-hwe-* linux-image-generic-hwe-* linux-headers-generic-hwe-*"
)
ZYPPER_KERNEL_PACKAGES = ("kernel-default", "kernel-default-devel")
DNF_KERNEL_PACKAGES = ("kernel", "kernel-core", "kernel-modules", "kernel-modules-extra", "kernel-devel",
                       "kernel-headers")
_SERIES = re.compile(r"^\s*(\d+)\.(\d+)")


def series_of(release):
    """'6.1.0-18-amd64' -> (6, 1); None when it names no series."""
    match = _SERIES.match(str(release or ""))
    return (int(match.group(1)), int(match.group(2))) if match else None


def _series_text(series):
    return "%d.%d" % series


def _above(n):
    """A regex alternation of the decimal numbers above ``n`` (no leading zeros)."""
    digits = str(n)
    parts = ["[1-9][0-9]{%d,}" % len(digits)]  # more digits
    for i, digit in enumerate(digits):
        d = int(digit)
        if d == 9:
            continue
        rest = len(digits) - i - 1
        low = d + 1
        klass = str(low) if low == 9 else "[%d-9]" % low
        parts.append(digits[:i] + klass + ("[0-9]{%d}" % rest if rest > 1 else "[0-9]" if rest == 1 else ""))
    return "(" + "|".join(sorted(parts, key=len)) + ")"


def series_above_regex(series):
    """An ERE matching a release that starts with a series above ``series`` ('6.16': 6.17, 6.100, 7.0 ...)."""
    major, minor = series
    return r"(%d\.%s|%s\.[0-9]+)\." % (major, _above(minor), _above(major))


def _globs_above(n):
    """fnmatch globs for the decimal numbers above ``n`` (no quantifiers in globs: up to 3 digits, then any)."""
    digits = str(n)
    globs = ["[1-9]" + "[0-9]" * len(digits) + "*"]
    for i, digit in enumerate(digits):
        d = int(digit)
        if d == 9:
            continue
        rest = len(digits) - i - 1
        globs.append(digits[:i] + ("9" if d == 8 else "[%d-9]" % (d + 1)) + "[0-9]" * rest)
    return globs


def series_above_globs(series):
    """dnf ``excludepkgs`` globs of the kernel packages of a series above ``series`` (kernel-6.17.1-...)."""
    major, minor = series
    versions = ["%d.%s.*" % (major, g) for g in _globs_above(minor)]
    versions += ["%s.*" % g for g in _globs_above(major)]
    return ["%s-%s" % (name, version) for name in DNF_KERNEL_PACKAGES for version in versions]


def kernel_policy(policy, kernel_max=None, running_kernel=None, manager="apt"):
    """The decision for one host; ValueError (naming what to fix) on a policy or manager it does not know."""
    if policy not in POLICIES:
        raise ValueError("kernel update policy %r is not one of %s" % (policy, ", ".join(POLICIES)))
    if manager not in MANAGERS:
        raise ValueError("package manager %r is not one of %s" % (manager, ", ".join(MANAGERS)))
    running = series_of(running_kernel)
    driver = series_of(kernel_max)
    decision = {"policy": policy, "series_max": None, "block": None, "apt_preferences": "", "dnf_excludes": [],
                "zypper_addlock": "",
                "running_kernel": running_kernel, "problem": None}
    if policy == "free":
        decision["reason"] = "kernel packages are not pinned (kernel_update_policy free)"
        return decision
    if policy == "hold":
        decision["block"] = "all"
        decision["reason"] = "no kernel package is installed or upgraded (kernel_update_policy hold)"
        decision["apt_preferences"] = _apt_text(
            "kernel_update_policy hold: no new kernel package", "/%s/ %s" % (APT_ABI_PACKAGES, APT_META_PACKAGES),
            "*")
        decision["dnf_excludes"] = ["%s*" % name for name in DNF_KERNEL_PACKAGES]
        decision["zypper_addlock"] = "zypper addlock " + " ".join(ZYPPER_KERNEL_PACKAGES)
        return decision
    candidates = [s for s in (driver, running) if s]
    if not candidates:
        decision["problem"] = ("kernel_update_policy allowed_series needs the driver line's kernel maximum or the "
                               "running kernel's series; neither is known (got %r and %r)"
                               % (kernel_max, running_kernel))
        decision["reason"] = decision["problem"]
        return decision
    series_max = max(candidates)
    if driver and series_max == driver:
        reason = "kernel series up to %s, the newest amdgpu-dkms of the driver line builds for" % _series_text(driver)
    elif driver:
        reason = ("kernel series up to %s, the running kernel's (the driver line lists %s)"
                  % (_series_text(series_max), _series_text(driver)))
    else:
        reason = ("kernel series up to %s, the running kernel's (the driver line names no kernel maximum)"
                  % _series_text(series_max))
    above = series_above_regex(series_max)
    decision.update(series_max=_series_text(series_max), block="above", reason=reason)
    decision["apt_preferences"] = (
        _apt_text("kernel_update_policy allowed_series: no kernel above %s" % _series_text(series_max),
                  "/%s%s/" % (APT_ABI_PACKAGES, above), "*")
        + "\n"
        + _apt_text("kernel_update_policy allowed_series: no meta package of a kernel above %s"
                    % _series_text(series_max), APT_META_PACKAGES, "/^([0-9]+:)?%s/" % above)
    )
    decision["dnf_excludes"] = series_above_globs(series_max)
    # zypper compares a lock's version as rpm does: the next series and everything above it.
    decision["zypper_addlock"] = "zypper addlock " + " ".join(
        "'%s >= %d.%d'" % (name, series_max[0], series_max[1] + 1) for name in ZYPPER_KERNEL_PACKAGES)
    return decision


def _apt_text(explanation, packages, version):
    return ("Explanation: rocm-fleet: %s\nPackage: %s\nPin: version %s\nPin-Priority: -1\n"
            % (explanation, packages, version))


def kernel_allowed(kernel, decision):
    """(allowed, reason) of installing kernel release ``kernel`` under ``decision``."""
    series = series_of(kernel)
    if decision["policy"] == "free":
        return True, decision["reason"]
    if decision["policy"] == "hold":
        return False, "kernel %s: %s" % (kernel, decision["reason"])
    if series is None:
        return False, "kernel %r names no kernel series" % (kernel,)
    if decision.get("problem") or not decision.get("series_max"):
        return False, "kernel %s: %s" % (kernel, decision.get("problem") or decision["reason"])
    if series > series_of(decision["series_max"]):
        return False, "kernel %s is above the allowed %s: %s" % (kernel, decision["series_max"], decision["reason"])
    return True, "kernel %s is within %s" % (kernel, decision["reason"])


def _release_key(release):
    return [(0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"[.+~-]", release)]


def newest_allowed(kernels, decision, newer_than=None):
    """The newest release of ``kernels`` the decision allows (above ``newer_than`` when given), or None."""
    allowed = [k for k in kernels if kernel_allowed(k, decision)[0]]
    if newer_than:
        allowed = [k for k in allowed if _release_key(k) > _release_key(newer_than)]
    return max(allowed, key=_release_key) if allowed else None


# Debian's and Ubuntu's kernel releases end in their flavour after the ABI number: 6.1.0-19-amd64, 6.1.0-19-cloud-amd64,
# 6.8.0-51-generic, 6.8.0-1020-aws (Ubuntu's kernel packages; Debian's linux-image-<abi>-<flavour>). RHEL's carry none.
_FLAVOUR = re.compile(r"^\d+\.\d+(?:\.\d+)?-\d+(?:\.\d+)*-(?P<flavour>[a-z][a-z0-9-]*)$")


def flavour_of(release):
    """'6.8.0-51-generic' -> 'generic', '6.1.0-19-cloud-amd64' -> 'cloud-amd64'; None where the release names none."""
    match = _FLAVOUR.match(str(release or ""))
    return match.group("flavour") if match else None


def update_target(available, decision, running_kernel, wanted=None):
    """{kernel, problem, reason}: the kernel an update installs: ``wanted`` or the newest allowed above the running one.

    ``problem`` (a sentence naming the kernel and what to do) when ``wanted`` is not offered or not
    allowed; ``kernel`` None with no problem when nothing newer is allowed (the host is up to date).
    Unasked, it keeps the running kernel's flavour: a generic host never moves to an aws or lowlatency kernel that
    sorts higher (6.8.0-1020-aws above 6.8.0-52-generic).
    """
    available = sorted(set(available or []), key=_release_key)
    if wanted:
        allowed, why = kernel_allowed(wanted, decision)
        if wanted not in available and wanted != running_kernel:
            return {"kernel": None, "reason": None,
                    "problem": "kernel_update_version %s is not offered by the host's repositories (they offer %s)"
                    % (wanted, ", ".join(available) or "no kernel image")}
        if not allowed:
            return {"kernel": None, "reason": None,
                    "problem": "kernel_update_version %s is refused: %s; pick an allowed kernel or set "
                    "packages_kernel_update_policy" % (wanted, why)}
        return {"kernel": wanted, "reason": why, "problem": None}
    flavour = flavour_of(running_kernel)
    if flavour:
        available = [kernel for kernel in available if flavour_of(kernel) == flavour]
    newest = newest_allowed(available, decision, newer_than=running_kernel)
    if newest is None:
        return {"kernel": None, "problem": None,
                "reason": "no kernel newer than %s is offered and allowed (%s)" % (running_kernel, decision["reason"])}
    return {"kernel": newest, "reason": kernel_allowed(newest, decision)[1], "problem": None}
