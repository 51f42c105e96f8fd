# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Will the next boot have amdgpu? DKMS's module for the boot loader's default kernel and the running one.

The most reported ROCm failure is a kernel update that amdgpu-dkms was not built
for, or cannot build for: the host runs fine until the reboot, then has no GPU.
So the check looks at the kernel the boot loader starts next, not only at the
running one, and says why a module is missing: a kernel above the newest series
the release's amdgpu builds against (``kernel.max`` of a line in
roles/preflight/vars/amdgpu_drivers.yml) cannot be fixed by rebuilding.

* kernel_check(records, kernel, kernel_max, expected_version, module): one
  kernel's verdict from parsed ``dkms status`` records.
* next_boot_driver(records, next_kernel, running_kernel, kernel_max, ...): the
  verdict for the host: ``{state, reason, checks, warnings}``.

States are 'pass', 'fail' and 'unknown'; unknown is never healthy (a caller
reports it as not compliant, with its reason). Stdlib only.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.rocm_fleet.core.plugins.module_utils.host.dkms import clean_install, records_for
from ansible_collections.rocm_fleet.core.plugins.module_utils.common.versions import in_range, parse_version
from ansible_collections.rocm_fleet.core.plugins.module_utils.common.status import FAIL, PASS, UNKNOWN


def above_max(kernel, kernel_max):
    """True when kernel release ``kernel`` is newer than series ``kernel_max`` ('6.14' admits 6.14.x).

    None when either is missing or not a version: the maximum is unknown, so not enforced.
    """
    if not kernel_max or parse_version(kernel) is None or parse_version(kernel_max) is None:
        return None
    return not in_range(kernel, maximum=str(kernel_max))


def _versions(records):
    return sorted({r["version"] for r in records})


def kernel_check(records, kernel, kernel_max=None, expected_version=None, module="amdgpu"):
    """{kernel, state, reason, notes}: is ``module`` built and installed for ``kernel``?

    pass: one version is installed with no note that the files differ (and it is
    ``expected_version``'s, when given: the DKMS version starts with the module
    version, e.g. 6.10.5-2095006.el9 for 6.10.5). fail: nothing installed, only
    built, a differing install, or another version; the reason says whether the
    kernel is above ``kernel_max``. unknown: no kernel given.
    """
    if not kernel:
        return {"kernel": None, "state": UNKNOWN, "reason": "the kernel is not known", "notes": []}
    mine = records_for(records, module, kernel)
    notes = []
    if len(_versions(mine)) > 1:
        notes.append(
            "%d %s versions for %s (%s): conflicting driver stacks"
            % (len(_versions(mine)), module, kernel, ", ".join(_versions(mine)))
        )
    over = above_max(kernel, kernel_max)
    installed = [r for r in mine if clean_install(r)]
    wanted = [r for r in installed if not expected_version or r["version"].startswith(str(expected_version))]
    if wanted:
        # Built and installed: the next boot has its GPUs. A kernel newer than AMD lists is said, not warned of.
        newer = ""
        if over:
            newer = " (kernel %s is newer than %s, the newest series AMD lists for it)" % (kernel, kernel_max)
        return {
            "kernel": kernel,
            "state": PASS,
            "notes": notes,
            "reason": "%s %s is installed for %s%s" % (module, wanted[0]["version"], kernel, newer),
        }
    if over:
        notes.append("kernel %s is above %s, the newest series this %s builds for" % (kernel, kernel_max, module))
    if installed:
        reason = "%s %s is installed for %s, not %s" % (module, installed[0]["version"], kernel, expected_version)
    elif mine:
        states = ", ".join(
            "%s %s%s" % (r["version"], r["state"], "".join(" (%s)" % n for n in r["notes"])) for r in mine
        )
        reason = "%s for %s is not cleanly installed: %s" % (module, kernel, states)
    elif over:
        reason = (
            "%s has no module for %s, and %s is above %s, the newest kernel series it builds for: "
            "the GPUs would be lost on boot" % (module, kernel, kernel, kernel_max)
        )
    else:
        reason = "%s has no module for %s (no DKMS build or install for it)" % (module, kernel)
    return {"kernel": kernel, "state": FAIL, "reason": reason, "notes": notes}


def next_boot_driver(
    records,
    next_kernel,
    running_kernel,
    kernel_max=None,
    expected_version=None,
    installed_kernels=None,
    module="amdgpu",
    dkms_error=None,
):
    """{state, reason, checks, warnings}: amdgpu for the boot loader's default kernel and the running one.

    ``records`` are parse_dkms_status records; ``dkms_error`` its error (the verdict
    is then unknown). ``checks`` has one entry per kernel with its ``role``
    ('next', 'running' or both). Other ``installed_kernels`` without a module only
    warn: the boot loader does not start them unless chosen by hand.
    """
    if dkms_error:
        return {
            "state": UNKNOWN,
            "reason": "dkms status could not be read: %s" % dkms_error,
            "checks": [],
            "warnings": [],
        }
    checks = []
    for role, kernel in (("next", next_kernel), ("running", running_kernel)):
        if kernel and any(c["kernel"] == kernel for c in checks):
            checks[[c["kernel"] for c in checks].index(kernel)]["role"] = "next, running"
            continue
        check = kernel_check(records, kernel, kernel_max, expected_version, module)
        check["role"] = role
        if not kernel:
            check["reason"] = "the %s kernel is not known" % ("boot loader's default" if role == "next" else role)
        checks.append(check)
    warnings = []
    for kernel in installed_kernels or []:
        if kernel in (next_kernel, running_kernel):
            continue
        check = kernel_check(records, kernel, kernel_max, expected_version, module)
        if check["state"] != PASS:
            warnings.append("installed kernel %s (not the default): %s" % (kernel, check["reason"]))
    for check in checks:
        warnings.extend(check["notes"])
    failed = [c for c in checks if c["state"] == FAIL]
    unknown = [c for c in checks if c["state"] == UNKNOWN]
    if failed:
        state, reason = FAIL, "; ".join("%s kernel: %s" % (c["role"], c["reason"]) for c in failed)
    elif unknown:
        state, reason = UNKNOWN, "; ".join(c["reason"] for c in unknown)
    else:
        state, reason = PASS, "; ".join("%s kernel: %s" % (c["role"], c["reason"]) for c in checks)
    return {"state": state, "reason": reason, "checks": checks, "warnings": warnings}
