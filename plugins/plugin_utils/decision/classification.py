# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Classify the GPUs of one host against the GPU catalog (roles/preflight/vars/gpu_catalog.yml).

A catalog class matches a device by PCI device ID, then optionally by
subsystem ID and by VRAM size; the most specific match wins. A device no class
explains, or that two classes explain equally well, gets class None and a
problem that says why, so preflight can stop before anything changes.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.model import normalize_hex_id

GIB = 1024**3
SEGMENTS = ("datacenter", "workstation", "consumer")
FAMILIES = ("instinct", "radeon_pro", "radeon")


def _ids(values):
    return set(normalize_hex_id(value) for value in values or [])


def _match_score(match, device, vram_gib):
    """Specificity of a class's match rule for a device with its ID; None when the rule excludes it."""
    score = 0
    subsystem_ids = _ids(match.get("subsystem_ids"))
    if subsystem_ids:
        if normalize_hex_id(device.get("subsystem_device_id")) not in subsystem_ids:
            return None
        score += 2
    vram_range = match.get("vram_gib")
    if vram_range:
        if vram_gib is None:
            return None
        if vram_range.get("min") is not None and vram_gib < vram_range["min"]:
            return None
        if vram_range.get("max") is not None and vram_gib > vram_range["max"]:
            return None
        score += 1
    return score


def nominal_vram_gib(entry):
    """VRAM per enumerated device: the package's VRAM split over its GCDs; None when unknown."""
    if not entry or entry.get("vram_gib") is None:
        return None
    return entry["vram_gib"] / float(entry.get("devices_per_package") or 1)


def _describe(device, vram_gib):
    parts = ["device %s" % (normalize_hex_id(device.get("device_id")) or "with no ID")]
    if device.get("subsystem_device_id"):
        parts.append("subsystem %s" % normalize_hex_id(device.get("subsystem_device_id")))
    if vram_gib is not None:
        parts.append("%.1f GiB VRAM" % vram_gib)
    return "GPU %s (%s)" % (device.get("index"), ", ".join(parts))


def classify_device(device, catalog):
    """(class name or None, problem or None) for one gpu_facts device."""
    device_id = normalize_hex_id(device.get("device_id"))
    vram_bytes = device.get("vram_bytes")
    vram_gib = vram_bytes / float(GIB) if isinstance(vram_bytes, (int, float)) and vram_bytes > 0 else None
    candidates = sorted(
        name
        for name, entry in catalog.items()
        if device_id and device_id in _ids((entry.get("match") or {}).get("device_ids"))
    )
    if not candidates:
        return None, "%s is not in the GPU catalog; describe it in preflight_gpu_catalog_extra" % _describe(
            device, vram_gib
        )
    scored = {}
    for name in candidates:
        score = _match_score(catalog[name].get("match") or {}, device, vram_gib)
        if score is not None:
            scored[name] = score
    if not scored:
        return None, "%s matches %s by device ID, but none by subsystem ID or VRAM size" % (
            _describe(device, vram_gib),
            ", ".join(candidates),
        )
    best = max(scored.values())
    winners = sorted(name for name, score in scored.items() if score == best)
    if len(winners) > 1:
        return None, "%s is ambiguous: classes %s match equally well" % (
            _describe(device, vram_gib),
            ", ".join(winners),
        )
    return winners[0], None


def _gfx(value):
    # rocminfo-style 'gfx942:sramecc+:xnack-' carries feature flags the catalog does not.
    return str(value).split(":", 1)[0].strip().lower() if value else None


def classify_gpus(gpu, catalog):
    """The host summary: each device with its class, and what the host has as a whole.

    ``gpu`` is the gpu fact of rocm_fleet.core.gpu_facts (or its device list).
    """
    devices_in = gpu.get("devices") if isinstance(gpu, dict) else gpu
    devices_in = devices_in or []
    catalog = catalog or {}
    devices, problems, warnings = [], [], []
    for position, device in enumerate(devices_in):
        name, problem = classify_device(device, catalog)
        entry = catalog.get(name) if name else None
        classified = dict(device)
        if classified.get("index") is None:
            classified["index"] = position
        measured_gfx = _gfx(device.get("gfx_target"))
        catalog_gfx = _gfx(entry.get("gfx_target")) if entry else None
        if measured_gfx and catalog_gfx and measured_gfx != catalog_gfx:
            warnings.append(
                "GPU %s: the driver reports %s but catalog class %s says %s; using %s"
                % (classified["index"], measured_gfx, name, catalog_gfx, measured_gfx)
            )
        vram_bytes = device.get("vram_bytes")
        classified.update(
            {
                "class": name,
                "product": entry.get("product") if entry else device.get("product"),
                "gfx_target": measured_gfx or catalog_gfx,
                "segment": entry.get("segment") if entry else None,
                "family": entry.get("family") if entry else None,
                "vram_gib": round(vram_bytes / float(GIB), 1) if isinstance(vram_bytes, (int, float)) else None,
                "nominal_vram_gib": nominal_vram_gib(entry),
                "problem": problem,
            }
        )
        if problem:
            problems.append(problem)
        devices.append(classified)
    return _summarize(devices, catalog, problems, warnings)


def _distinct(devices, key):
    return sorted(set(device[key] for device in devices if device.get(key)))


def _summarize(devices, catalog, problems, warnings):
    class_counts = {}
    physical = {}
    for device in devices:
        if device["class"]:
            class_counts[device["class"]] = class_counts.get(device["class"], 0) + 1
            # The partitions of one physical GPU (schema 2's physical_gpu) are one device of its package.
            key = device.get("physical_gpu")
            physical.setdefault(device["class"], set()).add(("index", device["index"]) if key is None else key)
    packages = {}
    for name in class_counts:
        count = len(physical[name])
        per_package = catalog[name].get("devices_per_package") or 1
        packages[name] = -(-count // per_package)
        if count % per_package:
            warnings.append(
                "%d %s devices do not fill whole packages of %d: a GCD is missing" % (count, name, per_package)
            )
    segments = _distinct(devices, "segment")
    gfx_targets = _distinct(devices, "gfx_target")
    return {
        "count": len(devices),
        "devices": devices,
        "classes": sorted(class_counts),
        "class_counts": class_counts,
        "packages": packages,
        "package_count": sum(packages.values()),
        "gfx_targets": gfx_targets,
        "mixed": len(class_counts) > 1 or len(gfx_targets) > 1,
        "segments": segments,
        "segment": segments[0] if len(segments) == 1 else ("mixed" if segments else None),
        "families": _distinct(devices, "family"),
        "unknown_devices": [device["index"] for device in devices if not device["class"]],
        "problems": problems,
        "warnings": warnings,
        "catalog": dict((name, catalog[name]) for name in class_counts),
    }


def describe_gpus(summary):
    """'8 x AMD Instinct MI300X (gfx942)' for messages; 'no AMD GPU' for a GPU-less host."""
    counts = {}
    for device in summary.get("devices") or []:
        label = device.get("product") or device.get("device_id") or "unknown GPU"
        if device.get("gfx_target"):
            label += " (%s)" % device["gfx_target"]
        counts[label] = counts.get(label, 0) + 1
    if not counts:
        return "no AMD GPU"
    return ", ".join("%d x %s" % (count, label) for label, count in sorted(counts.items()))
