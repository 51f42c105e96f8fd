# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""amdgpu initialised on every GPU the PCI bus shows: dmesg evidence and the per-GPU verdict.

``parse_amdgpu_dmesg`` reads ``dmesg`` (plain ``[  7.38]``, ``-T`` wall-clock or
journal prefixes; blank lines between lines are ignored) for, per PCI bus:

* initialised: ``[drm] Initialized amdgpu 3.59.0 20150101 for 0000:09:00.0 on minor 0``;
* failed: amdgpu's init errors on that bus, from the kernel's messages: ``get invalid ip
  discovery binary signature`` (amdgpu_discovery.c; ROCm/ROCm#3856, #4454), ``invalid ip
  discovery binary checksum``, ``amdgpu_discovery_init failed``, ``Fatal error during GPU
  init`` (amdgpu_device.c) and the driver core's ``probe of BUS failed with error -N``;
* warnings: kernel warning/hang signatures such as ``Workqueue: ... amdgpu_tlb_fence_work``
  backtrace lines (grep-filtered traces have no bus; they are host-wide).

``decide_init`` compares the GPUs the PCI bus lists (vendor 0x1002 display/accelerator
functions, an input) with the initialised ones (from dmesg, or from DRM/KFD sysfs).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.rocm_fleet.core.plugins.module_utils.common.status import FAIL, PASS, UNKNOWN
from ansible_collections.rocm_fleet.core.plugins.module_utils.health.common import (
    gpu_label,
    result,
    text_lines,
)

_BUS = r"((?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])"
_INITIALISED = re.compile(r"\bInitialized amdgpu \S+ \d+ for " + _BUS)
_DEVICE = re.compile(r"\bamdgpu " + _BUS + r":")
_PROBE = re.compile(r"\bamdgpu\b.*probe of " + _BUS + r" failed with error (-?\d+)")
_FAILURES = (
    "get invalid ip discovery binary signature",
    "invalid ip discovery binary checksum",
    "amdgpu_discovery_init failed",
    "Fatal error during GPU init",
    "amdgpu_device_ip_init failed",
    "amdgpu_device_ip_early_init failed",
)
_WARNINGS = (
    re.compile(r"Workqueue: \S+ (amdgpu_\w+) \[amdgpu\]"),
    re.compile(r"(ring \S+ timeout)"),
    re.compile(r"(GPU reset begin)"),
)
_PREFIX = re.compile(r"^(?:\[[^\]]*\]\s*|\S+ +\d+ [\d:]+ \S+ kernel: )")


def normalise_bus(bus):
    """``0000:09:00.0`` from ``09:00.0`` or ``0000:09:00.0`` (lower case)."""
    bus = str(bus).strip().lower()
    return bus if bus.count(":") == 2 else "0000:" + bus


def _message(line):
    """The kernel message without its timestamp or journal prefix."""
    return _PREFIX.sub("", line, count=1).strip()


def parse_amdgpu_dmesg(text):
    """``{"initialised": [bus] or None, "failed": {bus: [message]}, "warnings": [message]}`` from dmesg text.

    ``initialised`` is None when no line mentions amdgpu at all (an empty or rotated ring
    buffer says nothing about the GPUs), so decide_init gives ``unknown``, not ``fail``.
    """
    initialised, failed, warnings, mentioned = [], {}, [], False
    for line in text_lines(text):
        message = _message(line)
        if not message:
            continue
        mentioned = mentioned or "amdgpu" in message
        init = _INITIALISED.search(message)
        if init:
            bus = normalise_bus(init.group(1))
            if bus not in initialised:
                initialised.append(bus)
            continue
        probe = _PROBE.search(message)
        device = _DEVICE.search(message)
        if probe:
            failed.setdefault(normalise_bus(probe.group(1)), []).append(message)
        elif device and any(sign in message for sign in _FAILURES):
            failed.setdefault(normalise_bus(device.group(1)), []).append(message)
        elif any(sign in message for sign in _FAILURES):
            warnings.append(message)
        else:
            for pattern in _WARNINGS:
                if pattern.search(message):
                    warnings.append(message)
                    break
    return {"initialised": initialised if mentioned else None, "failed": failed, "warnings": warnings}


def decide_init(pci_gpus, initialised, failed=None):
    """``{bus: result}`` for every GPU the PCI bus shows.

    ``pci_gpus``: the PCI buses of the GPUs (lspci / sysfs); ``initialised``: buses amdgpu
    initialised, or None when nothing says (then every GPU is unknown); ``failed``: ``{bus:
    [dmesg message]}`` from parse_amdgpu_dmesg, quoted in a failure's reason.
    """
    failed = dict((normalise_bus(b), m) for b, m in (failed or {}).items())
    done = None if initialised is None else set(normalise_bus(b) for b in initialised)
    buses = sorted(set(normalise_bus(b) for b in pci_gpus))
    out = {}
    for bus in buses:
        who = gpu_label(None, bus)
        errors = failed.get(bus, [])
        if done is not None and bus in done:
            out[bus] = result(PASS, "%s: amdgpu initialised" % who)
        elif errors:
            out[bus] = result(FAIL, "%s: amdgpu failed to initialise: %s" % (who, errors[0]), messages=errors)
        elif done is None:
            out[bus] = result(UNKNOWN, "%s: no record of amdgpu initialising it (no dmesg or sysfs evidence)" % who)
        else:
            out[bus] = result(
                FAIL,
                "%s: on the PCI bus but amdgpu did not initialise it (%d of %d GPUs initialised)"
                % (who, len(done.intersection(buses)), len(buses)),
            )
    return out
