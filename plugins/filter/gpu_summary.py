# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The gpu_summary filter: the gpu fact as lines a person reads."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from collections import Counter

from ansible.errors import AnsibleFilterError

LINK_ABBREVIATIONS = {"SELF": "-", "XGMI": "X", "PCIE": "P", "UNKNOWN": "?"}


def gpu_summary(gpu):
    if not isinstance(gpu, dict) or "count" not in gpu:
        raise AnsibleFilterError("gpu_summary expects the gpu fact of rocm_fleet.core.gpu_facts, got %r" % type(gpu))
    devices = gpu.get("devices") or []
    lines = ["GPUs: %d" % gpu["count"]]
    if devices:
        products = Counter(device.get("product") or device.get("device_id") or "unknown" for device in devices)
        targets = sorted(set(device.get("gfx_target") or "unknown" for device in devices))
        lines.append("products: " + ", ".join("%d x %s" % (n, name) for name, n in sorted(products.items())))
        lines.append("gfx targets: " + ", ".join(targets))
    driver = gpu.get("driver") or {}
    if driver.get("loaded"):
        lines.append("amdgpu: loaded, version %s" % (driver.get("version") or "unknown (inbox driver)"))
    else:
        lines.append("amdgpu: not loaded")
    rocm = gpu.get("rocm") or {}
    lines.append("ROCm: %s" % (rocm.get("version") or "not installed"))
    topology = gpu.get("topology")
    if topology and topology.get("link_type"):
        size = len(topology["link_type"])
        lines.append("link types (X=XGMI P=PCIe ?=unknown):")
        lines.append("      " + " ".join("%3s" % ("G%d" % j) for j in range(size)))
        for i, row in enumerate(topology["link_type"]):
            lines.append("  G%-3d" % i + " ".join("%3s" % LINK_ABBREVIATIONS.get(cell, "?") for cell in row))
    sources = gpu.get("sources") or {}
    lines.append("sources: " + ", ".join("%s=%s" % item for item in sorted(sources.items())))
    lines.extend("warning: " + text for text in gpu.get("warnings") or [])
    lines.extend("conflict: " + text for text in gpu.get("conflicts") or [])
    return lines


class FilterModule(object):
    def filters(self):
        return {"gpu_summary": gpu_summary}
