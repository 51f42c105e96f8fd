# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A kernel update that never leaves a host without its GPUs: the boot facts and the decisions.

The boot loader keeps starting the working kernel (GRUB_DEFAULT=saved, the saved entry
naming it) while a new kernel is installed; the new one becomes the default only when
amdgpu is built and installed for it (and, under Secure Boot, signed by an enrolled key).

* grub_entry_path(text, kernel): the id path ("gnulinux-advanced-<uuid>>gnulinux-<k>-advanced-<uuid>")
  GRUB_DEFAULT / grub-set-default take for a kernel's normal (not recovery) entry, or None.
* build_log(root, kernel, module): (make.log path, its last lines) of the DKMS build for a kernel.
* boot_facts(root, module, kernel_max, expected_version): what the kernel_boot_facts module returns.
* promotion(facts, kernel): {state, reason, entry}: may ``kernel`` become the boot default?

Stdlib only; Python 2.7 compatible; nothing here raises on a missing or odd file.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

from ansible_collections.rocm_fleet.core.plugins.module_utils.host import boot_read as boot
from ansible_collections.rocm_fleet.core.plugins.module_utils.health.read import listdir, read_text
from ansible_collections.rocm_fleet.core.plugins.module_utils.host.kernel_driver import kernel_check
from ansible_collections.rocm_fleet.core.plugins.module_utils.common.status import FAIL, PASS

LOG_LINES = 12
_LOG_KERNEL = re.compile(r"^DKMS make\.log for \S+ for kernel (\S+)")
GRUB_CFGS = ("boot/grub/grub.cfg", "boot/grub2/grub.cfg")


def grub_entries(text):
    """[(id path, title, kernel)] of grub.cfg's menu entries (host.boot_read's parser); a submenu's as "sub>entry"."""
    return [(id_path, title, kernel) for _position, title, _ident, kernel, id_path in boot.grub_entries(text)]


def grub_entry_path(text, kernel):
    """The id path of ``kernel``'s normal entry: a submenu's entry first (stable whichever kernel is newest)."""
    normal = [(path, title) for path, title, k in grub_entries(text)
              if k == kernel and "recovery" not in title.lower() and "recovery" not in path]
    nested = [path for path, _title in normal if ">" in path]
    if nested:
        return nested[0]
    return normal[0][0] if normal else None


def build_log(root, kernel, module="amdgpu"):
    """(path, tail) of the make.log of ``module``'s last DKMS build for ``kernel``; (None, None) when none is kept.

    dkms keeps /var/lib/dkms/<module>/<version>/build/make.log of the last build (any kernel: its first line
    names it), and dkms 3 also <version>/<kernel>/<arch>/log/make.log.
    """
    tree = boot.host_path(root, "var/lib/dkms", module)
    candidates = []
    for version in listdir(tree):
        for arch in listdir(os.path.join(tree, version, kernel)):
            candidates.append("/var/lib/dkms/%s/%s/%s/%s/log/make.log" % (module, version, kernel, arch))
        candidates.append("/var/lib/dkms/%s/%s/build/make.log" % (module, version))
    for path in candidates:
        text = read_text(boot.host_path(root, path))[0]
        if not text:
            continue
        lines = text.splitlines()
        named = _LOG_KERNEL.match(lines[0]) if lines else None
        if "/build/" in path and (not named or named.group(1) != kernel):
            continue
        return path, "\n".join(lines[-LOG_LINES:])
    return None, None


def running_kernel(root="/"):
    """This boot's kernel: /proc/sys/kernel/osrelease (uname -r reads the same)."""
    text = read_text(boot.host_path(root, "proc/sys/kernel/osrelease"))[0]
    return text.strip() if text and text.strip() else os.uname()[2]


def boot_facts(root="/", module="amdgpu", kernel_max=None, expected_version=None):
    """{running, default, default_source, installed, grub_cfg, entries, saved_entry, kernels}.

    ``kernels``: per installed kernel {entry, headers, module_state, module_reason, make_log, make_log_tail}.
    """
    grub_cfg, text = None, None
    for cfg in GRUB_CFGS:
        text = read_text(boot.host_path(root, cfg))[0]
        if text is not None:
            grub_cfg = "/" + cfg
            break
    bls = text is None or "blscfg" in text
    default, source = boot.default_kernel(root)
    records = boot.dkms_records(root, module)
    running = running_kernel(root)
    installed = boot.installed_kernels(root)
    kernels = {}
    for kernel in sorted(set(installed + [running])):
        check = kernel_check(records, kernel, kernel_max, expected_version, module)
        log_path, tail = (None, None) if check["state"] == PASS else build_log(root, kernel, module)
        kernels[kernel] = {
            # The RHEL family's grub.cfg only loads blscfg: each kernel's entry is a Boot Loader Spec file.
            "entry": boot.bls_entry_id(root, kernel) if bls else grub_entry_path(text, kernel),
            "headers": any(os.path.lexists(boot.host_path(root, base, kernel, "build")) for base in boot.MODULE_DIRS),
            "module_state": check["state"],
            "module_reason": check["reason"],
            "module_file": boot.installed_module(root, kernel, module),
            "make_log": log_path,
            "make_log_tail": tail,
        }
    env = boot._grubenv(root)
    return {"running": running, "default": default, "default_source": source, "installed": installed,
            "grub_cfg": grub_cfg, "saved_entry": env.get("saved_entry"), "next_entry": env.get("next_entry"),
            "kernels": kernels}


def promotion(facts, kernel, secure_boot=None):
    """{state, reason, entry}: pass when ``kernel`` may become the default; fail names the kernel and dkms's reason.

    ``secure_boot``: the ROCM-KERN-003 style result for ``kernel``'s module ({status, message}), when judged.
    """
    info = (facts.get("kernels") or {}).get(kernel)
    if not info:
        return {"state": FAIL, "entry": None,
                "reason": "kernel %s is not installed (no /boot/vmlinuz-%s with its modules directory)"
                % (kernel, kernel)}
    if not info.get("headers"):
        why = "its headers (linux-headers-%s or kernel-devel-%s) are not installed, so DKMS cannot build" % (
            kernel, kernel)
        return {"state": FAIL, "entry": info.get("entry"),
                "reason": "kernel %s: amdgpu is not built: %s" % (kernel, why)}
    if info.get("module_state") != PASS:
        reason = info.get("module_reason") or "%s: amdgpu is not installed" % kernel
        if info.get("make_log_tail"):
            reason += "; DKMS build log %s ends:\n%s" % (info["make_log"], info["make_log_tail"])
        return {"state": FAIL, "entry": info.get("entry"), "reason": reason}
    if secure_boot and secure_boot.get("status") not in ("pass", "skipped"):
        return {"state": FAIL, "entry": info.get("entry"),
                "reason": "kernel %s: amdgpu is installed but would not load under Secure Boot: %s"
                % (kernel, secure_boot.get("message"))}
    if not info.get("entry"):
        return {"state": FAIL, "entry": None,
                "reason": "kernel %s has no boot menu entry in %s (run the boot loader's update)"
                % (kernel, facts.get("grub_cfg") or "the boot loader configuration")}
    return {"state": PASS, "entry": info["entry"],
            "reason": "kernel %s: %s" % (kernel, info.get("module_reason"))}
