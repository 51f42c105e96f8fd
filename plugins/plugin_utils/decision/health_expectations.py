# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""node_compliance's ``health`` option for a host decided as ``decision``: built from the data preflight decides with.

Nothing here holds a value of its own: the firmware minimums are roles/preflight/vars/
gpu_firmware.yml's, the kernel maximum and module version the decided driver line's
(amdgpu_drivers.yml), RAS and XGMI the GPU catalog's (family and expected_topology).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

# Instinct GPUs have RAS counters (amdgpu_ras); Radeon and Radeon Pro have none (no ras/ directory).
RAS_FAMILIES = ("instinct",)


def health_expectations(decision, catalog, firmware, ce_threshold, amdgpu_from_amd=True, expected_gpu_count=None,
                        skip=()):
    """The ``health`` mapping (compliance.health.HEALTH_KEYS); the inventory's classes and count win, as for gpu_expect.

    ``firmware`` is __preflight_gpu_firmware ({class: {FW_ID: {min, source}}}). A mixed host
    gets no firmware minimum and no XGMI expectation (which class's would it be?).
    """
    classes = decision.get("expected_classes") or [name for name in decision.get("classes") or [] if name]
    entries = [catalog[name] for name in classes if name in catalog]
    single = entries[0] if entries and len(set(classes)) == 1 else None
    count = decision.get("gpu_count") or 0 if expected_gpu_count in (None, "") else int(expected_gpu_count)
    topology = (single or {}).get("expected_topology") or {}
    driver = decision.get("amdgpu_driver") or {}
    return {
        "ce_threshold": int(ce_threshold),
        "ras": bool(entries) and all(entry.get("family") in RAS_FAMILIES for entry in entries),
        "firmware": (firmware or {}).get(classes[0], {}) if single else {},
        # The catalog has no per-GPU physical link count (an MI250X GCD reaches 3 of 7 others while
        # KFD reports hops 1 to all): peers None asks each GPU to reach as many as the best-connected one.
        "xgmi": {"peers": None} if topology.get("link_type") == "XGMI" and count > 1 else None,
        "dkms": bool(amdgpu_from_amd),
        "kernel_max": (driver.get("kernel") or {}).get("max"),
        "module_version": driver.get("kernel_module"),
        "skip": sorted(skip),
    }
