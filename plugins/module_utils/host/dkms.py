# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What DKMS says about its modules: ``dkms status``, ``dkms install`` and initramfs output.

Pure functions over text (stdlib only, runs on managed hosts too); none raises on
bad input, each reports what it could not read.

* parse_dkms_status(text): one record per module line, ``{module, version,
  kernel, arch, state, notes}``, plus the lines that are no module line.
* parse_dkms_install(text): what a ``dkms install`` run shows (signing set up,
  kernels built for, whether it finished).
* build_warnings(text): the initramfs/DKMS ``W: Possible missing firmware``
  lines as warnings (they are benign: the module lists firmware for every ASIC).

The formats of ``dkms status`` (dkms's own do_status/do_status_weak):

* dkms 2.x: ``name, version, kernel, arch: state`` and ``name, version: added``;
* dkms 3.x: ``name/version, kernel, arch: state`` and ``name/version: added``
  (or ``broken``); weak installs keep the comma form, ``installed-weak from K``;
* a suffix after the state: ``(original_module exists)``, ``(WARNING! Diff
  between built and installed module!)``, ``(WARNING! Missing some built
  modules!)``, and from dkms 3.1 ``(Original modules exist)``, ``(Differences
  between built and installed modules)``, ``(Built modules are missing in the
  kernel modules folder)``;
* other lines on the same output (``Deprecated feature: ...``, ``Error! ...``,
  ``Warning: ...``) are no module line and are returned as ``other``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

STATES = ("added", "built", "installed", "installed-weak", "broken")
# A suffix saying the built module is not what is installed: not a clean install.
_SUSPECT_NOTES = ("diff", "differences", "missing")

_HEAD = re.compile(r"^(?P<head>[^:]+?):\s*(?P<state>[A-Za-z-]+)(?P<rest>.*)$")
_MESSAGE = re.compile(r"^(?:Deprecated feature:|Error!|Warning:|WARNING:)")
_WEAK_FROM = re.compile(r"^\s*from\s+(\S+)")
_NOTE = re.compile(r"\(([^()]*)\)")
_FIRMWARE = re.compile(r"^W:\s*Possible missing firmware\s+(\S+)\s+for (?:kernel )?module\s+(\S+)\s*$")
_MAKE_KERNEL = re.compile(r"KERNELVER=(\S+?)(?:\.{2,})?\s*$")
_KERNEL_WORD = re.compile(r"\bkernel(?:ver)?[: =]+(\d+\.\d+\S*)", re.IGNORECASE)
# dkms 2.x ends an install with "DKMS: install completed."; 3.x with the depmod step.
_DONE = re.compile(r"^(?:DKMS: install completed\.|depmod\.*\s*$|Running depmod\.*)", re.IGNORECASE)
_FAILED = re.compile(r"^(?:Error!|Bad return status|Build failed|make: \*\*\*)", re.IGNORECASE)


def _split_head(head):
    """'amdgpu/6.10.5, K, A' or 'amdgpu, 2.0-89, K, A' -> (module, version, kernel, arch), or None."""
    parts = [part.strip() for part in head.split(",")]
    first = parts[0]
    if "/" in first:  # dkms 3.x: name/version first, then kernel and arch
        module, _slash, version = first.partition("/")
        rest = parts[1:]
    elif len(parts) >= 2:
        module, version, rest = first, parts[1], parts[2:]
    else:
        return None
    if not module or not version or " " in module or " " in version or len(rest) not in (0, 2):
        return None
    kernel, arch = (rest[0], rest[1]) if rest else (None, None)
    if rest and (not kernel or not arch or " " in kernel or " " in arch):
        return None
    return module, version, kernel, arch


def parse_status_line(line):
    """One ``dkms status`` line -> record dict, or None when it is no module line."""
    found = _HEAD.match(line.strip())
    if not found or found.group("state") not in STATES:
        return None
    split = _split_head(found.group("head"))
    if split is None:
        return None
    module, version, kernel, arch = split
    state, rest = found.group("state"), found.group("rest")
    if state in ("added", "broken") and kernel is not None:
        return None
    if state not in ("added", "broken") and kernel is None:
        return None
    notes = [note.strip() for note in _NOTE.findall(rest)]
    weak = _WEAK_FROM.match(rest) if state == "installed-weak" else None
    if weak:
        notes.insert(0, "weak from %s" % weak.group(1))
    return {"module": module, "version": version, "kernel": kernel, "arch": arch, "state": state, "notes": notes}


def parse_dkms_status(text):
    """``dkms status`` output -> {records: [...], other: [lines that are no module line], error}.

    Empty output is no module (dkms prints nothing then). ``error`` is None, or
    says that no line could be read although some line is none of dkms's own
    messages (``Deprecated feature:``, ``Error!``, ``Warning:``). Blank lines are skipped.
    """
    records, other = [], []
    for raw in (text or "").splitlines():
        line = raw.strip()
        if not line:
            continue
        record = parse_status_line(line)
        if record is None:
            other.append(line)
        else:
            records.append(record)
    unreadable = [line for line in other if not _MESSAGE.match(line)]
    error = None
    if not records and unreadable:
        error = "no line of the dkms status output could be read: %r" % (unreadable[0][:120],)
    return {"records": records, "other": other, "error": error}


def clean_install(record):
    """True when a record is installed (or weak-installed) with no note that the files differ."""
    if record.get("state") not in ("installed", "installed-weak"):
        return False
    return not any(word in note.lower() for note in record.get("notes") or [] for word in _SUSPECT_NOTES)


def records_for(records, module, kernel=None):
    """The records of ``module`` (for ``kernel`` when given; 'added' ones have no kernel)."""
    return [r for r in records if r["module"] == module and (kernel is None or r["kernel"] == kernel)]


def build_warnings(text):
    """Initramfs/DKMS ``W: Possible missing firmware F for module M`` lines -> warnings.

    Each is ``{kind: 'possible-missing-firmware', firmware, module, line}``. They are
    warnings, never failures: amdgpu lists the firmware of every ASIC it supports.
    """
    warnings = []
    for raw in (text or "").splitlines():
        found = _FIRMWARE.match(raw.strip())
        if found:
            warnings.append(
                {
                    "kind": "possible-missing-firmware",
                    "firmware": found.group(1),
                    "module": found.group(2),
                    "line": raw.strip(),
                }
            )
    return warnings


def parse_dkms_install(text):
    """``dkms install`` output -> {signing, kernels, finished, failed, reason}.

    ``signing`` holds the sign command, key and certificate dkms printed (empty when
    it printed none); ``kernels`` the kernels a build started for; ``finished`` is
    True only on a line that ends an install, ``failed`` on an error line. Output
    that stops during the build (a crash, a cut paste) is neither: not finished.
    """
    signing, kernels, finished, failed = {}, [], False, None
    keys = {"sign command": "command", "signing key": "key", "public certificate (mok)": "certificate"}
    for raw in (text or "").splitlines():
        line = raw.strip()
        label, colon, value = line.partition(":")
        if colon and label.lower() in keys and value.strip():
            signing[keys[label.lower()]] = value.strip()
        found = _MAKE_KERNEL.search(line) or _KERNEL_WORD.search(line)
        if found and found.group(1) not in kernels:
            kernels.append(found.group(1))
        if _DONE.match(line):
            finished = True
        if failed is None and _FAILED.match(line):
            failed = line
    if failed:
        reason = "dkms install failed: %s" % failed
    elif finished:
        reason = "dkms install finished"
    elif kernels:
        reason = "the output stops during the build for %s: the install did not complete" % ", ".join(kernels)
    else:
        reason = "no dkms install step found in the output"
    return {
        "signing": signing,
        "kernels": kernels,
        "finished": finished and not failed,
        "failed": failed is not None,
        "reason": reason,
    }
